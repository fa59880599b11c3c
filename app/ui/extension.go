package ui

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
)

// bundlesPageSize is the limit of one page of the bundles list.
const bundlesPageSize = 20

// bundlesList is an extension's bundles, newest first (index-based pages).
func bundlesList() *pageList[[]betaport.Bundle, betaport.Bundle] {
	return &pageList[[]betaport.Bundle, betaport.Bundle]{listSpec: listSpec[[]betaport.Bundle, betaport.Bundle]{
		name: "bundles", section: "bundles", rowsID: "bundle-rows", label: "Bundles",
		grid: "bundles-grid", columns: bundleColumns,
		loading: "Loading bundles…", end: "That is every bundle.",
		pageSize: bundlesPageSize, items: func(page []betaport.Bundle) []betaport.Bundle { return page },
		hasMore: fetch.IndexHasMore[betaport.Bundle](bundlesPageSize),
	}}
}

func bundlesKeys(id int64) fetch.GetKey[[]betaport.Bundle] {
	return fetch.IndexKeys[betaport.Bundle](api.BundlesPath(id), bundlesPageSize)
}

// bundleNumber is a bundles list's key: its bundles are numbered.
func bundleNumber(b betaport.Bundle) int64 { return b.Number }

// ExtensionPage shows one extension and its bundles, newest first, in an
// infinite list (index-based pages).
type ExtensionPage struct {
	app.Compo

	id int64
	// extension is the record's Query (useFetch) and its last state.
	extension      *fetch.Query[betaport.Extension]
	extensionState fetch.State[betaport.Extension]
	closeExtension func()

	bundles  *pageList[[]betaport.Bundle, betaport.Bundle]
	stopLive func()
	tester   bool // a tester opened the admins' page
	// awaited is the last event's revision that came while the page's own
	// reads were under way (see settled).
	awaited *api.Revision

	// rollingBack is the number of the bundle being served again, 0 when
	// none; rollbackErr why the last rollback failed, rollbackDone what it
	// published. refocus, once the list shows rollbackDone on top, moves
	// the focus back to the row it was pressed in (which moved down).
	rollingBack  int64
	rollbackErr  error
	rollbackOf   int64
	rollbackDone *betaport.Bundle
	refocus      string
	pageCtx      app.Context
}

func (p *ExtensionPage) OnInit() { p.bundles = bundlesList() }

// OnNav reads the extension id from the path and loads the extension and the
// first page of its bundles.
func (p *ExtensionPage) OnNav(ctx app.Context) {
	setTitle(ctx, "Bundles")
	id, _ := strconv.ParseInt(strings.TrimPrefix(ctx.Page().URL().Path, "/extensions/"), 10, 64)
	if id == p.id && p.bundles.list != nil {
		return
	}
	p.OnDismount()
	p.id, p.awaited, p.pageCtx = id, nil, ctx
	p.rollingBack, p.rollbackErr, p.rollbackDone, p.refocus = 0, nil, nil, ""
	currentSession(ctx, func(s *api.Session) { p.tester = s != nil && s.Kind == api.KindTester })
	p.extension, p.closeExtension = openExtension(ctx, id, func(s fetch.State[betaport.Extension]) {
		if signedOut(ctx, s.Err) {
			return
		}
		p.extensionState = s
		if s.HasData {
			setTitle(ctx, s.Data.Name)
		}
		p.checkAwaited(ctx)
	})
	// A publish from anywhere shows at once: the header and the list are
	// read again together, so they agree on what is current (the list's
	// first page is a bodiless 304 when nothing changed).
	p.stopLive = liveUpdates(ctx, id, func(rev api.Revision) bool {
		if !p.settled() {
			// The page's own reads are under way (it was just opened, or
			// reached by Back): what they bring is compared with the
			// event when they land, rather than read twice.
			p.awaited = &rev
			return true
		}
		return p.shows(rev)
	}, p.readAgain)
	p.bundles.open(ctx, bundlesKeys(id), p.listChanged)
}

// listChanged runs after each new state of the list.
func (p *ExtensionPage) listChanged(ctx app.Context) {
	p.checkAwaited(ctx)
	if p.refocus != "" && p.rollbackDone != nil && p.bundles.topKey(p.bundles.rows(), bundleNumber) == p.rollbackDone.Number {
		sel := p.refocus
		p.refocus = ""
		focusFirst(ctx, sel)
	}
}

// readAgain reads the header and the held pages again after a publish.
func (p *ExtensionPage) readAgain(ctx app.Context) {
	if p.bundles.list == nil {
		return
	}
	p.extension.Revalidate()
	// Pages by number: a bundle on top moves every later bundle one
	// place down, so each held page is asked again (MaxPages bounds
	// them; an unchanged page answers 304, no body).
	p.bundles.revalidate()
}

