package browserbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// startChromium starts one headless Chromium with the browser tests' flags
// (server/browser/harness_test.go). Every measured page gets a browser
// context of its own in it: an empty HTTP cache, no service worker, no
// storage, as a first visit finds them.
func startChromium(profile string) (browser context.Context, stop func(), err error) {
	path := findChromium()
	if path == "" {
		return nil, nil, errors.New("the browser benchmark needs Chromium: run `make chromium` (or `sudo apt-get install -y chromium`)")
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", false),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	if err := chromedp.Do(browser); err != nil { // starts the browser
		cancelBrowser()
		cancelAlloc()
		return nil, nil, fmt.Errorf("starting Chromium (%s): %w", path, err)
	}
	return browser, func() { cancelBrowser(); cancelAlloc() }, nil
}

func findChromium() string {
	if p := os.Getenv("BETAPORT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// listPage is one list of one app: where it is and how a person sees it.
type listPage struct {
	url      string
	rows     string // CSS selector of the list's rows; the first match is "the first row"
	ready    string // CSS selector that matches once the app's code runs the page (takes input)
	countJS  string // how many rows the list has loaded (-1 before the list shows)
	buttonID string // the Load more button
	// The "app takes input" measure: a real click on the first row's first
	// button (the first one a hand can click: the current bundle offers no
	// rollback), answered when answer (the question it opens) shows.
	press  string
	answer string
	// pressOpens: the press is a link that opens the row in the page's own
	// address (the feedback list's viewer, /feedback/{id}): the page is then
	// still the list's when its address starts with url, and the link is
	// pressed once the app runs the page (before, it loads another page).
	pressOpens bool
}

// tab is a tab in a fresh browser context, signed in (the session cookie
// is set before the first visit), with the visibility probe installed and
// the tab's network events counted.
type tab struct {
	ctx    context.Context
	cancel func()
	net    *netLog
}

func openTab(browser context.Context, baseURL string, session *http.Cookie, lp listPage) (*tab, error) {
	bctx, cancelCtx := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(bctx); err != nil { // creates the browser context and its tab
		cancelCtx()
		return nil, fmt.Errorf("opening a tab in a new browser context: %w", err)
	}
	ctx, cancelTimeout := context.WithTimeout(bctx, 10*time.Minute)
	t := &tab{ctx: ctx, cancel: func() { cancelTimeout(); cancelCtx() }, net: &netLog{}}
	fail := func(what string, err error) (*tab, error) {
		t.cancel()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: probeJS(lp)}); err != nil {
		return fail("installing the visibility probe", err)
	}
	if err := chromedp.Listen(ctx, t.net.event); err != nil {
		return fail("listening to the tab", err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		return fail("enabling the network domain", err)
	}
	if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{
		Name: session.Name, Value: session.Value, URL: baseURL + "/", Path: "/",
		HTTPOnly: ptr(true), SameSite: network.CookieSameSiteLax,
	}); err != nil {
		return fail("setting the session cookie", err)
	}
	return t, nil
}

func ptr[T any](v T) *T { return &v }

// probeJS runs first in every document of the tab. From the first frame
// on, it looks, in each animation frame, at the first element matching
// rows, and records performance.now() (ms since the navigation started)
// when the row is first in the DOM and when it is first visible to a
// person: its centre inside the viewport, not hidden (display, visibility,
// opacity on it or an ancestor), and the topmost element there is the row
// or inside it (elementFromPoint), with no overlay that lets the pointer
// through (pointer-events: none, which elementFromPoint skips) positioned
// over it either. Until then, why says what is in the way. It also records
// when the app's code has taken the page over (the first frame with an
// element matching ready), when the first press came (pointerdown) and
// the first frame that shows its answer (an element matching answer).
//
// For the boot figures it records, with User Timing marks, when the Go
// program starts (wasm_exec.js's Go.prototype.run, wrapped as the class is
// defined) and when the app's first render lands in the DOM (the mutation
// that adds ready, seen by a MutationObserver: before any frame).
func probeJS(lp listPage) string {
	return `(() => {
  if (location.protocol === "about:") return;
  const sel = ` + jsString(lp.rows) + `, readySel = ` + jsString(lp.ready) + `, answerSel = ` + jsString(lp.answer) + `;
  const st = window.__bench = { dom: -1, visible: -1, ready: -1, goRun: -1, render: -1, press: -1, answered: -1,
    why: "no frame yet", frames: 0, log: [] };
  Object.defineProperty(globalThis, "Go", { configurable: true, get() { return undefined; }, set(Go) {
    const run = Go.prototype.run;
    Go.prototype.run = function (...args) {
      st.goRun = performance.now();
      performance.mark("bench:go.run");
      return run.apply(this, args);
    };
    Object.defineProperty(globalThis, "Go", { configurable: true, writable: true, value: Go });
  } });
  const rendered = new MutationObserver(() => {
    if (!document.querySelector(readySel)) return;
    st.render = performance.now();
    performance.mark("bench:first-render");
    rendered.disconnect();
  });
  rendered.observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ["data-app", "id"] });
  addEventListener("pointerdown", () => {
    if (st.press < 0) {
      st.press = performance.now();
      st.log.push(Math.round(st.press) + " ms: pressed");
    }
  }, true);
  const describe = (e) => !e ? "nothing" : e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
    (typeof e.className === "string" && e.className.trim() ? "." + e.className.trim().split(/\s+/).join(".") : "");
  const passThroughOverlay = (row, x, y) => {
    for (const e of document.querySelectorAll("body *")) {
      if (e === row || e.contains(row) || row.contains(e)) continue;
      const cs = getComputedStyle(e);
      if (cs.pointerEvents !== "none" || !["fixed", "absolute", "sticky"].includes(cs.position) || parseInt(cs.zIndex, 10) < 0) continue;
      const r = e.getBoundingClientRect();
      if (x < r.left || x >= r.right || y < r.top || y >= r.bottom) continue;
      if (!e.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
      return e;
    }
    return null;
  };
  const check = () => {
    const row = document.querySelector(sel);
    if (!row) return "no row in the DOM";
    if (st.dom < 0) st.dom = performance.now();
    const r = row.getBoundingClientRect();
    if (!(r.width > 0 && r.height > 0)) return "the row has no box";
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return "the row's centre is outside the viewport";
    if (!row.checkVisibility({ opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true })) return "the row is hidden (display, visibility or opacity)";
    const hit = document.elementFromPoint(x, y);
    if (!hit || (hit !== row && !row.contains(hit))) return "covered by " + describe(hit);
    // The time the row is seen: after the layout that painting it needs
    // (elementFromPoint forced it), before this probe's own scan below.
    seenAt = performance.now();
    const o = passThroughOverlay(row, x, y);
    if (o) return "covered by " + describe(o) + " (pointer-events: none)";
    return "";
  };
  let seenAt = -1;
  const tick = () => {
    st.frames++;
    if (st.ready < 0 && document.querySelector(readySel)) {
      st.ready = performance.now();
      st.log.push(Math.round(st.ready) + " ms: the app is ready");
    }
    if (st.visible < 0) {
      const why = check();
      if (why !== st.why) st.log.push(Math.round(why ? performance.now() : seenAt) + " ms: " + (why || "visible"));
      if (why === "") st.visible = seenAt;
      st.why = why;
    }
    if (st.answered < 0 && st.press >= 0) {
      const a = document.querySelector(answerSel);
      if (a && a.checkVisibility()) {
        st.answered = performance.now();
        st.log.push(Math.round(st.answered) + " ms: the press is answered");
      }
    }
    if (st.visible < 0 || st.ready < 0 || st.answered < 0) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})();`
}

// probe is what probeJS recorded.
type probe struct {
	DOM     float64 `json:"dom"`
	Visible float64 `json:"visible"`
	Ready   float64 `json:"ready"`
	// Boot (Betaport only; -1 for the reference): the Go program started,
	// and its first render landed in the DOM.
	GoRun  float64 `json:"goRun"`
	Render float64 `json:"render"`
	// The click on the first row's first button: pressed, and the first
	// frame that shows its answer.
	Press    float64 `json:"press"`
	Answered float64 `json:"answered"`
	Why      string  `json:"why"`
	Frames   int     `json:"frames"`
	// Log says, frame by frame, what changed in the way until the row
	// showed ("123 ms: covered by div#loader", …).
	Log []string `json:"log"`
}

// netLog sums, per visit, what the tab's Network domain reports: bytes
// received (encodedDataLength of loadingFinished, headers included) from
// the network and from the service worker, counted apart, and the requests.
type netLog struct {
	mu       sync.Mutex
	reqs     map[network.RequestID]*reqRecord
	order    []network.RequestID
	netBytes float64
	swBytes  float64
	requests int
	swReqs   int
	cacheHit int
}

// reqRecord is one request of a visit, as the tab saw it.
type reqRecord struct {
	method, url    string
	status         int64
	fromSW, cached bool
	bytes          float64
	done           bool
}

func (n *netLog) reset() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.reqs, n.order = map[network.RequestID]*reqRecord{}, nil
	n.netBytes, n.swBytes, n.requests, n.swReqs, n.cacheHit = 0, 0, 0, 0, 0
}

