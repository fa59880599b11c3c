package fetch_test

// Black-box tests of app/fetch, written against its documentation (doc.go,
// go doc) and the issue "exact where SWR is exact, safe where SWR is not, and
// pleasant to call from Go". Every fetcher here is a plain Go func over a fake
// backend, so these tests also run under GOOS=js GOARCH=wasm.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/betaport/betaport/app/fetch"
)

// patience bounds every wait of these tests; nothing here should come near it.
const patience = 5 * time.Second

var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

var (
	errBoom = errors.New("boom")
	errA    = errors.New("error of page 1")
	errB    = errors.New("error of page 2")
)

func newCache(opts fetch.CacheOptions) (*fetch.Cache, *fetch.FakeClock) {
	clk := fetch.NewFakeClock(epoch)
	opts.Clock = clk
	return fetch.NewCache(opts), clk
}

type waiter interface {
	Wait(ctx context.Context) error
}

// waitIdle waits for w to become idle and returns its error; a Wait that
// does not return within patience fails the test.
func waitIdle(t *testing.T, w waiter) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	err := w.Wait(ctx)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		t.Fatalf("Wait did not return within %v: the object never became idle", patience)
	}
	return err
}

// backend is a fake server: one value per key, with controllable failures
// and gates (a gated fetch blocks until the gate is closed or its context
// ends). It records calls, cancellations and overlapping requests per key.
type backend[P any] struct {
	mu       sync.Mutex
	pages    map[string]P
	serve    func(key string) P // used instead of pages when set; called under mu
	missing  P                  // the answer for a key without a page
	fail     map[string]error
	gates    map[string]chan struct{}
	calls    map[string]int
	inflight map[string]int
	dups     []string
	cancels  map[string]int
	changed  chan struct{}
}

func newBackend[P any]() *backend[P] {
	return &backend[P]{
		pages:    map[string]P{},
		fail:     map[string]error{},
		gates:    map[string]chan struct{}{},
		calls:    map[string]int{},
		inflight: map[string]int{},
		cancels:  map[string]int{},
		changed:  make(chan struct{}),
	}
}

func (b *backend[P]) broadcastLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

func (b *backend[P]) fetcher() fetch.Fetcher[P] {
	return func(ctx context.Context, key, etag string) (fetch.Result[P], error) {
		b.mu.Lock()
		b.calls[key]++
		b.inflight[key]++
		if b.inflight[key] > 1 {
			b.dups = append(b.dups, key)
		}
		gate := b.gates[key]
		b.broadcastLocked()
		b.mu.Unlock()
		defer func() {
			b.mu.Lock()
			b.inflight[key]--
			b.broadcastLocked()
			b.mu.Unlock()
		}()
		if gate != nil {
			select {
			case <-gate:
			case <-ctx.Done():
				b.mu.Lock()
				b.cancels[key]++
				b.broadcastLocked()
				b.mu.Unlock()
				return fetch.Result[P]{}, ctx.Err()
			}
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if err := b.fail[key]; err != nil {
			return fetch.Result[P]{}, err
		}
		if b.serve != nil {
			return fetch.Result[P]{Data: b.serve(key)}, nil
		}
		p, ok := b.pages[key]
		if !ok {
			p = b.missing
		}
		return fetch.Result[P]{Data: p}, nil
	}
}

func (b *backend[P]) set(key string, p P) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pages[key] = p
}

func (b *backend[P]) setFail(key string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil {
		delete(b.fail, key)
	} else {
		b.fail[key] = err
	}
}

// hold gates key: its fetches block until the returned func is called (or
// their context ends).
func (b *backend[P]) hold(key string) (release func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := make(chan struct{})
	b.gates[key] = g
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			if b.gates[key] == g {
				delete(b.gates, key)
			}
			b.mu.Unlock()
			close(g)
		})
	}
}

func (b *backend[P]) count(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls[key]
}

func (b *backend[P]) counts() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := make(map[string]int, len(b.calls))
	for k, v := range b.calls {
		m[k] = v
	}
	return m
}

func (b *backend[P]) total() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, v := range b.calls {
		n += v
	}
	return n
}

func (b *backend[P]) duplicates() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.dups)
}

// waitFor waits until cond (called with b.mu held) holds; it fails the test
// after patience. It must be called from the test goroutine.
func (b *backend[P]) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(patience)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		ok := cond()
		ch := b.changed
		b.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Index-style pages: page i of source prefix is under key prefix+i and holds
// [10*i, gen]; a key without a page answers an empty page, which ends the list.

func pk(prefix string, i int) string { return fmt.Sprintf("%s%d", prefix, i) }

func pg(i, gen int) []int { return []int{10 * i, gen} }

func pageKeys(prefix string) fetch.GetKey[[]int] {
	return func(i int, prev *[]int) (string, bool) {
		if prev != nil && len(*prev) == 0 {
			return "", false
		}
		return pk(prefix, i), true
	}
}

func nullKeys(int, *[]int) (string, bool) { return "", false }

func indexBackend(prefix string, n int) *backend[[]int] {
	b := newBackend[[]int]()
	b.missing = []int{}
	b.addPages(prefix, n)
	return b
}

func (b *backend[P]) addPages(prefix string, n int) {
	for i := range n {
		b.set(pk(prefix, i), any(pg(i, 0)).(P))
	}
}

func wantPages(n, gen int) [][]int {
	out := make([][]int, n)
	for i := range out {
		out[i] = pg(i, gen)
	}
	return out
}

func checkData(t *testing.T, what string, got, want [][]int) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: Data = %v, want %v", what, got, want)
	}
}

type counter struct{ n atomic.Int64 }

func (c *counter) inc()       { c.n.Add(1) }
func (c *counter) get() int64 { return c.n.Load() }

// ---------------------------------------------------------------------------
// Wrong today, 1: a null first key is inert.

func TestBlackBox14NullFirstKeyIsInert(t *testing.T) {
	for _, how := range []string{"from the start", "after SetGetKey"} {
		t.Run(how, func(t *testing.T) {
			c, clk := newCache(fetch.CacheOptions{})
			b := indexBackend("k", 5)
			b.addPages("o", 5)
			var successes, failures counter
			opts := fetch.InfiniteOptions[[]int]{
				OnSuccess: func(string, [][]int) { successes.inc() },
				OnError:   func(string, error) { failures.inc() },
			}
			var l *fetch.Infinite[[]int]
			if how == "from the start" {
				l = fetch.NewInfinite(t.Context(), c, nullKeys, b.fetcher(), opts)
			} else {
				l = fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), opts)
				if err := waitIdle(t, l); err != nil {
					t.Fatalf("first load: %v", err)
				}
				l.SetGetKey(nullKeys)
			}
			defer l.Close()
			if err := waitIdle(t, l); err != nil {
				t.Fatalf("Wait with a null first key = %v, want nil", err)
			}
			// A companion list with a real key on the same cache: its focus
			// revalidation shows the focus event has been delivered.
			other := fetch.NewInfinite(t.Context(), c, pageKeys("o"), b.fetcher(), fetch.InfiniteOptions[[]int]{})
			defer other.Close()
			if err := waitIdle(t, other); err != nil {
				t.Fatal(err)
			}

			before := l.Snapshot()
			if before.Key != "" || before.IsValidating || before.IsLoading || len(before.Data) != 0 {
				t.Fatalf("null-key list: Key %q, IsValidating %v, IsLoading %v, Data %v; want an empty, idle list",
					before.Key, before.IsValidating, before.IsLoading, before.Data)
			}
			calls := b.counts()
			s0, f0 := successes.get(), failures.get()
			var notes, changes counter
			var sawValidating atomic.Bool
			unsub := l.Subscribe(func() {
				notes.inc()
				if l.Snapshot().IsValidating {
					sawValidating.Store(true)
				}
			})
			defer unsub()
			unsub2 := l.SubscribeChanges(changes.inc)
			defer unsub2()

			for round := 1; round <= 3; round++ {
				clk.Advance(time.Minute) // past the focus throttle and the deduping interval
				otherCalls := b.count("o0")
				c.Focus()
				l.Focus()
				c.Reconnect()
				l.Reconnect()
				b.waitFor(t, "the companion list to revalidate on focus", func() bool { return b.calls["o0"] > otherCalls })
				if err := waitIdle(t, other); err != nil {
					t.Fatal(err)
				}
				if err := waitIdle(t, l); err != nil {
					t.Fatalf("round %d: Wait = %v", round, err)
				}
				after := l.Snapshot()
				if after.Version != before.Version {
					t.Errorf("round %d: focus/reconnect on a null key changed Version %d → %d", round, before.Version, after.Version)
				}
				if after.IsValidating {
					t.Errorf("round %d: null-key list is validating after focus/reconnect", round)
				}
			}
			if sawValidating.Load() {
				t.Errorf("IsValidating flipped to true on a focus/reconnect of a null-key list")
			}
			if n := notes.get(); n != 0 {
				t.Errorf("focus/reconnect of a null-key list notified subscribers %d times, want 0", n)
			}
			if n := changes.get(); n != 0 {
				t.Errorf("focus/reconnect of a null-key list notified SubscribeChanges %d times, want 0", n)
			}
			if n := successes.get() - s0; n != 0 {
				t.Errorf("focus/reconnect of a null-key list called OnSuccess %d times, want 0", n)
			}
			if n := failures.get() - f0; n != 0 {
				t.Errorf("focus/reconnect of a null-key list called OnError %d times, want 0", n)
			}
			for k, n := range b.counts() {
				if k[0] == 'k' && n != calls[k] {
					t.Errorf("focus/reconnect of a null-key list fetched %q (%d → %d calls)", k, calls[k], n)
				}
			}
		})
	}
}

