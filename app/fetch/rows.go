package fetch

import "sort"

// Rows places a list's items on rows, one after another in page order, the
// pages MaxPages dropped included: a dropped page's rows are there, as many
// as it had (InfiniteOptions.Count), without items. A UI draws them as
// placeholders of the same height, so the scroll height and the rows below
// stay where they are while such a page is fetched again.
type Rows[T any] struct {
	items   [][]T
	dropped []bool
	starts  []int // the first row of each page
	total   int
}

// RowsOf returns the rows of s, items giving the items of a page.
func RowsOf[P, T any](s InfiniteState[P], items func(page P) []T) Rows[T] {
	r := Rows[T]{items: make([][]T, len(s.Data)), dropped: make([]bool, len(s.Data)), starts: make([]int, len(s.Data))}
	for i, p := range s.Data {
		r.starts[i] = r.total
		if s.Dropped != nil && s.Dropped[i] {
			r.dropped[i] = true
			if i < len(s.Counts) {
				r.total += s.Counts[i]
			}
			continue
		}
		r.items[i] = items(p)
		r.total += len(r.items[i])
	}
	return r
}

// Len is the number of rows.
func (r Rows[T]) Len() int { return r.total }

// Page returns the page that row i is on (0 when there is none).
func (r Rows[T]) Page(i int) int {
	return max(sort.Search(len(r.starts), func(k int) bool { return r.starts[k] > i })-1, 0)
}

// At returns row i's item, or false while its page is dropped (or i is not
// a row).
func (r Rows[T]) At(i int) (T, bool) {
	var zero T
	if i < 0 || i >= r.total {
		return zero, false
	}
	p := r.Page(i)
	if r.dropped[p] || i-r.starts[p] >= len(r.items[p]) {
		return zero, false
	}
	return r.items[p][i-r.starts[p]], true
}
