package browser_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// feedbackSnippet is the README's snippet for an extension that reports
// from its service worker, word for word.
var feedbackSnippet = readmeSnippet()

// readmeSnippet is the README's extension snippet: the js block of its
// Feedback section that starts "// background.js".
func readmeSnippet() string {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		panic(err)
	}
	_, after, ok := strings.Cut(string(raw), "```js\n// background.js")
	block, _, closed := strings.Cut(after, "```")
	if !ok || !closed || !strings.Contains(block, "async function sendFeedback(") {
		panic("README.md has no Feedback snippet (a js block starting // background.js with sendFeedback)")
	}
	return "// background.js" + block
}

// feedbackWorker is the test extension's service worker: the snippet, and
// what calls it. Once the site's page (%[1]q + "/page") is shown in a tab,
// it reports on it, and posts what the service answered (the report, as
// the extension read it) or why it failed to the site.
var feedbackWorker = `const site = %[1]q;
` + strings.ReplaceAll(feedbackSnippet, "%", "%%") + `
let reporting = false;
function onShown(tab) {
  if (reporting || tab.status !== "complete" || tab.url !== site + "/page") return;
  reporting = true;
  sendFeedback(%[2]q).then(
    report => fetch(site + "/sent", { method: "POST", body: JSON.stringify(report) }),
    err => fetch(site + "/failed", { method: "POST", body: String((err && err.stack) || err) }));
}
chrome.tabs.onUpdated.addListener((id, change, tab) => onShown(tab));
chrome.tabs.query({}).then(tabs => tabs.forEach(onShown));
`