// The doc extends the same rule to Revalidate.
func TestBlackBox14NullFirstKeyRevalidateIsInert(t *testing.T) {
	c, clk := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 5)
	var successes counter
	l := fetch.NewInfinite(t.Context(), c, nullKeys, b.fetcher(), fetch.InfiniteOptions[[]int]{
		OnSuccess: func(string, [][]int) { successes.inc() },
	})
	defer l.Close()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	before := l.Snapshot()
	s0 := successes.get()
	var notes counter
	defer l.Subscribe(notes.inc)()
	clk.Advance(time.Minute)
	l.Revalidate()
	l.RevalidateFunc(func([]int, string) bool { return true })
	c.Revalidate(func(string) bool { return true })
	if err := waitIdle(t, l); err != nil {
		t.Errorf("Wait after Revalidate on a null key = %v, want nil", err)
	}
	if v := l.Snapshot().Version; v != before.Version {
		t.Errorf("Revalidate on a null key changed Version %d → %d", before.Version, v)
	}
	if n := notes.get(); n != 0 {
		t.Errorf("Revalidate on a null key notified %d times", n)
	}
	if n := successes.get() - s0; n != 0 {
		t.Errorf("Revalidate on a null key called OnSuccess %d times", n)
	}
	if n := b.total(); n != 0 {
		t.Errorf("a null-key list fetched %d times", n)
	}
}

// Query's null key ("") is inert too.
func TestBlackBox14QueryNullKeyIsInert(t *testing.T) {
	c, clk := newCache(fetch.CacheOptions{})
	var calls, successes counter
	f := fetch.Func(func(ctx context.Context, key string) (int, error) { calls.inc(); return 1, nil })
	q := fetch.New(t.Context(), c, "", f, fetch.Options[int]{OnSuccess: func(string, int) { successes.inc() }})
	defer q.Close()
	if err := waitIdle(t, q); err != nil {
		t.Fatal(err)
	}
	before := q.Snapshot()
	if before.HasData || before.IsValidating || before.IsLoading {
		t.Fatalf("null-key Query: %+v, want no data, idle", before)
	}
	var notes counter
	defer q.Subscribe(notes.inc)()
	for range 3 {
		clk.Advance(time.Minute)
		q.Focus()
		q.Reconnect()
		c.Focus()
		c.Reconnect()
		q.Revalidate()
		if err := waitIdle(t, q); err != nil {
			t.Fatal(err)
		}
	}
	if s := q.Snapshot(); s.Version != before.Version || s.IsValidating {
		t.Errorf("null-key Query changed: Version %d → %d, IsValidating %v", before.Version, s.Version, s.IsValidating)
	}
	if calls.get() != 0 || successes.get() != 0 || notes.get() != 0 {
		t.Errorf("null-key Query: %d fetches, %d OnSuccess, %d notifications; want none", calls.get(), successes.get(), notes.get())
	}
}

// ---------------------------------------------------------------------------
// Wrong today, 2: persistSize survives a null key.

func TestBlackBox14PersistSizeSurvivesNullKey(t *testing.T) {
	for _, back := range []string{"a", "b"} {
		t.Run("A→null→"+back, func(t *testing.T) {
			c, _ := newCache(fetch.CacheOptions{})
			b := indexBackend("a", 6)
			b.addPages("b", 6)
			l := fetch.NewInfinite(t.Context(), c, pageKeys("a"), b.fetcher(), fetch.InfiniteOptions[[]int]{PersistSize: true})
			defer l.Close()
			if err := waitIdle(t, l); err != nil {
				t.Fatal(err)
			}
			l.SetSize(3)
			if err := waitIdle(t, l); err != nil {
				t.Fatal(err)
			}
			if s := l.Snapshot(); s.Size != 3 || len(s.Data) != 3 {
				t.Fatalf("after SetSize(3): Size %d, %d pages", s.Size, len(s.Data))
			}
			l.SetGetKey(nullKeys)
			if err := waitIdle(t, l); err != nil {
				t.Fatal(err)
			}
			l.SetGetKey(pageKeys(back))
			if err := waitIdle(t, l); err != nil {
				t.Fatal(err)
			}
			s := l.Snapshot()
			if s.Size != 3 {
				t.Errorf("PersistSize: size 3 on A → null key → %s gives Size %d, want 3", back, s.Size)
			}
			checkData(t, "after coming back from the null key", s.Data, wantPages(3, 0))
		})
	}
}

// ---------------------------------------------------------------------------
// Wrong today, 3: a failed "revalidate everything" keeps its promise.

