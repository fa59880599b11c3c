package fetch

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

type ints = []int

var byIndex = IndexKeys[int]("/items", 2)

// TestInfinite is the table of behavioural cases of the infinite model, one
// per rule of the spec.
func TestInfinite(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		// Defaults and data.
		{"default initialSize is 1: only page 0 is requested", testDefaultInitialSize},
		{"initialSize loads that many pages, in page order", testInitialSize},
		{"data is unset until the first page loads", testDataUnsetUntilLoaded},
		{"null first key: nothing is fetched", testNullFirstKey},
		{"fallback data shows until the first page arrives", testInfiniteFallback},

		// getKey.
		{"getKey call order and the previous-page argument", testGetKeyOrder},
		{"getKey's return value is passed to the fetcher", testGetKeyPassedToFetcher},
		{"index convention: null stop after an empty page", testIndexNullStop},
		{"cursor convention: limit only, then cursor; null stop without nextCursor", testCursorNullStop},
		{"cursor convention: null stop when data is missing", testCursorMissingData},

		// Size.
		{"size grows and shrinks; shrink keeps page caches, regrow is instant", testGrowShrink},
		{"setSize with a function of the current size", testSetSizeFunc},
		{"load more with revalidateFirstPage true", testLoadMoreFirstPage},
		{"load more with revalidateFirstPage false", testLoadMoreNoFirstPage},
		{"load more with revalidateAll", testLoadMoreRevalidateAll},
		{"persistSize false across a key change and back", testPersistSizeFalse},
		{"persistSize true across a key change and back", testPersistSizeTrue},
		{"a remount sees the same size", testRemountSize},
		{"two lists sharing a first key share size and requests", testSharedFirstKey},
		{"pages are cached under their own keys for the base model", testPagesSharedWithQuery},
		{"total is the sum of the page lengths", testTotal},

		// Errors, mutate, revalidation.
		{"a failing page: earlier pages stay, error set, a retry recovers", testPageFailure},
		{"mutate() revalidates every loaded page", testMutateRevalidate},
		{"mutate(pages) sets the array and revalidates", testMutatePages},
		{"mutate(pages, false) only sets the array", testMutatePagesNoRevalidate},
		{"focus revalidates the first page; revalidateAll every page", testInfiniteFocus},
		{"conditional revalidation: not modified keeps the page", testInfiniteNotModified},
		{"Cache.Revalidate revalidates matching lists", testCacheRevalidateList},
		{"reconnect revalidates the first page", testInfiniteReconnect},
		{"a changed shown page re-chains the pages after it", testRechain},
		{"a getKey with the same first key reloads the changed later keys", testSameFirstKey},
		{"an equivalent getKey on every render does nothing", testEquivalentGetKey},

		// Beyond SWR.
		{"dedupe under rapid setSize", testRapidSetSize},
		{"dedupe under concurrent setSize", testConcurrentSetSize},
		{"pages appear as they arrive by default", testProgressive},
		{"AllAtOnce shows pages only when the whole batch is in", testAllAtOnce},
		{"hasMore and isLoadingMore", testHasMore},
		{"keepPreviousData across a key change", testInfiniteKeepPrevious},
		{"a late answer after a key change is never shown", testLateAnswer},
		{"cancellation on close and on key change", testCancellation},
		{"refresh interval revalidates the list", testInfiniteRefresh},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

func testDefaultInitialSize(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	l := newList(e, byIndex, f, InfiniteOptions[ints]{})
	s := idle(t, l)
	f.wantKeys(t, pg(0))
	equalData(t, s.Data, []ints{{0, 1}})
	if s.Size != 1 || s.Err != nil || s.IsLoading || !s.HasMore {
		t.Fatalf("state = %+v", s)
	}
}

func testInitialSize(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	l := newList(e, byIndex, f, InfiniteOptions[ints]{InitialSize: 3})
	s := idle(t, l)
	f.wantKeys(t, pg(0), pg(1), pg(2))
	equalData(t, s.Data, []ints{{0, 1}, {2, 3}, {4, 5}})
	if s.Size != 3 {
		t.Fatalf("size = %d", s.Size)
	}
}

func testDataUnsetUntilLoaded(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[ints]()
	l := newList(e, byIndex, f, InfiniteOptions[ints]{})
	s := l.Snapshot()
	if s.Data != nil || !s.IsLoading || !s.IsValidating || !s.IsLoadingMore || s.Key != pg(0) {
		t.Fatalf("before load: %+v", s)
	}
	f.nextKey(t, pg(0)).ok(ints{0, 1})
	s = idle(t, l)
	equalData(t, s.Data, []ints{{0, 1}})
	if s.IsLoading || s.IsLoadingMore {
		t.Fatalf("after load: %+v", s)
	}
}

func testNullFirstKey(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	null := func(int, *ints) (string, bool) { return "", false }
	l := newList(e, null, f, InfiniteOptions[ints]{})
	l.SetSize(3)
	l.Revalidate()
	s := idle(t, l)
	f.wantKeys(t)
	if s.Data != nil || s.IsLoading || s.HasMore || s.Size != 1 {
		t.Fatalf("state = %+v", s)
	}
}

func testInfiniteFallback(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[ints]()
	l := newList(e, byIndex, f, InfiniteOptions[ints]{FallbackData: []ints{{7}}})
	s := l.Snapshot()
	equalData(t, s.Data, []ints{{7}})
	if !s.IsLoading {
		t.Fatal("fallback data must not count as loaded")
	}
	f.nextKey(t, pg(0)).ok(ints{0, 1})
	equalData(t, idle(t, l).Data, []ints{{0, 1}})
}

func testGetKeyOrder(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	type rec struct {
		i    int
		prev ints
		nil  bool
	}
	var mu sync.Mutex
	var calls []rec
	getKey := func(i int, prev *ints) (string, bool) {
		r := rec{i: i, nil: prev == nil}
		if prev != nil {
			r.prev = slices.Clone(*prev)
		}
		mu.Lock()
		calls = append(calls, r)
		mu.Unlock()
		return byIndex(i, prev)
	}
	l := newList(e, getKey, f, InfiniteOptions[ints]{InitialSize: 3})
	idle(t, l)
	mu.Lock()
	defer mu.Unlock()
	firstSeen := map[int]int{}
	for n, c := range calls {
		if c.i == 0 != c.nil {
			t.Fatalf("call %d: getKey(%d, nil=%v): previous page must be nil exactly for page 0", n, c.i, c.nil)
		}
		if c.i > 0 {
			want := ints{2 * (c.i - 1), 2*(c.i-1) + 1}
			if !slices.Equal(c.prev, want) {
				t.Fatalf("getKey(%d, %v): previous page should be %v", c.i, c.prev, want)
			}
		}
		if c.i > 3 {
			t.Fatalf("getKey asked for page %d of a 3-page list", c.i)
		}
		if _, ok := firstSeen[c.i]; !ok {
			firstSeen[c.i] = n
		}
	}
	for i := 1; i <= 3; i++ {
		if firstSeen[i] < firstSeen[i-1] {
			t.Fatalf("page %d asked before page %d: %+v", i, i-1, calls)
		}
	}
	f.wantKeys(t, pg(0), pg(1), pg(2))
}

func testGetKeyPassedToFetcher(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(func(key string) (string, error) { return "data of " + key, nil })
	getKey := func(i int, prev *string) (string, bool) { return fmt.Sprintf("k%d", i), true }
	l := newList(e, getKey, f, InfiniteOptions[string]{InitialSize: 2})
	s := idle(t, l)
	f.wantKeys(t, "k0", "k1")
	equalData(t, s.Data, []string{"data of k0", "data of k1"})
}

func testIndexNullStop(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(4)) // pages {0,1} {2,3} {}
	maxAsked := 0
	var mu sync.Mutex
	getKey := func(i int, prev *ints) (string, bool) {
		mu.Lock()
		maxAsked = max(maxAsked, i)
		mu.Unlock()
		return byIndex(i, prev)
	}
	l := newList(e, getKey, f, InfiniteOptions[ints]{InitialSize: 6})
	s := idle(t, l)
	f.wantKeys(t, pg(0), pg(1), pg(2))
	equalData(t, s.Data, []ints{{0, 1}, {2, 3}, {}})
	if s.HasMore || s.IsLoadingMore || s.Size != 6 {
		t.Fatalf("state = %+v", s)
	}
	mu.Lock()
	defer mu.Unlock()
	if maxAsked != 3 {
		t.Fatalf("getKey asked up to page %d; must stop at the null page 3", maxAsked)
	}
}

