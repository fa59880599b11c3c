package betaport

import (
	"context"
	"fmt"
	"time"
)

// DefaultChannel is the channel every extension has from its start: the
// one testers are on unless an admin says otherwise, and the one a publish
// goes to when it names none.
const DefaultChannel = "beta"

// MaxChannelName is the longest a channel's name may be.
const MaxChannelName = 32

// MaxChannels is how many channels an extension may have.
const MaxChannels = 20

// Channel is a named line of an extension's releases ("beta", "internal",
// "nightly"). Each tester is on one channel, and gets its bundle: the
// channel's current bundle, or the bundle of its rollout when the rollout
// reaches them.
type Channel struct {
	Name string `json:"name"`
	// CurrentBundle is the number of the bundle every tester on the channel
	// gets outside a rollout (0 before the channel's first publish).
	CurrentBundle int64 `json:"currentBundle"`
	// Rollout is the channel's rollout in progress (active or halted).
	Rollout   *Rollout  `json:"rollout,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	// Testers counts the channel's testers who are not revoked (filled in
	// by the API, 0 from a store).
	Testers int64 `json:"testers"`
}

// Rollout states. A rollout is active (reaching its percentage), halted
// (no one new gets it), completed (its bundle became the channel's current
// one), or replaced (a later publish or a rollback on the channel took its
// place).
const (
	RolloutActive    = "active"
	RolloutHalted    = "halted"
	RolloutCompleted = "completed"
	RolloutReplaced  = "replaced"
)

// Rollout is a bundle going out to a percentage of one channel's testers:
// those InRollout picks for it; the others keep the channel's current
// bundle (Previous).
type Rollout struct {
	ID      int64  `json:"id"`
	Channel string `json:"channel"`
	// Bundle is the number of the bundle rolled out; Previous the channel's
	// current one when it started, which the testers it does not reach get.
	Bundle    int64     `json:"bundle"`
	Previous  int64     `json:"previous"`
	Percent   int       `json:"percent"`
	State     string    `json:"state"`
	StartedBy string    `json:"startedBy"`
	StartedAt time.Time `json:"startedAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Reached counts the channel's testers (not revoked) the rollout
	// reaches at its percentage; Installed those whose installed copy last
	// reported the rolled-out bundle's version (both filled in by the API).
	Reached   int64 `json:"reached"`
	Installed int64 `json:"installed"`
}

// Reaches reports whether the rollout serves its bundle to the tester: it
// is active, and the tester's bucket is within its percentage. A halted
// rollout reaches no one: the testers who have its bundle keep it (a
// browser never goes back a version), and no one new gets it.
func (r *Rollout) Reaches(testerID int64) bool {
	return r != nil && r.State == RolloutActive && InRollout(r.ID, testerID, r.Percent)
}

// BundleFor is the number of the bundle the channel serves the tester
// (testerID 0: a copy installed from the shared URL, which no rollout
// reaches).
func (c *Channel) BundleFor(testerID int64) int64 {
	if testerID != 0 && c.Rollout.Reaches(testerID) {
		return c.Rollout.Bundle
	}
	return c.CurrentBundle
}

// ValidateChannelName reports what is wrong with a channel's name: it is
// one to MaxChannelName lower-case letters, digits and hyphens, starting
// with a letter, so it reads the same in a URL, a CLI flag and a list.
func ValidateChannelName(name string) error {
	ok := name != "" && len(name) <= MaxChannelName && name[0] >= 'a' && name[0] <= 'z'
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
	}
	if !ok {
		return &Error{Code: EINVALID, Param: "channel", Message: fmt.Sprintf(
			"A channel's name is 1 to %d lower-case letters, digits and hyphens, starting with a letter, like %q or %q.",
			MaxChannelName, "internal", "nightly")}
	}
	return nil
}

// ValidateRolloutPercent reports what is wrong with a rollout's percentage:
// a whole number from 1 to 100.
func ValidateRolloutPercent(p int) error {
	if p < 1 || p > 100 {
		return &Error{Code: EINVALID, Param: "percent", Message: fmt.Sprintf(
			"A rollout reaches 1 to 100 %% of the channel's testers; %d is not one of them.", p)}
	}
	return nil
}

// Placement is a bundle put on a channel: published to it, promoted to
// it, or rolled back on it. Percent below 100 starts a rollout; 100 makes
// the bundle the channel's current one at once, ending any rollout in
// progress.
type Placement struct {
	Channel string
	Percent int
	Actor   string
}

// WithDefaults fills a placement's zero fields: the default channel, and
// everyone on it.
func (p Placement) WithDefaults() Placement {
	if p.Channel == "" {
		p.Channel = DefaultChannel
	}
	if p.Percent == 0 {
		p.Percent = 100
	}
	return p
}

// Validate reports what is wrong with a placement.
func (p Placement) Validate() error {
	if err := ValidateChannelName(p.Channel); err != nil {
		return err
	}
	return ValidateRolloutPercent(p.Percent)
}

// Rollout changes an admin may make.
const (
	RolloutAdvance  = "advance"
	RolloutHalt     = "halt"
	RolloutResume   = "resume"
	RolloutComplete = "complete"
)

// CountChannel fills in c's counts from the store: its testers who are not
// revoked and, with a rollout, how many it reaches and how many of their
// copies report its bundle's version.
func CountChannel(ctx context.Context, s interface {
	ChannelStore
	BundleStore
}, extensionID int64, c *Channel) error {
	testers, err := s.ChannelTesters(ctx, extensionID, c.Name)
	if err != nil {
		return err
	}
	c.Testers = int64(len(testers))
	r := c.Rollout
	if r == nil {
		return nil
	}
	b, err := s.FindBundle(ctx, extensionID, r.Bundle)
	if err != nil {
		return err
	}
	r.Reached, r.Installed = 0, 0
	for id, version := range testers {
		if InRollout(r.ID, id, r.Percent) {
			r.Reached++
		}
		if version != "" && version == b.Version {
			r.Installed++
		}
	}
	return nil
}
