package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	bphttp "github.com/betaport/betaport/server/http"
	"github.com/betaport/betaport/server/storetest"
)

func sessionCookieOf(t *testing.T, resp *http.Response) *http.Cookie {
	t.Helper()
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie {
			return c
		}
	}
	t.Fatalf("no %s cookie in %v", api.SessionCookie, resp.Header["Set-Cookie"])
	return nil
}

func TestSignInAndOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	u := &betaport.User{TeamID: team.ID, Email: "ada@example.com"}
	if err := e.DB.CreateUser(context.Background(), u, credential.HashPassword("correct horse battery")); err != nil {
		t.Fatal(err)
	}

	resp, body := e.send(t, "POST", api.PathSession, nil, api.SignIn{Email: " Ada@Example.com", Password: "correct horse battery"})
	if resp.StatusCode != 200 {
		t.Fatalf("sign-in = %d %s", resp.StatusCode, body)
	}
	var info api.Session
	if err := json.Unmarshal(body, &info); err != nil || info.Kind != api.KindAdmin || info.User.Email != u.Email || info.Team.Name != team.Name {
		t.Fatalf("sign-in answered %s", body)
	}
	c := sessionCookieOf(t, resp)
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure || c.Path != "/" || len(c.Value) < 40 {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Lax, not Secure on http, a 256-bit token", c)
	}
	// The token itself is not what the database keeps.
	if _, err := e.DB.FindSession(context.Background(), c.Value); betaport.ErrorCode(err) != betaport.EUNAUTHORIZED {
		t.Fatal("the raw session token is stored: only its hash may be")
	}
	signedIn := http.Header{"Cookie": {c.Name + "=" + c.Value}}
	if resp, _ := e.do(t, "GET", api.PathSession, signedIn); resp.StatusCode != 200 {
		t.Fatalf("GET /api/session signed in = %d", resp.StatusCode)
	}

	resp, _ = e.do(t, "DELETE", api.PathSession, signedIn)
	if resp.StatusCode != 204 || sessionCookieOf(t, resp).MaxAge >= 0 {
		t.Fatalf("sign-out = %d, cookie %v", resp.StatusCode, resp.Header["Set-Cookie"])
	}
	// The old cookie no longer works, even if a browser kept it.
	resp, body = e.do(t, "GET", api.PathSession, signedIn)
	wantProblem(t, resp, body, 401, api.ProblemUnauthorized)
}

func TestSecureCookieOnHTTPS(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.App.BaseURL = "https://beta.example.com"
	e.App.Publish.BaseURL = e.App.BaseURL
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	e.DB.CreateUser(context.Background(), &betaport.User{TeamID: team.ID, Email: "ada@example.com"}, credential.HashPassword("correct horse battery"))
	resp, body := e.send(t, "POST", api.PathSession, nil, api.SignIn{Email: "ada@example.com", Password: "correct horse battery"})
	if resp.StatusCode != 200 || !sessionCookieOf(t, resp).Secure {
		t.Fatalf("sign-in on an https service = %d %s: the cookie must be Secure", resp.StatusCode, body)
	}
}

