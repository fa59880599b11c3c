package browser_test

// Black-box tests of issue 30: every list's rows are on screen once the app
// has booted on a 1280×800 window (the adoption section on its own tab), and
// no click made before the app boots is lost, doubled or turned into a
// revoke or a rollback nobody confirmed. They look at the pages as a person
// does, click with real input, and check what the service holds through its
// API.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/demo"
)

// The window the issue names.
const bb30Width, bb30Height = 1280, 800

// bb30MinRows is how many whole, uncovered rows of a list "several" asks for.
const bb30MinRows = 3

// bb30Deadline bounds one test: a safety net, not a measure.
const bb30Deadline = 90 * time.Second

// bb30Tab is adminTab (a plain newTab when admin is false) in a 1280×800
// viewport, with a deadline.
func bb30Tab(t *testing.T, m *cli.Main, d *demo.Result, admin bool) context.Context {
	t.Helper()
	var ctx context.Context
	if admin {
		ctx = adminTab(t, m, d)
	} else {
		ctx = newTab(t)
	}
	ctx, cancel := context.WithTimeout(ctx, bb30Deadline)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(bb30Width, bb30Height)); err != nil {
		t.Fatalf("a 1280×800 viewport: %v", err)
	}
	return ctx
}

// bb30Until polls cond until it holds, failing the test after a patient
// deadline with cond's last description.
func bb30Until(t *testing.T, ctx context.Context, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(patient(10 * time.Second))
	var last string
	for {
		ok, desc := cond()
		if ok {
			return
		}
		last = desc
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("waiting for %s: %s", what, last)
		}
		select {
		case <-ctx.Done():
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// bb30Eval evaluates a JS expression and returns its value.
func bb30Eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// bb30EvalUntil polls a JS condition that answers {OK, Desc} until OK,
// and returns the Desc it answered then.
func bb30EvalUntil(t *testing.T, ctx context.Context, what, expr string) string {
	t.Helper()
	var desc string
	bb30Until(t, ctx, what, func() (bool, string) {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
			OK   bool
			Desc string
		}](expr))
		if err != nil {
			return false, err.Error()
		}
		desc = v.Desc
		return v.OK, v.Desc
	})
	return desc
}

// bb30Booted waits until the wasm app has taken the page over.
func bb30Booted(t *testing.T, ctx context.Context) {
	t.Helper()
	bb30EvalUntil(t, ctx, "the app to take the page over",
		`({OK: !!document.querySelector('.shell[data-app="client"]'), Desc: "the page is "+(document.querySelector('.shell')?.dataset.app || "no shell")+" at "+location.href})`)
}

// ---- Part 1: rows on screen ----

// bb30RowsJS answers how many rows of a list are whole inside the viewport
// and not covered (elementFromPoint at their centre is the row or inside it).
const bb30RowsJS = `((sel, min) => {
	const rows = [...document.querySelectorAll(sel)];
	const vw = document.documentElement.clientWidth, vh = document.documentElement.clientHeight;
	let whole = 0;
	const desc = [];
	for (const r of rows) {
		const b = r.getBoundingClientRect();
		if (b.width <= 0 || b.height <= 0) continue;
		const inside = b.top >= 0 && b.left >= 0 && b.bottom <= vh && b.right <= vw;
		const cx = b.left + b.width / 2, cy = b.top + b.height / 2;
		const at = (cx >= 0 && cy >= 0 && cx < vw && cy < vh) ? document.elementFromPoint(cx, cy) : null;
		const hit = !!at && (at === r || r.contains(at));
		if (inside && hit) whole++;
		if (desc.length < 6) desc.push("row " + Math.round(b.top) + "–" + Math.round(b.bottom) + " x " + Math.round(b.left) + "–" + Math.round(b.right) + (inside ? "" : " (not whole in the viewport)") + (at && !hit ? " (covered by " + at.tagName + (at.id ? "#" + at.id : "") + (at.className ? "." + String(at.className).split(" ").join(".") : "") + ")" : ""));
	}
	return {OK: whole >= min && !!document.querySelector('.shell[data-app="client"]'),
		Desc: whole + " of " + rows.length + " rows (" + sel + ") whole and uncovered in a " + vw + "×" + vh + " viewport scrolled to " + scrollY + "; " + desc.join("; ")};
})(%q, %d)`

