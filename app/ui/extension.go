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

// bundlesPageSize is the limit of one page of the bundles list.
const bundlesPageSize = 20

// rowHeight is the height of a list row in px; web/app.css says the same.
const rowHeight = 44

// ExtensionPage shows one extension and its bundles, newest first, in an
// infinite list (index-based pages).
type ExtensionPage struct {
	app.Compo

	id        int64
	err       error
	extension *betaport.Extension

	closeList func()
	stopLive  func()
	path      string
	tester    bool // a tester opened the admins' page
	// loadingExtension: loadExtension is under way. awaited is the last
	// event's revision that came while the page's own reads were under way
	// (see settled).
	loadingExtension bool
	awaited          *api.Revision
	bundles          fetch.InfiniteState[[]betaport.Bundle]
	list             *fetch.Infinite[[]betaport.Bundle]
}

// OnNav reads the extension id from the path and loads the extension and the
// first page of its bundles.
func (p *ExtensionPage) OnNav(ctx app.Context) {
	setTitle(ctx, "Bundles")
	id, _ := strconv.ParseInt(strings.TrimPrefix(ctx.Page().URL().Path, "/extensions/"), 10, 64)
	if id == p.id && p.list != nil {
		return
	}
	p.OnDismount()
	p.id, p.extension, p.err = id, nil, nil
	p.loadingExtension, p.awaited = false, nil
	currentSession(ctx, func(s *api.Session) { p.tester = s != nil && s.Kind == api.KindTester })
	if e, ok := takePrerendered[betaport.Extension](api.ExtensionPath(id)); ok {
		p.extension = &e // rendered by the server a moment ago: not asked again
		rememberExtension(p.extension)
		setTitle(ctx, e.Name)
	} else {
		p.loadExtension(ctx)
	}
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
	p.list = fetch.NewInfinite(context.Background(), listCache(),
		fetch.IndexKeys[betaport.Bundle](api.BundlesPath(id), bundlesPageSize),
		fetch.JSONFetcher[[]betaport.Bundle](httpOptions()),
		fetch.InfiniteOptions[[]betaport.Bundle]{HasMore: fetch.IndexHasMore[betaport.Bundle](bundlesPageSize), FallbackData: prerenderedPages[[]betaport.Bundle](firstBundlesKey(id)),
			MaxPages: keptPages(bundlesPageSize), Count: func(p []betaport.Bundle) int { return len(p) }})
	p.path = ctx.Page().URL().Path
	restored := false
	p.closeList = bindPage(ctx, p.list, func(s fetch.InfiniteState[[]betaport.Bundle]) {
		p.bundles = s
		if !restored && s.Data != nil {
			restored = true
			restoreScroll(ctx, p.path)
		}
		p.checkAwaited(ctx)
	})
}

// readAgain reads the header and the held pages again after a publish.
func (p *ExtensionPage) readAgain(ctx app.Context) {
	if p.list == nil {
		return
	}
	p.loadExtension(ctx)
	// Pages by number: a bundle on top moves every later bundle one
	// place down, so each held page is asked again (MaxPages bounds
	// them; an unchanged page answers 304, no body).
	p.list.Revalidate()
}

// settled reports whether the page's own reads have landed (or failed):
// the header's extension and the list's pages.
func (p *ExtensionPage) settled() bool {
	return !p.loadingExtension && !p.bundles.IsValidating && (p.bundles.Data != nil || p.bundles.Err != nil)
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
	return p.extension != nil && p.extension.CurrentBundle == rev.CurrentBundle &&
		len(p.bundles.Data) > 0 && (p.bundles.Dropped == nil || !p.bundles.Dropped[0]) &&
		topBundle(fetch.RowsOf(p.bundles, func(page []betaport.Bundle) []betaport.Bundle { return page })) == rev.LastBundle
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
		p.extension = &e
		setTitle(ctx, e.Name)
	}
	if page, ok := prerendered[[]betaport.Bundle](firstBundlesKey(id)); ok {
		p.bundles = fetch.InfiniteState[[]betaport.Bundle]{Data: [][]betaport.Bundle{page}, Size: 1, HasMore: len(page) == bundlesPageSize}
	}
}