func TestWrongSignInsLookAlikeAndSlowDown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.App.SignInRefill = time.Hour // no try comes back, however slow the machine
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	e.DB.CreateUser(context.Background(), &betaport.User{TeamID: team.ID, Email: "ada@example.com"}, credential.HashPassword("correct horse battery"))

	_, wrongPassword := e.send(t, "POST", api.PathSession, nil, api.SignIn{Email: "ada@example.com", Password: "nope"})
	_, unknownEmail := e.send(t, "POST", api.PathSession, nil, api.SignIn{Email: "nobody@example.com", Password: "nope"})
	if withoutInstance(wrongPassword) != withoutInstance(unknownEmail) {
		t.Fatalf("a wrong password and an unknown e-mail answer differently:\n%s\n%s", wrongPassword, unknownEmail)
	}
	// Failures count per e-mail and per address: two more, then a fifth,
	// make five from this address, and the sixth try waits, even with the
	// right password.
	for range 2 {
		e.send(t, "POST", api.PathSession, nil, api.SignIn{Email: "ada@example.com", Password: "nope"})
	}
	resp, body := e.send(t, "POST", api.PathSession, nil, api.SignIn{Email: "ada@example.com", Password: "nope"})
	if resp.StatusCode != 401 {
		t.Fatalf("fifth failure = %d %s, want 401", resp.StatusCode, body)
	}
	resp, body = e.send(t, "POST", api.PathSession, nil, api.SignIn{Email: "ada@example.com", Password: "correct horse battery"})
	p := wantProblem(t, resp, body, http.StatusTooManyRequests, api.ProblemTooManyRequests)
	if resp.Header.Get("Retry-After") == "" || p.RetryAfter < 1 || !strings.Contains(p.Detail, "Wait") {
		t.Fatalf("429 without a wait: Retry-After %q, %+v", resp.Header.Get("Retry-After"), p)
	}
}

func TestBadSignInBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	resp, body := e.send(t, "POST", api.PathSession, nil, map[string]string{"email": "ada@example.com"})
	wantProblem(t, resp, body, 400, api.ProblemBadRequest)
	resp, body = e.do(t, "POST", api.PathSession, http.Header{"Content-Type": {"text/plain"}})
	wantProblem(t, resp, body, 415, api.ProblemUnsupportedMedia)
}

func TestInviteLinkSignsTesterIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Tab Tamer")
	admin := e.adminOf(t, team)

	resp, body := e.send(t, "POST", api.TestersPath(ext.ID), admin, api.Invite{Email: "grace@example.com", Name: "Grace"})
	if resp.StatusCode != 201 {
		t.Fatalf("invite = %d %s", resp.StatusCode, body)
	}
	var invited api.Invited
	json.Unmarshal(body, &invited)
	if invited.Status != betaport.TesterInvited || !strings.HasPrefix(invited.InviteURL, e.URL+"/t/") || resp.Header.Get("Location") == "" {
		t.Fatalf("invite answered %s", body)
	}
	// Inviting the same address again is a conflict, not a second tester.
	resp, body = e.send(t, "POST", api.TestersPath(ext.ID), admin, api.Invite{Email: "GRACE@example.com"})
	wantProblem(t, resp, body, 409, api.ProblemConflict)

	link := strings.TrimPrefix(invited.InviteURL, e.URL)
	resp, _ = e.do(t, "GET", link, http.Header{"Accept": {"text/html"}})
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/builds" {
		t.Fatalf("opening the link = %d to %q, want 303 to /builds", resp.StatusCode, resp.Header.Get("Location"))
	}
	c := sessionCookieOf(t, resp)
	tester := http.Header{"Cookie": {c.Name + "=" + c.Value}}
	resp, body = e.do(t, "GET", api.PathSession, tester)
	var info api.Session
	json.Unmarshal(body, &info)
	if resp.StatusCode != 200 || info.Kind != api.KindTester || info.Tester.Status != betaport.TesterActive || info.Tester.LastSeenAt == nil {
		t.Fatalf("the tester's session = %d %s", resp.StatusCode, body)
	}
	// A tester sees their extension, but nothing about other testers.
	if resp, _ := e.do(t, "GET", api.ExtensionPath(ext.ID), tester); resp.StatusCode != 200 {
		t.Fatalf("tester reading their extension = %d", resp.StatusCode)
	}
	if resp, _ := e.do(t, "GET", api.TestersPath(ext.ID), tester); resp.StatusCode != 403 {
		t.Fatalf("tester listing testers = %d, want 403", resp.StatusCode)
	}

	// Revoking ends the tester's session and link at once.
	resp, _ = e.do(t, "DELETE", api.TesterPath(ext.ID, invited.ID), admin)
	if resp.StatusCode != 204 {
		t.Fatalf("revoke = %d", resp.StatusCode)
	}
	resp, body = e.do(t, "GET", api.ExtensionPath(ext.ID), tester)
	wantProblem(t, resp, body, 401, api.ProblemAccessEnded)
	resp, body = e.do(t, "GET", link, http.Header{"Accept": {"application/json"}})
	wantProblem(t, resp, body, 401, api.ProblemAccessEnded)
	// A browser goes to the page that says their access ended (and whom
	// to ask), not to the admins' sign-in.
	resp, _ = e.do(t, "GET", link, http.Header{"Accept": {"text/html"}})
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/ended" {
		t.Fatalf("a revoked link in a browser = %d to %q with cookies %v", resp.StatusCode, resp.Header.Get("Location"), resp.Cookies())
	}
}

func TestCrossSiteChangesAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Tab Tamer")
	admin := e.adminOf(t, team)
	for _, h := range []http.Header{
		{"Sec-Fetch-Site": {"cross-site"}},
		{"Origin": {"http://evil.example"}},
	} {
		for k, v := range admin {
			h[k] = v
		}
		resp, body := e.send(t, "POST", api.TestersPath(ext.ID), h, api.Invite{Email: uniqueEmail("x")})
		wantProblem(t, resp, body, 403, api.ProblemForbidden)
	}
	if n, _ := storetest.CountTesters(context.Background(), e.DB, ext.ID); n != 0 {
		t.Fatalf("a refused cross-site request added %d testers", n)
	}
	h := http.Header{"Sec-Fetch-Site": {"same-origin"}, "Origin": {e.URL}}
	for k, v := range admin {
		h[k] = v
	}
	if resp, body := e.send(t, "POST", api.TestersPath(ext.ID), h, api.Invite{Email: uniqueEmail("x")}); resp.StatusCode != 201 {
		t.Fatalf("same-origin invite = %d %s", resp.StatusCode, body)
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, path := range []string{"/", "/login", "/api/extensions", "/web/app.css"} {
		resp, _ := e.do(t, "GET", path, nil)
		csp := resp.Header.Get("Content-Security-Policy")
		for _, want := range []string{"'wasm-unsafe-eval'", "frame-ancestors 'none'", "default-src 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %s", path, csp, want)
			}
		}
		if strings.Contains(csp, "'unsafe-eval'") || strings.Contains(csp, "'unsafe-inline'") {
			t.Errorf("%s: CSP allows more than the app needs: %q", path, csp)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Referrer-Policy") == "" {
			t.Errorf("%s: headers %v", path, resp.Header)
		}
	}
}

func TestSessionExpirySlides(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	u := &betaport.User{TeamID: team.ID, Email: "ada@example.com"}
	e.DB.CreateUser(context.Background(), u, credential.HashPassword("x"))
	token := credential.NewToken()
	ss := &betaport.Session{TokenHash: credential.HashToken(token), UserID: u.ID, ExpiresAt: betaport.Now().Add(10 * time.Minute)}
	if err := e.DB.CreateSession(context.Background(), ss); err != nil {
		t.Fatal(err)
	}
	resp, _ := e.do(t, "GET", api.PathSession, http.Header{"Cookie": {api.SessionCookie + "=" + token}})
	if resp.StatusCode != 200 {
		t.Fatalf("session = %d", resp.StatusCode)
	}
	got, err := e.DB.FindSession(context.Background(), ss.TokenHash)
	if err != nil || time.Until(got.ExpiresAt) < 13*24*time.Hour {
		t.Fatalf("a used session expires at %v (%v): its expiry did not slide to 14 days", got.ExpiresAt, err)
	}
	// An expired session is no session.
	e.DB.ExtendSession(context.Background(), ss.TokenHash, betaport.Now().Add(-time.Second))
	resp, body := e.do(t, "GET", api.PathSession, http.Header{"Cookie": {api.SessionCookie + "=" + token}})
	wantProblem(t, resp, body, 401, api.ProblemUnauthorized)
}

