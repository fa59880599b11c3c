package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A binary built without make (go build, go install) embeds no browser app:
// serve refuses to start, saying how to build the app, unless asked for the
// API alone with --no-ui. Built here from a copy of the module without
// web/app.wasm, as such a binary is.
func TestServeRefusesWithoutTheApp(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	for _, dir := range []string{"app", "server", "web"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if d.IsDir() {
				return os.MkdirAll(filepath.Join(src, rel), 0o755)
			}
			if strings.HasPrefix(rel, filepath.Join("web", "app.wasm")) || strings.HasSuffix(rel, "_test.go") {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(src, rel), b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(src, f), b, 0o644)
	}
	bin := filepath.Join(t.TempDir(), "betaport")
	build := exec.Command("go", "build", "-o", bin, "./server/cmd/betaport")
	build.Dir = src
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
