package fetch

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
)

// ErrNotModified is what a Fetcher returns (possibly wrapped) when the
// server confirmed the cached copy, e.g. an HTTP 304 answering
// If-None-Match. The cached value is kept as is and its error cleared, and
// nothing was downloaded — which keeps revalidation, and especially
// InfiniteOptions' first-page revalidation, cheap.
var ErrNotModified = errors.New("fetch: not modified")

// Result is a fetcher's answer.
type Result[T any] struct {
	Data T
	// ETag validates Data; it is handed back to the fetcher on the next
	// revalidation of the same key. Empty when unknown.
	ETag string
	// Size is Data's weight for CacheOptions.MaxBytes, e.g. the body length.
	// Zero lets the cache estimate it.
	Size int64
}

// Fetcher loads the value of key: SWR's fetcher. etag is the ETag of the
// cached value ("" if none); answering (zero, ErrNotModified) keeps that
// value. The fetcher must return soon after ctx ends: it is cancelled when
// nobody waits for the answer any more (closed list, changed key).
//
// A fetcher may be called from several goroutines at once, for different
// keys; never twice at once for the same key on the same Cache.
type Fetcher[T any] func(ctx context.Context, key, etag string) (Result[T], error)

// Func adapts a plain function, without ETags, to a Fetcher.
func Func[T any](f func(ctx context.Context, key string) (T, error)) Fetcher[T] {
	return func(ctx context.Context, key, _ string) (Result[T], error) {
		v, err := f(ctx, key)
		return Result[T]{Data: v}, err
	}
}

// Options configure a Query. The zero value gives SWR's defaults.
type Options[T any] struct {
	Config

	// FallbackData (SWR fallbackData) is shown, with HasData true, while
	// nothing is cached for the key. It does not count as loaded: IsLoading
	// stays true until the fetcher answers.
	FallbackData *T

	// OnSuccess and OnError (SWR onSuccess, onError) are called after a
	// request this Query started succeeds or fails, on the goroutine that
	// ran it, without locks held.
	OnSuccess func(key string, data T)
	OnError   func(key string, err error)

	// Compare (SWR compare) reports whether two values are equal; when a
	// new answer equals the current value, the current one is kept, so
	// nothing re-renders. Default: reflect.DeepEqual. It must be pure: it is
	// called under the cache's lock.
	Compare func(a, b T) bool
}

// State is a Query's snapshot: SWR's return value minus mutate.
type State[T any] struct {
	Key string
	// Data is SWR's data; HasData is false where SWR's data is undefined.
	Data    T
	HasData bool
	// Err is SWR's error: the last fetch's error, kept until one succeeds.
	// Data stays (stale) meanwhile.
	Err error
	// IsValidating (SWR isValidating): a revalidation is under way.
	IsValidating bool
	// IsLoading (SWR isLoading): validating with no data of this key yet
	// (fallback or previous data do not count).
	IsLoading bool
	// Version grows with every change; equal versions mean equal states.
	Version uint64
}

// Query is SWR's useSWR as an object: one keyed value with a shared cache.
//
// It fetches when created, and again on Revalidate, Mutate, key changes,
// focus and reconnect events, the refresh interval and error retries. All
// methods are safe for concurrent use.
type Query[T any] struct {
	core
	fetcher Fetcher[T]
	opts    Options[T]
	equal   func(a, b T) bool

	key         string
	data        T
	has         bool
	placeholder bool // data is fallback or the previous key's, not key's
	err         error
	version     uint64
	snap        atomic.Pointer[State[T]]
}

// New returns a Query for key (SWR: useSWR(key, fetcher, options)) and
// starts revalidating it. An empty key is SWR's null key: nothing is fetched
// until SetKey gives one. The Query closes when ctx ends (as on Close: a
// component's context closes it on unmount).
func New[T any](ctx context.Context, c *Cache, key string, fetcher Fetcher[T], opts Options[T]) *Query[T] {
	q := &Query[T]{fetcher: fetcher, opts: opts, equal: opts.Compare}
	if q.equal == nil {
		q.equal = func(a, b T) bool { return reflect.DeepEqual(a, b) }
	}
	q.init(c, opts.Config, q.batch, q.publishLocked)

	q.mu.Lock()
	q.key = key
	q.loadLocked(false)
	q.publishLocked()
	q.mu.Unlock()

	c.watch(q)

	q.mu.Lock()
	if key != "" {
		q.triggerLocked(flagSoft)
	}
	q.unlockAndNotify()
	q.closeWith(ctx, q.Close)
	return q
}

// Wait blocks until the Query is idle — the revalidation that Revalidate,
// Mutate or SetKey started has finished, and any that followed — and
// returns its error, or ctx's when ctx ends first:
//
//	q.Revalidate()
//	if err := q.Wait(ctx); err != nil { … }
func (q *Query[T]) Wait(ctx context.Context) error {
	if err := q.wait(ctx); err != nil {
		return err
	}
	return q.Snapshot().Err
}

// Snapshot returns the current state. It takes no lock and allocates
// nothing, so an adapter may call it on every render.
func (q *Query[T]) Snapshot() State[T] { return *q.snap.Load() }

// Subscribe registers fn to be called after every change of the state, from
// whichever goroutine made it, with no lock held. Calls may overlap and may
// be spurious; fn should read Snapshot (or schedule a read on the UI
// goroutine) and return quickly. A call already started may still run after
// unsubscribe returns.
func (q *Query[T]) Subscribe(fn func()) (unsubscribe func()) { return q.subscribe(fn) }

