package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/storetest"
)

// channelWorld is an extension in a data folder, with channels beta
// (bundle 1 current) and internal (bundles 2, 3 and 4 published to it),
// testers on beta (some of whose copies run bundle 2's version, one
// revoked), and another extension with a tester of its own.
type channelWorld struct {
	data     string
	st       *cli.Storage
	ext      *betaport.Extension
	id       string // ext's id, as a flag
	other    *betaport.Extension
	testers  []*betaport.Tester // on beta, not revoked
	revoked  *betaport.Tester
	stranger *betaport.Tester // of the other extension
	bundles  map[int64]*betaport.Bundle
}

const onBundle2 = 7 // testers whose copies reported bundle 2's version

func newChannelWorld(t *testing.T) *channelWorld {
	t.Helper()
	ctx := context.Background()
	w := &channelWorld{data: t.TempDir(), bundles: map[int64]*betaport.Bundle{}}
	st, err := cli.OpenStorage(ctx, cli.Config{Data: w.data})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w.st = st
	team := storetest.MustTeam(t, st.Store, betaport.PlanProfessional)
	w.ext = storetest.MustExtension(t, st.Store, team, "Tab Tamer")
	w.other = storetest.MustExtension(t, st.Store, team, "Other")
	w.id = strconv.FormatInt(w.ext.ID, 10)
	if _, err := st.Store.CreateChannel(ctx, w.ext.ID, "internal", "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		sha := fmt.Sprintf("%064x", i)
		b := &betaport.Bundle{ExtensionID: w.ext.ID, Name: "Tab Tamer", Version: fmt.Sprintf("1.0.%d", i),
			ManifestVersion: 3, Size: 100, SHA256: sha, FileCount: 2, Source: "test",
			BlobKey: betaport.BundleKey(w.ext.ID, sha)}
		if i > 1 {
			b.Placement = betaport.Placement{Channel: "internal"}
		}
		if err := st.Store.PublishBundle(ctx, b); err != nil {
			t.Fatal(err)
		}
		w.bundles[b.Number] = b
	}
	var all []*betaport.Tester
	for i := range 41 {
		all = append(all, &betaport.Tester{ExtensionID: w.ext.ID, Email: fmt.Sprintf("tester%02d@example.com", i), Name: fmt.Sprintf("Tester %d", i)})
	}
	w.stranger = &betaport.Tester{ExtensionID: w.other.ID, Email: "grace@example.com", Name: "Grace"}
	if err := st.Store.CreateTesters(ctx, append(all, w.stranger)); err != nil {
		t.Fatal(err)
	}
	w.testers, w.revoked = all[:40], all[40]
	if err := st.Store.RevokeTester(ctx, w.revoked.ID, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	// Some copies run bundle 2's version already, the revoked tester's too
	// (not counted: revoked).
	var checks []betaport.TesterCheck
	for _, tt := range append(w.testers[:onBundle2:onBundle2], w.revoked) {
		checks = append(checks, betaport.TesterCheck{ExtensionID: w.ext.ID, TesterID: tt.ID, Version: w.bundles[2].Version, At: betaport.Now()})
	}
	if err := st.Store.RecordTesterChecks(ctx, checks); err != nil {
		t.Fatal(err)
	}
	return w
}

// cmd runs a command of w's extension on w's data folder.
func (w *channelWorld) cmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return run(t, append(args, "--data", w.data)...)
}

