package fetch

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The cache's requests: one in flight per key, shared by every list and
// query that asks for it, stored with its ETag when it answers.

// fetchFunc is a Fetcher with its type erased for the cache.
type fetchFunc func(ctx context.Context, key, etag string) (value any, newETag string, size int64, err error)

// request is one call of a fetcher, shared by everyone waiting for its key.
type request struct {
	key       string
	ctx       context.Context
	cancel    context.CancelFunc
	done      chan struct{}
	seq       uint64
	startedAt time.Time
	etag      string
	// prev is the value the ETag belongs to, kept in case the entry is
	// evicted while the request runs and the answer is "not modified".
	prev     any
	hasPrev  bool
	prevSize int64

	waiters   int  // guarded by Cache.mu
	finished  bool // guarded by Cache.mu
	abandoned bool // everyone stopped waiting; the answer is not stored
	res       fetchResult
}

type fetchResult struct {
	value   any
	has     bool
	err     error
	started bool // this caller's call started the request
}

var errNothingCached = errors.New("fetch: fetcher answered not modified, but nothing is cached")

// anyAge, as fetch's maxAge, reuses any cached value: "fetch if missing".
// Deciding that a page is missing and fetching it are then one atomic step,
// so a page another list fetched meanwhile is not fetched again.
const anyAge = time.Duration(1<<63 - 1)

// fetch returns key's value, asking fn only when needed:
//   - a request for key already in flight is joined, whatever maxAge says;
//   - a value fetched less than maxAge ago is returned as is (SWR's
//     dedupingInterval); errors are never reused, so a retry always asks;
//     with anyAge, any cached value is returned;
//   - otherwise a new request starts.
//
// The request runs on its own context: when ctx ends, this caller stops
// waiting, and the request is cancelled once nobody waits for it. equal
// (optional) decides whether a new answer equals the cached value, in which
// case the cached value is kept.
func (c *Cache) fetch(ctx context.Context, key string, fn fetchFunc, maxAge time.Duration, equal func(a, b any) bool) fetchResult {
	if err := ctx.Err(); err != nil {
		return fetchResult{err: err}
	}
	c.mu.Lock()
	r := c.inflight[key]
	started := false
	if r == nil {
		if el, ok := c.entries[key]; ok && maxAge > 0 {
			e := el.Value.(*entry)
			fresh := e.err == nil && !e.fetchedAt.IsZero() && c.clock.Now().Sub(e.fetchedAt) < maxAge
			if e.primed {
				fresh, e.primed, e.fetchedAt = true, false, c.clock.Now()
			}
			if e.has && (fresh || maxAge == anyAge) {
				c.lru.MoveToFront(el)
				v := e.value
				c.mu.Unlock()
				return fetchResult{value: v, has: true}
			}
		}
		r = c.startLocked(key, fn, equal)
		started = true
	}
	r.waiters++
	c.cond.Broadcast()
	c.mu.Unlock()

	select {
	case <-r.done:
		res := r.res
		res.started = started
		return res
	case <-ctx.Done():
		c.mu.Lock()
		if !r.finished {
			r.waiters--
			c.cond.Broadcast()
			// (Asked with the lock let go: look again after.)
			if r.waiters == 0 && !c.wantedLocked(key) && r.waiters == 0 && !r.finished {
				r.abandoned = true
				r.cancel()
				if c.inflight[key] == r {
					delete(c.inflight, key)
				}
			}
		}
		c.mu.Unlock()
		return fetchResult{err: ctx.Err()}
	}
}

// wantedLocked reports whether an open list or query wants key: one whose
// own fetch has not joined the request yet (it was just opened, or its
// pass has not reached that page). Such a request goes on, unwaited for,
// and fills the cache; cancelling it would have the other fetch it again.
// The watchers are asked without c.mu held, as they lock themselves and
// then the cache.
func (c *Cache) wantedLocked(key string) bool {
	ws := c.watcherListLocked()
	c.mu.Unlock()
	defer c.mu.Lock()
	for _, w := range ws {
		if w.wants(key) {
			return true
		}
	}
	return false
}