func TestBlackBox14FailedRevalidateAllRetriesEveryPage(t *testing.T) {
	for _, next := range []string{"error retry", "next focus"} {
		t.Run(next, func(t *testing.T) {
			c, clk := newCache(fetch.CacheOptions{})
			b := indexBackend("k", 5)
			cfg := fetch.Config{ErrorRetryInterval: 5 * time.Second}
			if next == "next focus" {
				cfg.RetryOnError = fetch.Bool(false)
			}
			l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{Config: cfg, InitialSize: 3})
			defer l.Close()
			if err := waitIdle(t, l); err != nil {
				t.Fatal(err)
			}
			checkData(t, "first load", l.Snapshot().Data, wantPages(3, 0))

			// The server changes every page; page 1 fails once.
			for i := range 3 {
				b.set(pk("k", i), pg(i, 1))
			}
			b.setFail("k1", errBoom)
			l.Revalidate()
			if err := waitIdle(t, l); !errors.Is(err, errBoom) {
				t.Fatalf("Wait after the failing Revalidate = %v, want %v", err, errBoom)
			}
			if s := l.Snapshot(); !errors.Is(s.Err, errBoom) || len(s.Data) < 1 {
				t.Fatalf("after the failing Revalidate: Err %v, Data %v", s.Err, s.Data)
			}
			before := b.counts()
			b.setFail("k1", nil)

			clk.Advance(6 * time.Second)
			if next == "next focus" {
				l.Focus()
			}
			b.waitFor(t, "the "+next+" to refetch page 2 (revalidate-all kept after a failure)", func() bool {
				return b.calls["k2"] > before["k2"]
			})
			if err := waitIdle(t, l); err != nil {
				t.Fatalf("Wait after the %s = %v, want nil", next, err)
			}
			after := b.counts()
			for i := range 3 {
				if k := pk("k", i); after[k] <= before[k] {
					t.Errorf("the %s after a failed Revalidate did not refetch %s (%d calls before, %d after)", next, k, before[k], after[k])
				}
			}
			s := l.Snapshot()
			checkData(t, "after the "+next, s.Data, wantPages(3, 1))
			if s.Err != nil {
				t.Errorf("Err after a successful %s = %v", next, s.Err)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Wrong today, 4: a panicking getKey is an error, never a crash.

func noPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s panicked: %v", what, r)
		}
	}()
	f()
}

func panicFrom(from int, inner fetch.GetKey[[]int]) fetch.GetKey[[]int] {
	return func(i int, prev *[]int) (string, bool) {
		if i >= from {
			panic(fmt.Sprintf("getKey exploded at page %d", i))
		}
		return inner(i, prev)
	}
}

func TestBlackBox14PanickingGetKeyIsAnError(t *testing.T) {
	t.Run("page 0 in the constructor", func(t *testing.T) {
		c, _ := newCache(fetch.CacheOptions{})
		b := indexBackend("k", 5)
		var l *fetch.Infinite[[]int]
		noPanic(t, "NewInfinite with a getKey panicking on page 0", func() {
			l = fetch.NewInfinite(t.Context(), c, panicFrom(0, pageKeys("k")), b.fetcher(), fetch.InfiniteOptions[[]int]{})
		})
		defer l.Close()
		if err := waitIdle(t, l); err == nil {
			t.Errorf("Wait = nil, want the getKey panic as an error")
		}
		if s := l.Snapshot(); s.Err == nil {
			t.Errorf("Snapshot().Err = nil, want the getKey panic as the list's error")
		}
		// The list stays usable.
		l.SetGetKey(pageKeys("k"))
		if err := waitIdle(t, l); err != nil {
			t.Errorf("Wait after a good getKey = %v", err)
		}
		checkData(t, "after a good getKey", l.Snapshot().Data, wantPages(1, 0))
	})

	t.Run("page 1 while computing HasMore", func(t *testing.T) {
		c, _ := newCache(fetch.CacheOptions{})
		b := indexBackend("k", 5)
		var l *fetch.Infinite[[]int]
		noPanic(t, "NewInfinite", func() {
			l = fetch.NewInfinite(t.Context(), c, panicFrom(1, pageKeys("k")), b.fetcher(), fetch.InfiniteOptions[[]int]{})
		})
		defer l.Close()
		err := waitIdle(t, l)
		s := l.Snapshot()
		if err == nil || s.Err == nil {
			t.Errorf("Wait = %v, Err = %v; want the getKey panic as the list's error", err, s.Err)
		}
		checkData(t, "page 0 is kept", s.Data, wantPages(1, 0))
	})

	t.Run("later page after loading", func(t *testing.T) {
		c, _ := newCache(fetch.CacheOptions{})
		b := indexBackend("k", 5)
		l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{InitialSize: 3})
		defer l.Close()
		if err := waitIdle(t, l); err != nil {
			t.Fatal(err)
		}
		noPanic(t, "SetGetKey + Revalidate with a getKey panicking from page 2", func() {
			l.SetGetKey(panicFrom(2, pageKeys("k")))
			l.Revalidate()
		})
		err := waitIdle(t, l)
		s := l.Snapshot()
		if err == nil || s.Err == nil {
			t.Errorf("Wait = %v, Err = %v; want the getKey panic as the list's error", err, s.Err)
		}
		if len(s.Data) < 2 || !reflect.DeepEqual(s.Data[:2], wantPages(2, 0)) {
			t.Errorf("loaded pages not kept: Data = %v, want at least %v", s.Data, wantPages(2, 0))
		}
		noPanic(t, "SetSize with a panicking getKey", func() { l.SetSize(4) })
		if err := waitIdle(t, l); err == nil {
			t.Errorf("Wait after SetSize with a panicking getKey = nil, want an error")
		}
		noPanic(t, "Mutate with a panicking getKey", func() { l.Mutate(wantPages(3, 7), false) })
		waitIdle(t, l)
		noPanic(t, "MutateFunc with a panicking getKey", func() {
			l.MutateFunc(func(p [][]int) [][]int { return p }, func([]int, string) bool { return true })
		})
		waitIdle(t, l)

		l.SetGetKey(pageKeys("k"))
		l.Revalidate()
		if err := waitIdle(t, l); err != nil {
			t.Errorf("Wait after restoring a good getKey = %v, want nil", err)
		}
		if s := l.Snapshot(); s.Err != nil || len(s.Data) != 4 {
			t.Errorf("after restoring a good getKey: Err %v, %d pages; want nil and 4", s.Err, len(s.Data))
		}
	})
}

// ---------------------------------------------------------------------------
// Wrong today, 5: a shifted cursor does not collapse the list.

func cursorBackend(n int) (*backend[fetch.CursorPage[int]], *[]int) {
	b := newBackend[fetch.CursorPage[int]]()
	items := make([]int, n)
	for i := range items {
		items[i] = 100 - i
	}
	b.serve = func(key string) fetch.CursorPage[int] {
		u, err := url.Parse(key)
		if err != nil {
			panic(err)
		}
		q := u.Query()
		limit, _ := strconv.Atoi(q.Get("limit"))
		if limit <= 0 {
			limit = 2
		}
		start := 0
		if cur := q.Get("cursor"); cur != "" {
			c, _ := strconv.Atoi(cur)
			start = slices.Index(items, c) + 1
		}
		end := min(start+limit, len(items))
		p := fetch.CursorPage[int]{Data: slices.Clone(items[start:end])}
		if end < len(items) {
			p.NextCursor = strconv.Itoa(items[end-1])
		}
		return p
	}
	return b, &items
}

func cursorData(pages []fetch.CursorPage[int]) [][]int {
	out := make([][]int, len(pages))
	for i, p := range pages {
		out[i] = p.Data
	}
	return out
}

func TestBlackBox14ShiftedCursorDoesNotCollapse(t *testing.T) {
	for _, allAtOnce := range []bool{false, true} {
		for _, trigger := range []string{"Revalidate", "Focus", "LoadMore"} {
			t.Run(fmt.Sprintf("AllAtOnce=%v/%s", allAtOnce, trigger), func(t *testing.T) {
				c, clk := newCache(fetch.CacheOptions{})
				b, items := cursorBackend(10)
				g := fetch.CursorKeys[int]("/t", nil, 2)
				l := fetch.NewInfinite(t.Context(), c, g, b.fetcher(), fetch.InfiniteOptions[fetch.CursorPage[int]]{
					InitialSize: 3, AllAtOnce: allAtOnce,
				})
				defer l.Close()
				if err := waitIdle(t, l); err != nil {
					t.Fatal(err)
				}
				checkData(t, "first load", cursorData(l.Snapshot().Data), [][]int{{100, 99}, {98, 97}, {96, 95}})

				var minLen atomic.Int64
				minLen.Store(3)
				defer l.Subscribe(func() {
					n := int64(len(l.Snapshot().Data))
					for {
						m := minLen.Load()
						if n >= m || minLen.CompareAndSwap(m, n) {
							return
						}
					}
				})()

				// A new item arrives at the top: every cursor shifts by one.
				b.mu.Lock()
				*items = append([]int{101}, *items...)
				b.mu.Unlock()
				k1, ok := g(1, &fetch.CursorPage[int]{Data: []int{101, 100}, NextCursor: "100"})
				if !ok {
					t.Fatal("CursorKeys gave no key for page 1")
				}
				release := b.hold(k1)
				defer release()

				clk.Advance(time.Minute)
				want := [][]int{{101, 100}, {99, 98}, {97, 96}}
				switch trigger {
				case "Revalidate":
					l.Revalidate()
				case "Focus":
					l.Focus()
				case "LoadMore":
					l.SetSizeFunc(func(n int) int { return n + 1 })
					want = append(want, []int{95, 94})
				}
				b.waitFor(t, "page 1 to be fetched under its shifted cursor", func() bool { return b.calls[k1] > 0 })
				mid := l.Snapshot()
				if len(mid.Data) < 3 {
					t.Errorf("while page 1 is refetched under its new cursor, Data has %d pages (%v); want the 3 loaded pages kept on screen",
						len(mid.Data), cursorData(mid.Data))
				}
				if allAtOnce {
					checkData(t, "AllAtOnce, mid-pass (nothing new shows before the batch is complete)",
						cursorData(mid.Data), [][]int{{100, 99}, {98, 97}, {96, 95}})
				}
				release()
				if err := waitIdle(t, l); err != nil {
					t.Fatal(err)
				}
				s := l.Snapshot()
				checkData(t, "after the pass", cursorData(s.Data), want)
				if s.Size != len(want) {
					t.Errorf("Size = %d, want %d", s.Size, len(want))
				}
				if m := minLen.Load(); m < 3 {
					t.Errorf("the published list collapsed to %d page(s) during the pass; want the loaded pages kept", m)
				}
			})
		}
	}
}

// AllAtOnce (SWR's whole-batch behaviour), without any cursor shift: a
// revalidation's pages appear together.
func TestBlackBox14AllAtOnceShowsTheBatchTogether(t *testing.T) {
	c, clk := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 5)
	l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{InitialSize: 3, AllAtOnce: true})
	defer l.Close()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		b.set(pk("k", i), pg(i, 1))
	}
	release := b.hold("k1")
	defer release()
	clk.Advance(time.Minute)
	l.Revalidate()
	b.waitFor(t, "page 1 to be refetched", func() bool { return b.calls["k1"] > 1 })
	checkData(t, "AllAtOnce, page 1 still in flight", l.Snapshot().Data, wantPages(3, 0))
	release()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	checkData(t, "AllAtOnce, batch complete", l.Snapshot().Data, wantPages(3, 1))
}

