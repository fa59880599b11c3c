package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/betaport/betaport/app/betaport"
)

// Channels and rollouts: every change takes the extension's lock first
// (lockExtension), as publishes do, so two admins advancing and halting at
// once, or a publish during a rollout, run one after the other on any
// replica, and each decides on what the one before it left.

const channelColumns = `c.name, c.current_bundle, c.created_at,
	r.id, r.bundle, r.previous, r.percent, r.state, r.started_by, r.started_at, r.updated_at`

const channelFrom = ` FROM channels c LEFT JOIN rollouts r ON r.id = c.rollout_id `

func scanChannel(row interface{ Scan(...any) error }) (*betaport.Channel, error) {
	var c betaport.Channel
	var created int64
	var rid, bundle, previous, percent, started, updated sql.NullInt64
	var state, by sql.NullString
	if err := row.Scan(&c.Name, &c.CurrentBundle, &created,
		&rid, &bundle, &previous, &percent, &state, &by, &started, &updated); err != nil {
		return nil, err
	}
	c.CreatedAt = fromMillis(created)
	if rid.Valid {
		c.Rollout = &betaport.Rollout{ID: rid.Int64, Channel: c.Name, Bundle: bundle.Int64, Previous: previous.Int64,
			Percent: int(percent.Int64), State: state.String, StartedBy: by.String,
			StartedAt: fromMillis(started.Int64), UpdatedAt: fromMillis(updated.Int64)}
	}
	return &c, nil
}

// FindChannels lists an extension's channels by name, each with its rollout
// in progress.
func (s *DB) FindChannels(ctx context.Context, extensionID int64) ([]*betaport.Channel, error) {
	return findChannels(ctx, s.db, extensionID)
}

type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func findChannels(ctx context.Context, q querier, extensionID int64) ([]*betaport.Channel, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+channelColumns+channelFrom+`WHERE c.extension_id = ? ORDER BY c.name`, extensionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*betaport.Channel{}
	for rows.Next() {
		c, err := scanChannel(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(list) == 0 {
		if _, err := findExtensionIn(ctx, q, extensionID); err != nil {
			return nil, err
		}
	}
	return list, nil
}

func findExtensionIn(ctx context.Context, q querier, id int64) (*betaport.Extension, error) {
	e, err := scanExtension(q.QueryRowContext(ctx, `SELECT `+extensionColumns+` FROM extensions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, betaport.Errorf(betaport.ENOTFOUND, "Extension %d does not exist.", id)
	}
	return e, err
}

// FindChannel returns one of an extension's channels by name.
func (s *DB) FindChannel(ctx context.Context, extensionID int64, name string) (*betaport.Channel, error) {
	return findChannel(ctx, s.db, extensionID, name)
}

func findChannel(ctx context.Context, q querier, extensionID int64, name string) (*betaport.Channel, error) {
	c, err := scanChannel(q.QueryRowContext(ctx,
		`SELECT `+channelColumns+channelFrom+`WHERE c.extension_id = ? AND c.name = ?`, extensionID, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, noSuchChannel(ctx, q, extensionID, name)
	}
	return c, err
}

// noSuchChannel says which channels the extension has, so the person can
// pick one or make the one they meant.
func noSuchChannel(ctx context.Context, q querier, extensionID int64, name string) error {
	list, err := findChannels(ctx, q, extensionID)
	if err != nil {
		return err
	}
	names := make([]string, len(list))
	for i, c := range list {
		names[i] = c.Name
	}
	return &betaport.Error{Code: betaport.ENOTFOUND, Param: "channel", Message: fmt.Sprintf(
		"This extension has no channel %q; it has %s. Make it first (betaport channel create %s), or pick one of those.",
		name, strings.Join(names, ", "), name)}
}

// CreateChannel adds a channel to an extension.
func (s *DB) CreateChannel(ctx context.Context, extensionID int64, name, actor string) (*betaport.Channel, error) {
	if err := betaport.ValidateChannelName(name); err != nil {
		return nil, err
	}
	now := betaport.Now()
	err := s.inTx(ctx, func(tx *Tx) error {
		if err := lockExtension(ctx, tx, extensionID); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM channels WHERE extension_id = ?`, extensionID).Scan(&n); err != nil {
			return err
		}
		if n >= betaport.MaxChannels {
			return betaport.Errorf(betaport.EINVALID, "An extension has at most %d channels.", betaport.MaxChannels)
		}
		var exists int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM channels WHERE extension_id = ? AND name = ?`,
			extensionID, name).Scan(&exists); err != nil {
			return err
		}
		if exists > 0 {
			return &betaport.Error{Code: betaport.ECONFLICT, Param: "channel", Message: fmt.Sprintf(
				"This extension already has a channel %q.", name)}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO channels (extension_id, name, created_at) VALUES (?, ?, ?)`,
			extensionID, name, millis(now)); err != nil {
			return err
		}
		if err := moveChannelsRevision(ctx, tx, extensionID); err != nil {
			return err
		}
		return recordAudit(ctx, tx, extensionID, actor, betaport.AuditChannelCreated, name)
	})
	if err != nil {
		return nil, err
	}
	return s.FindChannel(ctx, extensionID, name)
}

