package http_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// TestPolicyFilesNameTheVisitorsUpdateURL: a tester's policy files install
// the extension from their own update URL (the one their CRX names), an
// admin's from the shared one; each system gets its file and type, the
// files hold a secret so no cache keeps them, and a revoked tester or an
// unknown system gets none.
func TestPolicyFilesNameTheVisitorsUpdateURL(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	tt, _ := e.testerOf(t, p.ext, betaport.TesterActive)
	tester := e.cookie(t, betaport.Session{TesterID: tt.ID})
	b := p.submitAny(t, validZip(t, "1.0.0"))
	shared := e.updates(t, p.ext, admin)
	mine := testerUpdates(t, e, p.ext, &b, tester, shared)

	path := func(system string) string { return api.ExtensionPath(p.ext.ID) + "/policy/" + system }
	linux := func(who http.Header) string {
		t.Helper()
		resp, body := e.do(t, "GET", path("linux"), who)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("linux policy = %d %s %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"), body)
		}
		var pol struct {
			ExtensionSettings map[string]struct {
				InstallationMode  string `json:"installation_mode"`
				UpdateURL         string `json:"update_url"`
				OverrideUpdateURL bool   `json:"override_update_url"`
			}
		}
		if err := json.Unmarshal(body, &pol); err != nil {
			t.Fatal(err)
		}
		s, ok := pol.ExtensionSettings[shared.ChromeID]
		if !ok || len(pol.ExtensionSettings) != 1 || !s.OverrideUpdateURL || s.InstallationMode != "normal_installed" {
			t.Fatalf("the policy is %s", body)
		}
		return s.UpdateURL
	}
	if got := linux(tester); got != mine.UpdateURL {
		t.Errorf("the tester's policy names %s, want their own %s", got, mine.UpdateURL)
	}
	if got := linux(admin); got != shared.UpdateURL {
		t.Errorf("the admin's policy names %s, want the shared %s", got, shared.UpdateURL)
	}
	for system, want := range map[string]string{"macos": "application/x-apple-aspen-config", "windows": "application/octet-stream"} {
		resp, body := e.do(t, "GET", path(system), tester)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != want {
			t.Errorf("%s policy = %d %s", system, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		text := string(body)
		if system == "windows" { // UTF-16LE: the URL's characters with a zero byte after each
			text = strings.ReplaceAll(text, "\x00", "")
		}
		if !strings.Contains(text, mine.UpdateURL) {
			t.Errorf("the %s policy does not name the tester's URL", system)
		}
		if cd := resp.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="betaport-`) {
			t.Errorf("%s: Content-Disposition %q", system, cd)
		}
	}
	if resp, body := e.do(t, "GET", path("beos"), tester); resp.StatusCode != 404 || resp.Header.Get("Content-Type") != api.ProblemContentType {
		t.Errorf("an unknown system = %d %s", resp.StatusCode, body)
	}

	if err := e.DB.RevokeTester(t.Context(), tt.ID, "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	revoked := e.cookie(t, betaport.Session{TesterID: tt.ID})
	if resp, body := e.do(t, "GET", path("linux"), revoked); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a revoked tester's policy = %d %s", resp.StatusCode, body)
	}
	// Their URL tells their copy there is nothing newer.
	p.submitAny(t, validZip(t, "1.1.0"))
	if _, g := checkUpdate(t, mine.UpdateURL, mine.ChromeID, "1.0.0"); g.Apps[0].UpdateCheck.Status != "noupdate" {
		t.Errorf("after the revoke the tester's URL answers %+v", g.Apps[0].UpdateCheck)
	}
	if _, g := checkUpdate(t, shared.UpdateURL, shared.ChromeID, "1.0.0"); g.Apps[0].UpdateCheck.Status != "ok" {
		t.Errorf("the shared URL answers %+v", g.Apps[0].UpdateCheck)
	}
	if resp, _ := e.do(t, "GET", strings.TrimPrefix(mine.UpdateURL, e.URL)+fmt.Sprintf("/crx/%d", b.Number), nil); resp.StatusCode != 404 {
		t.Errorf("a revoked tester's CRX = %d, want 404", resp.StatusCode)
	}
}
