package http_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	bphttp "github.com/betaport/betaport/server/http"
	"github.com/betaport/betaport/server/storetest"
)

// routeScopes is the scope an access token needs on each route; "" means
// tokens are refused there (people's routes, a token's own management,
// what pipelines and browsers' updaters authenticate otherwise). A route
// without a row fails TestEveryRouteNamesItsScope.
var routeScopes = map[string]string{
	"GET /healthz": "", "GET /readyz": "", "GET /api/openapi.json": "",
	"POST /api/session": "", "GET /api/session": "", "DELETE /api/session": "", "GET /t/{token}": "",
	"GET /api/builds":                                                     "",
	"GET /api/extensions":                                                 "read",
	"GET /api/token":                                                      "any",
	"GET /api/extensions/{id}/tester":                                     "testers",
	"GET /api/extensions/{id}":                                            "read",
	"GET /api/extensions/{id}/testers":                                    "read",
	"POST /api/extensions/{id}/testers":                                   "testers",
	"DELETE /api/extensions/{id}/testers/{testerId}":                      "testers",
	"POST /api/extensions/{id}/testers/{testerId}/restore":                "testers",
	"POST /api/extensions/{id}/testers/{testerId}/invite":                 "testers",
	"PUT /api/extensions/{id}/testers/{testerId}/channel":                 "testers",
	"GET /api/extensions/{id}/keys":                                       "read",
	"POST /api/extensions/{id}/keys":                                      "settings",
	"DELETE /api/extensions/{id}/keys/{keyId}":                            "settings",
	"GET /api/extensions/{id}/tokens":                                     "",
	"POST /api/extensions/{id}/tokens":                                    "",
	"DELETE /api/extensions/{id}/tokens/{tokenId}":                        "",
	"GET /api/extensions/{id}/audit":                                      "read",
	"GET /api/extensions/{id}/adoption":                                   "read",
	"GET /api/extensions/{id}/installs":                                   "read",
	"GET /api/extensions/{id}/webhooks":                                   "read",
	"POST /api/extensions/{id}/webhooks":                                  "settings",
	"DELETE /api/extensions/{id}/webhooks/{webhookId}":                    "settings",
	"GET /api/extensions/{id}/webhooks/{webhookId}/deliveries":            "read",
	"POST /api/extensions/{id}/webhooks/{webhookId}/test":                 "settings",
	"GET /api/extensions/{id}/bundles":                                    "read",
	"GET /api/extensions/{id}/events":                                     "read",
	"GET /api/extensions/{id}/bundles/current":                            "read",
	"GET /api/extensions/{id}/bundles/current/download":                   "read",
	"GET /api/extensions/{id}/bundles/{number}/download":                  "read",
	"GET /api/extensions/{id}/bundles/{number}/crx":                       "read",
	"POST /api/extensions/{id}/bundles/{number}/rollback":                 "releases",
	"POST /api/extensions/{id}/bundles/{number}/promote":                  "releases",
	"GET /api/extensions/{id}/channels":                                   "read",
	"POST /api/extensions/{id}/channels":                                  "releases",
	"GET /api/extensions/{id}/channels/{channel}":                         "read",
	"POST /api/extensions/{id}/channels/{channel}/rollout/{action}":       "releases",
	"GET /api/extensions/{id}/policy/{system}":                            "read",
	"POST /api/extensions/{id}/feedback":                                  "",
	"GET /api/extensions/{id}/feedback":                                   "read",
	"GET /api/extensions/{id}/feedback/{feedbackId}":                      "read",
	"POST /api/extensions/{id}/feedback/{feedbackId}/status":              "feedback",
	"DELETE /api/extensions/{id}/feedback/{feedbackId}":                   "feedback",
	"GET /api/extensions/{id}/feedback/{feedbackId}/screenshots/{number}": "read",
	"GET /api/extensions/{id}/updates":                                    "read",
	"POST /api/extensions/{id}/updates/token":                             "settings",
	"GET /update/{id}/{token}":                                            "",
	"GET /update/{id}/{token}/crx/{number}":                               "",
	"POST /update/{id}/{token}/feedback":                                  "",
	"OPTIONS /update/{id}/{token}/feedback":                               "",
	"POST /api/submit/upload":                                             "",
	"POST /api/submit/sign":                                               "",
	"PUT /uploads/{upload}":                                               "",
	"GET /api/submit/limits":                                              "",
	"GET /cli/betaport":                                                   "",
	"GET /cli/betaport.sha256":                                            "",
}

