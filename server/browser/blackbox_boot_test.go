package browser_test

// Black-box tests of how a page boots: the prerendered page is readable and
// usable before the wasm runs (here: never runs, it is blocked), the first
// client render is windowed, boot asks for nothing twice, and a repeat
// visit is cheap. Written from the issue, DESIGN.md, app/api and the test
// harness only, not from the implementation. Every click, key and scroll is
// a CDP input event; JavaScript only reads the page (and, in one place,
// flips an attribute back and forth to compare two computed styles).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/demo"
)

// ---------------------------------------------------------------- helpers

// The rows of a list: role=row inside the role=rowgroup of the table the
// page labels "Bundles" or "Testers" (the prerendered HTML's structure).
const (
	bootBundleRows = `[role="table"][aria-label="Bundles"] [role="rowgroup"] [role="row"]`
	bootTesterRows = `[role="table"][aria-label="Testers"] [role="rowgroup"] [role="row"]`
)

// bootJS quotes s for JavaScript.
func bootJS(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func bootEval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("reading the page (%.120s): %v", expr, err)
	}
	return v
}

func bootPoll(t *testing.T, ctx context.Context, d time.Duration, expr, msg string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(patient(d)), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("%s (waited %v for %s): %v", msg, patient(d), expr, err)
	}
}

// bootGetJSON reads an API answer with a session cookie.
func bootGetJSON(t *testing.T, baseURL, path string, c *http.Cookie, v any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, baseURL+path, nil)
	req.AddCookie(c)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// bootNoWasmTab opens a tab signed in as the demo admin (the cookie set
// directly, so the app never loads) in which the wasm cannot load: the
// Network domain blocks /web/app.wasm*, and the service worker is bypassed
// so no cached copy slips through.
func bootNoWasmTab(t *testing.T, m *cli.Main, d *demo.Result) (context.Context, *bootNet, *http.Cookie) {
	t.Helper()
	ctx := newTab(t)
	net := bootRecord(t, ctx)
	c := signInHTTP(t, m.URL(), d.Admins[0].Email, d.Admins[0].Password)
	if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: c.Name, Value: c.Value, URL: m.URL() + "/"}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.SetBypassServiceWorker, network.SetBypassServiceWorkerParams{Bypass: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.SetBlockedURLs, network.SetBlockedURLsParams{URLPatterns: []*network.BlockPattern{
		{URLPattern: "*://*:*/web/app.wasm*", Block: true},
		{URLPattern: "*://*:*/*.wasm*", Block: true},
	}}); err != nil {
		t.Fatal(err)
	}
	return ctx, net, c
}

// bootOpenNoWasm navigates to url in a tab without the wasm and checks the
// page really did not boot (so what the test sees is the prerendered page).
func bootOpenNoWasm(t *testing.T, ctx context.Context, net *bootNet, url string) {
	t.Helper()
	mark := net.mark()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("opening %s: %v", url, err)
	}
	bootCheckNotBooted(t, ctx, net, mark)
}

func bootCheckNotBooted(t *testing.T, ctx context.Context, net *bootNet, mark int) {
	t.Helper()
	if bootEval[bool](t, ctx, `!!document.querySelector('.shell[data-app="client"]')`) {
		t.Fatalf("the app booted although its wasm was blocked: this test would not see the prerendered page")
	}
	for _, r := range net.since(mark) {
		if strings.Contains(r.URL, ".wasm") && r.Done && !r.Failed {
			t.Fatalf("the wasm loaded (%s) although it was blocked", r.URL)
		}
	}
}

// bootLoaderGaveUp waits until the app's loader has given up on the
// blocked wasm, as a person sees it: its note in the corner is shown (it
// appears only once loading takes a while), its icon has stopped spinning
// and its label says what went wrong instead of the loading progress.
func bootLoaderGaveUp(t *testing.T, ctx context.Context) {
	t.Helper()
	bootPoll(t, ctx, 10*time.Second, `(() => {
	  const note = document.getElementById('app-wasm-loader'), icon = document.getElementById('app-wasm-loader-icon'), label = document.getElementById('app-wasm-loader-label');
	  if (!note || !icon || !label) return false;
	  const said = label.textContent.trim();
	  return getComputedStyle(note).opacity === '1' && !icon.classList.contains('goapp-spin') && said !== '' && !/loading/i.test(said);
	})()`, "the app's loader never said it gave up on the blocked wasm")
}

// bootReq is one request a tab made.
type bootReq struct {
	ID       network.RequestID
	URL      string
	Method   string
	Type     network.ResourceType
	Done     bool
	Failed   bool
	Blocked  string
	Bytes    float64 // encodedDataLength at loadingFinished
	FromSW   bool
	SWSource string
	Status   int64
}

func (r *bootReq) String() string {
	var via string
	if r.FromSW {
		via = " (service worker " + r.SWSource + ")"
	}
	return fmt.Sprintf("%s %s [%s] %d, %.0f B%s", r.Method, r.URL, r.Type, r.Status, r.Bytes, via)
}

// bootNet records every request of a tab (Network domain).
type bootNet struct {
	mu   sync.Mutex
	all  []*bootReq
	byID map[network.RequestID]*bootReq
	last time.Time // last event
}