// ---------------------------------------------------------------------------
// Beyond SWR: MaxPages and SetReading.

func heldPages(s fetch.InfiniteState[[]int]) []int {
	var held []int
	for i := range s.Data {
		if len(s.Dropped) == 0 || !s.Dropped[i] {
			held = append(held, i)
		}
	}
	return held
}

func droppedList(s fetch.InfiniteState[[]int]) []bool {
	out := make([]bool, len(s.Data))
	for i := range out {
		out[i] = len(s.Dropped) > i && s.Dropped[i]
	}
	return out
}

// checkMaxPages checks what MaxPages promises of an idle list.
func checkMaxPages(t *testing.T, what string, c *fetch.Cache, s fetch.InfiniteState[[]int], maxPages int) {
	t.Helper()
	if len(s.Data) != s.Size {
		t.Errorf("%s: %d pages in Data, Size %d: dropping must not change the number of pages", what, len(s.Data), s.Size)
	}
	if s.Dropped != nil && len(s.Dropped) != len(s.Data) {
		t.Errorf("%s: len(Dropped) %d != len(Data) %d", what, len(s.Dropped), len(s.Data))
	}
	held := heldPages(s)
	if len(held) > maxPages {
		t.Errorf("%s: %d pages held (%v), MaxPages %d", what, len(held), held, maxPages)
	}
	for i := range s.Data {
		dropped := len(s.Dropped) > i && s.Dropped[i]
		if dropped {
			if s.Data[i] != nil {
				t.Errorf("%s: dropped page %d holds %v, want the zero value", what, i, s.Data[i])
			}
			if v, ok := fetch.Get[[]int](c, pk("k", i)); ok {
				t.Errorf("%s: dropped page %d is still cached (%v)", what, i, v)
			}
		} else if !reflect.DeepEqual(s.Data[i], pg(i, 0)) {
			t.Errorf("%s: held page %d = %v, want %v", what, i, s.Data[i], pg(i, 0))
		}
	}
}

func TestBlackBox14MaxPagesDropsPagesFarthestFromReader(t *testing.T) {
	c, _ := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 10)
	l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{
		InitialSize: 4, MaxPages: 2, Count: func(p []int) int { return len(p) },
	})
	defer l.Close()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	s := l.Snapshot()
	checkMaxPages(t, "reader at the last page", c, s, 2)
	if got, want := droppedList(s), []bool{true, true, false, false}; !reflect.DeepEqual(got, want) {
		t.Errorf("reader at the last page: dropped %v, want %v (front pages dropped)", got, want)
	}
	if !reflect.DeepEqual(s.Counts, []int{2, 2, 2, 2}) {
		t.Errorf("Counts = %v, want [2 2 2 2] (dropped pages keep their count)", s.Counts)
	}
	rows := fetch.RowsOf(s, func(p []int) []int { return p })
	if rows.Len() != 8 {
		t.Errorf("Rows.Len = %d, want 8 (dropped pages keep their rows)", rows.Len())
	}
	if _, ok := rows.At(0); ok {
		t.Errorf("Rows.At(0) on a dropped page reports an item")
	}
	if v, ok := rows.At(4); !ok || v != 20 {
		t.Errorf("Rows.At(4) = %v, %v; want 20, true", v, ok)
	}
	if p := rows.Page(5); p != 2 {
		t.Errorf("Rows.Page(5) = %d, want 2", p)
	}

	k0 := b.count("k0")
	l.SetReading(0)
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	s = l.Snapshot()
	checkMaxPages(t, "reader at page 0", c, s, 2)
	if got, want := droppedList(s), []bool{false, false, true, true}; !reflect.DeepEqual(got, want) {
		t.Errorf("reader at page 0: dropped %v, want %v", got, want)
	}
	if b.count("k0") <= k0 {
		t.Errorf("page 0 held again but not refetched")
	}
	if s.Size != 4 {
		t.Errorf("SetReading changed Size to %d", s.Size)
	}

	l.SetReading(2)
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	s = l.Snapshot()
	checkMaxPages(t, "reader at page 2", c, s, 2)
	if held := heldPages(s); !slices.Contains(held, 2) {
		t.Errorf("reader at page 2: held pages %v do not include page 2", held)
	}

	l.SetReading(-1)
	l.SetSizeFunc(func(n int) int { return n + 1 })
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	s = l.Snapshot()
	checkMaxPages(t, "reader back at the last page, one more page", c, s, 2)
	if got, want := droppedList(s), []bool{true, true, true, false, false}; !reflect.DeepEqual(got, want) {
		t.Errorf("after SetReading(-1) and load more: dropped %v, want %v", got, want)
	}
}

func TestBlackBox14MaxPagesOneAndReadingOutOfRange(t *testing.T) {
	c, _ := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 10)
	l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{InitialSize: 3, MaxPages: 1})
	defer l.Close()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	s := l.Snapshot()
	checkMaxPages(t, "MaxPages 1", c, s, 1)
	if held := heldPages(s); !reflect.DeepEqual(held, []int{2}) {
		t.Errorf("MaxPages 1, reader at the last page: held %v, want [2]", held)
	}
	for _, r := range []int{100, -7, 3, 1 << 30, -1 << 30} {
		noPanic(t, fmt.Sprintf("SetReading(%d)", r), func() { l.SetReading(r) })
		if err := waitIdle(t, l); err != nil {
			t.Errorf("SetReading(%d): Wait = %v", r, err)
		}
		s := l.Snapshot()
		checkMaxPages(t, fmt.Sprintf("SetReading(%d)", r), c, s, 1)
		if s.Size != 3 {
			t.Errorf("SetReading(%d) changed Size to %d", r, s.Size)
		}
	}
	l.SetReading(0)
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	s = l.Snapshot()
	checkMaxPages(t, "SetReading(0)", c, s, 1)
	if held := heldPages(s); !reflect.DeepEqual(held, []int{0}) {
		t.Errorf("MaxPages 1, reader at page 0: held %v, want [0]", held)
	}
}

// ---------------------------------------------------------------------------
// Beyond SWR: waiting and contexts.

func TestBlackBox14WaitAwaitsRevalidateSetSizeMutate(t *testing.T) {
	c, clk := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 6)
	b.addPages("n", 6)
	l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{})
	defer l.Close()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	checkData(t, "after the first Wait", l.Snapshot().Data, wantPages(1, 0))

	l.SetSize(3)
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	checkData(t, "right after SetSize(3); Wait", l.Snapshot().Data, wantPages(3, 0))

	for i := range 3 {
		b.set(pk("k", i), pg(i, 1))
	}
	clk.Advance(time.Second)
	l.Revalidate()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	checkData(t, "right after Revalidate; Wait", l.Snapshot().Data, wantPages(3, 1))

	for i := range 3 {
		b.set(pk("k", i), pg(i, 2))
	}
	l.Mutate(wantPages(3, 9), true)
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	checkData(t, "right after Mutate(p, true); Wait", l.Snapshot().Data, wantPages(3, 2))

	l.SetGetKey(pageKeys("n"))
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	if s := l.Snapshot(); s.Key != "n0" || len(s.Data) == 0 || !reflect.DeepEqual(s.Data[0], pg(0, 0)) {
		t.Errorf("right after SetGetKey; Wait: Key %q, Data %v", s.Key, s.Data)
	}
}

func TestBlackBox14WaitWithExpiredContext(t *testing.T) {
	c, _ := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 3)
	release := b.hold("k0")
	defer release()
	l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{})
	defer l.Close()
	b.waitFor(t, "page 0 to be requested", func() bool { return b.calls["k0"] > 0 })

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Wait(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait(cancelled ctx) while loading = %v, want context.Canceled", err)
	}
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Hour))
	defer cancel2()
	if err := l.Wait(expired); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait(expired ctx) while loading = %v, want context.DeadlineExceeded", err)
	}

	// A Wait whose context is cancelled while it blocks.
	midCtx, midCancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Wait(midCtx) }()
	midCancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Wait cancelled mid-flight = %v, want context.Canceled", err)
		}
	case <-time.After(patience):
		t.Fatal("Wait did not return after its context was cancelled")
	}

	// Giving up waiting does not cancel the list's work.
	if s := l.Snapshot(); !s.IsValidating || !s.IsLoading {
		t.Errorf("while page 0 is in flight: IsValidating %v, IsLoading %v; want both true", s.IsValidating, s.IsLoading)
	}
	release()
	if err := waitIdle(t, l); err != nil {
		t.Errorf("Wait after release = %v, want nil", err)
	}
	checkData(t, "after release", l.Snapshot().Data, wantPages(1, 0))
}