// Every route says which scope a token needs, and it is the one above.
func TestEveryRouteNamesItsScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	seen := map[string]bool{}
	for _, rt := range e.App.Routes() {
		want, ok := routeScopes[rt.Pattern]
		if !ok {
			t.Errorf("route %q has no row in routeScopes: say which scope a token needs", rt.Pattern)
			continue
		}
		seen[rt.Pattern] = true
		if rt.Scope != want {
			t.Errorf("%s needs scope %q, want %q", rt.Pattern, rt.Scope, want)
		}
		if method, _, _ := strings.Cut(rt.Pattern, " "); method != "GET" && (rt.Scope == betaport.ScopeRead || rt.Scope == bphttp.ScopeAnyToken) {
			t.Errorf("%s changes something with the read scope", rt.Pattern)
		}
	}
	for pattern := range routeScopes {
		if !seen[pattern] {
			t.Errorf("routeScopes names %q, which is not a registered route", pattern)
		}
	}
}

// TestAccessWithTokens walks every route with access tokens: one with the
// route's scope gets what an admin gets; one with every other scope, an
// expired, a revoked or another extension's token, and one sent with
// cookies are refused, each with its own status.
func TestAccessWithTokens(t *testing.T) {
	t.Parallel()
	walkEveryRoute(t, newEnv(t), asTokens)
}

// tokenSubjects makes the tokens of the walk and answers, for each route,
// the kinds of token to call it with.
func tokenSubjects(t *testing.T, e *env, extA, extB *betaport.Extension) func(rt bphttp.Route) []accessSubject {
	ctx := context.Background()
	bearer := func(secret string) func() http.Header {
		return func() http.Header { return http.Header{"Authorization": {"Bearer " + secret}} }
	}
	made, lastID := 0, int64(0)
	token := func(ext *betaport.Extension, scopes []string, expires *time.Time) string {
		made++
		secret := fmt.Sprintf("%stest-%d-%s", betaport.TokenPrefix, made, credential.NewToken())
		tok := &betaport.AccessToken{ExtensionID: ext.ID, Name: fmt.Sprintf("token %d", made), Scopes: scopes,
			CreatedBy: "admin-a@example.com", ExpiresAt: expires}
		if err := e.DB.CreateAccessToken(ctx, tok, credential.HashToken(secret)); err != nil {
			t.Fatal(err)
		}
		lastID = tok.ID
		return secret
	}
	only := map[string]string{}   // scope → a token with just it
	allBut := map[string]string{} // scope → a token with every other
	for _, s := range betaport.AllScopes {
		only[s] = token(extA, []string{s}, nil)
		allBut[s] = token(extA, slices.DeleteFunc(slices.Clone(betaport.AllScopes), func(o string) bool { return o == s }), nil)
	}
	every := token(extA, betaport.AllScopes, nil)
	soon := betaport.Now().Add(1500 * time.Millisecond)
	expired := token(extA, betaport.AllScopes, &soon)
	revoked := token(extA, betaport.AllScopes, nil)
	if _, err := e.DB.RevokeAccessToken(ctx, extA.ID, lastID, "admin-a@example.com"); err != nil {
		t.Fatal(err)
	}
	others := token(extB, betaport.AllScopes, nil)
	// The expired token's moment passes (the world above took most of it).
	for !time.Now().After(soon) {
		time.Sleep(time.Until(soon) + time.Millisecond)
	}

	withCookie := func() http.Header {
		h := bearer(every)()
		h.Set("Cookie", api.SessionCookie+"=whatever")
		return h
	}
	return func(rt bphttp.Route) []accessSubject {
		// Routes that are not the admin API's ignore the header: they
		// answer as to anyone (anonymous, column 0).
		passThrough := rt.Access == bphttp.Public || rt.Access == bphttp.KeyAuth || rt.Access == bphttp.KeyOrAdmin
		// Sessions are a browser's: their routes refuse any token.
		session := passThrough && (strings.Contains(rt.Pattern, " /api/session") || strings.Contains(rt.Pattern, " /t/"))
		anyToken := rt.Scope == bphttp.ScopeAnyToken
		status := func(scoped, unscoped int) func(r accessRow) int {
			return func(r accessRow) int {
				switch {
				case session:
					return http.StatusForbidden
				case passThrough:
					return r.status[0]
				case rt.Scope != "":
					return scoped
				default:
					return unscoped
				}
			}
		}
		asAdmin := func(r accessRow) int {
			if session {
				return http.StatusForbidden
			}
			if anyToken {
				return http.StatusOK
			}
			if passThrough {
				return r.status[0]
			}
			if rt.Scope == "" {
				return http.StatusForbidden
			}
			return r.status[1]
		}
		withScope, withoutIt := every, every
		if rt.Scope != "" && !anyToken {
			withScope, withoutIt = only[rt.Scope], allBut[rt.Scope]
		}
		otherStatus := http.StatusNotFound // another extension's: as if none
		if !strings.Contains(rt.Pattern, "{id}") {
			otherStatus = http.StatusOK // GET /api/extensions lists its own
		}
		otherScopes := http.StatusForbidden
		if anyToken {
			otherScopes = http.StatusOK
		}
		return []accessSubject{
			{"a token with the route's scope", bearer(withScope), asAdmin},
			{"a token with every other scope", bearer(withoutIt), status(otherScopes, http.StatusForbidden)},
			{"an expired token", bearer(expired), status(http.StatusUnauthorized, http.StatusUnauthorized)},
			{"a revoked token", bearer(revoked), status(http.StatusUnauthorized, http.StatusUnauthorized)},
			{"another extension's token", bearer(others), status(otherStatus, http.StatusForbidden)},
			{"a token sent with cookies", withCookie, status(http.StatusBadRequest, http.StatusBadRequest)},
		}
	}
}

