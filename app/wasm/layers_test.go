package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The packages both sides share (the domain, the wire contract, the typed
// client) and the browser app's plain-Go parts (app/fetch, the page models,
// the upload runner) import neither go-app nor syscall/js, directly or
// through another package of ours: `go test -race` runs them natively, and
// the server and the command line link them. Only app/ui (the components)
// and this main may.
func TestSharedPackagesImportNoBrowser(t *testing.T) {
	shared := []string{"betaport", "api", "client", "fetch", "model", "model/modeltest", "upload", "notes", "adoption"}
	args := []string{"list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`}
	for _, p := range shared {
		args = append(args, "github.com/betaport/betaport/app/"+p)
	}
	cmd := exec.Command("go", args...)
	cmd.Env = append(cmd.Environ(), "GOOS=js", "GOARCH=wasm") // where syscall/js exists
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	ours := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if !strings.HasPrefix(fields[0], "github.com/betaport/betaport/") {
			continue // the standard library's own use of syscall/js is its business
		}
		ours++
		for _, imp := range fields[1:] {
			if imp == "syscall/js" || strings.HasPrefix(imp, "github.com/maxence-charriere/go-app") {
				t.Errorf("%s imports %s: shared and plain-Go packages must run without a browser", fields[0], imp)
			}
		}
	}
	if ours < len(shared) {
		t.Fatalf("go list found %d of our packages; the check is not looking at them", ours)
	}
}

// Of the server, only the HTTP layer imports the browser app: it renders
// the app's pages on the server (prerendering). Nothing else on the server
// may depend on go-app components.
func TestOnlyTheServersPagesImportTheUI(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "github.com/betaport/betaport/server/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 10 {
		t.Fatalf("go list found %d server packages; the check is not looking at them", len(lines))
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			ui := imp == "github.com/betaport/betaport/app/ui" || strings.HasPrefix(imp, "github.com/maxence-charriere/go-app")
			// The browser benchmark's floor is a go-app hello world of its
			// own, served by its own process: it renders no page of ours.
			if ui && fields[0] != "github.com/betaport/betaport/server/http" && fields[0] != "github.com/betaport/betaport/server/browserbench/hello" {
				t.Errorf("%s imports %s: only server/http renders the app's pages", fields[0], imp)
			}
		}
	}
}