// cursorServer serves pages of a cursor endpoint from a map cursor → page.
func cursorServer(pages map[string]CursorPage[int]) func(string) (CursorPage[int], error) {
	return func(key string) (CursorPage[int], error) {
		u, err := url.Parse(key)
		if err != nil {
			return CursorPage[int]{}, err
		}
		return pages[u.Query().Get("cursor")], nil
	}
}

func testCursorNullStop(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(cursorServer(map[string]CursorPage[int]{
		"":   {Data: ints{1, 2}, NextCursor: "c2"},
		"c2": {Data: ints{3}},
	}))
	getKey := CursorKeys[int]("/t", url.Values{"q": {"x"}}, 2)
	l := newList(e, getKey, f, InfiniteOptions[CursorPage[int]]{InitialSize: 5})
	s := idle(t, l)
	f.wantKeys(t, "/t?limit=2&q=x", "/t?cursor=c2&limit=2&q=x")
	if len(s.Data) != 2 || s.HasMore || !slices.Equal(CursorItems(s.Data), ints{1, 2, 3}) {
		t.Fatalf("state = %+v", s)
	}
}

func testCursorMissingData(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(cursorServer(map[string]CursorPage[int]{
		"":   {Data: ints{1}, NextCursor: "c2"},
		"c2": {NextCursor: "c3"}, // "data" missing
		"c3": {Data: ints{9}},
	}))
	l := newList(e, CursorKeys[int]("/t", nil, 1), f, InfiniteOptions[CursorPage[int]]{InitialSize: 5})
	s := idle(t, l)
	f.wantKeys(t, "/t?limit=1", "/t?cursor=c2&limit=1")
	if len(s.Data) != 2 || s.HasMore {
		t.Fatalf("state = %+v", s)
	}
}

