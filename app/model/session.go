package model

import (
	"context"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/client"
)

// The pages the app sends a person to.
const (
	PathHome   = "/"
	PathLogin  = "/login"
	PathBuilds = "/builds"
	// PathEnded is the page a revoked tester sees, whatever page they
	// open: their access ended, and whom to ask.
	PathEnded = "/ended"
)

// Session is who is signed in: one for the whole app, which every page
// asks (Check) and which a sign-in, a sign-out and a refused request
// change. app/ui keeps it in go-app's state store, where each page finds
// it and hands it to its model. Its methods are for the UI goroutine.
type Session struct {
	known bool
	who   *api.Session
	// ended is the reason the last refused request gave for a tester's
	// access ending, for the page that says so.
	ended string
}

// NewSession returns the app's session: who, when the page the server
// rendered said who is visiting; nil leaves it unknown until a page asks.
func NewSession(who *api.Session) *Session {
	return &Session{known: who != nil, who: who}
}

// Who returns who is signed in (nil for nobody) and whether that is known.
func (s *Session) Who() (who *api.Session, known bool) { return s.who, s.known }

// Check calls then with who is signed in (nil for nobody): at once when
// that is known, else once the service has answered, on e's page (once the
// page is gone, never). Offline or failing, then is not called: a page
// shows nothing rather than guess.
//
// The first answer makes it known; an answer that arrives after it became
// known otherwise (a sign-in answered while the check was on its way, a
// sign-out, a refused request) does not overwrite it: then gets what is
// known.
func (s *Session) Check(e Env, then func(*api.Session)) {
	if s.known {
		then(s.who)
		return
	}
	Call(e, func(ctx context.Context, c *client.Client) (*api.Session, error) {
		return c.Session(ctx)
	}, func(who *api.Session, err error) {
		if err != nil && !client.IsUnauthorized(err) {
			return
		}
		if !s.known {
			s.known, s.who = true, who
		}
		then(s.who)
	})
}

// SignedIn records who a sign-in signed in.
func (s *Session) SignedIn(who *api.Session) {
	s.known, s.who, s.ended = true, who, ""
}

// SignedOut records that nobody is signed in.
func (s *Session) SignedOut() { s.known, s.who = true, nil }

// Refused reads the error a request got and says where the person goes:
// PathEnded when it says a tester's access ended (Ended then says why),
// PathLogin when it says nobody is signed in; either way nobody is, from
// then on. Any other error, or none, is not its business: "".
func (s *Session) Refused(err error) string {
	if !client.IsUnauthorized(err) {
		return ""
	}
	s.SignedOut()
	if pr, _ := api.AsProblem(err); pr.Type == api.ProblemAccessEnded {
		s.ended = pr.Detail
		return PathEnded
	}
	return PathLogin
}

// Ended is the reason the last refused request gave for a tester's access
// ending, "" when none did.
func (s *Session) Ended() string { return s.ended }

// NavConfig is what the top bar gives its model.
type NavConfig struct {
	Env
	Session *Session
	// Leave loads path as a new page, not by an in-app navigation: after a
	// sign-out, nothing the page kept in memory about the account stays.
	Leave func(path string)
}

// Nav is the top bar's account: who is signed in, as what, and signing
// out. Its fields and methods are for the UI goroutine.
type Nav struct {
	cfg NavConfig

	// Who is signed in: nil for nobody, or while unknown.
	Who *api.Session
	// Err is why the last sign-out failed.
	Err error

	signingOut bool
}

// NewNav returns the top bar's model; Open fills it.
func NewNav(cfg NavConfig) *Nav { return &Nav{cfg: cfg} }

// Open shows who is signed in, once known.
func (n *Nav) Open() {
	n.cfg.Session.Check(n.cfg.Env, func(who *api.Session) { n.Who = who })
}

// SignOut ends the session, then loads the sign-in page afresh. A press
// while it is on its way does nothing more; a failure is shown, and the
// person is still signed in.
func (n *Nav) SignOut() {
	if n.signingOut {
		return
	}
	n.signingOut = true
	Call(n.cfg.Env, func(ctx context.Context, c *client.Client) (struct{}, error) {
		return struct{}{}, c.SignOut(ctx)
	}, func(_ struct{}, err error) {
		n.signingOut, n.Err = false, err
		if err != nil {
			return
		}
		n.cfg.Session.SignedOut()
		if n.cfg.Leave != nil {
			n.cfg.Leave(PathLogin)
		}
	})
}

// EndedConfig is what the access-ended page gives its model.
type EndedConfig struct {
	Env
	Session *Session
	// Given is the reason the page the server rendered carried ("": none).
	Given string
	// Title titles the page; Navigate goes to an in-app page. Either may
	// be nil.
	Title    func(title string)
	Navigate func(path string)
}

// Ended is the page that tells a tester their access ended, and why. Its
// fields and methods are for the UI goroutine.
type Ended struct {
	cfg EndedConfig

	// Detail is the reason, as the service gave it.
	Detail string
}

// NewEnded returns the page's model.
func NewEnded(cfg EndedConfig) *Ended { return &Ended{cfg: cfg} }

// Fill takes the reason the request that was refused gave, else the one
// the server's page carried, and reports whether there was one. It sends
// nothing (the server renders with it).
func (p *Ended) Fill() bool {
	switch {
	case p.cfg.Session != nil && p.cfg.Session.Ended() != "":
		p.Detail = p.cfg.Session.Ended()
	case p.cfg.Given != "":
		p.Detail = p.cfg.Given
	default:
		return false
	}
	return true
}

// Open shows the page: the reason known, else the service's. Someone who
// is not (or no longer) a revoked tester has nothing to read here and goes
// home.
func (p *Ended) Open() {
	if p.cfg.Title != nil {
		p.cfg.Title("Your access ended")
	}
	if p.Fill() {
		return
	}
	Call(p.cfg.Env, func(ctx context.Context, c *client.Client) (*api.Session, error) {
		return c.Session(ctx)
	}, func(_ *api.Session, err error) {
		if pr, ok := api.AsProblem(err); ok && pr.Type == api.ProblemAccessEnded {
			p.Detail = pr.Detail
			return
		}
		if p.cfg.Navigate != nil {
			p.cfg.Navigate(PathHome)
		}
	})
}
