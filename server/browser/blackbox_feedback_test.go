package browser_test

// Black-box tests of issue 32 (testers' feedback) as people meet it in the
// browser: a tester reports a problem from their builds page, clumsily
// (an empty report, files that are no screenshots, one too many, a
// double press of Send), and admins read, move and delete the reports on
// the extension's feedback page. Written from the issue and the pages as
// a person sees them, without reading the implementation. The browser is
// driven only through DevTools input (mouse, wheel, keys, dropped and
// chosen files, a pasted clipboard) and navigation; JavaScript only reads
// the page (and puts an image on the clipboard, as another program would).
// The HTTP API and the store only set data up and check what was kept.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/textproto"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/demo"
)

// ---------------------------------------------------------------------
// Images

// bbfpPNG is a w×h PNG screenshot.
func bbfpPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{uint8(x * 3), uint8(y * 5), 120, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bbfpJPEG is a w×h JPEG photo.
func bbfpJPEG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{200, uint8(x), uint8(y), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bbfpGIF is a GIF: what a tester renames .png, hoping.
func bbfpGIF(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gif.Encode(&b, image.NewPaletted(image.Rect(0, 0, 40, 30), color.Palette{color.Black, color.White}), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bbfpHugePNG is a real PNG over 5 MB (noise, stored uncompressed).
func bbfpHugePNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 1400, 1000))
	rand.Read(img.Pix)
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if b.Len() <= 5<<20 {
		t.Fatalf("the huge PNG is only %d bytes", b.Len())
	}
	return b.Bytes()
}

// ---------------------------------------------------------------------
// The HTTP API, for setting up and checking

type bbfpAPI struct {
	t    *testing.T
	base string
	hc   *http.Client
}

// bbfpAdmin signs the demo's first admin in over HTTP.
func bbfpAdmin(t *testing.T, m *cli.Main, d *demo.Result) *bbfpAPI {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	a := &bbfpAPI{t: t, base: m.URL(), hc: &http.Client{Jar: jar}}
	if code, body := a.call(http.MethodPost, api.PathSession, api.SignIn{Email: d.Admins[0].Email, Password: d.Admins[0].Password}); code != http.StatusOK {
		t.Fatalf("signing the admin in over HTTP: %d %s", code, body)
	}
	return a
}

// bbfpTesterHTTP opens a tester's personal link (a path) in an HTTP client
// of its own: that tester, signed in.
func bbfpTesterHTTP(t *testing.T, m *cli.Main, link string) *bbfpAPI {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	a := &bbfpAPI{t: t, base: m.URL(), hc: &http.Client{Jar: jar}}
	if strings.HasPrefix(link, "/") {
		link = m.URL() + link
	}
	resp, err := a.hc.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/builds" {
		t.Fatalf("the tester's link %s ended at %s with %d", link, resp.Request.URL.Path, resp.StatusCode)
	}
	return a
}

// bbfpInvite invites a tester as the admin and signs them in with their
// link, over HTTP.
func bbfpInvite(t *testing.T, m *cli.Main, admin *bbfpAPI, extID int64, email string) (*bbfpAPI, api.Invited) {
	t.Helper()
	code, body := admin.call(http.MethodPost, api.TestersPath(extID), api.Invite{Email: email, Name: strings.Split(email, "@")[0]})
	if code != http.StatusCreated {
		t.Fatalf("inviting %s: %d %s", email, code, body)
	}
	var inv api.Invited
	if err := json.Unmarshal(body, &inv); err != nil || inv.InviteURL == "" {
		t.Fatalf("the invite of %s answered %s (%v)", email, body, err)
	}
	link := inv.InviteURL
	if u, err := url.Parse(link); err == nil && u.IsAbs() {
		link = u.Path
	}
	return bbfpTesterHTTP(t, m, link), inv
}

func (a *bbfpAPI) do(req *http.Request) (int, []byte) {
	a.t.Helper()
	req.Header.Set("Origin", a.base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := a.hc.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (a *bbfpAPI) call(method, path string, in any) (int, []byte) {
	a.t.Helper()
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, a.base+path, body)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return a.do(req)
}

// send posts a report as a tester (the builds page's form, over HTTP).
func (a *bbfpAPI) send(extID int64, text string, bundle int64, shots ...pageFile) betaport.Feedback {
	a.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	w.WriteField("text", text)
	if bundle > 0 {
		w.WriteField("bundle", strconv.FormatInt(bundle, 10))
	}
	for _, s := range shots {
		h := make(textproto.MIMEHeader)
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="screenshots"; filename=%q`, s.Name))
		h.Set("Content-Type", s.Type)
		p, _ := w.CreatePart(h)
		p.Write(s.Data)
	}
	w.Close()
	req, _ := http.NewRequest(http.MethodPost, a.base+api.FeedbackPath(extID), &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	code, b := a.do(req)
	if code != http.StatusCreated {
		a.t.Fatalf("sending the report %q: %d %s", text, code, b)
	}
	var f betaport.Feedback
	if err := json.Unmarshal(b, &f); err != nil || f.ID == 0 {
		a.t.Fatalf("the report %q answered %s (%v)", text, b, err)
	}
	return f
}

// reports lists every report the client may see, newest first, page after
// page.
func (a *bbfpAPI) reports(extID int64) []betaport.Feedback {
	a.t.Helper()
	var all []betaport.Feedback
	cursor := ""
	for {
		path := api.FeedbackPath(extID) + "?limit=100"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		code, b := a.call(http.MethodGet, path, nil)
		if code != http.StatusOK {
			a.t.Fatalf("listing the reports: %d %s", code, b)
		}
		var p api.Page[betaport.Feedback]
		if err := json.Unmarshal(b, &p); err != nil {
			a.t.Fatalf("the reports: %v: %s", err, b)
		}
		all = append(all, p.Data...)
		if cursor = p.NextCursor; cursor == "" {
			return all
		}
	}
}

// report reads one report: the status code, and the report on 200.
func (a *bbfpAPI) report(extID, id int64) (int, betaport.Feedback) {
	a.t.Helper()
	code, b := a.call(http.MethodGet, api.FeedbackReportPath(extID, id), nil)
	var f betaport.Feedback
	if code == http.StatusOK {
		if err := json.Unmarshal(b, &f); err != nil {
			a.t.Fatalf("report %d: %v: %s", id, err, b)
		}
	}
	return code, f
}

// audit is the extension's audit trail, newest first (its first page).
func (a *bbfpAPI) audit(extID int64) []betaport.AuditEvent {
	a.t.Helper()
	code, b := a.call(http.MethodGet, api.AuditPath(extID)+"?limit=100", nil)
	if code != http.StatusOK {
		a.t.Fatalf("the audit trail: %d %s", code, b)
	}
	var p api.Page[betaport.AuditEvent]
	if err := json.Unmarshal(b, &p); err != nil {
		a.t.Fatalf("the audit trail: %v: %s", err, b)
	}
	return p.Data
}

// bbfpAudited reports whether the trail records action by actor.
func bbfpAudited(events []betaport.AuditEvent, action, actor string) bool {
	return slices.ContainsFunc(events, func(e betaport.AuditEvent) bool { return e.Action == action && e.Actor == actor })
}

func bbfpActions(events []betaport.AuditEvent) []string {
	var s []string
	for _, e := range events {
		s = append(s, e.Action+" by "+e.Actor+" ("+e.Subject+")")
	}
	return s
}

// ---------------------------------------------------------------------
// The browser

// bbfpTesterTab opens the demo tester's personal link in a browser of the
// test's own: their builds page, signed in, with the app booted.
func bbfpTesterTab(t *testing.T, m *cli.Main, d *demo.Result) context.Context {
	t.Helper()
	ctx := newTab(t)
	do(t, ctx, chromedp.Navigate(m.URL()+d.TesterLink))
	bbfpWait(t, ctx, `location.pathname === "/builds" && !!document.querySelector('.shell[data-app="client"] #feedback-summary')`,
		"the tester's link did not open their builds page with its Report a problem")
	return ctx
}

// bbfpAdminPrivateTab is the demo's first admin in a browser of their own,
// beside a test's tester: another person.
func bbfpAdminPrivateTab(t *testing.T, m *cli.Main, d *demo.Result) context.Context {
	t.Helper()
	ctx := bbkPrivateTab(t)
	if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		t.Fatal(err)
	}
	c := signInHTTP(t, m.URL(), d.Admins[0].Email, d.Admins[0].Password)
	if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{
		Name: c.Name, Value: c.Value, URL: m.URL() + "/", HTTPOnly: &c.HttpOnly, SameSite: network.CookieSameSiteLax,
	}); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// bbfpWait waits up to a minute for expr, and says what the page shows
// (its address and the start of its text) if it never holds.
func bbfpWait(t *testing.T, ctx context.Context, expr, msg string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(30*time.Millisecond), chromedp.WithPollingTimeout(patient(20*time.Second)))); err != nil {
		shown, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + (document.querySelector("main")?.innerText ?? document.body.innerText).replace(/\n(#\d+ \(\d+\.\d+\.\d+\)\n)+/g, "\n[builds]\n").slice(0, 1500)`))
		t.Fatalf("%s (waited %v for %s: %v); the page shows:\n%s", msg, patient(20*time.Second), expr, err, shown)
	}
}

// bbfpClick clicks the element sel with the mouse, where a hand would aim.
func bbfpClick(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	bbkClickFound(t, ctx, sel, fmt.Sprintf(`document.querySelector(%q)`, sel))
}

// bbfpOpenForm opens the Report a problem disclosure with a click, unless
// it is open.
func bbfpOpenForm(t *testing.T, ctx context.Context) {
	t.Helper()
	if evalJS[bool](t, ctx, `!!document.querySelector("#feedback-panel")?.open`) {
		return
	}
	bbfpClick(t, ctx, "#feedback-summary")
	bbfpWait(t, ctx, `!!document.querySelector("#feedback-panel")?.open && !!document.querySelector("#feedback-text")?.checkVisibility()`,
		"a click on Report a problem did not open the form")
}

