package http_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// TestTestersBehindAndSilent: the testers list filters the copies behind
// the current build (checked in with another version) and the silent ones
// (no check for 7 days); a tester whose copy never checked is neither,
// and a revoked one is in neither; a bad filter is refused by name.
func TestTestersBehindAndSilent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	if resp, body := e.do(t, "GET", api.TestersPath(p.ext.ID)+"?status=behind", admin); resp.StatusCode != 200 || strings.TrimSpace(string(body)) != `{"data":[]}` {
		t.Fatalf("before any bundle, behind = %d %s", resp.StatusCode, body)
	}
	old := p.submitAny(t, validZip(t, "1.0.0"))
	cur := p.submitAny(t, validZip(t, "1.1.0"))
	now := time.Now().UTC()
	testers := map[string]*betaport.Tester{}
	for _, name := range []string{"Behind", "Current", "Never", "Silent", "Revoked"} {
		tt, _ := e.testerOf(t, p.ext, betaport.TesterActive)
		testers[name] = tt
	}
	// The list is read by id: the names here are the test's own.
	byID := map[int64]string{}
	for name, tt := range testers {
		byID[tt.ID] = name
	}
	checks := []betaport.TesterCheck{
		{TesterID: testers["Behind"].ID, Version: old.Version, At: now.Add(-time.Hour)},
		{TesterID: testers["Current"].ID, Version: cur.Version, At: now.Add(-time.Hour)},
		{TesterID: testers["Silent"].ID, Version: cur.Version, At: now.Add(-8 * 24 * time.Hour)},
		{TesterID: testers["Revoked"].ID, Version: old.Version, At: now.Add(-9 * 24 * time.Hour)},
	}
	if err := e.DB.RecordTesterChecks(t.Context(), checks); err != nil {
		t.Fatal(err)
	}
	if err := e.DB.RevokeTester(t.Context(), testers["Revoked"].ID, "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	ids := func(status string) []string {
		t.Helper()
		resp, body := e.do(t, "GET", api.TestersPath(p.ext.ID)+"?status="+status, admin)
		if resp.StatusCode != 200 {
			t.Fatalf("?status=%s = %d %s", status, resp.StatusCode, body)
		}
		var page struct{ Data []betaport.Tester }
		json.Unmarshal(body, &page)
		var names []string
		for _, tt := range page.Data {
			names = append(names, byID[tt.ID])
		}
		slices.Sort(names)
		return names
	}
	if got := ids("behind"); !slices.Equal(got, []string{"Behind"}) {
		t.Errorf("behind: %v, want [Behind]", got)
	}
	if got := ids("silent"); !slices.Equal(got, []string{"Silent"}) {
		t.Errorf("silent: %v, want [Silent]", got)
	}
	// The extension's count: Current and Silent on the current build
	// (Silent also silent), Behind behind, Never not installed.
	resp, body := e.do(t, "GET", api.InstallsPath(p.ext.ID), admin)
	var n betaport.Installs
	if resp.StatusCode != 200 || json.Unmarshal(body, &n) != nil {
		t.Fatalf("installs = %d %s", resp.StatusCode, body)
	}
	if n.Revision <= 0 {
		t.Errorf("installs = %+v, want a testers revision (four invites and checks moved it)", n)
	}
	if want := (betaport.Installs{Testers: 4, OnCurrent: 2, Behind: 1, Silent: 1, NotInstalled: 1, Revision: n.Revision}); n != want {
		t.Errorf("installs = %+v, want %+v", n, want)
	}
	resp, body = e.do(t, "GET", api.TestersPath(p.ext.ID)+"?status=stale", admin)
	if pr := wantProblem(t, resp, body, http.StatusBadRequest, api.ProblemBadRequest); pr.Param != "status" {
		t.Errorf("a bad filter names %q", pr.Param)
	}
}
