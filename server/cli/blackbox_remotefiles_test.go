package cli_test

// Black-box tests of the remote commands that fetch files and the ones
// around them (bundle download, webhook deliveries, installs, policy,
// update-url show|rotate, feedback delete|screenshot), by a second pair of
// eyes: written from the README ("Access tokens and the command line from
// anywhere"), "betaport help", "betaport COMMAND -h" and openapi.json only.
// Every command runs as a process of its own against a real service, on
// SQLite and files and on PostgreSQL and S3 (where downloads are redirects
// to the bucket), with the bbr… helpers of blackbox_remote_test.go. The
// helpers of this file are named bbf….

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf16"

	"github.com/betaport/betaport/server/testenv"
)

// ------------------------------------------------------------ helpers

func bbfSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// bbfDir is the names in dir, sorted.
func bbfDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// bbfRead reads a file the test expects to be there.
func bbfRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return b
}

// bbfSaved checks a command that saved path: exit 0 (the caller's
// business), stdout one JSON object naming the file with its size and
// SHA-256, which are those of the bytes on disk; it returns the bytes.
func bbfSaved(t *testing.T, what, stdout, path string) []byte {
	t.Helper()
	b := bbfRead(t, path)
	sum := bbrOne(t, what, stdout)
	if bbrNum(sum, "size") != int64(len(b)) || bbrStr(sum, "sha256") != bbfSHA(b) {
		t.Errorf("%s printed %v; the file has %d bytes of SHA-256 %s", what, sum, len(b), bbfSHA(b))
	}
	fi1, err1 := os.Stat(path)
	fi2, err2 := os.Stat(bbrStr(sum, "file"))
	if err1 != nil || err2 != nil || !os.SameFile(fi1, fi2) {
		t.Errorf("%s printed file %q, not the file it wrote (%s)", what, bbrStr(sum, "file"), path)
	}
	return b
}

// bbfToStdout checks a command run with --out -: the bytes on stdout, the
// summary on stderr naming their size and SHA-256; it returns the bytes.
func bbfToStdout(t *testing.T, what string, code int, stdout, stderr string) []byte {
	t.Helper()
	if code != 0 {
		t.Fatalf("%s: exit %d\nstderr: %s", what, code, stderr)
	}
	// The summary, as JSON or as a sentence, names the size and SHA-256.
	if !strings.Contains(stderr, bbfSHA([]byte(stdout))) || !strings.Contains(stderr, strconv.Itoa(len(stdout))) {
		t.Errorf("%s: stderr %q; stdout has %d bytes of SHA-256 %s, which the summary should name", what, stderr, len(stdout), bbfSHA([]byte(stdout)))
	}
	return []byte(stdout)
}

// bbfUntouched checks that a refused command left dir as it was: the same
// names (no temporary file beside the target), and path with its old bytes.
func bbfUntouched(t *testing.T, what, dir string, names []string, path string, old []byte) {
	t.Helper()
	if got := bbfDir(t, dir); !slices.Equal(got, names) {
		t.Errorf("%s left the folder with %q; it had %q", what, got, names)
	}
	if path == "" {
		return
	}
	b, err := os.ReadFile(path)
	if old == nil {
		if err == nil {
			t.Errorf("%s wrote %s (%d bytes)", what, path, len(b))
		}
		return
	}
	if !bytes.Equal(b, old) {
		t.Errorf("%s changed %s: now %d bytes %.40q, was %q", what, path, len(b), b, old)
	}
}

// bbfManifest is the manifest.json of a CRX3, parsed.
func bbfManifest(t *testing.T, crx []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(bb20CRXFile(t, crx, "manifest.json")), &m); err != nil {
		t.Fatalf("the CRX's manifest.json: %v", err)
	}
	return m
}

// bbfTester signs a new tester in through their invite link; it returns
// their browser and id.
func bbfTester(t *testing.T, w *bbrWorld, email string) (*http.Client, string) {
	t.Helper()
	return bbfTesterOf(t, w, w.ext, email)
}

// bbfTesterOf is bbfTester on extension ext.
func bbfTesterOf(t *testing.T, w *bbrWorld, ext, email string) (*http.Client, string) {
	t.Helper()
	b := w.mustAPI(t, "POST", "/api/extensions/"+ext+"/testers", fmt.Sprintf(`{"email":%q}`, email), 201)
	var inv struct {
		ID        int64  `json:"id"`
		InviteURL string `json:"inviteUrl"`
	}
	json.Unmarshal(b, &inv)
	id, link := strconv.FormatInt(inv.ID, 10), inv.InviteURL
	if strings.HasPrefix(link, "/") {
		link = w.base + link
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, b := bb20Do(t, c, "GET", link, nil, nil)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("the invite link of %s: %d %.200s", email, resp.StatusCode, b)
	}
	if resp, b := bb20Do(t, c, "GET", w.base+"/api/builds", nil, nil); resp.StatusCode != 200 {
		t.Fatalf("%s is not signed in: /api/builds = %d %.200s", email, resp.StatusCode, b)
	}
	return c, id
}

// bbfTesterURL is the update URL in the tester's own CRX of bundle n.
func bbfTesterURL(t *testing.T, w *bbrWorld, c *http.Client, n int) string {
	t.Helper()
	resp, b := bb20Do(t, c, "GET", fmt.Sprintf("%s/api/extensions/%s/bundles/%d/crx", w.base, w.ext, n), nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("a tester's CRX of bundle %d: %d %.200s", n, resp.StatusCode, b)
	}
	u := bbrStr(bbfManifest(t, b), "update_url")
	if u == "" {
		t.Fatalf("the tester's CRX has no update_url")
	}
	return u
}

type bbfShot struct {
	ctype string
	data  []byte
}

// bbfImage is a w×h picture with a pattern.
func bbfImage(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 4), uint8((x + y) * 2), 255})
		}
	}
	return img
}

func bbfPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, bbfImage(w, h)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func bbfJPEG(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, bbfImage(w, h), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bbfReport signs a new tester in and sends a report from the builds page
// with shots (POST /api/extensions/{id}/feedback, multipart); it returns
// the report's id.
func bbfReport(t *testing.T, w *bbrWorld, email, text string, shots ...bbfShot) string {
	t.Helper()
	return bbfReportOn(t, w, w.ext, email, text, shots...)
}

// bbfReportOn is bbfReport on extension ext.
func bbfReportOn(t *testing.T, w *bbrWorld, ext, email, text string, shots ...bbfShot) string {
	t.Helper()
	c, _ := bbfTesterOf(t, w, ext, email)
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("text", text)
	for i, s := range shots {
		h := textproto.MIMEHeader{}
		ext := map[string]string{"image/png": ".png", "image/jpeg": ".jpg"}[s.ctype]
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="screenshots"; filename="shot%d%s"`, i+1, ext))
		h.Set("Content-Type", s.ctype)
		pw, _ := mw.CreatePart(h)
		pw.Write(s.data)
	}
	mw.Close()
	req, _ := http.NewRequest("POST", w.base+"/api/extensions/"+ext+"/feedback", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var f struct {
		ID          int64 `json:"id"`
		Screenshots []any `json:"screenshots"`
	}
	if resp.StatusCode != 201 || json.Unmarshal(b, &f) != nil || f.ID == 0 || len(f.Screenshots) != len(shots) {
		t.Fatalf("send a report with %d screenshots: %d %s", len(shots), resp.StatusCode, b)
	}
	return strconv.FormatInt(f.ID, 10)
}

// bbfRefused checks a refusal: exit want, nothing on stdout, a message.
func bbfRefused(t *testing.T, what string, want []int, code int, stdout, stderr string) {
	t.Helper()
	if !slices.Contains(want, code) || stdout != "" || strings.TrimSpace(stderr) == "" {
		t.Errorf("%s: exit %d, stdout %.200q, stderr %q; want exit %v, nothing on stdout and a message", what, code, stdout, stderr, want)
	}
}

// bbfUpdates is what "update-url show" prints.
func bbfUpdates(t *testing.T, w *bbrWorld, tok string) (chromeID, updateURL string) {
	t.Helper()
	u := bbrOne(t, "update-url show", w.mustRemote(t, tok, "update-url", "show"))
	return bbrStr(u, "chromeId"), bbrStr(u, "updateUrl")
}

// bbfPolicyText is a policy file's text: a .reg is UTF-16LE.
func bbfPolicyText(t *testing.T, system string, b []byte) string {
	t.Helper()
	if system != "windows" {
		return string(b)
	}
	b = bytes.TrimPrefix(b, []byte{0xff, 0xfe})
	if len(b)%2 != 0 {
		t.Errorf("the windows policy has an odd number of bytes: not UTF-16")
		return string(b)
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	return string(utf16.Decode(u))
}

// bbfCheckPolicy checks that a policy file for system installs chromeID
// from updateURL.
func bbfCheckPolicy(t *testing.T, system string, b []byte, chromeID, updateURL string) {
	t.Helper()
	text := bbfPolicyText(t, system, b)
	if !strings.Contains(text, updateURL) || !strings.Contains(text, chromeID) || !strings.Contains(text, "normal_installed") {
		t.Errorf("the %s policy does not install %s from %s (normal_installed):\n%s", system, chromeID, updateURL, text)
	}
	switch system {
	case "linux":
		var p struct {
			ExtensionSettings map[string]struct {
				InstallationMode string `json:"installation_mode"`
				UpdateURL        string `json:"update_url"`
			}
		}
		if err := json.Unmarshal(b, &p); err != nil || p.ExtensionSettings[chromeID].UpdateURL != updateURL ||
			p.ExtensionSettings[chromeID].InstallationMode != "normal_installed" {
			t.Errorf("the linux policy is not ExtensionSettings JSON for %s with %s (%v):\n%s", chromeID, updateURL, err, b)
		}
	case "macos":
		if !strings.Contains(text, "<plist") {
			t.Errorf("the macos policy is not a configuration profile (plist):\n%s", text)
		}
	case "windows":
		if !strings.HasPrefix(strings.TrimPrefix(text, "\ufeff"), "Windows Registry Editor") {
			t.Errorf("the windows policy is not a .reg file:\n%.200s", text)
		}
	}
}

// ------------------------------------------------------------ bundle download

func bbfDownloads(t *testing.T, w *bbrWorld) {
	w.submit(t, "1.0.0", "--notes", "one")
	w.submit(t, "1.1.0")
	w.submit(t, "1.2.0")
	submitted := func(v string) []byte { return bbfRead(t, filepath.Join(w.work, "dist-"+v+".zip")) }
	tok := w.all
	shaOf := map[int64]string{}
	for _, b := range bbrLines(t, "bundle list", w.mustRemote(t, tok, "bundle", "list")) {
		shaOf[bbrNum(b, "number")] = bbrStr(b, "sha256")
	}
	cur := bbrOne(t, "bundle current", w.mustRemote(t, tok, "bundle", "current"))
	if bbrNum(cur, "number") != 3 || len(shaOf) != 3 || bbrStr(cur, "sha256") != shaOf[3] {
		t.Fatalf("bundle current %v, bundle list's SHA-256s %v", cur, shaOf)
	}
	_, sharedURL := bbfUpdates(t, w, tok)

	// The current zip: the bytes submitted, their recorded SHA-256.
	dir := t.TempDir()
	out := filepath.Join(dir, "current.zip")
	b := bbfSaved(t, "bundle download", w.mustRemote(t, tok, "bundle", "download", "--out", out), out)
	if bbfSHA(b) != bbrStr(cur, "sha256") || !bytes.Equal(b, submitted("1.2.0")) {
		t.Errorf("bundle download wrote %d bytes of SHA-256 %s; bundle current says %s (the zip submitted has %d bytes)",
			len(b), bbfSHA(b), bbrStr(cur, "sha256"), len(submitted("1.2.0")))
	}
	if m := bb20ZipFile(t, b, "manifest.json"); !strings.Contains(m, `"1.2.0"`) {
		t.Errorf("the current zip's manifest: %s", m)
	}
	if got := bbfDir(t, dir); !slices.Equal(got, []string{"current.zip"}) {
		t.Errorf("after bundle download the folder holds %q", got)
	}
	// An older build, onto the file that is there: it is replaced.
	b = bbfSaved(t, "bundle download --bundle 1", w.mustRemote(t, tok, "bundle", "download", "--bundle", "1", "--out", out), out)
	if bbfSHA(b) != shaOf[1] || !bytes.Equal(b, submitted("1.0.0")) {
		t.Errorf("bundle download --bundle 1 wrote SHA-256 %s, want bundle 1's %s", bbfSHA(b), shaOf[1])
	}
	if m := bb20ZipFile(t, b, "manifest.json"); !strings.Contains(m, `"1.0.0"`) {
		t.Errorf("bundle 1's manifest: %s", m)
	}
	out2 := filepath.Join(dir, "two.zip")
	if b := bbfSaved(t, "bundle download --bundle 2", w.mustRemote(t, tok, "bundle", "download", "--out", out2, "--bundle", "2"), out2); bbfSHA(b) != shaOf[2] {
		t.Errorf("bundle download --bundle 2 wrote SHA-256 %s, want %s", bbfSHA(b), shaOf[2])
	}
	if got := bbfDir(t, dir); !slices.Equal(got, []string{"current.zip", "two.zip"}) {
		t.Errorf("after three downloads the folder holds %q", got)
	}

	// Four downloads at once onto one file (two cron jobs): each whole,
	// the file one of them, nothing left beside it.
	conc := t.TempDir()
	same := filepath.Join(conc, "same.zip")
	type result struct {
		code           int
		stdout, stderr string
	}
	results := make([]result, 4)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"bundle", "download", "--out", same}
			if i > 0 {
				args = append(args, "--bundle", strconv.Itoa(i))
			}
			r := &results[i]
			r.code, r.stdout, r.stderr = w.remote(t, tok, args...)
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Errorf("download %d of four at once onto one file: exit %d\nstdout: %s\nstderr: %s", i, r.code, r.stdout, r.stderr)
		}
	}
	if b := bbfRead(t, same); !bytes.Equal(b, submitted("1.0.0")) && !bytes.Equal(b, submitted("1.1.0")) && !bytes.Equal(b, submitted("1.2.0")) {
		t.Errorf("four downloads at once left %d bytes of SHA-256 %s, not one bundle whole", len(b), bbfSHA(b))
	}
	if got := bbfDir(t, conc); !slices.Equal(got, []string{"same.zip"}) {
		t.Errorf("four downloads at once onto one file left %q", got)
	}

	// The CRX: a CRX3 of the served version, naming the shared update URL.
	crxOut := filepath.Join(dir, "current.crx")
	crx := bbfSaved(t, "bundle download --crx", w.mustRemote(t, tok, "bundle", "download", "--crx", "--out", crxOut), crxOut)
	if !bytes.HasPrefix(crx, []byte("Cr24")) {
		t.Fatalf("bundle download --crx wrote % x…, not a CRX", crx[:min(16, len(crx))])
	}
	if m := bbfManifest(t, crx); bbrStr(m, "version") != "1.2.0" || bbrStr(m, "update_url") != sharedURL {
		t.Errorf("the current CRX's manifest has version %q and update_url %q; want 1.2.0 and %s (update-url show)",
			bbrStr(m, "version"), bbrStr(m, "update_url"), sharedURL)
	}
	crx1 := filepath.Join(dir, "one.crx")
	if m := bbfManifest(t, bbfSaved(t, "bundle download --crx --bundle 1",
		w.mustRemote(t, tok, "bundle", "download", "--crx", "--bundle", "1", "--out", crx1), crx1)); bbrStr(m, "version") != "1.0.0" {
		t.Errorf("bundle 1's CRX has version %q", bbrStr(m, "version"))
	}

	// --out -: the bytes on stdout, the summary on stderr.
	code, stdout, stderr := w.remote(t, tok, "bundle", "download", "--out", "-")
	if b := bbfToStdout(t, "bundle download --out -", code, stdout, stderr); !bytes.Equal(b, submitted("1.2.0")) {
		t.Errorf("bundle download --out - printed %d bytes, not the current zip", len(b))
	}
	code, stdout, stderr = w.remote(t, tok, "bundle", "download", "--crx", "--bundle", "2", "--out", "-")
	if b := bbfToStdout(t, "bundle download --crx --bundle 2 --out -", code, stdout, stderr); !bytes.HasPrefix(b, []byte("Cr24")) {
		t.Errorf("bundle download --crx --out - printed % x…", b[:min(16, len(b))])
	} else if m := bbfManifest(t, b); bbrStr(m, "version") != "1.1.0" {
		t.Errorf("bundle 2's CRX on stdout has version %q", bbrStr(m, "version"))
	}

	// A read token downloads.
	ro, _ := w.makeToken(t, w.ext, "reader", "read")
	roOut := filepath.Join(dir, "ro.zip")
	if b := bbfSaved(t, "bundle download with a read token", w.mustRemote(t, ro, "bundle", "download", "--out", roOut), roOut); bbfSHA(b) != shaOf[3] {
		t.Errorf("bundle download with a read token wrote SHA-256 %s", bbfSHA(b))
	}

	// Refusals leave what was there, and nothing beside it.
	keep := t.TempDir()
	precious := filepath.Join(keep, "precious.zip")
	os.WriteFile(precious, []byte("what was there"), 0o644)
	names := bbfDir(t, keep)
	for _, c := range []struct {
		what string
		tok  string
		args []string
		want []int
	}{
		{"no bundle 99", tok, []string{"--bundle", "99"}, []int{4}},
		{"no bundle 99, its CRX", tok, []string{"--bundle", "99", "--crx"}, []int{4}},
		{"bundle 0", tok, []string{"--bundle", "0"}, []int{2, 4}},
		{"a huge bundle number", tok, []string{"--bundle", "99999999999999999999"}, []int{2, 4}},
		{"a revoked token", "", nil, []int{3}},
		{"a token without read", "", nil, []int{3}},
		{"another extension", tok, []string{"--extension", w.ext2}, []int{3, 4}},
		{"an extension that does not exist", tok, []string{"--extension", "987654"}, []int{3, 4}},
		{"a garbage token", "bpt_" + strings.Repeat("x", 43), nil, []int{3}},
	} {
		tk := c.tok
		switch c.what {
		case "a revoked token":
			var id string
			tk, id = w.makeToken(t, w.ext, "to revoke", "read")
			w.mustRemote(t, tk, "bundle", "current")
			if code, out, errOut := w.operator(t, "token", "revoke", "--extension", w.ext, "--token", id); code != 0 {
				t.Fatalf("token revoke: exit %d %s %s", code, out, errOut)
			}
		case "a token without read":
			tk, _ = w.makeToken(t, w.ext, "all but read", "testers,releases,feedback,settings")
		}
		os.WriteFile(precious, []byte("what was there"), 0o644) // whatever the case before did
		args := append([]string{"bundle", "download", "--out", precious}, c.args...)
		code, stdout, stderr := w.remote(t, tk, args...)
		bbfRefused(t, "bundle download, "+c.what, c.want, code, stdout, stderr)
		if c.what == "a token without read" && !strings.Contains(stderr, "read") {
			t.Errorf("bundle download with a token without read: stderr %q does not name the scope read", stderr)
		}
		bbfUntouched(t, "bundle download, "+c.what, keep, names, precious, []byte("what was there"))
	}
	// An extension without bundles: nothing current to download.
	empty, _ := w.makeToken(t, w.ext2, "second reader", "read")
	for _, args := range [][]string{{}, {"--crx"}, {"--bundle", "1"}} {
		code, stdout, stderr := w.remote(t, empty, append([]string{"bundle", "download", "--out", precious}, args...)...)
		bbfRefused(t, fmt.Sprintf("bundle download %v of an extension without bundles", args), []int{4}, code, stdout, stderr)
		bbfUntouched(t, "bundle download of an extension without bundles", keep, names, precious, []byte("what was there"))
	}

	// A folder that does not exist, and a folder as the file.
	missing := filepath.Join(keep, "no", "such")
	code, stdout, stderr = w.remote(t, tok, "bundle", "download", "--out", filepath.Join(missing, "x.zip"))
	bbfRefused(t, "bundle download into a folder that does not exist", []int{1, 2}, code, stdout, stderr)
	if _, err := os.Stat(filepath.Join(keep, "no")); err == nil {
		t.Errorf("bundle download into a folder that does not exist made it")
	}
	sub := filepath.Join(keep, "sub")
	os.Mkdir(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "inside"), []byte("x"), 0o644)
	names = bbfDir(t, keep)
	code, stdout, stderr = w.remote(t, tok, "bundle", "download", "--out", sub)
	bbfRefused(t, "bundle download onto a folder", []int{1, 2}, code, stdout, stderr)
	bbfUntouched(t, "bundle download onto a folder", keep, names, "", nil)
	if got := bbfDir(t, sub); !slices.Equal(got, []string{"inside"}) {
		t.Errorf("bundle download onto a folder left it with %q", got)
	}
	if fi, err := os.Stat(sub); err != nil || !fi.IsDir() {
		t.Errorf("bundle download onto a folder replaced it (%v)", err)
	}
}

// TestBlackBoxRemoteFilesDownloadOnSQLite: "bundle download" on SQLite and
// files: the zip as submitted (its recorded SHA-256), an older one, the
// CRX, --out -, and refusals that leave the file that was there.
func TestBlackBoxRemoteFilesDownloadOnSQLite(t *testing.T) {
	t.Parallel()
	bbfDownloads(t, bbrSetup(t, false))
}

// TestBlackBoxRemoteFilesDownloadOnPostgreSQL: the same on PostgreSQL and
// S3, where the service answers a download with a link to the bucket.
func TestBlackBoxRemoteFilesDownloadOnPostgreSQL(t *testing.T) {
	t.Parallel()
	testenv.SkipIfAsked(t)
	bbfDownloads(t, bbrSetup(t, true))
}

// ------------------------------------------------------------ redirects

// bbfStorage is a storage answering the links a proxy in front of the
// service gives for downloads, in a mode.
type bbfStorage struct {
	mu    sync.Mutex
	mode  string // "ok", "tamper", "truncate", "forbid"
	blobs map[string][]byte
	leaks []string // requests that carried the token
	hits  int
}

func (s *bbfStorage) setMode(m string) {
	s.mu.Lock()
	s.mode = m
	s.mu.Unlock()
}

func (s *bbfStorage) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits++
	mode := s.mode
	var hdr bytes.Buffer
	r.Header.Write(&hdr)
	if r.Header.Get("Authorization") != "" || strings.Contains(hdr.String()+r.URL.String(), "bpt_") {
		s.leaks = append(s.leaks, r.Method+" "+r.URL.String()+"\n"+hdr.String())
	}
	b, ok := s.blobs[r.URL.Path]
	s.mu.Unlock()
	if !ok || r.URL.Query().Get("X-Amz-Signature") == "" {
		rw.WriteHeader(404)
		return
	}
	switch mode {
	case "forbid":
		rw.Header().Set("Content-Type", "application/xml")
		rw.WriteHeader(403)
		io.WriteString(rw, "<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>")
	case "tamper":
		c := bytes.Clone(b)
		c[len(c)/2] ^= 0x55
		rw.Header().Set("Content-Length", strconv.Itoa(len(c)))
		rw.Write(c)
	case "truncate":
		rw.Header().Set("Content-Length", strconv.Itoa(len(b)))
		rw.Write(b[:len(b)/2])
		if f, ok := rw.(http.Flusher); ok {
			f.Flush()
		}
	default:
		rw.Header().Set("Content-Length", strconv.Itoa(len(b)))
		rw.Write(b)
	}
}

// TestBlackBoxRemoteFilesRedirectedDownload: a service (a proxy in front
// of a real one) that answers downloads with a link to another server, as
// on S3: the command follows it without the token, and a download that
// is not whole, not the bundle's bytes, or refused by the storage fails
// and leaves the file that was there, with nothing beside it.
func TestBlackBoxRemoteFilesRedirectedDownload(t *testing.T) {
	t.Parallel()
	w := bbrSetup(t, false)
	w.submit(t, "3.0.0")
	w.submit(t, "3.1.0")
	store := &bbfStorage{mode: "ok", blobs: map[string][]byte{}}
	storage := httptest.NewServer(store)
	t.Cleanup(storage.Close)
	target, _ := url.Parse(w.base)
	rp := httputil.NewSingleHostReverseProxy(target)
	dl := regexp.MustCompile(`^/api/extensions/[^/]+/bundles/[^/]+/(download|crx)$`)
	var redirected atomic.Int64
	// publishNext publishes 3.2.0 when the next download arrives, before
	// answering it: a pipeline publishing while the command downloads.
	var publishNext atomic.Bool
	var publishErr atomic.Value
	proxy := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != "GET" || !dl.MatchString(r.URL.Path) {
			rp.ServeHTTP(rw, r)
			return
		}
		if publishNext.CompareAndSwap(true, false) {
			zip := filepath.Join(w.work, "dist-3.2.0.zip")
			os.WriteFile(zip, bb20Zip(t, "3.2.0"), 0o600)
			code, out, errOut := bbrCommand(t, nil, "submit", "--base-url", w.base, "--key", w.keyFile, "--quiet", zip)
			if code != 0 {
				publishErr.Store(fmt.Sprintf("submit 3.2.0: exit %d %s %s", code, out, errOut))
			}
		}
		req, _ := http.NewRequest("GET", w.base+r.URL.RequestURI(), nil)
		req.Header = r.Header.Clone()
		req.Header.Del("Range")
		req.Header.Del("If-None-Match")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			rw.WriteHeader(502)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			for k, v := range resp.Header {
				rw.Header()[k] = v
			}
			rw.WriteHeader(resp.StatusCode)
			rw.Write(b)
			return
		}
		key := fmt.Sprintf("/bucket/blob-%d", redirected.Add(1))
		store.mu.Lock()
		store.blobs[key] = b
		store.mu.Unlock()
		http.Redirect(rw, r, storage.URL+key+"?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=300&X-Amz-Signature=0123abcd", http.StatusFound)
	}))
	t.Cleanup(proxy.Close)
	run := func(args ...string) (int, string, string) {
		t.Helper()
		return bbrCommand(t, []string{"BETAPORT_SERVER=" + proxy.URL, "BETAPORT_TOKEN=" + w.all}, args...)
	}
	shaOf := map[int64]string{}
	for _, b := range bbrLines(t, "bundle list", w.mustRemote(t, w.all, "bundle", "list")) {
		shaOf[bbrNum(b, "number")] = bbrStr(b, "sha256")
	}

	dir := t.TempDir()
	out := filepath.Join(dir, "b.zip")
	code, stdout, stderr := run("bundle", "download", "--out", out)
	if code != 0 {
		t.Fatalf("bundle download through a link: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if b := bbfSaved(t, "bundle download through a link", stdout, out); bbfSHA(b) != shaOf[2] {
		t.Errorf("bundle download through a link wrote SHA-256 %s, want %s", bbfSHA(b), shaOf[2])
	}
	crxOut := filepath.Join(dir, "b.crx")
	code, stdout, stderr = run("bundle", "download", "--crx", "--bundle", "1", "--out", crxOut)
	if code != 0 {
		t.Fatalf("bundle download --crx through a link: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if b := bbfSaved(t, "bundle download --crx through a link", stdout, crxOut); !bytes.HasPrefix(b, []byte("Cr24")) {
		t.Errorf("bundle download --crx through a link wrote % x…", b[:min(16, len(b))])
	}
	code, stdout, stderr = run("bundle", "download", "--bundle", "1", "--out", "-")
	if b := bbfToStdout(t, "bundle download --out - through a link", code, stdout, stderr); bbfSHA(b) != shaOf[1] {
		t.Errorf("bundle download --bundle 1 --out - through a link printed SHA-256 %s, want %s", bbfSHA(b), shaOf[1])
	}
	if redirected.Load() < 3 {
		t.Fatalf("the proxy gave %d links; the downloads did not go through it", redirected.Load())
	}
	store.mu.Lock()
	if store.hits < 3 || len(store.leaks) != 0 {
		t.Errorf("the storage got %d requests; the token went to the storage with %d of them:\n%s", store.hits, len(store.leaks), strings.Join(store.leaks, "\n"))
	}
	store.mu.Unlock()

	// A build published between what the command asks first and the
	// download: it saves one bundle whole, and says which.
	publishNext.Store(true)
	during := filepath.Join(dir, "during.zip")
	code, stdout, stderr = run("bundle", "download", "--out", during)
	if e := publishErr.Load(); e != nil {
		t.Fatal(e)
	}
	if publishNext.Load() {
		t.Fatalf("the download did not go through the proxy")
	}
	shaOf = map[int64]string{}
	for _, b := range bbrLines(t, "bundle list", w.mustRemote(t, w.all, "bundle", "list")) {
		shaOf[bbrNum(b, "number")] = bbrStr(b, "sha256")
	}
	if code != 0 {
		t.Errorf("bundle download while a build is published: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	} else {
		b := bbfSaved(t, "bundle download while a build is published", stdout, during)
		sum := bbrOne(t, "bundle download", stdout)
		if n := bbrNum(sum, "number"); bbfSHA(b) != shaOf[2] && bbfSHA(b) != shaOf[3] || n != 0 && shaOf[n] != bbfSHA(b) {
			t.Errorf("bundle download while a build is published saved SHA-256 %s and printed %v; bundles: %v", bbfSHA(b), sum, shaOf)
		}
	}

	// What the storage sends is not taken on trust.
	keep := t.TempDir()
	precious := filepath.Join(keep, "b.zip")
	os.WriteFile(precious, []byte("what was there"), 0o644)
	names := bbfDir(t, keep)
	for _, mode := range []string{"tamper", "truncate", "forbid"} {
		store.setMode(mode)
		for _, args := range [][]string{{}, {"--bundle", "1"}, {"--crx"}} {
			what := fmt.Sprintf("bundle download %v, the storage answering %s", args, mode)
			if mode == "tamper" && slices.Contains(args, "--crx") {
				continue // a CRX has no SHA-256 of record to check it against
			}
			code, stdout, stderr := run(append([]string{"bundle", "download", "--out", precious}, args...)...)
			bbfRefused(t, what, []int{1, 5}, code, stdout, stderr)
			bbfUntouched(t, what, keep, names, precious, []byte("what was there"))
		}
	}
	// A link to nowhere.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nowhere := ln.Addr().String()
	ln.Close()
	dead := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if dl.MatchString(r.URL.Path) {
			http.Redirect(rw, r, "http://"+nowhere+"/bucket/x?X-Amz-Signature=1", http.StatusFound)
			return
		}
		rp.ServeHTTP(rw, r)
	}))
	t.Cleanup(dead.Close)
	code, stdout, stderr = bbrCommand(t, []string{"BETAPORT_SERVER=" + dead.URL, "BETAPORT_TOKEN=" + w.all}, "bundle", "download", "--out", precious)
	bbfRefused(t, "bundle download with a link to nowhere", []int{5}, code, stdout, stderr)
	bbfUntouched(t, "bundle download with a link to nowhere", keep, names, precious, []byte("what was there"))
}

// ------------------------------------------------------------ webhook deliveries

func bbfDeliveries(t *testing.T, w *bbrWorld) {
	tok := w.all
	recv, hits := bbrReceiver(t)
	hook := bbrOne(t, "webhook create", w.mustRemote(t, tok, "webhook", "create", "--url", recv.URL+"/ok"))
	hookID := bbrID(hook)
	if got := bbrLines(t, "webhook deliveries of a new webhook", w.mustRemote(t, tok, "webhook", "deliveries", "--webhook", hookID)); len(got) != 0 {
		t.Errorf("webhook deliveries of a new webhook = %v", got)
	}
	// 23 pings (over the API's page of 20): two with the command, the rest
	// by the admin.
	w.mustRemote(t, tok, "webhook", "test", "--webhook", hookID)
	w.mustRemote(t, tok, "webhook", "test", "--webhook", hookID)
	for i := 0; i < 21; i++ {
		if code, b := w.api(t, "POST", "/api/extensions/"+w.ext+"/webhooks/"+hookID+"/test", ""); code/100 != 2 {
			t.Fatalf("webhook test %d through the API: %d %s", i, code, b)
		}
	}
	bbrEventually(t, "23 pings at the receiver", func() bool { return hits.Load() >= 23 })
	var list []map[string]any
	bbrEventually(t, "23 delivered pings in webhook deliveries", func() bool {
		list = bbrLines(t, "webhook deliveries", w.mustRemote(t, tok, "webhook", "deliveries", "--webhook", hookID))
		delivered := 0
		for _, d := range list {
			if bbrStr(d, "state") == "delivered" {
				delivered++
			}
		}
		return delivered == 23
	})
	if len(list) != 23 {
		t.Errorf("webhook deliveries printed %d deliveries, want the 23 pings across the pages", len(list))
	}
	for i, d := range list {
		if bbrStr(d, "type") != "ping" || bbrNum(d, "attempts") < 1 || bbrNum(d, "lastStatus") != 204 || bbrStr(d, "lastError") != "" {
			t.Errorf("delivery %v: want a delivered ping, answered 204", d)
		}
		if i > 0 && bbrNum(d, "id") >= bbrNum(list[i-1], "id") {
			t.Errorf("webhook deliveries is not newest first: %v after %v", d, list[i-1])
		}
	}
	limited := bbrLines(t, "webhook deliveries --limit 1", w.mustRemote(t, tok, "webhook", "deliveries", "--webhook", hookID, "--limit", "1"))
	if len(limited) != 1 || bbrNum(limited[0], "id") != bbrNum(list[0], "id") {
		t.Errorf("webhook deliveries --limit 1 = %v; want the newest, %v", limited, list[0])
	}
	if got := bbrLines(t, "webhook deliveries --limit 21", w.mustRemote(t, tok, "webhook", "deliveries", "--webhook", hookID, "--limit", "21")); len(got) != 21 {
		t.Errorf("webhook deliveries --limit 21 printed %d", len(got))
	}
	if got := bbrLines(t, "webhook deliveries --limit 0", w.mustRemote(t, tok, "webhook", "deliveries", "--webhook", hookID, "--limit", "0")); len(got) != 23 {
		t.Errorf("webhook deliveries --limit 0 printed %d, want all 23", len(got))
	}
	ro, _ := w.makeToken(t, w.ext, "reader", "read")
	if got := bbrLines(t, "webhook deliveries with a read token", w.mustRemote(t, ro, "webhook", "deliveries", "--webhook", hookID, "--limit", "2")); len(got) != 2 {
		t.Errorf("webhook deliveries with a read token printed %d", len(got))
	}

	// How a failing one went: the receiver's status and answer.
	bad := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		rw.WriteHeader(503)
		io.WriteString(rw, "receiver down for maintenance")
	}))
	t.Cleanup(bad.Close)
	badHook := bbrID(bbrOne(t, "webhook create", w.mustRemote(t, tok, "webhook", "create", "--url", bad.URL+"/bad")))
	w.mustRemote(t, tok, "webhook", "test", "--webhook", badHook)
	bbrEventually(t, "the failed attempt in webhook deliveries", func() bool {
		got := bbrLines(t, "webhook deliveries", w.mustRemote(t, tok, "webhook", "deliveries", "--webhook", badHook))
		return len(got) == 1 && bbrNum(got[0], "attempts") >= 1 && bbrNum(got[0], "lastStatus") == 503
	})
	got := bbrOne(t, "webhook deliveries of the failing webhook", w.mustRemote(t, tok, "webhook", "deliveries", "--webhook", badHook))
	if bbrStr(got, "state") == "delivered" || bbrStr(got, "lastError") == "" || !strings.Contains(bbrStr(got, "response"), "receiver down") {
		t.Errorf("a ping answered 503 shows as %v; want not delivered, with the error and the start of the answer", got)
	}
	// The first webhook's list did not change.
	if again := bbrLines(t, "webhook deliveries", w.mustRemote(t, tok, "webhook", "deliveries", "--webhook", hookID)); len(again) != 23 {
		t.Errorf("the first webhook's deliveries: %d after the other's ping", len(again))
	}

	// Unknown webhooks: 4.
	var other struct {
		ID int64 `json:"id"`
	}
	json.Unmarshal(w.mustAPI(t, "POST", "/api/extensions/"+w.ext2+"/webhooks", fmt.Sprintf(`{"url":%q}`, recv.URL+"/other"), 201), &other)
	w.mustRemote(t, tok, "webhook", "delete", "--webhook", badHook)
	for _, id := range []string{"987654", strconv.FormatInt(other.ID, 10), badHook} {
		code, stdout, stderr := w.remote(t, tok, "webhook", "deliveries", "--webhook", id)
		bbfRefused(t, "webhook deliveries --webhook "+id+" (not one of the extension's webhooks)", []int{4}, code, stdout, stderr)
	}
	for _, id := range []string{"-1", "abc", "0", "1.5"} {
		code, stdout, stderr := w.remote(t, tok, "webhook", "deliveries", "--webhook", id)
		bbfRefused(t, "webhook deliveries --webhook "+id, []int{2, 4}, code, stdout, stderr)
	}
	noRead, _ := w.makeToken(t, w.ext, "settings only", "settings")
	code, stdout, stderr := w.remote(t, noRead, "webhook", "deliveries", "--webhook", hookID)
	bbfRefused(t, "webhook deliveries with a settings token", []int{3}, code, stdout, stderr)
	if !strings.Contains(stderr, "read") {
		t.Errorf("webhook deliveries with a settings token: %q does not name read", stderr)
	}
}

// TestBlackBoxRemoteFilesWebhookDeliveriesOnSQLite: "webhook deliveries"
// after pings to receivers on 127.0.0.1: every delivery across the API's
// pages, newest first, how each went (a 503 with its answer), --limit, and
// unknown webhooks (4).
func TestBlackBoxRemoteFilesWebhookDeliveriesOnSQLite(t *testing.T) {
	t.Parallel()
	bbfDeliveries(t, bbrSetup(t, false))
}

func TestBlackBoxRemoteFilesWebhookDeliveriesOnPostgreSQL(t *testing.T) {
	t.Parallel()
	testenv.SkipIfAsked(t)
	bbfDeliveries(t, bbrSetup(t, true))
}

// ------------------------------------------------------------ installs

func bbfInstalls(t *testing.T, w *bbrWorld) {
	tok := w.all
	installs := func() map[string]any {
		t.Helper()
		m := bbrOne(t, "installs", w.mustRemote(t, tok, "installs"))
		if bbrNum(m, "onCurrent")+bbrNum(m, "behind")+bbrNum(m, "notInstalled") != bbrNum(m, "testers") ||
			bbrNum(m, "silent") > bbrNum(m, "onCurrent")+bbrNum(m, "behind") {
			t.Errorf("installs printed %v: onCurrent, behind and notInstalled do not add up to testers", m)
		}
		return m
	}
	counts := func(m map[string]any) string {
		return fmt.Sprintf("testers %d, onCurrent %d, behind %d, silent %d, notInstalled %d", bbrNum(m, "testers"),
			bbrNum(m, "onCurrent"), bbrNum(m, "behind"), bbrNum(m, "silent"), bbrNum(m, "notInstalled"))
	}
	m := installs()
	for _, k := range []string{"testers", "onCurrent", "behind", "silent", "notInstalled"} {
		if v, ok := m[k].(float64); !ok || v != 0 {
			t.Errorf("installs with no testers printed %v; want %s 0", m, k)
		}
	}
	w.submit(t, "1.0.0")
	w.submit(t, "2.0.0")
	chromeID, _ := bbfUpdates(t, w, tok)
	w.mustRemote(t, tok, "tester", "invite", "--email", "never@example.com")
	w.mustRemote(t, tok, "tester", "invite", "--email", "gone@example.com")
	onCur, _ := bbfTester(t, w, "current@example.com")
	old, _ := bbfTester(t, w, "old@example.com")
	if got := counts(installs()); got != "testers 4, onCurrent 0, behind 0, silent 0, notInstalled 4" {
		t.Errorf("installs after 4 invites: %s", got)
	}
	// Two copies check in with the testers' own URLs: one on the current
	// build, one on the older.
	if s := bb20Check(t, bbfTesterURL(t, w, onCur, 2), chromeID, bb20Ptr("2.0.0"), nil); s != 200 {
		t.Fatalf("a tester's update check: %d", s)
	}
	if s := bb20Check(t, bbfTesterURL(t, w, old, 1), chromeID, bb20Ptr("1.0.0"), nil); s != 200 {
		t.Fatalf("a tester's update check: %d", s)
	}
	want := "testers 4, onCurrent 1, behind 1, silent 0, notInstalled 2"
	var got string
	bbrEventually(t, "installs to count the two checks ("+want+")", func() bool {
		got = counts(installs())
		return got == want
	})
	// A revoked tester is not counted.
	w.mustRemote(t, tok, "tester", "revoke", "--tester", "gone@example.com")
	want = "testers 3, onCurrent 1, behind 1, silent 0, notInstalled 1"
	if got = counts(installs()); got != want {
		t.Errorf("installs after a revoke: %s; want %s", got, want)
	}
	// A new current build puts the current one behind.
	w.submit(t, "2.1.0")
	want = "testers 3, onCurrent 0, behind 2, silent 0, notInstalled 1"
	if got = counts(installs()); got != want {
		t.Errorf("installs after a new build: %s; want %s", got, want)
	}
	// Table, read token, and a token without read.
	code, stdout, stderr := w.remote(t, tok, "installs", "--table")
	if code != 0 || !strings.Contains(stdout, "3") {
		t.Errorf("installs --table: exit %d, stdout %q, stderr %q; want the counts", code, stdout, stderr)
	}
	ro, _ := w.makeToken(t, w.ext, "reader", "read")
	if m := bbrOne(t, "installs with a read token", w.mustRemote(t, ro, "installs")); bbrNum(m, "testers") != 3 {
		t.Errorf("installs with a read token: %v", m)
	}
	noRead, _ := w.makeToken(t, w.ext, "testers only", "testers")
	code, stdout, stderr = w.remote(t, noRead, "installs")
	bbfRefused(t, "installs with a testers token", []int{3}, code, stdout, stderr)
	code, stdout, stderr = w.remote(t, tok, "installs", "--extension", w.ext2)
	bbfRefused(t, "installs of another extension", []int{3, 4}, code, stdout, stderr)
}

// TestBlackBoxRemoteFilesInstallsOnSQLite: "installs" counts testers by
// what their own copies last reported (on the current build, behind, not
// installed), the numbers adding up to the testers; revoked testers are
// not counted.
func TestBlackBoxRemoteFilesInstallsOnSQLite(t *testing.T) {
	t.Parallel()
	bbfInstalls(t, bbrSetup(t, false))
}

func TestBlackBoxRemoteFilesInstallsOnPostgreSQL(t *testing.T) {
	t.Parallel()
	testenv.SkipIfAsked(t)
	bbfInstalls(t, bbrSetup(t, true))
}

// ------------------------------------------------------------ update URL and policy

func bbfUpdateURL(t *testing.T, w *bbrWorld) {
	w.submit(t, "1.0.0")
	tok := w.all
	ro, _ := w.makeToken(t, w.ext, "reader", "read")
	chromeID, oldURL := bbfUpdates(t, w, ro)
	if !regexp.MustCompile(`^[a-p]{32}$`).MatchString(chromeID) {
		t.Errorf("update-url show: Chrome ID %q", chromeID)
	}
	if !strings.HasPrefix(oldURL, w.base+"/update/"+w.ext+"/") {
		t.Errorf("update-url show: update URL %q, not the service's for extension %s", oldURL, w.ext)
	}
	if s := bb20Check(t, oldURL, chromeID, bb20Ptr("0.9.0"), nil); s != 200 {
		t.Fatalf("an update check with the shared URL: %d", s)
	}

	// Policy files, each naming the URL.
	dir := t.TempDir()
	for _, system := range []string{"linux", "macos", "windows"} {
		out := filepath.Join(dir, "policy-"+system)
		b := bbfSaved(t, "policy --system "+system, w.mustRemote(t, ro, "policy", "--system", system, "--out", out), out)
		bbfCheckPolicy(t, system, b, chromeID, oldURL)
		if fi, err := os.Stat(out); err == nil && fi.Mode().Perm()&0o077 != 0 {
			t.Logf("note: the %s policy file (it holds the update URL's secret) is %v", system, fi.Mode().Perm())
		}
	}
	code, stdout, stderr := w.remote(t, ro, "policy", "--system", "linux", "--out", "-")
	bbfCheckPolicy(t, "linux", bbfToStdout(t, "policy --system linux --out -", code, stdout, stderr), chromeID, oldURL)
	if got := bbfDir(t, dir); !slices.Equal(got, []string{"policy-linux", "policy-macos", "policy-windows"}) {
		t.Errorf("the policy commands left %q", got)
	}
	// An unknown system is usage (2); the file there stays.
	keep := filepath.Join(dir, "policy-linux")
	before := bbfRead(t, keep)
	names := bbfDir(t, dir)
	for _, system := range []string{"solaris", "", "Linux ", "../linux", "linux/../windows"} {
		code, stdout, stderr := w.remote(t, ro, "policy", "--system", system, "--out", keep)
		bbfRefused(t, fmt.Sprintf("policy --system %q", system), []int{2}, code, stdout, stderr)
		bbfUntouched(t, fmt.Sprintf("policy --system %q", system), dir, names, keep, before)
	}

	code, stdout, stderr = w.remote(t, ro, "policy", "--system", "macos", "--out", filepath.Join(dir, "no", "such.mobileconfig"))
	bbfRefused(t, "policy into a folder that does not exist", []int{1, 2}, code, stdout, stderr)
	if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
		t.Errorf("policy into a folder that does not exist made it")
	}

	// Rotate needs settings: a read token is refused, and nothing changes.
	code, stdout, stderr = w.remote(t, ro, "update-url", "rotate")
	bbfRefused(t, "update-url rotate with a read token", []int{3}, code, stdout, stderr)
	if !strings.Contains(stderr, "settings") {
		t.Errorf("update-url rotate with a read token: %q does not name settings", stderr)
	}
	if id, u := bbfUpdates(t, w, ro); id != chromeID || u != oldURL {
		t.Fatalf("a refused update-url rotate changed the URL: %s %s", id, u)
	}
	if s := bb20Check(t, oldURL, chromeID, bb20Ptr("0.9.0"), nil); s != 200 {
		t.Errorf("after a refused rotate the shared URL answers %d", s)
	}
	noRead, _ := w.makeToken(t, w.ext, "settings only", "settings")
	code, stdout, stderr = w.remote(t, noRead, "update-url", "show")
	bbfRefused(t, "update-url show with a settings token", []int{3}, code, stdout, stderr)

	// Rotate with a token of settings alone.
	rot := bbrOne(t, "update-url rotate", w.mustRemote(t, noRead, "update-url", "rotate"))
	newURL := bbrStr(rot, "updateUrl")
	if newURL == "" || newURL == oldURL || bbrStr(rot, "chromeId") != chromeID || !strings.HasPrefix(newURL, w.base+"/update/"+w.ext+"/") {
		t.Fatalf("update-url rotate printed %v; want the same Chrome ID %s and a new URL (the old: %s)", rot, chromeID, oldURL)
	}
	if id, u := bbfUpdates(t, w, tok); id != chromeID || u != newURL {
		t.Errorf("update-url show after the rotate: %s %s; want %s %s", id, u, chromeID, newURL)
	}
	if s := bb20Check(t, oldURL, chromeID, bb20Ptr("0.9.0"), nil); s != 404 {
		t.Errorf("the old update URL answers an update check with %d after the rotate, want 404", s)
	}
	if s := bb20Check(t, newURL, chromeID, bb20Ptr("0.9.0"), nil); s != 200 {
		t.Errorf("the new update URL answers an update check with %d", s)
	}
	for _, system := range []string{"linux", "macos", "windows"} {
		out := filepath.Join(dir, "policy-"+system)
		b := bbfSaved(t, "policy --system "+system+" after the rotate", w.mustRemote(t, tok, "policy", "--system", system, "--out", out), out)
		bbfCheckPolicy(t, system, b, chromeID, newURL)
		if strings.Contains(bbfPolicyText(t, system, b), oldURL) {
			t.Errorf("the %s policy after the rotate still names the old URL", system)
		}
	}
	// Twice: another new URL.
	again := bbrOne(t, "update-url rotate", w.mustRemote(t, tok, "update-url", "rotate"))
	if u := bbrStr(again, "updateUrl"); u == "" || u == newURL || u == oldURL {
		t.Errorf("a second update-url rotate printed %v", again)
	}
	if s := bb20Check(t, newURL, chromeID, bb20Ptr("0.9.0"), nil); s != 404 {
		t.Errorf("after a second rotate, the first rotate's URL answers %d", s)
	}
}

// TestBlackBoxRemoteFilesUpdateURLAndPolicyOnSQLite: "update-url show"
// names the URL that answers update checks and that each "policy" file
// carries; "update-url rotate" needs settings, and after it the old URL
// answers 404, show and the policy files give the new one.
func TestBlackBoxRemoteFilesUpdateURLAndPolicyOnSQLite(t *testing.T) {
	t.Parallel()
	bbfUpdateURL(t, bbrSetup(t, false))
}

func TestBlackBoxRemoteFilesUpdateURLAndPolicyOnPostgreSQL(t *testing.T) {
	t.Parallel()
	testenv.SkipIfAsked(t)
	bbfUpdateURL(t, bbrSetup(t, true))
}

// ------------------------------------------------------------ feedback

func bbfFeedback(t *testing.T, w *bbrWorld) {
	w.submit(t, "1.0.0")
	tok := w.all
	pngShot, jpegShot := bbfPNG(t, 64, 48), bbfJPEG(t, 40, 30)
	id := bbfReport(t, w, "shooter@example.com", "The popup is cut off", bbfShot{"image/png", pngShot}, bbfShot{"image/jpeg", jpegShot})
	plain := bbfReport(t, w, "plain@example.com", "No picture")
	other := bbfReport(t, w, "other@example.com", "Keep me", bbfShot{"image/png", bbfPNG(t, 10, 10)})

	dir := t.TempDir()
	check := func(what, path, format string, wantW, wantH int, b []byte) {
		t.Helper()
		cfg, f, err := image.DecodeConfig(bytes.NewReader(b))
		if err != nil || f != format || cfg.Width != wantW || cfg.Height != wantH {
			t.Errorf("%s: %s %dx%d (%v); want a %dx%d %s", what, f, cfg.Width, cfg.Height, err, wantW, wantH, format)
		} else if _, _, err := image.Decode(bytes.NewReader(b)); err != nil {
			t.Errorf("%s does not decode: %v", what, err)
		}
	}
	apiShot := func(report string, n int) []byte {
		t.Helper()
		code, b := w.api(t, "GET", fmt.Sprintf("/api/extensions/%s/feedback/%s/screenshots/%d", w.ext, report, n), "")
		if code != 200 {
			t.Fatalf("the admin's screenshot %d of report %s: %d %.200s", n, report, code, b)
		}
		return b
	}
	// The first by default, the second with --number 2, as kept.
	one := filepath.Join(dir, "one.png")
	b := bbfSaved(t, "feedback screenshot", w.mustRemote(t, tok, "feedback", "screenshot", "--report", id, "--out", one), one)
	check("feedback screenshot", one, "png", 64, 48, b)
	if !bytes.Equal(b, apiShot(id, 1)) {
		t.Errorf("feedback screenshot wrote other bytes than the service keeps")
	}
	two := filepath.Join(dir, "two.jpg")
	b = bbfSaved(t, "feedback screenshot --number 2", w.mustRemote(t, tok, "feedback", "screenshot", "--report", id, "--number", "2", "--out", two), two)
	check("feedback screenshot --number 2", two, "jpeg", 40, 30, b)
	if !bytes.Equal(b, apiShot(id, 2)) {
		t.Errorf("feedback screenshot --number 2 wrote other bytes than the service keeps")
	}
	code, stdout, stderr := w.remote(t, tok, "feedback", "screenshot", "--report", id, "--number", "2", "--out", "-")
	check("feedback screenshot --out -", "-", "jpeg", 40, 30, bbfToStdout(t, "feedback screenshot --out -", code, stdout, stderr))
	ro, _ := w.makeToken(t, w.ext, "reader", "read")
	ro1 := filepath.Join(dir, "ro.png")
	b = bbfSaved(t, "feedback screenshot with a read token", w.mustRemote(t, ro, "feedback", "screenshot", "--report", id, "--out", ro1), ro1)
	check("feedback screenshot with a read token", ro1, "png", 64, 48, b)

	// No such screenshot, report: 4, the file there stays.
	keep := filepath.Join(dir, "one.png")
	before := bbfRead(t, keep)
	names := bbfDir(t, dir)
	for _, c := range []struct {
		what string
		args []string
		want []int
	}{
		{"--number 3 of a report with two", []string{"--report", id, "--number", "3"}, []int{4}},
		{"--number 5 of a report with two", []string{"--report", id, "--number", "5"}, []int{4}},
		{"a report without screenshots", []string{"--report", plain}, []int{4}},
		{"no report 987654", []string{"--report", "987654"}, []int{4}},
		{"--number 0", []string{"--report", id, "--number", "0"}, []int{2}},
		{"--number -1", []string{"--report", id, "--number", "-1"}, []int{2}},
		{"--number 6", []string{"--report", id, "--number", "6"}, []int{2}},
		{"--number x", []string{"--report", id, "--number", "x"}, []int{2}},
		{"--report x", []string{"--report", "x"}, []int{2, 4}},
	} {
		code, stdout, stderr := w.remote(t, tok, append([]string{"feedback", "screenshot", "--out", keep}, c.args...)...)
		bbfRefused(t, "feedback screenshot, "+c.what, c.want, code, stdout, stderr)
		bbfUntouched(t, "feedback screenshot, "+c.what, dir, names, keep, before)
	}

	// Delete needs feedback: read is refused and the report stays.
	code, stdout, stderr = w.remote(t, ro, "feedback", "delete", "--report", id)
	bbfRefused(t, "feedback delete with a read token", []int{3}, code, stdout, stderr)
	if !strings.Contains(stderr, "feedback") {
		t.Errorf("feedback delete with a read token: %q does not name feedback", stderr)
	}
	if code, b := w.api(t, "GET", "/api/extensions/"+w.ext+"/feedback/"+id, ""); code != 200 {
		t.Fatalf("after a refused feedback delete the report answers %d %s", code, b)
	}
	fbOnly, _ := w.makeToken(t, w.ext, "feedback only", "feedback")
	code, stdout, stderr = w.remote(t, fbOnly, "feedback", "delete", "--report", id)
	if code != 0 {
		t.Fatalf("feedback delete with a feedback token: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	bbrLines(t, "feedback delete", stdout)
	// Gone: from the list, the API, its screenshots.
	for _, f := range bbrLines(t, "feedback list", w.mustRemote(t, tok, "feedback", "list")) {
		if bbrID(f) == id {
			t.Errorf("feedback list after the delete still shows %v", f)
		}
	}
	if code, b := w.api(t, "GET", "/api/extensions/"+w.ext+"/feedback/"+id, ""); code != 404 {
		t.Errorf("the deleted report answers %d %.200s", code, b)
	}
	for n := 1; n <= 2; n++ {
		if code, b := w.api(t, "GET", fmt.Sprintf("/api/extensions/%s/feedback/%s/screenshots/%d", w.ext, id, n), ""); code != 404 {
			t.Errorf("screenshot %d of the deleted report answers %d %.100q", n, code, b)
		}
	}
	names = bbfDir(t, dir)
	for _, n := range []string{"1", "2"} {
		code, stdout, stderr := w.remote(t, tok, "feedback", "screenshot", "--report", id, "--number", n, "--out", keep)
		bbfRefused(t, "feedback screenshot --number "+n+" of the deleted report", []int{4}, code, stdout, stderr)
		bbfUntouched(t, "feedback screenshot of the deleted report", dir, names, keep, before)
	}
	// Twice, and a report that never was: 4.
	for _, r := range []string{id, "987654"} {
		code, stdout, stderr := w.remote(t, tok, "feedback", "delete", "--report", r)
		bbfRefused(t, "feedback delete --report "+r+" (no such report)", []int{4}, code, stdout, stderr)
	}
	for _, r := range []string{"-1", "abc", "0", " " + plain} {
		code, stdout, stderr := w.remote(t, tok, "feedback", "delete", "--report", r)
		bbfRefused(t, fmt.Sprintf("feedback delete --report %q", r), []int{2, 4}, code, stdout, stderr)
	}
	// A folder that does not exist.
	code, stdout, stderr = w.remote(t, tok, "feedback", "screenshot", "--report", other, "--out", filepath.Join(dir, "no", "such.png"))
	bbfRefused(t, "feedback screenshot into a folder that does not exist", []int{1, 2}, code, stdout, stderr)
	if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
		t.Errorf("feedback screenshot into a folder that does not exist made it")
	}
	// The other reports stay, with their screenshot.
	left := map[string]bool{}
	for _, f := range bbrLines(t, "feedback list", w.mustRemote(t, tok, "feedback", "list")) {
		left[bbrID(f)] = true
	}
	if len(left) != 2 || !left[plain] || !left[other] {
		t.Errorf("after one delete feedback list shows %v; want %s and %s", left, plain, other)
	}
	o := filepath.Join(dir, "other.png")
	check("the other report's screenshot", o, "png", 10, 10,
		bbfSaved(t, "feedback screenshot of another report", w.mustRemote(t, tok, "feedback", "screenshot", "--report", other, "--out", o), o))
	// Another extension's report is not the token's: 4, and it stays.
	key2 := filepath.Join(w.work, "key2.json")
	if code, out, errOut := w.operator(t, "key", "create", "--extension", w.ext2, "--label", "CI2", "--out", key2); code != 0 {
		t.Fatalf("key create for ext2: exit %d %s %s", code, out, errOut)
	}
	zip2 := filepath.Join(w.work, "second-1.0.0.zip")
	os.WriteFile(zip2, bb20Zip(t, "1.0.0"), 0o600)
	if code, out, errOut := bbrCommand(t, nil, "submit", "--base-url", w.base, "--key", key2, "--quiet", zip2); code != 0 {
		t.Fatalf("submit to ext2: exit %d %s %s", code, out, errOut)
	}
	foreign := bbfReportOn(t, w, w.ext2, "foreign@example.com", "On the second extension", bbfShot{"image/png", bbfPNG(t, 12, 12)})
	names = bbfDir(t, dir)
	code, stdout, stderr = w.remote(t, tok, "feedback", "screenshot", "--report", foreign, "--out", keep)
	bbfRefused(t, "feedback screenshot of another extension's report", []int{4}, code, stdout, stderr)
	bbfUntouched(t, "feedback screenshot of another extension's report", dir, names, keep, before)
	code, stdout, stderr = w.remote(t, tok, "feedback", "delete", "--report", foreign)
	bbfRefused(t, "feedback delete of another extension's report", []int{4}, code, stdout, stderr)
	if code, b := w.api(t, "GET", "/api/extensions/"+w.ext2+"/feedback/"+foreign, ""); code != 200 {
		t.Errorf("after a refused feedback delete, ext2's report answers %d %.200s", code, b)
	}
	code, stdout, stderr = w.remote(t, tok, "feedback", "delete", "--report", foreign, "--extension", w.ext2)
	bbfRefused(t, "feedback delete --extension of another extension", []int{3, 4}, code, stdout, stderr)
	if code, b := w.api(t, "GET", "/api/extensions/"+w.ext2+"/feedback/"+foreign, ""); code != 200 {
		t.Errorf("after a refused feedback delete --extension, ext2's report answers %d %.200s", code, b)
	}

	// The audit trail has the deletion.
	code, ab := w.api(t, "GET", "/api/extensions/"+w.ext+"/audit?limit=100", "")
	if code != 200 || !strings.Contains(string(ab), "feedback only") {
		t.Errorf("the audit trail does not name the token that deleted the report: %d %.400s", code, ab)
	}
}

// TestBlackBoxRemoteFilesFeedbackOnSQLite: "feedback screenshot" writes a
// tester's screenshots as kept (PNG, JPEG), refuses numbers out of range;
// "feedback delete" needs the feedback scope, takes the report and its
// screenshots, and a second delete is 4.
func TestBlackBoxRemoteFilesFeedbackOnSQLite(t *testing.T) {
	t.Parallel()
	bbfFeedback(t, bbrSetup(t, false))
}

func TestBlackBoxRemoteFilesFeedbackOnPostgreSQL(t *testing.T) {
	t.Parallel()
	testenv.SkipIfAsked(t)
	bbfFeedback(t, bbrSetup(t, true))
}

// ------------------------------------------------------------ usage and scopes

// TestBlackBoxRemoteFilesUsage: usage mistakes of the new commands are
// exit 2 with a message, nothing on stdout, no request, and no file.
func TestBlackBoxRemoteFilesUsage(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		rw.WriteHeader(500)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	env := []string{"BETAPORT_SERVER=" + srv.URL, "BETAPORT_TOKEN=bpt_" + strings.Repeat("x", 43)}
	for _, args := range [][]string{
		{"bundle", "download"},
		{"bundle", "download", "--bundle", "1"},
		{"bundle", "download", "--out", ""},
		{"bundle", "download", "--out", f, "--bundle", "-1"},
		{"bundle", "download", "--out", f, "--bundle", "x"},
		{"bundle", "download", "--out", f, "--bundle", "1.5"},
		{"bundle", "download", "--out", f, "--bundle", ""},
		{"bundle", "download", "--out", f, "--crx=maybe"},
		{"bundle", "download", "--out", f, "extra"},
		{"webhook", "deliveries"},
		{"webhook", "deliveries", "--webhook", ""},
		{"webhook", "deliveries", "--webhook", "1", "--limit", "-1"},
		{"webhook", "deliveries", "--webhook", "1", "--limit", "x"},
		{"installs", "--bogus"},
		{"installs", "extra"},
		{"policy"},
		{"policy", "--out", f},
		{"policy", "--system", "linux"},
		{"policy", "--system", "solaris", "--out", f},
		{"policy", "--system", "", "--out", f},
		{"update-url"},
		{"update-url", "frobnicate"},
		{"update-url", "rotate", "--bogus"},
		{"update-url", "show", "extra"},
		{"feedback", "delete"},
		{"feedback", "delete", "--report", ""},
		{"feedback", "screenshot"},
		{"feedback", "screenshot", "--report", "1"},
		{"feedback", "screenshot", "--out", f},
		{"feedback", "screenshot", "--report", "1", "--out", f, "--number", "0"},
		{"feedback", "screenshot", "--report", "1", "--out", f, "--number", "6"},
		{"feedback", "screenshot", "--report", "1", "--out", f, "--number", "-2"},
		{"feedback", "screenshot", "--report", "1", "--out", f, "--number", "two"},
	} {
		for _, a := range [][]string{args, append(append([]string(nil), args...), "--extension", "1")} {
			n := requests.Load()
			code, out, errOut := bbrCommand(t, env, a...)
			if code != 2 || out != "" || strings.TrimSpace(errOut) == "" {
				t.Errorf("betaport %q: exit %d, stdout %q, stderr %q; want 2 with a message", a, code, out, errOut)
			}
			if m := requests.Load(); m != n {
				t.Errorf("betaport %q, a usage mistake, sent %d requests before saying so", a, m-n)
			}
		}
	}
	if got := bbfDir(t, dir); len(got) != 0 {
		t.Errorf("usage mistakes left %q", got)
	}
	// No token: 2, naming BETAPORT_TOKEN, without a request.
	n := requests.Load()
	for _, args := range [][]string{{"installs"}, {"update-url", "show"}, {"bundle", "download", "--out", f}} {
		code, out, errOut := bbrCommand(t, []string{"BETAPORT_SERVER=" + srv.URL}, args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "BETAPORT_TOKEN") {
			t.Errorf("betaport %q without a token: exit %d, stdout %q, stderr %q; want 2 naming BETAPORT_TOKEN", args, code, out, errOut)
		}
	}
	if m := requests.Load(); m != n {
		t.Errorf("commands without a token sent %d requests", m-n)
	}
	// -h names the flags, exit 0.
	for _, c := range []struct {
		args  []string
		flags []string
	}{
		{[]string{"bundle", "download", "-h"}, []string{"-out", "-bundle", "-crx", "-server", "-token"}},
		{[]string{"webhook", "deliveries", "-h"}, []string{"-webhook", "-limit"}},
		{[]string{"installs", "-h"}, []string{"-server", "-token"}},
		{[]string{"policy", "-h"}, []string{"-system", "-out"}},
		{[]string{"update-url", "show", "-h"}, []string{"-server"}},
		{[]string{"update-url", "rotate", "-h"}, []string{"-server"}},
		{[]string{"feedback", "delete", "-h"}, []string{"-report"}},
		{[]string{"feedback", "screenshot", "-h"}, []string{"-report", "-out", "-number"}},
	} {
		code, out, errOut := bbrCommand(t, env, c.args...)
		for _, fl := range c.flags {
			if code != 0 || !strings.Contains(out+errOut, fl) {
				t.Errorf("betaport %q: exit %d, does not name %s:\n%s%s", c.args, code, fl, out, errOut)
			}
		}
	}
}

// TestBlackBoxRemoteFilesScopes: each new command with a token of every
// scope but its own (from "betaport help") is refused (3, naming the
// scope, no file, nothing changed), and runs with its scope alone.
func TestBlackBoxRemoteFilesScopes(t *testing.T) {
	t.Parallel()
	w := bbrSetup(t, false)
	help := bbrHelpCommands(t)
	w.submit(t, "1.0.0")
	recv, _ := bbrReceiver(t)
	hook := bbrID(bbrOne(t, "webhook create", w.mustRemote(t, w.all, "webhook", "create", "--url", recv.URL+"/x")))
	report := bbfReport(t, w, "scoped@example.com", "with a picture", bbfShot{"image/png", bbfPNG(t, 8, 8)})
	dir := t.TempDir()
	steps := []struct {
		cmd  string
		args []string
		out  string
	}{
		{"bundle download", []string{"--out", filepath.Join(dir, "b.zip")}, "b.zip"},
		{"webhook deliveries", []string{"--webhook", hook}, ""},
		{"installs", nil, ""},
		{"policy", []string{"--system", "linux", "--out", filepath.Join(dir, "p.json")}, "p.json"},
		{"update-url show", nil, ""},
		{"feedback screenshot", []string{"--report", report, "--out", filepath.Join(dir, "s.png")}, "s.png"},
		{"update-url rotate", nil, ""},
		{"feedback delete", []string{"--report", report}, ""},
	}
	wantScope := map[string]string{
		"bundle download": "read", "webhook deliveries": "read", "installs": "read", "policy": "read",
		"update-url show": "read", "feedback screenshot": "read", "update-url rotate": "settings", "feedback delete": "feedback",
	}
	for _, s := range steps {
		if help[s.cmd] != wantScope[s.cmd] {
			t.Errorf("betaport help gives %q the scope %q; the README says %s", s.cmd, help[s.cmd], wantScope[s.cmd])
		}
	}
	allBut, only := map[string]string{}, map[string]string{}
	for _, s := range bbrScopes {
		var rest []string
		for _, r := range bbrScopes {
			if r != s {
				rest = append(rest, r)
			}
		}
		allBut[s], _ = w.makeToken(t, w.ext, "all but "+s, strings.Join(rest, ","))
		only[s], _ = w.makeToken(t, w.ext, "only "+s, s)
	}
	before := w.state(t)
	_, url0 := bbfUpdates(t, w, w.all)
	for _, s := range steps {
		scope := wantScope[s.cmd]
		args := append(strings.Fields(s.cmd), s.args...)
		code, out, errOut := w.remote(t, allBut[scope], args...)
		if code != 3 || out != "" || !strings.Contains(errOut, scope) {
			t.Errorf("betaport %s with a token of every scope but %s: exit %d, stdout %q, stderr %q; want 3 naming %s",
				strings.Join(args, " "), scope, code, out, errOut, scope)
		}
	}
	if got := bbfDir(t, dir); len(got) != 0 {
		t.Errorf("refused commands wrote %q", got)
	}
	if after := w.state(t); after != before {
		t.Errorf("refused commands changed things:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, u := bbfUpdates(t, w, w.all); u != url0 {
		t.Errorf("a refused update-url rotate changed the URL")
	}
	for _, s := range steps {
		args := append(strings.Fields(s.cmd), s.args...)
		code, out, errOut := w.remote(t, only[wantScope[s.cmd]], args...)
		if code != 0 {
			t.Errorf("betaport %s with a token of %s alone: exit %d, stdout %q, stderr %q; want 0",
				strings.Join(args, " "), wantScope[s.cmd], code, out, errOut)
			continue
		}
		if s.out != "" {
			bbfSaved(t, s.cmd, out, filepath.Join(dir, s.out))
		} else {
			bbrLines(t, s.cmd, out)
		}
	}
}
