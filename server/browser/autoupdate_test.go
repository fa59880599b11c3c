package browser_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/crx"
	"github.com/betaport/betaport/server/demo"
)

// Self-hosted updates end to end, as a managed Chromium meets them: an
// enterprise policy force-installs the extension from its Betaport update
// URL, then the installed copy picks up the next published bundle.
//
// This needs a Chromium of its own. The shared one runs with
// --disable-background-networking, which turns the extension updater off
// (policy installs included); this one runs with the updater on and a fresh
// profile.
//
// Chromium reads managed policies from a machine-wide directory, so the test
// writes a file there (root only; CI runs as root) and removes it when it
// ends. The tests that write it do not run in parallel (Go runs them before
// the parallel ones), so no other test's browser starts while the file
// exists; the shared browser reloads the policy but, with its updater off,
// installs nothing. Another process's tests wait on a lock (lockPolicies).
//
// Chromium 156 checks installed extensions for updates at start-up and then
// every 5 hours; the --extensions-update-frequency switch is gone. The test
// asks for a check the way a person does: the Update button of
// chrome://extensions (chrome.developerPrivate.autoUpdate).
func TestAutoUpdateThroughManagedPolicy(t *testing.T) {
	m, d := startService(t)
	autoUpdate(t, m, d)
}

// TestAutoUpdateThroughManagedPolicyOnS3 is the same with the bundles on S3
// (versitygw on another loopback port): the service answers the updater's
// CRX requests with a redirect to a presigned URL of the storage, sending
// none of the CRX's bytes, and Chromium follows it to install and update.
func TestAutoUpdateThroughManagedPolicyOnS3(t *testing.T) {
	m, d, log := startServiceOnS3(t)
	autoUpdate(t, m, d)
	crxPath := fmt.Sprintf(`path=/update/%d/…/crx/`, d.Extensions[0].ID)
	redirected := log.lines(`msg=request`, `method=GET`, crxPath, `status=302`, `bytes=0`)
	if all := log.lines(`msg=request`, crxPath); len(redirected) < 2 || len(redirected) != len(all) {
		t.Fatalf("the updater's CRX requests were answered\n%s\nwant each (at least two: install, update) a 302 with no bytes", strings.Join(all, "\n"))
	}
	t.Logf("the service redirected the updater's %d CRX requests to S3, sending no bytes of them", len(redirected))
}

