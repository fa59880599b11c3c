package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/betaport/betaport/app/betaport"
)

// CreateUser inserts an admin of a team.
func (s *DB) CreateUser(ctx context.Context, u *betaport.User, passwordHash string) error {
	u.Email = strings.ToLower(strings.TrimSpace(u.Email))
	if err := u.Validate(); err != nil {
		return err
	}
	if _, err := s.FindTeam(ctx, u.TeamID); err != nil {
		return err
	}
	u.CreatedAt = betaport.Now()
	err := s.db.QueryRowContext(ctx,
		`INSERT INTO users (team_id, email, password_hash, created_at) VALUES (?, ?, ?, ?) RETURNING id`,
		u.TeamID, u.Email, passwordHash, millis(u.CreatedAt)).Scan(&u.ID)
	if s.dialect.isUniqueViolation(err) {
		return &betaport.Error{Code: betaport.ECONFLICT, Param: "email", Message: u.Email + " already has an account."}
	}
	return err
}

var errNoUser = betaport.Errorf(betaport.ENOTFOUND, "There is no such user.")

// FindUser returns a user by id.
func (s *DB) FindUser(ctx context.Context, id int64) (*betaport.User, error) {
	var u betaport.User
	var created int64
	err := s.db.QueryRowContext(ctx, `SELECT id, team_id, email, created_at FROM users WHERE id = ?`, id).
		Scan(&u.ID, &u.TeamID, &u.Email, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoUser
	}
	u.CreatedAt = fromMillis(created)
	return &u, err
}

// FindUserByEmail returns a user and their password hash.
func (s *DB) FindUserByEmail(ctx context.Context, email string) (*betaport.User, string, error) {
	var u betaport.User
	var created int64
	var hash string
	err := s.db.QueryRowContext(ctx,
		`SELECT id, team_id, email, created_at, password_hash FROM users WHERE email = ?`,
		strings.ToLower(strings.TrimSpace(email))).
		Scan(&u.ID, &u.TeamID, &u.Email, &created, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", errNoUser
	}
	u.CreatedAt = fromMillis(created)
	return &u, hash, err
}
