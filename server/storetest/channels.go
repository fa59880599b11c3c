package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
)

// channelOf reads one channel, failing the test on an error.
func channelOf(t *testing.T, s betaport.Store, extensionID int64, name string) *betaport.Channel {
	t.Helper()
	c, err := s.FindChannel(context.Background(), extensionID, name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// refused fails the test unless err has the code (and reason, when set).
func refused(t *testing.T, what string, err error, code, reason string) {
	t.Helper()
	var e *betaport.Error
	if betaport.ErrorCode(err) != code {
		t.Fatalf("%s: %v, want %s", what, err, code)
	}
	if reason != "" && (!errors.As(err, &e) || e.Reason != reason) {
		t.Fatalf("%s: %v, want reason %s", what, err, reason)
	}
}

// Channels: every extension has beta; others are made by name; a publish
// goes to a channel at once or as a rollout, and a promote puts a bundle
// on another channel; the rollout moves only forward.
func testChannels(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	list, err := s.FindChannels(ctx, e.ID)
	if err != nil || len(list) != 1 || list[0].Name != betaport.DefaultChannel || list[0].CurrentBundle != 0 || list[0].Rollout != nil {
		t.Fatalf("a new extension's channels: %+v, %v; want beta alone", list, err)
	}
	if _, err := s.CreateChannel(ctx, e.ID, "internal", "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	_, err = s.CreateChannel(ctx, e.ID, "internal", "ada@example.com")
	refused(t, "a second internal", err, betaport.ECONFLICT, "")
	for _, bad := range []string{"", "Internal", "9lives", "a b", "../x", "a-very-long-channel-name-over-32-c"} {
		_, err := s.CreateChannel(ctx, e.ID, bad, "ada@example.com")
		refused(t, fmt.Sprintf("channel %q", bad), err, betaport.EINVALID, "")
	}
	_, err = s.FindChannel(ctx, e.ID, "nightly")
	refused(t, "an unknown channel", err, betaport.ENOTFOUND, "")

	// A publish to internal leaves beta (and the extension's current
	// bundle, beta's) alone.
	b1 := newBundle(e.ID, 1)
	if err := s.PublishBundle(ctx, b1); err != nil {
		t.Fatal(err)
	}
	b2 := newBundle(e.ID, 2)
	b2.Placement = betaport.Placement{Channel: "internal"}
	if err := s.PublishBundle(ctx, b2); err != nil {
		t.Fatal(err)
	}
	if b2.Current {
		t.Fatal("a bundle published to internal is marked current (on beta)")
	}
	if c := channelOf(t, s, e.ID, "internal"); c.CurrentBundle != 2 {
		t.Fatalf("internal serves %d, want 2", c.CurrentBundle)
	}
	if c := channelOf(t, s, e.ID, "beta"); c.CurrentBundle != 1 {
		t.Fatalf("beta serves %d, want 1", c.CurrentBundle)
	}
	if rev, _ := s.Revision(ctx, e.ID); rev.CurrentBundle != 1 || rev.LastBundle != 2 {
		t.Fatalf("revision %+v, want current 1 (beta's), last 2", rev)
	}
	if on, _ := s.OnChannel(ctx, e.ID, "beta", 2); on {
		t.Fatal("bundle 2 is on beta before it was promoted")
	}
	betaBuilds, _ := s.FindBuilds(ctx, []int64{e.ID}, "beta", 0, 10)
	if len(betaBuilds) != 1 || betaBuilds[0].Number != 1 {
		t.Fatalf("beta's builds: %v, want bundle 1 alone", numbersOf(betaBuilds))
	}

	// Promote 2 to beta at 50 %: a rollout; beta's current stays 1.
	c, err := s.PromoteBundle(ctx, e.ID, 2, betaport.Placement{Channel: "beta", Percent: 50, Actor: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	r := c.Rollout
	if c.CurrentBundle != 1 || r == nil || r.Bundle != 2 || r.Previous != 1 || r.Percent != 50 || r.State != betaport.RolloutActive || r.StartedBy != "ada@example.com" {
		t.Fatalf("after the promote: %+v, rollout %+v", c, r)
	}
	if got, _ := s.BundleChannels(ctx, e.ID, []int64{1, 2}); !slices.Equal(got[2], []string{"beta", "internal"}) || !slices.Equal(got[1], []string{"beta"}) {
		t.Fatalf("bundle channels %v", got)
	}
	// Refusals change nothing.
	before := channelOf(t, s, e.ID, "beta")
	_, err = s.PromoteBundle(ctx, e.ID, 1, betaport.Placement{Channel: "beta", Actor: "x"})
	refused(t, "promoting a bundle older than the rollout's", err, betaport.ECONFLICT, betaport.ReasonNotNewer)
	_, err = s.ChangeRollout(ctx, e.ID, "beta", betaport.RolloutAdvance, 25, "x")
	refused(t, "advancing to less", err, betaport.ECONFLICT, betaport.ReasonRolloutLower)
	_, err = s.ChangeRollout(ctx, e.ID, "beta", betaport.RolloutAdvance, 101, "x")
	refused(t, "advancing past 100", err, betaport.EINVALID, "")
	_, err = s.ChangeRollout(ctx, e.ID, "internal", betaport.RolloutHalt, 0, "x")
	refused(t, "halting without a rollout", err, betaport.ECONFLICT, betaport.ReasonNoRollout)
	_, err = s.PromoteBundle(ctx, e.ID, 99, betaport.Placement{Channel: "internal", Actor: "x"})
	refused(t, "promoting a bundle that does not exist", err, betaport.ENOTFOUND, "")
	if after := channelOf(t, s, e.ID, "beta"); fmt.Sprint(*after.Rollout) != fmt.Sprint(*before.Rollout) || after.CurrentBundle != before.CurrentBundle {
		t.Fatalf("refused changes changed beta: %+v → %+v", before.Rollout, after.Rollout)
	}

	// Advance, halt (twice), resume, complete.
	if c, err = s.ChangeRollout(ctx, e.ID, "beta", betaport.RolloutAdvance, 75, "ada@example.com"); err != nil || c.Rollout.Percent != 75 {
		t.Fatalf("advance: %+v, %v", c, err)
	}
	for range 2 {
		if c, err = s.ChangeRollout(ctx, e.ID, "beta", betaport.RolloutHalt, 0, "ada@example.com"); err != nil || c.Rollout.State != betaport.RolloutHalted {
			t.Fatalf("halt: %+v, %v", c, err)
		}
	}
	_, err = s.ChangeRollout(ctx, e.ID, "beta", betaport.RolloutAdvance, 90, "x")
	refused(t, "advancing a halted rollout", err, betaport.ECONFLICT, betaport.ReasonRolloutHalted)
	if c, err = s.ChangeRollout(ctx, e.ID, "beta", betaport.RolloutResume, 0, "ada@example.com"); err != nil || c.Rollout.State != betaport.RolloutActive {
		t.Fatalf("resume: %+v, %v", c, err)
	}
	if c, err = s.ChangeRollout(ctx, e.ID, "beta", betaport.RolloutComplete, 0, "ada@example.com"); err != nil || c.Rollout != nil || c.CurrentBundle != 2 {
		t.Fatalf("complete: %+v, %v", c, err)
	}
	if ext, _ := s.FindExtension(ctx, e.ID); ext.CurrentBundle != 2 {
		t.Fatalf("the extension's current bundle is %d after beta's rollout completed, want 2", ext.CurrentBundle)
	}

	// A publish at 10 % starts a rollout; a publish during it replaces it.
	b3 := newBundle(e.ID, 3)
	b3.Placement = betaport.Placement{Percent: 10}
	if err := s.PublishBundle(ctx, b3); err != nil {
		t.Fatal(err)
	}
	if c := channelOf(t, s, e.ID, "beta"); c.Rollout == nil || c.Rollout.Bundle != 3 || c.CurrentBundle != 2 {
		t.Fatalf("a publish at 10 %%: %+v", c)
	}
	b4 := newBundle(e.ID, 4)
	if err := s.PublishBundle(ctx, b4); err != nil {
		t.Fatal(err)
	}
	if c := channelOf(t, s, e.ID, "beta"); c.Rollout != nil || c.CurrentBundle != 4 {
		t.Fatalf("a publish to all during a rollout: %+v", c)
	}

	// A rollback during a halted rollout reaches everyone.
	b5 := newBundle(e.ID, 5)
	b5.Placement = betaport.Placement{Percent: 20}
	if err := s.PublishBundle(ctx, b5); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ChangeRollout(ctx, e.ID, "beta", betaport.RolloutHalt, 0, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	rb, fresh, err := s.PublishRollback(ctx, rollbackOf(b4, 6), "ada@example.com")
	if err != nil || !fresh {
		t.Fatalf("rollback to the channel's current bundle during a halted rollout: %v, %v", fresh, err)
	}
	if c := channelOf(t, s, e.ID, "beta"); c.Rollout != nil || c.CurrentBundle != rb.Number {
		t.Fatalf("after the rollback: %+v", c)
	}

	// The trail has each change, by who made it.
	events, err := s.FindAuditEvents(ctx, e.ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, ev := range events {
		actions = append(actions, ev.Action)
	}
	for _, want := range []string{betaport.AuditChannelCreated, betaport.AuditBundlePromoted, "rollout.advanced",
		"rollout.halted", "rollout.resumed", betaport.AuditRolloutCompleted, betaport.AuditRolloutStarted} {
		if !slices.Contains(actions, want) {
			t.Errorf("the audit trail has no %s: %v", want, actions)
		}
	}
}

// Testers are on beta unless invited onto, or moved to, another channel;
// the testers list filters by channel.
func testTesterChannels(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	if _, err := s.CreateChannel(ctx, e.ID, "nightly", "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	link := betaport.InviteLink{Hash: "h1", ExpiresAt: betaport.Now().Add(time.Hour)}
	a := &betaport.Tester{ExtensionID: e.ID, Email: "a@example.com"}
	if err := s.InviteTester(ctx, a, link, "ada@example.com"); err != nil || a.Channel != betaport.DefaultChannel {
		t.Fatalf("invite: %+v, %v", a, err)
	}
	b := &betaport.Tester{ExtensionID: e.ID, Email: "b@example.com", Channel: "nightly"}
	if err := s.InviteTester(ctx, b, betaport.InviteLink{Hash: "h2", ExpiresAt: link.ExpiresAt}, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	c := &betaport.Tester{ExtensionID: e.ID, Email: "c@example.com", Channel: "weekly"}
	err := s.InviteTester(ctx, c, betaport.InviteLink{Hash: "h3", ExpiresAt: link.ExpiresAt}, "ada@example.com")
	refused(t, "an invite onto an unknown channel", err, betaport.ENOTFOUND, "")
	if _, err := s.FindTesterByEmail(ctx, e.ID, "c@example.com"); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatalf("the refused invite left a tester: %v", err)
	}
	rev, _ := s.Revision(ctx, e.ID)
	moved, err := s.SetTesterChannel(ctx, a.ID, "nightly", "ada@example.com")
	if err != nil || moved.Channel != "nightly" {
		t.Fatalf("move: %+v, %v", moved, err)
	}
	if after, _ := s.Revision(ctx, e.ID); after.Channels <= rev.Channels || after.Testers <= rev.Testers {
		t.Fatalf("a move left the revision at %+v (was %+v)", after, rev)
	}
	_, err = s.SetTesterChannel(ctx, a.ID, "weekly", "ada@example.com")
	refused(t, "a move to an unknown channel", err, betaport.ENOTFOUND, "")
	if got, _ := s.FindTester(ctx, a.ID); got.Channel != "nightly" {
		t.Fatalf("a refused move changed the channel to %s", got.Channel)
	}
	on, err := s.FindTesters(ctx, betaport.TesterFilter{ExtensionID: e.ID, Channel: "nightly", Limit: 10})
	if err != nil || len(on) != 2 {
		t.Fatalf("nightly's testers: %d, %v", len(on), err)
	}
	if on, _ := s.FindTesters(ctx, betaport.TesterFilter{ExtensionID: e.ID, Channel: "beta", Limit: 10}); len(on) != 0 {
		t.Fatalf("beta has %d testers, want 0", len(on))
	}
	if m, _ := s.ChannelTesters(ctx, e.ID, "nightly"); len(m) != 2 {
		t.Fatalf("ChannelTesters: %v", m)
	}
}

// Two admins advancing and halting at once, and publishes during the
// rollout: every change applies to what the one before it left, and the
// rollout ends in one consistent state.
func testRolloutRaces(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	if err := s.PublishBundle(ctx, newBundle(e.ID, 1)); err != nil {
		t.Fatal(err)
	}
	b2 := newBundle(e.ID, 2)
	b2.Placement = betaport.Placement{Percent: 5}
	if err := s.PublishBundle(ctx, b2); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := s.ChangeRollout(ctx, e.ID, "beta", betaport.RolloutAdvance, 10+i*4, "ada@example.com")
			if code := betaport.ErrorCode(err); code != "" && code != betaport.ECONFLICT {
				errs <- err
			}
		}()
		go func() {
			defer wg.Done()
			action := betaport.RolloutHalt
			if i%2 == 1 {
				action = betaport.RolloutResume
			}
			if _, err := s.ChangeRollout(ctx, e.ID, "beta", action, 0, "grace@example.com"); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a racing change failed otherwise than a conflict: %v", err)
	}
	c := channelOf(t, s, e.ID, "beta")
	if c.Rollout == nil || c.Rollout.Bundle != 2 || c.Rollout.Percent < 5 || c.Rollout.Percent > 86 || c.CurrentBundle != 1 {
		t.Fatalf("after the race: %+v rollout %+v", c, c.Rollout)
	}

	// A publish racing an advance: the rollout is replaced or advanced
	// first, never both half-way.
	if _, err := s.ChangeRollout(ctx, e.ID, "beta", betaport.RolloutResume, 0, "x"); err != nil {
		t.Fatal(err)
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		s.ChangeRollout(ctx, e.ID, "beta", betaport.RolloutAdvance, 90, "x")
	}()
	var pubErr error
	go func() {
		defer wg.Done()
		pubErr = s.PublishBundle(ctx, newBundle(e.ID, 3))
	}()
	wg.Wait()
	if pubErr != nil {
		t.Fatal(pubErr)
	}
	if c := channelOf(t, s, e.ID, "beta"); c.Rollout != nil || c.CurrentBundle != 3 {
		t.Fatalf("after a publish raced an advance: %+v", c)
	}
}

func numbersOf(list []*betaport.Bundle) []int64 {
	var n []int64
	for _, b := range list {
		n = append(n, b.Number)
	}
	return n
}