func (c *Cache) startLocked(key string, fn fetchFunc, equal func(a, b any) bool) *request {
	c.seq++
	ctx, cancel := context.WithCancel(context.Background())
	r := &request{
		key:       key,
		ctx:       ctx,
		cancel:    cancel,
		done:      make(chan struct{}),
		seq:       c.seq,
		startedAt: c.clock.Now(),
	}
	if el, ok := c.entries[key]; ok {
		e := el.Value.(*entry)
		if e.has {
			r.etag, r.prev, r.hasPrev, r.prevSize = e.etag, e.value, true, e.size
		}
	}
	c.inflight[key] = r
	c.active++ // counted here, not in spawn, so it is under the same lock
	go func() {
		defer func() {
			c.mu.Lock()
			c.active--
			c.cond.Broadcast()
			c.mu.Unlock()
		}()
		c.run(r, fn, equal)
	}()
	return r
}

func (c *Cache) run(r *request, fn fetchFunc, equal func(a, b any) bool) {
	defer r.cancel()
	v, etag, size, err := callFetcher(r.ctx, fn, r.key, r.etag)

	c.mu.Lock()
	r.finished = true
	if c.inflight[r.key] == r {
		delete(c.inflight, r.key)
	}
	var notify func()
	r.res, notify = c.storeLocked(r, v, etag, size, err, equal)
	c.evictLocked()
	c.mu.Unlock()

	// Watchers hear about the new value before the waiters resume, so a
	// waiter never publishes something older than what a watcher shows.
	if notify != nil {
		notify()
	}
	close(r.done)
}

// callFetcher turns a panicking fetcher into an error: in the browser a
// panic on a background goroutine would take the whole app down.
func callFetcher(ctx context.Context, fn fetchFunc, key, etag string) (v any, newETag string, size int64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("fetch: fetcher for %q panicked: %v", key, p)
		}
	}()
	return fn(ctx, key, etag)
}

// storeLocked applies a request's answer to the cache.
func (c *Cache) storeLocked(r *request, v any, etag string, size int64, err error, equal func(a, b any) bool) (fetchResult, func()) {
	if r.abandoned {
		// Nobody wants it any more (closed list, changed key): never let a
		// late answer land.
		return fetchResult{err: context.Canceled}, nil
	}
	var e *entry
	if el, ok := c.entries[r.key]; ok {
		e = el.Value.(*entry)
	}
	if e != nil && e.seq > r.seq {
		// A local mutation landed while the request ran: it wins, as in SWR.
		return fetchResult{value: e.value, has: e.has, err: e.err}, nil
	}
	if errors.Is(err, ErrNotModified) {
		switch {
		case e != nil && e.has:
			c.lru.MoveToFront(c.entries[r.key])
			e.seq, e.fetchedAt = r.seq, r.startedAt
			if etag != "" {
				e.etag = etag
			}
			if e.err == nil {
				return fetchResult{value: e.value, has: true}, nil
			}
			e.err = nil
			return fetchResult{value: e.value, has: true}, c.notifierLocked(r.key)
		case r.hasPrev:
			// Evicted while in flight: the server confirmed the copy we sent
			// the ETag of, so put it back.
			e = c.entryLocked(r.key)
			e.value, e.has, e.err = r.prev, true, nil
			e.etag = r.etag
			if etag != "" {
				e.etag = etag
			}
			e.seq, e.fetchedAt = r.seq, r.startedAt
			c.resizeLocked(e, r.prevSize)
			return fetchResult{value: e.value, has: true}, c.notifierLocked(r.key)
		default:
			err = errNothingCached
		}
	}
	if err != nil {
		e = c.entryLocked(r.key)
		e.err, e.seq = err, r.seq
		return fetchResult{value: e.value, has: e.has, err: err}, c.notifierLocked(r.key)
	}
	e = c.entryLocked(r.key)
	changed := e.err != nil
	if !e.has || equal == nil || !equal(e.value, v) {
		e.value, e.has = v, true
		c.resizeLocked(e, c.sizeOf(r.key, v, size))
		changed = true
	}
	e.err, e.etag, e.seq, e.fetchedAt = nil, etag, r.seq, r.startedAt
	res := fetchResult{value: e.value, has: true}
	if !changed {
		return res, nil
	}
	return res, c.notifierLocked(r.key)
}
