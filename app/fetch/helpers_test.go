package fetch

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Tests never sleep. A fake fetcher hands every call to the test as a
// value the test answers, or answers at once through a function; tests wait
// for an object's notifications (waitUntil) and for the package's
// goroutines to end (Cache.quiesce). The only timers are failure timeouts.

const testTimeout = 10 * time.Second

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// call is one fetcher call, held until the test answers it.
type call[T any] struct {
	ctx   context.Context
	key   string
	etag  string
	reply chan reply[T]
}

type reply[T any] struct {
	res Result[T]
	err error
}

func (c *call[T]) ok(v T)                  { c.reply <- reply[T]{res: Result[T]{Data: v}} }
func (c *call[T]) okETag(v T, etag string) { c.reply <- reply[T]{res: Result[T]{Data: v, ETag: etag}} }
func (c *call[T]) fail(err error)          { c.reply <- reply[T]{err: err} }
func (c *call[T]) notModified()            { c.reply <- reply[T]{err: ErrNotModified} }

// fake is a Fetcher that records every call.
type fake[T any] struct {
	mu       sync.Mutex
	log      []string // keys, in call order
	etags    []string // the etag each call got
	inflight map[string]int
	dups     int // calls made while the same key was already in flight
	calls    chan *call[T]
	// answer, when set, answers at once instead of handing calls out.
	answer func(key, etag string) (Result[T], error)
}

func newFake[T any]() *fake[T] {
	return &fake[T]{inflight: map[string]int{}, calls: make(chan *call[T], 1000)}
}

func autoFake[T any](answer func(key string) (T, error)) *fake[T] {
	f := newFake[T]()
	f.answer = func(key, _ string) (Result[T], error) {
		v, err := answer(key)
		return Result[T]{Data: v}, err
	}
	return f
}

func (f *fake[T]) fetch(ctx context.Context, key, etag string) (Result[T], error) {
	f.mu.Lock()
	f.log = append(f.log, key)
	f.etags = append(f.etags, etag)
	f.inflight[key]++
	if f.inflight[key] > 1 {
		f.dups++
	}
	answer := f.answer
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inflight[key]--
		f.mu.Unlock()
	}()
	if answer != nil {
		return answer(key, etag)
	}
	c := &call[T]{ctx: ctx, key: key, etag: etag, reply: make(chan reply[T], 1)}
	f.calls <- c
	select {
	case r := <-c.reply:
		return r.res, r.err
	case <-ctx.Done():
		return Result[T]{}, ctx.Err()
	}
}

// next returns the next call, failing the test if none comes.
func (f *fake[T]) next(t *testing.T) *call[T] {
	t.Helper()
	select {
	case c := <-f.calls:
		return c
	case <-time.After(testTimeout):
		t.Fatalf("no fetcher call; calls so far: %q", f.keys())
		return nil
	}
}

// nextKey returns the next call and checks its key.
func (f *fake[T]) nextKey(t *testing.T, key string) *call[T] {
	t.Helper()
	c := f.next(t)
	if c.key != key {
		t.Fatalf("fetcher called with %q, want %q (calls: %q)", c.key, key, f.keys())
	}
	return c
}

func (f *fake[T]) keys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

func (f *fake[T]) clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log, f.etags = nil, nil
}

// wantKeys checks the calls made since the last clear, and clears.
func (f *fake[T]) wantKeys(t *testing.T, want ...string) {
	t.Helper()
	got := f.keys()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fetcher calls = %q, want %q", got, want)
	}
	f.clear()
}

// noneWaiting checks that no call is waiting for an answer.
func (f *fake[T]) noneWaiting(t *testing.T) {
	t.Helper()
	if n := len(f.calls); n > 0 {
		t.Fatalf("%d unexpected fetcher calls waiting; calls: %q", n, f.keys())
	}
}

// env is a cache on a fake clock whose goroutines are checked at the end of
// the test: every object must have been closed and nothing may linger.
type env struct {
	t     *testing.T
	clock *FakeClock
	cache *Cache
}

func newEnv(t *testing.T, opts CacheOptions) *env {
	clock := NewFakeClock(t0)
	opts.Clock = clock
	e := &env{t: t, clock: clock, cache: NewCache(opts)}
	// Registered first, so it runs after the objects' Close (LIFO).
	t.Cleanup(func() { quiesce(t, e.cache) })
	return e
}

// quiesceBut waits until at most n goroutines of the package run.
func quiesceBut(t *testing.T, c *Cache, n int) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		c.waitFor(func() bool { return c.active <= n })
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(testTimeout):
		t.Fatalf("more than %d goroutines still running", n)
	}
}

// quiesce waits until every goroutine the package started has ended.
func quiesce(t *testing.T, c *Cache) {
	t.Helper()
	done := make(chan struct{})
	go func() { c.quiesce(); close(done) }()
	select {
	case <-done:
	case <-time.After(testTimeout):
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines still running after Close:\n%s", buf[:runtime.Stack(buf, true)])
	}
}

// waitWaiters waits until n callers wait for key's request in flight, so a
// test can make one of them leave without the request being abandoned.
func waitWaiters(t *testing.T, c *Cache, key string, n int) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		c.waitFor(func() bool { return c.waitersLocked(key) == n })
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(testTimeout):
		t.Fatalf("%s: never %d waiters", key, n)
	}
}

type subscribable interface{ Subscribe(func()) func() }

// waitUntil waits, on notifications, until cond holds.
func waitUntil(t *testing.T, s subscribable, what string, cond func() bool) {
	t.Helper()
	ch := make(chan struct{}, 1)
	unsub := s.Subscribe(func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	defer unsub()
	deadline := time.NewTimer(testTimeout)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// idle waits until l has no revalidation running and returns its state.
func idle[P any](t *testing.T, l *Infinite[P]) InfiniteState[P] {
	t.Helper()
	waitUntil(t, l, "list idle", func() bool { return !l.Snapshot().IsValidating })
	return l.Snapshot()
}

func idleQ[T any](t *testing.T, q *Query[T]) State[T] {
	t.Helper()
	waitUntil(t, q, "query idle", func() bool { return !q.Snapshot().IsValidating })
	return q.Snapshot()
}

// list opens an Infinite closed at the end of the test.
func newList[P any](e *env, getKey GetKey[P], f *fake[P], opts InfiniteOptions[P]) *Infinite[P] {
	l := NewInfinite(context.Background(), e.cache, getKey, f.fetch, opts)
	e.t.Cleanup(l.Close)
	return l
}

func newQuery[T any](e *env, key string, f *fake[T], opts Options[T]) *Query[T] {
	q := New(context.Background(), e.cache, key, f.fetch, opts)
	e.t.Cleanup(q.Close)
	return q
}

// items is a server with n items numbered from 0, for index-based pages.
func items(n int) func(key string) ([]int, error) {
	return func(key string) ([]int, error) {
		page, limit := param(key, "page"), param(key, "limit")
		var out []int
		for i := page * limit; i < (page+1)*limit && i < n; i++ {
			out = append(out, i)
		}
		if out == nil {
			out = []int{}
		}
		return out, nil
	}
}

// param reads an integer query parameter of a key.
func param(key, name string) int {
	_, q, _ := strings.Cut(key, "?")
	for _, kv := range strings.Split(q, "&") {
		if k, v, _ := strings.Cut(kv, "="); k == name {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return -1
}

// pg builds the index key of page n with limit 2 under /items.
func pg(n int) string { return fmt.Sprintf("/items?page=%d&limit=2", n) }

var errBoom = errors.New("boom")

func equalData[P any](t *testing.T, got []P, want []P) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("data = %v, want %v", got, want)
	}
}