// bb30RowsOnScreen opens url in the app and waits until at least
// bb30MinRows rows matched by rowSel are whole in the viewport and
// uncovered.
func bb30RowsOnScreen(t *testing.T, ctx context.Context, url, rowSel string) {
	t.Helper()
	openApp(t, ctx, url)
	bb30EvalUntil(t, ctx, fmt.Sprintf("%d rows of %s on screen after boot", bb30MinRows, rowSel), fmt.Sprintf(bb30RowsJS, rowSel, bb30MinRows))
	// The rows stay: nothing the app does once loaded pushes them off
	// (checked once more after the list's data has settled).
	bb30EvalUntil(t, ctx, "the list to settle", `({OK: [...document.querySelectorAll('[data-validating],[data-loading-more]')].every(e => e.dataset.validating !== "true" && e.dataset.loadingMore !== "true"), Desc: "a list still loads"})`)
	desc := bb30EvalUntil(t, ctx, fmt.Sprintf("%d rows of %s still on screen", bb30MinRows, rowSel), fmt.Sprintf(bb30RowsJS, rowSel, bb30MinRows))
	t.Logf("%s", desc)
}

func TestBlackBox30BundlesRowsOnScreen(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := bb30Tab(t, m, d, true)
	bb30RowsOnScreen(t, ctx, m.URL()+"/extensions/"+bb30ID(d.Extensions[0].ID), `#bundle-rows [role="row"]`)
}

func TestBlackBox30TestersRowsOnScreen(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := bb30Tab(t, m, d, true)
	bb30RowsOnScreen(t, ctx, m.URL()+"/extensions/"+bb30ID(d.Extensions[0].ID)+"/testers", `#testers [role="row"]`)
}

func TestBlackBox30BuildsRowsOnScreen(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := bb30Tab(t, m, d, false)
	// The demo tester's link signs this browser in and shows their builds.
	openApp(t, ctx, m.URL()+d.TesterLink)
	waitLocation(t, ctx, m.URL()+"/builds")
	bb30RowsOnScreen(t, ctx, m.URL()+"/builds", `#builds [role="row"]`)
}

func TestBlackBox30AdoptionRowsOnScreen(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	cookie := signInHTTP(t, m.URL(), d.Admins[0].Email, d.Admins[0].Password)
	// Update checks from copies of six versions: the adoption table has a
	// row per version.
	var upd api.Updates
	bootGetJSON(t, m.URL(), api.UpdatesPath(ext.ID), cookie, &upd)
	versions := []string{"1.12.0", "1.11.9", "1.11.8", "1.11.7", "1.11.6", "1.11.5"}
	for i, v := range versions {
		for range len(versions) - i {
			x := url.QueryEscape("id=" + upd.ChromeID + "&v=" + v + "&uc")
			resp, err := http.Get(upd.UpdateURL + "?x=" + x)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("update check of %s: %s", v, resp.Status)
			}
		}
	}
	ctx := bb30Tab(t, m, d, true)
	bb30RowsOnScreen(t, ctx, m.URL()+"/extensions/"+bb30ID(ext.ID)+"/adoption", `#adoption-table tbody tr`)
}

// ---- helpers ----

func bb30ID(id int64) string { return strconv.FormatInt(id, 10) }

// ---- Part 1b: the Adoption tab, by a click, and back and forward ----

// bb30TabShownJS holds when the address is path and the page shows the
// tab whose link is navID and the content sel, and none of the others'.
const bb30TabShownJS = `((path, navID, sel, others) => {
	const shown = (s) => { const e = document.querySelector(s); return !!e && e.getClientRects().length > 0; };
	const nav = document.getElementById(navID);
	const current = !!nav && nav.getAttribute("aria-current") === "page";
	const stray = others.filter(shown);
	return {OK: !!document.querySelector('.shell[data-app="client"]') && location.pathname === path && shown(sel) && current && stray.length === 0,
		Desc: "at " + location.pathname + ", " + sel + (shown(sel) ? " shown" : " not shown") + ", #" + navID + (current ? " current" : " not current") + (stray.length ? ", also shown: " + stray.join(" ") : "")};
})(%q, %q, %q, %s)`

