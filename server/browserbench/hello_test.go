package browserbench

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// helloService is the go-app hello world (./hello), built for the browser
// and for this machine, and served by its own process on a port of its
// own: go-app's routes are global, so it cannot share Betaport's process.
type helloService struct {
	url      string
	wasmSize int64
}

func startHello(tb testing.TB) *helloService {
	tb.Helper()
	dir := tb.TempDir()
	wasm := filepath.Join(dir, "web", "app.wasm")
	server := filepath.Join(dir, "hello")
	build := func(out string, env ...string) {
		// The flags make uses for web/app.wasm.
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./hello")
		cmd.Env = append(os.Environ(), env...)
		if msg, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("building the go-app hello world (%s): %v\n%s", strings.Join(env, " "), err, msg)
		}
	}
	build(wasm, "GOOS=js", "GOARCH=wasm")
	build(server)
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Fatalf("go env GOROOT: %v", err)
	}
	wasmExec := filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec.js")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, server, "-addr", "127.0.0.1:0", "-dir", dir, "-wasm-exec", wasmExec)
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		cancel()
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cancel(); cmd.Wait() })
	url := make(chan string, 1)
	go func() {
		defer close(url)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				url <- u
			}
		}
	}()
	select {
	case u, ok := <-url:
		if !ok {
			tb.Fatal("the go-app hello world stopped before it served (its error is above)")
		}
		fi, err := os.Stat(wasm)
		if err != nil {
			tb.Fatal(err)
		}
		return &helloService{url: u, wasmSize: fi.Size()}
	case <-time.After(30 * time.Second):
		tb.Fatal("the go-app hello world did not start in 30 s")
	}
	return nil
}

// helloPage is the hello world's one page, measured as the lists are.
func helloPage(base string) listPage {
	return listPage{
		url:     base + "/",
		rows:    "#hello-rows [data-hello]",
		ready:   `#hello[data-app="client"]`,
		countJS: `document.querySelectorAll("#hello-rows [data-hello]").length`,
		press:   "#hello-rows [data-hello] .revoke",
		answer:  "#hello-rows .confirm-revoke",
	}
}