func testGrowShrink(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	l := newList(e, byIndex, f, InfiniteOptions[ints]{InitialSize: 3})
	idle(t, l)
	f.clear()

	l.SetSize(1)
	if s := l.Snapshot(); s.Size != 1 || len(s.Data) != 1 {
		t.Fatalf("after shrink: %+v", s)
	}
	idle(t, l)
	f.wantKeys(t, pg(0)) // revalidateFirstPage only
	if _, ok := Get[ints](e.cache, pg(2)); !ok {
		t.Fatal("shrinking dropped the page cache")
	}

	l.SetSize(3)
	// Instant: the cached pages show before anything is fetched.
	if s := l.Snapshot(); s.Size != 3 {
		t.Fatalf("after regrow: %+v", s)
	} else {
		equalData(t, s.Data, []ints{{0, 1}, {2, 3}, {4, 5}})
	}
	idle(t, l)
	f.wantKeys(t, pg(0))
}

func testSetSizeFunc(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	l := newList(e, byIndex, f, InfiniteOptions[ints]{RevalidateFirstPage: Bool(false)})
	idle(t, l)
	l.SetSizeFunc(func(n int) int { return n + 2 })
	s := idle(t, l)
	if s.Size != 3 || len(s.Data) != 3 {
		t.Fatalf("state = %+v", s)
	}
	f.wantKeys(t, pg(0), pg(1), pg(2))
}

func loadMore(t *testing.T, opts InfiniteOptions[ints], want ...string) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	l := newList(e, byIndex, f, opts)
	idle(t, l)
	l.SetSizeFunc(func(n int) int { return n + 1 })
	s := idle(t, l)
	if len(s.Data) != 2 {
		t.Fatalf("state = %+v", s)
	}
	f.wantKeys(t, want...)
}

func testLoadMoreFirstPage(t *testing.T) {
	loadMore(t, InfiniteOptions[ints]{}, pg(0), pg(0), pg(1))
}

func testLoadMoreNoFirstPage(t *testing.T) {
	loadMore(t, InfiniteOptions[ints]{RevalidateFirstPage: Bool(false)}, pg(0), pg(1))
}

func testLoadMoreRevalidateAll(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	l := newList(e, byIndex, f, InfiniteOptions[ints]{InitialSize: 2, RevalidateAll: true})
	idle(t, l)
	f.wantKeys(t, pg(0), pg(1))
	l.SetSize(3)
	idle(t, l)
	f.wantKeys(t, pg(0), pg(1), pg(2))
}

func searchKeys(q string) GetKey[ints] { return IndexKeys[int]("/items?q="+q, 2) }

func sq(q string, n int) string { return fmt.Sprintf("/items?q=%s&page=%d&limit=2", q, n) }