func TestBlackBox30AdoptionTabClickBackForward(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := bb30Tab(t, m, d, true)
	base := "/extensions/" + bb30ID(d.Extensions[0].ID)
	type tab struct{ path, nav, sel string }
	bundles := tab{base, "nav-bundles", `#bundle-rows [role="row"]`}
	adoption := tab{base + "/adoption", "nav-adoption", `#adoption`}
	testers := tab{base + "/testers", "nav-testers", `#testers [role="row"]`}
	all := []tab{bundles, adoption, testers}
	expect := func(step string, want tab) {
		t.Helper()
		var others []string
		for _, o := range all {
			if o != want {
				others = append(others, o.sel)
			}
		}
		js, _ := json.Marshal(others)
		bb30EvalUntil(t, ctx, step+": "+want.path+" showing "+want.sel, fmt.Sprintf(bb30TabShownJS, want.path, want.nav, want.sel, js))
	}
	openApp(t, ctx, m.URL()+bundles.path)
	expect("the extension page", bundles)
	bb30Click(t, ctx, "#nav-adoption")
	expect("a click on Adoption", adoption)
	bb30Click(t, ctx, "#nav-testers")
	expect("a click on Testers", testers)
	bb30History(t, ctx, -1)
	expect("Back", adoption)
	bb30History(t, ctx, -1)
	expect("Back again", bundles)
	bb30History(t, ctx, +1)
	expect("Forward", adoption)
	bb30History(t, ctx, +1)
	expect("Forward again", testers)
	bb30History(t, ctx, -1)
	expect("Back after forward", adoption)
}

// bb30History goes back (-1) or forward (+1) in the tab's history, as the
// browser's buttons do, without waiting for a load (the app's own
// navigations load nothing).
func bb30History(t *testing.T, ctx context.Context, delta int64) {
	t.Helper()
	h, err := chromedp.Call(ctx, page.GetNavigationHistory, cdp.Empty{})
	if err != nil {
		t.Fatalf("reading the history: %v", err)
	}
	i := h.CurrentIndex + delta
	if i < 0 || i >= int64(len(h.Entries)) {
		t.Fatalf("no history entry %d of %d", i, len(h.Entries))
	}
	if _, err := chromedp.Call(ctx, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: h.Entries[i].ID}); err != nil {
		t.Fatalf("going to %s: %v", h.Entries[i].URL, err)
	}
}

// ---- Part 2 and 3: clicks before boot ----

// bb30Writes records the requests the page sends that may change
// something (anything but GET, HEAD and OPTIONS).
type bb30Writes struct {
	mu   sync.Mutex
	reqs []string
}

func bb30RecordWrites(t *testing.T, ctx context.Context) *bb30Writes {
	t.Helper()
	r := &bb30Writes{}
	events := chromedp.Events(ctx, network.RequestWillBeSent)
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("watching the network: %v", err)
	}
	go func() {
		for e, err := range events {
			if err != nil {
				return
			}
			switch e.Request.Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
				continue
			}
			r.mu.Lock()
			r.reqs = append(r.reqs, e.Request.Method+" "+e.Request.URL)
			r.mu.Unlock()
		}
	}()
	return r
}

func (r *bb30Writes) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.reqs...)
}

// bb30MonitorJS runs in every document of the tab, from its start: it
// keeps, across the app's taking the page over, every confirmation
// question that opened (in order, once per opening) and the most ever open
// at once.
const bb30MonitorJS = `(() => {
	const st = window.__bb30 = {Max: 0, Opened: [], Open: [], Downs: []};
	addEventListener("pointerdown", e => st.Downs.push(e.target), true);
	const scan = () => {
		const open = [...document.querySelectorAll('.confirm-pop[role="group"]')]
			.filter(e => !e.hidden && e.getClientRects().length > 0)
			.map(e => e.getAttribute("aria-label") || e.id || "a question");
		st.Max = Math.max(st.Max, open.length);
		for (const q of open) if (!st.Open.includes(q)) st.Opened.push(q);
		st.Open = open;
	};
	new MutationObserver(scan).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
})()`

// bb30Questions is what the monitor saw.
type bb30Questions struct {
	Max    int
	Opened []string
	Open   []string
}

func bb30Seen(t *testing.T, ctx context.Context) bb30Questions {
	t.Helper()
	return bb30Eval[bb30Questions](t, ctx, `window.__bb30 ? {Max: __bb30.Max, Opened: __bb30.Opened, Open: __bb30.Open} : {Max: -1, Opened: [], Open: []}`)
}