// state is what the commands may change: the channels, the testers'
// channels and the audit trail.
func (w *channelWorld) state(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	chans, err := w.st.Store.FindChannels(ctx, w.ext.ID)
	if err != nil {
		t.Fatal(err)
	}
	audit, err := w.st.Store.FindAuditEvents(ctx, w.ext.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var channels []string
	for _, tt := range append(w.testers, w.revoked) {
		got, err := w.st.Store.FindTester(ctx, tt.ID)
		if err != nil {
			t.Fatal(err)
		}
		channels = append(channels, got.Channel)
	}
	stranger, _ := w.st.Store.FindTester(ctx, w.stranger.ID)
	ext, _ := w.st.Store.FindExtension(ctx, w.ext.ID)
	last, _ := w.st.Store.LastBundleNumber(ctx, w.ext.ID)
	b, _ := json.Marshal([]any{chans, audit, channels, stranger.Channel, ext.CurrentBundle, last})
	return string(b)
}

// refuse runs a command that must be refused with code, its stderr one
// line holding want, and change nothing.
func (w *channelWorld) refuse(t *testing.T, code int, want string, args ...string) {
	t.Helper()
	before := w.state(t)
	got, out, errOut := w.cmd(t, args...)
	if got != code || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, want) {
		t.Errorf("betaport %s: exit %d, stdout %q, stderr %q; want exit %d and one line with %q", strings.Join(args, " "), got, out, errOut, code, want)
	}
	if after := w.state(t); after != before {
		t.Errorf("betaport %s was refused, and changed the store:\n%s\n→\n%s", strings.Join(args, " "), before, after)
	}
}

// channelOut decodes a command's channel.
func channelOut(t *testing.T, what string, code int, out, errOut string) *betaport.Channel {
	t.Helper()
	var c betaport.Channel
	if code != 0 || json.Unmarshal([]byte(out), &c) != nil {
		t.Fatalf("%s: exit %d, stdout %q, stderr %q", what, code, out, errOut)
	}
	return &c
}

// reached counts the testers the rollout reaches, as the service decides.
func (w *channelWorld) reached(r *betaport.Rollout) int64 {
	var n int64
	for _, tt := range w.testers {
		if betaport.InRollout(r.ID, tt.ID, r.Percent) {
			n++
		}
	}
	return n
}

func TestChannelListCreateMove(t *testing.T) {
	w := newChannelWorld(t)
	ctx := context.Background()

	code, out, errOut := w.cmd(t, "channel", "list", "--extension", w.id)
	var list []*betaport.Channel
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 2 {
		t.Fatalf("channel list: exit %d, %q, %q", code, out, errOut)
	}
	if list[0].Name != "beta" || list[0].CurrentBundle != 1 || list[0].Testers != 40 || list[0].Rollout != nil ||
		list[1].Name != "internal" || list[1].CurrentBundle != 4 || list[1].Testers != 0 {
		t.Fatalf("channel list: %s", out)
	}
	w.refuse(t, cli.ExitFailure, "Extension 999 does not exist", "channel", "list", "--extension", "999")
	w.refuse(t, cli.ExitUsage, "--extension", "channel", "list")

	// create
	code, out, errOut = w.cmd(t, "channel", "create", "--extension", w.id, "--name", "nightly")
	if c := channelOut(t, "channel create", code, out, errOut); c.Name != "nightly" || c.CurrentBundle != 0 || c.Rollout != nil || !strings.Contains(errOut, "nightly") {
		t.Fatalf("channel create: %s %s", out, errOut)
	}
	if _, err := w.st.Store.FindChannel(ctx, w.ext.ID, "nightly"); err != nil {
		t.Fatalf("after channel create: %v", err)
	}
	w.refuse(t, cli.ExitFailure, `already has a channel "nightly"`, "channel", "create", "--extension", w.id, "--name", "nightly")
	for _, bad := range []string{"Nightly", "9lives", "a b", "../x", strings.Repeat("x", 33)} {
		w.refuse(t, cli.ExitFailure, "lower-case letters", "channel", "create", "--extension", w.id, "--name", bad)
	}
	w.refuse(t, cli.ExitFailure, "Extension 999 does not exist", "channel", "create", "--extension", "999", "--name", "canary")
	w.refuse(t, cli.ExitUsage, "--name", "channel", "create", "--extension", w.id)
	w.refuse(t, cli.ExitUsage, "--extension", "channel", "create", "--name", "canary")

	// move
	ada := w.testers[0]
	code, out, errOut = w.cmd(t, "channel", "move", "--extension", w.id, "--tester", strings.ToUpper(ada.Email), "--to", "nightly")
	var moved betaport.Tester
	if code != 0 || json.Unmarshal([]byte(out), &moved) != nil || moved.ID != ada.ID || moved.Channel != "nightly" ||
		!strings.Contains(errOut, "from channel beta to nightly") {
		t.Fatalf("channel move: exit %d, %q, %q", code, out, errOut)
	}
	if got, _ := w.st.Store.FindTester(ctx, ada.ID); got.Channel != "nightly" {
		t.Fatalf("after the move the tester is on %q", got.Channel)
	}
	code, _, errOut = w.cmd(t, "channel", "move", "--extension", w.id, "--tester", ada.Email, "--to", "nightly")
	if code != 0 || !strings.Contains(errOut, "nothing changed") {
		t.Fatalf("the same move again: exit %d, %q", code, errOut)
	}
	code, out, _ = w.cmd(t, "channel", "list", "--extension", w.id)
	if json.Unmarshal([]byte(out), &list) != nil || len(list) != 3 || list[0].Testers != 39 || list[2].Name != "nightly" || list[2].Testers != 1 {
		t.Fatalf("channel list after the move: %s", out)
	}
	bob := w.testers[1].Email
	w.refuse(t, cli.ExitFailure, `no channel "canary"`, "channel", "move", "--extension", w.id, "--tester", bob, "--to", "canary")
	w.refuse(t, cli.ExitFailure, "lower-case letters", "channel", "move", "--extension", w.id, "--tester", bob, "--to", "Canary")
	w.refuse(t, cli.ExitFailure, "has no tester grace@example.com", "channel", "move", "--extension", w.id, "--tester", w.stranger.Email, "--to", "nightly")
	w.refuse(t, cli.ExitFailure, "has no tester nobody@example.com", "channel", "move", "--extension", w.id, "--tester", "nobody@example.com", "--to", "nightly")
	w.refuse(t, cli.ExitFailure, "Extension 999 does not exist", "channel", "move", "--extension", "999", "--tester", bob, "--to", "nightly")
	w.refuse(t, cli.ExitUsage, "--to", "channel", "move", "--extension", w.id, "--tester", bob)
	w.refuse(t, cli.ExitUsage, "--tester", "channel", "move", "--extension", w.id, "--to", "nightly")
	w.refuse(t, cli.ExitUsage, `unexpected argument "nightly"`, "channel", "move", "--extension", w.id, "--tester", bob, "nightly")
}