// tokenWorld is an extension with an admin and a published bundle, and a
// way to make its tokens through the API, as an admin does.
type tokenWorld struct {
	e     *env
	ext   *betaport.Extension
	admin http.Header
}

func newTokenWorld(t *testing.T) *tokenWorld {
	t.Helper()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Tokens")
	w := &tokenWorld{e: e, ext: ext, admin: e.adminOf(t, team)}
	e.publish(t, ext, "1.0.0")
	return w
}

// make creates a token on the API and returns its record and a header
// that sends it.
func (w *tokenWorld) make(t *testing.T, in api.NewToken) (betaport.AccessToken, http.Header) {
	t.Helper()
	resp, body := w.e.send(t, "POST", api.TokensPath(w.ext.ID), w.admin, in)
	var created api.CreatedToken
	if resp.StatusCode != 201 || json.Unmarshal(body, &created) != nil || !strings.HasPrefix(created.Secret, betaport.TokenPrefix) {
		t.Fatalf("making token %q = %d %s", in.Name, resp.StatusCode, body)
	}
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("the answer carrying a token's secret may be cached: Cache-Control %q", resp.Header.Get("Cache-Control"))
	}
	return created.Token, http.Header{"Authorization": {"Bearer " + created.Secret}}
}

// A token made on the API works on what its scopes allow, names itself in
// the audit trail, records its last use, and stops at once when revoked;
// its secret is kept only as a hash.
func TestTokenLifecycle(t *testing.T) {
	t.Parallel()
	w := newTokenWorld(t)
	e := w.e
	tok, bearer := w.make(t, api.NewToken{Name: "nightly", Scopes: []string{"testers", "read"}})
	if !slices.Equal(tok.Scopes, []string{"read", "testers"}) || tok.CreatedBy == "" || tok.LastUsedAt != nil {
		t.Fatalf("made %+v", tok)
	}

	// It invites a tester; the audit trail names the token and its maker.
	resp, body := e.send(t, "POST", api.TestersPath(w.ext.ID), bearer, api.Invite{Email: uniqueEmail("bot-invited"), Name: "Bo"})
	if resp.StatusCode != 201 {
		t.Fatalf("inviting with a testers token = %d %s", resp.StatusCode, body)
	}
	resp, body = e.send(t, "GET", api.AuditPath(w.ext.ID), bearer, nil)
	var audit api.Page[betaport.AuditEvent]
	if resp.StatusCode != 200 || json.Unmarshal(body, &audit) != nil || len(audit.Data) == 0 {
		t.Fatalf("audit = %d %s", resp.StatusCode, body)
	}
	if a := audit.Data[0]; a.Action != betaport.AuditTesterInvited || !strings.Contains(a.Actor, `"nightly"`) || !strings.Contains(a.Actor, tok.CreatedBy) {
		t.Errorf("the invite is recorded as %+v, want the token's name and its maker", a)
	}

	// A rollback needs releases: refused, saying which scope, nothing done.
	resp, body = e.send(t, "POST", fmt.Sprintf("/api/extensions/%d/bundles/1/rollback", w.ext.ID), bearer, nil)
	p := wantProblem(t, resp, body, http.StatusForbidden, api.ProblemMissingScope)
	if p.Scope != "releases" || !strings.Contains(p.Detail, "releases") {
		t.Errorf("missing scope problem = %+v, want it to name releases", p)
	}
	if b, err := e.DB.FindBundles(context.Background(), w.ext.ID, 100, 10); err != nil || len(b) != 1 {
		t.Errorf("after a refused rollback: %d bundles (%v), want the one published", len(b), err)
	}

	// Listed with its last use.
	resp, body = e.send(t, "GET", api.TokensPath(w.ext.ID), w.admin, nil)
	var list api.Page[betaport.AccessToken]
	if resp.StatusCode != 200 || json.Unmarshal(body, &list) != nil || len(list.Data) != 1 {
		t.Fatalf("tokens = %d %s", resp.StatusCode, body)
	}
	if list.Data[0].LastUsedAt == nil || strings.Contains(string(body), bearer.Get("Authorization")[7:]) {
		t.Errorf("listed %s: want its last use and never its secret", body)
	}

	// A token cannot list, make or revoke tokens.
	for _, c := range []struct{ method, path string }{
		{"GET", api.TokensPath(w.ext.ID)}, {"POST", api.TokensPath(w.ext.ID)}, {"DELETE", api.TokenPath(w.ext.ID, tok.ID)},
	} {
		var in any
		if c.method == "POST" {
			in = api.NewToken{Name: "escalated", Scopes: betaport.AllScopes}
		}
		resp, body := e.send(t, c.method, c.path, bearer, in)
		wantProblem(t, resp, body, http.StatusForbidden, api.ProblemForbidden)
	}

	// Revoked: the next call is refused, and the trail says who revoked it.
	resp, body = e.send(t, "DELETE", api.TokenPath(w.ext.ID, tok.ID), w.admin, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("revoking = %d %s", resp.StatusCode, body)
	}
	resp, body = e.send(t, "GET", api.TestersPath(w.ext.ID), bearer, nil)
	wantProblem(t, resp, body, http.StatusUnauthorized, api.ProblemInvalidToken)
}

