package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// CreateFeedback keeps a tester's report and its screenshots' records in
// one transaction.
func (s *DB) CreateFeedback(ctx context.Context, f *betaport.Feedback) error {
	if err := f.Validate(); err != nil {
		return err
	}
	f.Status = betaport.FeedbackNew
	f.CreatedAt = betaport.Now()
	f.UpdatedAt = f.CreatedAt
	return s.inTx(ctx, func(tx *Tx) error {
		var ext int64
		err := tx.QueryRowContext(ctx, `SELECT extension_id FROM testers WHERE id = ?`, f.TesterID).Scan(&ext)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && ext != f.ExtensionID) {
			return betaport.Errorf(betaport.ENOTFOUND, "This extension has no such tester.")
		} else if err != nil {
			return err
		}
		err = tx.QueryRowContext(ctx, `INSERT INTO feedback
			(extension_id, tester_id, bundle_number, version, body, browser, os, source, status, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			f.ExtensionID, f.TesterID, f.BundleNumber, f.Version, f.Text, f.Browser, f.OS, f.Source, f.Status,
			millis(f.CreatedAt), millis(f.UpdatedAt)).Scan(&f.ID)
		if err != nil {
			return err
		}
		for _, sc := range f.Screenshots {
			if _, err := tx.ExecContext(ctx, `INSERT INTO feedback_screenshots
				(feedback_id, number, type, width, height, size, blob_key) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				f.ID, sc.Number, sc.Type, sc.Width, sc.Height, sc.Size, sc.BlobKey); err != nil {
				return err
			}
		}
		if err := tx.QueryRowContext(ctx, `SELECT email FROM testers WHERE id = ?`, f.TesterID).Scan(&f.TesterEmail); err != nil {
			return err
		}
		if err := emitFeedbackEvent(ctx, tx, betaport.EventFeedbackCreated, f); err != nil {
			return err
		}
		return moveFeedbackRevision(ctx, tx, f.ExtensionID)
	})
}

// moveFeedbackRevision says the extension's reports changed (its "feedback"
// event).
func moveFeedbackRevision(ctx context.Context, tx *Tx, extensionID int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE extensions SET feedback_revision = feedback_revision + 1 WHERE id = ?`, extensionID)
	return err
}

// emitFeedbackEvent sends a report's event to the extension's webhooks:
// its text and links, never its screenshots' bytes.
func emitFeedbackEvent(ctx context.Context, tx *Tx, typ string, f *betaport.Feedback) error {
	ev := &betaport.EventFeedback{
		ID: f.ID, Status: f.Status, Tester: f.TesterEmail, BundleNumber: f.BundleNumber, Version: f.Version,
		Text: f.Text, Source: f.Source, Browser: f.Browser, OS: f.OS,
		PagePath: api.FeedbackPagePath(f.ExtensionID, f.ID), APIPath: api.FeedbackReportPath(f.ExtensionID, f.ID),
		ScreenshotPaths: []string{},
	}
	for _, sc := range f.Screenshots {
		ev.ScreenshotPaths = append(ev.ScreenshotPaths, api.FeedbackScreenshotPath(f.ExtensionID, f.ID, sc.Number))
	}
	return emitEvent(ctx, tx, f.ExtensionID, typ, betaport.WebhookEvent{Feedback: ev})
}

const feedbackColumns = `f.id, f.extension_id, f.tester_id, t.email, f.bundle_number, f.version, f.body, f.browser, f.os,
	f.source, f.status, f.created_at, f.updated_at`

const feedbackFrom = ` FROM feedback f JOIN testers t ON t.id = f.tester_id `

func queryFeedback(ctx context.Context, q querier, where string, args ...any) ([]*betaport.Feedback, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+feedbackColumns+feedbackFrom+`WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*betaport.Feedback{}
	byID := map[int64]*betaport.Feedback{}
	for rows.Next() {
		var f betaport.Feedback
		var created, updated int64
		if err := rows.Scan(&f.ID, &f.ExtensionID, &f.TesterID, &f.TesterEmail, &f.BundleNumber, &f.Version, &f.Text,
			&f.Browser, &f.OS, &f.Source, &f.Status, &created, &updated); err != nil {
			return nil, err
		}
		f.CreatedAt, f.UpdatedAt, f.Screenshots = fromMillis(created), fromMillis(updated), []betaport.Screenshot{}
		list = append(list, &f)
		byID[f.ID] = &f
	}
	if err := rows.Err(); err != nil || len(list) == 0 {
		return list, err
	}
	// The page's screenshots, in one query.
	ids := make([]any, 0, len(list))
	for _, f := range list {
		ids = append(ids, f.ID)
	}
	shots, err := q.QueryContext(ctx, `SELECT feedback_id, number, type, width, height, size, blob_key FROM feedback_screenshots
		WHERE feedback_id IN (`+strings.Repeat("?, ", len(ids)-1)+`?) ORDER BY feedback_id, number`, ids...)
	if err != nil {
		return nil, err
	}
	defer shots.Close()
	for shots.Next() {
		var id int64
		var sc betaport.Screenshot
		if err := shots.Scan(&id, &sc.Number, &sc.Type, &sc.Width, &sc.Height, &sc.Size, &sc.BlobKey); err != nil {
			return nil, err
		}
		byID[id].Screenshots = append(byID[id].Screenshots, sc)
	}
	return list, shots.Err()
}

var errNoFeedback = betaport.Errorf(betaport.ENOTFOUND, "This extension has no such report.")

