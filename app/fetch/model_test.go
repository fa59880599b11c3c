package fetch

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
)

// FuzzInfiniteModel drives a list with random sequences of SetSize,
// Mutate, MutateFunc, Revalidate, focus, key changes (null included) and
// failing fetches, against a reference model of what it must show, and
// checks the invariants after each step once the list is idle:
//
//   - len(Data) ≤ Size, and without failures len(Data) == the pages the
//     server has, up to Size;
//   - pages are in order: page i is the page under getKey(i, page i-1);
//   - each page equals its cache entry;
//   - no key was ever requested twice at once;
//   - after Close, no goroutine of the package is left;
//   - and once more with MaxPages 2 and a reader moving about: at most
//     two pages hold data, the others keep their place and keys.
//
// Its seeds run in make test (natively with -race, and under GOOS=js).
func FuzzInfiniteModel(f *testing.F) {
	f.Add([]byte{0, 3, 1, 2, 4, 5, 6, 7, 0, 9})
	f.Add([]byte{5, 5, 5, 6, 0, 2, 3, 3, 3, 1, 7, 8, 7, 0})
	f.Add([]byte{8, 0, 4, 1, 8, 2, 6, 9, 9, 3, 5, 0, 1, 2, 4, 6, 7, 8})
	f.Add([]byte{6, 7, 6, 7, 1, 1, 2, 2, 0, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 64 {
			ops = ops[:64]
		}
		runModel(t, ops, 0)
		runModel(t, ops, 2)
	})
}

func runModel(t *testing.T, ops []byte, maxPages int) {
	e := newEnv(t, CacheOptions{})
	var failing atomic.Bool
	const n = 9 // items per search; pages of 2, so 5 pages
	f := autoFake(func(key string) (ints, error) {
		if failing.Load() {
			return nil, errBoom
		}
		runtime.Gosched() // a little slowness, so requests overlap
		return items(n)(key)
	})
	searches := []string{"a", "b", ""}
	search := 0
	getKey := func(q string) GetKey[ints] {
		return func(i int, prev *ints) (string, bool) {
			if q == "" {
				return "", false
			}
			return searchKeys(q)(i, prev)
		}
	}
	l := NewInfinite(context.Background(), e.cache, getKey(searches[0]), f.fetch,
		InfiniteOptions[ints]{Config: Config{RetryOnError: Bool(false)}, HasMore: IndexHasMore[int](2), MaxPages: maxPages})
	ctx := context.Background()
	for step, op := range ops {
		switch op % 10 {
		case 0:
			l.SetSize(int(op/10) % 7)
		case 1:
			l.SetSizeFunc(func(s int) int { return s + 1 })
		case 2:
			l.Revalidate()
		case 3:
			e.clock.Advance(DefaultFocusThrottleInterval)
			l.Focus()
		case 4:
			search = (search + 1) % len(searches)
			l.SetGetKey(getKey(searches[search]))
		case 5:
			failing.Store(!failing.Load())
		case 6:
			l.Mutate([]ints{{100 + step}}, op%20 < 10)
		case 7:
			l.MutateFunc(func(pages []ints) []ints { return pages }, func(_ ints, key string) bool { return len(key)%2 == 0 })
		case 8:
			l.RevalidateFunc(func(page ints, _ string) bool { return len(page) > 0 })
		case 9:
			e.cache.Reconnect()
		}
		if maxPages > 0 {
			l.SetReading(int(op/10)%7 - 1)
		}
		l.Wait(ctx)
		checkModel(t, l, failing.Load(), n, step, op%10 == 2 && searches[search] != "", maxPages)
	}
	l.Close()
	quiesce(t, e.cache)
	if f.dups != 0 {
		t.Fatalf("%d requests for a key already in flight", f.dups)
	}
}

// checkModel checks the invariants; after a Revalidate without failures
// (exact), the reference model too: the pages are the server's, as many
// as the chain has up to Size.
func checkModel(t *testing.T, l *Infinite[ints], failing bool, n, step int, exact bool, maxPages int) {
	t.Helper()
	s := l.Snapshot()
	if s.IsValidating {
		return // a key change or retry started meanwhile; checked next step
	}
	if len(s.Data) > s.Size {
		t.Fatalf("step %d: %d pages shown for size %d", step, len(s.Data), s.Size)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.hasFirst {
		if s.Data != nil && len(s.Data) > 0 && l.currentLocked() {
			t.Fatalf("step %d: pages shown for a null key", step)
		}
		return
	}
	holding := 0
	for _, p := range l.pages {
		if p.real && !p.dropped {
			holding++
		}
	}
	if maxPages > 0 && holding > maxPages {
		t.Fatalf("step %d: %d pages hold data, MaxPages is %d", step, holding, maxPages)
	}
	for i, p := range l.pages {
		if !p.real {
			return // fallback or previous data, not this key's
		}
		if p.dropped || (i > 0 && l.pages[i-1].dropped) {
			continue // no data to check, or to compute the key from
		}
		var prev *ints
		if i > 0 {
			prev = ptr(l.pages[i-1].data)
		}
		key, ok := l.keyLocked(i, prev)
		if !ok || key != p.key {
			t.Fatalf("step %d: page %d is under %q, getKey gives %q (%v)", step, i, p.key, key, ok)
		}
		if v, ok := Get[ints](l.cache, p.key); ok && !l.equal(v, p.data) {
			t.Fatalf("step %d: page %d shows %v, its cache entry is %v", step, i, p.data, v)
		}
	}
	if exact && !failing && s.Err == nil {
		// The reference: IndexKeys over n items in pages of 2 gives pages
		// 0..(n-1)/2 and one empty page after them, then null.
		var want []ints
		for i := 0; i < s.Size && i <= (n+1)/2; i++ {
			page, _ := items(n)(sq(l.firstKey[len("/items?q="):len("/items?q=")+1], i))
			want = append(want, page)
		}
		if len(s.Data) != len(want) {
			t.Fatalf("step %d: after Revalidate %d pages shown, the model says %d (size %d)", step, len(s.Data), len(want), s.Size)
		}
		for i := range want {
			if s.Dropped != nil && s.Dropped[i] {
				continue
			}
			if !l.equal(s.Data[i], want[i]) {
				t.Fatalf("step %d: page %d is %v, the model says %v", step, i, s.Data[i], want[i])
			}
		}
	}
}
