package ui

import (
	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
)

// BuildsPage is a tester's home: the builds of the extensions they test.
type BuildsPage struct {
	app.Compo

	loaded     bool
	err        error
	extensions []api.Extension
}

func (p *BuildsPage) OnNav(ctx app.Context) {
	c := apiClient()
	ctx.Async(func() {
		list, err := c.Extensions(ctx)
		ctx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) {
				return
			}
			p.loaded, p.extensions, p.err = true, list, err
		})
	})
}

func (p *BuildsPage) Render() app.UI {
	var body app.UI
	switch {
	case p.err != nil:
		body = statusView("error", problemText(p.err))
	case !p.loaded:
		body = statusView("loading", "Loading your builds…")
	case len(p.extensions) == 0:
		body = statusView("empty", "You are not testing any extension yet. Open the invite link your admin sent you.")
	default:
		body = app.Ul().Class("cards").ID("builds").Body(
			app.Range(p.extensions).Slice(func(i int) app.UI {
				e := p.extensions[i]
				return app.Li().Class("card build").Body(
					app.Strong().Class("build-name").Text(e.Name),
					app.P().Class("muted").Text(currentText(e)),
					app.If(e.CurrentBundle != 0, downloadLink(e)),
				)
			}),
		)
	}
	return shell("builds", app.H1().Text("My builds"), body)
}
