package ui

import (
	"fmt"
	"strconv"
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/model"
)

// bundleRow is one bundle in a list: an extension's bundles for its admins
// (the infinite list and the page by page view), or, as a Build, one of a
// tester's builds. It is its own component, keyed by its bundle, so its
// links never see another row's bundle (go-app #1107).
//
// Both show the bundle's number, version and publication, and a button
// that opens the bundle's release notes when it has some; an admin's row
// adds the current badge, "rollback of #N", size, SHA-256, the zip and,
// given Rollback, "Roll back to #N" (asked, then confirmed inline); a
// build leads with the extension's name and ends with the current build's
// two downloads. Its nodes are the same for every bundle of one list
// (hidden when they do not apply): go-app matches children by position,
// and a row may be given another bundle as the window moves, when its
// open notes and question are closed.
//
// Rows are equally tall (the list windows them): open notes, and a failed
// rollback's message, float over the rows below.
//
// What the row shows open and its question are a model.BundleRow's; the
// row renders it, hands it the person's presses and moves the focus where
// it says.
type bundleRow struct {
	app.Compo
	Bundle betaport.Bundle
	Build  bool
	// Rollback, when set, is the page's rollbacks: the row offers to serve
	// its bundle again (an admin's list). RollingBack says its bundle is
	// being served again (a field of its own: go-app renders a row again
	// when one of its fields changes).
	Rollback    *model.Rollback
	RollingBack bool
	// Channels, in an admin's list, says which channels serve the bundle,
	// and a rollout's reach ("beta · 25 % · 12 of 48 testers on it").
	Channels string
	// OnDownload, for a build, is told its download started (Install or
	// Zip pressed).
	OnDownload func()

	m model.BundleRow
	// ctx is the row's own: a handler's context ends with its element.
	ctx app.Context
}

func (r *bundleRow) OnMount(ctx app.Context) { r.ctx = ctx }

// OnUpdate gives the model the row's bundle: another one closes the notes
// and the question.
func (r *bundleRow) OnUpdate(ctx app.Context) { r.sync() }

func (r *bundleRow) sync() {
	r.m.Rollback = r.Rollback
	r.m.Show(r.Bundle)
}

func (r *bundleRow) Render() app.UI {
	r.sync()
	b := r.Bundle
	row, number := app.Div().Class("row bundles-grid").DataSet("bundle", b.Number), fmt.Sprintf("#%d ", b.Number)
	if r.Build {
		row, number = app.Div().Class("row builds-grid").DataSet("build", b.ID), fmt.Sprintf("#%d", b.Number)
	}
	if r.m.NotesShown() || r.m.AsksRollback() {
		row = row.Class("row-open")
	}
	cells := make([]app.UI, 0, 7)
	if r.Build {
		cells = append(cells, cell(app.Strong().Class("build-name").Text(buildName(b))))
	}
	// The testers' reports on it not resolved yet, under the number (the
	// actions' cell has no room left on a 1280 px window): on the
	// rollback's line when it is one.
	var open app.UI
	if !r.Build && b.OpenFeedback > 0 {
		open = app.A().Class("open-feedback").
			Href(fmt.Sprintf("/extensions/%d/feedback?bundle=%d&status=open", b.ExtensionID, b.Number)).
			Aria("label", fmt.Sprintf("%s on bundle #%d", openReports(b.OpenFeedback), b.Number)).
			Title(openReports(b.OpenFeedback)).Text(fmt.Sprintf("%d open", b.OpenFeedback))
	}
	numberCell := app.Span().Class("bundle-number").Body(
		app.Text(number),
		app.If(!r.Build && b.Current, app.Span().Class("badge badge-active").Text("current")),
		app.If(open != nil && b.RollbackOf == 0, app.Small().Class("open-line").Body(open)),
		app.Small().Class("rollback-of").Hidden(b.RollbackOf == 0).Body(
			app.If(open != nil && b.RollbackOf != 0, open, app.Text(" · ")),
			app.Text(fmt.Sprintf("rollback of #%d", b.RollbackOf))),
	)
	if r.Build {
		// A build's notes go with its number: the row has no room for a
		// column of its own on a phone.
		cells = append(cells, app.Span().Attr("role", "cell").Class("build-number").Body(numberCell, r.notesToggle(), r.notesPanel()))
	} else {
		cells = append(cells, cell(numberCell))
	}
	cells = append(cells, cell(versionView(b)))
	if !r.Build {
		cells = append(cells,
			cell(app.Text(humanSize(b.Size))),
			cell(app.Code().Title(b.SHA256).Text(shortSHA(b.SHA256))),
		)
	}
	cells = append(cells, cell(app.Text(b.CreatedAt.Local().Format(time.DateTime))))
	if r.Build {
		// The links are the cell's only nodes: nothing after them moves
		// when they come or go.
		cells = append(cells, app.Span().Attr("role", "cell").Class("build-links").Body(app.If(b.Current, bundleLinks(b.ExtensionID, b.Number, r.downloading))))
	} else {
		cells = append(cells, app.Span().Attr("role", "cell").Class("bundle-actions").Body(
			r.notesToggle(),
			// Where a hidden button would be, a blank as wide: the
			// controls after it keep their place from row to row.
			app.Span().Class("notes-slot").Aria("hidden", true).Hidden(b.ReleaseNotes != ""),
			r.rollbackButton(),
			app.Span().Class("rollback-slot").Aria("hidden", true).Hidden(r.m.OffersRollback()),
			app.A().Href(fmt.Sprintf("%s/%d/download", api.BundlesPath(b.ExtensionID), b.Number)).
				Attr("download", "").Aria("label", fmt.Sprintf("Download bundle #%d", b.Number)).Text("Download"),
			r.notesPanel(),
			r.rollbackQuestion(),
			// Which channels serve the bundle, last: the widest cell has room.
			app.Small().Class("bundle-channels").Hidden(r.Channels == "").Title(r.Channels).Text(r.Channels),
		))
	}
	return row.OnKeyDown(r.onKey).Body(cells...)
}

