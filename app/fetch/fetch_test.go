package fetch

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestQuery is the table of behavioural cases of the base model.
func TestQuery(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"defaults are SWR's", testQueryDefaults},
		{"loads: data, error, isValidating, isLoading", testQueryLoads},
		{"an empty key is null: nothing is fetched until SetKey", testQueryNullKey},
		{"deduping interval: identical keys share one request", testQueryDedupe},
		{"revalidate on focus, throttled, and off", testQueryFocus},
		{"revalidate on reconnect, and off", testQueryReconnect},
		{"refresh interval", testQueryRefresh},
		{"error retry with exponential backoff", testQueryRetryBackoff},
		{"error retry count", testQueryRetryCount},
		{"no retry on error", testQueryNoRetry},
		{"fallback data", testQueryFallback},
		{"keep previous data while a new key loads", testQueryKeepPrevious},
		{"without keepPreviousData a new key starts empty", testQueryNoKeepPrevious},
		{"success and error callbacks", testQueryCallbacks},
		{"compare keeps the old value when the new one is equal", testQueryCompare},
		{"custom compare", testQueryCustomCompare},
		{"mutate() revalidates, ignoring the deduping interval", testQueryMutateRevalidate},
		{"mutate(data) sets, then revalidates", testQueryMutateData},
		{"mutate(data, false) only sets", testQueryMutateNoRevalidate},
		{"a mutation wins over an answer in flight", testQueryMutationWins},
		{"a late answer for an old key is never shown", testQueryLateAnswer},
		{"cancellation on SetKey and Close", testQueryCancellation},
		{"not modified keeps the cached value, the fetcher gets the ETag", testQueryNotModified},
		{"two queries on one key share data and errors", testQuerySharedKey},
		{"previous/next pagination with the page index in the key", testQueryPagination},
		{"Cache.Set and Cache.Revalidate reach open queries", testQueryGlobalMutate},
		{"a panicking fetcher becomes an error", testQueryPanic},
		{"subscribe and unsubscribe", testQuerySubscribe},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

func echo(key string) (string, error) { return "v:" + key, nil }

func TestFunc(t *testing.T) {
	f := Func(func(_ context.Context, key string) (string, error) { return echo(key) })
	if r, err := f(context.Background(), "/a", "etag"); r.Data != "v:/a" || r.ETag != "" || err != nil {
		t.Fatalf("%+v %v", r, err)
	}
}

func testQueryDefaults(t *testing.T) {
	got := Config{}.normalize()
	want := Config{DedupingInterval: 2 * time.Second, FocusThrottleInterval: 5 * time.Second, ErrorRetryInterval: 5 * time.Second}
	if got != want {
		t.Fatalf("defaults = %+v", got)
	}
	if off := (Config{DedupingInterval: -1, FocusThrottleInterval: -1}).normalize(); off.DedupingInterval != 0 || off.FocusThrottleInterval != 0 {
		t.Fatalf("negative = %+v", off)
	}

	e := newEnv(t, CacheOptions{})
	f := newFake[string]()
	q := newQuery(e, "/a", f, Options[string]{})
	f.nextKey(t, "/a").ok("A")
	idleQ(t, q)
	if e.clock.Pending() != 0 {
		t.Fatal("no refresh by default")
	}
	q.Revalidate()
	f.nextKey(t, "/a").fail(errBoom)
	idleQ(t, q)
	if d, ok := e.clock.Next(); !ok || d != 5*time.Second {
		t.Fatalf("retry by default after 5s, got %v %v", d, ok)
	}
	e.clock.Advance(5 * time.Second)
	f.nextKey(t, "/a").ok("A")
	idleQ(t, q)
}

func testQueryLoads(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[string]()
	q := newQuery(e, "/a", f, Options[string]{})
	if s := q.Snapshot(); s.HasData || !s.IsLoading || !s.IsValidating || s.Key != "/a" {
		t.Fatalf("loading: %+v", s)
	}
	f.nextKey(t, "/a").ok("A")
	s := idleQ(t, q)
	if s.Data != "A" || !s.HasData || s.IsLoading || s.Err != nil {
		t.Fatalf("loaded: %+v", s)
	}
}

