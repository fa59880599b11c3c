package browser_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// axe-core (npm) checks each page and state the person can reach: zero
// violations. `make axe` installs it into .cache/axe (make test does).

var (
	axeOnce   sync.Once
	axeSource string
	axeErr    error
)

func axeScript(t *testing.T) string {
	t.Helper()
	axeOnce.Do(func() {
		var b []byte
		b, axeErr = os.ReadFile(filepath.Join("..", "..", ".cache", "axe", "node_modules", "axe-core", "axe.min.js"))
		axeSource = string(b)
	})
	if axeErr != nil {
		t.Fatalf("the accessibility checks need axe-core: run `make axe` (make test does): %v", axeErr)
	}
	return axeSource
}

type axeViolation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"`
}

// checkAccessible runs axe-core on the tab's page as it is now and fails
// the test, naming state, for every violation.
func checkAccessible(t *testing.T, ctx context.Context, state string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof axe === "object" || (() => { `+axeScript(t)+`; return true })()`)); err != nil {
		t.Fatalf("%s: loading axe-core: %v", state, err)
	}
	type result struct {
		Passes     int            `json:"passes"`
		Violations []axeViolation `json:"violations"`
	}
	r, err := chromedp.Run(ctx, chromedp.Evaluate[result](`axe.run(document).then(r => ({passes: r.passes.length,
		violations: r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map(n => n.target.join(" ")).slice(0, 5)}))}))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: running axe-core: %v", state, err)
	}
	if r.Passes == 0 {
		t.Fatalf("%s: axe-core checked nothing", state)
	}
	vs := r.Violations
	for _, v := range vs {
		t.Errorf("%s: %s (%s): %s at %s", state, v.ID, v.Impact, v.Help, strings.Join(v.Targets, "; "))
	}
}

// TestPagesAreAccessible walks the pages an admin and a tester reach, in
// their states, through real input, and runs axe-core on each.
func TestPagesAreAccessible(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := newTab(t)
	openApp(t, ctx, m.URL()+"/login")
	checkAccessible(t, ctx, "sign-in page")

	admin := d.Admins[0]
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#email`), admin.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), "wrong"+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#login-error`)),
	); err != nil {
		t.Fatal(err)
	}
	checkAccessible(t, ctx, "sign-in page after a wrong password")

	signIn(t, ctx, m.URL(), admin.Email, admin.Password)
	checkAccessible(t, ctx, "home")

	ext := d.Extensions[0]
	pages := []struct{ path, ready, state string }{
		{fmt.Sprintf("/extensions/%d", ext.ID), `[data-bundle]`, "bundles"},
		{fmt.Sprintf("/extensions/%d/pages", ext.ID), `#classic-rows [data-bundle]`, "bundles page by page"},
		{fmt.Sprintf("/extensions/%d/testers", ext.ID), `[data-tester]`, "testers"},
		{fmt.Sprintf("/extensions/%d/testers?q=nobody-matches", ext.ID), `#testers-empty`, "testers, nothing matches"},
		{fmt.Sprintf("/extensions/%d/settings", ext.ID), `h1`, "settings"},
		{fmt.Sprintf("/extensions/%d/adoption", ext.ID), `#adoption .adoption-body`, "adoption"},
		{"/no/such/page", `h1`, "an unknown address"},
	}
	// A report with a screenshot, for the feedback list and its viewer.
	report := fbReport(t, m, ext.ID)
	pages = append(pages,
		struct{ path, ready, state string }{fmt.Sprintf("/extensions/%d/feedback", ext.ID), `[data-report]`, "feedback"},
		struct{ path, ready, state string }{fmt.Sprintf("/extensions/%d/feedback/%d", ext.ID, report), `#report-shot-image`, "a report opened"},
	)
	for _, p := range pages {
		openApp(t, ctx, m.URL()+p.path)
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(p.ready))); err != nil {
			t.Fatalf("%s: %v", p.state, err)
		}
		checkAccessible(t, ctx, p.state)
	}

	// The bundles list reads as a table: its size, its headers, and links
	// that say which bundle they download.
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	type table struct {
		RowCount string
		Headers  []string
		Link     string
		Bundle   string
	}
	got, err := chromedp.Run(ctx, chromedp.Poll[table](`(() => {
		const t = document.querySelector("#bundles [role=table]"), row = t?.querySelector("[data-bundle]");
		return row && {RowCount: t.getAttribute("aria-rowcount"), Headers: [...t.querySelectorAll("[role=columnheader]")].map(h => h.textContent),
			Link: row.querySelector("a").getAttribute("aria-label"), Bundle: row.dataset.bundle};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	count, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("bundle-rows").dataset.count`))
	if want := fmt.Sprint(atoiOr(count) + 1); got.RowCount != want || strings.Join(got.Headers, ",") != "#,Version,Size,SHA-256,Published,Actions" || got.Link != "Download bundle #"+got.Bundle {
		t.Errorf("the bundles table reads %+v, want %s rows (with the header), named columns, links naming their bundle", got, want)
	}

	// A key's Revoke, asking first.
	setKey(t, m.Store, ext.ID)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/settings", m.URL(), ext.ID))
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#keys [data-key] button.revoke`)),
		chromedp.WaitVisible(chromedp.CSS(`#keys .confirm-revoke`)),
	); err != nil {
		t.Fatal(err)
	}
	checkAccessible(t, ctx, "settings, confirming a key's revoke")

	// A list loading: the server's answer is held (DevTools' Fetch domain)
	// while the page shows that it loads.
	release := holdRequests(t, ctx, "*/api/extensions/*/testers?*q=load*")
	if err := chromedp.Do(ctx,
		chromedp.Navigate(fmt.Sprintf("%s/extensions/%d/testers?q=load", m.URL(), ext.ID)),
		chromedp.WaitVisible(chromedp.CSS(`.state-loading`)),
	); err != nil {
		t.Fatal(err)
	}
	checkAccessible(t, ctx, "testers loading")
	release()
}

