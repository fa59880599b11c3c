package browser_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/publish"
	"github.com/betaport/betaport/server/storetest"
)

// The upload panel and the key file, as an admin uses them: files dropped
// with a real DataTransfer (or chosen in the file picker opened from the
// keyboard), the three calls against the real service, the bundles list
// updated in place.

// A valid zip and the key file, dropped together: the steps, the progress,
// the new bundle on top of the list with the badge moved, no reload, and the
// download serves the bytes that were dropped.
func TestUploadPanelDropPublishes(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0] // with bundles
	key := setKey(t, m.Store, ext.ID)
	next := lastBundle(t, m.Store, ext.ID) + 1
	ctx := adminTab(t, m, d)
	openUploadPanel(t, ctx, m.URL(), ext.ID)
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`))

	zipBytes := extensionZip(t, map[string]string{
		"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "9.1.0"}`,
		"background.js": "console.log('9.1.0')\n",
	})
	files := []pageFile{
		{Name: "tab-tamer.zip", Type: "application/zip", Data: zipBytes},
		{Name: "key.json", Type: "application/json", Data: keyFile(ext.ID, key)},
	}
	// The zone highlights while files are dragged over it, and the browser
	// is kept from opening them: the drop leaves the page where it is.
	paths := writeFiles(t, files)
	drag(t, ctx, input.DispatchDragEventTypeDragEnter, paths)
	drag(t, ctx, input.DispatchDragEventTypeDragOver, paths)
	waitJS(t, ctx, `document.querySelector("#drop-zone").classList.contains("dragging")`)
	before := evalJS[string](t, ctx, `location.href`)
	drag(t, ctx, input.DispatchDragEventTypeDrop, paths)
	if after := evalJS[string](t, ctx, `location.href`); after != before {
		t.Fatalf("the drop opened %s: the browser would open the file", after)
	}
	waitJS(t, ctx, `!document.querySelector("#drop-zone").classList.contains("dragging")`)

	waitJS(t, ctx, `document.querySelector("#upload-result") !== null`)
	steps := evalJS[[]string](t, ctx, `[...document.querySelectorAll("#upload-steps li")].map(li => li.dataset.state)`)
	if strings.Join(steps, ",") != "done,done,done" {
		t.Fatalf("steps = %v, want all done", steps)
	}
	if got := text(t, ctx, `#upload-percent`); got != "100%" {
		t.Fatalf("progress shows %q, want 100%%", got)
	}
	if got := text(t, ctx, `#upload-bytes`); !strings.Contains(got, "of") {
		t.Fatalf("bytes sent = %q", got)
	}
	if got, want := text(t, ctx, `#upload-result-title`), fmt.Sprintf("Published bundle #%d, version 9.1.0.", next); got != want {
		t.Fatalf("result = %q, want %q", got, want)
	}
	if got := evalJS[string](t, ctx, `document.querySelector("#upload-status").textContent`); !strings.Contains(got, fmt.Sprintf("Published bundle #%d", next)) {
		t.Fatalf("the live region says %q", got)
	}
	if got := evalJS[string](t, ctx, `document.activeElement.id`); got != "upload-result" {
		t.Fatalf("focus is on %q, want the result", got)
	}

	// The list shows it on top, current, without a reload.
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector("#bundle-rows [data-bundle]")?.dataset.bundle === "%d"`, next))
	badges := evalJS[[]string](t, ctx, `[...document.querySelectorAll("#bundle-rows [data-bundle]")].filter(r => r.querySelector(".badge")).map(r => r.dataset.bundle)`)
	if strings.Join(badges, ",") != strconv.FormatInt(next, 10) {
		t.Fatalf("rows with the current badge: %v, want only %d", badges, next)
	}
	if got := text(t, ctx, `#current-bundle`); got != fmt.Sprintf("#%d", next) {
		t.Fatalf("current bundle = %q", got)
	}
	if !evalJS[bool](t, ctx, `window.__sameDocument === true`) {
		t.Fatal("the page was reloaded")
	}

	// The download serves the same bytes.
	got := evalJS[string](t, ctx, `fetch(document.querySelector('#bundle-rows [data-bundle="`+strconv.FormatInt(next, 10)+`"] a').href)
		.then(r => r.arrayBuffer()).then(b => { let s = ""; for (const c of new Uint8Array(b)) s += String.fromCharCode(c); return btoa(s) })`)
	if raw, _ := base64.StdEncoding.DecodeString(got); !bytes.Equal(raw, zipBytes) {
		t.Fatalf("the download serves %d bytes that differ from the %d dropped", len(raw), len(zipBytes))
	}
	// The key was kept in memory only.
	if evalJS[bool](t, ctx, fmt.Sprintf(`(JSON.stringify({...localStorage}) + JSON.stringify({...sessionStorage}) + document.cookie).includes(%q)`, key)) {
		t.Fatal("the key was written to browser storage")
	}
	keepPanelScreenshot(t, ctx)
	checkAccessible(t, ctx, "upload panel, published")
}

