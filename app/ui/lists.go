package ui

import (
	"net/http"
	"sync"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/fetch"
)

// The adapter between app/fetch and go-app: one cache shared by every list
// of the page, browser events fed to it, and a binding that moves each
// change of a list onto the UI goroutine.

var (
	cacheOnce   sync.Once
	sharedCache *fetch.Cache
)

// listCache is the page's one fetch cache. It is bounded, so a long
// session does not grow without end.
func listCache() *fetch.Cache {
	cacheOnce.Do(func() {
		sharedCache = fetch.NewCache(fetch.CacheOptions{MaxEntries: 2000, MaxBytes: 64 << 20})
	})
	return sharedCache
}

// feedBrowserEvents tells the cache when the window regains focus (or the
// tab becomes visible again, as SWR listens for both) or the browser comes
// back online, so lists revalidate as users expect.
func feedBrowserEvents() {
	w := app.Window()
	w.Call("addEventListener", "focus", app.FuncOf(func(app.Value, []app.Value) any {
		listCache().Focus()
		return nil
	}))
	doc := w.Get("document")
	doc.Call("addEventListener", "visibilitychange", app.FuncOf(func(app.Value, []app.Value) any {
		if doc.Get("visibilityState").String() == "visible" {
			listCache().Focus()
		}
		return nil
	}))
	w.Call("addEventListener", "online", app.FuncOf(func(app.Value, []app.Value) any {
		listCache().Reconnect()
		return nil
	}))
}

// httpOptions resolves list keys (API paths) against the page's origin.
func httpOptions() fetch.HTTPOptions {
	u := app.Window().URL()
	return fetch.HTTPOptions{Client: pageFetch{}, BaseURL: u.Scheme + "://" + u.Host, Header: http.Header{"Accept": {"application/json"}}}
}

// bindInfinite subscribes to l and hands every new state to set on the UI
// goroutine (ctx.Dispatch), where the component re-renders. It subscribes
// before the first read, so no change falls in between. The returned func
// unsubscribes and closes the list, cancelling its requests.
func bindInfinite[P any](ctx app.Context, l *fetch.Infinite[P], set func(fetch.InfiniteState[P])) (closeList func()) {
	// A dispatch re-renders the component: only a new version is sent.
	unsubscribe := l.SubscribeChanges(func() {
		ctx.Dispatch(func(app.Context) { set(l.Snapshot()) })
	})
	set(l.Snapshot())
	return func() {
		unsubscribe()
		l.Close()
	}
}

// bindPage is bindInfinite for a page's main list: a 401 sends the person
// to the sign-in page instead of showing an error.
func bindPage[P any](ctx app.Context, l *fetch.Infinite[P], set func(fetch.InfiniteState[P])) (closeList func()) {
	return bindInfinite(ctx, l, func(s fetch.InfiniteState[P]) {
		if signedOut(ctx, s.Err) {
			return
		}
		set(s)
	})
}

// listError is the message for a list's error.
func listError(err error) string {
	if p, ok := api.AsProblem(err); ok {
		return p.Error()
	}
	return problemText(err)
}

// Scroll positions of lists left, by path: going back to a list returns
// to where the person was. The pages themselves come back from the cache
// (the list's size is kept under its first key), so the rows are there to
// scroll to.
var scrollPositions = map[string]float64{}

// rememberScroll keeps the page's scroll position for path. Lists call it
// as the page scrolls: by the time a page is dismounted, the next one has
// replaced it and the browser has already moved the scroll position.
func rememberScroll(path string) {
	if app.IsClient && path != "" {
		scrollPositions[path] = app.Window().Get("scrollY").Float()
	}
}

// restoreScroll scrolls back to path's remembered position once the list
// has rendered its rows.
func restoreScroll(ctx app.Context, path string) {
	y, ok := scrollPositions[path]
	if !ok || y == 0 {
		return
	}
	delete(scrollPositions, path)
	// The page may still be growing (the extension's header, the list's
	// spacers): try each frame until the position is reached, for at most
	// about a second.
	tries := 0
	var step app.Func
	step = app.FuncOf(func(app.Value, []app.Value) any {
		app.Window().Call("scrollTo", 0, y)
		tries++
		if app.Window().Get("scrollY").Float() < y-1 && tries < 60 {
			app.Window().Call("requestAnimationFrame", step)
		} else {
			step.Release()
		}
		return nil
	})
	ctx.Defer(func(app.Context) { app.Window().Call("requestAnimationFrame", step) })
}

// loadNextPage grows a list by one page (SWR: setSize(size + 1)): the
// "Load more" button.
func loadNextPage[P any](l *fetch.Infinite[P]) {
	// A busy button stays focusable (aria-disabled): a press while the
	// page loads does nothing.
	if l != nil && !l.Snapshot().IsLoadingMore {
		// The reader is at the end, where the new page goes: it is held
		// (MaxPages) before the viewport has settled on it.
		l.SetReading(-1)
		l.SetSizeFunc(func(n int) int { return n + 1 })
	}
}

// loadNextPageIfIdle is what a list's sentinel does: one more page, unless
// there is none, one is loading, or the list shows an error (retrying is
// the person's call).
func loadNextPageIfIdle[P any](l *fetch.Infinite[P], s fetch.InfiniteState[P]) {
	if s.HasMore && !s.IsLoadingMore && s.Err == nil {
		loadNextPage(l)
	}
}

// keptPages is the MaxPages of a list whose pages hold pageSize rows: at
// least three pages and 150 rows, enough for a tall viewport and its
// overscan while the reader is between two pages. Pages farther away are
// dropped, from the list and the cache, and fetched again when read.
func keptPages(pageSize int) int { return max(3, (150+pageSize-1)/pageSize) }

// placeholderRow stands for a row whose page is being fetched again.
func placeholderRow(class string) app.UI {
	return app.Div().Class("row row-placeholder "+class).Aria("busy", "true").Body(
		app.Span().Attr("role", "cell").Class("muted").Text("Loading…"),
	)
}

// heldPages counts the pages whose data a list holds (MaxPages).
func heldPages[P any](s fetch.InfiniteState[P]) int {
	n := 0
	for i := range s.Data {
		if s.Dropped == nil || !s.Dropped[i] {
			n++
		}
	}
	return n
}

// pagedList fills v with a bounded list's rows: row renders an item, a
// dropped page's rows are placeholders (of gridClass), the row the reader
// rests on tells the list which page is read, and id keeps the row under
// the reader in place when rows arrive above it.
func pagedList[P, T any](v *VList, l *fetch.Infinite[P], rows fetch.Rows[T], gridClass string, row func(T) app.UI, id func(T) int64) *VList {
	v.Count, v.RowHeight = rows.Len(), rowHeight
	v.OnReading = func(r int) { l.SetReading(rows.Page(r)) }
	v.Key = func(i int) string {
		if item, ok := rows.At(i); ok {
			return itoa(int(id(item)))
		}
		return ""
	}
	v.Row = func(i int) app.UI {
		if item, ok := rows.At(i); ok {
			return row(item)
		}
		return placeholderRow(gridClass)
	}
	return v
}
