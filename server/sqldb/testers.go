package sqldb

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/betaport/betaport/app/betaport"
)

// CreateTesters validates and inserts testers in one transaction, each on
// the default channel: either all
// of them are saved or none. They go in by multi-row INSERTs, so that a
// million load in seconds rather than in a million round trips.
func (s *DB) CreateTesters(ctx context.Context, ts []*betaport.Tester) error {
	now := betaport.Now()
	seen := make(map[testerKey]bool, len(ts))
	for _, t := range ts {
		if err := normalizeTester(t, now); err != nil {
			return err
		}
		if t.Channel != betaport.DefaultChannel {
			return betaport.Errorf(betaport.EINVALID, "Testers loaded in bulk join the %s channel; move them to %s afterwards.",
				betaport.DefaultChannel, t.Channel)
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
		exts := make([]int64, 0, 1)
		for _, t := range ts {
			exts = append(exts, t.ExtensionID)
		}
		return moveTestersRevision(ctx, tx, exts...)
	})
}

// moveTestersRevision moves the testers revision of the extensions (each
// once, in id order: two transactions lock them in one order).
func moveTestersRevision(ctx context.Context, tx *Tx, extensionIDs ...int64) error {
	ids := slices.Clone(extensionIDs)
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		if _, err := tx.ExecContext(ctx, `UPDATE extensions SET testers_revision = testers_revision + 1 WHERE id = ?`, id); err != nil {
			return err
		}
	}
	return nil
}