// OnDismount closes the list: its requests are cancelled.
// loadExtension reads the extension (its name, current bundle) again.
func (p *ExtensionPage) loadExtension(ctx app.Context) {
	c, id := apiClient(), p.id
	p.loadingExtension = true
	ctx.Async(func() {
		reqCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		e, err := c.Extension(reqCtx, id)
		ctx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) || id != p.id {
				return
			}
			p.loadingExtension = false
			p.extension, p.err = e, err
			rememberExtension(e)
			if e != nil {
				setTitle(ctx, e.Name)
			}
			p.checkAwaited(ctx)
		})
	})
}

func (p *ExtensionPage) OnDismount() {
	if p.stopLive != nil {
		p.stopLive()
		p.stopLive = nil
	}
	if p.closeList != nil {
		p.closeList()
		p.closeList, p.list = nil, nil
	}
}

func (p *ExtensionPage) Render() app.UI {
	if p.tester {
		return adminsOnlyPage()
	}
	var body []app.UI
	switch {
	case p.err != nil:
		body = []app.UI{
			app.H1().Text("Extension"), statusView("error", problemText(p.err)),
			app.P().Body(app.A().ID("back-home").Href("/").Text("Go to your extensions")),
		}
	case p.extension == nil:
		body = []app.UI{app.H1().Text("Extension"), statusView("loading", "Loading the extension…")}
	default:
		e := p.extension
		body = []app.UI{
			app.P().Class("crumbs").Body(app.A().Href("/").Text("Extensions"), app.Text(" / ")),
			app.H1().ID("extension-name").Text(e.Name),
			extensionNav(e.ID, "bundles"),
			app.Dl().Class("facts").Body(
				app.Dt().Text("Extension id"), app.Dd().Text(strconv.FormatInt(e.ID, 10)),
				app.Dt().Text("Current bundle"), app.Dd().ID("current-bundle").Text(currentNumber(*e)),
			),
			&UploadPanel{ExtensionID: e.ID, ExtensionName: e.Name, OnPublished: p.published},
			// Always in the tree, shown once there is a bundle: the first
			// upload must not shift the nodes (and buttons) below it.
			app.Div().ID("current-download").Hidden(e.CurrentBundle == 0).Body(downloadLink(*e)),
			app.P().Body(app.A().ID("classic-link").Href("/extensions/" + strconv.FormatInt(e.ID, 10) + "/pages").Text("Page by page")),
			app.P().Body(app.A().ID("testers-link").Href("/extensions/" + strconv.FormatInt(e.ID, 10) + "/testers").Text("Testers")),
			p.renderBundles(),
		}
	}
	return shell("extensions", body...)
}