// bb30State is what the service holds of the extension: what a revoke or a
// rollback would change.
type bb30State struct {
	Current int64
	Bundles []int64
	Testers map[int64]string
}

func bb30Snapshot(t *testing.T, baseURL string, c *http.Cookie, extID int64) bb30State {
	t.Helper()
	var ext betaport.Extension
	bootGetJSON(t, baseURL, api.ExtensionPath(extID), c, &ext)
	s := bb30State{Current: ext.CurrentBundle, Testers: map[int64]string{}}
	// The bundles list pages by number (from 0).
	for page := 0; page < 100; page++ {
		var bs []betaport.Bundle
		bootGetJSON(t, baseURL, fmt.Sprintf("%s?page=%d&limit=20", api.BundlesPath(extID), page), c, &bs)
		for _, b := range bs {
			s.Bundles = append(s.Bundles, b.Number)
		}
		if len(bs) < 20 {
			break
		}
	}
	for cursor, first := "", true; first || cursor != ""; first = false {
		var p api.Page[betaport.Tester]
		path := api.TestersPath(extID)
		if cursor != "" {
			path += "?cursor=" + url.QueryEscape(cursor)
		}
		bootGetJSON(t, baseURL, path, c, &p)
		for _, x := range p.Data {
			s.Testers[x.ID] = x.Status
		}
		cursor = p.NextCursor
	}
	return s
}

// bb30Pre is a tab signed in as the demo's admin, with a page of the
// extension loading whose wasm is held: the server's page, un-booted.
type bb30Pre struct {
	t      *testing.T
	ctx    context.Context
	base   string // the service
	ext    int64
	cookie *http.Cookie
	wasm   *requestHold
	writes *bb30Writes
	before bb30State
	navAt  time.Time
}

func bb30Preboot(t *testing.T, path string) *bb30Pre {
	t.Helper()
	m, d := startService(t)
	p := &bb30Pre{t: t, base: m.URL(), ext: d.Extensions[0].ID}
	p.ctx = bb30Tab(t, m, d, true)
	if _, err := chromedp.Call(p.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: bb30MonitorJS}); err != nil {
		t.Fatalf("watching the questions: %v", err)
	}
	p.writes = bb30RecordWrites(t, p.ctx)
	p.wasm = newRequestHold(t, p.ctx, "*/app.wasm*")
	p.cookie = signInHTTP(t, m.URL(), d.Admins[0].Email, d.Admins[0].Password)
	p.before = bb30Snapshot(t, m.URL(), p.cookie, p.ext)
	if _, err := chromedp.Call(p.ctx, page.Navigate, page.NavigateParams{URL: m.URL() + "/extensions/" + bb30ID(p.ext) + path}); err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	p.navAt = time.Now()
	return p
}

// bb30PointJS answers the centre of the element sel, whether
// elementFromPoint there hits it, and whether the app runs the page yet.
const bb30PointJS = `((sel) => {
	const app = document.querySelector(".shell")?.dataset.app || "none";
	const el = document.querySelector(sel);
	if (!el) return {X: 0, Y: 0, Hit: false, App: app, Desc: "no " + sel + " yet"};
	const unstyled = [...document.querySelectorAll('link[rel="stylesheet"]')].filter(l => !l.sheet).length;
	if (unstyled) return {X: 0, Y: 0, Hit: false, App: app, Desc: unstyled + " style sheets still loading"};
	const r = el.getBoundingClientRect();
	const x = r.left + r.width / 2, y = r.top + r.height / 2;
	const inView = x >= 0 && y >= 0 && x < document.documentElement.clientWidth && y < document.documentElement.clientHeight;
	const at = inView ? document.elementFromPoint(x, y) : null;
	const d = at ? at.tagName + (at.className ? "." + String(at.className).split(" ").join(".") : "") + " “" + (at.textContent || "").trim().slice(0, 30) + "”" : "nothing";
	return {X: x, Y: y, Hit: r.width > 0 && r.height > 0 && !!at && (at === el || el.contains(at)), App: app, Href: location.href,
		Below: r.top >= document.documentElement.clientHeight, Desc: sel + " at " + Math.round(x) + "," + Math.round(y) + ": " + d + " there"};
})(%q)`

