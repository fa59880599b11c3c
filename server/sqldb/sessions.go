package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/betaport/betaport/app/betaport"
)

// CreateSession stores a new session.
func (s *DB) CreateSession(ctx context.Context, ss *betaport.Session) error {
	ss.CreatedAt = betaport.Now()
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO sessions (token_hash, user_id, tester_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
		ss.TokenHash, nullID(ss.UserID), nullID(ss.TesterID), millis(ss.CreatedAt), millis(ss.ExpiresAt))
	return err
}

var errNoSession = betaport.Errorf(betaport.EUNAUTHORIZED, "Your session has ended. Sign in again.")

// FindSession returns an unexpired session.
func (s *DB) FindSession(ctx context.Context, hash string) (*betaport.Session, error) {
	var ss betaport.Session
	var user, tester sql.NullInt64
	var created, expires int64
	err := s.db.QueryRowContext(ctx,
		`SELECT token_hash, user_id, tester_id, created_at, expires_at FROM sessions
		 WHERE token_hash = ? AND expires_at > ?`, hash, millis(betaport.Now())).
		Scan(&ss.TokenHash, &user, &tester, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoSession
	}
	ss.UserID, ss.TesterID = user.Int64, tester.Int64
	ss.CreatedAt, ss.ExpiresAt = fromMillis(created), fromMillis(expires)
	return &ss, err
}

// ExtendSession moves a session's expiry.
func (s *DB) ExtendSession(ctx context.Context, hash string, expires time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE sessions SET expires_at = ? WHERE token_hash = ?`, millis(expires), hash)
	return err
}

// DeleteSession ends a session.
func (s *DB) DeleteSession(ctx context.Context, hash string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE token_hash = ?`, hash)
	return err
}

func nullID(id int64) sql.NullInt64 { return sql.NullInt64{Int64: id, Valid: id != 0} }