func TestTesterList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "E")
	admin := e.adminOf(t, team)
	for i := range 5 {
		e.testerOf(t, ext, []string{betaport.TesterActive, betaport.TesterInvited}[i%2])
	}
	var seen []int64
	path := api.TestersPath(ext.ID) + "?limit=2"
	for pages := 0; ; pages++ {
		resp, body := e.do(t, "GET", path, admin)
		var page api.Page[betaport.Tester]
		if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil || pages > 3 {
			t.Fatalf("page %d = %d %s", pages, resp.StatusCode, body)
		}
		for _, tt := range page.Data {
			seen = append(seen, tt.ID)
		}
		if page.NextCursor == "" {
			if !strings.Contains(string(body), `"data"`) || strings.Contains(string(body), "nextCursor") {
				t.Fatalf("last page %s: nextCursor must be absent", body)
			}
			break
		}
		path = api.TestersPath(ext.ID) + "?limit=2&cursor=" + page.NextCursor
	}
	if len(seen) != 5 || seen[0] < seen[4] {
		t.Fatalf("pages gave testers %v, want all 5 newest first", seen)
	}
	resp, _ := e.do(t, "GET", api.TestersPath(ext.ID)+"?limit=2", admin)
	etag := resp.Header.Get("ETag")
	resp, body := e.do(t, "GET", api.TestersPath(ext.ID)+"?limit=2", http.Header{"Cookie": admin["Cookie"], "If-None-Match": {etag}})
	if etag == "" || resp.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Fatalf("testers page revalidation = %d with %d bytes (ETag %q), want 304", resp.StatusCode, len(body), etag)
	}
	for _, bad := range []string{"?limit=0", "?limit=101", "?limit=x", "?status=gone", "?cursor=abc", "?cursor=1.AAAAAAAAAAAAAAAA"} {
		resp, body := e.do(t, "GET", api.TestersPath(ext.ID)+bad, admin)
		p := wantProblem(t, resp, body, 400, api.ProblemBadRequest)
		if p.Param == "" {
			t.Errorf("%s: the problem does not name the parameter", bad)
		}
	}
}

func TestBundleList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "E")
	empty := storetest.MustExtension(t, e.DB, team, "Empty")
	admin := e.adminOf(t, team)
	for i := 1; i <= 5; i++ {
		e.publish(t, ext, "1.0."+strings.Repeat("1", i))
	}
	page := func(path string) ([]betaport.Bundle, *http.Response) {
		t.Helper()
		resp, body := e.do(t, "GET", path, admin)
		var list []betaport.Bundle
		if resp.StatusCode != 200 || json.Unmarshal(body, &list) != nil {
			t.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
		}
		return list, resp
	}
	numbers := func(list []betaport.Bundle) (ns []int64) {
		for _, b := range list {
			ns = append(ns, b.Number)
		}
		return ns
	}
	p0, resp := page(api.BundlesPath(ext.ID) + "?page=0&limit=2")
	p1, _ := page(api.BundlesPath(ext.ID) + "?page=1&limit=2")
	p2, _ := page(api.BundlesPath(ext.ID) + "?page=2&limit=2")
	p3, _ := page(api.BundlesPath(ext.ID) + "?page=3&limit=2")
	if fmt.Sprint(numbers(p0), numbers(p1), numbers(p2), len(p3)) != "[5 4] [3 2] [1] 0" || !p0[0].Current || p0[1].Current {
		t.Fatalf("pages = %v %v %v %v", numbers(p0), numbers(p1), numbers(p2), p3)
	}
	if list, _ := page(api.BundlesPath(empty.ID)); len(list) != 0 {
		t.Fatalf("an extension without bundles lists %v", list)
	}
	if list, _ := page(api.BundlesPath(ext.ID)); len(list) != 5 {
		t.Fatalf("default limit lists %d", len(list))
	}
	etag := resp.Header.Get("ETag")
	resp, body := e.do(t, "GET", api.BundlesPath(ext.ID)+"?page=0&limit=2", http.Header{"Cookie": admin["Cookie"], "If-None-Match": {etag}})
	if etag == "" || resp.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Fatalf("revalidation with ETag %q = %d, %d bytes", etag, resp.StatusCode, len(body))
	}
	// A new bundle changes the first page, so its ETag no longer matches.
	e.publish(t, ext, "2.0")
	resp, _ = e.do(t, "GET", api.BundlesPath(ext.ID)+"?page=0&limit=2", http.Header{"Cookie": admin["Cookie"], "If-None-Match": {etag}})
	if resp.StatusCode != 200 {
		t.Fatalf("a changed page answered %d to an old ETag", resp.StatusCode)
	}
	for _, bad := range []string{"?page=-1", "?page=x", "?limit=0", "?limit=1000"} {
		resp, body := e.do(t, "GET", api.BundlesPath(ext.ID)+bad, admin)
		if p := wantProblem(t, resp, body, 400, api.ProblemBadRequest); p.Param == "" {
			t.Errorf("%s: problem names no parameter", bad)
		}
	}
}

