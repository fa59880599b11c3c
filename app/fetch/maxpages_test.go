package fetch

import (
	"context"
	"slices"
	"strconv"
	"testing"
)

// MaxPages: a bounded list keeps the pages nearest the reader, drops the
// rest from the list and the cache, and fetches them again when read.

// held returns the indexes of the pages whose data the list holds.
func held[P any](s InfiniteState[P]) []int {
	var out []int
	for i := range s.Data {
		if s.Dropped == nil || !s.Dropped[i] {
			out = append(out, i)
		}
	}
	return out
}

func span(lo, hi int) []int {
	var out []int
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

func cursorKey(cursor string) string {
	if cursor == "" {
		return "/t?limit=5"
	}
	return "/t?cursor=" + cursor + "&limit=5"
}

func countItems(p CursorPage[int]) int { return len(p.Data) }

// boundedList is a cursor list over 1,000 items (200 pages of 5) with
// MaxPages 5, grown by a hundred load-mores.
func boundedList(t *testing.T) (*env, *keyset, *fake[CursorPage[int]], *Infinite[CursorPage[int]]) {
	e := newEnv(t, CacheOptions{})
	srv := &keyset{}
	for v := 1000; v > 0; v-- {
		srv.items = append(srv.items, v)
	}
	f := autoFake(srv.page)
	l := newList(e, CursorKeys[int]("/t", nil, 5), f, InfiniteOptions[CursorPage[int]]{MaxPages: 5, Count: countItems})
	ctx := context.Background()
	if err := l.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		l.SetSizeFunc(func(n int) int { return n + 1 })
		if err := l.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return e, srv, f, l
}

func TestMaxPagesBoundsWhatAListHolds(t *testing.T) {
	e, _, f, l := boundedList(t)
	s := l.Snapshot()
	if len(s.Data) != 101 || s.Size != 101 || !s.HasMore {
		t.Fatalf("after 100 load-mores: %d pages, size %d, HasMore %v", len(s.Data), s.Size, s.HasMore)
	}
	if got := held(s); !slices.Equal(got, span(96, 101)) {
		t.Fatalf("held pages %v, want the last five", got)
	}
	// Five pages and the size are cached; the dropped pages are gone.
	if n := e.cache.Len(); n != 6 {
		t.Fatalf("the cache holds %d keys, want 5 pages and the size", n)
	}
	for i, c := range s.Counts {
		if c != 5 {
			t.Fatalf("page %d counts %d items, want 5 (dropped pages keep their count)", i, c)
		}
	}
	for _, i := range held(s) {
		if want := 1000 - 5*i; s.Data[i].Data[0] != want {
			t.Fatalf("page %d starts with %d, want %d", i, s.Data[i].Data[0], want)
		}
	}
	// Every page was fetched once, and the first page was revalidated
	// only while it was held (the first few load-mores).
	keys := f.keys()
	first := 0
	for _, k := range keys {
		if k == cursorKey("") {
			first++
		}
	}
	if distinct := len(slices.Compact(slices.Sorted(slices.Values(keys)))); distinct != 101 || first > 6 || len(keys) != 100+first {
		t.Fatalf("%d fetches of %d keys, the first page %d times", len(keys), distinct, first)
	}
}

func TestMaxPagesReadingFetchesDroppedPagesAgain(t *testing.T) {
	e, _, f, l := boundedList(t)
	ctx := context.Background()

	f.clear()
	l.SetReading(0)
	if err := l.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	s := l.Snapshot()
	if got := held(s); !slices.Equal(got, span(0, 5)) {
		t.Fatalf("reading the top: held %v", got)
	}
	f.wantKeys(t, cursorKey(""), cursorKey("996"), cursorKey("991"), cursorKey("986"), cursorKey("981"))
	if got := CursorItems(s.Data[:5]); len(got) != 25 || got[0] != 1000 || got[24] != 976 {
		t.Fatalf("the top pages hold %v", got)
	}
	if len(s.Data) != 101 || s.Size != 101 || !s.HasMore || e.cache.Len() != 6 {
		t.Fatalf("reading changed the list: %d pages, size %d, HasMore %v, %d cached", len(s.Data), s.Size, s.HasMore, e.cache.Len())
	}

	// The middle: pages 48..52, each fetched once; page 0 is no longer
	// revalidated once it is dropped.
	f.clear()
	l.SetReading(50)
	if err := l.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if got := held(l.Snapshot()); !slices.Equal(got, span(48, 53)) {
		t.Fatalf("reading page 50: held %v", got)
	}
	var want []string
	for i := 48; i < 53; i++ {
		want = append(want, cursorKey(strconv.Itoa(1000-5*i+1))) // the item before
	}
	f.wantKeys(t, want...)

	// Reading within the held pages costs nothing.
	f.clear()
	version := l.Snapshot().Version
	l.SetReading(49)
	l.SetReading(51)
	if err := l.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if v := l.Snapshot().Version; v != version || len(f.keys()) != 0 {
		t.Fatalf("moving inside the held pages: version %d → %d, fetched %v", version, v, f.keys())
	}

	// A revalidation refetches the held pages only.
	f.clear()
	l.Revalidate()
	if err := l.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	f.wantKeys(t, want...)
}

func TestMaxPagesHasMoreWhenTheLastPageIsDropped(t *testing.T) {
	for _, opts := range []InfiniteOptions[[]int]{
		{MaxPages: 3, HasMore: IndexHasMore[int](2)},
		{MaxPages: 3, HasMore: IndexHasMore[int](2), AllAtOnce: true},
		{MaxPages: 3, Parallel: true, HasMore: IndexHasMore[int](2)},
	} {
		t.Run("", func(t *testing.T) {
			e := newEnv(t, CacheOptions{})
			f := autoFake(items(23)) // 12 pages, the last one short
			l := newList(e, IndexKeys[int]("/items", 2), f, opts)
			ctx := context.Background()
			l.SetSize(12)
			if err := l.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			s := l.Snapshot()
			if s.HasMore || len(s.Data) != 12 || !slices.Equal(held(s), []int{9, 10, 11}) {
				t.Fatalf("all loaded: %d pages, held %v, HasMore %v", len(s.Data), held(s), s.HasMore)
			}
			l.SetReading(0)
			if err := l.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			s = l.Snapshot()
			if s.HasMore || len(s.Data) != 12 || !slices.Equal(held(s), []int{0, 1, 2}) {
				t.Fatalf("reading the top: %d pages, held %v, HasMore %v", len(s.Data), held(s), s.HasMore)
			}
			equalData(t, s.Data[0], []int{0, 1})
			if s.Data[11] != nil {
				t.Fatalf("a dropped page still holds %v", s.Data[11])
			}
			// Asking for one more page from the top loads the (empty)
			// page after the end, and leaves the top pages held.
			l.SetSize(13)
			if err := l.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			if s := l.Snapshot(); len(s.Data) != 13 || s.HasMore || !slices.Equal(held(s), []int{0, 1, 2}) {
				t.Fatalf("growing past the end: %d pages, held %v, HasMore %v", len(s.Data), held(s), s.HasMore)
			}
			if f.dups != 0 {
				t.Fatalf("%d duplicate requests in flight", f.dups)
			}
		})
	}
}

func TestMaxPagesMutateFuncLeavesDroppedPagesDropped(t *testing.T) {
	_, _, f, l := boundedList(t)
	f.clear()
	l.MutateFunc(func(pages []CursorPage[int]) []CursorPage[int] {
		out := slices.Clone(pages)
		last := len(out) - 1
		out[last] = CursorPage[int]{Data: []int{-1}, NextCursor: out[last].NextCursor}
		out[0] = CursorPage[int]{Data: []int{-2}, NextCursor: "x"} // dropped: ignored
		return out
	}, nil)
	s := l.Snapshot()
	if len(s.Data) != 101 || !slices.Equal(held(s), span(96, 101)) {
		t.Fatalf("after MutateFunc: %d pages, held %v", len(s.Data), held(s))
	}
	if s.Data[0].Data != nil || !slices.Equal(s.Data[100].Data, []int{-1}) {
		t.Fatalf("after MutateFunc: page 0 %v, page 100 %v", s.Data[0], s.Data[100])
	}
	if len(f.keys()) != 0 {
		t.Fatalf("MutateFunc without a predicate fetched %v", f.keys())
	}
}