func testPersistSizeFalse(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	l := newList(e, searchKeys("a"), f, InfiniteOptions[ints]{RevalidateFirstPage: Bool(false)})
	idle(t, l)
	l.SetSize(3)
	idle(t, l)
	f.clear()

	l.SetGetKey(searchKeys("b"))
	if s := l.Snapshot(); s.Size != 1 || s.Key != sq("b", 0) {
		t.Fatalf("after key change: %+v", s)
	}
	if s := idle(t, l); len(s.Data) != 1 {
		t.Fatalf("b: %+v", s)
	}
	f.wantKeys(t, sq("b", 0))

	// Back to "a": its size lives in the cache under its first key.
	l.SetGetKey(searchKeys("a"))
	s := l.Snapshot()
	if s.Size != 3 || len(s.Data) != 3 {
		t.Fatalf("back to a: %+v", s)
	}
	idle(t, l)
	f.wantKeys(t)
}

func testPersistSizeTrue(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	l := newList(e, searchKeys("a"), f, InfiniteOptions[ints]{PersistSize: true, RevalidateFirstPage: Bool(false)})
	idle(t, l)
	l.SetSize(3)
	idle(t, l)
	f.clear()

	l.SetGetKey(searchKeys("b"))
	if s := l.Snapshot(); s.Size != 3 {
		t.Fatalf("after key change: %+v", s)
	}
	s := idle(t, l)
	f.wantKeys(t, sq("b", 0), sq("b", 1), sq("b", 2))
	if len(s.Data) != 3 {
		t.Fatalf("state = %+v", s)
	}
	if n, _ := Get[int](e.cache, SizeKey(sq("b", 0))); n != 3 {
		t.Fatalf("cached size of b = %d", n)
	}

	l.SetGetKey(searchKeys("a"))
	if s := l.Snapshot(); s.Size != 3 || len(s.Data) != 3 {
		t.Fatalf("back to a: %+v", s)
	}
	idle(t, l)
	f.wantKeys(t)
}

func testRemountSize(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	l := newList(e, byIndex, f, InfiniteOptions[ints]{})
	idle(t, l)
	l.SetSize(3)
	idle(t, l)
	l.Close()
	f.clear()

	l2 := newList(e, byIndex, f, InfiniteOptions[ints]{})
	s := l2.Snapshot()
	if s.Size != 3 || len(s.Data) != 3 || s.IsLoading {
		t.Fatalf("remount: %+v", s)
	}
	idle(t, l2)
	f.wantKeys(t) // page 0 was fetched less than the deduping interval ago
}

func testSharedFirstKey(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	a := newList(e, byIndex, f, InfiniteOptions[ints]{})
	b := newList(e, byIndex, f, InfiniteOptions[ints]{})
	idle(t, a)
	idle(t, b)
	f.wantKeys(t, pg(0))

	a.SetSize(3)
	if s := b.Snapshot(); s.Size != 3 {
		t.Fatalf("b did not follow a's size: %+v", s)
	}
	sa, sb := idle(t, a), idle(t, b)
	equalData(t, sb.Data, sa.Data)
	if len(sb.Data) != 3 {
		t.Fatalf("b = %+v", sb)
	}
	got := f.keys()
	slices.Sort(got)
	if want := []string{pg(0), pg(1), pg(2)}; !slices.Equal(got, want) {
		t.Fatalf("calls = %q, want each of %q once", got, want)
	}
	if f.dups != 0 {
		t.Fatalf("%d duplicate requests in flight", f.dups)
	}
}

func testPagesSharedWithQuery(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	l := newList(e, byIndex, f, InfiniteOptions[ints]{InitialSize: 2})
	idle(t, l)
	f.clear()
	q := newQuery(e, pg(1), f, Options[ints]{})
	if s := q.Snapshot(); !s.HasData || !slices.Equal(s.Data, ints{2, 3}) || s.IsLoading {
		t.Fatalf("query = %+v", s)
	}
	idleQ(t, q)
	f.wantKeys(t)
}

func testTotal(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(5))
	l := newList(e, byIndex, f, InfiniteOptions[ints]{})
	for s := idle(t, l); s.HasMore; s = idle(t, l) {
		l.SetSize(s.Size + 1)
	}
	s := l.Snapshot()
	if Total(s.Data) != 5 || !slices.Equal(Flatten(s.Data), ints{0, 1, 2, 3, 4}) {
		t.Fatalf("total %d of %v", Total(s.Data), s.Data)
	}
}