func moveChannelsRevision(ctx context.Context, tx *Tx, extensionID int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE extensions SET channels_revision = channels_revision + 1 WHERE id = ?`, extensionID)
	return err
}

// SetTesterChannel moves a tester to another channel of their extension.
func (s *DB) SetTesterChannel(ctx context.Context, testerID int64, channel, actor string) (*betaport.Tester, error) {
	if err := betaport.ValidateChannelName(channel); err != nil {
		return nil, err
	}
	var t *betaport.Tester
	err := s.inTx(ctx, func(tx *Tx) error {
		var err error
		if t, err = scanTester(tx.QueryRowContext(ctx, `SELECT `+testerColumns+` FROM testers t WHERE t.id = ?`, testerID)); errors.Is(err, sql.ErrNoRows) {
			return betaport.Errorf(betaport.ENOTFOUND, "Tester %d does not exist.", testerID)
		} else if err != nil {
			return err
		}
		if err := lockExtension(ctx, tx, t.ExtensionID); err != nil {
			return err
		}
		if _, err := findChannel(ctx, tx, t.ExtensionID, channel); err != nil {
			return err
		}
		if t.Channel == channel {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE testers SET channel = ? WHERE id = ?`, channel, testerID); err != nil {
			return err
		}
		if err := recordAudit(ctx, tx, t.ExtensionID, actor, betaport.AuditTesterChannel,
			fmt.Sprintf("%s: %s → %s", t.Email, t.Channel, channel)); err != nil {
			return err
		}
		t.Channel = channel
		if err := moveChannelsRevision(ctx, tx, t.ExtensionID); err != nil {
			return err
		}
		return moveTestersRevision(ctx, tx, t.ExtensionID)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// placeInTx puts bundle number of the extension on a channel, inside tx
