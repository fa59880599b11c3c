package browser_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/betaport/betaport/app/api"
)

// Release notes and rollback (issue 20), as admins and testers meet them:
// notes typed in the upload panel with the keyboard, a zip dropped, the
// notes shown to a tester who signed in from their link; a bundle rolled
// back from the bundles list with its inline question; the notes' 10 KiB
// limit in the panel. Typing is CDP key events (pasting a long text is
// CDP's insertText, as an IME or a paste delivers it), clicks are CDP mouse
// events, drops a DataTransfer the browser makes from files on disk.

// rnType types lines into the focused field with the keyboard, pressing
// Enter between them.
func rnType(t *testing.T, ctx context.Context, lines ...string) {
	t.Helper()
	for i, l := range lines {
		if i > 0 {
			bbPress(t, ctx, kb.Enter)
		}
		if l != "" {
			do(t, ctx, chromedp.KeyEvent(l))
		}
	}
}

// rnShown is what a person reads of rendered release notes.
type rnShown struct {
	Shown      bool     `json:"shown"`
	Paragraphs []string `json:"paragraphs"`
	Items      []string `json:"items"`
	LinkText   string   `json:"linkText"`
	Href       string   `json:"href"`
	Rel        string   `json:"rel"`
	Target     string   `json:"target"`
	Elements   int      `json:"elements"` // script and b elements: HTML that became HTML
	Pwned      bool     `json:"pwned"`
}

// rnRead reads the notes in the element the expression finds.
func rnRead(t *testing.T, ctx context.Context, el string) rnShown {
	t.Helper()
	return evalJS[rnShown](t, ctx, `(() => { const el = `+el+`; if (!el || !el.checkVisibility()) return {shown: false};
		const a = el.querySelector("a");
		return {shown: true, paragraphs: [...el.querySelectorAll("p")].map(p => p.textContent),
			items: [...el.querySelectorAll("ul > li")].map(li => li.textContent),
			linkText: a?.textContent ?? "", href: a?.getAttribute("href") ?? "", rel: a?.getAttribute("rel") ?? "", target: a?.getAttribute("target") ?? "",
			elements: el.querySelectorAll("script, b").length, pwned: window.__pwned === 1}; })()`)
}

// The notes typed below, as they must show: HTML as text, one link.
var rnWant = rnShown{
	Shown:      true,
	Paragraphs: []string{"Tabs open faster.", `<script>window.__pwned = 1</script> <b>not bold</b>`},
	Items:      []string{"Pinned tabs stay put", "Read the changelog"},
	LinkText:   "the changelog", Href: "https://example.com/changes?v=9.2",
	Rel: "noopener noreferrer", Target: "_blank",
}

func checkNotesShown(t *testing.T, where string, got rnShown) {
	t.Helper()
	if !reflect.DeepEqual(got, rnWant) {
		t.Fatalf("%s shows the notes as\n%+v\nwant\n%+v", where, got, rnWant)
	}
}

