package fetch

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// InfiniteOptions configure an Infinite list. The zero value gives SWR's
// defaults.
type InfiniteOptions[P any] struct {
	// Config holds every option of the base model (deduping, focus,
	// reconnect, refresh, retry, keepPreviousData).
	Config

	// InitialSize (SWR initialSize, default 1) is the number of pages a new
	// list loads when the cache holds no size for its first key. It is read
	// once: changing it later has no effect.
	InitialSize int

	// RevalidateAll (SWR revalidateAll, default false): every revalidation
	// refetches every page, not only the first and the missing ones.
	RevalidateAll bool

	// RevalidateFirstPage (SWR revalidateFirstPage, default true): every
	// revalidation, including each SetSize, refetches the first page, so
	// new items at the top are seen when loading more. With ETags that
	// costs a 304, not a body.
	RevalidateFirstPage *bool

	// PersistSize (SWR persistSize, default false): when the first page's
	// key changes, keep the current size. When false, the size becomes the
	// one the cache holds for the new first key — back to InitialSize unless
	// a list with that first key was open (or still is) in this cache.
	PersistSize bool

	// AllAtOnce shows a revalidation's new pages only once all of them have
	// arrived, as SWR does. By default each page appears as it arrives.
	AllAtOnce bool

	// Parallel (SWR parallel, default false) fetches the pages of a
	// revalidation at once instead of one after another. It is for lists
	// whose keys do not depend on the previous page (IndexKeys): getKey is
	// called with a nil previous page. The first error wins, as in SWR;
	// the pages show when all have arrived.
	Parallel bool

	// HasMore, when set, decides InfiniteState.HasMore from the loaded
	// pages (e.g. IndexHasMore). By default there is more while getKey
	// gives a key for the page after the last loaded one.
	HasMore func(pages []P) bool

	// FallbackData (SWR fallbackData) is shown while nothing of the first
	// key is cached; nil means none. It does not count as loaded.
	FallbackData []P

	// OnSuccess is called after a revalidation of every page succeeded,
	// with the first page's key and the pages; OnError when one page failed,
	// with that page's key. Both run without locks held.
	OnSuccess func(firstKey string, pages []P)
	OnError   func(key string, err error)

	// Compare (SWR compare) reports whether two versions of a page are
	// equal; an equal answer keeps the page already shown. Default:
	// reflect.DeepEqual. It must be pure (it runs under locks).
	Compare func(a, b P) bool

	// MaxPages (TanStack Query's maxPages) bounds the pages whose data the
	// list holds; 0 means no bound. The MaxPages pages nearest the reader
	// (SetReading) are held; the others are dropped: their entry in Data
	// holds P's zero value and InfiniteState.Dropped marks it, their data
	// leaves the cache, and their keys are kept, so Size, HasMore and the
	// number of pages do not change. Reading near a dropped page again
	// fetches it. A revalidation fetches only held pages, plus pages whose
	// key is new or moved (needed to follow the chain; they are dropped
	// again at once), so the first page is revalidated only while held.
	MaxPages int

	// Count, when set, counts a page's items; InfiniteState.Counts then
	// gives every page's count, a dropped page's as it was when dropped,
	// so a UI can draw placeholders of the right height. It must be pure.
	Count func(page P) int
}

// InfiniteState is an Infinite list's snapshot: what SWR's
// useSWRInfinite returns, minus the functions, plus HasMore and
// IsLoadingMore.
type InfiniteState[P any] struct {
	// Key is the first page's key ("" when getKey(0, nil) is null).
	Key string
	// Data (SWR data) holds one value per loaded page, in page order. It is
	// nil until the first page has loaded — callers show "loading" then —
	// and may hold previous or fallback pages, see Config.KeepPreviousData.
	// It is a fresh slice each time; the pages themselves are shared.
	Data []P
	// Err (SWR error) is the error of the last revalidation; the pages
	// loaded before the failing one stay in Data.
	Err error
	// IsValidating (SWR isValidating) and IsLoading (SWR isLoading:
	// validating with no page of this first key loaded yet).
	IsValidating bool
	IsLoading    bool
	// Size (SWR size) is the number of pages that will be fetched and
	// returned (fewer when getKey returns null first).
	Size int
	// HasMore reports whether there is a page after the last loaded one;
	// a "load more" button shows when it is true.
	HasMore bool
	// IsLoadingMore reports whether pages up to Size are being fetched.
	IsLoadingMore bool
	// Dropped, with MaxPages, marks the pages whose data was dropped (their
	// Data entry is P's zero value); nil when no page is dropped.
	Dropped []bool
	// Counts, with InfiniteOptions.Count, is the item count of each page
	// in Data, dropped ones included; nil without Count.
	Counts []int
	// Version grows with every change; equal versions mean equal states.
	Version uint64
}

