package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strings"

	"github.com/betaport/betaport/app/betaport"
)

// CreateTeam validates and inserts t, filling its ID and creation time.
func (s *DB) CreateTeam(ctx context.Context, t *betaport.Team) error {
	t.Name = strings.TrimSpace(t.Name)
	if t.Seats == 0 {
		t.Seats = 1
	}
	if err := t.Validate(); err != nil {
		return err
	}
	t.CreatedAt = betaport.Now()
	return s.db.QueryRowContext(ctx,
		`INSERT INTO teams (name, plan, seats, created_at) VALUES (?, ?, ?, ?) RETURNING id`,
		t.Name, t.Plan, t.Seats, millis(t.CreatedAt)).Scan(&t.ID)
}

// FindTeam returns the team with the given ID.
func (s *DB) FindTeam(ctx context.Context, id int64) (*betaport.Team, error) {
	var t betaport.Team
	var created int64
	err := s.db.QueryRowContext(ctx,
		`SELECT id, name, plan, seats, created_at FROM teams WHERE id = ?`, id).
		Scan(&t.ID, &t.Name, &t.Plan, &t.Seats, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, betaport.Errorf(betaport.ENOTFOUND, "Team %d does not exist.", id)
	}
	t.CreatedAt = fromMillis(created)
	return &t, err
}

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
	return s.db.QueryRowContext(ctx,
		`INSERT INTO extensions (team_id, name, created_at) VALUES (?, ?, ?) RETURNING id`,
		e.TeamID, e.Name, millis(e.CreatedAt)).Scan(&e.ID)
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
	e, err := scanExtension(s.db.QueryRowContext(ctx,
		`SELECT `+extensionColumns+` FROM extensions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, betaport.Errorf(betaport.ENOTFOUND, "Extension %d does not exist.", id)
	}
	return e, err
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
		   file_count, source, blob_key, created_at, upload_id, crx_key, crx_size, crx_sha256, crx_token_hash)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		b.ExtensionID, b.Number, b.Name, b.Version, b.VersionName, b.ManifestVersion, b.Size, b.SHA256,
		b.FileCount, b.Source, b.BlobKey, millis(b.CreatedAt), nullID(uploadID),
		b.CRX.BlobKey, b.CRX.Size, b.CRX.SHA256, b.CRX.TokenHash).Scan(&b.ID)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx,
		`UPDATE extensions SET current_bundle = ? WHERE id = ?`, b.Number, b.ExtensionID); err != nil {
		return err
	}
	b.Current = true
	return nil
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

const bundleColumns = `b.id, b.extension_id, b.number, b.name, b.version, b.version_name, b.manifest_version,
	b.size, b.sha256, b.file_count, b.source, b.blob_key, b.created_at, e.current_bundle = b.number,
	b.crx_key, b.crx_size, b.crx_sha256, b.crx_token_hash`

func (s *DB) queryBundles(ctx context.Context, where string, args ...any) ([]*betaport.Bundle, error) {
	rows, err := s.db.QueryContext(ctx,
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
			&b.CRX.BlobKey, &b.CRX.Size, &b.CRX.SHA256, &b.CRX.TokenHash); err != nil {
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

// FindBuilds returns bundles of several extensions, newest first by id.
func (s *DB) FindBuilds(ctx context.Context, extensionIDs []int64, beforeID int64, limit int) ([]*betaport.Bundle, error) {
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
	args = append(args, beforeID, limit)
	return s.queryBundles(ctx, `b.extension_id IN (`+marks+`) AND b.id < ? ORDER BY b.id DESC LIMIT ?`, args...)
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

// CreateTesters validates and inserts testers in one transaction: either all
// of them are saved or none. They go in by multi-row INSERTs, so that a
// million load in seconds rather than in a million round trips.
func (s *DB) CreateTesters(ctx context.Context, ts []*betaport.Tester) error {
	now := betaport.Now()
	seen := make(map[testerKey]bool, len(ts))
	for _, t := range ts {
		if err := normalizeTester(t, now); err != nil {
			return err
		}
		if seen[keyOf(t)] {
			return testerExists(t.Email)
		}
		seen[keyOf(t)] = true
	}
	return s.inTx(ctx, func(tx *Tx) error {
		for from := 0; from < len(ts); from += testersPerInsert {
			if err := insertTesters(ctx, tx, ts[from:min(from+testersPerInsert, len(ts))]); err != nil {
				return err
			}
		}
		return nil
	})
}

// testersPerInsert is how many testers one INSERT carries: at 7 values each
// it stays under SQLite's 32,766 placeholders (PostgreSQL takes 65,535).
const testersPerInsert = 4000

// testerKey is what no two testers share.
type testerKey struct {
	extensionID int64
	email       string
}

func keyOf(t *betaport.Tester) testerKey { return testerKey{t.ExtensionID, t.Email} }

// insertTesters inserts ts, whose keys differ, with one statement and sets
// their IDs. A tester whose e-mail the extension has already is skipped (ON
// CONFLICT DO NOTHING) rather than failing the statement, so that the error
// can name them: a failed multi-row INSERT does not say which row failed.
// The rows RETURNING gives back are matched by key, as their order is not
// promised.
//
// Where the dialect asks for it (SQLite's search index, see lastTesterID),
// the rows go in newest first with their ids given: ts[0] still gets the
// lowest.
func insertTesters(ctx context.Context, tx *Tx, ts []*betaport.Tester) error {
	newestFirst := tx.d.lastTesterID != ""
	var lastID int64
	if newestFirst {
		if err := tx.QueryRowContext(ctx, tx.d.lastTesterID).Scan(&lastID); err != nil {
			return err
		}
	}
	var q strings.Builder
	q.WriteString(`INSERT INTO testers (`)
	row := `(?, ?, ?, ?, ?, ?)`
	if newestFirst {
		q.WriteString(`id, `)
		row = `(?, ?, ?, ?, ?, ?, ?)`
	}
	q.WriteString(`extension_id, email, name, status, created_at, last_seen_at) VALUES `)
	args := make([]any, 0, 7*len(ts))
	for n := range ts {
		i := n
		if newestFirst {
			i = len(ts) - 1 - n
			args = append(args, lastID+1+int64(i))
		}
		t := ts[i]
		if n > 0 {
			q.WriteString(`, `)
		}
		q.WriteString(row)
		args = append(args, t.ExtensionID, t.Email, t.Name, t.Status, millis(t.CreatedAt), nullMillis(t.LastSeenAt))
	}
	q.WriteString(` ON CONFLICT (extension_id, email) DO NOTHING RETURNING id, extension_id, email`)
	rows, err := tx.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	ids := make(map[testerKey]int64, len(ts))
	for rows.Next() {
		var id int64
		var k testerKey
		if err := rows.Scan(&id, &k.extensionID, &k.email); err != nil {
			return err
		}
		ids[k] = id
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, t := range ts {
		id, ok := ids[keyOf(t)]
		if !ok {
			return testerExists(t.Email)
		}
		t.ID = id
	}
	return nil
}