// An admin types notes with a list and a link, drops a zip, publishes; the
// bundles list opens them; a tester who signs in from their link reads
// them on their builds page and opens a row's notes. A <script> in them is
// text.
func TestReleaseNotesFromPanelToTester(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0] // the demo tester's extension
	next := lastBundle(t, m.Store, ext.ID) + 1
	ctx := adminTab(t, m, d)
	openUploadPanel(t, ctx, m.URL(), ext.ID)

	if got := evalJS[string](t, ctx, `document.querySelector("label[for=release-notes]")?.textContent ?? ""`); got != "Release notes (optional)" {
		t.Fatalf("the notes box is labelled %q", got)
	}
	bbkClickFound(t, ctx, "the release notes box", `document.querySelector("#release-notes")`)
	lines := []string{
		"Tabs open faster.",
		"",
		"- Pinned tabs stay put",
		"- Read [the changelog](https://example.com/changes?v=9.2)",
		"",
		"<script>window.__pwned = 1</script> <b>not bold</b>",
	}
	rnType(t, ctx, lines...)
	notes := strings.Join(lines, "\n")
	js, _ := json.Marshal(notes)
	waitJS(t, ctx, `document.querySelector("#release-notes").value === `+string(js))
	// The counter follows the typing (the app renders after the input).
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector("#release-notes-count").textContent === "%d of 10,240 bytes (10 KiB)"`, len(notes)))

	dropFiles(t, ctx, pageFile{Name: "tab-tamer.zip", Type: "application/zip", Data: extensionZip(t, map[string]string{
		"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "9.2.0"}`,
	})})
	waitJS(t, ctx, `document.querySelector("#upload-result") !== null || document.querySelector("#upload-outcome") !== null`)
	if got, want := text(t, ctx, `#upload-result-title`), fmt.Sprintf("Published bundle #%d, version 9.2.0.", next); got != want {
		t.Fatalf("result = %q, want %q", got, want)
	}
	b, err := m.Store.FindBundle(context.Background(), ext.ID, next)
	if err != nil || b.ReleaseNotes != notes {
		t.Fatalf("bundle #%d was published with notes %q (%v), want %q", next, b.ReleaseNotes, err, notes)
	}
	if got := evalJS[string](t, ctx, `document.querySelector("#release-notes").value`); got != "" {
		t.Errorf("after publishing the notes box holds %q; want it empty for the next bundle", got)
	}

	// The bundles list: the new row's Notes button opens them.
	row := fmt.Sprintf(`#bundle-rows [data-bundle="%d"]`, next)
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector('%s .notes-toggle')?.checkVisibility() === true`, row))
	if got := evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector('%s .notes-toggle').getAttribute("aria-expanded")`, row)); got != "false" {
		t.Fatalf("the Notes button is aria-expanded=%q before a click", got)
	}
	bbkClickFound(t, ctx, "the new bundle's Notes button", fmt.Sprintf(`document.querySelector('%s .notes-toggle')`, row))
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector('%s .notes-toggle').getAttribute("aria-expanded") === "true"`, row))
	checkNotesShown(t, "the admin's bundles list", rnRead(t, ctx, fmt.Sprintf(`document.querySelector('%s .notes-pop')`, row)))

	// The tester, in a browser of their own.
	tctx := bbkPrivateTab(t)
	openApp(t, tctx, m.URL()+d.TesterLink)
	waitLocation(t, tctx, m.URL()+"/builds")
	waitJS(t, tctx, `document.querySelector("#current-notes .notes") !== null`)
	if got := text(t, tctx, `#current-notes h2`); !strings.Contains(got, fmt.Sprintf("#%d", next)) {
		t.Errorf("the current build's notes are headed %q, want bundle #%d", got, next)
	}
	checkNotesShown(t, "the builds page's current build", rnRead(t, tctx, `document.querySelector("#current-notes .notes")`))

	// A row's notes open and close with its own button.
	build := fmt.Sprintf(`#builds [data-build="%d"]`, b.ID)
	toggle := fmt.Sprintf(`document.querySelector('%s .notes-toggle')`, build)
	bbkClickFound(t, tctx, "the build's Notes button", toggle)
	waitJS(t, tctx, toggle+`.getAttribute("aria-expanded") === "true"`)
	panel := evalJS[string](t, tctx, toggle+`.getAttribute("aria-controls")`)
	checkNotesShown(t, "a build row's notes", rnRead(t, tctx, fmt.Sprintf(`document.getElementById(%q)`, panel)))
	if n := evalJS[int](t, tctx, `[...document.querySelectorAll("#builds .notes-toggle")].filter(b => b.checkVisibility()).length`); n != 1 {
		t.Errorf("%d builds offer notes; only the new one has some", n)
	}
	checkAccessible(t, tctx, "a build's release notes, open")
	bbkClickFound(t, tctx, "the build's Notes button, again", toggle)
	waitJS(t, tctx, toggle+`.getAttribute("aria-expanded") === "false"`)
	if rnRead(t, tctx, fmt.Sprintf(`document.getElementById(%q)`, panel)).Shown {
		t.Error("the notes stay open after a second press")
	}
	// With the keyboard: Enter opens them, Escape closes them and leaves
	// the focus on the button.
	waitJS(t, tctx, `document.activeElement === `+toggle)
	bbPress(t, tctx, kb.Enter)
	waitJS(t, tctx, toggle+`.getAttribute("aria-expanded") === "true"`)
	bbPress(t, tctx, kb.Escape)
	waitJS(t, tctx, toggle+`.getAttribute("aria-expanded") === "false" && document.activeElement === `+toggle)
}

