package browser_test

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
)

// wheel turns the mouse wheel over (x, y) by deltaY pixels, as a hand does:
// a real input event through the DevTools protocol.
func wheel(ctx context.Context, x, y, deltaY float64) error {
	_, err := chromedp.Call(ctx, wheelEvent, wheelParams{Type: input.DispatchMouseEventTypeMouseWheel, X: x, Y: y, DeltaY: deltaY})
	return err
}

// wheelParams are Input.dispatchMouseEvent's for a wheel turn. cdproto's
// own leave out a zero deltaX, which the protocol requires.
type wheelParams struct {
	Type   input.DispatchMouseEventType `json:"type"`
	X      float64                      `json:"x"`
	Y      float64                      `json:"y"`
	DeltaX float64                      `json:"deltaX"`
	DeltaY float64                      `json:"deltaY"`
}

var wheelEvent = cdp.Command[wheelParams, cdp.Empty]{Method: input.CommandDispatchMouseEvent}

// countRequests counts the tab's requests whose URL contains part.
func countRequests(t *testing.T, ctx context.Context, part string) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && strings.Contains(e.Request.URL, part) {
			n.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	return &n
}

// TestWheelThenIdleStopsLoading: on 100,000 testers, 1.5 s of ordinary
// wheel steps, then hands off: loading stops within about a page, and the
// viewport keeps showing rows, not blank space. (Chromium's scroll
// anchoring and the windowed rows once fed each other: the list went on
// loading by itself and the view went blank.)
func TestWheelThenIdleStopsLoading(t *testing.T) {
	t.Parallel()
	m, d, ext := startWithTesters(t, 100_000)
	ctx := adminTab(t, m, d)
	requests := countRequests(t, ctx, fmt.Sprintf("/api/extensions/%d/testers", ext.ID))
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/testers", m.URL(), ext.ID))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`+(document.getElementById("testers")?.dataset.count || 0) > 0`)); err != nil {
		t.Fatal(err)
	}
	size, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[innerWidth, innerHeight]`))
	if err != nil {
		t.Fatal(err)
	}
	x, y := size[0]/2, size[1]/2

	// 1.5 s of 100 px wheel steps, 15 of them.
	for range 15 {
		if err := wheel(ctx, x, y, 100); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // the hand's pace, not a wait for the app
	}
	// Let what the wheel asked for arrive (the page still, no page on its
	// way), then measure the idle hand: the window is the measurement, as
	// the probe did.
	settledCount(t, ctx)
	before := requests.Load()
	loaded := readList(t, ctx, "testers", "x").Count
	blank := 0
	for range 5 {
		time.Sleep(time.Second)
		onRow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(
			`!!document.elementFromPoint(%f, %f)?.closest("[data-tester]")`, x, y)))
		if err != nil {
			t.Fatal(err)
		}
		if !onRow {
			blank++
		}
	}
	idle := requests.Load() - before
	after := readList(t, ctx, "testers", "x").Count
	t.Logf("after 1.5 s of wheel: %d testers loaded; in 5 idle seconds %d requests, %d → %d testers, %d of 5 samples blank",
		loaded, idle, loaded, after, blank)
	if idle > 2 || after-loaded > 100 {
		t.Errorf("the list went on loading with the hand off: %d requests, %d → %d testers in 5 idle seconds", idle, loaded, after)
	}
	if blank > 0 {
		t.Errorf("the viewport showed blank space where rows exist in %d of 5 samples", blank)
	}
}

// TestSignInAfterATypo: a wrong password, then the right one on the same
// page, typed and sent with Enter: the second attempt signs in, and the
// button is never left disabled.
func TestSignInAfterATypo(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := newTab(t)
	openApp(t, ctx, m.URL()+"/login")
	admin := d.Admins[0]
	for i, password := range []string{admin.Password + "x", "wrong again", admin.Password} {
		if err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`#email`)),
			chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)), // select what is there
			chromedp.SendKeys(chromedp.CSS(`#email`), admin.Email),
			chromedp.Click(chromedp.CSS(`#password`)),
			chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
			chromedp.SendKeys(chromedp.CSS(`#password`), password+"\r"), // Enter sends the form
		); err != nil {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
		if i < 2 {
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!document.querySelector("#login-error").hidden && !document.querySelector("#sign-in").disabled && document.querySelector("#sign-in").getAttribute("aria-busy") !== "true"`)); err != nil {
				html, _ := chromedp.Run(context.WithoutCancel(ctx), chromedp.Evaluate[string](`document.querySelector(".login")?.outerHTML`))
				t.Fatalf("attempt %d with a wrong password: no error shown, or the button stays busy: %v\n%s", i+1, err, html)
			}
		}
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#signed-in-as`))); err != nil {
		t.Fatalf("the right password after two typos did not sign in: %v", err)
	}
}

