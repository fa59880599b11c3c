package fetch

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"
)

// Infinite is SWR's useSWRInfinite as an object: a list of pages, each
// fetched under its own key in the shared cache, page i's key computed by
// getKey from page i-1's data (with Parallel, from i alone).
//
// A revalidation walks the pages in order (each key needs the previous
// page; with Parallel, it asks for them at once) and fetches a page when
// it is missing from the cache, when it is the first page (unless
// RevalidateFirstPage is off), or always with RevalidateAll and
// Revalidate. Requests for the same key are shared
// across lists and queries on the cache, so a key is never fetched twice at
// once however fast SetSize is called. All methods are safe for concurrent
// use.
type Infinite[P any] struct {
	core
	fetcher     Fetcher[P]
	opts        InfiniteOptions[P]
	equal       func(a, b P) bool
	initialSize int

	getKey   GetKey[P]
	firstKey string
	hasFirst bool
	size     int
	// pages is what is shown. When current (see currentLocked) it is a
	// consistent chain: pages[i].key == getKey(i, &pages[i-1].data)
	// (getKey(i, nil) with Parallel).
	pages  []page[P]
	loaded bool // a revalidation of this first key finished (Data [] vs nil)
	err    error
	// keyErr is a panic of getKey, recovered: shown as the list's error,
	// with the chain ending where getKey failed.
	keyErr error
	// pred picks the pages a flagPred revalidation refetches; predFirst
	// adds the first page (RevalidateFunc), which MutateFunc's predicate
	// alone decides, as SWR's revalidate function does.
	pred      func(page P, key string) bool
	predFirst bool
	// passing are the keys the running AllAtOnce pass fetches: their
	// answers show when the whole pass does, not as each lands in the
	// cache. A pass that fails or is superseded shows what did arrive
	// (settlePassingLocked): once idle, a shown page is its cache entry.
	passing map[string]bool
	// reading is the page the reader is at (SetReading); -1 is the last.
	// held is where the held pages started at the last trim.
	reading, held int
	// lastMore is HasMore as it was when the last page was dropped.
	lastMore bool
	version  uint64
	snap     atomic.Pointer[InfiniteState[P]]
}

type page[P any] struct {
	key  string
	data P
	real bool // false for FallbackData placeholders
	// dropped: MaxPages dropped data (zero now); count is what it held.
	dropped bool
	count   int
}

// NewInfinite returns a list over getKey (SWR: useSWRInfinite(getKey,
// fetcher, options)) and starts loading it: Size pages, where Size is the
// one cached for the first page's key, else InitialSize. Pages already
// cached show at once. The list closes when ctx ends (as on Close: a
// component's context closes it on unmount).
func NewInfinite[P any](ctx context.Context, c *Cache, getKey GetKey[P], fetcher Fetcher[P], opts InfiniteOptions[P]) *Infinite[P] {
	l := &Infinite[P]{fetcher: fetcher, opts: opts, equal: opts.Compare, initialSize: opts.InitialSize, reading: -1}
	if l.equal == nil {
		l.equal = func(a, b P) bool { return reflect.DeepEqual(a, b) }
	}
	if l.initialSize <= 0 {
		l.initialSize = 1
	}
	l.init(c, opts.Config, l.batch, l.publishLocked)

	l.mu.Lock()
	l.getKey = getKey
	l.firstKey, l.hasFirst = l.keyLocked(0, nil)
	l.pinSizeLocked()
	l.size = l.cachedSizeLocked()
	l.fillFromCacheLocked()
	l.placeholdersLocked(nil)
	l.publishLocked()
	l.mu.Unlock()

	c.watch(l)

	l.mu.Lock()
	if l.hasFirst {
		l.triggerLocked(flagSoft)
	}
	l.unlockAndNotify()
	l.closeWith(ctx, l.Close)
	return l
}

// Wait blocks until the list is idle — the revalidation that Revalidate,
// SetSize, Mutate or SetGetKey started has finished, and any that followed
// — and returns the list's error, or ctx's when ctx ends first:
//
//	l.SetSizeFunc(func(n int) int { return n + 1 })
//	if err := l.Wait(ctx); err != nil { … }
func (l *Infinite[P]) Wait(ctx context.Context) error {
	if err := l.wait(ctx); err != nil {
		return err
	}
	return l.Snapshot().Err
}

