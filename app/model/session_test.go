package model_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/model"
	"github.com/betaport/betaport/app/model/modeltest"
)

// accountsAPI answers the session's and the home page's calls as the
// service does, for one admin (ada@example.com, "right horse") and one
// tester (tim@example.com, "tester pw"), and holds the requests a test
// asks it to (hold) until the test lets each go: a slow network, step by
// step.
type accountsAPI struct {
	mu         sync.Mutex
	signedIn   *api.Session
	revoked    bool // the signed-in tester's access ended
	signOutErr bool // DELETE /api/session fails
	extensions []betaport.Extension
	requests   []string
	gates
}

func newAccountsAPI() *accountsAPI {
	return &accountsAPI{extensions: []betaport.Extension{{ID: 7, Name: "Tab Tamer", CurrentBundle: 3}}}
}

var (
	adminSession  = &api.Session{Kind: api.KindAdmin, User: &betaport.User{Email: "ada@example.com"}, Team: &betaport.Team{Name: "Acme"}}
	testerSession = &api.Session{Kind: api.KindTester, Tester: &betaport.Tester{ID: 4, ExtensionID: 7, Email: "tim@example.com"}}
)

// gate holds the requests of one route: each waits, in arrival order, until
// the test lets it go.
type gate struct{ arrived chan *heldRequest }

type heldRequest struct {
	body string
	go_  chan struct{}
}

// next waits for the next held request (failing the test after 10 s).
func (g *gate) next(t *testing.T) *heldRequest {
	t.Helper()
	select {
	case r := <-g.arrived:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("waited 10 s for a request")
		return nil
	}
}

// answer lets the request go on to its answer.
func (r *heldRequest) answer() { close(r.go_) }

// gates hold the requests of the routes a test names until it lets each
// go: a slow network, step by step.
type gates struct {
	mu sync.Mutex
	m  map[string]*gate
}

// hold makes the requests of route ("POST /api/session") wait for the test.
func (g *gates) hold(route string) *gate {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]*gate{}
	}
	h := &gate{arrived: make(chan *heldRequest, 10)}
	g.m[route] = h
	return h
}

// pass holds a request of route, with body, if the test asked; it reports
// false when the request was given up (its page went) while held.
func (g *gates) pass(r *http.Request, route, body string) bool {
	g.mu.Lock()
	h := g.m[route]
	g.mu.Unlock()
	if h == nil {
		return true
	}
	held := &heldRequest{body: body, go_: make(chan struct{})}
	h.arrived <- held
	select {
	case <-held.go_:
		return true
	case <-r.Context().Done():
		return false
	}
}

func (a *accountsAPI) set(f func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f()
}

// sent lists the requests answered so far, "METHOD path".
func (a *accountsAPI) sent() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.requests...)
}

func (a *accountsAPI) count(route string) int {
	n := 0
	for _, r := range a.sent() {
		if r == route {
			n++
		}
	}
	return n
}

func (a *accountsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route := r.Method + " " + r.URL.Path
	body := readBody(r)
	if !a.pass(r, route, body) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, route)
	switch route {
	case "POST " + api.PathSession:
		var in api.SignIn
		json.Unmarshal([]byte(body), &in)
		switch {
		case in.Email == "ada@example.com" && in.Password == "right horse":
			a.signedIn = adminSession
		case in.Email == "tim@example.com" && in.Password == "tester pw":
			a.signedIn = testerSession
		default:
			writeProblem(w, http.StatusUnauthorized, "/problems/sign-in", "The e-mail or the password is wrong. Check both and try again.")
			return
		}
		json.NewEncoder(w).Encode(a.signedIn)
	case "GET " + api.PathSession:
		switch {
		case a.revoked:
			writeProblem(w, http.StatusUnauthorized, api.ProblemAccessEnded, "Your access to Tab Tamer ended. Ask ada@example.com.")
		case a.signedIn == nil:
			writeProblem(w, http.StatusUnauthorized, "/problems/unauthorized", "Sign in first.")
		default:
			json.NewEncoder(w).Encode(a.signedIn)
		}
	case "DELETE " + api.PathSession:
		if a.signOutErr {
			writeProblem(w, http.StatusInternalServerError, api.ProblemInternal, "Signing out failed. Try again.")
			return
		}
		a.signedIn = nil
		w.WriteHeader(http.StatusNoContent)
	case "GET " + api.PathExtensions:
		switch {
		case a.revoked:
			writeProblem(w, http.StatusUnauthorized, api.ProblemAccessEnded, "Your access to Tab Tamer ended. Ask ada@example.com.")
		case a.signedIn == nil:
			writeProblem(w, http.StatusUnauthorized, "/problems/unauthorized", "Sign in first.")
		default:
			json.NewEncoder(w).Encode(a.extensions)
		}
	default:
		writeProblem(w, http.StatusNotFound, "/problems/not-found", "No such page.")
	}
}