// TestSignInFixedBeforeTheTypoIsAnswered: on a slow connection a person
// sends a wrong password, sees it, types the right one and presses Enter
// while the first try is still on its way. That second Enter is not
// dropped (it was: the form was busy, so the page showed the first try's
// error over the right password): the right password is sent once the
// first answer is in, and signs in. Enter pressed again on an unchanged
// wrong password sends nothing more. The slow connection is the browser
// holding the first try (the Fetch domain) until every key is typed, so
// the order does not depend on how busy the machine is.
func TestSignInFixedBeforeTheTypoIsAnswered(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := newTab(t)
	openApp(t, ctx, m.URL()+"/login")
	admin := d.Admins[0]
	held := make(chan *fetch.EventRequestPaused, 10)
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*fetch.EventRequestPaused); ok {
			held <- e
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{
		{URLPattern: m.URL() + "/api/session", RequestStage: fetch.RequestStageRequest},
	}}); err != nil {
		t.Fatal(err)
	}
	// next waits for the next sign-in the page sends (a POST; anything
	// else to the address goes on at once) and returns it, held.
	next := func(what string) *fetch.EventRequestPaused {
		t.Helper()
		for {
			select {
			case e := <-held:
				if e.Request.Method == http.MethodPost {
					return e
				}
				release(t, ctx, e)
			case <-ctx.Done():
				t.Fatalf("waiting for %s: %v", what, ctx.Err())
			}
		}
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#email`), admin.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), "not-"+admin.Password+"\r"),
	); err != nil {
		t.Fatal(err)
	}
	first := next("the sign-in with the typo")
	if err := chromedp.Do(ctx,
		chromedp.KeyEvent(kb.Enter), // impatient: again, same fields
		// Still on its way: select the typo and type over it.
		chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		chromedp.KeyEvent(admin.Password+"\r"),
	); err != nil {
		t.Fatal(err)
	}
	// Every key has reached the page (Input.dispatchKeyEvent answers once
	// the page has handled it): now the first try is answered.
	release(t, ctx, first)
	second := next("the sign-in with the right password")
	if body := postData(second.Request); !strings.Contains(body, `"`+admin.Password+`"`) || strings.Contains(body, "not-") {
		t.Errorf("the second sign-in sent %s, want the right password", body)
	}
	release(t, ctx, second)
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(wait, chromedp.WaitVisible(chromedp.CSS(`#signed-in-as`))); err != nil {
		t.Fatalf("the right password typed while the wrong one was on its way did not sign in: %v", err)
	}
	select {
	case e := <-held:
		if e.Request.Method == http.MethodPost {
			t.Errorf("the browser sent a third sign-in (%s); want 2: the typo once, then the right password", postData(e.Request))
		}
	default:
	}
}

// postData is a request's body as text.
func postData(r *network.Request) string {
	var b strings.Builder
	for _, e := range r.PostDataEntries {
		b.Write(e.Bytes)
	}
	return b.String()
}

// release lets a request held by the Fetch domain go on.
func release(t *testing.T, ctx context.Context, e *fetch.EventRequestPaused) {
	t.Helper()
	if _, err := chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID}); err != nil {
		t.Fatalf("releasing %s %s: %v", e.Request.Method, e.Request.URL, err)
	}
}

// TestBackForwardKeepsSearchAndFilter: the testers search and status
// filter live in the address, so going away and back, and a reload, bring
// the same filtered list.
func TestBackForwardKeepsSearchAndFilter(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	ctx := adminTab(t, m, d)
	listURL := fmt.Sprintf("%s/extensions/%d/testers", m.URL(), ext.ID)
	openApp(t, ctx, listURL)
	waitList(t, ctx, "testers", 61)
	// The breadcrumbs name the extension.
	crumb := fmt.Sprintf(`document.querySelector('.crumbs a[href="/extensions/%d"]')?.textContent === %q`, ext.ID, ext.Name)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](crumb)); err != nil {
		t.Fatalf("the breadcrumbs do not name %q: %v", ext.Name, err)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#tester-search`)),
		chromedp.KeyEvent("grace"),
		chromedp.KeyEvent(kb.Tab),                                                                         // from the search to the status
		chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown), // All → Revoked
	); err != nil {
		t.Fatal(err)
	}
	filtered := `(() => { const rows = [...document.querySelectorAll("#testers [data-tester]")];
		return document.querySelector("#tester-search").value === "grace" && document.querySelector("#tester-status").value === "revoked" &&
			((rows.length > 0 && rows.every(r => r.textContent.toLowerCase().includes("grace") && r.querySelector(".badge").textContent === "revoked")) || !!document.querySelector("#testers-empty")); })()`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](filtered)); err != nil {
		t.Fatalf("search and filter did not apply: %v", err)
	}
	waitLocation(t, ctx, listURL+"?q=grace&status=revoked")

	// Away (a real click on the breadcrumb), then back.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.crumbs a[href="/extensions/`+fmt.Sprint(ext.ID)+`"]`))); err != nil {
		t.Fatal(err)
	}
	waitLocation(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	if err := chromedp.Do(ctx, chromedp.NavigateBack()); err != nil {
		t.Fatal(err)
	}
	waitLocation(t, ctx, listURL+"?q=grace&status=revoked")
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](filtered)); err != nil {
		t.Fatalf("after going back the list is not searched and filtered: %v", err)
	}
	// A reload, as a shared link would open it.
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](filtered)); err != nil {
		t.Fatalf("after a reload the list is not searched and filtered: %v", err)
	}
}

// TestUnknownAddressIsAPage: an address that names no page shows the app's
// page saying so, and its link leads back.
func TestUnknownAddressIsAPage(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := adminTab(t, m, d)
	openApp(t, ctx, m.URL()+"/no/such/page")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#not-found`)), chromedp.Click(chromedp.CSS(`#back-home`))); err != nil {
		t.Fatal(err)
	}
	waitLocation(t, ctx, m.URL()+"/")
	if title, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.title`)); strings.Contains(title, "not found") {
		t.Errorf("back home, the title still says %q", title)
	}
	// An extension that does not exist (or is another team's): the page
	// says so and leads back.
	openApp(t, ctx, m.URL()+"/extensions/999999")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`main [role=alert]`)), chromedp.Click(chromedp.CSS(`#back-home`))); err != nil {
		t.Fatalf("an unknown extension: %v", err)
	}
	waitLocation(t, ctx, m.URL()+"/")
	// A dead invite link opened by a signed-in admin: the sign-in page
	// says the link is dead and leads back to the admin's extensions.
	openApp(t, ctx, m.URL()+"/t/not-a-real-token")
	waitLocation(t, ctx, m.URL()+"/login?link=invalid")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#login-notice`)), chromedp.WaitVisible(chromedp.CSS(`#login-home`)), chromedp.Click(chromedp.CSS(`#login-home`))); err != nil {
		t.Fatalf("a dead invite link opened by a signed-in admin: %v", err)
	}
	waitLocation(t, ctx, m.URL()+"/")
}

