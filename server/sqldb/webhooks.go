package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

var errNoWebhook = betaport.Errorf(betaport.ENOTFOUND, "There is no such webhook: it may have been deleted.")

const webhookColumns = `id, extension_id, url, secret, created_at, created_by, deleted_at`

func scanWebhook(row interface{ Scan(...any) error }) (*betaport.Webhook, error) {
	var w betaport.Webhook
	var created int64
	var deleted sql.NullInt64
	if err := row.Scan(&w.ID, &w.ExtensionID, &w.URL, &w.Secret, &created, &w.CreatedBy, &deleted); err != nil {
		return nil, err
	}
	w.CreatedAt, w.DeletedAt = fromMillis(created), fromNullMillis(deleted)
	return &w, nil
}

// CreateWebhook inserts a webhook, its secret as seal makes it for the
// new row, and its audit event, in one transaction: the row is written
// without a secret, its id sealed into the secret, and the seal stored.
func (s *DB) CreateWebhook(ctx context.Context, w *betaport.Webhook, seal betaport.SealFunc) error {
	if err := w.Validate(); err != nil {
		return err
	}
	if seal == nil {
		return errors.New("sqldb: CreateWebhook needs a seal for the webhook's secret")
	}
	w.CreatedAt, w.DeletedAt = betaport.Now(), nil
	return s.inTx(ctx, func(tx *Tx) error {
		if err := lockExtension(ctx, tx, w.ExtensionID); err != nil {
			return err
		}
		err := tx.QueryRowContext(ctx,
			`INSERT INTO webhooks (extension_id, url, secret, created_at, created_by) VALUES (?, ?, '', ?, ?) RETURNING id`,
			w.ExtensionID, w.URL, millis(w.CreatedAt), w.CreatedBy).Scan(&w.ID)
		if err != nil {
			return err
		}
		sealed, err := seal(w.ID, w.Secret)
		if err != nil {
			return err
		}
		if sealed == "" {
			return errors.New("sqldb: the webhook's secret sealed to nothing")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE webhooks SET secret = ? WHERE id = ?`, sealed, w.ID); err != nil {
			return err
		}
		return recordAudit(ctx, tx, w.ExtensionID, w.CreatedBy, betaport.AuditWebhookCreated, w.URL)
	})
}

// WebhookSecrets returns every webhook's stored secret, by webhook.
func (s *DB) WebhookSecrets(ctx context.Context) (map[int64]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, secret FROM webhooks WHERE secret <> ''`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	secrets := map[int64]string{}
	for rows.Next() {
		var id int64
		var secret string
		if err := rows.Scan(&id, &secret); err != nil {
			return nil, err
		}
		secrets[id] = secret
	}
	return secrets, rows.Err()
}

// ReplaceWebhookSecret stores a webhook's secret sealed anew: it changes
// nothing if the stored one changed meanwhile (another replica sealed it,
// or the webhook was deleted).
func (s *DB) ReplaceWebhookSecret(ctx context.Context, id int64, old, sealed string) error {
	if sealed == "" {
		return betaport.Errorf(betaport.EINVALID, "A webhook's secret cannot be replaced by nothing.")
	}
	_, err := s.db.ExecContext(ctx, `UPDATE webhooks SET secret = ? WHERE id = ? AND secret = ? AND secret <> ''`, sealed, id, old)
	return err
}

// FindWebhook returns an extension's webhook unless it was deleted.
func (s *DB) FindWebhook(ctx context.Context, extensionID, id int64) (*betaport.Webhook, error) {
	w, err := scanWebhook(s.db.QueryRowContext(ctx, `SELECT `+webhookColumns+` FROM webhooks
		WHERE id = ? AND extension_id = ? AND deleted_at IS NULL`, id, extensionID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoWebhook
	}
	return w, err
}

// FindWebhooks returns a page of an extension's webhooks, newest first.
func (s *DB) FindWebhooks(ctx context.Context, extensionID, beforeID int64, limit int) ([]*betaport.Webhook, error) {
	if beforeID <= 0 {
		beforeID = math.MaxInt64
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+webhookColumns+` FROM webhooks
		WHERE extension_id = ? AND deleted_at IS NULL AND id < ? ORDER BY id DESC LIMIT ?`, extensionID, beforeID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*betaport.Webhook{}
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, w)
	}
	return list, rows.Err()
}

// DeleteWebhook marks a webhook deleted and fails its pending deliveries,
// in one transaction: an attempt running meanwhile can no longer record a
// result (RecordDelivery wants the delivery pending).
func (s *DB) DeleteWebhook(ctx context.Context, extensionID, id int64, actor string) error {
	return s.inTx(ctx, func(tx *Tx) error {
		if err := lockExtension(ctx, tx, extensionID); err != nil {
			return err
		}
		var url string
		err := tx.QueryRowContext(ctx, `SELECT url FROM webhooks WHERE id = ? AND extension_id = ? AND deleted_at IS NULL`,
			id, extensionID).Scan(&url)
		if errors.Is(err, sql.ErrNoRows) {
			return errNoWebhook
		} else if err != nil {
			return err
		}
		now := millis(betaport.Now())
		// A deleted webhook never signs again: its secret goes with it.
		if _, err := tx.ExecContext(ctx, `UPDATE webhooks SET deleted_at = ?, secret = '' WHERE id = ?`, now, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries
			SET state = 'failed', last_error = ?, claimed_until = 0, claimed_by = ''
			WHERE webhook_id = ? AND state = 'pending'`,
			"The webhook was deleted before this event was delivered.", id); err != nil {
			return err
		}
		return recordAudit(ctx, tx, extensionID, actor, betaport.AuditWebhookDeleted, url)
	})
}

// PingWebhook writes a ping event and its one delivery.
func (s *DB) PingWebhook(ctx context.Context, extensionID, webhookID int64) (*betaport.WebhookDelivery, error) {
	var deliveryID int64
	err := s.inTx(ctx, func(tx *Tx) error {
		// The extension's lock orders this event among its publishes: a
		// webhook's deliveries are numbered in the order they commit.
		if err := lockExtension(ctx, tx, extensionID); err != nil {
			return err
		}
		var exists int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM webhooks WHERE id = ? AND extension_id = ? AND deleted_at IS NULL`,
			webhookID, extensionID).Scan(&exists)
		if errors.Is(err, sql.ErrNoRows) {
			return errNoWebhook
		} else if err != nil {
			return err
		}
		eventID, created, err := writeEvent(ctx, tx, extensionID, betaport.EventPing, betaport.WebhookEvent{})
		if err != nil {
			return err
		}
		err = tx.QueryRowContext(ctx, `INSERT INTO webhook_deliveries
			(webhook_id, event_id, state, next_attempt_at, expires_at, created_at)
			VALUES (?, ?, 'pending', ?, ?, ?) RETURNING id`,
			webhookID, eventID, millis(created), millis(created.Add(betaport.WebhookRetryWindow)), millis(created)).Scan(&deliveryID)
		tx.deliveries = true
		return err
	})
	if err != nil {
		return nil, err
	}
	list, err := s.queryDeliveries(ctx, `d.id = ?`, deliveryID)
	if err != nil {
		return nil, err
	}
	return list[0], nil
}

// eventBundle is how an event names a bundle.
func eventBundle(b *betaport.Bundle) *betaport.EventBundle {
	return &betaport.EventBundle{
		Number:       b.Number,
		Version:      b.Version,
		VersionName:  b.VersionName,
		ReleaseNotes: b.ReleaseNotes,
		RollbackOf:   b.RollbackOf,
		SHA256:       b.SHA256,
		DownloadPath: api.BundleDownloadPath(b.ExtensionID, b.Number),
	}
}

// emitEvent adds an event of the extension (its bundle, channel and
// rollout taken from ev) to the outbox, with a delivery to each of the
// extension's webhooks, inside tx.
func emitEvent(ctx context.Context, tx *Tx, extensionID int64, typ string, ev betaport.WebhookEvent) error {
	eventID, created, err := writeEvent(ctx, tx, extensionID, typ, ev)
	if err != nil || eventID == 0 {
		return err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries
		(webhook_id, event_id, state, next_attempt_at, expires_at, created_at)
		SELECT id, ?, 'pending', ?, ?, ? FROM webhooks WHERE extension_id = ? AND deleted_at IS NULL ORDER BY id`,
		eventID, millis(created), millis(created.Add(betaport.WebhookRetryWindow)), millis(created), extensionID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n > 0 {
		tx.deliveries = true
	}
	return nil
}

// writeEvent adds an event of the extension to the outbox and returns its
// id and time. An extension without webhooks gets no event: nobody would
// receive it.
func writeEvent(ctx context.Context, tx *Tx, extensionID int64, typ string, ev betaport.WebhookEvent) (int64, time.Time, error) {
	var name string
	var hooks int
	err := tx.QueryRowContext(ctx, `SELECT e.name, (SELECT COUNT(*) FROM webhooks w WHERE w.extension_id = e.id AND w.deleted_at IS NULL)
		FROM extensions e WHERE e.id = ?`, extensionID).Scan(&name, &hooks)
	if err != nil {
		return 0, time.Time{}, err
	}
	if hooks == 0 {
		return 0, time.Time{}, nil
	}
	ev.Type, ev.CreatedAt = typ, betaport.Now()
	ev.Extension = betaport.EventExtension{ID: strconv.FormatInt(extensionID, 10), Name: name}
	var id int64
	err = tx.QueryRowContext(ctx, `INSERT INTO webhook_events (extension_id, type, body, created_at) VALUES (?, ?, '', ?) RETURNING id`,
		extensionID, typ, millis(ev.CreatedAt)).Scan(&id)
	if err != nil {
		return 0, time.Time{}, err
	}
	// The body holds its own id: written once it is known, and then sent
	// byte for byte on every attempt.
	ev.ID = strconv.FormatInt(id, 10)
	body, err := json.Marshal(ev)
	if err != nil {
		return 0, time.Time{}, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE webhook_events SET body = ? WHERE id = ?`, string(body), id); err != nil {
		return 0, time.Time{}, err
	}
	return id, ev.CreatedAt, nil
}

const deliveryColumns = `d.id, d.webhook_id, d.event_id, e.type, d.state, d.attempts, d.last_status, d.last_error,
	d.response, d.created_at, d.delivered_at, d.next_attempt_at, d.expires_at, w.url, w.secret, e.body`

func (s *DB) queryDeliveries(ctx context.Context, where string, args ...any) ([]*betaport.WebhookDelivery, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d
		JOIN webhook_events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*betaport.WebhookDelivery{}
	for rows.Next() {
		var d betaport.WebhookDelivery
		var eventID, created, next, expires int64
		var delivered sql.NullInt64
		var body string
		if err := rows.Scan(&d.ID, &d.WebhookID, &eventID, &d.Type, &d.State, &d.Attempts, &d.LastStatus, &d.LastError,
			&d.Response, &created, &delivered, &next, &expires, &d.URL, &d.Secret, &body); err != nil {
			return nil, err
		}
		d.EventID = strconv.FormatInt(eventID, 10)
		d.CreatedAt, d.DeliveredAt, d.ExpiresAt = fromMillis(created), fromNullMillis(delivered), fromMillis(expires)
		if d.State == betaport.DeliveryPending {
			t := fromMillis(next)
			d.NextAttemptAt = &t
		}
		d.Body = []byte(body)
		list = append(list, &d)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(list) == 0 && strings.HasPrefix(where, "d.id = ?") {
		return nil, betaport.Errorf(betaport.ENOTFOUND, "There is no such delivery.")
	}
	return list, nil
}

// FindDeliveries returns a page of a webhook's deliveries, newest first.
func (s *DB) FindDeliveries(ctx context.Context, webhookID, beforeID int64, limit int) ([]*betaport.WebhookDelivery, error) {
	if beforeID <= 0 {
		beforeID = math.MaxInt64
	}
	list, err := s.queryDeliveries(ctx, `d.webhook_id = ? AND d.id < ? ORDER BY d.id DESC LIMIT ?`, webhookID, beforeID, limit)
	for _, d := range list {
		d.URL, d.Secret, d.Body = "", "", nil // a list shows no secrets
	}
	return list, err
}

// ClaimDeliveries picks due deliveries, then leases each with a
// conditional UPDATE that succeeds only while no lease runs on it: of
// claimers racing for one delivery, one updates the row and the others,
// their UPDATE re-checked against the row it left (PostgreSQL's read
// committed, or SQLite's one writer), update nothing.
func (s *DB) ClaimDeliveries(ctx context.Context, claimer string, now time.Time, lease time.Duration, limit int) ([]*betaport.WebhookDelivery, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT d.id, d.attempts FROM webhook_deliveries d
		WHERE d.state = 'pending' AND d.next_attempt_at <= ? AND d.claimed_until <= ?
		  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p
		                  WHERE p.webhook_id = d.webhook_id AND p.state = 'pending' AND p.id < d.id)
		ORDER BY d.next_attempt_at, d.id LIMIT ?`, millis(now), millis(now), limit)
	if err != nil {
		return nil, err
	}
	type due struct {
		id       int64
		attempts int
	}
	var candidates []due
	for rows.Next() {
		var c due
		if err := rows.Scan(&c.id, &c.attempts); err != nil {
			rows.Close()
			return nil, err
		}
		candidates = append(candidates, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	claimed := []*betaport.WebhookDelivery{}
	for _, c := range candidates {
		// Recording an attempt's result ends its lease (claimed_by = ''):
		// a delivery still leased when claimed again is one whose last
		// attempt was never finished, its claimer having died during it.
		// The list says so, rather than show an older attempt's outcome.
		res, err := s.db.ExecContext(ctx, `UPDATE webhook_deliveries
			SET last_error = CASE WHEN claimed_by <> '' THEN ? ELSE last_error END,
			    last_status = CASE WHEN claimed_by <> '' THEN 0 ELSE last_status END,
			    response = CASE WHEN claimed_by <> '' THEN '' ELSE response END,
			    claimed_until = ?, claimed_by = ?, attempts = attempts + 1
			WHERE id = ? AND state = 'pending' AND attempts = ? AND claimed_until <= ?`,
			betaport.DeliveryInterrupted, millis(now.Add(lease)), claimer, c.id, c.attempts, millis(now))
		if err != nil {
			return claimed, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue // another claimer's
		}
		list, err := s.queryDeliveries(ctx, `d.id = ?`, c.id)
		if err != nil {
			return claimed, err
		}
		claimed = append(claimed, list[0])
	}
	return claimed, nil
}

// RecordDelivery records one attempt's result while its lease is the
// claimer's, and the delivery still pending.
func (s *DB) RecordDelivery(ctx context.Context, r betaport.DeliveryResult) error {
	state, delivered, next := betaport.DeliveryPending, sql.NullInt64{}, millis(r.NextAttemptAt)
	switch {
	case r.Delivered:
		state, delivered, next = betaport.DeliveryDelivered, sql.NullInt64{Int64: millis(r.At), Valid: true}, millis(r.At)
	case r.NextAttemptAt.IsZero():
		state, next = betaport.DeliveryFailed, millis(r.At)
	}
	_, err := s.db.ExecContext(ctx, `UPDATE webhook_deliveries
		SET state = ?, last_status = ?, last_error = ?, response = ?, delivered_at = ?, next_attempt_at = ?,
		    claimed_until = 0, claimed_by = ''
		WHERE id = ? AND state = 'pending' AND claimed_by = ? AND attempts = ?`,
		state, r.Status, r.Error, r.Response, delivered, next, r.DeliveryID, r.Claimer, r.Attempt)
	if err != nil {
		return err
	}
	if state != betaport.DeliveryPending {
		// The next delivery of the webhook may be due now.
		s.deliveriesAdded()
	}
	return nil
}

// PruneDeliveries removes finished deliveries made before t, then the
// events older than t that no delivery refers to. One transaction: the
// list a webhook shows never loses a delivery's event before the delivery.
func (s *DB) PruneDeliveries(ctx context.Context, t time.Time) (int64, error) {
	var removed int64
	err := s.inTx(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE state IN ('delivered', 'failed') AND created_at < ?`, millis(t))
		if err != nil {
			return err
		}
		if removed, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM webhook_events WHERE created_at < ?
			AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`, millis(t))
		return err
	})
	return removed, err
}

// DeliveriesAdded receives after this store wrote deliveries.
func (s *DB) DeliveriesAdded() <-chan struct{} { return s.added }

func (s *DB) deliveriesAdded() {
	select {
	case s.added <- struct{}{}:
	default: // a nudge is waiting already
	}
}
