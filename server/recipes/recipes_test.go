package recipes_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// The curl-only GitHub Actions recipe works as written: its "Submit to
// Betaport" step, run by bash with the environment the workflow gives it,
// publishes against a real service, and a wrong key fails the step.
func TestGitHubActionsCurlRecipePublishes(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the recipe runs %s, as GitHub's runners have it: install it (sudo apt-get install -y %s)", tool, tool)
		}
	}
	script := stepScript(t, "github-actions-curl.yml", "Submit to Betaport")

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

// The README's GitHub Actions recipe works as written: its "Install
// betaport" step downloads the command from a live service that offers a
// real build of it, checks its SHA-256 and puts it on the PATH, and its
// "Submit to Betaport" step lints and publishes with the key in
// BETAPORT_KEY; a wrong key fails the step with exit 3.
func TestGitHubActionsRecipePublishes(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the recipe runs %s, as GitHub's runners have it: install it", tool)
		}
	}
	install := stepScript(t, "github-actions.yml", "Install betaport")
	submit := stepScript(t, "github-actions.yml", "Submit to Betaport")

	// The real command, built as make build builds it.
	bin := filepath.Join(t.TempDir(), "betaport")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./server/cmd/betaport")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building betaport: %v\n%s", err, out)
	}
	m := cli.NewMain()
	m.Config.Addr, m.Config.Data, m.Config.CLIBinary = "127.0.0.1:0", t.TempDir(), bin
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ext := storetest.MustExtension(t, m.Store, storetest.MustTeam(t, m.Store, betaport.PlanProfessional), "Tab Tamer")
	secret := credential.NewToken()
	storetest.MustKey(t, m.Store, ext.ID, "GitHub Actions", secret)
	keyFile, _ := json.MarshalIndent(api.KeyFile{Service: api.ServiceKey{ExtensionID: strconv.FormatInt(ext.ID, 10), APIKey: secret}}, "", "  ")

	// One runner: a temp folder, a work folder, and GITHUB_PATH, read
	// between steps as the runner does.
	runner := func(key string) (string, error) {
		temp, work := t.TempDir(), t.TempDir()
		writeZip(t, filepath.Join(work, "extension.zip"))
		ghPath := filepath.Join(t.TempDir(), "github_path")
		os.WriteFile(ghPath, nil, 0o600)
		env := append(os.Environ(), "RUNNER_TEMP="+temp, "GITHUB_PATH="+ghPath, "BETAPORT_BASE_URL="+m.URL(), "BETAPORT_KEY_FILE=")
		cmd := exec.Command("bash", "-c", install)
		cmd.Dir, cmd.Env = work, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return string(out), fmt.Errorf("install step: %w", err)
		}
		added, _ := os.ReadFile(ghPath)
		path := strings.TrimSpace(string(added)) + string(os.PathListSeparator) + os.Getenv("PATH")
		cmd = exec.Command("bash", "-c", submit)
		cmd.Dir, cmd.Env = work, append(env, "PATH="+path, "BETAPORT_KEY="+key)
		out, err := cmd.CombinedOutput()
		if b, rerr := os.ReadFile(filepath.Join(work, "bundle.json")); rerr == nil {
			out = append(out, b...)
		}
		if got, _ := os.ReadFile(filepath.Join(temp, "betaport")); !bytes.Equal(got, mustRead(t, bin)) {
			t.Errorf("the installed command (%d bytes) is not the service's (%d bytes)", len(got), len(mustRead(t, bin)))
		}
		return string(out), err
	}
	out, err := runner(string(keyFile))
	if err != nil {
		t.Fatalf("the steps failed: %v\n%s", err, out)
	}
	if !strings.Contains(out, `"number": 1`) || !strings.Contains(out, `"version": "1.2.0"`) || !strings.Contains(out, "passes every check") {
		t.Fatalf("the steps printed:\n%s", out)
	}
	if e, _ := m.Store.FindExtension(context.Background(), ext.ID); e.CurrentBundle != 1 {
		t.Fatalf("after the steps testers get bundle %d", e.CurrentBundle)
	}
	bad := strings.Replace(string(keyFile), secret, "wrong", 1)
	out, err = runner(bad)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != cli.ExitAuth {
		t.Fatalf("a wrong key: %v, want exit %d\n%s", err, cli.ExitAuth, out)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
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
