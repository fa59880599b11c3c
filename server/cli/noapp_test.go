package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A binary built without make (go build, go install) embeds no browser app:
// serve refuses to start, saying how to build the app, unless asked for the
// API alone with --no-ui. Built here from the module's sources as they are,
// with web/app.wasm and its compressed copies (make's outputs) absent, as
// in a checkout where make never ran: `go build -overlay` hides those files
// from the build, so web embeds no app.wasm. The build runs in the module
// itself, not in a copy of it in a new temporary directory every run, so
// the go command's cache serves every package the hidden files do not
// change (compiled already by go vet or an earlier build) and, from the
// second run on, those they do change: it links, instead of compiling the
// whole server again.
func TestServeRefusesWithoutTheApp(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	built, err := filepath.Glob(filepath.Join(root, "web", "app.wasm*"))
	if err != nil {
		t.Fatal(err)
	}
	hidden := map[string]string{}
	for _, f := range built {
		hidden[f] = "" // an empty replacement: the file does not exist
	}
	overlay, err := json.Marshal(map[string]any{"Replace": hidden})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	// The overlay hides the app: web embeds none of those files.
	list := exec.Command("go", "list", "-overlay", overlayFile, "-f", "{{range .EmbedFiles}}{{.}}\n{{end}}", "./web")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list ./web: %v", err)
	}
	for _, f := range strings.Fields(string(out)) {
		if strings.HasPrefix(f, "app.wasm") {
			t.Fatalf("web still embeds %s with the overlay %s", f, overlay)
		}
	}
	bin := filepath.Join(t.TempDir(), "betaport")
	build := exec.Command("go", "build", "-overlay", overlayFile, "-o", bin, "./server/cmd/betaport")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	serve := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir())
	serve.Stderr = &stderr
	err = serve.Run()
	if code := serve.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), "make build") || !strings.Contains(stderr.String(), "--no-ui") {
		t.Fatalf("serve without the app: %v, exit %d, %q; want a refusal that says how to build the app", err, code, stderr.String())
	}

	// --no-ui starts it.
	noUI := exec.CommandContext(ctx, bin, "serve", "--no-ui", "--addr", "127.0.0.1:0", "--data", t.TempDir())
	pipe, err := noUI.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := noUI.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { noUI.Process.Kill(); noUI.Wait() }()
	lines := bufio.NewScanner(pipe)
	for lines.Scan() {
		if strings.Contains(lines.Text(), "running at") {
			return
		}
	}
	t.Fatalf("serve --no-ui ended without starting (%v)", lines.Err())
}