func readBody(r *http.Request) string {
	if r.Body == nil {
		return ""
	}
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

func writeProblem(w http.ResponseWriter, status int, typ, detail string) {
	w.Header().Set("Content-Type", api.ProblemContentType)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(api.Problem{Type: typ, Title: http.StatusText(status), Status: status, Detail: detail})
}

// effects records what a model asked its page to do, on the UI goroutine.
type effects struct {
	titles   []string
	navigate []string
	leave    []string
}

func (e *effects) title(t string)   { e.titles = append(e.titles, t) }
func (e *effects) goTo(path string) { e.navigate = append(e.navigate, path) }
func (e *effects) load(path string) { e.leave = append(e.leave, path) }
func (e *effects) last() string     { return lastOf(e.navigate) }
func lastOf(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return list[len(list)-1]
}

// testPage is a page's Env on a UI loop against a service, whose lifetime
// the test ends with leave (as go-app ends a component's context when it
// goes). It counts, on the UI goroutine, the work the model started
// (Async: a request sent) and the answers it took back (Dispatch), so a
// test can wait for an answer that changes nothing, and tell that nothing
// was sent, without sleeping.
type testPage struct {
	ui    *modeltest.Loop
	env   model.Env
	leave func()
	clock *modeltest.Clock

	started, answered int
	finished          atomic.Int64 // async work done
}

func newPage(t *testing.T, service http.Handler) *testPage {
	p := &testPage{ui: modeltest.NewLoop(t), clock: modeltest.NewClock()}
	env := p.ui.Env(modeltest.Client(service), p.clock)
	ctx, cancel := context.WithCancel(env.Context)
	t.Cleanup(cancel)
	env.Context, p.leave = ctx, cancel
	async, dispatch := env.Async, env.Dispatch
	env.Async = func(f func()) {
		p.started++ // on the UI goroutine: Call starts from there
		async(func() {
			defer p.finished.Add(1)
			f()
		})
	}
	env.Dispatch = func(f func()) {
		dispatch(func() {
			f()
			p.answered++
		})
	}
	p.env = env
	return p
}

// do runs f on the UI goroutine (the person acts, or the test reads).
func (p *testPage) do(f func()) { p.ui.Do(f) }

// wait waits for cond, read on the UI goroutine.
func (p *testPage) wait(what string, cond func() bool) { p.ui.Wait(what, cond) }

// sent is the number of requests the model started.
func (p *testPage) sent() (n int) {
	p.ui.Do(func() { n = p.started })
	return n
}

// settle waits until the work the model started is done and what it
// dispatched has run: an answer it dropped is then known to be dropped.
func (p *testPage) settle() {
	p.ui.Wait("the model's requests", func() bool { return p.finished.Load() == int64(p.started) })
	p.ui.Do(func() {})
}

// waitAnswers waits until the model has taken n answers back.
func (p *testPage) waitAnswers(n int) {
	p.ui.Wait("answers", func() bool { return p.answered >= n })
}

func TestSessionCheckAsksOnceThenKnows(t *testing.T) {
	a := newAccountsAPI()
	a.signedIn = adminSession
	p := newPage(t, a)
	s := model.NewSession(nil)
	var got []*api.Session
	p.do(func() { s.Check(p.env, func(who *api.Session) { got = append(got, who) }) })
	p.wait("the check's answer", func() bool { return len(got) == 1 })
	p.do(func() {
		if got[0] == nil || got[0].Kind != api.KindAdmin {
			t.Errorf("checked: %+v, want the admin", got[0])
		}
		s.Check(p.env, func(who *api.Session) { got = append(got, who) })
		if len(got) != 2 || got[1] != got[0] {
			t.Errorf("a second check is not answered at once with what is known: %v", got)
		}
	})
	if n := p.sent(); n != 1 {
		t.Errorf("%d requests sent, want one", n)
	}
}

// The top bar and the page under it both ask who is signed in as a page
// opens, before either is answered: one request answers both (the sign-in
// page, signed out, asked twice). A page gone by then is not told.
func TestSessionChecksOnTheirWayAskOnce(t *testing.T) {
	a := newAccountsAPI()
	checks := a.hold("GET /api/session")
	p := newPage(t, a)
	gone := newPage(t, a)
	s := model.NewSession(nil)
	var nav, page, left []*api.Session
	p.do(func() { s.Check(p.env, func(who *api.Session) { nav = append(nav, who) }) })
	p.do(func() { s.Check(p.env, func(who *api.Session) { page = append(page, who) }) })
	gone.do(func() { s.Check(gone.env, func(who *api.Session) { left = append(left, who) }) })
	gone.leave()
	checks.next(t).answer()
	p.wait("both answered", func() bool { return len(nav) == 1 && len(page) == 1 })
	p.settle()
	gone.settle()
	if n := a.count("GET /api/session"); n != 1 {
		t.Errorf("%d session checks sent, want one", n)
	}
	p.do(func() {
		if nav[0] != nil || page[0] != nil {
			t.Errorf("signed out, the pages were told %v and %v, want nobody", nav[0], page[0])
		}
	})
	gone.do(func() {
		if len(left) != 0 {
			t.Errorf("a page gone before the answer was told %v", left)
		}
	})
}

func TestSessionKnownFromTheServersPageAsksNothing(t *testing.T) {
	p := newPage(t, newAccountsAPI())
	s := model.NewSession(testerSession)
	var got *api.Session
	p.do(func() { s.Check(p.env, func(who *api.Session) { got = who }) })
	if got != testerSession {
		t.Errorf("checked %+v, want the session the page came with", got)
	}
	if n := p.sent(); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

func TestSessionNobodySignedIn(t *testing.T) {
	p := newPage(t, newAccountsAPI())
	s := model.NewSession(nil)
	called := false
	var got *api.Session
	p.do(func() { s.Check(p.env, func(who *api.Session) { called, got = true, who }) })
	p.wait("the check's answer", func() bool { return called })
	p.do(func() {
		if who, known := s.Who(); got != nil || who != nil || !known {
			t.Errorf("after a 401: got %v, Who %v known %v; want nobody, known", got, who, known)
		}
	})
}

// A failing service says nothing about who is signed in: the page is not
// told, and the next check asks again.
func TestSessionCheckFailingIsNoAnswer(t *testing.T) {
	a := newAccountsAPI()
	a.signedIn = adminSession
	var failing sync.Mutex // held: the service fails
	failing.Lock()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.TryLock() {
			failing.Unlock()
			a.ServeHTTP(w, r)
			return
		}
		writeProblem(w, http.StatusServiceUnavailable, api.ProblemUnavailable, "Try again in a moment.")
	})
	p := newPage(t, h)
	s := model.NewSession(nil)
	calls := 0
	p.do(func() { s.Check(p.env, func(*api.Session) { calls++ }) })
	p.waitAnswers(1)
	p.do(func() {
		if _, known := s.Who(); known || calls != 0 {
			t.Errorf("after a 503: known %v, then called %d times; want unknown, not called", known, calls)
		}
	})
	failing.Unlock()
	p.do(func() { s.Check(p.env, func(*api.Session) { calls++ }) })
	p.wait("the second check's answer", func() bool { return calls == 1 })
	p.do(func() {
		if who, _ := s.Who(); who == nil || who.Kind != api.KindAdmin {
			t.Errorf("Who = %+v after the service answered, want the admin", who)
		}
	})
}

