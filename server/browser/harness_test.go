package browser_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/demo"
	"github.com/betaport/betaport/server/demotest"
	"github.com/betaport/betaport/server/testenv"
)

// browser is the one Chromium every test opens its tabs in.
var browser context.Context

func TestMain(m *testing.M) {
	code := runWithBrowser(m)
	testenv.Stop() // PostgreSQL and versitygw, when a test started them
	demotest.Cleanup()
	os.Exit(code)
}

func runWithBrowser(m *testing.M) int {
	path := findChromium()
	if path == "" {
		fmt.Fprintln(os.Stderr, "browser tests need Chromium: run `make chromium` (or `sudo apt-get install -y chromium`)")
		return 1
	}
	if _, err := os.Stat(filepath.Join("..", "..", "web", "app.wasm")); err != nil {
		fmt.Fprintln(os.Stderr, "browser tests need the built app: run `make wasm` first (make test does)")
		return 1
	}
	profile, err := os.MkdirTemp("", "betaport-chromium-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(profile)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// Tests run side by side, each tab in a window of its own: none
		// of them is a background window whose timers, frames and smooth
		// scrolls the browser slows down.
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		// Scrollbars a hand can drag (headless hides them by default).
		chromedp.Flag("hide-scrollbars", false),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
		// The app's wasm runs on V8's baseline compiler only: these tests
		// check what the app does, not how fast, and every test's fresh
		// browser context compiled the app's hot functions again with the
		// optimising compiler, a fifth of the renderers' CPU in a run (the
		// browser benchmark, server/browserbench, keeps the default).
		chromedp.Flag("js-flags", "--liftoff-only"),
	)
	defer cancelAlloc()
	var cancelBrowser context.CancelFunc
	browser, cancelBrowser = chromedp.NewContext(alloc)
	defer cancelBrowser()
	if err := chromedp.Do(browser); err != nil { // starts the browser
		fmt.Fprintln(os.Stderr, "starting Chromium:", err)
		return 1
	}
	return m.Run()
}

func findChromium() string {
	if p := os.Getenv("BETAPORT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// startService runs the real service on port 0 on a copy of the small
// demo's data.
func startService(t *testing.T) (*cli.Main, *demo.Result) {
	t.Helper()
	return serve(t, 0, nil)
}

// startWithTesters is startService with n testers on the demo's third
// extension, which it returns.
func startWithTesters(t *testing.T, n int) (*cli.Main, *demo.Result, *betaport.Extension) {
	t.Helper()
	m, d := serve(t, n, nil)
	return m, d, d.Extensions[2]
}

// serve starts the real service on port 0 with a fresh data dir holding a
// copy of the small demo's data with testers more testers on its third
// extension (built once per run), once configure (when not nil) has set
// what the test needs.
func serve(t *testing.T, testers int, configure func(*cli.Main)) (*cli.Main, *demo.Result) {
	t.Helper()
	m := cli.NewMain()
	m.Config.Addr = "127.0.0.1:0"
	m.Config.Data = t.TempDir()
	d := demotest.Copy(t, m.Config.Data, testers)
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		m.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel()}))
	}
	if configure != nil {
		configure(m)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("closing the service: %v", err)
		}
	})
	return m, d
}

// newTab opens a tab in the shared browser. When the test fails, a
// screenshot of the tab is kept and its path printed.
//
// Each test has a browser context of its own (cookies, storage, service
// worker and cache): tests run side by side, each signed in as whom it
// chooses, and every service of theirs is on 127.0.0.1, where cookies do
// not tell ports apart. A test's tabs share its context, as a person's
// tabs share their browser.
func newTab(t *testing.T) context.Context {
	t.Helper()
	var opts []chromedp.ContextOption
	group, grouped := browserContexts.Load(t)
	switch _, solo := soloTests[t.Name()]; {
	case solo:
		grouped = true // the browser's own context, never disposed
	case grouped:
		opts = append(opts, chromedp.WithExistingBrowserContext(group.(cdp.BrowserContextID)))
	default:
		opts = append(opts, chromedp.WithNewBrowserContext())
	}
	tab, cancelTab := chromedp.NewContext(browser, opts...)
	// The first run opens the tab and ties it to the context it is given:
	// give it the tab's own, so the deadline below ends the test's waits,
	// not the tab (the failure screenshot still needs it).
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	if !grouped {
		// The first tab's context owns the browser context: it is
		// cancelled last (cleanups run last-in first-out), disposing it.
		browserContexts.Store(t, chromedp.FromContext(tab).BrowserContextID)
		t.Cleanup(func() { browserContexts.Delete(t) })
	}
	if _, solo := soloTests[t.Name()]; !solo {
		// Tests run side by side, each tab in a window of its own, and
		// only one window has the focus: each page is told it has it, so
		// keys, focus rings and focus events behave as in the window a
		// person is using.
		if _, err := chromedp.Call(tab, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
			t.Fatalf("emulating focus: %v", err)
		}
	}
	console := recordConsole(tab)
	ctx, cancel := context.WithTimeout(tab, 6*time.Minute) // a hundred pages by hand, beside other tests on a busy machine
	t.Cleanup(func() {
		if t.Failed() {
			for _, m := range console.all() {
				t.Logf("console %s", m)
			}
			if path, err := screenshot(tab, t.Name()); err == nil {
				t.Logf("screenshot of the failed test: %s", path)
			} else {
				t.Logf("no screenshot: %v", err)
			}
		}
		cancel()
		cancelTab()
	})
	return ctx
}

// allowDownloads saves what the tab's browser context downloads into a
// folder of the test's, which it returns.
func allowDownloads(t *testing.T, ctx context.Context) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir,
		BrowserContextID: chromedp.FromContext(ctx).BrowserContextID,
	}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// patient stretches a wait's deadline. A deadline is a safety net, not a
