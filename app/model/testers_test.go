package model_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
)

// testersAPI answers an extension's testers calls as the service does
// (extension 7, one page of testers, newest first), holding the requests a
// test asks it to (gates).
type testersAPI struct {
	gates
	mu         sync.Mutex
	ext        betaport.Extension
	testers    []betaport.Tester // newest first
	nextID     int64
	links      int
	failRevoke bool
	signedOut  bool
	requests   []string // "METHOD path?query"
	revision   int64    // the testers revision the pages say they are at
}

var invitedAt = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

func newTestersAPI() *testersAPI {
	return &testersAPI{
		ext:    betaport.Extension{ID: 7, Name: "Tab Tamer"},
		nextID: 4,
		testers: []betaport.Tester{
			{ID: 3, ExtensionID: 7, Email: "old@example.com", Name: "Old", Status: betaport.TesterRevoked},
			{ID: 2, ExtensionID: 7, Email: "ann@example.com", Name: "Ann", Status: betaport.TesterActive},
			{ID: 1, ExtensionID: 7, Email: "bob@example.com", Name: "Bob", Status: betaport.TesterInvited, InvitedAt: &invitedAt},
		},
	}
}

func (a *testersAPI) set(f func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f()
}

// sent counts the requests answered whose "METHOD path?query" starts with
// prefix.
func (a *testersAPI) sent(prefix string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, r := range a.requests {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

func (a *testersAPI) link() string {
	a.links++
	return "http://betaport.test/t/link-" + strconv.Itoa(a.links)
}

func (a *testersAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, body := r.Method+" "+r.URL.Path, readBody(r)
	if !a.pass(r, route, body) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, route+"?"+r.URL.RawQuery)
	if a.signedOut {
		writeProblem(w, http.StatusUnauthorized, "/problems/unauthorized", "Sign in first.")
		return
	}
	testers := api.TestersPath(7)
	rest, _ := strings.CutPrefix(r.URL.Path, testers+"/")
	idText, action, _ := strings.Cut(rest, "/")
	id, _ := strconv.ParseInt(idText, 10, 64)
	i := slices.IndexFunc(a.testers, func(t betaport.Tester) bool { return t.ID == id })
	switch {
	case route == "GET "+api.ExtensionPath(7):
		json.NewEncoder(w).Encode(a.ext)
	case route == "GET "+testers:
		q, status := strings.ToLower(r.URL.Query().Get("q")), r.URL.Query().Get("status")
		page := fetch.CursorPage[betaport.Tester]{Data: []betaport.Tester{}, Revision: a.revision}
		for _, t := range a.testers {
			if (q == "" || strings.Contains(t.Email, q) || strings.Contains(strings.ToLower(t.Name), q)) && (status == "" || t.Status == status) {
				page.Data = append(page.Data, t)
			}
		}
		json.NewEncoder(w).Encode(page)
	case route == "POST "+testers:
		var in api.Invite
		json.Unmarshal([]byte(body), &in)
		t := betaport.Tester{ExtensionID: 7, Email: in.Email, Name: in.Name}
		t.Normalize()
		if !strings.Contains(t.Email, "@") {
			writeProblem(w, http.StatusUnprocessableEntity, "/problems/invalid-email", "“"+in.Email+"” is not an e-mail address. Check it and invite again.")
			return
		}
		if j := slices.IndexFunc(a.testers, func(x betaport.Tester) bool { return x.Email == t.Email }); j >= 0 {
			if a.testers[j].Status == betaport.TesterRevoked {
				w.Header().Set("Content-Type", api.ProblemContentType)
				w.WriteHeader(http.StatusConflict)
				json.NewEncoder(w).Encode(api.Problem{Type: api.ProblemTesterRevoked, Status: 409, Title: "Conflict",
					Detail: t.Email + " was revoked. Restore them to send a new link.", Restore: api.TesterRestorePath(7, a.testers[j].ID)})
				return
			}
			writeProblem(w, http.StatusConflict, "/problems/conflict", t.Email+" is a tester already.")
			return
		}
		days := in.ExpiresInDays.N
		if !in.ExpiresInDays.Given {
			days = 14
		}
		expires := invitedAt.Add(time.Duration(days) * 24 * time.Hour)
		t.ID, t.InvitedAt, t.InviteExpiresAt = a.nextID, &invitedAt, &expires
		a.nextID++
		a.testers = append([]betaport.Tester{t}, a.testers...)
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(api.Invited{Tester: t, InviteURL: a.link()})
	case i < 0:
		writeProblem(w, http.StatusNotFound, "/problems/not-found", "No such tester.")
	case r.Method == http.MethodDelete && action == "":
		if a.failRevoke {
			writeProblem(w, http.StatusServiceUnavailable, api.ProblemUnavailable, "Revoking failed: the service is busy. Try again in a moment.")
			return
		}
		a.testers[i].Status = betaport.TesterRevoked
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && (action == "restore" || action == "invite"):
		if action == "restore" && a.testers[i].Status != betaport.TesterRevoked {
			writeProblem(w, http.StatusConflict, "/problems/conflict", "That tester is not revoked.")
			return
		}
		a.testers[i].Status, a.testers[i].InvitedAt = betaport.TesterInvited, &invitedAt
		json.NewEncoder(w).Encode(api.Invited{Tester: a.testers[i], InviteURL: a.link()})
	default:
		writeProblem(w, http.StatusNotFound, "/problems/not-found", "No such page.")
	}
}

// testersPage is the testers page's model on a page against its service,
// with what it asked the page to do.
type testersPage struct {
	*testPage
	t       *testing.T
	svc     *testersAPI
	m       *model.Testers
	session *model.Session
	fx      effects
	address []string // "q=…&status=…"
	fields  []string // "search=…"
	focus   []string // "yes 2"
	copied  []string
	read    []string
	loaded  int
}

func newTestersPage(t *testing.T, svc *testersAPI, s *model.Session) *testersPage {
	p := &testersPage{testPage: newPage(t, svc), t: t, svc: svc, session: s}
	p.do(func() {
		p.m = model.NewTesters(model.TestersConfig{
			Env: p.env, Session: s, Cache: fetch.NewCache(fetch.CacheOptions{}),
			Title: p.fx.title, Navigate: p.fx.goTo,
			Read:    func(e betaport.Extension) { p.read = append(p.read, e.Name) },
			Loaded:  func() { p.loaded++ },
			Address: func(q, status string) { p.address = append(p.address, "q="+q+"&status="+status) },
			SetField: func(f model.TesterField, v string) {
				p.fields = append(p.fields, map[model.TesterField]string{model.TesterFieldSearch: "search", model.TesterFieldEmail: "email", model.TesterFieldName: "name"}[f]+"="+v)
			},
			Focus: func(f model.TesterFocus, id int64) {
				p.focus = append(p.focus, map[model.TesterFocus]string{model.TesterFocusYes: "yes", model.TesterFocusRevoke: "revoke",
					model.TesterFocusRestoreOffer: "restore-offer", model.TesterFocusLink: "link"}[f]+" "+strconv.FormatInt(id, 10))
			},
			Copy: func(text string) { p.copied = append(p.copied, text) },
		})
	})
	t.Cleanup(func() { p.do(p.m.Close) })
	return p
}

// open opens extension 7's page as the address says and waits for its
// list.
func (p *testersPage) open(q, status string) {
	p.t.Helper()
	p.do(func() { p.m.Open(7, q, status) })
	p.wait("the list", func() bool { return p.m.List.Data != nil && !p.m.List.IsValidating })
}

// row is the tester with e-mail email as the list shows it.
func (p *testersPage) row(email string) (t betaport.Tester, ok bool) {
	p.do(func() { t, ok = testerRowOf(p.m, email) })
	return t, ok
}

func testerRowOf(m *model.Testers, email string) (betaport.Tester, bool) {
	rows := m.Rows()
	for i := range rows.Len() {
		if t, ok := rows.At(i); ok && t.Email == email {
			return t, true
		}
	}
	return betaport.Tester{}, false
}

// emails lists the rows' e-mails, top first.
func testerEmails(m *model.Testers) string {
	var out []string
	rows := m.Rows()
	for i := range rows.Len() {
		if t, ok := rows.At(i); ok {
			out = append(out, t.Email)
		}
	}
	return strings.Join(out, " ")
}

// statusIs waits until the list shows email's tester with status.
func (p *testersPage) statusIs(email, status string) {
	p.t.Helper()
	p.wait(email+" "+status, func() bool {
		t, ok := testerRowOf(p.m, email)
		return ok && t.Status == status
	})
}

func TestTestersOpen(t *testing.T) {
	p := newTestersPage(t, newTestersAPI(), model.NewSession(adminSession))
	p.open("", "")
	p.wait("the breadcrumbs' name", func() bool { return len(p.read) > 0 })
	p.do(func() {
		if got := testerEmails(p.m); got != "old@example.com ann@example.com bob@example.com" {
			t.Errorf("rows %q", got)
		}
		if lastOf(p.fx.titles) != "Testers" || p.read[0] != "Tab Tamer" || p.loaded != 1 || p.m.Tester {
			t.Errorf("titles %v, read %v, loaded %d, tester %v", p.fx.titles, p.read, p.loaded, p.m.Tester)
		}
		if age := p.m.Now().Sub(invitedAt); age != 7*24*time.Hour {
			t.Errorf("an invite's age is told by the page's clock: %v", age)
		}
	})
}

// The flow of the issue: invite, then revoke (after the question: asked,
// kept, asked again, yes), then restore.
func TestTestersInviteRevokeRestore(t *testing.T) {
	svc := newTestersAPI()
	p := newTestersPage(t, svc, model.NewSession(adminSession))
	p.open("", "")

	invites := svc.hold("POST " + api.TestersPath(7))
	p.do(func() {
		p.m.Email, p.m.Name = " Bea@Example.com", "Bea"
		p.m.Invite()
		p.m.Invite() // Enter again while it is on its way
		if !p.m.Inviting {
			t.Error("not inviting")
		}
	})
	held := invites.next(t)
	// On top before the answer (the list tells the page, which renders).
	p.wait("the invite on top", func() bool { return strings.HasPrefix(testerEmails(p.m), "bea@example.com ") })
	if got, _ := p.row("bea@example.com"); got.ID != -1 || got.Status != betaport.TesterInvited {
		t.Errorf("the row shown at once is %+v", got)
	}
	held.answer()
	p.wait("the link", func() bool { return p.m.Invited != nil })
	p.statusIs("bea@example.com", betaport.TesterInvited)
	bea, _ := p.row("bea@example.com")
	p.do(func() {
		if p.m.Inviting || p.m.InviteErr != nil || p.m.LinkNote != "Invited." || p.m.Invited.InviteURL != "http://betaport.test/t/link-1" {
			t.Errorf("invited: inviting %v, err %v, note %q, link %+v", p.m.Inviting, p.m.InviteErr, p.m.LinkNote, p.m.Invited)
		}
		if p.m.Email != "" || p.m.Name != "" || !slices.Equal(p.fields, []string{"email=", "name="}) {
			t.Errorf("the form is not cleared: %q %q, fields written %v", p.m.Email, p.m.Name, p.fields)
		}
		if bea.ID != 4 {
			t.Errorf("the new row is %+v, want the service's tester", bea)
		}
	})
	if n := svc.sent("POST " + api.TestersPath(7) + "?"); n != 1 {
		t.Errorf("%d invites sent, want 1", n)
	}

	// Revoke asks; Keep changes nothing.
	p.do(func() {
		p.m.Ask(bea)
		if !p.m.Asking(bea.ID) || lastOf(p.focus) != "yes 4" {
			t.Errorf("asking %v, focus %v", p.m.Asking(bea.ID), p.focus)
		}
		p.clock.Advance(model.ConfirmDelay) // its Yes would take a press now
		p.m.Keep(bea)
		if p.m.Asking(bea.ID) || lastOf(p.focus) != "revoke 4" {
			t.Errorf("kept: asking %v, focus %v", p.m.Asking(bea.ID), p.focus)
		}
		p.m.Revoke(bea) // a Yes for a question no longer asked
	})
	if n := p.sent(); n != 1 { // the invite
		t.Errorf("%d requests sent after keeping, want 1", n)
	}
	if got, _ := p.row("bea@example.com"); got.Status != betaport.TesterInvited {
		t.Errorf("kept, but the row shows %q", got.Status)
	}

	// Asked again, yes: revoked at once, then for good.
	revokes := svc.hold("DELETE " + api.TesterPath(7, bea.ID))
	reads := svc.sent("GET " + api.TestersPath(7) + "?")
	p.do(func() {
		p.m.Ask(bea)
		p.clock.Advance(model.ConfirmDelay)
		p.m.Revoke(bea)
		p.m.Revoke(bea) // Yes twice
		if p.m.Asking(bea.ID) {
			t.Error("the question is still open")
		}
	})
	held = revokes.next(t)
	p.statusIs("bea@example.com", betaport.TesterRevoked) // before the answer
	held.answer()
	p.wait("the list read again", func() bool { return svc.sent("GET "+api.TestersPath(7)+"?") > reads && !p.m.List.IsValidating })
	p.statusIs("bea@example.com", betaport.TesterRevoked)
	if n := svc.sent("DELETE "); n != 1 {
		t.Errorf("%d revokes sent, want 1", n)
	}
	p.do(func() {
		if p.m.RevokeErr != nil {
			t.Errorf("RevokeErr %v", p.m.RevokeErr)
		}
	})

	// Restore: a new link, and the row shows them invited again.
	bea, _ = p.row("bea@example.com")
	restores := svc.hold("POST " + api.TesterRestorePath(7, bea.ID))
	sent := p.sent()
	p.do(func() {
		p.m.CopyLink()
		if !p.m.Copied {
			t.Error("not copied")
		}
		p.m.Renew(bea)
		p.m.Renew(bea) // pressed twice
	})
	if n := p.sent() - sent; n != 1 {
		t.Errorf("%d restores sent, want 1", n)
	}
	restores.next(t).answer()
	p.wait("the restored link", func() bool { return p.m.LinkNote == "Restored." })
	p.statusIs("bea@example.com", betaport.TesterInvited)
	p.do(func() {
		if p.m.Invited.InviteURL != "http://betaport.test/t/link-2" || p.m.Copied {
			t.Errorf("restored: link %q, copied %v", p.m.Invited.InviteURL, p.m.Copied)
		}
		if lastOf(p.focus) != "link 4" {
			t.Errorf("focus %v, want the link", p.focus)
		}
		if !slices.Equal(p.copied, []string{"http://betaport.test/t/link-1"}) {
			t.Errorf("copied %v", p.copied)
		}
	})
	if n := svc.sent("POST " + api.TesterRestorePath(7, bea.ID)); n != 1 {
		t.Errorf("%d restores sent, want 1", n)
	}
}

// A revoke the service refuses shows its error and leaves the row as it
// was; the next try works, and the error goes.
func TestTestersRevokeFailsThenWorks(t *testing.T) {
	svc := newTestersAPI()
	svc.failRevoke = true
	p := newTestersPage(t, svc, model.NewSession(adminSession))
	p.open("", "")
	ann, _ := p.row("ann@example.com")
	p.do(func() {
		p.m.Ask(ann)
		p.clock.Advance(model.ConfirmDelay)
		p.m.Revoke(ann)
	})
	p.wait("the error", func() bool { return p.m.RevokeErr != nil })
	p.statusIs("ann@example.com", betaport.TesterActive)
	p.do(func() {
		if !strings.Contains(p.m.RevokeErr.Error(), "Revoking failed") {
			t.Errorf("RevokeErr %v", p.m.RevokeErr)
		}
		if p.m.Asking(ann.ID) {
			t.Error("the question is open again")
		}
	})
	svc.set(func() { svc.failRevoke = false })
	p.do(func() {
		p.m.Ask(ann)
		p.clock.Advance(model.ConfirmDelay)
		p.m.Revoke(ann)
		if p.m.RevokeErr != nil {
			t.Errorf("the old error is shown while the retry is on its way: %v", p.m.RevokeErr)
		}
	})
	p.statusIs("ann@example.com", betaport.TesterRevoked)
	p.settle()
	p.do(func() {
		if p.m.RevokeErr != nil {
			t.Errorf("RevokeErr %v after it worked", p.m.RevokeErr)
		}
	})
}

// The page is left while a revoke is on its way (the service fails it):
// the answer changes nothing, and the list is not read again.
func TestTestersRevokeAnswerAfterThePageIsGone(t *testing.T) {
	svc := newTestersAPI()
	svc.failRevoke = true
	p := newTestersPage(t, svc, model.NewSession(adminSession))
	p.open("", "")
	ann, _ := p.row("ann@example.com")
	revokes := svc.hold("DELETE " + api.TesterPath(7, ann.ID))
	var before fetch.InfiniteState[model.TesterPage]
	p.do(func() {
		p.m.Ask(ann)
		p.clock.Advance(model.ConfirmDelay)
		p.m.Revoke(ann)
	})
	r := revokes.next(t)
	p.statusIs("ann@example.com", betaport.TesterRevoked)
	p.do(func() { before = p.m.List })
	reads := svc.sent("GET ")
	p.leave()
	r.answer()
	p.settle()
	p.do(func() {
		if p.m.RevokeErr != nil || len(p.fx.navigate) != 0 {
			t.Errorf("after the page went: RevokeErr %v, went %v", p.m.RevokeErr, p.fx.navigate)
		}
		if p.m.List.Version != before.Version {
			t.Errorf("the list changed after the page went: %q", testerEmails(p.m))
		}
	})
	if n := svc.sent("GET "); n != reads {
		t.Errorf("%d reads after the page went", n-reads)
	}
}

// An invite of a revoked tester's e-mail is refused with the way to
// restore them: the refusal is shown, the row offered at once goes again,
// and the offer restores them.
func TestTestersInviteOfARevokedTesterOffersRestore(t *testing.T) {
	svc := newTestersAPI()
	p := newTestersPage(t, svc, model.NewSession(adminSession))
	p.open("", "")
	p.do(func() {
		p.m.Email, p.m.Name = "OLD@example.com", "Old"
		p.m.Invite()
	})
	p.wait("the refusal", func() bool { return p.m.InviteErr != nil })
	p.wait("the row taken back", func() bool { return testerEmails(p.m) == "old@example.com ann@example.com bob@example.com" })
	p.do(func() {
		if p.m.Restore != api.TesterRestorePath(7, 3) || lastOf(p.focus) != "restore-offer 0" || p.m.Inviting {
			t.Errorf("restore %q, focus %v, inviting %v", p.m.Restore, p.focus, p.m.Inviting)
		}
		sent := p.started
		p.m.RestoreOffered()
		p.m.RestoreOffered() // the offer is gone: nothing more
		if p.started-sent != 1 {
			t.Errorf("%d restores sent, want 1", p.started-sent)
		}
		if p.m.InviteErr != nil || p.m.Restore != "" || p.m.Email != "" || !slices.Equal(p.fields, []string{"email=", "name="}) {
			t.Errorf("restoring: err %v, restore %q, email %q, fields %v", p.m.InviteErr, p.m.Restore, p.m.Email, p.fields)
		}
	})
	p.wait("the link", func() bool { return p.m.Invited != nil })
	p.statusIs("old@example.com", betaport.TesterInvited)
	if n := svc.sent("POST " + api.TesterRestorePath(7, 3)); n != 1 {
		t.Errorf("%d restores sent, want 1", n)
	}
}

// A typo in the e-mail: refused, shown, taken back; fixed, invited.
func TestTestersInviteTypoThenRetry(t *testing.T) {
	svc := newTestersAPI()
	p := newTestersPage(t, svc, model.NewSession(adminSession))
	p.open("", "")
	p.do(func() {
		p.m.Email = "cy.example.com"
		p.m.Invite()
	})
	p.wait("the refusal", func() bool { return p.m.InviteErr != nil })
	p.wait("the row taken back", func() bool { return !strings.Contains(testerEmails(p.m), "cy") })
	p.do(func() {
		if p.m.Restore != "" || p.m.Email != "cy.example.com" || p.m.Inviting {
			t.Errorf("restore %q, email %q kept?, inviting %v", p.m.Restore, p.m.Email, p.m.Inviting)
		}
		p.m.Email = "cy@example.com"
		p.m.Invite()
		if p.m.InviteErr != nil {
			t.Errorf("the old error is shown while the retry is on its way: %v", p.m.InviteErr)
		}
	})
	p.statusIs("cy@example.com", betaport.TesterInvited)
	p.wait("the link", func() bool { return p.m.Invited != nil })
}

// A new link for an invited tester: the old one stops working; pressed
// twice, one is made.
func TestTestersNewLink(t *testing.T) {
	svc := newTestersAPI()
	p := newTestersPage(t, svc, model.NewSession(adminSession))
	p.open("", "")
	bob, _ := p.row("bob@example.com")
	links := svc.hold("POST " + api.TesterInvitePath(7, bob.ID))
	sent := p.sent()
	p.do(func() {
		p.m.Renew(bob)
		p.m.Renew(bob)
	})
	if n := p.sent() - sent; n != 1 {
		t.Errorf("%d new links sent, want 1", n)
	}
	links.next(t).answer()
	p.wait("the link", func() bool { return p.m.Invited != nil })
	p.do(func() {
		if p.m.LinkNote != "New link made; the old one no longer works." || lastOf(p.focus) != "link 1" {
			t.Errorf("note %q, focus %v", p.m.LinkNote, p.focus)
		}
	})
	if n := svc.sent("POST " + api.TesterInvitePath(7, bob.ID)); n != 1 {
		t.Errorf("%d new links sent, want 1", n)
	}
	// Another, later: a second link.
	p.do(func() { p.m.Renew(bob) })
	links.next(t).answer()
	p.wait("the second link", func() bool { return p.m.Invited.InviteURL == "http://betaport.test/t/link-2" })
}

// The search is applied once typing pauses, and kept in the address with
// the filter; Back brings an earlier search, into the box too.
func TestTestersSearchFilterAndTheAddress(t *testing.T) {
	svc := newTestersAPI()
	p := newTestersPage(t, svc, model.NewSession(adminSession))
	p.open("", "")
	for _, typed := range []string{"a", "an", "ann "} {
		p.do(func() { p.m.Search(typed) })
		p.clock.Advance(100 * time.Millisecond)
	}
	p.settle()
	if n := svc.sent("GET " + api.TestersPath(7) + "?limit=100&q="); n != 0 {
		t.Errorf("%d searches while typing", n)
	}
	p.do(func() {
		if p.m.Query != "ann " || p.m.Applied != "" || len(p.address) != 0 {
			t.Errorf("while typing: query %q, applied %q, address %v", p.m.Query, p.m.Applied, p.address)
		}
	})
	p.clock.Advance(model.TestersSearchDelay)
	p.wait("the search", func() bool { return testerEmails(p.m) == "ann@example.com" })
	p.do(func() {
		if p.m.Applied != "ann" || !slices.Equal(p.address, []string{"q=ann&status="}) || !p.m.Filtered() {
			t.Errorf("searched: applied %q, address %v", p.m.Applied, p.address)
		}
	})
	if n := svc.sent("GET " + api.TestersPath(7) + "?limit=100&q="); n != 1 {
		t.Errorf("%d searches, want 1", n)
	}

	p.do(func() { p.m.Filter(betaport.TesterRevoked) })
	p.wait("nobody", func() bool {
		return strings.Contains(p.m.List.Key, "status=revoked") && p.m.List.Data != nil && testerEmails(p.m) == ""
	})
	p.do(func() {
		if lastOf(p.address) != "q=ann&status=revoked" {
			t.Errorf("address %v", p.address)
		}
	})

	// Back: the address before the filter, then before the search.
	p.do(func() { p.m.Open(7, "ann", "") })
	p.wait("ann again", func() bool { return testerEmails(p.m) == "ann@example.com" })
	p.do(func() { p.m.Open(7, "", "") })
	p.wait("everyone", func() bool { return testerEmails(p.m) == "old@example.com ann@example.com bob@example.com" })
	p.do(func() {
		if p.m.Query != "" || p.m.Filtered() || lastOf(p.fields) != "search=" {
			t.Errorf("back: query %q, filtered %v, fields %v", p.m.Query, p.m.Filtered(), p.fields)
		}
		if len(p.address) != 2 || p.loaded != 1 {
			t.Errorf("back rewrote the address %v, or opened the page anew (loaded %d)", p.address, p.loaded)
		}
	})
}

// A keystroke that lands as the pause ends, after the search of the
// words before it was due but before it ran: only the words as they are
// now are searched.
func TestTestersKeystrokeAsThePauseEnds(t *testing.T) {
	svc := newTestersAPI()
	p := newTestersPage(t, svc, model.NewSession(adminSession))
	p.open("", "")
	p.do(func() {
		p.m.Search("an")
		p.clock.Advance(model.TestersSearchDelay) // its search is dispatched…
		p.m.Search("bo")                          // …and this keystroke comes first
	})
	p.settle()
	p.do(func() {
		if p.m.Applied != "" || len(p.address) != 0 {
			t.Errorf("searched %q (address %v) for words no longer typed", p.m.Applied, p.address)
		}
	})
	p.clock.Advance(model.TestersSearchDelay)
	p.wait("bob", func() bool { return testerEmails(p.m) == "bob@example.com" })
	if n := svc.sent("GET " + api.TestersPath(7) + "?limit=100&q=an"); n != 0 {
		t.Errorf("%d searches for the words before", n)
	}
}

// A link with a search opens the page searched; the box shows it.
func TestTestersOpenedSearched(t *testing.T) {
	svc := newTestersAPI()
	p := newTestersPage(t, svc, model.NewSession(adminSession))
	p.open(" bob", betaport.TesterInvited)
	p.do(func() {
		if testerEmails(p.m) != "bob@example.com" || p.m.Applied != "bob" || !slices.Equal(p.fields, []string{"search=bob"}) {
			t.Errorf("rows %q, applied %q, fields %v", testerEmails(p.m), p.m.Applied, p.fields)
		}
	})
}

// A search still waiting when the page goes is dropped.
func TestTestersSearchAfterThePageIsGone(t *testing.T) {
	svc := newTestersAPI()
	p := newTestersPage(t, svc, model.NewSession(adminSession))
	p.open("", "")
	p.do(func() { p.m.Search("ann") })
	p.leave()
	p.clock.Advance(time.Second)
	p.settle()
	p.do(func() {
		if p.m.Applied != "" || len(p.address) != 0 {
			t.Errorf("applied %q, address %v", p.m.Applied, p.address)
		}
	})
}

func TestTestersSignedOut(t *testing.T) {
	svc := newTestersAPI()
	svc.signedOut = true
	s := model.NewSession(nil)
	p := newTestersPage(t, svc, s)
	p.do(func() { p.m.Open(7, "", "") })
	p.wait("the sign-in page", func() bool { return p.fx.last() == model.PathLogin })
	p.do(func() {
		if p.m.List.Err != nil {
			t.Errorf("the 401 is shown: %v", p.m.List.Err)
		}
	})
}

func TestTestersTesterSeesNothing(t *testing.T) {
	p := newTestersPage(t, newTestersAPI(), model.NewSession(testerSession))
	p.do(func() {
		p.m.Open(7, "", "")
		if !p.m.Tester {
			t.Error("a tester is shown the admins' page")
		}
	})
}

func TestTestersPrerender(t *testing.T) {
	first := []model.TesterPage{{Data: []betaport.Tester{{ID: 1, Email: "bob@example.com"}}, NextCursor: "c1"}}
	var asked []string
	fallback := func(key string) []model.TesterPage {
		asked = append(asked, key)
		if key == api.TestersPath(7)+"?limit=100" {
			return first
		}
		return nil
	}
	for _, c := range []struct {
		name, q, status string
		tester, shown   bool
	}{
		{"admin", "", "", false, true},
		{"searched", "bob", "", false, false},
		{"filtered", "", "invited", false, false},
		{"tester", "", "", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := model.NewTesters(model.TestersConfig{Fallback: fallback})
			m.Prerender(7, c.q, c.status, c.tester)
			if shown := m.List.Data != nil; shown != c.shown {
				t.Fatalf("first page shown %v, want %v", shown, c.shown)
			}
			if m.ExtensionID != 7 || m.Query != c.q || m.Status != c.status || m.Tester != c.tester {
				t.Errorf("prerendered %+v", m)
			}
			if c.shown && (!m.List.HasMore || m.List.Size != 1 || testerEmails(m) != "bob@example.com") {
				t.Errorf("list %+v", m.List)
			}
		})
	}
	if fmt.Sprint(asked) != "["+api.TestersPath(7)+"?limit=100]" {
		t.Errorf("asked %v", asked)
	}
}

