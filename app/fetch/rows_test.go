package fetch

import "testing"

func TestRowsPlaceDroppedPagesAsPlaceholders(t *testing.T) {
	s := InfiniteState[[]string]{
		Data:    [][]string{nil, {"c", "d", "e"}, {}, {"f"}},
		Dropped: []bool{true, false, false, false},
		Counts:  []int{2, 3, 0, 1},
	}
	r := RowsOf(s, func(p []string) []string { return p })
	if r.Len() != 6 {
		t.Fatalf("Len = %d, want 6 (2 placeholders, 3, 0 and 1 items)", r.Len())
	}
	want := []struct {
		item string
		ok   bool
		page int
	}{{"", false, 0}, {"", false, 0}, {"c", true, 1}, {"d", true, 1}, {"e", true, 1}, {"f", true, 3}}
	for i, w := range want {
		item, ok := r.At(i)
		if item != w.item || ok != w.ok || r.Page(i) != w.page {
			t.Errorf("row %d: At = %q, %v; Page = %d; want %q, %v, page %d", i, item, ok, r.Page(i), w.item, w.ok, w.page)
		}
	}
	for _, i := range []int{-1, 6, 100} {
		if _, ok := r.At(i); ok {
			t.Errorf("row %d exists", i)
		}
	}
	if empty := RowsOf(InfiniteState[[]string]{}, func(p []string) []string { return p }); empty.Len() != 0 || empty.Page(0) != 0 {
		t.Errorf("rows of nothing: Len %d", empty.Len())
	}
}