// An admin rolls back to an older bundle from the bundles list: Roll back,
// then Cancel changes nothing; Roll back, then Yes publishes one new bundle
// on top, "rollback of #N", current, in this tab's list and header and in
// another tab's, with the focus left on the row it was pressed in. A
// rollback the service refuses shows its problem.
func TestRollbackFromTheBundlesList(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	last := lastBundle(t, m.Store, ext.ID)
	target := last - 2
	ctx := adminTab(t, m, d)
	url := fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID)
	openApp(t, ctx, url)
	top := func(n int64) string {
		return fmt.Sprintf(`document.querySelector("#bundle-rows [data-bundle]")?.dataset.bundle === "%d"`, n)
	}
	waitJS(t, ctx, top(last))
	// A second tab of the same admin follows what the first does.
	other := newTab(t)
	openApp(t, other, url)
	waitJS(t, other, top(last))

	row := fmt.Sprintf(`#bundle-rows [data-bundle="%d"]`, target)
	rollback := fmt.Sprintf(`document.querySelector('%s .rollback')`, row)
	if evalJS[bool](t, ctx, fmt.Sprintf(`document.querySelector('#bundle-rows [data-bundle="%d"] .rollback')?.checkVisibility() ?? false`, last)) {
		t.Fatal("the current bundle offers a rollback to itself")
	}
	if got, want := evalJS[string](t, ctx, rollback+`.textContent`), fmt.Sprintf("Roll back to #%d", target); got != want {
		t.Fatalf("the button says %q, want %q", got, want)
	}
	headerBefore, versionBefore := text(t, ctx, `#current-bundle`), text(t, ctx, `#current-version`)

	// Roll back, then Cancel: nothing happens; the focus is back on Roll back.
	bbkClickFound(t, ctx, "Roll back", rollback)
	waitJS(t, ctx, fmt.Sprintf(`document.activeElement === document.querySelector('%s .confirm-rollback')`, row))
	bbkClickFound(t, ctx, "Cancel", fmt.Sprintf(`document.querySelector('%s .cancel-rollback')`, row))
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector('%s .confirm-rollback') === null && document.activeElement === %s`, row, rollback))
	if n := lastBundle(t, m.Store, ext.ID); n != last {
		t.Fatalf("Cancel published bundle #%d", n)
	}
	if got := text(t, ctx, `#current-bundle`); got != headerBefore {
		t.Fatalf("after Cancel the header says %q, want %q", got, headerBefore)
	}

	// Roll back, then Yes (Enter: the question has the focus; its Yes
	// takes a press a moment after it shows).
	bbkClickFound(t, ctx, "Roll back", rollback)
	waitJS(t, ctx, fmt.Sprintf(`document.activeElement === document.querySelector('%s .confirm-rollback')`, row))
	waitJS(t, ctx, yesReady)
	bbPress(t, ctx, kb.Enter)
	waitJS(t, ctx, top(last+1))
	nb, err := m.Store.FindBundle(context.Background(), ext.ID, last+1)
	if err != nil || nb.RollbackOf != target {
		t.Fatalf("bundle #%d is %+v (%v), want a rollback of #%d", last+1, nb, err, target)
	}
	newRow := fmt.Sprintf(`#bundle-rows [data-bundle="%d"]`, last+1)
	for _, tab := range []context.Context{ctx, other} {
		waitJS(t, tab, top(last+1)+fmt.Sprintf(` && document.querySelector("#current-bundle").textContent === "#%d"`, last+1))
		if got, want := text(t, tab, newRow+` .rollback-of`), fmt.Sprintf("rollback of #%d", target); got != want {
			t.Errorf("the new row says %q, want %q", got, want)
		}
		if got := evalJS[[]string](t, tab, `[...document.querySelectorAll("#bundle-rows [data-bundle]")].filter(r => r.querySelector(".badge-active")).map(r => r.dataset.bundle)`); len(got) != 1 || got[0] != fmt.Sprint(last+1) {
			t.Errorf("rows marked current: %v, want only #%d", got, last+1)
		}
	}
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector("#current-version").textContent !== %q`, versionBefore))
	if got := text(t, ctx, `#current-version`); !strings.HasPrefix(got, nb.Version) {
		t.Errorf("the header's current version is %q, want %s", got, nb.Version)
	}
	if got := text(t, ctx, `#rollback-status`); !strings.Contains(got, fmt.Sprintf("Rolled back: bundle #%d serves the code of #%d again", last+1, target)) {
		t.Errorf("the status says %q", got)
	}
	// The focus stayed with the row it was pressed in, which moved down.
	if f := focused(t, ctx); f.Bundle != fmt.Sprint(target) || f.Text != fmt.Sprintf("Roll back to #%d", target) {
		t.Errorf("the focus is on %s, want Roll back in row #%d", f, target)
	}
	if n := lastBundle(t, m.Store, ext.ID); n != last+1 {
		t.Errorf("the rollback published up to #%d, want one bundle (#%d)", n, last+1)
	}
	checkAccessible(t, ctx, "bundles after a rollback")

	// The page-by-page view offers the same, and reads its page again.
	openApp(t, ctx, url+"/pages")
	classicRow := fmt.Sprintf(`#classic-rows [data-bundle="%d"]`, last)
	bbkClickFound(t, ctx, "Roll back on the page-by-page view", fmt.Sprintf(`document.querySelector('%s .rollback')`, classicRow))
	bbkClickFound(t, ctx, "Yes, roll back", fmt.Sprintf(`document.querySelector('%s .confirm-rollback[aria-disabled="false"]')`, classicRow))
	waitJS(t, ctx, fmt.Sprintf(`document.querySelector("#classic-rows [data-bundle]")?.dataset.bundle === "%d"`, last+2))
	if got, want := text(t, ctx, fmt.Sprintf(`#classic-rows [data-bundle="%d"] .rollback-of`, last+2)), fmt.Sprintf("rollback of #%d", last); got != want {
		t.Errorf("the page-by-page view's new row says %q, want %q", got, want)
	}
	waitJS(t, ctx, fmt.Sprintf(`document.activeElement === document.querySelector('%s .rollback')`, classicRow))

	// A refusal: an extension that served the highest version Chrome takes
	// can never be updated again, so the service refuses to roll it back.
	ext2 := d.Extensions[2] // no bundles yet
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "key.json")
	writeFile(t, keyPath, keyFile(ext2.ID, setKey(t, m.Store, ext2.ID)))
	for i, v := range []string{"1.0.0", "65535.65535.65535.65535"} {
		zipPath := filepath.Join(dir, fmt.Sprintf("%d.zip", i))
		writeFile(t, zipPath, extensionZip(t, map[string]string{"manifest.json": `{"manifest_version": 3, "name": "Maxed", "version": "` + v + `"}`}))
		submitAsPipeline(t, m.URL(), keyPath, zipPath)
	}
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext2.ID))
	waitJS(t, ctx, top(2))
	first := `#bundle-rows [data-bundle="1"]`
	bbkClickFound(t, ctx, "Roll back to #1", fmt.Sprintf(`document.querySelector('%s .rollback')`, first))
	bbkClickFound(t, ctx, "Yes, roll back", fmt.Sprintf(`document.querySelector('%s .confirm-rollback[aria-disabled="false"]')`, first))
	waitJS(t, ctx, `document.querySelector("#rollback-error").textContent !== ""`)
	if got := text(t, ctx, `#rollback-error`); !strings.Contains(got, "Rolling back to #1 failed") || !strings.Contains(got, "65535.65535.65535.65535") {
		t.Errorf("the refusal shows as %q", got)
	}
	if n := lastBundle(t, m.Store, ext2.ID); n != 2 {
		t.Errorf("a refused rollback published #%d", n)
	}
	if got := text(t, ctx, `#current-bundle`); got != "#2" {
		t.Errorf("after a refused rollback the header says %q", got)
	}
	waitJS(t, ctx, fmt.Sprintf(`document.activeElement === document.querySelector('%s .rollback')`, first))
}

