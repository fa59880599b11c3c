package ui

import (
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/adoption"
	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
)

// An extension's Adoption tab: how many installed copies run each build,
// from the update checks Chromium makes. The figures and the chart's
// geometry are worked out in package app/adoption (plain Go); this file
// reads the counts and draws them. It is a tab of its own, not a section of
// the extension's page: there the bundles list comes first, on screen as
// the page opens, and below an infinite list nothing is ever reached.

// svgNS is the SVG namespace: an element made without it is an unknown
// HTML element, and draws nothing.
const svgNS = "http://www.w3.org/2000/svg"

func svgElem(tag string) app.HTMLElem { return app.Elem(tag).XMLNS(svgNS) }

// AdoptionPage is an extension's Adoption tab: its AdoptionSection, fed
// with the extension's current bundle and testers revision as its event
// stream tells them.
type AdoptionPage struct {
	app.Compo

	id              int64
	ext             fetch.State[betaport.Extension]
	tester          bool // a tester opened the admins' page
	testersRevision int64
	closeExtension  func()
	stopLive        func()
}

// OnPreRender knows, on the server, who is visiting (a tester gets the
// admins-only page there too) and the extension the page was rendered
// with.
func (p *AdoptionPage) OnPreRender(ctx app.Context) {
	if s, ok := prerendered[api.Session](api.PathSession); ok && s.Kind == api.KindTester {
		p.tester = true
		return
	}
	p.id, _ = model.ExtensionID(ctx.Page().URL().Path)
	if e, ok := prerendered[betaport.Extension](api.ExtensionPath(p.id)); ok {
		p.ext = fetch.State[betaport.Extension]{Data: e, HasData: true}
	}
}

// OnNav reads the extension's record and follows its event stream: a
// publish or a rollback moves the current bundle (the record is read
// again), a tester's copy checking in moves the testers revision.
func (p *AdoptionPage) OnNav(ctx app.Context) {
	setTitle(ctx, "Adoption")
	p.OnDismount() // the previous visit's
	p.id, _ = model.ExtensionID(ctx.Page().URL().Path)
	p.ext, p.testersRevision = fetch.State[betaport.Extension]{}, 0
	currentSession(ctx, func(s *api.Session) { p.tester = s != nil && s.Kind == api.KindTester })
	var e *model.Extension
	e, p.closeExtension = openExtension(ctx, p.id, func(s fetch.State[betaport.Extension]) {
		if signedOut(ctx, s.Err) {
			return
		}
		p.ext = s
	})
	p.stopLive = listenEvents(ctx, p.id, map[string]func(api.Revision, bool){
		// Read again when the stream says another bundle is current (a
		// publish, a rollback), or dropped (it says nothing more then).
		"bundles": func(rev api.Revision, known bool) {
			if x := extensionOf(p.ext); !known || x == nil || x.CurrentBundle != rev.CurrentBundle {
				e.Revalidate()
			}
		},
		"testers": func(rev api.Revision, known bool) {
			if known {
				p.testersRevision = rev.Testers
			}
		},
	})
}

// OnDismount stops the event stream and the record's reads.
func (p *AdoptionPage) OnDismount() {
	if p.stopLive != nil {
		p.stopLive()
		p.stopLive = nil
	}
	if p.closeExtension != nil {
		p.closeExtension()
		p.closeExtension = nil
	}
}

func (p *AdoptionPage) Render() app.UI {
	if p.tester {
		return adminsOnlyPage()
	}
	var body app.UI
	switch e := extensionOf(p.ext); {
	case p.ext.Err != nil:
		body = app.Div().Body(
			statusView("error", problemText(p.ext.Err)),
			app.P().Body(app.A().ID("back-home").Href("/").Text("Go to your extensions")),
		)
	case e == nil:
		body = statusView("loading", "Loading the extension…")
	default:
		body = &AdoptionSection{ExtensionID: e.ID, CurrentBundle: e.CurrentBundle, TestersRevision: p.testersRevision}
	}
	// Headed as the extension's page is: its name, then its tabs.
	return shell("extensions",
		app.P().Class("crumbs").Body(app.A().Href("/").Text("Extensions"), app.Text(" / ")),
		app.H1().Text(extensionName(p.id, extensionOf(p.ext))),
		extensionNav(p.id, "adoption"),
		body,
	)
}

