package sqldb

import (
	"context"
	"strings"

	"github.com/betaport/betaport/app/betaport"
)

// CreateExtension validates and inserts e, filling its ID and creation time.
func (s *DB) CreateExtension(ctx context.Context, e *betaport.Extension) error {
	e.Name = strings.TrimSpace(e.Name)
	if err := e.Validate(); err != nil {
		return err
	}
	if _, err := s.FindTeam(ctx, e.TeamID); err != nil {
		return err
	}
	e.CreatedAt = betaport.Now()
	e.CurrentBundle = 0
	return s.inTx(ctx, func(tx *Tx) error {
		err := tx.QueryRowContext(ctx,
			`INSERT INTO extensions (team_id, name, created_at) VALUES (?, ?, ?) RETURNING id`,
			e.TeamID, e.Name, millis(e.CreatedAt)).Scan(&e.ID)
		if err != nil {
			return err
		}
		// Every extension has the default channel from its start.
		_, err = tx.ExecContext(ctx, `INSERT INTO channels (extension_id, name, created_at) VALUES (?, ?, ?)`,
			e.ID, betaport.DefaultChannel, millis(e.CreatedAt))
		return err
	})
}

const extensionColumns = `id, team_id, name, current_bundle, created_at, chrome_id`

func scanExtension(row interface{ Scan(...any) error }) (*betaport.Extension, error) {
	var e betaport.Extension
	var created int64
	if err := row.Scan(&e.ID, &e.TeamID, &e.Name, &e.CurrentBundle, &created, &e.ChromeID); err != nil {
		return nil, err
	}
	e.CreatedAt = fromMillis(created)
	return &e, nil
}

// FindExtension returns the extension with the given ID.
func (s *DB) FindExtension(ctx context.Context, id int64) (*betaport.Extension, error) {
	return findExtensionIn(ctx, s.db, id)
}

// FindExtensions lists extensions by ID.
func (s *DB) FindExtensions(ctx context.Context, f betaport.ExtensionFilter) ([]*betaport.Extension, error) {
	q, args := `SELECT `+extensionColumns+` FROM extensions`, []any{}
	if f.TeamID != 0 {
		q += ` WHERE team_id = ?`
		args = append(args, f.TeamID)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*betaport.Extension{}
	for rows.Next() {
		e, err := scanExtension(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, e)
	}
	return list, rows.Err()
}

// lockExtension takes the write lock on an extension's row until tx ends.
// Transactions that change an extension's uploads and bundles take it
// first, so concurrent ones (on any replica) run one after the other and
// always lock rows in the same order: extension, then upload. In SQLite
// every write transaction holds the database lock already.
func lockExtension(ctx context.Context, tx *Tx, extensionID int64) error {
	res, err := tx.ExecContext(ctx,
		`UPDATE extensions SET last_bundle_number = last_bundle_number WHERE id = ?`, extensionID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return betaport.Errorf(betaport.ENOTFOUND, "Extension %d does not exist.", extensionID)
	}
	return nil
}
