package ui

import (
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/betaport"
)

// testerRow is its own component so its handlers always see its own tester
// (closures made in a loop go stale: go-app #1107), and its Revoke question
// stays open while the list re-renders.
type testerRow struct {
	app.Compo

	Tester   betaport.Tester
	OnRevoke func(ctx app.Context, t betaport.Tester)
	OnRenew  func(t betaport.Tester)
	Now      func() time.Time

	asking bool
	// ctx is the row's own context: the buttons that move the focus are
	// gone once it moves, and a handler's context ends with its element.
	ctx app.Context
}

func (r *testerRow) OnMount(ctx app.Context) { r.ctx = ctx }

func (r *testerRow) Render() app.UI {
	t := r.Tester
	var actions []app.UI
	switch {
	case t.ID <= 0: // being invited
	case r.asking:
		actions = append(actions, app.Span().Class("confirm-inline").Attr("role", "group").Aria("label", "Revoke "+t.Email+"?").Body(
			button().Type("button").Class("danger confirm-revoke").DataSet("takes-focus", true).Aria("label", "Yes, revoke "+t.Email).Text("Yes, revoke").OnClick(r.confirm),
			button().Type("button").Class("cancel-revoke").Text("Keep").OnClick(r.cancel),
		))
	case t.Status == betaport.TesterRevoked:
		actions = append(actions, button().Type("button").Class("restore").Aria("label", "Restore "+t.Email).Text("Restore").OnClick(r.renew))
	default:
		// A tester who never opened their link may need a new one (the
		// old one stops working); one who did signs in on their own.
		if t.Status == betaport.TesterInvited {
			actions = append(actions, button().Type("button").Class("resend").Aria("label", "New link for "+t.Email).Text("New link").OnClick(r.renew))
		}
		actions = append(actions, button().Type("button").Class("revoke").Aria("label", "Revoke "+t.Email).Text("Revoke").OnClick(r.ask))
	}
	// How old an invite nobody answered is.
	age := ""
	if t.Status == betaport.TesterInvited && t.InvitedAt != nil && r.Now != nil {
		age = ageText(r.Now().Sub(*t.InvitedAt))
	}
	return app.Div().Class("row testers-grid").DataSet("tester", t.ID).Body(
		cell(app.Text(t.Name)),
		cell(app.Text(t.Email)),
		cell(app.Span().Class("badge badge-"+t.Status).Text(t.Status)),
		cell(app.Span().Class("muted invite-age").Text(age)),
		cell(actions...),
	)
}

// ageText says how long ago an invite was sent: "today", "3 days ago".
func ageText(d time.Duration) string {
	switch days := int(d.Hours() / 24); {
	case days < 1:
		return "today"
	case days == 1:
		return "1 day ago"
	default:
		return itoa(days) + " days ago"
	}
}

func (r *testerRow) selector(class string) string {
	return `[data-tester="` + itoa(int(r.Tester.ID)) + `"] .` + class
}

func (r *testerRow) ask(ctx app.Context, e app.Event) {
	r.asking = true
	focusFirst(ctx, r.selector("confirm-revoke"))
}

func (r *testerRow) cancel(ctx app.Context, e app.Event) {
	r.asking = false
	focusFirst(rowCtx(r.ctx, ctx), r.selector("revoke"))
}

func (r *testerRow) confirm(ctx app.Context, e app.Event) {
	r.asking = false
	if r.OnRevoke != nil {
		r.OnRevoke(ctx, r.Tester)
	}
}

func (r *testerRow) renew(ctx app.Context, e app.Event) {
	if r.OnRenew != nil {
		r.OnRenew(r.Tester)
	}
}