func testQueryNullKey(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(echo)
	q := newQuery(e, "", f, Options[string]{})
	q.Revalidate()
	q.Focus()
	if s := idleQ(t, q); s.HasData || s.IsLoading {
		t.Fatalf("null key: %+v", s)
	}
	f.wantKeys(t)
	q.SetKey("/a")
	if s := idleQ(t, q); s.Data != "v:/a" {
		t.Fatalf("after SetKey: %+v", s)
	}
	f.wantKeys(t, "/a")
}

func testQueryDedupe(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[string]()
	a := newQuery(e, "/a", f, Options[string]{})
	b := newQuery(e, "/a", f, Options[string]{})
	f.nextKey(t, "/a").ok("A")
	if idleQ(t, a).Data != "A" || idleQ(t, b).Data != "A" {
		t.Fatal("both queries should get the one answer")
	}
	f.noneWaiting(t)

	// Inside the interval a new query reuses the answer.
	e.clock.Advance(DefaultDedupingInterval - time.Millisecond)
	c := newQuery(e, "/a", f, Options[string]{})
	idleQ(t, c)
	f.noneWaiting(t)

	// After it, it asks again.
	e.clock.Advance(time.Millisecond)
	d := newQuery(e, "/a", f, Options[string]{})
	f.nextKey(t, "/a").ok("A2")
	if idleQ(t, d).Data != "A2" || idleQ(t, a).Data != "A2" {
		t.Fatal("every query shows the new answer")
	}
	f.wantKeys(t, "/a", "/a")
}

func testQueryFocus(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(echo)
	q := newQuery(e, "/a", f, Options[string]{})
	off := newQuery(e, "/b", f, Options[string]{Config: Config{RevalidateOnFocus: Bool(false)}})
	idleQ(t, q)
	idleQ(t, off)
	f.clear()

	e.clock.Advance(DefaultDedupingInterval)
	e.cache.Focus()
	idleQ(t, q)
	idleQ(t, off)
	f.wantKeys(t, "/a")

	e.clock.Advance(DefaultDedupingInterval) // past deduping, inside throttle
	q.Focus()
	idleQ(t, q)
	f.wantKeys(t)

	e.clock.Advance(DefaultFocusThrottleInterval)
	q.Focus()
	idleQ(t, q)
	f.wantKeys(t, "/a")
}

func testQueryReconnect(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(echo)
	q := newQuery(e, "/a", f, Options[string]{})
	off := newQuery(e, "/b", f, Options[string]{Config: Config{RevalidateOnReconnect: Bool(false)}})
	idleQ(t, q)
	idleQ(t, off)
	f.clear()
	e.clock.Advance(DefaultDedupingInterval)
	e.cache.Reconnect()
	idleQ(t, q)
	idleQ(t, off)
	f.wantKeys(t, "/a")
	e.clock.Advance(DefaultDedupingInterval)
	q.Reconnect()
	idleQ(t, q)
	f.wantKeys(t, "/a")
}

func testQueryRefresh(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[string]()
	q := newQuery(e, "/a", f, Options[string]{Config: Config{RefreshInterval: time.Second}})
	f.nextKey(t, "/a").ok("1")
	idleQ(t, q)
	e.clock.Advance(time.Second)
	f.nextKey(t, "/a").ok("2")
	if idleQ(t, q).Data != "2" {
		t.Fatal("refresh not shown")
	}
	e.clock.Advance(time.Second)
	f.nextKey(t, "/a").ok("3")
	idleQ(t, q)
	q.Close()
	if e.clock.Pending() != 0 {
		t.Fatal("Close left a timer")
	}
}