func bootRecord(t *testing.T, ctx context.Context) *bootNet {
	t.Helper()
	n := &bootNet{byID: map[network.RequestID]*bootReq{}, last: time.Now()}
	if err := chromedp.Listen(ctx, func(ev any) {
		n.mu.Lock()
		defer n.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			r := &bootReq{ID: e.RequestID, URL: e.Request.URL, Method: e.Request.Method, Type: e.Type}
			if old := n.byID[e.RequestID]; old != nil && e.RedirectResponse != nil {
				old.Done, old.Status = true, e.RedirectResponse.Status
			}
			n.byID[e.RequestID] = r
			n.all = append(n.all, r)
		case *network.EventResponseReceived:
			if r := n.byID[e.RequestID]; r != nil && e.Response != nil {
				r.FromSW, r.SWSource, r.Status = e.Response.FromServiceWorker, string(e.Response.ServiceWorkerResponseSource), e.Response.Status
				if r.Type == "" {
					r.Type = e.Type
				}
			}
		case *network.EventLoadingFinished:
			if r := n.byID[e.RequestID]; r != nil {
				r.Done, r.Bytes = true, e.EncodedDataLength
			}
		case *network.EventLoadingFailed:
			if r := n.byID[e.RequestID]; r != nil {
				r.Done, r.Failed, r.Blocked = true, true, string(e.BlockedReason)
			}
		default:
			return
		}
		n.last = time.Now()
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	return n
}

// mark returns a position in the record; since(mark) lists what came after.
func (n *bootNet) mark() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.all)
}

func (n *bootNet) since(mark int) []*bootReq {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]*bootReq, 0, len(n.all)-mark)
	for _, r := range n.all[mark:] {
		c := *r
		out = append(out, &c)
	}
	return out
}

// streaming says whether a request is the live event stream, which stays
// open by design.
func streaming(r *bootReq) bool {
	return r.Type == network.ResourceTypeEventSource || strings.HasSuffix(bootPath(r.URL), "/events")
}

// waitIdle waits until the app has booted and no request (other than the
// event stream) has been in flight or started for quiet.
func (n *bootNet) waitIdle(t *testing.T, ctx context.Context, quiet, limit time.Duration) {
	t.Helper()
	bootPoll(t, ctx, limit, `!!document.querySelector('.shell[data-app="client"]')`, "the app did not boot")
	n.waitQuiet(t, quiet, limit)
}

// waitQuiet waits until no request (other than the event stream) has been
// in flight or started for quiet, booted or not.
func (n *bootNet) waitQuiet(t *testing.T, quiet, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		n.mu.Lock()
		var busy []*bootReq
		for _, r := range n.byID {
			if !r.Done && !streaming(r) {
				c := *r
				busy = append(busy, &c)
			}
		}
		calm := time.Since(n.last)
		n.mu.Unlock()
		if len(busy) == 0 && calm >= quiet {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page never went idle: %d requests in flight after %v:%s", len(busy), limit, bootList(busy))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func bootPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Path
}

func bootPathQuery(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.RawQuery == "" {
		return u.Path
	}
	return u.Path + "?" + u.RawQuery
}

func bootList(rs []*bootReq) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString("\n\t" + r.String())
	}
	return b.String()
}

// bootViewport is the layout viewport.
func bootViewport(t *testing.T, ctx context.Context) (w, h float64) {
	t.Helper()
	v := bootEval[[]float64](t, ctx, `[innerWidth, innerHeight]`)
	return v[0], v[1]
}

// bootWheelTo scrolls with the mouse wheel (CDP input events) until the
// element el (a JavaScript expression) is wholly inside the viewport, or
// fails.
func bootWheelTo(t *testing.T, ctx context.Context, el string) {
	t.Helper()
	w, h := bootViewport(t, ctx)
	for range 60 {
		r := bootEval[[]float64](t, ctx, fmt.Sprintf(`(() => { const b = (%s).getBoundingClientRect(); return [b.top, b.bottom]; })()`, el))
		if r[0] >= 0 && r[1] <= h {
			return
		}
		dy := r[0] - h/3
		dy = max(-300, min(300, dy))
		// wheel sends deltaX too: CDP refuses a wheel event without it, and
		// chromedp's params leave a zero delta out.
		if err := wheel(ctx, w/2, h/2, dy); err != nil {
			t.Fatal(err)
		}
		bootFrames(t, ctx)
	}
	t.Fatalf("the mouse wheel did not bring %s into the viewport", el)
}

func bootFrames(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
		`new Promise(r => { requestAnimationFrame(() => requestAnimationFrame(() => r(true))); setTimeout(() => r(true), 150); })`,
		chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
}

// bootSight is what a person sees of one element.
type bootSight struct {
	Top, Bottom, Left, Right float64
	Width, Height            float64
	VW, VH                   float64
	Topmost                  bool    // elementFromPoint at its centre is it or inside it
	At                       string  // what is at its centre
	Visible                  bool    // checkVisibility with opacity and visibility
	Opacity                  float64 // product of its and its ancestors' opacity
	Text                     string
}

const bootSightJS = `((el) => {
  const d = (e) => e ? e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\s+/).join('.') : '') : 'nothing';
  const r = el.getBoundingClientRect();
  const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  let op = 1;
  for (let p = el; p && p.nodeType === 1; p = p.parentElement) op *= parseFloat(getComputedStyle(p).opacity);
  return {Top: r.top, Bottom: r.bottom, Left: r.left, Right: r.right, Width: r.width, Height: r.height,
    VW: innerWidth, VH: innerHeight, Topmost: !!at && (at === el || el.contains(at)), At: d(at),
    Visible: el.checkVisibility({opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true}),
    Opacity: op, Text: (el.innerText || el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 80)};
})(%s)`

func bootLook(t *testing.T, ctx context.Context, el string) bootSight {
	t.Helper()
	return bootEval[bootSight](t, ctx, fmt.Sprintf(bootSightJS, el))
}

