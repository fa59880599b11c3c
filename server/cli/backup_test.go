package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/storetest"
)

// A backup taken while uploads go on, restored into a new data dir, serves
// the same bundles, byte for byte, and the same update feed (same Chrome
// ID, same update URL, the same signed CRX): the database copy is one
// snapshot, and every blob it names is in the backup.
func TestBackupDuringUploadsRestores(t *testing.T) {
	ctx := context.Background()
	start := func(data string) *cli.Main { return startServing(t, data) }
	dataA := t.TempDir()
	a := start(dataA)
	team := storetest.MustTeam(t, a.Store, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, a.Store, team, "Tab Tamer")
	if err := a.Store.CreateUser(ctx, &betaport.User{TeamID: team.ID, Email: "ada@example.com"}, credential.HashPassword("a long password")); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	keyPath := filepath.Join(work, "key.json")
	if code, _, errOut := run(t, "key", "create", "--label", "CI", "--data", dataA, "--extension", strconv.FormatInt(ext.ID, 10), "--out", keyPath); code != 0 {
		t.Fatalf("key create: %s", errOut)
	}
	submit := func(version string) {
		zip := writeZip(t, work, version+".zip", map[string]string{
			"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "` + version + `"}`,
			"bg.js":         strings.Repeat("// "+version+"\n", 2000),
		})
		if code, _, errOut := run(t, "submit", "--quiet", "--base-url", a.URL(), "--key", keyPath, zip); code != 0 {
			t.Errorf("submit %s: %s", version, errOut)
		}
	}
	for i := 1; i <= 3; i++ {
		submit(fmt.Sprintf("1.0.%d", i))
	}

	// Uploads go on while the backup is taken.
	backupFile := filepath.Join(t.TempDir(), "betaport.backup")
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 4; i <= 8; i++ {
			submit(fmt.Sprintf("1.0.%d", i))
		}
	}()
	if code, _, errOut := run(t, "backup", "--data", dataA, "--out", backupFile); code != 0 {
		t.Fatalf("backup: exit %d: %s", code, errOut)
	}
	wg.Wait()
	if fi, err := os.Stat(backupFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the backup file: %v %v; it holds secrets, so only its owner may read it", fi, err)
	}

	dataB := filepath.Join(t.TempDir(), "restored")
	if code, _, errOut := run(t, "restore", "--from", backupFile, "--data", dataB); code != 0 {
		t.Fatalf("restore: exit %d: %s", code, errOut)
	}
	// Restoring over data is refused.
	if code, _, errOut := run(t, "restore", "--from", backupFile, "--data", dataB); code == 0 || !strings.Contains(errOut, "not empty") {
		t.Fatalf("a restore over data: exit %d, %q", code, errOut)
	}
	b := start(dataB)

	restored, err := b.Store.FindBundles(ctx, ext.ID, 1<<62, 100)
	if err != nil || len(restored) < 3 {
		t.Fatalf("the restored service has %d bundles (%v), want at least the 3 of before the backup", len(restored), err)
	}
	t.Logf("the backup holds %d of 8 bundles", len(restored))
	clientA, clientB := signedIn(t, a.URL()), signedIn(t, b.URL())
	for _, bd := range restored {
		for _, path := range []string{api.BundleDownloadPath(ext.ID, bd.Number), api.BundleCRXPath(ext.ID, bd.Number)} {
			if got, want := get(t, clientB, b.URL()+path), get(t, clientA, a.URL()+path); !bytes.Equal(got, want) || len(got) == 0 {
				t.Fatalf("%s: the restored service serves %d bytes, the original %d, not the same", path, len(got), len(want))
			}
		}
	}
	// The same update feed: the same Chrome ID and update URL (token), and
	// the feed offers the restored current bundle's CRX there.
	var upA, upB api.Updates
	json.Unmarshal(get(t, clientA, a.URL()+api.UpdatesPath(ext.ID)), &upA)
	json.Unmarshal(get(t, clientB, b.URL()+api.UpdatesPath(ext.ID)), &upB)
	if upA.ChromeID == "" || upA.ChromeID != upB.ChromeID || strings.TrimPrefix(upA.UpdateURL, a.URL()) != strings.TrimPrefix(upB.UpdateURL, b.URL()) {
		t.Fatalf("updates: original %+v, restored %+v", upA, upB)
	}
	current, _ := b.Store.FindExtension(ctx, ext.ID)
	feed := string(get(t, http.DefaultClient, upB.UpdateURL+"?x="+urlQuery("id="+upB.ChromeID+"&v=0.0.1")))
	if !strings.Contains(feed, fmt.Sprintf("/crx/%d'", current.CurrentBundle)) {
		t.Fatalf("the restored feed:\n%s\nwant bundle %d's CRX", feed, current.CurrentBundle)
	}
}

func signedIn(t *testing.T, base string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	body, _ := json.Marshal(api.SignIn{Email: "ada@example.com", Password: "a long password"})
	resp, err := c.Post(base+api.PathSession, "application/json", bytes.NewReader(body))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("sign in at %s: %v %v", base, resp, err)
	}
	resp.Body.Close()
	return c
}

func get(t *testing.T, c *http.Client, url string) []byte {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s = %d %s", url, resp.StatusCode, b)
	}
	return b
}

func urlQuery(s string) string { return strings.NewReplacer("=", "%3D", "&", "%26").Replace(s) }

