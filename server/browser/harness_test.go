package browser_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/demo"
	"github.com/betaport/betaport/server/testenv"
)

// browser is the one Chromium every test opens its tabs in.
var browser context.Context

func TestMain(m *testing.M) {
	code := runWithBrowser(m)
	testenv.Stop() // PostgreSQL and versitygw, when a test started them
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
		// Scrollbars a hand can drag (headless hides them by default).
		chromedp.Flag("hide-scrollbars", false),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
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

// startService runs the real service on port 0 with a fresh data dir and
// the small demo data.
func startService(t *testing.T) (*cli.Main, *demo.Result) {
	t.Helper()
	ctx := context.Background()
	m := cli.NewMain()
	m.Config.Addr = "127.0.0.1:0"
	m.Config.Data = t.TempDir()
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		m.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel()}))
	}
	if err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("closing the service: %v", err)
		}
	})
	d, err := demo.Load(ctx, m.Store, m.Blobs, demo.Small)
	if err != nil {
		t.Fatal(err)
	}
	return m, d
}

// newTab opens a tab in the shared browser. When the test fails, a
// screenshot of the tab is kept and its path printed.
func newTab(t *testing.T) context.Context {
	t.Helper()
	tab, cancelTab := chromedp.NewContext(browser)
	// The first run opens the tab and ties it to the context it is given:
	// give it the tab's own, so the deadline below ends the test's waits,
	// not the tab (the failure screenshot still needs it).
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	console := recordConsole(tab)
	ctx, cancel := context.WithTimeout(tab, 3*time.Minute) // a hundred pages by hand, on a busy machine
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

// adminTab opens a tab signed in as the demo's first admin (Acme, on the
// Professional plan).
func adminTab(t *testing.T, m *cli.Main, d *demo.Result) context.Context {
	t.Helper()
	ctx := newTab(t)
	signIn(t, ctx, m.URL(), d.Admins[0].Email, d.Admins[0].Password)
	return ctx
}
