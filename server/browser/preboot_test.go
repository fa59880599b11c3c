package browser_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/demo"
)

// pressCase is a button of the server's page pressed before boot, and how
// to tell the app made the press, once.
type pressCase struct {
	name, path, button string
	answered           string // JS: the app made the press
	once               string // JS: it made it once
}

// rowPresses are a row's first button on the bundles list (of extension
// bundles) and on the testers list (of extension testers): each opens its
// row's question.
func rowPresses(bundles, testers int64) []pressCase {
	return []pressCase{
		{"bundles row", fmt.Sprintf("/extensions/%d", bundles),
			`[...document.querySelectorAll("#bundle-rows [data-bundle] button.rollback")].find(b => !b.hidden)`,
			`document.activeElement?.classList.contains("confirm-rollback")`,
			`document.querySelectorAll("#bundle-rows .confirm-pop:not([hidden])").length === 1`},
		{"testers row", fmt.Sprintf("/extensions/%d/testers", testers),
			`document.querySelector("#testers [data-tester] button.revoke")`,
			`document.activeElement?.classList.contains("confirm-revoke")`,
			`document.querySelectorAll("#testers .confirm-pop").length === 1`},
	}
}

// serverPageHeld opens c's page in an admin's tab with the app's wasm
// held back (release lets it through), and finds c's button on the
// server's page: its centre, x and y.
func serverPageHeld(t *testing.T, m *cli.Main, d *demo.Result, c pressCase) (ctx context.Context, release func(), x, y float64) {
	t.Helper()
	ctx = adminTab(t, m, d)
	release = holdRequests(t, ctx, "*/web/app.wasm*")
	if err := chromedp.Do(ctx, chromedp.Navigate(m.URL()+c.path)); err != nil {
		t.Fatal(err)
	}
	x, y = bbkFind(t, ctx, "the server's button", c.button)
	return ctx, release, x, y
}

// TestPressesBeforeBootAreKept: a person presses a button of the server's
// page 0, 100 and 300 ms after it shows, while the app still loads (its
// wasm held back, so the press surely comes first): once the app runs,
// the press is made, once. A row's first button opens its question; Load
// more loads the next page. Nothing pressed while the app loads is lost.
func TestPressesBeforeBootAreKept(t *testing.T) {
	t.Parallel()
	m, d := serve(t, 250, nil) // the third extension has a second page of testers
	ext, many := d.Extensions[0], d.Extensions[2]
	cases := append(rowPresses(ext.ID, many.ID), pressCase{
		"testers load more", fmt.Sprintf("/extensions/%d/testers", many.ID),
		`document.getElementById("load-more-testers")`,
		`+document.getElementById("testers").dataset.count > 100`,
		`+document.getElementById("testers").dataset.count <= 200`})
	for _, c := range cases {
		for _, after := range []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond} {
			t.Run(fmt.Sprintf("%s %d ms", c.name, after.Milliseconds()), func(t *testing.T) {
				t.Parallel()
				ctx, release, x, y := serverPageHeld(t, m, d, c)
				time.Sleep(after) // when the hand presses, after the button shows
				if err := chromedp.Do(ctx,
					chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y),
					chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x, y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
					chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, x, y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
				); err != nil {
					t.Fatal(err)
				}
				if !evalJS[bool](t, ctx, `!!document.querySelector('.shell[data-app="server"]') && !document.querySelector('.shell[data-app="client"]')`) {
					t.Fatal("the app ran before the press although its wasm was held: this test would not see a press before boot")
				}
				if !evalJS[bool](t, ctx, fmt.Sprintf(`(%s).classList.contains("kept-press")`, c.button)) {
					t.Error("the pressed button does not show that the press was taken")
				}
				release()
				waitJS(t, ctx, `!!document.querySelector('.shell[data-app="client"]')`)
				waitJS(t, ctx, c.answered)
				bbFrames(t, ctx)
				if !evalJS[bool](t, ctx, c.once) {
					t.Errorf("the press made before boot was made more than once (%s is false)", c.once)
				}
			})
		}
	}
}

// TestPressSpanningTheMountIsMade: the pointer goes down on a server
// button while the app loads and comes up after the app's first mount has
// replaced the page under it (a hand's press lasts long enough for that).
// The browser makes no click of it, down and up having fallen on different
// elements; the press is made all the same, once.
func TestPressSpanningTheMountIsMade(t *testing.T) {
	t.Parallel()
	m, d := serve(t, 250, nil)
	ext, many := d.Extensions[0], d.Extensions[2]
	for _, c := range rowPresses(ext.ID, many.ID) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, release, x, y := serverPageHeld(t, m, d, c)
			if err := chromedp.Do(ctx,
				chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y),
				chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x, y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
			); err != nil {
				t.Fatal(err)
			}
			release()
			waitJS(t, ctx, `!!document.querySelector('.shell[data-app="client"]')`)
			// The pointer is still down; the button under it is the app's.
			if !evalJS[bool](t, ctx, fmt.Sprintf(`(() => { const b = %s; return !!b && !b.closest('[data-app="server"]') && b.contains(document.elementFromPoint(%f, %f)); })()`, c.button, x, y)) {
				t.Fatal("after the mount the app's button is not under the pointer: the test would not release on it")
			}
			if err := chromedp.Do(ctx,
				chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, x, y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
			); err != nil {
				t.Fatal(err)
			}
			waitJS(t, ctx, c.answered)
			bbFrames(t, ctx)
			bbFrames(t, ctx)
			if !evalJS[bool](t, ctx, c.once) {
				t.Errorf("the press was made more than once (%s is false)", c.once)
			}
		})
	}
}
