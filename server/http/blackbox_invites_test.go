package http_test

// Black-box tests of issue 29 ("invite links never expire and work for any
// number of browsers"), written from the OpenAPI document and DESIGN.md
// only: invite links expire (14 days by default, 1 to 90 settable), sign
// one browser in once, and say why when they do not. Every request goes
// through the real handler over HTTP; the only thing reached around it is
// the server's clock (Server.Now), which the tests move instead of
// waiting days.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
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
)

const bbiDay = 24 * time.Hour

// bbiTester is a tester as the OpenAPI document's Tester (and Invited)
// schema describes it.
type bbiTester struct {
	ID              int64      `json:"id"`
	ExtensionID     int64      `json:"extensionId"`
	Email           string     `json:"email"`
	Name            string     `json:"name"`
	Status          string     `json:"status"`
	CreatedAt       time.Time  `json:"createdAt"`
	LastSeenAt      *time.Time `json:"lastSeenAt"`
	InvitedAt       *time.Time `json:"invitedAt"`
	InviteExpiresAt *time.Time `json:"inviteExpiresAt"`
	InviteUsedAt    *time.Time `json:"inviteUsedAt"`
	InviteURL       string     `json:"inviteUrl"`
}

// bbiClock is a server clock the test moves.
type bbiClock struct{ ns atomic.Int64 }

func (c *bbiClock) now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *bbiClock) set(t time.Time)     { c.ns.Store(t.UnixNano()) }
func (c *bbiClock) add(d time.Duration) { c.ns.Add(int64(d)) }

// bbiEnv is a fresh service with one extension of a Professional team,
// its admin, and a clock of the test's, started at a whole second.
type bbiEnv struct {
	*env
	ext   *betaport.Extension
	admin http.Header
	clock *bbiClock
	t0    time.Time
}

func bbiStart(t *testing.T) *bbiEnv {
	t.Helper()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Invite Lab")
	clock := &bbiClock{}
	t0 := time.Now().UTC().Truncate(time.Second)
	clock.set(t0)
	e.App.Now = clock.now // before any request
	return &bbiEnv{env: e, ext: ext, admin: e.adminOf(t, team), clock: clock, t0: t0}
}

// raw sends body exactly as given (JSON-typed when not empty), with header.
func (b *bbiEnv) raw(t *testing.T, method, path string, header http.Header, body string) (*http.Response, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, b.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept-Encoding", "identity")
	return b.roundTrip(t, req)
}

func (b *bbiEnv) decodeTester(t *testing.T, what string, resp *http.Response, body []byte, status int) bbiTester {
	t.Helper()
	var tt bbiTester
	if resp.StatusCode != status {
		t.Fatalf("%s = %d %s, want %d", what, resp.StatusCode, body, status)
	}
	if err := json.Unmarshal(body, &tt); err != nil {
		t.Fatalf("%s: %s: %v", what, body, err)
	}
	return tt
}

// invite posts body (raw JSON) as the admin and wants 201 with a link.
func (b *bbiEnv) invite(t *testing.T, body string) bbiTester {
	t.Helper()
	resp, raw := b.raw(t, "POST", api.TestersPath(b.ext.ID), b.admin, body)
	tt := b.decodeTester(t, "invite "+body, resp, raw, http.StatusCreated)
	if !strings.HasPrefix(tt.InviteURL, b.URL+"/t/") || len(tt.InviteURL) < len(b.URL)+len("/t/")+16 {
		t.Fatalf("invite %s: inviteUrl %q is not a link of this service", body, tt.InviteURL)
	}
	return tt
}

func (b *bbiEnv) inviteEmail(t *testing.T, days int) bbiTester {
	t.Helper()
	if days == 0 {
		return b.invite(t, fmt.Sprintf(`{"email": %q, "name": "Tess"}`, uniqueEmail("bbi")))
	}
	return b.invite(t, fmt.Sprintf(`{"email": %q, "name": "Tess", "expiresInDays": %d}`, uniqueEmail("bbi"), days))
}

// newLink asks for a new link (body "" sends none).
func (b *bbiEnv) newLink(t *testing.T, id int64, body string) bbiTester {
	t.Helper()
	resp, raw := b.raw(t, "POST", api.TesterInvitePath(b.ext.ID, id), b.admin, body)
	tt := b.decodeTester(t, "new link "+body, resp, raw, http.StatusOK)
	if !strings.HasPrefix(tt.InviteURL, b.URL+"/t/") {
		t.Fatalf("new link: inviteUrl %q", tt.InviteURL)
	}
	return tt
}

func (b *bbiEnv) restore(t *testing.T, id int64, body string) bbiTester {
	t.Helper()
	resp, raw := b.raw(t, "POST", api.TesterRestorePath(b.ext.ID, id), b.admin, body)
	tt := b.decodeTester(t, "restore "+body, resp, raw, http.StatusOK)
	if !strings.HasPrefix(tt.InviteURL, b.URL+"/t/") {
		t.Fatalf("restore: inviteUrl %q", tt.InviteURL)
	}
	return tt
}

