package fetch

import (
	"context"
	"testing"
	"time"
)

func TestCache(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"bounded by entries, least recently used first", testCacheMaxEntries},
		{"bounded by bytes, sizes from SizeOf", testCacheMaxBytes},
		{"bounded by bytes, sizes reported by the fetcher", testCacheReportedSize},
		{"an open list keeps its pages when the cache evicts them", testCacheEvictionKeepsList},
		{"not modified after eviction restores the cached copy", testCacheNotModifiedAfterEviction},
		{"errors are never reused by the deduping interval", testCacheErrorsNotDeduped},
		{"Get is typed, Set notifies, Delete drops", testCacheGetSetDelete},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

func testCacheMaxEntries(t *testing.T) {
	e := newEnv(t, CacheOptions{MaxEntries: 2})
	Set(e.cache, "a", 1)
	Set(e.cache, "b", 2)
	Get[int](e.cache, "a") // a is now more recent than b
	Set(e.cache, "c", 3)
	if _, ok := Get[int](e.cache, "b"); ok {
		t.Fatal("b should have been evicted")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := Get[int](e.cache, k); !ok {
			t.Fatalf("%s evicted", k)
		}
	}
	if e.cache.Len() != 2 {
		t.Fatalf("len = %d", e.cache.Len())
	}
}

func testCacheMaxBytes(t *testing.T) {
	e := newEnv(t, CacheOptions{MaxBytes: 10, SizeOf: func(_ string, v any) int64 { return int64(len(v.(string))) }})
	Set(e.cache, "a", "aaaa")
	Set(e.cache, "b", "bbbb")
	if e.cache.Bytes() != 8 {
		t.Fatalf("bytes = %d", e.cache.Bytes())
	}
	Set(e.cache, "c", "cccc")
	if _, ok := Get[string](e.cache, "a"); ok || e.cache.Bytes() != 8 {
		t.Fatalf("a kept, bytes = %d", e.cache.Bytes())
	}
	Set(e.cache, "b", "b") // shrinking an entry is accounted
	if e.cache.Bytes() != 5 {
		t.Fatalf("bytes = %d", e.cache.Bytes())
	}
}

func testCacheReportedSize(t *testing.T) {
	e := newEnv(t, CacheOptions{MaxBytes: 150})
	f := newFake[string]()
	f.answer = func(key, _ string) (Result[string], error) { return Result[string]{Data: key, Size: 100}, nil }
	idleQ(t, newQuery(e, "/a", f, Options[string]{}))
	idleQ(t, newQuery(e, "/b", f, Options[string]{}))
	if _, ok := Get[string](e.cache, "/a"); ok || e.cache.Bytes() != 100 {
		t.Fatalf("bytes = %d", e.cache.Bytes())
	}
}

func testCacheEvictionKeepsList(t *testing.T) {
	e := newEnv(t, CacheOptions{MaxEntries: 1})
	f := autoFake(items(10))
	l := newList(e, byIndex, f, InfiniteOptions[ints]{InitialSize: 3})
	s := idle(t, l)
	equalData(t, s.Data, []ints{{0, 1}, {2, 3}, {4, 5}})
	if e.cache.Len() != 1 {
		t.Fatalf("len = %d", e.cache.Len())
	}
}

func testCacheNotModifiedAfterEviction(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[string]()
	q := newQuery(e, "/a", f, Options[string]{})
	f.nextKey(t, "/a").okETag("A", "e1")
	idleQ(t, q)
	q.Revalidate()
	c := f.nextKey(t, "/a")
	e.cache.Delete("/a")
	c.notModified()
	if s := idleQ(t, q); s.Data != "A" || s.Err != nil {
		t.Fatalf("state = %+v", s)
	}
	if v, ok := Get[string](e.cache, "/a"); !ok || v != "A" {
		t.Fatalf("cache = %q %v", v, ok)
	}
}

func testCacheErrorsNotDeduped(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	calls := 0
	fn := func(context.Context, string, string) (any, string, int64, error) { calls++; return nil, "", 0, errBoom }
	ctx := context.Background()
	for range 2 {
		if r := e.cache.fetch(ctx, "/a", fn, DefaultDedupingInterval, nil); r.err != errBoom || !r.started {
			t.Fatalf("result = %+v", r)
		}
	}
	if calls != 2 {
		t.Fatalf("calls = %d", calls)
	}
}

func testCacheGetSetDelete(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	Set(e.cache, "k", 1)
	if _, ok := Get[string](e.cache, "k"); ok {
		t.Fatal("Get with the wrong type succeeded")
	}
	if v, ok := Get[int](e.cache, "k"); !ok || v != 1 {
		t.Fatal("Get failed")
	}
	e.cache.Delete("k")
	if _, ok := Get[int](e.cache, "k"); ok || e.cache.Len() != 0 || e.cache.Bytes() != 0 {
		t.Fatal("Delete failed")
	}
}

// A primed page is the page the server rendered for this load: its first
// use asks nothing, however long the app took to start, and the deduping
// interval starts there.
func TestPrimeIsFreshAtFirstUse(t *testing.T) {
	clock := NewFakeClock(time.Unix(0, 0))
	c := NewCache(CacheOptions{Clock: clock})
	Prime(c, "/a", "primed", `"e1"`)
	calls := 0
	fetcher := Fetcher[string](func(ctx context.Context, key, etag string) (Result[string], error) {
		calls++
		return Result[string]{}, ErrNotModified
	})
	clock.Advance(5 * time.Second) // a slow start
	q := New(context.Background(), c, "/a", fetcher, Options[string]{})
	defer q.Close()
	c.quiesce()
	if s := q.Snapshot(); !s.HasData || s.Data != "primed" || calls != 0 {
		t.Fatalf("first use 5 s after Prime: %+v, %d requests; want the primed value and none", s, calls)
	}
	clock.Advance(time.Second)
	q2 := New(context.Background(), c, "/a", fetcher, Options[string]{})
	defer q2.Close()
	c.quiesce()
	if calls != 0 {
		t.Fatalf("a second use within the interval of the first asked %d times", calls)
	}
	clock.Advance(3 * time.Second)
	q.Revalidate()
	c.quiesce()
	if calls != 1 {
		t.Fatalf("after the interval: %d requests, want one conditional request", calls)
	}
}

// A primed page is used within the deduping interval without a request,
// and revalidated with its ETag after it.
func TestPrime(t *testing.T) {
	clock := NewFakeClock(time.Unix(0, 0))
	c := NewCache(CacheOptions{Clock: clock})
	Prime(c, "/a", "primed", `"e1"`)
	var calls []string
	fetcher := Fetcher[string](func(ctx context.Context, key, etag string) (Result[string], error) {
		calls = append(calls, key+" "+etag)
		return Result[string]{}, ErrNotModified
	})
	q := New(context.Background(), c, "/a", fetcher, Options[string]{})
	defer q.Close()
	c.quiesce()
	if s := q.Snapshot(); !s.HasData || s.Data != "primed" || len(calls) != 0 {
		t.Fatalf("within the deduping interval: %+v, calls %v; want the primed value and no request", s, calls)
	}
	clock.Advance(3 * time.Second)
	q.Revalidate()
	c.quiesce()
	if s := q.Snapshot(); s.Data != "primed" || len(calls) != 1 || calls[0] != `/a "e1"` {
		t.Fatalf("after it: %+v, calls %v; want one conditional request keeping the value", s, calls)
	}
}