func (p *ExtensionPage) renderBundles() app.UI {
	s := p.bundles
	rows := fetch.RowsOf(s, func(p []betaport.Bundle) []betaport.Bundle { return p })
	var state app.UI
	switch {
	case s.Data == nil && s.Err != nil:
		state = app.Div().Body(
			statusView("error", listError(s.Err)),
			button().ID("retry-bundles").Type("button").Text("Retry").OnClick(p.retry),
		)
	case s.Data == nil:
		state = statusView("loading", "Loading bundles…")
	case rows.Len() == 0:
		state = statusView("empty", "No bundles yet. Submit a zip from your pipeline, or upload one here, and it appears on top.")
	}
	if state != nil {
		return app.Section().ID("bundles").Body(app.H2().Text("Bundles"), state)
	}
	return app.Section().ID("bundles").DataSet("size", s.Size).DataSet("validating", s.IsValidating).
		DataSet("loading-more", s.IsLoadingMore).DataSet("has-more", s.HasMore).
		DataSet("held", heldPages(s)).DataSet("cached", listCache().Len()).DataSet("top", topBundle(rows)).Body(
		app.H2().Body(
			app.Text("Bundles "),
			app.Span().ID("bundles-total").Class("muted").Text(fmt.Sprintf("(%d loaded)", rows.Len())),
		),
		pagedList(&VList{ID: "bundle-rows", Label: "Bundles", Head: bundlesHead(), OnNearEnd: p.nearEnd, Busy: p.bundles.IsValidating},
			p.list, rows, "bundles-grid",
			func(b betaport.Bundle) app.UI { return &bundleRow{Bundle: b} },
			func(b betaport.Bundle) int64 { return b.Number }),
		// The error and the footer are always in the tree, shown or hidden:
		// go-app matches children by position, and a button that moves to
		// another position is a new node whose clicks go nowhere.
		app.Div().ID("bundles-error").Hidden(s.Err == nil).Body(
			statusView("error", listError(s.Err)),
			button().ID("retry-bundles").Type("button").Text("Retry").OnClick(p.retry),
		),
		app.Div().Class("list-footer").Body(
			button().ID("load-more-bundles").Type("button").Hidden(!s.HasMore).
				Aria("disabled", s.IsLoadingMore).OnClick(p.loadMore).
				Text(map[bool]string{true: "Loading…", false: "Load more"}[s.IsLoadingMore]),
			app.P().ID("bundles-end").Class("muted").Hidden(s.HasMore).Text("That is every bundle."),
		),
	)
}

func (p *ExtensionPage) loadMore(ctx app.Context, e app.Event) { loadNextPage(p.list) }

// nearEnd loads the next page when the end of the list comes into view.
func (p *ExtensionPage) nearEnd(ctx app.Context) { loadNextPageIfIdle(p.list, p.bundles) }

func (p *ExtensionPage) retry(ctx app.Context, e app.Event) {
	if p.list != nil {
		p.list.Revalidate()
	}
}

// published shows a bundle the upload panel just published without a
// reload: on top of the first page with the "current" badge, cleared on the
// others, through the list's Mutate (which then revalidates every page);
// the extension's current bundle follows.
func (p *ExtensionPage) published(b betaport.Bundle) {
	if p.extension != nil {
		e := *p.extension
		e.CurrentBundle = b.Number
		p.extension = &e
	}
	if p.list == nil {
		return
	}
	old := p.list.Snapshot().Data // shared with the cache: copied, not changed
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
	p.list.Mutate(pages, true)
}

// bundleRow is its own component keyed by its bundle, so its link and
// handlers never see another row's bundle (go-app #1107).
type bundleRow struct {
	app.Compo
	Bundle betaport.Bundle
}

func (r *bundleRow) Render() app.UI {
	b := r.Bundle
	return app.Div().Class("row bundles-grid").DataSet("bundle", b.Number).Body(
		cell(
			app.Text(fmt.Sprintf("#%d ", b.Number)),
			app.If(b.Current, app.Span().Class("badge badge-active").Text("current")),
		),
		cell(versionView(b)),
		cell(app.Text(humanSize(b.Size))),
		cell(app.Code().Title(b.SHA256).Text(shortSHA(b.SHA256))),
		cell(app.Text(b.CreatedAt.Local().Format(time.DateTime))),
		cell(app.A().Href(fmt.Sprintf("%s/%d/download", api.BundlesPath(b.ExtensionID), b.Number)).
			Attr("download", "").Aria("label", fmt.Sprintf("Download bundle #%d", b.Number)).Text("Download")),
	)
}

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

// bundlesHead names the columns of a bundles list.
func bundlesHead() app.UI {
	return tableHead("bundles-grid", "#", "Version", "Size", "SHA-256", "Published", "")
}

// topBundle is the number of the list's first bundle, 0 while its page is
// not held.
func topBundle(rows fetch.Rows[betaport.Bundle]) int64 {
	if b, ok := rows.At(0); ok {
		return b.Number
	}
	return 0
}