// Snapshot returns the current state without taking a lock. Its Data is
// the caller's own slice: sorting or appending to it changes no other
// snapshot. (The pages themselves are shared and must not be modified.)
func (l *Infinite[P]) Snapshot() InfiniteState[P] {
	s := *l.snap.Load()
	s.Data = slices.Clone(s.Data) // nil stays nil
	s.Dropped = slices.Clone(s.Dropped)
	s.Counts = slices.Clone(s.Counts)
	return s
}

// Subscribe registers fn to be called after every change of the state; see
// Query.Subscribe.
func (l *Infinite[P]) Subscribe(fn func()) (unsubscribe func()) { return l.subscribe(fn) }

// SubscribeChanges is Subscribe without the spurious calls: fn runs only
// when the state's Version differs from the one of its last call, so a UI
// binding re-renders only for a real change.
func (l *Infinite[P]) SubscribeChanges(fn func()) (unsubscribe func()) {
	var last atomic.Uint64
	last.Store(l.snap.Load().Version)
	return l.subscribe(func() {
		if v := l.snap.Load().Version; last.Swap(v) != v {
			fn()
		}
	})
}

// SetSize sets the number of pages (SWR: setSize(n)); "load more" is
// SetSize(size + 1), better written SetSizeFunc(func(n int) int { return
// n + 1 }). Growing shows the cached pages at once and fetches the rest;
// shrinking keeps the dropped pages in the cache, so growing again is
// instant. The size is stored in the cache under SizeKey(first key), so
// other lists with the same first key follow. A negative n counts as 0.
func (l *Infinite[P]) SetSize(n int) { l.setSize(func(int) int { return n }) }

// SetSizeFunc sets the size to f(current size) (SWR: setSize(size =>
// ...)), atomically with respect to other SetSize calls.
func (l *Infinite[P]) SetSizeFunc(f func(size int) int) { l.setSize(f) }

func (l *Infinite[P]) setSize(f func(int) int) {
	l.mu.Lock()
	if l.closed || !l.hasFirst {
		l.mu.Unlock()
		return
	}
	n := max(f(l.size), 0)
	l.resizeLocked(n)
	notify := l.cache.write(SizeKey(l.firstKey), n)
	if l.running {
		// The running revalidation reads the size as it goes and will also
		// load the new pages; one more pass afterwards (deduped) picks up
		// anything it had already passed. Nothing is fetched twice.
		l.pending |= flagSoft
	} else {
		// SWR revalidates on every setSize: the first page (unless
		// RevalidateFirstPage is off) is asked for even inside the deduping
		// interval, and the missing pages are loaded.
		l.triggerLocked(flagForce)
	}
	l.unlockAndNotify()
	notify()
}

// Revalidate refetches every page, ignoring the deduping interval (SWR:
// mutate()).
func (l *Infinite[P]) Revalidate() {
	l.mu.Lock()
	if l.hasFirst {
		l.triggerLocked(flagForce | flagAll)
	}
	l.unlockAndNotify()
}

// Mutate replaces the pages and shows them at once (SWR: mutate(pages) when
// revalidate is true, mutate(pages, false) otherwise). Each page is
// written to the cache under its key, as getKey computes it along the new
// pages (pages after a null key are dropped); pages beyond Size are cached
// but not shown. Local writes win over answers already in flight. With
// revalidate, every page is then refetched.
func (l *Infinite[P]) Mutate(pages []P, revalidate bool) {
	l.mu.Lock()
	if l.closed || !l.hasFirst {
		l.mu.Unlock()
		return
	}
	notifies := l.mutateLocked(pages, false)
	if revalidate {
		l.triggerLocked(flagForce | flagAll)
	}
	l.unlockAndNotify()
	for _, n := range notifies {
		n()
	}
}

