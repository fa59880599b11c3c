package fetch

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestParallelGetKeyNeverSeesAPreviousPage pins InfiniteOptions.Parallel's
// promise, SWR's parallel: getKey is called with a nil previous page. Not
// only by a parallel pass, which computes every key up front, but by
// everything else that calls getKey: publishing a state (HasMore), growing
// the size, Mutate and MutateFunc, SetGetKey, and the cache's notification
// of a changed page arriving while a load-more is in flight.
func TestParallelGetKeyNeverSeesAPreviousPage(t *testing.T) {
	e := newEnv(t, CacheOptions{})

	var mu sync.Mutex
	phase := "first load"
	calls := map[string]int{} // getKey calls per phase
	var bad []string          // the calls that got a previous page
	setPhase := func(p string) {
		mu.Lock()
		phase = p
		mu.Unlock()
	}
	getKey := func(i int, prev *ints) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		calls[phase]++
		if prev != nil {
			bad = append(bad, fmt.Sprintf("%s: getKey(%d, &%v)", phase, i, *prev))
		}
		return byIndex(i, prev)
	}

	// Page 3 is held, so that a cache change can arrive during the
	// load-more that asks for it.
	started, release := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	t.Cleanup(open) // runs before the env's quiesce (LIFO): a failing test leaves nothing blocked
	server := items(100)
	f := autoFake(func(key string) (ints, error) {
		if key == pg(3) {
			select {
			case started <- struct{}{}:
			default:
			}
			<-release
		}
		return server(key)
	})
	l := newList(e, getKey, f, InfiniteOptions[ints]{InitialSize: 2, Parallel: true})
	s := idle(t, l)
	equalData(t, s.Data, []ints{{0, 1}, {2, 3}})

	setPhase("load more")
	l.SetSizeFunc(func(n int) int { return n + 1 })
	s = idle(t, l)
	equalData(t, s.Data, []ints{{0, 1}, {2, 3}, {4, 5}})

	setPhase("Mutate after a publish")
	l.Mutate([]ints{{0, 1}, {2, 3}, {40, 50}}, false)
	equalData(t, l.Snapshot().Data, []ints{{0, 1}, {2, 3}, {40, 50}})

	setPhase("Revalidate after a publish")
	l.Revalidate()
	s = idle(t, l)
	equalData(t, s.Data, []ints{{0, 1}, {2, 3}, {4, 5}})

	setPhase("MutateFunc after a publish")
	l.MutateFunc(func(pages []ints) []ints {
		out := slices.Clone(pages)
		out[1] = ints{20, 30}
		return out
	}, func(_ ints, key string) bool { return key == pg(1) })
	s = idle(t, l)
	equalData(t, s.Data, []ints{{0, 1}, {2, 3}, {4, 5}})

	setPhase("SetGetKey with the same first key")
	l.SetGetKey(getKey)
	s = idle(t, l)
	equalData(t, s.Data, []ints{{0, 1}, {2, 3}, {4, 5}})

	setPhase("load more, before the cache change")
	l.SetSizeFunc(func(n int) int { return n + 1 })
	select {
	case <-started:
	case <-time.After(testTimeout):
		t.Fatal("page 3 was never asked for")
	}
	setPhase("cache change during a load-more")
	Set(e.cache, pg(1), ints{-2, -3}) // another writer changes a shown page
	if s := l.Snapshot(); !s.IsLoadingMore || len(s.Data) != 3 || !slices.Equal(s.Data[1], ints{-2, -3}) {
		t.Fatalf("the change did not land during the load-more: IsLoadingMore %v, data %v", s.IsLoadingMore, s.Data)
	}
	setPhase("load more, after the cache change")
	open()
	s = idle(t, l)
	equalData(t, s.Data, []ints{{0, 1}, {-2, -3}, {4, 5}, {6, 7}})

	mu.Lock()
	defer mu.Unlock()
	for _, p := range []string{"first load", "load more", "Mutate after a publish", "Revalidate after a publish",
		"MutateFunc after a publish", "SetGetKey with the same first key", "cache change during a load-more"} {
		if calls[p] == 0 {
			t.Errorf("%s: getKey was never called, so the phase proves nothing", p)
		}
	}
	if len(bad) > 0 {
		t.Fatalf("a Parallel list called getKey with a previous page %d times:\n%s", len(bad), "\t"+strings.Join(bad, "\n\t"))
	}
}

// TestParallelListEndsByGetKeyOrByHasMore pins how a Parallel list learns
// there is no more, getKey never seeing the previous page: by getKey
// returning null for the page after the last one, or by the caller's
// InfiniteOptions.HasMore.
func TestParallelListEndsByGetKeyOrByHasMore(t *testing.T) {
	// 5 items, 2 a page: pages [0 1] [2 3] [4], then empty ones.
	t.Run("IndexKeys alone cannot see an empty page", func(t *testing.T) {
		e := newEnv(t, CacheOptions{})
		l := newList(e, byIndex, autoFake(items(5)), InfiniteOptions[ints]{InitialSize: 4, Parallel: true})
		s := idle(t, l)
		equalData(t, s.Data, []ints{{0, 1}, {2, 3}, {4}, {}})
		if !s.HasMore {
			t.Fatal("HasMore false: getKey gives a key for page 4, and cannot see that page 3 is empty")
		}
	})
	t.Run("IndexHasMore", func(t *testing.T) {
		e := newEnv(t, CacheOptions{})
		l := newList(e, byIndex, autoFake(items(5)), InfiniteOptions[ints]{
			InitialSize: 2, Parallel: true, HasMore: IndexHasMore[int](2)})
		if s := idle(t, l); !s.HasMore {
			t.Fatal("HasMore false after two full pages")
		}
		l.SetSizeFunc(func(n int) int { return n + 1 })
		s := idle(t, l)
		equalData(t, s.Data, []ints{{0, 1}, {2, 3}, {4}})
		if s.HasMore {
			t.Fatal("HasMore true after a short page")
		}
	})
	t.Run("getKey null by index", func(t *testing.T) {
		e := newEnv(t, CacheOptions{})
		three := func(i int, prev *ints) (string, bool) {
			if i >= 3 {
				return "", false
			}
			return byIndex(i, prev)
		}
		l := newList(e, three, autoFake(items(5)), InfiniteOptions[ints]{InitialSize: 2, Parallel: true})
		if s := idle(t, l); !s.HasMore {
			t.Fatal("HasMore false while getKey gives a key for page 2")
		}
		l.SetSizeFunc(func(n int) int { return n + 1 })
		s := idle(t, l)
		equalData(t, s.Data, []ints{{0, 1}, {2, 3}, {4}})
		if s.HasMore {
			t.Fatal("HasMore true while getKey is null for page 3")
		}
	})
}