// A 50 MiB zip reports progress while the PUT is in flight, with go-app's
// service worker controlling the page: uploads bypass it.
func TestUploadPanelProgressOfLargeZip(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[2] // no bundle yet
	key := setKey(t, m.Store, ext.ID)
	ctx := adminTab(t, m, d)
	openUploadPanel(t, ctx, m.URL(), ext.ID)
	// The worker is installed and controls the page, so the test would see
	// it interfere.
	waitJS(t, ctx, `navigator.serviceWorker.controller !== null`)
	// On loopback 50 MiB goes in about 0.3 s, and Chromium reports upload
	// progress only every 50 to 100 ms: the tab's uploads are held to
	// 25 MiB/s (a fast office line), so the PUT lasts about 2 s. DevTools
	// throttles in the network service, below any service worker.
	throttleUploads(t, ctx, 25<<20)

	big := bigZip(t, 50<<20)
	paths := writeFiles(t, []pageFile{{Name: "quiet-hours.zip", Data: big}, {Name: "key.json", Data: keyFile(ext.ID, key)}})
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`__bp.watch()`))
	start := time.Now()
	dropPaths(t, ctx, paths)
	waitJS(t, ctx, `document.querySelector("#upload-result") !== null || document.querySelector("#upload-outcome") !== null`)
	t.Logf("50 MiB uploaded and published in %v", time.Since(start).Round(time.Millisecond))
	if msg := evalJS[string](t, ctx, `document.querySelector("#upload-outcome")?.textContent ?? ""`); msg != "" {
		t.Fatalf("the upload failed: %s", msg)
	}
	seen := evalJS[[]float64](t, ctx, `__bp.stopWatch()`)
	total := float64(len(big))
	var between []int64
	for _, v := range seen {
		if v > 0 && v < total {
			between = append(between, int64(v))
		}
	}
	if len(between) < 3 {
		t.Fatalf("progress values shown while the PUT was in flight: %v of %v; want 3 or more", seen, total)
	}
	t.Logf("%d distinct progress values in flight: %v", len(between), between)

	// The first bundle appears in the empty list, and the panel (which
	// holds the key) is the same one: it was not remounted.
	waitJS(t, ctx, `document.querySelector('#bundle-rows [data-bundle="1"] .badge') !== null`)
	if got := text(t, ctx, `#current-bundle`); got != "#1" {
		t.Fatalf("current bundle = %q", got)
	}
	if got := text(t, ctx, `#upload-key`); !strings.Contains(got, "key.json") {
		t.Fatalf("after the list changed the panel shows key %q: it was remounted", got)
	}
}