// AdoptionSection shows an extension's adoption: a chart of each version's
// share of the update checks per day over the last week, the share of the
// last 24 hours on the current build, and a table of the same numbers. What
// it reads, and when, is a model.Adoption's.
type AdoptionSection struct {
	app.Compo

	ExtensionID int64
	// CurrentBundle is the extension's current bundle number: when a
	// publish moves it, the current version and the counts are read again.
	CurrentBundle int64
	// TestersRevision is the extension's testers revision, as its event
	// stream last said: past what the installs line shows, the line and
	// the counts are read again.
	TestersRevision int64

	m *model.Adoption
	// channels are the extension's channels, for counting one's testers.
	channels *model.Channels
}

func (a *AdoptionSection) OnMount(ctx app.Context) {
	a.channels = model.NewChannels(model.ChannelsConfig{Env: pageEnv(ctx), Cache: listCache(), ExtensionID: a.ExtensionID})
	a.m = model.NewAdoption(model.AdoptionConfig{
		Env: pageEnv(ctx), Cache: listCache(),
		SignedOut: func(err error) { signedOut(ctx, err) },
	})
	a.m.Open(a.ExtensionID, a.CurrentBundle)
	a.m.Follow(a.TestersRevision)
}

func (a *AdoptionSection) OnUpdate(ctx app.Context) {
	if a.m != nil {
		a.m.Open(a.ExtensionID, a.CurrentBundle)
		a.m.Follow(a.TestersRevision)
	}
}

// countBy follows the "Count" choice: update checks or testers.
func (a *AdoptionSection) countBy(ctx app.Context, e app.Event) {
	if a.m != nil {
		a.m.CountTesters(ctx.JSSrc().Get("value").String() == betaport.AdoptionByTesters)
	}
}

func (a *AdoptionSection) OnDismount() {
	if a.channels != nil {
		a.channels.Close()
	}
	if a.m != nil {
		a.m.Close()
		a.m = nil
	}
}

func (a *AdoptionSection) retry(app.Context, app.Event) {
	if a.m != nil {
		a.m.Retry()
	}
}

func (a *AdoptionSection) Render() app.UI {
	// While a publish's figures are read, the previous ones stay (dimmed):
	// nothing below moves for the moment it takes.
	refreshing := a.m != nil && a.m.Refreshing()
	return app.Section().ID("adoption").Class("adoption").Aria("labelledby", "adoption-heading").
		Aria("busy", refreshing).DataSet("refreshing", refreshing).Body(
		app.H2().ID("adoption-heading").Text("Adoption"),
		a.renderBody(),
	)
}

// renderCountBy is the choice of what the chart counts, above the chart
// once there are counts to choose between (and while testers are counted):
// without any update check there is nothing to count either way, and the
// list below stays where the server's page put it.
func (a *AdoptionSection) renderCountBy() app.UI {
	byTesters := a.m != nil && a.m.ByTesters
	option := func(value, label string, checked bool) app.UI {
		id := "adoption-count-" + value
		return app.Label().For(id).Class("choice").Body(
			app.Input().Type("radio").ID(id).Name("adoption-count").Value(value).Checked(checked).OnChange(a.countBy),
			app.Text(" "+label),
		)
	}
	// Testers are counted by who they are, so by channel too.
	channels := []app.UI{app.Option().Value("").Text("every channel").Selected(a.m == nil || a.m.Channel == "")}
	if a.channels != nil {
		for _, c := range a.channels.Items() {
			channels = append(channels, app.Option().Value(c.Name).Text(c.Name).Selected(a.m != nil && a.m.Channel == c.Name))
		}
	}
	return app.FieldSet().ID("adoption-count").Class("adoption-count").Body(
		app.Legend().Text("Count"),
		option(betaport.AdoptionByChecks, "Update checks", !byTesters),
		option(betaport.AdoptionByTesters, "Testers", byTesters),
		app.Label().For("adoption-channel").Class("choice").Hidden(!byTesters || a.channels == nil || len(a.channels.Items()) < 2).Body(
			app.Text("on "),
			app.Select().ID("adoption-channel").OnChange(func(ctx app.Context, e app.Event) {
				if a.m != nil {
					a.m.CountChannel(ctx.JSSrc().Get("value").String())
				}
			}).Body(channels...),
		),
	)
}