// What an admin can get wrong making a token is refused with a problem
// naming the field, and no token is made.
func TestTokenRefusals(t *testing.T) {
	t.Parallel()
	w := newTokenWorld(t)
	past := time.Now().Add(-time.Minute).Format(time.RFC3339)
	far := time.Now().Add(2 * 366 * 24 * time.Hour).Format(time.RFC3339)
	for name, c := range map[string]struct {
		in    any
		param string
	}{
		"no name":         {api.NewToken{Scopes: []string{"read"}}, "name"},
		"no scope":        {api.NewToken{Name: "x"}, "scopes"},
		"a made-up scope": {api.NewToken{Name: "x", Scopes: []string{"admin"}}, "scopes"},
		"a past expiry":   {api.NewToken{Name: "x", Scopes: []string{"read"}, ExpiresAt: past}, "expiresAt"},
		"two years":       {api.NewToken{Name: "x", Scopes: []string{"read"}, ExpiresAt: far}, "expiresAt"},
		"a date alone":    {api.NewToken{Name: "x", Scopes: []string{"read"}, ExpiresAt: "2027-01-31"}, "expiresAt"},
		"scopes as text":  {map[string]any{"name": "x", "scopes": "read"}, "scopes"},
	} {
		resp, body := w.e.send(t, "POST", api.TokensPath(w.ext.ID), w.admin, c.in)
		p := wantProblem(t, resp, body, http.StatusBadRequest, api.ProblemBadRequest)
		if p.Param != c.param {
			t.Errorf("%s: problem names %q, want %q (%s)", name, p.Param, c.param, p.Detail)
		}
	}
	if list, _ := w.e.DB.FindAccessTokens(context.Background(), w.ext.ID, 0, 10); len(list) != 0 {
		t.Errorf("refused tokens left %d records", len(list))
	}
}