func testPageFailure(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	var mu sync.Mutex
	failing := true
	server := items(10)
	f := autoFake(func(key string) (ints, error) {
		mu.Lock()
		defer mu.Unlock()
		if key == pg(2) && failing {
			failing = false
			return nil, errBoom
		}
		return server(key)
	})
	var errs []string
	l := newList(e, byIndex, f, InfiniteOptions[ints]{
		InitialSize: 3,
		OnError:     func(key string, err error) { errs = append(errs, key+": "+err.Error()) },
	})
	s := idle(t, l)
	if s.Err != errBoom || len(s.Data) != 2 || !s.HasMore {
		t.Fatalf("after failure: %+v", s)
	}
	if !slices.Equal(errs, []string{pg(2) + ": boom"}) {
		t.Fatalf("OnError calls = %q", errs)
	}
	if d, ok := e.clock.Next(); !ok || d != DefaultErrorRetryInterval {
		t.Fatalf("retry scheduled in %v (%v)", d, ok)
	}
	f.clear()
	e.clock.Advance(DefaultErrorRetryInterval)
	s = idle(t, l)
	if s.Err != nil || len(s.Data) != 3 {
		t.Fatalf("after retry: %+v", s)
	}
	f.wantKeys(t, pg(0), pg(2))
}

func testMutateRevalidate(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	l := newList(e, byIndex, f, InfiniteOptions[ints]{InitialSize: 3})
	idle(t, l)
	f.clear()
	l.Revalidate()
	idle(t, l)
	f.wantKeys(t, pg(0), pg(1), pg(2))
}

func testMutatePages(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[ints]()
	l := newList(e, byIndex, f, InfiniteOptions[ints]{InitialSize: 2})
	f.nextKey(t, pg(0)).ok(ints{0, 1})
	f.nextKey(t, pg(1)).ok(ints{2, 3})
	idle(t, l)

	l.Mutate([]ints{{9, 9}, {8}}, true)
	equalData(t, l.Snapshot().Data, []ints{{9, 9}, {8}})
	if v, _ := Get[ints](e.cache, pg(1)); !slices.Equal(v, ints{8}) {
		t.Fatalf("page cache = %v", v)
	}
	f.nextKey(t, pg(0)).ok(ints{0, 1})
	f.nextKey(t, pg(1)).ok(ints{2, 3})
	equalData(t, idle(t, l).Data, []ints{{0, 1}, {2, 3}})
}

func testMutatePagesNoRevalidate(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	l := newList(e, byIndex, f, InfiniteOptions[ints]{InitialSize: 2})
	idle(t, l)
	f.clear()
	l.Mutate([]ints{{9, 9}, {8}}, false)
	s := idle(t, l)
	equalData(t, s.Data, []ints{{9, 9}, {8}})
	f.wantKeys(t)
	if v, _ := Get[ints](e.cache, pg(0)); !slices.Equal(v, ints{9, 9}) {
		t.Fatalf("page cache = %v", v)
	}
}

func testInfiniteFocus(t *testing.T) {
	for _, all := range []bool{false, true} {
		e := newEnv(t, CacheOptions{})
		f := autoFake(items(10))
		l := newList(e, byIndex, f, InfiniteOptions[ints]{InitialSize: 2, RevalidateAll: all})
		idle(t, l)
		f.clear()

		l.Focus() // inside the deduping interval: answered from the cache
		idle(t, l)
		f.wantKeys(t)

		e.clock.Advance(DefaultFocusThrottleInterval)
		e.cache.Focus()
		idle(t, l)
		if all {
			f.wantKeys(t, pg(0), pg(1))
		} else {
			f.wantKeys(t, pg(0))
		}
		l.Focus() // throttled
		idle(t, l)
		f.wantKeys(t)
	}
}

func testInfiniteNotModified(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	server := items(10)
	f := newFake[ints]()
	f.answer = func(key, etag string) (Result[ints], error) {
		if etag == "v1" {
			return Result[ints]{}, ErrNotModified
		}
		v, err := server(key)
		return Result[ints]{Data: v, ETag: "v1"}, err
	}
	l := newList(e, byIndex, f, InfiniteOptions[ints]{})
	first := idle(t, l).Data[0]
	l.SetSize(2)
	s := idle(t, l)
	if !slices.Equal(f.etags, []string{"", "v1", ""}) {
		t.Fatalf("etags sent = %q", f.etags)
	}
	f.wantKeys(t, pg(0), pg(0), pg(1))
	if &s.Data[0][0] != &first[0] {
		t.Fatal("a not-modified page was replaced")
	}
}

func testCacheRevalidateList(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	l := newList(e, byIndex, f, InfiniteOptions[ints]{InitialSize: 2})
	idle(t, l)
	f.clear()
	e.cache.Revalidate(func(key string) bool { return key == pg(1) })
	idle(t, l)
	f.wantKeys(t, pg(0), pg(1))
	e.cache.Revalidate(func(key string) bool { return key == "/other" })
	idle(t, l)
	f.wantKeys(t)
}

