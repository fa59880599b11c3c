package ui

import (
	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/model"
)

// sessionState names the app's one model.Session in go-app's state store,
// where every component finds it (in the browser the store lives as long
// as the app; on the server, as long as one page's render).
const sessionState = "betaport.session"

// sessionRef carries the model in the store: the store copies the value a
// pointer points to, so the pointer travels inside a struct.
type sessionRef struct{ s *model.Session }

// appSession returns who is signed in as the app knows it (model.Session),
// made the first time from who the server's page said is visiting.
func appSession(ctx app.Context) *model.Session {
	var ref sessionRef
	ctx.GetState(sessionState, &ref)
	if ref.s == nil {
		s, said := prerendered[api.Session](api.PathSession)
		switch {
		case said && s.Kind != "":
			ref.s = model.NewSession(&s)
		case said: // the server's page said nobody is signed in
			ref.s = model.NewSession(nil)
			ref.s.SignedOut()
		default:
			ref.s = model.NewSession(nil)
		}
		ctx.SetState(sessionState, ref)
	}
	return ref.s
}

// currentSession calls back, on the UI goroutine, with who is signed in (nil
// for nobody), asking the service the first time (model.Session.Check).
// ctx is the component's: once it is gone, the answer is dropped.
func currentSession(ctx app.Context, then func(*api.Session)) {
	appSession(ctx).Check(pageEnv(ctx), then)
}

// signedOut handles an API error that says the person is not signed in by
// sending them to the sign-in page, or a revoked tester to the page that
// says their access ended (model.Session.Refused). It reports whether it
// did.
func signedOut(ctx app.Context, err error) bool {
	to := appSession(ctx).Refused(err)
	if to == "" {
		return false
	}
	ctx.Navigate(to)
	return true
}

// Nav shows who is signed in, as what, and the sign-out button; its
// model is a model.Nav.
type Nav struct {
	app.Compo

	Active string
	m      *model.Nav
}

func (n *Nav) OnMount(ctx app.Context) {
	// Every page has the Nav: its first mount is the app's.
	carryOverPrerenderedFields()
	makeKeptPresses(ctx)
	n.m = model.NewNav(model.NavConfig{
		Env: pageEnv(ctx), Session: appSession(ctx),
		// A full load of the page, not an in-app navigation: it drops
		// everything this page kept in memory about the account.
		Leave: func(path string) { app.Window().Get("location").Call("assign", path) },
	})
	n.m.Open()
}

func (n *Nav) Render() app.UI {
	m := n.m
	if m == nil {
		m = &model.Nav{} // on the server: nobody shown
	}
	s := m.Who
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
			app.If(m.Err != nil, app.Span().Class("state-error").Attr("role", "alert").Text("Signing out failed: "+problemText(m.Err))),
		)
	}
	return app.Div().Class("nav").Body(
		app.Nav().Aria("label", "Main").Body(links...),
		account,
	)
}

func (n *Nav) signOut(ctx app.Context, e app.Event) {
	if n.m != nil {
		n.m.SignOut()
	}
}
