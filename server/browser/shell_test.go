package browser_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// A person opens the home page, sees the extensions, clicks one and lands on
// its page, navigated by the app without reloading the page.
func TestOpenExtensionFromHome(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ctx := adminHome(t, m, d)
	waitLocation(t, ctx, m.URL()+"/")

	first := d.Extensions[0]
	link := chromedp.CSS(fmt.Sprintf(`#extensions a[href="/extensions/%d"]`, first.ID))
	if err := chromedp.Do(ctx, chromedp.WaitVisible(link)); err != nil {
		t.Fatalf("the home page does not list %q: %v", first.Name, err)
	}
	names, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#extensions a.card-link")].map(a => a.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	// The admin sees their own team's extensions: all but the last, which
	// belongs to the demo's other team.
	if len(names) != len(d.Extensions)-1 || names[0] != first.Name {
		t.Fatalf("home lists %q, want the team's %d demo extensions starting with %q", names, len(d.Extensions)-1, first.Name)
	}

	// A marker on window survives client-side navigation, not a reload.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(link),
		chromedp.WaitVisible(chromedp.CSS(`#extension-name`)),
	); err != nil {
		t.Fatalf("clicking %q: %v", first.Name, err)
	}
	name, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#extension-name`)))
	if err != nil || name != first.Name {
		t.Fatalf("extension page heading = %q, %v; want %q", name, err, first.Name)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || loc != fmt.Sprintf("%s/extensions/%d", m.URL(), first.ID) {
		t.Fatalf("location = %q, %v", loc, err)
	}
	same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__sameDocument === true`))
	if err != nil || !same {
		t.Fatalf("the click reloaded the page instead of navigating in the app (%v)", err)
	}
}