// problems says why a person could not see and read s: outside the
// viewport, under something else, transparent or invisible, empty.
func (s bootSight) problems() []string {
	var p []string
	if s.Width <= 0 || s.Height <= 0 {
		p = append(p, fmt.Sprintf("it has no size (%.0f×%.0f)", s.Width, s.Height))
	}
	if s.Bottom <= 0 || s.Top >= s.VH || s.Right <= 0 || s.Left >= s.VW {
		p = append(p, fmt.Sprintf("it is outside the viewport (top %.0f, bottom %.0f, viewport %.0f×%.0f)", s.Top, s.Bottom, s.VW, s.VH))
	}
	if !s.Topmost {
		p = append(p, "something else is on top of it: "+s.At)
	}
	if !s.Visible {
		p = append(p, "it is not visible (checkVisibility: hidden, visibility or opacity 0)")
	}
	if s.Opacity < 0.5 {
		p = append(p, fmt.Sprintf("it is faded to opacity %.2f", s.Opacity))
	}
	if s.Text == "" {
		p = append(p, "it shows no text")
	}
	return p
}

// bootClick clicks the centre of el (a JavaScript expression) with the
// mouse, after scrolling it into view with the wheel; it fails when
// something else would take the click.
func bootClick(t *testing.T, ctx context.Context, el, what string) {
	t.Helper()
	bootWheelTo(t, ctx, el)
	s := bootLook(t, ctx, el)
	if !s.Topmost {
		t.Fatalf("%s cannot be clicked: %s is on top of it", what, s.At)
	}
	x, y := (s.Left+s.Right)/2, (s.Top+s.Bottom)/2
	if err := chromedp.Do(ctx,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y),
		chromedp.MouseClickXY(x, y),
	); err != nil {
		t.Fatalf("clicking %s: %v", what, err)
	}
}

func bootQ(sel string, i int) string {
	return fmt.Sprintf(`document.querySelectorAll(%s)[%d]`, bootJS(sel), i)
}

// ---------------------------------------------------------------- 1. readable before boot

// TestBlackBoxBootRowsShowWithoutWasm: with the wasm blocked, the bundles
// and testers lists show their first rows to a person as soon as the page
// has loaded, and still do once the app's loader has given up: in the
// viewport (after an ordinary wheel scroll if the page puts them lower), on
// top of everything at their centre, not transparent or hidden.
func TestBlackBoxBootRowsShowWithoutWasm(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	for _, c := range []struct{ name, path, rows string }{
		{"bundles", fmt.Sprintf("/extensions/%d", ext.ID), bootBundleRows},
		{"testers", fmt.Sprintf("/extensions/%d/testers", ext.ID), bootTesterRows},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, net, _ := bootNoWasmTab(t, m, d)
			bootOpenNoWasm(t, ctx, net, m.URL()+c.path)
			n := bootEval[int](t, ctx, fmt.Sprintf(`document.querySelectorAll(%s).length`, bootJS(c.rows)))
			if n == 0 {
				t.Fatalf("the prerendered page has no rows (%s)", c.rows)
			}
			check := func(when string) {
				t.Helper()
				first := bootQ(c.rows, 0)
				if s := bootLook(t, ctx, first); s.Top >= s.VH {
					bootWheelTo(t, ctx, first) // a person scrolls down to the list
				}
				for i := range min(3, n) {
					el := bootQ(c.rows, i)
					s := bootLook(t, ctx, el)
					if s.Bottom > s.VH { // the next rows may be below the fold
						continue
					}
					if p := s.problems(); len(p) > 0 {
						t.Errorf("%s: row %d (%q) cannot be read: %s", when, i+1, s.Text, strings.Join(p, "; "))
					}
				}
			}
			check("as soon as the page loaded")
			// The app's loader tries, fails (the wasm is blocked) and says so.
			bootLoaderGaveUp(t, ctx)
			bootCheckNotBooted(t, ctx, net, 0)
			check("after the loader gave up")
		})
	}
}

// TestBlackBoxBootLinksWorkWithoutWasm: before the app boots (here: never),
// a real click on a link to another page opens that page.
func TestBlackBoxBootLinksWorkWithoutWasm(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	ctx, net, _ := bootNoWasmTab(t, m, d)
	bundles := fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID)
	testers := bundles + "/testers"
	bootOpenNoWasm(t, ctx, net, bundles)
	bootLoaderGaveUp(t, ctx)

	// The extension's Testers link (the first visible link to the page).
	link := func(href string) string {
		return fmt.Sprintf(`[...document.querySelectorAll('a[href]')].find(a => a.getAttribute('href') === %s && a.checkVisibility())`, bootJS(href))
	}
	if !bootEval[bool](t, ctx, "!!"+link(fmt.Sprintf("/extensions/%d/testers", ext.ID))) {
		t.Fatalf("the bundles page has no visible link to the testers page")
	}
	bootClick(t, ctx, link(fmt.Sprintf("/extensions/%d/testers", ext.ID)), "the Testers link")
	waitLocation(t, ctx, testers)
	bootPoll(t, ctx, 10*time.Second, fmt.Sprintf(`document.readyState === 'complete' && document.querySelectorAll(%s).length > 0`, bootJS(bootTesterRows)),
		"the testers page did not show its rows after the click")
	bootCheckNotBooted(t, ctx, net, 0)

	// And back to the bundles by the link on that page, once its loader
	// has given up too.
	bootLoaderGaveUp(t, ctx)
	bootClick(t, ctx, link(fmt.Sprintf("/extensions/%d", ext.ID)), "the Bundles link")
	waitLocation(t, ctx, bundles)
	bootPoll(t, ctx, 10*time.Second, fmt.Sprintf(`document.readyState === 'complete' && document.querySelectorAll(%s).length > 0`, bootJS(bootBundleRows)),
		"the bundles page did not show its rows after the click")

	// The brand link goes home.
	bootLoaderGaveUp(t, ctx)
	bootClick(t, ctx, link("/"), "the home link")
	waitLocation(t, ctx, m.URL()+"/")
}

