package model

import (
	"context"
	"sync"

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
	// check is the check on its way, and waiting the pages it tells when
	// answered: the top bar and the page under it both ask as a page
	// opens, and one request answers both.
	check   *sessionCheck
	waiting []func(*api.Session)
}

// sessionCheck is a check on its way for the pages that joined it: it ends
// (its answer dropped) once every one of them is gone.
type sessionCheck struct {
	ctx    context.Context // ended once every page is gone
	cancel context.CancelFunc
	mu     sync.Mutex
	pages  []context.Context
}

// join adds a page to the check, unless every page it had is gone.
func (c *sessionCheck) join(page context.Context) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pages) > 0 && !c.aliveLocked() {
		return false
	}
	c.pages = append(c.pages, page)
	context.AfterFunc(page, func() {
		if !c.alive() {
			c.cancel() // nobody waits: the request is aborted
		}
	})
	return true
}

// alive reports whether a page that joined the check is still there.
func (c *sessionCheck) alive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.aliveLocked()
}

func (c *sessionCheck) aliveLocked() bool {
	for _, p := range c.pages {
		if p.Err() == nil {
			return true
		}
	}
	return false
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
// page is gone, never). Checks made while one is on its way wait for its
// answer: one request. Offline or failing, then is not called: a page
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
	page := e.context()
	told := func(who *api.Session) {
		if page.Err() == nil {
			then(who)
		}
	}
	if s.check != nil && s.check.join(page) {
		s.waiting = append(s.waiting, told)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	check := &sessionCheck{ctx: ctx, cancel: cancel}
	check.join(page)
	s.check, s.waiting = check, []func(*api.Session){told}
	// Not Call: the check is the app's, for every page that joins it, and
	// is over only once all of them are gone.
	e.Async(func() {
		reqCtx, cancelReq := context.WithTimeout(ctx, RequestTimeout)
		who, err := e.Client.Session(reqCtx)
		cancelReq()
		if !check.alive() {
			return
		}
		e.Dispatch(func() {
			if s.check != check {
				return // abandoned by its pages, and another check began
			}
			waiting := s.waiting
			s.check, s.waiting = nil, nil
			cancel()
			if !check.alive() || err != nil && !client.IsUnauthorized(err) {
				return // nobody to tell, or no answer: the next page asks again
			}
			if !s.known {
				s.known, s.who = true, who
			}
			for _, then := range waiting {
				then(s.who)
			}
		})
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
