package http_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/storetest"
)

// invite invites email through the API and returns the tester with their
// link (the path, without the host).
func (e *env) invite(t *testing.T, ext *betaport.Extension, admin http.Header, in api.Invite) (api.Invited, string) {
	t.Helper()
	resp, body := e.send(t, "POST", api.TestersPath(ext.ID), admin, in)
	var invited api.Invited
	if resp.StatusCode != 201 || json.Unmarshal(body, &invited) != nil {
		t.Fatalf("invite %s = %d %s", in.Email, resp.StatusCode, body)
	}
	return invited, strings.TrimPrefix(invited.InviteURL, e.URL)
}

// openLinkIn opens an invite link as a browser does (Accept: text/html),
// with the browser's cookies, and returns where it was sent and the
// session cookie it got ("" for none).
func (e *env) openLinkIn(t *testing.T, link string, browser http.Header) (location, session string) {
	t.Helper()
	h := http.Header{"Accept": {"text/html,application/xhtml+xml"}}
	if c := browser.Get("Cookie"); c != "" {
		h.Set("Cookie", c)
	}
	resp, _ := e.do(t, "GET", link, h)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("opening %s = %d, want 303", link, resp.StatusCode)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("opening %s: Cache-Control %q, want no-store (the link must not be kept)", link, cc)
	}
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie && c.MaxAge >= 0 && c.Value != "" {
			session = c.Name + "=" + c.Value
		}
	}
	return resp.Header.Get("Location"), session
}

// TestInviteLinkWorksOnce: a link signs one browser in; the same browser
// opening it again goes to its builds; any other browser is told to ask
// for a new link, and a program gets a 410 it can tell apart.
func TestInviteLinkWorksOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "E")
	admin := e.adminOf(t, team)
	invited, link := e.invite(t, ext, admin, api.Invite{Email: "grace@example.com"})

	where, laptop := e.openLinkIn(t, link, nil)
	if where != "/builds" || laptop == "" {
		t.Fatalf("the first browser went to %q with session %q; want /builds, signed in", where, laptop)
	}
	// The same browser again (the tester clicks the e-mail twice): its
	// builds, without a second session.
	if where, again := e.openLinkIn(t, link, http.Header{"Cookie": {laptop}}); where != "/builds" || again != "" {
		t.Errorf("the same browser again went to %q (new session %q); want /builds, none", where, again)
	}
	// Another browser: told the link was used, not signed in.
	if where, s := e.openLinkIn(t, link, nil); where != "/login?link=used" || s != "" {
		t.Errorf("a second browser went to %q with session %q; want /login?link=used and none", where, s)
	}
	// Another tester's session in that browser changes nothing.
	_, other := e.invite(t, ext, admin, api.Invite{Email: "alan@example.com"})
	_, alan := e.openLinkIn(t, other, nil)
	if where, s := e.openLinkIn(t, link, http.Header{"Cookie": {alan}}); where != "/login?link=used" || s != "" {
		t.Errorf("Alan's browser opening Grace's used link went to %q with session %q", where, s)
	}
	resp, body := e.do(t, "GET", link, http.Header{"Accept": {"application/json"}})
	p := wantProblem(t, resp, body, 410, api.ProblemInviteUsed)
	if !strings.Contains(p.Detail, "new one") {
		t.Errorf("the used link's problem says %q: want it to say to ask for a new one", p.Detail)
	}
	// The list says when it was used; the first session still works.
	got := testerInList(t, e, ext, admin, invited.ID)
	if got.Status != betaport.TesterActive || got.InviteUsedAt == nil {
		t.Errorf("after the link was used the list shows %+v", got)
	}
	if resp, _ := e.do(t, "GET", api.PathBuilds, http.Header{"Cookie": {laptop}}); resp.StatusCode != 200 {
		t.Errorf("the first browser's session after the second browser's try = %d", resp.StatusCode)
	}

	// A new link: works once more, in the second browser; the old one is
	// gone (replaced, not used).
	resp, body = e.do(t, "POST", api.TesterInvitePath(ext.ID, invited.ID), admin)
	var renewed api.Invited
	if resp.StatusCode != 200 || json.Unmarshal(body, &renewed) != nil || renewed.InviteUsedAt != nil {
		t.Fatalf("a new link = %d %s", resp.StatusCode, body)
	}
	if where, s := e.openLinkIn(t, strings.TrimPrefix(renewed.InviteURL, e.URL), nil); where != "/builds" || s == "" {
		t.Errorf("the new link went to %q (session %q)", where, s)
	}
	if where, _ := e.openLinkIn(t, link, nil); where != "/login?link=invalid" {
		t.Errorf("the replaced link went to %q, want /login?link=invalid", where)
	}
}