func testRapidSetSize(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[ints]()
	l := newList(e, byIndex, f, InfiniteOptions[ints]{})
	f.nextKey(t, pg(0)).ok(ints{0, 1})
	idle(t, l)
	f.clear()

	l.SetSize(2)
	l.SetSize(3)
	l.SetSizeFunc(func(n int) int { return n + 1 })
	l.SetSize(2)
	l.SetSize(5)
	for i := 0; i < 5; i++ {
		f.nextKey(t, pg(i)).ok(ints{2 * i, 2*i + 1})
	}
	s := idle(t, l)
	f.noneWaiting(t)
	f.wantKeys(t, pg(0), pg(1), pg(2), pg(3), pg(4))
	if len(s.Data) != 5 || f.dups != 0 {
		t.Fatalf("state = %+v, %d duplicates", s, f.dups)
	}
}

func testConcurrentSetSize(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(1000))
	l := newList(e, byIndex, f, InfiniteOptions[ints]{})
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.SetSizeFunc(func(n int) int { return n + 1 })
		}()
	}
	wg.Wait()
	s := idle(t, l)
	if s.Size != 21 || len(s.Data) != 21 {
		t.Fatalf("size %d, %d pages", s.Size, len(s.Data))
	}
	count := map[string]int{}
	for _, k := range f.keys() {
		count[k]++
	}
	for k, n := range count {
		if k != pg(0) && n != 1 {
			t.Fatalf("%s fetched %d times", k, n)
		}
	}
	if f.dups != 0 {
		t.Fatalf("%d duplicate requests in flight", f.dups)
	}
}

func testProgressive(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[ints]()
	l := newList(e, byIndex, f, InfiniteOptions[ints]{InitialSize: 3})
	for i := 0; i < 3; i++ {
		f.nextKey(t, pg(i)).ok(ints{i})
		waitUntil(t, l, "page to appear", func() bool { return len(l.Snapshot().Data) == i+1 })
		if s := l.Snapshot(); i < 2 && !s.IsLoadingMore {
			t.Fatalf("page %d: %+v", i, s)
		}
	}
	equalData(t, idle(t, l).Data, []ints{{0}, {1}, {2}})
}

func testAllAtOnce(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[ints]()
	l := newList(e, byIndex, f, InfiniteOptions[ints]{InitialSize: 3, AllAtOnce: true})
	f.nextKey(t, pg(0)).ok(ints{0})
	f.nextKey(t, pg(1)).ok(ints{1})
	c := f.nextKey(t, pg(2)) // pages 0 and 1 are in
	if s := l.Snapshot(); s.Data != nil {
		t.Fatalf("pages shown before the batch ended: %+v", s)
	}
	c.ok(ints{2})
	equalData(t, idle(t, l).Data, []ints{{0}, {1}, {2}})
}

func testHasMore(t *testing.T) {
	// 5 items: pages {0,1} {2,3} {4} {}.
	e := newEnv(t, CacheOptions{})
	f := newFake[ints]()
	server := items(5)
	answer := func(c *call[ints]) {
		v, _ := server(c.key)
		c.ok(v)
	}
	l := newList(e, byIndex, f, InfiniteOptions[ints]{RevalidateFirstPage: Bool(false)})
	if s := l.Snapshot(); !s.HasMore || !s.IsLoadingMore {
		t.Fatalf("initially: %+v", s)
	}
	answer(f.nextKey(t, pg(0)))
	if s := idle(t, l); !s.HasMore || s.IsLoadingMore {
		t.Fatalf("one page: %+v", s)
	}
	l.SetSize(2)
	if s := l.Snapshot(); !s.IsLoadingMore {
		t.Fatalf("loading more: %+v", s)
	}
	answer(f.nextKey(t, pg(1)))
	idle(t, l)
	l.SetSize(3)
	answer(f.nextKey(t, pg(2)))
	if s := idle(t, l); !s.HasMore {
		t.Fatalf("a short page ends nothing by default (the index rule): %+v", s)
	}
	l.SetSize(4)
	answer(f.nextKey(t, pg(3)))
	if s := idle(t, l); s.HasMore || s.IsLoadingMore {
		t.Fatalf("after the empty page: %+v", s)
	}

	// With IndexHasMore, the short page ends the list.
	l2 := newList(e, byIndex, autoFake(items(5)), InfiniteOptions[ints]{InitialSize: 3, HasMore: IndexHasMore[int](2)})
	if s := idle(t, l2); s.HasMore {
		t.Fatalf("IndexHasMore: %+v", s)
	}
}