// The fix the sign-in page relies on: a check on its way when the person
// signs in is answered (401: nobody, as when it was sent) after the
// sign-in; that answer never overwrites the sign-in.
func TestSessionLateCheckDoesNotUndoASignIn(t *testing.T) {
	a := newAccountsAPI()
	checks := a.hold("GET " + api.PathSession)
	p := newPage(t, a)
	s := model.NewSession(nil)
	var told *api.Session
	called := false
	p.do(func() { s.Check(p.env, func(who *api.Session) { called, told = true, who }) })
	check := checks.next(t) // nobody is signed in yet
	p.do(func() { s.SignedIn(adminSession) })
	check.answer()
	p.wait("the check's answer", func() bool { return called })
	p.do(func() {
		if who, _ := s.Who(); who != adminSession {
			t.Errorf("after the late check: Who = %+v, want the admin who signed in", who)
		}
		if told != adminSession {
			t.Errorf("the check told its page %+v, want the admin who signed in", told)
		}
	})
}

// A check whose page is gone before the answer tells nobody, and leaves
// the session as it was.
func TestSessionCheckOfAPageGone(t *testing.T) {
	a := newAccountsAPI()
	a.signedIn = adminSession
	checks := a.hold("GET " + api.PathSession)
	p := newPage(t, a)
	s := model.NewSession(nil)
	called := false
	p.do(func() { s.Check(p.env, func(*api.Session) { called = true }) })
	check := checks.next(t)
	p.leave()
	check.answer()
	p.settle()
	p.do(func() {
		if _, known := s.Who(); called || known || p.answered != 0 {
			t.Errorf("after the page went: then called %v, known %v, %d answers taken", called, known, p.answered)
		}
	})
}