// FindFeedback returns one report of an extension.
func (s *DB) FindFeedback(ctx context.Context, extensionID, id int64) (*betaport.Feedback, error) {
	list, err := queryFeedback(ctx, s.db, `f.extension_id = ? AND f.id = ?`, extensionID, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, errNoFeedback
	}
	return list[0], nil
}

// FindFeedbackList returns a page of an extension's reports, newest first,
// keyset-paged by id.
func (s *DB) FindFeedbackList(ctx context.Context, f betaport.FeedbackFilter) ([]*betaport.Feedback, error) {
	where, args := []string{`f.extension_id = ?`}, []any{f.ExtensionID}
	if f.TesterID != 0 {
		where, args = append(where, `f.tester_id = ?`), append(args, f.TesterID)
	}
	if f.BundleNumber != 0 {
		where, args = append(where, `f.bundle_number = ?`), append(args, f.BundleNumber)
	}
	switch f.Status {
	case "":
	case betaport.FeedbackOpen:
		where = append(where, `f.status <> 'resolved'`)
	default:
		if !betaport.ValidFeedbackStatus(f.Status) {
			return nil, &betaport.Error{Code: betaport.EINVALID, Param: "status", Message: "status is new, seen, resolved or open (new and seen)."}
		}
		where, args = append(where, `f.status = ?`), append(args, f.Status)
	}
	if q := strings.ToLower(strings.TrimSpace(f.Query)); q != "" {
		where = append(where, `(`+s.dialect.contains("lower(f.body)")+` OR `+s.dialect.contains("t.email")+`)`)
		args = append(args, q, q)
	}
	before := f.BeforeID
	if before <= 0 {
		before = math.MaxInt64
	}
	where, args = append(where, `f.id < ?`), append(args, before)
	limit := f.Limit
	if limit <= 0 {
		limit = 20
	}
	return queryFeedback(ctx, s.db, strings.Join(where, ` AND `)+` ORDER BY f.id DESC LIMIT ?`, append(args, limit)...)
}

// SetFeedbackStatus moves a report to status, with its audit event.
func (s *DB) SetFeedbackStatus(ctx context.Context, extensionID, id int64, status, actor string) (*betaport.Feedback, error) {
	if !betaport.ValidFeedbackStatus(status) {
		return nil, &betaport.Error{Code: betaport.EINVALID, Param: "status", Message: "A report is new, seen or resolved."}
	}
	var out *betaport.Feedback
	err := s.inTx(ctx, func(tx *Tx) error {
		list, err := queryFeedback(ctx, tx, `f.extension_id = ? AND f.id = ?`, extensionID, id)
		if err != nil {
			return err
		}
		if len(list) == 0 {
			return errNoFeedback
		}
		out = list[0]
		if out.Status == status {
			return nil
		}
		out.Status, out.UpdatedAt = status, betaport.Now()
		if _, err := tx.ExecContext(ctx, `UPDATE feedback SET status = ?, updated_at = ? WHERE id = ?`,
			status, millis(out.UpdatedAt), id); err != nil {
			return err
		}
		if err := recordAudit(ctx, tx, extensionID, actor, "feedback."+status, "#"+strconv.FormatInt(id, 10)+" from "+out.TesterEmail); err != nil {
			return err
		}
		if status == betaport.FeedbackResolved {
			if err := emitFeedbackEvent(ctx, tx, betaport.EventFeedbackResolved, out); err != nil {
				return err
			}
		}
		return moveFeedbackRevision(ctx, tx, extensionID)
	})
	return out, err
}

// DeleteFeedback deletes a report and its screenshots' records, with its
// audit event, and returns it: its screenshots' blobs are the caller's to
// delete (one it misses is swept, as no report names it).
func (s *DB) DeleteFeedback(ctx context.Context, extensionID, id int64, actor string) (*betaport.Feedback, error) {
	var out *betaport.Feedback
	err := s.inTx(ctx, func(tx *Tx) error {
		list, err := queryFeedback(ctx, tx, `f.extension_id = ? AND f.id = ?`, extensionID, id)
		if err != nil {
			return err
		}
		if len(list) == 0 {
			return errNoFeedback
		}
		out = list[0]
		if _, err := tx.ExecContext(ctx, `DELETE FROM feedback_screenshots WHERE feedback_id = ?`, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM feedback WHERE id = ?`, id); err != nil {
			return err
		}
		if err := recordAudit(ctx, tx, extensionID, actor, betaport.AuditFeedbackDeleted,
			"#"+strconv.FormatInt(id, 10)+" from "+out.TesterEmail); err != nil {
			return err
		}
		return moveFeedbackRevision(ctx, tx, extensionID)
	})
	return out, err
}

// OpenFeedbackCounts counts the open reports of each bundle.
func (s *DB) OpenFeedbackCounts(ctx context.Context, extensionID int64, numbers []int64) (map[int64]int64, error) {
	m := map[int64]int64{}
	if len(numbers) == 0 {
		return m, nil
	}
	args := []any{extensionID}
	for _, n := range numbers {
		args = append(args, n)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT bundle_number, COUNT(*) FROM feedback
		WHERE extension_id = ? AND status <> 'resolved' AND bundle_number IN (`+strings.Repeat("?, ", len(numbers)-1)+`?)
		GROUP BY bundle_number`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var n, c int64
		if err := rows.Scan(&n, &c); err != nil {
			return nil, err
		}
		m[n] = c
	}
	return m, rows.Err()
}
