package browser_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The bundles list loads its first page, loads the next on "Load more",
// and says when there is nothing more: app/fetch's infinite model through
// the go-app adapter, against the real API.
func TestBundlesListLoadsMore(t *testing.T) {
	m, d := startService(t)
	ext := d.Extensions[0] // 30 bundles in the small demo
	ctx := newTab(t)
	signIn(t, ctx, m.URL(), d.Admins[0].Email, d.Admins[0].Password)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))

	rows := func() []string {
		t.Helper()
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#bundle-rows tr")].map(r => r.dataset.bundle)`))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#load-more-bundles`))); err != nil {
		t.Fatal(err)
	}
	first := rows()
	if len(first) != 20 || first[0] != "30" || first[19] != "11" {
		t.Fatalf("first page shows bundles %v, want 30 down to 11", first)
	}
	badge, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#bundle-rows tr[data-bundle="30"] .badge`)))
	if badge != "current" {
		t.Fatalf("the newest bundle's badge = %q, want current", badge)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#load-more-bundles`)),
		chromedp.WaitVisible(chromedp.CSS(`#bundles-end`)),
	); err != nil {
		t.Fatal(err)
	}
	all := rows()
	if len(all) != 30 || all[29] != "1" {
		t.Fatalf("after load more the list shows %d bundles ending at %v, want 30 down to 1", len(all), all[len(all)-1:])
	}
	total, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#bundles-total`)))
	if !strings.Contains(total, "30 loaded") {
		t.Fatalf("total = %q, want the sum of the page lengths", total)
	}
	if err := chromedp.Do(ctx, chromedp.WaitNotPresent(chromedp.CSS(`#load-more-bundles`))); err != nil {
		t.Fatal(err)
	}
}
