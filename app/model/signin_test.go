package model_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/model"
)

// signInPage is the sign-in page's model on a page against a.
type signInPage struct {
	*testPage
	m       *model.SignIn
	session *model.Session
	fx      effects
}

func newSignInPage(t *testing.T, a *accountsAPI, s *model.Session) *signInPage {
	p := &signInPage{testPage: newPage(t, a), session: s}
	p.do(func() {
		p.m = model.NewSignIn(model.SignInConfig{Env: p.env, Session: s, Title: p.fx.title, Navigate: p.fx.goTo})
	})
	return p
}

// typeIn types the fields (each keystroke keeps the model in step).
func (p *signInPage) typeIn(email, password string) {
	p.do(func() { p.m.Email, p.m.Password = email, password })
}

func (p *signInPage) enter() { p.do(p.m.Submit) }

// triedWith reads the password a held sign-in was sent with.
func triedWith(t *testing.T, r *heldRequest) string {
	t.Helper()
	var in api.SignIn
	if err := json.Unmarshal([]byte(r.body), &in); err != nil {
		t.Fatalf("sign-in body %q: %v", r.body, err)
	}
	return in.Password
}

func TestSignInAfterATypo(t *testing.T) {
	a := newAccountsAPI()
	p := newSignInPage(t, a, model.NewSession(nil))
	p.do(func() { p.m.Open("") })
	p.wait("the session check", func() bool { return p.answered == 1 })
	p.do(func() {
		if lastOf(p.fx.titles) != "Sign in" || p.m.Notice != "" || p.m.Who != nil {
			t.Errorf("opened: titles %v, notice %q, who %+v", p.fx.titles, p.m.Notice, p.m.Who)
		}
	})
	p.typeIn("ada@example.com", "right hrose")
	p.enter()
	p.wait("the refusal", func() bool { return p.m.Err != nil })
	p.do(func() {
		if p.m.Busy || len(p.fx.navigate) != 0 {
			t.Errorf("after a wrong password: busy %v, went %v", p.m.Busy, p.fx.navigate)
		}
	})
	p.typeIn("ada@example.com", "right horse")
	p.do(func() {
		p.m.Submit()
		if p.m.Err != nil || !p.m.Busy {
			t.Errorf("sending again: Err %v (the old error still shown), busy %v", p.m.Err, p.m.Busy)
		}
	})
	p.wait("the extensions", func() bool { return p.fx.last() == model.PathHome })
	p.do(func() {
		if who, _ := p.session.Who(); who == nil || who.Kind != api.KindAdmin {
			t.Errorf("signed in as %+v, want the admin", who)
		}
		if p.m.Password != "" {
			t.Error("the password is kept after signing in")
		}
	})
}

// The rule of the page, on a slow network: a typo is fixed and Enter
// pressed again before the wrong password is answered. That Enter is
// remembered; when the refusal comes, the fields changed since it was
// sent, so they are sent as they are now, and the stale refusal is never
// shown.
func TestSignInTypoFixedBeforeTheAnswer(t *testing.T) {
	a := newAccountsAPI()
	tries := a.hold("POST " + api.PathSession)
	p := newSignInPage(t, a, model.NewSession(nil))
	p.typeIn("ada@example.com", "right hrose")
	p.enter()
	first := tries.next(t)
	if pw := triedWith(t, first); pw != "right hrose" {
		t.Fatalf("first try sent %q", pw)
	}
	p.typeIn("ada@example.com", "right horse")
	p.enter() // while the first try is on its way
	p.enter() // and again, for good measure
	if n := p.sent(); n != 1 {
		t.Fatalf("%d tries sent while the first is on its way, want 1", n)
	}
	first.answer() // 401: wrong password
	second := tries.next(t)
	if pw := triedWith(t, second); pw != "right horse" {
		t.Errorf("second try sent %q, want the fields as they are now", pw)
	}
	p.do(func() {
		if p.m.Err != nil {
			t.Errorf("the stale answer's error is shown: %v", p.m.Err)
		}
		if !p.m.Busy {
			t.Error("not busy while the second try is on its way")
		}
	})
	second.answer()
	p.wait("the extensions", func() bool { return p.fx.last() == model.PathHome })
	p.do(func() {
		if p.m.Err != nil || p.m.Busy {
			t.Errorf("signed in: Err %v, busy %v", p.m.Err, p.m.Busy)
		}
	})
	if n := a.count("POST " + api.PathSession); n != 2 {
		t.Errorf("%d sign-ins sent, want 2", n)
	}
}

// Enter pressed again on fields that did not change means nothing new:
// the answer to the try on its way is the answer, and is shown.
func TestSignInEnterAgainOnUnchangedFields(t *testing.T) {
	a := newAccountsAPI()
	tries := a.hold("POST " + api.PathSession)
	p := newSignInPage(t, a, model.NewSession(nil))
	p.typeIn("ada@example.com", "wrong")
	p.enter()
	first := tries.next(t)
	p.enter()
	// Typed and typed back: the fields are as they were sent.
	p.typeIn("ada@example.com", "wron")
	p.typeIn("ada@example.com", "wrong")
	p.enter()
	first.answer()
	p.wait("the refusal", func() bool { return p.m.Err != nil })
	p.settle()
	if n := p.sent(); n != 1 {
		t.Errorf("%d tries sent, want 1", n)
	}
	p.do(func() {
		if p.m.Busy {
			t.Error("busy after the answer")
		}
		if pr, ok := api.AsProblem(p.m.Err); !ok || pr.Status != 401 {
			t.Errorf("Err = %v, want the service's refusal", p.m.Err)
		}
	})
	// The person reads it, fixes the password: this Enter is sent.
	p.typeIn("ada@example.com", "right horse")
	p.enter()
	tries.next(t).answer()
	p.wait("the extensions", func() bool { return p.fx.last() == model.PathHome })
}

