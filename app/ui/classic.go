package ui

import (
	"fmt"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/model"
)

// ClassicBundles is the previous/next view of an extension's bundles. Its
// state is a model.Classic (the page the address names and the next one,
// read ahead and rendered hidden, so "Next" is instant and makes no
// request; rollbacks); the view renders it and hands it the address.
type ClassicBundles struct {
	app.Compo

	m      *model.Classic
	tester bool // a tester opened the admins' page
}

// OnPreRender renders, on the server, the page the address names (its
// rows come with the app), and gives a tester the admins-only page.
func (c *ClassicBundles) OnPreRender(ctx app.Context) {
	if s, ok := prerendered[api.Session](api.PathSession); ok && s.Kind == api.KindTester {
		c.tester = true
	}
	id, _ := model.ExtensionID(ctx.Page().URL().Path)
	c.m = &model.Classic{ID: id, Page: model.ClassicPage(ctx.Page().URL().Query()), Rollback: &model.Rollback{}}
}

// OnNav shows the page the address names: Back and Forward come here too.
func (c *ClassicBundles) OnNav(ctx app.Context) {
	u := ctx.Page().URL()
	if c.m == nil {
		c.m = model.NewClassic(model.ClassicConfig{
			Env: pageEnv(ctx), Cache: listCache(),
			Title:         func(t string) { setTitle(ctx, t) },
			SignedOut:     func(err error) { signedOut(ctx, err) },
			FocusRollback: func(n int64) { focusFirst(ctx, "#classic-rows "+rollbackButton(n)) },
		})
	}
	id := c.m.ID
	c.m.Nav(u.Path, u.Query())
	if c.m.ID != id {
		currentSession(ctx, func(s *api.Session) { c.tester = s != nil && s.Kind == api.KindTester })
	}
}

func (c *ClassicBundles) OnDismount() {
	if c.m != nil {
		c.m.Close()
		c.m = nil
	}
}

func (c *ClassicBundles) Render() app.UI {
	if c.tester {
		return adminsOnlyPage()
	}
	m := c.m
	if m == nil {
		m = &model.Classic{Rollback: &model.Rollback{}}
	}
	cur, next := m.Current, m.Next
	base := fmt.Sprintf("/extensions/%d/pages", m.ID)
	var body app.UI
	switch {
	case !cur.HasData && cur.Err != nil:
		body = statusView("error", listError(cur.Err))
	case !cur.HasData:
		body = statusView("loading", "Loading bundles…")
	case len(cur.Data) == 0:
		body = statusView("empty", "No bundles on this page.")
	default:
		body = app.Div().Body(
			rollbackViews(m.Rollback),
			classicRows("classic-rows", cur.Data, false, m.Rollback),
		)
	}
	return shell("extensions",
		extensionCrumbs(m.ID),
		app.H1().Text(fmt.Sprintf("Bundles, page %d", m.Page+1)),
		extensionNav(m.ID, "pages"),
		body,
		// The next page, rendered ahead and hidden: "Next" shows it at once.
		app.If(next.HasData, classicRows("classic-next", next.Data, true, nil)),
		app.Nav().Class("list-footer").Aria("label", "Pages").Body(
			app.If(m.Page > 0, app.A().ID("classic-prev").Class("button").Href(fmt.Sprintf("%s?page=%d", base, m.Page-1)).Text("Previous")),
			app.If(m.HasNext(), app.A().ID("classic-next-link").Class("button").Href(fmt.Sprintf("%s?page=%d", base, m.Page+1)).Text("Next")),
			app.If(m.Last(), app.Span().ID("classic-last").Class("muted").Text("Last page")),
		),
	)
}

// classicRows is a page of bundles; rollback, when set, offers "Roll back
// to #N" on its rows.
func classicRows(id string, bundles []betaport.Bundle, hidden bool, rollback *model.Rollback) app.UI {
	return app.Div().ID(id).Hidden(hidden).Attr("role", "table").Aria("label", "Bundles").Aria("rowcount", len(bundles)+1).Body(
		bundlesHead(),
		app.Div().Attr("role", "rowgroup").Body(app.Range(bundles).Slice(func(i int) app.UI {
			b := bundles[i]
			rolling := rollback != nil && rollback.RollingBack != 0 && rollback.RollingBack == b.Number
			return app.Div().Attr("role", "row").Aria("rowindex", i+2).Body(
				&bundleRow{Bundle: b, Rollback: rollback, RollingBack: rolling})
		})),
	)
}
