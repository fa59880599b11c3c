package ui

import (
	"context"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
)

// LoginPage signs an admin in with e-mail and password.
type LoginPage struct {
	app.Compo

	email, password string
	busy            bool
	again           bool // submitted again while busy
	err             error
	notice          string
	session         *api.Session // already signed in: this page is a way back
}

func (p *LoginPage) OnNav(ctx app.Context) {
	setTitle(ctx, "Sign in")
	p.notice = ""
	if ctx.Page().URL().Query().Get("link") == "invalid" {
		p.notice = "That invite link no longer works. Ask the extension's admin for a new one."
	}
	currentSession(ctx, func(s *api.Session) { p.session = s })
}

func (p *LoginPage) Render() app.UI {
	// Both messages are always in the page, hidden when empty: a message
	// appearing or going must not remount the form, since go-app drops a
	// dispatch whose source element is gone — the sign-in after a typo then
	// never finished.
	errText := ""
	if p.err != nil {
		errText = problemText(p.err)
	}
	// Signed in already (a dead invite link opened in an admin's browser):
	// the way back to where they work, above the form.
	home, homeText := "/", "Go to your extensions"
	if p.session != nil && p.session.Kind == api.KindTester {
		home, homeText = "/builds", "Go to your builds"
	}
	return shell("login",
		app.Div().Class("login").Body(
			app.H1().Text("Sign in"),
			app.P().Class("muted").Text("Admins sign in with their e-mail and password. Testers open the personal link their admin sent them."),
			app.P().ID("login-error").Class("state state-error").Attr("role", "alert").Hidden(p.err == nil).Text(errText),
			app.P().ID("login-notice").Class("state state-error").Attr("role", "alert").Hidden(p.err != nil || p.notice == "").Text(p.notice),
			app.P().ID("login-signed-in").Hidden(p.session == nil).Body(
				app.Text("You are signed in already. "), app.A().ID("login-home").Href(home).Text(homeText),
			),
			app.Form().ID("login-form").OnSubmit(p.submit).Body(
				app.Label().For("email").Text("E-mail"),
				typedValue(app.Input().ID("email").Type("email").Name("email").AutoComplete(true).Required(true), p.email).
					OnInput(ctx2str(&p.email)),
				app.Label().For("password").Text("Password"),
				typedValue(app.Input().ID("password").Type("password").Name("password").Required(true), p.password).
					OnInput(ctx2str(&p.password)),
				// Busy, not disabled: a disabled button drops the focus to
				// <body> while the request runs.
				button().ID("sign-in").Type("submit").Class("primary").Aria("busy", p.busy).Text("Sign in"),
			),
		),
	)
}

func (p *LoginPage) submit(ctx app.Context, e app.Event) {
	e.PreventDefault()
	if p.busy {
		// A person who fixes a typo and presses Enter before the last try
		// has been answered means the fields as they are now: they are
		// sent when that answer comes, not dropped.
		p.again = true
		return
	}
	p.send(ctx)
}

// send signs in with the fields as they are now.
func (p *LoginPage) send(ctx app.Context) {
	p.busy, p.err, p.again = true, nil, false
	email, password := p.email, p.password
	c := apiClient()
	ctx.Async(func() {
		// Not the event's context: go-app ends it with the next event on
		// the form, which aborted the second attempt after a typo and left
		// the form busy for good.
		reqCtx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		s, err := c.SignIn(reqCtx, email, password)
		ctx.Dispatch(func(ctx app.Context) {
			p.busy = false
			if err != nil {
				if p.again && (p.email != email || p.password != password) {
					p.send(ctx) // the answer is for fields no longer there
					return
				}
				p.again, p.err = false, err
				return
			}
			p.again = false
			setSession(s)
			p.password = ""
			if s.Kind == api.KindTester {
				ctx.Navigate("/builds")
				return
			}
			ctx.Navigate("/")
		})
	})
}

// ctx2str is an input handler that keeps a field in step with the input.
func ctx2str(field *string) app.EventHandler {
	return func(ctx app.Context, e app.Event) {
		*field = ctx.JSSrc().Get("value").String()
	}
}