// bbfpShown is a JavaScript test that sel is on the page and visible.
func bbfpShown(sel string) string {
	return fmt.Sprintf(`!!document.querySelector(%q)?.checkVisibility()`, sel)
}

// bbfpGone is a JavaScript test that sel is not shown.
func bbfpGone(sel string) string {
	return fmt.Sprintf(`!document.querySelector(%q)?.checkVisibility()`, sel)
}

// bbfpText is the visible text of sel ("" when absent).
func bbfpText(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return strings.TrimSpace(evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector(%q)?.innerText ?? ""`, sel)))
}

// bbfpShots are the names of the screenshots attached in the form.
func bbfpShots(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return evalJS[[]string](t, ctx, `[...document.querySelectorAll("#shot-list li")].map(li => li.querySelector("img")?.alt || li.innerText)`)
}

func bbfpShotsAre(names ...string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(names)
	return fmt.Sprintf(`JSON.stringify([...document.querySelectorAll("#shot-list li")].map(li => li.querySelector("img")?.alt || li.innerText)) === %q`, strings.TrimSpace(b.String()))
}

// bbfpDrop drags files from the desktop over sel and drops them there:
// DevTools drag events, the browser making the DataTransfer and its Files.
func bbfpDrop(t *testing.T, ctx context.Context, sel string, files ...pageFile) {
	t.Helper()
	paths := writeFiles(t, files)
	before := evalJS[string](t, ctx, `location.href`)
	x, y := bbkFind(t, ctx, sel, fmt.Sprintf(`document.querySelector(%q)`, sel))
	for _, typ := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
		if _, err := chromedp.Call(ctx, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: x, Y: y,
			Data: &input.DragData{Items: []*input.DragDataItem{}, Files: paths, DragOperationsMask: 1}}); err != nil {
			t.Fatalf("%s over %s: %v", typ, sel, err)
		}
	}
	if after := evalJS[string](t, ctx, `location.href`); after != before {
		t.Fatalf("dropping files opened %s: the page did not keep the drop", after)
	}
}

// bbfpSent waits for the thank-you of a sent report and returns its
// number and the build it names.
var bbfpThanks = regexp.MustCompile(`^Thank you: report #(\d+) is with the extension's team, on (#\d+ \([^)]+\))\.$`)

func bbfpSent(t *testing.T, ctx context.Context) (int64, string) {
	t.Helper()
	bbfpWait(t, ctx, bbfpShown("#feedback-sent"), "the report was not sent")
	msg := bbfpText(t, ctx, "#feedback-sent")
	sm := bbfpThanks.FindStringSubmatch(msg)
	if sm == nil {
		t.Fatalf("after Send the page says %q, want “Thank you: report #N is with the extension's team, on #B (version).”", msg)
	}
	id, _ := strconv.ParseInt(sm[1], 10, 64)
	return id, sm[2]
}

// bbfpRow is a report's row on the admins' list.
func bbfpRow(id int64) string { return fmt.Sprintf(`#reports [data-report="%d"]`, id) }

// bbfpBadge is a JavaScript test that report id's row shows the badge.
func bbfpBadge(id int64, badge string) string {
	return fmt.Sprintf(`document.querySelector(%q)?.innerText.trim() === %q`, bbfpRow(id)+" .badge", badge)
}

// bbfpListIDs are the report ids of the rows in the DOM, in order.
const bbfpListIDs = `[...document.querySelectorAll("#reports [data-report]")].map(r => +r.dataset.report)`

func bbfpListIs(ids ...int64) string {
	b, _ := json.Marshal(ids)
	return fmt.Sprintf(`JSON.stringify(%s) === %q`, bbfpListIDs, string(b))
}

// bbfpFrame waits for the page to paint twice: what the wheel moved is
// laid out.
func bbfpFrame(t *testing.T, ctx context.Context) {
	t.Helper()
	evalJS[bool](t, ctx, `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`)
}

// bbfpKey presses one key with its code, as a keyboard sends it.
func bbfpKey(t *testing.T, ctx context.Context, key string) {
	t.Helper()
	do(t, ctx, chromedp.KeyEvent(key))
}

// bbfpMarkDocument tags the page's document, and bbfpSameDocument says
// whether it is still the same one (no reload came in between).
func bbfpMarkDocument(t *testing.T, ctx context.Context) {
	t.Helper()
	evalJS[bool](t, ctx, `(window.__bbfpDocument = true)`)
}

func bbfpSameDocument(t *testing.T, ctx context.Context) bool {
	t.Helper()
	return evalJS[bool](t, ctx, `window.__bbfpDocument === true`)
}

// bbfpPosts records the page's POSTs whose address ends with suffix, and
// holds them until released (then it holds no more).
type bbfpPosts struct {
	ctx      context.Context
	mu       sync.Mutex
	held     []fetch.RequestID
	count    int
	released bool
	first    chan struct{}
}

func bbfpHoldPosts(t *testing.T, ctx context.Context, pattern string) *bbfpPosts {
	t.Helper()
	h := &bbfpPosts{ctx: ctx, first: make(chan struct{})}
	if err := chromedp.Listen(ctx, func(ev any) {
		e, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if e.Request.Method != http.MethodPost || h.released {
			go chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
			if e.Request.Method == http.MethodPost {
				h.count++
			}
			return
		}
		if h.count == 0 {
			close(h.first)
		}
		h.count++
		h.held = append(h.held, e.RequestID)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: pattern}}}); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *bbfpPosts) waitFirst(t *testing.T) {
	t.Helper()
	select {
	case <-h.first:
	case <-time.After(patient(10 * time.Second)):
		t.Fatal("the page sent no report")
	}
}

func (h *bbfpPosts) release(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	held := h.held
	h.held, h.released = nil, true
	h.mu.Unlock()
	for _, id := range held {
		if _, err := chromedp.Call(h.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id}); err != nil {
			t.Fatal(err)
		}
	}
}

func (h *bbfpPosts) n() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count
}

// bbfpFailPosts makes the first n of the page's POSTs whose address
// matches pattern fail as a dropped connection does (Wi-Fi gone), and lets
// the others through; it returns how many there were.
func bbfpFailPosts(t *testing.T, ctx context.Context, pattern string, n int) func() int {
	t.Helper()
	var mu sync.Mutex
	seen := 0
	if err := chromedp.Listen(ctx, func(ev any) {
		e, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if e.Request.Method == http.MethodPost {
			seen++
			if seen <= n {
				go chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonInternetDisconnected})
				return
			}
		}
		go chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: pattern}}}); err != nil {
		t.Fatal(err)
	}
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// bbfpWindowState minimizes or restores the tab's window.
func bbfpWindowState(t *testing.T, ctx context.Context, state cdpbrowser.WindowState) {
	t.Helper()
	w, err := chromedp.CallBrowser(ctx, cdpbrowser.GetWindowForTarget, cdpbrowser.GetWindowForTargetParams{TargetID: chromedp.FromContext(ctx).Target.TargetID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetWindowBounds, cdpbrowser.SetWindowBoundsParams{WindowID: w.WindowID, Bounds: &cdpbrowser.Bounds{WindowState: state}}); err != nil {
		t.Fatal(err)
	}
}

// bbfpLoseFocus takes the focus from the tab's window as a person's other
// window does: the harness's focus emulation ends (the page now has the
// focus its window really has), another window of the same person opens
// over it, and the page's window is minimized. regain brings it back.
func bbfpLoseFocus(t *testing.T, ctx context.Context) (regain func()) {
	t.Helper()
	if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: false}); err != nil {
		t.Fatal(err)
	}
	yes := true
	other, err := chromedp.CallBrowser(ctx, target.CreateTarget, target.CreateTargetParams{URL: "about:blank", NewWindow: &yes,
		BrowserContextID: chromedp.FromContext(ctx).BrowserContextID})
	if err != nil {
		t.Fatal(err)
	}
	bbfpWindowState(t, ctx, cdpbrowser.WindowStateMinimized)
	bbfpWait(t, ctx, `!document.hasFocus() || document.visibilityState === "hidden"`, "the page kept the focus with another window over it and its own minimized")
	return func() {
		t.Helper()
		bbfpWindowState(t, ctx, cdpbrowser.WindowStateNormal)
		if _, err := chromedp.CallBrowser(ctx, target.CloseTarget, target.CloseTargetParams{TargetID: other.TargetID}); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
			t.Fatal(err)
		}
		bbfpWait(t, ctx, `document.hasFocus() && document.visibilityState === "visible"`, "the window did not come back")
	}
}

// bbfpClipboard is held from putting something on the clipboard until
// the page has taken the paste: the browser has one clipboard for all the
// tests running side by side.
var bbfpClipboard sync.Mutex

// bbfpGrantClipboard lets the tab's page use the clipboard, as a person
// who allowed it.
func bbfpGrantClipboard(t *testing.T, ctx context.Context) {
	t.Helper()
	origin := evalJS[string](t, ctx, `location.origin`)
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name},
			Setting:    cdpbrowser.PermissionSettingGranted, Origin: origin,
			BrowserContextID: chromedp.FromContext(ctx).BrowserContextID,
		}); err != nil {
			t.Fatalf("granting %s: %v", name, err)
		}
	}
}

