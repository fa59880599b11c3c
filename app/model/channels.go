package model

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
	"github.com/betaport/betaport/app/fetch"
)

// The channels page of an extension (/extensions/{id}/channels): each
// channel with its current bundle and its rollout, and what an admin does
// with them: make a channel, promote a bundle (at once or as a rollout),
// advance, halt, resume or complete a rollout. The list is a record read
// again whenever the extension's channels or testers change (the page
// tells it, from the event stream).

// ChannelsConfig is what a Channels needs from its page.
type ChannelsConfig struct {
	// Env runs the requests; its Context is the page's for one extension.
	Env         Env
	Cache       *fetch.Cache
	ExtensionID int64
	// Changed is called after every change of the state (the page
	// renders).
	Changed func()
	// SignedOut and ErrorText are as in SettingsConfig.
	SignedOut func(error) bool
	ErrorText func(error) string
	// Clear empties a form's field (by its name: ChannelsFieldNewName,
	// ChannelsFieldMoveEmail, ChannelsFieldAdvance+channel) once what was
	// typed in it is done.
	Clear func(field string)
}

// The fields Clear empties.
const (
	ChannelsFieldNewName   = "channel-name"
	ChannelsFieldMoveEmail = "move-email"
	ChannelsFieldAdvance   = "advance-" // and the channel's name
)

// Channels is the channels page's state. Its fields and methods are for
// the UI goroutine.
type Channels struct {
	cfg ChannelsConfig

	ExtensionID int64
	// List is the channels as last read.
	List fetch.State[api.Channels]

	// NewName is the name typed for a new channel.
	NewName string
	// PromoteBundle, PromoteChannel and PromotePercent are the promote
	// form's fields, as typed ("" percent: everyone at once).
	PromoteBundle, PromoteChannel, PromotePercent string
	// Advance is the percentage typed for each channel's rollout
	// (SetAdvance); advanced names the channels whose typed percentage was
	// just sent, until something is typed again.
	Advance  map[string]string
	advanced map[string]bool
	// MoveEmail and MoveChannel are the move form's fields: a tester's
	// e-mail, and the channel to put them on.
	MoveEmail, MoveChannel string

	// Busy names what is on its way ("create", "promote", or a channel's
	// name for its rollout), "" when nothing is.
	Busy string
	// Err is why the last change failed, and Done what the last one did:
	// both said in the page's live region too.
	Err  error
	Done string

	q    *fetch.Query[api.Channels]
	stop func()
}

// NewChannels returns the channels page of cfg.ExtensionID and starts
// reading its channels (with a zero Env, nothing is read).
func NewChannels(cfg ChannelsConfig) *Channels {
	m := &Channels{cfg: cfg, ExtensionID: cfg.ExtensionID, Advance: map[string]string{}, advanced: map[string]bool{}}
	if cfg.Env.Client != nil {
		m.q, m.stop = openRecord(cfg.Env, cfg.Cache, api.ChannelsPath(cfg.ExtensionID), func(s fetch.State[api.Channels]) {
			if cfg.SignedOut != nil && s.Err != nil && cfg.SignedOut(s.Err) {
				return
			}
			m.List = s
			m.changed()
		})
	}
	return m
}

// Close stops reading.
func (m *Channels) Close() {
	if m.stop != nil {
		m.stop()
		m.stop = nil
	}
}

// ReadAgain reads the channels again (their counts, a change elsewhere).
func (m *Channels) ReadAgain() {
	if m.q != nil {
		m.q.Revalidate()
	}
}

// Items is the channels read, nil before the first answer.
func (m *Channels) Items() []*betaport.Channel {
	if !m.List.HasData {
		return nil
	}
	return m.List.Data.Items
}

// Create makes the channel named NewName.
func (m *Channels) Create() {
	name := strings.TrimSpace(m.NewName)
	if err := betaport.ValidateChannelName(name); err != nil {
		m.fail(err)
		return
	}
	m.change("create", http.MethodPost, api.ChannelsPath(m.ExtensionID), api.NewChannel{Name: name}, func(c betaport.Channel) string {
		if m.NewName == name {
			m.NewName = ""
			m.clear(ChannelsFieldNewName)
		}
		return "Channel " + c.Name + " made. Move testers to it from the testers page, then promote a bundle to it."
	})
}