func testQueryRetryBackoff(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[string]()
	q := newQuery(e, "/a", f, Options[string]{Config: Config{ErrorRetryInterval: time.Second}})
	f.nextKey(t, "/a").fail(errBoom)
	for _, d := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		if s := idleQ(t, q); s.Err != errBoom {
			t.Fatalf("state = %+v", s)
		}
		if next, ok := e.clock.Next(); !ok || next != d {
			t.Fatalf("retry in %v, want %v", next, d)
		}
		e.clock.Advance(d - time.Millisecond)
		f.noneWaiting(t)
		e.clock.Advance(time.Millisecond)
		c := f.nextKey(t, "/a")
		if d < 4*time.Second {
			c.fail(errBoom)
		} else {
			c.ok("A")
		}
	}
	if s := idleQ(t, q); s.Err != nil || s.Data != "A" {
		t.Fatalf("recovered: %+v", s)
	}
	if e.clock.Pending() != 0 {
		t.Fatal("retry still scheduled after success")
	}
}

func testQueryRetryCount(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(func(string) (string, error) { return "", errBoom })
	q := newQuery(e, "/a", f, Options[string]{Config: Config{ErrorRetryCount: 2}})
	idleQ(t, q)
	for e.clock.Pending() > 0 {
		d, _ := e.clock.Next()
		e.clock.Advance(d)
		idleQ(t, q)
	}
	f.wantKeys(t, "/a", "/a", "/a") // the request and 2 retries
}

func testQueryNoRetry(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(func(string) (string, error) { return "", errBoom })
	q := newQuery(e, "/a", f, Options[string]{Config: Config{RetryOnError: Bool(false)}})
	if s := idleQ(t, q); s.Err != errBoom {
		t.Fatalf("state = %+v", s)
	}
	if e.clock.Pending() != 0 {
		t.Fatal("retry scheduled")
	}
}

func testQueryFallback(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[string]()
	fb := "fallback"
	q := newQuery(e, "/a", f, Options[string]{FallbackData: &fb})
	if s := q.Snapshot(); s.Data != "fallback" || !s.HasData || !s.IsLoading {
		t.Fatalf("fallback: %+v", s)
	}
	f.nextKey(t, "/a").ok("A")
	if s := idleQ(t, q); s.Data != "A" {
		t.Fatalf("loaded: %+v", s)
	}
}

func testQueryKeepPrevious(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[string]()
	q := newQuery(e, "/a", f, Options[string]{Config: Config{KeepPreviousData: true}})
	f.nextKey(t, "/a").ok("A")
	idleQ(t, q)
	q.SetKey("/b")
	if s := q.Snapshot(); s.Data != "A" || !s.HasData || !s.IsLoading || s.Key != "/b" {
		t.Fatalf("previous data: %+v", s)
	}
	f.nextKey(t, "/b").ok("B")
	if s := idleQ(t, q); s.Data != "B" || s.IsLoading {
		t.Fatalf("new data: %+v", s)
	}
}

func testQueryNoKeepPrevious(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[string]()
	q := newQuery(e, "/a", f, Options[string]{})
	f.nextKey(t, "/a").ok("A")
	idleQ(t, q)
	q.SetKey("/b")
	if s := q.Snapshot(); s.HasData || s.Data != "" || !s.IsLoading {
		t.Fatalf("new key: %+v", s)
	}
	f.nextKey(t, "/b").ok("B")
	idleQ(t, q)
}

func testQueryCallbacks(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	var mu sync.Mutex
	var got []string
	log := func(s string) { mu.Lock(); got = append(got, s); mu.Unlock() }
	f := newFake[string]()
	q := newQuery(e, "/a", f, Options[string]{
		Config:    Config{RetryOnError: Bool(false)},
		OnSuccess: func(key, data string) { log("ok " + key + " " + data) },
		OnError:   func(key string, err error) { log("err " + key + " " + err.Error()) },
	})
	f.nextKey(t, "/a").ok("A")
	idleQ(t, q)
	q.Revalidate()
	f.nextKey(t, "/a").fail(errBoom)
	idleQ(t, q)
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "|") != "ok /a A|err /a boom" {
		t.Fatalf("callbacks = %q", got)
	}
}

type item struct{ ID, Rev int }