func TestPromoteAndRolloutCommands(t *testing.T) {
	w := newChannelWorld(t)
	ctx := context.Background()
	beta := []string{"--extension", w.id, "--channel", "beta"}
	rollout := func(action string, extra ...string) []string {
		return append([]string{"rollout", action}, append(beta, extra...)...)
	}

	// Refusals before any rollout.
	w.refuse(t, cli.ExitUsage, "bundle promote", rollout("start", "--bundle", "2", "--percent", "100")...)
	w.refuse(t, cli.ExitUsage, "--percent", rollout("start", "--bundle", "2")...)
	w.refuse(t, cli.ExitUsage, "--bundle", rollout("start", "--percent", "10")...)
	w.refuse(t, cli.ExitUsage, "--channel", "rollout", "start", "--extension", w.id, "--bundle", "2", "--percent", "10")
	w.refuse(t, cli.ExitFailure, "1 to 100", rollout("start", "--bundle", "2", "--percent", "-5")...)
	w.refuse(t, cli.ExitFailure, "no bundle #99", rollout("start", "--bundle", "99", "--percent", "10")...)
	w.refuse(t, cli.ExitFailure, `no channel "canary"`, "rollout", "start", "--extension", w.id, "--channel", "canary", "--bundle", "2", "--percent", "10")
	w.refuse(t, cli.ExitFailure, "Extension 999 does not exist", "rollout", "start", "--extension", "999", "--channel", "beta", "--bundle", "2", "--percent", "10")
	for _, action := range []string{"halt", "resume", "complete"} {
		w.refuse(t, cli.ExitFailure, "no rollout in progress", rollout(action)...)
	}
	w.refuse(t, cli.ExitFailure, "no rollout in progress", rollout("advance", "--percent", "50")...)

	// start: 50 % of beta's 40 testers, the 7 on bundle 2's version
	// already counted as installed.
	code, out, errOut := w.cmd(t, rollout("start", "--bundle", "2", "--percent", "50")...)
	c := channelOut(t, "rollout start", code, out, errOut)
	r := c.Rollout
	if c.CurrentBundle != 1 || r == nil || r.Bundle != 2 || r.Previous != 1 || r.Percent != 50 || r.State != betaport.RolloutActive ||
		r.StartedBy != betaport.ActorCommandLine || c.Testers != 40 || r.Reached != w.reached(r) || r.Installed != onBundle2 {
		t.Fatalf("rollout start: %s", out)
	}
	if r.Reached == 0 || r.Reached == 40 {
		t.Fatalf("a 50 %% rollout reaches %d of 40 testers", r.Reached)
	}
	if want := fmt.Sprintf("%d of its 40 testers", r.Reached); !strings.Contains(errOut, want) || !strings.Contains(errOut, "keep #1") {
		t.Fatalf("rollout start said %q, want %q", errOut, want)
	}

	// advance: never lower, nor past 100, nor without --percent.
	w.refuse(t, cli.ExitFailure, "is at 50 %", rollout("advance", "--percent", "25")...)
	w.refuse(t, cli.ExitFailure, "1 to 100", rollout("advance", "--percent", "101")...)
	w.refuse(t, cli.ExitUsage, "--percent", rollout("advance")...)
	w.refuse(t, cli.ExitUsage, "--channel", "rollout", "advance", "--extension", w.id, "--percent", "60")
	w.refuse(t, cli.ExitFailure, `no channel "canary"`, "rollout", "advance", "--extension", w.id, "--channel", "canary", "--percent", "60")
	w.refuse(t, cli.ExitFailure, "no rollout in progress", "rollout", "advance", "--extension", w.id, "--channel", "internal", "--percent", "60")
	// A newer rollout may not replace it with an older bundle.
	w.refuse(t, cli.ExitFailure, "never go back", "bundle", "promote", "--extension", w.id, "--bundle", "1", "--channel", "beta")
	code, out, errOut = w.cmd(t, rollout("advance", "--percent", "50")...)
	if c := channelOut(t, "advance to the same", code, out, errOut); c.Rollout.Percent != 50 || !strings.Contains(errOut, "nothing changed") {
		t.Fatalf("advance to the same: %s %s", out, errOut)
	}
	code, out, errOut = w.cmd(t, rollout("advance", "--percent", "75")...)
	c = channelOut(t, "rollout advance", code, out, errOut)
	if c.Rollout.ID != r.ID || c.Rollout.Percent != 75 || c.Rollout.Reached != w.reached(c.Rollout) || c.Rollout.Reached < r.Reached ||
		!strings.Contains(errOut, "75 %") {
		t.Fatalf("rollout advance: %s %s", out, errOut)
	}

	// halt, and halt again: the sentence says who keeps what.
	for i := range 2 {
		code, out, errOut = w.cmd(t, rollout("halt")...)
		c = channelOut(t, "rollout halt", code, out, errOut)
		if c.Rollout.State != betaport.RolloutHalted || c.Rollout.Percent != 75 ||
			!strings.Contains(errOut, "already have it keep it") || !strings.Contains(errOut, "never go back a version") {
			t.Fatalf("rollout halt: %s %s", out, errOut)
		}
		if i == 1 && !strings.Contains(errOut, "nothing changed") {
			t.Fatalf("the second halt said %q", errOut)
		}
	}
	w.refuse(t, cli.ExitFailure, "Resume it", rollout("advance", "--percent", "90")...)
	for i := range 2 {
		code, out, errOut = w.cmd(t, rollout("resume")...)
		c = channelOut(t, "rollout resume", code, out, errOut)
		if c.Rollout.State != betaport.RolloutActive || c.Rollout.Percent != 75 || (i == 1) != strings.Contains(errOut, "nothing changed") {
			t.Fatalf("rollout resume #%d: %s %s", i+1, out, errOut)
		}
	}
	code, out, errOut = w.cmd(t, rollout("complete")...)
	c = channelOut(t, "rollout complete", code, out, errOut)
	if c.Rollout != nil || c.CurrentBundle != 2 || !strings.Contains(errOut, "bundle #2 is channel beta's current bundle") {
		t.Fatalf("rollout complete: %s %s", out, errOut)
	}
	if ext, _ := w.st.Store.FindExtension(ctx, w.ext.ID); ext.CurrentBundle != 2 {
		t.Fatalf("the extension's current bundle is %d after beta's rollout completed", ext.CurrentBundle)
	}
	w.refuse(t, cli.ExitFailure, "no rollout in progress", rollout("complete")...)
	w.refuse(t, cli.ExitUsage, "--extension", "rollout", "halt", "--channel", "beta")

	// promote at 100 %: the channel's current bundle at once.
	code, out, errOut = w.cmd(t, "bundle", "promote", "--extension", w.id, "--bundle", "3", "--channel", "beta")
	c = channelOut(t, "bundle promote", code, out, errOut)
	if c.Name != "beta" || c.CurrentBundle != 3 || c.Rollout != nil || c.Testers != 40 || !strings.Contains(errOut, "current bundle") {
		t.Fatalf("bundle promote: %s %s", out, errOut)
	}
	if on, _ := w.st.Store.OnChannel(ctx, w.ext.ID, "beta", 3); !on {
		t.Fatal("bundle 3 is not on beta after the promote")
	}
	w.refuse(t, cli.ExitFailure, "never go back", "bundle", "promote", "--extension", w.id, "--bundle", "3", "--channel", "beta")
	w.refuse(t, cli.ExitFailure, "no bundle #99", "bundle", "promote", "--extension", w.id, "--bundle", "99", "--channel", "beta")
	w.refuse(t, cli.ExitFailure, `no channel "canary"`, "bundle", "promote", "--extension", w.id, "--bundle", "4", "--channel", "canary")
	w.refuse(t, cli.ExitFailure, "lower-case letters", "bundle", "promote", "--extension", w.id, "--bundle", "4", "--channel", "Beta")
	w.refuse(t, cli.ExitFailure, "Extension 999 does not exist", "bundle", "promote", "--extension", "999", "--bundle", "4", "--channel", "beta")
	w.refuse(t, cli.ExitFailure, "1 to 100", "bundle", "promote", "--extension", w.id, "--bundle", "4", "--channel", "beta", "--percent", "0")
	w.refuse(t, cli.ExitFailure, "1 to 100", "bundle", "promote", "--extension", w.id, "--bundle", "4", "--channel", "beta", "--percent", "150")
	w.refuse(t, cli.ExitUsage, "--channel", "bundle", "promote", "--extension", w.id, "--bundle", "4")
	w.refuse(t, cli.ExitUsage, "--bundle", "bundle", "promote", "--extension", w.id, "--channel", "beta")
	w.refuse(t, cli.ExitUsage, "percent", "bundle", "promote", "--extension", w.id, "--bundle", "4", "--channel", "beta", "--percent", "half")

	// promote below 100 %: a rollout, on a channel that had no bundle;
	// advancing it to 100 % completes it.
	if _, err := w.st.Store.CreateChannel(ctx, w.ext.ID, "nightly", "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = w.cmd(t, "channel", "move", "--extension", w.id, "--tester", w.testers[0].Email, "--to", "nightly")
	if code != 0 {
		t.Fatal(errOut)
	}
	code, out, errOut = w.cmd(t, "bundle", "promote", "--extension", w.id, "--bundle", "4", "--channel", "nightly", "--percent", "20")
	c = channelOut(t, "bundle promote --percent 20", code, out, errOut)
	if c.CurrentBundle != 0 || c.Rollout == nil || c.Rollout.Bundle != 4 || c.Rollout.Percent != 20 || c.Testers != 1 ||
		!strings.Contains(errOut, "rolling out on nightly at 20 %") {
		t.Fatalf("bundle promote --percent 20: %s %s", out, errOut)
	}
	code, out, errOut = w.cmd(t, "rollout", "advance", "--extension", w.id, "--channel", "nightly", "--percent", "100")
	c = channelOut(t, "advance to 100", code, out, errOut)
	if c.Rollout != nil || c.CurrentBundle != 4 || !strings.Contains(errOut, "complete") {
		t.Fatalf("advance to 100: %s %s", out, errOut)
	}
	if got, _ := w.st.Store.FindChannel(ctx, w.ext.ID, "beta"); got.CurrentBundle != 3 {
		t.Fatalf("beta serves %d after nightly's rollout, want 3", got.CurrentBundle)
	}

	// The audit trail names the command line for every change.
	audit, err := w.st.Store.FindAuditEvents(ctx, w.ext.ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]bool{}
	for _, e := range audit {
		if e.Actor == betaport.ActorCommandLine {
			actions[e.Action] = true
		}
	}
	for _, a := range []string{betaport.AuditBundlePromoted, betaport.AuditRolloutCompleted, "rollout.advanced", "rollout.halted", "rollout.resumed", betaport.AuditTesterChannel} {
		if !actions[a] {
			t.Errorf("no %s by the command line in the audit trail: %v", a, actions)
		}
	}
}

// The channel and rollout commands work on what is stored: a data folder
// that does not exist is refused and nothing is made; each has its help,
// and their groups list them.
func TestChannelCommandsHelpAndTypos(t *testing.T) {
	base := t.TempDir()
	typo := filepath.Join(base, "dta")
	for _, args := range [][]string{
		{"channel", "list", "--extension", "1"},
		{"channel", "create", "--extension", "1", "--name", "internal"},
		{"channel", "move", "--extension", "1", "--tester", "a@example.com", "--to", "internal"},
		{"bundle", "promote", "--extension", "1", "--bundle", "2", "--channel", "beta"},
		{"rollout", "start", "--extension", "1", "--channel", "beta", "--bundle", "2", "--percent", "10"},
		{"rollout", "advance", "--extension", "1", "--channel", "beta", "--percent", "20"},
		{"rollout", "halt", "--extension", "1", "--channel", "beta"},
		{"rollout", "resume", "--extension", "1", "--channel", "beta"},
		{"rollout", "complete", "--extension", "1", "--channel", "beta"},
	} {
		code, out, errOut := run(t, append(args, "--data", typo)...)
		if code != cli.ExitUsage || out != "" || !strings.Contains(errOut, "does not exist") || !strings.Contains(errOut, "nothing was made") {
			t.Errorf("betaport %s with a mistyped --data: exit %d, %q", strings.Join(args, " "), code, errOut)
		}
		if entries, _ := os.ReadDir(base); len(entries) != 0 {
			t.Fatalf("betaport %s made %v", strings.Join(args, " "), entries)
		}
		help := args[:2]
		code, out, errOut = run(t, append(help, "-h")...)
		all := out + errOut
		own, storage := strings.Index(all, "-extension"), strings.Index(all, "Storage flags")
		if code != 0 || !strings.Contains(all, "Usage: betaport "+strings.Join(help, " ")) || own < 0 || storage < own || strings.Count(all, "-signing-keyring") != 1 {
			t.Errorf("betaport %s -h: exit %d:\n%s", strings.Join(help, " "), code, all)
		}
	}
	for group, subs := range map[string][]string{
		"channel": {"channel list", "channel create", "channel move"},
		"rollout": {"rollout start", "rollout advance", "rollout halt|resume|complete"},
		"bundle":  {"bundle rollback", "bundle promote"},
	} {
		code, out, _ := run(t, group, "-h")
		for _, sub := range subs {
			if code != 0 || strings.Count(out, "betaport "+sub+" ") != 1 {
				t.Errorf("betaport %s -h: exit %d, want %q listed once:\n%s", group, code, sub, out)
			}
		}
		if code, _, errOut := run(t, group); code != cli.ExitUsage || !strings.Contains(errOut, subs[0]) {
			t.Errorf("betaport %s alone: exit %d, %q", group, code, errOut)
		}
	}
	if code, _, errOut := run(t, "rollout", "pause"); code != cli.ExitUsage || !strings.Contains(errOut, `"rollout pause"`) {
		t.Errorf("rollout pause: exit %d, %q", code, errOut)
	}
}