// Files refused in the browser make no request and say what to do; a zip
// the server rejects lists every problem with its path; a valid zip dropped
// next publishes.
func TestUploadPanelRefusesBadFiles(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext, other := d.Extensions[0], d.Extensions[1]
	key := setKey(t, m.Store, ext.ID)
	next := lastBundle(t, m.Store, ext.ID) + 1
	otherKey := setKey(t, m.Store, other.ID)
	ctx := adminTab(t, m, d)
	openUploadPanel(t, ctx, m.URL(), ext.ID)

	// Another extension's key.
	dropFiles(t, ctx, pageFile{Name: "key.json", Type: "application/json", Data: keyFile(other.ID, otherKey)})
	waitJS(t, ctx, `document.querySelector("#upload-notices") !== null`)
	want := fmt.Sprintf("key.json is the key of extension #%d, not of %s (#%d)", other.ID, ext.Name, ext.ID)
	if got := text(t, ctx, `#upload-notices`); !strings.Contains(got, want) || !strings.Contains(got, "settings page") {
		t.Fatalf("notice = %q, want %q and where to get the right key", got, want)
	}
	if got := evalJS[string](t, ctx, `document.querySelector("#upload-key")?.textContent ?? "None"`); !strings.HasPrefix(got, "None") {
		t.Fatalf("the other extension's key was kept: %q", got)
	}

	// Not a zip, with the right key.
	dropFiles(t, ctx,
		pageFile{Name: "bundle.zip", Type: "application/zip", Data: []byte("these are notes, not a zip")},
		pageFile{Name: "key.json", Type: "application/json", Data: keyFile(ext.ID, key)})
	waitJS(t, ctx, `document.querySelector("#upload-notices")?.textContent.includes("bundle.zip is not a zip file")`)
	if got := text(t, ctx, `#upload-key`); !strings.Contains(got, fmt.Sprintf("key of %s (#%d)", ext.Name, ext.ID)) {
		t.Fatalf("the panel shows key %q, want the extension it belongs to", got)
	}
	checkAccessible(t, ctx, "upload panel, a refused file")
	// A key file that does not parse.
	dropFiles(t, ctx, pageFile{Name: "key.json", Type: "application/json", Data: []byte(`{"service": `)})
	waitJS(t, ctx, `document.querySelector("#upload-notices")?.textContent.includes("key.json is not a key file")`)
	if _, err := m.Store.LatestUpload(context.Background(), ext.ID); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatalf("refused files made a request: latest upload %v", err)
	}

	// A zip without manifest.json, with a path that leaves the folder: 422,
	// every problem shown with its path.
	bad := extensionZip(t, map[string]string{"background.js": "1", "../evil.js": "2"})
	dropFiles(t, ctx, pageFile{Name: "broken.zip", Type: "application/zip", Data: bad})
	waitJS(t, ctx, `document.querySelector("#upload-problems") !== null`)
	problems := evalJS[[]string](t, ctx, `[...document.querySelectorAll("#upload-problems li")].map(li => li.dataset.code + " " + li.textContent)`)
	joined := strings.Join(problems, "\n")
	if len(problems) < 2 || !strings.Contains(joined, "path_traversal ../evil.js:") || !strings.Contains(joined, "manifest_missing (the whole zip):") {
		t.Fatalf("problems shown:\n%s\nwant the traversal with its path and the missing manifest", joined)
	}
	// The outcome names the zip, in words, not the API's ("422", "listed
	// in problems"); the Zip line keeps its name; the box is in view.
	if got := text(t, ctx, `#upload-outcome`); !strings.HasPrefix(got, "broken.zip was not published: ") || !strings.Contains(got, "problems to fix, listed below.") ||
		!strings.Contains(got, "Fix the zip") || strings.Contains(got, "422") || strings.Contains(got, "listed in problems") {
		t.Fatalf("outcome = %q", got)
	}
	if got := text(t, ctx, `#upload-zip`); !strings.HasPrefix(got, "broken.zip") {
		t.Fatalf("after the refusal the panel's Zip says %q, want the zip refused", got)
	}
	waitJS(t, ctx, `(() => { const r = document.querySelector("#upload-outcome").getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight })()`)
	if got := evalJS[string](t, ctx, `document.querySelector('#upload-steps li[data-step="3"]').dataset.state`); got != "failed" {
		t.Fatalf("step 3 is %q, want failed", got)
	}
	checkAccessible(t, ctx, "upload panel, a rejected zip")

	// The fixed zip, dropped alone, starts by itself with the key kept.
	dropFiles(t, ctx, pageFile{Name: "fixed.zip", Type: "application/zip", Data: extensionZip(t, map[string]string{
		"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "9.2.0"}`,
	})})
	waitJS(t, ctx, `document.querySelector("#upload-result") !== null`)
	if got, want := text(t, ctx, `#upload-result-title`), fmt.Sprintf("Published bundle #%d, version 9.2.0.", next); got != want {
		t.Fatalf("result = %q, want %q", got, want)
	}
}

