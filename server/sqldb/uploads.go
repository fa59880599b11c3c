package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/betaport/betaport/app/betaport"
)

// CreateUpload inserts an upload and supersedes the extension's open ones.
func (s *DB) CreateUpload(ctx context.Context, u *betaport.Upload) error {
	u.State = betaport.UploadRequested
	u.CreatedAt = betaport.Now()
	p := betaport.Placement{Channel: u.Channel, Percent: u.Percent}.WithDefaults()
	if err := p.Validate(); err != nil {
		return err
	}
	u.Channel, u.Percent = p.Channel, p.Percent
	return s.inTx(ctx, func(tx *Tx) error {
		if err := lockExtension(ctx, tx, u.ExtensionID); err != nil {
			return err
		}
		// Said now, at call 1, rather than after the zip went up.
		if _, err := findChannel(ctx, tx, u.ExtensionID, u.Channel); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx,
			`UPDATE uploads SET state = 'superseded' WHERE extension_id = ? AND state IN ('requested', 'received')`,
			u.ExtensionID); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx,
			`INSERT INTO uploads (extension_id, state, created_at, expires_at, release_notes, channel, rollout_percent)
			 VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			u.ExtensionID, u.State, millis(u.CreatedAt), millis(u.ExpiresAt), u.ReleaseNotes, u.Channel, u.Percent).Scan(&u.ID)
	})
}

const uploadColumns = `id, extension_id, state, size, sha256, problems, bundle_number, created_at, expires_at, received_at, release_notes, channel, rollout_percent`

func scanUpload(row interface{ Scan(...any) error }) (*betaport.Upload, error) {
	var u betaport.Upload
	var problems sql.NullString
	var number, received sql.NullInt64
	var created, expires int64
	if err := row.Scan(&u.ID, &u.ExtensionID, &u.State, &u.Size, &u.SHA256, &problems, &number,
		&created, &expires, &received, &u.ReleaseNotes, &u.Channel, &u.Percent); err != nil {
		return nil, err
	}
	if problems.Valid {
		if err := json.Unmarshal([]byte(problems.String), &u.Problems); err != nil {
			return nil, err
		}
	}
	u.BundleNumber = number.Int64
	u.CreatedAt, u.ExpiresAt, u.ReceivedAt = fromMillis(created), fromMillis(expires), fromNullMillis(received)
	return &u, nil
}

var errNoUpload = betaport.Errorf(betaport.ENOTFOUND, "There is no such upload.")

// FindUpload returns an upload by id.
func (s *DB) FindUpload(ctx context.Context, id int64) (*betaport.Upload, error) {
	u, err := scanUpload(s.db.QueryRowContext(ctx, `SELECT `+uploadColumns+` FROM uploads WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoUpload
	}
	return u, err
}

// LatestUpload returns the extension's most recently issued upload.
func (s *DB) LatestUpload(ctx context.Context, extensionID int64) (*betaport.Upload, error) {
	u, err := scanUpload(s.db.QueryRowContext(ctx,
		`SELECT `+uploadColumns+` FROM uploads WHERE extension_id = ? ORDER BY id DESC LIMIT 1`, extensionID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoUpload
	}
	return u, err
}

// ReceiveUpload records the stored zip of an upload still waiting for one
// (or replaced by a retried PUT before sign).
func (s *DB) ReceiveUpload(ctx context.Context, id, size int64, sha256 string) error {
	res, err := s.db.ExecContext(ctx,
		`UPDATE uploads SET state = 'received', size = ?, sha256 = ?, received_at = ?
		 WHERE id = ? AND state IN ('requested', 'received')`, size, sha256, millis(betaport.Now()), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return betaport.Errorf(betaport.ECONFLICT, "This upload is closed: it was signed, replaced by a newer upload URL, or it expired. Request a new upload URL.")
	}
	return nil
}

// RejectUpload records why a received upload was refused.
func (s *DB) RejectUpload(ctx context.Context, id int64, problems []betaport.ZipProblem) error {
	b, err := json.Marshal(problems)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx,
		`UPDATE uploads SET state = 'rejected', problems = ? WHERE id = ? AND state = 'received'`, string(b), id)
	return err
}

