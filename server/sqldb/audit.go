package sqldb

import (
	"context"
	"math"

	"github.com/betaport/betaport/app/betaport"
)

// recordAudit adds an audit event inside the transaction of the change it
// records, so the trail never says what did not happen, nor misses what did.
func recordAudit(ctx context.Context, tx *Tx, extensionID int64, actor, action, subject string) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO audit_events (team_id, extension_id, actor, action, subject, created_at)
		 SELECT team_id, id, ?, ?, ?, ? FROM extensions WHERE id = ?`,
		actor, action, subject, millis(betaport.Now()), extensionID)
	return err
}

// FindAuditEvents returns a page of an extension's audit trail, newest
// first.
func (s *DB) FindAuditEvents(ctx context.Context, extensionID, beforeID int64, limit int) ([]*betaport.AuditEvent, error) {
	if beforeID <= 0 {
		beforeID = math.MaxInt64
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, extension_id, actor, action, subject, created_at FROM audit_events
		WHERE extension_id = ? AND id < ? ORDER BY id DESC LIMIT ?`, extensionID, beforeID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*betaport.AuditEvent{}
	for rows.Next() {
		var e betaport.AuditEvent
		var created int64
		if err := rows.Scan(&e.ID, &e.ExtensionID, &e.Actor, &e.Action, &e.Subject, &created); err != nil {
			return nil, err
		}
		e.CreatedAt = fromMillis(created)
		list = append(list, &e)
	}
	return list, rows.Err()
}
