package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/betaport/betaport/app/betaport"
)

// normalizeTester trims and validates a tester before it is saved.
func normalizeTester(t *betaport.Tester, now time.Time) error {
	t.Normalize()
	if err := t.Validate(); err != nil {
		return err
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	return nil
}

func testerExists(email string) error {
	return &betaport.Error{Code: betaport.ECONFLICT, Param: "email",
		Message: email + " is already a tester of this extension."}
}

// InviteTester inserts one tester with the hash of their invite link.
func (s *DB) InviteTester(ctx context.Context, t *betaport.Tester, inviteHash string) error {
	if err := normalizeTester(t, betaport.Now()); err != nil {
		return err
	}
	err := s.db.QueryRowContext(ctx,
		`INSERT INTO testers (extension_id, email, name, status, created_at, invite_hash)
		 VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
		t.ExtensionID, t.Email, t.Name, t.Status, millis(t.CreatedAt), inviteHash).Scan(&t.ID)
	if s.dialect.isUniqueViolation(err) {
		return testerExists(t.Email)
	}
	return err
}

// testerColumns are read from the testers table named t.
const testerColumns = `t.id, t.extension_id, t.email, t.name, t.status, t.created_at, t.last_seen_at`

func scanTester(row interface{ Scan(...any) error }) (*betaport.Tester, error) {
	var t betaport.Tester
	var created int64
	var seen sql.NullInt64
	if err := row.Scan(&t.ID, &t.ExtensionID, &t.Email, &t.Name, &t.Status, &created, &seen); err != nil {
		return nil, err
	}
	t.CreatedAt, t.LastSeenAt = fromMillis(created), fromNullMillis(seen)
	return &t, nil
}

var errNoTester = betaport.Errorf(betaport.ENOTFOUND, "There is no such tester.")

// FindTester returns a tester by id.
func (s *DB) FindTester(ctx context.Context, id int64) (*betaport.Tester, error) {
	t, err := scanTester(s.db.QueryRowContext(ctx, `SELECT `+testerColumns+` FROM testers t WHERE t.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoTester
	}
	return t, err
}

// FindTesterByInvite returns the tester whose invite link hashes to hash.
func (s *DB) FindTesterByInvite(ctx context.Context, hash string) (*betaport.Tester, error) {
	t, err := scanTester(s.db.QueryRowContext(ctx, `SELECT `+testerColumns+` FROM testers t WHERE t.invite_hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoTester
	}
	return t, err
}

// FindTesters returns a page of testers, newest first, keyset-paged by id so
// a deep page costs what the first one costs. A query keeps the testers whose
// e-mail or name holds it in any case, found through a trigram index when it
// is long enough to have trigrams (search.go).
func (s *DB) FindTesters(ctx context.Context, f betaport.TesterFilter) ([]*betaport.Tester, error) {
	list := []*betaport.Tester{}
	if !searchable(f.Query) {
		return list, nil
	}
	q, args := s.testersQuery(f)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanTester(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, t)
	}
	return list, rows.Err()
}

// testersQuery is the query of a page of testers, and its arguments.
func (s *DB) testersQuery(f betaport.TesterFilter) (string, []any) {
	from, order := `testers t`, `t.id DESC`
	var where []string
	var args []any
	switch {
	case f.Query == "":
	case utf8.RuneCountInString(f.Query) >= trigram:
		m := s.dialect.search(f)
		from, order = m.from, m.order
		where, args = append(where, m.where), append(args, m.args...)
	default:
		// No trigram to look up: read the extension's testers newest first
		// until the page is full.
		cond, condArgs := s.dialect.containsAnyCase(f.Query)
		where, args = append(where, cond), append(args, condArgs...)
	}
	where, args = append(where, `t.extension_id = ?`), append(args, f.ExtensionID)
	if f.Status != "" {
		where, args = append(where, `t.status = ?`), append(args, f.Status)
	}
	if f.BeforeID > 0 {
		where, args = append(where, `t.id < ?`), append(args, f.BeforeID)
	}
	q := `SELECT ` + testerColumns + ` FROM ` + from + ` WHERE ` + strings.Join(where, ` AND `) +
		` ORDER BY ` + order + ` LIMIT ?`
	return q, append(args, f.Limit)
}

// ActivateTester marks a tester active and seen now; a revoked tester stays
// revoked.
func (s *DB) ActivateTester(ctx context.Context, id int64) error {
	_, err := s.db.ExecContext(ctx,
		`UPDATE testers SET status = 'active', last_seen_at = ? WHERE id = ? AND status <> 'revoked'`,
		millis(betaport.Now()), id)
	return err
}

// RevokeTester revokes a tester and deletes their sessions in one
// transaction, so no request after it sees them signed in.
func (s *DB) RevokeTester(ctx context.Context, id int64) error {
	return s.inTx(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE testers SET status = 'revoked' WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errNoTester
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM sessions WHERE tester_id = ?`, id)
		return err
	})
}

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