// autoUpdate publishes a bundle of the demo's Tab Tamer, has a managed
// Chromium force-install it from its update URL, publishes another and has
// Chromium update to it; then rolls back to the first through the API, and
// Chromium moves to the rollback: a higher version holding the first
// bundle's code.
func autoUpdate(t *testing.T, m *cli.Main, d *demo.Result) {
	t.Helper()
	ext := d.Extensions[0] // Tab Tamer: Professional plan, 120 demo bundles
	admin := d.Admins[0]
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "key.json")
	writeFile(t, keyPath, keyFile(ext.ID, setKey(t, m.Store, ext.ID)))
	// A and B upload the same manifest version: the served version must go
	// up all the same, or Chromium would keep A.
	publish := func(build string) (number int64, version, versionName string) {
		t.Helper()
		zipPath := filepath.Join(dir, build+".zip")
		writeFile(t, zipPath, extensionZip(t, map[string]string{
			"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "7.0.0", "background": {"service_worker": "background.js"}}`,
			"background.js": "console.log('build " + build + "')\n",
		}))
		b := submitAsPipeline(t, m.URL(), keyPath, zipPath)
		return b.Number, b.Version, b.VersionName
	}
	numA, versionA, _ := publish("A")
	if versionA != "7.0.0" {
		t.Fatalf("bundle #%d is served as %q, want the uploaded 7.0.0", numA, versionA)
	}
	u := adminUpdates(t, m.URL(), admin.Email, admin.Password, ext.ID)
	if !chromeIDPattern.MatchString(u.ChromeID) {
		t.Fatalf("the Chrome ID is %q, want 32 letters a-p", u.ChromeID)
	}

	writePolicy(t, map[string]any{
		"ExtensionInstallForcelist": []string{u.ChromeID + ";" + u.UpdateURL},
	})
	start := time.Now()
	ctx, chromiumLog, profile := startUpdatingChromium(t)
	// chrome://extensions is where a person sees the installed version and
	// asks for an update check.
	if err := chromedp.Do(ctx, chromedp.Navigate("chrome://extensions")); err != nil {
		t.Fatalf("opening chrome://extensions: %v", err)
	}
	got := waitInstalled(t, ctx, chromiumLog, u.ChromeID, versionA)
	if got.InstallType != "admin" || got.UpdateURL != u.UpdateURL {
		t.Fatalf("Chromium installed %+v, want it by policy (admin) from %s", got, u.UpdateURL)
	}
	t.Logf("bundle #%d (version %s) force-installed as %s %v after Chromium's start", numA, versionA, u.ChromeID, time.Since(start).Round(time.Millisecond))

	numB, versionB, nameB := publish("B")
	if crx.CompareVersions(versionB, versionA) <= 0 || nameB != "7.0.0" {
		t.Fatalf("bundle #%d is served as %q (version_name %q), want a version above %s named 7.0.0", numB, versionB, nameB, versionA)
	}
	start = time.Now()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`chrome.developerPrivate.autoUpdate().then(() => true)`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("asking Chromium for an update check: %v", err)
	}
	got = waitInstalled(t, ctx, chromiumLog, u.ChromeID, versionB)
	if got.VersionName != nameB {
		t.Fatalf("Chromium installed %+v, want version_name %q", got, nameB)
	}
	t.Logf("bundle #%d (version %s) installed over %s in %v", numB, versionB, versionA, time.Since(start).Round(time.Millisecond))
	if code := installedFile(t, profile, u.ChromeID, versionB, "background.js"); !strings.Contains(code, "build B") {
		t.Fatalf("Chromium installed version %s with background.js %q, want build B's", versionB, code)
	}

	// Roll back to A, as an admin does through the API.
	r := rollbackThroughAPI(t, m.URL(), admin.Email, admin.Password, ext.ID, numA)
	if r.RollbackOf != numA || !r.Current || r.VersionName != "7.0.0" || crx.CompareVersions(r.Version, versionB) <= 0 {
		t.Fatalf("the rollback to #%d published %+v, want the current bundle, a rollback of #%d named 7.0.0, served above %s", numA, r, numA, versionB)
	}
	start = time.Now()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`chrome.developerPrivate.autoUpdate().then(() => true)`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("asking Chromium for an update check: %v", err)
	}
	got = waitInstalled(t, ctx, chromiumLog, u.ChromeID, r.Version)
	if got.VersionName != "7.0.0" {
		t.Fatalf("Chromium installed %+v after the rollback, want version_name 7.0.0", got)
	}
	if code := installedFile(t, profile, u.ChromeID, r.Version, "background.js"); !strings.Contains(code, "build A") {
		t.Fatalf("Chromium installed the rollback %s with background.js %q, want build A's code", r.Version, code)
	}
	t.Logf("rollback #%d (version %s, build A's code) installed over %s in %v", r.Number, r.Version, versionB, time.Since(start).Round(time.Millisecond))
}

// rollbackThroughAPI rolls extID back to bundle number as the admin
// (POST …/bundles/{number}/rollback) and returns the new bundle.
func rollbackThroughAPI(t *testing.T, baseURL, email, password string, extID, number int64) betaport.Bundle {
	t.Helper()
	cookie := signInHTTP(t, baseURL, email, password)
	req, err := http.NewRequest(http.MethodPost, baseURL+api.RollbackPath(extID, number), strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var b betaport.Bundle
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(body, &b) != nil {
		t.Fatalf("POST %s: %d %s", api.RollbackPath(extID, number), resp.StatusCode, body)
	}
	return b
}

// installedFile reads a file of the extension Chromium installed in
// profile at version: <profile>/Default/Extensions/<id>/<version>_N/.
func installedFile(t *testing.T, profile, id, version, name string) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(profile, "*", "Extensions", id, version+"_*"))
	if len(dirs) == 0 {
		all, _ := filepath.Glob(filepath.Join(profile, "*", "Extensions", id, "*"))
		t.Fatalf("no installed copy of %s at version %s in the profile (%v)", id, version, all)
	}
	b, err := os.ReadFile(filepath.Join(dirs[len(dirs)-1], name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// writePolicy writes a managed Chromium policy file for the length of the
// test. It is moved into place whole, since browsers watch the directory.
func writePolicy(t *testing.T, policy map[string]any) {
	t.Helper()
	managed := "/etc/chromium/policies/managed"
	if strings.Contains(filepath.Base(findChromium()), "google-chrome") {
		managed = "/etc/opt/chrome/policies/managed"
	}
	if err := os.MkdirAll(managed, 0o755); err != nil {
		if errors.Is(err, os.ErrPermission) {
			t.Skipf("writing Chromium's managed policy needs root: %v", err)
		}
		t.Fatal(err)
	}
	lockPolicies(t, managed)
	b, err := json.Marshal(policy)
	if err != nil {
		t.Fatal(err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(managed), ".betaport-test-*.json")
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			t.Skipf("writing Chromium's managed policy needs root: %v", err)
		}
		t.Fatal(err)
	}
	path := filepath.Join(managed, "betaport-test-"+strings.TrimPrefix(filepath.Base(tmp.Name()), ".betaport-test-"))
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.Remove(path); err != nil {
			t.Errorf("removing the policy file: %v", err)
		}
	})
}

