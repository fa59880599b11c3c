package sqldb

import (
	"context"
	"database/sql"
	"errors"

	"github.com/betaport/betaport/app/betaport"
)

// CreateSigning keeps s for its extension unless one is kept already, and
// returns the one kept.
func (s *DB) CreateSigning(ctx context.Context, sg *betaport.Signing, chromeID string) (*betaport.Signing, error) {
	if len(sg.PrivateKey) == 0 || sg.UpdateToken == "" || chromeID == "" {
		return nil, betaport.Errorf(betaport.EINVALID, "Signing needs a key, an update token and a Chrome ID.")
	}
	created := betaport.Now()
	err := s.inTx(ctx, func(tx *Tx) error {
		if err := lockExtension(ctx, tx, sg.ExtensionID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx,
			`INSERT INTO extension_signing (extension_id, private_key, update_token, created_at)
			 VALUES (?, ?, ?, ?) ON CONFLICT (extension_id) DO NOTHING`,
			sg.ExtensionID, string(sg.PrivateKey), sg.UpdateToken, millis(created))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // kept already: the first key stays
		}
		_, err = tx.ExecContext(ctx, `UPDATE extensions SET chrome_id = ? WHERE id = ?`, chromeID, sg.ExtensionID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.FindSigning(ctx, sg.ExtensionID)
}

// FindSigning returns an extension's signing key and update token.
func (s *DB) FindSigning(ctx context.Context, extensionID int64) (*betaport.Signing, error) {
	sg := &betaport.Signing{ExtensionID: extensionID}
	var key string
	var created int64
	var rotated sql.NullInt64
	err := s.db.QueryRowContext(ctx,
		`SELECT private_key, update_token, created_at, rotated_at FROM extension_signing WHERE extension_id = ?`,
		extensionID).Scan(&key, &sg.UpdateToken, &created, &rotated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, betaport.Errorf(betaport.ENOTFOUND, "Extension %d has no signing key yet.", extensionID)
	} else if err != nil {
		return nil, err
	}
	sg.PrivateKey = []byte(key)
	sg.CreatedAt, sg.RotatedAt = fromMillis(created), fromNullMillis(rotated)
	return sg, nil
}

// RotateUpdateToken replaces an extension's update token.
func (s *DB) RotateUpdateToken(ctx context.Context, extensionID int64, token string) error {
	if token == "" {
		return betaport.Errorf(betaport.EINVALID, "An update token cannot be empty.")
	}
	res, err := s.db.ExecContext(ctx,
		`UPDATE extension_signing SET update_token = ?, rotated_at = ? WHERE extension_id = ?`,
		token, millis(betaport.Now()), extensionID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return betaport.Errorf(betaport.ENOTFOUND, "Extension %d has no signing key yet.", extensionID)
	}
	return nil
}

// SigningKeys lists every extension's stored private key.
func (s *DB) SigningKeys(ctx context.Context) (map[int64][]byte, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT extension_id, private_key FROM extension_signing`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	keys := map[int64][]byte{}
	for rows.Next() {
		var id int64
		var key string
		if err := rows.Scan(&id, &key); err != nil {
			return nil, err
		}
		keys[id] = []byte(key)
	}
	return keys, rows.Err()
}

// ReplaceSigningKey swaps an extension's stored private key, if unchanged.
func (s *DB) ReplaceSigningKey(ctx context.Context, extensionID int64, prev, next []byte) error {
	if len(next) == 0 {
		return betaport.Errorf(betaport.EINVALID, "A signing key cannot be empty.")
	}
	res, err := s.db.ExecContext(ctx,
		`UPDATE extension_signing SET private_key = ? WHERE extension_id = ? AND private_key = ?`,
		string(next), extensionID, string(prev))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return betaport.Errorf(betaport.ECONFLICT, "Extension %d's signing key changed meanwhile, or it has none.", extensionID)
	}
	return nil
}
