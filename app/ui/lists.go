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
// unsubscribes and closes the list, cancelling its requests; a state
// dispatched before is not handed over after.
func bindInfinite[P any](ctx app.Context, l *fetch.Infinite[P], set func(fetch.InfiniteState[P])) (closeList func()) {
	// A dispatch re-renders the component: only a new version is sent.
	return bind(ctx, l.SubscribeChanges, l.Snapshot, func(s fetch.InfiniteState[P]) uint64 { return s.Version }, set, l.Close)
}

// bindQuery is bindInfinite for a Query (useFetch).
func bindQuery[T any](ctx app.Context, q *fetch.Query[T], set func(fetch.State[T])) (closeQuery func()) {
	return bind(ctx, q.Subscribe, q.Snapshot, func(s fetch.State[T]) uint64 { return s.Version }, set, q.Close)
}

// bind is bindInfinite and bindQuery: set gets each new version of the
// state (a Query's subscribers may be called spuriously) on the UI
// goroutine, until the returned func closes the object.
func bind[S any](ctx app.Context, subscribe func(func()) func(), snapshot func() S, version func(S) uint64, set func(S), closeObject func()) func() {
	closed, shown := false, uint64(0)
	show := func() {
		if s := snapshot(); !closed && (shown == 0 || version(s) != shown) {
			shown = version(s)
			set(s)
		}
	}
	unsubscribe := subscribe(func() {
		ctx.Dispatch(func(app.Context) { show() })
	})
	show()
	return func() {
		closed = true
		unsubscribe()
		closeObject()
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
