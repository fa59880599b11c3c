package ui

import (
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
)

// ExtensionPage shows one extension.
type ExtensionPage struct {
	app.Compo

	id        int64
	err       error
	extension *api.Extension
}

// OnNav reads the extension id from the path and loads the extension.
func (p *ExtensionPage) OnNav(ctx app.Context) {
	id, _ := strconv.ParseInt(strings.TrimPrefix(ctx.Page().URL().Path, "/extensions/"), 10, 64)
	p.id, p.extension, p.err = id, nil, nil
	c := apiClient()
	ctx.Async(func() {
		e, err := c.Extension(ctx, id)
		ctx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) {
				return
			}
			p.extension, p.err = e, err
		})
	})
}

func (p *ExtensionPage) Render() app.UI {
	var body []app.UI
	switch {
	case p.err != nil:
		body = []app.UI{app.H1().Text("Extension"), statusView("error", problemText(p.err))}
	case p.extension == nil:
		body = []app.UI{app.H1().Text("Extension"), statusView("loading", "Loading the extension…")}
	default:
		e := p.extension
		body = []app.UI{
			app.P().Class("crumbs").Body(app.A().Href("/").Text("Extensions"), app.Text(" / ")),
			app.H1().ID("extension-name").Text(e.Name),
			app.Dl().Class("facts").Body(
				app.Dt().Text("Extension id"), app.Dd().Text(strconv.FormatInt(e.ID, 10)),
				app.Dt().Text("Current bundle"), app.Dd().ID("current-bundle").Text(currentText(*e)),
			),
			app.If(e.CurrentBundle != 0, app.P().Body(downloadLink(*e))),
			app.P().Body(app.A().ID("testers-link").Href("/extensions/" + strconv.FormatInt(e.ID, 10) + "/testers").Text("Testers")),
		}
	}
	return shell("extensions", body...)
}
