package browserbench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The benchmark runs only when asked: `make bench-browser` sets
// BETAPORT_BENCH_BROWSER=1. Plain `make bench` (go test -bench . ./...)
// skips it with a line that says so: it takes minutes, needs Chromium and a
// built reference page, and prints its own table.
const enableEnv = "BETAPORT_BENCH_BROWSER"

// Settings, from the environment.
var (
	benchRuns         = max(1, envInt("BETAPORT_BENCH_RUNS", 5))  // runs of each page, side by side
	benchLoadMores    = envInt("BETAPORT_BENCH_LOADMORES", 100)   // Load more per memory run
	benchLoadMoreRuns = envInt("BETAPORT_BENCH_LOADMORE_RUNS", 3) // how many of the runs also do them (0: none)
)

const tenThousand = 10_000

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

// The two apps and the two lists, and the floor: a go-app hello world
// (./hello), measured beside them on its own page.
const (
	betaport  = "Betaport"
	reference = "React+SWR"
	hello     = "go-app hello"
)

var apps = []string{betaport, reference, hello}

// When each app's code runs the page: Betaport once the wasm has taken the
// page over from the server's HTML (the browser tests' openApp waits for
// the same); the reference once React has rendered the list. When it takes
// input is measured apart: a click on a row's first button, answered.
const (
	betaportReady  = `.shell[data-app="client"]`
	referenceReady = `#ref-list`
)

type list struct {
	name string
	page func(app, base string, ext int64) listPage
}

var lists = []list{
	{"bundles", func(app, base string, ext int64) listPage {
		if app == betaport {
			return listPage{url: fmt.Sprintf("%s/extensions/%d", base, ext), rows: "#bundle-rows [data-bundle]", ready: betaportReady,
				countJS: `+(document.getElementById("bundle-rows")?.dataset.count ?? -1)`, buttonID: "load-more-bundles",
				press: "#bundle-rows [data-bundle] .rollback", answer: "#bundle-rows .confirm-rollback"}
		}
		return listPage{url: fmt.Sprintf("%s/ref/extensions/%d", base, ext), rows: "#ref-list [data-bundle]", ready: referenceReady,
			countJS: `+(document.getElementById("ref-list")?.dataset.count ?? -1)`, buttonID: "load-more",
			press: "#ref-list [data-bundle] .rollback", answer: "#ref-list .confirm-rollback"}
	}},
	{"testers", func(app, base string, ext int64) listPage {
		if app == betaport {
			return listPage{url: fmt.Sprintf("%s/extensions/%d/testers", base, ext), rows: "#testers [data-tester]", ready: betaportReady,
				countJS: `+(document.getElementById("testers")?.dataset.count ?? -1)`, buttonID: "load-more-testers",
				press: "#testers [data-tester] .revoke", answer: "#testers .confirm-revoke"}
		}
		return listPage{url: fmt.Sprintf("%s/ref/extensions/%d/testers", base, ext), rows: "#ref-list [data-tester]", ready: referenceReady,
			countJS: `+(document.getElementById("ref-list")?.dataset.count ?? -1)`, buttonID: "load-more",
			press: "#ref-list [data-tester] .revoke", answer: "#ref-list .confirm-revoke"}
	}},
}

// env is what every run shares: one service, one browser, one session.
type env struct {
	svc     *service
	hello   *helloService
	browser context.Context
	session *http.Cookie
}

// BenchmarkBrowserLists measures Betaport's bundles and testers lists
// against the React+SWR reference page, side by side in one run, and
// prints a table of medians, ranges and ratios (Betaport / React+SWR).
func BenchmarkBrowserLists(b *testing.B) {
	if os.Getenv(enableEnv) != "1" {
		// Said on stdout too: go test shows a skipped benchmark's reason
		// only with -v.
		fmt.Printf("BenchmarkBrowserLists: skipped; `make bench-browser` runs it (%s=1)\n", enableEnv)
		b.Skipf("the browser benchmark runs with `make bench-browser` (which sets %s=1): it needs Chromium, the built app and the reference page, and takes minutes", enableEnv)
	}
	e := setup(b)
	for _, l := range lists {
		b.Run(l.name, func(b *testing.B) {
			res := runList(b, e, l)
			report(b, l, res)
		})
	}
}