// bootControl is a control a person can press, as the page shows it.
type bootControl struct {
	Index    int    // in document.querySelectorAll(bootControlSel)
	Key      string // what kind of control: the same in every row
	Label    string
	Inactive bool // disabled or aria-disabled="true" (itself or an ancestor)
	Styled   bool // looks different from the same control active
	InForm   bool
	Required int // required fields of its form
	Email    bool
}

const bootControlSel = `button, [role="button"], input[type="submit"], input[type="button"], input[type="image"], input[type="reset"]`

// bootControlsJS lists the visible controls. To tell whether an inactive
// control looks inactive, it compares its computed style with the style it
// gets when its disabled / aria-disabled state is removed, then puts the
// state back (synchronously: nothing renders in between, and no app runs).
const bootControlsJS = `(() => {
  const props = ['opacity', 'color', 'background-color', 'cursor', 'filter', 'border-top-color', 'text-decoration-line', 'box-shadow'];
  const snap = (el) => { const cs = getComputedStyle(el); return props.map(p => cs.getPropertyValue(p)).join('|'); };
  const out = [];
  document.querySelectorAll(%s).forEach((el, i) => {
    if (!el.checkVisibility({opacityProperty: true, visibilityProperty: true})) return;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return;
    if (el.closest('#app-wasm-loader')) return;
    const label = (el.getAttribute('aria-label') || el.innerText || el.value || '').trim().replace(/\s+/g, ' ');
    const key = [el.tagName, el.getAttribute('role') || '', el.getAttribute('type') || '', (el.className || '').toString(),
      label.replace(/\S+@\S+/g, '@').replace(/[0-9]+/g, '#')].join('|');
    const ariaOff = el.closest('[aria-disabled="true"]') !== null;
    const inactive = el.disabled === true || ariaOff || el.closest('[inert]') !== null;
    let styled = false;
    if (inactive) {
      const before = snap(el);
      const hadDisabled = el.hasAttribute('disabled'), aria = el.getAttribute('aria-disabled');
      el.removeAttribute('disabled');
      if (aria !== null) el.setAttribute('aria-disabled', 'false');
      const after = snap(el);
      if (hadDisabled) el.setAttribute('disabled', '');
      if (aria !== null) el.setAttribute('aria-disabled', aria);
      styled = before !== after;
      if (!hadDisabled && aria === null) styled = true; // disabled by an ancestor: not measured
    }
    const form = el.form || el.closest('form');
    out.push({Index: i, Key: key, Label: label.slice(0, 60), Inactive: inactive, Styled: styled, InForm: !!form,
      Required: form ? form.querySelectorAll('[required]').length : 0,
      Email: form ? !!form.querySelector('input[type="email"]') : false});
  });
  return out;
})()`

// TestBlackBoxBootNoDeadControlsWithoutWasm: before the app boots (here:
// never), every control a person can press either looks inactive (disabled
// or aria-disabled, styled so) or does something when pressed for real: it
// navigates, submits (an invite form invites), opens a file picker, or
// changes the page. A button that looks ready and does nothing fails.
func TestBlackBoxBootNoDeadControlsWithoutWasm(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	for _, c := range []struct{ name, path string }{
		{"bundles", fmt.Sprintf("/extensions/%d", ext.ID)},
		{"testers", fmt.Sprintf("/extensions/%d/testers", ext.ID)},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, net, cookie := bootNoWasmTab(t, m, d)
			if _, err := chromedp.Call(ctx, page.SetInterceptFileChooserDialog, page.SetInterceptFileChooserDialogParams{Enabled: true}); err != nil {
				t.Fatal(err)
			}
			var chooserMu sync.Mutex
			choosers := 0
			if err := chromedp.Listen(ctx, func(ev any) {
				if _, ok := ev.(*page.EventFileChooserOpened); ok {
					chooserMu.Lock()
					choosers++
					chooserMu.Unlock()
				}
			}); err != nil {
				t.Fatal(err)
			}
			open := func() {
				t.Helper()
				bootOpenNoWasm(t, ctx, net, m.URL()+c.path)
				bootLoaderGaveUp(t, ctx)
			}
			open()
			controls := bootEval[[]bootControl](t, ctx, fmt.Sprintf(bootControlsJS, bootJS(bootControlSel)))
			if len(controls) == 0 {
				t.Fatalf("no visible control on the page: nothing to check")
			}
			for _, ctl := range controls {
				t.Logf("control %q: inactive %v, styled as inactive %v", ctl.Label, ctl.Inactive, ctl.Styled)
			}
			seen := map[string]bool{}
			fresh := true
			for _, ctl := range controls {
				if seen[ctl.Key] {
					continue // one per kind: the Revoke of one row speaks for all rows
				}
				seen[ctl.Key] = true
				if ctl.Inactive {
					if !ctl.Styled {
						t.Errorf("%q is inactive before boot but looks exactly like an active control (no style for disabled / aria-disabled)", ctl.Label)
					}
					continue
				}
				if !fresh {
					open()
				}
				fresh = false
				el := bootQ(bootControlSel, ctl.Index)
				email := ""
				if ctl.InForm && ctl.Required > 0 {
					// Fill the form's required fields as a person would.
					for i := range ctl.Required {
						field := fmt.Sprintf(`(%s.form || %s.closest('form')).querySelectorAll('[required]')[%d]`, el, el, i)
						typ := bootEval[string](t, ctx, field+`.type`)
						val := "Boot Person"
						if typ == "email" {
							email = fmt.Sprintf("boot-%d@example.com", time.Now().UnixNano())
							val = email
						}
						bootClick(t, ctx, field, "a required field")
						if err := chromedp.Do(ctx, chromedp.KeyEvent(val)); err != nil {
							t.Fatal(err)
						}
					}
				}
				// Watch the page for anything a press could do.
				bootEval[bool](t, ctx, `(() => { window.__bootPress = {mut: 0};
				  new MutationObserver((ms) => { for (const m of ms) if (!(m.target.closest && m.target.closest('#app-wasm-loader'))) window.__bootPress.mut++; })
				    .observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true}); return true; })()`)
				mark := net.mark()
				chooserMu.Lock()
				before := choosers
				chooserMu.Unlock()
				loc := bootEval[string](t, ctx, `location.href`)
				bootClick(t, ctx, el, fmt.Sprintf("%q", ctl.Label))
				// What the press has done so far, read from the page, the
				// tab's requests and its file pickers.
				effects := func() []string {
					var did []string
					state, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`[location.href, window.__bootPress ? window.__bootPress.mut : -1]`))
					if err != nil {
						did = append(did, "the page went away")
					} else {
						if state[0] != loc {
							did = append(did, fmt.Sprintf("navigated to %v", state[0]))
						}
						if n, _ := state[1].(float64); n < 0 {
							did = append(did, "a new page loaded")
						} else if n > 0 {
							did = append(did, fmt.Sprintf("the page changed (%v mutations)", n))
						}
					}
					for _, r := range net.since(mark) {
						if !strings.Contains(r.URL, "/web/icon") && !strings.Contains(r.URL, "favicon") {
							did = append(did, "asked the server: "+r.Method+" "+bootPathQuery(r.URL))
						}
					}
					chooserMu.Lock()
					if choosers > before {
						did = append(did, "opened a file picker")
					}
					chooserMu.Unlock()
					return did
				}
				// Read until the press has done something, or for as long
				// as a person would wait; once it has, until what it started
				// is over (its requests answered, a page it opened loaded).
				did := effects()
				for deadline := time.Now().Add(patient(1500 * time.Millisecond)); len(did) == 0 && time.Now().Before(deadline); did = effects() {
					time.Sleep(50 * time.Millisecond)
				}
				if len(did) > 0 {
					net.waitQuiet(t, 300*time.Millisecond, patient(10*time.Second))
					did = effects()
				}
				if len(did) == 0 {
					t.Errorf("pressing %q before the app booted did nothing, and it does not look inactive (no disabled / aria-disabled)", ctl.Label)
					continue
				}
				t.Logf("pressing %q before boot: %s", ctl.Label, strings.Join(did, "; "))
				if ctl.Email && email != "" {
					var got api.Page[betaport.Tester]
					bootGetJSON(t, m.URL(), fmt.Sprintf("%s?q=%s&limit=5", api.TestersPath(ext.ID), url.QueryEscape(email)), cookie, &got)
					if !slices.ContainsFunc(got.Data, func(x betaport.Tester) bool { return x.Email == email }) {
						t.Errorf("pressing %q before boot (%s) invited nobody: %s is not a tester", ctl.Label, strings.Join(did, "; "), email)
					}
				}
			}
		})
	}
}

