package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/betaport/betaport/app/betaport"
)

// PublishBundle takes the extension's next bundle number, inserts b under it
// and makes it current, all in one transaction.
func (s *DB) PublishBundle(ctx context.Context, b *betaport.Bundle) error {
	if err := b.Validate(); err != nil {
		return err
	}
	if b.CreatedAt.IsZero() {
		b.CreatedAt = betaport.Now()
	}
	return s.inTx(ctx, func(tx *Tx) error { return publishInTx(ctx, tx, b, 0) })
}

// publishInTx numbers b, inserts it and makes it current inside tx.
func publishInTx(ctx context.Context, tx *Tx, b *betaport.Bundle, uploadID int64) error {
	expected := b.Number
	err := tx.QueryRowContext(ctx,
		`UPDATE extensions SET last_bundle_number = last_bundle_number + 1
		 WHERE id = ? RETURNING last_bundle_number`, b.ExtensionID).Scan(&b.Number)
	if errors.Is(err, sql.ErrNoRows) {
		return betaport.Errorf(betaport.ENOTFOUND, "Extension %d does not exist.", b.ExtensionID)
	} else if err != nil {
		return err
	}
	if expected != 0 && b.Number != expected {
		b.Number = expected
		return betaport.Errorf(betaport.ECONFLICT, "Another bundle was published while this one was built. Sign again.")
	}
	err = tx.QueryRowContext(ctx,
		`INSERT INTO bundles (extension_id, number, name, version, version_name, manifest_version, size, sha256,
		   file_count, source, blob_key, created_at, upload_id, crx_key, crx_size, crx_sha256, crx_token_hash,
		   crx_header_size, crx_tail_at, crx_state, min_chrome_version, release_notes, rollback_of)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		b.ExtensionID, b.Number, b.Name, b.Version, b.VersionName, b.ManifestVersion, b.Size, b.SHA256,
		b.FileCount, b.Source, b.BlobKey, millis(b.CreatedAt), nullID(uploadID),
		b.CRX.BlobKey, b.CRX.Size, b.CRX.SHA256, b.CRX.TokenHash,
		b.CRX.HeaderSize, b.CRX.TailAt, b.CRX.State, b.MinChromeVersion, b.ReleaseNotes, nullID(b.RollbackOf)).Scan(&b.ID)
	if err != nil {
		return err
	}
	p := b.Placement.WithDefaults()
	started, _, err := placeInTx(ctx, tx, b.ExtensionID, b.Number, p)
	if err != nil {
		return err
	}
	b.Current = p.Channel == betaport.DefaultChannel && started == nil
	typ := betaport.EventBundlePublished
	if b.RollbackOf != 0 {
		typ = betaport.EventBundleRolledBack
	}
	ev := betaport.WebhookEvent{Bundle: eventBundle(b), Channel: p.Channel}
	if err := emitEvent(ctx, tx, b.ExtensionID, typ, ev); err != nil {
		return err
	}
	if started == nil {
		return nil
	}
	if err := recordAudit(ctx, tx, b.ExtensionID, p.Actor, betaport.AuditRolloutStarted,
		fmt.Sprintf("#%d on %s at %d %%", b.Number, p.Channel, p.Percent)); err != nil {
		return err
	}
	ev.Rollout = eventRollout(started)
	return emitEvent(ctx, tx, b.ExtensionID, betaport.EventRolloutStarted, ev)
}

// findBundleIn reads one bundle inside tx.
func findBundleIn(ctx context.Context, tx *Tx, extensionID, number int64) (*betaport.Bundle, error) {
	list, err := queryBundlesIn(ctx, tx, `b.extension_id = ? AND b.number = ?`, extensionID, number)
	if err == nil && len(list) == 0 {
		return nil, betaport.Errorf(betaport.ENOTFOUND,
			"This extension has no bundle #%d. Pick one from its bundles list.", number)
	}
	if err != nil {
		return nil, err
	}
	return list[0], nil
}

// FindBundle returns one bundle of an extension by its number.
func (s *DB) FindBundle(ctx context.Context, extensionID, number int64) (*betaport.Bundle, error) {
	list, err := s.queryBundles(ctx, `b.extension_id = ? AND b.number = ?`, extensionID, number)
	if err == nil && len(list) == 0 {
		return nil, betaport.Errorf(betaport.ENOTFOUND, "Bundle %d of extension %d does not exist.", number, extensionID)
	} else if err != nil {
		return nil, err
	}
	return list[0], nil
}

// FindChannelBundleByVersion returns the newest bundle of version ever put
// on a channel: the build a tester's copy that reports version runs.
func (s *DB) FindChannelBundleByVersion(ctx context.Context, extensionID int64, channel, version string) (*betaport.Bundle, error) {
	list, err := s.queryBundles(ctx, `b.extension_id = ? AND b.version = ? AND b.number IN
		(SELECT number FROM channel_bundles WHERE extension_id = ? AND channel = ?) ORDER BY b.number DESC LIMIT 1`,
		extensionID, version, extensionID, channel)
	if err == nil && len(list) == 0 {
		return nil, betaport.Errorf(betaport.ENOTFOUND, "Channel %s of extension %d has no bundle of version %s.", channel, extensionID, version)
	} else if err != nil {
		return nil, err
	}
	return list[0], nil
}

const bundleColumns = `b.id, b.extension_id, b.number, b.name, b.version, b.version_name, b.manifest_version,
	b.size, b.sha256, b.file_count, b.source, b.blob_key, b.created_at, e.current_bundle = b.number,
	b.crx_key, b.crx_size, b.crx_sha256, b.crx_token_hash, b.crx_header_size, b.crx_tail_at, b.crx_state,
	b.min_chrome_version, b.release_notes, COALESCE(b.rollback_of, 0)`

func (s *DB) queryBundles(ctx context.Context, where string, args ...any) ([]*betaport.Bundle, error) {
	return queryBundlesIn(ctx, s.db, where, args...)
}

func queryBundlesIn(ctx context.Context, q querier, where string, args ...any) ([]*betaport.Bundle, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT `+bundleColumns+` FROM bundles b JOIN extensions e ON e.id = b.extension_id WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*betaport.Bundle{}
	for rows.Next() {
		var b betaport.Bundle
		var created int64
		if err := rows.Scan(&b.ID, &b.ExtensionID, &b.Number, &b.Name, &b.Version, &b.VersionName, &b.ManifestVersion,
			&b.Size, &b.SHA256, &b.FileCount, &b.Source, &b.BlobKey, &created, &b.Current,
			&b.CRX.BlobKey, &b.CRX.Size, &b.CRX.SHA256, &b.CRX.TokenHash, &b.CRX.HeaderSize, &b.CRX.TailAt, &b.CRX.State,
			&b.MinChromeVersion, &b.ReleaseNotes, &b.RollbackOf); err != nil {
			return nil, err
		}
		b.CreatedAt = fromMillis(created)
		list = append(list, &b)
	}
	return list, rows.Err()
}

// FindBundles returns a range of bundles by number, newest first.
func (s *DB) FindBundles(ctx context.Context, extensionID, maxNumber int64, limit int) ([]*betaport.Bundle, error) {
	return s.queryBundles(ctx, `b.extension_id = ? AND b.number <= ? ORDER BY b.number DESC LIMIT ?`, extensionID, maxNumber, limit)
}

// FindBundlePage returns page (from 0) of an extension's bundles, newest
// first. One statement reads the page's top (the extension's last number)
// and the bundles with whether each is current, so the page is one
// snapshot on both databases: SQLite runs a statement in one read
// transaction, PostgreSQL (read committed) with one snapshot, subqueries
// included. (Read as the last number first and the range after, a publish
// between the two gave a page whose newest bundle was no longer current,
// and no current one.) The range is over the (extension_id, number) index,
// so a deep page costs what the first one costs.
func (s *DB) FindBundlePage(ctx context.Context, extensionID, page int64, limit int) ([]*betaport.Bundle, error) {
	if page < 0 || limit < 1 {
		return nil, betaport.Errorf(betaport.EINVALID, "A page is numbered from 0 and holds at least one bundle.")
	}
	// The top comes from a subquery rather than the joined row: PostgreSQL
	// then bounds the index scan with it, where a join filter would walk
	// down from the newest bundle to a deep page.
	return s.queryBundles(ctx, `b.extension_id = ?
		AND b.number <= (SELECT x.last_bundle_number FROM extensions x WHERE x.id = ?) - ?
		ORDER BY b.number DESC LIMIT ?`,
		extensionID, extensionID, page*int64(limit), limit)
}

// FindBuilds returns bundles of several extensions, newest first by id.
func (s *DB) FindBuilds(ctx context.Context, extensionIDs []int64, channel string, beforeID int64, limit int) ([]*betaport.Bundle, error) {
	if len(extensionIDs) == 0 {
		return []*betaport.Bundle{}, nil
	}
	args := make([]any, 0, len(extensionIDs)+2)
	marks := strings.Repeat("?, ", len(extensionIDs)-1) + "?"
	for _, id := range extensionIDs {
		args = append(args, id)
	}
	if beforeID <= 0 {
		beforeID = math.MaxInt64
	}
	onChannel := ``
	if channel != "" {
		onChannel = ` AND EXISTS (SELECT 1 FROM channel_bundles cb
			WHERE cb.extension_id = b.extension_id AND cb.channel = ? AND cb.number = b.number)`
		args = append(args, channel)
	}
	args = append(args, beforeID, limit)
	return s.queryBundles(ctx, `b.extension_id IN (`+marks+`)`+onChannel+` AND b.id < ? ORDER BY b.id DESC LIMIT ?`, args...)
}

// LastBundleNumber is the highest bundle number given out.
func (s *DB) LastBundleNumber(ctx context.Context, extensionID int64) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT last_bundle_number FROM extensions WHERE id = ?`, extensionID).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, betaport.Errorf(betaport.ENOTFOUND, "Extension %d does not exist.", extensionID)
	}
	return n, err
}