// act readies the row's model for a press: its focus moves run in the
// row's own context (the pressed element may be gone by then).
func (r *bundleRow) act(handler app.Context) *model.BundleRow {
	r.sync()
	ctx := r.ctx
	if ctx == nil {
		ctx = handler
	}
	r.m.Focus = func(c model.RowControl) { focusFirst(ctx, r.controlSelector(c)) }
	return &r.m
}

// onKey: Escape closes the question, or the open notes, and leaves the
// focus on the button that opened them.
func (r *bundleRow) onKey(ctx app.Context, e app.Event) {
	if e.Get("key").String() == "Escape" {
		r.act(ctx).Escape()
	}
}

// buildName is how a tester's builds name the extension: as its admins
// named it, the same on every build (each manifest may say otherwise).
func buildName(b betaport.Bundle) string {
	if b.ExtensionName != "" {
		return b.ExtensionName
	}
	return b.Name
}

// downloading tells the page a build's download started; the browser
// downloads it as it would without.
func (r *bundleRow) downloading(ctx app.Context, e app.Event) {
	if r.OnDownload != nil {
		r.OnDownload()
	}
}

// notesID is the id of the row's notes panel: bundle ids are unique across
// extensions (a tester's builds list several).
func (r *bundleRow) notesID() string { return "notes-" + strconv.FormatInt(r.Bundle.ID, 10) }

// notesToggle opens and closes the bundle's release notes; a bundle
// without notes has none (hidden, so the row's nodes stay in place).
func (r *bundleRow) notesToggle() app.UI {
	b := r.Bundle
	return button().Type("button").Class("notes-toggle").Hidden(b.ReleaseNotes == "").
		Aria("expanded", r.m.NotesOpen).Aria("controls", r.notesID()).
		Aria("label", fmt.Sprintf("Release notes of #%d", b.Number)).
		Text("Notes").OnClick(r.toggleNotes)
}

// notesPanel holds the notes while open; they are parsed only then.
func (r *bundleRow) notesPanel() app.UI {
	b := r.Bundle
	open := r.m.NotesShown()
	panel := app.Div().ID(r.notesID()).Class("notes-pop").Attr("role", "region").
		Aria("label", fmt.Sprintf("Release notes of #%d", b.Number)).Hidden(!open)
	if !open {
		return panel
	}
	return panel.Body(notesView("", b.ReleaseNotes))
}