// and under the extension's lock: at 100 % it becomes the channel's current
// bundle (a rollout in progress is replaced); below, a rollout of it
// starts, the testers it does not reach keeping the channel's current one.
// It returns the rollout started (nil at 100 %) and whether the bundle was
// new to the channel.
func placeInTx(ctx context.Context, tx *Tx, extensionID, number int64, p betaport.Placement) (*betaport.Rollout, bool, error) {
	p = p.WithDefaults()
	if err := p.Validate(); err != nil {
		return nil, false, err
	}
	if p.Actor == "" {
		p.Actor = "submit flow" // a pipeline's key or the upload panel
	}
	c, err := findChannel(ctx, tx, extensionID, p.Channel)
	if err != nil {
		return nil, false, err
	}
	// Browsers never go back a version, and a bundle's version is above
	// every earlier bundle's: a channel takes only a bundle newer than
	// everything it serves.
	newest := c.CurrentBundle
	if c.Rollout != nil {
		newest = max(newest, c.Rollout.Bundle)
	}
	if number <= newest {
		what := "current bundle"
		if newest != c.CurrentBundle {
			what = "rollout's bundle"
		}
		return nil, false, betaport.Reasonf(betaport.ECONFLICT, betaport.ReasonNotNewer,
			"Channel %s already serves #%d as its %s, and browsers never go back a version: #%d would reach no one. "+
				"To serve an older build again, roll back to it: that makes a new bundle with a higher version.",
			p.Channel, newest, what, number)
	}
	now := betaport.Now()
	res, err := tx.ExecContext(ctx, `INSERT INTO channel_bundles (extension_id, channel, number, added_at)
		SELECT ?, ?, ?, ? WHERE NOT EXISTS
		(SELECT 1 FROM channel_bundles WHERE extension_id = ? AND channel = ? AND number = ?)`,
		extensionID, p.Channel, number, millis(now), extensionID, p.Channel, number)
	if err != nil {
		return nil, false, err
	}
	added, _ := res.RowsAffected()
	if c.Rollout != nil {
		if _, err := tx.ExecContext(ctx, `UPDATE rollouts SET state = ?, updated_at = ? WHERE id = ?`,
			betaport.RolloutReplaced, millis(now), c.Rollout.ID); err != nil {
			return nil, false, err
		}
	}
	var started *betaport.Rollout
	if p.Percent == 100 {
		if _, err := tx.ExecContext(ctx, `UPDATE channels SET current_bundle = ?, rollout_id = NULL
			WHERE extension_id = ? AND name = ?`, number, extensionID, p.Channel); err != nil {
			return nil, false, err
		}
		if p.Channel == betaport.DefaultChannel {
			if _, err := tx.ExecContext(ctx, `UPDATE extensions SET current_bundle = ? WHERE id = ?`, number, extensionID); err != nil {
				return nil, false, err
			}
		}
	} else {
		started = &betaport.Rollout{Channel: p.Channel, Bundle: number, Previous: c.CurrentBundle, Percent: p.Percent,
			State: betaport.RolloutActive, StartedBy: p.Actor, StartedAt: now, UpdatedAt: now}
		if err := tx.QueryRowContext(ctx, `INSERT INTO rollouts
			(extension_id, channel, bundle, previous, percent, state, started_by, started_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			extensionID, p.Channel, number, c.CurrentBundle, p.Percent, started.State, p.Actor,
			millis(now), millis(now)).Scan(&started.ID); err != nil {
			return nil, false, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE channels SET rollout_id = ? WHERE extension_id = ? AND name = ?`,
			started.ID, extensionID, p.Channel); err != nil {
			return nil, false, err
		}
	}
	return started, added > 0, moveChannelsRevision(ctx, tx, extensionID)
}

// PromoteBundle puts an already published bundle on a channel (the same
// bytes and version), at once or as a rollout.
func (s *DB) PromoteBundle(ctx context.Context, extensionID, number int64, p betaport.Placement) (*betaport.Channel, error) {
	p = p.WithDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var c *betaport.Channel
	err := s.inTx(ctx, func(tx *Tx) error {
		if err := lockExtension(ctx, tx, extensionID); err != nil {
			return err
		}
		b, err := findBundleIn(ctx, tx, extensionID, number)
		if err != nil {
			return err
		}
		started, _, err := placeInTx(ctx, tx, extensionID, number, p)
		if err != nil {
			return err
		}
		if err := recordAudit(ctx, tx, extensionID, p.Actor, betaport.AuditBundlePromoted,
			fmt.Sprintf("#%d to %s at %d %%", number, p.Channel, p.Percent)); err != nil {
			return err
		}
		ev := betaport.WebhookEvent{Bundle: eventBundle(b), Channel: p.Channel}
		if err := emitEvent(ctx, tx, extensionID, betaport.EventBundlePromoted, ev); err != nil {
			return err
		}
		if started != nil {
			ev.Rollout = eventRollout(started)
			if err := emitEvent(ctx, tx, extensionID, betaport.EventRolloutStarted, ev); err != nil {
				return err
			}
		}
		c, err = findChannel(ctx, tx, extensionID, p.Channel)
		return err
	})
	return c, err
}

