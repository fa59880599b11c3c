// Package api is Betaport's wire contract: the JSON types, the paths and the
// problem types shared by the server, the browser app and the command line.
//
// The domain types it carries (extensions, bundles, testers…) are defined
// once, with their rules, in app/betaport.
//
// It imports nothing heavy on purpose: the browser app links it into the wasm
// binary, where every dependency costs download time.
package api

import (
	"encoding/json"
	"strconv"

	"github.com/betaport/betaport/app/betaport"
)

// Health is the body of /healthz and /readyz.
type Health struct {
	Status string `json:"status"`
	// Version is the build id (the one pages and betaport --version show),
	// Go the Go release that built it; both in /healthz only.
	Version string            `json:"version,omitempty"`
	Go      string            `json:"go,omitempty"`
	Checks  map[string]string `json:"checks,omitempty"`
}

// Session kinds.
const (
	KindAdmin  = "admin"
	KindTester = "tester"
)

// Session says who is signed in (GET /api/session).
type Session struct {
	Kind   string           `json:"kind"` // admin or tester
	User   *betaport.User   `json:"user,omitempty"`
	Team   *betaport.Team   `json:"team,omitempty"`
	Tester *betaport.Tester `json:"tester,omitempty"`
}

// SignIn is the body of POST /api/session.
type SignIn struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// Invite is the body of POST /api/extensions/{id}/testers.
type Invite struct {
	Email string `json:"email"`
	Name  string `json:"name"`
	// ExpiresInDays is how long the link works unused, 1 to 90 days;
	// absent, the service's default (14 days unless its operator set
	// another).
	ExpiresInDays Days `json:"expiresInDays,omitzero"`
	// Channel is the channel the tester joins; absent, the default one.
	Channel string `json:"channel,omitempty"`
}

// NewChannel is the body that makes a channel.
type NewChannel struct {
	Name string `json:"name"`
}

// ChannelChoice is the body that moves a tester to a channel, or names the
// channel a rollback is published to.
type ChannelChoice struct {
	Channel string `json:"channel"`
}

// Promotion puts a published bundle on a channel: at once (percent absent
// or 100), or as a staged rollout to that percentage of its testers.
type Promotion struct {
	Channel string `json:"channel"`
	Percent int    `json:"percent,omitempty"`
}

// RolloutChange is the body of a rollout's advance: the percentage it
// grows to (100 completes it). Halt, resume and complete take none.
type RolloutChange struct {
	Percent int `json:"percent,omitempty"`
}

// Channels is the answer listing an extension's channels.
type Channels struct {
	Items []*betaport.Channel `json:"items"`
}

// ChannelPath is the path of an extension's channel.
func ChannelPath(extensionID int64, name string) string {
	return "/api/extensions/" + strconv.FormatInt(extensionID, 10) + "/channels/" + name
}

// NewLink is the optional body of a restore or a new link: how long the
// new link works unused, as in Invite.
type NewLink struct {
	ExpiresInDays Days `json:"expiresInDays,omitzero"`
}

// Days is a number of days a request may give: its zero value is "not
// given" (and is not sent), so that a 0 or a null that was given is told
// apart from a field left out, and refused.
type Days struct {
	N     int
	Given bool
}

// DaysOf is n days given, or none for n = 0.
func DaysOf(n int) Days { return Days{N: n, Given: n != 0} }

func (d Days) MarshalJSON() ([]byte, error) { return json.Marshal(d.N) }

func (d *Days) UnmarshalJSON(b []byte) error {
	// null is given too (and is no number of days): N stays 0.
	d.Given = true
	return json.Unmarshal(b, &d.N)
}

// Invited answers an invite: the tester and their personal link, shown once.
type Invited struct {
	betaport.Tester
	InviteURL string `json:"inviteUrl"`
}

// Page is one page of a cursor-based list; NextCursor is empty on the last.
type Page[T any] struct {
	Data       []T    `json:"data"`
	NextCursor string `json:"nextCursor,omitempty"`
	// Revision, on the testers list, is a testers revision the page is at
	// least as new as (betaport.Revision.Testers).
	Revision int64 `json:"revision,omitempty"`
}

// ChannelsPath is the path of an extension's channels.
func ChannelsPath(extensionID int64) string {
	return "/api/extensions/" + strconv.FormatInt(extensionID, 10) + "/channels"
}

// FeedbackStatus is the body that moves a report: new, seen or resolved.
type FeedbackStatus struct {
	Status string `json:"status"`
}
