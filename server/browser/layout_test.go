package browser_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestListRowsOnScreenAt1280x800: on a 1280×800 window, each list's rows
// are on screen once the app has booted: the list comes first on its page,
// and secondary sections (adoption has a tab of its own) do not push it
// below the fold. Rows only some scrolling away are rows a person opening
// the page does not see.
func TestListRowsOnScreenAt1280x800(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	for _, c := range []struct {
		name   string
		tester bool // the page is a tester's
		path   string
		row    string
	}{
		{"bundles", false, fmt.Sprintf("/extensions/%d", ext.ID), "#bundle-rows [data-bundle]"},
		{"page by page", false, fmt.Sprintf("/extensions/%d/pages", ext.ID), "#classic-rows [data-bundle]"},
		{"testers", false, fmt.Sprintf("/extensions/%d/testers", ext.ID), "#testers [data-tester]"},
		{"builds", true, "/builds", "[data-build]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var ctx context.Context
			if c.tester {
				ctx = newTab(t)
				openApp(t, ctx, m.URL()+d.TesterLink)
			} else {
				ctx = adminTab(t, m, d)
			}
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
				t.Fatal(err)
			}
			openApp(t, ctx, m.URL()+c.path)
			waitJS(t, ctx, fmt.Sprintf(`document.querySelectorAll(%q).length >= 3`, c.row))
			// Rows wholly inside the viewport, read once the page has
			// settled (two frames after the rows were there).
			bbFrames(t, ctx)
			seen := evalJS[int](t, ctx, fmt.Sprintf(`[...document.querySelectorAll(%q)].filter(r => {
				const b = r.getBoundingClientRect(); return b.height > 0 && b.top >= 0 && b.bottom <= innerHeight; }).length`, c.row))
			if seen < 3 {
				t.Errorf("%s at 1280×800: %d rows on screen after boot, want at least 3; the first row's top is at %v px",
					c.path, seen, evalJS[float64](t, ctx, fmt.Sprintf(`document.querySelector(%q).getBoundingClientRect().top`, c.row)))
			}
		})
	}
}

// TestListRowsOnScreenWithChannels: with more than one channel, the
// bundles page's upload panel picks one and its facts list them, and the
// testers page filters and invites by channel; the lists still start on
// screen at 1280×800.
func TestListRowsOnScreenWithChannels(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	if _, err := m.Store.CreateChannel(t.Context(), ext.ID, "internal", "test"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path, row, control string
	}{
		{"bundles", fmt.Sprintf("/extensions/%d", ext.ID), "#bundle-rows [data-bundle]", "#upload-channel"},
		{"testers", fmt.Sprintf("/extensions/%d/testers", ext.ID), "#testers [data-tester]", "#tester-channel"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := adminTab(t, m, d)
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
				t.Fatal(err)
			}
			openApp(t, ctx, m.URL()+c.path)
			// The channel's controls are there: the page knows the channels.
			waitJS(t, ctx, fmt.Sprintf(`document.querySelectorAll(%q).length >= 3 && !!document.querySelector(%q)`, c.row, c.control))
			bbFrames(t, ctx)
			seen := evalJS[int](t, ctx, fmt.Sprintf(`[...document.querySelectorAll(%q)].filter(r => {
				const b = r.getBoundingClientRect(); return b.height > 0 && b.top >= 0 && b.bottom <= innerHeight; }).length`, c.row))
			if seen < 3 {
				t.Errorf("%s with two channels at 1280×800: %d rows on screen, want at least 3; the first row's top is at %v px",
					c.path, seen, evalJS[float64](t, ctx, fmt.Sprintf(`document.querySelector(%q).getBoundingClientRect().top`, c.row)))
			}
		})
	}
}
