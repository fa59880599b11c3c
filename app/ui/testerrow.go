package ui

import (
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/betaport"
)

// testerRow is its own component so its handlers always see its own tester
// (closures made in a loop go stale: go-app #1107). Whether its revoke
// question is open is the page model's (model.Testers.Asking), so the
// question outlives the row's component as the list's window moves.
type testerRow struct {
	app.Compo

	Tester betaport.Tester
	Asking bool
	// The presses, each given the row's tester.
	OnAsk, OnKeep, OnRevoke, OnRenew func(t betaport.Tester)
	Now                              func() time.Time
}

func (r *testerRow) Render() app.UI {
	t := r.Tester
	var actions []app.UI
	switch {
	case t.ID <= 0: // being invited
	case r.Asking:
		// What revoking does to their installed copy, said by the
		// question (read with it) and on the button (shown on hover).
		const effect = "Their access ends, and the copy they installed gets no newer build."
		actions = append(actions, app.Span().Class("confirm-inline").Attr("role", "group").Aria("label", "Revoke "+t.Email+"? "+effect).Body(
			button().Type("button").Class("danger confirm-revoke").DataSet("takes-focus", true).Aria("label", "Yes, revoke "+t.Email).Title(effect).Text("Yes, revoke").OnClick(r.confirm),
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
		cell(app.Span().Class("installed").Text(installedText(t, r.Now))),
		cell(actions...),
	)
}

// installedText says which build the tester's installed copy runs, from
// its last update check with their own update URL: "2.0.1 · 3 h ago",
// "2.0.1 · 9 days without a check", or "not installed" before the first.
func installedText(t betaport.Tester, now func() time.Time) string {
	if t.LastCheckAt == nil || t.InstalledVersion == "" || now == nil {
		return "not installed"
	}
	d := now().Sub(*t.LastCheckAt)
	switch {
	case d >= betaport.SilentDays*24*time.Hour:
		return t.InstalledVersion + " · " + itoa(int(d.Hours()/24)) + " days without a check"
	case d < time.Hour:
		return t.InstalledVersion + " · " + itoa(max(int(d.Minutes()), 0)) + " min ago"
	case d < 24*time.Hour:
		return t.InstalledVersion + " · " + itoa(int(d.Hours())) + " h ago"
	default:
		return t.InstalledVersion + " · " + ageText(d)
	}
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

func (r *testerRow) press(on func(betaport.Tester)) {
	if on != nil {
		on(r.Tester)
	}
}

func (r *testerRow) ask(ctx app.Context, e app.Event)     { r.press(r.OnAsk) }
func (r *testerRow) cancel(ctx app.Context, e app.Event)  { r.press(r.OnKeep) }
func (r *testerRow) confirm(ctx app.Context, e app.Event) { r.press(r.OnRevoke) }
func (r *testerRow) renew(ctx app.Context, e app.Event)   { r.press(r.OnRenew) }