// A revoked key dropped with the zip is refused with the server's problem
// and set aside; Retry would publish as the signed-in admin, and dropping
// the current key starts the upload again.
func TestUploadPanelRevokedKey(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[1] // 3 bundles
	old := setKey(t, m.Store, ext.ID)
	current := setKey(t, m.Store, ext.ID) // rotates: old is revoked
	ctx := adminTab(t, m, d)
	openUploadPanel(t, ctx, m.URL(), ext.ID)

	zipBytes := extensionZip(t, map[string]string{"manifest.json": `{"manifest_version": 3, "name": "Reader", "version": "2.0.0"}`})
	dropFiles(t, ctx,
		pageFile{Name: "reader.zip", Type: "application/zip", Data: zipBytes},
		pageFile{Name: "key.json", Type: "application/json", Data: keyFile(ext.ID, old)})
	waitJS(t, ctx, `document.querySelector("#upload-error") !== null`)
	if got := text(t, ctx, `#upload-error`); !strings.Contains(got, "do not match a current key") {
		t.Fatalf("error = %q, want the server's detail", got)
	}
	if got := text(t, ctx, `#upload-outcome`); !strings.Contains(got, "drop a current key file") || !strings.Contains(got, "Try again publishes signed in as you") {
		t.Fatalf("outcome = %q, want what to do", got)
	}
	if got := evalJS[string](t, ctx, `document.activeElement.id`); got != "upload-retry" {
		t.Fatalf("focus is on %q, want Retry", got)
	}

	dropFiles(t, ctx, pageFile{Name: "key (1).json", Type: "application/json", Data: keyFile(ext.ID, current)})
	waitJS(t, ctx, `document.querySelector("#upload-result") !== null`)
	if got := text(t, ctx, `#upload-result-title`); got != "Published bundle #4, version 2.0.0." {
		t.Fatalf("result = %q", got)
	}
}

// Cancel aborts the PUT mid-transfer: nothing is published, and the next
// try (one click) works.
func TestUploadPanelCancelThenRetry(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[1] // 3 bundles
	key := setKey(t, m.Store, ext.ID)
	ctx := adminTab(t, m, d)
	openUploadPanel(t, ctx, m.URL(), ext.ID)

	// Uploads crawl at 2 MiB/s, so the cancel lands mid-transfer.
	throttleUploads(t, ctx, 2<<20)
	dropFiles(t, ctx, pageFile{Name: "reader.zip", Data: bigZip(t, 16<<20)}, pageFile{Name: "key.json", Data: keyFile(ext.ID, key)})
	waitJS(t, ctx, `Number(document.querySelector("#upload-progress")?.value) > 0`)
	do(t, ctx, chromedp.Click(chromedp.CSS(`#upload-cancel`)))
	waitJS(t, ctx, `document.querySelector('#upload-steps li[data-step="2"]').dataset.state === "cancelled"`)
	waitJS(t, ctx, `document.activeElement.id === "upload-retry"`)
	if got := text(t, ctx, `#upload-outcome`); !strings.Contains(got, "Nothing was published") {
		t.Fatalf("outcome = %q", got)
	}
	sent := evalJS[float64](t, ctx, `Number(document.querySelector("#upload-progress").value)`)
	if sent >= 16<<20 {
		t.Fatalf("the cancel came after the whole zip was sent (%v bytes)", sent)
	}
	bg := context.Background()
	if n, _ := m.Store.LastBundleNumber(bg, ext.ID); n != 3 {
		t.Fatalf("after cancel the last bundle is #%d, want #3 (nothing published)", n)
	}
	if u, err := m.Store.LatestUpload(bg, ext.ID); err != nil || u.State != betaport.UploadRequested {
		t.Fatalf("after cancel the upload is %+v (%v), want requested: no zip kept", u, err)
	}

	throttleUploads(t, ctx, 0)
	do(t, ctx, chromedp.Click(chromedp.CSS(`#upload-retry`)))
	waitJS(t, ctx, `document.querySelector("#upload-result") !== null`)
	if got := text(t, ctx, `#upload-result-title`); !strings.HasPrefix(got, "Published bundle #4,") {
		t.Fatalf("result = %q", got)
	}
}

