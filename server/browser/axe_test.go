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

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
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
		{"/no/such/page", `h1`, "an unknown address"},
	}
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

	// The key's confirmation, opened with the keyboard.
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/settings", m.URL(), ext.ID))
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#download-key`)),
		chromedp.WaitVisible(chromedp.CSS(`#key-confirm`)),
	); err != nil {
		t.Fatal(err)
	}
	checkAccessible(t, ctx, "settings, confirming a new key")

	// A list loading: the server's answer is held (DevTools' Fetch domain)
	// while the page shows that it loads.
	held := make(chan fetch.RequestID, 8)
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*fetch.EventRequestPaused); ok {
			held <- e.RequestID
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/api/extensions/*/testers?*q=load*"}}}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(fmt.Sprintf("%s/extensions/%d/testers?q=load", m.URL(), ext.ID)),
		chromedp.WaitVisible(chromedp.CSS(`.state-loading`)),
	); err != nil {
		t.Fatal(err)
	}
	checkAccessible(t, ctx, "testers loading")
	// Let the held requests go, then no more are held.
	for len(held) > 0 {
		if _, err := chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: <-held}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := chromedp.Call(ctx, fetch.Disable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
}

func atoiOr(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