func (n *netLog) event(ev any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.reqs == nil {
		n.reqs = map[network.RequestID]*reqRecord{}
	}
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		n.requests++
		if _, ok := n.reqs[e.RequestID]; !ok && e.Request != nil {
			n.reqs[e.RequestID] = &reqRecord{method: e.Request.Method, url: e.Request.URL}
			n.order = append(n.order, e.RequestID)
		}
	case *network.EventResponseReceived:
		r := n.reqs[e.RequestID]
		if r == nil || e.Response == nil {
			return
		}
		r.status = e.Response.Status
		r.fromSW = e.Response.FromServiceWorker
		r.cached = e.Response.FromDiskCache || e.Response.FromPrefetchCache
	case *network.EventLoadingFinished:
		r := n.reqs[e.RequestID]
		if r == nil {
			return
		}
		r.bytes, r.done = e.EncodedDataLength, true
		switch {
		case r.fromSW:
			n.swBytes += e.EncodedDataLength
			n.swReqs++
		default:
			n.netBytes += e.EncodedDataLength
			if r.cached {
				n.cacheHit++
			}
		}
	}
}

type netTotals struct {
	NetBytes, SWBytes           float64
	Requests, SWReqs, CacheHits int
	// List is every request of the visit: "GET /path 304 network 312 B".
	List []string
}

