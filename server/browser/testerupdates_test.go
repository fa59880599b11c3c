package browser_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/crx"
	"github.com/betaport/betaport/server/storetest"
)

// TestTesterUpdatesStopWhenRevoked: Chromium's own updater, with the Linux
// policy file a tester downloads from Betaport (their own update URL),
// installs the extension, takes the next publish, then after the tester is
// revoked checks with their URL and gets nothing newer; restored, it takes
// the build it missed.
//
// Like TestAutoUpdateThroughManagedPolicy it writes a machine-wide policy
// file, so it does not run in parallel.
func TestTesterUpdatesStopWhenRevoked(t *testing.T) {
	log := &requestLog{}
	m, d := serve(t, 0, func(m *cli.Main) {
		m.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	ext := d.Extensions[0]
	admin := d.Admins[0]
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "key.json")
	writeFile(t, keyPath, keyFile(ext.ID, setKey(t, m.Store, ext.ID)))
	publish := func(build string) (version string, number int64) {
		t.Helper()
		zipPath := filepath.Join(dir, build+".zip")
		writeFile(t, zipPath, extensionZip(t, map[string]string{
			"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "8.0.0", "background": {"service_worker": "background.js"}}`,
			"background.js": "console.log('build " + build + "')\n",
		}))
		b := submitAsPipeline(t, m.URL(), keyPath, zipPath)
		return b.Version, b.Number
	}
	versionA, _ := publish("A")

	// Lin, invited; their browser opens the link and downloads the Linux
	// policy file from their builds page's address.
	token := credential.NewToken()
	lin := &betaport.Tester{ExtensionID: ext.ID, Email: "lin@example.com", Name: "Lin"}
	if err := m.Store.InviteTester(t.Context(), lin, storetest.Link(credential.HashToken(token)), admin.Email); err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	linHTTP := &http.Client{Jar: jar}
	if resp, err := linHTTP.Get(m.URL() + api.InvitePrefix + token); err != nil || resp.StatusCode != 200 {
		t.Fatalf("Lin's link: %v %v", resp, err)
	}
	resp, err := linHTTP.Get(m.URL() + api.ExtensionPath(ext.ID) + "/policy/linux")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var policy map[string]any
	if resp.StatusCode != 200 || json.Unmarshal(raw, &policy) != nil {
		t.Fatalf("Lin's policy file: %d %s", resp.StatusCode, raw)
	}
	shared := adminUpdates(t, m.URL(), admin.Email, admin.Password, ext.ID)
	setting, _ := policy["ExtensionSettings"].(map[string]any)[shared.ChromeID].(map[string]any)
	linURL, _ := setting["update_url"].(string)
	if !strings.HasPrefix(linURL, m.URL()+api.UpdatePrefix) || linURL == shared.UpdateURL {
		t.Fatalf("Lin's policy names %q, want their own update URL", linURL)
	}
	writePolicy(t, policy)

	ctx, chromiumLog, _ := startUpdatingChromium(t)
	if err := chromedp.Do(ctx, chromedp.Navigate("chrome://extensions")); err != nil {
		t.Fatalf("opening chrome://extensions: %v", err)
	}
	got := waitInstalled(t, ctx, chromiumLog, shared.ChromeID, versionA)
	if got.UpdateURL != linURL {
		t.Fatalf("Chromium installed %+v, want it from Lin's URL %s", got, linURL)
	}
	checkNow := func() {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`chrome.developerPrivate.autoUpdate().then(() => true)`, chromedp.EvalAwaitPromise)); err != nil {
			t.Fatalf("asking Chromium for an update check: %v", err)
		}
	}
	versionB, _ := publish("B")
	checkNow()
	waitInstalled(t, ctx, chromiumLog, shared.ChromeID, versionB)

	// Revoked, Lin's copy checks and is told there is nothing newer.
	// The admin revokes Lin on the testers page; the question says what
	// happens to Lin's installed copy, which is then tested against what
	// Lin's update URL answers.
	adminCtx := adminTab(t, m, d)
	openApp(t, adminCtx, fmt.Sprintf("%s/extensions/%d/testers", m.URL(), ext.ID))
	linRow := fmt.Sprintf(`#testers [data-tester="%d"]`, lin.ID)
	bbkClickFound(t, adminCtx, "Revoke on Lin's row", fmt.Sprintf(`document.querySelector('%s .revoke')`, linRow))
	waitJS(t, adminCtx, yesReady)
	if got := text(t, adminCtx, linRow+` .confirm-pop p`); !strings.Contains(got, "gets no newer build") || !strings.Contains(got, "keeps the build it has") {
		t.Fatalf("the revoke question says %q; want what happens to the installed copy", got)
	}
	do(t, adminCtx, chromedp.KeyEvent(kb.Enter))
	waitFor(t, func() bool {
		tt, err := m.Store.FindTester(t.Context(), lin.ID)
		return err == nil && tt.Status == betaport.TesterRevoked
	}, "the store to say Lin is revoked")
	// Lin's own page says the same.
	linCtx := newTab(t)
	base, _ := url.Parse(m.URL())
	for _, c := range jar.Cookies(base) {
		if _, err := chromedp.Call(linCtx, network.SetCookie, network.SetCookieParams{Name: c.Name, Value: c.Value, URL: m.URL() + "/", HTTPOnly: &c.HttpOnly}); err != nil {
			t.Fatal(err)
		}
	}
	openApp(t, linCtx, m.URL()+"/builds")
	waitJS(t, linCtx, `!!document.querySelector("#access-ended")`)
	if got := text(t, linCtx, `main`); !strings.Contains(got, "no newer build reaches them") {
		t.Fatalf("Lin's page, revoked, says %q; want that their installed builds get no newer one", got)
	}
	versionC, numC := publish("C")
	// Every request for C's package, through any update URL (the log
	// hides the token).
	crxOfC := func() []string {
		return log.lines(`msg=request`, fmt.Sprintf(`path=/update/%d/`, ext.ID), fmt.Sprintf(`/crx/%d `, numC))
	}
	// waitCheck asks Chromium for an update check and waits until Lin's
	// copy has checked (the testers list shows a later check).
	waitCheck := func(what string) betaport.Tester {
		t.Helper()
		before := linLastCheck(t, m.URL(), admin.Email, admin.Password, ext.ID, lin.ID)
		checkNow()
		deadline := time.Now().Add(30 * time.Second)
		for {
			after := linLastCheck(t, m.URL(), admin.Email, admin.Password, ext.ID, lin.ID)
			if after.LastCheckAt != nil && (before.LastCheckAt == nil || after.LastCheckAt.After(*before.LastCheckAt)) {
				return after
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: Lin's copy never checked (last check %v)\n%s", what, after.LastCheckAt, extensionLog(chromiumLog, shared.ChromeID))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if got := waitCheck("after the revoke"); got.InstalledVersion != versionB {
		t.Fatalf("Lin's copy reported %q at its check after the revoke, want %s", got.InstalledVersion, versionB)
	}
	// A second check: an offered C would have been fetched in the first
	// cycle, before this one's check.
	if got := waitCheck("again after the revoke"); got.InstalledVersion != versionB {
		t.Fatalf("Lin's copy reported %q at its second check after the revoke, want %s", got.InstalledVersion, versionB)
	}
	if reqs := crxOfC(); len(reqs) > 0 {
		t.Fatalf("revoked, Lin's copy fetched C's package:\n%s", strings.Join(reqs, "\n"))
	}
	// Answered (noupdate): the copy is still B, with C published.
	if got := waitInstalled(t, ctx, chromiumLog, shared.ChromeID, versionB); got.Version != versionB {
		t.Fatalf("after the revoke Chromium has %+v", got)
	}
	t.Logf("revoked: Lin's copy checked with their URL, was answered noupdate and kept %s with %s published", versionB, versionC)

	// Restored, the same URL gets C.
	if _, err := m.Store.RestoreTester(t.Context(), lin.ID, storetest.Link(credential.HashToken(credential.NewToken())), admin.Email); err != nil {
		t.Fatal(err)
	}
	checkNow()
	got = waitInstalled(t, ctx, chromiumLog, shared.ChromeID, versionC)
	if crx.CompareVersions(got.Version, versionB) <= 0 || got.UpdateURL != linURL {
		t.Fatalf("restored, Chromium has %+v", got)
	}
	if reqs := crxOfC(); len(reqs) != 1 || !strings.Contains(reqs[0], "status=200") {
		t.Fatalf("restored, C's package was fetched so:\n%s\nwant once, answered 200", strings.Join(reqs, "\n"))
	}
}

// linLastCheck reads a tester from the testers list as the admin.
func linLastCheck(t *testing.T, baseURL, email, password string, extID, testerID int64) betaport.Tester {
	t.Helper()
	cookie := signInHTTP(t, baseURL, email, password)
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s%s?limit=100", baseURL, api.TestersPath(extID)), nil)
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Data []betaport.Tester `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		t.Fatal(err)
	}
	for _, tt := range page.Data {
		if tt.ID == testerID {
			return tt
		}
	}
	t.Fatalf("tester %d is not in the list", testerID)
	return betaport.Tester{}
}

// TestTestersListShowsInstalledBuilds: the testers list says which build
// each tester's copy runs and when it last checked, and the status filter,
// chosen with the keys, keeps the copies behind the current build, also
// after a reload.
func TestTestersListShowsInstalledBuilds(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[1] // a small list: its testers fit the window
	cur, err := m.Store.FindBundle(t.Context(), ext.ID, ext.CurrentBundle)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := m.Store.FindTesters(t.Context(), betaport.TesterFilter{ExtensionID: ext.ID, Status: betaport.TesterActive, Limit: 2})
	if err != nil || len(ts) < 2 {
		t.Fatalf("the demo's active testers of %s: %v, %v", ext.Name, ts, err)
	}
	behind, current := ts[0], ts[1]
	now := time.Now().UTC()
	if err := m.Store.RecordTesterChecks(t.Context(), []betaport.TesterCheck{
		{TesterID: behind.ID, Version: "0.9.1", At: now.Add(-3 * time.Hour)},
		{TesterID: current.ID, Version: cur.Version, At: now.Add(-10 * 24 * time.Hour)},
	}); err != nil {
		t.Fatal(err)
	}
	ctx := adminTab(t, m, d)
	openApp(t, ctx, testersURL(m, ext))
	cellOf := func(id int64) string {
		return fmt.Sprintf(`document.querySelector('[data-tester="%d"] .installed')?.textContent`, id)
	}
	bbPoll(t, ctx, 20*time.Second, cellOf(behind.ID)+` === "0.9.1 · 3 h ago"`, "the behind tester's row does not say 0.9.1 · 3 h ago")
	bbPoll(t, ctx, 5*time.Second, cellOf(current.ID)+` === `+jsString(cur.Version+" · 10 days without a check"), "the silent tester's row does not say so")
	if n := bbEval[int](t, ctx, `[...document.querySelectorAll("[data-tester] .installed")].filter(c => c.textContent === "not installed").length`); n == 0 {
		t.Error("no tester is shown as not installed")
	}
	rows := bbEval[int](t, ctx, `document.querySelectorAll("[data-tester]").length`)

	// The filter, with the keys: click the search field, Tab to the
	// filter and step down to "Behind".
	if err := chromedp.Do(ctx, chromedp.Click(`#tester-search`)); err != nil {
		t.Fatal(err)
	}
	bbPress(t, ctx, kb.Tab)
	if f := focused(t, ctx); f.ID != "tester-status" {
		t.Fatalf("Tab from the search field went to %s, want the status filter", f)
	}
	for i := 0; i < 6 && bbEval[string](t, ctx, `document.getElementById("tester-status").value`) != betaport.TestersBehind; i++ {
		bbPress(t, ctx, kb.ArrowDown)
	}
	bbPoll(t, ctx, 10*time.Second, fmt.Sprintf(`(() => { const r = [...document.querySelectorAll("[data-tester]")]; return r.length === 1 && r[0].dataset.tester === "%d"; })()`, behind.ID),
		"the behind filter does not show exactly the tester on 0.9.1")
	bbPoll(t, ctx, 5*time.Second, `location.search.includes("status=behind")`, "the filter is not in the address")
	// A reload (or the address shared) keeps the filter.
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	bbPoll(t, ctx, 20*time.Second, fmt.Sprintf(`document.getElementById("tester-status")?.value === "behind" && (() => { const r = [...document.querySelectorAll("[data-tester]")]; return r.length === 1 && r[0].dataset.tester === "%d"; })()`, behind.ID),
		"after a reload the list is not filtered to the tester on 0.9.1")
	if rows < 2 {
		t.Errorf("the unfiltered list had %d rows", rows)
	}

	// The extension page counts them: one on the current build (silent),
	// one behind, the others not installed.
	all, err := m.Store.FindTesters(t.Context(), betaport.TesterFilter{ExtensionID: ext.ID, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	testers := 0
	for _, tt := range all {
		if tt.Status != betaport.TesterRevoked {
			testers++
		}
	}
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/adoption", m.URL(), ext.ID))
	want := fmt.Sprintf("1 of %d testers on the current build (1 on an older build, 1 without an update check for 7 days, %d not installed).", testers, testers-2)
	bbPoll(t, ctx, 20*time.Second, `document.getElementById("installs")?.textContent === `+jsString(want),
		"the Adoption tab does not say "+want)
}