// MutateFunc replaces the pages with update(the pages shown), atomically:
// no revalidation or other Mutate lands between the read and the write
// (SWR: mutate(pages => …)). update runs under the list's lock and must
// not call the list. Then the pages for which revalidate(page, key) is
// true are refetched (SWR's revalidate function form), so changing one
// page costs one request; nil refetches none.
func (l *Infinite[P]) MutateFunc(update func(pages []P) []P, revalidate func(page P, key string) bool) {
	l.mu.Lock()
	if l.closed || !l.hasFirst {
		l.mu.Unlock()
		return
	}
	var current []P
	if l.currentLocked() {
		for _, p := range l.pages {
			current = append(current, p.data)
		}
	}
	notifies := l.mutateLocked(update(current), true)
	if revalidate != nil {
		l.addPredLocked(revalidate, false)
	}
	l.unlockAndNotify()
	for _, n := range notifies {
		n()
	}
}

// RevalidateFunc refetches the loaded pages for which revalidate(page,
// key) is true, ignoring the deduping interval, plus the first page
// (unless RevalidateFirstPage is off) and any page missing from the cache.
func (l *Infinite[P]) RevalidateFunc(revalidate func(page P, key string) bool) {
	l.mu.Lock()
	if !l.closed && l.hasFirst && revalidate != nil {
		l.addPredLocked(revalidate, true)
	}
	l.unlockAndNotify()
}

// addPredLocked schedules a flagPred revalidation; predicates given before
// it runs are combined. first adds the first page (RevalidateFirstPage
// permitting).
func (l *Infinite[P]) addPredLocked(pred func(page P, key string) bool, first bool) {
	l.predFirst = l.predFirst || first
	if prev := l.pred; prev != nil {
		l.pred = func(page P, key string) bool { return prev(page, key) || pred(page, key) }
	} else {
		l.pred = pred
	}
	l.triggerLocked(flagForce | flagPred)
}

// mutateLocked writes pages to the cache along getKey's chain and shows
// them; it returns the cache's notifications, to call after unlocking.
// With keepDropped (MutateFunc), the pages MaxPages dropped stay dropped
// under their keys, whatever pages holds in their place.
func (l *Infinite[P]) mutateLocked(pages []P, keepDropped bool) []func() {
	var old []page[P]
	if l.currentLocked() {
		old = l.pages
	}
	var notifies []func()
	chain := make([]page[P], 0, len(pages))
	for i, d := range pages {
		if keepDropped && i < len(old) && old[i].dropped {
			chain = append(chain, old[i])
			continue
		}
		var key string
		var ok bool
		switch {
		case i == 0:
			key, ok = l.keyLocked(0, nil)
		case chain[i-1].dropped:
			// A dropped page's data is gone; the link it had is kept.
			if i < len(old) {
				key, ok = old[i].key, true
			}
		default:
			key, ok = l.keyLocked(i, ptr(pages[i-1]))
		}
		if !ok {
			break
		}
		notifies = append(notifies, l.cache.write(key, d))
		chain = append(chain, page[P]{key: key, data: d, real: true})
	}
	l.pages = chain[:min(len(chain), l.size)]
	l.loaded, l.err = true, nil
	l.changedLocked()
	return notifies
}

// SetGetKey changes the list's data source, e.g. for a new search string
// (SWR: re-rendering with a new getKey). When the first page's key changes,
// the old revalidation is cancelled and its late answers are never shown;
// the size follows PersistSize; the new first key's cached pages show at
// once, else the previous pages (KeepPreviousData), else FallbackData,
// else nothing. When only later keys change, the pages whose keys changed
// are reloaded.
func (l *Infinite[P]) SetGetKey(getKey GetKey[P]) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	// Whether the shown chain ended at a null key, by the old getKey.
	ended := l.currentLocked() && !l.nextKeyLocked()
	l.getKey = getKey
	l.keyErr = nil
	first, ok := l.keyLocked(0, nil)
	if ok == l.hasFirst && first == l.firstKey {
		l.sameFirstKeyLocked(ended)
		l.unlockAndNotify()
		return
	}

	oldSize, previous := l.size, l.pages
	l.reading, l.held = -1, 0 // another data source is read from its end again
	l.resetLocked()
	l.unpinSizeLocked()
	l.firstKey, l.hasFirst = first, ok
	l.pinSizeLocked()
	l.err, l.loaded, l.pages = nil, false, nil
	notify := func() {}
	if l.opts.PersistSize {
		// The size carries over, through a null first key too (which
		// stores none): back on a key, the size is the one before.
		l.size = oldSize
		if ok {
			notify = l.cache.write(SizeKey(first), oldSize)
		}
	} else {
		l.size = l.cachedSizeLocked()
	}
	l.fillFromCacheLocked()
	l.placeholdersLocked(previous)
	l.changedLocked()
	if ok {
		l.triggerLocked(flagSoft)
	}
	l.unlockAndNotify()
	notify()
}

