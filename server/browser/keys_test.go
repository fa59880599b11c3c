package browser_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/betaport/betaport/app/betaport"
)

// Signed in, an admin drops only the zip: it is published through the same
// three calls, and the pipeline's key keeps working afterwards.
func TestUploadPanelZipAloneWhenSignedIn(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	keyPath := cliKey(t, m, ext.ID) // the pipeline's
	next := lastBundle(t, m.Store, ext.ID) + 1
	ctx := adminTab(t, m, d)
	openUploadPanel(t, ctx, m.URL(), ext.ID)

	zipBytes := extensionZip(t, map[string]string{"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "9.3.0"}`})
	dropFiles(t, ctx, pageFile{Name: "tab-tamer.zip", Type: "application/zip", Data: zipBytes})
	waitJS(t, ctx, `document.querySelector("#upload-result") !== null || document.querySelector("#upload-outcome") !== null`)
	if got, want := text(t, ctx, `#upload-result-title`), fmt.Sprintf("Published bundle #%d, version 9.3.0.", next); got != want {
		t.Fatalf("result = %q, want %q", got, want)
	}
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector("#bundle-rows [data-bundle]")?.dataset.bundle === "%d"`, next))
	if got := text(t, ctx, `#current-bundle`); got != fmt.Sprintf("#%d", next) {
		t.Fatalf("current bundle = %q", got)
	}
	if got := text(t, ctx, `#upload-key`); !strings.Contains(got, "signed in") {
		t.Errorf("the panel says the key is %q", got)
	}

	zipPath := filepath.Join(t.TempDir(), "next.zip")
	writeFile(t, zipPath, extensionZip(t, map[string]string{"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "9.4.0"}`}))
	if b := submitAsPipeline(t, m.URL(), keyPath, zipPath); b.Number != next+1 {
		t.Fatalf("the pipeline's key after a browser upload published %+v", b)
	}
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector("#bundle-rows [data-bundle]")?.dataset.bundle === "%d"`, next+1))
}

// On the testers page: Revoke asks first (Keep keeps), then revokes; the
// revoked row offers Restore, which makes a new link; inviting a revoked
// e-mail offers the restore instead of a refusal.
func TestTestersRevokeRestoreAndReinvite(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[1]
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/testers", m.URL(), ext.ID))
	waitList(t, ctx, "testers", 5)
	ctx2 := context.Background()
	newest, err := m.Store.FindTesters(ctx2, betaport.TesterFilter{ExtensionID: ext.ID, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	tt := newest[0]
	row := fmt.Sprintf(`#testers [data-tester="%d"]`, tt.ID)
	status := func() string {
		got, err := m.Store.FindTester(ctx2, tt.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Status
	}
	was := status()
	if was == betaport.TesterRevoked {
		t.Fatalf("the newest demo tester is revoked already")
	}

	// Revoke asks; Keep (reached with Tab) keeps the tester.
	do(t, ctx, chromedp.Click(chromedp.CSS(row+` button.revoke`)))
	waitJS(t, ctx, `document.activeElement.classList.contains("confirm-revoke")`)
	do(t, ctx, chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, `document.activeElement.classList.contains("revoke")`)
	if got := status(); got != was {
		t.Fatalf("after Keep the tester is %s", got)
	}
	// Revoke, confirmed with Enter.
	do(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, `document.activeElement.classList.contains("confirm-revoke")`)
	waitJS(t, ctx, yesReady)
	do(t, ctx, chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector('%s button.restore') !== null`, row))
	waitFor(t, func() bool { return status() == betaport.TesterRevoked }, "the store to say revoked")

	// Restore: the same row, invited again, with a new link to send.
	do(t, ctx, chromedp.Click(chromedp.CSS(row+` button.restore`)))
	waitJS(t, ctx, `(document.querySelector("#invite-url")?.value ?? "").includes("/t/")`)
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector('%s .badge')?.textContent === "invited"`, row))
	if got := text(t, ctx, `#invite-note`); !strings.Contains(got, "Restored") || !strings.Contains(got, tt.Email) {
		t.Fatalf("the restore says %q", got)
	}
	if got := status(); got != betaport.TesterInvited {
		t.Fatalf("restored tester is %s", got)
	}
	checkAccessible(t, ctx, "testers, a tester restored")

	// Revoke again, then invite the same e-mail: the page offers the
	// restore, which brings the same record back.
	do(t, ctx, chromedp.Click(chromedp.CSS(row+` button.revoke`)), chromedp.Click(chromedp.CSS(row+` button.confirm-revoke[aria-disabled="false"]`)))
	waitFor(t, func() bool { return status() == betaport.TesterRevoked }, "the store to say revoked")
	do(t, ctx, chromedp.Click(chromedp.CSS(`#invite-email`)), chromedp.KeyEvent(strings.ToUpper(tt.Email)), chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, `document.querySelector("#restore-offer") !== null`)
	if got := text(t, ctx, `#invite-error`); !strings.Contains(got, "Restore them") {
		t.Fatalf("the refused invite says %q", got)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(`#restore-offer`)))
	waitJS(t, ctx, `(document.querySelector("#invite-url")?.value ?? "").includes("/t/")`)
	if got := status(); got != betaport.TesterInvited {
		t.Fatalf("after the offered restore the tester is %s", got)
	}
	if list, _ := m.Store.FindTesters(ctx2, betaport.TesterFilter{ExtensionID: ext.ID, Limit: 100}); len(list) != 5 {
		t.Fatalf("%d testers, want the same 5: the restore made a new record", len(list))
	}
	// An invited tester shows how old the invite is.
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector('%s .invite-age')?.textContent.includes("today")`, row))
}

// waitFor polls cond (a read of the store) for up to 10 s: a change made
// in the page reaches the server a moment after the page shows it.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}