// ---------------------------------------------------------------- 2. the first client render is windowed

// bootRowsJS runs before any script of the page: it notes the prerendered
// rows (when parsing ends, before the deferred scripts run), then, from the
// moment the app renders (a row the server did not send appears, or the
// shell says data-app="client"), the largest number of rows the list held.
const bootRowsJS = `(() => {
  const SEL = %s;
  const st = window.__bootRows = {pre: 0, started: false, max: 0, samples: 0};
  const pre = new WeakSet();
  const count = () => {
    const rows = document.querySelectorAll(SEL);
    if (!st.started) {
      let fresh = 0;
      rows.forEach(r => { if (!pre.has(r)) fresh++; });
      const shell = document.querySelector('.shell');
      if (fresh === 0 && !(shell && shell.dataset.app === 'client')) return;
      st.started = true;
    }
    st.samples++;
    if (rows.length > st.max) st.max = rows.length;
  };
  document.addEventListener('readystatechange', () => {
    if (document.readyState !== 'interactive') return;
    const rows = document.querySelectorAll(SEL);
    rows.forEach(r => pre.add(r));
    st.pre = rows.length;
    new MutationObserver(count).observe(document.documentElement, {childList: true, subtree: true, attributes: true, attributeFilter: ['data-app']});
  });
})()`

// TestBlackBoxBootFirstRenderIsWindowed: with 1,000 testers the server
// prerenders a page of rows; the app's first render after boot already
// holds only a window of them, never all the prerendered rows at once.
func TestBlackBoxBootFirstRenderIsWindowed(t *testing.T) {
	t.Parallel()
	m, d, ext := startWithTesters(t, 1000)
	ctx := adminTab(t, m, d)
	net := bootRecord(t, ctx)
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: fmt.Sprintf(bootRowsJS, bootJS(bootTesterRows))}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/extensions/%d/testers", m.URL(), ext.ID))); err != nil {
		t.Fatal(err)
	}
	net.waitIdle(t, ctx, 1500*time.Millisecond, time.Minute)
	type rowsState struct {
		Pre     int  `json:"pre"`
		Started bool `json:"started"`
		Max     int  `json:"max"`
		Samples int  `json:"samples"`
	}
	st := bootEval[rowsState](t, ctx, `window.__bootRows`)
	final := bootEval[int](t, ctx, fmt.Sprintf(`document.querySelectorAll(%s).length`, bootJS(bootTesterRows)))
	t.Logf("prerendered rows %d, largest client render %d, rows once idle %d (%d samples)", st.Pre, st.Max, final, st.Samples)
	if st.Pre == 0 {
		t.Fatalf("the server prerendered no tester rows")
	}
	if !st.Started {
		t.Fatalf("never saw the app render the list")
	}
	if final == 0 {
		t.Fatalf("the list shows no rows once idle")
	}
	if final >= st.Pre {
		t.Logf("the list holds %d rows once idle, no fewer than the %d prerendered: it does not window at this size", final, st.Pre)
		return
	}
	if st.Max >= st.Pre {
		t.Errorf("the first client render held %d rows (all %d prerendered) before windowing down to %d: the first render is not windowed", st.Max, st.Pre, final)
	} else if st.Max > 2*final+10 {
		t.Errorf("the client held up to %d rows before settling at a window of %d", st.Max, final)
	}
}