// setup fails, saying what to run, when anything the benchmark needs is
// missing.
func setup(b *testing.B) *env {
	b.Helper()
	refDir := referenceDir()
	if _, err := os.Stat(filepath.Join(refDir, "index.html")); err != nil {
		b.Fatalf("the browser benchmark needs the reference page (React + SWR) built into %s: run `make bench-reference` (make bench-browser does): %v", refDir, err)
	}
	if _, err := os.Stat(filepath.Join("..", "..", "web", "app.wasm")); err != nil {
		b.Fatalf("the browser benchmark needs the built app: run `make wasm` (make bench-browser does): %v", err)
	}
	if findChromium() == "" {
		b.Fatal("the browser benchmark needs Chromium: run `make chromium` (or `sudo apt-get install -y chromium`)")
	}
	svc := startService(b, refDir)
	b.Cleanup(svc.close)
	profile := b.TempDir()
	browser, stop, err := startChromium(profile)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(stop)
	return &env{svc: svc, hello: startHello(b), browser: browser, session: svc.signIn(b)}
}

// appRun is what one run measured of one app on one list.
type appRun struct {
	Cold, Repeat visit
	ColdLoad     float64 // the load event (ms), for the record
	RepeatLoad   float64
	MemLoad      memory
	LoadMores    int // made (fewer when the list ended)
	Clicks       int // of which a click on the button (the others: the End key alone made the list load)
	Lost         int // load-mores that loaded nothing in 10 s, made again
	LoadMoreTime time.Duration
	MemAfter     *memory // after the load-mores
	Mem10k       *memory // testers: when 10,000 rows were first loaded
}

func runList(b *testing.B, e *env, l list) map[string][]appRun {
	b.Helper()
	ext := e.svc.data.Extensions[0].ID
	res := map[string][]appRun{}
	for run := 0; run < benchRuns; run++ {
		// Who goes first turns with each run.
		order := append(slices.Clone(apps[run%len(apps):]), apps[:run%len(apps)]...)
		for _, app := range order {
			lp := helloPage(e.hello.url)
			if app != hello {
				lp = l.page(app, e.svc.url, ext)
			}
			r, err := measureApp(e, l, app, lp, run < benchLoadMoreRuns && app != hello)
			if err != nil {
				b.Fatalf("%s, %s list, run %d: %v", app, l.name, run+1, err)
			}
			res[app] = append(res[app], r)
			fmt.Fprintf(os.Stderr, "browserbench: %s run %d/%d %-9s cold %4.0f ms (in DOM %4.0f, click answered %4.0f), repeat %4.0f ms (click answered %4.0f), repeat %5.1f KB down, memory at load %5.1f MB%s\n",
				l.name, run+1, benchRuns, app, r.Cold.Probe.Visible, r.Cold.Probe.DOM, r.Cold.Probe.Answered, r.Repeat.Probe.Visible, r.Repeat.Probe.Answered,
				float64(r.Repeat.Wire.Down)/1024, r.MemLoad.Total()/(1<<20), loadMoreNote(r))
			if testing.Verbose() {
				fmt.Fprintf(os.Stderr, "browserbench:   cold: %s\nbrowserbench:   repeat: %s\n", strings.Join(r.Cold.Probe.Log, "; "), strings.Join(r.Repeat.Probe.Log, "; "))
			}
		}
	}
	return res
}

func loadMoreNote(r appRun) string {
	if r.MemAfter == nil {
		return ""
	}
	return fmt.Sprintf(", after %d load-mores (%d clicks, %d lost, %v) %d rows %5.1f MB", r.LoadMores, r.Clicks, r.Lost,
		r.LoadMoreTime.Round(100*time.Millisecond), r.MemAfter.RowsInList, r.MemAfter.Total()/(1<<20))
}

