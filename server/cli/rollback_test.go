package cli_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/crx"
	"github.com/betaport/betaport/server/storetest"
)

// betaport bundle rollback, while the service runs: the service then
// serves the rollback, and builds its CRX with its own update URL.
func TestBundleRollbackCommand(t *testing.T) {
	m := cli.NewMain()
	m.Config.Addr, m.Config.Data = "127.0.0.1:0", t.TempDir()
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ext := storetest.MustExtension(t, m.Store, storetest.MustTeam(t, m.Store, betaport.PlanProfessional), "Tab Tamer")
	id := strconv.FormatInt(ext.ID, 10)
	dir := t.TempDir()
	key := dir + "/key.json"
	if code, _, errOut := run(t, "key", "create", "--label", "CI", "--data", m.Config.Data, "--extension", id, "--out", key); code != 0 {
		t.Fatal(errOut)
	}
	for _, v := range []string{"1.0.0", "2.0.0"} {
		zip := writeZip(t, dir, v+".zip", map[string]string{"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "` + v + `"}`, "bg.js": v})
		if code, _, errOut := run(t, "submit", "--quiet", "--base-url", m.URL(), "--key", key, zip); code != 0 {
			t.Fatal(errOut)
		}
	}

	code, out, errOut := run(t, "bundle", "rollback", "--data", m.Config.Data, "--extension", id, "--to", "1")
	var b betaport.Bundle
	if code != 0 || json.Unmarshal([]byte(out), &b) != nil || b.Number != 3 || b.RollbackOf != 1 || b.VersionName != "1.0.0" || !strings.Contains(errOut, "#3") {
		t.Fatalf("bundle rollback: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = run(t, "bundle", "rollback", "--data", m.Config.Data, "--extension", id, "--to", "1")
	if code != 0 || !strings.Contains(errOut, "nothing new") {
		t.Fatalf("the same rollback again: exit %d, %q %q", code, out, errOut)
	}
	for _, args := range [][]string{
		{"--to", "3"}, // current
		{"--to", "9"}, // missing
	} {
		code, out, errOut := run(t, append([]string{"bundle", "rollback", "--data", m.Config.Data, "--extension", id}, args...)...)
		if code != cli.ExitFailure || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("bundle rollback %v: exit %d, stdout %q, stderr %q; want exit 1 and one line", args, code, out, errOut)
		}
	}
	if code, _, errOut := run(t, "bundle", "rollback", "--data", m.Config.Data, "--extension", id); code != cli.ExitUsage || !strings.Contains(errOut, "--to") {
		t.Errorf("without --to: exit %d, %q", code, errOut)
	}

	// The service serves the rollback as current, its CRX under its own URL.
	admin, err := m.Store.FindExtension(context.Background(), ext.ID)
	if err != nil || admin.CurrentBundle != 3 {
		t.Fatalf("current bundle %d after the command, %v", admin.CurrentBundle, err)
	}
	u, err := m.Publish.Updates(context.Background(), admin)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(u.UpdateURL + "?x=" + url.QueryEscape("id="+u.ChromeID+"&v=2.0.0&uc"))
	if err != nil {
		t.Fatal(err)
	}
	feed, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(feed), "version='"+b.Version+"'") {
		t.Fatalf("the update feed after the rollback: %s", feed)
	}
	resp, err = http.Get(u.UpdateURL + "/crx/3")
	if err != nil {
		t.Fatal(err)
	}
	crx, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// The manifest inside names the service's update URL (stored, not
	// compressed, or deflated: look for it either way through the CRX's zip).
	if resp.StatusCode != 200 || len(crx) < 100 {
		t.Fatalf("the rollback's CRX: %d, %d bytes", resp.StatusCode, len(crx))
	}
	if !crxManifestHas(t, crx, u.UpdateURL) {
		t.Fatalf("the rollback's CRX does not name the service's update URL %s", u.UpdateURL)
	}
}

// crxManifestHas reports whether a CRX3's manifest.json contains text.
func crxManifestHas(t *testing.T, data []byte, text string) bool {
	t.Helper()
	f, err := crx.Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("not a CRX3: %v", err)
	}
	zr, err := zip.NewReader(f.Zip, f.ZipSize)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := zr.Open("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	m, _ := io.ReadAll(rc)
	return strings.Contains(string(m), text)
}