// ---------------------------------------------------------------- 3. no request twice

// bootCheckRequests checks one page load's (or one navigation's) requests:
// /api/session at most once (none once the app knows it), the extension
// record not at all when the page was prerendered with it, and no API URL
// twice.
func bootCheckRequests(t *testing.T, when string, reqs []*bootReq, sessionMax int, extPath string, extMax int) {
	t.Helper()
	counts := map[string]int{}
	var session, extension, apiReqs []*bootReq
	if len(reqs) == 0 {
		t.Fatalf("%s: no request recorded: the test cannot see the page's requests", when)
	}
	for _, r := range reqs {
		if strings.HasPrefix(bootPath(r.URL), "/api/") {
			apiReqs = append(apiReqs, r)
		}
		p := bootPath(r.URL)
		if !strings.HasPrefix(p, "/api/") || r.Method != http.MethodGet || streaming(r) {
			continue
		}
		counts[bootPathQuery(r.URL)]++
		if p == api.PathSession {
			session = append(session, r)
		}
		if p == extPath {
			extension = append(extension, r)
		}
	}
	t.Logf("%s: %d requests, of the API:%s", when, len(reqs), bootList(apiReqs))
	if len(session) > sessionMax {
		t.Errorf("%s: GET %s %d times, want at most %d (the page embeds who is signed in):%s", when, api.PathSession, len(session), sessionMax, bootList(session))
	} else if len(session) > 0 {
		t.Logf("%s: GET %s once (the page embeds it: ideally never)", when, api.PathSession)
	}
	if extPath != "" && len(extension) > extMax {
		why := "(the app has it already)"
		if extMax == 0 {
			why = "(the page was prerendered with it)"
		}
		t.Errorf("%s: GET %s %d times, want at most %d %s", when, extPath, len(extension), extMax, why)
	}
	var twice []string
	for u, n := range counts {
		if n > 1 {
			twice = append(twice, fmt.Sprintf("%s ×%d", u, n))
		}
	}
	sort.Strings(twice)
	if len(twice) > 0 {
		t.Errorf("%s: requested more than once: %s\nall requests:%s", when, strings.Join(twice, ", "), bootList(reqs))
	}
}

// bootPrerenderedExtension says whether the page as the server sent it
// carried the extension (its name in the HTML, or embedded data keyed by
// its API path), read before any script ran.
const bootPrerenderJS = `(() => {
  window.__bootPrerender = {html: '', keys: []};
  document.addEventListener('readystatechange', () => {
    if (document.readyState !== 'interactive') return;
    window.__bootPrerender.html = document.documentElement.outerHTML;
    window.__bootPrerender.keys = [...document.querySelectorAll('[data-prerender-key]')].map(e => e.getAttribute('data-prerender-key'));
  });
})()`

func bootWasPrerenderedWith(t *testing.T, ctx context.Context, name, path string) bool {
	t.Helper()
	v := bootEval[[]any](t, ctx, fmt.Sprintf(`[window.__bootPrerender.html.includes('>' + %s + '<'), window.__bootPrerender.keys.includes(%s)]`, bootJS(name), bootJS(path)))
	a, _ := v[0].(bool)
	b, _ := v[1].(bool)
	return a || b
}

// TestBlackBoxBootNoRequestTwice: from navigation until the app has booted
// and is idle, a page load asks for the session at most once, never for the
// extension it was prerendered with, and for no list page twice.
func TestBlackBoxBootNoRequestTwice(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	admin := func(t *testing.T) context.Context { return adminTab(t, m, d) }
	nobody := func(t *testing.T) context.Context { return newTab(t) }
	tester := func(t *testing.T) context.Context {
		ctx := newTab(t)
		openApp(t, ctx, m.URL()+d.TesterLink)
		return ctx
	}
	for _, c := range []struct {
		name, path string
		who        func(*testing.T) context.Context
	}{
		{"bundles", fmt.Sprintf("/extensions/%d", ext.ID), admin},
		{"testers", fmt.Sprintf("/extensions/%d/testers", ext.ID), admin},
		{"testers filtered", fmt.Sprintf("/extensions/%d/testers?q=ada&status=active", ext.ID), admin},
		{"settings", fmt.Sprintf("/extensions/%d/settings", ext.ID), admin},
		{"adoption", fmt.Sprintf("/extensions/%d/adoption", ext.ID), admin},
		{"page by page", fmt.Sprintf("/extensions/%d/pages", ext.ID), admin},
		{"extensions", "/", admin},
		{"sign-in page, signed out", "/login", nobody},
		{"builds, as a tester", "/builds", tester},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := c.who(t)
			net := bootRecord(t, ctx)
			if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: bootPrerenderJS}); err != nil {
				t.Fatal(err)
			}
			mark := net.mark()
			if err := chromedp.Do(ctx, chromedp.Navigate(m.URL()+c.path)); err != nil {
				t.Fatal(err)
			}
			net.waitIdle(t, ctx, 2*time.Second, time.Minute)
			reqs := net.since(mark)
			extPath := api.ExtensionPath(ext.ID)
			extMax := 1
			if bootWasPrerenderedWith(t, ctx, ext.Name, extPath) {
				extMax = 0
			}
			bootCheckRequests(t, "loading "+c.path, reqs, 1, extPath, extMax)
		})
	}
}

