package browser_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/credential"
)

// TestTesterBuildsFollowTheirRollout: a tester's open builds page marks as
// current what their channel serves them, and follows the rollout without
// a reload: a publish that goes to 1 % of beta leaves them on the build
// they had (when the rollout does not reach them), and an advance that
// reaches them makes the new build their current one. The admin's steps
// are the API's; the tester only looks.
func TestTesterBuildsFollowTheirRollout(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	ctx := newTab(t)
	openApp(t, ctx, m.URL()+d.TesterLink)
	waitLocation(t, ctx, m.URL()+"/builds")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#builds .build-name`))); err != nil {
		t.Fatal(err)
	}
	link := strings.TrimPrefix(d.TesterLink, api.InvitePrefix)
	tester, err := m.Store.FindTesterByInvite(t.Context(), credential.HashToken(link))
	if err != nil {
		t.Fatal(err)
	}
	before := ext.CurrentBundle
	if e, err := m.Store.FindExtension(t.Context(), ext.ID); err == nil {
		before = e.CurrentBundle
	}
	// current reads which build the page marks current: the one row with
	// its downloads.
	current := `(() => { const rows = [...document.querySelectorAll("#builds [data-build]")].filter(r => r.querySelector(".build-links a"));
		return rows.length === 1 ? rows[0].querySelector(".build-number").textContent : ""; })()`
	waitCurrent := func(number int64, what string) {
		t.Helper()
		want := fmt.Sprintf("#%d", number)
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](current+`.startsWith(`+fmt.Sprintf("%q", want)+`)`)); err != nil {
			got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](current))
			t.Fatalf("%s: the builds page marks %q current, want %s: %v", what, got, want, err)
		}
	}
	waitCurrent(before, "at first")

	// A publish to 1 % of beta, from the command line.
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "key.json")
	var stdout, stderr strings.Builder
	if code := cli.Run(context.Background(), []string{"key", "create", "--label", "CI", "--data", m.Config.Data, "--extension", fmt.Sprint(ext.ID), "--out", keyPath}, &stdout, &stderr); code != 0 {
		t.Fatalf("key create: %s", stderr.String())
	}
	zipPath := filepath.Join(dir, "rollout.zip")
	writeFile(t, zipPath, extensionZip(t, map[string]string{"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "88.0.0"}`}))
	stdout.Reset()
	if code := cli.Run(context.Background(), []string{"submit", "--quiet", "--base-url", m.URL(), "--key", keyPath, "--rollout", "1", zipPath}, &stdout, &stderr); code != 0 {
		t.Fatalf("submit --rollout 1: %s", stderr.String())
	}
	beta, err := m.Store.FindChannel(t.Context(), ext.ID, betaport.DefaultChannel)
	if err != nil || beta.Rollout == nil {
		t.Fatalf("beta after the submit: %+v, %v", beta, err)
	}
	r := beta.Rollout
	// The build shows in the list (it is on the tester's channel) ...
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`document.querySelector("#builds").textContent.includes("#%d")`, r.Bundle))); err != nil {
		t.Fatalf("the new build never showed in the tester's list: %v", err)
	}
	// ... and is current for them only if the rollout reaches them.
	reach := betaport.RolloutBucket(r.ID, tester.ID)/100 + 1 // the least percentage that reaches them
	if reach <= 1 {
		waitCurrent(r.Bundle, "reached at 1 %")
		t.Logf("the tester's bucket (%d) is within 1 %%: nothing left to advance", betaport.RolloutBucket(r.ID, tester.ID))
		return
	}
	waitCurrent(before, "a rollout at 1 % that does not reach them")

	// The admin advances the rollout just far enough to reach them.
	admin := &rolloutAdmin{t: t, base: m.URL(), cookie: signInHTTP(t, m.URL(), d.Admins[0].Email, d.Admins[0].Password)}
	var c betaport.Channel
	admin.do(http.MethodPost, api.ChannelPath(ext.ID, betaport.DefaultChannel)+"/rollout/advance", api.RolloutChange{Percent: reach}, http.StatusOK, &c)
	if !betaport.InRollout(r.ID, tester.ID, reach) || (reach > 1 && betaport.InRollout(r.ID, tester.ID, reach-1)) {
		t.Fatalf("the bucket arithmetic is off: %d %% is not the least that reaches bucket %d", reach, betaport.RolloutBucket(r.ID, tester.ID))
	}
	waitCurrent(r.Bundle, fmt.Sprintf("after the rollout advanced to %d %%", reach))

	// Halted, the rollout reaches no one new: this tester never installed
	// the build (no copy of theirs reported it), so they are back on the
	// build everyone on beta gets. (A copy that runs it keeps it, and
	// their page says so: TestHaltedRolloutKeepsWhatItGave.)
	admin.do(http.MethodPost, api.ChannelPath(ext.ID, betaport.DefaultChannel)+"/rollout/halt", nil, http.StatusOK, &c)
	if c.Rollout == nil || c.Rollout.State != betaport.RolloutHalted {
		t.Fatalf("after the halt: %+v", c)
	}
	waitCurrent(before, "after the halt, for a tester who never installed it")
	t.Logf("rollout %d: tester %d (bucket %d) reached at %d %%", r.ID, tester.ID, betaport.RolloutBucket(r.ID, tester.ID), reach)
}

