package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/betaport/betaport/app/betaport"
)

// CreateTeam validates and inserts t, filling its ID and creation time.
func (s *DB) CreateTeam(ctx context.Context, t *betaport.Team) error {
	t.Name = strings.TrimSpace(t.Name)
	if t.Seats == 0 {
		t.Seats = 1
	}
	if err := t.Validate(); err != nil {
		return err
	}
	t.CreatedAt = betaport.Now()
	return s.db.QueryRowContext(ctx,
		`INSERT INTO teams (name, plan, seats, created_at) VALUES (?, ?, ?, ?) RETURNING id`,
		t.Name, t.Plan, t.Seats, millis(t.CreatedAt)).Scan(&t.ID)
}

// FindTeam returns the team with the given ID.
func (s *DB) FindTeam(ctx context.Context, id int64) (*betaport.Team, error) {
	var t betaport.Team
	var created int64
	err := s.db.QueryRowContext(ctx,
		`SELECT id, name, plan, seats, created_at FROM teams WHERE id = ?`, id).
		Scan(&t.ID, &t.Name, &t.Plan, &t.Seats, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, betaport.Errorf(betaport.ENOTFOUND, "Team %d does not exist.", id)
	}
	t.CreatedAt = fromMillis(created)
	return &t, err
}