type bb30Point struct {
	X, Y  float64
	Hit   bool
	Below bool
	App   string
	Href  string
	Desc  string
}

// bb30Aim waits until the element sel is on screen and uncovered (turning
// the mouse wheel if it is below the fold, as a person would) and returns
// its centre.
func bb30Aim(t *testing.T, ctx context.Context, sel string) bb30Point {
	t.Helper()
	var p bb30Point
	bb30Until(t, ctx, sel+" on screen and uncovered", func() (bool, string) {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[bb30Point](fmt.Sprintf(bb30PointJS, sel)))
		if err != nil {
			return false, err.Error()
		}
		p = v
		if v.Below {
			chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseWheel, bb30Width/2, bb30Height/2, func(e *input.DispatchMouseEventParams) { e.DeltaY = 120 }))
		}
		return v.Hit, v.Desc
	})
	return p
}

// bb30Click clicks sel with real input at its centre.
func bb30Click(t *testing.T, ctx context.Context, sel string) bb30Point {
	t.Helper()
	p := bb30Aim(t, ctx, sel)
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(p.X, p.Y)); err != nil {
		t.Fatalf("clicking %s: %v", sel, err)
	}
	return p
}

// clickAt clicks sel with real input, after the page first shows it
// (styled, uncovered) by at least after, and checks it was the server's
// page, before boot, that took the press.
func (p *bb30Pre) clickAt(after time.Duration, sel string) {
	p.t.Helper()
	pt := bb30Aim(p.t, p.ctx, sel)
	shown := time.Now()
	if after > 0 {
		// The moment of the click is what the test varies, not a wait
		// for something.
		time.Sleep(after)
		pt = bb30Aim(p.t, p.ctx, sel)
	}
	if err := chromedp.Do(p.ctx, chromedp.MouseClickXY(pt.X, pt.Y)); err != nil {
		p.t.Fatalf("clicking %s: %v", sel, err)
	}
	p.t.Logf("clicked %s %v after the page showed it, %v after the navigation committed", sel, time.Since(shown).Round(time.Millisecond), time.Since(p.navAt).Round(time.Millisecond))
	p.preboot(sel, pt)
}

// doubleClick double-clicks sel with real input (two presses, the second
// with a click count of 2).
func (p *bb30Pre) doubleClick(sel string) {
	p.t.Helper()
	pt := bb30Aim(p.t, p.ctx, sel)
	if err := chromedp.Do(p.ctx,
		chromedp.MouseClickXY(pt.X, pt.Y),
		chromedp.MouseClickXY(pt.X, pt.Y, chromedp.ClickCount(2)),
	); err != nil {
		p.t.Fatalf("double-clicking %s: %v", sel, err)
	}
	p.preboot(sel, pt)
}