// TestBlackBoxBootNoRequestTwiceBackForward: moving between the bundles and
// the testers page by a link, Back and Forward asks for nothing twice in
// any step, and never again for the session.
func TestBlackBoxBootNoRequestTwiceBackForward(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	bundles := fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID)
	testers := bundles + "/testers"
	extPath := api.ExtensionPath(ext.ID)
	ctx := adminTab(t, m, d)
	net := bootRecord(t, ctx)
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: bootPrerenderJS}); err != nil {
		t.Fatal(err)
	}
	start := net.mark()
	if err := chromedp.Do(ctx, chromedp.Navigate(bundles)); err != nil {
		t.Fatal(err)
	}
	net.waitIdle(t, ctx, 2*time.Second, time.Minute)
	extMax := 1
	if bootWasPrerenderedWith(t, ctx, ext.Name, extPath) {
		extMax = 0
	}
	bootCheckRequests(t, "loading the bundles page", net.since(start), 1, extPath, extMax)

	step := func(name, want, rows string, act func()) {
		t.Helper()
		mark := net.mark()
		act()
		waitLocation(t, ctx, want)
		bootPoll(t, ctx, 15*time.Second, fmt.Sprintf(`document.querySelectorAll(%s).length > 0`, bootJS(rows)), name+": the list shows no rows")
		net.waitIdle(t, ctx, 2*time.Second, time.Minute)
		bootCheckRequests(t, name, net.since(mark), 0, extPath, 1)
	}
	step("the Testers link", testers, bootTesterRows, func() {
		bootClick(t, ctx, fmt.Sprintf(`[...document.querySelectorAll('a[href]')].find(a => a.getAttribute('href') === %s && a.checkVisibility())`,
			bootJS(fmt.Sprintf("/extensions/%d/testers", ext.ID))), "the Testers link")
	})
	step("Back", bundles, bootBundleRows, func() {
		if err := chromedp.Do(ctx, chromedp.NavigateBack()); err != nil {
			t.Fatal(err)
		}
	})
	step("Forward", testers, bootTesterRows, func() {
		if err := chromedp.Do(ctx, chromedp.NavigateForward()); err != nil {
			t.Fatal(err)
		}
	})
	step("Back again", bundles, bootBundleRows, func() {
		if err := chromedp.Do(ctx, chromedp.NavigateBack()); err != nil {
			t.Fatal(err)
		}
	})
	all := net.since(start)
	var session int
	for _, r := range all {
		if bootPath(r.URL) == api.PathSession && r.Method == http.MethodGet {
			session++
		}
	}
	if session > 1 {
		t.Errorf("GET %s %d times over one load and three moves", api.PathSession, session)
	}
}

// ---------------------------------------------------------------- 4. a repeat visit is cheap

// TestBlackBoxBootRepeatVisitIsCheap: the second visit to a page moves at
// most 5 KB over the wire (the sum of encodedDataLength at
// loadingFinished), the wasm coming from the service worker's cache.
func TestBlackBoxBootRepeatVisitIsCheap(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	for _, c := range []struct{ name, path string }{
		{"bundles", fmt.Sprintf("/extensions/%d", ext.ID)},
		{"testers", fmt.Sprintf("/extensions/%d/testers", ext.ID)},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := adminTab(t, m, d)
			net := bootRecord(t, ctx)
			if err := chromedp.Do(ctx, chromedp.Navigate(m.URL()+c.path)); err != nil {
				t.Fatal(err)
			}
			net.waitIdle(t, ctx, 1500*time.Millisecond, time.Minute)
			bootPoll(t, ctx, 30*time.Second, `navigator.serviceWorker && navigator.serviceWorker.controller !== null`,
				"no service worker controls the page after the first visit")
			// Let the worker finish whatever it does after install: it is
			// activated only once its install (filling its cache) is over.
			bootEval[bool](t, ctx, `navigator.serviceWorker.ready.then(() => true)`)
			bootPoll(t, ctx, 30*time.Second, bootWorkerActivated, "the service worker that controls the page never became activated")

			mark := net.mark()
			if err := chromedp.Do(ctx, chromedp.Navigate(m.URL()+c.path)); err != nil {
				t.Fatal(err)
			}
			net.waitIdle(t, ctx, 1500*time.Millisecond, time.Minute)
			reqs := net.since(mark)
			var total float64
			var wasm []*bootReq
			for _, r := range reqs {
				total += r.Bytes
				if strings.Contains(bootPath(r.URL), ".wasm") {
					wasm = append(wasm, r)
				}
			}
			t.Logf("second visit: %.0f bytes on the wire in %d requests:%s", total, len(reqs), bootList(reqs))
			if total > 5*1024 {
				t.Errorf("the second visit moved %.0f bytes over the wire, want at most 5120:%s", total, bootList(reqs))
			}
			if len(wasm) == 0 {
				t.Errorf("the second visit did not load the wasm at all (did the app boot from something else?)")
			}
			for _, r := range wasm {
				if !r.FromSW {
					t.Errorf("the wasm did not come from the service worker on the second visit: %s", r)
				} else if r.SWSource != "" && r.SWSource != string(network.ServiceWorkerResponseSourceCacheStorage) {
					t.Errorf("the service worker answered the wasm from %s, not its cache: %s", r.SWSource, r)
				}
			}
		})
	}
}

// bootWorkerActivated says that the service worker controlling the page is
// activated: its install, which fills its cache, is over.
const bootWorkerActivated = `!!navigator.serviceWorker && navigator.serviceWorker.controller?.state === 'activated'`

// bootProxy puts a recording reverse proxy in front of the service. Requests
// a service worker makes carry its script as their Referer.
type bootProxy struct {
	*httptest.Server
	mu   sync.Mutex
	seen []bootSeen
	open int       // requests in flight, but the event streams
	last time.Time // when one last started or ended
}

type bootSeen struct {
	Method, Path, Referer, Dest string
	Status                      int
	Bytes                       int64
}