// TestInviteLinkRace: browsers opening one link at once sign one in.
func TestInviteLinkRace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "E")
	_, link := e.invite(t, ext, e.adminOf(t, team), api.Invite{Email: "grace@example.com"})
	var wg sync.WaitGroup
	var in, used atomic.Int32
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", e.URL+link, nil)
			req.Header.Set("Accept", "text/html")
			resp, err := noRedirects.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			switch resp.Header.Get("Location") {
			case "/builds":
				in.Add(1)
			case "/login?link=used":
				used.Add(1)
			}
		}()
	}
	wg.Wait()
	if in.Load() != 1 || used.Load() != 5 {
		t.Fatalf("6 browsers at once: %d signed in, %d told it was used; want 1 and 5", in.Load(), used.Load())
	}
}

// noRedirects is a client that shows redirects rather than follow them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestInviteLinkExpires: a link works until its expiry (14 days unless
// the admin says otherwise), then tells the browser so and changes
// nothing; the list shows the expiry; a bad number of days is refused
// with nothing stored.
func TestInviteLinkExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var clock atomic.Int64
	start := time.Now().UTC().Truncate(time.Millisecond)
	clock.Store(start.UnixNano())
	e.App.Now = func() time.Time { return time.Unix(0, clock.Load()) }
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "E")
	admin := e.adminOf(t, team)

	def, defLink := e.invite(t, ext, admin, api.Invite{Email: "default@example.com"})
	if def.InviteExpiresAt == nil || !def.InviteExpiresAt.Equal(start.Add(14*24*time.Hour)) {
		t.Fatalf("a default invite expires at %v, want 14 days from %v", def.InviteExpiresAt, start)
	}
	short, shortLink := e.invite(t, ext, admin, api.Invite{Email: "short@example.com", ExpiresInDays: api.DaysOf(2)})
	if short.InviteExpiresAt == nil || !short.InviteExpiresAt.Equal(start.Add(48*time.Hour)) {
		t.Fatalf("a 2-day invite expires at %v", short.InviteExpiresAt)
	}
	if got := testerInList(t, e, ext, admin, short.ID); got.InviteExpiresAt == nil || !got.InviteExpiresAt.Equal(*short.InviteExpiresAt) || got.InviteUsedAt != nil {
		t.Fatalf("the list shows the 2-day tester as %+v", got)
	}

	// Refused: days out of range or not a number; nothing stored.
	for _, body := range []string{`{"email":"x@example.com","expiresInDays":0.5}`, `{"email":"x@example.com","expiresInDays":-1}`,
		`{"email":"x@example.com","expiresInDays":91}`, `{"email":"x@example.com","expiresInDays":"14"}`} {
		resp, b := e.send(t, "POST", api.TestersPath(ext.ID), admin, json.RawMessage(body))
		if resp.StatusCode != 400 {
			t.Errorf("%s = %d %s, want 400", body, resp.StatusCode, b)
		}
	}
	if _, err := e.DB.FindTesterByEmail(t.Context(), ext.ID, "x@example.com"); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatalf("a refused invite stored a tester (%v)", err)
	}
	resp, b := e.send(t, "POST", api.TestersPath(ext.ID), admin, json.RawMessage(`{"email":"x@example.com","expiresInDays":91}`))
	if p := wantProblem(t, resp, b, 400, api.ProblemBadRequest); p.Param != "expiresInDays" || !strings.Contains(p.Detail, "90") {
		t.Errorf("91 days is refused with %+v: want the field named and the limit given", p)
	}

	// Three days on: the 2-day link is expired, the default one works.
	clock.Store(start.Add(72 * time.Hour).UnixNano())
	if where, s := e.openLinkIn(t, shortLink, nil); where != "/login?link=expired" || s != "" {
		t.Errorf("an expired link went to %q with session %q", where, s)
	}
	resp, b = e.do(t, "GET", shortLink, nil)
	wantProblem(t, resp, b, 410, api.ProblemInviteExpired)
	if got := testerInList(t, e, ext, admin, short.ID); got.Status != betaport.TesterInvited || got.InviteUsedAt != nil || got.LastSeenAt != nil {
		t.Errorf("an expired link changed the tester: %+v", got)
	}
	if where, s := e.openLinkIn(t, defLink, nil); where != "/builds" || s == "" {
		t.Errorf("a 14-day link on day 3 went to %q", where)
	}

	// A new link for the expired tester, for one day, in the optional
	// body; a bad body is refused and the old link stays as it was.
	resp, b = e.send(t, "POST", api.TesterInvitePath(ext.ID, short.ID), admin, json.RawMessage(`{"expiresInDays":100}`))
	if p := wantProblem(t, resp, b, 400, api.ProblemBadRequest); p.Param != "expiresInDays" {
		t.Errorf("a new link for 100 days is refused with %+v", p)
	}
	if where, _ := e.openLinkIn(t, shortLink, nil); where != "/login?link=expired" {
		t.Errorf("after a refused new link, the old link went to %q", where)
	}
	resp, b = e.send(t, "POST", api.TesterInvitePath(ext.ID, short.ID), admin, json.RawMessage(`{"expiresInDays":1}`))
	var renewed api.Invited
	if resp.StatusCode != 200 || json.Unmarshal(b, &renewed) != nil || renewed.InviteExpiresAt == nil ||
		!renewed.InviteExpiresAt.Equal(start.Add(96*time.Hour)) {
		t.Fatalf("a one-day new link = %d %s", resp.StatusCode, b)
	}
	if where, s := e.openLinkIn(t, strings.TrimPrefix(renewed.InviteURL, e.URL), nil); where != "/builds" || s == "" {
		t.Errorf("the one-day new link went to %q", where)
	}
}

