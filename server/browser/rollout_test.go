package browser_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/crx"
	"github.com/betaport/betaport/server/storetest"
)

// TestRolloutThroughChromiumsUpdater: channels and staged rollouts as
// Chromium's own updater meets them (issue 31). Each tester has a browser
// of their own whose managed policy is the Linux policy file they download
// from Betaport, carrying their own update URL:
//
//   - a 50 % rollout of B on beta updates exactly the testers
//     betaport.InRollout picks; the others check after it started and keep A;
//   - advanced just far enough to reach one more tester and halted before
//     that tester's browser checks, no one new gets B (that tester keeps
//     A at two checks; those who have B keep it);
//   - resumed and advanced to 100 %, the rest get B;
//   - C, published to a third channel (internal) and promoted to nightly,
//     reaches the nightly tester's browser (the same bytes) and no beta
//     tester's.
//
// Chromium reads managed policies from one machine-wide directory, one
// policy per machine. To give each browser its own, each Chromium runs in
// a mount namespace of its own (unshare, root only) with a directory of
// its own bind-mounted on /etc/chromium/policies. The test writes nothing
// machine-wide (the mounts are private to each browser's namespace, and
// the machine-wide managed directory is neither read nor written), so it
// neither takes nor needs the policy lock of the tests that do, and other
// tests' policies never reach its browsers. It still does not call
// t.Parallel: its five updating browsers beside the parallel tests would
// starve them on a two-core machine.
func TestRolloutThroughChromiumsUpdater(t *testing.T) {
	policies := "/etc/chromium/policies"
	if strings.Contains(filepath.Base(findChromium()), "google-chrome") {
		policies = "/etc/opt/chrome/policies"
	}
	if os.Geteuid() != 0 {
		t.Skipf("giving each browser its own managed policy (a mount namespace with its own %s) needs root", policies)
	}
	if err := os.MkdirAll(policies, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("unshare", "--mount", "--propagation", "private", "--", "true").CombinedOutput(); err != nil {
		t.Fatalf("a mount namespace for each browser: unshare: %v %s", err, out)
	}

	log := &requestLog{}
	m, d := serve(t, 0, func(m *cli.Main) {
		m.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo}))
		// Testers' checks reach the store (LastCheckAt) at each flush.
		m.Config.AdoptionFlush = 200 * time.Millisecond
	})
	ext := d.Extensions[0]
	admin := d.Admins[0]
	adm := &rolloutAdmin{t: t, base: m.URL(), cookie: signInHTTP(t, m.URL(), admin.Email, admin.Password)}
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "key.json")
	writeFile(t, keyPath, keyFile(ext.ID, setKey(t, m.Store, ext.ID)))
	// Every build uploads the same manifest version; the service serves
	// each above the last.
	publish := func(build string, place map[string]any) betaport.Bundle {
		t.Helper()
		zipPath := filepath.Join(dir, build+".zip")
		writeFile(t, zipPath, extensionZip(t, map[string]string{
			"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "9.0.0", "background": {"service_worker": "background.js"}}`,
			"background.js": "console.log('build " + build + "')\n",
		}))
		return submitFiles(t, m.URL(), keyPath, zipPath, place)
	}
	a := publish("A", nil)
	adm.do("POST", api.ExtensionPath(ext.ID)+"/channels", api.NewChannel{Name: "nightly"}, http.StatusCreated, nil)
	adm.do("POST", api.ExtensionPath(ext.ID)+"/channels", api.NewChannel{Name: "internal"}, http.StatusCreated, nil)
	adm.do("POST", fmt.Sprintf("%s/%d/promote", api.BundlesPath(ext.ID), a.Number), api.Promotion{Channel: "nightly"}, http.StatusOK, nil)
	chromeID := adminUpdates(t, m.URL(), admin.Email, admin.Password, ext.ID).ChromeID

	// crxFetches are the updaters' requests for bundle number's package,
	// through any tester's URL (the log hides the token).
	crxFetches := func(number int64) []string {
		return log.lines(`msg=request`, fmt.Sprintf(`path=/update/%d/`, ext.ID), fmt.Sprintf(`/crx/%d `, number))
	}

	// Four testers on beta and one on nightly, each with a browser of
	// their own that installs A from their own update URL.
	n := 0
	invite := func(channel string) *rolloutBrowser {
		t.Helper()
		n++
		return startTesterBrowser(t, m.URL(), m.Store, ext.ID, admin.Email, chromeID, channel, n, policies)
	}
	var beta []*rolloutBrowser
	for range 4 {
		beta = append(beta, invite(betaport.DefaultChannel))
	}
	nightly := invite("nightly")
	all := append(append([]*rolloutBrowser(nil), beta...), nightly)
	start := time.Now()
	for _, b := range all {
		b.waitInstalled(t, a.Version)
	}
	t.Logf("A (#%d, version %s) installed in %d browsers by their testers' policies, each from its tester's URL, %v after they started", a.Number, a.Version, len(all), time.Since(start).Round(time.Millisecond))

	// B to half of beta: call 1 of the submit flow asks for a 50 % rollout.
	b := publish("B", map[string]any{"rollout": 50})
	var ch betaport.Channel
	adm.do("GET", api.ChannelPath(ext.ID, betaport.DefaultChannel), nil, http.StatusOK, &ch)
	if ch.Rollout == nil || ch.Rollout.Bundle != b.Number || ch.Rollout.Percent != 50 || ch.Rollout.State != betaport.RolloutActive || ch.CurrentBundle != a.Number {
		t.Fatalf("after publishing B (#%d) at 50 %% beta is %+v (rollout %+v), want an active 50 %% rollout of it over A (#%d)", b.Number, ch, ch.Rollout, a.Number)
	}
	rollout := *ch.Rollout
	// Which testers the rollout reaches is a pure function of the rollout's
	// and the tester's ids, known only now the rollout exists. The draw is
	// fixed for a fresh copy of the demo (the ids are), but should it put
	// all four on one side, or every tester outside it in the top 1 %
	// (the halt below needs a percentage under 100 that reaches one of
	// them), testers are added to beta (each with a browser, installing
	// what beta serves them: A outside the rollout, B inside) until it
	// does not, so the test always sees both sides.
	split := func() (in, out []*rolloutBrowser) {
		for _, tb := range beta {
			if betaport.InRollout(rollout.ID, tb.tester.ID, 50) {
				in = append(in, tb)
			} else {
				out = append(out, tb)
			}
		}
		slices.SortFunc(out, func(x, y *rolloutBrowser) int {
			return cmp.Compare(betaport.RolloutBucket(rollout.ID, x.tester.ID), betaport.RolloutBucket(rollout.ID, y.tester.ID))
		})
		return in, out
	}
	in, out := split()
	for len(in) == 0 || len(out) == 0 || betaport.RolloutBucket(rollout.ID, out[0].tester.ID) >= betaport.RolloutBuckets*99/100 {
		t.Logf("the draw of rollout %d put %d of %d beta testers in it (buckets %v in, %v out): adding one", rollout.ID, len(in), len(beta), buckets(rollout.ID, in), buckets(rollout.ID, out))
		tb := invite(betaport.DefaultChannel)
		beta, all = append(beta, tb), append(all, tb)
		in, out = split()
	}
	t.Logf("rollout %d at 50 %%: testers %v in (buckets %v), %v out (buckets %v)", rollout.ID, ids(in), buckets(rollout.ID, in), ids(out), buckets(rollout.ID, out))

	// Every browser checks; the ones in the rollout install B. A second
	// check of every one: B, had it been offered to the others, would have
	// been fetched in the first cycle, before this one's check.
	start = time.Now()
	checkAll(t, m.Store, all, "after the 50 % rollout started")
	for _, tb := range in {
		tb.waitInstalled(t, b.Version)
	}
	t.Logf("B (#%d, version %s) installed in the %d browsers the rollout reaches in %v", b.Number, b.Version, len(in), time.Since(start).Round(time.Millisecond))
	checked := checkAll(t, m.Store, all, "again at 50 %")
	expect := func(what string, checked map[int64]betaport.Tester, since time.Time, want map[*rolloutBrowser]string) {
		t.Helper()
		for tb, version := range want {
			got := checked[tb.tester.ID]
			if got.InstalledVersion != version || got.LastCheckAt == nil || got.LastCheckAt.Before(since) {
				t.Errorf("%s: %s's copy reported %q at %v, want %s at a check after %v\n%s", what, tb.name, got.InstalledVersion, got.LastCheckAt, version, since, extensionLog(tb.log, chromeID))
			}
			if v := tb.installed(t).Version; v != version {
				t.Errorf("%s: %s's browser has %s installed, want %s", what, tb.name, v, version)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	want := map[*rolloutBrowser]string{nightly: a.Version}
	for _, tb := range in {
		want[tb] = b.Version
	}
	for _, tb := range out {
		want[tb] = a.Version
	}
	expect("at 50 %", checked, rollout.StartedAt, want)
	if got := crxFetches(b.Number); len(got) != len(in) {
		t.Fatalf("at 50 %% B's package was fetched %d times, want once by each of the %d testers the rollout reaches:\n%s", len(got), len(in), strings.Join(got, "\n"))
	}
	adm.do("GET", api.ChannelPath(ext.ID, betaport.DefaultChannel), nil, http.StatusOK, &ch)
	t.Logf("at 50 %%: %d of %d browsers on beta took B; the channel says the rollout reaches %d of its %d testers, %d of them installed",
		len(in), len(beta), ch.Rollout.Reached, ch.Testers, ch.Rollout.Installed)
	if ch.Rollout.Installed != int64(len(in)) {
		t.Errorf("beta's rollout says %d testers installed B, want the %d browsers that did", ch.Rollout.Installed, len(in))
	}

	// Halted: no one new gets B; those who have it keep it. The admin
	// advances the rollout just far enough to reach the outside tester of
	// the lowest bucket (a tester reached at N % has a bucket below
	// N × RolloutBuckets / 100), and halts it before that tester's browser
	// checks: at its checks it keeps A.
	arriving := out[0]
	percent := betaport.RolloutBucket(rollout.ID, arriving.tester.ID)*100/betaport.RolloutBuckets + 1
	adm.do("POST", api.ChannelPath(ext.ID, betaport.DefaultChannel)+"/rollout/advance", api.RolloutChange{Percent: percent}, http.StatusOK, &ch)
	if ch.Rollout == nil || ch.Rollout.Percent != percent || ch.Rollout.State != betaport.RolloutActive || !betaport.InRollout(rollout.ID, arriving.tester.ID, percent) {
		t.Fatalf("advanced to %d %% beta's rollout is %+v, want it active at %d %%, reaching %s", percent, ch.Rollout, percent, arriving.name)
	}
	t.Logf("advanced to %d %%: the rollout reaches %d of beta's %d testers, %s (bucket %d) among them", percent, ch.Rollout.Reached, ch.Testers, arriving.name, betaport.RolloutBucket(rollout.ID, arriving.tester.ID))
	adm.do("POST", api.ChannelPath(ext.ID, betaport.DefaultChannel)+"/rollout/halt", struct{}{}, http.StatusOK, &ch)
	if ch.Rollout == nil || ch.Rollout.State != betaport.RolloutHalted || ch.Rollout.Percent != percent {
		t.Fatalf("after the halt beta's rollout is %+v", ch.Rollout)
	}
	halted := ch.Rollout.UpdatedAt
	checkAll(t, m.Store, all, "after the halt")
	expect("halted", checkAll(t, m.Store, all, "again after the halt"), halted, want)
	if got := crxFetches(b.Number); len(got) != len(in) {
		t.Fatalf("halted, B's package was fetched again (%d fetches in all, %d before the halt):\n%s", len(got), len(in), strings.Join(got, "\n"))
	}
	var stillOn []string
	for _, tb := range beta {
		if want[tb] == b.Version {
			stillOn = append(stillOn, tb.name)
		}
	}
	t.Logf("halted at %d %%: every browser checked twice; %s kept A, %d of %d beta browsers on B (%v), no new fetch of B", percent, arriving.name, len(stillOn), len(beta), stillOn)

	// Resumed and advanced to 100 %: the rest get B.
	adm.do("POST", api.ChannelPath(ext.ID, betaport.DefaultChannel)+"/rollout/resume", struct{}{}, http.StatusOK, &ch)
	adm.do("POST", api.ChannelPath(ext.ID, betaport.DefaultChannel)+"/rollout/advance", api.RolloutChange{Percent: 100}, http.StatusOK, &ch)
	if ch.Rollout != nil || ch.CurrentBundle != b.Number {
		t.Fatalf("advanced to 100 %% beta is %+v (rollout %+v), want B (#%d) current and no rollout", ch, ch.Rollout, b.Number)
	}
	completed := now()
	start = time.Now()
	checkAll(t, m.Store, all, "at 100 %")
	for _, tb := range out {
		tb.waitInstalled(t, b.Version)
	}
	t.Logf("at 100 %%: the %d other beta browsers installed B in %v", len(out), time.Since(start).Round(time.Millisecond))
	for _, tb := range out {
		want[tb] = b.Version
	}
	expect("at 100 %", checkAll(t, m.Store, all, "again at 100 %"), completed, want)
	if got := crxFetches(b.Number); len(got) != len(beta) {
		t.Fatalf("at 100 %% B's package was fetched %d times, want once by each of the %d beta testers:\n%s", len(got), len(beta), strings.Join(got, "\n"))
	}

	// Promote: C, published to internal (no tester there), is promoted to
	// nightly; its tester's browser installs it, no beta tester's does.
	c := publish("C", map[string]any{"channel": "internal"})
	adm.do("POST", fmt.Sprintf("%s/%d/promote", api.BundlesPath(ext.ID), c.Number), api.Promotion{Channel: "nightly"}, http.StatusOK, &ch)
	if ch.Name != "nightly" || ch.CurrentBundle != c.Number || ch.Rollout != nil {
		t.Fatalf("after promoting C (#%d) to nightly the channel is %+v", c.Number, ch)
	}
	promoted := now()
	start = time.Now()
	checkAll(t, m.Store, all, "after the promote")
	got := nightly.waitInstalled(t, c.Version)
	if crx.CompareVersions(c.Version, b.Version) <= 0 || got.VersionName != "9.0.0" {
		t.Fatalf("nightly's browser installed %+v, want C's version %s (above B's %s) named 9.0.0", got, c.Version, b.Version)
	}
	if code := installedFile(t, nightly.profile, chromeID, c.Version, "background.js"); !strings.Contains(code, "build C") {
		t.Fatalf("nightly's browser installed %s with background.js %q, want build C's", c.Version, code)
	}
	t.Logf("promoted: C (#%d, version %s) installed in the nightly tester's browser in %v", c.Number, c.Version, time.Since(start).Round(time.Millisecond))
	want[nightly] = c.Version
	expect("after the promote", checkAll(t, m.Store, all, "again after the promote"), promoted, want)
	if got := crxFetches(c.Number); len(got) != 1 {
		t.Fatalf("C's package was fetched %d times, want once, by the nightly tester:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// rolloutBrowser is a tester and the Chromium of theirs that installs the
// extension by the managed policy they downloaded.
type rolloutBrowser struct {
	name      string
	tester    *betaport.Tester
	ctx       context.Context // chrome://extensions
	log       string
	profile   string
	chromeID  string
	updateURL string
}

// startTesterBrowser invites a tester on channel, signs their browser in
// with the invite link, downloads their Linux policy file, and starts a
// Chromium reading that policy alone, at chrome://extensions.
func startTesterBrowser(t *testing.T, baseURL string, store betaport.Store, extID int64, adminEmail, chromeID, channel string, n int, policies string) *rolloutBrowser {
	t.Helper()
	name := fmt.Sprintf("tester%d", n)
	token := credential.NewToken()
	tester := &betaport.Tester{ExtensionID: extID, Email: name + "@example.com", Name: fmt.Sprintf("Tester %d (%s)", n, channel), Channel: channel}
	if err := store.InviteTester(t.Context(), tester, storetest.Link(credential.HashToken(token)), adminEmail); err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	resp, err := hc.Get(baseURL + api.InvitePrefix + token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s's invite link: %d", name, resp.StatusCode)
	}
	resp, err = hc.Get(baseURL + api.ExtensionPath(extID) + "/policy/linux")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var policy map[string]any
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &policy) != nil {
		t.Fatalf("%s's policy file: %d %s", name, resp.StatusCode, raw)
	}
	setting, _ := policy["ExtensionSettings"].(map[string]any)[chromeID].(map[string]any)
	updateURL, _ := setting["update_url"].(string)
	if !strings.HasPrefix(updateURL, baseURL+api.UpdatePrefix) {
		t.Fatalf("%s's policy names %q, want their own update URL", name, updateURL)
	}

	// The browser's own policy directory, mounted on the machine's in the
	// browser's mount namespace.
	own := t.TempDir()
	if err := os.MkdirAll(filepath.Join(own, "managed"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(own, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(own, "managed", "betaport.json"), raw)
	if err := os.Chmod(filepath.Join(own, "managed", "betaport.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The wrapper keeps the process: unshare and both shells exec, so the
	// allocator's process is Chromium's.
	wrapper := filepath.Join(t.TempDir(), "chromium-"+name)
	script := "#!/bin/sh\nexec unshare --mount --propagation private -- sh -c 'mount --bind \"$0\" \"$1\" && shift && exec \"$@\"' " +
		shellQuote(own) + " " + shellQuote(policies) + " " + shellQuote(findChromium()) + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}

	ctx, logPath, profile := startUpdatingChromiumAt(t, wrapper, patient(2*time.Minute))
	if err := chromedp.Do(ctx, chromedp.Navigate("chrome://extensions")); err != nil {
		t.Fatalf("opening chrome://extensions in %s's browser: %v", name, err)
	}
	return &rolloutBrowser{name: name, tester: tester, ctx: ctx, log: logPath, profile: profile, chromeID: chromeID, updateURL: updateURL}
}

// waitInstalled waits until the browser has version installed from the
// tester's URL. (Their policy installs it normal_installed, which
// chrome.management calls a sideload: the tester may turn it off.)
func (b *rolloutBrowser) waitInstalled(t *testing.T, version string) installed {
	t.Helper()
	got := waitInstalled(t, b.ctx, b.log, b.chromeID, version)
	if got.UpdateURL != b.updateURL {
		t.Fatalf("%s's browser installed %+v, want it from their URL %s", b.name, got, b.updateURL)
	}
	return got
}

// installed is what chrome.management says of the extension now.
func (b *rolloutBrowser) installed(t *testing.T) installed {
	t.Helper()
	raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf(`chrome.management.get(%q).then(i => JSON.stringify(i), e => "")`, b.chromeID), chromedp.EvalAwaitPromise))
	var got installed
	if err != nil || json.Unmarshal([]byte(raw), &got) != nil {
		t.Fatalf("reading %s's installed copy: %v %q", b.name, err, raw)
	}
	return got
}

// checkAll asks every browser for an update check at once (the Update
// button of chrome://extensions), waits for each check to finish, then
// until each tester's copy has checked since (their LastCheckAt moved),
// and returns the testers as the store then has them.
func checkAll(t *testing.T, store betaport.Store, bs []*rolloutBrowser, what string) map[int64]betaport.Tester {
	t.Helper()
	find := func(id int64) betaport.Tester {
		tt, err := store.FindTester(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return *tt
	}
	before := map[int64]*time.Time{}
	for _, b := range bs {
		before[b.tester.ID] = find(b.tester.ID).LastCheckAt
	}
	for _, b := range bs {
		if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`(window.betaportCheck = chrome.developerPrivate.autoUpdate(), true)`)); err != nil {
			t.Fatalf("%s: asking %s's browser for an update check: %v", what, b.name, err)
		}
	}
	for _, b := range bs {
		if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`window.betaportCheck.then(() => true)`, chromedp.EvalAwaitPromise)); err != nil {
			t.Fatalf("%s: %s's update check: %v\n%s", what, b.name, err, extensionLog(b.log, b.chromeID))
		}
	}
	got := map[int64]betaport.Tester{}
	deadline := time.Now().Add(patient(30 * time.Second))
	for {
		var waiting []*rolloutBrowser
		for _, b := range bs {
			if _, ok := got[b.tester.ID]; ok {
				continue
			}
			tt := find(b.tester.ID)
			if prev := before[b.tester.ID]; tt.LastCheckAt != nil && (prev == nil || tt.LastCheckAt.After(*prev)) {
				got[b.tester.ID] = tt
			} else {
				waiting = append(waiting, b)
			}
		}
		if len(waiting) == 0 {
			return got
		}
		if time.Now().After(deadline) {
			var logs []string
			for _, b := range waiting {
				logs = append(logs, fmt.Sprintf("%s (tester %d), last check %v:\n%s", b.name, b.tester.ID, find(b.tester.ID).LastCheckAt, extensionLog(b.log, b.chromeID)))
			}
			t.Fatalf("%s: these testers' copies never checked:\n%s", what, strings.Join(logs, "\n\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// rolloutAdmin calls the admin API as the demo's admin.
type rolloutAdmin struct {
	t      *testing.T
	base   string
	cookie *http.Cookie
}

// do sends body (JSON; nil: none) to path and decodes the answer into out,
// failing the test on another status than want.
func (a *rolloutAdmin) do(method, path string, body any, want int, out any) {
	a.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.base+path, r)
	if err != nil {
		a.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.AddCookie(a.cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		a.t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, raw, want)
	}
	if out != nil {
		// Into a zero value: an answer leaving a field out (a channel
		// without a rollout) leaves nothing of the last answer there.
		if p, ok := out.(*betaport.Channel); ok {
			*p = betaport.Channel{}
		}
		if err := json.Unmarshal(raw, out); err != nil {
			a.t.Fatalf("%s %s answered %s: %v", method, path, raw, err)
		}
	}
}

// now is the time as the store keeps it (to the millisecond, truncated).
func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

func ids(bs []*rolloutBrowser) []int64 {
	var out []int64
	for _, b := range bs {
		out = append(out, b.tester.ID)
	}
	return out
}

func buckets(rolloutID int64, bs []*rolloutBrowser) []int {
	var out []int
	for _, b := range bs {
		out = append(out, betaport.RolloutBucket(rolloutID, b.tester.ID))
	}
	return out
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