// The keyboard path: Enter on the focused drop zone opens the file picker;
// the files chosen there upload as dropped ones do.
func TestUploadPanelKeyboardPicker(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[1]
	key := setKey(t, m.Store, ext.ID)
	ctx := adminTab(t, m, d)
	openUploadPanel(t, ctx, m.URL(), ext.ID)

	dir := t.TempDir()
	zipPath, keyPath := filepath.Join(dir, "reader.zip"), filepath.Join(dir, "key.json")
	writeFile(t, zipPath, extensionZip(t, map[string]string{"manifest.json": `{"manifest_version": 3, "name": "Reader", "version": "3.0.0"}`}))
	writeFile(t, keyPath, keyFile(ext.ID, key))

	if _, err := chromedp.Call(ctx, page.SetInterceptFileChooserDialog, page.SetInterceptFileChooserDialogParams{Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`h1`))); err != nil {
		t.Fatal(err)
	}
	tabTo(t, ctx, "the drop zone", func(f focusedElement) bool { return f.ID == "drop-zone" })
	chooser, err := chromedp.Run(ctx, chromedp.WaitEvent(page.FileChooserOpened, nil, chromedp.KeyEvent("\r")))
	if err != nil {
		t.Fatalf("Enter on the drop zone opened no file picker: %v", err)
	}
	if chooser.Mode != page.FileChooserOpenedModeSelectMultiple {
		t.Fatalf("the picker takes %q, want several files (the zip and the key)", chooser.Mode)
	}
	if _, err := chromedp.Call(ctx, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: []string{zipPath, keyPath}, BackendNodeID: chooser.BackendNodeID}); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, `document.querySelector("#upload-result") !== null`)
	if got := text(t, ctx, `#upload-result-title`); got != "Published bundle #4, version 3.0.0." {
		t.Fatalf("result = %q", got)
	}
}

// On the Starter plan the panel and the settings page say that manual
// upload needs the Professional plan instead of offering it.
func TestUploadNeedsProfessionalPlan(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[len(d.Extensions)-1] // Color Picker, Starter team
	ctx := newTab(t)
	signIn(t, ctx, m.URL(), d.Admins[1].Email, d.Admins[1].Password)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	waitJS(t, ctx, `document.querySelector("#upload-plan") !== null`)
	if got := text(t, ctx, `#upload-plan`); !strings.Contains(got, "Manual upload needs the Professional plan") || !strings.Contains(got, "Starter") {
		t.Fatalf("panel says %q", got)
	}
	if evalJS[bool](t, ctx, `document.querySelector("#drop-zone") !== null`) {
		t.Fatal("the panel offers a drop zone on the Starter plan")
	}

	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/settings", m.URL(), ext.ID))
	waitJS(t, ctx, `document.querySelector("#key-plan-required") !== null`)
	if got := text(t, ctx, `#key-plan-required`); !strings.Contains(got, "Manual upload needs the Professional plan") {
		t.Fatalf("settings say %q", got)
	}
	if got := text(t, ctx, `#settings-plan`); got != "Starter" {
		t.Fatalf("plan shown = %q", got)
	}
	if evalJS[bool](t, ctx, `document.querySelector("#key-form") !== null`) {
		t.Fatal("the settings page offers a key on the Starter plan")
	}
}