// Promote puts bundle PromoteBundle on PromoteChannel, at PromotePercent
// (everyone when empty).
func (m *Channels) Promote() {
	number, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(m.PromoteBundle), "#"), 10, 64)
	if err != nil || number < 1 {
		m.fail(betaport.Errorf(betaport.EINVALID, "Give the number of the bundle to promote, like 12 (its # in the bundles list)."))
		return
	}
	percent, ok := parsePercent(m.PromotePercent)
	if !ok {
		m.fail(betaport.Errorf(betaport.EINVALID, "The share of testers is a whole percentage from 1 to 100; leave it empty for everyone on the channel."))
		return
	}
	channel := m.PromoteChannel
	if items := m.Items(); channel == "" && len(items) > 0 {
		channel = items[0].Name // the one the menu shows first
	}
	m.change("promote", http.MethodPost, api.BundlesPath(m.ExtensionID)+"/"+strconv.FormatInt(number, 10)+"/promote",
		api.Promotion{Channel: channel, Percent: percent}, func(c betaport.Channel) string {
			if c.Rollout != nil && c.Rollout.Bundle == number {
				return fmt.Sprintf("Bundle #%d is rolling out to %d %% of %s's testers.", number, c.Rollout.Percent, c.Name)
			}
			return fmt.Sprintf("Bundle #%d is now what every tester on %s gets.", number, c.Name)
		})
}

// Move puts the tester whose e-mail is MoveEmail on MoveChannel (the
// first channel when none is picked).
func (m *Channels) Move() {
	email := strings.ToLower(strings.TrimSpace(m.MoveEmail))
	if email == "" || !strings.Contains(email, "@") {
		m.fail(betaport.Errorf(betaport.EINVALID, "Type the tester's e-mail address, like ada@example.com."))
		return
	}
	channel := m.MoveChannel
	if items := m.Items(); channel == "" && len(items) > 0 {
		channel = items[0].Name
	}
	id := m.ExtensionID
	channelsCall(m, "move", func(ctx context.Context, c *client.Client) (betaport.Tester, error) {
		// The testers list finds them by their address: the one whose
		// address it is, not one that holds it.
		var page api.Page[betaport.Tester]
		q := url.Values{"q": {email}, "limit": {"20"}}
		if err := c.Do(ctx, http.MethodGet, api.TestersPath(id)+"?"+q.Encode(), nil, &page); err != nil {
			return betaport.Tester{}, err
		}
		for _, t := range page.Data {
			if t.Email == email {
				var out betaport.Tester
				err := c.Do(ctx, http.MethodPut, api.TesterPath(id, t.ID)+"/channel", api.ChannelChoice{Channel: channel}, &out)
				return out, err
			}
		}
		return betaport.Tester{}, betaport.Errorf(betaport.ENOTFOUND, "%s is not a tester of this extension. Invite them on the testers page, onto %s.", email, channel)
	}, func(t betaport.Tester) string {
		if strings.EqualFold(strings.TrimSpace(m.MoveEmail), email) {
			m.MoveEmail = ""
			m.clear(ChannelsFieldMoveEmail)
		}
		return t.Email + " is on " + t.Channel + " now: their next update check and their builds page follow it."
	})
}

// parsePercent reads a typed percentage: "" is 0 (everyone), "25" or
// "25 %" is 25.
func parsePercent(s string) (int, bool) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	if s == "" {
		return 0, true
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 1 && n <= 100
}

// SetAdvance follows the percentage typed for a channel's rollout.
func (m *Channels) SetAdvance(channel, typed string) {
	m.Advance[channel] = typed
	delete(m.advanced, channel)
}

