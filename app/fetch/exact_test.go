package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The five behaviours an independent check against useSWRInfinite found
// wrong, one test each, named after the behaviour.

func TestNullFirstKeyIsInert(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(10))
	var successes atomic.Int32
	l := newList(e, func(int, *ints) (string, bool) { return "", false }, f, InfiniteOptions[ints]{
		OnSuccess: func(string, []ints) { successes.Add(1) },
	})
	q := newQuery(e, "", autoFake(func(string) (int, error) { return 1, nil }), Options[int]{})
	quiesce(t, e.cache)
	before, beforeQ := l.Snapshot(), q.Snapshot()
	var notified atomic.Int32
	defer l.Subscribe(func() { notified.Add(1) })()
	defer q.Subscribe(func() { notified.Add(1) })()

	l.Focus()
	l.Reconnect()
	q.Focus()
	q.Reconnect()
	e.cache.Focus()
	e.cache.Reconnect()
	e.cache.Revalidate(func(string) bool { return true })
	quiesce(t, e.cache)

	if after := l.Snapshot(); after.Version != before.Version || after.IsValidating {
		t.Errorf("a null first key changed state: version %d → %d, validating %v", before.Version, after.Version, after.IsValidating)
	}
	if after := q.Snapshot(); after.Version != beforeQ.Version || after.IsValidating {
		t.Errorf("a null key changed state: version %d → %d", beforeQ.Version, after.Version)
	}
	if n := notified.Load(); n != 0 {
		t.Errorf("%d notifications for a null key", n)
	}
	if n := successes.Load(); n != 0 {
		t.Errorf("OnSuccess called %d times for a null first key", n)
	}
	f.wantKeys(t)
}

func TestPersistSizeSurvivesANullKey(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(100))
	search := func(q string) GetKey[ints] {
		return func(i int, prev *ints) (string, bool) {
			if q == "" {
				return "", false
			}
			return byIndex(i, prev)
		}
	}
	l := newList(e, search("a"), f, InfiniteOptions[ints]{PersistSize: true})
	idle(t, l)
	l.SetSize(3)
	if s := idle(t, l); len(s.Data) != 3 {
		t.Fatalf("size 3 loaded %d pages", len(s.Data))
	}
	l.SetGetKey(search(""))
	idle(t, l)
	l.SetGetKey(search("a"))
	if s := idle(t, l); s.Size != 3 || len(s.Data) != 3 {
		t.Fatalf("back on the key after a null key: size %d, %d pages; want 3", s.Size, len(s.Data))
	}
}

func TestFailedRevalidateAllKeepsItsPromise(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	var failing atomic.Bool
	f := autoFake(func(key string) (ints, error) {
		if failing.Load() && key == pg(1) {
			return nil, errBoom
		}
		return items(100)(key)
	})
	l := newList(e, byIndex, f, InfiniteOptions[ints]{InitialSize: 3})
	idle(t, l)
	f.clear()

	failing.Store(true)
	l.Revalidate()
	if s := idle(t, l); s.Err == nil {
		t.Fatal("the failing revalidation reported no error")
	}
	f.wantKeys(t, pg(0), pg(1))

	// The error retry, when it comes, refetches every page, not page 0
	// only: the promise of "revalidate everything" holds until kept.
	failing.Store(false)
	d, ok := e.clock.Next()
	if !ok {
		t.Fatal("no retry was scheduled")
	}
	e.clock.Advance(d)
	waitUntil(t, l, "retry", func() bool { return len(f.keys()) >= 3 && !l.Snapshot().IsValidating })
	f.wantKeys(t, pg(0), pg(1), pg(2))
	if s := l.Snapshot(); s.Err != nil {
		t.Fatalf("after the successful retry: %v", s.Err)
	}
}