// settled reports whether the page's own reads have landed (or failed):
// the header's extension and the list's pages.
func (p *ExtensionPage) settled() bool {
	s := p.bundles.state
	return !p.extensionState.IsValidating && !s.IsValidating && (s.Data != nil || s.Err != nil)
}

// checkAwaited compares, once the page's reads have landed, what they
// brought with an event that came meanwhile, and reads again only if the
// event is past it.
func (p *ExtensionPage) checkAwaited(ctx app.Context) {
	if p.awaited == nil || !p.settled() {
		return
	}
	rev := *p.awaited
	p.awaited = nil
	if !p.shows(rev) {
		p.readAgain(ctx)
	}
}

// shows tells whether the header and the list's first page show rev.
func (p *ExtensionPage) shows(rev api.Revision) bool {
	s := p.bundles.state
	return p.extensionState.HasData && p.extensionState.Data.CurrentBundle == rev.CurrentBundle &&
		len(s.Data) > 0 && (s.Dropped == nil || !s.Dropped[0]) &&
		p.bundles.topKey(p.bundles.rows(), bundleNumber) == rev.LastBundle
}

// OnPreRender renders, on the server, the extension and the first page of
// its bundles that the server fetched for this visitor.
func (p *ExtensionPage) OnPreRender(ctx app.Context) {
	if s, ok := prerendered[api.Session](api.PathSession); ok && s.Kind == api.KindTester {
		p.tester = true // the admins-only page, on the server too
		return
	}
	id, _ := strconv.ParseInt(strings.TrimPrefix(ctx.Page().URL().Path, "/extensions/"), 10, 64)
	p.id = id
	if e, ok := prerendered[betaport.Extension](api.ExtensionPath(id)); ok {
		p.extensionState = fetch.State[betaport.Extension]{Key: api.ExtensionPath(id), Data: e, HasData: true}
		setTitle(ctx, e.Name)
	}
	p.bundles.prerender(bundlesKeys(id))
}

// OnDismount closes the list and the extension's Query: their requests are
// cancelled.
func (p *ExtensionPage) OnDismount() {
	if p.stopLive != nil {
		p.stopLive()
		p.stopLive = nil
	}
	if p.closeExtension != nil {
		p.closeExtension()
		p.closeExtension, p.extension = nil, nil
	}
	p.bundles.close()
}

func (p *ExtensionPage) Render() app.UI {
	if p.tester {
		return adminsOnlyPage()
	}
	var body []app.UI
	switch e := extensionOf(p.extensionState); {
	case p.extensionState.Err != nil:
		body = []app.UI{
			app.H1().Text("Extension"), statusView("error", problemText(p.extensionState.Err)),
			app.P().Body(app.A().ID("back-home").Href("/").Text("Go to your extensions")),
		}
	case e == nil:
		body = []app.UI{app.H1().Text("Extension"), statusView("loading", "Loading the extension…")}
	default:
		body = []app.UI{
			app.P().Class("crumbs").Body(app.A().Href("/").Text("Extensions"), app.Text(" / ")),
			app.H1().ID("extension-name").Text(e.Name),
			extensionNav(e.ID, "bundles"),
			app.Dl().Class("facts").Body(
				app.Dt().Text("Extension id"), app.Dd().Text(strconv.FormatInt(e.ID, 10)),
				app.Dt().Text("Current bundle"), app.Dd().ID("current-bundle").Text(currentNumber(*e)),
				app.Dt().Text("Current version"), app.Dd().ID("current-version").Text(p.currentVersion(*e)),
			),
			&UploadPanel{ExtensionID: e.ID, ExtensionName: e.Name, OnPublished: p.published},
			// Always in the tree, shown once there is a bundle: the first
			// upload must not shift the nodes (and buttons) below it.
			app.Div().ID("current-download").Hidden(e.CurrentBundle == 0).Body(downloadLink(*e)),
			app.P().Body(app.A().ID("classic-link").Href("/extensions/" + strconv.FormatInt(e.ID, 10) + "/pages").Text("Page by page")),
			app.P().Body(app.A().ID("testers-link").Href("/extensions/" + strconv.FormatInt(e.ID, 10) + "/testers").Text("Testers")),
			&AdoptionSection{ExtensionID: e.ID, CurrentBundle: e.CurrentBundle},
			p.renderBundles(),
		}
	}
	return shell("extensions", body...)
}

// currentVersion is the version the current bundle is served as, when the
// list holds it (on its first page, most of the time).
func (p *ExtensionPage) currentVersion(e betaport.Extension) string {
	if e.CurrentBundle == 0 {
		return "None published yet"
	}
	rows := p.bundles.rows()
	for i := 0; i < min(rows.Len(), bundlesPageSize); i++ {
		if b, ok := rows.At(i); ok && b.Number == e.CurrentBundle {
			return versionText(b)
		}
	}
	return "…"
}