// measureApp measures one app's list in a fresh browser context: the cold
// visit, the memory once it settled, the repeat visit (same context: HTTP
// cache and service worker warm) and, when asked, the memory after the
// load-mores.
func measureApp(e *env, l list, app string, lp listPage, loadMores bool) (appRun, error) {
	var r appRun
	t, err := openTab(e.browser, e.svc.url, e.session, lp)
	if err != nil {
		return r, err
	}
	defer t.cancel()
	if vp, err := t.viewport(); err != nil {
		return r, err
	} else if !strings.HasSuffix(vp, " visible") {
		return r, fmt.Errorf("the tab is not visible (%s): it would get no animation frames", vp)
	}
	profile := os.Getenv(profileEnv) != "" && app == betaport
	if profile {
		if err := startProfile(t.ctx); err != nil {
			return r, err
		}
	}
	if r.Cold, err = t.load(e.svc, lp, lp.url); err != nil {
		return r, fmt.Errorf("cold visit: %w", err)
	}
	if profile {
		if err := stopProfile(t.ctx, fmt.Sprintf("%s-cold-%d", l.name, time.Now().UnixMilli())); err != nil {
			return r, err
		}
	}
	r.ColdLoad, _ = evalJS[float64](t.ctx, `performance.getEntriesByType("navigation")[0]?.loadEventEnd ?? -1`)
	if dir := os.Getenv("BETAPORT_BENCH_SCREENSHOTS"); dir != "" {
		// What the cold visit showed once settled, to look at.
		if png, err := chromedp.Run(t.ctx, chromedp.CaptureScreenshot()); err == nil {
			name := strings.NewReplacer("+", "-", "/", "-").Replace(fmt.Sprintf("%s-%s.png", l.name, app))
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, name), png, 0o644)
		}
	}
	if r.MemLoad, err = t.measureMemory(lp); err != nil {
		return r, err
	}
	if r.Repeat, err = t.load(e.svc, lp, lp.url); err != nil {
		return r, fmt.Errorf("repeat visit: %w", err)
	}
	r.RepeatLoad, _ = evalJS[float64](t.ctx, `performance.getEntriesByType("navigation")[0]?.loadEventEnd ?? -1`)
	if !loadMores {
		return r, nil
	}
	started := time.Now()
	for i := 1; i <= benchLoadMores; i++ {
		lm, err := t.loadMore(lp)
		if err != nil {
			return r, fmt.Errorf("load-more #%d: %w", i, err)
		}
		if lm.ended {
			break
		}
		r.LoadMores++
		r.Lost += lm.lost
		if lm.clicked {
			r.Clicks++
		}
		if l.name == "testers" && r.Mem10k == nil {
			n, err := evalJS[int](t.ctx, lp.countJS)
			if err != nil {
				return r, err
			}
			if n >= tenThousand {
				waitQuiet(e.svc, 500*time.Millisecond, 10*time.Second)
				m, err := t.measureMemory(lp)
				if err != nil {
					return r, err
				}
				r.Mem10k = &m
			}
		}
	}
	r.LoadMoreTime = time.Since(started)
	waitQuiet(e.svc, time.Second, 20*time.Second)
	m, err := t.measureMemory(lp)
	if err != nil {
		return r, err
	}
	r.MemAfter = &m
	return r, nil
}

// A metric: how to read it from a run, how to show it, and the goal its
// ratio (Betaport / React+SWR) or Betaport's value is held to.
type metric struct {
	name string
	unit string // ms, KB, MB, n
	get  func(appRun) (float64, bool)
	goal string
	met  func(ratio, betaportMedian float64) bool
	// betaportOnly: the goal holds Betaport's value alone (the reference
	// has no such figure).
	betaportOnly bool
	bench        string // b.ReportMetric unit for the ratio, when reported
	// floor: the hello world's figure is shown beside (it has no list,
	// no API, and no bytes counted on Betaport's listener).
	floor bool
}

