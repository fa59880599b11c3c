package ui

import (
	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
)

// PathEnded is the page a revoked tester sees, whatever page they open:
// their access ended, and whom to ask, rather than the admins' sign-in.
const PathEnded = "/ended"

// KindEnded is the prerendered problem that says why (GET /api/session's
// answer to a revoked tester).
const KindEnded = "ended"

// EndedPage says that a tester's access ended and whom to ask.
type EndedPage struct {
	app.Compo
	detail string
}

func (p *EndedPage) OnPreRender(ctx app.Context) { p.fill() }

func (p *EndedPage) OnNav(ctx app.Context) {
	setTitle(ctx, "Your access ended")
	if p.fill() {
		return
	}
	c := apiClient()
	ctx.Async(func() {
		_, err := c.Session(ctx)
		ctx.Dispatch(func(ctx app.Context) {
			if pr, ok := api.AsProblem(err); ok && pr.Type == api.ProblemAccessEnded {
				p.detail = pr.Detail
				return
			}
			// Not (or no longer) a revoked tester: nothing to say here.
			ctx.Navigate("/")
		})
	})
}

// endedDetail is the reason the last refused request gave, for the page
// the app goes to next.
var endedDetail string

// fill takes the reason from the request that was refused, or from the
// page's prerendered data, when there is one.
func (p *EndedPage) fill() bool {
	if endedDetail != "" {
		p.detail = endedDetail
		return true
	}
	if pr, ok := prerendered[api.Problem](KindEnded); ok {
		p.detail = pr.Detail
		return true
	}
	return false
}

func (p *EndedPage) Render() app.UI {
	return shell("",
		app.H1().ID("access-ended").Text("Your access to this beta ended"),
		app.P().ID("ended-detail").Text(p.detail),
		app.P().Class("muted").Text("Builds you installed keep working, but they no longer update."),
	)
}

// accessEnded handles an API error that says a tester's access ended by
// showing the page that says so. It reports whether it did.
func accessEnded(ctx app.Context, err error) bool {
	pr, ok := api.AsProblem(err)
	if !ok || pr.Type != api.ProblemAccessEnded {
		return false
	}
	setSession(nil)
	endedDetail = pr.Detail
	ctx.Navigate(PathEnded)
	return true
}