// TestTesterOnAnAdminAddress: a tester who opens any of the admins' pages of
// an extension (bundles, page by page, testers, settings) sees a page that
// says it is for admins and leads to their builds, and no admin control.
func TestTesterOnAnAdminAddress(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := newTab(t)
	openApp(t, ctx, m.URL()+d.TesterLink)
	waitLocation(t, ctx, m.URL()+"/builds")
	for _, page := range []string{"", "/pages", "/testers", "/settings"} {
		openApp(t, ctx, fmt.Sprintf("%s/extensions/%d%s", m.URL(), d.Extensions[0].ID, page))
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#admins-only`))); err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		controls, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("form, #refresh-testers, #rotate-token, #create-key, .retry, #upload-panel, .ext-nav").length`))
		if err != nil || controls != 0 {
			t.Fatalf("%s: a tester sees %d admin controls (%v)", page, controls, err)
		}
		checkAccessible(t, ctx, "a tester on the admins' page "+page)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#to-builds`))); err != nil {
		t.Fatal(err)
	}
	waitLocation(t, ctx, m.URL()+"/builds")
}

// TestCLISubmitShowsInAnOpenList: a bundle published by `betaport submit`
// appears in an open bundles list and in its header within seconds, with
// no focus event, reload or click; header and list agree on what is
// current. It logs the delay from the end of the submit to the row
// appearing, median of 10.
func TestCLISubmitShowsInAnOpenList(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[1]
	ctx := adminTab(t, m, d)
	keyPath := cliKey(t, m, ext.ID)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`+(document.getElementById("bundle-rows")?.dataset.count || 0) > 0`)); err != nil {
		t.Fatal(err)
	}
	var delays []time.Duration
	for i := range 10 {
		number := cliSubmit(t, m, keyPath, "Live", fmt.Sprintf("9.%d", i))
		done := time.Now()
		shown := fmt.Sprintf(`(() => { const row = document.querySelector('#bundle-rows [data-bundle="%d"]');
			return !!row && !!row.querySelector(".badge-active") && document.querySelector("#current-bundle").textContent.includes("#%d"); })()`, number, number)
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](shown)); err != nil {
			header, _ := chromedp.Run(context.WithoutCancel(ctx), chromedp.Text(chromedp.CSS(`#current-bundle`)))
			t.Fatalf("bundle #%d never showed as current in the open list and header (header: %q): %v", number, header, err)
		}
		delays = append(delays, time.Since(done))
	}
	slices.Sort(delays)
	t.Logf("CLI submit → row and header in the open list: median %v (min %v, max %v) of %d", delays[len(delays)/2], delays[0], delays[len(delays)-1], len(delays))
}

// cliKey writes a key file for extension id with `betaport key create`.
func cliKey(t *testing.T, m *cli.Main, id int64) string {
	t.Helper()
	keyPath := filepath.Join(t.TempDir(), "key.json")
	var stdout, stderr strings.Builder
	if code := cli.Run(context.Background(), []string{"key", "create", "--label", "CI", "--data", m.Config.Data, "--extension", fmt.Sprint(id), "--out", keyPath}, &stdout, &stderr); code != 0 {
		t.Fatalf("key create: %s", stderr.String())
	}
	return keyPath
}

// cliSubmit publishes a zip of the manifest name and version with
// `betaport submit`, as a pipeline does, and returns the bundle's number.
func cliSubmit(t *testing.T, m *cli.Main, keyPath, name, version string) int64 {
	t.Helper()
	return submitTo(t, m.URL(), keyPath, name, version)
}

// TestTesterBuildsFollowAPublish: a tester's open builds page shows a
// bundle published by the pipeline, with no reload or focus.
func TestTesterBuildsFollowAPublish(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := newTab(t)
	openApp(t, ctx, m.URL()+d.TesterLink)
	waitLocation(t, ctx, m.URL()+"/builds")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#builds .build-name`))); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "key.json")
	var stdout, stderr strings.Builder
	if code := cli.Run(context.Background(), []string{"key", "create", "--label", "CI", "--data", m.Config.Data, "--extension", fmt.Sprint(d.Extensions[0].ID), "--out", keyPath}, &stdout, &stderr); code != 0 {
		t.Fatalf("key create: %s", stderr.String())
	}
	zipPath := filepath.Join(dir, "live.zip")
	f, _ := os.Create(zipPath)
	zw := zip.NewWriter(f)
	w, _ := zw.Create("manifest.json")
	io.WriteString(w, `{"manifest_version": 3, "name": "Tab Tamer", "version": "77.0.1"}`)
	zw.Close()
	f.Close()
	if code := cli.Run(context.Background(), []string{"submit", "--quiet", "--base-url", m.URL(), "--key", keyPath, zipPath}, &stdout, &stderr); code != 0 {
		t.Fatalf("submit: %s", stderr.String())
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector("#builds").textContent.includes("77.0.1")`)); err != nil {
		t.Fatalf("the tester's open builds page never showed the new build: %v", err)
	}
}

// TestEveryPageHasItsTitle: tabs, history and screen readers tell the
// pages apart.
func TestEveryPageHasItsTitle(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := adminTab(t, m, d)
	ext := d.Extensions[0]
	seen := map[string]string{}
	for _, path := range []string{"/", fmt.Sprintf("/extensions/%d", ext.ID), fmt.Sprintf("/extensions/%d/testers", ext.ID),
		fmt.Sprintf("/extensions/%d/settings", ext.ID), fmt.Sprintf("/extensions/%d/pages", ext.ID), "/no/such/page"} {
		openApp(t, ctx, m.URL()+path)
		title, err := chromedp.Run(ctx, chromedp.Poll[string](`document.title !== "Betaport" && document.title`))
		if err != nil {
			t.Fatalf("%s: the title stays %q: %v", path, title, err)
		}
		if other, dup := seen[title]; dup {
			t.Errorf("%s and %s share the title %q", path, other, title)
		}
		seen[title] = path
	}
}

// TestExtensionNavigation: an extension's pages are one click apart, the
// current one marked, and the page-by-page view names its columns.
func TestExtensionNavigation(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := adminTab(t, m, d)
	ext := d.Extensions[0]
	base := fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID)
	openApp(t, ctx, base)
	for _, step := range []struct{ link, url string }{
		{"testers", base + "/testers"}, {"settings", base + "/settings"}, {"pages", base + "/pages"}, {"bundles", base},
	} {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#nav-`+step.link))); err != nil {
			t.Fatalf("%s: %v", step.link, err)
		}
		waitLocation(t, ctx, step.url)
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector("#nav-`+step.link+`")?.getAttribute("aria-current") === "page"`)); err != nil {
			t.Fatalf("%s is not marked current: %v", step.link, err)
		}
		// The focus moved to the new page's content and its title was
		// announced; the next Tab starts in the page.
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.activeElement?.id === "main" &&
			document.title.startsWith(document.getElementById("route-announcer")?.textContent || "-")`)); err != nil {
			f := readFocus(t, ctx)
			t.Fatalf("after going to %s the focus is on %+v, or the title was not announced: %v", step.link, f, err)
		}
		if step.link == "pages" {
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`[...document.querySelectorAll("#classic-rows .grid-head span")].some(s => s.textContent === "Version")`)); err != nil {
				t.Fatalf("the page-by-page view has no column headers: %v", err)
			}
		}
	}
}

