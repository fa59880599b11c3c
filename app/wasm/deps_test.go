package main

import (
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