func (a *AdoptionSection) renderBody() app.UI {
	m := a.m
	if m == nil {
		m = &model.Adoption{} // on the server: loading
	}
	switch {
	case m.Failed() != nil:
		return app.Div().Class("adoption-body").Body(
			statusView("error", "The update checks could not be read: "+listError(m.Failed())),
			app.Button().ID("retry-adoption").Text("Try again").OnClick(a.retry),
		)
	case m.Loading():
		var countBy app.UI
		if m.Chosen {
			// Kept in place while the choice loads: the focus stays on it.
			countBy = a.renderCountBy()
		}
		return app.Div().Class("adoption-body").Body(renderInstalls(m, a.CurrentBundle), countBy, statusView("loading", "Loading update checks…"))
	}
	sum := m.Summary()
	if sum.Total == 0 {
		empty := app.P().Class("state").Body(
			app.Strong().Text("No update checks yet."),
			app.Text(" Installed copies report their version when the browser checks for updates, within a few hours of being installed or started; each version's share then shows here."),
		)
		if sum.Testers {
			empty = app.P().Class("state").Body(
				app.Strong().Text("No tester's copy has checked in in the last "+strconv.Itoa(adoption.Days)+" days."),
				app.Text(" A copy installed from a tester's builds page or policy file reports its version with their own update URL; copies installed with the extension's shared URL count as update checks only."),
			)
		}
		var countBy app.UI
		if sum.Testers || m.Chosen {
			countBy = a.renderCountBy() // the way back to the checks
		}
		return app.Div().Class("adoption-body").Body(
			renderInstalls(m, a.CurrentBundle),
			countBy,
			app.Div().ID("adoption-empty").Body(empty),
		)
	}
	var current app.UI
	if !sum.Testers { // the installs line says it of testers
		current = a.renderCurrent(m, sum)
	}
	// The choice keeps its place (second) in every state, so the radio
	// button that has the focus stays the same element.
	return app.Div().Class("adoption-body").Body(
		renderInstalls(m, a.CurrentBundle),
		a.renderCountBy(),
		current,
		// Side by side on a wide screen (web/app.css), so the table's
		// first rows are on screen with the chart.
		app.Div().Class("adoption-figures").Body(
			renderAdoptionChart(adoption.Layout(sum)),
			renderAdoptionTable(sum),
		),
	)
}

// renderInstalls is the line "37 of 50 testers on the current build",
// with who is behind, silent and not installed; its place is there from
// the page the server renders on, so the list below never moves for it.
func renderInstalls(m *model.Adoption, currentBundle int64) app.UI {
	switch {
	case currentBundle == 0:
		return nil
	case !m.Installs.HasData:
		// The line's place is kept while it is counted: nothing below
		// moves when the count arrives.
		return app.P().ID("installs").Class("muted").Text("Counting testers…")
	}
	n := m.Installs.Data
	var more []string
	if n.Behind > 0 {
		more = append(more, strconv.FormatInt(n.Behind, 10)+" on an older build")
	}
	if n.Silent > 0 {
		more = append(more, strconv.FormatInt(n.Silent, 10)+" without an update check for "+strconv.Itoa(betaport.SilentDays)+" days")
	}
	if n.NotInstalled > 0 {
		more = append(more, strconv.FormatInt(n.NotInstalled, 10)+" not installed")
	}
	detail := "."
	if len(more) > 0 {
		detail = " (" + strings.Join(more, ", ") + ")."
	}
	return app.P().ID("installs").Body(
		app.Strong().ID("installs-current").Text(strconv.FormatInt(n.OnCurrent, 10)+" of "+strconv.FormatInt(n.Testers, 10)+" testers on the current build"),
		app.Text(detail),
	)
}

// renderCurrent is the line "N% on the current build".
func (a *AdoptionSection) renderCurrent(m *model.Adoption, sum adoption.Summary) app.UI {
	p := app.P().ID("adoption-current")
	switch {
	case m.CurrentBundle == 0:
		return p.Text("No build is published yet: every check reports a version this extension never served.")
	case sum.Last24 == 0:
		return p.Text("No update checks in the last 24 hours.")
	}
	return p.Body(
		app.Strong().ID("adoption-current-percent").Text(strconv.Itoa(sum.CurrentPercent())+"% on the current build"),
		app.Text(" ("+sum.Current+"): "+strconv.FormatInt(sum.OnCurrent, 10)+" of "+
			strconv.FormatInt(sum.Last24, 10)+" update checks in the last 24 hours."),
	)
}

