package http_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	bphttp "github.com/betaport/betaport/server/http"
	"github.com/betaport/betaport/server/storetest"
	"github.com/betaport/betaport/server/webhook"
)

// cookie returns a header carrying a new session for a user or a tester,
// made in the store as a sign-in would.
func (e *env) cookie(t testing.TB, ss betaport.Session) http.Header {
	t.Helper()
	token := credential.NewToken()
	ss.TokenHash = credential.HashToken(token)
	ss.ExpiresAt = betaport.Now().Add(time.Hour)
	if err := e.DB.CreateSession(context.Background(), &ss); err != nil {
		t.Fatal(err)
	}
	return http.Header{"Cookie": {api.SessionCookie + "=" + token}}
}

var emails atomic.Int64

func uniqueEmail(prefix string) string {
	return fmt.Sprintf("%s%d@example.com", prefix, emails.Add(1))
}

// adminPasswordHash is the hash of adminOf's admins' password, made once:
// an argon2id hash costs a good part of a second under -race, and nobody
// signs in with it (adminOf makes the session itself).
var adminPasswordHash = sync.OnceValue(func() string { return credential.HashPassword("a long password") })

// adminOf creates an admin of team and returns a signed-in header.
func (e *env) adminOf(t testing.TB, team *betaport.Team) http.Header {
	t.Helper()
	u := &betaport.User{TeamID: team.ID, Email: uniqueEmail("admin")}
	if err := e.DB.CreateUser(context.Background(), u, adminPasswordHash()); err != nil {
		t.Fatal(err)
	}
	return e.cookie(t, betaport.Session{UserID: u.ID})
}