func testQueryCompare(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[*item]()
	q := newQuery(e, "/a", f, Options[*item]{})
	first := &item{1, 1}
	f.nextKey(t, "/a").ok(first)
	idleQ(t, q)
	q.Revalidate()
	f.nextKey(t, "/a").ok(&item{1, 1}) // equal, another pointer
	if s := idleQ(t, q); s.Data != first {
		t.Fatal("an equal answer replaced the value")
	}
	if v, _ := Get[*item](e.cache, "/a"); v != first {
		t.Fatal("an equal answer replaced the cached value")
	}
}

func testQueryCustomCompare(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[*item]()
	sameID := func(a, b *item) bool { return a.ID == b.ID }
	q := newQuery(e, "/a", f, Options[*item]{Compare: sameID})
	first := &item{1, 1}
	f.nextKey(t, "/a").ok(first)
	idleQ(t, q)
	q.Revalidate()
	f.nextKey(t, "/a").ok(&item{1, 2})
	if idleQ(t, q).Data != first {
		t.Fatal("compare ignored")
	}
	q.Revalidate()
	f.nextKey(t, "/a").ok(&item{2, 1})
	if idleQ(t, q).Data.ID != 2 {
		t.Fatal("a different value was not shown")
	}
}

func testQueryMutateRevalidate(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(echo)
	q := newQuery(e, "/a", f, Options[string]{})
	idleQ(t, q)
	q.Revalidate() // inside the deduping interval, still asks
	idleQ(t, q)
	f.wantKeys(t, "/a", "/a")
}

func testQueryMutateData(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[string]()
	q := newQuery(e, "/a", f, Options[string]{})
	f.nextKey(t, "/a").ok("A")
	idleQ(t, q)
	q.Mutate("local", true)
	if s := q.Snapshot(); s.Data != "local" {
		t.Fatalf("mutated: %+v", s)
	}
	c := f.nextKey(t, "/a")
	if c.etag != "" {
		t.Fatalf("a local value must not be confirmed by its old ETag, sent %q", c.etag)
	}
	c.ok("server")
	if s := idleQ(t, q); s.Data != "server" {
		t.Fatalf("revalidated: %+v", s)
	}
}

func testQueryMutateNoRevalidate(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(echo)
	q := newQuery(e, "/a", f, Options[string]{})
	idleQ(t, q)
	f.clear()
	q.Mutate("local", false)
	if s := idleQ(t, q); s.Data != "local" {
		t.Fatalf("mutated: %+v", s)
	}
	if v, _ := Get[string](e.cache, "/a"); v != "local" {
		t.Fatalf("cache = %q", v)
	}
	f.wantKeys(t)
}

func testQueryMutationWins(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[string]()
	q := newQuery(e, "/a", f, Options[string]{})
	c := f.nextKey(t, "/a")
	q.Mutate("local", false)
	c.ok("stale")
	if s := idleQ(t, q); s.Data != "local" {
		t.Fatalf("state = %+v", s)
	}
	if v, _ := Get[string](e.cache, "/a"); v != "local" {
		t.Fatalf("cache = %q", v)
	}
}

func testQueryLateAnswer(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[string]()
	q := newQuery(e, "/a", f, Options[string]{Config: Config{KeepPreviousData: true}})
	other := newQuery(e, "/a", f, Options[string]{}) // keeps /a's request alive
	a := f.nextKey(t, "/a")
	waitWaiters(t, e.cache, "/a", 2)
	q.SetKey("/b")
	b := f.nextKey(t, "/b")
	a.ok("A")
	if idleQ(t, other).Data != "A" {
		t.Fatal("the other query lost its answer")
	}
	if s := q.Snapshot(); s.HasData {
		t.Fatalf("old key's answer shown: %+v", s)
	}
	b.ok("B")
	if s := idleQ(t, q); s.Data != "B" {
		t.Fatalf("state = %+v", s)
	}
}

func testQueryCancellation(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[string]()
	q := newQuery(e, "/a", f, Options[string]{})
	a := f.nextKey(t, "/a")
	q.SetKey("/b")
	waitDone(t, a.ctx)
	b := f.nextKey(t, "/b")
	q.Close()
	waitDone(t, b.ctx)
	q.SetKey("/c")
	q.Revalidate()
	f.noneWaiting(t)
}