// TestContrastAndFocusRing: the green badges and the focus ring are
// readable (text ≥ 4.5:1, ring ≥ 3:1), a focused row control's ring is not
// cut by its row, and reduced motion turns transitions off.
func TestContrastAndFocusRing(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), d.Extensions[0].ID))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!document.querySelector("#bundle-rows .badge-active")`)); err != nil {
		t.Fatal(err)
	}
	const contrastJS = `(() => {
	  const rgb = s => s.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number);
	  const lum = c => { const [r, g, b] = c.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
	  const ratio = (a, b) => { const [x, y] = [lum(rgb(a)), lum(rgb(b))].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
	  const badge = getComputedStyle(document.querySelector("#bundle-rows .badge-active"));
	  return [ratio(badge.color, badge.backgroundColor), ratio(getComputedStyle(document.body).backgroundColor, "rgb(255, 255, 255)")];
	})()`
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](contrastJS))
	if err != nil {
		t.Fatal(err)
	}
	if got[0] < 4.5 {
		t.Errorf("the green badge's text is %.2f:1, want at least 4.5:1", got[0])
	}
	// Tab to a control inside a row: its ring is drawn, and inside the row.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`h1`))); err != nil {
		t.Fatal(err)
	}
	tabTo(t, ctx, "a bundle row's link", func(f focusedElement) bool { return f.Row >= 0 })
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift))); err != nil {
		t.Fatal(err)
	}
	ring, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => { const s = getComputedStyle(document.activeElement); return [s.outlineStyle, s.outlineWidth, s.outlineOffset, s.outlineColor, String(!!document.activeElement.closest(".row"))]; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if ring[0] == "none" || ring[1] == "0px" {
		t.Fatalf("the focused control shows no ring: %v", ring)
	}
	if ring[4] == "true" && !strings.HasPrefix(ring[2], "-") {
		t.Errorf("a row control's ring is drawn outside the row that clips it: offset %s", ring[2])
	}
	ratio, _ := chromedp.Run(ctx, chromedp.Evaluate[float64](strings.Replace(contrastJS, `return [ratio(badge.color, badge.backgroundColor), ratio(getComputedStyle(document.body).backgroundColor, "rgb(255, 255, 255)")];`,
		`return ratio(getComputedStyle(document.activeElement).outlineColor, "rgb(255, 255, 255)");`, 1)))
	if ratio < 3 {
		t.Errorf("the focus ring is %.2f:1 against white, want at least 3:1", ratio)
	}
	// Reduced motion: no transitions.
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}}}); err != nil {
		t.Fatal(err)
	}
	if d, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("#drop-zone")).transitionDuration`)); d != "0s" {
		t.Errorf("with reduced motion the drop zone still transitions for %s", d)
	}
}

