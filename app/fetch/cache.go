package fetch

import (
	"container/list"
	"sync"
	"time"
)

// CacheOptions configure a Cache. The zero value is an unbounded cache on
// the system clock.
type CacheOptions struct {
	// MaxEntries bounds the number of cached keys (pages, single values and
	// list sizes); 0 means no bound. The least recently used go first.
	MaxEntries int
	// MaxBytes bounds the summed size of the cached values; 0 means no bound.
	// A value's size is what its fetcher reported (Result.Size, the body
	// length for the HTTP fetchers), else SizeOf, else a flat
	// DefaultEntrySize.
	MaxBytes int64
	// SizeOf estimates a value's size when the fetcher did not report one,
	// and for values written with Set or Mutate.
	SizeOf func(key string, value any) int64
	// Clock is the time source of the cache and of every Query and Infinite
	// built on it; nil means SystemClock.
	Clock Clock
}

// DefaultEntrySize is the size charged against CacheOptions.MaxBytes for a
// value whose size nobody reported.
const DefaultEntrySize = 64

// Cache is the shared cache behind every Query and Infinite list: SWR's
// cache provider. It holds one value per key (with its ETag and last error),
// shares in-flight requests between everyone asking for the same key, and
// evicts the least recently used entries past its bounds.
//
// Open Query and Infinite objects keep their own copy of what they display,
// so eviction never blanks a list on screen; it only costs a full download
// (instead of a "not modified") the next time that key is revalidated.
//
// A Cache is safe for concurrent use. Values are shared, not copied: treat
// everything read from it as immutable.
type Cache struct {
	opts  CacheOptions
	clock Clock

	mu       sync.Mutex
	lru      *list.List // of *entry, most recently used at the front
	entries  map[string]*list.Element
	bytes    int64
	seq      uint64 // orders requests and local writes; newer wins
	inflight map[string]*request
	watchers map[watcher]struct{}
	// pinned counts, per key, the open objects that keep it from eviction:
	// an open list's size (SizeKey), which no page request would restore.
	pinned map[string]int

	active int // goroutines started by the package (requests and runners)
	// cond is broadcast whenever active or a request's waiters change; tests
	// wait on it instead of sleeping.
	cond *sync.Cond
}

type entry struct {
	key   string
	value any
	has   bool
	err   error
	etag  string
	size  int64
	// seq is the sequence number of the write that produced value/err: a
	// request's start or a local mutation. An answer to a request older than
	// seq is stale and dropped.
	seq uint64
	// fetchedAt is when the request that produced value started; the
	// deduping interval is measured from it. Zero after a local write.
	fetchedAt time.Time
	// primed marks a value Prime stored that nobody has used yet: fresh
	// at its first use, however long after Prime that comes.
	primed bool
}

// watcher is an open Query or Infinite.
type watcher interface {
	// keyChanged is called, without locks held, after key's entry changed.
	keyChanged(key string)
	// event delivers Focus, Reconnect and Revalidate.
	event(ev event)
	// wants reports whether it is open and revalidating, with key among
	// its keys (about to fetch it, or fetching it): a request for key is
	// not cancelled while one does.
	wants(key string) bool
}

type eventKind int

const (
	eventFocus eventKind = iota
	eventReconnect
	eventRevalidate
)

type event struct {
	kind  eventKind
	match func(key string) bool // eventRevalidate only
}

// NewCache returns an empty cache.
func NewCache(opts CacheOptions) *Cache {
	c := &Cache{
		opts:     opts,
		clock:    opts.Clock,
		lru:      list.New(),
		entries:  make(map[string]*list.Element),
		inflight: make(map[string]*request),
		watchers: make(map[watcher]struct{}),
		pinned:   make(map[string]int),
	}
	if c.clock == nil {
		c.clock = SystemClock
	}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// Clock returns the cache's clock.
func (c *Cache) Clock() Clock { return c.clock }

// Len returns the number of cached keys.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Bytes returns the summed size of the cached values.
func (c *Cache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// Get returns the value cached under key, if there is one of type T.
func Get[T any](c *Cache, key string) (T, bool) {
	v, ok := c.peek(key)
	t, isT := v.(T)
	return t, ok && isT
}

// Set stores value under key, as SWR's global mutate(key, data, false), and
// updates every open Query and Infinite showing that key. It clears the
// key's error and ETag: a value written locally is not the server's copy, so
// it must not be confirmed by a "not modified". Use Cache.Revalidate to
// follow it with a fetch.
func Set[T any](c *Cache, key string, value T) {
	c.write(key, value)()
}

// Delete drops key from the cache. Open objects keep what they display.
func (c *Cache) Delete(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.removeLocked(el)
	}
}

// Focus tells every open Query and Infinite on this cache that the window
// gained focus (SWR's revalidateOnFocus). An adapter calls it from the
// window's focus or visibilitychange event.
func (c *Cache) Focus() { c.broadcast(event{kind: eventFocus}) }

// Reconnect tells every open object that the network came back (SWR's
// revalidateOnReconnect). An adapter calls it from the window's online event.
func (c *Cache) Reconnect() { c.broadcast(event{kind: eventReconnect}) }

// Revalidate refetches, bypassing the deduping interval, every open Query
// whose key matches and every open Infinite whose first key or any shown
// page key matches (every page of such a list is revalidated). It is SWR's
// global mutate(key) / mutate(filter); call it after a write that changes
// what those lists show.
func (c *Cache) Revalidate(match func(key string) bool) {
	c.broadcast(event{kind: eventRevalidate, match: match})
}

func (c *Cache) broadcast(ev event) {
	for _, w := range c.watcherList() {
		w.event(ev)
	}
}

func (c *Cache) watch(w watcher) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchers[w] = struct{}{}
}

