package browserbench

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	bp "github.com/betaport/betaport/app/betaport"
)

// feedbackList is the admins' feedback page (issue 32), measured as the
// other lists are: it has no reference page, so it is measured beside
// Betaport's testers list in the same run (its ratio is feedback /
// testers).
var feedbackList = list{"feedback", func(app, base string, ext int64) listPage {
	return listPage{url: fmt.Sprintf("%s/extensions/%d/feedback", base, ext), rows: "#reports [data-report]", ready: betaportReady,
		countJS: `+(document.getElementById("reports")?.dataset.count ?? -1)`, buttonID: "load-more-feedback",
		press: "#reports [data-report] a.report-link", answer: "#report-viewer", pressOpens: true}
}}

// benchReports is how many reports the first extension gets: enough for
// 100 "Load more" at 50 a page (End alone loads some pages too).
const benchReports = 7_000

// addReports gives extension id n reports from its testers, newest last,
// a third of them with a screenshot's record (their bytes are not read by
// the list).
func addReports(tb testing.TB, s bp.Store, id int64, n int) {
	tb.Helper()
	ctx := context.Background()
	started := time.Now()
	var testers []*bp.Tester
	for before := int64(0); len(testers) < 200; {
		page, err := s.FindTesters(ctx, bp.TesterFilter{ExtensionID: id, BeforeID: before, Limit: 100})
		if err != nil || len(page) == 0 {
			tb.Fatalf("the extension's testers: %v (%d)", err, len(testers))
		}
		testers = append(testers, page...)
		before = page[len(page)-1].ID
	}
	for i := range n {
		f := &bp.Feedback{ExtensionID: id, TesterID: testers[i%len(testers)].ID, BundleNumber: int64(1 + i%20), Version: "1.0.0",
			Text: fmt.Sprintf("Report %d: the popup is blank after the update.\nSteps: open it twice.", i), Browser: "Chrome 156", OS: "Linux",
			Source: bp.FeedbackFromBuildsPage}
		if i%3 == 0 {
			f.Screenshots = []bp.Screenshot{{Number: 1, Type: "image/png", Width: 1280, Height: 800, Size: 1,
				BlobKey: bp.FeedbackKey(id, fmt.Sprintf("bench%d", i), 1, "image/png")}}
		}
		if err := s.CreateFeedback(ctx, f); err != nil {
			tb.Fatal(err)
		}
	}
	tb.Logf("%d reports made in %v", n, time.Since(started).Round(time.Millisecond))
}

// BenchmarkBrowserFeedbackList measures the feedback list as the other
// lists are measured (a cold and a repeat visit, then 100 load-mores and
// the memory after them), beside the testers list in the same browser and
// run, and prints what the issue asks of it: the DOM it keeps and the
// memory after 100 load-mores, with the testers list's figures beside.
func BenchmarkBrowserFeedbackList(b *testing.B) {
	if os.Getenv(enableEnv) != "1" {
		fmt.Printf("BenchmarkBrowserFeedbackList: skipped; `make bench-browser` runs it (%s=1)\n", enableEnv)
		b.Skipf("the browser benchmark runs with `make bench-browser` (which sets %s=1)", enableEnv)
	}
	e := setup(b)
	ext := e.svc.data.Extensions[0].ID
	addReports(b, e.svc.main.Store, ext, benchReports)
	testers := lists[1]
	runs := max(1, min(benchLoadMoreRuns, benchRuns))
	res := map[string][]appRun{}
	for run := range runs {
		order := []list{feedbackList, testers}
		if run%2 == 1 {
			order = []list{testers, feedbackList}
		}
		for _, l := range order {
			r, err := measureApp(e, l, betaport, l.page(betaport, e.svc.url, ext), true)
			if err != nil {
				b.Fatalf("%s list, run %d: %v", l.name, run+1, err)
			}
			res[l.name] = append(res[l.name], r)
			fmt.Fprintf(os.Stderr, "browserbench: %s run %d/%d: cold visible %4.0f ms, memory at load %5.1f MB%s\n",
				l.name, run+1, runs, r.Cold.Probe.Visible, r.MemLoad.Total()/(1<<20), loadMoreNote(r))
		}
	}
	fmt.Printf("\nThe feedback list beside the testers list (Betaport both), %d runs, medians [min–max]:\n", runs)
	fmt.Printf("%-40s %-24s %-24s %s\n", "", "feedback", "testers", "feedback / testers")
	for _, m := range []struct {
		name, unit string
		get        func(appRun) float64
	}{
		{"cold: first row visible", "ms", func(r appRun) float64 { return r.Cold.Probe.Visible }},
		{"repeat: first row visible", "ms", func(r appRun) float64 { return r.Repeat.Probe.Visible }},
		{"memory at load (JS heap + wasm)", "MB", func(r appRun) float64 { return r.MemLoad.Total() }},
		{fmt.Sprintf("memory after %d load-mores", benchLoadMores), "MB", func(r appRun) float64 { return r.MemAfter.Total() }},
		{"  JS heap used", "MB", func(r appRun) float64 { return r.MemAfter.JSHeapUsed }},
		{"  wasm linear memory", "MB", func(r appRun) float64 { return r.MemAfter.Wasm }},
		{"  DOM (Blink heap)", "MB", func(r appRun) float64 { return r.MemAfter.Embedder }},
		{"  elements in the DOM", "n", func(r appRun) float64 { return float64(r.MemAfter.DOMElements) }},
		{"  row elements in the DOM", "n", func(r appRun) float64 { return float64(r.MemAfter.RowsInDOM) }},
		{"  rows loaded", "n", func(r appRun) float64 { return float64(r.MemAfter.RowsInList) }},
		{"  time for the load-mores", "ms", func(r appRun) float64 { return float64(r.LoadMoreTime.Milliseconds()) }},
	} {
		f, t := summarize(collect(res["feedback"], m.get)), summarize(collect(res["testers"], m.get))
		ratio := "—"
		if t.median > 0 {
			ratio = fmt.Sprintf("%.2f", f.median/t.median)
		}
		fmt.Printf("%-40s %-24s %-24s %s\n", m.name, format(m.unit, f), format(m.unit, t), ratio)
	}
	if f := res["feedback"]; len(f) > 0 && f[0].MemAfter != nil {
		b.ReportMetric(float64(f[0].MemAfter.DOMElements), "feedback-dom-elements")
	}
}