func (n *netLog) totals() netTotals {
	n.mu.Lock()
	defer n.mu.Unlock()
	t := netTotals{NetBytes: n.netBytes, SWBytes: n.swBytes, Requests: n.requests, SWReqs: n.swReqs, CacheHits: n.cacheHit}
	for _, id := range n.order {
		r := n.reqs[id]
		from := "network"
		switch {
		case r.fromSW:
			from = "service worker"
		case r.cached:
			from = "HTTP cache"
		}
		u := r.url
		if i := strings.Index(u, "://"); i >= 0 {
			if j := strings.Index(u[i+3:], "/"); j >= 0 {
				u = u[i+3+j:]
			}
		}
		state := fmt.Sprintf("%.0f B", r.bytes)
		if !r.done {
			state = "not finished"
		}
		t.List = append(t.List, fmt.Sprintf("%s %s %d %s %s", r.method, u, r.status, from, state))
	}
	return t
}

// visit is one page load, measured.
type visit struct {
	Probe probe
	// LostPresses: clicks on the row's button that nothing answered in
	// 10 s, made again (a click before boot that the app dropped).
	LostPresses int
	Wire        wireBytes // on the service's connections, from navigation to settled
	Net         netTotals // as the tab's Network domain reports them
}

// load navigates the tab to url, clicks the first row's first button as
// soon as a hand could (pressFirstButton), and waits until the first row
// is visible, the app is ready and the click answered (at most 60 s), then
// until the network is quiet. Bytes count from the navigation until then.
func (t *tab) load(s *service, lp listPage, url string) (visit, error) {
	var v visit
	// Leave the page first, so the navigation below is a new visit (not
	// a reload) and nothing of the page before is still talking.
	if _, err := chromedp.Call(t.ctx, page.Navigate, page.NavigateParams{URL: "about:blank"}); err != nil {
		return v, fmt.Errorf("leaving for about:blank: %w", err)
	}
	if err := pollTrue(t.ctx, `location.href === "about:blank" && document.readyState === "complete"`, 10*time.Second); err != nil {
		return v, fmt.Errorf("leaving for about:blank: %w", err)
	}
	waitQuiet(s, 300*time.Millisecond, 5*time.Second)
	t.net.reset()
	before := s.wire.snapshot()
	if res, err := chromedp.Call(t.ctx, page.Navigate, page.NavigateParams{URL: url}); err != nil {
		return v, fmt.Errorf("opening %s: %w", url, err)
	} else if res.ErrorText != "" {
		return v, fmt.Errorf("opening %s: %s", url, res.ErrorText)
	}
	want, _ := json.Marshal(url)
	lost, err := t.pressFirstButton(lp, string(want))
	if err != nil {
		return v, fmt.Errorf("%s: %w", url, err)
	}
	v.LostPresses = lost
	onPage := `location.href === ` + string(want)
	if lp.pressOpens {
		onPage = `location.href.startsWith(` + string(want) + `)`
	}
	err = pollTrue(t.ctx, onPage+` && !!window.__bench && window.__bench.visible >= 0 && window.__bench.ready >= 0`, 60*time.Second)
	p, perr := chromedp.Run(t.ctx, chromedp.Evaluate[probe](`window.__bench || {dom: -1, visible: -1, ready: -1, why: "the probe did not run", frames: 0}`))
	if err != nil {
		if perr == nil {
			return v, fmt.Errorf("%s: the first row was not visible, or the app not ready, in 60 s (row in the DOM at %.0f ms, visible at %.0f ms, app ready at %.0f ms; %d frames; %s): %w",
				url, p.DOM, p.Visible, p.Ready, p.Frames, strings.Join(p.Log, "; "), err)
		}
		return v, fmt.Errorf("%s: the first row never became visible in 60 s: %w", url, err)
	}
	if perr != nil {
		return v, fmt.Errorf("%s: reading the probe: %w", url, perr)
	}
	v.Probe = p
	if err := t.settle(s); err != nil {
		return v, err
	}
	v.Wire = s.wire.snapshot().sub(before)
	v.Net = t.net.totals()
	return v, nil
}

