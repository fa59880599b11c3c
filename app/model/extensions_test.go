package model_test

import (
	"net/http"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/model"
)

// homePage is the extensions page's model on a page against a.
type homePage struct {
	*testPage
	m       *model.Extensions
	session *model.Session
	fx      effects
}

func newHomePage(t *testing.T, service http.Handler, s *model.Session) *homePage {
	p := &homePage{testPage: newPage(t, service), session: s}
	p.do(func() {
		p.m = model.NewExtensions(model.ExtensionsConfig{Env: p.env, Session: s, Title: p.fx.title, Navigate: p.fx.goTo})
	})
	return p
}

func TestExtensionsLoadEachTimeThePageShows(t *testing.T) {
	a := newAccountsAPI()
	a.signedIn = adminSession
	p := newHomePage(t, a, model.NewSession(adminSession))
	p.do(func() {
		p.m.Open()
		if p.m.Loaded {
			t.Error("loaded before the answer")
		}
	})
	p.wait("the list", func() bool { return p.m.Loaded })
	p.do(func() {
		if len(p.m.List) != 1 || p.m.List[0].Name != "Tab Tamer" || p.m.Err != nil {
			t.Errorf("List %+v, Err %v", p.m.List, p.m.Err)
		}
		if lastOf(p.fx.titles) != "Extensions" || len(p.fx.navigate) != 0 {
			t.Errorf("titles %v, went %v", p.fx.titles, p.fx.navigate)
		}
	})
	a.set(func() {
		a.extensions = append(a.extensions, a.extensions[0])
		a.extensions[1].ID, a.extensions[1].Name = 8, "Quiet Tabs"
	})
	p.do(p.m.Open) // Back to the page
	p.wait("the list again", func() bool { return len(p.m.List) == 2 })
	if n := a.count("GET " + api.PathExtensions); n != 2 {
		t.Errorf("%d GET /api/extensions, want 2", n)
	}
}

// Known to be signed out: the sign-in page at once, not after a 401.
func TestExtensionsSignedOutGoesToSignIn(t *testing.T) {
	a := newAccountsAPI()
	p := newHomePage(t, a, model.NewSession(nil))
	p.do(func() { p.session.SignedOut() })
	p.do(func() {
		p.m.Open()
		if p.fx.last() != model.PathLogin {
			t.Errorf("went %v at once, want /login", p.fx.navigate)
		}
	})
	p.settle()
	p.do(func() {
		if p.m.Loaded || p.m.Err != nil {
			t.Errorf("the 401 is shown: loaded %v, Err %v", p.m.Loaded, p.m.Err)
		}
	})
}

// Not known yet, and the service says nobody is signed in: the sign-in
// page, and the refusal is not shown.
func TestExtensionsRefusedGoesToSignIn(t *testing.T) {
	a := newAccountsAPI()
	p := newHomePage(t, a, model.NewSession(nil))
	p.do(p.m.Open)
	p.wait("the sign-in page", func() bool { return p.fx.last() == model.PathLogin })
	p.settle()
	p.do(func() {
		if p.m.Loaded || p.m.Err != nil {
			t.Errorf("the 401 is shown: loaded %v, Err %v", p.m.Loaded, p.m.Err)
		}
		if who, known := p.session.Who(); who != nil || !known {
			t.Errorf("Who %+v known %v, want nobody", who, known)
		}
	})
}

func TestExtensionsTesterGoesToBuilds(t *testing.T) {
	a := newAccountsAPI()
	a.signedIn = testerSession
	p := newHomePage(t, a, model.NewSession(nil))
	p.do(p.m.Open)
	p.wait("the builds", func() bool { return p.fx.last() == model.PathBuilds })
}

func TestExtensionsAccessEnded(t *testing.T) {
	a := newAccountsAPI()
	a.revoked = true
	p := newHomePage(t, a, model.NewSession(testerSession))
	p.do(p.m.Open) // known as a tester: to the builds, where the 401 lands
	p.wait("the ended page", func() bool { return p.fx.last() == model.PathEnded })
	p.do(func() {
		if p.session.Ended() == "" {
			t.Error("the reason is not kept for the ended page")
		}
	})
}

// The service fails: the error is shown; the next visit loads the list.
func TestExtensionsErrorThenRetry(t *testing.T) {
	a := newAccountsAPI()
	a.signedIn = adminSession
	failing := true
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		f := failing
		a.mu.Unlock()
		if f {
			writeProblem(w, http.StatusInternalServerError, api.ProblemInternal, "Something broke. Try again in a moment.")
			return
		}
		a.ServeHTTP(w, r)
	})
	p := newHomePage(t, h, model.NewSession(adminSession))
	p.do(p.m.Open)
	p.wait("the error", func() bool { return p.m.Err != nil })
	p.do(func() {
		if len(p.fx.navigate) != 0 {
			t.Errorf("went %v on a 500", p.fx.navigate)
		}
	})
	a.set(func() { failing = false })
	p.do(p.m.Open)
	p.wait("the list", func() bool { return p.m.Err == nil && len(p.m.List) == 1 })
}

func TestExtensionsAnswerAfterThePageIsGone(t *testing.T) {
	a := newAccountsAPI()
	a.signedIn = adminSession
	held := a.hold("GET " + api.PathExtensions)
	p := newHomePage(t, a, model.NewSession(adminSession))
	p.do(p.m.Open)
	r := held.next(t)
	p.leave()
	r.answer()
	p.settle()
	p.do(func() {
		if p.m.Loaded || p.answered != 0 {
			t.Errorf("after the page went: loaded %v, %d answers taken", p.m.Loaded, p.answered)
		}
	})
}