// dragOff presses the mouse on sel, moves off it onto away and releases it
// there: no click.
func (p *bb30Pre) dragOff(sel, away string) {
	p.t.Helper()
	from := bb30Aim(p.t, p.ctx, sel)
	to := bb30Aim(p.t, p.ctx, away)
	steps := []chromedp.Action[chromedp.Void]{
		chromedp.MouseEvent(chromedp.MouseMoved, from.X, from.Y),
		chromedp.MouseEvent(chromedp.MousePressed, from.X, from.Y, chromedp.ButtonLeft, chromedp.ClickCount(1), func(e *input.DispatchMouseEventParams) { e.Buttons = 1 }),
	}
	for i := 1; i <= 5; i++ {
		x := from.X + (to.X-from.X)*float64(i)/5
		y := from.Y + (to.Y-from.Y)*float64(i)/5
		steps = append(steps, chromedp.MouseEvent(chromedp.MouseMoved, x, y, chromedp.ButtonLeft, func(e *input.DispatchMouseEventParams) { e.Buttons = 1 }))
	}
	steps = append(steps, chromedp.MouseEvent(chromedp.MouseReleased, to.X, to.Y, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	if err := chromedp.Do(p.ctx, steps...); err != nil {
		p.t.Fatalf("pressing %s and dragging off it: %v", sel, err)
	}
	p.preboot(sel, from)
}

// rightClick presses and releases the right button on sel.
func (p *bb30Pre) rightClick(sel string) {
	p.t.Helper()
	pt := bb30Aim(p.t, p.ctx, sel)
	if err := chromedp.Do(p.ctx, chromedp.MouseClickXY(pt.X, pt.Y, chromedp.ButtonRight)); err != nil {
		p.t.Fatalf("right-clicking %s: %v", sel, err)
	}
	p.preboot(sel, pt)
}

func (p *bb30Pre) preboot(sel string, pt bb30Point) {
	p.t.Helper()
	if pt.App != "server" {
		p.t.Fatalf("the press on %s came when the page was %q, not the server's page before boot", sel, pt.App)
	}
	// The press landed on the element aimed at (the page did not move
	// under the pointer).
	var on string
	bb30Until(p.t, p.ctx, "reading where the press on "+sel+" landed", func() (bool, string) {
		v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](fmt.Sprintf(`((sel, href) => {
			if (location.href !== href) return "";  // a link: the server's page went there
			const d = window.__bb30?.Downs || [];
			const t = d[d.length - 1];
			if (!t) return "no pointerdown seen";
			const el = document.querySelector(sel);
			return el && (el === t || el.contains(t)) ? "" : "the press went to " + t.tagName + "." + String(t.className) + " “" + (t.textContent || "").trim().slice(0, 30) + "”";
		})(%q, %q)`, sel, pt.Href)))
		if err != nil {
			return false, err.Error() // the page is being replaced: read the new one
		}
		on = v
		return true, ""
	})
	if on != "" {
		p.t.Fatalf("pressing %s before boot: %s", sel, on)
	}
}

// boot lets the wasm through and waits until the app runs the page.
func (p *bb30Pre) boot() {
	p.t.Helper()
	p.wasm.waitHeld(p.t)
	if app := bb30Eval[string](p.t, p.ctx, `document.querySelector(".shell")?.dataset.app || "none"`); app != "server" {
		p.t.Fatalf("with app.wasm held the page is %q, want the server's", app)
	}
	p.wasm.release(p.t)
	bb30Booted(p.t, p.ctx)
}

