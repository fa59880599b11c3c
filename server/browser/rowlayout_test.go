package browser_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestListRowsShowTheirControlsWhole: on a desktop window and a phone's,
// the rows of the testers and bundles lists show every control whole (an
// invited tester's Revoke was cut to an ellipsis at 1280 px, "Download"
// to "Downloa", names and e-mails were cut at 360 px), their dates whole,
// and the bundles' controls at the same place on every row (they moved
// with the number's width and the Notes button).
func TestListRowsShowTheirControlsWhole(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	ctx := adminTab(t, m, d)
	problems := `(() => {
		const out = [];
		for (const row of document.querySelectorAll(".vlist-row .row")) {
			const r = row.getBoundingClientRect();
			if (row.scrollHeight > row.clientHeight + 1) out.push("a row cuts its text: " + row.innerText.slice(0, 60));
			for (const c of row.querySelectorAll("button, a")) {
				if (!c.checkVisibility() || c.closest(".confirm-pop, .notes-pop")) continue;
				const b = c.getBoundingClientRect();
				if (b.right > r.right + 1 || c.scrollWidth > c.clientWidth + 1 || b.width < 8) out.push("a control is cut: " + c.textContent + " in " + row.innerText.slice(0, 40));
				const cell = c.closest("[role=cell]");
				if (cell && b.right > cell.getBoundingClientRect().right + 1) out.push("a control leaves its cell: " + c.textContent);
			}
			for (const cell of row.querySelectorAll("[role=cell]")) {
				// Names and e-mails may end in "…" on a desktop window: the
				// whole shows on hover (their title).
				if (cell.querySelector("[title]")) continue;
				if (cell.scrollWidth > cell.clientWidth + 1) out.push("a cell cuts its text: " + cell.innerText.slice(0, 40));
			}
		}
		return out.slice(0, 10);
	})()`
	sameColumn := `(() => {
		const at = sel => new Set([...document.querySelectorAll(sel)].filter(e => e.checkVisibility()).map(e => Math.round(e.getBoundingClientRect().left)));
		return [at("#bundle-rows .bundle-actions a").size, at("#bundle-rows .bundle-actions .rollback").size];
	})()`
	for _, size := range []struct{ w, h int64 }{{1280, 900}, {360, 800}} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h)); err != nil {
			t.Fatal(err)
		}
		for _, page := range []string{"testers", ""} {
			url := fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID)
			list := "bundle-rows"
			if page != "" {
				url, list = url+"/"+page, "testers"
			}
			openApp(t, ctx, url)
			waitJS(t, ctx, fmt.Sprintf(`document.querySelectorAll("#%s .row").length >= 10`, list))
			if page != "" {
				waitJS(t, ctx, `!!document.querySelector("#testers .row .resend")`) // an invited tester's row is there
			}
			for _, p := range evalJS[[]string](t, ctx, problems) {
				t.Errorf("%d px, %s: %s", size.w, url, p)
			}
			if page == "" && size.w == 1280 {
				if cols := evalJS[[]int](t, ctx, sameColumn); cols[0] != 1 || cols[1] != 1 {
					t.Errorf("at 1280 px the bundles' Download links stand at %d places and their Roll back buttons at %d: want one each", cols[0], cols[1])
				}
			}
		}
	}
}