// lockPolicies holds the machine's managed policy directory for the length of
// the test, and clears the test policy files found there. Every Chromium on
// the machine reads every file in it: a second test process on the same
// machine (two suites at once) would give its browsers this test's
// force-installs, from a server they never meet. A file found while holding
// the lock was left by a test process killed before its clean-up, and its
// server is gone.
func lockPolicies(t *testing.T, managed string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(filepath.Dir(managed), ".betaport-test.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	// Blocks while another process's test holds it; the kernel releases it
	// when a holder dies.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	stale, _ := filepath.Glob(filepath.Join(managed, "betaport-test-*.json"))
	for _, path := range stale {
		t.Logf("removing %s, left by a test process that did not end", path)
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}

// startUpdatingChromium starts a headless Chromium with a fresh profile and
// its extension updater on, and returns its first tab (with a deadline
// that bounds the test), the path of its log and its profile.
func startUpdatingChromium(t *testing.T) (context.Context, string, string) {
	t.Helper()
	return startUpdatingChromiumAt(t, findChromium(), 60*time.Second)
}

// startUpdatingChromiumAt is startUpdatingChromium for the browser that
// exec starts (Chromium itself, or a wrapper that execs it), its first tab
// bounded by limit.
func startUpdatingChromiumAt(t *testing.T, exec string, limit time.Duration) (context.Context, string, string) {
	t.Helper()
	profile := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "chromium.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exec),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-sync", true),
		// Debian's /usr/bin/chromium adds --disable-background-networking
		// (no updater) unless it is given this; Chromium ignores it.
		chromedp.Flag("enable-remote-extensions", true),
		chromedp.Flag("enable-logging", "stderr"),
		chromedp.Flag("v", "1"),
		chromedp.CombinedOutput(logFile),
		chromedp.UserDataDir(profile),
	)
	ctx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc() // waits for the process to end
		logFile.Close()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium (%s): %v\n%s", exec, err, readTail(logPath))
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	t.Cleanup(cancel)
	return ctx, logPath, profile
}

// readTail is the end of a log, for a failure's message.
func readTail(path string) string {
	b, _ := os.ReadFile(path)
	return string(b[max(0, len(b)-4000):])
}

// installed is what chrome.management says of an installed extension.
type installed struct {
	Version     string `json:"version"`
	VersionName string `json:"versionName"`
	Enabled     bool   `json:"enabled"`
	InstallType string `json:"installType"`
	UpdateURL   string `json:"updateUrl"`
}

// waitInstalled waits until Chromium has version of extension id installed
// and enabled, as chrome://extensions (open in ctx) reads it. It reads
// chrome.management: the version chrome://extensions shows is the
// version_name when there is one.
func waitInstalled(t *testing.T, ctx context.Context, logPath, id, version string) installed {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	expr := fmt.Sprintf(`chrome.management.get(%q).then(i => JSON.stringify(i), e => "")`, id)
	var seen installed
	for {
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
		if err == nil && raw != "" {
			seen = installed{}
			if err = json.Unmarshal([]byte(raw), &seen); err == nil && seen.Version == version && seen.Enabled {
				return seen
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("Chromium has %+v of %s, want version %s enabled (%v)\nChromium's log about extensions:\n%s", seen, id, version, err, extensionLog(logPath, id))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// extensionLog is the end of Chromium's log, the lines about extensions.
func extensionLog(path, id string) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		low := strings.ToLower(l)
		if strings.HasPrefix(l, "[") && (strings.Contains(l, id) || strings.Contains(low, "crx") || strings.Contains(low, "updat") || strings.Contains(low, "policy") || strings.Contains(low, "extensions/")) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines[max(0, len(lines)-60):], "\n")
}
