package ui

import (
	"fmt"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
)

// Home lists the extensions the signed-in person may see.
type Home struct {
	app.Compo

	loaded     bool
	err        error
	extensions []api.Extension
}

// OnNav loads the list each time the page is shown.
func (h *Home) OnNav(ctx app.Context) {
	currentSession(ctx, func(s *api.Session) {
		// A tester's home is their builds.
		if s != nil && s.Kind == api.KindTester {
			ctx.Navigate("/builds")
		}
	})
	c := apiClient()
	ctx.Async(func() {
		list, err := c.Extensions(ctx)
		ctx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) {
				return
			}
			h.loaded, h.extensions, h.err = true, list, err
		})
	})
}

func (h *Home) Render() app.UI {
	var body app.UI
	switch {
	case h.err != nil:
		body = statusView("error", problemText(h.err))
	case !h.loaded:
		body = statusView("loading", "Loading extensions…")
	case len(h.extensions) == 0:
		body = statusView("empty", "No extensions yet. Create one with `betaport extension create --team ID --name NAME`.")
	default:
		body = app.Ul().Class("cards").ID("extensions").Body(
			app.Range(h.extensions).Slice(func(i int) app.UI {
				e := h.extensions[i]
				return app.Li().Class("card").Body(
					app.A().Href(fmt.Sprintf("/extensions/%d", e.ID)).Class("card-link").Text(e.Name),
					app.P().Class("muted").Text(currentText(e)),
				)
			}),
		)
	}
	return shell("extensions",
		app.H1().Text("Extensions"),
		body,
	)
}

func currentText(e api.Extension) string {
	if e.CurrentBundle == 0 {
		return "No bundle published yet"
	}
	return fmt.Sprintf("Current bundle #%d", e.CurrentBundle)
}

// downloadLink downloads the bundle testers currently get.
func downloadLink(e api.Extension) app.UI {
	return app.A().Class("button download").Href(api.CurrentBundlePath(e.ID)+"/download").
		Attr("download", "").Text(fmt.Sprintf("Download bundle #%d", e.CurrentBundle))
}