func TestBlackBox14ConstructorContextCancelsList(t *testing.T) {
	c, _ := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 3)
	release := b.hold("k0")
	defer release()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	l := fetch.NewInfinite(ctx, c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{})
	defer l.Close()
	b.waitFor(t, "page 0 to be requested", func() bool { return b.calls["k0"] > 0 })
	var notes counter
	l.Subscribe(notes.inc)

	cancel() // the component unmounts mid-flight
	b.waitFor(t, "the fetcher's context to end after the constructor's context was cancelled",
		func() bool { return b.cancels["k0"] > 0 })
	release() // a fetch started from now on would complete
	waitIdle(t, l)
	n := notes.get()
	calls := b.total()

	l.Revalidate()
	l.SetSize(3)
	l.Focus()
	c.Focus()
	waitIdle(t, l)
	if got := b.total(); got != calls {
		t.Errorf("a list whose context ended fetched again (%d → %d calls)", calls, got)
	}
	if s := l.Snapshot(); len(s.Data) != 0 {
		t.Errorf("a list whose context ended shows %v", s.Data)
	}
	if got := notes.get(); got != n {
		t.Errorf("a list whose context ended notified its subscribers %d more times", got-n)
	}
}

func TestBlackBox14CloseCancelsBlockedFetcher(t *testing.T) {
	c, _ := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 3)
	release := b.hold("k0") // blocks until its context is cancelled
	defer release()
	l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{})
	b.waitFor(t, "page 0 to be requested", func() bool { return b.calls["k0"] > 0 })
	l.Close()
	b.waitFor(t, "Close to cancel the blocked fetcher's context", func() bool { return b.cancels["k0"] > 0 })
	waitIdle(t, l)
}

func TestBlackBox14CloseKeepsRequestsOthersWaitFor(t *testing.T) {
	c, _ := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 3)
	release := b.hold("k0")
	defer release()
	l1 := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{})
	b.waitFor(t, "page 0 to be requested", func() bool { return b.calls["k0"] > 0 })
	l2 := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{})
	defer l2.Close()
	// Make sure l2 is loading (waiting for page 0) before l1 goes.
	changed := make(chan struct{}, 1)
	unsub := l2.Subscribe(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	deadline := time.After(patience)
	for !l2.Snapshot().IsValidating {
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("the second list never started loading")
		}
	}
	unsub()
	l1.Close()
	release()
	if err := waitIdle(t, l2); err != nil {
		t.Errorf("the list still open: Wait = %v, want nil (closing another list must not cancel its request)", err)
	}
	checkData(t, "the list still open", l2.Snapshot().Data, wantPages(1, 0))
	b.mu.Lock()
	cancels, calls := b.cancels["k0"], b.calls["k0"]
	b.mu.Unlock()
	if cancels != 0 {
		t.Errorf("closing one list cancelled a request another list waited for")
	}
	if calls != 1 {
		t.Errorf("page 0 fetched %d times, want once (shared in flight)", calls)
	}
	if d := b.duplicates(); len(d) > 0 {
		t.Errorf("the same key was fetched twice at once: %v", d)
	}
}

// ---------------------------------------------------------------------------
// Beyond SWR: MutateFunc and per-page revalidation.

func TestBlackBox14MutateFuncIsAtomicAgainstRevalidations(t *testing.T) {
	c, _ := newCache(fetch.CacheOptions{})
	b := newBackend[[]int]()
	b.missing = []int{}
	b.set("k0", []int{0})
	l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{
		Config: fetch.Config{DedupingInterval: fetch.Off},
	})
	defer l.Close()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	const writers, each = 16, 8
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				l.MutateFunc(func(pages [][]int) [][]int {
					// The server takes the same write; the list shows it at once.
					b.mu.Lock()
					b.pages["k0"] = []int{b.pages["k0"][0] + 1}
					b.mu.Unlock()
					return [][]int{{pages[0][0] + 1}}
				}, nil)
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for range 10 {
				l.Revalidate()
				runtime.Gosched()
			}
		})
	}
	wg.Wait()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	if got := l.Snapshot().Data; len(got) != 1 || got[0][0] != writers*each {
		t.Errorf("after %d concurrent increments through MutateFunc: Data = %v, want [[%d]] (an update was lost or a stale answer landed)",
			writers*each, got, writers*each)
	}
	l.Revalidate()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	if got := l.Snapshot().Data; len(got) != 1 || got[0][0] != writers*each {
		t.Errorf("after a final Revalidate: Data = %v, want [[%d]]", got, writers*each)
	}
	if d := b.duplicates(); len(d) > 0 {
		t.Errorf("duplicate requests in flight for %v", d)
	}
}

func TestBlackBox14RevalidatePredicateRefetchesOnlyChosenPages(t *testing.T) {
	setup := func(t *testing.T) (*backend[[]int], *fetch.Infinite[[]int], *fetch.FakeClock) {
		c, clk := newCache(fetch.CacheOptions{})
		b := indexBackend("k", 5)
		l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{InitialSize: 3})
		t.Cleanup(l.Close)
		if err := waitIdle(t, l); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Minute)
		for i := range 3 {
			b.set(pk("k", i), pg(i, 1))
		}
		return b, l, clk
	}
	delta := func(b *backend[[]int], before map[string]int) []int {
		after := b.counts()
		return []int{after["k0"] - before["k0"], after["k1"] - before["k1"], after["k2"] - before["k2"]}
	}

	t.Run("MutateFunc with a predicate", func(t *testing.T) {
		b, l, _ := setup(t)
		before := b.counts()
		l.MutateFunc(func(p [][]int) [][]int {
			out := slices.Clone(p)
			out[1] = []int{10, 77}
			return out
		}, func(page []int, key string) bool { return key == "k1" })
		if err := waitIdle(t, l); err != nil {
			t.Fatal(err)
		}
		if d := delta(b, before); !reflect.DeepEqual(d, []int{0, 1, 0}) {
			t.Errorf("MutateFunc revalidating k1 only: fetches per page %v, want [0 1 0]", d)
		}
		checkData(t, "after MutateFunc", l.Snapshot().Data, [][]int{pg(0, 0), pg(1, 1), pg(2, 0)})
	})

	t.Run("MutateFunc with nil", func(t *testing.T) {
		b, l, _ := setup(t)
		before := b.counts()
		l.MutateFunc(func(p [][]int) [][]int {
			out := slices.Clone(p)
			out[2] = []int{20, 77}
			return out
		}, nil)
		if err := waitIdle(t, l); err != nil {
			t.Fatal(err)
		}
		if d := delta(b, before); !reflect.DeepEqual(d, []int{0, 0, 0}) {
			t.Errorf("MutateFunc with a nil predicate: fetches per page %v, want none", d)
		}
		checkData(t, "after MutateFunc", l.Snapshot().Data, [][]int{pg(0, 0), pg(1, 0), {20, 77}})
	})

	t.Run("RevalidateFunc", func(t *testing.T) {
		b, l, _ := setup(t)
		before := b.counts()
		l.RevalidateFunc(func(page []int, key string) bool { return key == "k2" })
		if err := waitIdle(t, l); err != nil {
			t.Fatal(err)
		}
		if d := delta(b, before); !reflect.DeepEqual(d, []int{1, 0, 1}) {
			t.Errorf("RevalidateFunc for k2: fetches per page %v, want [1 0 1] (k2 plus the first page)", d)
		}
		checkData(t, "after RevalidateFunc", l.Snapshot().Data, [][]int{pg(0, 1), pg(1, 0), pg(2, 1)})
	})

	t.Run("Mutate with revalidate true", func(t *testing.T) {
		b, l, _ := setup(t)
		before := b.counts()
		l.Mutate(wantPages(3, 5), true)
		if err := waitIdle(t, l); err != nil {
			t.Fatal(err)
		}
		if d := delta(b, before); !reflect.DeepEqual(d, []int{1, 1, 1}) {
			t.Errorf("Mutate(p, true): fetches per page %v, want [1 1 1]", d)
		}
		checkData(t, "after Mutate(p, true)", l.Snapshot().Data, wantPages(3, 1))
	})
}