// The panel counts the notes' bytes (UTF-8) as they are typed against the
// 10 KiB limit, says what is wrong above the box once they are over it,
// and does not start an upload with them; shortened, they go.
func TestReleaseNotesLimitInThePanel(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	last := lastBundle(t, m.Store, ext.ID)
	ctx := adminTab(t, m, d)
	openUploadPanel(t, ctx, m.URL(), ext.ID)
	calls := trackRequests(t, ctx, api.PathSubmitUpload)

	bbkClickFound(t, ctx, "the release notes box", `document.querySelector("#release-notes")`)
	// 3,413 euro signs are 10,239 bytes: pasted, then two letters typed.
	long := strings.Repeat("€", 3413)
	if _, err := chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: long}); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, `document.querySelector("#release-notes-count").textContent === "10,239 of 10,240 bytes (10 KiB)"`)
	if got := text(t, ctx, `#release-notes-error`); got != "" {
		t.Fatalf("under the limit the box says %q", got)
	}
	rnType(t, ctx, "ab")
	waitJS(t, ctx, `document.querySelector("#release-notes-count").textContent === "10,241 of 10,240 bytes (10 KiB)"`)
	if got := text(t, ctx, `#release-notes-error`); !strings.Contains(got, "10241 bytes, 1 over the limit of 10240") {
		t.Fatalf("over the limit the box says %q", got)
	}
	if got := evalJS[string](t, ctx, `document.querySelector("#release-notes").getAttribute("aria-invalid")`); got != "true" {
		t.Errorf("aria-invalid = %q over the limit", got)
	}
	// The message is above the box, and the box points to it.
	if !evalJS[bool](t, ctx, `document.querySelector("#release-notes-error").getBoundingClientRect().bottom <= document.querySelector("#release-notes").getBoundingClientRect().top`) {
		t.Error("the message is not above the notes box")
	}
	if got := evalJS[string](t, ctx, `document.querySelector("#release-notes").getAttribute("aria-describedby")`); !strings.Contains(got, "release-notes-error") {
		t.Errorf("the box is described by %q", got)
	}

	// A zip dropped now is not uploaded; the focus goes to the notes.
	dropFiles(t, ctx, pageFile{Name: "tab-tamer.zip", Type: "application/zip", Data: extensionZip(t, map[string]string{
		"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "9.5.0"}`,
	})})
	waitJS(t, ctx, `document.querySelector("#upload-notices")?.textContent.includes("Nothing was uploaded") === true`)
	waitJS(t, ctx, `document.activeElement.id === "release-notes"`)
	if started, _ := calls.counts(); started != 0 {
		t.Fatalf("%d upload requests were made with notes over the limit", started)
	}
	if n := lastBundle(t, m.Store, ext.ID); n != last {
		t.Fatalf("bundle #%d was published", n)
	}
	keepPanelScreenshot(t, ctx)

	// Two Backspaces: under the limit, the message goes, Upload publishes.
	bbPress(t, ctx, kb.Backspace)
	bbPress(t, ctx, kb.Backspace)
	waitJS(t, ctx, `document.querySelector("#release-notes-count").textContent === "10,239 of 10,240 bytes (10 KiB)"`)
	waitJS(t, ctx, `document.querySelector("#release-notes-error").textContent === "" && document.querySelector("#upload-notices") === null`)
	bbkClickFound(t, ctx, "Upload", `document.querySelector("#upload-start")`)
	waitJS(t, ctx, `document.querySelector("#upload-result") !== null || document.querySelector("#upload-outcome") !== null`)
	b, err := m.Store.FindBundle(context.Background(), ext.ID, last+1)
	if err != nil || b.ReleaseNotes != long {
		t.Fatalf("bundle #%d has %d bytes of notes (%v), want the %d left", last+1, len(b.ReleaseNotes), err, len(long))
	}
}