// Infinite is SWR's useSWRInfinite as an object: a list of pages, each
// fetched under its own key in the shared cache, page i's key computed by
// getKey from page i-1's data.
//
// A revalidation walks the pages in order (each key needs the previous
// page) and fetches a page when it is missing from the cache, when it is
// the first page (unless RevalidateFirstPage is off), or always with
// RevalidateAll and Revalidate. Requests for the same key are shared
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
	// consistent chain: pages[i].key == getKey(i, &pages[i-1].data).
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

// SetReading tells a list with MaxPages which page the reader is at: the
// MaxPages pages nearest it are held, those of them that were dropped are
// fetched again, and the farthest are dropped. Until it is called (or
// after SetReading(-1), or a new first key) the reader is at the last
// page, so loading more drops pages from the front. Reading never changes
// Size, and costs nothing while the held pages stay the same: a UI may
// call it on every scroll event.
func (l *Infinite[P]) SetReading(page int) {
	l.mu.Lock()
	if page < 0 {
		page = -1
	}
	if l.closed || page == l.reading {
		l.mu.Unlock()
		return
	}
	l.reading = page
	if l.opts.MaxPages > 0 && l.currentLocked() {
		lo, hi := l.windowLocked(len(l.pages))
		missing := false
		for i := lo; i < hi; i++ {
			missing = missing || l.pages[i].dropped
		}
		if l.trimLocked() {
			l.changedLocked()
		}
		if missing {
			l.triggerLocked(flagSoft)
		}
	}
	l.unlockAndNotify()
}

// windowLocked returns the pages [lo, hi) of n that MaxPages holds. While
// the reader is inside the held pages, away from their edges, they stay
// (a reader going back and forth over a page boundary costs nothing);
// else they are centred on the reader's page (one more after it, for an
// even bound, as readers go down), shifted to fit inside 0..n.
func (l *Infinite[P]) windowLocked(n int) (lo, hi int) {
	m := l.opts.MaxPages
	if m <= 0 || n <= m {
		return 0, n
	}
	r := l.reading
	if r < 0 || r >= n {
		r = n - 1
	}
	if lo := l.held; lo+m <= n && r > lo && r < lo+m-1 {
		return lo, lo + m
	}
	lo = min(max(r-(m-1)/2, 0), n-m)
	return lo, lo + m
}

// trimLocked drops the data of the pages outside the reader's window,
// from the list and from the cache, keeping their keys and counts. It
// reports whether it dropped any.
func (l *Infinite[P]) trimLocked() bool {
	if l.opts.MaxPages <= 0 || !l.currentLocked() {
		return false
	}
	n := len(l.pages)
	lo, hi := l.windowLocked(n)
	l.held = lo
	trimmed := false
	for i := range l.pages {
		p := &l.pages[i]
		if p.dropped || (i >= lo && i < hi) {
			continue
		}
		if i == n-1 {
			// HasMore needs the last page; remember its answer.
			data := make([]P, n)
			for j, q := range l.pages {
				data[j] = q.data
			}
			l.lastMore = l.hasMoreLocked(data)
		}
		if l.opts.Count != nil {
			p.count = l.opts.Count(p.data)
		}
		var zero P
		p.data, p.dropped = zero, true
		l.cache.Delete(p.key)
		trimmed = true
	}
	return trimmed
}

// leaveDroppedLocked reports whether a revalidation may pass page i, under
// key, without fetching it: it is dropped, outside the reader's window,
// under the same key, and the key after it is known (or not needed).
func (l *Infinite[P]) leaveDroppedLocked(i int, key string) bool {
	if l.opts.MaxPages <= 0 || !l.currentLocked() || i >= len(l.pages) {
		return false
	}
	p := l.pages[i]
	lo, hi := l.windowLocked(len(l.pages))
	return p.dropped && p.key == key && (i < lo || i >= hi) &&
		(i+1 < len(l.pages) || i+1 >= l.size)
}