// Revision reads an extension's bundle numbers and testers revision in one
// row.
func (s *DB) Revision(ctx context.Context, extensionID int64) (betaport.Revision, error) {
	var r betaport.Revision
	err := s.db.QueryRowContext(ctx, `SELECT current_bundle, last_bundle_number, testers_revision, channels_revision, feedback_revision
		FROM extensions WHERE id = ?`, extensionID).Scan(&r.CurrentBundle, &r.LastBundle, &r.Testers, &r.Channels, &r.Feedback)
	if errors.Is(err, sql.ErrNoRows) {
		return r, betaport.Errorf(betaport.ENOTFOUND, "Extension %d does not exist.", extensionID)
	}
	return r, err
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
	row := `(?, ?, ?, ?, ?, ?, ?)`
	if newestFirst {
		q.WriteString(`id, `)
		row = `(?, ?, ?, ?, ?, ?, ?, ?)`
	}
	q.WriteString(`extension_id, email, name, status, created_at, last_seen_at, invited_at) VALUES `)
	args := make([]any, 0, 8*len(ts))
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
		args = append(args, t.ExtensionID, t.Email, t.Name, t.Status, millis(t.CreatedAt), nullMillis(t.LastSeenAt), nullMillis(t.InvitedAt))
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

// normalizeTester trims and validates a tester before it is saved.
func normalizeTester(t *betaport.Tester, now time.Time) error {
	t.Normalize()
	if err := t.Validate(); err != nil {
		return err
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	if t.Channel == "" {
		t.Channel = betaport.DefaultChannel
	}
	if t.Status == betaport.TesterInvited && t.InvitedAt == nil {
		// Loaded as invited: their invite is as old as they are here.
		invited := t.CreatedAt
		t.InvitedAt = &invited
	}
	return nil
}

func testerExists(email string) error {
	return &betaport.Error{Code: betaport.ECONFLICT, Param: "email",
		Message: email + " is already a tester of this extension."}
}

// InviteTester inserts one tester with their invite link, and its audit
// event, in one transaction.
func (s *DB) InviteTester(ctx context.Context, t *betaport.Tester, link betaport.InviteLink, actor string) error {
	if err := normalizeTester(t, betaport.Now()); err != nil {
		return err
	}
	invited, expires := t.CreatedAt, link.ExpiresAt.UTC().Truncate(time.Millisecond)
	t.InvitedAt, t.InviteExpiresAt, t.InviteUsedAt = &invited, &expires, nil
	if t.Channel == "" {
		t.Channel = betaport.DefaultChannel
	}
	err := s.inTx(ctx, func(tx *Tx) error {
		if _, err := findChannel(ctx, tx, t.ExtensionID, t.Channel); err != nil {
			return err
		}
		err := tx.QueryRowContext(ctx,
			`INSERT INTO testers (extension_id, email, name, status, created_at, invite_hash, invited_at, invite_expires_at, channel)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			t.ExtensionID, t.Email, t.Name, t.Status, millis(t.CreatedAt), link.Hash, millis(invited), millis(expires), t.Channel).Scan(&t.ID)
		if err != nil {
			return err
		}
		if err := moveTestersRevision(ctx, tx, t.ExtensionID); err != nil {
			return err
		}
		return recordAudit(ctx, tx, t.ExtensionID, actor, betaport.AuditTesterInvited, t.Email)
	})
	if s.dialect.isUniqueViolation(err) {
		return testerExists(t.Email)
	}
	return err
}

// testerColumns are read from the testers table named t.
const testerColumns = `t.id, t.extension_id, t.email, t.name, t.status, t.created_at, t.last_seen_at, t.invited_at, COALESCE(t.revoked_by, ''),
	t.installed_version, t.last_check_at, COALESCE(t.update_token_hash, ''), t.invite_expires_at, t.invite_used_at, t.channel`

func scanTester(row interface{ Scan(...any) error }) (*betaport.Tester, error) {
	var t betaport.Tester
	var created int64
	var seen, invited, checked, expires, used sql.NullInt64
	if err := row.Scan(&t.ID, &t.ExtensionID, &t.Email, &t.Name, &t.Status, &created, &seen, &invited, &t.RevokedBy,
		&t.InstalledVersion, &checked, &t.UpdateTokenHash, &expires, &used, &t.Channel); err != nil {
		return nil, err
	}
	t.CreatedAt, t.LastSeenAt, t.InvitedAt = fromMillis(created), fromNullMillis(seen), fromNullMillis(invited)
	t.LastCheckAt = fromNullMillis(checked)
	t.InviteExpiresAt, t.InviteUsedAt = fromNullMillis(expires), fromNullMillis(used)
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
	if f.Channel != "" {
		where, args = append(where, `t.channel = ?`), append(args, f.Channel)
	}
	if f.Behind != "" {
		where = append(where, `t.status <> 'revoked' AND t.last_check_at IS NOT NULL AND t.installed_version <> ?`)
		args = append(args, f.Behind)
	}
	if !f.SilentSince.IsZero() {
		where, args = append(where, `t.status <> 'revoked' AND t.last_check_at < ?`), append(args, millis(f.SilentSince))
	}
	if f.Installed {
		where = append(where, `t.status <> 'revoked' AND t.update_token_hash IS NOT NULL`)
	}
	if f.BeforeID > 0 {
		where, args = append(where, `t.id < ?`), append(args, f.BeforeID)
	}
	q := `SELECT ` + testerColumns + ` FROM ` + from + ` WHERE ` + strings.Join(where, ` AND `) +
		` ORDER BY ` + order + ` LIMIT ?`
	return q, append(args, f.Limit)
}

// UseInvite signs a tester in with their link: the link is marked used,
// the tester active and seen, in one statement whose conditions make two
// browsers racing with one link sign one in.
func (s *DB) UseInvite(ctx context.Context, inviteHash string, now time.Time) (*betaport.Tester, error) {
	var t *betaport.Tester
	err := s.inTx(ctx, func(tx *Tx) error {
		at := millis(now)
		var id int64
		err := tx.QueryRowContext(ctx,
			`UPDATE testers SET status = 'active', last_seen_at = ?, invite_used_at = ?
			 WHERE invite_hash = ? AND status <> 'revoked' AND invite_used_at IS NULL
			   AND (invite_expires_at IS NULL OR invite_expires_at > ?) RETURNING id`,
			at, at, inviteHash, at).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			// Say why: read the link as it is.
			t, err = scanTester(tx.QueryRowContext(ctx, `SELECT `+testerColumns+` FROM testers t WHERE t.invite_hash = ?`, inviteHash))
			if errors.Is(err, sql.ErrNoRows) {
				return errNoTester
			} else if err != nil {
				return err
			}
			return inviteRefused(t, now)
		} else if err != nil {
			return err
		}
		if t, err = scanTester(tx.QueryRowContext(ctx, `SELECT `+testerColumns+` FROM testers t WHERE t.id = ?`, id)); err != nil {
			return err
		}
		return moveTestersRevision(ctx, tx, t.ExtensionID)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// inviteRefused says why t's link signs no one in at now.
func inviteRefused(t *betaport.Tester, now time.Time) error {
	if t.Status == betaport.TesterRevoked {
		return &betaport.Error{Code: betaport.EFORBIDDEN, Message: "This tester's access was revoked."}
	}
	if t.InviteLinkState(now) == betaport.InviteExpired {
		return &betaport.Error{Code: betaport.ECONFLICT, Reason: betaport.ReasonInviteExpired,
			Message: "This invite link expired. Ask the extension's admin for a new one."}
	}
	return &betaport.Error{Code: betaport.ECONFLICT, Reason: betaport.ReasonInviteUsed,
		Message: "This invite link was used already: each link signs in one browser. Ask the extension's admin for a new one."}
}

// RevokeTester revokes a tester, recording who did. Their sessions stop
// working at once, because every request checks the tester's status; they
// are kept so the tester's browser can be told that their access ended and
// whom to ask (RestoreTester deletes them). Revoking a revoked tester
// changes nothing and records nothing.
func (s *DB) RevokeTester(ctx context.Context, id int64, actor string) error {
	return s.inTx(ctx, func(tx *Tx) error {
		t, err := scanTester(tx.QueryRowContext(ctx, `SELECT `+testerColumns+` FROM testers t WHERE t.id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return errNoTester
		} else if err != nil || t.Status == betaport.TesterRevoked {
			return err
		}
		// The status condition makes racing revokes revoke once: the
		// row is locked by the first, and the others change nothing.
		res, err := tx.ExecContext(ctx, `UPDATE testers SET status = 'revoked', revoked_by = ? WHERE id = ? AND status <> 'revoked'`, actor, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		if err := moveTestersRevision(ctx, tx, t.ExtensionID); err != nil {
			return err
		}
		return recordAudit(ctx, tx, t.ExtensionID, actor, betaport.AuditTesterRevoked, t.Email)
	})
}

// RestoreTester makes a revoked tester invited again with a new link.
func (s *DB) RestoreTester(ctx context.Context, id int64, link betaport.InviteLink, actor string) (*betaport.Tester, error) {
	return s.newInvite(ctx, id, link, actor, betaport.AuditTesterRestored)
}

// ResendInvite gives a tester who is not revoked a new link.
func (s *DB) ResendInvite(ctx context.Context, id int64, link betaport.InviteLink, actor string) (*betaport.Tester, error) {
	return s.newInvite(ctx, id, link, actor, betaport.AuditInviteResent)
}

// newInvite replaces a tester's invite link: a restore (action
// AuditTesterRestored) takes a revoked tester back to invited, a resend
// keeps an invited or active tester's status. The old link stops working
// in the same transaction.
func (s *DB) newInvite(ctx context.Context, id int64, link betaport.InviteLink, actor, action string) (*betaport.Tester, error) {
	var t *betaport.Tester
	err := s.inTx(ctx, func(tx *Tx) error {
		var err error
		t, err = scanTester(tx.QueryRowContext(ctx, `SELECT `+testerColumns+` FROM testers t WHERE t.id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return errNoTester
		} else if err != nil {
			return err
		}
		restore, was := action == betaport.AuditTesterRestored, t.Status
		switch {
		case restore && t.Status != betaport.TesterRevoked:
			return &betaport.Error{Code: betaport.ECONFLICT, Message: t.Email + " is not revoked, so there is nothing to restore."}
		case !restore && t.Status == betaport.TesterRevoked:
			return &betaport.Error{Code: betaport.ECONFLICT, Message: t.Email + " was revoked: restore them to send a new link."}
		case restore:
			t.Status, t.RevokedBy = betaport.TesterInvited, ""
		}
		now, expires := betaport.Now(), link.ExpiresAt.UTC().Truncate(time.Millisecond)
		t.InvitedAt, t.InviteExpiresAt, t.InviteUsedAt = &now, &expires, nil
		// Only from the status read: of racing restores one changes the
		// row (which locks it), the others find it restored already.
		// A new link (not a restore) replaces the update token too: the
		// tester installs again from it, and the old copy stops updating.
		update := ``
		if !restore {
			update = `, update_token_hash = NULL, update_token_sealed = NULL`
		}
		res, err := tx.ExecContext(ctx, `UPDATE testers SET status = ?, revoked_by = NULL, invite_hash = ?, invited_at = ?,
			invite_expires_at = ?, invite_used_at = NULL`+update+` WHERE id = ? AND status = ?`,
			t.Status, link.Hash, millis(now), millis(expires), id, was)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return &betaport.Error{Code: betaport.ECONFLICT, Message: t.Email + " changed meanwhile (restored or revoked by someone else): read the list again."}
		}
		if restore {
			// The sessions of before the revoke stay ended: the tester
			// signs in again with the new link.
			if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE tester_id = ?`, id); err != nil {
				return err
			}
		}
		if err := moveTestersRevision(ctx, tx, t.ExtensionID); err != nil {
			return err
		}
		return recordAudit(ctx, tx, t.ExtensionID, actor, action, t.Email)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// FindTesterByEmail returns an extension's tester with the given e-mail.
func (s *DB) FindTesterByEmail(ctx context.Context, extensionID int64, email string) (*betaport.Tester, error) {
	t, err := scanTester(s.db.QueryRowContext(ctx, `SELECT `+testerColumns+` FROM testers t
		WHERE t.extension_id = ? AND t.email = ?`, extensionID, strings.ToLower(strings.TrimSpace(email))))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoTester
	}
	return t, err
}

// TesterUpdateToken returns a tester's sealed update token, "" before one
// was made.
func (s *DB) TesterUpdateToken(ctx context.Context, testerID int64) (string, error) {
	var sealed sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT update_token_sealed FROM testers WHERE id = ?`, testerID).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", errNoTester
	}
	return sealed.String, err
}

// SetTesterUpdateToken gives a tester without an update token this one,
// and returns the one they have: of racing calls, the first to write wins
// and the others read its token.
func (s *DB) SetTesterUpdateToken(ctx context.Context, testerID int64, hash, sealed string) (string, error) {
	if _, err := s.db.ExecContext(ctx,
		`UPDATE testers SET update_token_hash = ?, update_token_sealed = ? WHERE id = ? AND update_token_hash IS NULL`,
		hash, sealed, testerID); err != nil {
		return "", err
	}
	return s.TesterUpdateToken(ctx, testerID)
}

// SealedTesterTokens returns every tester's sealed update token, by tester.
func (s *DB) SealedTesterTokens(ctx context.Context) (map[int64]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, update_token_sealed FROM testers WHERE update_token_sealed IS NOT NULL`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	tokens := map[int64]string{}
	for rows.Next() {
		var id int64
		var sealed string
		if err := rows.Scan(&id, &sealed); err != nil {
			return nil, err
		}
		tokens[id] = sealed
	}
	return tokens, rows.Err()
}

// ReplaceTesterToken seals a tester's update token again: it changes
// nothing if the token was replaced meanwhile (a new link).
func (s *DB) ReplaceTesterToken(ctx context.Context, testerID int64, old, sealed string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE testers SET update_token_sealed = ? WHERE id = ? AND update_token_sealed = ?`, sealed, testerID, old)
	return err
}

// FindTesterByUpdateToken returns the extension's tester whose update
// token hashes to hash.
func (s *DB) FindTesterByUpdateToken(ctx context.Context, extensionID int64, hash string) (*betaport.Tester, error) {
	t, err := scanTester(s.db.QueryRowContext(ctx,
		`SELECT `+testerColumns+` FROM testers t WHERE t.update_token_hash = ? AND t.extension_id = ?`, hash, extensionID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoTester
	}
	return t, err
}

// RecordTesterChecks keeps each tester's latest check, in one transaction;
// a check older than the one kept (from another replica's flush) changes
// nothing.
//
// Each check also keeps its tester's version of its UTC day (adoption by
// testers), where the later check of the day wins, and moves the testers
// revision of its extension. Rows are written in key order, so two
// replicas' flushes lock them in one order and never deadlock.
func (s *DB) RecordTesterChecks(ctx context.Context, checks []betaport.TesterCheck) error {
	if len(checks) == 0 {
		return nil
	}
	sorted := slices.Clone(checks)
	slices.SortFunc(sorted, func(a, b betaport.TesterCheck) int {
		return cmp.Or(cmp.Compare(a.TesterID, b.TesterID), a.At.Compare(b.At))
	})
	return s.inTx(ctx, func(tx *Tx) error {
		exts := make([]int64, 0, 1)
		for _, c := range sorted {
			if _, err := tx.ExecContext(ctx,
				`UPDATE testers SET installed_version = ?, last_check_at = ?
				 WHERE id = ? AND (last_check_at IS NULL OR last_check_at <= ?)`,
				c.Version, millis(c.At), c.TesterID, millis(c.At)); err != nil {
				return err
			}
			exts = append(exts, c.ExtensionID)
		}
		slices.SortFunc(sorted, func(a, b betaport.TesterCheck) int {
			return cmp.Or(cmp.Compare(a.ExtensionID, b.ExtensionID), cmp.Compare(day(a.At), day(b.At)),
				cmp.Compare(a.TesterID, b.TesterID), a.At.Compare(b.At))
		})
		for _, c := range sorted {
			// The tester's extension, not the one the check names: a row
			// is never written for a tester of another extension.
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO adoption_testers (extension_id, day, tester_id, version, checked_at)
				 SELECT extension_id, ?, id, ?, ? FROM testers WHERE id = ? AND extension_id = ?
				 ON CONFLICT (extension_id, day, tester_id) DO UPDATE
				 SET version = excluded.version, checked_at = excluded.checked_at
				 WHERE excluded.checked_at >= adoption_testers.checked_at`,
				day(c.At), c.Version, millis(c.At), c.TesterID, c.ExtensionID); err != nil {
				return err
			}
		}
		return moveTestersRevision(ctx, tx, exts...)
	})
}

// day is 00:00 UTC of t's day, in Unix milliseconds.
func day(t time.Time) int64 {
	t = t.UTC()
	return millis(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC))
}

// CountInstalls counts the extension's testers who are not revoked by what
// their copies last reported, in one statement.
func (s *DB) CountInstalls(ctx context.Context, extensionID int64, current string, silentSince time.Time) (betaport.Installs, error) {
	var n betaport.Installs
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*),
		COALESCE(SUM(CASE WHEN last_check_at IS NOT NULL AND installed_version = ? THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN last_check_at IS NOT NULL AND installed_version <> ? THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN last_check_at < ? THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN last_check_at IS NULL THEN 1 ELSE 0 END), 0)
		FROM testers WHERE extension_id = ? AND status <> 'revoked'`,
		current, current, millis(silentSince), extensionID).Scan(&n.Testers, &n.OnCurrent, &n.Behind, &n.Silent, &n.NotInstalled)
	return n, err
}