func testQueryNotModified(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[*item]()
	q := newQuery(e, "/a", f, Options[*item]{})
	first := &item{1, 1}
	f.nextKey(t, "/a").okETag(first, `"v1"`)
	idleQ(t, q)
	q.Revalidate()
	c := f.nextKey(t, "/a")
	if c.etag != `"v1"` {
		t.Fatalf("etag = %q", c.etag)
	}
	c.notModified()
	if s := idleQ(t, q); s.Data != first || s.Err != nil {
		t.Fatalf("state = %+v", s)
	}

	// "Not modified" with nothing cached is an error, not a silent blank.
	e.cache.Delete("/b")
	q2 := newQuery(e, "/b", f, Options[*item]{Config: Config{RetryOnError: Bool(false)}})
	f.nextKey(t, "/b").notModified()
	if s := idleQ(t, q2); !errors.Is(s.Err, errNothingCached) {
		t.Fatalf("state = %+v", s)
	}
}

func testQuerySharedKey(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[string]()
	a := newQuery(e, "/a", f, Options[string]{Config: Config{RetryOnError: Bool(false)}})
	f.nextKey(t, "/a").ok("A")
	idleQ(t, a)
	b := newQuery(e, "/a", f, Options[string]{})
	if s := b.Snapshot(); s.Data != "A" || s.IsLoading {
		t.Fatalf("b = %+v", s)
	}
	a.Revalidate()
	f.nextKey(t, "/a").fail(errBoom)
	idleQ(t, a)
	if s := b.Snapshot(); s.Err != errBoom || s.Data != "A" {
		t.Fatalf("b = %+v", s)
	}
}

func testQueryPagination(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	key := func(page int) string { return "/items?page=" + strconv.Itoa(page) + "&limit=2" }
	page := 0
	q := newQuery(e, key(page), f, Options[ints]{Config: Config{KeepPreviousData: true}})
	idleQ(t, q)
	page++ // next
	q.SetKey(key(page))
	if s := idleQ(t, q); len(s.Data) != 2 || s.Data[0] != 2 {
		t.Fatalf("page 1: %+v", s)
	}
	page-- // previous: cached, instant
	q.SetKey(key(page))
	if s := q.Snapshot(); s.Data[0] != 0 || s.IsLoading {
		t.Fatalf("page 0: %+v", s)
	}
	idleQ(t, q)
	f.wantKeys(t, key(0), key(1))
}

func testQueryGlobalMutate(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(echo)
	q := newQuery(e, "/a", f, Options[string]{})
	idleQ(t, q)
	f.clear()
	Set(e.cache, "/a", "set")
	if s := q.Snapshot(); s.Data != "set" {
		t.Fatalf("after Set: %+v", s)
	}
	e.cache.Revalidate(func(k string) bool { return k == "/a" })
	if s := idleQ(t, q); s.Data != "v:/a" {
		t.Fatalf("after Revalidate: %+v", s)
	}
	f.wantKeys(t, "/a")
}

func testQueryPanic(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(func(string) (string, error) { panic("oops") })
	q := newQuery(e, "/a", f, Options[string]{Config: Config{RetryOnError: Bool(false)}})
	if s := idleQ(t, q); s.Err == nil || !strings.Contains(s.Err.Error(), "oops") {
		t.Fatalf("state = %+v", s)
	}
}

func testQuerySubscribe(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[string]()
	q := newQuery(e, "/a", f, Options[string]{})
	var mu sync.Mutex
	n := 0
	unsub := q.Subscribe(func() { mu.Lock(); n++; mu.Unlock() })
	f.nextKey(t, "/a").ok("A")
	idleQ(t, q)
	mu.Lock()
	got := n
	mu.Unlock()
	if got == 0 {
		t.Fatal("no notification")
	}
	unsub()
	unsub() // idempotent
	v := q.Snapshot().Version
	q.Mutate("B", false)
	if q.Snapshot().Version == v {
		t.Fatal("version did not change")
	}
	mu.Lock()
	defer mu.Unlock()
	if n != got {
		t.Fatal("notified after unsubscribe")
	}
}
