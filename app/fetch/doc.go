// Package fetch is a Go port of SWR's useSWR and useSWRInfinite: keyed,
// cached, deduplicated, revalidating requests, and lists of pages built on
// them. Every list in the browser app runs on it.
//
// It is plain Go — generic over the page type, standard library only, no
// go-app and no syscall/js — so `go test -race` covers it natively, and the
// same code runs in the browser under GOOS=js GOARCH=wasm.
//
// # Hooks as objects
//
// Go has no hooks, so each hook call is an object that lives as long as the
// component using it:
//
//	SWR                                   this package
//	<SWRConfig value={{provider}}>        c := NewCache(CacheOptions{MaxEntries: 500})
//	useSWR(key, fetcher, options)         q := New(c, key, fetcher, Options[T]{...})
//	  data, error, isValidating,          q.Snapshot() → State[T]
//	  isLoading
//	  mutate() / mutate(d) / mutate(d,    q.Revalidate() / q.Mutate(d, true) /
//	  false)                                q.Mutate(d, false)
//	  re-render with another key          q.SetKey(key); "" is the null key
//	useSWRInfinite(getKey, fetcher, o)    l := NewInfinite(c, getKey, fetcher, InfiniteOptions[P]{...})
//	  data, error, isValidating,          l.Snapshot() → InfiniteState[P], plus
//	  isLoading, size                       HasMore and IsLoadingMore
//	  setSize(n) / setSize(s => s + 1)    l.SetSize(n) / l.SetSizeFunc(func(s int) int { return s + 1 })
//	  mutate() / mutate(p) / mutate(p,    l.Revalidate() / l.Mutate(p, true) /
//	  false)                                l.Mutate(p, false)
//	  re-render with another getKey       l.SetGetKey(getKey)
//	unmount                               q.Close(), l.Close()
//	focus / online listeners              c.Focus(), c.Reconnect() (or per object)
//	global mutate(key)                    c.Revalidate(match), Set(c, key, v)
//
// Keys are strings. getKey returns (key, ok); ok == false is SWR's null.
// IndexKeys and CursorKeys are the getKeys of the API's two pagination
// conventions; JSONFetcher is the fetcher for its endpoints, with ETags
// ("not modified" costs no body) and RFC 9457 problems as *HTTPError.
//
// # Using it from a UI (the go-app adapter)
//
// State changes happen on background goroutines. An adapter subscribes and
// moves each change onto the UI goroutine itself; it never needs a lock,
// because Snapshot is a lock-free, race-free copy of the whole state:
//
//	func (c *bundles) OnMount(ctx app.Context) {
//		c.list = fetch.NewInfinite(cache, fetch.IndexKeys[api.Bundle](path, 20),
//			fetch.JSONFetcher[[]api.Bundle](httpOpts), fetch.InfiniteOptions[[]api.Bundle]{})
//		// Subscribe first, then read, so no change falls in between.
//		c.unsubscribe = c.list.Subscribe(func() {
//			ctx.Dispatch(func(ctx app.Context) { c.state = c.list.Snapshot() })
//		})
//		c.state = c.list.Snapshot()
//	}
//
//	func (c *bundles) OnDismount() { c.unsubscribe(); c.list.Close() }
//
//	// Render reads c.state only: Data == nil → skeleton; Err → message
//	// (fetch.AsHTTPError gives the problem's detail); HasMore → a "load
//	// more" button calling c.list.SetSizeFunc(func(n int) int { return n + 1 }),
//	// disabled while IsLoadingMore.
//
// Subscribers are called from any goroutine, possibly concurrently and
// spuriously, never under a lock (so they may call back into the object).
// Reading Snapshot in the dispatched function, not in the callback, always
// renders the newest state; State.Version tells whether anything changed.
// Values in a snapshot are shared with the cache and must not be modified.
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
// # Where it differs from SWR
//
// Error retries back off exponentially without SWR's random jitter. Only
// the request that started a fetch calls OnSuccess/OnError of a Query, as in
// SWR; an Infinite reports each of its revalidations. Infinite.Mutate(p,
// true) revalidates every page (SWR: the changed ones and the first).
package fetch
