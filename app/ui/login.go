package ui

import (
	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/model"
)

// LoginPage signs an admin in with e-mail and password; its state and
// steps are a model.SignIn's (tested natively in app/model).
type LoginPage struct {
	app.Compo

	m *model.SignIn
	// notice is what the page says of a dead invite link when the server
	// renders it (before the app runs, the model does not exist).
	notice string
}

// OnPreRender writes why an invite link did not sign the person in into
// the page the server sends: the tester reads it without waiting for the
// app.
func (p *LoginPage) OnPreRender(ctx app.Context) {
	p.notice = model.DeadLinkNotice(ctx.Page().URL().Query().Get("link"))
}

func (p *LoginPage) OnNav(ctx app.Context) {
	if p.m == nil {
		// The page's own context, not an event's: go-app ends an event's
		// context with the next event on the form, which aborted the
		// second attempt after a typo and left the form busy for good.
		p.m = model.NewSignIn(model.SignInConfig{
			Env: pageEnv(ctx), Session: appSession(ctx),
			Title:    func(t string) { setTitle(ctx, t) },
			Navigate: ctx.Navigate,
		})
	}
	p.m.Open(ctx.Page().URL().Query().Get("link"))
}

// state is the model, or an empty one before it exists (on the server,
// and in the render that mounts the page).
func (p *LoginPage) state() *model.SignIn {
	if p.m == nil {
		return &model.SignIn{}
	}
	return p.m
}

func (p *LoginPage) Render() app.UI {
	m := p.state()
	// Both messages are always in the page, hidden when empty: a message
	// appearing or going must not remount the form, since go-app drops a
	// dispatch whose source element is gone — the sign-in after a typo then
	// never finished.
	errText := ""
	if m.Err != nil {
		errText = problemText(m.Err)
	}
	// Signed in already (a dead invite link opened in an admin's browser):
	// the way back to where they work, above the form.
	home, homeText := m.Home()
	notice := m.Notice
	if p.m == nil {
		notice = p.notice
	}
	return shell("login",
		app.Div().Class("login").Body(
			app.H1().Text("Sign in"),
			app.P().Class("muted").Text("Admins sign in with their e-mail and password. Testers open the personal link their admin sent them."),
			app.P().ID("login-error").Class("state state-error").Attr("role", "alert").Hidden(m.Err == nil).Text(errText),
			app.P().ID("login-notice").Class("state state-error").Attr("role", "alert").Hidden(m.Err != nil || notice == "").Text(notice),
			app.P().ID("login-signed-in").Hidden(m.Who == nil).Body(
				app.Text("You are signed in already. "), app.A().ID("login-home").Href(home).Text(homeText),
			),
			app.Form().ID("login-form").OnSubmit(p.submit).Body(
				app.Label().For("email").Text("E-mail"),
				typedValue(app.Input().ID("email").Type("email").Name("email").AutoComplete(true).Required(true), m.Email).
					OnInput(p.typedEmail),
				app.Label().For("password").Text("Password"),
				typedValue(app.Input().ID("password").Type("password").Name("password").Required(true), m.Password).
					OnInput(p.typedPassword),
				// Busy, not disabled: a disabled button drops the focus to
				// <body> while the request runs.
				button().ID("sign-in").Type("submit").Class("primary").Aria("busy", m.Busy).Text("Sign in"),
			),
		),
	)
}

func (p *LoginPage) typedEmail(ctx app.Context, e app.Event) {
	if p.m != nil {
		p.m.Email = ctx.JSSrc().Get("value").String()
	}
}

func (p *LoginPage) typedPassword(ctx app.Context, e app.Event) {
	if p.m != nil {
		p.m.Password = ctx.JSSrc().Get("value").String()
	}
}

func (p *LoginPage) submit(ctx app.Context, e app.Event) {
	e.PreventDefault()
	if p.m != nil {
		p.m.Submit()
	}
}