// TestKeyboardScrollingLoadsAndStops: PageDown, Space, arrows and End move
// through the testers list and load what comes into view; when the keys
// stop, requests stop, and the viewport shows rows.
func TestKeyboardScrollingLoadsAndStops(t *testing.T) {
	t.Parallel()
	m, d, ext := startWithTesters(t, 10_000)
	ctx := adminTab(t, m, d)
	requests := countRequests(t, ctx, fmt.Sprintf("/api/extensions/%d/testers", ext.ID))
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/testers", m.URL(), ext.ID))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`+(document.getElementById("testers")?.dataset.count || 0) > 0`)); err != nil {
		t.Fatal(err)
	}
	first := readList(t, ctx, "testers", "x").Count
	// The page, not a field, has the focus: a press on the heading.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`h1`))); err != nil {
		t.Fatal(err)
	}
	keys := []string{kb.PageDown, kb.PageDown, " ", kb.ArrowDown, kb.ArrowDown, kb.End, kb.End, kb.End}
	for _, k := range keys {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(k)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond) // a hand's pace
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`+document.getElementById("testers").dataset.count > %d`, first))); err != nil {
		t.Fatalf("keys moved through the list but nothing more loaded: %v", err)
	}
	settledCount(t, ctx) // what the keys asked for arrives
	before, loaded := requests.Load(), readList(t, ctx, "testers", "x").Count
	time.Sleep(3 * time.Second) // the idle hand: the window is the measurement
	if idle := requests.Load() - before; idle > 1 {
		t.Errorf("with the keys still, %d requests (%d → %d testers)", idle, loaded, readList(t, ctx, "testers", "x").Count)
	}
	size, _ := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[innerWidth, innerHeight]`))
	if onRow, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`!!document.elementFromPoint(%f, %f)?.closest("[data-tester]")`, size[0]/2, size[1]/2))); !onRow {
		t.Errorf("after the keys the middle of the viewport shows no row")
	}
	t.Logf("keys: %d → %d testers loaded", first, loaded)
}

// TestHomeBringsDroppedPagesBack: twenty pages of testers loaded with the
// End key leave a window of rows in the DOM and a few pages held and
// cached (MaxPages); Home fetches the first pages again, not the pages it
// passes over, and the viewport shows rows, not placeholders, once they
// arrive. (A hundred pages deep, by clicks, is
// TestBlackBoxHundredLoadMoreClicks, with the same bounds.)
func TestHomeBringsDroppedPagesBack(t *testing.T) {
	// Not in parallel: beside other tests, Home's smooth scroll to the top
	// slows enough to pass through pages a hand's Home never reads.
	ctx, requests := openTestersList(t, 100_000)
	top, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#testers .row").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`h1`))); err != nil {
		t.Fatal(err)
	}
	start, startRequests := time.Now(), requests.Load()
	endUntil(t, ctx, 2_100)
	type figures struct {
		Rows, Elements, Held, Cached int
	}
	read := func() figures {
		f, err := chromedp.Run(ctx, chromedp.Evaluate[figures](`({
			Rows: document.querySelectorAll("#testers .row").length,
			Elements: document.getElementsByTagName("*").length,
			Held: +document.getElementById("testers-list").dataset.held,
			Cached: +document.getElementById("testers-list").dataset.cached,
		})`))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	t.Logf("20 load-mores with the End key: %v, %d requests", time.Since(start).Round(time.Millisecond), requests.Load()-startRequests)
	f := read()
	t.Logf("after 20 load-mores (2,100 testers): %d row elements, %d elements in the DOM, %d pages held, %d keys cached", f.Rows, f.Elements, f.Held, f.Cached)
	if f.Rows > 60 || f.Elements > 1500 || f.Held > 3 || f.Cached > 10 {
		t.Errorf("after 20 load-mores the page keeps %+v: not bounded", f)
	}

	// Home: the first pages were dropped; they come back, and the rows
	// under the pointer are testers, in order. The count Home must keep is
	// taken once what the End presses asked for has landed: on a busy
	// machine an End pressed again while a page loaded (as a hand presses
	// when nothing comes) loads one page more, after the 2,100th row.
	loaded := settledCount(t, ctx)
	before := requests.Load()
	homeUntilTop(t, ctx)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`document.querySelector("#testers .row")?.textContent === %q && !document.querySelector("#testers .row-placeholder")`, top))); err != nil {
		t.Fatalf("back at the top, the first testers do not come back: %v", err)
	}
	// The pages held come back: 3. On a busy machine Home's smooth scroll
	// may rest on a page or two in passing, which the list then reads
	// (CI saw 4); never the twenty pages it passes over.
	if n := requests.Load() - before; n > 3+3 {
		t.Errorf("going back to the top cost %d requests, want the 3 pages held and at most a few rested on in passing", n)
	}
	if n := readList(t, ctx, "testers", "x").Count; n != loaded || loaded < 2_100 {
		t.Errorf("going back to the top changed the list: %d testers, %d before Home", n, loaded)
	}
}

// focused reads the focused element: its accessible name (aria-label or
// text), the list row it is in (-1 outside rows) and its id.
type focusedElement struct {
	Name string
	Row  int
	ID   string
	Tag  string
}

func readFocus(t *testing.T, ctx context.Context) focusedElement {
	t.Helper()
	f, err := chromedp.Run(ctx, chromedp.Evaluate[focusedElement](`(() => {
		const a = document.activeElement;
		const row = a?.closest(".vlist-row");
		return {Name: a?.getAttribute("aria-label") || a?.textContent.trim() || "", Row: row ? +row.dataset.row : -1, ID: a?.id || "", Tag: a?.tagName || ""};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFocusedRowKeepsItsMeaning: a Revoke button reached with Tab keeps
// naming the same tester while the wheel scrolls the list far away and
// back, Enter then revokes that tester and no other, and Tab walks the
// rows in order.
func TestFocusedRowKeepsItsMeaning(t *testing.T) {
	t.Parallel()
	m, d, ext := startWithTesters(t, 10_000)
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/testers", m.URL(), ext.ID))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`+(document.getElementById("testers")?.dataset.count || 0) === 100`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`h1`))); err != nil {
		t.Fatal(err)
	}
	// Tab to the first row's Revoke, then walk five rows on.
	var f focusedElement
	for range 40 {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
		if f = readFocus(t, ctx); strings.HasPrefix(f.Name, "Revoke ") {
			break
		}
	}
	if f.Row != 0 {
		t.Fatalf("Tab from the heading reached %+v, not the first row's Revoke", f)
	}
	for want := 1; want <= 30; want++ {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
		next := readFocus(t, ctx)
		if next.Row != want || !strings.HasPrefix(next.Name, "Revoke ") || next.Name == f.Name {
			t.Fatalf("Tab from row %d (%q) went to %+v, want row %d's Revoke", want-1, f.Name, next, want)
		}
		f = next
	}

	// The wheel takes the list far away; the focused control keeps its
	// tester, at every step, and back.
	size, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[innerWidth, innerHeight]`))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		dy := 100.0
		if i >= 40 {
			dy = -100
		}
		if err := wheel(ctx, size[0]/2, size[1]/2, dy); err != nil {
			t.Fatal(err)
		}
		time.Sleep(40 * time.Millisecond) // the hand's pace
		if now := readFocus(t, ctx); now.Name != f.Name || now.Row != f.Row {
			t.Fatalf("after %d wheel steps the focused control is %+v, was %+v", i+1, now, f)
		}
	}

	// Enter asks, Enter again revokes the tester the button names, and
	// only them.
	email := strings.TrimPrefix(f.Name, "Revoke ")
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, `document.activeElement.classList.contains("confirm-revoke")`)
	if got := readFocus(t, ctx); got.Name != "Yes, revoke "+email || got.Row != f.Row {
		t.Fatalf("Enter on %q moved the focus to %+v, want its confirmation", f.Name, got)
	}
	waitJS(t, ctx, yesReady)
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ts, err := m.Store.FindTesters(context.Background(), betaport.TesterFilter{ExtensionID: ext.ID, Status: "revoked", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, tt := range ts {
			got = append(got, tt.Email)
		}
		if len(got) > 0 {
			break
		}
	}
	if len(got) != 1 || got[0] != email {
		t.Fatalf("Enter on %q revoked %q", f.Name, got)
	}
}

// mouse dispatches one real mouse event (left button for presses, moves
// and releases).
func mouse(ctx context.Context, typ input.DispatchMouseEventType, x, y float64) error {
	p := input.DispatchMouseEventParams{Type: typ, X: x, Y: y, Button: input.MouseButtonLeft, ClickCount: 1}
	if typ == input.DispatchMouseEventTypeMouseMoved {
		p.Buttons = 1
	}
	_, err := chromedp.Call(ctx, input.DispatchMouseEvent, p)
	return err
}

// readingDelay is how long the list's viewport must rest on a place
// before a jump there is read (app/ui's readingDelay).
const readingDelay = 150 * time.Millisecond

// TestTrackpadScrollbarAndPointer: on a long list with pages dropped,
// trackpad-sized wheel deltas scroll and stop; dragging the scrollbar
// thumb to the middle fetches only what is read there; and once the rows
// are in, the row under the pointer stays under it.
func TestTrackpadScrollbarAndPointer(t *testing.T) {
	// Not in parallel: a scrollbar drag is a hand's speed against the
	// list's, and on a machine shared with other tests the drag slows to
	// pauses that the list rightly reads as stops.
	ctx, requests := openTestersList(t, 100_000)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`h1`))); err != nil {
		t.Fatal(err)
	}
	endUntil(t, ctx, 3_000)
	settledCount(t, ctx) // what the End presses asked for lands before Home
	homeUntilTop(t, ctx)
	size, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[innerWidth, innerHeight, document.documentElement.clientWidth]`))
	if err != nil {
		t.Fatal(err)
	}
	x, y := size[0]/2, size[1]*0.85 // below the forms: over the rows, even at the top
	underPointer := fmt.Sprintf(`(() => { const r = document.elementFromPoint(%f, %f)?.closest(".row");
		return r?.dataset.tester ? r.dataset.tester + "@" + Math.round(r.getBoundingClientRect().top) : "" })()`, x, y)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`scrollY === 0 && `+underPointer+` !== ""`)); err != nil {
		t.Fatalf("back at the top, no tester under the pointer: %v", err)
	}

	// A trackpad: many small deltas, then the fingers lift.
	top, _ := chromedp.Run(ctx, chromedp.Evaluate[float64](`scrollY`))
	for range 150 {
		if err := wheel(ctx, x, y, 6); err != nil {
			t.Fatal(err)
		}
		time.Sleep(8 * time.Millisecond) // the fingers' pace
	}
	if moved, _ := chromedp.Run(ctx, chromedp.Evaluate[float64](`scrollY`)); moved < top+600 {
		t.Fatalf("150 trackpad deltas of 6 px moved the page from %v to %v", top, moved)
	}
	settledCount(t, ctx) // what the fingers asked for arrives
	before := requests.Load()
	time.Sleep(2 * time.Second) // the idle hand: the window is the measurement
	if idle := requests.Load() - before; idle > 1 {
		t.Errorf("after the trackpad stopped, %d requests in 2 idle seconds", idle)
	}
	if got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](underPointer)); got == "" {
		t.Errorf("after the trackpad, no tester under the pointer")
	}

	// The scrollbar: press on the thumb, drag it down 40% of the track,
	// release.
	geo, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[scrollY, document.documentElement.scrollHeight]`))
	if err != nil {
		t.Fatal(err)
	}
	// The classic scrollbar: an arrow button at each end as tall as the
	// bar is wide, the thumb in the track between, at least 15 px long.
	h, width := size[1], size[0]-size[2]
	track := h - 2*width
	length := max(track*h/geo[1], 15)
	thumb := width + geo[0]/(geo[1]-h)*(track-length) + length/2
	bar := (size[0] + size[2]) / 2 // the middle of the scrollbar
	before = requests.Load()
	if err := mouse(ctx, input.DispatchMouseEventTypeMouseMoved, bar, thumb); err != nil {
		t.Fatal(err)
	}
	if err := mouse(ctx, input.DispatchMouseEventTypeMousePressed, bar, thumb); err != nil {
		t.Fatal(err)
	}
	// A drag that rests on a place (its moves more than the list's
	// reading delay apart, as they are when this machine is busy) is read
	// there, as a hand's pause is: each rest may cost the pages around it.
	// The rests are counted where the list sees them too, in the page's
	// frames: on a machine busier still, moves sent 16 ms apart reach the
	// page in frames further apart than the delay, and the list rightly
	// reads where each frame rested.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(() => {
		const r = window.__dragRests = {rests: 0, last: -1, y: scrollY, stop: false};
		const look = () => { const now = performance.now();
			if (scrollY !== r.y) { if (r.last >= 0 && now - r.last > %d) r.rests++; r.last = now; r.y = scrollY; }
			if (!r.stop) requestAnimationFrame(look); };
		requestAnimationFrame(look); return true; })()`, readingDelay.Milliseconds()))); err != nil {
		t.Fatal(err)
	}
	rests, last := 0, time.Now()
	for i := 1; i <= 20; i++ {
		if err := mouse(ctx, input.DispatchMouseEventTypeMouseMoved, bar, thumb+0.4*h*float64(i)/20); err != nil {
			t.Fatal(err)
		}
		if now := time.Now(); now.Sub(last) > readingDelay {
			rests++
		}
		time.Sleep(16 * time.Millisecond) // a hand's drag
		last = time.Now()
	}
	if err := mouse(ctx, input.DispatchMouseEventTypeMouseReleased, bar, thumb+0.4*h); err != nil {
		t.Fatal(err)
	}
	bbFrames(t, ctx) // the release's last move, painted
	if seen := bbEval[int](t, ctx, `(() => { __dragRests.stop = true; return __dragRests.rests; })()`); seen > rests {
		rests = seen
	}
	if err := mouse(ctx, input.DispatchMouseEventTypeMouseMoved, x, y); err != nil { // the pointer back over the list
		t.Fatal(err)
	}
	if at, _ := chromedp.Run(ctx, chromedp.Evaluate[float64](`scrollY / document.documentElement.scrollHeight`)); at < 0.25 {
		t.Fatalf("dragging the scrollbar thumb down 40%% of the track left the page at %.0f%%", at*100)
	}
	var settled string
	if settled, err = chromedp.Run(ctx, chromedp.Poll[string](`(() => { const s = `+underPointer+`; return s !== "" && s })()`)); err != nil {
		t.Fatalf("after the drag, no tester under the pointer: %v", err)
	}
	t.Logf("the scrollbar drag: %d requests, %d rests", requests.Load()-before, rests)
	// Read at every move, the drag would cost 3 pages for each of its 20
	// moves (each lands 20 pages further). Read where it rests, it costs
	// those of the stop and of each rest, 3 a place. Two more rests are
	// allowed than were counted: on a busy machine the list's own reading
	// timer can see a rest that fell between the moves sent here and the
	// page's frames (one such run cost 11 requests with 2 rests counted).
	if n := requests.Load() - before; n > int64(4+3*(rests+2)) {
		t.Errorf("the drag across the list cost %d requests (it rested %d times), want the pages read where it stopped (and where it rested)", n, rests)
	}
	// The pages around arrive; what is under the pointer stays.
	for range 15 {
		time.Sleep(100 * time.Millisecond) // sampling while pages arrive
		if now, _ := chromedp.Run(ctx, chromedp.Evaluate[string](underPointer)); now != settled {
			t.Fatalf("the row under the pointer moved: %s, then %s", settled, now)
		}
	}
}