func testInfiniteKeepPrevious(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[ints]()
	l := newList(e, searchKeys("a"), f, InfiniteOptions[ints]{Config: Config{KeepPreviousData: true}})
	f.nextKey(t, sq("a", 0)).ok(ints{1})
	idle(t, l)
	l.SetGetKey(searchKeys("b"))
	if s := l.Snapshot(); !s.IsLoading || len(s.Data) != 1 || s.Data[0][0] != 1 {
		t.Fatalf("previous data: %+v", s)
	}
	f.nextKey(t, sq("b", 0)).ok(ints{2})
	equalData(t, idle(t, l).Data, []ints{{2}})
}

func testLateAnswer(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[ints]()
	l := newList(e, searchKeys("a"), f, InfiniteOptions[ints]{})
	seen := record(l)

	// Nobody else wants the old key: its request is abandoned, and its
	// answer, arriving after the new key's, is dropped.
	old := f.nextKey(t, sq("a", 0))
	l.SetGetKey(searchKeys("b"))
	waitDone(t, old.ctx) // abandoned: the fetcher sees the cancellation
	f.nextKey(t, sq("b", 0)).ok(ints{2})
	idle(t, l)
	old.ok(ints{1}) // a fetcher that ignores its context answers anyway
	quiesceBut(t, e.cache, 0)
	equalData(t, l.Snapshot().Data, []ints{{2}})
	if _, ok := Get[ints](e.cache, sq("a", 0)); ok {
		t.Fatal("the abandoned answer was cached")
	}

	// Another list still shows the old key: the answer lands in the cache
	// and that list, but never in l, even before l's own answer.
	x := newList(e, searchKeys("c"), f, InfiniteOptions[ints]{})
	l.SetGetKey(searchKeys("c"))
	shared := f.nextKey(t, sq("c", 0))
	waitWaiters(t, e.cache, sq("c", 0), 2)
	l.SetGetKey(searchKeys("d"))
	shared.ok(ints{3})
	equalData(t, idle(t, x).Data, []ints{{3}})
	if s := l.Snapshot(); s.Data != nil {
		t.Fatalf("old answer shown: %+v", s)
	}
	f.nextKey(t, sq("d", 0)).ok(ints{4})
	equalData(t, idle(t, l).Data, []ints{{4}})

	for _, d := range seen() {
		for _, p := range d {
			if slices.Equal(p, ints{1}) || slices.Equal(p, ints{3}) {
				t.Fatalf("a late answer was shown: %v", d)
			}
		}
	}
}

// record collects the data of every state l notifies about.
func record[P any](l *Infinite[P]) func() [][]P {
	var mu sync.Mutex
	var seen [][]P
	l.Subscribe(func() {
		d := l.Snapshot().Data
		mu.Lock()
		seen = append(seen, d)
		mu.Unlock()
	})
	return func() [][]P {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

func testCancellation(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[ints]()

	// Close cancels the request.
	l := newList(e, byIndex, f, InfiniteOptions[ints]{})
	c := f.nextKey(t, pg(0))
	l.Close()
	waitDone(t, c.ctx)

	// A key change cancels the old key's request.
	l = newList(e, searchKeys("a"), f, InfiniteOptions[ints]{})
	c = f.nextKey(t, sq("a", 0))
	l.SetGetKey(searchKeys("b"))
	waitDone(t, c.ctx)
	f.nextKey(t, sq("b", 0)).ok(ints{1})
	idle(t, l)

	// A request shared with another list survives one of them closing.
	a := newList(e, searchKeys("s"), f, InfiniteOptions[ints]{})
	b := newList(e, searchKeys("s"), f, InfiniteOptions[ints]{})
	c = f.nextKey(t, sq("s", 0))
	waitWaiters(t, e.cache, sq("s", 0), 2)
	a.Close()
	if c.ctx.Err() != nil {
		t.Fatal("a shared request was cancelled")
	}
	c.ok(ints{5})
	equalData(t, idle(t, b).Data, []ints{{5}})
	f.noneWaiting(t)
}

func waitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(testTimeout):
		t.Fatal("request not cancelled")
	}
}