func (b *bbiEnv) revoke(t *testing.T, id int64) {
	t.Helper()
	if resp, body := b.do(t, "DELETE", api.TesterPath(b.ext.ID, id), b.admin); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoke = %d %s", resp.StatusCode, body)
	}
}

// listed is the tester as the testers list shows it.
func (b *bbiEnv) listed(t *testing.T, id int64) bbiTester {
	t.Helper()
	for _, tt := range b.list(t) {
		if tt.ID == id {
			return tt
		}
	}
	t.Fatalf("tester %d is not in the list", id)
	return bbiTester{}
}

func (b *bbiEnv) list(t *testing.T) []bbiTester {
	t.Helper()
	resp, body := b.do(t, "GET", api.TestersPath(b.ext.ID)+"?limit=100", b.admin)
	var page struct {
		Data       []bbiTester `json:"data"`
		NextCursor string      `json:"nextCursor"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil {
		t.Fatalf("testers list = %d %s", resp.StatusCode, body)
	}
	if page.NextCursor != "" {
		t.Fatal("more than 100 testers: the test reads one page")
	}
	return page.Data
}

// listBody is the testers list's first page, as sent.
func (b *bbiEnv) listBody(t *testing.T) string {
	t.Helper()
	resp, body := b.do(t, "GET", api.TestersPath(b.ext.ID)+"?limit=100", b.admin)
	if resp.StatusCode != 200 {
		t.Fatalf("testers list = %d %s", resp.StatusCode, body)
	}
	return string(body)
}

// opened is what opening an invite link answered.
type opened struct {
	status   int
	location string // the redirect's path and query
	session  string // a session cookie it set (not one it cleared)
	noStore  bool
	body     []byte
	resp     *http.Response
}

func (o opened) String() string {
	return fmt.Sprintf("%d → %q (session set: %v, no-store: %v) %.200s", o.status, o.location, o.session != "", o.noStore, o.body)
}

func asOpened(resp *http.Response, body []byte) opened {
	o := opened{status: resp.StatusCode, body: body, resp: resp,
		noStore: strings.Contains(resp.Header.Get("Cache-Control"), "no-store")}
	if loc := resp.Header.Get("Location"); loc != "" {
		if u, err := url.Parse(loc); err == nil {
			o.location = u.RequestURI()
		} else {
			o.location = loc
		}
	}
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie && c.Value != "" && c.MaxAge >= 0 && (c.Expires.IsZero() || c.Expires.After(time.Now())) {
			o.session = c.Value
		}
	}
	return o
}

// browser headers: what a browser sends for a link clicked in a mail, with
// the cookies it holds (none: a browser that never saw this service).
func browserHeader(cookie string) http.Header {
	h := http.Header{"Accept": {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}}
	if cookie != "" {
		h.Set("Cookie", api.SessionCookie+"="+cookie)
	}
	return h
}

// open opens link in a browser holding cookie ("" for a fresh one).
func (b *bbiEnv) open(t *testing.T, link, cookie string) opened {
	t.Helper()
	resp, body := b.do(t, "GET", strings.TrimPrefix(link, b.URL), browserHeader(cookie))
	return asOpened(resp, body)
}

// openProgram opens link as a program does (curl, a script): no text/html.
func (b *bbiEnv) openProgram(t *testing.T, link string) opened {
	t.Helper()
	resp, body := b.do(t, "GET", strings.TrimPrefix(link, b.URL), http.Header{"Accept": {"application/json"}})
	return asOpened(resp, body)
}

// signsIn opens link in a fresh browser and wants it signed in; it returns
// the session.
func (b *bbiEnv) signsIn(t *testing.T, what, link string) string {
	t.Helper()
	o := b.open(t, link, "")
	if o.status != http.StatusSeeOther || o.location != "/builds" || o.session == "" {
		t.Fatalf("%s: a fresh browser got %s, want 303 to /builds with a session", what, o)
	}
	if !o.noStore {
		t.Errorf("%s: the sign-in answer is cacheable (Cache-Control %q), want no-store", what, o.resp.Header.Get("Cache-Control"))
	}
	return o.session
}

// refused wants a browser's open of link sent to /login?link=why, without
// a session, and not cached.
func (b *bbiEnv) refused(t *testing.T, what, link, cookie, why string) {
	t.Helper()
	o := b.open(t, link, cookie)
	if o.status != http.StatusSeeOther || o.location != "/login?link="+why {
		t.Errorf("%s: got %s, want 303 to /login?link=%s", what, o, why)
	}
	if o.session != "" {
		t.Errorf("%s: the refused link set a session cookie", what)
	}
	if !o.noStore {
		t.Errorf("%s: the answer is cacheable (Cache-Control %q), want no-store", what, o.resp.Header.Get("Cache-Control"))
	}
}

// whoIs is the session's kind and tester id (GET /api/session).
func (b *bbiEnv) whoIs(t *testing.T, session string) (status int, kind string, testerID int64) {
	t.Helper()
	resp, body := b.do(t, "GET", api.PathSession, http.Header{"Cookie": {api.SessionCookie + "=" + session}})
	if resp.StatusCode != 200 {
		return resp.StatusCode, "", 0
	}
	var s struct {
		Kind   string     `json:"kind"`
		Tester *bbiTester `json:"tester"`
	}
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatalf("GET /api/session: %s: %v", body, err)
	}
	if s.Tester != nil {
		testerID = s.Tester.ID
	}
	return resp.StatusCode, s.Kind, testerID
}

func wantTime(t *testing.T, what string, got *time.Time, want time.Time) {
	t.Helper()
	if got == nil {
		t.Errorf("%s is absent, want %v", what, want)
		return
	}
	if !got.Equal(want) {
		t.Errorf("%s = %v, want %v (%v off)", what, got.UTC(), want.UTC(), got.Sub(want))
	}
}

// TestBlackBoxInviteSingleUseAcrossBrowsers: the first browser to open a
// link is signed in; that browser opening it again lands on its builds;
// every other browser (a fresh one, another tester's, the admin's, the
// first one after signing out) is sent to the sign-in page with
// link=used, gets no session, and leaves the tester as it was; a program
// gets 410 invite-used.
func TestBlackBoxInviteSingleUseAcrossBrowsers(t *testing.T) {
	t.Parallel()
	b := bbiStart(t)
	inv := b.invite(t, `{"email": "ada@example.com", "name": "Ada", "expiresInDays": 7}`)
	if inv.Status != "invited" || inv.InviteUsedAt != nil {
		t.Errorf("a new invite is %s, used %v: want invited, unused", inv.Status, inv.InviteUsedAt)
	}
	wantTime(t, "the invite answer's inviteExpiresAt", inv.InviteExpiresAt, b.t0.Add(7*bbiDay))
	if l := b.listed(t, inv.ID); l.InviteUsedAt != nil || l.InviteExpiresAt == nil || !l.InviteExpiresAt.Equal(*inv.InviteExpiresAt) {
		t.Errorf("the list shows the new tester with inviteExpiresAt %v, inviteUsedAt %v; want %v and none", l.InviteExpiresAt, l.InviteUsedAt, inv.InviteExpiresAt)
	}

	// Another tester of the extension, signed in with their own link.
	other := b.inviteEmail(t, 0)
	otherSession := b.signsIn(t, "the other tester's link", other.InviteURL)

	b.clock.add(time.Hour)
	first := b.signsIn(t, "the first open", inv.InviteURL)
	if st, kind, id := b.whoIs(t, first); st != 200 || kind != "tester" || id != inv.ID {
		t.Fatalf("the first browser's session is %d %q tester %d, want tester %d", st, kind, id, inv.ID)
	}
	used := b.listed(t, inv.ID)
	if used.Status != "active" {
		t.Errorf("after signing in the tester is %q, want active", used.Status)
	}
	wantTime(t, "inviteUsedAt after the first open", used.InviteUsedAt, b.t0.Add(time.Hour))

	// The same browser again (a second click on the mail's link).
	if o := b.open(t, inv.InviteURL, first); o.status != http.StatusSeeOther || o.location != "/builds" {
		t.Errorf("the same browser opening its link again got %s, want 303 to /builds", o)
	} else if !o.noStore {
		t.Errorf("the same browser's second open is cacheable: %q", o.resp.Header.Get("Cache-Control"))
	}
	if st, _, id := b.whoIs(t, first); st != 200 || id != inv.ID {
		t.Errorf("after opening the link again the first browser's session is %d (tester %d)", st, id)
	}
	before := b.listed(t, inv.ID)

	// Every other browser.
	b.refused(t, "a second, fresh browser", inv.InviteURL, "", "used")
	b.refused(t, "a browser signed in as another tester", inv.InviteURL, otherSession, "used")
	if st, _, id := b.whoIs(t, otherSession); st != 200 || id != other.ID {
		t.Errorf("the other tester's browser is now %d tester %d, want still tester %d", st, id, other.ID)
	}
	adminCookie := strings.TrimPrefix(b.admin.Get("Cookie"), api.SessionCookie+"=")
	b.refused(t, "the admin's browser", inv.InviteURL, adminCookie, "used")
	if st, kind, _ := b.whoIs(t, adminCookie); st != 200 || kind != "admin" {
		t.Errorf("the admin's browser is now %d %q, want still the admin", st, kind)
	}
	b.refused(t, "a browser with a made-up session cookie", inv.InviteURL, credential.NewToken(), "used")
	p := b.openProgram(t, inv.InviteURL)
	wantProblem(t, p.resp, p.body, http.StatusGone, "/problems/invite-used")
	if p.session != "" {
		t.Error("a program opening the used link got a session")
	}

	// Signed out, the first browser is a browser like any other.
	if resp, body := b.do(t, "DELETE", api.PathSession, http.Header{"Cookie": {api.SessionCookie + "=" + first}}); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("sign out = %d %s", resp.StatusCode, body)
	}
	b.refused(t, "the first browser after signing out", inv.InviteURL, first, "used")

	after := b.listed(t, inv.ID)
	if after.Status != before.Status || !timesEqual(after.InviteUsedAt, before.InviteUsedAt) ||
		!timesEqual(after.InviteExpiresAt, before.InviteExpiresAt) || !timesEqual(after.LastSeenAt, before.LastSeenAt) {
		t.Errorf("refused opens changed the tester:\nbefore %+v\nafter  %+v", before, after)
	}
}

func timesEqual(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// TestBlackBoxInviteRacingOpens: browsers that open one link at the same
// moment (a link pasted in a team chat) get one session among them.
func TestBlackBoxInviteRacingOpens(t *testing.T) {
	t.Parallel()
	b := bbiStart(t)
	for round := range 3 {
		inv := b.inviteEmail(t, 0)
		const n = 12
		var wg sync.WaitGroup
		results := make([]opened, n)
		errs := make([]error, n)
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, err := http.NewRequest("GET", inv.InviteURL, nil)
				if err != nil {
					errs[i] = err
					return
				}
				req.Header = browserHeader("")
				<-start
				resp, err := http.DefaultTransport.RoundTrip(req)
				if err != nil {
					errs[i] = err
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				results[i] = asOpened(resp, body)
			}()
		}
		close(start)
		wg.Wait()
		var winners []string
		for i, o := range results {
			if errs[i] != nil {
				t.Fatalf("round %d, browser %d: %v", round, i, errs[i])
			}
			switch {
			case o.status == http.StatusSeeOther && o.location == "/builds" && o.session != "":
				winners = append(winners, o.session)
			case o.status == http.StatusSeeOther && o.location == "/login?link=used" && o.session == "":
			default:
				t.Errorf("round %d, browser %d: %s, want 303 to /builds with a session or to /login?link=used without", round, i, o)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: %d of %d browsers opening one link at once were signed in, want 1", round, len(winners), n)
		}
		if st, _, id := b.whoIs(t, winners[0]); st != 200 || id != inv.ID {
			t.Errorf("round %d: the winner's session is %d tester %d", round, st, id)
		}
		if l := b.listed(t, inv.ID); l.Status != "active" || l.InviteUsedAt == nil {
			t.Errorf("round %d: after the race the tester is %s, used at %v", round, l.Status, l.InviteUsedAt)
		}
		// And the one signed in is the one browser that opens it again.
		if o := b.open(t, inv.InviteURL, winners[0]); o.location != "/builds" {
			t.Errorf("round %d: the winner reopening got %s", round, o)
		}
	}
}

// TestBlackBoxInviteExpiryBoundaries: a link works until the instant its
// inviteExpiresAt says, not at it or after; 1, 7 and 90 days and the
// default (14) are counted from the invite; an expired link sends a
// browser to link=expired and a program gets 410 invite-expired, and
// neither changes the tester; a used link's expiry does not lock out the
// browser it signed in.
func TestBlackBoxInviteExpiryBoundaries(t *testing.T) {
	t.Parallel()
	b := bbiStart(t)
	for _, tt := range []struct {
		body string
		days int
	}{
		{`{"email": %q, "name": "T"}`, 14},
		{`{"email": %q, "name": "T", "expiresInDays": 1}`, 1},
		{`{"email": %q, "expiresInDays": 7}`, 7},
		{`{"email": %q, "name": "T", "expiresInDays": 90}`, 90},
	} {
		inv := b.invite(t, fmt.Sprintf(tt.body, uniqueEmail("bbi")))
		wantTime(t, fmt.Sprintf("inviteExpiresAt of a %d-day invite", tt.days), inv.InviteExpiresAt, b.t0.Add(time.Duration(tt.days)*bbiDay))
		wantTime(t, fmt.Sprintf("the list's inviteExpiresAt of a %d-day invite", tt.days), b.listed(t, inv.ID).InviteExpiresAt, b.t0.Add(time.Duration(tt.days)*bbiDay))
	}

	// Three 7-day links made at t0.
	justBefore, at, after := b.inviteEmail(t, 7), b.inviteEmail(t, 7), b.inviteEmail(t, 7)
	exp := b.t0.Add(7 * bbiDay)

	b.clock.set(exp.Add(-time.Millisecond))
	s := b.signsIn(t, "a 7-day link a millisecond before it expires", justBefore.InviteURL)

	b.clock.set(exp)
	b.refused(t, "a 7-day link at the instant it expires", at.InviteURL, "", "expired")
	p := b.openProgram(t, at.InviteURL)
	wantProblem(t, p.resp, p.body, http.StatusGone, "/problems/invite-expired")

	b.clock.set(exp.Add(time.Millisecond))
	b.refused(t, "a 7-day link a millisecond after it expired", after.InviteURL, "", "expired")
	b.refused(t, "the expired link opened again", after.InviteURL, "", "expired")
	p = b.openProgram(t, after.InviteURL)
	wantProblem(t, p.resp, p.body, http.StatusGone, "/problems/invite-expired")
	for _, x := range []bbiTester{at, after} {
		l := b.listed(t, x.ID)
		if l.Status != "invited" || l.InviteUsedAt != nil || !timesEqual(l.InviteExpiresAt, &exp) {
			t.Errorf("an expired link's refusal changed the tester: %+v", l)
		}
	}

	// The browser that used its link before the expiry still lands on its
	// builds after it; any other browser still gets nothing.
	b.clock.set(exp.Add(30 * bbiDay))
	if o := b.open(t, justBefore.InviteURL, s); o.status != http.StatusSeeOther || o.location != "/builds" {
		t.Errorf("the browser a link signed in, opening it after its expiry, got %s, want /builds", o)
	}
	o := b.open(t, justBefore.InviteURL, "")
	if o.session != "" || (o.location != "/login?link=used" && o.location != "/login?link=expired") {
		t.Errorf("another browser opening a used link after its expiry got %s, want /login?link=used (or expired) and no session", o)
	}
}

// bbiBadDays are values of expiresInDays the contract (an integer, 1 to
// 90) refuses.
var bbiBadDays = []string{
	`0`, `-1`, `91`, `100`, `1e2`, `0.5`, `7.5`, `-0.5`, `"7"`, `""`, `null`, `true`, `[7]`, `{"days": 7}`,
	`2147483648`, `4294967297`, `9223372036854775807`, `9223372036854775808`, `-9223372036854775808`,
	`18446744073709551623`, `1e20`, `1e400`, `106751`, `106752`,
}

// TestBlackBoxInviteBadExpiresInDaysStoresNothing: an invite whose
// expiresInDays is not an integer from 1 to 90 is refused with a 400
// problem naming the field, and stores nothing: the list is as it was, and
// the same e-mail is then invited as if nothing happened.
func TestBlackBoxInviteBadExpiresInDaysStoresNothing(t *testing.T) {
	t.Parallel()
	b := bbiStart(t)
	b.inviteEmail(t, 0) // a list with something in it
	listBefore := b.listBody(t)
	emails := map[string]string{} // e-mail → the value it was sent with
	for i, v := range bbiBadDays {
		email := fmt.Sprintf("careful%d@example.com", i)
		emails[email] = v
		t.Run(v, func(t *testing.T) {
			resp, body := b.raw(t, "POST", api.TestersPath(b.ext.ID), b.admin, fmt.Sprintf(`{"email": %q, "name": "Careful", "expiresInDays": %s}`, email, v))
			p := wantProblem(t, resp, body, http.StatusBadRequest, api.ProblemBadRequest)
			if p.Param != "expiresInDays" {
				t.Errorf("the problem's param is %q, want expiresInDays: %s", p.Param, body)
			}
		})
	}
	if after := b.listBody(t); after != listBefore {
		t.Errorf("refused invites changed the testers list:\nbefore %s\nafter  %s", listBefore, after)
		for _, x := range b.list(t) {
			if v, ok := emails[x.Email]; ok {
				t.Errorf("expiresInDays %s stored %s, invited, link expiring at %v", v, x.Email, x.InviteExpiresAt)
			}
		}
	}
	// Each e-mail is then invited as if nothing had happened.
	for email := range emails {
		resp, body := b.raw(t, "POST", api.TestersPath(b.ext.ID), b.admin, fmt.Sprintf(`{"email": %q, "name": "Careful", "expiresInDays": 3}`, email))
		if resp.StatusCode != http.StatusCreated {
			t.Errorf("inviting %s after its refused invite (expiresInDays %s) = %d %s", email, emails[email], resp.StatusCode, body)
			continue
		}
		wantTime(t, "an invite after the refusals", b.decodeTester(t, "invite", resp, body, http.StatusCreated).InviteExpiresAt, b.t0.Add(3*bbiDay))
	}
}

// wantBadDays checks, without stopping the test, that an answer is the
// 400 problem about expiresInDays.
func wantBadDays(t *testing.T, what string, resp *http.Response, body []byte, param bool) {
	t.Helper()
	var p api.Problem
	switch {
	case resp.StatusCode != http.StatusBadRequest:
		t.Errorf("%s = %d, want 400: %.300s", what, resp.StatusCode, body)
	case resp.Header.Get("Content-Type") != api.ProblemContentType || json.Unmarshal(body, &p) != nil:
		t.Errorf("%s: not a problem: %s %.300s", what, resp.Header.Get("Content-Type"), body)
	case p.Type != api.ProblemBadRequest || len(p.Detail) < 10:
		t.Errorf("%s: problem %+v, want %s with a detail", what, p, api.ProblemBadRequest)
	case param && p.Param != "expiresInDays":
		t.Errorf("%s: the problem's param is %q, want expiresInDays (detail %q)", what, p.Param, p.Detail)
	}
}

// TestBlackBoxInviteBadNewLinkAndRestoreKeepTheOldLink: a new link or a
// restore whose body is refused changes nothing: the old link is not
// replaced (it still signs in), and a revoked tester stays revoked.
func TestBlackBoxInviteBadNewLinkAndRestoreKeepTheOldLink(t *testing.T) {
	t.Parallel()
	b := bbiStart(t)
	type pair struct {
		body         string
		param        bool
		keep, revoke bbiTester
	}
	var pairs []pair
	for _, v := range bbiBadDays {
		pairs = append(pairs, pair{body: `{"expiresInDays": ` + v + `}`, param: true})
	}
	// Bodies that are not the object at all.
	for _, body := range []string{`7`, `"7"`, `[]`, `null`, `{"expiresInDays": 7`, `{"expiresInDays": 7}{}`, `{"expiresInDays": 7} 8`} {
		pairs = append(pairs, pair{body: body})
	}
	for i := range pairs {
		pairs[i].keep = b.inviteEmail(t, 5)
		pairs[i].revoke = b.inviteEmail(t, 5)
		b.revoke(t, pairs[i].revoke.ID)
	}
	listBefore := b.listBody(t)
	for _, p := range pairs {
		resp, raw := b.raw(t, "POST", api.TesterInvitePath(b.ext.ID, p.keep.ID), b.admin, p.body)
		wantBadDays(t, "a new link with "+p.body, resp, raw, p.param)
		resp, raw = b.raw(t, "POST", api.TesterRestorePath(b.ext.ID, p.revoke.ID), b.admin, p.body)
		wantBadDays(t, "a restore with "+p.body, resp, raw, p.param)
	}
	if after := b.listBody(t); after != listBefore {
		t.Errorf("refused new links and restores changed the testers list")
		for _, p := range pairs {
			if l := b.listed(t, p.keep.ID); !timesEqual(l.InvitedAt, p.keep.InvitedAt) || !timesEqual(l.InviteExpiresAt, p.keep.InviteExpiresAt) {
				t.Errorf("a new link with %s was made: invited at %v, expires at %v", p.body, l.InvitedAt, l.InviteExpiresAt)
			}
			if l := b.listed(t, p.revoke.ID); l.Status != "revoked" {
				t.Errorf("a restore with %s restored the tester: %s, expires at %v", p.body, l.Status, l.InviteExpiresAt)
			}
		}
	}
	for _, p := range pairs {
		if o := b.open(t, p.keep.InviteURL, ""); o.location != "/builds" || o.session == "" {
			t.Errorf("the link of before a new link with %s no longer signs in: %s", p.body, o)
		}
	}
}

// TestBlackBoxInviteNewLinkAfterUseAndExpiry: a new link for a tester whose
// link was used, or expired, works for as long as it was asked (or the
// default without a body, or with an empty object); the answer and the
// list say when it expires and that it is unused; the old link is
// replaced (link=invalid, 404 for programs) and the new one signs in.
func TestBlackBoxInviteNewLinkAfterUseAndExpiry(t *testing.T) {
	t.Parallel()
	b := bbiStart(t)

	// Used, then a 30-day new link a day later.
	ada := b.inviteEmail(t, 7)
	b.clock.add(time.Hour)
	b.signsIn(t, "Ada's first link", ada.InviteURL)
	b.clock.set(b.t0.Add(bbiDay))
	fresh := b.newLink(t, ada.ID, `{"expiresInDays": 30}`)
	if fresh.InviteURL == ada.InviteURL {
		t.Fatal("the new link is the old one")
	}
	wantTime(t, "the new link's inviteExpiresAt", fresh.InviteExpiresAt, b.t0.Add(31*bbiDay))
	if fresh.InviteUsedAt != nil {
		t.Errorf("the new link's answer says it was used at %v", fresh.InviteUsedAt)
	}
	l := b.listed(t, ada.ID)
	wantTime(t, "the list's inviteExpiresAt after the new link", l.InviteExpiresAt, b.t0.Add(31*bbiDay))
	if l.InviteUsedAt != nil {
		t.Errorf("after a new link the list says it was used at %v", l.InviteUsedAt)
	}
	b.refused(t, "Ada's used, replaced link", ada.InviteURL, "", "invalid")
	p := b.openProgram(t, ada.InviteURL)
	wantProblem(t, p.resp, p.body, http.StatusNotFound, api.ProblemNotFound)
	s := b.signsIn(t, "Ada's new link", fresh.InviteURL)
	if st, _, id := b.whoIs(t, s); st != 200 || id != ada.ID {
		t.Errorf("Ada's new link signed in %d tester %d", st, id)
	}
	b.refused(t, "Ada's new link in a second browser", fresh.InviteURL, "", "used")

	// Expired, then a new link without a body (the default), and one with
	// an empty object.
	bo := b.inviteEmail(t, 1)
	b.clock.set(b.t0.Add(10 * bbiDay))
	b.refused(t, "Bo's expired link", bo.InviteURL, "", "expired")
	noBody := b.newLink(t, bo.ID, "")
	wantTime(t, "a new link without a body", noBody.InviteExpiresAt, b.t0.Add(24*bbiDay))
	b.clock.add(time.Hour)
	empty := b.newLink(t, bo.ID, `{}`)
	wantTime(t, "a new link with {}", empty.InviteExpiresAt, b.t0.Add(24*bbiDay+time.Hour))
	b.refused(t, "Bo's expired link after a new one", bo.InviteURL, "", "invalid")
	b.refused(t, "Bo's replaced new link", noBody.InviteURL, "", "invalid")
	b.signsIn(t, "Bo's newest link", empty.InviteURL)
	if l := b.listed(t, bo.ID); l.Status != "active" || l.InviteUsedAt == nil {
		t.Errorf("after signing in with the newest link Bo is %+v", l)
	}
}

// reachesBuilds says whether a browser holding session may list builds
// (GET /api/builds answers 200).
func (b *bbiEnv) reachesBuilds(t *testing.T, session string) bool {
	t.Helper()
	if session == "" {
		return false
	}
	resp, _ := b.do(t, "GET", api.PathBuilds, http.Header{"Cookie": {api.SessionCookie + "=" + session}})
	return resp.StatusCode == http.StatusOK
}

// TestBlackBoxInviteRestore: a revoked tester's link, used or not, expired
// or not, leads to the page that says access ended, and whatever cookie
// that page needs grants nothing, neither then nor after a restore (a
// browser that never signed in must not get in through a revoked link
// once the tester is restored); restore makes a new link for as long as
// asked (the default without a body), and the old one no longer leads
// anywhere.
func TestBlackBoxInviteRestore(t *testing.T) {
	t.Parallel()
	b := bbiStart(t)
	unused, used, expired := b.inviteEmail(t, 7), b.inviteEmail(t, 7), b.inviteEmail(t, 1)
	own := b.signsIn(t, "a link then revoked", used.InviteURL)
	if !b.reachesBuilds(t, own) {
		t.Fatal("a signed-in tester cannot list their builds")
	}
	b.clock.set(b.t0.Add(2 * bbiDay))
	for _, x := range []bbiTester{unused, used, expired} {
		b.revoke(t, x.ID)
	}
	if b.reachesBuilds(t, own) {
		t.Error("a revoked tester's session still lists builds")
	}
	// strangers are the sessions browsers that never signed in got on the
	// way to the access-ended page.
	strangers := map[string]string{}
	ended := func(what, link, cookie string) {
		t.Helper()
		o := b.open(t, link, cookie)
		if o.status != http.StatusSeeOther || o.location != "/ended" {
			t.Errorf("%s: %s, want 303 to /ended", what, o)
		}
		if b.reachesBuilds(t, o.session) {
			t.Errorf("%s: the access-ended answer gave a session that lists builds", what)
		}
		if o.session != "" && cookie == "" {
			strangers[what] = o.session
		}
	}
	ended("a revoked tester's unused link", unused.InviteURL, "")
	ended("a revoked tester's used link, another browser", used.InviteURL, "")
	ended("a revoked tester's used link, their own browser", used.InviteURL, own)
	ended("a revoked tester's expired link", expired.InviteURL, "")
	for _, x := range []bbiTester{unused, used, expired} {
		if l := b.listed(t, x.ID); l.Status != "revoked" {
			t.Errorf("opening a revoked tester's link made them %s", l.Status)
		}
	}

	r := b.restore(t, unused.ID, `{"expiresInDays": 2}`)
	if r.Status != "invited" || r.InviteUsedAt != nil || r.InviteURL == unused.InviteURL {
		t.Errorf("restore answered %+v, want invited, unused, a new link", r)
	}
	wantTime(t, "a 2-day restore's inviteExpiresAt", r.InviteExpiresAt, b.t0.Add(4*bbiDay))
	r2 := b.restore(t, used.ID, "")
	wantTime(t, "a restore without a body", r2.InviteExpiresAt, b.t0.Add(16*bbiDay))
	if r2.InviteUsedAt != nil {
		t.Errorf("the restored tester's new link says used at %v", r2.InviteUsedAt)
	}
	wantTime(t, "the list after the restore", b.listed(t, used.ID).InviteExpiresAt, b.t0.Add(16*bbiDay))
	r3 := b.restore(t, expired.ID, `{"expiresInDays": 1}`)

	// Browsers that only ever met the access-ended page are still out.
	for what, session := range strangers {
		if b.reachesBuilds(t, session) {
			t.Errorf("after the restore, the session a stranger's browser got from %s lists the tester's builds: "+
				"the revoked link signed a second browser in", what)
		}
	}

	b.refused(t, "the link of before the restore", unused.InviteURL, "", "invalid")
	s := b.signsIn(t, "the restored tester's new link", r.InviteURL)
	if !b.reachesBuilds(t, s) {
		t.Error("the restored tester's new session cannot list builds")
	}
	b.refused(t, "the restored link in a second browser", r.InviteURL, "", "used")
	b.signsIn(t, "the restored expired tester's new link", r3.InviteURL)
	// The restored link expires too.
	b.clock.set(b.t0.Add(16 * bbiDay))
	b.refused(t, "a restored link at its expiry", r2.InviteURL, "", "expired")
}

// TestBlackBoxInviteUnknownLinks: a link that never existed, however it is
// spelt, signs nobody in: browsers go to link=invalid, programs get 404.
func TestBlackBoxInviteUnknownLinks(t *testing.T) {
	t.Parallel()
	b := bbiStart(t)
	inv := b.inviteEmail(t, 0)
	token := strings.TrimPrefix(inv.InviteURL, b.URL+"/t/")
	for _, tok := range []string{
		credential.NewToken(),
		"x",
		strings.ToUpper(token),
		token[:len(token)-1],
		token + "A",
		strings.Repeat("a", 3000),
		"%20" + token,
		"..%2F..%2Fapi%2Fsession",
		"%00",
		"%27%20OR%201%3D1--",
	} {
		if tok == token {
			continue
		}
		o := b.open(t, "/t/"+tok, "")
		if o.session != "" || o.location != "/login?link=invalid" {
			t.Errorf("/t/%.40s in a browser: %s, want /login?link=invalid without a session", tok, o)
		}
		p := b.openProgram(t, "/t/"+tok)
		if p.status != http.StatusNotFound || p.session != "" {
			t.Errorf("/t/%.40s as a program: %s, want 404", tok, p)
		}
	}
	// None of that touched the real link.
	if l := b.listed(t, inv.ID); l.Status != "invited" || l.InviteUsedAt != nil {
		t.Errorf("unknown links changed the tester: %+v", l)
	}
	b.signsIn(t, "the real link after the unknown ones", inv.InviteURL)
}

// TestBlackBoxInviteHeadDoesNotUseTheLink: a HEAD of the link (a mail
// scanner or link preview checking it) is a safe request: it signs nobody
// in, and the tester's first real click still works.
func TestBlackBoxInviteHeadDoesNotUseTheLink(t *testing.T) {
	t.Parallel()
	b := bbiStart(t)
	inv := b.inviteEmail(t, 0)
	req, err := http.NewRequest("HEAD", inv.InviteURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = browserHeader("")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if o := asOpened(resp, nil); o.session != "" {
		t.Errorf("HEAD of an invite link set a session: %s", o)
	}
	if l := b.listed(t, inv.ID); l.InviteUsedAt != nil || l.Status != "invited" {
		t.Errorf("after a HEAD of the link the tester is %s, used at %v", l.Status, l.InviteUsedAt)
	}
	b.signsIn(t, "the link after a HEAD", inv.InviteURL)
}

// TestBlackBoxInviteOperatorDefault: a service whose operator set another
// default (serve --invite-days, Server.InviteExpiry) gives links without
// expiresInDays that many days; expiresInDays still wins.
func TestBlackBoxInviteOperatorDefault(t *testing.T) {
	t.Parallel()
	b := bbiStart(t)
	s := &bphttp.Server{Store: b.DB, Blobs: b.Blobs, Logger: testLogger(t), Secret: []byte(credential.NewToken()),
		SigningKeys: testKeyring, InviteExpiry: 3 * bbiDay, Now: b.clock.now}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	s.BaseURL = ts.URL
	s.Publish.BaseURL = ts.URL
	three := *b
	e3 := *b.env
	e3.Server, e3.App = ts, s
	three.env = &e3

	inv := three.inviteEmail(t, 0)
	wantTime(t, "an invite without expiresInDays on a 3-day service", inv.InviteExpiresAt, b.t0.Add(3*bbiDay))
	wantTime(t, "an invite with 20 days on a 3-day service", three.inviteEmail(t, 20).InviteExpiresAt, b.t0.Add(20*bbiDay))
	wantTime(t, "a new link without a body on a 3-day service", three.newLink(t, inv.ID, "").InviteExpiresAt, b.t0.Add(3*bbiDay))
	// The usual service (14 days) on the same data.
	wantTime(t, "an invite without expiresInDays on the default service", b.inviteEmail(t, 0).InviteExpiresAt, b.t0.Add(14*bbiDay))
}