// settle waits until a service worker the page registered has finished
// installing (its cache filled), and until the service's connections have
// been quiet for a second (at most 20 s in all).
func (t *tab) settle(s *service) error {
	_, err := chromedp.Run(t.ctx, chromedp.Evaluate[bool](`(async () => {
		if (!navigator.serviceWorker) return true;
		const deadline = performance.now() + 15000;
		while (performance.now() < deadline) {
			const r = await navigator.serviceWorker.getRegistration();
			if (!r || (r.active && r.active.state === "activated" && !r.installing && !r.waiting)) return true;
			await new Promise(res => setTimeout(res, 100));
		}
		return false;
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		return fmt.Errorf("waiting for the service worker: %w", err)
	}
	waitQuiet(s, time.Second, 20*time.Second)
	return nil
}

// waitQuiet waits until no byte has crossed the service's connections for
// quiet, or until limit. (A live list's event stream sends a heartbeat
// every 15 s; a settled page is otherwise silent.)
func waitQuiet(s *service, quiet, limit time.Duration) {
	deadline := time.Now().Add(limit)
	last, since := s.wire.snapshot(), time.Now()
	for time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		if now := s.wire.snapshot(); now != last {
			last, since = now, time.Now()
		} else if time.Since(since) >= quiet {
			return
		}
	}
}

// memory is the renderer's memory that the page's code holds.
type memory struct {
	JSHeapUsed   float64 // V8 heap, live objects after a full GC (Runtime.getHeapUsage usedSize)
	Backing      float64 // ArrayBuffer and external string backing stores (backingStorageSize)
	Wasm         float64 // linear memory of every WebAssembly.Memory in the page
	Embedder     float64 // Blink's garbage-collected heap: DOM nodes and the like (embedderHeapUsedSize)
	DOMElements  int
	RowsInDOM    int
	RowsInList   int
	WasmIncluded bool // Backing counted Wasm (Backing >= Wasm > 0)
}

// Total is the goal's measure: the JS heap plus WebAssembly linear memory.
func (m memory) Total() float64 { return m.JSHeapUsed + m.Wasm }

// measureMemory collects garbage twice, then reads the isolate's heap use
// and the byte length of every WebAssembly.Memory's buffer, found with
// Runtime.queryObjects (every object whose prototype is
// WebAssembly.Memory.prototype: Go's wasm instance exports its memory as
// one). getHeapUsage's usedSize leaves ArrayBuffer contents, and so wasm
// linear memory, out: they are backing stores outside the V8 heap.
func (t *tab) measureMemory(lp listPage) (memory, error) {
	var m memory
	for range 2 {
		if _, err := chromedp.Call(t.ctx, heapprofiler.CollectGarbage, cdp.Empty{}); err != nil {
			return m, fmt.Errorf("collecting garbage: %w", err)
		}
	}
	h, err := chromedp.Call(t.ctx, runtime.GetHeapUsage, cdp.Empty{})
	if err != nil {
		return m, fmt.Errorf("reading the heap usage: %w", err)
	}
	m.JSHeapUsed, m.Backing, m.Embedder = h.UsedSize, h.BackingStorageSize, h.EmbedderHeapUsedSize
	if m.Wasm, err = t.wasmMemory(); err != nil {
		return m, err
	}
	m.WasmIncluded = m.Wasm > 0 && m.Backing >= m.Wasm
	counts, err := chromedp.Run(t.ctx, chromedp.Evaluate[[]int](`[document.getElementsByTagName("*").length, document.querySelectorAll(`+jsString(lp.rows)+`).length, `+lp.countJS+`]`))
	if err != nil {
		return m, fmt.Errorf("counting elements: %w", err)
	}
	m.DOMElements, m.RowsInDOM, m.RowsInList = counts[0], counts[1], counts[2]
	return m, nil
}

func (t *tab) wasmMemory() (float64, error) {
	const group = "browserbench-memory"
	defer chromedp.Call(t.ctx, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: group})
	proto, err := chromedp.Call(t.ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: "WebAssembly.Memory.prototype", ObjectGroup: group})
	if err != nil || proto.Result == nil || proto.Result.ObjectID == "" {
		return 0, fmt.Errorf("finding WebAssembly.Memory.prototype: %v", err)
	}
	objs, err := chromedp.Call(t.ctx, runtime.QueryObjects, runtime.QueryObjectsParams{PrototypeObjectID: proto.Result.ObjectID, ObjectGroup: group})
	if err != nil || objs.Objects == nil {
		return 0, fmt.Errorf("querying WebAssembly.Memory objects: %v", err)
	}
	sum, err := chromedp.Call(t.ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: `function() { return this.reduce((n, m) => n + m.buffer.byteLength, 0); }`,
		ObjectID:            objs.Objects.ObjectID, ReturnByValue: ptr(true), ObjectGroup: group,
	})
	if err != nil || sum.Result == nil {
		return 0, fmt.Errorf("summing WebAssembly memories: %v", err)
	}
	var n float64
	if err := json.Unmarshal(sum.Result.Value, &n); err != nil {
		return 0, fmt.Errorf("summing WebAssembly memories: %s: %w", sum.Result.Value, err)
	}
	return n, nil
}

// pollTrue evaluates expr in the page every 20 ms until it is true, or
// fails after limit. Unlike chromedp.Poll it goes on across a navigation
// (an evaluation that fails while the document is replaced is tried
// again).
func pollTrue(ctx context.Context, expr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	for {
		ok, err := evalJS[bool](ctx, "!!("+expr+")")
		if err == nil && ok {
			return nil
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			if last != nil {
				return fmt.Errorf("still false after %v (last error: %w)", limit, last)
			}
			return fmt.Errorf("still false after %v", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// pollValue evaluates expr every interval until it gives a value other
// than null, and returns it; like pollTrue it goes on across a navigation.
func pollValue[T any](ctx context.Context, expr string, interval, limit time.Duration) (T, error) {
	deadline := time.Now().Add(limit)
	var zero T
	var last error
	for {
		v, err := evalJS[*T](ctx, expr)
		if err == nil && v != nil {
			return *v, nil
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			return zero, fmt.Errorf("still null after %v (last error: %v)", limit, last)
		}
		select {
		case <-ctx.Done():
			return zero, ctx.Err()
		case <-time.After(interval):
		}
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func evalJS[T any](ctx context.Context, expr string) (T, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr))
}

// loadMore makes one "Load more" as a hand does, with real input only, the
// way the browser tests' 100-click test does: it waits until the button no
// longer looks busy, presses End until the button is in view with nothing
// over its centre, and clicks it with the mouse (Input.dispatchMouseEvent).
// When the End alone made the list load (its sentinel came into view), that
// counts as the load-more, and no click is made. It returns when the list
// has grown, or with ended set when the button is gone (no more rows). A
// load-more that loads nothing in 10 s is made again, as a hand would, at
// most twice; those are counted (lost).
func (t *tab) loadMore(lp listPage) (res loadMoreResult, err error) {
	id := jsString(lp.buttonID)
	for attempt := 0; ; attempt++ {
		state, err := chromedp.Run(t.ctx, chromedp.Poll[string](`(() => { const b = document.getElementById(`+id+`);
			if (!b || b.hidden || !b.checkVisibility()) return "end";
			return b.disabled || b.getAttribute("aria-disabled") === "true" || b.getAttribute("aria-busy") === "true" ? "" : "ready"; })()`,
			chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(20*time.Millisecond)))
		if err != nil {
			return res, fmt.Errorf("the Load more button stayed busy for 20 s: %w", err)
		}
		if state == "end" {
			res.ended = true
			return res, nil
		}
		c0, err := evalJS[int](t.ctx, lp.countJS)
		if err != nil {
			return res, err
		}
		grown := fmt.Sprintf(`(%s) > %d`, lp.countJS, c0)
		clicked, err := t.reachAndClick(lp, grown)
		if err != nil {
			return res, err
		}
		res.clicked = res.clicked || clicked
		err = pollTrue(t.ctx, grown, 10*time.Second)
		if err == nil {
			return res, nil
		}
		if attempt == 2 {
			state, _ := evalJS[string](t.ctx, `(() => { const b = document.getElementById(`+id+`); if (!b) return "no button";
				const r = b.getBoundingClientRect(); const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
				return "button " + b.outerHTML.slice(0, 200) + " at " + JSON.stringify(r) + "; at its centre: " + (at ? at.outerHTML.slice(0, 120) : "null") +
					"; scrollY " + scrollY + " of " + document.documentElement.scrollHeight; })()`)
			return res, fmt.Errorf("a load-more loaded nothing in 10 s, three times (%d rows; last made by a click: %v): %s: %w", c0, clicked, state, err)
		}
		res.lost++
	}
}

// pressFirstButton waits until the first of the list's row buttons a hand
// can click is on screen (its centre in the viewport, nothing over it: a
// server-rendered button counts, disabled or not, as a person sees no
// difference in time), and clicks it with the mouse, as early as it can:
// polled every 10 ms. It returns when the click is answered; a click that
// nothing answered in 10 s is made again, at most twice, and counted lost.
func (t *tab) pressFirstButton(lp listPage, url string) (lost int, err error) {
	ready := ""
	if lp.pressOpens {
		// A link works before the app runs the page (a whole page load of
		// the row's address): it is pressed once the app runs it, to time
		// the app's answer.
		ready = `if (!document.querySelector(` + jsString(lp.ready) + `)) return null;`
	}
	centre := `(() => { if (location.href !== ` + url + `) return null; ` + ready + `
		for (const b of document.querySelectorAll(` + jsString(lp.press) + `)) {
			if (!b.checkVisibility()) continue;
			const r = b.getBoundingClientRect(); const x = r.left + r.width / 2, y = r.top + r.height / 2;
			if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return null;
			const at = document.elementFromPoint(x, y);
			return at && (at === b || b.contains(at)) ? [x, y] : null;
		}
		return null; })()`
	for attempt := 0; ; attempt++ {
		at, err := pollValue[[]float64](t.ctx, centre, 10*time.Millisecond, 60*time.Second)
		if err != nil {
			return lost, fmt.Errorf("no row button (%s) a hand could click came on screen in 60 s: %w", lp.press, err)
		}
		if err := chromedp.Do(t.ctx,
			chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, at[0], at[1]),
			chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(1)),
			chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(1))); err != nil {
			return lost, fmt.Errorf("clicking the row button: %w", err)
		}
		err = pollTrue(t.ctx, `window.__bench && window.__bench.answered >= 0`, 10*time.Second)
		if err == nil {
			return lost, nil
		}
		if attempt == 2 {
			return lost, fmt.Errorf("a click on the row button (%s) was not answered (%s) in 10 s, three times: %w", lp.press, lp.answer, err)
		}
		lost++
		// A hand clicks again; the probe times the answer from the first press.
	}
}

type loadMoreResult struct {
	clicked bool // the button was clicked (else the End key alone made the list load)
	ended   bool // no Load more button: the list has no more rows
	lost    int  // load-mores made again because nothing loaded in 10 s
}

// reachAndClick presses End until the list has grown (grown) or the Load
// more button can be clicked, and then clicks it.
func (t *tab) reachAndClick(lp listPage, grown string) (clicked bool, err error) {
	centre := `(() => { const b = document.getElementById(` + jsString(lp.buttonID) + `); if (!b) return null;
		const r = b.getBoundingClientRect(); const x = r.left + r.width / 2, y = r.top + r.height / 2;
		const at = document.elementFromPoint(x, y);
		return y > 0 && y < innerHeight && at && (at === b || b.contains(at)) ? [x, y] : null; })()`
	for try := 0; ; try++ {
		if g, err := evalJS[bool](t.ctx, grown); err != nil {
			return false, err
		} else if g {
			return false, nil // the End brought the end of the list into view: it loaded by itself
		}
		at, err := evalJS[[]float64](t.ctx, centre)
		if err != nil {
			return false, err
		}
		if at != nil {
			return true, chromedp.Do(t.ctx,
				chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, at[0], at[1]),
				chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(1)),
				chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(1)))
		}
		if try == 30 {
			return false, fmt.Errorf("the Load more button never came into view where a hand could click it")
		}
		if err := chromedp.Do(t.ctx, chromedp.KeyEvent(kb.End)); err != nil {
			return false, err
		}
		if err := t.frames(); err != nil {
			return false, err
		}
	}
}

// frames waits for two animation frames (or 150 ms).
func (t *tab) frames() error {
	_, err := chromedp.Run(t.ctx, chromedp.Evaluate[bool](
		`new Promise(r => { requestAnimationFrame(() => requestAnimationFrame(() => r(true))); setTimeout(() => r(true), 150); })`,
		chromedp.EvalAwaitPromise))
	return err
}

// viewport reports the tab's viewport and whether the page is visible (a
// hidden page gets no animation frames, and the probe would wait).
func (t *tab) viewport() (string, error) {
	return evalJS[string](t.ctx, `innerWidth + "x" + innerHeight + " " + document.visibilityState`)
}