// ChangeRollout advances, halts, resumes or completes a channel's rollout
// in progress.
func (s *DB) ChangeRollout(ctx context.Context, extensionID int64, channel, action string, percent int, actor string) (*betaport.Channel, error) {
	if err := betaport.ValidateChannelName(channel); err != nil {
		return nil, err
	}
	var c *betaport.Channel
	err := s.inTx(ctx, func(tx *Tx) error {
		if err := lockExtension(ctx, tx, extensionID); err != nil {
			return err
		}
		var err error
		if c, err = findChannel(ctx, tx, extensionID, channel); err != nil {
			return err
		}
		r := c.Rollout
		if r == nil {
			return betaport.Reasonf(betaport.ECONFLICT, betaport.ReasonNoRollout,
				"Channel %s has no rollout in progress. Start one by publishing or promoting a bundle to it at a percentage.", channel)
		}
		event, subject := "", ""
		switch action {
		case betaport.RolloutAdvance:
			if err := betaport.ValidateRolloutPercent(percent); err != nil {
				return err
			}
			if r.State == betaport.RolloutHalted {
				return betaport.Reasonf(betaport.ECONFLICT, betaport.ReasonRolloutHalted,
					"The rollout on %s is halted. Resume it before advancing it, or roll back.", channel)
			}
			if percent == r.Percent {
				return nil // a retried advance
			}
			if percent < r.Percent {
				return betaport.Reasonf(betaport.ECONFLICT, betaport.ReasonRolloutLower,
					"The rollout on %s is at %d %%. A rollout only grows: testers who have the bundle keep it. "+
						"Halt it to stop it reaching more testers.", channel, r.Percent)
			}
			if percent == 100 {
				return completeInTx(ctx, tx, extensionID, c, actor)
			}
			r.Percent, event = percent, betaport.EventRolloutAdvanced
			subject = fmt.Sprintf("#%d on %s to %d %%", r.Bundle, channel, percent)
		case betaport.RolloutHalt:
			if r.State == betaport.RolloutHalted {
				return nil
			}
			r.State, event = betaport.RolloutHalted, betaport.EventRolloutHalted
			subject = fmt.Sprintf("#%d on %s at %d %%", r.Bundle, channel, r.Percent)
		case betaport.RolloutResume:
			if r.State == betaport.RolloutActive {
				return nil
			}
			r.State, event = betaport.RolloutActive, betaport.EventRolloutResumed
			subject = fmt.Sprintf("#%d on %s at %d %%", r.Bundle, channel, r.Percent)
		case betaport.RolloutComplete:
			return completeInTx(ctx, tx, extensionID, c, actor)
		default:
			return betaport.Errorf(betaport.EINVALID, "A rollout is advanced, halted, resumed or completed; not %q.", action)
		}
		r.UpdatedAt = betaport.Now()
		if _, err := tx.ExecContext(ctx, `UPDATE rollouts SET percent = ?, state = ?, updated_at = ? WHERE id = ?`,
			r.Percent, r.State, millis(r.UpdatedAt), r.ID); err != nil {
			return err
		}
		// The rollout's audit actions are its webhook event types.
		if err := recordAudit(ctx, tx, extensionID, actor, event, subject); err != nil {
			return err
		}
		if err := emitRolloutEvent(ctx, tx, extensionID, event, r); err != nil {
			return err
		}
		return moveChannelsRevision(ctx, tx, extensionID)
	})
	if err != nil {
		return nil, err
	}
	return s.FindChannel(ctx, extensionID, channel)
}

