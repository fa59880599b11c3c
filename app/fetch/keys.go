package fetch

import (
	"net/url"
	"strconv"
	"strings"
)

// GetKey is SWR's getKey(pageIndex, previousPageData): it returns the key
// of page pageIndex (zero-based), or ok == false for SWR's null, which stops
// the list there: that page is not requested and no later page is asked for.
// previousPageData is nil for the first page and otherwise points at the
// previous page's data, which it must not modify or keep; it is always nil
// for a list with InfiniteOptions.Parallel. The key is what the Fetcher
// receives.
//
// GetKey must be a pure function of its arguments (and of whatever the
// list's data source is, e.g. a search string, captured when it was built):
// it is called often, under the list's lock.
type GetKey[P any] func(pageIndex int, previousPageData *P) (key string, ok bool)

// IndexKeys is the getKey of index-based pagination, for endpoints like
// GET /api/extensions/{id}/bundles?page=N&limit=L that answer a JSON array,
// with pages numbered from 0. It is null once the previous page exists and
// is empty (a JSON [] or null); otherwise it is basePath with page=index and
// limit appended (limit is left out when not positive). basePath may carry a
// query of its own.
func IndexKeys[T any](basePath string, limit int) GetKey[[]T] {
	sep := "?"
	if strings.Contains(basePath, "?") {
		sep = "&"
	}
	suffix := ""
	if limit > 0 {
		suffix = "&limit=" + strconv.Itoa(limit)
	}
	return func(pageIndex int, prev *[]T) (string, bool) {
		if prev != nil && len(*prev) == 0 {
			return "", false
		}
		return basePath + sep + "page=" + strconv.Itoa(pageIndex) + suffix, true
	}
}

// IndexHasMore is an InfiniteOptions.HasMore for index-based lists: there
// is no more once a page came back shorter than limit. Without it, HasMore
// stays true until an empty page has been fetched, as IndexKeys's null rule
// implies — and, with InfiniteOptions.Parallel (getKey sees no previous
// page), always.
func IndexHasMore[T any](limit int) func(pages [][]T) bool {
	return func(pages [][]T) bool {
		return len(pages) == 0 || len(pages[len(pages)-1]) >= limit
	}
}

// Total is the number of items across index-based pages: the sum of the
// page lengths.
func Total[T any](pages [][]T) int {
	n := 0
	for _, p := range pages {
		n += len(p)
	}
	return n
}

// Flatten concatenates index-based pages.
func Flatten[T any](pages [][]T) []T {
	out := make([]T, 0, Total(pages))
	for _, p := range pages {
		out = append(out, p...)
	}
	return out
}

// CursorPage is one page of a cursor-based endpoint:
// {"data": [...], "nextCursor": "..."}, nextCursor absent on the last page.
//
// Data is nil when "data" was missing (or null) and non-nil, possibly
// empty, when it was present: encoding/json leaves a missing field nil and
// decodes [] to an empty slice. CursorKeys relies on that difference.
type CursorPage[T any] struct {
	Data       []T    `json:"data"`
	NextCursor string `json:"nextCursor,omitempty"`
	// Revision, where the endpoint gives one, is a revision of the list
	// the page is at least as new as: a change announced with a revision
	// up to it is in the page already.
	Revision int64 `json:"revision,omitempty"`
}

// CursorKeys is the getKey of cursor-based pagination, for endpoints like
// GET /api/extensions/{id}/testers?cursor=C&limit=L&q=…&status=… that answer
// a CursorPage. Page 0 has limit only (plus params); later pages add
// cursor=previousPageData.NextCursor. It is null once the previous page
// exists and its data is missing (Data == nil) or it has no nextCursor.
// The query is encoded in key order, so equal lists give equal keys. limit
// is left out when not positive; params is not modified.
func CursorKeys[T any](basePath string, params url.Values, limit int) GetKey[CursorPage[T]] {
	base := url.Values{}
	for k, vs := range params {
		base[k] = append([]string(nil), vs...)
	}
	if limit > 0 {
		base.Set("limit", strconv.Itoa(limit))
	}
	return func(pageIndex int, prev *CursorPage[T]) (string, bool) {
		q := base
		if prev != nil {
			if prev.Data == nil || prev.NextCursor == "" {
				return "", false
			}
			q = url.Values{"cursor": {prev.NextCursor}}
			for k, vs := range base {
				q[k] = vs
			}
		}
		if len(q) == 0 {
			return basePath, true
		}
		return basePath + "?" + q.Encode(), true
	}
}

// CursorItems concatenates the data of cursor-based pages.
func CursorItems[T any](pages []CursorPage[T]) []T {
	n := 0
	for _, p := range pages {
		n += len(p.Data)
	}
	out := make([]T, 0, n)
	for _, p := range pages {
		out = append(out, p.Data...)
	}
	return out
}

// SizeKey is the cache key under which an Infinite list keeps its size:
// derived from the first page's key, like SWR's "$inf$" key, so a remount or
// a second list with the same first page sees the same size.
func SizeKey(firstPageKey string) string { return "$len$" + firstPageKey }