// adoptionPattern is one series' fill: the shapes on a tile. Patterns
// differ in shape, not only in colour, so a print in grey or a reader who
// does not tell the colours apart still tells the series apart.
func adoptionPattern(i int) app.UI {
	tile := func(bg string, shapes ...app.UI) app.UI {
		return svgElem("pattern").ID("adoption-pattern-"+strconv.Itoa(i)).
			Attr("width", 8).Attr("height", 8).Attr("patternUnits", "userSpaceOnUse").Body(
			append([]app.UI{svgElem("rect").Attr("width", 8).Attr("height", 8).Attr("fill", bg)}, shapes...)...)
	}
	line := func(x1, y1, x2, y2 int, color string) app.UI {
		return svgElem("line").Attr("x1", x1).Attr("y1", y1).Attr("x2", x2).Attr("y2", y2).
			Attr("stroke", color).Attr("stroke-width", 1.5)
	}
	switch i {
	case 0: // solid
		return tile("#3b5bdb")
	case 1: // diagonal stripes
		return tile("#dbe4ff", line(0, 8, 8, 0, "#1d2330"), line(-2, 2, 2, -2, "#1d2330"), line(6, 10, 10, 6, "#1d2330"))
	case 2: // dots
		return tile("#fff3bf", svgElem("circle").Attr("cx", 4).Attr("cy", 4).Attr("r", 1.8).Attr("fill", "#5c3c00"))
	case 3: // horizontal lines
		return tile("#d3f9d8", line(0, 4, 8, 4, "#237032"))
	case 4: // cross-hatch
		return tile("#ffe3e3", line(0, 4, 8, 4, "#a51111"), line(4, 0, 4, 8, "#a51111"))
	default: // "other": plain grey
		return tile("#ced4da")
	}
}