// testerInList finds one tester in the admin's list.
func testerInList(t *testing.T, e *env, ext *betaport.Extension, admin http.Header, id int64) betaport.Tester {
	t.Helper()
	resp, body := e.do(t, "GET", api.TestersPath(ext.ID)+"?limit=100", admin)
	var page api.Page[betaport.Tester]
	if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil {
		t.Fatalf("testers = %d %s", resp.StatusCode, body)
	}
	for _, tt := range page.Data {
		if tt.ID == id {
			return tt
		}
	}
	t.Fatalf("tester %d is not in the list", id)
	return betaport.Tester{}
}

// TestDeadLinkNoticeIsInTheServedPage: the sign-in page a dead link sends
// a browser to says why in the HTML the server sends, before the app runs.
func TestDeadLinkNoticeIsInTheServedPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for link, says := range map[string]string{"used": "another browser", "expired": "expired before it was used", "invalid": "no longer works"} {
		resp, body := e.do(t, "GET", "/login?link="+link, http.Header{"Accept": {"text/html"}})
		if resp.StatusCode != 200 || !strings.Contains(string(body), says) {
			t.Errorf("/login?link=%s = %d; the page does not say %q", link, resp.StatusCode, says)
		}
	}
	if _, body := e.do(t, "GET", "/login", http.Header{"Accept": {"text/html"}}); strings.Contains(string(body), "Ask the extension") {
		t.Error("the sign-in page without a dead link speaks of one")
	}
}