func TestPanickingGetKeyIsAnError(t *testing.T) {
	t.Run("page 1, on a background goroutine", func(t *testing.T) {
		e := newEnv(t, CacheOptions{})
		f := autoFake(items(100))
		l := newList(e, func(i int, prev *ints) (string, bool) {
			if i >= 1 {
				panic("getKey bug")
			}
			return byIndex(i, prev)
		}, f, InfiniteOptions[ints]{InitialSize: 3})
		s := idle(t, l)
		if s.Err == nil || !strings.Contains(s.Err.Error(), "getKey bug") {
			t.Fatalf("error = %v, want the panic", s.Err)
		}
		equalData(t, s.Data, []ints{{0, 1}})
		l.SetSize(5) // and again, without dying
		if s := idle(t, l); s.Err == nil || len(s.Data) != 1 {
			t.Fatalf("after SetSize: %+v", s)
		}
	})
	t.Run("page 0, in the constructor", func(t *testing.T) {
		e := newEnv(t, CacheOptions{})
		f := autoFake(items(100))
		l := newList(e, func(int, *ints) (string, bool) { panic("no key at all") }, f, InfiniteOptions[ints]{})
		s := idle(t, l)
		if s.Err == nil || s.Data != nil {
			t.Fatalf("state = %+v, want the panic as the error and no data", s)
		}
		l.SetGetKey(byIndex) // a fixed getKey recovers
		if s := idle(t, l); s.Err != nil || len(s.Data) != 1 {
			t.Fatalf("after a good getKey: %+v", s)
		}
	})
}

// keyset is a cursor-paged server over items, newest first: the cursor is
// the last item given, so a new item at the top shifts every page.
type keyset struct {
	mu    sync.Mutex
	items []int
}

func (k *keyset) add(v int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.items = append([]int{v}, k.items...)
}

func (k *keyset) page(key string) (CursorPage[int], error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	u, _ := url.Parse(key)
	limit, _ := strconv.Atoi(u.Query().Get("limit"))
	start := 0
	if c := u.Query().Get("cursor"); c != "" {
		after, _ := strconv.Atoi(c)
		start = slices.Index(k.items, after) + 1
	}
	end := min(start+limit, len(k.items))
	p := CursorPage[int]{Data: slices.Clone(k.items[start:end])}
	if end < len(k.items) {
		p.NextCursor = strconv.Itoa(k.items[end-1])
	}
	return p, nil
}

func TestShiftedCursorDoesNotCollapse(t *testing.T) {
	for _, allAtOnce := range []bool{false, true} {
		t.Run("AllAtOnce="+strconv.FormatBool(allAtOnce), func(t *testing.T) {
			e := newEnv(t, CacheOptions{})
			srv := &keyset{}
			for v := 100; v > 0; v-- {
				srv.items = append(srv.items, v)
			}
			f := autoFake(srv.page)
			l := newList(e, CursorKeys[int]("/t", nil, 5), f, InfiniteOptions[CursorPage[int]]{InitialSize: 4, AllAtOnce: allAtOnce})
			if s := idle(t, l); len(s.Data) != 4 {
				t.Fatalf("%d pages loaded", len(s.Data))
			}
			var mu sync.Mutex
			var lengths []int
			unsub := l.Subscribe(func() {
				mu.Lock()
				lengths = append(lengths, len(l.Snapshot().Data))
				mu.Unlock()
			})
			defer unsub()

			srv.add(101) // a new item: page 0's next cursor moves
			l.Revalidate()
			s := idle(t, l)
			mu.Lock()
			defer mu.Unlock()
			if slices.Min(append(lengths, 4)) < 4 {
				t.Fatalf("page counts while revalidating: %v; the list collapsed", lengths)
			}
			got := CursorItems(s.Data)
			if len(s.Data) != 4 || got[0] != 101 || !slices.Equal(got, srv.items[:20]) {
				t.Fatalf("after the revalidation: %d pages, items %v", len(s.Data), got)
			}
		})
	}
}

// Beyond SWR: waiting, contexts, updaters, predicates, safe snapshots.

