package sqldb

import (
	"context"
	"database/sql"
	"errors"

	"github.com/betaport/betaport/app/betaport"
)

// SetExtensionKey replaces an extension's key hash.
func (s *DB) SetExtensionKey(ctx context.Context, extensionID int64, keyHash string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE extensions SET key_hash = ? WHERE id = ?`, keyHash, extensionID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return betaport.Errorf(betaport.ENOTFOUND, "Extension %d does not exist.", extensionID)
	}
	return nil
}

// ExtensionKey returns an extension's key hash.
func (s *DB) ExtensionKey(ctx context.Context, extensionID int64) (string, error) {
	var hash sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT key_hash FROM extensions WHERE id = ?`, extensionID).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", betaport.Errorf(betaport.ENOTFOUND, "Extension %d does not exist.", extensionID)
	}
	return hash.String, err
}
