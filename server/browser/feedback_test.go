package browser_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
)

// fbDrop drags files from the desktop onto the element sel and drops them
// (DevTools input: the browser makes the DataTransfer and its Files).
func fbDrop(t *testing.T, ctx context.Context, sel string, paths []string) {
	t.Helper()
	do(t, ctx, chromedp.ScrollIntoView(chromedp.CSS(sel)))
	at := evalJS[[]float64](t, ctx, fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`, sel))
	for _, typ := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
		if _, err := chromedp.Call(ctx, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: at[0], Y: at[1],
			Data: &input.DragData{Items: []*input.DragDataItem{}, Files: paths, DragOperationsMask: 1}}); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
	}
}

// fbImage is a w×h picture with a coloured corner, encoded as PNG or JPEG.
func fbImage(t *testing.T, w, h int, asJPEG bool) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w / 4 {
		for y := range h / 4 {
			img.Set(x, y, color.RGBA{R: 220, G: 40, B: 40, A: 255})
		}
	}
	var b bytes.Buffer
	var err error
	if asJPEG {
		err = jpeg.Encode(&b, img, nil)
	} else {
		err = png.Encode(&b, img)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fbReport makes a report on extension id by one of its testers, with a
// long first line and a 1280×800 screenshot, as the service keeps one,
// and returns its id.
func fbReport(t *testing.T, m *cli.Main, id int64) int64 {
	t.Helper()
	ctx := t.Context()
	testers, err := m.Store.FindTesters(ctx, betaport.TesterFilter{ExtensionID: id, Limit: 1})
	if err != nil || len(testers) == 0 {
		t.Fatalf("a tester of extension %d: %v", id, err)
	}
	shot := fbImage(t, 1280, 800, false)
	key := betaport.FeedbackKey(id, "a11y"+fmt.Sprint(time.Now().UnixNano()), 1, "image/png")
	if err := m.Blobs.WriteAll(ctx, key, shot, nil); err != nil {
		t.Fatal(err)
	}
	f := &betaport.Feedback{ExtensionID: id, TesterID: testers[0].ID, BundleNumber: 0, Version: "",
		Text:   "After the last update the popup opens blank on every page I tried, including the settings page and a new tab; reloading the extension does not help.\nSteps: open the popup.",
		Source: betaport.FeedbackFromBuildsPage, Browser: "Chrome 156", OS: "Linux",
		Screenshots: []betaport.Screenshot{{Number: 1, Type: "image/png", Width: 1280, Height: 800, Size: int64(len(shot)), BlobKey: key}}}
	if err := m.Store.CreateFeedback(ctx, f); err != nil {
		t.Fatal(err)
	}
	return f.ID
}

// TestFeedbackFromTheBuildsPageArrivesLive: a tester opens "Report a
// problem" on their builds page, types what happened, pastes a screenshot
// with Ctrl+V, drops another (and a GIF, which is refused and says so),
// and sends. The admin's feedback list, open in another browser, shows the
// report without a reload; the admin opens it with the mouse, it is marked
// seen, the arrow keys go between its screenshots, Resolve resolves it and
// Escape closes it; Back opens it again. The tester's own list says it is
// resolved, live.
func TestFeedbackFromTheBuildsPageArrivesLive(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	admin := newTab(t)
	signIn(t, admin, m.URL(), d.Admins[0].Email, d.Admins[0].Password)
	openApp(t, admin, fmt.Sprintf("%s/extensions/%d/feedback", m.URL(), ext.ID))
	waitJS(t, admin, `document.querySelector("#feedback-empty") !== null`)
	// A mark that a reload or a navigation would wipe.
	evalJS[bool](t, admin, `window.fbSameDocument = true`)

	tester := bbkPrivateTab(t)
	openApp(t, tester, m.URL()+d.TesterLink)
	waitLocation(t, tester, m.URL()+"/builds")
	do(t, tester, chromedp.Click(chromedp.CSS(`#feedback-summary`)), chromedp.WaitVisible(chromedp.CSS(`#feedback-text`)))
	bbkType(t, tester, `#feedback-text`, "The popup is blank after an update.")

	// A screenshot on the clipboard (another program copied it), pasted
	// into the form with Ctrl+V.
	origin := m.URL()
	for _, name := range []string{"clipboard-write", "clipboard-read"} {
		if _, err := chromedp.Call(tester, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: cdpbrowser.PermissionSettingGranted,
			Origin: origin, BrowserContextID: chromedp.FromContext(tester).BrowserContextID}); err != nil {
			t.Fatalf("clipboard permission: %v", err)
		}
	}
	evalJS[bool](t, tester, `(async () => {
		const c = document.createElement("canvas"); c.width = 320; c.height = 200;
		const g = c.getContext("2d"); g.fillStyle = "#2266dd"; g.fillRect(0, 0, 160, 100);
		const blob = await new Promise(r => c.toBlob(r, "image/png"));
		await navigator.clipboard.write([new ClipboardItem({"image/png": blob})]);
		return true; })()`)
	bbkClickIntoField(t, tester, `#feedback-text`)
	if _, err := chromedp.Call(tester, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Key: "v", Code: "KeyV",
		WindowsVirtualKeyCode: 86, Modifiers: 2, Commands: []string{"paste"}}); err != nil {
		t.Fatal(err)
	}
	chromedp.Call(tester, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyUp, Key: "v", Code: "KeyV", WindowsVirtualKeyCode: 86, Modifiers: 2})
	bbkWait(t, tester, `document.querySelectorAll("#shot-list li").length === 1`, "the pasted screenshot was not attached")
	if got := evalJS[string](t, tester, `document.querySelector("#feedback-text").value`); got != "The popup is blank after an update." {
		t.Fatalf("the paste changed the text to %q", got)
	}

	// Dropped: a JPEG, and a GIF that is refused.
	paths := writeFiles(t, []pageFile{{Name: "window.jpg", Data: fbImage(t, 640, 400, true)}, {Name: "anim.gif", Data: []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")}})
	fbDrop(t, tester, `#shot-drop`, paths[:1])
	bbkWait(t, tester, `document.querySelectorAll("#shot-list li").length === 2`, "the dropped screenshot was not attached")
	fbDrop(t, tester, `#shot-drop`, paths[1:])
	bbkWait(t, tester, `(document.querySelector("#feedback-error")?.textContent ?? "").includes("anim.gif is not a PNG, JPEG or WebP")`, "the GIF was not refused")
	if n := evalJS[int](t, tester, `document.querySelectorAll("#shot-list li").length`); n != 2 {
		t.Fatalf("after the GIF the form holds %d screenshots", n)
	}
	checkAccessible(t, tester, "the report form with two screenshots and a refusal")
	do(t, tester, chromedp.Click(chromedp.CSS(`#send-feedback`)))
	bbkWait(t, tester, `(document.querySelector("#feedback-sent")?.textContent ?? "").startsWith("Thank you: report #")`, "the report was not sent")
	if v := evalJS[string](t, tester, `document.querySelector("#feedback-text").value + " / " + document.querySelectorAll("#shot-list li").length`); v != " / 0" {
		t.Fatalf("after sending the form holds %q (text / screenshots)", v)
	}
	bbkWait(t, tester, `(document.querySelector("#my-reports")?.textContent ?? "").includes("The popup is blank")`, "the tester's own list does not show the report")

	// The admin's open list shows it, same document.
	bbkWait(t, admin, `(document.querySelector("#reports")?.textContent ?? "").includes("The popup is blank after an update.")`, "the report never reached the admin's open list")
	if !evalJS[bool](t, admin, `window.fbSameDocument === true`) {
		t.Fatal("the admin's page was reloaded")
	}
	if badge := text(t, admin, `#reports [data-report] .badge`); badge != "New" {
		t.Fatalf("the row's status is %q", badge)
	}
	do(t, admin, chromedp.Click(chromedp.CSS(`#reports [data-report] a.report-link`)))
	bbkWait(t, admin, `document.querySelector("#report-viewer") !== null && location.pathname.includes("/feedback/")`, "the viewer did not open")
	bbkWait(t, admin, `(document.querySelector("#report-facts")?.textContent ?? "").startsWith("Seen")`, "opening a new report did not mark it seen")
	bbkWait(t, admin, `(() => { const i = document.querySelector("#report-shot-image"); return i && i.complete && i.naturalWidth === 320 && i.naturalHeight === 200; })()`,
		"the first screenshot (the pasted one, 320×200) did not load")
	if got := text(t, admin, `#report-text`); got != "The popup is blank after an update." {
		t.Fatalf("the viewer shows %q", got)
	}
	// The arrow keys, with the focus in the viewer.
	do(t, admin, chromedp.KeyEvent(kb.ArrowRight))
	bbkWait(t, admin, `(document.querySelector("#report-shot-caption")?.textContent ?? "").startsWith("Screenshot 2 of 2 (640×400)")`, "→ did not show the second screenshot")
	bbkWait(t, admin, `(() => { const i = document.querySelector("#report-shot-image"); return i.complete && i.naturalWidth === 640; })()`, "the second screenshot did not load")
	do(t, admin, chromedp.KeyEvent(kb.ArrowRight))
	do(t, admin, chromedp.KeyEvent(kb.ArrowLeft))
	bbkWait(t, admin, `(document.querySelector("#report-shot-caption")?.textContent ?? "").startsWith("Screenshot 1 of 2")`, "← did not go back")
	do(t, admin, chromedp.Click(chromedp.CSS(`#report-resolved`)))
	bbkWait(t, admin, `(document.querySelector("#report-facts")?.textContent ?? "").startsWith("Resolved")`, "Resolve did not resolve")
	bbkWait(t, admin, `document.querySelector("#reports [data-report] .badge")?.textContent === "Resolved"`, "the row did not follow")
	do(t, admin, chromedp.KeyEvent(kb.Escape))
	bbkWait(t, admin, `document.querySelector("#report-viewer") === null && location.pathname.endsWith("/feedback")`, "Escape did not close the viewer")
	do(t, admin, chromedp.NavigateBack())
	bbkWait(t, admin, `document.querySelector("#report-viewer") !== null && (document.querySelector("#report-facts")?.textContent ?? "").startsWith("Resolved")`,
		"Back did not open the report again")
	if !evalJS[bool](t, admin, `window.fbSameDocument === true`) {
		t.Fatal("the admin's page was reloaded")
	}

	// The tester's list follows.
	bbkWait(t, tester, `document.querySelector("#my-reports .badge")?.textContent === "Resolved"`, "the tester's list does not say resolved")
	if s := text(t, tester, `#feedback-summary`); !strings.Contains(s, "your reports (1)") {
		t.Fatalf("the summary says %q", s)
	}
}
