package http_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/storetest"
)

// A signed-in admin submits with {"extensionId": …} alone: the session of an
// admin of the extension's team authorises calls 1 and 3, and nobody
// else's; a pipeline's key keeps working beside it.
func TestSubmitWithSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	p := newPipeline(t, e, betaport.PlanProfessional)
	team, _ := e.DB.FindTeam(ctx, p.ext.TeamID)
	otherTeam := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	otherExt := storetest.MustExtension(t, e.DB, otherTeam, "Other")
	tester, _ := e.testerOf(t, p.ext, betaport.TesterActive)
	otherTester, _ := e.testerOf(t, otherExt, betaport.TesterActive)
	body := map[string]string{"extensionId": strconv.FormatInt(p.ext.ID, 10)}

	refused := []struct {
		name   string
		header http.Header
		status int
		typ    string
	}{
		{"no session", http.Header{}, 400, api.ProblemBadRequest}, // the key is missing
		{"another team's admin", e.adminOf(t, otherTeam), 404, api.ProblemNotFound},
		{"the extension's tester", e.cookie(t, betaport.Session{TesterID: tester.ID}), 403, api.ProblemForbidden},
		{"another extension's tester", e.cookie(t, betaport.Session{TesterID: otherTester.ID}), 403, api.ProblemForbidden},
	}
	for _, path := range []string{api.PathSubmitUpload, api.PathSubmitSign} {
		for _, r := range refused {
			resp, b := e.send(t, "POST", path, r.header, body)
			if pr := wantProblem(t, resp, b, r.status, r.typ); r.status == 400 && pr.Param != "apiKey" {
				t.Errorf("%s %s: param %q, want apiKey", path, r.name, pr.Param)
			}
		}
	}
	// A cross-site request riding the admin's cookie is refused.
	admin := e.adminOf(t, team)
	cross := admin.Clone()
	cross.Set("Sec-Fetch-Site", "cross-site")
	cross.Set("Origin", "https://evil.example")
	resp, b := e.send(t, "POST", api.PathSubmitUpload, cross, body)
	wantProblem(t, resp, b, 403, api.ProblemForbidden)
	// Nothing above issued an upload.
	if _, err := e.DB.LatestUpload(ctx, p.ext.ID); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatalf("a refused call left an upload: %v", err)
	}
	// Unknown fields are refused as for a key.
	resp, b = e.send(t, "POST", api.PathSubmitUpload, admin, map[string]string{"extensionId": body["extensionId"], "label": "x"})
	wantProblem(t, resp, b, 400, api.ProblemBadRequest)

	// The admin's own session publishes; the pipeline's key still works.
	resp, b = e.send(t, "POST", api.PathSubmitUpload, admin, body)
	var u api.UploadURL
	if json.Unmarshal(b, &u); resp.StatusCode != 200 || u.URL == "" {
		t.Fatalf("call 1 with a session = %d %s", resp.StatusCode, b)
	}
	if resp, b := p.put(t, u.URL, api.ZipContentType, validZip(t, "1.0.0")); resp.StatusCode != 200 {
		t.Fatalf("call 2 = %d %s", resp.StatusCode, b)
	}
	resp, b = e.send(t, "POST", api.PathSubmitSign, admin, body)
	var bundle betaport.Bundle
	if json.Unmarshal(b, &bundle); resp.StatusCode != 200 || bundle.Number != 1 {
		t.Fatalf("call 3 with a session = %d %s", resp.StatusCode, b)
	}
	// The pipeline's key after a browser upload (on any storage: the URL
	// may be S3's).
	resp, b = e.send(t, "POST", api.PathSubmitUpload, nil, p.key)
	if json.Unmarshal(b, &u); resp.StatusCode != 200 {
		t.Fatalf("call 1 with the pipeline's key = %d %s", resp.StatusCode, b)
	}
	if resp, b := p.put(t, u.URL, api.ZipContentType, validZip(t, "1.0.1")); resp.StatusCode != 200 {
		t.Fatalf("call 2 = %d %s", resp.StatusCode, b)
	}
	resp, b = p.sign(t)
	if json.Unmarshal(b, &bundle); resp.StatusCode != 200 || bundle.Number != 2 {
		t.Fatalf("the pipeline's key after a browser upload = %d %s", resp.StatusCode, b)
	}

	// The Professional plan applies to sessions too.
	starter := storetest.MustTeam(t, e.DB, betaport.PlanStarter)
	starterExt := storetest.MustExtension(t, e.DB, starter, "S")
	resp, b = e.send(t, "POST", api.PathSubmitUpload, e.adminOf(t, starter), map[string]int64{"extensionId": starterExt.ID})
	wantProblem(t, resp, b, 403, api.ProblemPlanRequired)
}

