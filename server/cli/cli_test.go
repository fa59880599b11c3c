package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
)

// run runs the betaport command as a script would.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cli.Run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestTeamAndExtensionCreate(t *testing.T) {
	data := t.TempDir()
	code, out, errOut := run(t, "team", "create", "--data", data, "--name", "Acme", "--plan", "professional", "--seats", "3")
	if code != 0 {
		t.Fatalf("team create: exit %d: %s", code, errOut)
	}
	var team betaport.Team
	if err := json.Unmarshal([]byte(out), &team); err != nil || team.ID == 0 || team.Plan != "professional" || team.Seats != 3 {
		t.Fatalf("team create printed %q (%v)", out, err)
	}
	code, out, errOut = run(t, "extension", "create", "--data", data, "--team", "1", "--name", "Tab Tamer")
	if code != 0 {
		t.Fatalf("extension create: exit %d: %s", code, errOut)
	}
	var ext betaport.Extension
	if err := json.Unmarshal([]byte(out), &ext); err != nil || ext.ID == 0 || ext.TeamID != team.ID || ext.Name != "Tab Tamer" {
		t.Fatalf("extension create printed %q (%v)", out, err)
	}
	// The environment chooses the data dir as the flag does.
	t.Setenv("BETAPORT_DATA", data)
	if code, out, _ := run(t, "extension", "create", "--team", "1", "--name", "Second"); code != 0 || !strings.Contains(out, `"id": 2`) {
		t.Fatalf("extension create with BETAPORT_DATA: exit %d, %q", code, out)
	}
}

func TestUsageAndDomainErrors(t *testing.T) {
	data := t.TempDir()
	tests := []struct {
		args     []string
		code     int
		inStderr string
	}{
		{nil, cli.ExitUsage, "Usage"},
		{[]string{"frobnicate"}, cli.ExitUsage, "unknown command"},
		{[]string{"team", "create", "--data", data, "--bogus"}, cli.ExitUsage, "flag provided but not defined"},
		{[]string{"extension", "create", "--data", data, "--name", "X"}, cli.ExitUsage, "--team is required"},
		{[]string{"team", "create", "--data", data, "--name", "A", "--plan", "gold"}, cli.ExitFailure, "professional or starter"},
		{[]string{"extension", "create", "--data", data, "--team", "42", "--name", "X"}, cli.ExitFailure, "Team 42 does not exist"},
		{[]string{"team", "create", "--data", data, "--db", "mysql://x", "--name", "A", "--plan", "starter"}, cli.ExitUsage, "sqlite:///"},
	}
	for _, tt := range tests {
		code, out, errOut := run(t, tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.inStderr) || out != "" {
			t.Errorf("betaport %q: exit %d, stdout %q, stderr %q; want exit %d and %q on stderr",
				tt.args, code, out, errOut, tt.code, tt.inStderr)
		}
	}
}

func TestSeedOnlyFillsAnEmptyDataDir(t *testing.T) {
	data := t.TempDir()
	// Not the full demo (100,000 testers) in a unit test: the small one is
	// loaded by the same code; here we check the command's guard and output.
	code, out, errOut := run(t, "team", "create", "--data", data, "--name", "Existing", "--plan", "starter")
	if code != 0 {
		t.Fatal(errOut)
	}
	code, out, errOut = run(t, "seed", "--data", data)
	if code != cli.ExitFailure || !strings.Contains(errOut, "already has data") || out != "" {
		t.Fatalf("seed of a used data dir: exit %d, %q, %q", code, out, errOut)
	}
	code, out, errOut = run(t, "seed", "--data", data, "--if-empty")
	if code != 0 || out != "" || !strings.Contains(errOut, "not seeding") {
		t.Fatalf("seed --if-empty of a used data dir: exit %d, %q, %q", code, out, errOut)
	}
}

func TestServeOnPortZero(t *testing.T) {
	m := cli.NewMain()
	m.Config.Addr = "127.0.0.1:0"
	m.Config.Data = t.TempDir()
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(m.URL() + api.PathReady)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("readyz = %d", resp.StatusCode)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := http.Get(m.URL() + api.PathHealth); err == nil {
		t.Fatal("the server still answers after Close")
	}
}
