package cli_test

import (
	"archive/zip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/storetest"
)

func writeZip(t *testing.T, dir, name string, files map[string]string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for n, body := range files {
		w, _ := zw.Create(n)
		io.WriteString(w, body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

// betaport submit against the real server: published, rejected, refused,
// unreachable — each with its exit code.
func TestSubmitCommandAgainstServer(t *testing.T) {
	m := cli.NewMain()
	m.Config.Addr, m.Config.Data = "127.0.0.1:0", t.TempDir()
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	pro := storetest.MustExtension(t, m.Store, storetest.MustTeam(t, m.Store, betaport.PlanProfessional), "Tab Tamer")
	starter := storetest.MustExtension(t, m.Store, storetest.MustTeam(t, m.Store, betaport.PlanStarter), "Hobby")

	dir := t.TempDir()
	keyFor := func(id int64, name string) string {
		path := filepath.Join(dir, name)
		code, _, errOut := run(t, "key", "create", "--label", "CI", "--data", m.Config.Data, "--extension", strconv.FormatInt(id, 10), "--out", path)
		if code != 0 {
			t.Fatalf("key create: exit %d: %s", code, errOut)
		}
		return path
	}
	proKey, starterKey := keyFor(pro.ID, "pro.json"), keyFor(starter.ID, "starter.json")
	good := writeZip(t, dir, "good.zip", map[string]string{"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "1.4.0"}`, "bg.js": "1"})
	bad := writeZip(t, dir, "bad.zip", map[string]string{"../x.js": "1", "a.js": "2"})

	code, out, errOut := run(t, "submit", "--quiet", "--base-url", m.URL(), "--key", proKey, good)
	var b betaport.Bundle
	if code != 0 || json.Unmarshal([]byte(out), &b) != nil || b.Number != 1 || b.Version != "1.4.0" {
		t.Fatalf("submit: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if ext, _ := m.Store.FindExtension(context.Background(), pro.ID); ext.CurrentBundle != 1 {
		t.Fatalf("after submit testers get bundle %d", ext.CurrentBundle)
	}

	code, _, errOut = run(t, "submit", "--quiet", "--base-url", m.URL(), "--key", proKey, bad)
	if code != cli.ExitInvalid || !strings.Contains(errOut, "../x.js") || !strings.Contains(errOut, "manifest") {
		t.Fatalf("invalid zip: exit %d, stderr %q; want %d and every problem", code, errOut, cli.ExitInvalid)
	}
	// The last line says what to do in the command's terms, not the API's.
	if lines := strings.Split(strings.TrimSpace(errOut), "\n"); !strings.Contains(lines[len(lines)-1], "problem(s) above, then run the command again") ||
		strings.Contains(errOut, "listed in problems") {
		t.Errorf("invalid zip: stderr ends %q", lines[len(lines)-1])
	}
	if code, _, errOut = run(t, "submit", "--quiet", "--base-url", m.URL(), "--key", starterKey, good); code != cli.ExitAuth || !strings.Contains(errOut, "Professional") {
		t.Fatalf("starter plan: exit %d, %q", code, errOut)
	}
	// A second key leaves the first working; a revoked key is refused.
	keyFor(pro.ID, "new.json")
	code, out, errOut = run(t, "key", "list", "--data", m.Config.Data, "--extension", strconv.FormatInt(pro.ID, 10))
	var keys []betaport.Key
	if code != 0 || json.Unmarshal([]byte(out), &keys) != nil || len(keys) != 2 || keys[1].LastUsedAt == nil || keys[0].LastUsedAt != nil {
		t.Fatalf("key list: exit %d, %s %s; want two keys, the first one used", code, out, errOut)
	}
	if code, _, errOut = run(t, "key", "revoke", "--data", m.Config.Data, "--extension", strconv.FormatInt(pro.ID, 10), "--key", strconv.FormatInt(keys[1].ID, 10)); code != 0 {
		t.Fatalf("key revoke: exit %d, %s", code, errOut)
	}
	if code, _, errOut = run(t, "submit", "--quiet", "--base-url", m.URL(), "--key", proKey, good); code != cli.ExitAuth {
		t.Fatalf("revoked key: exit %d, %q", code, errOut)
	}
	// The same version again is served higher, and the command says so.
	code, out, errOut = run(t, "submit", "--base-url", m.URL(), "--key", filepath.Join(dir, "new.json"), good)
	if code != 0 || !strings.Contains(errOut, "Published bundle #2 (version 1.4.0.2, uploaded as 1.4.0)") {
		t.Fatalf("same version again: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Release notes from a file reach the bundle testers get.
	notesPath := filepath.Join(dir, "NOTES.md")
	notes := "Faster popup.\n\n- [changelog](https://example.com/changes)\n"
	if err := os.WriteFile(notesPath, []byte(notes), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, "submit", "--quiet", "--base-url", m.URL(), "--key", filepath.Join(dir, "new.json"), "--notes-file", notesPath, good)
	if code != 0 || json.Unmarshal([]byte(out), &b) != nil || b.ReleaseNotes != notes {
		t.Fatalf("--notes-file: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if cur, err := m.Store.FindBundle(context.Background(), pro.ID, b.Number); err != nil || cur.ReleaseNotes != notes {
		t.Fatalf("bundle #%d keeps notes %q (%v)", b.Number, cur.ReleaseNotes, err)
	}
	// --channel and --rollout: a staged rollout on a channel; an unknown
	// channel is refused at call 1, and a bad name or share before it.
	if _, err := m.Store.CreateChannel(context.Background(), pro.ID, "nightly", "test"); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, "submit", "--quiet", "--base-url", m.URL(), "--key", filepath.Join(dir, "new.json"), "--channel", "nightly", "--rollout", "20", good)
	if code != 0 || json.Unmarshal([]byte(out), &b) != nil {
		t.Fatalf("--channel nightly --rollout 20: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if c, err := m.Store.FindChannel(context.Background(), pro.ID, "nightly"); err != nil || c.Rollout == nil || c.Rollout.Bundle != b.Number || c.Rollout.Percent != 20 {
		t.Fatalf("nightly after the submit: %+v (%v); want a 20 %% rollout of #%d", c, err, b.Number)
	}
	for _, args := range [][]string{{"--channel", "weekly"}, {"--channel", "Nightly"}, {"--rollout", "101"}} {
		code, _, errOut := run(t, append([]string{"submit", "--quiet", "--base-url", m.URL(), "--key", filepath.Join(dir, "new.json")}, append(args, good)...)...)
		if code == 0 || !strings.Contains(errOut, strings.TrimPrefix(args[0], "--")) {
			t.Errorf("submit %v: exit %d, stderr %q; want it refused, naming the flag's subject", args, code, errOut)
		}
	}
	if last, _ := m.Store.LastBundleNumber(context.Background(), pro.ID); last != b.Number {
		t.Fatalf("refused submits published up to #%d", last)
	}
	if code, _, errOut = run(t, "submit", "--quiet", "--base-url", m.URL(), "--key", proKey, filepath.Join(dir, "missing.zip")); code != cli.ExitUsage {
		t.Fatalf("missing file: exit %d, %q", code, errOut)
	}
	url := m.URL()
	m.Close()
	if code, _, errOut = run(t, "submit", "--quiet", "--retries", "0", "--base-url", url, "--key", proKey, good); code != cli.ExitServer {
		t.Fatalf("server down: exit %d, %q", code, errOut)
	}
}