func atoiOr(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// TestNarrowAndZoomedPagesReflow: at 320 CSS px (a phone) and at 200% zoom
// of a 1280 px window (640 CSS px, two device pixels each), every page
// reflows: nothing scrolls sideways, no text leaves the window, and no
// list row cuts its text.
func TestNarrowAndZoomedPagesReflow(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := adminTab(t, m, d)
	ext := d.Extensions[0]
	sizes := []struct {
		name   string
		width  int64
		factor float64
	}{{"320 px", 320, 1}, {"200% zoom", 640, 2}}
	check := func(path, ready string) {
		t.Helper()
		for _, size := range sizes {
			state := size.name + " " + path
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(size.width, 800, chromedp.EmulateScale(size.factor))); err != nil {
				t.Fatal(err)
			}
			openApp(t, ctx, m.URL()+path)
			if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(ready))); err != nil {
				t.Fatalf("%s: %v", state, err)
			}
			problems, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
				const out = [], w = innerWidth;
				if (document.scrollingElement.scrollWidth > w) out.push("the page scrolls sideways: " + document.scrollingElement.scrollWidth + " > " + w);
				for (const el of document.querySelectorAll("main *, .topbar *")) {
					if (![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
					const r = el.getBoundingClientRect();
					if (r.width && (r.right > w + 1 || r.left < -1) && !el.closest(".grid-head, .visually-hidden")) out.push("text leaves the window: " + el.textContent.trim().slice(0, 40));
				}
				for (const row of document.querySelectorAll(".row")) {
					if (row.scrollHeight > row.clientHeight + 1) out.push("a row cuts its text: " + row.textContent.trim().slice(0, 60));
					for (const cell of row.children) if (cell.scrollWidth > cell.clientWidth + 1) out.push("a cell cuts its text: " + cell.textContent.trim().slice(0, 40));
				}
				return out.slice(0, 8);
			})()`))
			if err != nil {
				t.Fatal(err)
			}
			for _, problem := range problems {
				t.Errorf("%s: %s", state, problem)
			}
		}
	}
	check("/", `.card`)
	check(fmt.Sprintf("/extensions/%d", ext.ID), `[data-bundle]`)
	check(fmt.Sprintf("/extensions/%d/pages", ext.ID), `#classic-rows [data-bundle]`)
	check(fmt.Sprintf("/extensions/%d/testers", d.Extensions[1].ID), `[data-tester]`)
	check(fmt.Sprintf("/extensions/%d/settings", ext.ID), `#settings-facts`)
	report := fbReport(t, m, ext.ID)
	check(fmt.Sprintf("/extensions/%d/feedback", ext.ID), `[data-report]`)
	check(fmt.Sprintf("/extensions/%d/feedback/%d", ext.ID, report), `#report-shot-image`)
	// The same tab as a tester (the invite link signs the browser in).
	openApp(t, ctx, m.URL()+d.TesterLink)
	waitLocation(t, ctx, m.URL()+"/builds")
	check("/builds", `[data-build]`)
}
