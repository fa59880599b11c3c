package model

import (
	"context"
	"net/http"
	"strings"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
	"github.com/betaport/betaport/app/fetch"
)

// ExtensionID reads the extension id of an extension's page address,
// /extensions/{id} or /extensions/{id}/{page}: one or more digits, a
// positive id written canonically (no sign, no leading zeros). Any other
// address has none.
func ExtensionID(path string) (int64, bool) {
	id, _, ok := ExtensionPage(path)
	return id, ok
}

// ExtensionPage reads an extension's page address: the id, and the page
// after it ("" for /extensions/{id}, "testers", "pages", "settings"…).
func ExtensionPage(path string) (id int64, page string, ok bool) {
	rest, found := strings.CutPrefix(path, "/extensions/")
	if !found {
		return 0, "", false
	}
	digits, page, _ := strings.Cut(rest, "/")
	// The API's own parser: "+7", "-7", "7a" and "07" name no extension,
	// on the pages as in the API (issue 29).
	id, ok = api.ParseID(digits)
	if !ok {
		return 0, "", false
	}
	return id, page, true
}

// ExtensionConfig reads an extension's record when a page opens and when
// the page asks again (Revalidate: a publish moved its current bundle),
// not on focus or reconnect, and an error stays until then: the pages
// show the error with the way back rather than retry behind it.
var ExtensionConfig = fetch.Config{
	RevalidateOnFocus:     fetch.Bool(false),
	RevalidateOnReconnect: fetch.Bool(false),
	RetryOnError:          fetch.Bool(false),
}

// Extension is an extension's record as a page reads it (useFetch): through
// the page's fetch cache, so the record the server rendered the page with
// (primed into the cache) shows at once and is not asked again within the
// deduping interval; a later visit shows the cached record while it asks
// again. Its fields and methods are for the UI goroutine.
type Extension struct {
	// State is the record's last state.
	State fetch.State[betaport.Extension]

	q    *fetch.Query[betaport.Extension]
	stop func()
}

// OpenExtension reads extension id's record on env's page and calls
// changed (nil: nothing) on the UI goroutine after each new state.
func OpenExtension(env Env, cache *fetch.Cache, id int64, changed func(fetch.State[betaport.Extension])) *Extension {
	e := &Extension{}
	e.q, e.stop = openRecord(env, cache, api.ExtensionPath(id), func(s fetch.State[betaport.Extension]) {
		e.State = s
		if changed != nil {
			changed(s)
		}
	})
	return e
}

// openRecord reads the JSON record at key on env's page (each request
// bounded by RequestTimeout, the cache's entry kept as ExtensionConfig
// says) and calls set on the UI goroutine after each new state; stop ends
// the following.
func openRecord[T any](env Env, cache *fetch.Cache, key string, set func(fetch.State[T])) (q *fetch.Query[T], stop func()) {
	get := jsonFetcher[T](env.Client)
	q = fetch.New(env.context(), cache, key,
		func(ctx context.Context, key, etag string) (fetch.Result[T], error) {
			ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
			defer cancel()
			return get(ctx, key, etag)
		},
		fetch.Options[T]{Config: ExtensionConfig})
	return q, follow(env, q.Subscribe, q.Snapshot, func(s fetch.State[T]) uint64 { return s.Version }, set)
}

// Record is the record the state shows, nil while there is none.
func (e *Extension) Record() *betaport.Extension {
	if e == nil || !e.State.HasData {
		return nil
	}
	x := e.State.Data
	return &x
}

// Revalidate reads the record again.
func (e *Extension) Revalidate() {
	if e != nil && e.q != nil {
		e.q.Revalidate()
	}
}

// Mutate shows x at once (a publish moved its current bundle), without
// asking the service.
func (e *Extension) Mutate(x betaport.Extension) {
	if e != nil && e.q != nil {
		e.q.Mutate(x, false)
	}
}

// Close stops reading: a request on its way is cancelled.
func (e *Extension) Close() {
	if e != nil && e.stop != nil {
		e.stop()
		e.stop = nil
		e.q.Close()
	}
}

// jsonFetcher reads the API's JSON answers through c's HTTP client (the
// page's fetch in the browser), with ETags.
func jsonFetcher[T any](c *client.Client) fetch.Fetcher[T] {
	opts := fetch.HTTPOptions{Header: http.Header{"Accept": {"application/json"}}}
	if c != nil {
		opts.Client, opts.BaseURL = c.HTTP, c.BaseURL
	}
	return fetch.JSONFetcher[T](opts)
}

// unauthorized tells f about an answer that says the person is not signed
// in (401), and reports whether it was one.
func unauthorized(f func(error), err error) bool {
	if !client.IsUnauthorized(err) {
		return false
	}
	if f != nil {
		f(err)
	}
	return true
}

// follow subscribes to a fetch object and hands each new version of its
// state to set on the UI goroutine (Env.Dispatch), where the page renders
// afterwards. It subscribes before the first read, so no change falls in

// openCursorList opens a page's cursor-paged list (the testers, a tester's
// builds): its first page from the server's render when fallback has it,
// each new state handed to changed on the UI goroutine until stop.
func openCursorList[T any](env Env, cache *fetch.Cache, getKey fetch.GetKey[fetch.CursorPage[T]], fallback func(key string) []fetch.CursorPage[T], maxPages int, changed func(fetch.InfiniteState[fetch.CursorPage[T]])) (list *fetch.Infinite[fetch.CursorPage[T]], stop func()) {
	var first []fetch.CursorPage[T]
	if fallback != nil {
		key, _ := getKey(0, nil)
		first = fallback(key)
	}
	list = fetch.NewInfinite(env.context(), cache, getKey,
		jsonFetcher[fetch.CursorPage[T]](env.Client),
		fetch.InfiniteOptions[fetch.CursorPage[T]]{
			FallbackData: first, MaxPages: maxPages,
			Count: func(p fetch.CursorPage[T]) int { return len(p.Data) },
		})
	stop = follow(env, list.SubscribeChanges, list.Snapshot,
		func(s fetch.InfiniteState[fetch.CursorPage[T]]) uint64 { return s.Version }, changed)
	return list, stop
}

// between; a state that comes after the returned stop is not handed over.
func follow[S any](env Env, subscribe func(func()) func(), snapshot func() S, version func(S) uint64, set func(S)) (stop func()) {
	closed, shown := false, uint64(0)
	show := func() {
		if s := snapshot(); !closed && (shown == 0 || version(s) != shown) {
			shown = version(s)
			set(s)
		}
	}
	unsubscribe := subscribe(func() { env.Dispatch(show) })
	show()
	return func() {
		closed = true
		unsubscribe()
	}
}