// bbfpCtrlV presses Ctrl+V, the keyboard's paste.
func bbfpCtrlV(t *testing.T, ctx context.Context) {
	t.Helper()
	for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
		p := input.DispatchKeyEventParams{Type: typ, Modifiers: int64(chromedp.ModifierCtrl), Key: "v", Code: "KeyV", WindowsVirtualKeyCode: 86, NativeVirtualKeyCode: 86}
		if typ == input.DispatchKeyEventTypeRawKeyDown {
			p.Commands = []string{"paste"}
		}
		if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, p); err != nil {
			t.Fatalf("Ctrl+V: %v", err)
		}
	}
}

// bbfpPasteText puts text on the clipboard and pastes it with Ctrl+V.
func bbfpPasteText(t *testing.T, ctx context.Context, text, pasted string) {
	t.Helper()
	bbfpClipboard.Lock()
	defer bbfpClipboard.Unlock()
	bbfpGrantClipboard(t, ctx)
	b, _ := json.Marshal(text)
	evalJS[bool](t, ctx, `navigator.clipboard.writeText(`+string(b)+`).then(() => true)`)
	bbfpCtrlV(t, ctx)
	bbfpWait(t, ctx, pasted, "Ctrl+V did not paste the text")
}

// bbfpPaste puts a w×h PNG on the clipboard (as another program copies a
// screenshot) and presses Ctrl+V in the focused field.
func bbfpPaste(t *testing.T, ctx context.Context, w, h int, pasted, msg string) {
	t.Helper()
	bbfpClipboard.Lock()
	defer bbfpClipboard.Unlock()
	bbfpGrantClipboard(t, ctx)
	evalJS[bool](t, ctx, fmt.Sprintf(`(async () => {
		const c = document.createElement("canvas"); c.width = %d; c.height = %d;
		const g = c.getContext("2d"); g.fillStyle = "#c0392b"; g.fillRect(0, 0, c.width, c.height);
		g.fillStyle = "#fff"; g.fillRect(10, 10, c.width / 2, c.height / 2);
		const blob = await new Promise(r => c.toBlob(r, "image/png"));
		await navigator.clipboard.write([new ClipboardItem({"image/png": blob})]);
		return true; })()`, w, h))
	bbfpCtrlV(t, ctx)
	bbfpWait(t, ctx, pasted, msg)
}

// bbfpKeepScreenshot keeps a screenshot of the tab as it is, for a
// failure's evidence, and says where.
func bbfpKeepScreenshot(t *testing.T, ctx context.Context, what string) string {
	t.Helper()
	path, err := screenshot(ctx, t.Name()+"-"+what)
	if err != nil {
		return fmt.Sprintf(" (no screenshot: %v)", err)
	}
	return "; screenshot: " + path
}

// bbfpNoJargon fails the test when a message meant for a person carries
// the service's internal error code ("betaport: invalid: …").
func bbfpNoJargon(t *testing.T, where, msg string) {
	t.Helper()
	if strings.HasPrefix(msg, "betaport:") || regexp.MustCompile(`\b(invalid|conflict|internal|not_found|forbidden):`).MatchString(msg) {
		t.Errorf("%s shows the service's error code to the person: %q (want only the sentence that says what to do)", where, msg)
	}
}

// ---------------------------------------------------------------------
// The tester's form