func TestWaitAwaitsRevalidateSetSizeAndMutate(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	var failing atomic.Bool
	f := autoFake(func(key string) (ints, error) {
		if failing.Load() {
			return nil, errBoom
		}
		return items(100)(key)
	})
	l := newList(e, byIndex, f, InfiniteOptions[ints]{Config: Config{RetryOnError: Bool(false)}})
	ctx := context.Background()
	if err := l.Wait(ctx); err != nil || len(l.Snapshot().Data) != 1 {
		t.Fatalf("first load: %v, %d pages", err, len(l.Snapshot().Data))
	}
	l.SetSizeFunc(func(n int) int { return n + 2 })
	if err := l.Wait(ctx); err != nil || len(l.Snapshot().Data) != 3 {
		t.Fatalf("after SetSize: %v, %d pages", err, len(l.Snapshot().Data))
	}
	f.clear()
	l.Mutate([]ints{{7}}, true)
	if err := l.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	f.wantKeys(t, pg(0), pg(1), pg(2))
	failing.Store(true)
	l.Revalidate()
	if err := l.Wait(ctx); !errors.Is(err, errBoom) {
		t.Fatalf("Wait after a failing revalidation = %v, want its error", err)
	}

	// A context that ends first, and a list closed while waited on.
	held := newFake[ints]()
	slow := newList(e, byIndex, held, InfiniteOptions[ints]{})
	short, cancel := context.WithCancel(ctx)
	cancel()
	if err := slow.Wait(short); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with an ended context = %v", err)
	}
	done := make(chan error)
	go func() { done <- slow.Wait(ctx) }()
	held.next(t)
	slow.Close()
	if err := <-done; err != nil {
		t.Fatalf("Wait on a closed list = %v", err)
	}
}

func TestConstructorContextClosesTheList(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[ints]()
	ctx, cancel := context.WithCancel(context.Background())
	l := NewInfinite(ctx, e.cache, byIndex, f.fetch, InfiniteOptions[ints]{})
	q := New(ctx, e.cache, "/q", newFake[int]().fetch, Options[int]{})
	c := f.next(t)
	cancel()
	// The request in flight is cancelled with the list.
	select {
	case <-c.ctx.Done():
	case <-time.After(testTimeout):
		t.Fatal("the list's request was not cancelled with its context")
	}
	// AfterFunc closes them on a goroutine of its own: poll for it.
	for deadline := time.Now().Add(testTimeout); ; time.Sleep(time.Millisecond) {
		l.mu.Lock()
		q.mu.Lock()
		closed := l.closed && q.closed
		q.mu.Unlock()
		l.mu.Unlock()
		if closed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the list and query were not closed with their context")
		}
	}
	l.Close() // closing again is fine
	q.Close()
}

func TestMutateFuncIsAtomicAndRevalidatesChosenPages(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := autoFake(items(100))
	l := newList(e, byIndex, f, InfiniteOptions[ints]{InitialSize: 3})
	idle(t, l)
	f.clear()
	// 50 concurrent updaters each add one to page 1's first item: none is
	// lost, as each reads what the one before wrote.
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.MutateFunc(func(pages []ints) []ints {
				out := slices.Clone(pages)
				out[1] = append(ints{out[1][0] + 1}, out[1][1:]...)
				return out
			}, nil)
		}()
	}
	wg.Wait()
	if got := l.Snapshot().Data[1][0]; got != 2+50 {
		t.Fatalf("page 1 starts with %d after 50 increments from 2, want 52", got)
	}
	f.wantKeys(t) // nil predicate: nothing refetched
	l.MutateFunc(func(pages []ints) []ints { return pages }, func(_ ints, key string) bool { return key == pg(2) })
	idle(t, l)
	// Only the chosen page: the predicate alone decides, first page
	// included, as SWR's revalidate function does (RevalidateFunc adds the
	// first page; a mutation does not).
	f.wantKeys(t, pg(2))
	f.clear()
	l.RevalidateFunc(func(_ ints, key string) bool { return key == pg(2) })
	idle(t, l)
	f.wantKeys(t, pg(0), pg(2))
}