// Named keys on the settings page: a label typed and Enter create a key
// and download its key.json, which a pipeline publishes with; the key
// already there keeps working until it is revoked, which asks first; the
// audit list names both changes.
func TestSettingsNamedKeys(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[1] // 3 bundles
	previous := setKey(t, m.Store, ext.ID)
	ctx := adminTab(t, m, d)
	previousKey := api.ServiceKey{ExtensionID: strconv.FormatInt(ext.ID, 10), APIKey: previous}

	downloads := allowDownloads(t, ctx)

	// Reached from the upload panel's link, in the app.
	openUploadPanel(t, ctx, m.URL(), ext.ID)
	do(t, ctx, chromedp.Click(chromedp.CSS(`#settings-link`)))
	waitJS(t, ctx, `document.querySelector('#keys [data-key]') !== null`)
	if got := text(t, ctx, `#settings-plan`); got != "Professional" {
		t.Fatalf("plan shown = %q", got)
	}

	// Type a label and press Enter.
	do(t, ctx, chromedp.Click(chromedp.CSS(`#key-label`)), chromedp.KeyEvent("GitHub Actions"), chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, `!document.querySelector("#key-downloaded").hidden`)
	keyPath := filepath.Join(downloads, "key.json")
	var raw []byte
	for deadline := time.Now().Add(10 * time.Second); ; {
		var err error
		if raw, err = os.ReadFile(keyPath); err == nil && json.Valid(raw) {
			break
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(downloads)
			t.Fatalf("no key.json downloaded (%v); the folder holds %v", err, entries)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var kf api.KeyFile
	if err := json.Unmarshal(raw, &kf); err != nil || kf.Service.ExtensionID != strconv.FormatInt(ext.ID, 10) || kf.Service.APIKey == "" {
		t.Fatalf("key.json = %s (%v)", raw, err)
	}
	waitJS(t, ctx, `document.querySelector("#key-label").value === ""`) // ready for the next key

	// A pipeline publishes with it; the key already there still works.
	zipPath := filepath.Join(t.TempDir(), "reader.zip")
	writeFile(t, zipPath, extensionZip(t, map[string]string{"manifest.json": `{"manifest_version": 3, "name": "Reader", "version": "4.0.0"}`}))
	if b := submitAsPipeline(t, m.URL(), keyPath, zipPath); b.Number != 4 || b.Version != "4.0.0" {
		t.Fatalf("the pipeline published %+v, want #4 version 4.0.0", b)
	}
	if status := requestUpload(t, m.URL(), previousKey); status != http.StatusOK {
		t.Fatalf("the key already there gets %d after a new one, want 200", status)
	}

	// Both are listed, the new one on top.
	waitJS(t, ctx, `document.querySelectorAll('#keys [data-key]').length === 2`)
	if top := text(t, ctx, `#keys [data-key]`); !strings.Contains(top, "GitHub Actions") || !strings.Contains(top, d.Admins[0].Email) {
		t.Fatalf("the top key reads %q, want the new one, made by the admin", top)
	}
	// Revoke the first key: Keep leaves it; confirming revokes it.
	prev, err := m.Store.FindKeyByHash(context.Background(), publish.HashKey(previous))
	if err != nil {
		t.Fatal(err)
	}
	old := fmt.Sprintf(`#keys [data-key="%d"]`, prev.ID)
	do(t, ctx, chromedp.Click(chromedp.CSS(old+` button.revoke`)))
	waitJS(t, ctx, `document.activeElement.classList.contains("confirm-revoke")`)
	do(t, ctx, chromedp.Click(chromedp.CSS(old+` button.cancel-revoke`)))
	waitJS(t, ctx, `document.activeElement.classList.contains("revoke")`)
	if status := requestUpload(t, m.URL(), previousKey); status != http.StatusOK {
		t.Fatalf("after Keep the key gets %d, want 200", status)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(old+` button.revoke`)), chromedp.Click(chromedp.CSS(old+` button.confirm-revoke[aria-disabled="false"]`)))
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector('%s .badge-revoked') !== null`, old))
	if status := requestUpload(t, m.URL(), previousKey); status != http.StatusUnauthorized {
		t.Fatalf("the revoked key gets %d, want 401", status)
	}
	if status := requestUpload(t, m.URL(), kf.Service); status != http.StatusOK {
		t.Fatalf("the other key after a revoke gets %d, want 200", status)
	}
	// The list, read again after the revoke, says when the new key was used.
	waitJS(t, ctx, `!(document.querySelector("#keys [data-key]")?.textContent ?? "Never").includes("Never")`)
	// The audit trail says who did what.
	// The audit trail, at the page's end, shows its rows once the wheel
	// brings it into view (a list renders the rows in view).
	wheelUntil(t, ctx, `(document.querySelector("#audit")?.textContent ?? "").includes("revoked the key")`)
	if got := text(t, ctx, `#audit`); !strings.Contains(got, "created the key GitHub Actions") || !strings.Contains(got, d.Admins[0].Email) {
		t.Fatalf("audit list = %q", got)
	}
	checkAccessible(t, ctx, "settings, named keys and the audit trail")
}

// pageFile is a file built in the page from bytes made by the test.
type pageFile struct {
	Name, Type string
	Data       []byte
}

// uploadHelpersJS watches the panel's progress bar while the PUT runs
// (it reads state only; files are dropped with DevTools input).
const uploadHelpersJS = `window.__bp = {
  // watch records each distinct progress value shown while step 2 (the
  // PUT) is active; stopWatch returns them.
  watch() {
    const seen = [];
    const id = setInterval(() => {
      const p = document.querySelector("#upload-progress");
      const putting = document.querySelector('#upload-steps li[data-step="2"][data-state="active"]');
      if (p && putting) { const v = Number(p.value); if (seen[seen.length - 1] !== v) seen.push(v); }
    }, 2);
    this.stopWatch = () => { clearInterval(id); return seen; };
  },
};`