// TestExtensionSendsFeedback: the README's snippet, run by the extension a
// tester's Chromium installs by the policy they downloaded (issue 32):
// its service worker captures the tab it sees and posts a report to its
// manifest's update_url + "/feedback". The admin then lists the report,
// from the extension, by that tester, on the installed build, with the
// screenshot, of the tab's size, served as a PNG. The report was sent
// from the extension's own origin (the request as Chromium sent it, read
// through DevTools on the worker), and the extension read the answer.
//
// The browser is one of its own, in a mount namespace of its own with the
// tester's policy on /etc/chromium/policies (startTesterBrowser): nothing
// machine-wide is written but that mount point, so it runs in parallel.
func TestExtensionSendsFeedback(t *testing.T) {
	t.Parallel()
	policies := "/etc/chromium/policies"
	if strings.Contains(filepath.Base(findChromium()), "google-chrome") {
		policies = "/etc/opt/chrome/policies"
	}
	if os.Geteuid() != 0 {
		t.Skipf("giving the browser its own managed policy (a mount namespace with its own %s) needs root", policies)
	}
	if err := os.MkdirAll(policies, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("unshare", "--mount", "--propagation", "private", "--", "true").CombinedOutput(); err != nil {
		t.Fatalf("a mount namespace for the browser: unshare: %v %s", err, out)
	}

	// The site the tester is on: a page to capture, and where the worker
	// says how its report went.
	type outcome struct {
		report betaport.Feedback
		failed string
	}
	outcomes := make(chan outcome, 4)
	const background = "#1e90ff"
	mux := http.NewServeMux()
	mux.HandleFunc("GET /page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Checkout</title><style>html, body { margin: 0; height: 100%%; background: %s; overflow: hidden }</style><h1>Checkout</h1>`, background)
	})
	mux.HandleFunc("POST /sent", func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var o outcome
		if err := json.Unmarshal(raw, &o.report); err != nil {
			o.failed = fmt.Sprintf("the worker read the answer %s: %v", raw, err)
		}
		outcomes <- o
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /failed", func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		outcomes <- outcome{failed: string(raw)}
		w.WriteHeader(http.StatusNoContent)
	})
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)

	m, d := startService(t)
	ext := d.Extensions[0]
	admin := d.Admins[0]
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "key.json")
	writeFile(t, keyPath, keyFile(ext.ID, setKey(t, m.Store, ext.ID)))
	const text = "The checkout page is blank after the update."
	zipPath := filepath.Join(dir, "feedback.zip")
	writeFile(t, zipPath, extensionZip(t, map[string]string{
		"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "9.1.0", "permissions": ["tabs"], "host_permissions": ["<all_urls>"], "background": {"service_worker": "background.js"}}`,
		"background.js": fmt.Sprintf(feedbackWorker, site.URL, text),
	}))
	bundle := submitAsPipeline(t, m.URL(), keyPath, zipPath)
	chromeID := adminUpdates(t, m.URL(), admin.Email, admin.Password, ext.ID).ChromeID
	own := "chrome-extension://" + chromeID

	tb := startTesterBrowser(t, m.URL(), m.Store, ext.ID, admin.Email, chromeID, betaport.DefaultChannel, 1, policies)
	start := time.Now()
	tb.waitInstalled(t, bundle.Version)
	t.Logf("bundle #%d (version %s) installed from %s's update URL in %v", bundle.Number, bundle.Version, tb.name, time.Since(start).Round(time.Millisecond))

	// DevTools on the extension's service worker, to see its requests as
	// Chromium sends them. It waits for the page, not yet shown.
	workerURL := own + "/background.js"
	var worker *target.Info
	for deadline := time.Now().Add(patient(10 * time.Second)); worker == nil; {
		infos, err := chromedp.Targets(tb.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range infos {
			if i.Type == "service_worker" && i.URL == workerURL {
				worker = i
			}
		}
		if worker == nil && time.Now().After(deadline) {
			t.Fatalf("no service worker %s runs\n%s", workerURL, extensionLog(tb.log, chromeID))
		}
		time.Sleep(50 * time.Millisecond)
	}
	type sent struct {
		method, url     string
		headers         network.Headers // as sent
		status          int64
		responseHeaders network.Headers
	}
	var mu sync.Mutex
	requests := map[network.RequestID]*sent{}
	seen := func(id network.RequestID) *sent {
		if requests[id] == nil {
			requests[id] = &sent{}
		}
		return requests[id]
	}
	sw, cancelSW := chromedp.NewContext(tb.ctx, chromedp.WithTargetID(worker.TargetID), chromedp.WithDetachOnCancel(),
		chromedp.WithListener(func(ev any) {
			mu.Lock()
			defer mu.Unlock()
			switch ev := ev.(type) {
			case *network.EventRequestWillBeSent:
				s := seen(ev.RequestID)
				s.method, s.url = ev.Request.Method, ev.Request.URL
			case *network.EventRequestWillBeSentExtraInfo:
				seen(ev.RequestID).headers = ev.Headers
			case *network.EventResponseReceivedExtraInfo:
				s := seen(ev.RequestID)
				s.status, s.responseHeaders = ev.StatusCode, ev.Headers
			}
		}))
	defer cancelSW()
	if err := chromedp.Do(sw); err != nil {
		t.Fatalf("attaching to the extension's service worker: %v", err)
	}

	// The window at a size of the test's own, and the page then shown in
	// it. The tab is the window's width, and its height less the browser's
	// bar above it (headless keeps that bar's height, undrawn): the tab
	// the worker captures is the page's viewport, in device pixels.
	const winWidth, winHeight = 1000, 700
	win, err := chromedp.CallBrowser(tb.ctx, cdpbrowser.GetWindowForTarget, cdpbrowser.GetWindowForTargetParams{TargetID: chromedp.FromContext(tb.ctx).Target.TargetID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.CallBrowser(tb.ctx, cdpbrowser.SetWindowBounds, cdpbrowser.SetWindowBoundsParams{WindowID: win.WindowID, Bounds: &cdpbrowser.Bounds{Width: winWidth, Height: winHeight}}); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if err := chromedp.Do(tb.ctx, chromedp.Navigate(site.URL+"/page")); err != nil {
		t.Fatal(err)
	}
	win, err = chromedp.CallBrowser(tb.ctx, cdpbrowser.GetWindowForTarget, cdpbrowser.GetWindowForTargetParams{TargetID: chromedp.FromContext(tb.ctx).Target.TargetID})
	if err != nil {
		t.Fatal(err)
	}
	viewport, err := chromedp.Run(tb.ctx, chromedp.Evaluate[[]float64](`[innerWidth, innerHeight, devicePixelRatio]`))
	if err != nil {
		t.Fatal(err)
	}
	width, height := int(viewport[0]*viewport[2]), int(viewport[1]*viewport[2])
	if win.Bounds.Width != winWidth || win.Bounds.Height != winHeight || width != winWidth || height <= 0 || height > winHeight {
		t.Fatalf("the window is %d × %d and its tab %v × %v at %v device pixels per CSS pixel, want a %d × %d window and a tab of its width", win.Bounds.Width, win.Bounds.Height, viewport[0], viewport[1], viewport[2], winWidth, winHeight)
	}
	t.Logf("the window is %d × %d, the tab the page is shown in %d × %d", winWidth, winHeight, width, height)

	var report betaport.Feedback
	select {
	case o := <-outcomes:
		if o.failed != "" {
			t.Fatalf("the extension's report failed: %s\n%s", o.failed, extensionLog(tb.log, chromeID))
		}
		report = o.report
	case <-time.After(patient(10 * time.Second)):
		t.Fatalf("the extension reported nothing in %v\n%s", patient(10*time.Second), extensionLog(tb.log, chromeID))
	}
	t.Logf("the extension sent report %d and read the answer %v after the page was shown", report.ID, time.Since(start).Round(time.Millisecond))

	// The request as Chromium sent it, from the worker (its events may
	// reach the test after the worker's word does).
	var posts []sent
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		posts = posts[:0]
		for _, s := range requests {
			if strings.HasSuffix(s.url, "/feedback") {
				posts = append(posts, *s)
			}
		}
		return len(posts) > 0 && posts[0].headers != nil && posts[0].status != 0
	}, "DevTools to report the worker's request to …/feedback, sent and answered")
	if len(posts) != 1 {
		t.Fatalf("the worker sent %d requests to …/feedback, want one: %+v", len(posts), posts)
	}
	post := posts[0]
	if post.method != http.MethodPost || post.url != tb.updateURL+"/feedback" {
		t.Errorf("the worker sent %s %s, want POST to the tester's update URL + /feedback (%s/feedback)", post.method, post.url, tb.updateURL)
	}
	if got := header(post.headers, "Origin"); got != own {
		t.Errorf("the report was sent with Origin %q, want the extension's own %s (headers %v)", got, own, post.headers)
	}
	if ct := header(post.headers, "Content-Type"); !strings.HasPrefix(ct, "multipart/form-data; boundary=") {
		t.Errorf("the report was sent as %q, want multipart/form-data", ct)
	}
	if got := header(post.responseHeaders, "Access-Control-Allow-Origin"); post.status != http.StatusCreated || got != own {
		t.Errorf("the service answered %d with Access-Control-Allow-Origin %q, want 201 with %s", post.status, got, own)
	}
	t.Logf("the worker sent POST %s…/feedback with Origin %s, answered %d with Access-Control-Allow-Origin %s", m.URL(), header(post.headers, "Origin"), post.status, header(post.responseHeaders, "Access-Control-Allow-Origin"))

	// The admin's list has it: from the extension, by the tester, on the
	// installed build, with the tab's screenshot.
	cookie := signInHTTP(t, m.URL(), admin.Email, admin.Password)
	var page api.Page[betaport.Feedback]
	if raw := adminGet(t, m.URL()+api.FeedbackPath(ext.ID)+"?limit=50", cookie, "application/json"); json.Unmarshal(raw, &page) != nil {
		t.Fatalf("the feedback list: %s", raw)
	}
	var listed []betaport.Feedback
	for _, f := range page.Data {
		if f.Source == betaport.FeedbackFromExtension {
			listed = append(listed, f)
		}
	}
	if len(listed) != 1 || listed[0].ID != report.ID {
		t.Fatalf("the admin lists %d reports from the extension (%+v), want the one it sent (%d)", len(listed), listed, report.ID)
	}
	got := listed[0]
	if got.TesterID != tb.tester.ID || got.TesterEmail != tb.tester.Email || got.Text != text ||
		got.BundleNumber != bundle.Number || got.Version != bundle.Version || got.ExtensionID != ext.ID {
		t.Errorf("the admin lists %+v, want %q by tester %d (%s) on bundle #%d, version %s", got, text, tb.tester.ID, tb.tester.Email, bundle.Number, bundle.Version)
	}
	if report.TesterID != got.TesterID || report.Source != got.Source || report.BundleNumber != got.BundleNumber || report.Version != got.Version {
		t.Errorf("the extension read %+v, the admin lists %+v", report, got)
	}
	if len(got.Screenshots) != 1 || got.Screenshots[0].Number != 1 || got.Screenshots[0].Type != "image/png" ||
		got.Screenshots[0].Width != width || got.Screenshots[0].Height != height {
		t.Fatalf("the report has screenshots %+v, want one PNG of the tab, %d × %d", got.Screenshots, width, height)
	}
	raw := adminGet(t, m.URL()+api.FeedbackScreenshotPath(ext.ID, got.ID, 1), cookie, "image/png")
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("the screenshot served does not decode as PNG: %v", err)
	}
	if b := img.Bounds(); b != image.Rect(0, 0, width, height) {
		t.Fatalf("the screenshot served is %v, want %d × %d", b, width, height)
	}
	// The page's own background, away from its heading: the tab was
	// captured, not a blank frame.
	r, g, b, _ := img.At(width-10, height-10).RGBA()
	if want := [3]uint32{0x1e, 0x90, 0xff}; !near(r>>8, want[0]) || !near(g>>8, want[1]) || !near(b>>8, want[2]) {
		t.Errorf("the screenshot's corner is #%02x%02x%02x, want the page's %s", r>>8, g>>8, b>>8, background)
	}
	t.Logf("report %d: %q from %s by %s on #%d (%s), %s %d × %d, %d bytes", got.ID, got.Text, got.Source, got.TesterEmail, got.BundleNumber, got.Version,
		got.Screenshots[0].Type, got.Screenshots[0].Width, got.Screenshots[0].Height, len(raw))
}

// header reads a header CDP reports (names as sent, in any case).
func header(h network.Headers, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			s, _ := v.(string)
			return s
		}
	}
	return ""
}

func near(got, want uint32) bool { return got+2 >= want && got <= want+2 }

// adminGet GETs url with the admin's session and returns the body,
// failing the test unless it is a 200 of type contentType.
func adminGet(t *testing.T, url string, cookie *http.Cookie, contentType string) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), contentType) {
		t.Fatalf("GET %s: %d %s %.300s, want 200 %s", url, resp.StatusCode, resp.Header.Get("Content-Type"), raw, contentType)
	}
	return raw
}