// hasMoreLocked reports whether there is a page after the shown ones
// (current pages only); data is what publish shows.
func (l *Infinite[P]) hasMoreLocked(data []P) bool {
	if l.pages[len(l.pages)-1].dropped {
		return l.lastMore
	}
	if l.opts.HasMore != nil {
		return l.opts.HasMore(data)
	}
	return l.nextKeyLocked()
}

// nextKeyLocked reports whether getKey gives a key after the last shown
// page (current pages only).
func (l *Infinite[P]) nextKeyLocked() bool {
	last := l.pages[len(l.pages)-1]
	if last.dropped {
		return l.lastMore
	}
	_, more := l.keyLocked(len(l.pages), ptr(last.data))
	return more
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

// keyLocked calls getKey; an empty key counts as null. A panic in getKey
// is recovered wherever getKey runs (a constructor, a background
// revalidation, HasMore): the chain ends there and the panic becomes the
// list's error, so the pages loaded before it stay and the process lives.
func (l *Infinite[P]) keyLocked(i int, prev *P) (key string, ok bool) {
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

// fillFromCacheLocked makes pages the longest chain of current pages, shown
// or cached, up to size.
func (l *Infinite[P]) fillFromCacheLocked() {
	if !l.hasFirst {
		return
	}
	if !l.currentLocked() {
		v, ok := Get[P](l.cache, l.firstKey)
		if !ok || l.size == 0 {
			return
		}
		l.pages = []page[P]{{key: l.firstKey, data: v, real: true}}
	}
	if len(l.pages) > l.size {
		l.pages = l.pages[:l.size]
	}
	for i := len(l.pages); i < l.size; i++ {
		if l.pages[i-1].dropped {
			return // its next key needs its data: the revalidation fetches it
		}
		key, ok := l.keyLocked(i, ptr(l.pages[i-1].data))
		if !ok {
			return
		}
		v, ok := Get[P](l.cache, key)
		if !ok {
			return
		}
		l.pages = append(l.pages, page[P]{key: key, data: v, real: true})
	}
}

// placeholdersLocked shows previous (with KeepPreviousData) or fallback
// pages when there is nothing current to show.
func (l *Infinite[P]) placeholdersLocked(previous []page[P]) {
	if l.currentLocked() {
		return
	}
	switch {
	case l.cfg.KeepPreviousData && len(previous) > 0:
		l.pages = previous
	case l.opts.FallbackData != nil:
		l.pages = make([]page[P], len(l.opts.FallbackData))
		for i, d := range l.opts.FallbackData {
			l.pages[i] = page[P]{data: d}
		}
	}
}

// breaksLocked checks the links from..to-1 of the chain and truncates it at
// the first page whose key getKey no longer gives. It reports a truncation.
func (l *Infinite[P]) breaksLocked(from, to int) bool {
	for i := max(from, 1); i < min(to, len(l.pages)); i++ {
		if l.pages[i-1].dropped {
			continue // the link was checked while that page was held
		}
		key, ok := l.keyLocked(i, ptr(l.pages[i-1].data))
		if !ok || key != l.pages[i].key {
			l.pages = l.pages[:i]
			return true
		}
	}
	return false
}

func (l *Infinite[P]) resizeLocked(n int) {
	l.size = n
	l.fillFromCacheLocked()
	l.changedLocked()
}

// showPageLocked shows page i of a revalidation as soon as it is known
// (progressive mode): it replaces the shown page i, or appends it, and
// keeps the shown pages after it only while they still chain on.
func (l *Infinite[P]) showPageLocked(i int, p page[P]) {
	if i == 0 && !l.currentLocked() {
		l.pages = nil // fallback or previous data: replaced, not merged
	}
	switch {
	case i < len(l.pages):
		// Replace what is shown at i, even under another key (page 0 came
		// back with a shifted cursor): the pages after it stay on screen
		// until this pass brings each up to date, so the list never drops
		// to one page and grows back. The pass's end trims what is left.
		l.pages[i] = p
	case i == len(l.pages):
		l.pages = append(l.pages, p)
	default:
		// The shown pages were cut short meanwhile (a page before i
		// changed); the pass that keyChanged scheduled will redo them.
		return
	}
	l.pages = l.pages[:min(len(l.pages), l.size)]
	l.changedLocked()
}

// markPassingLocked notes that the running AllAtOnce pass fetches key.
func (l *Infinite[P]) markPassingLocked(key string) {
	if !l.opts.AllAtOnce {
		return
	}
	if l.passing == nil {
		l.passing = map[string]bool{}
	}
	l.passing[key] = true
}

// settlePassingLocked ends the marks of a pass that will not show its
// pages together (it failed, or another replaced it): the shown pages it
// fetched become what their answers put in the cache.
func (l *Infinite[P]) settlePassingLocked() {
	if len(l.passing) == 0 {
		l.passing = nil
		return
	}
	for i := range l.pages {
		p := &l.pages[i]
		if !l.passing[p.key] || p.dropped {
			continue
		}
		if v, ok := Get[P](l.cache, p.key); ok && !l.equal(p.data, v) {
			p.data = v
			l.changedLocked()
		}
	}
	l.passing = nil
}

// showAllLocked shows the result of a complete revalidation.
func (l *Infinite[P]) showAllLocked(fresh []page[P]) {
	l.passing = nil
	if l.opts.AllAtOnce {
		l.pages = fresh
		// A page may have changed in the cache since it was walked past.
		for i := range l.pages {
			if v, ok := Get[P](l.cache, l.pages[i].key); ok {
				l.pages[i].data = v
			}
		}
		if l.breaksLocked(1, len(l.pages)) {
			l.pending |= flagSoft
		}
	} else if !l.currentLocked() {
		l.pages = nil
	}
	// Shown pages past the end of this pass belong to a longer chain or a
	// larger size than there is now.
	l.pages = l.pages[:min(len(l.pages), len(fresh), l.size)]
	l.loaded, l.err = true, nil
	l.changedLocked()
}

func (l *Infinite[P]) publishLocked() {
	l.version++
	l.trimLocked()
	cur := l.currentLocked()
	var data []P
	var dropped []bool
	var counts []int
	if len(l.pages) > 0 || (l.loaded && l.hasFirst) {
		data = make([]P, len(l.pages))
		for i, p := range l.pages {
			data[i] = p.data
			if p.dropped && dropped == nil {
				dropped = make([]bool, len(l.pages))
			}
			if p.dropped {
				dropped[i] = true
			}
		}
		if l.opts.Count != nil {
			counts = make([]int, len(l.pages))
			for i, p := range l.pages {
				counts[i] = p.count
				if !p.dropped {
					counts[i] = l.opts.Count(p.data)
				}
			}
		}
	}
	shown := 0 // pages of the current first key
	hasMore := l.hasFirst
	if cur {
		shown = len(l.pages)
		hasMore = l.hasMoreLocked(data)
	}
	err := l.err
	if err == nil {
		err = l.keyErr
	}
	l.snap.Store(&InfiniteState[P]{
		Key:           l.firstKey,
		Data:          data,
		Err:           err,
		IsValidating:  l.validating,
		IsLoading:     l.validating && l.hasFirst && l.size > 0 && !cur,
		Size:          l.size,
		HasMore:       hasMore,
		IsLoadingMore: l.validating && hasMore && shown < l.size,
		Dropped:       dropped,
		Counts:        counts,
		Version:       l.version,
	})
}

// batch is one revalidation: walk pages 0..size-1 in order, fetching those
// that need it, until size or a null key.
func (l *Infinite[P]) batch(ctx context.Context, gen uint64, f flags) error {
	dedupe := l.dedupe(f)
	all := f&flagAll != 0 || l.opts.RevalidateAll
	var pred func(page P, key string) bool
	firstPage := on(l.opts.RevalidateFirstPage)
	l.mu.Lock()
	if f&flagPred != 0 {
		pred, l.pred = l.pred, nil
		firstPage = firstPage && (l.predFirst || f&^(flagPred|flagForce) != 0)
		l.predFirst = false
	}
	l.settlePassingLocked() // a pass before this one was cut short
	l.unlockAndNotify()
	if l.opts.Parallel {
		return l.parallelBatch(ctx, gen, dedupe, all, firstPage, pred)
	}
	var fresh []page[P]
	for i := 0; ; i++ {
		l.mu.Lock()
		if l.gen != gen {
			l.mu.Unlock()
			return context.Canceled
		}
		key, ok := "", false
		if i == 0 {
			l.keyErr = nil // a getKey that panics again says so again
		}
		// The size is read live, so a SetSize during this pass extends it.
		if l.hasFirst && i < l.size {
			switch {
			case i == 0:
				key, ok = l.keyLocked(0, nil)
			case fresh[i-1].dropped:
				// Left dropped by this pass, so its successor is known.
				key, ok = l.pages[i].key, true
			default:
				key, ok = l.keyLocked(i, ptr(fresh[i-1].data))
			}
		}
		if !ok {
			l.finishLocked(fresh)
			return nil
		}
		if l.leaveDroppedLocked(i, key) {
			fresh = append(fresh, l.pages[i])
			l.mu.Unlock()
			continue
		}
		v, has := Get[P](l.cache, key)
		if !has && i < len(l.pages) && l.pages[i].real && !l.pages[i].dropped && l.pages[i].key == key {
			v, has = l.pages[i].data, true // evicted, but still shown
		}
		fetch := all || !has || (i == 0 && firstPage) || (pred != nil && pred(v, key))
		if fetch {
			l.markPassingLocked(key)
		}
		l.mu.Unlock()

		if fetch {
			maxAge := dedupe
			if !has {
				maxAge = anyAge
			}
			var err error
			v, err = l.fetchPage(ctx, key, maxAge)
			if ctx.Err() != nil {
				return context.Canceled
			}
			if err != nil {
				l.mu.Lock()
				if l.gen != gen {
					l.mu.Unlock()
					return context.Canceled
				}
				// Pages already shown stay; the error is shown beside them.
				l.err = err
				l.settlePassingLocked()
				l.changedLocked()
				l.unlockAndNotify()
				if l.opts.OnError != nil {
					l.opts.OnError(key, err)
				}
				return err
			}
		}
		l.mu.Lock()
		if l.gen != gen {
			l.mu.Unlock()
			return context.Canceled
		}
		// The cache is the truth: a Mutate that landed after the answer
		// wins, and the next key is computed from what is shown.
		if cv, ok := Get[P](l.cache, key); ok {
			v = cv
		}
		p := page[P]{key: key, data: v, real: true}
		fresh = append(fresh, p)
		if !l.opts.AllAtOnce {
			l.showPageLocked(i, p)
		}
		l.unlockAndNotify()
	}
}

// parallelBatch is batch for Parallel lists: every key is known up front,
// so the pages that need it are fetched at once.
func (l *Infinite[P]) parallelBatch(ctx context.Context, gen uint64, dedupe time.Duration, all, firstPage bool, pred func(P, string) bool) error {
	type job struct {
		key   string
		fetch bool
		has   bool
		v     P
		left  *page[P] // a dropped page this pass leaves dropped
	}
	l.mu.Lock()
	if l.gen != gen {
		l.mu.Unlock()
		return context.Canceled
	}
	var jobs []job
	for i := 0; l.hasFirst && i < l.size; i++ {
		key, ok := l.keyLocked(i, nil)
		if !ok {
			break
		}
		if l.leaveDroppedLocked(i, key) {
			jobs = append(jobs, job{key: key, left: ptr(l.pages[i])})
			continue
		}
		v, has := Get[P](l.cache, key)
		j := job{key: key, has: has, v: v,
			fetch: all || !has || (i == 0 && firstPage) || (pred != nil && has && pred(v, key))}
		if j.fetch {
			l.markPassingLocked(key)
		}
		jobs = append(jobs, j)
	}
	l.mu.Unlock()

	errs := make(chan struct {
		key string
		err error
	}, len(jobs))
	var wg sync.WaitGroup
	for i := range jobs {
		if !jobs[i].fetch {
			continue
		}
		wg.Add(1)
		go func(j *job) {
			defer wg.Done()
			maxAge := dedupe
			if !j.has {
				maxAge = anyAge
			}
			if _, err := l.fetchPage(ctx, j.key, maxAge); err != nil {
				errs <- struct {
					key string
					err error
				}{j.key, err}
			}
		}(&jobs[i])
	}
	wg.Wait()
	close(errs)
	if ctx.Err() != nil {
		return context.Canceled
	}
	l.mu.Lock()
	if l.gen != gen {
		l.mu.Unlock()
		return context.Canceled
	}
	if first, failed := <-errs; failed {
		l.settlePassingLocked()
		// The first error wins; pages already shown stay.
		l.err = first.err
		l.changedLocked()
		l.unlockAndNotify()
		if l.opts.OnError != nil {
			l.opts.OnError(first.key, first.err)
		}
		return first.err
	}
	fresh := make([]page[P], 0, len(jobs))
	for _, j := range jobs {
		if j.left != nil {
			fresh = append(fresh, *j.left)
			continue
		}
		v, ok := Get[P](l.cache, j.key) // the cache is the truth
		if !ok {
			v = j.v
		}
		fresh = append(fresh, page[P]{key: j.key, data: v, real: true})
	}
	l.pages = fresh
	l.finishLocked(fresh)
	return nil
}

// finishLocked ends a successful revalidation: it shows its pages, unlocks
// and reports the success.
func (l *Infinite[P]) finishLocked(fresh []page[P]) {
	l.showAllLocked(fresh)
	first, data := l.firstKey, l.snap.Load().Data
	l.unlockAndNotify()
	if l.opts.OnSuccess != nil {
		l.opts.OnSuccess(first, data)
	}
}

func (l *Infinite[P]) wants(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || !l.hasFirst || !l.validating {
		return false
	}
	if key == l.firstKey {
		return true
	}
	for _, p := range l.pages {
		if p.key == key && !p.dropped {
			return true
		}
	}
	return false
}

func (l *Infinite[P]) keyChanged(key string) {
	l.mu.Lock()
	switch {
	case l.closed || !l.hasFirst:
	case key == SizeKey(l.firstKey):
		// Another list with the same first key changed the size.
		if n, ok := Get[int](l.cache, key); ok && n != l.size {
			grew := n > l.size
			l.resizeLocked(n)
			if grew {
				l.triggerLocked(flagSoft)
			}
		}
	case l.passing[key]:
		// An AllAtOnce pass fetches it: shown with the rest of the pass.
	case l.currentLocked():
		// A shown page changed (Mutate, Cache.Set, another list or query).
		for i := range l.pages {
			if l.pages[i].key != key {
				continue
			}
			if l.pages[i].dropped {
				break // not held: fetched again when read
			}
			if v, ok := Get[P](l.cache, key); ok && !l.equal(l.pages[i].data, v) {
				l.pages[i].data = v
				// When the next page's key moved (a shifted cursor), the
				// pages after this one stay shown and a pass brings them
				// up to date; cutting them here would collapse the list.
				if i+1 < len(l.pages) {
					if next, ok := l.keyLocked(i+1, ptr(v)); !ok || next != l.pages[i+1].key {
						l.triggerLocked(flagSoft)
					}
				}
				l.changedLocked()
			}
			break
		}
	}
	l.unlockAndNotify()
}

func (l *Infinite[P]) event(ev event) {
	l.mu.Lock()
	switch {
	case !l.hasFirst:
		// A null first key is inert: no fetch, no IsValidating flash, no
		// OnSuccess.
	case ev.kind == eventFocus:
		l.onFocusLocked()
	case ev.kind == eventReconnect:
		l.onReconnectLocked()
	case ev.kind == eventRevalidate:
		if l.matchesLocked(ev.match) {
			l.triggerLocked(flagForce | flagAll)
		}
	}
	l.unlockAndNotify()
}

func (l *Infinite[P]) matchesLocked(match func(string) bool) bool {
	if !l.hasFirst {
		return false
	}
	if match(l.firstKey) {
		return true
	}
	for _, p := range l.pages {
		if p.real && match(p.key) {
			return true
		}
	}
	return false
}

// fetchPage fetches key through the cache (shared with any request for it
// in flight) and returns it as a page.
func (l *Infinite[P]) fetchPage(ctx context.Context, key string, maxAge time.Duration) (P, error) {
	res := l.cache.fetch(ctx, key, l.fetchAny, maxAge, l.equalAny)
	if res.err != nil {
		var zero P
		return zero, res.err
	}
	v, ok := res.value.(P)
	if !ok {
		return v, fmt.Errorf("fetch: the cache holds a %T under %q, not a page", res.value, key)
	}
	return v, nil
}

func (l *Infinite[P]) fetchAny(ctx context.Context, key, etag string) (any, string, int64, error) {
	r, err := l.fetcher(ctx, key, etag)
	return r.Data, r.ETag, r.Size, err
}

func (l *Infinite[P]) equalAny(a, b any) bool {
	x, ok1 := a.(P)
	y, ok2 := b.(P)
	return ok1 && ok2 && l.equal(x, y)
}
