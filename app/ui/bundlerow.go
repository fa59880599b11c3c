package ui

import (
	"fmt"
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// bundleRow is one bundle in a list: an extension's bundles for its admins
// (the infinite list and the page by page view), or, as a Build, one of a
// tester's builds. It is its own component, keyed by its bundle, so its
// links never see another row's bundle (go-app #1107).
//
// Both show the bundle's number, version and publication; an admin's row
// adds the current badge, size, SHA-256 and the zip, a build leads with the
// extension's name and ends with the current build's two downloads. Its
// nodes are the same for every bundle of one list: go-app matches children
// by position, and a row may be given another bundle as the window moves.
type bundleRow struct {
	app.Compo
	Bundle betaport.Bundle
	Build  bool
}

func (r *bundleRow) Render() app.UI {
	b := r.Bundle
	row, number := app.Div().Class("row bundles-grid").DataSet("bundle", b.Number), fmt.Sprintf("#%d ", b.Number)
	if r.Build {
		row, number = app.Div().Class("row builds-grid").DataSet("build", b.ID), fmt.Sprintf("#%d", b.Number)
	}
	cells := make([]app.UI, 0, 6)
	if r.Build {
		cells = append(cells, cell(app.Strong().Class("build-name").Text(b.Name)))
	}
	cells = append(cells,
		cell(app.Text(number), app.If(!r.Build && b.Current, app.Span().Class("badge badge-active").Text("current"))),
		cell(versionView(b)),
	)
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
		cells = append(cells, cell(app.A().Href(fmt.Sprintf("%s/%d/download", api.BundlesPath(b.ExtensionID), b.Number)).
			Attr("download", "").Aria("label", fmt.Sprintf("Download bundle #%d", b.Number)).Text("Download")))
	}
	return row.Body(cells...)
}

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