func (r *bundleRow) toggleNotes(ctx app.Context, e app.Event) { r.act(ctx).ToggleNotes() }

// rollbackButton is "Roll back to #N"; pressed, it asks (rollbackQuestion)
// and stays where it is. The current bundle has none.
func (r *bundleRow) rollbackButton() app.UI {
	name := fmt.Sprintf("#%d", r.Bundle.Number)
	rolling := r.m.RollingBack()
	label := "Roll back to " + name
	if rolling {
		label = "Rolling back to " + name + "…"
	}
	return button().Type("button").Class("rollback").Hidden(!r.m.OffersRollback()).Aria("disabled", rolling).
		Aria("expanded", r.m.AsksRollback()).Aria("controls", r.questionID()).
		Text(label).OnClick(r.askRollback)
}

// rollbackQuestion asks before a rollback: what it does, "Yes, roll back"
// and Cancel, in a panel under the row (over the rows below), away from
// the button that asked, so the second click of a double-click lands on
// neither; its Yes takes a press only after model.ConfirmDelay. Its node
// is always there (empty when closed), so the row's nodes keep their
// places.
func (r *bundleRow) rollbackQuestion() app.UI {
	b := r.Bundle
	panel := app.Div().ID(r.questionID()).Class("confirm-pop").Hidden(!r.m.AsksRollback())
	if !r.m.AsksRollback() {
		return panel
	}
	name := fmt.Sprintf("#%d", b.Number)
	ready := r.m.ConfirmReady()
	return panel.Attr("role", "group").Aria("label", "Roll back to "+name+"?").Body(
		app.P().Text(fmt.Sprintf("Publish the code of %s again, as a new bundle: every tester's copy updates to it at its next update check, and webhooks are told.", name)),
		button().Type("button").Class("danger confirm-rollback").DataSet("takes-focus", true).Aria("disabled", !ready).
			Aria("label", "Yes, roll back to "+name).Text("Yes, roll back").OnClick(r.confirmRollback),
		button().Type("button").Class("cancel-rollback").Text("Cancel").OnClick(r.cancelRollback),
	)
}

// questionID is the id of the row's rollback question.
func (r *bundleRow) questionID() string { return "rollback-q-" + strconv.FormatInt(r.Bundle.ID, 10) }

// rowSelector finds this row's element.
func (r *bundleRow) rowSelector() string {
	if r.Build {
		return `[data-build="` + strconv.FormatInt(r.Bundle.ID, 10) + `"]`
	}
	return `[data-bundle="` + strconv.FormatInt(r.Bundle.Number, 10) + `"]`
}

// controlSelector finds one of the row's controls.
func (r *bundleRow) controlSelector(c model.RowControl) string {
	switch c {
	case model.ConfirmRollback:
		return r.rowSelector() + " .confirm-rollback"
	case model.NotesToggle:
		return r.rowSelector() + " .notes-toggle"
	}
	return r.rowSelector() + " .rollback"
}

// askRollback asks, and renders the row again once its Yes takes a press.
func (r *bundleRow) askRollback(ctx app.Context, e app.Event) {
	r.act(ctx).Ask()
	if r.m.AsksRollback() && r.ctx != nil {
		r.ctx.After(model.ConfirmDelay, func(app.Context) {})
	}
}

func (r *bundleRow) cancelRollback(ctx app.Context, e app.Event)  { r.act(ctx).Cancel() }
func (r *bundleRow) confirmRollback(ctx app.Context, e app.Event) { r.act(ctx).Confirm() }

// bundleColumns name the columns of an admin's bundles list.
var bundleColumns = []string{"#", "Version", "Size", "SHA-256", "Published", ""}

// bundlesHead is the header row of an admin's bundles list.
func bundlesHead() app.UI { return tableHead("bundles-grid", bundleColumns...) }

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d B", n)
	}
}

// openReports says how many reports on a bundle are not resolved: "1 open
// report", "3 open reports".
func openReports(n int64) string {
	if n == 1 {
		return "1 open report"
	}
	return fmt.Sprintf("%d open reports", n)
}