// ---------------------------------------------------------------------------
// Beyond SWR: parallel loading.

// parallelKeys gives "k<i>" when called, as Parallel promises, with a nil
// previous page, and "dep<i>" otherwise: a fetch of a "dep" key shows a
// page whose key was computed from the previous page.
func parallelKeys() fetch.GetKey[[]int] {
	return func(i int, prev *[]int) (string, bool) {
		if i >= 5 {
			return "", false
		}
		if prev != nil {
			return pk("dep", i), true
		}
		return pk("k", i), true
	}
}

func TestBlackBox14ParallelLoadsPagesAtOnce(t *testing.T) {
	c, _ := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 5)
	var rel []func()
	for i := range 3 {
		rel = append(rel, b.hold(pk("k", i)))
	}
	defer func() {
		for _, r := range rel {
			r()
		}
	}()
	l := fetch.NewInfinite(t.Context(), c, parallelKeys(), b.fetcher(), fetch.InfiniteOptions[[]int]{InitialSize: 3, Parallel: true})
	defer l.Close()
	b.waitFor(t, "all three pages to be in flight at once (Parallel)", func() bool {
		return b.inflight["k0"] == 1 && b.inflight["k1"] == 1 && b.inflight["k2"] == 1
	})
	rel[0]()
	rel[1]()
	b.waitFor(t, "pages 0 and 1 to be answered", func() bool { return b.inflight["k0"] == 0 && b.inflight["k1"] == 0 })
	if s := l.Snapshot(); len(s.Data) != 0 {
		t.Errorf("Parallel: pages shown before all arrived: %v", s.Data)
	}
	rel[2]()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	checkData(t, "Parallel, all arrived", l.Snapshot().Data, wantPages(3, 0))
	for k := range b.counts() {
		if k[0] == 'd' {
			t.Errorf("Parallel: fetched %q, a key computed from a previous page", k)
		}
	}
}

func TestBlackBox14ParallelFirstErrorWins(t *testing.T) {
	c, _ := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 5)
	r1, r2 := b.hold("k1"), b.hold("k2")
	defer r1()
	defer r2()
	b.setFail("k1", errA)
	b.setFail("k2", errB)
	var mu sync.Mutex
	var reported []string
	l := fetch.NewInfinite(t.Context(), c, parallelKeys(), b.fetcher(), fetch.InfiniteOptions[[]int]{
		InitialSize: 3, Parallel: true,
		Config: fetch.Config{RetryOnError: fetch.Bool(false)},
		OnError: func(key string, err error) {
			mu.Lock()
			reported = append(reported, fmt.Sprintf("%s: %v", key, err))
			mu.Unlock()
		},
	})
	defer l.Close()
	b.waitFor(t, "pages 1 and 2 to be in flight", func() bool { return b.inflight["k1"] == 1 && b.inflight["k2"] == 1 })
	r2() // page 2 fails first…
	b.waitFor(t, "page 2 to fail", func() bool { return b.inflight["k2"] == 0 })
	// Nothing outside the package shows when it has taken page 2's error in;
	// let its goroutines run before page 1 is allowed to fail.
	for range 10000 {
		runtime.Gosched()
	}
	r1() // …then page 1
	err := waitIdle(t, l)
	if !errors.Is(err, errB) {
		t.Errorf("Parallel, page 2 failed first: Wait = %v, want %v (the first error wins)", err, errB)
	}
	if s := l.Snapshot(); !errors.Is(s.Err, errB) {
		t.Errorf("Parallel, page 2 failed first: Err = %v, want %v", s.Err, errB)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) == 0 || reported[0] != "k2: "+errB.Error() {
		t.Errorf("OnError calls %q, want the first to be for k2 with %v", reported, errB)
	}
}

// ---------------------------------------------------------------------------
// Beyond SWR: safe snapshots, size not evictable.

func TestBlackBox14SnapshotDataIsCallersOwn(t *testing.T) {
	c, clk := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 6)
	l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{InitialSize: 4})
	defer l.Close()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	s1 := l.Snapshot()
	slices.Reverse(s1.Data)
	s1.Data[1] = nil
	_ = append(s1.Data[:2], []int{-1})
	checkData(t, "after a caller reversed and overwrote its snapshot", l.Snapshot().Data, wantPages(4, 0))

	// Subscribers sorting their snapshot in place, while another checks order.
	var disorder atomic.Int64
	defer l.Subscribe(func() {
		s := l.Snapshot()
		sort.Slice(s.Data, func(i, j int) bool { return len(s.Data[j]) == 0 || (len(s.Data[i]) > 0 && s.Data[i][0] > s.Data[j][0]) })
		if len(s.Data) > 0 {
			s.Data[0] = []int{-5}
		}
	})()
	defer l.Subscribe(func() {
		s := l.Snapshot()
		for i, p := range s.Data {
			if len(p) > 0 && p[0] != 10*i {
				disorder.Add(1)
			}
		}
	})()
	for gen := 1; gen <= 4; gen++ {
		for i := range 4 {
			b.set(pk("k", i), pg(i, gen))
		}
		clk.Advance(time.Minute)
		l.Revalidate()
		if err := waitIdle(t, l); err != nil {
			t.Fatal(err)
		}
	}
	if n := disorder.Load(); n != 0 {
		t.Errorf("a subscriber saw %d out-of-order pages: another subscriber's in-place sort leaked into its snapshot", n)
	}
	checkData(t, "after subscribers sorted their snapshots", l.Snapshot().Data, wantPages(4, 4))
}

func TestBlackBox14SizeIsNotEvictedWhileListOpen(t *testing.T) {
	c, _ := newCache(fetch.CacheOptions{MaxEntries: 4})
	b := indexBackend("a", 6)
	l1 := fetch.NewInfinite(t.Context(), c, pageKeys("a"), b.fetcher(), fetch.InfiniteOptions[[]int]{})
	defer l1.Close()
	if err := waitIdle(t, l1); err != nil {
		t.Fatal(err)
	}
	l1.SetSize(3)
	if err := waitIdle(t, l1); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		fetch.Set(c, fmt.Sprintf("x%d", i), i)
	}
	if s := l1.Snapshot(); s.Size != 3 {
		t.Errorf("open list: Size = %d after cache churn, want 3", s.Size)
	}
	l2 := fetch.NewInfinite(t.Context(), c, pageKeys("a"), b.fetcher(), fetch.InfiniteOptions[[]int]{})
	defer l2.Close()
	if err := waitIdle(t, l2); err != nil {
		t.Fatal(err)
	}
	if s := l2.Snapshot(); s.Size != 3 {
		t.Errorf("a second list on the same first key, while the first is open: Size = %d, want 3 (the size was evicted)", s.Size)
	}
	checkData(t, "second list", l2.Snapshot().Data, wantPages(3, 0))
	l1.SetSizeFunc(func(n int) int { return n + 1 })
	if err := waitIdle(t, l1); err != nil {
		t.Fatal(err)
	}
	if s := l1.Snapshot(); s.Size != 4 {
		t.Errorf("SetSizeFunc(+1) from 3 gave Size %d, want 4", s.Size)
	}
}

// ---------------------------------------------------------------------------
// Beyond SWR: options with positive names, SWR's defaults.

