package http_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	bphttp "github.com/betaport/betaport/server/http"
)

// testCLIBinary is a stand-in for the betaport executable the service
// offers: what is served is its bytes, whatever they are (the recipe's
// test serves a real build, server/recipes).
func testCLIBinary(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "betaport")
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho 'betaport, as served'\n"+strings.Repeat("x", 4096)), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// The command is served byte for byte with its platform, a SHA-256 that
// sha256sum -c reads, an ETag that answers 304, and ranges; a service
// that offers none says so.
func TestCLIDownload(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	want, _ := os.ReadFile(e.App.CLIBinary)
	sum := sha256.Sum256(want)
	resp, body := e.do(t, "GET", bphttp.PathCLI, nil)
	if resp.StatusCode != 200 || string(body) != string(want) {
		t.Fatalf("GET %s = %d, %d bytes; want the binary's %d", bphttp.PathCLI, resp.StatusCode, len(body), len(want))
	}
	if p := resp.Header.Get("X-Betaport-Platform"); p != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("platform %q", p)
	}
	if cd := resp.Header.Get("Content-Disposition"); !strings.Contains(cd, `filename="betaport"`) {
		t.Errorf("Content-Disposition %q", cd)
	}
	resp, body = e.do(t, "GET", bphttp.PathCLI+".sha256", nil)
	if resp.StatusCode != 200 || string(body) != hex.EncodeToString(sum[:])+"  betaport\n" {
		t.Fatalf("checksum = %d %q", resp.StatusCode, body)
	}
	req, _ := http.NewRequest("GET", e.URL+bphttp.PathCLI, nil)
	first, _ := e.do(t, "GET", bphttp.PathCLI, nil)
	req.Header.Set("If-None-Match", first.Header.Get("ETag"))
	if resp, _ := e.roundTrip(t, req); resp.StatusCode != http.StatusNotModified {
		t.Errorf("the ETag sent back = %d, want 304", resp.StatusCode)
	}
	req, _ = http.NewRequest("GET", e.URL+bphttp.PathCLI, nil)
	req.Header.Set("Range", "bytes=0-8")
	if resp, body := e.roundTrip(t, req); resp.StatusCode != http.StatusPartialContent || string(body) != string(want[:9]) {
		t.Errorf("a range = %d %q", resp.StatusCode, body)
	}

	none := newEnv(t)
	none.App.CLIBinary = ""
	resp, body = none.do(t, "GET", bphttp.PathCLI, nil)
	p := wantProblem(t, resp, body, http.StatusNotFound, "/problems/not-found")
	if !strings.Contains(p.Detail, "make build") {
		t.Errorf("no binary: %q", p.Detail)
	}
}