// TestBlackBoxFeedbackPagesTesterTypoThenRetry: a tester presses Send on an
// empty report and is told what to do (nothing is kept), then picks an
// older build with the keyboard, writes a report holding HTML and a
// script, and sends it: the page thanks them naming the report and the
// build, lists it among their own as New, and the admin sees exactly what
// they wrote, as text, with the build, browser and OS attached. Opening
// it marks it seen; resolving it is in the audit trail, and the tester's
// list shows Resolved. Spaces alone are no report either; a pasted log
// over 10 KiB (within the field's character limit) is refused with the
// limit named and the text kept, and the shortened report goes.
func TestBlackBoxFeedbackPagesTesterTypoThenRetry(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	admin := bbfpAdmin(t, m, d)
	ctx := bbfpTesterTab(t, m, d)
	if got := bbfpText(t, ctx, "#feedback-summary"); got != "Report a problem" {
		t.Errorf("before any report the disclosure reads %q", got)
	}
	bbfpOpenForm(t, ctx)

	// Send, with nothing written or attached.
	bbfpClick(t, ctx, "#send-feedback")
	bbfpWait(t, ctx, `document.querySelector("#feedback-error")?.getAttribute("role") === "alert" && !!document.querySelector("#feedback-error").checkVisibility() && document.querySelector("#feedback-error").innerText.trim() !== ""`,
		"Send on an empty report did not tell the tester anything")
	msg := bbfpText(t, ctx, "#feedback-error")
	if !strings.Contains(msg, "Say what happened") {
		t.Errorf("an empty report is answered %q: it does not say what to do", msg)
	}
	bbfpNoJargon(t, "the answer to an empty report", msg)
	if n := len(admin.reports(ext.ID)); n != 0 {
		t.Fatalf("an empty report was kept: %d reports", n)
	}

	// The build: from the text field, Shift+Tab to the build list, two
	// arrows down: from "The build I get" past #120 to #119.
	bbkClickIntoField(t, ctx, "#feedback-text")
	do(t, ctx, chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)))
	if f := readFocus(t, ctx); f.ID != "feedback-build" {
		t.Fatalf("Shift+Tab from the text went to %+v, not the build list", f)
	}
	bbfpKey(t, ctx, kb.ArrowDown)
	bbfpKey(t, ctx, kb.ArrowDown)
	bbfpWait(t, ctx, `document.querySelector("#feedback-build").value === "119"`, "two arrows down did not pick build #119")

	written := "Tabs <b>froze</b> & <script>window.__bbfpPwned = 1</script>\n<img src=x onerror=\"window.__bbfpPwned = 2\"> after 5 tabs"
	bbkType(t, ctx, "#feedback-text", written)
	bbfpWait(t, ctx, fmt.Sprintf(`document.querySelector("#feedback-text").value === %q`, written), "the report was not typed in")
	bbfpClick(t, ctx, "#send-feedback")
	id, build := bbfpSent(t, ctx)
	if build != "#119 (1.11.9)" {
		t.Errorf("the thank-you names the build %s, want #119 (1.11.9), the one picked", build)
	}
	if !evalJS[bool](t, ctx, bbfpGone("#feedback-error")) {
		t.Errorf("after a report was sent the old error still shows: %q", bbfpText(t, ctx, "#feedback-error"))
	}
	if v := evalJS[string](t, ctx, `document.querySelector("#feedback-text")?.value ?? ""`); v != "" {
		t.Errorf("after the report was sent the form still holds its text %q: a second Send would send it again", v)
	}
	mine := fmt.Sprintf(`#my-reports li[data-report="%d"]`, id)
	bbfpWait(t, ctx, fmt.Sprintf(`document.querySelector(%q)?.querySelector(".badge")?.innerText.trim() === "New"`, mine),
		"the sent report is not listed among the tester's own, as New")
	bbfpWait(t, ctx, `document.querySelector("#feedback-summary").innerText.trim() === "Report a problem · your reports (1)"`,
		"the disclosure does not count the tester's report")
	if !evalJS[bool](t, ctx, fmt.Sprintf(`document.querySelector(%q).innerText.includes("<b>froze</b>") && !document.querySelector(%q).querySelector("b, script, img:not([src^='blob:']):not([src^='/'])")`, mine, mine)) {
		t.Errorf("the tester's list shows their text as markup, not as they wrote it: %s", evalJS[string](t, ctx, fmt.Sprintf(`document.querySelector(%q).innerHTML`, mine)))
	}

	// What was kept: the one report, as written, on #119, with the
	// browser and system attached without asking.
	got := admin.reports(ext.ID)
	if len(got) != 1 || got[0].ID != id {
		t.Fatalf("the service keeps %d reports (%+v), want report %d alone", len(got), got, id)
	}
	f := got[0]
	if f.Text != written || f.BundleNumber != 119 || f.Version != "1.11.9" || f.Status != betaport.FeedbackNew || f.Source != betaport.FeedbackFromBuildsPage {
		t.Errorf("kept %+v; want the text as written, on #119 (1.11.9), new, from the builds page", f)
	}
	if !strings.Contains(f.Browser, "Chrome") || f.OS != "Linux" {
		t.Errorf("the report says the browser is %q on %q; the tester used Chromium on Linux", f.Browser, f.OS)
	}

	// The admin, in a browser of their own, opens it: text, not markup.
	actx := bbfpAdminPrivateTab(t, m, d)
	openApp(t, actx, fmt.Sprintf("%s/extensions/%d/feedback", m.URL(), ext.ID))
	bbfpWait(t, actx, bbfpBadge(id, "New"), "the admin's list does not show the report as New")
	if !evalJS[bool](t, actx, fmt.Sprintf(`document.querySelector(%q).innerText.includes("<b>froze</b>") && !document.querySelector(%q).querySelector("b, script, img")`, bbfpRow(id), bbfpRow(id))) {
		t.Errorf("the admin's row renders the tester's markup: %s", evalJS[string](t, actx, fmt.Sprintf(`document.querySelector(%q).innerHTML`, bbfpRow(id))))
	}
	bbfpClick(t, actx, bbfpRow(id)+" a.report-link")
	waitLocation(t, actx, fmt.Sprintf("%s/extensions/%d/feedback/%d", m.URL(), ext.ID, id))
	bbfpWait(t, actx, bbfpShown("#report-viewer")+` && !!document.querySelector("#report-text")`, "the report did not open")
	if got := evalJS[string](t, actx, `document.querySelector("#report-text").textContent`); got != written {
		t.Errorf("the viewer shows %q, want exactly what the tester wrote: %q", got, written)
	}
	if n := evalJS[int](t, actx, `document.querySelector("#report-text").querySelectorAll("*").length + document.querySelectorAll("main img[src='x'], main script").length`); n != 0 {
		t.Errorf("the viewer made %d elements of the tester's text", n)
	}
	for _, c := range []context.Context{ctx, actx} {
		if pwned := evalJS[bool](t, c, `window.__bbfpPwned !== undefined`); pwned {
			t.Errorf("the tester's text ran as script")
		}
	}
	bbfpWait(t, actx, `document.querySelector("#report-facts").innerText.trim().startsWith("Seen")`+" && "+bbfpBadge(id, "Seen"),
		"opening a new report did not mark it seen")
	facts := bbfpText(t, actx, "#report-facts")
	for _, want := range []string{"tester@example.com", "#119 (1.11.9)", "Chrome", "Linux"} {
		if !strings.Contains(facts, want) {
			t.Errorf("the report's facts %q do not say %q", facts, want)
		}
	}
	bbfpClick(t, actx, "#report-resolved")
	bbfpWait(t, actx, `document.querySelector("#report-facts").innerText.trim().startsWith("Resolved")`+" && "+bbfpBadge(id, "Resolved")+" && "+bbfpShown("#report-new"),
		"Resolve did not resolve the report (or offer to reopen it)")
	events := admin.audit(ext.ID)
	if !bbfpAudited(events, betaport.AuditFeedbackSeen, d.Admins[0].Email) || !bbfpAudited(events, betaport.AuditFeedbackResolved, d.Admins[0].Email) {
		t.Errorf("the audit trail does not record the admin seeing and resolving the report: %q", bbfpActions(events))
	}

	// The tester comes back to their builds page: Resolved.
	do(t, ctx, chromedp.Reload())
	bbfpWait(t, ctx, `!!document.querySelector('.shell[data-app="client"] #feedback-summary')`, "the builds page did not come back")
	bbfpOpenForm(t, ctx)
	bbfpWait(t, ctx, fmt.Sprintf(`document.querySelector(%q)?.querySelector(".badge")?.innerText.trim() === "Resolved"`, mine),
		"the tester's own report does not show Resolved")

	// Spaces and a blank line are no report.
	bbkType(t, ctx, "#feedback-text", "   \n  ")
	bbfpClick(t, ctx, "#send-feedback")
	bbfpWait(t, ctx, bbfpShown("#feedback-error"), "spaces alone were not refused")
	if n := len(admin.reports(ext.ID)); n != 1 {
		t.Errorf("a report of spaces was kept: %d reports", n)
	}

	// A long log pasted: 6,000 “é”, 12,000 bytes, over the 10 KiB a
	// report keeps though under the field's 10,240 characters. Refused
	// with the limit named, the text kept to be shortened.
	long := strings.Repeat("é", 6000)
	bbkClickIntoField(t, ctx, "#feedback-text")
	do(t, ctx, chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	bbfpPasteText(t, ctx, long, fmt.Sprintf(`document.querySelector("#feedback-text").value.length === %d`, len([]rune(long))))
	bbfpClick(t, ctx, "#send-feedback")
	bbfpWait(t, ctx, `document.querySelector("#feedback-error")?.checkVisibility() && /10 KiB|10,?240/.test(document.querySelector("#feedback-error").innerText)`,
		"a report over 10 KiB was not refused with the limit named")
	if v := evalJS[string](t, ctx, `document.querySelector("#feedback-text").value`); v != long {
		t.Errorf("the refused long text was not kept in the field (%d characters now)", len([]rune(v)))
	}
	bbkClickIntoField(t, ctx, "#feedback-text")
	do(t, ctx, chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	do(t, ctx, chromedp.KeyEvent("The short version"))
	bbfpClick(t, ctx, "#send-feedback")
	bbfpWait(t, ctx, `/^Thank you: report #\d+/.test(document.querySelector("#feedback-sent")?.innerText ?? "") && !document.querySelector("#feedback-error")?.checkVisibility()`,
		"the shortened report was not sent")
	if got := admin.reports(ext.ID); len(got) != 2 || got[0].Text != "The short version" {
		t.Errorf("after the long report was refused and shortened the service keeps %d reports", len(got))
	}
	bbfpWait(t, ctx, `document.querySelector("#feedback-summary").innerText.trim() === "Report a problem · your reports (2)"`,
		"the disclosure does not count two reports")
}

// TestBlackBoxFeedbackPagesScreenshotsClumsy: files that are no screenshot
// (a text file, a GIF renamed .png, a PNG over 5 MB) are refused, each by
// name; six screenshots dropped at once attach five and say why not the
// sixth; two removed, a JPEG and the sixth chosen in the file picker; the
// report sent carries exactly the five shown, in order, and none removed.
func TestBlackBoxFeedbackPagesScreenshotsClumsy(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	admin := bbfpAdmin(t, m, d)
	ctx := bbfpTesterTab(t, m, d)
	bbfpOpenForm(t, ctx)

	for _, bad := range []pageFile{
		{Name: "notes.txt", Data: []byte("the tab froze\n")},
		{Name: "fake.png", Data: bbfpGIF(t)},
		{Name: "huge.png", Data: bbfpHugePNG(t)},
	} {
		bbfpDrop(t, ctx, "#shot-drop", bad)
		bbfpWait(t, ctx, fmt.Sprintf(`(document.querySelector("#feedback-error")?.checkVisibility() && document.querySelector("#feedback-error").innerText.includes(%q)) || document.querySelectorAll("#shot-list li").length > 0`, bad.Name),
			bad.Name+" dropped: neither refused by name nor attached")
		if shots := bbfpShots(t, ctx); len(shots) != 0 {
			t.Errorf("%s was attached as a screenshot: %q", bad.Name, shots)
			bbfpClick(t, ctx, fmt.Sprintf(`#shot-list button[aria-label="Remove %s"]`, bad.Name))
			bbfpWait(t, ctx, `document.querySelectorAll("#shot-list li").length === 0`, "Remove did not remove "+bad.Name)
		}
	}

	var six []pageFile
	for i := 1; i <= 6; i++ {
		six = append(six, pageFile{Name: fmt.Sprintf("shot%d.png", i), Data: bbfpPNG(t, 100+i, 60+i)})
	}
	const shot1 = "<img src=x onerror=window.__bbfpPwned=3>shot1.png" // a name with markup in it: text, never markup
	six[0].Name = shot1
	bbfpDrop(t, ctx, "#shot-drop", six...)
	bbfpWait(t, ctx, bbfpShotsAre(shot1, "shot2.png", "shot3.png", "shot4.png", "shot5.png")+
		` && document.querySelector("#feedback-error")?.innerText.includes("shot6.png")`,
		"six screenshots dropped did not attach the first five and say why not shot6.png")
	bbfpNoJargon(t, "the answer to a sixth screenshot", bbfpText(t, ctx, "#feedback-error"))
	if n := evalJS[int](t, ctx, `document.querySelectorAll("#shot-list img[src='x']").length + (window.__bbfpPwned === undefined ? 0 : 1)`); n != 0 || !strings.Contains(bbfpText(t, ctx, "#shot-list"), shot1) {
		t.Errorf("a file named %q shows as markup in the list of screenshots: %s", shot1, evalJS[string](t, ctx, `document.querySelector("#shot-list").innerHTML`))
	}
	// Each attached screenshot shows as a thumbnail, not a broken image.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`[...document.querySelectorAll("#shot-list li img")].every(i => i.complete && i.naturalWidth > 0)`,
		chromedp.WithPollingTimeout(patient(3*time.Second)))); err != nil {
		t.Errorf("the attached screenshots show as broken images (their previews never load: %s)%s",
			evalJS[string](t, ctx, `JSON.stringify([...document.querySelectorAll("#shot-list li img")].map(i => [i.alt, i.src.slice(0, 40), i.complete, i.naturalWidth]))`),
			bbfpKeepScreenshot(t, ctx, "previews"))
	}

	bbfpClick(t, ctx, `#shot-list button[aria-label="Remove shot2.png"]`)
	bbfpWait(t, ctx, bbfpShotsAre(shot1, "shot3.png", "shot4.png", "shot5.png"), "Remove shot2.png")
	bbfpClick(t, ctx, `#shot-list button[aria-label="Remove shot3.png"]`)
	bbfpWait(t, ctx, bbfpShotsAre(shot1, "shot4.png", "shot5.png"), "Remove shot3.png")

	// The file picker: a JPEG and the sixth screenshot.
	paths := writeFiles(t, []pageFile{{Name: "photo.jpg", Data: bbfpJPEG(t, 130, 90)}, six[5]})
	if _, err := chromedp.Call(ctx, page.SetInterceptFileChooserDialog, page.SetInterceptFileChooserDialogParams{Enabled: true}); err != nil {
		t.Fatal(err)
	}
	x, y := bbkFind(t, ctx, "Choose screenshots…", `document.querySelector("#choose-shots")`)
	chooser, err := chromedp.Run(ctx, chromedp.WaitEvent(page.FileChooserOpened, nil, chromedp.MouseClickXY(x, y)))
	if err != nil {
		t.Fatalf("a click on Choose screenshots… opened no file picker: %v", err)
	}
	if chooser.Mode != page.FileChooserOpenedModeSelectMultiple {
		t.Errorf("the picker takes %q, want several files", chooser.Mode)
	}
	if _, err := chromedp.Call(ctx, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: paths, BackendNodeID: chooser.BackendNodeID}); err != nil {
		t.Fatal(err)
	}
	bbfpWait(t, ctx, bbfpShotsAre(shot1, "shot4.png", "shot5.png", "photo.jpg", "shot6.png"), "the chosen files were not attached after the others")

	written := "Five screenshots of the popup"
	bbkType(t, ctx, "#feedback-text", written)

	// The Wi-Fi drops as they press Send: told so, and nothing is lost.
	posts := bbfpFailPosts(t, ctx, "*/api/extensions/*/feedback", 1)
	bbfpClick(t, ctx, "#send-feedback")
	bbfpWait(t, ctx, `document.querySelector("#feedback-error")?.checkVisibility() && /connection|reach|network|offline/i.test(document.querySelector("#feedback-error").innerText)`,
		"a report that could not reach the service was not answered with what happened")
	if v := evalJS[string](t, ctx, `document.querySelector("#feedback-text").value`); v != written {
		t.Errorf("after a failed send the text is %q, want what was written: %q", v, written)
	}
	if shots := bbfpShots(t, ctx); len(shots) != 5 {
		t.Errorf("after a failed send the form holds the screenshots %q, want the five", shots)
	}
	bbfpClick(t, ctx, "#send-feedback")
	id, _ := bbfpSent(t, ctx)
	if n := posts(); n != 2 {
		t.Errorf("the failed send and the retry made %d requests", n)
	}
	if shots := bbfpShots(t, ctx); len(shots) != 0 {
		t.Errorf("after the report was sent the form still holds its screenshots %q", shots)
	}
	code, f := admin.report(ext.ID, id)
	if code != http.StatusOK {
		t.Fatalf("report %d: %d", id, code)
	}
	var kept []string
	for _, s := range f.Screenshots {
		kept = append(kept, fmt.Sprintf("%d:%s:%dx%d", s.Number, s.Type, s.Width, s.Height))
	}
	want := []string{"1:image/png:101x61", "2:image/png:104x64", "3:image/png:105x65", "4:image/jpeg:130x90", "5:image/png:106x66"}
	if !slices.Equal(kept, want) {
		t.Errorf("the report keeps the screenshots %q, want %q (the five shown, in order; none removed)", kept, want)
	}
	if n := len(admin.reports(ext.ID)); n != 1 {
		t.Errorf("the refused files and the clumsy attaching left %d reports, want 1", n)
	}
}

