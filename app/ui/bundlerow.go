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
	if r.m.NotesShown() {
		row = row.Class("row-open")
	}
	cells := make([]app.UI, 0, 7)
	if r.Build {
		cells = append(cells, cell(app.Strong().Class("build-name").Text(b.Name)))
	}
	numberCell := app.Span().Class("bundle-number").Body(
		app.Text(number),
		app.If(!r.Build && b.Current, app.Span().Class("badge badge-active").Text("current")),
		app.Small().Class("rollback-of").Hidden(b.RollbackOf == 0).Text(fmt.Sprintf("rollback of #%d", b.RollbackOf)),
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
		cells = append(cells, app.Span().Attr("role", "cell").Class("build-links").Body(app.If(b.Current, bundleLinks(b.ExtensionID, b.Number))))
	} else {
		cells = append(cells, app.Span().Attr("role", "cell").Class("bundle-actions").Body(
			r.notesToggle(),
			r.rollbackControls(),
			app.A().Href(fmt.Sprintf("%s/%d/download", api.BundlesPath(b.ExtensionID), b.Number)).
				Attr("download", "").Aria("label", fmt.Sprintf("Download bundle #%d", b.Number)).Text("Download"),
			r.notesPanel(),
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

// rollbackControls are "Roll back to #N" or, once pressed, the question:
// roll back, or cancel. The current bundle has none.
func (r *bundleRow) rollbackControls() app.UI {
	b := r.Bundle
	offered := r.m.OffersRollback()
	name := fmt.Sprintf("#%d", b.Number)
	if r.m.AsksRollback() {
		return app.Span().Class("confirm-inline").Attr("role", "group").Aria("label", "Roll back to "+name+"?").Body(
			button().Type("button").Class("danger confirm-rollback").DataSet("takes-focus", true).Aria("label", "Yes, roll back to "+name).
				Text("Yes, roll back").OnClick(r.confirmRollback),
			button().Type("button").Class("cancel-rollback").Text("Cancel").OnClick(r.cancelRollback),
		)
	}
	rolling := r.m.RollingBack()
	label := "Roll back to " + name
	if rolling {
		label = "Rolling back to " + name + "…"
	}
	return button().Type("button").Class("rollback").Hidden(!offered).Aria("disabled", rolling).
		Text(label).OnClick(r.askRollback)
}

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

func (r *bundleRow) askRollback(ctx app.Context, e app.Event)     { r.act(ctx).Ask() }
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