// SetKey changes the key (SWR: re-rendering with a new key). The old key's
// revalidation is cancelled and its late answer is never shown. The new key
// shows its cached value at once, else the previous data (KeepPreviousData),
// else FallbackData, else nothing.
func (q *Query[T]) SetKey(key string) {
	q.mu.Lock()
	if q.closed || key == q.key {
		q.mu.Unlock()
		return
	}
	q.resetLocked()
	q.key = key
	q.err = nil
	q.loadLocked(q.cfg.KeepPreviousData)
	q.changedLocked()
	if key != "" {
		q.triggerLocked(flagSoft)
	}
	q.unlockAndNotify()
}

// Revalidate fetches again, ignoring the deduping interval (SWR: mutate()).
func (q *Query[T]) Revalidate() {
	q.mu.Lock()
	if q.key != "" {
		q.triggerLocked(flagForce)
	}
	q.unlockAndNotify()
}

// Mutate replaces the cached value of the current key and shows it at once
// (SWR: mutate(data) when revalidate is true, mutate(data, false)
// otherwise). It wins over any answer already in flight. With revalidate,
// a fetch follows to confirm it.
func (q *Query[T]) Mutate(data T, revalidate bool) {
	q.mu.Lock()
	if q.closed || q.key == "" {
		q.mu.Unlock()
		return
	}
	notify := q.cache.write(q.key, data)
	q.data, q.has, q.placeholder, q.err = data, true, false, nil
	q.changedLocked()
	if revalidate {
		q.triggerLocked(flagForce)
	}
	q.unlockAndNotify()
	notify()
}

// Focus revalidates as on a window focus event (see Config).
func (q *Query[T]) Focus() {
	q.mu.Lock()
	if q.key != "" { // a null key is inert
		q.onFocusLocked()
	}
	q.unlockAndNotify()
}

// Reconnect revalidates as on a network reconnect event (see Config).
func (q *Query[T]) Reconnect() {
	q.mu.Lock()
	if q.key != "" {
		q.onReconnectLocked()
	}
	q.unlockAndNotify()
}

// Close stops the Query (SWR: unmount): its work is cancelled, timers
// stopped, subscribers dropped. The cached value stays for others.
func (q *Query[T]) Close() {
	q.mu.Lock()
	ok := q.closeLocked()
	q.mu.Unlock()
	if ok {
		q.cache.unwatch(q)
	}
}

// loadLocked shows the cached value of q.key, or a placeholder.
func (q *Query[T]) loadLocked(keepPrevious bool) {
	if q.key != "" {
		if v, has, err := q.cache.peekEntry(q.key); has || err != nil {
			q.err = err
			if t, ok := v.(T); ok && has {
				q.data, q.has, q.placeholder = t, true, false
				return
			}
		}
	}
	switch {
	case keepPrevious && q.has:
		q.placeholder = true
	case q.opts.FallbackData != nil:
		q.data, q.has, q.placeholder = *q.opts.FallbackData, true, true
	default:
		var zero T
		q.data, q.has, q.placeholder = zero, false, false
	}
}

func (q *Query[T]) publishLocked() {
	q.version++
	q.snap.Store(&State[T]{
		Key:          q.key,
		Data:         q.data,
		HasData:      q.has,
		Err:          q.err,
		IsValidating: q.validating,
		IsLoading:    q.validating && q.key != "" && (!q.has || q.placeholder),
		Version:      q.version,
	})
}

func (q *Query[T]) batch(ctx context.Context, gen uint64, f flags) error {
	q.mu.Lock()
	key := q.key
	q.mu.Unlock()
	if key == "" {
		return nil
	}
	res := q.cache.fetch(ctx, key, q.fetchAny, q.dedupe(f), q.equalAny)

	q.mu.Lock()
	if q.gen != gen || ctx.Err() != nil {
		q.mu.Unlock()
		return context.Canceled
	}
	q.applyLocked(res.value, res.has, res.err)
	data := q.data
	q.unlockAndNotify()

	if res.started {
		if res.err != nil && q.opts.OnError != nil {
			q.opts.OnError(key, res.err)
		} else if res.err == nil && q.opts.OnSuccess != nil {
			q.opts.OnSuccess(key, data)
		}
	}
	return res.err
}

// applyLocked shows a value and error of q.key's cache entry.
func (q *Query[T]) applyLocked(v any, has bool, err error) {
	// Errors are not compared: error values need not be comparable.
	changed := err != nil || q.err != nil
	q.err = err
	if t, ok := v.(T); ok && has {
		if !q.has || q.placeholder || !q.equal(q.data, t) {
			q.data, q.has, q.placeholder = t, true, false
			changed = true
		}
	}
	if changed {
		q.changedLocked()
	}
}

func (q *Query[T]) wants(key string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return !q.closed && q.validating && q.key == key
}

func (q *Query[T]) keyChanged(key string) {
	q.mu.Lock()
	if !q.closed && key == q.key {
		v, has, err := q.cache.peekEntry(key)
		q.applyLocked(v, has, err)
	}
	q.unlockAndNotify()
}

func (q *Query[T]) event(ev event) {
	q.mu.Lock()
	switch {
	case q.key == "":
		// A null key is inert: no fetch, no IsValidating flash.
	case ev.kind == eventFocus:
		q.onFocusLocked()
	case ev.kind == eventReconnect:
		q.onReconnectLocked()
	case ev.kind == eventRevalidate:
		if ev.match(q.key) {
			q.triggerLocked(flagForce)
		}
	}
	q.unlockAndNotify()
}

func (q *Query[T]) fetchAny(ctx context.Context, key, etag string) (any, string, int64, error) {
	r, err := q.fetcher(ctx, key, etag)
	return r.Data, r.ETag, r.Size, err
}

func (q *Query[T]) equalAny(a, b any) bool {
	x, ok1 := a.(T)
	y, ok2 := b.(T)
	return ok1 && ok2 && q.equal(x, y)
}
