package recipes_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/storetest"
)

// The GitHub Actions recipe works as written: its "Submit to Betaport"
// step, run by bash with the environment the workflow gives it, publishes
// against a real service, and a wrong key fails the step.
func TestGitHubActionsRecipePublishes(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the recipe runs %s, as GitHub's runners have it: install it (sudo apt-get install -y %s)", tool, tool)
		}
	}
	script := stepScript(t, "github-actions.yml", "Submit to Betaport")

	m := cli.NewMain()
	m.Config.Addr, m.Config.Data = "127.0.0.1:0", t.TempDir()
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ext := storetest.MustExtension(t, m.Store, storetest.MustTeam(t, m.Store, betaport.PlanProfessional), "Tab Tamer")
	secret := credential.NewToken()
	storetest.MustKey(t, m.Store, ext.ID, "GitHub Actions", secret)
	keyFile, _ := json.MarshalIndent(api.KeyFile{Service: api.ServiceKey{ExtensionID: strconv.FormatInt(ext.ID, 10), APIKey: secret}}, "", "  ")

	run := func(key string) (string, error) {
		work := t.TempDir()
		writeZip(t, filepath.Join(work, "extension.zip"))
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "BETAPORT_KEY="+key, "BETAPORT_BASE_URL="+m.URL(), "RUNNER_TEMP="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if b, rerr := os.ReadFile(filepath.Join(work, "bundle.json")); rerr == nil {
			out = append(out, b...)
		}
		return string(out), err
	}
	out, err := run(string(keyFile) + "\n")
	if err != nil {
		t.Fatalf("the step failed: %v\n%s", err, out)
	}
	if !strings.Contains(out, `"number": 1`) || !strings.Contains(out, `"version": "1.2.0"`) {
		t.Fatalf("the step printed:\n%s", out)
	}
	if e, _ := m.Store.FindExtension(context.Background(), ext.ID); e.CurrentBundle != 1 {
		t.Fatalf("after the step testers get bundle %d", e.CurrentBundle)
	}
	// A wrong key fails the step, with the service's problem.
	bad := strings.Replace(string(keyFile), secret, "wrong", 1)
	if out, err := run(bad); err == nil || !strings.Contains(out, "/problems/invalid-key") {
		t.Fatalf("a wrong key: %v\n%s", err, out)
	}
}

// stepScript is the run: block of the workflow step named name.
func stepScript(t *testing.T, file, name string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "- name: "+name {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) != "run: |" {
				continue
			}
			indent := len(lines[j+1]) - len(strings.TrimLeft(lines[j+1], " "))
			var script []string
			for _, s := range lines[j+1:] {
				if strings.TrimSpace(s) != "" && len(s)-len(strings.TrimLeft(s, " ")) < indent {
					break
				}
				script = append(script, strings.TrimPrefix(s, strings.Repeat(" ", indent)))
			}
			return strings.Join(script, "\n")
		}
	}
	t.Fatalf("%s has no step %q with a run block", file, name)
	return ""
}

func writeZip(t *testing.T, path string) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("manifest.json")
	io.WriteString(w, `{"manifest_version": 3, "name": "Tab Tamer", "version": "1.2.0"}`)
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