func TestSessionRefused(t *testing.T) {
	ended := &api.Problem{Type: api.ProblemAccessEnded, Status: 401, Detail: "Your access to Tab Tamer ended."}
	for _, c := range []struct {
		name    string
		err     error
		to      string
		nobody  bool
		endedAs string
	}{
		{"no error", nil, "", false, ""},
		{"not found", &api.Problem{Status: 404, Detail: "No such extension."}, "", false, ""},
		{"forbidden", &api.Problem{Status: 403, Detail: "Admins only."}, "", false, ""},
		{"offline", context.DeadlineExceeded, "", false, ""},
		{"signed out", &api.Problem{Status: 401, Detail: "Sign in first."}, model.PathLogin, true, ""},
		{"access ended", ended, model.PathEnded, true, ended.Detail},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := model.NewSession(adminSession)
			if to := s.Refused(c.err); to != c.to {
				t.Errorf("Refused = %q, want %q", to, c.to)
			}
			who, known := s.Who()
			if c.nobody != (who == nil) || !known {
				t.Errorf("Who = %+v (known %v); want nobody %v", who, known, c.nobody)
			}
			if s.Ended() != c.endedAs {
				t.Errorf("Ended = %q, want %q", s.Ended(), c.endedAs)
			}
		})
	}
}

func TestNavShowsWhoAndSignsOut(t *testing.T) {
	a := newAccountsAPI()
	a.signedIn = adminSession
	p := newPage(t, a)
	s := model.NewSession(nil)
	var fx effects
	var n *model.Nav
	p.do(func() {
		n = model.NewNav(model.NavConfig{Env: p.env, Session: s, Leave: fx.load})
		n.Open()
	})
	p.wait("who is signed in", func() bool { return n.Who != nil })
	p.do(func() {
		n.SignOut()
		n.SignOut() // pressed twice
	})
	p.wait("the sign-in page", func() bool { return len(fx.leave) > 0 })
	p.do(func() {
		if fx.leave[0] != model.PathLogin || len(fx.leave) != 1 {
			t.Errorf("loaded %v, want /login once", fx.leave)
		}
		if who, known := s.Who(); who != nil || !known {
			t.Errorf("after signing out: Who = %+v, known %v; want nobody", who, known)
		}
		if n.Err != nil {
			t.Errorf("Err = %v", n.Err)
		}
	})
	if c := a.count("DELETE " + api.PathSession); c != 1 {
		t.Errorf("DELETE /api/session sent %d times, want once", c)
	}
}