func testInfiniteRefresh(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	l := newList(e, byIndex, f, InfiniteOptions[ints]{Config: Config{RefreshInterval: time.Minute}, InitialSize: 2})
	idle(t, l)
	f.clear()
	e.clock.Advance(time.Minute)
	idle(t, l)
	f.wantKeys(t, pg(0))
	e.clock.Advance(time.Minute)
	idle(t, l)
	f.wantKeys(t, pg(0))
}

func testInfiniteReconnect(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	l := newList(e, byIndex, f, InfiniteOptions[ints]{InitialSize: 2})
	idle(t, l)
	f.clear()
	e.clock.Advance(DefaultDedupingInterval)
	l.Reconnect()
	idle(t, l)
	f.wantKeys(t, pg(0))
}

func testRechain(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	type P = CursorPage[int]
	f := autoFake(cursorServer(map[string]P{
		"":   {Data: ints{1}, NextCursor: "c2"},
		"c2": {Data: ints{2}, NextCursor: "c3"},
		"c3": {Data: ints{3}},
		"n2": {Data: ints{20}},
	}))
	l := newList(e, CursorKeys[int]("/t", nil, 0), f, InfiniteOptions[P]{InitialSize: 3, RevalidateFirstPage: Bool(false)})
	idle(t, l)
	f.clear()
	// Someone else learns that page 0 now continues at n2.
	Set(e.cache, "/t", P{Data: ints{1}, NextCursor: "n2"})
	s := idle(t, l)
	if got := CursorItems(s.Data); !slices.Equal(got, ints{1, 20}) || s.HasMore {
		t.Fatalf("items = %v, state %+v", got, s)
	}
	f.wantKeys(t, "/t?cursor=n2")
}

func testSameFirstKey(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(func(key string) (string, error) { return key, nil })
	keys := func(v string) GetKey[string] {
		return func(i int, _ *string) (string, bool) {
			if i == 0 {
				return "/x", true
			}
			return fmt.Sprintf("/x/%d?v=%s", i, v), true
		}
	}
	l := newList(e, keys("1"), f, InfiniteOptions[string]{InitialSize: 3, RevalidateFirstPage: Bool(false)})
	idle(t, l)
	f.clear()
	l.SetGetKey(keys("2"))
	if s := l.Snapshot(); s.Size != 3 || len(s.Data) < 1 || s.Data[0] != "/x" {
		t.Fatalf("page 0 should stay: %+v", s)
	}
	s := idle(t, l)
	equalData(t, s.Data, []string{"/x", "/x/1?v=2", "/x/2?v=2"})
	f.wantKeys(t, "/x/1?v=2", "/x/2?v=2")
}

func testEquivalentGetKey(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(4)) // pages {0,1} {2,3} {}
	limit := 2
	getKey := func() GetKey[ints] { return IndexKeys[int]("/items", limit) } // a new closure each render
	l := newList(e, getKey(), f, InfiniteOptions[ints]{InitialSize: 2})
	// An adapter that (wrongly but plausibly) sets the getKey on every
	// render, and renders on every notification, must not loop.
	renders := 0
	var mu sync.Mutex
	l.Subscribe(func() {
		mu.Lock()
		renders++
		mu.Unlock()
		l.SetGetKey(getKey())
	})
	idle(t, l)
	l.SetSize(4)
	s := idle(t, l)
	equalData(t, s.Data, []ints{{0, 1}, {2, 3}, {}})
	f.wantKeys(t, pg(0), pg(1), pg(0), pg(2))
	v := s.Version
	l.SetGetKey(getKey())
	if l.Snapshot().Version != v {
		t.Fatal("an equivalent getKey changed the state")
	}
	mu.Lock()
	defer mu.Unlock()
	if renders > 50 {
		t.Fatalf("%d renders", renders)
	}

	// A getKey that goes on where the old one stopped loads the rest.
	f2 := autoFake(func(key string) (string, error) { return key, nil })
	stopAt := func(n int) GetKey[string] {
		return func(i int, _ *string) (string, bool) { return "/s/" + strconv.Itoa(i), i < n }
	}
	l2 := newList(e, stopAt(1), f2, InfiniteOptions[string]{InitialSize: 3, RevalidateFirstPage: Bool(false)})
	if s := idle(t, l2); len(s.Data) != 1 || s.HasMore {
		t.Fatalf("stopped: %+v", s)
	}
	l2.SetGetKey(stopAt(5))
	if s := idle(t, l2); len(s.Data) != 3 || !s.HasMore {
		t.Fatalf("extended: %+v", s)
	}
	f2.wantKeys(t, "/s/0", "/s/1", "/s/2")
}