func TestBuildsList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	a := storetest.MustExtension(t, e.DB, team, "A")
	b := storetest.MustExtension(t, e.DB, team, "B")
	other := storetest.MustExtension(t, e.DB, storetest.MustTeam(t, e.DB, betaport.PlanProfessional), "Other")
	for i := range 3 {
		e.publish(t, a, fmt.Sprintf("1.%d", i))
		e.publish(t, b, fmt.Sprintf("2.%d", i))
	}
	e.publish(t, other, "9.9")
	tester, _ := e.testerOf(t, a, betaport.TesterActive)
	collect := func(h http.Header) []string {
		t.Helper()
		var got []string
		path := api.PathBuilds + "?limit=2"
		for range 10 {
			resp, body := e.do(t, "GET", path, h)
			var page api.Page[betaport.Bundle]
			if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil {
				t.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
			}
			for _, bb := range page.Data {
				got = append(got, bb.Name+" "+bb.Version)
			}
			if page.NextCursor == "" {
				return got
			}
			path = api.PathBuilds + "?limit=2&cursor=" + page.NextCursor
		}
		t.Fatal("the builds list does not end")
		return nil
	}
	testerBuilds := collect(e.cookie(t, betaport.Session{TesterID: tester.ID}))
	if strings.Join(testerBuilds, ",") != "A 1.2,A 1.1,A 1.0" {
		t.Fatalf("a tester's builds = %v, want only their extension's, newest first", testerBuilds)
	}
	adminBuilds := collect(e.adminOf(t, team))
	if len(adminBuilds) != 6 || adminBuilds[0] != "B 2.2" {
		t.Fatalf("an admin's builds = %v, want the team's 6, newest first", adminBuilds)
	}
	resp, body := e.do(t, "GET", api.PathBuilds+"?cursor=forged", e.adminOf(t, team))
	wantProblem(t, resp, body, 400, api.ProblemBadRequest)
}