// BundleRevision reads current_bundle and last_bundle_number in one row.
func (s *DB) BundleRevision(ctx context.Context, extensionID int64) (current, last int64, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT current_bundle, last_bundle_number FROM extensions WHERE id = ?`, extensionID).Scan(&current, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, betaport.Errorf(betaport.ENOTFOUND, "Extension %d does not exist.", extensionID)
	}
	return current, last, err
}

// BundleVersions lists the distinct served versions of an extension.
func (s *DB) BundleVersions(ctx context.Context, extensionID int64) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT version FROM bundles WHERE extension_id = ?`, extensionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		list = append(list, v)
	}
	return list, rows.Err()
}

// SetBundleCRX records a bundle's built CRX.
func (s *DB) SetBundleCRX(ctx context.Context, bundleID int64, c betaport.CRX) error {
	res, err := s.db.ExecContext(ctx,
		`UPDATE bundles SET crx_key = ?, crx_size = ?, crx_sha256 = ?, crx_token_hash = ?,
		   crx_header_size = ?, crx_tail_at = ?, crx_state = ? WHERE id = ?`,
		c.BlobKey, c.Size, c.SHA256, c.TokenHash, c.HeaderSize, c.TailAt, c.State, bundleID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return betaport.Errorf(betaport.ENOTFOUND, "Bundle %d does not exist.", bundleID)
	}
	return nil
}