func (c *Cache) unwatch(w watcher) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.watchers, w)
	// Requests left going for a watcher that wanted them (see wantedLocked)
	// end with the last one that wants them.
	var orphans []*request
	for _, r := range c.inflight {
		if r.waiters == 0 && !r.finished {
			orphans = append(orphans, r)
		}
	}
	for _, r := range orphans {
		if !c.wantedLocked(r.key) && r.waiters == 0 && !r.finished && !r.abandoned {
			r.abandoned = true
			r.cancel()
			if c.inflight[r.key] == r {
				delete(c.inflight, r.key)
			}
		}
	}
}

func (c *Cache) watcherList() []watcher {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.watcherListLocked()
}

func (c *Cache) watcherListLocked() []watcher {
	ws := make([]watcher, 0, len(c.watchers))
	for w := range c.watchers {
		ws = append(ws, w)
	}
	return ws
}

// notifier returns a function that tells the watchers about key. Callers
// holding their own lock run it after unlocking, because a watcher's
// keyChanged takes that watcher's lock, and the caller may be a watcher.
func (c *Cache) notifierLocked(key string) func() {
	ws := c.watcherListLocked()
	return func() {
		for _, w := range ws {
			w.keyChanged(key)
		}
	}
}

// peek returns the value under key and marks it recently used.
func (c *Cache) peek(key string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*entry)
	if !e.has {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return e.value, true
}

// peekEntry returns value and error under key.
func (c *Cache) peekEntry(key string) (value any, has bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false, nil
	}
	e := el.Value.(*entry)
	c.lru.MoveToFront(el)
	return e.value, e.has, e.err
}

// write stores a locally produced value (a mutation or a list size). It
// returns the notification to run once the caller holds no lock.
func (c *Cache) write(key string, value any) (notify func()) {
	return c.store(key, value, "", time.Time{})
}

// store writes value under key as answered at fetchedAt with etag (a local
// write: no etag, zero time).
func (c *Cache) store(key string, value any, etag string, fetchedAt time.Time) (notify func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	e := c.entryLocked(key)
	e.value, e.has, e.err, e.etag = value, true, nil, etag
	e.seq = c.seq
	e.fetchedAt = fetchedAt
	c.resizeLocked(e, c.sizeOf(key, value, 0))
	c.evictLocked()
	return c.notifierLocked(key)
}

// entryLocked returns key's entry, creating it at the front.
func (c *Cache) entryLocked(key string) *entry {
	if el, ok := c.entries[key]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*entry)
	}
	e := &entry{key: key}
	c.entries[key] = c.lru.PushFront(e)
	return e
}

func (c *Cache) sizeOf(key string, value any, reported int64) int64 {
	switch {
	case reported > 0:
		return reported
	case c.opts.SizeOf != nil:
		return c.opts.SizeOf(key, value)
	default:
		return DefaultEntrySize
	}
}

func (c *Cache) resizeLocked(e *entry, size int64) {
	c.bytes += size - e.size
	e.size = size
}

func (c *Cache) removeLocked(el *list.Element) {
	e := el.Value.(*entry)
	c.lru.Remove(el)
	delete(c.entries, e.key)
	c.bytes -= e.size
}

func (c *Cache) evictLocked() {
	for el := c.lru.Back(); el != nil &&
		((c.opts.MaxEntries > 0 && c.lru.Len() > c.opts.MaxEntries) ||
			(c.opts.MaxBytes > 0 && c.bytes > c.opts.MaxBytes)); {
		prev := el.Prev()
		if c.pinned[el.Value.(*entry).key] == 0 {
			c.removeLocked(el)
		}
		el = prev
	}
}

// pin keeps key from eviction until a matching unpin.
func (c *Cache) pin(key string) {
	c.mu.Lock()
	c.pinned[key]++
	c.mu.Unlock()
}

func (c *Cache) unpin(key string) {
	c.mu.Lock()
	if c.pinned[key]--; c.pinned[key] <= 0 {
		delete(c.pinned, key)
	}
	c.mu.Unlock()
}

// spawn runs f on a new goroutine that the cache counts, so tests can wait
// for every goroutine of the package to end (see quiesce).
func (c *Cache) spawn(f func()) {
	c.mu.Lock()
	c.active++
	c.mu.Unlock()
	go func() {
		defer func() {
			c.mu.Lock()
			c.active--
			c.cond.Broadcast()
			c.mu.Unlock()
		}()
		f()
	}()
}

// quiesce blocks until no goroutine started by the package is running.
func (c *Cache) quiesce() {
	c.waitFor(func() bool { return c.active == 0 })
}

// waiters returns how many callers wait for key's request in flight.
func (c *Cache) waitersLocked(key string) int {
	if r := c.inflight[key]; r != nil {
		return r.waiters
	}
	return 0
}

// waitFor blocks until cond, evaluated under the lock, holds.
func (c *Cache) waitFor(cond func() bool) {
	c.mu.Lock()
	for !cond() {
		c.cond.Wait()
	}
	c.mu.Unlock()
}

// Prime stores value under key as if a fetch had just answered it, with its
// ETag: a page the server rendered into the HTML. Its first use takes it
// without asking, and the deduping interval starts there: the page was
// rendered for this very load, however long the app took to start (a busy
// machine took seconds, and the page read again what it had just been
// sent). After the interval, revalidation sends the ETag and a "not
// modified" answer keeps it.
func Prime[T any](c *Cache, key string, value T, etag string) {
	c.store(key, value, etag, c.clock.Now())()
	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		el.Value.(*entry).primed = true
	}
	c.mu.Unlock()
}