// TestLoadMoreByKeyboard: Tab walks the bundle rows in order to "Load
// more" (while the next page is held back, so the automatic loading does
// not win the race); the button keeps the focus while it is busy and
// after, and Enter on it loads a page.
func TestLoadMoreByKeyboard(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0] // hundreds of bundles, 20 a page
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	waitList(t, ctx, "bundle-rows", 20)

	release := holdRequests(t, ctx, "*/api/extensions/*/bundles?page=1&*")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`h1`))); err != nil {
		t.Fatal(err)
	}
	var f focusedElement
	for range 40 {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
		if f = readFocus(t, ctx); f.Row >= 0 {
			break
		}
	}
	if f.Row != 0 {
		t.Fatalf("Tab from the heading reached %+v, not the first bundle", f)
	}
	for {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
		next := readFocus(t, ctx)
		if next.Row < 0 {
			if next.ID != "load-more-bundles" || f.Row != 19 {
				t.Fatalf("after row %d, Tab went to %+v, want the Load more button after row 19", f.Row, next)
			}
			break
		}
		// A row has several controls (Roll back, Download): Tab walks
		// them, then the next row's.
		if next.Row != f.Row && next.Row != f.Row+1 {
			t.Fatalf("Tab from row %d went to row %d", f.Row, next.Row)
		}
		f = next
	}
	// The held page arrives; the focus stays on the button.
	release()
	waitList(t, ctx, "bundle-rows", 40)
	if now := readFocus(t, ctx); now.ID != "load-more-bundles" {
		t.Fatalf("when the page arrived the focus went to %+v", now)
	}
	// Enter on it loads one more page, and it keeps the focus.
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatal(err)
	}
	waitList(t, ctx, "bundle-rows", 60)
	if now := readFocus(t, ctx); now.ID != "load-more-bundles" {
		t.Fatalf("after Enter on Load more the focus is on %+v", now)
	}
}