// PublishUpload publishes a received upload exactly once.
func (s *DB) PublishUpload(ctx context.Context, uploadID int64, b *betaport.Bundle) (*betaport.Bundle, bool, error) {
	if b.CreatedAt.IsZero() {
		b.CreatedAt = betaport.Now()
	}
	published := false
	err := s.inTx(ctx, func(tx *Tx) error {
		var extensionID int64
		// The upload says where its bundle goes (call 1 said).
		err := tx.QueryRowContext(ctx, `SELECT extension_id, channel, rollout_percent FROM uploads WHERE id = ?`,
			uploadID).Scan(&extensionID, &b.Placement.Channel, &b.Placement.Percent)
		if errors.Is(err, sql.ErrNoRows) {
			return errNoUpload
		} else if err != nil {
			return err
		}
		if err := lockExtension(ctx, tx, extensionID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx,
			`UPDATE uploads SET state = 'published' WHERE id = ? AND state = 'received'`, uploadID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // published by another sign, or no longer received
		}
		if err := publishInTx(ctx, tx, b, uploadID); err != nil {
			return err
		}
		published = true
		_, err = tx.ExecContext(ctx, `UPDATE uploads SET bundle_number = ? WHERE id = ?`, b.Number, uploadID)
		return err
	})
	if err != nil || published {
		return b, published, err
	}
	u, err := s.FindUpload(ctx, uploadID)
	if err != nil {
		return nil, false, err
	}
	if u.State != betaport.UploadPublished {
		return nil, false, betaport.Errorf(betaport.ECONFLICT, "This upload is %s, not ready to publish.", u.State)
	}
	existing, err := s.FindBundle(ctx, u.ExtensionID, u.BundleNumber)
	return existing, false, err
}

// ExpireUploads marks requested uploads whose URL has expired.
func (s *DB) ExpireUploads(ctx context.Context, now time.Time) error {
	_, err := s.db.ExecContext(ctx,
		`UPDATE uploads SET state = 'expired' WHERE state = 'requested' AND expires_at <= ?`, millis(now))
	return err
}

// EndPendingUploads expires every upload still waiting for its zip or for
// its sign, and says how many: a restored backup holds none of their zips
// (it keeps only what bundles name), so their pipelines must start again.
func (s *DB) EndPendingUploads(ctx context.Context) (int64, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE uploads SET state = 'expired' WHERE state IN ('requested', 'received')`)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// SweepableUploads lists dead uploads whose bytes may still be stored.
func (s *DB) SweepableUploads(ctx context.Context, limit int) ([]*betaport.Upload, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT `+uploadColumns+` FROM uploads
		 WHERE swept = 0 AND state IN ('expired', 'rejected', 'superseded', 'published') ORDER BY id LIMIT ?`, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []*betaport.Upload
	for rows.Next() {
		u, err := scanUpload(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, u)
	}
	return list, rows.Err()
}

// MarkUploadSwept records that an upload's bytes are gone.
func (s *DB) MarkUploadSwept(ctx context.Context, id int64) error {
	_, err := s.db.ExecContext(ctx, `UPDATE uploads SET swept = 1 WHERE id = ?`, id)
	return err
}

// LiveBlobs lists the blob keys records point to.
func (s *DB) LiveBlobs(ctx context.Context) (*betaport.LiveBlobs, error) {
	live := &betaport.LiveBlobs{Keys: map[string]bool{}, PendingUploads: map[int64]bool{}}
	rows, err := s.db.QueryContext(ctx, `SELECT blob_key, crx_key FROM bundles`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var zip, crx string
		if err := rows.Scan(&zip, &crx); err != nil {
			return nil, err
		}
		live.Keys[zip] = true
		if crx != "" {
			live.Keys[crx] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Testers' screenshots are kept as long as their report.
	shots, err := s.db.QueryContext(ctx, `SELECT blob_key FROM feedback_screenshots`)
	if err != nil {
		return nil, err
	}
	defer shots.Close()
	for shots.Next() {
		var key string
		if err := shots.Scan(&key); err != nil {
			return nil, err
		}
		live.Keys[key] = true
	}
	if err := shots.Err(); err != nil {
		return nil, err
	}
	ids, err := s.db.QueryContext(ctx, `SELECT id FROM uploads WHERE state IN ('requested', 'received')`)
	if err != nil {
		return nil, err
	}
	defer ids.Close()
	for ids.Next() {
		var id int64
		if err := ids.Scan(&id); err != nil {
			return nil, err
		}
		live.PendingUploads[id] = true
	}
	return live, ids.Err()
}