// renderBundles is the bundles list, headed by how many are loaded once
// there are some, and by what the last rollback did.
func (p *ExtensionPage) renderBundles() app.UI {
	loaded := p.bundles.rows().Len()
	return &listView[[]betaport.Bundle, betaport.Bundle]{
		List: p.bundles,
		Header: app.Div().Body(
			app.H2().Body(app.Text("Bundles"), app.If(loaded > 0,
				app.Text(" "), app.Span().ID("bundles-total").Class("muted").Text(fmt.Sprintf("(%d loaded)", loaded)))),
			rollbackViews(p.rollingBack, p.rollbackOf, p.rollbackDone, p.rollbackErr),
		),
		Empty: "No bundles yet. Submit a zip from your pipeline, or upload one here, and it appears on top.",
		Row: func(b betaport.Bundle) app.UI {
			return &bundleRow{Bundle: b, OnRollback: p.rollback, RollingBack: p.rollingBack == b.Number}
		},
		Key: bundleNumber,
	}
}

// rollback serves bundle b again, as a new bundle on top with a higher
// version: the list and the header show it as a publish does, and the
// focus stays on b's row. One at a time.
func (p *ExtensionPage) rollback(ctx app.Context, b betaport.Bundle) {
	if p.rollingBack != 0 {
		return
	}
	p.rollingBack, p.rollbackOf, p.rollbackErr, p.rollbackDone = b.Number, b.Number, nil, nil
	pageCtx := p.pageCtx
	if pageCtx == nil {
		pageCtx = ctx
	}
	postRollback(pageCtx, b, func(ctx app.Context, nb *betaport.Bundle, err error) {
		p.rollingBack = 0
		if err != nil {
			p.rollbackErr = err
			focusFirst(ctx, rollbackButton(b))
			return
		}
		p.rollbackDone, p.refocus = nb, rollbackButton(b)
		p.published(*nb)
	})
}

// postRollback asks the service to serve b again (POST
// …/bundles/{n}/rollback) and hands done, on the UI goroutine of ctx (the
// page's), the new bundle or what went wrong. A 401 signs out instead.
func postRollback(ctx app.Context, b betaport.Bundle, done func(ctx app.Context, nb *betaport.Bundle, err error)) {
	c, path := apiClient(), api.RollbackPath(b.ExtensionID, b.Number)
	ctx.Async(func() {
		reqCtx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		var nb betaport.Bundle
		err := c.Do(reqCtx, http.MethodPost, path, struct{}{}, &nb)
		ctx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) {
				return
			}
			if err != nil {
				done(ctx, nil, err)
				return
			}
			done(ctx, &nb, nil)
		})
	})
}

// rollbackButton selects the "Roll back to #N" button of b's row.
func rollbackButton(b betaport.Bundle) string {
	return `[data-bundle="` + strconv.FormatInt(b.Number, 10) + `"] .rollback`
}

// rollbackViews are the status of the last rollback and why it failed,
// always in the tree (screen readers hear what lands in them).
func rollbackViews(rollingBack, of int64, done *betaport.Bundle, err error) app.UI {
	status, errText := "", ""
	switch {
	case rollingBack != 0:
		status = fmt.Sprintf("Rolling back to #%d…", rollingBack)
	case done != nil:
		status = fmt.Sprintf("Rolled back: bundle #%d serves the code of #%d again, as version %s. Testers get it now.", done.Number, of, done.Version)
	}
	if err != nil {
		errText = fmt.Sprintf("Rolling back to #%d failed: %s", of, problemText(err))
	}
	return app.Div().Body(
		app.P().ID("rollback-status").Class("rollback-status").Attr("role", "status").Text(status),
		app.P().ID("rollback-error").Class("rollback-error state-error").Attr("role", "alert").Text(errText),
	)
}

// published shows a bundle the upload panel just published without a
// reload: on top of the first page with the "current" badge, cleared on the
// others, through the list's Mutate (which then revalidates every page);
// the extension's current bundle follows.
func (p *ExtensionPage) published(b betaport.Bundle) {
	if e := extensionOf(p.extensionState); e != nil && p.extension != nil {
		e.CurrentBundle = b.Number
		p.extension.Mutate(*e, false)
	}
	list := p.bundles.list
	if list == nil {
		return
	}
	old := list.Snapshot().Data // shared with the cache: copied, not changed
	pages := make([][]betaport.Bundle, max(len(old), 1))
	for i, page := range old {
		pages[i] = make([]betaport.Bundle, 0, len(page)+1)
		for _, x := range page {
			if x.Number != b.Number {
				x.Current = false
				pages[i] = append(pages[i], x)
			}
		}
	}
	b.Current = true
	pages[0] = append([]betaport.Bundle{b}, pages[0]...)
	list.Mutate(pages, true)
}