// tabTo presses Tab until the focused element is what want accepts.
func tabTo(t *testing.T, ctx context.Context, what string, want func(focusedElement) bool) focusedElement {
	t.Helper()
	for range 60 {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
		if f := readFocus(t, ctx); want(f) {
			return f
		}
	}
	t.Fatalf("60 Tabs did not reach %s (now on %+v)", what, readFocus(t, ctx))
	return focusedElement{}
}

// TestNewBundleOnTopKeepsTheRowUnderThePointer: while the admin reads
// further down the bundles list, a pipeline publishes; the new bundle
// arrives on top (the list and header say so), and the row under the
// pointer stays under it, where it was.
func TestNewBundleOnTopKeepsTheRowUnderThePointer(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	ctx := adminTab(t, m, d)
	keyPath := cliKey(t, m, ext.ID)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	waitList(t, ctx, "bundle-rows", 20)
	size, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[innerWidth, innerHeight]`))
	if err != nil {
		t.Fatal(err)
	}
	x, y := size[0]/2, size[1]/2
	for range 15 {
		if err := wheel(ctx, x, y, 100); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // the hand's pace
	}
	under := fmt.Sprintf(`(() => { const r = document.elementFromPoint(%f, %f)?.closest("[data-bundle]");
		return r ? r.dataset.bundle + "@" + Math.round(r.getBoundingClientRect().top) : "" })()`, x, y)
	// Wait until the view rests (loading done, the same row twice).
	var before string
	for i := 0; ; i++ {
		a, _ := chromedp.Run(ctx, chromedp.Evaluate[string](under))
		time.Sleep(300 * time.Millisecond) // two looks, a moment apart
		b, _ := chromedp.Run(ctx, chromedp.Evaluate[string](under))
		if a != "" && a == b {
			before = a
			break
		}
		if i == 20 {
			t.Fatalf("the view never rested: %q, then %q", a, b)
		}
	}

	// The facts above the list (the current bundle and version) change
	// with it; neither they nor the new row on top move the row under the
	// pointer.
	number := cliSubmit(t, m, keyPath, "Tab Tamer", "99.0")
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`document.querySelector("#current-bundle")?.textContent.includes("#%d") && document.getElementById("bundles").dataset.top === "%d" && document.getElementById("bundles").dataset.validating === "false"`, number, number))); err != nil {
		t.Fatalf("the new bundle #%d did not arrive in the open list: %v", number, err)
	}
	bbFrames(t, ctx)
	if after, _ := chromedp.Run(ctx, chromedp.Evaluate[string](under)); after != before {
		t.Fatalf("a bundle published on top moved the row under the pointer: %s, then %s", before, after)
	}
}

// holdRequests holds the tab's requests whose URL matches pattern (the
// DevTools Fetch domain: the server's answer waits) until release is
// called, which lets them go and holds no more.
func holdRequests(t *testing.T, ctx context.Context, pattern string) (release func()) {
	t.Helper()
	h := newRequestHold(t, ctx, pattern)
	return func() {
		t.Helper()
		h.release(t)
	}
}

// requestHold is holdRequests with a wait for the first held request.
type requestHold struct {
	ctx      context.Context
	mu       sync.Mutex
	held     []fetch.RequestID
	released bool
	asked    chan struct{} // closed when the first request is held
}

func newRequestHold(t *testing.T, ctx context.Context, pattern string) *requestHold {
	t.Helper()
	h := &requestHold{ctx: ctx, asked: make(chan struct{})}
	if err := chromedp.Listen(ctx, func(ev any) {
		e, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.released {
			// Paused as the hold ended: let it go (not from the listener,
			// which a CDP call from would block).
			go chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
			return
		}
		if len(h.held) == 0 {
			close(h.asked)
		}
		h.held = append(h.held, e.RequestID)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: pattern}}}); err != nil {
		t.Fatal(err)
	}
	return h
}

// waitHeld waits until the page has asked for a held request.
func (h *requestHold) waitHeld(t *testing.T) {
	t.Helper()
	select {
	case <-h.asked:
	case <-time.After(patient(10 * time.Second)):
		t.Fatalf("the page asked for no held request in %v", patient(10*time.Second))
	}
}

// release lets the held requests go and holds no more (the browser lets
// go of any held after that); a second call does nothing.
func (h *requestHold) release(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	held, done := h.held, h.released
	h.held, h.released = nil, true
	h.mu.Unlock()
	if done {
		return
	}
	for _, id := range held {
		if _, err := chromedp.Call(h.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id}); err != nil {
			// A link followed while the request was held took the page
			// that asked away, and its request with it.
			if strings.Contains(err.Error(), "Invalid InterceptionId") {
				continue
			}
			t.Fatal(err)
		}
	}
	if _, err := chromedp.Call(h.ctx, fetch.Disable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
}

// openTestersList opens, as an admin, the testers list of an extension
// with n testers, counting its requests, once the first page is in.
func openTestersList(t *testing.T, n int) (context.Context, *atomic.Int64) {
	t.Helper()
	m, d, ext := startWithTesters(t, n)
	ctx := adminTab(t, m, d)
	requests := countRequests(t, ctx, fmt.Sprintf("/api/extensions/%d/testers", ext.ID))
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/testers", m.URL(), ext.ID))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`+(document.getElementById("testers")?.dataset.count || 0) === 100`)); err != nil {
		t.Fatal(err)
	}
	return ctx, requests
}

// endUntil presses End, page after page, until the testers list holds n
// rows. A press made while a page loads finds the end where it was, so it
// presses again until each page has arrived.
func endUntil(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	for want := readList(t, ctx, "testers", "x").Count + 100; want <= n; want += 100 {
		for {
			if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.End)); err != nil {
				t.Fatal(err)
			}
			grown, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`+document.getElementById("testers").dataset.count >= %d`, want),
				chromedp.WithPollingTimeout(150*time.Millisecond)))
			if err == nil && grown {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("stuck at %d testers", readList(t, ctx, "testers", "x").Count)
			}
		}
	}
}

// settledCount waits until the page has stopped scrolling (ten frames at
// one place) with no page of testers on its way, and returns how many
// testers the list holds then.
func settledCount(t *testing.T, ctx context.Context) int {
	t.Helper()
	const still = `new Promise(done => { let last = scrollY, frames = 0;
		const look = () => { if (scrollY !== last) { last = scrollY; frames = 0; } else if (++frames >= 10) { return done(true); } requestAnimationFrame(look); };
		requestAnimationFrame(look); })`
	const idle = `(() => { const l = document.getElementById("testers-list").dataset; return l.loadingMore === "false" && l.validating === "false"; })()`
	for {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](still, chromedp.EvalAwaitPromise)); err != nil {
			t.Fatalf("waiting for the page to stop scrolling: %v", err)
		}
		if settled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](idle)); err != nil {
			t.Fatal(err)
		} else if settled {
			return readList(t, ctx, "testers", "x").Count
		}
		// A page is on its way: once it lands the page may scroll or load
		// again, so look at both once more.
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](idle)); err != nil {
			t.Fatalf("the list never settled: %v", err)
		}
	}
}

// homeUntilTop presses Home, again if an End's smooth scroll was still
// running and carried the page back down (as a hand presses again).
func homeUntilTop(t *testing.T, ctx context.Context) {
	t.Helper()
	for try := 0; ; try++ {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Home)); err != nil {
			t.Fatal(err)
		}
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](`scrollY === 0`, chromedp.WithPollingTimeout(2*time.Second)))
		if err == nil {
			return
		}
		if try == 3 {
			t.Fatalf("Home does not go to the top: %v", err)
		}
	}
}

// TestRevokingAnInvitedTesterAsksWithYesFocused: an invited tester's row
// has two buttons (New link, Revoke). Revoke pressed asks "Revoke …?" and
// the focus is on the question's "Yes, revoke" (it fell on "Keep", the
// button at Revoke's place); Keep puts it back on Revoke; Enter, Enter
// revokes with the keyboard alone.
func TestRevokingAnInvitedTesterAsksWithYesFocused(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/testers", m.URL(), d.Extensions[0].ID))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!document.querySelector("#testers [data-tester] .resend")`)); err != nil {
		t.Fatalf("no invited tester in the list: %v", err)
	}
	who, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => { const r = document.querySelector("#testers .resend").closest("[data-tester]");
		return [r.dataset.tester, r.querySelector(".revoke").getAttribute("aria-label").replace(/^Revoke /, "")]; })()`))
	if err != nil {
		t.Fatal(err)
	}
	row, email := `#testers [data-tester="`+who[0]+`"]`, who[1]
	focusIs := func(name, after string) {
		t.Helper()
		js := fmt.Sprintf(`(document.activeElement?.getAttribute("aria-label") || document.activeElement?.textContent.trim()) === %q`, name)
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			t.Fatalf("after %s the focus is on %+v, want %q", after, readFocus(t, ctx), name)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(row+` .revoke`))); err != nil {
		t.Fatal(err)
	}
	focusIs("Yes, revoke "+email, "pressing Revoke")
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
		t.Fatal(err)
	}
	focusIs("Keep", "Tab")
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatal(err)
	}
	focusIs("Revoke "+email, "Keep")
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatal(err)
	}
	focusIs("Yes, revoke "+email, "Enter on Revoke")
	waitJS(t, ctx, yesReady)
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector(`+strconv.Quote(row+` .badge`)+`)?.textContent === "revoked"`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("Enter on Yes did not revoke %s: %v", email, err)
	}
}