func TestBlackBox14DefaultsAreSWRs(t *testing.T) {
	c, clk := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 5)
	b.addPages("q", 5)
	l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{})
	defer l.Close()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	if s := l.Snapshot(); s.Size != 1 || len(s.Data) != 1 {
		t.Errorf("zero options: Size %d, %d pages; want initialSize 1", s.Size, len(s.Data))
	}
	if s := l.Snapshot(); !s.HasMore {
		t.Errorf("HasMore = false with a next key available")
	}

	// revalidateFirstPage (default true): growing refetches page 0.
	clk.Advance(3 * time.Second)
	l.SetSize(2)
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	if n := b.count("k0"); n != 2 {
		t.Errorf("SetSize(2): page 0 fetched %d times in all, want 2 (revalidateFirstPage)", n)
	}
	// revalidateAll (default false): a cached page is not refetched.
	l.SetSize(1)
	waitIdle(t, l)
	clk.Advance(3 * time.Second)
	l.SetSize(2)
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	if n := b.count("k1"); n != 1 {
		t.Errorf("growing back to 2: page 1 fetched %d times, want 1 (revalidateAll off)", n)
	}
	checkData(t, "after growing back", l.Snapshot().Data, wantPages(2, 0))

	// dedupingInterval (default 2s): a list opened 1s later shares the answer.
	clk.Advance(3 * time.Second)
	l.Revalidate()
	waitIdle(t, l)
	k0 := b.count("k0")
	clk.Advance(time.Second)
	l2 := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{})
	defer l2.Close()
	waitIdle(t, l2)
	if n := b.count("k0"); n != k0 {
		t.Errorf("a list opened within the deduping interval refetched page 0")
	}
	if s := l2.Snapshot(); s.Size != 2 || len(s.Data) != 2 {
		t.Errorf("second list: Size %d, %d pages; want the shared size 2", s.Size, len(s.Data))
	}

	// revalidateOnFocus and revalidateOnReconnect (default true).
	clk.Advance(time.Minute)
	k0 = b.count("k0")
	l.Focus()
	b.waitFor(t, "Focus to revalidate page 0", func() bool { return b.calls["k0"] > k0 })
	waitIdle(t, l)
	clk.Advance(time.Minute)
	k0 = b.count("k0")
	l.Reconnect()
	b.waitFor(t, "Reconnect to revalidate page 0", func() bool { return b.calls["k0"] > k0 })
	waitIdle(t, l)

	// Switches turned off with Bool(false).
	off := fetch.NewInfinite(t.Context(), c, pageKeys("q"), b.fetcher(), fetch.InfiniteOptions[[]int]{
		RevalidateFirstPage: fetch.Bool(false),
		Config:              fetch.Config{RevalidateOnFocus: fetch.Bool(false), RevalidateOnReconnect: fetch.Bool(false)},
	})
	defer off.Close()
	if err := waitIdle(t, off); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	off.SetSize(2)
	off.Focus()
	off.Reconnect()
	if err := waitIdle(t, off); err != nil {
		t.Fatal(err)
	}
	if n := b.count("q0"); n != 1 {
		t.Errorf("RevalidateFirstPage/OnFocus/OnReconnect off: page 0 fetched %d times, want 1", n)
	}
	checkData(t, "switches off", off.Snapshot().Data, wantPages(2, 0))
}

// ---------------------------------------------------------------------------
// Beyond SWR: change-only subscribers.

func TestBlackBox14SubscribeChangesOnlyOnVersionChange(t *testing.T) {
	c, clk := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 8)
	l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{
		InitialSize: 2,
		Config: fetch.Config{
			RevalidateOnFocus: fetch.Bool(false), RevalidateOnReconnect: fetch.Bool(false),
			DedupingInterval: fetch.Off,
		},
	})
	defer l.Close()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	var changes, all counter
	defer l.SubscribeChanges(changes.inc)()
	defer l.Subscribe(all.inc)()
	v := l.Snapshot().Version

	// Calls that change nothing.
	clk.Advance(time.Second)
	l.SetReading(0)
	l.Focus()
	l.Reconnect()
	c.Focus()
	c.Reconnect()
	c.Revalidate(func(string) bool { return false })
	l.SetGetKey(pageKeys("k"))
	fetch.Set(c, "unrelated", 1)
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	if nv := l.Snapshot().Version; nv != v {
		t.Logf("no-op calls changed Version %d → %d", v, nv)
	} else if n := changes.get(); n != 0 {
		t.Errorf("Version stayed %d but SubscribeChanges was called %d times", v, n)
	}

	// Many concurrent changes: a change-only subscriber is called at most
	// once per version step.
	v0, c0, a0 := l.Snapshot().Version, changes.get(), all.get()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				switch (g + i) % 4 {
				case 0:
					l.Mutate(wantPages(2, g*100+i), false)
				case 1:
					l.Revalidate()
				case 2:
					l.SetSize(1 + (g+i)%3)
				case 3:
					l.MutateFunc(func(p [][]int) [][]int { return p }, nil)
				}
			}
		})
	}
	wg.Wait()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	v1 := l.Snapshot().Version
	dc, da := changes.get()-c0, all.get()-a0
	t.Logf("storm: Version %d → %d, Subscribe calls %d, SubscribeChanges calls %d", v0, v1, da, dc)
	if dc == 0 {
		t.Errorf("the state changed (Version %d → %d) but SubscribeChanges was never called", v0, v1)
	}
	if dc > int64(v1-v0) {
		t.Errorf("SubscribeChanges was called %d times for %d version steps: some calls were spurious", dc, v1-v0)
	}
}

// ---------------------------------------------------------------------------
// Hostile and clumsy use.

func TestBlackBox14CallsAfterClose(t *testing.T) {
	c, clk := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 6)
	b.addPages("z", 6)
	b.addPages("y", 6)
	l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{InitialSize: 2, MaxPages: 3})
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	var notes counter
	l.Subscribe(notes.inc)
	l.Close()
	n, calls := notes.get(), b.total()

	clk.Advance(time.Minute)
	noPanic(t, "calls after Close", func() {
		l.Revalidate()
		l.RevalidateFunc(func([]int, string) bool { return true })
		l.SetSize(5)
		l.SetSizeFunc(func(n int) int { return n + 3 })
		l.Mutate(wantPages(3, 9), true)
		l.MutateFunc(func(p [][]int) [][]int { return append(p, []int{1}) }, func([]int, string) bool { return true })
		l.SetGetKey(pageKeys("z"))
		l.SetReading(1)
		l.Focus()
		l.Reconnect()
		c.Focus()
		c.Reconnect()
		c.Revalidate(func(string) bool { return true })
		un := l.Subscribe(notes.inc)
		un()
		un()
		un2 := l.SubscribeChanges(notes.inc)
		un2()
		_ = l.Snapshot()
		l.Close()
	})
	waitIdle(t, l)
	// A fresh list on the same cache, as a barrier for anything asynchronous.
	l2 := fetch.NewInfinite(t.Context(), c, pageKeys("y"), b.fetcher(), fetch.InfiniteOptions[[]int]{})
	defer l2.Close()
	waitIdle(t, l2)
	if got := b.total() - b.count("y0"); got != calls {
		t.Errorf("a closed list fetched again: %d → %d calls", calls, got)
	}
	if got := notes.get(); got != n {
		t.Errorf("a closed list notified subscribers %d more times", got-n)
	}
}

func TestBlackBox14ConcurrentSetSizeMutateRevalidate(t *testing.T) {
	c, clk := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 8)
	l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{
		Config: fetch.Config{DedupingInterval: fetch.Off},
	})
	defer l.Close()
	var bad atomic.Value
	check := func(s fetch.InfiniteState[[]int]) {
		if len(s.Data) > s.Size {
			bad.Store(fmt.Sprintf("len(Data) %d > Size %d", len(s.Data), s.Size))
		}
		for i, p := range s.Data {
			if len(p) > 0 && p[0] != 10*i {
				bad.Store(fmt.Sprintf("page %d holds %v: pages out of order", i, p))
			}
		}
	}
	defer l.Subscribe(func() { check(l.Snapshot()) })()
	var wg sync.WaitGroup
	for g := range 12 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for range 40 {
				switch r.IntN(7) {
				case 0:
					l.SetSize(r.IntN(8) - 2)
				case 1:
					d := r.IntN(3) - 1
					l.SetSizeFunc(func(n int) int { return n + d })
				case 2:
					l.Mutate(wantPages(r.IntN(5), -1), r.IntN(2) == 0)
				case 3:
					l.Revalidate()
				case 4:
					l.MutateFunc(func(p [][]int) [][]int { return p }, somePages(r.Uint64()))
				case 5:
					l.RevalidateFunc(func([]int, string) bool { return true })
				case 6:
					l.Focus()
				}
				check(l.Snapshot())
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			c.Reconnect()
			runtime.Gosched()
		}
	})
	wg.Wait()
	_ = clk
	if v := bad.Load(); v != nil {
		t.Errorf("invariant broken under concurrent use: %v", v)
	}
	l.SetSize(4)
	l.Revalidate()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	s := l.Snapshot()
	checkData(t, "after the storm, SetSize(4) and Revalidate", s.Data, wantPages(4, 0))
	for i, p := range s.Data {
		if v, ok := fetch.Get[[]int](c, pk("k", i)); !ok || !reflect.DeepEqual(v, p) {
			t.Errorf("page %d shown %v, cached %v (%v)", i, p, v, ok)
		}
	}
	if d := b.duplicates(); len(d) > 0 {
		t.Errorf("the same key was fetched twice at once: %v", d)
	}
}