// A token in a browser page's context is refused, whatever the page's
// session: sent with another site's Origin, with Sec-Fetch-Site, or with
// the session cookie of an admin who could call the route on their own.
func TestTokenNeverWorksFromABrowserPage(t *testing.T) {
	t.Parallel()
	w := newTokenWorld(t)
	_, bearer := w.make(t, api.NewToken{Name: "all", Scopes: betaport.AllScopes})
	cases := map[string]http.Header{
		"another site's origin":      {"Origin": {"https://evil.example"}},
		"this site's origin":         {"Origin": {w.e.URL}},
		"a fetch from a page":        {"Sec-Fetch-Site": {"same-origin"}},
		"the admin's session cookie": {"Cookie": w.admin["Cookie"]},
		"another site with a cookie": {"Origin": {"https://evil.example"}, "Cookie": w.admin["Cookie"]},
	}
	for name, extra := range cases {
		for _, method := range []string{"GET", "POST"} {
			h := bearer.Clone()
			for k, v := range extra {
				h[k] = v
			}
			var in any
			if method == "POST" {
				in = api.Invite{Email: uniqueEmail("from-a-page"), Name: "P"}
			}
			resp, body := w.e.send(t, method, api.TestersPath(w.ext.ID), h, in)
			if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusBadRequest {
				t.Errorf("%s %s with a token and %s: %d %s, want it refused", method, api.TestersPath(w.ext.ID), name, resp.StatusCode, body)
			}
		}
	}
	if list, _ := w.e.DB.FindTesters(context.Background(), betaport.TesterFilter{ExtensionID: w.ext.ID, Limit: 10}); len(list) != 0 {
		t.Errorf("refused invites left %d testers", len(list))
	}
	// And the other way: a token's secret is not a session.
	h := http.Header{"Cookie": {api.SessionCookie + "=" + bearer.Get("Authorization")[len("Bearer "):]}}
	resp, body := w.e.send(t, "GET", api.TestersPath(w.ext.ID), h, nil)
	wantProblem(t, resp, body, http.StatusUnauthorized, api.ProblemUnauthorized)
}

// Bad Authorization headers are told apart: another scheme, an empty one,
// a made-up token; and a token is not a submit key.
func TestBadAuthorization(t *testing.T) {
	t.Parallel()
	w := newTokenWorld(t)
	for _, h := range []string{"Basic YWRtaW46cGFzcw==", "Bearer", "Bearer ", "bpt_x", "Bearer bpt_madeup"} {
		resp, body := w.e.send(t, "GET", api.TestersPath(w.ext.ID), http.Header{"Authorization": {h}}, nil)
		p := wantProblem(t, resp, body, http.StatusUnauthorized, api.ProblemInvalidToken)
		if strings.Contains(p.Detail, "bpt_") {
			t.Errorf("Authorization %q: the problem repeats the secret: %s", h, p.Detail)
		}
	}
	_, bearer := w.make(t, api.NewToken{Name: "all", Scopes: betaport.AllScopes})
	resp, body := w.e.send(t, "POST", api.PathSubmitUpload, bearer, map[string]string{"extensionId": fmt.Sprint(w.ext.ID)})
	if resp.StatusCode < 400 {
		t.Errorf("call 1 with a token instead of a key = %d %s, want it refused", resp.StatusCode, body)
	}
}
