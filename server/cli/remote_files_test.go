package cli_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
)

// The remote commands that save files, and the rest an admin reads or
// does besides the lists, run as a process against a real server, on
// SQLite and files, and on PostgreSQL and S3 (where a download is a
// redirect to the storage).
func TestRemoteFilesAndMore(t *testing.T) {
	t.Parallel()
	onBothBackends(t, walkRemoteFiles)
}

func walkRemoteFiles(t *testing.T, w *remoteWorld) {
	ctx := context.Background()
	dir := t.TempDir()
	reader := w.makeToken(t, "reader", []string{betaport.ScopeRead}, nil)

	// The current bundle's zip, as signed: its bytes are the ones whose
	// SHA-256 Betaport recorded, and its manifest is 1.1.0's.
	current := filepath.Join(dir, "current.zip")
	saved := w.ok(t, "bundle", "download", "--out", current)
	b2, err := w.m.Store.FindBundle(ctx, w.ext.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	zipBytes, _ := os.ReadFile(current)
	if sum := sha256.Sum256(zipBytes); len(saved) != 1 || hex.EncodeToString(sum[:]) != b2.SHA256 ||
		field(saved[0], "sha256") != b2.SHA256 || field(saved[0], "number") != "2" || field(saved[0], "version") != "1.1.0" ||
		field(saved[0], "file") != current || field(saved[0], "size") != fmt.Sprint(len(zipBytes)) {
		t.Fatalf("bundle download printed %v; the file has %d bytes; want bundle 2 (1.1.0), SHA-256 %s", saved, len(zipBytes), b2.SHA256)
	}
	if v := manifestVersion(t, zipBytes); v != "1.1.0" {
		t.Fatalf("the downloaded zip's manifest says %q, want 1.1.0", v)
	}
	first := filepath.Join(dir, "first.zip")
	if saved := w.ok(t, "bundle", "download", "--bundle", "1", "--out", first); field(saved[0], "version") != "1.0.0" {
		t.Fatalf("bundle download --bundle 1 printed %v", saved)
	}
	if b, _ := os.ReadFile(first); manifestVersion(t, b) != "1.0.0" {
		t.Fatalf("bundle 1's zip is not 1.0.0's")
	}
	crx := filepath.Join(dir, "current.crx")
	code, out, errOut := w.betaport(t, reader, "bundle", "download", "--crx", "--out", crx)
	if b, _ := os.ReadFile(crx); code != 0 || !bytes.HasPrefix(b, []byte("Cr24")) {
		t.Fatalf("bundle download --crx: exit %d, %s %s; the file starts %q, want a CRX (Cr24)", code, out, errOut, b[:min(len(b), 8)])
	}
	// To stdout: the bytes alone there, the summary on stderr.
	code, out, errOut = w.betaport(t, reader, "bundle", "download", "--out", "-")
	if code != 0 || out != string(zipBytes) || !strings.Contains(errOut, b2.SHA256) {
		t.Fatalf("bundle download --out -: exit %d, %d bytes on stdout (want the zip's %d), stderr %q", code, len(out), len(zipBytes), errOut)
	}
	// A refused download leaves the file that was there, and no other.
	kept := filepath.Join(dir, "kept.zip")
	os.WriteFile(kept, []byte("yesterday's"), 0o644)
	code, _, errOut = w.betaport(t, reader, "bundle", "download", "--bundle", "99", "--out", kept)
	if b, _ := os.ReadFile(kept); code != cli.ExitInvalid || string(b) != "yesterday's" || !strings.Contains(errOut, "99") {
		t.Fatalf("a bundle that does not exist: exit %d, %q; the file holds %q; want %d and the file as it was", code, errOut, b, cli.ExitInvalid)
	}
	if code, _, errOut := w.betaport(t, reader, "bundle", "download"); code != cli.ExitUsage || !strings.Contains(errOut, "--out") {
		t.Fatalf("no --out: exit %d, %q", code, errOut)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 {
		t.Fatalf("the folder holds %v: want the four files saved, no leftovers", entries)
	}

	// Installs: every tester counted once.
	if inst := w.ok(t, "installs"); field(inst[0], "testers") != "0" || field(inst[0], "notInstalled") != "0" {
		t.Fatalf("installs = %v", inst)
	}

	// The update URL, a policy file that carries it, and a new one.
	shown := w.ok(t, "update-url", "show")
	oldURL := field(shown[0], "updateUrl")
	if !strings.HasPrefix(oldURL, w.m.URL()) || field(shown[0], "chromeId") == "" {
		t.Fatalf("update-url show = %v", shown)
	}
	policyFile := filepath.Join(dir, "policy.json")
	w.ok(t, "policy", "--system", "linux", "--out", policyFile)
	if b, _ := os.ReadFile(policyFile); !bytes.Contains(b, []byte(oldURL)) || !bytes.Contains(b, []byte(field(shown[0], "chromeId"))) {
		t.Fatalf("the linux policy file holds %s: want the Chrome ID and %s", b, oldURL)
	}
	if code, _, errOut := w.betaport(t, reader, "policy", "--system", "beos", "--out", "-"); code != cli.ExitUsage || !strings.Contains(errOut, "linux, macos or windows") {
		t.Fatalf("policy --system beos: exit %d, %q", code, errOut)
	}
	if code, _, errOut := w.betaport(t, reader, "update-url", "rotate"); code != cli.ExitAuth || !strings.Contains(errOut, "settings") {
		t.Fatalf("update-url rotate with a read token: exit %d, %q; want %d naming the scope", code, errOut, cli.ExitAuth)
	}
	if again := w.ok(t, "update-url", "show"); field(again[0], "updateUrl") != oldURL {
		t.Fatalf("a refused rotate changed the update URL: %v", again)
	}
	rotated := w.ok(t, "update-url", "rotate")
	if newURL := field(rotated[0], "updateUrl"); newURL == oldURL || !strings.HasPrefix(newURL, w.m.URL()) {
		t.Fatalf("update-url rotate printed %v (it was %s)", rotated, oldURL)
	}
	if resp, err := http.Get(oldURL + "?x=id%3D" + field(shown[0], "chromeId") + "%26v%3D1.0.0%26uc"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the old update URL after rotate: %v, %v; want 404", resp, err)
	}

	// A webhook's deliveries: the test event is listed.
	receiver := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer receiver.Close()
	hookID := field(w.ok(t, "webhook", "create", "--url", receiver.URL+"/hook")[0], "id")
	w.ok(t, "webhook", "test", "--webhook", hookID)
	if d := w.ok(t, "webhook", "deliveries", "--webhook", hookID); len(d) != 1 || field(d[0], "type") != "ping" {
		t.Fatalf("webhook deliveries = %v, want the ping", d)
	}
	if code, _, errOut := w.betaport(t, reader, "webhook", "deliveries", "--webhook", "9999"); code != cli.ExitInvalid {
		t.Fatalf("deliveries of no webhook: exit %d, %q", code, errOut)
	}

	// A report with a screenshot: saved as kept, then deleted with it.
	shot := pngOf(t, 40, 30)
	tester := &betaport.Tester{ExtensionID: w.ext.ID, Email: "reporter@example.com", Status: betaport.TesterActive}
	if err := w.m.Store.CreateTesters(ctx, []*betaport.Tester{tester}); err != nil {
		t.Fatal(err)
	}
	found, err := w.m.Store.FindTesters(ctx, betaport.TesterFilter{ExtensionID: w.ext.ID, Query: "reporter@", Limit: 1})
	if err != nil || len(found) != 1 {
		t.Fatalf("the reporter: %v, %v", found, err)
	}
	key := betaport.FeedbackKey(w.ext.ID, "clitest", 1, "image/png")
	if err := w.m.Blobs.WriteAll(ctx, key, shot, &blob.WriterOptions{ContentType: "image/png"}); err != nil {
		t.Fatal(err)
	}
	f := &betaport.Feedback{ExtensionID: w.ext.ID, TesterID: found[0].ID, BundleNumber: 2, Version: "1.1.0", Text: "The popup is blank.",
		Source: betaport.FeedbackFromBuildsPage, Screenshots: []betaport.Screenshot{{Number: 1, Type: "image/png", Width: 40, Height: 30, Size: int64(len(shot)), BlobKey: key}}}
	if err := w.m.Store.CreateFeedback(ctx, f); err != nil {
		t.Fatal(err)
	}
	report := fmt.Sprint(f.ID)
	shotFile := filepath.Join(dir, "shot.png")
	code, out, errOut = w.betaport(t, reader, "feedback", "screenshot", "--report", report, "--out", shotFile)
	if b, _ := os.ReadFile(shotFile); code != 0 || !bytes.Equal(b, shot) {
		t.Fatalf("feedback screenshot: exit %d, %s %s; the file has %d bytes, want the %d kept", code, out, errOut, len(b), len(shot))
	}
	if code, _, errOut := w.betaport(t, reader, "feedback", "screenshot", "--report", report, "--number", "2", "--out", "-"); code != cli.ExitInvalid {
		t.Fatalf("a screenshot the report does not have: exit %d, %q", code, errOut)
	}
	if code, _, errOut := w.betaport(t, reader, "feedback", "delete", "--report", report); code != cli.ExitAuth || !strings.Contains(errOut, "feedback") {
		t.Fatalf("feedback delete with a read token: exit %d, %q", code, errOut)
	}
	if code, _, errOut := w.betaport(t, w.token, "feedback", "delete", "--report", report); code != 0 || !strings.Contains(errOut, "deleted") {
		t.Fatalf("feedback delete: exit %d, %q", code, errOut)
	}
	if _, err := w.m.Store.FindFeedback(ctx, w.ext.ID, f.ID); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatalf("the deleted report is still found: %v", err)
	}
	if ok, err := w.m.Blobs.Exists(ctx, key); err != nil || ok {
		t.Fatalf("the deleted report's screenshot is still stored (%v, %v)", ok, err)
	}
	if code, _, errOut := w.betaport(t, w.token, "feedback", "delete", "--report", report); code != cli.ExitInvalid {
		t.Fatalf("deleting it again: exit %d, %q", code, errOut)
	}
}

// manifestVersion reads the version of a zip's manifest.json.
func manifestVersion(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	rc, err := zr.Open("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var m struct{ Version string }
	if err := json.NewDecoder(rc).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m.Version
}

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