// TestMoveATesterOnTheChannelsPage: an admin types a tester's address
// (first with a typo, which is refused and says so), picks a channel with
// the keyboard and presses Enter: the tester is on it, the channel's
// tester count says so, and the form is empty for the next one.
func TestMoveATesterOnTheChannelsPage(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	if _, err := m.Store.CreateChannel(t.Context(), ext.ID, "qa", "test"); err != nil {
		t.Fatal(err)
	}
	testers, err := m.Store.FindTesters(t.Context(), betaport.TesterFilter{ExtensionID: ext.ID, Status: betaport.TesterActive, Limit: 1})
	if err != nil || len(testers) == 0 {
		t.Fatalf("a demo tester: %v %v", testers, err)
	}
	who := testers[0]
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/channels", m.URL(), ext.ID))
	bbkWait(t, ctx, `!!document.querySelector('#channels [data-channel="qa"]')`, "the channels page never listed qa")
	qaTesters := `document.querySelector('#channels [data-channel="qa"] .channel-facts').textContent`
	if got := evalJS[string](t, ctx, qaTesters); !strings.Contains(got, "0 testers") {
		t.Fatalf("qa says %q before the move", got)
	}

	typo := strings.Replace(who.Email, "@", "x@", 1)
	bbcRetype(t, ctx, "#move-email", typo)
	bbcTabInto(t, ctx, "#move-email", "move-channel")
	bbcChooseByKeys(t, ctx, "#move-channel", "qa")
	bbcClick(t, ctx, "#move")
	bbkWait(t, ctx, fmt.Sprintf(`document.querySelector("#channels-error").textContent.includes(%q)`, typo), "the typo was never refused")
	if got, _ := m.Store.FindTester(t.Context(), who.ID); got.Channel != betaport.DefaultChannel {
		t.Fatalf("a refused move put %s on %s", who.Email, got.Channel)
	}

	// Retyped, and sent with Enter from the field; the channel picked stays.
	bbcRetype(t, ctx, "#move-email", who.Email)
	bbkPress(t, ctx, kb.Enter)
	bbkWait(t, ctx, `document.querySelector("#channels-status").textContent.includes("is on qa now") && document.querySelector("#channels-error").hidden`,
		"the move never said it was done")
	bbkWait(t, ctx, qaTesters+`.includes("1 testers")`, "qa's tester count never followed the move")
	if got, _ := m.Store.FindTester(t.Context(), who.ID); got.Channel != "qa" {
		t.Fatalf("after the move %s is on %s", who.Email, got.Channel)
	}
	if got := evalJS[string](t, ctx, `document.querySelector("#move-email").value`); got != "" {
		t.Fatalf("the e-mail field still holds %q after the move", got)
	}
}