// ChangeRollout advances (to the percentage typed for the channel), halts,
// resumes or completes a channel's rollout.
func (m *Channels) ChangeRollout(channel, action string) {
	var body any
	if action == betaport.RolloutAdvance {
		if m.advanced[channel] && strings.TrimSpace(m.Advance[channel]) == "" {
			return // Enter again on the field the last advance emptied: that one was made
		}
		percent, ok := parsePercent(m.Advance[channel])
		if !ok || percent == 0 {
			m.fail(betaport.Errorf(betaport.EINVALID, "Type the percentage to advance the rollout to, from its own up to 100 (100 completes it)."))
			return
		}
		body = api.RolloutChange{Percent: percent}
	}
	m.change(channel, http.MethodPost, api.ChannelPath(m.ExtensionID, channel)+"/rollout/"+action, body, func(c betaport.Channel) string {
		if _, typed := m.Advance[channel]; typed {
			delete(m.Advance, channel)
			m.clear(ChannelsFieldAdvance + channel)
			m.advanced[channel] = true
		}
		switch r := c.Rollout; {
		case r == nil:
			return fmt.Sprintf("The rollout on %s is complete: every tester on it gets #%d.", c.Name, c.CurrentBundle)
		case r.State == betaport.RolloutHalted:
			return fmt.Sprintf("The rollout of #%d on %s is halted: no one new gets it; testers who have it keep it.", r.Bundle, c.Name)
		default:
			return fmt.Sprintf("The rollout of #%d on %s reaches %d %% of its testers.", r.Bundle, c.Name, r.Percent)
		}
	})
}

// change sends one change and reads the channels again once it is made.
func (m *Channels) change(busy, method, path string, body any, done func(betaport.Channel) string) {
	channelsCall(m, busy, func(ctx context.Context, c *client.Client) (betaport.Channel, error) {
		var out betaport.Channel
		err := c.Do(ctx, method, path, body, &out)
		return out, err
	}, done)
}

// channelsCall runs one change of the page (busy names it; a press while
// one is on its way does nothing), says what it did or why it failed, and
// reads the channels again once it is made.
func channelsCall[T any](m *Channels, busy string, do func(context.Context, *client.Client) (T, error), done func(T) string) {
	if m.Busy != "" {
		return // a press while a change is on its way makes one change
	}
	m.Busy, m.Err, m.Done = busy, nil, ""
	m.changed()
	Call(m.cfg.Env, do, func(out T, err error) {
		m.Busy = ""
		if err != nil && m.cfg.SignedOut != nil && m.cfg.SignedOut(err) {
			return
		}
		if err != nil {
			m.fail(err)
			return
		}
		m.Done = done(out)
		m.ReadAgain()
		m.changed()
	})
}

func (m *Channels) fail(err error) {
	m.Err, m.Done = err, ""
	m.changed()
}

// ErrText is the last failure as a person reads it.
func (m *Channels) ErrText() string {
	var e *betaport.Error
	switch {
	case m.Err == nil:
		return ""
	case errors.As(m.Err, &e): // refused here, before a request
		return e.Message
	}
	if m.cfg.ErrorText != nil {
		return m.cfg.ErrorText(m.Err)
	}
	return betaport.ErrorMessage(m.Err)
}

func (m *Channels) clear(field string) {
	if m.cfg.Clear != nil {
		m.cfg.Clear(field)
	}
}

func (m *Channels) changed() {
	if m.cfg.Changed != nil {
		m.cfg.Changed()
	}
}

// RolloutText is how a rollout reads in a list: "25 % · 12 of 48 testers
// on it, 3 running it" (the testers it reaches, and those whose copy
// reports its version), "halted at 25 % · …".
func RolloutText(c *betaport.Channel) string {
	r := c.Rollout
	if r == nil {
		return ""
	}
	at := fmt.Sprintf("%d %%", r.Percent)
	if r.State == betaport.RolloutHalted {
		at = "halted at " + at
	}
	return fmt.Sprintf("%s · %d of %d testers on it, %d running it", at, r.Reached, c.Testers, r.Installed)
}

// BundleChannelsText is what a bundle's row says of the channels that
// serve it: "beta · 25 % · 12 of 48 testers on it; internal"; "" for
// none.
func BundleChannelsText(number int64, channels []*betaport.Channel) string {
	var parts []string
	for _, c := range channels {
		switch {
		case c.Rollout != nil && c.Rollout.Bundle == number:
			parts = append(parts, c.Name+" · "+RolloutText(c))
		case c.CurrentBundle == number:
			parts = append(parts, c.Name)
		}
	}
	return strings.Join(parts, "; ")
}