func TestSnapshotDataIsTheCallersOwn(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	l := newList(e, byIndex, autoFake(items(100)), InfiniteOptions[ints]{InitialSize: 3})
	idle(t, l)
	a := l.Snapshot()
	slices.Reverse(a.Data) // a subscriber sorting its copy
	if b := l.Snapshot(); b.Data[0][0] != 0 || b.Data[2][0] != 4 {
		t.Fatalf("another snapshot sees %v", b.Data)
	}
}

func TestSubscribeChangesSkipsSpuriousCalls(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[ints]()
	l := newList(e, byIndex, f, InfiniteOptions[ints]{})
	var mu sync.Mutex
	var seen []uint64
	defer l.SubscribeChanges(func() {
		mu.Lock()
		seen = append(seen, l.Snapshot().Version)
		mu.Unlock()
	})()
	f.nextKey(t, pg(0)).ok(ints{0, 1})
	idle(t, l)
	// An equivalent getKey changes nothing; an equal page neither.
	l.SetGetKey(IndexKeys[int]("/items", 2))
	l.Revalidate()
	f.nextKey(t, pg(0)).ok(ints{0, 1})
	last := idle(t, l).Version
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(seen); i++ {
		if seen[i] == seen[i-1] {
			t.Fatalf("called twice for version %d: %v", seen[i], seen)
		}
	}
	if len(seen) == 0 || seen[len(seen)-1] != last {
		t.Fatalf("versions seen %v, the last state is %d", seen, last)
	}
}

func TestParallelFetchesPagesAtOnceAndTheFirstErrorWins(t *testing.T) {
	e := newEnv(t, CacheOptions{})
	f := newFake[ints]()
	l := newList(e, byIndex, f, InfiniteOptions[ints]{InitialSize: 3, Parallel: true, Config: Config{RetryOnError: Bool(false)}})
	// All three requests are in flight before any is answered.
	calls := map[string]*call[ints]{}
	for range 3 {
		c := f.next(t)
		calls[c.key] = c
	}
	for i := 2; i >= 0; i-- {
		calls[pg(i)].ok(ints{2 * i, 2*i + 1})
	}
	s := idle(t, l)
	equalData(t, s.Data, []ints{{0, 1}, {2, 3}, {4, 5}})

	first, second := errors.New("page 2 failed first"), errors.New("page 1 failed second")
	l.Revalidate()
	calls = map[string]*call[ints]{}
	for range 3 {
		c := f.next(t)
		calls[c.key] = c
	}
	calls[pg(2)].fail(first)
	calls[pg(1)].fail(second)
	calls[pg(0)].ok(ints{0, 1})
	// One error is the list's (the first to arrive; which one that is
	// depends on the scheduler), never both, and the pages stay.
	if s := idle(t, l); !(errors.Is(s.Err, first) || errors.Is(s.Err, second)) || len(s.Data) != 3 {
		t.Fatalf("error %v with %d pages; want one page's error and the pages kept", s.Err, len(s.Data))
	}
}

func TestOpenListSizeIsNotEvicted(t *testing.T) {
	e := newEnv(t, CacheOptions{MaxEntries: 3})
	l := newList(e, byIndex, autoFake(items(100)), InfiniteOptions[ints]{})
	idle(t, l)
	l.SetSize(3)
	idle(t, l)
	// Other work churns the small cache well past its bound.
	for i := range 20 {
		Set(e.cache, fmt.Sprintf("/other/%d", i), i)
	}
	if _, ok := Get[int](e.cache, SizeKey(pg(0))); !ok {
		t.Fatal("the open list's size was evicted")
	}
	// A second list on the same first key (a remount) starts at size 3.
	again := newList(e, byIndex, autoFake(items(100)), InfiniteOptions[ints]{})
	if s := idle(t, again); s.Size != 3 {
		t.Fatalf("a remount starts at size %d, want 3", s.Size)
	}
	// Closed lists pin nothing: the size may go like any entry.
	l.Close()
	again.Close()
	for i := range 20 {
		Set(e.cache, fmt.Sprintf("/more/%d", i), i)
	}
	if _, ok := Get[int](e.cache, SizeKey(pg(0))); ok {
		t.Fatal("a closed list's size is still pinned")
	}
}