// Issue 29: an upload whose zip had arrived but was not yet signed when
// the backup was taken was restored without its zip, and its sign then
// answered 500. Restore ends such uploads: the sign answers 410 (request
// a new upload URL), and the pipeline's next submit publishes.
func TestRestoreEndsUploadsUnderWay(t *testing.T) {
	dataA := t.TempDir()
	a := startServing(t, dataA)
	ext := storetest.MustExtension(t, a.Store, storetest.MustTeam(t, a.Store, betaport.PlanProfessional), "Tab Tamer")
	work := t.TempDir()
	keyPath := filepath.Join(work, "key.json")
	if code, _, errOut := run(t, "key", "create", "--label", "CI", "--data", dataA, "--extension", strconv.FormatInt(ext.ID, 10), "--out", keyPath); code != 0 {
		t.Fatalf("key create: %s", errOut)
	}
	var keyFile struct {
		Service json.RawMessage `json:"service"`
	}
	raw, _ := os.ReadFile(keyPath)
	if err := json.Unmarshal(raw, &keyFile); err != nil || len(keyFile.Service) == 0 {
		t.Fatalf("key.json: %v %s", err, raw)
	}
	post := func(base, path string) (int, []byte) {
		resp, err := http.Post(base+path, "application/json", bytes.NewReader(keyFile.Service))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	// Calls 1 and 2: the zip has arrived; the backup comes before call 3.
	code, body := post(a.URL(), api.PathSubmitUpload)
	var u api.UploadURL
	if code != 200 || json.Unmarshal(body, &u) != nil {
		t.Fatalf("call 1 = %d %s", code, body)
	}
	zip, _ := os.ReadFile(writeZip(t, work, "1.0.0.zip", map[string]string{"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "1.0.0"}`}))
	req, _ := http.NewRequest("PUT", u.URL, bytes.NewReader(zip))
	req.Header.Set("Content-Type", api.ZipContentType)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("call 2: %v %v", resp, err)
	}
	backupFile := filepath.Join(t.TempDir(), "betaport.backup")
	if code, _, errOut := run(t, "backup", "--data", dataA, "--out", backupFile); code != 0 {
		t.Fatalf("backup: exit %d: %s", code, errOut)
	}
	dataB := filepath.Join(t.TempDir(), "restored")
	code, _, errOut := run(t, "restore", "--from", backupFile, "--data", dataB)
	if code != 0 || !strings.Contains(errOut, "1 upload(s) under way at the backup were ended") {
		t.Fatalf("restore: exit %d: %s", code, errOut)
	}
	b := startServing(t, dataB)

	code, body = post(b.URL(), api.PathSubmitSign)
	if code != http.StatusGone || !strings.Contains(string(body), "/problems/upload-expired") {
		t.Fatalf("sign on the restored service = %d %s, want 410 upload-expired", code, body)
	}
	if code, _, errOut := run(t, "submit", "--quiet", "--base-url", b.URL(), "--key", keyPath, filepath.Join(work, "1.0.0.zip")); code != 0 {
		t.Fatalf("submit again on the restored service: exit %d: %s", code, errOut)
	}
}

// startServing runs the service on the data dir data, on a free port, until
// the test ends.
func startServing(t *testing.T, data string) *cli.Main {
	t.Helper()
	m := cli.NewMain()
	m.Config.Addr, m.Config.Data = "127.0.0.1:0", data
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// A backup that fails half-way (here: a blob the database names is gone
// from the data dir) leaves no file that looks like a backup, and keeps
// the backup that was at its path before.
func TestFailedBackupLeavesNoBackup(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	m := startServing(t, data)
	team := storetest.MustTeam(t, m.Store, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, m.Store, team, "Tab Tamer")
	work := t.TempDir()
	keyPath := filepath.Join(work, "key.json")
	if code, _, errOut := run(t, "key", "create", "--label", "CI", "--data", data, "--extension", strconv.FormatInt(ext.ID, 10), "--out", keyPath); code != 0 {
		t.Fatalf("key create: %s", errOut)
	}
	zip := writeZip(t, work, "1.zip", map[string]string{"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "1.0"}`})
	if code, _, errOut := run(t, "submit", "--quiet", "--base-url", m.URL(), "--key", keyPath, zip); code != 0 {
		t.Fatalf("submit: %s", errOut)
	}
	b, err := m.Store.FindBundle(ctx, ext.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Blobs.Delete(ctx, b.BlobKey); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "betaport.backup")
	if err := os.WriteFile(out, []byte("last week's backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := run(t, "backup", "--data", data, "--out", out); code == 0 {
		t.Fatal("a backup missing a blob succeeded")
	}
	if got, err := os.ReadFile(out); err != nil || string(got) != "last week's backup" {
		t.Errorf("the failed backup changed the backup at its path: %q, %v", got, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the failed backup left files beside it: %v", entries)
	}
}

// A backup that stands removes what backups killed before it left beside
// it (partial files as large as a backup), and keeps a partial file that a
// backup to the same name is still writing.
func TestBackupRemovesWhatKilledBackupsLeft(t *testing.T) {
	data := t.TempDir()
	startServing(t, data)
	dir := t.TempDir()
	out := filepath.Join(dir, "betaport.backup")
	killed := out + ".partial-1234"
	writing := out + ".partial-5678"
	other := filepath.Join(dir, "notes.partial-1")
	for _, p := range []string{killed, writing, other} {
		if err := os.WriteFile(p, []byte("half a backup"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hourAgo := time.Now().Add(-time.Hour)
	for _, p := range []string{killed, other} {
		if err := os.Chtimes(p, hourAgo, hourAgo); err != nil {
			t.Fatal(err)
		}
	}
	// Still being written: touched after this backup begins.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(writing, later, later); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, "backup", "--data", data, "--out", out); code != 0 {
		t.Fatalf("backup: %s", errOut)
	}
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"betaport.backup", "betaport.backup.partial-5678", "notes.partial-1"}; !slices.Equal(names, want) {
		t.Errorf("beside the backup: %v, want %v (the killed backup's partial file removed, the others kept)", names, want)
	}
}
