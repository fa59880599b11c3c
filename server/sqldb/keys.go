package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/betaport/betaport/app/betaport"
)

const keyColumns = `id, extension_id, label, created_at, created_by, last_used_at, revoked_at, channel`

func scanKey(row interface{ Scan(...any) error }) (*betaport.Key, error) {
	var k betaport.Key
	var created int64
	var used, revoked sql.NullInt64
	if err := row.Scan(&k.ID, &k.ExtensionID, &k.Label, &created, &k.CreatedBy, &used, &revoked, &k.Channel); err != nil {
		return nil, err
	}
	k.CreatedAt, k.LastUsedAt, k.RevokedAt = fromMillis(created), fromNullMillis(used), fromNullMillis(revoked)
	return &k, nil
}

var errNoKey = betaport.Errorf(betaport.ENOTFOUND, "There is no such key.")

// CreateKey inserts a named key and its audit event in one transaction.
func (s *DB) CreateKey(ctx context.Context, k *betaport.Key, keyHash string) error {
	k.Label = strings.TrimSpace(k.Label)
	if err := k.Validate(); err != nil {
		return err
	}
	if keyHash == "" {
		return betaport.Errorf(betaport.EINVALID, "A key needs the hash of its secret.")
	}
	k.CreatedAt, k.LastUsedAt, k.RevokedAt = betaport.Now(), nil, nil
	return s.inTx(ctx, func(tx *Tx) error {
		if err := lockExtension(ctx, tx, k.ExtensionID); err != nil {
			return err
		}
		if k.Channel != "" {
			// A key bound to a channel publishes there only: it must exist.
			if _, err := findChannel(ctx, tx, k.ExtensionID, k.Channel); err != nil {
				return err
			}
		}
		err := tx.QueryRowContext(ctx,
			`INSERT INTO api_keys (extension_id, label, key_hash, created_at, created_by, channel) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
			k.ExtensionID, k.Label, keyHash, millis(k.CreatedAt), k.CreatedBy, k.Channel).Scan(&k.ID)
		if err != nil {
			return err
		}
		return recordAudit(ctx, tx, k.ExtensionID, k.CreatedBy, betaport.AuditKeyCreated, k.Label)
	})
}

// FindKeys returns a page of an extension's keys, newest first.
func (s *DB) FindKeys(ctx context.Context, extensionID, beforeID int64, limit int) ([]*betaport.Key, error) {
	if _, err := s.FindExtension(ctx, extensionID); err != nil {
		return nil, err
	}
	if beforeID <= 0 {
		beforeID = math.MaxInt64
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+keyColumns+` FROM api_keys
		WHERE extension_id = ? AND id < ? ORDER BY id DESC LIMIT ?`, extensionID, beforeID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*betaport.Key{}
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, k)
	}
	return list, rows.Err()
}

// FindKeyByHash returns the unrevoked key whose secret hashes to hash.
func (s *DB) FindKeyByHash(ctx context.Context, hash string) (*betaport.Key, error) {
	k, err := scanKey(s.db.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys
		WHERE key_hash = ? AND revoked_at IS NULL`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoKey
	}
	return k, err
}

// RevokeKey revokes a key of an extension and records it, once: revoking
// it again answers the key as it is.
func (s *DB) RevokeKey(ctx context.Context, extensionID, keyID int64, actor string) (*betaport.Key, error) {
	var k *betaport.Key
	err := s.inTx(ctx, func(tx *Tx) error {
		var err error
		k, err = scanKey(tx.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = ? AND extension_id = ?`, keyID, extensionID))
		if errors.Is(err, sql.ErrNoRows) {
			return errNoKey
		} else if err != nil || k.RevokedAt != nil {
			return err
		}
		now := betaport.Now()
		res, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, millis(now), keyID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			// A racing revoke came first: answer the key as it revoked it.
			k, err = scanKey(tx.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = ?`, keyID))
			return err
		}
		k.RevokedAt = &now
		return recordAudit(ctx, tx, extensionID, actor, betaport.AuditKeyRevoked, k.Label)
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// KeyUsed records when a key was last used. A busy pipeline uses its key
// twice a submission: the row is written only when the time moves on by a
// second or more, so calls do not queue on one row's lock.
func (s *DB) KeyUsed(ctx context.Context, keyID int64, at time.Time) error {
	_, err := s.db.ExecContext(ctx,
		`UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`,
		millis(at), keyID, millis(at)-1000)
	return err
}

// FindKey returns one key of an extension, revoked or not.
func (s *DB) FindKey(ctx context.Context, extensionID, keyID int64) (*betaport.Key, error) {
	k, err := scanKey(s.db.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = ? AND extension_id = ?`, keyID, extensionID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoKey
	}
	return k, err
}