// Revoke, restore and a new link: the same record, a new link that works,
// the old one that does not; an invite of a revoked e-mail offers the
// restore; a revoked tester is told their access ended and whom to ask.
func TestRestoreResendAndAccessEnded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Tab Tamer")
	admin := e.adminOf(t, team)
	resp, b := e.send(t, "POST", api.TestersPath(ext.ID), admin, api.Invite{Email: "ada@example.com", Name: "Ada"})
	var inv api.Invited
	if json.Unmarshal(b, &inv); resp.StatusCode != 201 || inv.InvitedAt == nil {
		t.Fatalf("invite = %d %s", resp.StatusCode, b)
	}
	first := inv.InviteURL

	// A new link: the old one stops working.
	resp, b = e.do(t, "POST", api.TesterInvitePath(ext.ID, inv.ID), admin)
	var again api.Invited
	if json.Unmarshal(b, &again); resp.StatusCode != 200 || again.InviteURL == first || again.ID != inv.ID {
		t.Fatalf("new link = %d %s", resp.StatusCode, b)
	}
	if resp, _ := e.do(t, "GET", strings.TrimPrefix(first, e.URL), http.Header{"Accept": {"application/json"}}); resp.StatusCode != 404 {
		t.Fatalf("the old link after a new one = %d", resp.StatusCode)
	}
	signedIn := e.openLink(t, again.InviteURL)

	// Revoke: the tester's session is refused at once, with whom to ask.
	if resp, b := e.do(t, "DELETE", api.TesterPath(ext.ID, inv.ID), admin); resp.StatusCode != 204 {
		t.Fatalf("revoke = %d %s", resp.StatusCode, b)
	}
	resp, b = e.do(t, "GET", api.PathSession, signedIn)
	ended := wantProblem(t, resp, b, 401, api.ProblemAccessEnded)
	if !strings.Contains(ended.Detail, "Tab Tamer") || !strings.Contains(ended.Detail, "admin") || !strings.Contains(ended.Detail, team.Name) {
		t.Fatalf("access ended says %q: want the extension, whom to ask and their team", ended.Detail)
	}
	resp, b = e.do(t, "GET", api.PathBuilds, signedIn)
	wantProblem(t, resp, b, 401, api.ProblemAccessEnded)
	// A page tells them too, not the admins' sign-in.
	resp, _ = e.do(t, "GET", "/builds", withHeader(signedIn, "Accept", "text/html"))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ended" {
		t.Fatalf("a revoked tester's page = %d to %q, want the access-ended page", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, page := e.do(t, "GET", "/ended", withHeader(signedIn, "Accept", "text/html"))
	if resp.StatusCode != 200 || !strings.Contains(string(page), "Your access to this beta ended") || !strings.Contains(string(page), "Tab Tamer") {
		t.Fatalf("the access-ended page = %d:\n%.600s", resp.StatusCode, page)
	}
	// A new link for a revoked tester is a restore.
	resp, b = e.do(t, "POST", api.TesterInvitePath(ext.ID, inv.ID), admin)
	wantProblem(t, resp, b, 409, api.ProblemConflict)

	// Inviting the e-mail again offers the restore.
	resp, b = e.send(t, "POST", api.TestersPath(ext.ID), admin, api.Invite{Email: "ADA@example.com"})
	offer := wantProblem(t, resp, b, 409, api.ProblemTesterRevoked)
	if offer.Restore != api.TesterRestorePath(ext.ID, inv.ID) {
		t.Fatalf("restore offered at %q", offer.Restore)
	}
	resp, b = e.do(t, "POST", offer.Restore, admin)
	var restored api.Invited
	if json.Unmarshal(b, &restored); resp.StatusCode != 200 || restored.ID != inv.ID || restored.Status != betaport.TesterInvited || restored.Name != "Ada" {
		t.Fatalf("restore = %d %s", resp.StatusCode, b)
	}
	// The session of before stays ended; the new link signs them in.
	if resp, _ := e.do(t, "GET", api.PathSession, signedIn); resp.StatusCode != 401 {
		t.Fatalf("the session of before the revoke = %d after a restore", resp.StatusCode)
	}
	again2 := e.openLink(t, restored.InviteURL)
	if resp, b := e.do(t, "GET", api.PathBuilds, again2); resp.StatusCode != 200 {
		t.Fatalf("builds after a restore = %d %s", resp.StatusCode, b)
	}
	// Restoring twice is a conflict, and another extension's tester is
	// not found through this one.
	resp, b = e.do(t, "POST", offer.Restore, admin)
	wantProblem(t, resp, b, 409, api.ProblemConflict)
	other := storetest.MustExtension(t, e.DB, team, "Other")
	resp, b = e.do(t, "POST", api.TesterRestorePath(other.ID, inv.ID), admin)
	wantProblem(t, resp, b, 404, api.ProblemNotFound)
}

// openLink opens an invite link as a browser would and returns the
// session it set.
func (e *env) openLink(t *testing.T, link string) http.Header {
	t.Helper()
	resp, _ := e.do(t, "GET", strings.TrimPrefix(link, e.URL), http.Header{"Accept": {"text/html"}})
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie && c.Value != "" {
			return http.Header{"Cookie": {api.SessionCookie + "=" + c.Value}}
		}
	}
	t.Fatalf("the link %s set no session (%d)", link, resp.StatusCode)
	return nil
}

func withHeader(h http.Header, k, v string) http.Header {
	h = h.Clone()
	h.Set(k, v)
	return h
}
