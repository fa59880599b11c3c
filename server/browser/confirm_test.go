package browser_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/betaport/betaport/app/betaport"
)

// doubleClickAt double-clicks at (x, y) as a mouse does: it moves there,
// then two presses and releases, the second counted as the second click.
// rowPx is a list row's height (web/app.css).
const rowPx = 44

func doubleClickAt(t *testing.T, ctx context.Context, x, y float64) {
	t.Helper()
	do(t, ctx,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x, y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, x, y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x, y, chromedp.ButtonLeft, chromedp.ClickCount(2)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, x, y, chromedp.ButtonLeft, chromedp.ClickCount(2)))
}

// waitListQuiet waits until the list whose rows are rowsID has done what
// opening it does (no read under way, no page being added) and the page
// has drawn it: a click then lands on the rows the app answers, as a
// person's does once the page looks still. (A double-click made while
// the list added its second page was lost under a busy CI machine.)
func waitListQuiet(t *testing.T, ctx context.Context, rowsID string) {
	t.Helper()
	waitJS(t, ctx, fmt.Sprintf(`(() => { const s = document.getElementById(%q)?.closest("[data-validating]");
		return !!s && s.dataset.validating === "false" && s.dataset.loadingMore === "false" })()`, rowsID))
	bbFrames(t, ctx)
}

// TestDoubleClickOnRollBackDoesNotRollBack: a double-click on "Roll back
// to #N" (issue 28: its second click confirmed the rollback) asks and
// nothing more; the question's Yes is not where the button was, the
// button is still under the pointer, and the focus is on Yes, which a
// press rolls back once it shows as pressable.
func TestDoubleClickOnRollBackDoesNotRollBack(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	last := lastBundle(t, m.Store, ext.ID)
	target := last - 2
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	row := fmt.Sprintf(`#bundle-rows [data-bundle="%d"]`, target)
	button := fmt.Sprintf(`document.querySelector('%s .rollback')`, row)
	waitJS(t, ctx, button+` !== null`)
	waitListQuiet(t, ctx, "bundle-rows")
	x, y := bbkFind(t, ctx, "the button that asks", button)

	doubleClickAt(t, ctx, x, y)
	waitJS(t, ctx, `document.activeElement?.classList.contains("confirm-rollback")`)
	// Read once the Yes takes a press: a second click it had taken would
	// have rolled back by then.
	waitJS(t, ctx, yesReady)
	if n := lastBundle(t, m.Store, ext.ID); n != last {
		t.Fatalf("a double-click on Roll back published #%d", n)
	}
	if under := evalJS[string](t, ctx, fmt.Sprintf(`document.elementFromPoint(%f, %f)?.closest("button")?.textContent ?? ""`, x, y)); under != fmt.Sprintf("Roll back to #%d", target) {
		t.Errorf("under the pointer after the double-click is %q, want the Roll back button that asked", under)
	}

	// The person reads it and presses Yes: rolled back.
	yes := fmt.Sprintf(`document.querySelector('%s .confirm-rollback')`, row)
	yx, yy := bbkFind(t, ctx, "Yes", yes)
	if yy > y-rowPx/2 && yy < y+rowPx/2 {
		t.Errorf("the question's Yes is at y %.0f, the button that asked at %.0f: want it off the row (under it, or above it low on the screen)", yy, y)
	}
	do(t, ctx, chromedp.MouseClickXY(yx, yy))
	waitFor(t, func() bool { return lastBundle(t, m.Store, ext.ID) == last+1 }, "the rollback once Yes is pressed")
}

// TestDoubleClickOnRevokeDoesNotRevoke: the same for a tester's Revoke.
func TestDoubleClickOnRevokeDoesNotRevoke(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/testers", m.URL(), ext.ID))
	waitJS(t, ctx, `!!document.querySelector("#testers [data-tester] .revoke")`)
	waitListQuiet(t, ctx, "testers")
	id := evalJS[string](t, ctx, `document.querySelector("#testers [data-tester] .revoke").closest("[data-tester]").dataset.tester`)
	row := `#testers [data-tester="` + id + `"]`
	button := `document.querySelector('` + row + ` .revoke')`
	x, y := bbkFind(t, ctx, "the button that asks", button)
	var testerID int64
	fmt.Sscan(id, &testerID)

	doubleClickAt(t, ctx, x, y)
	waitJS(t, ctx, `document.activeElement?.classList.contains("confirm-revoke")`)
	waitJS(t, ctx, yesReady)
	if tt, err := m.Store.FindTester(t.Context(), testerID); err != nil || tt.Status == betaport.TesterRevoked {
		t.Fatalf("a double-click on Revoke: the tester is %+v (%v)", tt, err)
	}
	if under := evalJS[string](t, ctx, fmt.Sprintf(`document.elementFromPoint(%f, %f)?.closest("button")?.className ?? ""`, x, y)); under != "revoke" {
		t.Errorf("under the pointer after the double-click is a button of class %q, want the Revoke that asked", under)
	}
	if got := text(t, ctx, row+` .confirm-pop p`); got != "Their access ends, and the copy they installed gets no newer build: it keeps the build it has." {
		t.Errorf("the question says %q", got)
	}
	yx, yy := bbkFind(t, ctx, "Yes", `document.querySelector('`+row+` .confirm-revoke')`)
	if yy > y-rowPx/2 && yy < y+rowPx/2 {
		t.Errorf("the question's Yes is at y %.0f, the Revoke that asked at %.0f: want it off the row (under it, or above it low on the screen)", yy, y)
	}
	do(t, ctx, chromedp.MouseClickXY(yx, yy))
	waitFor(t, func() bool {
		tt, err := m.Store.FindTester(t.Context(), testerID)
		return err == nil && tt.Status == betaport.TesterRevoked
	}, "the revoke once Yes is pressed")
}
