// Package fetch is a Go port of SWR's useSWR and useSWRInfinite: keyed,
// cached, deduplicated, revalidating requests, and lists of pages built on
// them. Every list in the browser app runs on it.
//
// It is plain Go — generic over the page type; the standard library and
// the wire package app/api (itself standard library only) are all it
// imports: no go-app and no syscall/js — so `go test -race` covers it
// natively, and the same code runs in the browser under GOOS=js
// GOARCH=wasm.
//
// # Hooks as objects
//
// Go has no hooks, so each hook call is an object that lives as long as the
// component using it:
//
//	SWR                                   this package
//	<SWRConfig value={{provider}}>        c := NewCache(CacheOptions{MaxEntries: 500})
//	useSWR(key, fetcher, options)         q := New(ctx, c, key, fetcher, Options[T]{...})
//	  data, error, isValidating,          q.Snapshot() → State[T]
//	  isLoading
//	  mutate() / mutate(d) / mutate(d,    q.Revalidate() / q.Mutate(d, true) /
//	  false)                                q.Mutate(d, false)
//	  re-render with another key          q.SetKey(key); "" is the null key
//	useSWRInfinite(getKey, fetcher, o)    l := NewInfinite(ctx, c, getKey, fetcher, InfiniteOptions[P]{...})
//	  data, error, isValidating,          l.Snapshot() → InfiniteState[P], plus
//	  isLoading, size                       HasMore and IsLoadingMore
//	  setSize(n) / setSize(s => s + 1)    l.SetSize(n) / l.SetSizeFunc(func(s int) int { return s + 1 })
//	  mutate() / mutate(p) / mutate(p,    l.Revalidate() / l.Mutate(p, true) /
//	  false)                                l.Mutate(p, false)
//	  re-render with another getKey       l.SetGetKey(getKey)
//	unmount                               q.Close(), l.Close(), or ctx ending
//	await mutate() / setSize()            l.Revalidate(); err := l.Wait(ctx)
//	mutate(p => …, {revalidate: fn})      l.MutateFunc(update, revalidate)
//	focus / online listeners              c.Focus(), c.Reconnect() (or per object)
//	global mutate(key)                    c.Revalidate(match), Set(c, key, v)
//
// Keys are strings. getKey returns (key, ok); ok == false is SWR's null.
// IndexKeys and CursorKeys are the getKeys of the API's two pagination
// conventions; JSONFetcher is the fetcher for its endpoints, with ETags
// ("not modified" costs no body, ErrNotModified) and any other non-2xx
// answer as an *api.Problem, the type every error of the API has: its
// RFC 9457 fields when the body is problem details, and always the
// answer's Status.
//
// # Using it from a UI (the go-app adapter)
//
// State changes happen on background goroutines. An adapter subscribes and
// moves each change onto the UI goroutine itself; it never needs a lock,
// because Snapshot is a lock-free, race-free copy of the whole state:
//
//	func (c *bundles) OnMount(ctx app.Context) {
//		c.list = fetch.NewInfinite(ctx, cache, fetch.IndexKeys[betaport.Bundle](path, 20),
//			fetch.JSONFetcher[[]betaport.Bundle](httpOpts), fetch.InfiniteOptions[[]betaport.Bundle]{})
//		// Subscribe first, then read, so no change falls in between.
//		c.unsubscribe = c.list.SubscribeChanges(func() {
//			ctx.Dispatch(func(ctx app.Context) { c.state = c.list.Snapshot() })
//		})
//		c.state = c.list.Snapshot()
//	}
//
//	func (c *bundles) OnDismount() { c.unsubscribe(); c.list.Close() }
//
//	// Render reads c.state only: Data == nil → skeleton; Err → message
//	// (api.AsProblem gives the problem's Status and Detail); HasMore → a "load
//	// more" button calling c.list.SetSizeFunc(func(n int) int { return n + 1 }),
//	// disabled while IsLoadingMore.
//
// Subscribers are called from any goroutine, possibly concurrently and
// spuriously, never under a lock (so they may call back into the object);
// SubscribeChanges leaves out the spurious calls, so a component re-renders
// only when Version changed. Reading Snapshot in the dispatched function,
// not in the callback, always renders the newest state. A snapshot's Data
// slice is the caller's own (sorting it harms no one); the page values in
// it are shared with the cache and must not be modified.
//
// The adapter also feeds the browser events the package cannot see: window
// focus → Cache.Focus, online → Cache.Reconnect.
//
// # Beyond SWR
//
//   - Identical keys in flight are fetched once, across all objects on a
//     cache, however fast SetSize is called.
//   - Pages appear as they arrive (InfiniteOptions.AllAtOnce restores
//     SWR's whole-batch behaviour).
//   - InfiniteState has HasMore and IsLoadingMore.
//   - Work is cancelled through its context when an object is closed or its
//     key changes, and a late answer for an old key is never shown.
//   - Revalidation is conditional: a fetcher gets the cached ETag and may
//     answer ErrNotModified.
//   - The cache is bounded (CacheOptions.MaxEntries, MaxBytes), least
//     recently used first.
//   - Time goes through Clock; FakeClock makes tests deterministic.
//
// # SWR, option by option
//
// Defaults are SWR's. Switches are *bool under SWR's names (nil is the
// default; Bool(false) turns one off); an interval set to Off is off.
//
//	SWR option / behaviour    app/fetch                         difference
//	dedupingInterval 2s       Config.DedupingInterval           Off (not 0) turns it off
//	revalidateOnFocus         Config.RevalidateOnFocus          fed by Cache.Focus
//	focusThrottleInterval 5s  Config.FocusThrottleInterval      —
//	revalidateOnReconnect     Config.RevalidateOnReconnect      fed by Cache.Reconnect
//	refreshInterval 0         Config.RefreshInterval            counted from the end of a revalidation
//	shouldRetryOnError        Config.RetryOnError               —
//	errorRetryInterval 5s     Config.ErrorRetryInterval         backoff without random jitter
//	errorRetryCount           Config.ErrorRetryCount            —
//	keepPreviousData          Config.KeepPreviousData           —
//	fallbackData              Options.FallbackData, InfiniteOptions.FallbackData
//	compare                   Options.Compare, InfiniteOptions.Compare (default reflect.DeepEqual)
//	onSuccess / onError       OnSuccess / OnError               an Infinite reports each revalidation
//	initialSize 1             InfiniteOptions.InitialSize       —
//	revalidateAll false       InfiniteOptions.RevalidateAll     —
//	revalidateFirstPage true  InfiniteOptions.RevalidateFirstPage —
//	persistSize false         InfiniteOptions.PersistSize       —
//	parallel false            InfiniteOptions.Parallel          pages show when all arrived; getKey never
//	                                                            sees a previous page, so a list that ends
//	                                                            by its data needs InfiniteOptions.HasMore
//	data of a whole batch     pages show as they arrive         InfiniteOptions.AllAtOnce restores SWR's;
//	                                                            a failed pass then shows what did arrive
//	mutate()                  Revalidate()                      a failed run is redone whole, as SWR keeps revalidate-all
//	mutate(p, false|true)     Mutate(p, revalidate)             true refetches every page
//	mutate(p => …, {revalidate: fn})  MutateFunc(update, fn)    update runs atomically under the list's lock;
//	                                                            fn alone picks the pages, the first included
//	mutate(undefined, {revalidate: fn}) RevalidateFunc(fn)      also the first page (revalidateFirstPage)
//	await mutate(), setSize() Wait(ctx)                         also after SetGetKey; ctx bounds the wait
//	null key                  "" (Query), ok == false (getKey)  inert: focus, reconnect, revalidate do nothing
//	getKey throwing           a panic in getKey                 recovered: the list's error, loaded pages kept
//	unmount                   Close, or the constructor's ctx   a request another open list is about to
//	                                                            join goes on, rather than be asked twice
//	(TanStack maxPages)       InfiniteOptions.MaxPages, SetReading  holds the pages nearest the reader,
//	                                                            not the first or last; dropped pages keep
//	                                                            their place, key and item count (Count)
//
// Also beyond SWR: a page 0 that comes back with a shifted cursor (a new
// item at the top) leaves the loaded pages on screen while the pass brings
// each up to date, instead of the list collapsing to one page and growing
// back.
package fetch