// testerOf creates a tester of ext with the given status and its invite
// token.
func (e *env) testerOf(t *testing.T, ext *betaport.Extension, status string) (*betaport.Tester, string) {
	t.Helper()
	token := credential.NewToken()
	tt := &betaport.Tester{ExtensionID: ext.ID, Email: uniqueEmail("tester"), Name: "T", Status: status}
	if err := e.DB.InviteTester(context.Background(), tt, storetest.Link(credential.HashToken(token)), "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	return tt, token
}

// checkNotModified: an operation the OpenAPI document says answers 304
// does, to its own validator sent back (If-None-Match); one that never
// can says nothing of 304 (issue 28: eight operations documented a 304
// they never sent, which generated clients then expect).
func checkNotModified(t *testing.T, e *env, pattern, path string, header func() http.Header, first http.Header) {
	t.Helper()
	doc, _ := loadContract(t)
	_, tmpl, _ := strings.Cut(pattern, " ")
	item := doc.Paths.Find(tmpl)
	if item == nil || item.Get == nil {
		return
	}
	documented := item.Get.Responses.Status(http.StatusNotModified) != nil
	etag := first.Get("ETag")
	switch {
	case documented && etag == "":
		t.Errorf("%s documents 304 but its 200 sends no ETag to make one with", pattern)
	case etag != "":
		h := header()
		h.Set("If-None-Match", etag)
		resp, _ := e.send(t, http.MethodGet, path, h, nil)
		if resp.StatusCode == http.StatusNotModified && !documented {
			t.Errorf("%s answers 304 to its ETag, which the document does not say", pattern)
		}
		if resp.StatusCode != http.StatusNotModified && documented && !isDownloadRoute(pattern) {
			t.Errorf("%s documents 304 but answers %d to its own ETag", pattern, resp.StatusCode)
		}
	}
}

// accessRow is a route's row in the access table.
type accessRow struct {
	path   string     // with parameters filled
	body   func() any // JSON body, or nil
	status [6]int     // per person, in walkEveryRoute's order
}

// accessSubject is one kind of caller in the walk, and what it gets.
type accessSubject struct {
	name   string
	header func() http.Header
	want   func(r accessRow) int
}

// TestAccess walks every registered route as each kind of person and
// checks the status each gets. A route without a row fails the test: new
// routes must say here who may call them.
func TestAccess(t *testing.T) {
	t.Parallel()
	walkEveryRoute(t, newEnv(t), asPeople)
}

// The ways walkEveryRoute calls the routes: as each kind of person, or
// with access tokens (TestAccessWithTokens).
const (
	asPeople = "people"
	asTokens = "tokens"
)

// walkEveryRoute calls every route of e as each kind of person (or with
// each kind of access token), with a request that route takes, and checks
// who gets what.
func walkEveryRoute(t *testing.T, e *env, as string) {
	ctx := context.Background()
	teamA := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	teamB := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	extA := storetest.MustExtension(t, e.DB, teamA, "A")
	extB := storetest.MustExtension(t, e.DB, teamB, "B")

	adminA := &betaport.User{TeamID: teamA.ID, Email: "admin-a@example.com"}
	if err := e.DB.CreateUser(ctx, adminA, credential.HashPassword("admin a password")); err != nil {
		t.Fatal(err)
	}
	adminB := &betaport.User{TeamID: teamB.ID, Email: "admin-b@example.com"}
	if err := e.DB.CreateUser(ctx, adminB, credential.HashPassword("admin b password")); err != nil {
		t.Fatal(err)
	}
	testerA, _ := e.testerOf(t, extA, betaport.TesterActive)
	testerB, _ := e.testerOf(t, extB, betaport.TesterActive)
	revoked, _ := e.testerOf(t, extA, betaport.TesterActive)
	victim, _ := e.testerOf(t, extA, betaport.TesterActive)
	toRestore, _ := e.testerOf(t, extA, betaport.TesterActive)
	if err := e.DB.RevokeTester(ctx, toRestore.ID, "admin-a@example.com"); err != nil {
		t.Fatal(err)
	}
	toResend, _ := e.testerOf(t, extA, betaport.TesterInvited)
	toRevoke := storetest.MustKey(t, e.DB, extA.ID, "To revoke", "to-revoke-secret")
	tokenToRevoke := &betaport.AccessToken{ExtensionID: extA.ID, Name: "To revoke", Scopes: []string{"read"}, CreatedBy: "admin-a@example.com"}
	if err := e.DB.CreateAccessToken(ctx, tokenToRevoke, "token-to-revoke-hash"); err != nil {
		t.Fatal(err)
	}
	hook := &betaport.Webhook{ExtensionID: extA.ID, URL: "https://hooks.example.com/a", Secret: "whsec_a", CreatedBy: "admin-a@example.com"}
	toDelete := &betaport.Webhook{ExtensionID: extA.ID, URL: "https://hooks.example.com/b", Secret: "whsec_b", CreatedBy: "admin-a@example.com"}
	for _, h := range []*betaport.Webhook{hook, toDelete} {
		if err := e.DB.CreateWebhook(ctx, h, webhook.Sealer(testKeyring)); err != nil {
			t.Fatal(err)
		}
	}
	e.publish(t, extA, "1.0.0")
	e.publish(t, extA, "1.1.0") // so that bundle 1 can be rolled back to
	key := e.key(t, extA)
	toMove, _ := e.testerOf(t, extA, betaport.TesterActive)
	// A channel to promote to, and one with a rollout to halt.
	for _, name := range []string{"qa", "staged"} {
		if _, err := e.DB.CreateChannel(ctx, extA.ID, name, "admin-a@example.com"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.DB.PromoteBundle(ctx, extA.ID, 1, betaport.Placement{Channel: "staged", Percent: 50, Actor: "admin-a@example.com"}); err != nil {
		t.Fatal(err)
	}
	channels := 0
	// A report of tester A's, with a screenshot, for the feedback rows.
	resp, body := e.send(t, "POST", api.ExtensionPath(extA.ID)+"/feedback", e.cookie(t, betaport.Session{TesterID: testerA.ID}),
		reportForm(t, "Setup report", 0, pngShot(t, 4, 4)))
	var report betaport.Feedback
	if resp.StatusCode != 201 || json.Unmarshal(body, &report) != nil {
		t.Fatalf("tester A's report = %d %s", resp.StatusCode, body)
	}
	reportPath := fmt.Sprintf("/api/extensions/%d/feedback/%d", extA.ID, report.ID)
	resp, body = e.send(t, "POST", api.ExtensionPath(extA.ID)+"/feedback", e.cookie(t, betaport.Session{TesterID: testerA.ID}),
		reportForm(t, "A report to delete", 0))
	var toDeleteReport betaport.Feedback
	if resp.StatusCode != 201 || json.Unmarshal(body, &toDeleteReport) != nil {
		t.Fatalf("tester A's second report = %d %s", resp.StatusCode, body)
	}

	type row = accessRow
	// Each request gets its own fresh session, so a sign-out in one cell
	// cannot change another.
	type subjectCase = accessSubject
	var people []subjectCase
	for i, sc := range []struct {
		name   string
		header func() http.Header
	}{
		{"anonymous", func() http.Header { return http.Header{} }},
		{"admin of the team", func() http.Header { return e.cookie(t, betaport.Session{UserID: adminA.ID}) }},
		{"admin of another team", func() http.Header { return e.cookie(t, betaport.Session{UserID: adminB.ID}) }},
		{"tester of the extension", func() http.Header { return e.cookie(t, betaport.Session{TesterID: testerA.ID}) }},
		{"tester of another extension", func() http.Header { return e.cookie(t, betaport.Session{TesterID: testerB.ID}) }},
		{"revoked tester", func() http.Header {
			// A session made after the revoke (RevokeTester deletes the
			// earlier ones): the tester's status alone must refuse it.
			e.DB.RevokeTester(ctx, revoked.ID, "admin@example.com")
			return e.cookie(t, betaport.Session{TesterID: revoked.ID})
		}},
	} {
		people = append(people, subjectCase{sc.name, sc.header, func(r row) int { return r.status[i] }})
	}
	subjectsFor := func(rt bphttp.Route) []subjectCase { return people }
	if as == asTokens {
		subjectsFor = tokenSubjects(t, e, extA, extB)
	}

	id := strconv.FormatInt(extA.ID, 10)
	signIn := func() any { return api.SignIn{Email: "admin-a@example.com", Password: "admin a password"} }
	invite := func() any { return api.Invite{Email: uniqueEmail("invitee"), Name: "New"} }
	table := map[string]row{
		"GET /healthz":          {"/healthz", nil, [6]int{200, 200, 200, 200, 200, 200}},
		"GET /readyz":           {"/readyz", nil, [6]int{200, 200, 200, 200, 200, 200}},
		"GET /api/openapi.json": {"/api/openapi.json", nil, [6]int{200, 200, 200, 200, 200, 200}},
		"POST /api/session":     {"/api/session", signIn, [6]int{200, 200, 200, 200, 200, 200}},
		"GET /api/session":      {"/api/session", nil, [6]int{401, 200, 200, 200, 200, 401}},
		"DELETE /api/session":   {"/api/session", nil, [6]int{204, 204, 204, 204, 204, 204}},
		"GET /t/{token}":        {"", nil, [6]int{303, 303, 303, 303, 303, 303}},
		"GET /api/extensions":   {"/api/extensions", nil, [6]int{401, 200, 200, 200, 200, 401}},
		"GET /api/builds":       {"/api/builds", nil, [6]int{401, 200, 200, 200, 200, 401}},
		// A token's own record: people have no token to ask about.
		"GET /api/token": {"/api/token", nil, [6]int{401, 403, 403, 403, 403, 401}},
		"GET /api/extensions/{id}/tester": {
			"/api/extensions/" + id + "/tester?email=" + url.QueryEscape(testerA.Email), nil, [6]int{401, 200, 404, 403, 404, 401}},
		"GET /api/extensions/{id}": {
			"/api/extensions/" + id, nil, [6]int{401, 200, 404, 200, 404, 401}},
		"GET /api/extensions/{id}/testers": {
			"/api/extensions/" + id + "/testers", nil, [6]int{401, 200, 404, 403, 404, 401}},
		"POST /api/extensions/{id}/testers": {
			"/api/extensions/" + id + "/testers", invite, [6]int{401, 201, 404, 403, 404, 401}},
		"DELETE /api/extensions/{id}/testers/{testerId}": {
			"/api/extensions/" + id + "/testers/" + strconv.FormatInt(victim.ID, 10), nil, [6]int{401, 204, 404, 403, 404, 401}},
		"GET /api/extensions/{id}/keys": {
			"/api/extensions/" + id + "/keys", nil, [6]int{401, 200, 404, 403, 404, 401}},
		"POST /api/extensions/{id}/keys": {
			"/api/extensions/" + id + "/keys", func() any { return api.NewKey{Label: "CI"} }, [6]int{401, 201, 404, 403, 404, 401}},
		"DELETE /api/extensions/{id}/keys/{keyId}": {
			"/api/extensions/" + id + "/keys/" + strconv.FormatInt(toRevoke.ID, 10), nil, [6]int{401, 200, 404, 403, 404, 401}},
		"GET /api/extensions/{id}/tokens": {
			"/api/extensions/" + id + "/tokens", nil, [6]int{401, 200, 404, 403, 404, 401}},
		"POST /api/extensions/{id}/tokens": {
			"/api/extensions/" + id + "/tokens", func() any { return api.NewToken{Name: "CI", Scopes: []string{"read"}} }, [6]int{401, 201, 404, 403, 404, 401}},
		"DELETE /api/extensions/{id}/tokens/{tokenId}": {
			"/api/extensions/" + id + "/tokens/" + strconv.FormatInt(tokenToRevoke.ID, 10), nil, [6]int{401, 200, 404, 403, 404, 401}},
		"GET /api/extensions/{id}/audit": {
			"/api/extensions/" + id + "/audit", nil, [6]int{401, 200, 404, 403, 404, 401}},
		"GET /api/extensions/{id}/adoption": {
			"/api/extensions/" + id + "/adoption", nil, [6]int{401, 200, 404, 403, 404, 401}},
		"POST /api/extensions/{id}/testers/{testerId}/restore": {
			"/api/extensions/" + id + "/testers/" + strconv.FormatInt(toRestore.ID, 10) + "/restore", nil, [6]int{401, 200, 404, 403, 404, 401}},
		"PUT /api/extensions/{id}/testers/{testerId}/channel": {
			"/api/extensions/" + id + "/testers/" + strconv.FormatInt(toMove.ID, 10) + "/channel",
			func() any { return api.ChannelChoice{Channel: "qa"} }, [6]int{401, 200, 404, 403, 404, 401}},
		"POST /api/extensions/{id}/bundles/{number}/promote": {
			"/api/extensions/" + id + "/bundles/1/promote",
			func() any { return api.Promotion{Channel: "qa"} }, [6]int{401, 200, 404, 403, 404, 401}},
		"GET /api/extensions/{id}/channels": {
			"/api/extensions/" + id + "/channels", nil, [6]int{401, 200, 404, 403, 404, 401}},
		"POST /api/extensions/{id}/channels": {
			"/api/extensions/" + id + "/channels", func() any {
				channels++
				return api.NewChannel{Name: fmt.Sprintf("new-%d", channels)}
			}, [6]int{401, 201, 404, 403, 404, 401}},
		"GET /api/extensions/{id}/channels/{channel}": {
			"/api/extensions/" + id + "/channels/beta", nil, [6]int{401, 200, 404, 403, 404, 401}},
		"POST /api/extensions/{id}/channels/{channel}/rollout/{action}": {
			"/api/extensions/" + id + "/channels/staged/rollout/halt", nil, [6]int{401, 200, 404, 403, 404, 401}},
		"POST /api/extensions/{id}/feedback": {
			"/api/extensions/" + id + "/feedback", func() any { return reportForm(t, "It broke.", 0) }, [6]int{401, 403, 404, 201, 404, 401}},
		"GET /api/extensions/{id}/feedback": {
			"/api/extensions/" + id + "/feedback", nil, [6]int{401, 200, 404, 200, 404, 401}},
		"GET /api/extensions/{id}/feedback/{feedbackId}": {
			reportPath, nil, [6]int{401, 200, 404, 200, 404, 401}},
		"POST /api/extensions/{id}/feedback/{feedbackId}/status": {
			reportPath + "/status", func() any { return api.FeedbackStatus{Status: "seen"} }, [6]int{401, 200, 404, 403, 404, 401}},
		"DELETE /api/extensions/{id}/feedback/{feedbackId}": {
			fmt.Sprintf("/api/extensions/%d/feedback/%d", extA.ID, toDeleteReport.ID), nil, [6]int{401, 204, 404, 403, 404, 401}},
		"GET /api/extensions/{id}/feedback/{feedbackId}/screenshots/{number}": {
			reportPath + "/screenshots/1", nil, [6]int{401, 200, 404, 200, 404, 401}},
		"POST /api/extensions/{id}/testers/{testerId}/invite": {
			"/api/extensions/" + id + "/testers/" + strconv.FormatInt(toResend.ID, 10) + "/invite", nil, [6]int{401, 200, 404, 403, 404, 401}},
		"GET /api/extensions/{id}/webhooks": {
			"/api/extensions/" + id + "/webhooks", nil, [6]int{401, 200, 404, 403, 404, 401}},
		"POST /api/extensions/{id}/webhooks": {
			"/api/extensions/" + id + "/webhooks", func() any { return api.NewWebhook{URL: "https://hooks.example.com/new"} }, [6]int{401, 201, 404, 403, 404, 401}},
		"DELETE /api/extensions/{id}/webhooks/{webhookId}": {
			"/api/extensions/" + id + "/webhooks/" + strconv.FormatInt(toDelete.ID, 10), nil, [6]int{401, 204, 404, 403, 404, 401}},
		"GET /api/extensions/{id}/webhooks/{webhookId}/deliveries": {
			"/api/extensions/" + id + "/webhooks/" + strconv.FormatInt(hook.ID, 10) + "/deliveries", nil, [6]int{401, 200, 404, 403, 404, 401}},
		"POST /api/extensions/{id}/webhooks/{webhookId}/test": {
			"/api/extensions/" + id + "/webhooks/" + strconv.FormatInt(hook.ID, 10) + "/test", nil, [6]int{401, 202, 404, 403, 404, 401}},
		"GET /api/extensions/{id}/bundles": {
			"/api/extensions/" + id + "/bundles?page=0", nil, [6]int{401, 200, 404, 200, 404, 401}},
		"GET /api/extensions/{id}/events": {
			"/api/extensions/" + id + "/events", nil, [6]int{401, 200, 404, 200, 404, 401}},
		"GET /api/extensions/{id}/bundles/current": {
			"/api/extensions/" + id + "/bundles/current", nil, [6]int{401, 200, 404, 200, 404, 401}},
		"GET /api/extensions/{id}/bundles/current/download": {
			"/api/extensions/" + id + "/bundles/current/download", nil, [6]int{401, 200, 404, 200, 404, 401}},
		"GET /api/extensions/{id}/bundles/{number}/download": {
			"/api/extensions/" + id + "/bundles/1/download", nil, [6]int{401, 200, 404, 200, 404, 401}},
		"GET /api/extensions/{id}/bundles/{number}/crx": {
			"/api/extensions/" + id + "/bundles/1/crx", nil, [6]int{401, 200, 404, 200, 404, 401}},
		"POST /api/extensions/{id}/bundles/{number}/rollback": {
			"/api/extensions/" + id + "/bundles/1/rollback", nil, [6]int{401, 201, 404, 403, 404, 401}},
		"GET /api/extensions/{id}/installs": {
			"/api/extensions/" + id + "/installs", nil, [6]int{401, 200, 404, 403, 404, 401}},
		"GET /api/extensions/{id}/policy/{system}": {
			"/api/extensions/" + id + "/policy/linux", nil, [6]int{401, 200, 404, 200, 404, 401}},
		"GET /api/extensions/{id}/updates": {
			"/api/extensions/" + id + "/updates", nil, [6]int{401, 200, 404, 403, 404, 401}},
		"POST /api/extensions/{id}/updates/token": {
			"/api/extensions/" + id + "/updates/token", nil, [6]int{401, 200, 404, 403, 404, 401}},
		// Update URLs ignore cookies: the token in the path decides (read
		// fresh, as the row above rotates it).
		"GET /update/{id}/{token}":              {"", nil, [6]int{200, 200, 200, 200, 200, 200}},
		"GET /update/{id}/{token}/crx/{number}": {"/crx/1", nil, [6]int{200, 200, 200, 200, 200, 200}},
		// A tester's copy reports with their URL, whoever's cookie comes
		// along.
		"POST /update/{id}/{token}/feedback": {
			"/feedback", func() any { return reportForm(t, "From the extension.", 0) }, [6]int{201, 201, 201, 201, 201, 201}},
		"OPTIONS /update/{id}/{token}/feedback": {"/feedback", nil, [6]int{204, 204, 204, 204, 204, 204}},
		// A key decides calls 1 and 3 whoever sends them (the keyless,
		// session-authorised body: TestSubmitWithSession); the signed URL
		// decides the PUT.
		"POST /api/submit/upload": {"/api/submit/upload", func() any { return *key }, [6]int{200, 200, 200, 200, 200, 200}},
		"POST /api/submit/sign":   {"/api/submit/sign", func() any { return *key }, [6]int{409, 409, 409, 409, 409, 409}},
		"PUT /uploads/{upload}":   {"/uploads/1", nil, [6]int{403, 403, 403, 403, 403, 403}},
		// The size limit is announced to anyone, before any upload.
		"GET /api/submit/limits": {"/api/submit/limits", nil, [6]int{200, 200, 200, 200, 200, 200}},
		// The command pipelines run, to anyone.
		"GET /cli/betaport":        {"/cli/betaport", nil, [6]int{200, 200, 200, 200, 200, 200}},
		"GET /cli/betaport.sha256": {"/cli/betaport.sha256", nil, [6]int{200, 200, 200, 200, 200, 200}},
	}

	for _, rt := range e.App.Routes() {
		r, ok := table[rt.Pattern]
		if !ok {
			t.Errorf("route %q (%s) has no row in the access table: say who may call it", rt.Pattern, rt.Access)
			continue
		}
		delete(table, rt.Pattern)
		method, _, _ := strings.Cut(rt.Pattern, " ")
		for _, sub := range subjectsFor(rt) {
			path := r.path
			if rt.Pattern == "GET /t/{token}" {
				_, token := e.testerOf(t, extA, betaport.TesterInvited)
				path = "/t/" + token
			}
			if strings.HasPrefix(rt.Pattern, "GET "+api.UpdatePrefix) {
				path = strings.TrimPrefix(e.updates(t, extA, e.cookie(t, betaport.Session{UserID: adminA.ID})).UpdateURL, e.URL) + r.path
			}
			var body any
			if r.body != nil {
				body = r.body()
			}
			if strings.HasSuffix(rt.Pattern, " "+api.UpdatePrefix+"{id}/{token}/feedback") {
				// Tester A's own update URL, which their copy reports with.
				u, err := e.App.Publish.TesterUpdateURL(ctx, extA, testerA)
				if err != nil {
					t.Fatal(err)
				}
				path = strings.TrimPrefix(u, e.URL) + r.path
			}
			resp, respBody := e.send(t, method, path, sub.header(), body)
			want := sub.want(r)
			// On S3, a redirect to the file; but a tester's own CRX is
			// made for them and sent by the server.
			personal := strings.HasSuffix(rt.Pattern, "/crx") && strings.Contains(sub.name, "tester")
			if want == http.StatusOK && isDownloadRoute(rt.Pattern) && !personal {
				want = e.downloadStatus()
			}
			if resp.StatusCode != want {
				t.Errorf("%s as %s: %d, want %d (%s)", rt.Pattern, sub.name, resp.StatusCode, want, respBody)
			}
			if resp.StatusCode >= 400 && resp.Header.Get("Content-Type") != api.ProblemContentType {
				t.Errorf("%s as %s: error without a problem body", rt.Pattern, sub.name)
			}
			if method == http.MethodGet && resp.StatusCode == http.StatusOK {
				checkNotModified(t, e, rt.Pattern, path, sub.header, resp.Header)
			}
		}
	}
	for pattern := range table {
		t.Errorf("the access table names %q, which is not a registered route", pattern)
	}

	// Calls 1 and 3 without a key: only the session of an admin of the
	// extension's team authorises them (sign then finds no zip: 409).
	keyless := func() any { return map[string]string{"extensionId": id} }
	for _, r := range []struct {
		path   string
		status [6]int
	}{
		{api.PathSubmitUpload, [6]int{400, 200, 404, 403, 403, 400}},
		{api.PathSubmitSign, [6]int{400, 409, 404, 403, 403, 400}},
	} {
		if as == asTokens {
			break // a token is not a submit key: TestTokensAreNotSubmitKeys
		}
		for i, sub := range people {
			resp, respBody := e.send(t, "POST", r.path, sub.header(), keyless())
			if resp.StatusCode != r.status[i] {
				t.Errorf("POST %s without a key as %s: %d, want %d (%s)", r.path, sub.name, resp.StatusCode, r.status[i], respBody)
			}
		}
	}
}
