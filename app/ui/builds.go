package ui

import (
	"context"
	"fmt"
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
)

// BuildsPage is a tester's home: the builds of the extensions they test,
// newest first (cursor pages), with the current one's download.
type BuildsPage struct {
	app.Compo

	list      *fetch.Infinite[fetch.CursorPage[betaport.Bundle]]
	closeList func()
	stopLive  func()
	state     fetch.InfiniteState[fetch.CursorPage[betaport.Bundle]]
}

func (p *BuildsPage) OnNav(ctx app.Context) {
	setTitle(ctx, "Your builds")
	if p.list != nil {
		return
	}
	p.list = fetch.NewInfinite(context.Background(), listCache(),
		fetch.CursorKeys[betaport.Bundle](api.PathBuilds, nil, buildsPageSize),
		fetch.JSONFetcher[fetch.CursorPage[betaport.Bundle]](httpOptions()),
		fetch.InfiniteOptions[fetch.CursorPage[betaport.Bundle]]{FallbackData: prerenderedPages[fetch.CursorPage[betaport.Bundle]](firstBuildsKey()),
			MaxPages: keptPages(buildsPageSize), Count: func(p fetch.CursorPage[betaport.Bundle]) int { return len(p.Data) }})
	p.closeList = bindPage(ctx, p.list, func(s fetch.InfiniteState[fetch.CursorPage[betaport.Bundle]]) {
		p.state = s
	})
	// A tester's builds follow their extension's publishes, as the admins'
	// bundles list does.
	currentSession(ctx, func(s *api.Session) {
		if s == nil || s.Tester == nil || p.list == nil || p.stopLive != nil {
			return
		}
		p.stopLive = liveUpdates(ctx, s.Tester.ExtensionID, p.shows, func(app.Context) {
			if p.list != nil {
				p.list.RevalidateFunc(func(fetch.CursorPage[betaport.Bundle], string) bool { return false })
			}
		})
	})
}

// shows tells whether the first page shows rev: its newest build is the
// last bundle, and the current one is marked so.
func (p *BuildsPage) shows(rev api.Revision) bool {
	if len(p.state.Data) == 0 {
		return false
	}
	builds := p.state.Data[0].Data
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

// OnPreRender renders, on the server, the first page of builds.
func (p *BuildsPage) OnPreRender(ctx app.Context) {
	if page, ok := prerendered[fetch.CursorPage[betaport.Bundle]](firstBuildsKey()); ok {
		p.state = fetch.InfiniteState[fetch.CursorPage[betaport.Bundle]]{Data: []fetch.CursorPage[betaport.Bundle]{page}, Size: 1, HasMore: page.NextCursor != ""}
	}
}

func (p *BuildsPage) OnDismount() {
	if p.stopLive != nil {
		p.stopLive()
		p.stopLive = nil
	}
	if p.closeList != nil {
		p.closeList()
		p.closeList, p.list = nil, nil
	}
}

func (p *BuildsPage) Render() app.UI {
	s := p.state
	builds := fetch.RowsOf(s, func(p fetch.CursorPage[betaport.Bundle]) []betaport.Bundle { return p.Data })
	var body app.UI
	switch {
	case s.Data == nil && s.Err != nil:
		body = app.Div().Body(statusView("error", listError(s.Err)),
			button().ID("retry-builds").Type("button").Text("Retry").OnClick(p.retry))
	case s.Data == nil:
		body = statusView("loading", "Loading your builds…")
	case builds.Len() == 0:
		body = statusView("empty", "No builds yet. When the extension's team publishes one, it appears here.")
	default:
		body = app.Section().Body(
			installHelp(),
			pagedList(&VList{ID: "builds", Label: "Your builds", Head: tableHead("builds-grid", "Extension", "Bundle", "Version", "Published", ""), OnNearEnd: p.nearEnd, Busy: s.IsValidating},
				p.list, builds, "builds-grid",
				func(b betaport.Bundle) app.UI { return &buildRow{Bundle: b} },
				func(b betaport.Bundle) int64 { return b.ID }),
			// Always in the tree, shown or hidden: see ExtensionPage.
			app.Div().Hidden(s.Err == nil).Body(statusView("error", listError(s.Err))),
			app.P().ID("builds-end").Class("muted").Hidden(s.HasMore).Text("That is every build."),
			button().ID("load-more-builds").Type("button").Hidden(!s.HasMore).Aria("disabled", s.IsLoadingMore).
				Text("Load more").OnClick(p.onLoadMore),
		)
	}
	return shell("builds", app.H1().Text("My builds"), body)
}

func (p *BuildsPage) retry(ctx app.Context, e app.Event) {
	if p.list != nil {
		p.list.Revalidate()
	}
}

func (p *BuildsPage) onLoadMore(ctx app.Context, e app.Event) { loadNextPage(p.list) }

func (p *BuildsPage) nearEnd(ctx app.Context) { loadNextPageIfIdle(p.list, p.state) }

// buildRow is one build; the current one offers its CRX to install and
// its zip to load unpacked.
type buildRow struct {
	app.Compo
	Bundle betaport.Bundle
}

func (r *buildRow) Render() app.UI {
	b := r.Bundle
	return app.Div().Class("row builds-grid").DataSet("build", b.ID).Body(
		cell(app.Strong().Class("build-name").Text(b.Name)),
		cell(app.Text(fmt.Sprintf("#%d", b.Number))),
		cell(versionView(b)),
		cell(app.Text(b.CreatedAt.Local().Format(time.DateTime))),
		// The links are the cell's only nodes: nothing after them moves
		// when they come or go.
		app.Span().Attr("role", "cell").Class("build-links").Body(app.If(b.Current, bundleLinks(b.ExtensionID, b.Number))),
	)
}
