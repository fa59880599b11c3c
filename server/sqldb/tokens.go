package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/betaport/betaport/app/betaport"
)

const tokenColumns = `id, extension_id, name, scopes, created_at, created_by, expires_at, last_used_at, revoked_at`

func scanToken(row interface{ Scan(...any) error }) (*betaport.AccessToken, error) {
	var t betaport.AccessToken
	var scopes string
	var created int64
	var expires, used, revoked sql.NullInt64
	if err := row.Scan(&t.ID, &t.ExtensionID, &t.Name, &scopes, &created, &t.CreatedBy, &expires, &used, &revoked); err != nil {
		return nil, err
	}
	t.Scopes = strings.Split(scopes, ",")
	t.CreatedAt, t.ExpiresAt, t.LastUsedAt, t.RevokedAt = fromMillis(created), fromNullMillis(expires), fromNullMillis(used), fromNullMillis(revoked)
	return &t, nil
}

var errNoToken = betaport.Errorf(betaport.ENOTFOUND, "There is no such access token.")

// CreateAccessToken inserts a token and its audit event in one transaction.
// Its scopes are kept in AllScopes' order, whatever order they came in.
func (s *DB) CreateAccessToken(ctx context.Context, t *betaport.AccessToken, hash string) error {
	t.Name = strings.TrimSpace(t.Name)
	t.CreatedAt, t.LastUsedAt, t.RevokedAt = betaport.Now(), nil, nil
	if err := t.Validate(); err != nil {
		return err
	}
	if hash == "" {
		return betaport.Errorf(betaport.EINVALID, "A token needs the hash of its secret.")
	}
	var ordered []string
	for _, scope := range betaport.AllScopes {
		if slices.Contains(t.Scopes, scope) {
			ordered = append(ordered, scope)
		}
	}
	t.Scopes = ordered
	var expires any
	if t.ExpiresAt != nil {
		expires = millis(*t.ExpiresAt)
		at := fromMillis(millis(*t.ExpiresAt))
		t.ExpiresAt = &at
	}
	return s.inTx(ctx, func(tx *Tx) error {
		if err := lockExtension(ctx, tx, t.ExtensionID); err != nil {
			return err
		}
		err := tx.QueryRowContext(ctx,
			`INSERT INTO access_tokens (extension_id, name, token_hash, scopes, created_at, created_by, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			t.ExtensionID, t.Name, hash, strings.Join(t.Scopes, ","), millis(t.CreatedAt), t.CreatedBy, expires).Scan(&t.ID)
		if err != nil {
			return err
		}
		return recordAudit(ctx, tx, t.ExtensionID, t.CreatedBy, betaport.AuditTokenCreated, t.Name)
	})
}

// FindAccessTokens returns a page of an extension's tokens, newest first.
func (s *DB) FindAccessTokens(ctx context.Context, extensionID, beforeID int64, limit int) ([]*betaport.AccessToken, error) {
	if _, err := s.FindExtension(ctx, extensionID); err != nil {
		return nil, err
	}
	if beforeID <= 0 {
		beforeID = math.MaxInt64
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+tokenColumns+` FROM access_tokens
		WHERE extension_id = ? AND id < ? ORDER BY id DESC LIMIT ?`, extensionID, beforeID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*betaport.AccessToken{}
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, t)
	}
	return list, rows.Err()
}

// FindAccessTokenByHash returns the unrevoked token whose secret hashes to
// hash; the caller decides what an expired one means.
func (s *DB) FindAccessTokenByHash(ctx context.Context, hash string) (*betaport.AccessToken, error) {
	t, err := scanToken(s.db.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM access_tokens
		WHERE token_hash = ? AND revoked_at IS NULL`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoToken
	}
	return t, err
}

// RevokeAccessToken revokes a token of an extension and records it, once.
func (s *DB) RevokeAccessToken(ctx context.Context, extensionID, tokenID int64, actor string) (*betaport.AccessToken, error) {
	var t *betaport.AccessToken
	err := s.inTx(ctx, func(tx *Tx) error {
		var err error
		t, err = scanToken(tx.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM access_tokens WHERE id = ? AND extension_id = ?`, tokenID, extensionID))
		if errors.Is(err, sql.ErrNoRows) {
			return errNoToken
		} else if err != nil || t.RevokedAt != nil {
			return err
		}
		now := betaport.Now()
		res, err := tx.ExecContext(ctx, `UPDATE access_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, millis(now), tokenID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			// A racing revoke came first: answer the token as it left it.
			t, err = scanToken(tx.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM access_tokens WHERE id = ?`, tokenID))
			return err
		}
		t.RevokedAt = &now
		return recordAudit(ctx, tx, extensionID, actor, betaport.AuditTokenRevoked, t.Name)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// AccessTokenUsed records when a token was last used, written only when
// the time moves on by a second or more (as KeyUsed).
func (s *DB) AccessTokenUsed(ctx context.Context, tokenID int64, at time.Time) error {
	_, err := s.db.ExecContext(ctx,
		`UPDATE access_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`,
		millis(at), tokenID, millis(at)-1000)
	return err
}