// settle waits until the booted page has had its frames and an idle
// moment: the presses kept before boot have been answered.
func (p *bb30Pre) settle() {
	p.t.Helper()
	if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => requestIdleCallback(() => r(true), {timeout: 2000}))))`, chromedp.EvalAwaitPromise)); err != nil {
		p.t.Fatalf("waiting for an idle moment: %v", err)
	}
}

// waitQuestion waits until the question labelled q is open.
func (p *bb30Pre) waitQuestion(q string) {
	p.t.Helper()
	bb30Until(p.t, p.ctx, "the question “"+q+"” to open after boot", func() (bool, string) {
		s := bb30Seen(p.t, p.ctx)
		for _, o := range s.Open {
			if o == q {
				return true, ""
			}
		}
		return false, fmt.Sprintf("open: %q; opened so far: %q", s.Open, s.Opened)
	})
}

// nothingChanged checks no revoke nor rollback was asked of the service
// nor happened.
func (p *bb30Pre) nothingChanged() {
	p.t.Helper()
	if w := p.writes.all(); len(w) > 0 {
		p.t.Errorf("the page sent requests that change things, with no confirmation answered: %q", w)
	}
	after := bb30Snapshot(p.t, p.base, p.cookie, p.ext)
	if !reflect.DeepEqual(after, p.before) {
		if after.Current != p.before.Current || !reflect.DeepEqual(after.Bundles, p.before.Bundles) {
			p.t.Errorf("the bundles changed with no confirmation answered: current #%d → #%d, %d bundles → %d", p.before.Current, after.Current, len(p.before.Bundles), len(after.Bundles))
		}
		for id, st := range after.Testers {
			if p.before.Testers[id] != st {
				p.t.Errorf("tester %d went from %q to %q with no confirmation answered", id, p.before.Testers[id], st)
			}
		}
	}
}

// The rows the pre-boot tests press in: the demo's Tab Tamer has 120
// bundles (#120 current) and 61 testers, the newest first (60, 59, 58
// active).
const (
	bb30RevokeA   = `[data-tester="60"] button.revoke`
	bb30RevokeB   = `[data-tester="59"] button.revoke`
	bb30QRevokeA  = "Revoke vint.hopper.60@example.com?"
	bb30QRevokeB  = "Revoke evelyn.hopper.59@example.com?"
	bb30RollbackA = `[data-bundle="119"] button.rollback`
	bb30RollbackB = `[data-bundle="118"] button.rollback`
	bb30QRollA    = "Roll back to #119?"
	bb30QRollB    = "Roll back to #118?"
)

var bb30Moments = []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond}

// A press on a row's first button before boot is kept and answered once
// the app runs: its question opens, once, and nothing is revoked or
// rolled back.
func TestBlackBox30PrebootRowButton(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, path, sel, q string }{
		{"revoke", "/testers", bb30RevokeA, bb30QRevokeA},
		{"rollback", "", bb30RollbackA, bb30QRollA},
	} {
		for _, at := range bb30Moments {
			t.Run(fmt.Sprintf("%s/%dms", c.name, at.Milliseconds()), func(t *testing.T) {
				t.Parallel()
				p := bb30Preboot(t, c.path)
				p.clickAt(at, c.sel)
				p.boot()
				p.waitQuestion(c.q)
				p.settle()
				s := bb30Seen(t, p.ctx)
				if s.Max != 1 || !reflect.DeepEqual(s.Opened, []string{c.q}) || !reflect.DeepEqual(s.Open, []string{c.q}) {
					t.Errorf("one press before boot: want the question %q opened once and open, saw opened %q, open now %q, at most %d at once", c.q, s.Opened, s.Open, s.Max)
				}
				p.nothingChanged()
			})
		}
	}
}

// A double-click before boot, or a second click on a button that did not
// answer yet (400 ms later), is one press's worth, as on the booted app: one
// question, open, never opened twice nor closed again, and nothing revoked
// or rolled back.
func TestBlackBox30PrebootDoubleClick(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, path, sel, q string }{
		{"revoke", "/testers", bb30RevokeA, bb30QRevokeA},
		{"rollback", "", bb30RollbackA, bb30QRollA},
	} {
		for _, how := range []string{"double-click", "clicked-twice"} {
			t.Run(c.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				p := bb30Preboot(t, c.path)
				if how == "double-click" {
					p.doubleClick(c.sel)
				} else {
					p.clickAt(0, c.sel)
					p.clickAt(400*time.Millisecond, c.sel)
				}
				p.boot()
				p.waitQuestion(c.q)
				p.settle()
				s := bb30Seen(t, p.ctx)
				if s.Max != 1 || !reflect.DeepEqual(s.Opened, []string{c.q}) || !reflect.DeepEqual(s.Open, []string{c.q}) {
					t.Errorf("%s before boot: want the question %q opened once and open, saw opened %q, open now %q, at most %d at once", how, c.q, s.Opened, s.Open, s.Max)
				}
				p.nothingChanged()
			})
		}
	}
}

// A click on a link before boot navigates: by the server's page at once,
// or by the app once it runs.
func TestBlackBox30PrebootLink(t *testing.T) {
	t.Parallel()
	for _, at := range bb30Moments {
		t.Run(fmt.Sprintf("%dms", at.Milliseconds()), func(t *testing.T) {
			t.Parallel()
			p := bb30Preboot(t, "")
			p.clickAt(at, "#nav-testers")
			p.wasm.release(t)
			want := "/extensions/" + bb30ID(p.ext) + "/testers"
			bb30EvalUntil(t, p.ctx, "the Testers tab after a click on its link before boot", fmt.Sprintf(bb30TabShownJS, want, "nav-testers", `#testers [role="row"]`, `["#bundle-rows"]`))
			p.nothingChanged()
		})
	}
}

// A press on a button dragged off before release, or a right-click on it,
// is no click: after boot, that row's question never opens (a real click
// made after it, on another row, is answered, showing the kept presses
// were handled).
func TestBlackBox30PrebootNotAClick(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, path, off, offQ, then, thenQ string }{
		{"revoke", "/testers", bb30RevokeA, bb30QRevokeA, bb30RevokeB, bb30QRevokeB},
		{"rollback", "", bb30RollbackA, bb30QRollA, bb30RollbackB, bb30QRollB},
	} {
		for _, how := range []string{"dragged-off", "right-click"} {
			t.Run(c.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				p := bb30Preboot(t, c.path)
				if how == "dragged-off" {
					p.dragOff(c.off, "main h1")
				} else {
					p.rightClick(c.off)
				}
				p.clickAt(0, c.then)
				p.boot()
				p.waitQuestion(c.thenQ)
				p.settle()
				s := bb30Seen(t, p.ctx)
				if slices.Contains(s.Opened, c.offQ) {
					t.Errorf("a %s press on %s before boot opened its question %q after boot (opened: %q)", how, c.off, c.offQ, s.Opened)
				}
				if !reflect.DeepEqual(s.Open, []string{c.thenQ}) {
					t.Errorf("after the %s press and a click on %s: want only %q open, open: %q (opened %q)", how, c.then, c.thenQ, s.Open, s.Opened)
				}
				p.nothingChanged()
			})
		}
	}
}