// Fixed while the first try is on its way, then broken again: the second
// try is refused too, and that refusal is shown.
func TestSignInSecondTryRefusedIsShown(t *testing.T) {
	a := newAccountsAPI()
	tries := a.hold("POST " + api.PathSession)
	p := newSignInPage(t, a, model.NewSession(nil))
	p.typeIn("ada@example.com", "wrong")
	p.enter()
	first := tries.next(t)
	p.typeIn("ada@example.com", "still wrong")
	p.enter()
	first.answer()
	second := tries.next(t)
	if pw := triedWith(t, second); pw != "still wrong" {
		t.Errorf("second try sent %q", pw)
	}
	second.answer()
	p.wait("the refusal", func() bool { return p.m.Err != nil })
	p.do(func() {
		if p.m.Busy || len(p.fx.navigate) != 0 {
			t.Errorf("busy %v, went %v", p.m.Busy, p.fx.navigate)
		}
	})
}

func TestSignInTesterGoesToBuilds(t *testing.T) {
	a := newAccountsAPI()
	p := newSignInPage(t, a, model.NewSession(nil))
	p.typeIn("tim@example.com", "tester pw")
	p.enter()
	p.wait("the builds", func() bool { return p.fx.last() == model.PathBuilds })
	p.do(func() {
		if who, _ := p.session.Who(); who == nil || who.Kind != api.KindTester {
			t.Errorf("signed in as %+v, want the tester", who)
		}
	})
}

// The check the page starts when it opens is answered (nobody) after the
// person signed in: the sign-in stands.
func TestSignInBeforeThePagesCheckIsAnswered(t *testing.T) {
	a := newAccountsAPI()
	checks := a.hold("GET " + api.PathSession)
	s := model.NewSession(nil)
	p := newSignInPage(t, a, s)
	p.do(func() { p.m.Open("") })
	check := checks.next(t)
	p.typeIn("ada@example.com", "right horse")
	p.enter()
	p.wait("the extensions", func() bool { return p.fx.last() == model.PathHome })
	a.set(func() { a.signedIn = nil }) // as when the check was sent
	check.answer()
	p.settle()
	p.do(func() {
		if who, _ := s.Who(); who == nil || who.Kind != api.KindAdmin {
			t.Errorf("after the late check: Who = %+v, want the admin", who)
		}
	})
}

// A dead invite link brings the person here: the page says so, and an
// admin signed in already is offered the way back.
func TestSignInDeadLinkAndSignedInAlready(t *testing.T) {
	a := newAccountsAPI()
	p := newSignInPage(t, a, model.NewSession(adminSession))
	p.do(func() {
		p.m.Open("invalid")
		if p.m.Notice == "" {
			t.Error("no notice for a dead link")
		}
		if p.m.Who != adminSession {
			t.Errorf("Who = %+v, want the admin", p.m.Who)
		}
		if path, _ := p.m.Home(); path != model.PathHome {
			t.Errorf("Home = %q", path)
		}
		p.m.Open("")
		if p.m.Notice != "" {
			t.Errorf("notice %q without a dead link", p.m.Notice)
		}
		// Why the link did not sign them in, each saying what to do.
		for link, says := range map[string]string{"used": "another browser", "expired": "expired", "invalid": "no longer works", "<b>x</b>": "no longer works"} {
			p.m.Open(link)
			if !strings.Contains(p.m.Notice, says) || !strings.Contains(p.m.Notice, "new link") && !strings.Contains(p.m.Notice, "new one") {
				t.Errorf("?link=%s: notice %q, want it to say %q and to ask for a new link", link, p.m.Notice, says)
			}
		}
	})
	tp := newSignInPage(t, a, model.NewSession(testerSession))
	tp.do(func() {
		tp.m.Open("")
		if path, _ := tp.m.Home(); path != model.PathBuilds {
			t.Errorf("a tester's Home = %q", path)
		}
	})
}

// The page is left while a try is on its way: its answer changes nothing.
func TestSignInAnswerAfterThePageIsGone(t *testing.T) {
	a := newAccountsAPI()
	tries := a.hold("POST " + api.PathSession)
	s := model.NewSession(nil)
	p := newSignInPage(t, a, s)
	p.typeIn("ada@example.com", "right horse")
	p.enter()
	try := tries.next(t)
	p.leave()
	try.answer()
	p.settle()
	p.do(func() {
		if len(p.fx.navigate) != 0 || p.answered != 0 {
			t.Errorf("after the page went: went %v, %d answers taken", p.fx.navigate, p.answered)
		}
		if _, known := s.Who(); known {
			t.Error("the session was set by an answer to a page that is gone")
		}
	})
}