func metrics(l list) []metric {
	ratioAtMost := func(x float64) func(r, _ float64) bool { return func(r, _ float64) bool { return r <= x } }
	always := func(f func(appRun) float64) func(appRun) (float64, bool) {
		return func(r appRun) (float64, bool) { return f(r), true }
	}
	after := func(f func(memory) float64) func(appRun) (float64, bool) {
		return func(r appRun) (float64, bool) {
			if r.MemAfter == nil {
				return 0, false
			}
			return f(*r.MemAfter), true
		}
	}
	ms := []metric{
		{floor: true, name: "cold: first row visible", unit: "ms", get: always(func(r appRun) float64 { return r.Cold.Probe.Visible }),
			goal: "≤ 1.0×", met: ratioAtMost(1.0), bench: "cold-visible-x"},
		{floor: true, name: "cold: first row in the DOM", unit: "ms", get: always(func(r appRun) float64 { return r.Cold.Probe.DOM })},
		{floor: true, name: "cold: app's code runs the page", unit: "ms", get: always(func(r appRun) float64 { return r.Cold.Probe.Ready })},
		{floor: true, name: "cold: row button pressed", unit: "ms", get: always(func(r appRun) float64 { return r.Cold.Probe.Press })},
		{floor: true, name: "cold: click answered (takes input)", unit: "ms", get: always(func(r appRun) float64 { return r.Cold.Probe.Answered }),
			goal: "≤ 2.0×", met: ratioAtMost(2.0), bench: "cold-input-x"},
		{floor: true, name: "cold: boot: go.run → first render", unit: "ms", get: bootRender(func(r appRun) probe { return r.Cold.Probe }),
			goal: l.bootGoal(120), met: atMost(120), betaportOnly: true},
		{floor: true, name: "cold: boot: first render → input", unit: "ms", get: renderToInput(func(r appRun) probe { return r.Cold.Probe }),
			goal: "Betaport ≤ 40 ms", met: atMost(40), betaportOnly: true},
		{floor: true, name: "cold: load event", unit: "ms", get: always(func(r appRun) float64 { return r.ColdLoad })},
		{name: "cold: bytes down (wire)", unit: "KB", get: always(func(r appRun) float64 { return float64(r.Cold.Wire.Down) })},
		{floor: true, name: "repeat: first row visible", unit: "ms", get: always(func(r appRun) float64 { return r.Repeat.Probe.Visible }),
			goal: "≤ 1.0×", met: ratioAtMost(1.0), bench: "repeat-visible-x"},
		{floor: true, name: "repeat: first row in the DOM", unit: "ms", get: always(func(r appRun) float64 { return r.Repeat.Probe.DOM })},
		{floor: true, name: "repeat: app's code runs the page", unit: "ms", get: always(func(r appRun) float64 { return r.Repeat.Probe.Ready })},
		{floor: true, name: "repeat: row button pressed", unit: "ms", get: always(func(r appRun) float64 { return r.Repeat.Probe.Press })},
		{floor: true, name: "repeat: click answered (takes input)", unit: "ms", get: always(func(r appRun) float64 { return r.Repeat.Probe.Answered }),
			goal: "≤ 1.5×", met: ratioAtMost(1.5), bench: "repeat-input-x"},
		{floor: true, name: "repeat: boot: go.run → first render", unit: "ms", get: bootRender(func(r appRun) probe { return r.Repeat.Probe }),
			goal: l.bootGoal(120), met: atMost(120), betaportOnly: true},
		{floor: true, name: "repeat: boot: first render → input", unit: "ms", get: renderToInput(func(r appRun) probe { return r.Repeat.Probe }),
			goal: "Betaport ≤ 40 ms", met: atMost(40), betaportOnly: true},
		{name: "clicks made again (lost)", unit: "n", get: always(func(r appRun) float64 { return float64(r.Cold.LostPresses + r.Repeat.LostPresses) }),
			goal: "none", met: func(_, b float64) bool { return b == 0 }, betaportOnly: true},
		{name: "repeat: visit (row visible + ready)", unit: "ms", get: always(func(r appRun) float64 { return max(r.Repeat.Probe.Visible, r.Repeat.Probe.Ready) }),
			goal: "≤ 1.2×", met: ratioAtMost(1.2), bench: "repeat-visit-x"},
		{floor: true, name: "repeat: load event", unit: "ms", get: always(func(r appRun) float64 { return r.RepeatLoad })},
		{name: "repeat: bytes down (wire)", unit: "KB", get: always(func(r appRun) float64 { return float64(r.Repeat.Wire.Down) }),
			goal: "Betaport ≤ 5 KB", met: func(_, b float64) bool { return b <= 5*1024 }, bench: "repeat-bytes-x"},
		{name: "repeat: bytes up (wire)", unit: "KB", get: always(func(r appRun) float64 { return float64(r.Repeat.Wire.Up) })},
		{name: "repeat: CDP bytes, network", unit: "KB", get: always(func(r appRun) float64 { return r.Repeat.Net.NetBytes })},
		{name: "repeat: CDP bytes, from SW", unit: "KB", get: always(func(r appRun) float64 { return r.Repeat.Net.SWBytes })},
		{name: "repeat: requests (page)", unit: "n", get: always(func(r appRun) float64 { return float64(r.Repeat.Net.Requests) })},
		{name: "repeat: of which from SW", unit: "n", get: always(func(r appRun) float64 { return float64(r.Repeat.Net.SWReqs) })},
		{floor: true, name: "memory at load (JS heap + wasm)", unit: "MB", get: always(func(r appRun) float64 { return r.MemLoad.Total() }),
			goal: "≤ 1.0×", met: ratioAtMost(1.0), bench: "mem-load-x"},
		{floor: true, name: "  JS heap used", unit: "MB", get: always(func(r appRun) float64 { return r.MemLoad.JSHeapUsed })},
		{floor: true, name: "  wasm linear memory", unit: "MB", get: always(func(r appRun) float64 { return r.MemLoad.Wasm })},
		{floor: true, name: "  DOM (Blink heap, not counted)", unit: "MB", get: always(func(r appRun) float64 { return r.MemLoad.Embedder })},
		{floor: true, name: "  elements in the DOM", unit: "n", get: always(func(r appRun) float64 { return float64(r.MemLoad.DOMElements) })},
		{name: fmt.Sprintf("memory after %d load-mores", benchLoadMores), unit: "MB", get: after(memory.Total),
			goal: "≤ 1.0×", met: ratioAtMost(1.0), bench: "mem-100-x"},
		{name: "  JS heap used", unit: "MB", get: after(func(m memory) float64 { return m.JSHeapUsed })},
		{name: "  wasm linear memory", unit: "MB", get: after(func(m memory) float64 { return m.Wasm })},
		{name: "  DOM (Blink heap, not counted)", unit: "MB", get: after(func(m memory) float64 { return m.Embedder })},
		{name: "  rows loaded", unit: "n", get: after(func(m memory) float64 { return float64(m.RowsInList) })},
		{name: "  row elements in the DOM", unit: "n", get: after(func(m memory) float64 { return float64(m.RowsInDOM) })},
		{name: "  load-mores that clicked", unit: "n", get: func(r appRun) (float64, bool) { return float64(r.Clicks), r.MemAfter != nil }},
		{name: "  load-mores lost (made again)", unit: "n", get: func(r appRun) (float64, bool) { return float64(r.Lost), r.MemAfter != nil }},
		{name: "  time for the load-mores", unit: "ms", get: func(r appRun) (float64, bool) {
			return float64(r.LoadMoreTime.Milliseconds()), r.MemAfter != nil
		}},
	}
	if l.name == "testers" {
		ms = append(ms,
			metric{name: "memory at 10,000 rows", unit: "MB", get: func(r appRun) (float64, bool) {
				if r.Mem10k == nil {
					return 0, false
				}
				return r.Mem10k.Total(), true
			}, goal: "≤ 1.0×", met: ratioAtMost(1.0), bench: "mem-10k-x"},
			metric{name: "  rows loaded then", unit: "n", get: func(r appRun) (float64, bool) {
				if r.Mem10k == nil {
					return 0, false
				}
				return float64(r.Mem10k.RowsInList), true
			}},
		)
	}
	return ms
}