// completeInTx makes the rollout's bundle the channel's current one.
func completeInTx(ctx context.Context, tx *Tx, extensionID int64, c *betaport.Channel, actor string) error {
	r := c.Rollout
	r.Percent, r.State, r.UpdatedAt = 100, betaport.RolloutCompleted, betaport.Now()
	if _, err := tx.ExecContext(ctx, `UPDATE rollouts SET percent = 100, state = ?, updated_at = ? WHERE id = ?`,
		r.State, millis(r.UpdatedAt), r.ID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE channels SET current_bundle = ?, rollout_id = NULL WHERE extension_id = ? AND name = ?`,
		r.Bundle, extensionID, c.Name); err != nil {
		return err
	}
	if c.Name == betaport.DefaultChannel {
		if _, err := tx.ExecContext(ctx, `UPDATE extensions SET current_bundle = ? WHERE id = ?`, r.Bundle, extensionID); err != nil {
			return err
		}
	}
	if err := recordAudit(ctx, tx, extensionID, actor, betaport.AuditRolloutCompleted,
		fmt.Sprintf("#%d on %s", r.Bundle, c.Name)); err != nil {
		return err
	}
	if err := emitRolloutEvent(ctx, tx, extensionID, betaport.EventRolloutCompleted, r); err != nil {
		return err
	}
	return moveChannelsRevision(ctx, tx, extensionID)
}

func emitRolloutEvent(ctx context.Context, tx *Tx, extensionID int64, typ string, r *betaport.Rollout) error {
	b, err := findBundleIn(ctx, tx, extensionID, r.Bundle)
	if err != nil {
		return err
	}
	return emitEvent(ctx, tx, extensionID, typ, betaport.WebhookEvent{
		Bundle: eventBundle(b), Channel: r.Channel, Rollout: eventRollout(r)})
}

func eventRollout(r *betaport.Rollout) *betaport.EventRollout {
	return &betaport.EventRollout{ID: r.ID, Percent: r.Percent, State: r.State, Previous: r.Previous}
}

// ChannelTesters lists the installed versions of a channel's testers who
// are not revoked, by tester id: what a rollout's counts are made from.
func (s *DB) ChannelTesters(ctx context.Context, extensionID int64, channel string) (map[int64]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, installed_version FROM testers
		WHERE extension_id = ? AND channel = ? AND status <> 'revoked'`, extensionID, channel)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[int64]string{}
	for rows.Next() {
		var id int64
		var v string
		if err := rows.Scan(&id, &v); err != nil {
			return nil, err
		}
		m[id] = v
	}
	return m, rows.Err()
}

// OnChannel reports whether bundle number was ever on the channel
// (published or promoted to it): a tester on it may see and download it.
func (s *DB) OnChannel(ctx context.Context, extensionID int64, channel string, number int64) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM channel_bundles WHERE extension_id = ? AND channel = ? AND number = ?`,
		extensionID, channel, number).Scan(&n)
	return n > 0, err
}

// BundleChannels lists, per bundle number of the extension, the channels
// it was put on.
func (s *DB) BundleChannels(ctx context.Context, extensionID int64, numbers []int64) (map[int64][]string, error) {
	m := map[int64][]string{}
	if len(numbers) == 0 {
		return m, nil
	}
	args := []any{extensionID}
	for _, n := range numbers {
		args = append(args, n)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT number, channel FROM channel_bundles WHERE extension_id = ? AND number IN (`+
		strings.Repeat("?, ", len(numbers)-1)+`?) ORDER BY number, channel`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var n int64
		var c string
		if err := rows.Scan(&n, &c); err != nil {
			return nil, err
		}
		m[n] = append(m[n], c)
	}
	return m, rows.Err()
}