func TestNavSignOutFailsThenWorks(t *testing.T) {
	a := newAccountsAPI()
	a.signOutErr = true
	p := newPage(t, a)
	s := model.NewSession(adminSession)
	var fx effects
	var n *model.Nav
	p.do(func() {
		n = model.NewNav(model.NavConfig{Env: p.env, Session: s, Leave: fx.load})
		n.Open()
		if n.Who != adminSession {
			t.Errorf("Who = %+v, want the admin known", n.Who)
		}
		n.SignOut()
	})
	p.wait("the sign-out's error", func() bool { return n.Err != nil })
	p.do(func() {
		if len(fx.leave) != 0 {
			t.Errorf("loaded %v after a failed sign-out", fx.leave)
		}
		if who, _ := s.Who(); who != adminSession {
			t.Errorf("Who = %+v after a failed sign-out, want still the admin", who)
		}
	})
	a.set(func() { a.signOutErr = false })
	p.do(n.SignOut)
	p.wait("the sign-in page", func() bool { return len(fx.leave) == 1 })
	p.do(func() {
		if n.Err != nil {
			t.Errorf("Err = %v after signing out, want none", n.Err)
		}
	})
}

func TestEndedPage(t *testing.T) {
	t.Run("the refused request's reason", func(t *testing.T) {
		p := newPage(t, newAccountsAPI())
		s := model.NewSession(testerSession)
		var fx effects
		p.do(func() {
			fx.goTo(s.Refused(&api.Problem{Type: api.ProblemAccessEnded, Status: 401, Detail: "Ask ada."}))
			e := model.NewEnded(model.EndedConfig{Env: p.env, Session: s, Given: "From the page.", Title: fx.title, Navigate: fx.goTo})
			e.Open()
			if e.Detail != "Ask ada." || fx.last() != model.PathEnded {
				t.Errorf("Detail %q after going %v; want the refused request's", e.Detail, fx.navigate)
			}
			if lastOf(fx.titles) != "Your access ended" {
				t.Errorf("titles %v", fx.titles)
			}
		})
		if n := p.sent(); n != 0 {
			t.Errorf("%d requests sent, want none", n)
		}
	})
	t.Run("the server's page's reason", func(t *testing.T) {
		p := newPage(t, newAccountsAPI())
		p.do(func() {
			e := model.NewEnded(model.EndedConfig{Env: p.env, Session: model.NewSession(nil), Given: "From the page."})
			if !e.Fill() || e.Detail != "From the page." {
				t.Errorf("Fill: Detail %q", e.Detail)
			}
		})
		if n := p.sent(); n != 0 {
			t.Errorf("%d requests sent, want none", n)
		}
	})
	t.Run("asked", func(t *testing.T) {
		a := newAccountsAPI()
		a.revoked = true
		p := newPage(t, a)
		var e *model.Ended
		p.do(func() {
			e = model.NewEnded(model.EndedConfig{Env: p.env, Session: model.NewSession(nil)})
			e.Open()
		})
		p.wait("the reason", func() bool { return e.Detail != "" })
		p.do(func() {
			if !strings.Contains(e.Detail, "ended") {
				t.Errorf("Detail %q", e.Detail)
			}
		})
	})
	t.Run("not a revoked tester", func(t *testing.T) {
		a := newAccountsAPI()
		a.signedIn = adminSession
		p := newPage(t, a)
		var fx effects
		p.do(func() {
			model.NewEnded(model.EndedConfig{Env: p.env, Session: model.NewSession(nil), Navigate: fx.goTo}).Open()
		})
		p.wait("going home", func() bool { return fx.last() == model.PathHome })
	})
}
