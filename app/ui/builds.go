package ui

import (
	"fmt"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
)

// buildsPageSize is the limit of one page of a tester's builds.
const buildsPageSize = 50

type buildPage = fetch.CursorPage[betaport.Bundle]

// buildsList is a tester's builds, newest first (cursor pages).
func buildsList() *pageList[buildPage, betaport.Bundle] {
	return &pageList[buildPage, betaport.Bundle]{listSpec: listSpec[buildPage, betaport.Bundle]{
		name: "builds", rowsID: "builds", label: "Your builds",
		grid: "builds-grid", columns: []string{"Extension", "Bundle", "Version", "Published", ""},
		loading: "Loading your builds…", end: "That is every build.",
		pageSize: buildsPageSize, items: func(page buildPage) []betaport.Bundle { return page.Data },
	}}
}

func buildsKeys() fetch.GetKey[buildPage] {
	return fetch.CursorKeys[betaport.Bundle](api.PathBuilds, nil, buildsPageSize)
}

// buildID is a builds list's key: builds of several extensions share
// numbers.
func buildID(b betaport.Bundle) int64 { return b.ID }

// BuildsPage is a tester's home: the builds of the extensions they test,
// newest first (cursor pages), with the current one's download.
type BuildsPage struct {
	app.Compo

	builds   *pageList[buildPage, betaport.Bundle]
	stopLive func()
}

func (p *BuildsPage) OnInit() { p.builds = buildsList() }

func (p *BuildsPage) OnNav(ctx app.Context) {
	setTitle(ctx, "Your builds")
	if p.builds.list != nil {
		return
	}
	p.builds.open(ctx, buildsKeys(), nil)
	// A tester's builds follow their extension's publishes, as the admins'
	// bundles list does.
	currentSession(ctx, func(s *api.Session) {
		if s == nil || s.Tester == nil || p.builds.list == nil || p.stopLive != nil {
			return
		}
		p.stopLive = liveUpdates(ctx, s.Tester.ExtensionID, p.shows, func(app.Context) {
			if p.builds.list != nil {
				p.builds.list.RevalidateFunc(func(buildPage, string) bool { return false })
			}
		})
	})
}

// shows tells whether the first page shows rev: its newest build is the
// last bundle, and the current one is marked so.
func (p *BuildsPage) shows(rev api.Revision) bool {
	if len(p.builds.state.Data) == 0 {
		return false
	}
	builds := p.builds.state.Data[0].Data
	if len(builds) == 0 {
		return rev.LastBundle == 0
	}
	if builds[0].Number != rev.LastBundle {
		return false
	}
	for _, b := range builds {
		if b.Current {
			return b.Number == rev.CurrentBundle
		}
	}
	return false // the current build is further down: read again to be sure
}

// currentNotes shows the release notes of the current build (of each
// extension, should the tester test several), read from the first page.
func (p *BuildsPage) currentNotes() app.UI {
	var current []betaport.Bundle
	if len(p.builds.state.Data) > 0 {
		for _, b := range p.builds.state.Data[0].Data {
			if b.Current && b.ReleaseNotes != "" {
				current = append(current, b)
			}
		}
	}
	return app.Div().ID("current-notes").Body(app.Range(current).Slice(func(i int) app.UI {
		b := current[i]
		id := fmt.Sprintf("current-notes-%d", b.ID)
		return app.Section().Class("current-notes").Aria("labelledby", id+"-title").Body(
			app.H2().ID(id+"-title").Text(fmt.Sprintf("What's new in %s #%d (%s)", b.Name, b.Number, b.Version)),
			notesView(id, b.ReleaseNotes),
		)
	}))
}

// OnPreRender renders, on the server, the first page of builds.
func (p *BuildsPage) OnPreRender(ctx app.Context) { p.builds.prerender(buildsKeys()) }

func (p *BuildsPage) OnDismount() {
	if p.stopLive != nil {
		p.stopLive()
		p.stopLive = nil
	}
	p.builds.close()
}

func (p *BuildsPage) Render() app.UI {
	return shell("builds", app.H1().Text("My builds"), &listView[buildPage, betaport.Bundle]{
		List:   p.builds,
		Header: app.Div().Body(p.currentNotes(), app.If(p.builds.rows().Len() > 0, installHelp())),
		Empty:  "No builds yet. When the extension's team publishes one, it appears here.",
		Row:    func(b betaport.Bundle) app.UI { return &bundleRow{Bundle: b, Build: true} },
		Key:    buildID,
	})
}