func startBootProxy(t *testing.T, m *cli.Main) *bootProxy {
	t.Helper()
	target, err := url.Parse(m.URL())
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1 // the event stream
	p := &bootProxy{last: time.Now()}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stream := strings.HasSuffix(r.URL.Path, "/events") // open by design
		p.mu.Lock()
		if !stream {
			p.open++
		}
		p.last = time.Now()
		p.mu.Unlock()
		cw := &bootCountingWriter{ResponseWriter: w}
		rp.ServeHTTP(cw, r)
		p.mu.Lock()
		p.seen = append(p.seen, bootSeen{r.Method, r.URL.RequestURI(), r.Referer(), r.Header.Get("Sec-Fetch-Dest"), cw.status, cw.n})
		if !stream {
			p.open--
		}
		p.last = time.Now()
		p.mu.Unlock()
	}))
	// Registered before the tabs, so it closes after them (and their streams).
	t.Cleanup(func() { p.CloseClientConnections(); p.Close() })
	return p
}

// waitIdle waits until the proxy has had no request in flight (but the
// event streams) and none started or ended for quiet.
func (p *bootProxy) waitIdle(t *testing.T, quiet, limit time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(limit); ; time.Sleep(20 * time.Millisecond) {
		p.mu.Lock()
		open, calm := p.open, time.Since(p.last)
		p.mu.Unlock()
		if open == 0 && calm >= quiet {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy never went idle: %d requests in flight after %v", open, limit)
		}
	}
}

func (p *bootProxy) requests() []bootSeen {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

type bootCountingWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (w *bootCountingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *bootCountingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.n += int64(n)
	return n, err
}

func (w *bootCountingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// bootFirstVisit signs in through a fresh origin (the proxy) and opens the
// bundles page, so the service worker installs during this visit; it
// returns the tab, what the page itself asked for (CDP) and what reached
// the server (the proxy).
func bootFirstVisit(t *testing.T) (*bootProxy, []*bootReq, []bootSeen, string) {
	t.Helper()
	m, d := startService(t)
	p := startBootProxy(t, m)
	ctx := newTab(t)
	net := bootRecord(t, ctx)
	signIn(t, ctx, p.URL, d.Admins[0].Email, d.Admins[0].Password)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", p.URL, d.Extensions[0].ID))
	net.waitIdle(t, ctx, 1500*time.Millisecond, time.Minute)
	bootPoll(t, ctx, 30*time.Second, `navigator.serviceWorker && navigator.serviceWorker.controller !== null`,
		"no service worker controls the page")
	bootEval[bool](t, ctx, `navigator.serviceWorker.ready.then(() => true)`)
	// The worker's install fetches have ended: it is activated only once
	// its install is over, and the proxy has answered all it was asked.
	bootPoll(t, ctx, 30*time.Second, bootWorkerActivated, "the service worker that controls the page never became activated")
	p.waitIdle(t, 300*time.Millisecond, patient(20*time.Second))
	var worker string
	for _, s := range p.requests() {
		if s.Dest == "serviceworker" {
			worker = s.Path
		}
	}
	if worker == "" {
		t.Fatalf("no service worker script was fetched")
	}
	return p, net.since(0), p.requests(), worker
}

// TestBlackBoxBootServiceWorkerFetchesOnlyWhatThePageUses: what the service
// worker fetches when it installs is only what the page itself loads.
func TestBlackBoxBootServiceWorkerFetchesOnlyWhatThePageUses(t *testing.T) {
	_, page, seen, worker := bootFirstVisit(t)
	used := map[string]bool{}
	for _, r := range page {
		used[bootPath(r.URL)] = true
	}
	var byWorker, unused []string
	for _, s := range seen {
		ref, err := url.Parse(s.Referer)
		if err != nil || ref.Path != strings.SplitN(worker, "?", 2)[0] || s.Dest == "serviceworker" {
			continue
		}
		byWorker = append(byWorker, fmt.Sprintf("%s %s: %d, %d B", s.Method, s.Path, s.Status, s.Bytes))
		if !used[strings.SplitN(s.Path, "?", 2)[0]] {
			unused = append(unused, fmt.Sprintf("%s %s (%d B)", s.Method, s.Path, s.Bytes))
		}
	}
	t.Logf("the service worker (%s) fetched:\n\t%s", worker, strings.Join(byWorker, "\n\t"))
	if len(unused) > 0 {
		t.Errorf("the service worker fetched what the page never loads:\n\t%s\nthe page loaded:%s", strings.Join(unused, "\n\t"), bootList(page))
	}
}

// TestBlackBoxBootFirstVisitFetchesTheWasmOnce (beyond the list,
// same concern as "no request twice"): on the first visit the wasm (MBs)
// crosses the wire once, not once for the page and again for the service
// worker's cache.
func TestBlackBoxBootFirstVisitFetchesTheWasmOnce(t *testing.T) {
	_, _, seen, _ := bootFirstVisit(t)
	var wasm, all []string
	for _, s := range seen {
		line := fmt.Sprintf("%s %s referer %q: %d, %d B", s.Method, s.Path, s.Referer, s.Status, s.Bytes)
		if strings.Contains(strings.SplitN(s.Path, "?", 2)[0], ".wasm") {
			all = append(all, line)
			if s.Bytes > 0 {
				wasm = append(wasm, line)
			}
		}
	}
	t.Logf("requests of the wasm:\n\t%s", strings.Join(all, "\n\t"))
	if len(wasm) == 0 {
		t.Fatalf("the wasm never crossed the wire through the proxy: the test cannot see it")
	}
	if len(wasm) > 1 {
		t.Errorf("the wasm crossed the wire %d times on the first visit:\n\t%s", len(wasm), strings.Join(wasm, "\n\t"))
	}
}