// sameFirstKeyLocked handles a new getKey with the same first page: only
// what changed is redone, so that calling SetGetKey on every render with an
// equivalent getKey costs nothing and, above all, does not notify (which
// would render again, and call SetGetKey again).
func (l *Infinite[P]) sameFirstKeyLocked(ended bool) {
	if !l.currentLocked() {
		return // still loading the first page, or retrying it
	}
	n := len(l.pages)
	cut := l.breaksLocked(1, n)
	l.fillFromCacheLocked()
	if cut || len(l.pages) != n || (ended && l.nextKeyLocked() && len(l.pages) < l.size) {
		l.changedLocked()
		l.triggerLocked(flagSoft)
	}
}

// Focus revalidates as on a window focus event (see Config).
func (l *Infinite[P]) Focus() {
	l.mu.Lock()
	if l.hasFirst { // a null first key is inert
		l.onFocusLocked()
	}
	l.unlockAndNotify()
}

// Reconnect revalidates as on a network reconnect event (see Config).
func (l *Infinite[P]) Reconnect() {
	l.mu.Lock()
	if l.hasFirst {
		l.onReconnectLocked()
	}
	l.unlockAndNotify()
}

// Close stops the list (SWR: unmount): its work is cancelled — requests
// nobody else waits for included — timers stopped, subscribers dropped. The
// pages and the size stay in the cache for the next list.
func (l *Infinite[P]) Close() {
	l.mu.Lock()
	ok := l.closeLocked()
	if ok {
		l.unpinSizeLocked()
	}
	l.mu.Unlock()
	if ok {
		l.cache.unwatch(l)
	}
}

// pinSizeLocked keeps the list's size in the cache while the list is open:
// the cache's bound may evict pages (they are fetched again), but a size
// evicted under an open list would shrink its next remount to InitialSize.
func (l *Infinite[P]) pinSizeLocked() {
	if l.hasFirst {
		l.cache.pin(SizeKey(l.firstKey))
	}
}

func (l *Infinite[P]) unpinSizeLocked() {
	if l.hasFirst {
		l.cache.unpin(SizeKey(l.firstKey))
	}
}

// keyLocked calls getKey; an empty key counts as null. It is the only
// caller of getKey, so it keeps Parallel's promise: with Parallel, getKey
// gets a nil previous page whoever asks (a pass, publish's HasMore,
// SetSize, Mutate, SetGetKey, the cache's notifications), so every key
// of the list is the one a parallel pass, which knows no previous page,
// computes. A panic in getKey is recovered wherever getKey runs (a
// constructor, a background revalidation, HasMore): the chain ends there
// and the panic becomes the list's error, so the pages loaded before it
// stay and the process lives.
func (l *Infinite[P]) keyLocked(i int, prev *P) (key string, ok bool) {
	if l.opts.Parallel {
		prev = nil
	}
	defer func() {
		if r := recover(); r != nil {
			l.keyErr = fmt.Errorf("fetch: getKey panicked for page %d: %v", i, r)
			key, ok = "", false
		}
	}()
	key, ok = l.getKey(i, prev)
	return key, ok && key != ""
}

// ptr returns a pointer to a copy, so getKey cannot alias our slices.
func ptr[P any](v P) *P { return &v }

func (l *Infinite[P]) cachedSizeLocked() int {
	if l.hasFirst {
		if n, ok := Get[int](l.cache, SizeKey(l.firstKey)); ok {
			return n
		}
	}
	return l.initialSize
}

// currentLocked reports whether pages belong to the current first key (as
// opposed to fallback or previous data, or nothing).
func (l *Infinite[P]) currentLocked() bool {
	return l.hasFirst && len(l.pages) > 0 && l.pages[0].real && l.pages[0].key == l.firstKey
}
