package ui

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
)

// classicDedupe keeps a preloaded page fresh long enough that pressing
// "Next" shows it without asking again.
const classicDedupe = 30 * time.Second

// ClassicBundles is the previous/next view of an extension's bundles. It
// needs only the base model, with the page index in the key; the next page
// is fetched and rendered, hidden, ahead of time, so "Next" is instant and
// makes no request.
type ClassicBundles struct {
	app.Compo

	extensionID int64
	page        int
	current     *fetch.Query[[]betaport.Bundle]
	next        *fetch.Query[[]betaport.Bundle]
	unsubscribe []func()
	cur, nxt    fetch.State[[]betaport.Bundle]
	tester      bool // a tester opened the admins' page

	// The last rollback, as on the extension page; refocus moves the focus
	// back to its row once the page is read again.
	rollingBack, rollbackOf int64
	rollbackDone            *betaport.Bundle
	rollbackErr             error
	refocus                 string
	pageCtx                 app.Context
}

func classicKey(extensionID int64, page int) string {
	return fmt.Sprintf("%s?page=%d&limit=%d", api.BundlesPath(extensionID), page, bundlesPageSize)
}

// OnPreRender gives a tester the admins-only page on the server too.
func (c *ClassicBundles) OnPreRender(ctx app.Context) {
	if s, ok := prerendered[api.Session](api.PathSession); ok && s.Kind == api.KindTester {
		c.tester = true
	}
}

func (c *ClassicBundles) OnNav(ctx app.Context) {
	setTitle(ctx, "Bundles, page by page")
	u := ctx.Page().URL()
	id, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(u.Path, "/extensions/"), "/pages"), 10, 64)
	page, _ := strconv.Atoi(u.Query().Get("page"))
	c.page = max(page, 0)
	if c.current != nil && id == c.extensionID {
		c.current.SetKey(classicKey(id, c.page))
		c.next.SetKey(classicKey(id, c.page+1))
		return
	}
	c.OnDismount()
	c.extensionID, c.pageCtx = id, ctx
	c.rollingBack, c.rollbackDone, c.rollbackErr, c.refocus = 0, nil, nil, ""
	currentSession(ctx, func(s *api.Session) { c.tester = s != nil && s.Kind == api.KindTester })
	opts := fetch.Options[[]betaport.Bundle]{Config: fetch.Config{DedupingInterval: classicDedupe}}
	fetcher := fetch.JSONFetcher[[]betaport.Bundle](httpOptions())
	c.current = fetch.New(context.Background(), listCache(), classicKey(id, c.page), fetcher, opts)
	c.next = fetch.New(context.Background(), listCache(), classicKey(id, c.page+1), fetcher, opts)
	for _, q := range []struct {
		q   *fetch.Query[[]betaport.Bundle]
		dst *fetch.State[[]betaport.Bundle]
	}{{c.current, &c.cur}, {c.next, &c.nxt}} {
		q := q
		c.unsubscribe = append(c.unsubscribe, q.q.Subscribe(func() {
			ctx.Dispatch(func(ctx app.Context) {
				*q.dst = q.q.Snapshot()
				if q.dst == &c.cur && c.refocus != "" && !c.cur.IsValidating {
					sel := c.refocus
					c.refocus = ""
					focusFirst(ctx, sel)
				}
			})
		}))
		*q.dst = q.q.Snapshot()
	}
}

func (c *ClassicBundles) OnDismount() {
	for _, u := range c.unsubscribe {
		u()
	}
	c.unsubscribe = nil
	if c.current != nil {
		c.current.Close()
		c.next.Close()
		c.current, c.next = nil, nil
	}
}

func (c *ClassicBundles) Render() app.UI {
	if c.tester {
		return adminsOnlyPage()
	}
	base := fmt.Sprintf("/extensions/%d/pages", c.extensionID)
	var body app.UI
	switch {
	case !c.cur.HasData && c.cur.Err != nil:
		body = statusView("error", listError(c.cur.Err))
	case !c.cur.HasData:
		body = statusView("loading", "Loading bundles…")
	case len(c.cur.Data) == 0:
		body = statusView("empty", "No bundles on this page.")
	default:
		body = app.Div().Body(
			rollbackViews(c.rollingBack, c.rollbackOf, c.rollbackDone, c.rollbackErr),
			classicRows("classic-rows", c.cur.Data, false, c.rollback, c.rollingBack),
		)
	}
	hasNext := c.nxt.HasData && len(c.nxt.Data) > 0
	return shell("extensions",
		extensionCrumbs(c.extensionID),
		app.H1().Text(fmt.Sprintf("Bundles, page %d", c.page+1)),
		extensionNav(c.extensionID, "pages"),
		body,
		// The next page, rendered ahead and hidden: "Next" shows it at once.
		app.If(c.nxt.HasData, classicRows("classic-next", c.nxt.Data, true, nil, 0)),
		app.Nav().Class("list-footer").Aria("label", "Pages").Body(
			app.If(c.page > 0, app.A().ID("classic-prev").Class("button").Href(fmt.Sprintf("%s?page=%d", base, c.page-1)).Text("Previous")),
			app.If(hasNext, app.A().ID("classic-next-link").Class("button").Href(fmt.Sprintf("%s?page=%d", base, c.page+1)).Text("Next")),
			app.If(c.nxt.HasData && !hasNext, app.Span().ID("classic-last").Class("muted").Text("Last page")),
		),
	)
}

// classicRows is a page of bundles; onRollback, when set, offers "Roll
// back to #N" on its rows.
func classicRows(id string, bundles []betaport.Bundle, hidden bool, onRollback func(app.Context, betaport.Bundle), rollingBack int64) app.UI {
	return app.Div().ID(id).Hidden(hidden).Attr("role", "table").Aria("label", "Bundles").Aria("rowcount", len(bundles)+1).Body(
		bundlesHead(),
		app.Div().Attr("role", "rowgroup").Body(app.Range(bundles).Slice(func(i int) app.UI {
			b := bundles[i]
			return app.Div().Attr("role", "row").Aria("rowindex", i+2).Body(
				&bundleRow{Bundle: b, OnRollback: onRollback, RollingBack: rollingBack != 0 && rollingBack == b.Number})
		})),
	)
}

// rollback serves b again as a new bundle, then reads the pages again (a
// new bundle on top moves every row one place down).
func (c *ClassicBundles) rollback(ctx app.Context, b betaport.Bundle) {
	if c.rollingBack != 0 || c.current == nil {
		return
	}
	c.rollingBack, c.rollbackOf, c.rollbackErr, c.rollbackDone = b.Number, b.Number, nil, nil
	pageCtx := c.pageCtx
	if pageCtx == nil {
		pageCtx = ctx
	}
	postRollback(pageCtx, b, func(ctx app.Context, nb *betaport.Bundle, err error) {
		c.rollingBack = 0
		if err != nil {
			c.rollbackErr = err
			focusFirst(ctx, rollbackButton(b))
			return
		}
		c.rollbackDone, c.refocus = nb, "#classic-rows "+rollbackButton(b)
		if c.current != nil {
			c.current.Revalidate()
			c.next.Revalidate()
		}
	})
}