// measure: a condition met sooner ends the wait sooner, and tests running
// side by side on a busy two-core machine are several times slower than
// one alone.
func patient(d time.Duration) time.Duration { return 3 * d }

// soloTests run alone (never in parallel), in the browser's default
// context and with the focus its window really has, because what they test
// depends on one of those; the reason is given with each.
var soloTests = map[string]string{
	"TestBlackBoxWindowLosesAndRegainsFocus": "it moves the window's focus",
	// An incognito context (every other test's) never loads the page's web
	// manifest, which the service worker caches.
	"TestBlackBoxBootServiceWorkerFetchesOnlyWhatThePageUses": "a normal profile",
	"TestBlackBoxBootFirstVisitFetchesTheWasmOnce":            "a normal profile",
	// The keys and the wheel of a person at the window they use: in a
	// window of their own with the focus only emulated, PageDown, Space and
	// End were seen not to scroll, and Shift+Tab, Tab to land elsewhere.
	"TestBlackBoxKeyboardScrolling":         "keys at the focused window",
	"TestBlackBoxFocusedRevokeKeepsItsName": "keys at the focused window",
	"TestTrackpadScrollbarAndPointer":       "a scrollbar drag at the focused window",
	"TestHomeBringsDroppedPagesBack":        "End and Home at the focused window",
	"TestBlackBoxWheelThenIdle":             "rows painted under a hand's wheel",
}

// browserContexts maps each test (*testing.T) to its browser context.
var browserContexts sync.Map

// consoleLog keeps what a tab wrote to its console.
type consoleLog struct {
	mu   sync.Mutex
	msgs []chromedp.ConsoleMessage
}

func recordConsole(tab context.Context) *consoleLog {
	l := &consoleLog{}
	messages := chromedp.Console(tab)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			l.mu.Lock()
			l.msgs = append(l.msgs, m)
			l.mu.Unlock()
		}
	}()
	return l
}

func (l *consoleLog) all() []chromedp.ConsoleMessage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]chromedp.ConsoleMessage(nil), l.msgs...)
}

// artifactsDir is where screenshots are kept after the test's own temp dir
// is gone.
func artifactsDir() string {
	if d := os.Getenv("BETAPORT_ARTIFACTS"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "betaport-test-artifacts")
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func screenshot(tab context.Context, name string) (string, error) {
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		// A very long page is too large to capture whole: keep the viewport.
		if png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot()); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(artifactsDir(), 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(artifactsDir(), unsafeName.ReplaceAllString(name, "_")+".png")
	return path, os.WriteFile(path, png, 0o644)
}

// openApp opens path and waits until the wasm app has taken the page over
// from the server's prerendered HTML.
func openApp(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(`.shell[data-app="client"]`)),
	); err != nil {
		t.Fatalf("opening %s in the app: %v", url, err)
	}
}

// signIn signs an admin in through the sign-in page, typing like a person.
func signIn(t *testing.T, ctx context.Context, baseURL, email, password string) {
	t.Helper()
	openApp(t, ctx, baseURL+"/login")
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#email`), email),
		chromedp.SendKeys(chromedp.CSS(`#password`), password),
		chromedp.Click(chromedp.CSS(`#sign-in`)),
		chromedp.WaitVisible(chromedp.CSS(`#signed-in-as`)),
	); err != nil {
		t.Fatalf("signing in as %s: %v", email, err)
	}
}

// waitLocation waits until the tab's address is url. It reads the address
// again while a page load replaces the document.
func waitLocation(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	var loc string
	var err error
	for {
		loc, err = chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
		if err == nil && loc == url {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the address is %q, want %q (%v)", loc, url, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// logLevel is Warn, or Info (every request) with BETAPORT_TEST_LOG=info.
func logLevel() slog.Level {
	if os.Getenv("BETAPORT_TEST_LOG") == "info" {
		return slog.LevelInfo
	}
	return slog.LevelWarn
}

// adminTab opens a blank tab signed in as the demo's first admin (Acme, on
// the Professional plan): it signs in through the API and gives the tab the
// session's cookie (the sign-in form has tests of its own). The test opens
// the page it needs; no page boots for nothing.
func adminTab(t *testing.T, m *cli.Main, d *demo.Result) context.Context {
	t.Helper()
	ctx := newTab(t)
	c := signInHTTP(t, m.URL(), d.Admins[0].Email, d.Admins[0].Password)
	if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{
		Name: c.Name, Value: c.Value, URL: m.URL() + "/", HTTPOnly: &c.HttpOnly, SameSite: network.CookieSameSiteLax,
	}); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// adminHome is adminTab showing the admin's extensions, signed in.
func adminHome(t *testing.T, m *cli.Main, d *demo.Result) context.Context {
	t.Helper()
	ctx := adminTab(t, m, d)
	openApp(t, ctx, m.URL()+"/")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#signed-in-as`))); err != nil {
		t.Fatalf("the admin's tab does not show them signed in: %v", err)
	}
	return ctx
}

// yesReady holds once the focused control takes a press: a destructive
// question's Yes shows disabled for model.ConfirmDelay after it opens, and
// a person presses it once it shows as pressable.
const yesReady = `document.activeElement?.getAttribute("aria-disabled") === "false"`

// signInHTTP signs an admin in through the API and returns the session
// cookie.
func signInHTTP(t *testing.T, baseURL, email, password string) *http.Cookie {
	t.Helper()
	body, _ := json.Marshal(api.SignIn{Email: email, Password: password})
	resp, err := http.Post(baseURL+api.PathSession, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie && c.Value != "" {
			return c
		}
	}
	t.Fatalf("signing in as %s: %d and no session cookie", email, resp.StatusCode)
	return nil
}
