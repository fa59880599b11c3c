package ui

import (
	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/model"
)

// PathEnded is the page a revoked tester sees, whatever page they open:
// their access ended, and whom to ask, rather than the admins' sign-in.
const PathEnded = model.PathEnded

// KindEnded is the prerendered problem that says why (GET /api/session's
// answer to a revoked tester).
const KindEnded = "ended"

// EndedPage says that a tester's access ended and whom to ask; its model
// is a model.Ended. The reason comes from the request that was refused
// (the app's model.Session keeps it), else from the server's page.
type EndedPage struct {
	app.Compo
	m *model.Ended
	// given is the server page's reason, read before the first render:
	// the page the app mounts says why before its model opens (OnNav).
	given string
}

func (p *EndedPage) OnInit() {
	if pr, ok := prerendered[api.Problem](KindEnded); ok {
		p.given = pr.Detail
	}
}

func (p *EndedPage) ended(ctx app.Context) *model.Ended {
	if p.m == nil {
		given := ""
		if pr, ok := prerendered[api.Problem](KindEnded); ok {
			given = pr.Detail
		}
		p.m = model.NewEnded(model.EndedConfig{
			Env: pageEnv(ctx), Session: appSession(ctx), Given: given,
			Title:    func(t string) { setTitle(ctx, t) },
			Navigate: ctx.Navigate,
		})
	}
	return p.m
}

func (p *EndedPage) OnPreRender(ctx app.Context) { p.ended(ctx).Fill() }

func (p *EndedPage) OnNav(ctx app.Context) { p.ended(ctx).Open() }

func (p *EndedPage) Render() app.UI {
	detail := p.given
	if p.m != nil && p.m.Detail != "" {
		detail = p.m.Detail
	}
	return shell("",
		app.H1().ID("access-ended").Text("Your access to this beta ended"),
		app.P().ID("ended-detail").Text(detail),
		app.P().Class("muted").Text("Builds you installed from your builds page keep working, but no newer build reaches them."),
	)
}