// goroutines counts the running goroutines but the one the js/wasm runtime
// starts to deliver events once a test has slept (runtime.handleEvent):
// the runtime's, not the package's.
func goroutines() int {
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	return runtime.NumGoroutine() - strings.Count(stacks, "runtime.handleEvent(")
}

func TestBlackBox14NoGoroutineLeftAfterClose(t *testing.T) {
	base := goroutines()
	c, clk := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 8)
	release := b.hold("k3") // blocks until cancelled
	defer release()
	var lists []*fetch.Infinite[[]int]
	for i := range 4 {
		l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{
			InitialSize: 2 + i,
			Config:      fetch.Config{RefreshInterval: time.Second},
			Parallel:    i == 3,
		})
		l.Subscribe(func() {})
		lists = append(lists, l)
	}
	clk.Advance(2 * time.Second)
	b.waitFor(t, "page 3 to be requested", func() bool { return b.calls["k3"] > 0 })
	for _, l := range lists {
		l.Revalidate()
		l.Close()
	}
	deadline := time.Now().Add(patience)
	for goroutines() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines left after Close (base %d):\n%s", goroutines(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
	if clk.Pending() != 0 {
		t.Errorf("%d timers still scheduled after every list was closed", clk.Pending())
	}
}

func TestBlackBox14SizeZeroOrNegative(t *testing.T) {
	c, _ := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 6)
	l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{InitialSize: 2})
	defer l.Close()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	for _, set := range []struct {
		name string
		do   func()
	}{
		{"SetSize(0)", func() { l.SetSize(0) }},
		{"SetSize(-3)", func() { l.SetSize(-3) }},
		{"SetSizeFunc(n-10)", func() { l.SetSizeFunc(func(n int) int { return n - 10 }) }},
	} {
		l.SetSize(2)
		waitIdle(t, l)
		noPanic(t, set.name, set.do)
		if err := waitIdle(t, l); err != nil {
			t.Errorf("%s: Wait = %v", set.name, err)
		}
		if s := l.Snapshot(); s.Size != 0 || len(s.Data) != 0 || s.IsLoadingMore {
			t.Errorf("%s: Size %d, %d pages, IsLoadingMore %v; want 0, 0, false", set.name, s.Size, len(s.Data), s.IsLoadingMore)
		}
	}
	l.SetSize(3)
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	checkData(t, "SetSize(3) after 0", l.Snapshot().Data, wantPages(3, 0))

	for _, initial := range []int{-4, -1} {
		var l2 *fetch.Infinite[[]int]
		noPanic(t, fmt.Sprintf("InitialSize %d", initial), func() {
			l2 = fetch.NewInfinite(t.Context(), c, pageKeys("z"), b.fetcher(), fetch.InfiniteOptions[[]int]{InitialSize: initial})
		})
		waitIdle(t, l2)
		if s := l2.Snapshot(); s.Size < 0 || len(s.Data) > s.Size {
			t.Errorf("InitialSize %d: Size %d, %d pages", initial, s.Size, len(s.Data))
		}
		l2.Close()
	}
}

func TestBlackBox14UnsubscribeInsideCallback(t *testing.T) {
	c, clk := newCache(fetch.CacheOptions{})
	b := indexBackend("k", 6)
	l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{})
	defer l.Close()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	var selfCalls, changeCalls, otherCalls counter
	ready := make(chan struct{})
	var unsubSelf, unsubChanges func()
	var onceSelf, onceChanges sync.Once
	unsubSelf = l.Subscribe(func() {
		<-ready
		selfCalls.inc()
		_ = l.Snapshot() // calling back into the list is allowed
		onceSelf.Do(func() { unsubSelf() })
	})
	unsubChanges = l.SubscribeChanges(func() {
		<-ready
		changeCalls.inc()
		onceChanges.Do(func() { unsubChanges() })
	})
	defer l.Subscribe(otherCalls.inc)()
	close(ready)

	clk.Advance(time.Minute)
	l.Revalidate()
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	if selfCalls.get() == 0 || changeCalls.get() == 0 {
		t.Fatalf("subscribers not called on Revalidate (%d, %d)", selfCalls.get(), changeCalls.get())
	}
	s1, c1, o1 := selfCalls.get(), changeCalls.get(), otherCalls.get()
	l.Mutate(wantPages(1, 4), false)
	l.SetSize(3)
	if err := waitIdle(t, l); err != nil {
		t.Fatal(err)
	}
	if selfCalls.get() != s1 || changeCalls.get() != c1 {
		t.Errorf("subscribers that unsubscribed inside their callback were called again (%d → %d, %d → %d)",
			s1, selfCalls.get(), c1, changeCalls.get())
	}
	if otherCalls.get() == o1 {
		t.Errorf("another subscriber stopped being called after two unsubscribed themselves")
	}
}

// somePages is a revalidate predicate choosing pages by the bits of pick; it
// is safe to call from any goroutine.
func somePages(pick uint64) func(page []int, key string) bool {
	return func(_ []int, key string) bool { return pick>>(len(key)+int(key[len(key)-1]))%64&1 == 1 }
}

// ---------------------------------------------------------------------------
// The property test of the issue.

func TestBlackBox14Invariants(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 14))
			c, clk := newCache(fetch.CacheOptions{})
			const n = 8
			b := indexBackend("k", n)
			gens := make([]int, n)
			l := fetch.NewInfinite(t.Context(), c, pageKeys("k"), b.fetcher(), fetch.InfiniteOptions[[]int]{
				Config:    fetch.Config{RetryOnError: fetch.Bool(false)},
				AllAtOnce: seed%2 == 0,
			})
			var lastVersion atomic.Uint64
			var bad atomic.Value
			check := func(s fetch.InfiniteState[[]int]) {
				if len(s.Data) > s.Size {
					bad.Store(fmt.Sprintf("len(Data) %d > Size %d", len(s.Data), s.Size))
				}
				for i, p := range s.Data {
					if len(p) > 0 && p[0] != 10*i {
						bad.Store(fmt.Sprintf("page %d holds %v", i, p))
					}
				}
			}
			defer l.Subscribe(func() { check(l.Snapshot()) })()
			for step := range 80 {
				switch r.IntN(9) {
				case 0:
					l.SetSize(r.IntN(7) - 1)
				case 1:
					l.SetSizeFunc(func(n int) int { return n + 1 })
				case 2:
					i := r.IntN(n)
					gens[i]++
					b.set(pk("k", i), pg(i, gens[i]))
				case 3:
					l.Revalidate()
				case 4:
					clk.Advance(time.Duration(r.IntN(10)) * time.Second)
					l.Focus()
				case 5:
					i := r.IntN(n)
					b.setFail(pk("k", i), errBoom)
					l.Revalidate()
					waitIdle(t, l)
					b.setFail(pk("k", i), nil)
				case 6:
					l.Mutate(wantPages(r.IntN(6), -step), r.IntN(2) == 0)
				case 7:
					l.MutateFunc(func(p [][]int) [][]int {
						out := slices.Clone(p)
						if len(out) > 0 {
							out[len(out)-1] = []int{10 * (len(out) - 1), -1000 - step}
						}
						return out
					}, somePages(r.Uint64()))
				case 8:
					clk.Advance(time.Duration(r.IntN(3)) * time.Second)
					l.RevalidateFunc(somePages(r.Uint64()))
				}
				s := l.Snapshot()
				check(s)
				if s.Version < lastVersion.Load() {
					t.Fatalf("step %d: Version went back %d → %d", step, lastVersion.Load(), s.Version)
				}
				lastVersion.Store(s.Version)
				if r.IntN(3) == 0 {
					waitIdle(t, l)
					s := l.Snapshot()
					if s.IsValidating {
						t.Errorf("step %d: idle after Wait but IsValidating", step)
					}
					for i, p := range s.Data {
						if v, ok := fetch.Get[[]int](c, pk("k", i)); !ok || !reflect.DeepEqual(v, p) {
							t.Errorf("step %d: idle, page %d shown %v but cached %v (%v)", step, i, p, v, ok)
						}
					}
				}
			}
			if v := bad.Load(); v != nil {
				t.Errorf("invariant broken: %v", v)
			}
			l.SetSize(5)
			l.Revalidate()
			if err := waitIdle(t, l); err != nil {
				t.Fatal(err)
			}
			want := make([][]int, 5)
			for i := range want {
				want[i] = pg(i, gens[i])
			}
			checkData(t, "final Revalidate", l.Snapshot().Data, want)
			if d := b.duplicates(); len(d) > 0 {
				t.Errorf("the same key was fetched twice at once: %v", d)
			}
			l.Close()
		})
	}
}