// Two different buttons pressed before boot are each answered once the
// app runs, in order: each question opens once (the booted app keeps an
// open question open when another row's button is pressed, so both may
// stay open), the second press's question is open, and nothing is revoked
// or rolled back without being confirmed.
func TestBlackBox30PrebootTwoButtons(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, path, a, aQ, b, bQ string }{
		{"revoke", "/testers", bb30RevokeA, bb30QRevokeA, bb30RevokeB, bb30QRevokeB},
		{"rollback", "", bb30RollbackA, bb30QRollA, bb30RollbackB, bb30QRollB},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := bb30Preboot(t, c.path)
			p.clickAt(0, c.a)
			p.clickAt(0, c.b)
			p.boot()
			p.waitQuestion(c.bQ)
			p.settle()
			s := bb30Seen(t, p.ctx)
			t.Logf("after two presses before boot: opened %q, open now %q, at most %d at once", s.Opened, s.Open, s.Max)
			count := map[string]int{}
			for _, q := range s.Opened {
				count[q]++
			}
			if count[c.aQ] != 1 || count[c.bQ] != 1 || len(count) != 2 {
				t.Errorf("two presses before boot (%s, then %s): want each one's question opened once, saw opened %q", c.a, c.b, s.Opened)
			}
			if !slices.Contains(s.Open, c.bQ) {
				t.Errorf("two presses before boot: want the second's question %q open at the end, open: %q", c.bQ, s.Open)
			}
			p.nothingChanged()
		})
	}
}

// A press kept before boot is answered by its own row's question, and
// only answering it Yes does what the button says, to that row alone.
func TestBlackBox30PrebootThenConfirm(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, path, sel, q, yes string }{
		{"revoke", "/testers", bb30RevokeA, bb30QRevokeA, `[data-tester="60"] button.confirm-revoke`},
		{"rollback", "", bb30RollbackA, bb30QRollA, `[data-bundle="119"] button.confirm-rollback`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := bb30Preboot(t, c.path)
			p.clickAt(0, c.sel)
			p.boot()
			p.waitQuestion(c.q)
			p.settle()
			p.nothingChanged()
			bb30EvalUntil(t, p.ctx, "Yes to take a press", fmt.Sprintf(`((sel) => { const b = document.querySelector(sel); return {OK: !!b && b.getAttribute("aria-disabled") === "false", Desc: b ? "aria-disabled=" + b.getAttribute("aria-disabled") : "no " + sel}; })(%q)`, c.yes))
			bb30Click(t, p.ctx, c.yes)
			want := p.before
			if c.name == "revoke" {
				want.Testers = maps.Clone(p.before.Testers)
				want.Testers[60] = betaport.TesterRevoked
			} else {
				want.Current = p.before.Current + 1
				want.Bundles = append([]int64{p.before.Current + 1}, p.before.Bundles...)
			}
			var got bb30State
			bb30Until(t, p.ctx, "the confirmed "+c.name+" to be done, and nothing else", func() (bool, string) {
				got = bb30Snapshot(t, p.base, p.cookie, p.ext)
				return reflect.DeepEqual(got, want), fmt.Sprintf("current #%d, %d bundles, tester 60 %q", got.Current, len(got.Bundles), got.Testers[60])
			})
			if c.name == "rollback" {
				var b betaport.Bundle
				bootGetJSON(t, p.base, api.CurrentBundlePath(p.ext), p.cookie, &b)
				if b.RollbackOf != 119 {
					t.Errorf("the confirmed rollback made #%d a rollback of #%d, want of #119", b.Number, b.RollbackOf)
				}
			}
		})
	}
}
