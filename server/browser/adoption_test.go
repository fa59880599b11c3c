package browser_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// An admin opens an extension whose installed copies have been checking
// for updates from several versions over the last days: the Adoption
// section charts each version's share per day (an SVG drawn in the SVG
// namespace, every segment labelled), says what share of the last 24
// hours runs the current build, and lists the same numbers in a table. A
// screenshot of the section is kept as a test artifact on every run.
func TestAdoptionChart(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := context.Background()
	ext, err := m.Store.FindExtension(ctx, d.Extensions[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	current, err := m.Store.FindBundle(ctx, ext.ID, ext.CurrentBundle)
	if err != nil {
		t.Fatal(err)
	}
	older, err := m.Store.FindBundle(ctx, ext.ID, ext.CurrentBundle-1)
	if err != nil {
		t.Fatal(err)
	}
	u, err := m.Publish.Updates(ctx, ext)
	if err != nil {
		t.Fatal(err)
	}

	// Chromium's checks, over HTTP, at hours the test chooses: today and
	// two days ago.
	now := time.Now().UTC()
	var clock atomic.Int64
	m.Publish.Adoption.Now = func() time.Time { return time.Unix(0, clock.Load()) }
	check := func(ago time.Duration, version string, n int) {
		t.Helper()
		clock.Store(now.Add(-ago).UnixNano())
		x := url.Values{"id": {u.ChromeID}, "v": {version}, "installsource": {"notfromwebstore"}, "uc": {""}}
		for range n {
			resp, err := http.Get(u.UpdateURL + "?os=linux&prod=chromiumcrx&x=" + url.QueryEscape(x.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("update check of %s answered %d", version, resp.StatusCode)
			}
		}
	}
	check(0, current.Version, 6)
	check(0, older.Version, 3)
	check(0, "0.0.1-never-served", 1) // counted as "other"
	check(48*time.Hour, older.Version, 4)
	check(48*time.Hour, current.Version, 1)

	tab := adminTab(t, m, d)
	openApp(t, tab, fmt.Sprintf("%s/extensions/%d/adoption", m.URL(), ext.ID))
	waitJS(t, tab, `document.querySelectorAll("#adoption-chart svg g[data-version]").length === 5`)

	// The SVG is SVG: made in its namespace, so it draws.
	if !evalJS[bool](t, tab, `(() => {
		const svg = document.querySelector("#adoption-chart svg");
		const rect = svg.querySelector("g[data-version] rect");
		return svg.namespaceURI === "http://www.w3.org/2000/svg" && rect.namespaceURI === svg.namespaceURI &&
			rect.getBBox().width > 0 && svg.getBoundingClientRect().height > 100;
	})()`) {
		t.Fatal("the chart's elements are not SVG elements that draw")
	}
	today, twoDaysAgo := now.Format("Jan 2"), now.AddDate(0, 0, -2).Format("Jan 2")
	segments := evalJS[[]string](t, tab, `[...document.querySelectorAll("#adoption-chart svg g[data-version]")].map(g =>
		g.dataset.day + " " + g.dataset.version + " " + g.dataset.percent + "% [" + [...g.querySelectorAll("text")].map(t => t.textContent).join(" ") + "]")`)
	want := []string{
		twoDaysAgo + " " + current.Version + " 20% [" + current.Version + " 20%]",
		twoDaysAgo + " " + older.Version + " 80% [" + older.Version + " 80%]",
		today + " " + current.Version + " 60% [" + current.Version + " 60%]",
		today + " " + older.Version + " 30% [" + older.Version + " 30%]",
		today + " other 10% [10%]",
	}
	if strings.Join(segments, "|") != strings.Join(want, "|") {
		t.Fatalf("chart segments (day, version, share, labels):\n got %q\nwant %q", segments, want)
	}
	// Readable without colour: each version its own pattern, named in the
	// legend.
	legend := evalJS[[]string](t, tab, `[...document.querySelectorAll("#adoption-chart g[data-legend]")].map(g =>
		g.textContent + " " + g.querySelector("rect").getAttribute("fill"))`)
	if len(legend) != 3 || !strings.HasPrefix(legend[0], current.Version+" url(#adoption-pattern-") ||
		!strings.HasPrefix(legend[2], "other url(#adoption-pattern-") || legend[0][len(current.Version):] == legend[1][len(older.Version):] {
		t.Fatalf("legend %q: want the current version, the older one and other, each with its own pattern", legend)
	}
	if got := text(t, tab, "#adoption-current"); !strings.HasPrefix(got, "60% on the current build ("+current.Version+")") {
		t.Fatalf("the current-build line reads %q", got)
	}
	rows := evalJS[[]string](t, tab, `[...document.querySelectorAll("#adoption-table tbody tr")].map(r =>
		[...r.cells].map(c => c.textContent).join(" "))`)
	wantRows := []string{
		today + " " + current.Version + " 6 60%",
		today + " " + older.Version + " 3 30%",
		today + " other 1 10%",
	}
	if len(rows) != 3+1+2+4 || strings.Join(rows[:3], "|") != strings.Join(wantRows, "|") {
		t.Fatalf("table rows:\n got %q\nwant %q first, then a row per day without checks and two days ago's", rows, wantRows)
	}
	if got := rows[2+1+1]; got != twoDaysAgo+" "+current.Version+" 1 20%" {
		t.Fatalf("two days ago's first row: %q (rows %q)", got, rows)
	}
	headers := evalJS[string](t, tab, `[...document.querySelectorAll("#adoption-table thead th")].map(c => c.textContent).join(",")`)
	if headers != "Day,Version,Checks,Share" {
		t.Fatalf("table headers %q", headers)
	}

	checkAccessible(t, tab, "the adoption chart and table")

	// The chart, kept whatever the outcome.
	png, err := chromedp.Run(tab, chromedp.Screenshot(chromedp.CSS("#adoption")))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(artifactsDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(artifactsDir(), "TestAdoptionChart-chart.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("the adoption chart: %s", path)

	// On a phone (360 and 320 px) the page does not scroll sideways: the
	// table wraps its cells, never its headers mid-word, and the chart
	// keeps legible labels, scrolling sideways in its own box (issue 28:
	// it shrank them to a few pixels).
	for _, width := range []int64{360, 320} {
		if err := chromedp.Do(tab, chromedp.EmulateViewport(width, 800)); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tab, fmt.Sprintf(`innerWidth === %d`, width))
		narrow := evalJS[[]string](t, tab, `(() => {
			const out = [];
			if (document.scrollingElement.scrollWidth > innerWidth) out.push("the page scrolls sideways");
			for (const sel of ["#adoption-chart", "#adoption-table"]) {
				if (document.querySelector(sel).getBoundingClientRect().right > innerWidth) out.push(sel + " is wider than the window");
			}
			for (const th of document.querySelectorAll("#adoption-table thead th")) {
				const r = document.createRange();
				r.selectNodeContents(th);
				if (r.getClientRects().length > 1 || th.scrollWidth > th.clientWidth + 1) out.push("the header " + th.textContent + " breaks");
			}
			for (const text of document.querySelectorAll("#adoption-chart svg text")) {
				const h = text.getBoundingClientRect().height;
				if (h > 0 && h < 10) { out.push("a chart label is " + h.toFixed(1) + " px tall: " + text.textContent); break; }
			}
			return out;
		})()`)
		for _, p := range narrow {
			t.Errorf("at %d px: %s", width, p)
		}
	}
	checkAccessible(t, tab, "the adoption chart and table on a phone")
}

// An extension nobody has installed says so, under the same heading.
func TestAdoptionEmpty(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	tab := adminTab(t, m, d)
	openApp(t, tab, fmt.Sprintf("%s/extensions/%d/adoption", m.URL(), d.Extensions[0].ID))
	waitJS(t, tab, `document.querySelector("#adoption-empty") !== null`)
	if got := text(t, tab, "#adoption-heading"); got != "Adoption" {
		t.Fatalf("heading %q", got)
	}
	if got := text(t, tab, "#adoption-empty"); !strings.HasPrefix(got, "No update checks yet.") || !strings.Contains(got, "within a few hours") {
		t.Fatalf("empty view %q", got)
	}
	if evalJS[int](t, tab, `document.querySelectorAll("#adoption-chart, #adoption-table").length`) != 0 {
		t.Fatal("a chart or table with no checks")
	}
}