// The page goes on to another extension's testers while a revoke of this
// one's is on its way: its refusal is not shown there.
func TestTestersRevokeAnswerAfterAnotherExtensionOpened(t *testing.T) {
	svc := newTestersAPI()
	svc.failRevoke = true
	p := newTestersPage(t, svc, model.NewSession(adminSession))
	p.open("", "")
	ann, _ := p.row("ann@example.com")
	revokes := svc.hold("DELETE " + api.TesterPath(7, ann.ID))
	p.do(func() {
		p.m.Ask(ann)
		p.clock.Advance(model.ConfirmDelay)
		p.m.Revoke(ann)
	})
	r := revokes.next(t)
	p.do(func() { p.m.Open(8, "", "") })
	r.answer()
	p.settle()
	p.do(func() {
		if p.m.RevokeErr != nil || p.m.ExtensionID != 8 {
			t.Errorf("extension %d shows the other's revoke error: %v", p.m.ExtensionID, p.m.RevokeErr)
		}
	})
}

// The list is live: a "testers" event the first page is at (the stream's
// first, on connect) reads nothing; one past it (a tester's copy checked
// in elsewhere) reads the list again, which shows the check; one that
// comes while that read is on its way waits for it, and reads again only
// if the read did not bring it.
func TestTestersLiveEvents(t *testing.T) {
	svc := newTestersAPI()
	svc.revision = 5
	p := newTestersPage(t, svc, model.NewSession(adminSession))
	p.open("", "")
	reads := func() int { return svc.sent("GET " + api.TestersPath(7)) }
	before := reads()
	p.do(func() { p.m.Live.Event(api.Revision{Testers: 5}, true) })
	p.do(func() { p.m.Live.Event(api.Revision{Testers: 4}, true) })
	if n := reads(); n != before {
		t.Fatalf("events the list is at read it again: %d reads, want %d", n, before)
	}

	// Ann's copy checks in; the service writes it and says so.
	svc.set(func() {
		svc.testers[1].InstalledVersion = "2.0.1"
		svc.revision = 6
	})
	p.do(func() { p.m.Live.Event(api.Revision{Testers: 6}, true) })
	p.wait("Ann's installed version", func() bool {
		t, ok := testerRowOf(p.m, "ann@example.com")
		return ok && t.InstalledVersion == "2.0.1"
	})
	if n := reads(); n != before+1 {
		t.Fatalf("one event past the list: %d reads, want %d", n, before+1)
	}

	// Two events while the read is held: the read brings revision 8, so
	// the second (7) needs nothing more.
	gate := svc.hold("GET " + api.TestersPath(7))
	svc.set(func() { svc.revision = 8 })
	p.do(func() { p.m.Live.Event(api.Revision{Testers: 7}, true) })
	held := gate.next(t)
	p.wait("the read on its way", func() bool { return p.m.List.IsValidating })
	p.do(func() {
		p.m.Live.Event(api.Revision{Testers: 8}, true)
		if !p.m.Live.Awaiting() {
			t.Error("an event during the read did not wait for it")
		}
	})
	held.answer()
	p.wait("the read landed", func() bool { return !p.m.List.IsValidating && !p.m.Live.Awaiting() })
	if n := reads(); n != before+2 {
		t.Fatalf("events during a read that brought them: %d reads, want %d", n, before+2)
	}
}