func atMost(x float64) func(_, b float64) bool { return func(_, b float64) bool { return b <= x } }

// bootGoal is the goal of go.run → first render: the issue holds the
// testers page to it; the bundles page (more rows) is shown beside it.
func (l list) bootGoal(ms int) string {
	if l.name == "testers" {
		return fmt.Sprintf("Betaport ≤ %d ms", ms)
	}
	return ""
}

// bootRender is go.run → the first render in the DOM (Betaport only).
func bootRender(v func(appRun) probe) func(appRun) (float64, bool) {
	return func(r appRun) (float64, bool) {
		p := v(r)
		return p.Render - p.GoRun, p.GoRun >= 0 && p.Render >= 0
	}
}

// renderToInput is the first render (or the press, when it came later)
// → the click's answer on screen (Betaport only).
func renderToInput(v func(appRun) probe) func(appRun) (float64, bool) {
	return func(r appRun) (float64, bool) {
		p := v(r)
		return p.Answered - max(p.Render, p.Press), p.GoRun >= 0 && p.Render >= 0 && p.Answered >= 0
	}
}

type summary struct {
	n                int
	median, min, max float64
}

func summarize(xs []float64) summary {
	if len(xs) == 0 {
		return summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return summary{len(s), m, s[0], s[len(s)-1]}
}

func scale(unit string, v float64) float64 {
	switch unit {
	case "KB":
		return v / 1024
	case "MB":
		return v / (1 << 20)
	}
	return v
}

func format(unit string, s summary) string {
	if s.n == 0 {
		return "—"
	}
	prec := 0
	if unit == "KB" || unit == "MB" {
		prec = 1
	}
	f := func(v float64) string { return strconv.FormatFloat(scale(unit, v), 'f', prec, 64) }
	if s.n == 1 || s.min == s.max {
		return f(s.median)
	}
	return fmt.Sprintf("%s [%s–%s]", f(s.median), f(s.min), f(s.max))
}

// report prints the list's table and reports the goals' ratios.
func report(b *testing.B, l list, res map[string][]appRun) {
	b.Helper()
	var out strings.Builder
	fmt.Fprintf(&out, "\n== %s list: Betaport vs the React 19 + SWR (useSWRInfinite) reference, same API, data and origin\n", l.name)
	fmt.Fprintf(&out, "   %d runs of each, side by side (fresh browser context each; load-mores in the first %d); median [min–max]; ratio = Betaport / React+SWR medians\n",
		benchRuns, min(benchLoadMoreRuns, benchRuns))
	fmt.Fprintf(&out, "%-34s %-5s %-26s %-26s %-8s %-26s %s\n", "metric", "unit", betaport, reference, "ratio", hello+" (floor)", "goal")
	for _, m := range metrics(l) {
		vals := map[string][]float64{}
		for _, app := range apps {
			for _, r := range res[app] {
				if v, ok := m.get(r); ok {
					vals[app] = append(vals[app], v)
				}
			}
		}
		bp, ref := summarize(vals[betaport]), summarize(vals[reference])
		ratio, ratioText := 0.0, "—"
		if bp.n > 0 && ref.n > 0 && ref.median != 0 {
			ratio = bp.median / ref.median
			ratioText = fmt.Sprintf("%.2f×", ratio)
		}
		goal := ""
		if m.goal != "" && bp.n > 0 && (ref.n > 0 || m.betaportOnly) {
			verdict := "not met"
			if m.met(ratio, bp.median) {
				verdict = "met"
			}
			goal = m.goal + ": " + verdict
			if m.bench != "" && ref.n > 0 {
				b.ReportMetric(ratio, m.bench)
			}
		}
		floor := ""
		if m.floor {
			floor = format(m.unit, summarize(vals[hello]))
		}
		fmt.Fprintf(&out, "%-34s %-5s %-26s %-26s %-8s %-26s %s\n", m.name, m.unit, format(m.unit, bp), format(m.unit, ref), ratioText, floor, goal)
	}
	if bp := res[betaport]; len(bp) > 0 {
		m := bp[0].MemLoad
		fmt.Fprintf(&out, "Betaport's repeat visit on the wire: %s KB down (the goal: ≤ 5 KB). Memory = getHeapUsage's usedSize + every WebAssembly.Memory's buffer; "+
			"its backingStorageSize (%.1f MB) %s the wasm memory (%.1f MB).\n",
			format("KB", summarize(collect(bp, func(r appRun) float64 { return float64(r.Repeat.Wire.Down) }))),
			m.Backing/(1<<20), map[bool]string{true: "may include", false: "leaves out"}[m.WasmIncluded], m.Wasm/(1<<20))
		b.ReportMetric(summarize(collect(bp, func(r appRun) float64 { return float64(r.Repeat.Wire.Down) })).median/1024, "betaport-repeat-KB")
	}
	for _, app := range apps {
		if rs := res[app]; len(rs) > 0 {
			fmt.Fprintf(&out, "%s, run 1, repeat visit: %s\n", app, strings.Join(rs[0].Repeat.Net.List, "; "))
		}
	}
	b.ReportMetric(0, "ns/op") // the time of the whole run says nothing
	io.WriteString(os.Stdout, out.String())
}

func collect(rs []appRun, f func(appRun) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}
