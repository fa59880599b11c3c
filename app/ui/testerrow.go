package ui

import (
	"strings"
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/model"
)

// testerRow is its own component so its handlers always see its own tester
// (closures made in a loop go stale: go-app #1107). Whether its revoke
// question is open is the page model's (model.Testers.Asking), so the
// question outlives the row's component as the list's window moves.
type testerRow struct {
	app.Compo

	Tester betaport.Tester
	// Asking: its revoke question is open; Ready: the question's Yes takes
	// a press (model.ConfirmDelay after it showed).
	Asking, Ready bool
	// The presses, each given the row's tester.
	OnAsk, OnKeep, OnRevoke, OnRenew func(t betaport.Tester)
	Now                              func() time.Time
}

func (r *testerRow) Render() app.UI {
	t := r.Tester
	var actions []app.UI
	var question app.UI
	switch {
	case t.ID <= 0: // being invited
	case t.Status == betaport.TesterRevoked:
		actions = append(actions, button().Type("button").Class("restore").Aria("label", "Restore "+t.Email).Text("Restore").OnClick(r.renew))
	default:
		// Revoke first, at the same place on every row. A tester who never
		// opened their link may need a new one (the old one stops
		// working); one who did signs in on their own.
		actions = append(actions, button().Type("button").Class("revoke").Aria("label", "Revoke "+t.Email).
			Aria("expanded", r.Asking).Text("Revoke").OnClick(r.ask))
		if t.Status == betaport.TesterInvited {
			actions = append(actions, button().Type("button").Class("resend").Aria("label", "New link for "+t.Email).Text("New link").OnClick(r.renew))
		}
		if r.Asking {
			// What revoking does to their installed copy, said by the
			// question, under the row, away from the Revoke that asked.
			question = confirmPop("Revoke "+t.Email+"?", RevokeEffect,
				button().Type("button").Class("danger confirm-revoke").DataSet("takes-focus", true).Aria("disabled", !r.Ready).
					Aria("label", "Yes, revoke "+t.Email).Text("Yes, revoke").OnClick(r.confirm),
				button().Type("button").Class("cancel-revoke").Text("Keep").OnClick(r.cancel),
			)
		}
	}
	// How old an invite nobody answered is, and what its link can still
	// do: "3 days ago · link expires in 11 days".
	age := ""
	if r.Now != nil {
		now := r.Now()
		if t.Status == betaport.TesterInvited && t.InvitedAt != nil {
			age = ageText(now.Sub(*t.InvitedAt))
		}
		if link := model.LinkExpiry(t, now); link != "" {
			age = strings.TrimPrefix(age+" · "+link, " · ")
		}
	}
	row := app.Div().Class("row testers-grid").DataSet("tester", t.ID)
	if r.Asking {
		row = row.Class("row-open")
	}
	return row.Body(
		// Cut to the column on a wide window: the whole on hover.
		// A tester on another channel than the default one says so after
		// their name (the filter above lists a channel's testers).
		// (In the tree only then: the cell's text is the name alone.)
		cell(app.Span().Title(t.Name).Text(t.Name),
			app.If(t.Channel != "" && t.Channel != betaport.DefaultChannel, app.Small().Class("tester-channel").Text(t.Channel))),
		cell(app.Span().Title(t.Email).Text(t.Email)),
		cell(app.Span().Class("badge badge-"+t.Status).Text(t.Status)),
		cell(app.Span().Class("muted invite-age").Title(age).Text(age)),
		cell(app.Span().Class("installed").Title(installedText(t, r.Now)).Text(installedText(t, r.Now))),
		// The question is in the cell (a row holds only cells), shown
		// under the row.
		cell(append(actions, question)...),
	)
}

// RevokeEffect is what revoking a tester does to them and their installed
// copy, as the service does it (their update URL answers "no update",
// their downloads 404); their page, once revoked, says the same.
const RevokeEffect = "Their access ends, and the copy they installed gets no newer build: it keeps the build it has."

// confirmPop is a destructive action's question under its row (over the
// rows below), away from the button that asked: what it does, then its
// Yes and its No.
func confirmPop(question, effect string, yes, no app.UI) app.UI {
	return app.Div().Class("confirm-pop").Attr("role", "group").Aria("label", question).Body(
		app.P().Text(effect), yes, no,
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