// TestTestersInviteForDays: the form's choice of days goes with the
// invite, and the note says until when the link works and that it works
// once.
func TestTestersInviteForDays(t *testing.T) {
	svc := newTestersAPI()
	p := newTestersPage(t, svc, model.NewSession(adminSession))
	p.open("", "")
	if !slices.Contains(model.InviteExpiryChoices, 0) || !slices.Contains(model.InviteExpiryChoices, 90) {
		t.Fatalf("the choices %v lack the default or the longest", model.InviteExpiryChoices)
	}
	p.do(func() {
		p.m.Email, p.m.ExpiresInDays = "cy@example.com", 7
		p.m.Invite()
	})
	p.wait("the link", func() bool { return p.m.Invited != nil })
	p.do(func() {
		want := invitedAt.Add(7 * 24 * time.Hour)
		if got := p.m.Invited.InviteExpiresAt; got == nil || !got.Equal(want) {
			t.Fatalf("a 7-day invite expires at %v, want %v", got, want)
		}
		note := model.LinkNote(p.m.Invited)
		if !strings.Contains(note, "once") || !strings.Contains(note, want.Local().Format("2 Jan 2006")) {
			t.Errorf("the note %q does not say the link works once, until %v", note, want)
		}
	})
}

// TestLinkExpiry: what the list says of a tester's link.
func TestLinkExpiry(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	for _, c := range []struct {
		t    betaport.Tester
		want string
	}{
		{betaport.Tester{Status: betaport.TesterInvited, InviteExpiresAt: at(14 * 24 * time.Hour)}, "link expires in 14 days"},
		{betaport.Tester{Status: betaport.TesterInvited, InviteExpiresAt: at(7*24*time.Hour - time.Second)}, "link expires in 7 days"},
		{betaport.Tester{Status: betaport.TesterInvited, InviteExpiresAt: at(35 * time.Hour)}, "link expires in 1 day"},
		{betaport.Tester{Status: betaport.TesterInvited, InviteExpiresAt: at(37 * time.Hour)}, "link expires in 2 days"},
		{betaport.Tester{Status: betaport.TesterInvited, InviteExpiresAt: at(5*time.Hour + 59*time.Minute)}, "link expires in 5 h"},
		{betaport.Tester{Status: betaport.TesterInvited, InviteExpiresAt: at(20 * time.Second)}, "link expires in 1 min"},
		{betaport.Tester{Status: betaport.TesterInvited, InviteExpiresAt: at(0)}, "link expired 1 min ago"},
		{betaport.Tester{Status: betaport.TesterInvited, InviteExpiresAt: at(-3 * 24 * time.Hour)}, "link expired 3 days ago"},
		// A new link for an active tester, not yet used.
		{betaport.Tester{Status: betaport.TesterActive, InviteExpiresAt: at(2 * 24 * time.Hour)}, "link expires in 2 days"},
		// Used: nothing to say; revoked, or loaded in bulk without a link.
		{betaport.Tester{Status: betaport.TesterActive, InviteExpiresAt: at(time.Hour), InviteUsedAt: at(-time.Hour)}, ""},
		{betaport.Tester{Status: betaport.TesterRevoked, InviteExpiresAt: at(time.Hour)}, ""},
		{betaport.Tester{Status: betaport.TesterInvited}, ""},
	} {
		if got := model.LinkExpiry(c.t, now); got != c.want {
			t.Errorf("LinkExpiry(%+v) = %q, want %q", c.t, got, c.want)
		}
	}
}
