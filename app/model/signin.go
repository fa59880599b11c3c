package model

import (
	"context"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/client"
)

// SignInConfig is what the sign-in page gives its model.
type SignInConfig struct {
	Env
	Session *Session
	// Title titles the page; Navigate goes to an in-app page. Either may
	// be nil.
	Title    func(title string)
	Navigate func(path string)
}

// SignIn is the sign-in page: an admin's e-mail and password, sent as
// typed. Its fields and methods are for the UI goroutine.
//
// A person who fixes a typo and presses Enter before the last try has been
// answered means the fields as they are now: that Enter is remembered, and
// when the answer comes, if the fields changed since that try was sent,
// they are sent as they are now and the stale answer's error is not shown.
// An Enter on fields that did not change sends nothing more.
type SignIn struct {
	cfg SignInConfig

	// Email and Password are the fields as typed (the page keeps them in
	// step).
	Email, Password string
	// Busy is set while a try is on its way.
	Busy bool
	// Err is why the last try failed.
	Err error
	// Notice says why the person landed here (a dead invite link).
	Notice string
	// Who is signed in already: the page is a way back (nil for nobody).
	Who *api.Session

	// again is set by an Enter pressed while a try was on its way.
	again bool
}

// deadLinkNotice tells a tester why their invite link did not sign them in
// and what to do: every case ends with asking for a new link.
var deadLinkNotice = map[string]string{
	"":        "",
	"invalid": "That invite link no longer works. Ask the extension's admin for a new one.",
	"used": "That invite link was used already, in another browser: each link signs in one browser, once. " +
		"If that was you, carry on there; otherwise ask the extension's admin for a new link.",
	"expired": "That invite link expired before it was used. Ask the extension's admin for a new one.",
}

// DeadLinkNotice is what the sign-in page says for its ?link= (see Open):
// "" for none, and a link it does not know is one that no longer works.
func DeadLinkNotice(link string) string {
	if n, ok := deadLinkNotice[link]; ok {
		return n
	}
	return deadLinkNotice["invalid"]
}

// NewSignIn returns the page's model; Open shows it.
func NewSignIn(cfg SignInConfig) *SignIn { return &SignIn{cfg: cfg} }

// Open shows the page; link says why an invite link that did not sign the
// person in brought them here (the sign-in page's ?link=): "used" by
// another browser, "expired", or "invalid" (replaced, or never made); ""
// for none.
func (p *SignIn) Open(link string) {
	if p.cfg.Title != nil {
		p.cfg.Title("Sign in")
	}
	p.Notice = DeadLinkNotice(link)
	p.cfg.Session.Check(p.cfg.Env, func(who *api.Session) { p.Who = who })
}

// Submit is Enter in a field or the Sign in button.
func (p *SignIn) Submit() {
	if p.Busy {
		p.again = true
		return
	}
	p.send()
}

// send signs in with the fields as they are now.
func (p *SignIn) send() {
	p.Busy, p.Err, p.again = true, nil, false
	email, password := p.Email, p.Password
	Call(p.cfg.Env, func(ctx context.Context, c *client.Client) (*api.Session, error) {
		return c.SignIn(ctx, email, password)
	}, func(who *api.Session, err error) {
		p.Busy = false
		if err != nil {
			if p.again && (p.Email != email || p.Password != password) {
				p.send() // the answer is for fields no longer there
				return
			}
			p.again, p.Err = false, err
			return
		}
		p.again, p.Password = false, ""
		p.cfg.Session.SignedIn(who)
		to := PathHome
		if who.Kind == api.KindTester {
			to = PathBuilds
		}
		if p.cfg.Navigate != nil {
			p.cfg.Navigate(to)
		}
	})
}

// Home is where a person signed in already goes back to, and its link's
// text.
func (p *SignIn) Home() (path, text string) {
	if p.Who != nil && p.Who.Kind == api.KindTester {
		return PathBuilds, "Go to your builds"
	}
	return PathHome, "Go to your extensions"
}