// errRollbackCurrent: the bundle to roll back to is the current one.
var errRollbackCurrent = betaport.Errorf(betaport.ECONFLICT, "That bundle is already the current one.")

// PublishRollback publishes a rollback once: see betaport.BundleStore.
func (s *DB) PublishRollback(ctx context.Context, b *betaport.Bundle, actor string) (*betaport.Bundle, bool, error) {
	if err := b.Validate(); err != nil {
		return nil, false, err
	}
	if b.RollbackOf <= 0 {
		return nil, false, betaport.Errorf(betaport.EINVALID, "A rollback names the bundle it serves again.")
	}
	if b.CreatedAt.IsZero() {
		b.CreatedAt = betaport.Now()
	}
	var existing int64
	err := s.inTx(ctx, func(tx *Tx) error {
		if err := lockExtension(ctx, tx, b.ExtensionID); err != nil {
			return err
		}
		// Decided under the extension's lock: a racing rollback to the same
		// bundle finds this one current and publishes nothing. With a
		// rollout in progress, a rollback replaces it, whatever the
		// channel's current bundle is: it reaches everyone on the channel.
		b.Placement = betaport.Placement{Channel: b.Placement.Channel, Actor: actor}.WithDefaults()
		c, err := findChannel(ctx, tx, b.ExtensionID, b.Placement.Channel)
		if err != nil {
			return err
		}
		if c.Rollout == nil && c.CurrentBundle != 0 {
			if c.CurrentBundle == b.RollbackOf {
				return errRollbackCurrent
			}
			cur, err := findBundleIn(ctx, tx, b.ExtensionID, c.CurrentBundle)
			if err != nil {
				return err
			}
			if cur.RollbackOf == b.RollbackOf {
				existing = c.CurrentBundle
				return nil
			}
		}
		if err := publishInTx(ctx, tx, b, 0); err != nil {
			return err
		}
		return recordAudit(ctx, tx, b.ExtensionID, actor, betaport.AuditBundleRollback,
			fmt.Sprintf("#%d as #%d (version %s) on %s", b.RollbackOf, b.Number, b.Version, b.Placement.Channel))
	})
	if err != nil {
		return nil, false, err
	}
	if existing != 0 {
		found, err := s.FindBundle(ctx, b.ExtensionID, existing)
		return found, false, err
	}
	return b, true, nil
}
