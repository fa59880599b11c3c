package ui

import (
	"fmt"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
)

type buildPage = model.BuildPage

// buildsList is a tester's builds, newest first (cursor pages): how the
// list renders. The list itself is the page model's.
func buildsList() *pageList[buildPage, betaport.Bundle] {
	return &pageList[buildPage, betaport.Bundle]{listSpec: listSpec[buildPage, betaport.Bundle]{
		name: "builds", rowsID: "builds", label: "Your builds",
		grid: "builds-grid", columns: []string{"Extension", "Bundle", "Version", "Published", ""},
		loading: "Loading your builds…", end: "That is every build.",
		pageSize: model.BuildsPageSize, items: model.BuildsOf,
	}}
}

func buildsKeys() fetch.GetKey[buildPage] { return model.BuildsKeys() }

// BuildsPage is a tester's home: the builds of the extensions they test,
// newest first (cursor pages), with the current one's download. Its state
// and steps are a model.Builds.
type BuildsPage struct {
	app.Compo

	m      *model.Builds
	builds *pageList[buildPage, betaport.Bundle]

	// The report form and the tester's own reports, once their extension
	// is known; stopReports ends their listeners and event stream.
	composer    *model.Composer
	mine        *model.MyReports
	dragging    bool
	stopReports func()
	ctx         app.Context
}

func (p *BuildsPage) OnInit() { p.builds = buildsList() }

// page returns the model, made with the page's context the first time.
func (p *BuildsPage) page(ctx app.Context) *model.Builds {
	if p.m != nil {
		return p.m
	}
	var cache *fetch.Cache // the server renders without one: it reads nothing
	if app.IsClient {
		cache = listCache()
	}
	p.m = model.NewBuilds(model.BuildsConfig{
		Env: pageEnv(ctx), Session: appSession(ctx),
		Cache: cache, Fallback: prerenderedPages[buildPage], MaxPages: keptPages(model.BuildsPageSize),
		Title:    func(t string) { setTitle(ctx, t) },
		Navigate: ctx.Navigate,
		Loaded:   func() { restoreScroll(ctx, ctx.Page().URL().Path) },
		// A tester's builds follow their extension's publishes, as the
		// admins' bundles list does.
		Listen: func(id int64, shows func(api.Revision) bool, changed func()) func() {
			return liveUpdates(ctx, id, shows, func(app.Context) { changed() },
				// The tester's own reports follow the admins' moves, on the
				// same stream.
				map[string]func(api.Revision, bool){"feedback": p.feedbackEvent})
		},
	})
	return p.m
}

func (p *BuildsPage) OnNav(ctx app.Context) {
	p.ctx = ctx
	p.page(ctx).Open()
	if p.composer != nil {
		return
	}
	currentSession(ctx, func(s *api.Session) {
		if s == nil || s.Tester == nil || p.composer != nil {
			return
		}
		id := s.Tester.ExtensionID
		p.mine = model.OpenMyReports(pageEnv(ctx), listCache(), id, nil)
		p.composer = model.NewComposer(model.ComposerConfig{
			Env: pageEnv(ctx), Session: appSession(ctx), Navigate: ctx.Navigate,
			Release:   releasePreview,
			ClearText: func() { setField(ctx, "feedback-text", "") },
			Sent:      func(*betaport.Feedback) { p.mine.ReadAgain() },
		})
		p.composer.ExtensionID = id
		stopShots := listenShots(ctx, func(on bool) { p.dragging = on }, p.composer.Attach)
		p.stopReports = func() { stopShots(); p.mine.Close() }
	})
}

// OnPreRender renders, on the server, the first page of builds.
func (p *BuildsPage) OnPreRender(ctx app.Context) { p.page(ctx).Prerender() }

func (p *BuildsPage) OnDismount() {
	if p.m != nil {
		p.m.Close()
	}
	if p.stopReports != nil {
		p.stopReports()
		p.stopReports = nil
	}
	if p.composer != nil {
		for _, s := range p.composer.Shots {
			releasePreview(s.Preview)
		}
	}
	p.composer, p.mine = nil, nil
}

// currentNotes shows the release notes of the current build (of each
// extension, should the tester test several), read from the first page.
func currentNotes(current []betaport.Bundle) app.UI {
	return app.Div().ID("current-notes").Body(app.Range(current).Slice(func(i int) app.UI {
		b := current[i]
		id := fmt.Sprintf("current-notes-%d", b.ID)
		return app.Section().Class("current-notes").Aria("labelledby", id+"-title").Body(
			app.H2().ID(id+"-title").Text(fmt.Sprintf("What's new in %s #%d (%s)", buildName(b), b.Number, b.Version)),
			notesView(id, b.ReleaseNotes),
		)
	}))
}

func (p *BuildsPage) Render() app.UI {
	m := p.m
	if m == nil {
		m = &model.Builds{}
	}
	// The list is the model's: the list view renders its last state.
	p.builds.list, p.builds.state = m.Infinite(), m.List
	return shell("builds", app.H1().Text("My builds"), &listView[buildPage, betaport.Bundle]{
		List:   p.builds,
		Header: app.Div().Body(currentNotes(m.CurrentNotes()), p.installHelp(), p.renderFeedback()),
		Empty:  "No builds yet. When the extension's team publishes one, it appears here.",
		Row: func(b betaport.Bundle) app.UI {
			return &bundleRow{Bundle: b, Build: true, OnDownload: p.downloading}
		},
		Key: model.BuildID,
	})
}

// downloading: a download started; a tester whose access ended meanwhile
// is told so (model.Builds.Downloading).
func (p *BuildsPage) downloading() {
	if p.m != nil {
		p.m.Downloading()
	}
}

// installHelp is the how-to of the builds listed, once there are any.
func (p *BuildsPage) installHelp() app.UI {
	first, ok := p.builds.rows().At(0)
	if !ok {
		return nil
	}
	return installHelp(first.ExtensionID)
}

// feedbackEvent is the stream's "feedback" event: the tester's own
// reports are read again when it moved.
func (p *BuildsPage) feedbackEvent(rev api.Revision, known bool) {
	if p.mine != nil {
		p.mine.Live.Event(rev, known)
	}
}

// renderFeedback is the report form and the tester's own reports, folded
// on one line above the list until opened (the list stays on screen).
func (p *BuildsPage) renderFeedback() app.UI {
	if p.composer == nil || p.composer.ExtensionID == 0 {
		return nil
	}
	summary := "Report a problem"
	if p.mine != nil {
		if n := p.mine.Rows().Len(); n > 0 {
			summary += fmt.Sprintf(" · your reports (%d%s)", n, map[bool]string{true: "+"}[p.mine.List.HasMore])
		}
	}
	return app.Details().ID("feedback-panel").Class("feedback-panel").Body(
		app.Summary().ID("feedback-summary").Text(summary),
		p.renderComposer(),
		p.renderMyReports(),
	)
}
