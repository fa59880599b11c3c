package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The wasm is downloaded by every visitor: server-only packages (SQL
// drivers, blob storage, password hashing, the server itself) must never be
// linked into it.
func TestWasmLinksNoServerCode(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", ".")
	cmd.Env = append(cmd.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/betaport/betaport/server",
		"modernc.org/sqlite",
		"github.com/jackc/pgx",
		"gocloud.dev",
		"github.com/aws",
		"golang.org/x/crypto",
		"github.com/pressly/goose",
	}
	deps := strings.Fields(string(out))
	for _, dep := range deps {
		// database/sql/driver comes in through go-app's uuid package and
		// is harmless; database/sql itself is a server's.
		if dep == "database/sql" {
			t.Errorf("app.wasm links %s", dep)
		}
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) {
				t.Errorf("app.wasm links %s", dep)
			}
		}
	}
	if len(deps) < 10 {
		t.Fatalf("go list found only %d packages; the check is not looking at the app", len(deps))
	}
}

// net/http's client links its whole Transport (TLS, HTTP/2, x509: a third of
// the wasm) although the browser's fetch does the work: the app sends its
// requests through the page's fetch (ui.pageFetch). Building the wasm with
// its function names shows whether any of it crept back in.
func TestWasmLinksNoHTTPTransport(t *testing.T) {
	out := t.TempDir() + "/app.wasm"
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Env = append(cmd.Environ(), "GOOS=js", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("encoding/json.Marshal")) {
		t.Fatal("the wasm carries no function names: this test cannot see what it links")
	}
	for _, fn := range []string{"crypto/tls.(*Conn).Handshake", "net/http.(*Transport).roundTrip", "crypto/x509.ParseCertificate"} {
		if bytes.Contains(b, []byte(fn)) {
			t.Errorf("app.wasm links %s: something calls net/http's client (use fetch.Doer with the page's fetch)", fn)
		}
	}
}