// TestBlackBoxFeedbackPagesPasteThenDoubleSend: a screenshot copied to the
// clipboard is pasted into the report with Ctrl+V; Send pressed three
// times while the first is on its way sends one report, with the pasted
// image, and the tester sees one report.
func TestBlackBoxFeedbackPagesPasteThenDoubleSend(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	admin := bbfpAdmin(t, m, d)
	ctx := bbfpTesterTab(t, m, d)
	bbfpOpenForm(t, ctx)
	bbkType(t, ctx, "#feedback-text", "The popup is blank, see the screenshot. ")
	bbfpPaste(t, ctx, 240, 160, `document.querySelectorAll("#shot-list li").length === 1`, "Ctrl+V with a screenshot on the clipboard did not attach it")
	if v := evalJS[string](t, ctx, `document.querySelector("#feedback-text").value`); v != "The popup is blank, see the screenshot. " {
		t.Errorf("pasting the image changed the text to %q", v)
	}

	posts := bbfpHoldPosts(t, ctx, "*/api/extensions/*/feedback")
	x, y := bbkFind(t, ctx, "Send report", `document.querySelector("#send-feedback")`)
	do(t, ctx, chromedp.MouseClickXY(x, y))
	posts.waitFirst(t)
	do(t, ctx, chromedp.MouseClickXY(x, y), chromedp.MouseClickXY(x, y))
	bbfpWait(t, ctx, bbfpShown("#feedback-sending"), "while the report is on its way the page does not say it is sending")
	posts.release(t)
	id, build := bbfpSent(t, ctx)
	if build != "#120 (1.12.0)" {
		t.Errorf("with “The build I get” the report is on %s, want the build the tester gets, #120 (1.12.0)", build)
	}
	bbfpWait(t, ctx, `document.querySelectorAll("#my-reports li[data-report]").length >= 1`, "the tester's report is not listed")
	if n := posts.n(); n != 1 {
		t.Errorf("Send pressed three times sent %d reports", n)
	}
	got := admin.reports(ext.ID)
	if len(got) != 1 || got[0].ID != id {
		t.Fatalf("Send pressed three times kept %d reports, want report %d alone", len(got), id)
	}
	if got[0].BundleNumber != 120 || got[0].Version != "1.12.0" || got[0].Browser == "" || got[0].OS == "" {
		t.Errorf("the report was kept on #%d (%q), from %q on %q: want the served build #120 (1.12.0), the browser and OS", got[0].BundleNumber, got[0].Version, got[0].Browser, got[0].OS)
	}
	if s := got[0].Screenshots; len(s) != 1 || s[0].Width != 240 || s[0].Height != 160 || s[0].Type != "image/png" {
		t.Errorf("the pasted screenshot was kept as %+v, want one 240×160 PNG", s)
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll("#my-reports li[data-report]").length`); n != 1 {
		t.Errorf("the tester sees %d reports of theirs, sent once", n)
	}
	bbfpWait(t, ctx, `document.querySelector("#feedback-summary").innerText.trim() === "Report a problem · your reports (1)"`,
		"the disclosure does not count one report")
}

// TestBlackBoxFeedbackPagesTesterKeptOut: a tester sees their own reports
// only, and an admin's feedback address (the list, or another tester's
// report) shows them the admins-only page, with nothing of the reports.
func TestBlackBoxFeedbackPagesTesterKeptOut(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	admin := bbfpAdmin(t, m, d)
	other, _ := bbfpInvite(t, m, admin, ext.ID, "other.tester@example.com")
	secret := other.send(ext.ID, "Other tester's secret report", 0)

	ctx := bbfpTesterTab(t, m, d)
	bbfpOpenForm(t, ctx)
	bbkType(t, ctx, "#feedback-text", "My own report")
	bbfpClick(t, ctx, "#send-feedback")
	id, _ := bbfpSent(t, ctx)
	bbfpWait(t, ctx, fmt.Sprintf(`document.querySelectorAll("#my-reports li[data-report]").length === 1 && !!document.querySelector('#my-reports li[data-report="%d"]')`, id),
		"the tester's list does not hold their one report")
	if strings.Contains(evalJS[string](t, ctx, `document.body.innerText`), "secret") {
		t.Errorf("the tester's builds page shows another tester's report")
	}

	for _, path := range []string{
		fmt.Sprintf("/extensions/%d/feedback", ext.ID),
		fmt.Sprintf("/extensions/%d/feedback/%d", ext.ID, secret.ID),
		fmt.Sprintf("/extensions/%d/feedback?tester=%d", ext.ID, secret.TesterID),
	} {
		openApp(t, ctx, m.URL()+path)
		bbfpWait(t, ctx, bbfpShown("#admins-only"), "a tester on "+path+" does not get the admins-only page")
		if n := evalJS[int](t, ctx, `document.querySelectorAll("#reports, #feedback-search, #feedback-status, #report-viewer, #report-text, .ext-nav").length`); n != 0 {
			t.Errorf("a tester on %s sees %d of the admins' controls", path, n)
		}
		if strings.Contains(evalJS[string](t, ctx, `document.body.innerText`), "secret") {
			t.Errorf("a tester on %s reads another tester's report", path)
		}
	}
	bbfpClick(t, ctx, "#to-builds")
	waitLocation(t, ctx, m.URL()+"/builds")

	// Over the API too: the other tester lists their own only, and
	// cannot read the demo tester's.
	if got := other.reports(ext.ID); len(got) != 1 || got[0].ID != secret.ID {
		t.Errorf("a tester lists %d reports, want their own one", len(got))
	}
	if code, _ := other.report(ext.ID, id); code == http.StatusOK {
		t.Errorf("a tester reads another tester's report (%d)", code)
	}
}

// ---------------------------------------------------------------------
// The admins' list and viewer

// bbfpCase is the text of bulk report i: a word every third report shares.
func bbfpCase(i int) string {
	return fmt.Sprintf("Case %03d: the tab list %s", i, []string{"crashed", "went frozen", "lost its layout"}[i%3])
}

// TestBlackBoxFeedbackPagesInfiniteListSearchAndHistory: 130 reports. The
// wheel takes the admin to the end: every report once, newest first, and
// never more than a window of rows in the DOM. A search with a typo finds
// nothing and says so; corrected, it finds its reports; Back and Forward
// bring back an address, a search field and a list that agree; the status
// filter, with the keyboard, narrows the search to the resolved reports.
func TestBlackBoxFeedbackPagesInfiniteListSearchAndHistory(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	bg := context.Background()
	testers, err := m.Store.FindTesters(bg, betaport.TesterFilter{ExtensionID: ext.ID, Status: betaport.TesterActive, Limit: 12})
	if err != nil || len(testers) < 5 {
		t.Fatalf("active testers: %d (%v)", len(testers), err)
	}
	const n = 130
	ids := make([]int64, n+1) // ids[i] is Case i
	for i := 1; i <= n; i++ {
		tt := testers[i%len(testers)]
		f := &betaport.Feedback{ExtensionID: ext.ID, TesterID: tt.ID, TesterEmail: tt.Email, BundleNumber: int64(110 + i%10),
			Version: fmt.Sprintf("1.11.%d", i%10), Text: bbfpCase(i), Browser: "Chrome 140", OS: "Linux", Source: betaport.FeedbackFromBuildsPage}
		if err := m.Store.CreateFeedback(bg, f); err != nil {
			t.Fatal(err)
		}
		ids[i] = f.ID
		switch i % 4 {
		case 0:
			_, err = m.Store.SetFeedbackStatus(bg, ext.ID, f.ID, betaport.FeedbackResolved, d.Admins[0].Email)
		case 1:
			_, err = m.Store.SetFeedbackStatus(bg, ext.ID, f.ID, betaport.FeedbackSeen, d.Admins[0].Email)
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	ctx := adminTab(t, m, d)
	listURL := fmt.Sprintf("%s/extensions/%d/feedback", m.URL(), ext.ID)
	openApp(t, ctx, listURL)
	bbfpWait(t, ctx, fmt.Sprintf(`document.querySelector('#reports .vlist-row[data-row="0"] [data-report]')?.dataset.report === "%d"`, ids[n]),
		"the list does not start with the newest report")

	// The wheel, to the end.
	type rowID struct {
		Row int   `json:"row"`
		ID  int64 `json:"id"`
	}
	byRow := map[int]int64{}
	maxDOM := 0
	deadline := time.Now().Add(patient(60 * time.Second))
	for step := 0; ; step++ {
		rows := evalJS[[]rowID](t, ctx, `[...document.querySelectorAll("#reports .vlist-row")].map(r => ({row: +r.dataset.row, id: +(r.querySelector("[data-report]")?.dataset.report ?? 0)}))`)
		maxDOM = max(maxDOM, len(rows))
		for _, r := range rows {
			if prev, ok := byRow[r.Row]; ok && prev != r.ID {
				t.Errorf("row %d showed report %d, later report %d", r.Row, prev, r.ID)
			}
			byRow[r.Row] = r.ID
		}
		if len(byRow) >= n && evalJS[bool](t, ctx, `document.querySelector("#feedback-list").dataset.hasMore === "false" && !!document.querySelector("#feedback-end")?.checkVisibility()`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d wheel turns the list holds %d of %d reports; %s", step, len(byRow), n,
				evalJS[string](t, ctx, `JSON.stringify(document.querySelector("#feedback-list").dataset) + " " + (document.querySelector("#feedback-total")?.innerText ?? "")`))
		}
		if err := wheel(ctx, 640, 450, 600); err != nil {
			t.Fatal(err)
		}
		bbfpFrame(t, ctx)
	}
	var order []int64
	for r := 0; r < len(byRow); r++ {
		id, ok := byRow[r]
		if !ok {
			t.Fatalf("row %d never showed (rows seen: %d)", r, len(byRow))
		}
		order = append(order, id)
	}
	want := slices.Clone(ids[1:])
	slices.Reverse(want)
	if !slices.Equal(order, want) {
		t.Errorf("the list showed %d rows %v…, want the %d reports once each, newest first %v…", len(order), order[:min(10, len(order))], n, want[:10])
	}
	t.Logf("the wheel went through %d reports with at most %d rows in the DOM", len(order), maxDOM)
	if maxDOM >= 60 {
		t.Errorf("the DOM held %d rows at once: the list is not windowed", maxDOM)
	}
	if total := bbfpText(t, ctx, "#feedback-total"); !strings.Contains(total, "130") {
		t.Errorf("at the end the list says %q", total)
	}

	// A search with a typo, then corrected. Typed at a typist's speed,
	// the search asks for what was typed, not for every key.
	var searchesMu sync.Mutex
	var searches []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && strings.Contains(e.Request.URL, "/feedback?") && strings.Contains(e.Request.URL, "q=") {
			searchesMu.Lock()
			searches = append(searches, e.Request.URL)
			searchesMu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	bbkType(t, ctx, "#feedback-search", "frozn")
	waitLocation(t, ctx, listURL+"?q=frozn")
	bbfpWait(t, ctx, bbfpShown("#feedback-empty")+` && document.querySelectorAll("#reports [data-report]").length === 0`,
		"a search that matches nothing does not say so")
	bbfpKey(t, ctx, kb.Backspace)
	bbfpKey(t, ctx, kb.Backspace)
	do(t, ctx, chromedp.KeyEvent("zen"))
	waitLocation(t, ctx, listURL+"?q=frozen")
	frozen := fmt.Sprintf(`(() => { const rows = [...document.querySelectorAll("#reports [data-report]")];
		return document.querySelector("#feedback-search").value === "frozen" && rows.length > 0 && +rows[0].dataset.report === %d &&
			rows.every(r => r.innerText.includes("went frozen")) && !document.querySelector("#feedback-empty")?.checkVisibility(); })()`, ids[130])
	bbfpWait(t, ctx, frozen, "the corrected search does not list its reports, newest first")
	searchesMu.Lock()
	asked := slices.Clone(searches)
	searchesMu.Unlock()
	t.Logf("10 keys typed into the search asked for %q", asked)
	if len(asked) >= 8 {
		t.Errorf("typing 10 keys into the search made %d list requests (not debounced): %q", len(asked), asked)
	}

	// Away (a click on Testers) and Back: the search and its list
	// come back; Forward and Back again.
	testersURL := fmt.Sprintf("%s/extensions/%d/testers", m.URL(), ext.ID)
	bbfpClick(t, ctx, "#nav-testers")
	waitLocation(t, ctx, testersURL)
	do(t, ctx, chromedp.NavigateBack())
	waitLocation(t, ctx, listURL+"?q=frozen")
	bbfpWait(t, ctx, frozen, "after Back the search is not restored with its list")
	do(t, ctx, chromedp.NavigateForward())
	waitLocation(t, ctx, testersURL)
	do(t, ctx, chromedp.NavigateBack())
	waitLocation(t, ctx, listURL+"?q=frozen")
	bbfpWait(t, ctx, frozen, "after Forward and Back the search is not restored with its list")

	// A found report opened and closed with Escape: still searched.
	bbfpClick(t, ctx, bbfpRow(ids[130])+" a.report-link")
	bbfpWait(t, ctx, bbfpShown("#report-viewer")+fmt.Sprintf(` && document.querySelector("#report-text")?.textContent === %q`, bbfpCase(130)), "the found report did not open")
	bbfpKey(t, ctx, kb.Escape)
	bbfpWait(t, ctx, bbfpGone("#report-viewer")+` && location.pathname.endsWith("/feedback") && new URLSearchParams(location.search).get("q") === "frozen" && `+frozen,
		"closing a found report lost the search")

	// The status filter, with the keyboard: Tab from the search, then
	// arrows: All → Open → New → Seen → Resolved.
	bbkClickIntoField(t, ctx, "#feedback-search")
	bbfpKey(t, ctx, kb.Tab)
	if f := readFocus(t, ctx); f.ID != "feedback-status" {
		t.Fatalf("Tab from the search went to %+v, not the status filter", f)
	}
	for range 4 {
		bbfpKey(t, ctx, kb.ArrowDown)
	}
	var resolvedFrozen []int64
	for i := n; i >= 1; i-- {
		if i%3 == 1 && i%4 == 0 {
			resolvedFrozen = append(resolvedFrozen, ids[i])
		}
	}
	bbfpWait(t, ctx, `(() => { const p = new URLSearchParams(location.search); return p.get("status") === "resolved" && p.get("q") === "frozen"; })()`,
		"the status filter is not in the address with the search")
	bbfpWait(t, ctx, bbfpListIs(resolvedFrozen...)+` && [...document.querySelectorAll("#reports [data-report] .badge")].every(b => b.innerText.trim() === "Resolved")`,
		fmt.Sprintf("the list is not the %d resolved reports that match", len(resolvedFrozen)))

	// From a report, “Only build #N”: the list of that build's reports,
	// with a chip that clears it.
	bbfpClick(t, ctx, bbfpRow(ids[124])+" a.report-link") // Case 124: on #114
	bbfpWait(t, ctx, bbfpShown("#only-build")+` && document.querySelector("#only-build").innerText.includes("#114")`, "the report does not offer its build's reports")
	bbfpClick(t, ctx, "#only-build")
	bbfpWait(t, ctx, `new URLSearchParams(location.search).get("bundle") === "114" && `+bbfpShown("#clear-bundle")+
		` && (() => { const rows = [...document.querySelectorAll("#reports [data-report]")]; return rows.length > 0 && rows.every(r => r.innerText.includes("#114 (")); })()`,
		"Only build #114 does not list #114's reports alone")
	bbfpClick(t, ctx, "#clear-bundle")
	bbfpWait(t, ctx, `!new URLSearchParams(location.search).has("bundle") && `+bbfpGone("#clear-bundle")+
		` && [...document.querySelectorAll("#reports [data-report]")].some(r => !r.innerText.includes("#114 ("))`,
		"clearing the build chip does not widen the list")
}

// TestBlackBoxFeedbackPagesViewerByKeyboard: Tab to a report's link, Enter
// opens it with its first screenshot and marks it seen; → and ← go
// between its three screenshots (each really shown, at its size); Escape
// closes it and leaves the focus on its row; Back and Forward open and
// close it again; Resolve and Reopen by keyboard move it, recorded in the
// audit trail.
func TestBlackBoxFeedbackPagesViewerByKeyboard(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	admin := bbfpAdmin(t, m, d)
	tester := bbfpTesterHTTP(t, m, d.TesterLink)
	tester.send(ext.ID, "Older: the badge count is off by one", 0)
	shots := tester.send(ext.ID, "Three screenshots of the broken popup", 118,
		pageFile{Name: "a.png", Type: "image/png", Data: bbfpPNG(t, 320, 200)},
		pageFile{Name: "b.png", Type: "image/png", Data: bbfpPNG(t, 200, 320)},
		pageFile{Name: "c.jpg", Type: "image/jpeg", Data: bbfpJPEG(t, 150, 150)})
	tester.send(ext.ID, "Newest: settings page is empty", 0)
	id := shots.ID

	ctx := adminTab(t, m, d)
	listURL := fmt.Sprintf("%s/extensions/%d/feedback", m.URL(), ext.ID)
	openApp(t, ctx, listURL)
	bbfpWait(t, ctx, `document.querySelectorAll("#reports [data-report]").length === 3`+" && "+bbfpBadge(id, "New"), "the three reports are not listed")
	bbkClickIntoField(t, ctx, "#feedback-search")
	tabTo(t, ctx, "the link of the report with screenshots", func(f focusedElement) bool {
		return f.Tag == "A" && strings.Contains(f.Name, "Three screenshots")
	})
	bbfpKey(t, ctx, kb.Enter)
	waitLocation(t, ctx, fmt.Sprintf("%s/%d", listURL, id))
	bbfpWait(t, ctx, bbfpShown("#report-viewer")+fmt.Sprintf(` && document.querySelector("#report-title").innerText.includes("#%d")`, id), "Enter did not open the report")
	if !evalJS[bool](t, ctx, `document.querySelector("#report-viewer").contains(document.activeElement)`) {
		t.Logf("note: after Enter the focus is on %+v, outside the viewer", readFocus(t, ctx))
	}
	shot := func(i int, w, h int) {
		t.Helper()
		bbfpWait(t, ctx, fmt.Sprintf(`(() => { const img = document.querySelector("#report-shot-image");
			return document.querySelector("#report-shot-caption")?.innerText.startsWith("Screenshot %d of 3 (%d×%d)") &&
				img?.getAttribute("src").endsWith("/screenshots/%d") && img.complete && img.naturalWidth === %d && img.naturalHeight === %d; })()`, i, w, h, i, w, h),
			fmt.Sprintf("the viewer does not show screenshot %d of 3 (%d×%d)", i, w, h))
	}
	shot(1, 320, 200)
	bbfpWait(t, ctx, `document.querySelector("#report-facts").innerText.trim().startsWith("Seen")`+" && "+bbfpBadge(id, "Seen"),
		"opening a new report did not mark it seen")
	bbfpKey(t, ctx, kb.ArrowRight)
	shot(2, 200, 320)
	bbfpKey(t, ctx, kb.ArrowRight)
	shot(3, 150, 150)
	bbfpKey(t, ctx, kb.ArrowLeft)
	shot(2, 200, 320)
	bbfpKey(t, ctx, kb.ArrowLeft)
	shot(1, 320, 200)

	bbfpKey(t, ctx, kb.Escape)
	waitLocation(t, ctx, listURL)
	bbfpWait(t, ctx, bbfpGone("#report-viewer"), "Escape did not close the viewer")
	bbfpWait(t, ctx, fmt.Sprintf(`document.activeElement?.closest("[data-report]")?.dataset.report === "%d"`, id),
		"after Escape the focus is not back on the report's row")

	do(t, ctx, chromedp.NavigateBack())
	waitLocation(t, ctx, fmt.Sprintf("%s/%d", listURL, id))
	bbfpWait(t, ctx, bbfpShown("#report-viewer")+fmt.Sprintf(` && document.querySelector("#report-title").innerText.includes("#%d") && document.querySelector("#report-shot-caption")?.innerText.includes("of 3")`, id),
		"Back did not open the report again")
	do(t, ctx, chromedp.NavigateForward())
	waitLocation(t, ctx, listURL)
	bbfpWait(t, ctx, bbfpGone("#report-viewer"), "Forward did not close the report again")

	// Resolve and reopen, by keyboard.
	bbkClickIntoField(t, ctx, "#feedback-search")
	tabTo(t, ctx, "the link of the report with screenshots", func(f focusedElement) bool {
		return f.Tag == "A" && strings.Contains(f.Name, "Three screenshots")
	})
	bbfpKey(t, ctx, kb.Enter)
	bbfpWait(t, ctx, bbfpShown("#report-resolved"), "Enter did not open the report again")
	tabTo(t, ctx, "Resolve", func(f focusedElement) bool { return f.ID == "report-resolved" })
	bbfpKey(t, ctx, kb.Enter)
	bbfpWait(t, ctx, `document.querySelector("#report-facts").innerText.trim().startsWith("Resolved")`+" && "+bbfpBadge(id, "Resolved"), "Enter on Resolve did not resolve it")
	tabTo(t, ctx, "Reopen", func(f focusedElement) bool { return f.ID == "report-new" })
	bbfpKey(t, ctx, kb.Enter)
	bbfpWait(t, ctx, `document.querySelector("#report-facts").innerText.trim().startsWith("New")`+" && "+bbfpBadge(id, "New"), "Enter on Reopen did not make it new")
	// With the report open, arrows typed in the search field move its
	// caret, not the screenshots.
	openApp(t, ctx, fmt.Sprintf("%s/%d", listURL, id))
	shot(1, 320, 200)
	bbkType(t, ctx, "#feedback-search", "Three")
	bbfpWait(t, ctx, `new URLSearchParams(location.search).get("q") === "Three"`, "the search did not apply")
	if evalJS[bool](t, ctx, bbfpShown("#report-viewer")) {
		bbkClickIntoField(t, ctx, "#feedback-search")
		bbfpKey(t, ctx, kb.End)
		bbfpKey(t, ctx, kb.ArrowLeft)
		bbfpKey(t, ctx, kb.ArrowLeft)
		bbfpWait(t, ctx, `document.querySelector("#feedback-search").selectionStart === 3`, "ArrowLeft in the search field did not move its caret")
		if c := bbfpText(t, ctx, "#report-shot-caption"); !strings.HasPrefix(c, "Screenshot 1 of 3") {
			t.Errorf("arrows pressed in the search field moved the open report's screenshots: %q", c)
		}
	} else {
		t.Logf("searching closed the open report (%s)", evalJS[string](t, ctx, `location.href`))
	}

	// An address of a report that is not there says so.
	openApp(t, ctx, fmt.Sprintf("%s/%d", listURL, id+1000))
	bbfpWait(t, ctx, `/no such report|not found|does not exist/i.test(document.querySelector("main").innerText)`, "a report that is not there is not said to be missing")

	events := admin.audit(ext.ID)
	for _, action := range []string{betaport.AuditFeedbackSeen, betaport.AuditFeedbackResolved, betaport.AuditFeedbackNew} {
		if !bbfpAudited(events, action, d.Admins[0].Email) {
			t.Errorf("the audit trail does not record %s by the admin: %q", action, bbfpActions(events))
		}
	}
}

// TestBlackBoxFeedbackPagesLiveAcrossTabsAndFocus: one admin tab on the
// list; in another, the admin opens a report (seen) and resolves it: the
// list shows each without a reload. A tester's new report arrives on top.
// Then the window loses the focus while a report arrives and another is
// deleted; when it comes back the list has both changes, each report
// once, on the same page.
func TestBlackBoxFeedbackPagesLiveAcrossTabsAndFocus(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	admin := bbfpAdmin(t, m, d)
	tester := bbfpTesterHTTP(t, m, d.TesterLink)
	r1 := tester.send(ext.ID, "First: icons are blurry", 0).ID
	r2 := tester.send(ext.ID, "Second: search is slow", 0).ID

	list := adminTab(t, m, d)
	listURL := fmt.Sprintf("%s/extensions/%d/feedback", m.URL(), ext.ID)
	openApp(t, list, listURL)
	bbfpWait(t, list, bbfpListIs(r2, r1)+" && "+bbfpBadge(r1, "New"), "the list does not show the two reports")
	bbfpMarkDocument(t, list)

	other := newTab(t) // the same admin's second tab
	openApp(t, other, fmt.Sprintf("%s/%d", listURL, r1))
	bbfpWait(t, other, `document.querySelector("#report-facts")?.innerText.trim().startsWith("Seen")`, "opening the report in the second tab did not mark it seen")
	bbfpWait(t, list, bbfpBadge(r1, "Seen"), "the first tab does not show the report seen in the second")
	bbfpClick(t, other, "#report-resolved")
	bbfpWait(t, other, `document.querySelector("#report-facts").innerText.trim().startsWith("Resolved")`, "Resolve in the second tab")
	bbfpWait(t, list, bbfpBadge(r1, "Resolved"), "the first tab does not show the report resolved in the second")

	r3 := tester.send(ext.ID, "Third: the popup flickers", 0).ID
	bbfpWait(t, list, bbfpListIs(r3, r2, r1), "a tester's new report does not arrive on top of the open list")

	regain := bbfpLoseFocus(t, list)
	r4 := tester.send(ext.ID, "Fourth: sent while the admin was away", 0).ID
	if code, body := admin.call(http.MethodDelete, api.FeedbackReportPath(ext.ID, r2), nil); code != http.StatusNoContent {
		t.Fatalf("deleting report %d: %d %s", r2, code, body)
	}
	regain()
	bbfpWait(t, list, bbfpListIs(r4, r3, r1), "after the window came back the list does not show the report that arrived and drop the one deleted")
	if !bbfpSameDocument(t, list) {
		t.Errorf("the list's page was reloaded")
	}
	if !evalJS[bool](t, list, bbfpBadge(r1, "Resolved")+" && "+bbfpBadge(r4, "New")) {
		t.Errorf("after the window came back the badges are wrong: %s", bbfpText(t, list, "#reports"))
	}
}

// TestBlackBoxFeedbackPagesDeleteAndOpenCounts: the bundles list counts
// each bundle's open reports; its link opens the feedback page filtered by
// that bundle and open. A report's Delete… asks; Keep keeps it; Delete…
// and Yes delete it (and its screenshot), the row goes, the trail records
// it, and the bundle's count drops. Clearing the bundle chip widens the
// list.
func TestBlackBoxFeedbackPagesDeleteAndOpenCounts(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	admin := bbfpAdmin(t, m, d)
	tester := bbfpTesterHTTP(t, m, d.TesterLink)
	a := tester.send(ext.ID, "On 118: the first problem", 118, pageFile{Name: "a.png", Type: "image/png", Data: bbfpPNG(t, 64, 48)}).ID
	b := tester.send(ext.ID, "On 118: the second problem", 118).ID
	c := tester.send(ext.ID, "On 118: a problem already solved", 118).ID
	e := tester.send(ext.ID, "On 120: the current build", 120).ID
	otherTester, _ := bbfpInvite(t, m, admin, ext.ID, "second.tester@example.com")
	o := otherTester.send(ext.ID, "On 120: another tester's problem", 120).ID
	if code, body := admin.call(http.MethodPost, api.FeedbackReportPath(ext.ID, c)+"/status", api.FeedbackStatus{Status: betaport.FeedbackResolved}); code != http.StatusOK {
		t.Fatalf("resolving report %d: %d %s", c, code, body)
	}

	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	count := func(bundle int, want string) string {
		if want == "" {
			return fmt.Sprintf(`!!document.querySelector('[data-bundle="%d"]') && !document.querySelector('[data-bundle="%d"] a.open-feedback')`, bundle, bundle)
		}
		return fmt.Sprintf(`document.querySelector('[data-bundle="%d"] a.open-feedback')?.innerText.trim() === %q`, bundle, want)
	}
	bbfpWait(t, ctx, count(118, "2 open")+" && "+count(120, "2 open")+" && "+count(119, ""),
		"the bundles list does not count the open reports: 2 on #118, 2 on #120, none on #119")

	// The count is a link a hand can click: whole in its row, not under
	// anything.
	clipped := evalJS[string](t, ctx, `(() => { const a = document.querySelector('[data-bundle="118"] a.open-feedback'), r = a.getBoundingClientRect();
		for (let e = a.parentElement; e && e !== document.body; e = e.parentElement) {
			const c = e.getBoundingClientRect(), s = getComputedStyle(e);
			if (s.overflowX !== "visible" && (r.left < c.left - 0.5 || r.right > c.right + 0.5))
				return "the link spans x " + r.left.toFixed(1) + " to " + r.right.toFixed(1) + " but " + e.tagName + "." + e.className.replaceAll(" ", ".") + " (overflow " + s.overflowX + ") ends at " + c.right.toFixed(1);
		}
		const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
		return at === a || a.contains(at) ? "" : "its centre is under " + (at?.tagName ?? "nothing"); })()`)
	if clipped != "" {
		t.Errorf("on a %v px window the bundles list cuts off #118's “2 open” link: %s%s", evalJS[float64](t, ctx, `innerWidth`), clipped, bbfpKeepScreenshot(t, ctx, "clipped-count"))
		// A keyboard still reaches it: from the row's version, Tab.
		bbfpClick(t, ctx, `[data-bundle="118"] .served-version`)
		tabTo(t, ctx, "#118's open reports", func(f focusedElement) bool { return strings.Contains(f.Name, "open reports on bundle #118") })
		bbfpKey(t, ctx, kb.Enter)
	} else {
		bbfpClick(t, ctx, `[data-bundle="118"] a.open-feedback`)
	}
	bbfpWait(t, ctx, `(() => { const p = new URLSearchParams(location.search);
		return location.pathname.endsWith("/feedback") && p.get("bundle") === "118" && p.get("status") === "open"; })()`,
		"the count's link does not open the feedback of #118, open")
	bbfpWait(t, ctx, bbfpListIs(b, a)+" && "+bbfpShown("#clear-bundle")+` && document.querySelector("#feedback-status").value === "open"`,
		"the filtered list is not #118's two open reports")

	bbfpClick(t, ctx, bbfpRow(a)+" a.report-link")
	bbfpWait(t, ctx, bbfpShown("#report-viewer")+` && `+bbfpShown("#delete-report"), "the report did not open")
	bbfpClick(t, ctx, "#delete-report")
	bbfpWait(t, ctx, bbfpShown("#confirm-delete-report")+" && "+bbfpShown("#keep-report"), "Delete… does not ask")
	bbfpClick(t, ctx, "#keep-report")
	bbfpWait(t, ctx, bbfpGone("#confirm-delete-report")+" && "+bbfpShown("#report-viewer"), "Keep did not keep the report open")
	if code, _ := admin.report(ext.ID, a); code != http.StatusOK {
		t.Fatalf("Keep deleted the report: %d", code)
	}
	bbfpClick(t, ctx, "#delete-report")
	bbfpWait(t, ctx, bbfpShown("#confirm-delete-report")+` && document.querySelector("#confirm-delete-report").getAttribute("aria-disabled") !== "true" && !document.querySelector("#confirm-delete-report").disabled`,
		"the delete question's Yes never became pressable")
	bbfpClick(t, ctx, "#confirm-delete-report")
	bbfpWait(t, ctx, bbfpGone("#report-viewer")+" && "+bbfpListIs(b), "after the delete the report's row is still listed (or the viewer still shows)")
	if p := evalJS[string](t, ctx, `new URLSearchParams(location.search).get("bundle") ?? ""`); p != "118" {
		t.Errorf("after the delete the list lost its bundle filter: %s", evalJS[string](t, ctx, `location.href`))
	}
	if code, _ := admin.report(ext.ID, a); code != http.StatusNotFound {
		t.Errorf("the deleted report still answers %d", code)
	}
	if code, _ := admin.call(http.MethodGet, api.FeedbackScreenshotPath(ext.ID, a, 1), nil); code != http.StatusNotFound {
		t.Errorf("the deleted report's screenshot still answers %d", code)
	}
	if events := admin.audit(ext.ID); !bbfpAudited(events, betaport.AuditFeedbackDeleted, d.Admins[0].Email) {
		t.Errorf("the audit trail does not record the delete: %q", bbfpActions(events))
	}

	bbfpClick(t, ctx, "#clear-bundle")
	bbfpWait(t, ctx, `!new URLSearchParams(location.search).has("bundle")`+" && "+bbfpListIs(o, e, b), "clearing the bundle does not list every open report")

	// Only one tester's reports, from a report of theirs; the chip
	// clears it.
	bbfpClick(t, ctx, bbfpRow(o)+" a.report-link")
	bbfpWait(t, ctx, bbfpShown("#only-tester")+` && document.querySelector("#only-tester").innerText.includes("second.tester@example.com")`, "the report does not offer its tester's reports")
	bbfpClick(t, ctx, "#only-tester")
	bbfpWait(t, ctx, `new URLSearchParams(location.search).has("tester") && `+bbfpShown("#clear-tester")+" && "+bbfpListIs(o),
		"Only second.tester@example.com's reports does not list theirs alone")
	bbfpClick(t, ctx, "#clear-tester")
	bbfpWait(t, ctx, `!new URLSearchParams(location.search).has("tester")`+" && "+bbfpListIs(o, e, b), "clearing the tester chip does not widen the list")

	bbfpClick(t, ctx, "#nav-bundles")
	waitLocation(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	bbfpWait(t, ctx, count(118, "1 open")+" && "+count(120, "2 open"), "after the delete the bundles list does not count one open report on #118")
}

// TestBlackBoxFeedbackPagesKeyboardOnlyUntilTheRateLimit: a tester with no
// mouse opens Report a problem with Enter and sends report after report
// with Tab and Enter, each thanked with a new number, until the service's
// limit for a burst: then they are told to wait, and their text stays.
func TestBlackBoxFeedbackPagesKeyboardOnlyUntilTheRateLimit(t *testing.T) {
	t.Parallel()
	// The burst is counted: no refill during the test, however slow the
	// machine (make test's load once let 101 s of sends refill two).
	m, d := serve(t, 0, func(m *cli.Main) { m.Config.FeedbackRefill = time.Hour })
	ext := d.Extensions[0]
	admin := bbfpAdmin(t, m, d)
	ctx := bbfpTesterTab(t, m, d)
	tabTo(t, ctx, "Report a problem", func(f focusedElement) bool { return f.ID == "feedback-summary" })
	bbfpKey(t, ctx, kb.Enter)
	bbfpWait(t, ctx, `!!document.querySelector("#feedback-panel")?.open`, "Enter on Report a problem did not open it")
	tabTo(t, ctx, "the text field", func(f focusedElement) bool { return f.ID == "feedback-text" })

	var last int64
	for i := 1; ; i++ {
		if i > 12 {
			t.Errorf("12 reports in a burst were all kept: no limit per tester")
			return
		}
		if f := readFocus(t, ctx); f.ID != "feedback-text" {
			t.Fatalf("before report %d the focus is on %+v, not the text field", i, f)
		}
		written := fmt.Sprintf("Burst report %d", i)
		do(t, ctx, chromedp.KeyEvent(written))
		tabTo(t, ctx, "Send report", func(f focusedElement) bool { return f.ID == "send-feedback" })
		bbfpKey(t, ctx, kb.Enter)
		bbfpWait(t, ctx, fmt.Sprintf(`(() => { const m = /^Thank you: report #(\d+)/.exec(document.querySelector("#feedback-sent")?.innerText ?? "");
			return (m && +m[1] > %d) || !!document.querySelector("#feedback-error")?.checkVisibility(); })()`, last),
			fmt.Sprintf("report %d, sent with Enter, was neither thanked nor refused", i))
		if evalJS[bool](t, ctx, bbfpShown("#feedback-error")) {
			msg := bbfpText(t, ctx, "#feedback-error")
			t.Logf("report %d refused: %q", i, msg)
			if i <= 10 {
				t.Errorf("report %d of a burst was refused: %q (the limit is 10)", i, msg)
			}
			if !regexp.MustCompile(`(?i)try again|wait|later|minute|second|too many`).MatchString(msg) {
				t.Errorf("over the limit the tester is told %q: not that they should wait", msg)
			}
			if v := evalJS[string](t, ctx, `document.querySelector("#feedback-text").value`); v != written {
				t.Errorf("over the limit the report's text was lost: the field holds %q, want %q", v, written)
			}
			if n := len(admin.reports(ext.ID)); n != i-1 {
				t.Errorf("the service keeps %d reports after %d sent and one refused", n, i-1)
			}
			return
		}
		last, _ = bbfpSent(t, ctx)
		// Back to the text field, as a keyboard goes: Shift+Tab.
		for range 5 {
			if readFocus(t, ctx).ID == "feedback-text" {
				break
			}
			do(t, ctx, chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)))
		}
	}
}