// openUploadPanel opens an extension's page and waits for its panel.
func openUploadPanel(t *testing.T, ctx context.Context, baseURL string, extID int64) {
	t.Helper()
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", baseURL, extID))
	do(t, ctx,
		chromedp.WaitVisible(chromedp.CSS(`#drop-zone`)),
		chromedp.Evaluate[chromedp.Void](uploadHelpersJS),
	)
}

// writeFiles puts files in a folder of their own, as on a desktop, and
// returns their paths.
func writeFiles(t *testing.T, files []pageFile) []string {
	t.Helper()
	dir := t.TempDir()
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join(dir, f.Name)
		if err := os.WriteFile(paths[i], f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

// drag sends one drag event carrying the files at paths over the drop
// zone's centre: DevTools input, as a hand dragging files from the desktop
// (the browser makes the DataTransfer and its Files).
func drag(t *testing.T, ctx context.Context, typ input.DispatchDragEventType, paths []string) {
	t.Helper()
	do(t, ctx, chromedp.ScrollIntoView(chromedp.CSS(`#drop-zone`)))
	at := evalJS[[]float64](t, ctx, `(() => { const r = document.querySelector("#drop-zone").getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`)
	if _, err := chromedp.Call(ctx, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: at[0], Y: at[1],
		Data: &input.DragData{Items: []*input.DragDataItem{}, Files: paths, DragOperationsMask: 1}}); err != nil {
		t.Fatalf("%s: %v", typ, err)
	}
}

// dropFiles drags files over the drop zone and drops them; the page must
// keep the browser from opening them.
func dropFiles(t *testing.T, ctx context.Context, files ...pageFile) {
	t.Helper()
	dropPaths(t, ctx, writeFiles(t, files))
}

func dropPaths(t *testing.T, ctx context.Context, paths []string) {
	t.Helper()
	before := evalJS[string](t, ctx, `location.href`)
	drag(t, ctx, input.DispatchDragEventTypeDragEnter, paths)
	drag(t, ctx, input.DispatchDragEventTypeDragOver, paths)
	drag(t, ctx, input.DispatchDragEventTypeDrop, paths)
	if after := evalJS[string](t, ctx, `location.href`); after != before {
		t.Fatalf("the drop opened %s: the page did not cancel it", after)
	}
}

// bigZip is a valid extension zip of about size bytes (incompressible
// filler, stored).
func bigZip(t *testing.T, size int) []byte {
	t.Helper()
	filler := make([]byte, size)
	rand.Read(filler)
	return extensionZip(t, map[string]string{
		"manifest.json": `{"manifest_version": 3, "name": "Big", "version": "1.0.0"}`,
		"filler.bin":    string(filler),
	})
}

func do(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

func evalJS[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %.120q: %v", js, err)
	}
	return v
}

// waitJS waits until the expression is true in the page.
func waitJS(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(patient(20*time.Second)))); err != nil {
		status, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#upload-panel")?.innerText ?? document.querySelector("main")?.innerText ?? ""`))
		t.Fatalf("waiting for %s: %v\npanel:\n%s", expr, err, status)
	}
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel), chromedp.NodeReady))
	if err != nil {
		t.Fatalf("reading %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// throttleUploads limits the tab's upload throughput (bytes/s); 0 lifts it.
func throttleUploads(t *testing.T, ctx context.Context, bytesPerSecond float64) {
	t.Helper()
	rules := []*network.Conditions{}
	if bytesPerSecond > 0 {
		rules = append(rules, &network.Conditions{DownloadThroughput: -1, UploadThroughput: bytesPerSecond})
	}
	if _, err := chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{MatchedNetworkConditions: rules}); err != nil {
		t.Fatal(err)
	}
}

func lastBundle(t *testing.T, store betaport.Store, extID int64) int64 {
	t.Helper()
	n, err := store.LastBundleNumber(context.Background(), extID)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// setKey gives the extension a new key, as `betaport key create` does,
// after revoking its others, and returns it.
func setKey(t *testing.T, store betaport.Store, extID int64) string {
	t.Helper()
	key := credential.NewToken()
	storetest.RevokeKeys(t, store, extID)
	storetest.MustKey(t, store, extID, "Test", key)
	return key
}

func keyFile(extID int64, key string) []byte {
	b, _ := json.MarshalIndent(api.KeyFile{Service: api.ServiceKey{ExtensionID: strconv.FormatInt(extID, 10), APIKey: key}}, "", "  ")
	return b
}

// extensionZip zips files (deflated, in name order).
func extensionZip(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, files[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// requestUpload makes call 1 of the submit flow and returns the status.
func requestUpload(t *testing.T, baseURL string, key api.ServiceKey) int {
	t.Helper()
	body, _ := json.Marshal(key)
	resp, err := http.Post(baseURL+api.PathSubmitUpload, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// submitAsPipeline submits zipPath with the key file at keyPath through
// `betaport submit`. Where that command is not registered yet, it makes
// the same three calls with net/http, from the key file's service object.
func submitAsPipeline(t *testing.T, baseURL, keyPath, zipPath string) betaport.Bundle {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Run(context.Background(), []string{"submit", "--base-url", baseURL, "--key", keyPath, zipPath}, &stdout, &stderr)
	if code == cli.ExitUsage && strings.Contains(stderr.String(), "unknown command") {
		t.Log("`betaport submit` is not registered: making its three calls with net/http")
		return submitWithHTTP(t, baseURL, keyPath, zipPath)
	}
	if code != 0 {
		t.Fatalf("betaport submit: exit %d: %s", code, stderr.String())
	}
	var b betaport.Bundle
	if err := json.Unmarshal(stdout.Bytes(), &b); err != nil {
		t.Fatalf("betaport submit printed %q: %v", stdout.String(), err)
	}
	return b
}

func submitWithHTTP(t *testing.T, baseURL, keyPath, zipPath string) betaport.Bundle {
	t.Helper()
	return submitFiles(t, baseURL, keyPath, zipPath, nil)
}

// submitFiles makes the submit flow's three calls with net/http for the
// key file at keyPath and the zip at zipPath, call 1 carrying fields
// ("channel", "rollout", "releaseNotes") beside the key's service object.
func submitFiles(t *testing.T, baseURL, keyPath, zipPath string, fields map[string]any) betaport.Bundle {
	t.Helper()
	raw, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	var kf api.KeyFile
	if err := json.Unmarshal(raw, &kf); err != nil {
		t.Fatal(err)
	}
	zip, err := os.ReadFile(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	return submitFields(t, baseURL, kf.Service, zip, fields)
}

// submitFields makes the submit flow's three calls with net/http: call 1
// with key and fields beside it, the PUT of zip, and the sign.
func submitFields(t *testing.T, baseURL string, key api.ServiceKey, zip []byte, fields map[string]any) betaport.Bundle {
	t.Helper()
	keyJSON, _ := json.Marshal(key)
	first := map[string]any{}
	if err := json.Unmarshal(keyJSON, &first); err != nil {
		t.Fatal(err)
	}
	maps.Copy(first, fields)
	firstJSON, _ := json.Marshal(first)
	call := func(method, url, ctype string, body []byte, out any) {
		t.Helper()
		req, _ := http.NewRequest(method, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
		}
		if out != nil {
			if err := json.Unmarshal(b, out); err != nil {
				t.Fatal(err)
			}
		}
	}
	var up api.UploadURL
	call(http.MethodPost, baseURL+api.PathSubmitUpload, "application/json", firstJSON, &up)
	call(http.MethodPut, up.URL, api.ZipContentType, zip, nil)
	var b betaport.Bundle
	call(http.MethodPost, baseURL+api.PathSubmitSign, "application/json", keyJSON, &b)
	return b
}

// keepPanelScreenshot keeps a picture of the panel as a test artifact.
func keepPanelScreenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(`#upload-panel`)))
	if err != nil {
		t.Fatalf("screenshot of the panel: %v", err)
	}
	if err := os.MkdirAll(artifactsDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(artifactsDir(), "upload-panel-after-success.png")
	writeFile(t, path, png)
	t.Logf("screenshot of the panel after the upload: %s", path)
}