// A list page comes from the server with its first page rendered and
// embedded as JSON, fetched with the visitor's own access.
func TestPrerenderedListPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Tab Tamer")
	for i := 1; i <= 3; i++ {
		e.publish(t, ext, fmt.Sprintf("1.0.%d", i))
	}
	path := fmt.Sprintf("/extensions/%d", ext.ID)
	resp, body := e.do(t, "GET", path, e.adminOf(t, team))
	html := string(body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Fatalf("GET %s = %d, Content-Length %s for %d bytes", path, resp.StatusCode, resp.Header.Get("Content-Length"), len(body))
	}
	for _, want := range []string{`id="extension-name">Tab Tamer<`, `data-bundle="3"`, `data-bundle="1"`,
		`data-prerender-kind="bundles" data-prerender-key="/api/extensions/` + strconv.FormatInt(ext.ID, 10) + `/bundles?page=0&amp;limit=20"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the prerendered page lacks %s", want)
		}
	}
	// Someone else gets the page shell, and none of the data.
	other := e.adminOf(t, storetest.MustTeam(t, e.DB, betaport.PlanProfessional))
	for _, h := range []http.Header{nil, other} {
		_, body := e.do(t, "GET", path, h)
		// (A signed-in visitor's own session is embedded; nothing else.)
		if strings.Contains(string(body), `data-prerender-kind="extension"`) || strings.Contains(string(body), `data-prerender-kind="bundles"`) || strings.Contains(string(body), "Tab Tamer") {
			t.Fatalf("a visitor without access got the data in the page")
		}
	}
}

// With S3 storage the page may PUT to the storage's origin, and nowhere
// else.
func TestCSPAllowsTheUploadOrigin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := &bphttp.Server{Store: e.DB, Blobs: e.Blobs, Logger: testLogger(t), Secret: []byte(credential.NewToken()), SigningKeys: testKeyring,
		UploadOrigin: "http://127.0.0.1:9000"}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/login", nil))
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self' http://127.0.0.1:9000;") {
		t.Fatalf("CSP %q does not let the page PUT to S3", csp)
	}
	resp, _ := e.do(t, "GET", "/login", nil)
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self';") {
		t.Fatalf("without S3 the CSP is %q, want connect-src 'self' only", csp)
	}
}

// signInFrom signs in from a loopback address of its own (all of 127/8
// is this machine), as a person elsewhere would.
func (e *env) signInFrom(t *testing.T, address, email, password string) (*http.Response, []byte) {
	t.Helper()
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(address)}}
	client := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
	defer client.CloseIdleConnections()
	reqBody, _ := json.Marshal(api.SignIn{Email: email, Password: password})
	req, _ := http.NewRequest("POST", e.URL+api.PathSession, bytes.NewReader(reqBody))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	checkContract(t, req, reqBody, resp, body)
	return resp, body
}

// Issue 29: two wrong passwords a second for a known e-mail from one
// address got the real admin, from another address, 429 on 12 of 13
// tries. A stranger's failures throttle the stranger; the owner's right
// password from elsewhere still signs in; and guessing from a fresh
// address while the account is throttled costs that address its
// allowance.
func TestStrangerCannotLockTheAdminOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// No try comes back during the test, however slowly this machine
	// hashes the passwords (13 rounds took over 10 s under -race).
	e.App.SignInRefill = time.Hour
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	const email, password = "ada@example.com", "correct horse battery"
	e.DB.CreateUser(context.Background(), &betaport.User{TeamID: team.ID, Email: email}, credential.HashPassword(password))

	throttled := 0
	for try := range 13 {
		resp, body := e.signInFrom(t, "127.0.0.2", email, "guess "+strconv.Itoa(try))
		switch resp.StatusCode {
		case http.StatusUnauthorized:
		case http.StatusTooManyRequests:
			throttled++
		default:
			t.Fatalf("the stranger's guess %d = %d %s", try, resp.StatusCode, body)
		}
		if resp, body := e.signInFrom(t, "127.0.0.3", email, password); resp.StatusCode != 200 {
			t.Fatalf("after the stranger's guess %d the admin, from another address, got %d %s", try, resp.StatusCode, body)
		}
	}
	if throttled < 7 {
		t.Errorf("the stranger was throttled on %d of 13 guesses, want all but the first five or so", throttled)
	}
	// A guess from a third address while the account is throttled is
	// refused, and that address then waits too, even with the password.
	resp, body := e.signInFrom(t, "127.0.0.4", email, "another guess")
	wantProblem(t, resp, body, http.StatusTooManyRequests, api.ProblemTooManyRequests)
	resp, body = e.signInFrom(t, "127.0.0.4", email, password)
	wantProblem(t, resp, body, http.StatusTooManyRequests, api.ProblemTooManyRequests)
}