// renderAdoptionChart draws c as SVG elements (made in the SVG namespace,
// every text a text node: nothing is parsed as markup).
func renderAdoptionChart(c adoption.Chart) app.UI {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	defs := make([]app.UI, adoption.Patterns)
	for i := range defs {
		defs[i] = adoptionPattern(i)
	}
	nodes := []app.UI{svgElem("defs").Body(defs...)}
	for _, t := range c.Ticks {
		nodes = append(nodes,
			svgElem("line").Attr("x1", 44).Attr("x2", c.Width-8).Attr("y1", f(t.Y)).Attr("y2", f(t.Y)).
				Attr("stroke", "#dfe3ea").Attr("stroke-width", 1),
			svgElem("text").Attr("x", 40).Attr("y", f(t.Y)).Attr("text-anchor", "end").
				Attr("dominant-baseline", "central").Attr("font-size", 11).Attr("fill", "#5f6b7a").Text(t.Label))
	}
	for _, b := range c.Bars {
		bar := []app.UI{}
		if b.Empty {
			bar = append(bar,
				svgElem("rect").Attr("x", f(b.X)).Attr("y", 12).Attr("width", f(b.Width)).Attr("height", 200).
					Attr("fill", "none").Attr("stroke", "#adb5bd").Attr("stroke-dasharray", "4 3"),
				svgElem("text").Attr("x", f(b.LabelX)).Attr("y", 112).Attr("text-anchor", "middle").
					Attr("font-size", 11).Attr("fill", "#5f6b7a").Text(nothingCounted(c.Testers)))
		}
		for _, s := range b.Segments {
			seg := []app.UI{
				svgElem("title").Text(s.Title),
				svgElem("rect").Attr("x", f(b.X)).Attr("y", f(s.Y)).Attr("width", f(b.Width)).Attr("height", f(s.Height)).
					Attr("fill", "url(#adoption-pattern-"+strconv.Itoa(s.Pattern)+")").
					Attr("stroke", "#ffffff").Attr("stroke-width", 1),
			}
			if len(s.Lines) > 0 {
				h := float64(len(s.Lines))*12 + 2
				seg = append(seg, svgElem("rect").Attr("x", f(b.LabelX-s.Plate/2)).Attr("y", f(s.LinesY-7)).
					Attr("width", f(s.Plate)).Attr("height", f(h)).Attr("rx", 3).
					Attr("fill", "#ffffff").Attr("stroke", "#1d2330").Attr("stroke-width", 0.5))
				for i, l := range s.Lines {
					seg = append(seg, svgElem("text").Attr("x", f(b.LabelX)).Attr("y", f(s.LinesY+float64(i)*12)).
						Attr("text-anchor", "middle").Attr("dominant-baseline", "central").
						Attr("font-size", 11).Attr("fill", "#1d2330").Text(l))
				}
			}
			bar = append(bar, svgElem("g").Attr("data-day", b.Day).Attr("data-version", s.Version).
				Attr("data-checks", s.Checks).Attr("data-percent", s.Percent).Body(seg...))
		}
		bar = append(bar, svgElem("text").Attr("x", f(b.LabelX)).Attr("y", 230).Attr("text-anchor", "middle").
			Attr("font-size", 11).Attr("fill", "#1d2330").Text(b.Day))
		nodes = append(nodes, svgElem("g").Attr("data-bar", b.Day).Body(bar...))
	}
	for _, it := range c.Legend {
		nodes = append(nodes, svgElem("g").Attr("data-legend", it.Version).Body(
			svgElem("rect").Attr("x", f(it.X)).Attr("y", f(it.Y-7)).Attr("width", 16).Attr("height", 14).
				Attr("fill", "url(#adoption-pattern-"+strconv.Itoa(it.Pattern)+")").
				Attr("stroke", "#1d2330").Attr("stroke-width", 0.5),
			svgElem("text").Attr("x", f(it.X+22)).Attr("y", f(it.Y)).Attr("dominant-baseline", "central").
				Attr("font-size", 11).Attr("fill", "#1d2330").Text(it.Version),
		))
	}
	// On a narrow window the chart keeps a legible size and scrolls
	// sideways in its box (reached with Tab, moved with the arrow keys)
	// rather than shrinking its labels to a few pixels.
	return app.Figure().ID("adoption-chart").Class("adoption-chart").TabIndex(0).Attr("role", "group").
		Aria("label", "Adoption chart").Body(
		svgElem("svg").Attr("viewBox", "0 0 "+f(c.Width)+" "+f(c.Height)).
			Attr("role", "img").
			Aria("label", "Each version's share of the"+what(c.Testers)+" per day, over the last "+strconv.Itoa(adoption.Days)+" days. The table below has the numbers.").
			Attr("width", "100%").Body(nodes...),
	)
}

// what is what the chart counts, with a space before.
func what(testers bool) string {
	if testers {
		return " testers"
	}
	return " update checks"
}

// nothingCounted labels a day without a count.
func nothingCounted(testers bool) string {
	if testers {
		return "no testers"
	}
	return "no checks"
}

// renderAdoptionTable is the chart's numbers, newest day first.
func renderAdoptionTable(sum adoption.Summary) app.UI {
	caption, column := "Update checks", "Checks"
	if sum.Testers {
		caption, column = "Testers", "Testers"
	}
	rows := sum.Table()
	body := make([]app.UI, len(rows))
	for i, r := range rows {
		if r.Version == "" {
			body[i] = app.Tr().Body(app.Th().Scope("row").Text(r.Day), app.Td().Text(nothingCounted(sum.Testers)), app.Td().Text("0"), app.Td().Text("–"))
			continue
		}
		body[i] = app.Tr().Body(app.Th().Scope("row").Text(r.Day), app.Td().Text(r.Version),
			app.Td().Text(strconv.FormatInt(r.Checks, 10)), app.Td().Text(strconv.Itoa(r.Percent)+"%"))
	}
	return app.Table().ID("adoption-table").Class("list adoption-table").Body(
		app.Caption().Text(caption+" by day (UTC) and version, last "+strconv.Itoa(adoption.Days)+" days"),
		app.THead().Body(app.Tr().Body(
			app.Th().Scope("col").Text("Day"), app.Th().Scope("col").Text("Version"),
			app.Th().Scope("col").Text(column), app.Th().Scope("col").Text("Share"))),
		app.TBody().Body(body...),
	)
}
