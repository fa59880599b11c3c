package ui

import (
	"sync"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/client"
)

// The signed-in person, fetched once per page load and shared by every
// component; sign-in and sign-out replace it.
var who struct {
	sync.Mutex
	loaded  bool
	session *api.Session
}

func setSession(s *api.Session) {
	who.Lock()
	who.loaded, who.session = true, s
	who.Unlock()
}

// currentSession calls back, on the UI goroutine, with who is signed in (nil
// for nobody), fetching it the first time.
func currentSession(ctx app.Context, then func(*api.Session)) {
	who.Lock()
	loaded, s := who.loaded, who.session
	who.Unlock()
	if loaded {
		then(s)
		return
	}
	c := apiClient()
	ctx.Async(func() {
		s, err := c.Session(ctx)
		if err != nil && !client.IsUnauthorized(err) {
			return // offline or failing: show nothing rather than guess
		}
		// A sign-in answered while this was on its way knows better.
		who.Lock()
		if !who.loaded {
			who.loaded, who.session = true, s
		}
		s = who.session
		who.Unlock()
		ctx.Dispatch(func(app.Context) { then(s) })
	})
}

// signedOut handles an API error that says the person is not signed in by
// sending them to the sign-in page. It reports whether it did.
func signedOut(ctx app.Context, err error) bool {
	if !client.IsUnauthorized(err) {
		return false
	}
	if accessEnded(ctx, err) {
		return true
	}
	setSession(nil)
	ctx.Navigate("/login")
	return true
}

// Nav shows who is signed in, as what, and the sign-out button.
type Nav struct {
	app.Compo

	Active  string
	session *api.Session
	err     error
}

func (n *Nav) OnMount(ctx app.Context) {
	// Every page has the Nav: its first mount is the app's.
	carryOverPrerenderedFields()
	currentSession(ctx, func(s *api.Session) { n.session = s })
}

func (n *Nav) Render() app.UI {
	s := n.session
	links := []app.UI{}
	switch {
	case s == nil:
	case s.Kind == api.KindAdmin:
		links = append(links, navLink("/", "Extensions", n.Active == "extensions"))
	case s.Kind == api.KindTester:
		links = append(links, navLink("/builds", "My builds", n.Active == "builds"))
	}
	var account app.UI
	if s != nil {
		var label string
		switch {
		case s.Kind == api.KindAdmin && s.User != nil && s.Team != nil:
			label = s.User.Email + " · Admin of " + s.Team.Name
		case s.Tester != nil:
			label = "Tester · " + s.Tester.Email
		}
		account = app.Div().Class("account").Body(
			app.Span().ID("signed-in-as").Text(label),
			button().ID("sign-out").Type("button").Text("Sign out").OnClick(n.signOut),
			app.If(n.err != nil, app.Span().Class("state-error").Attr("role", "alert").Text("Signing out failed: "+problemText(n.err))),
		)
	}
	return app.Div().Class("nav").Body(
		app.Nav().Aria("label", "Main").Body(links...),
		account,
	)
}

func (n *Nav) signOut(ctx app.Context, e app.Event) {
	c := apiClient()
	ctx.Async(func() {
		err := c.SignOut(ctx)
		ctx.Dispatch(func(ctx app.Context) {
			n.err = err
			if err != nil {
				app.Log("signing out:", err)
				return
			}
			// A full load of the sign-in page, not an in-app navigation: it
			// drops everything this page kept in memory about the account.
			setSession(nil)
			app.Window().Get("location").Call("assign", "/login")
		})
	})
}
