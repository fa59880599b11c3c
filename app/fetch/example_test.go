package fetch_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"

	"github.com/betaport/betaport/app/fetch"
)

type Bundle struct {
	Number int64 `json:"number"`
}

type Tester struct {
	Email string `json:"email"`
}

// settle waits for the list to finish loading, as a program would.
func settle[P any](l *fetch.Infinite[P]) fetch.InfiniteState[P] {
	l.Wait(context.Background())
	return l.Snapshot()
}

// The index convention: GET …/bundles?page=N&limit=L answers a JSON array;
// the list ends after an empty page.
func ExampleIndexKeys() {
	// 5 bundles, served newest first.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		fmt.Fprint(w, "[")
		for i, n := 0, 5-page*limit; i < limit && n > 0; i, n = i+1, n-1 {
			if i > 0 {
				fmt.Fprint(w, ",")
			}
			fmt.Fprintf(w, `{"number":%d}`, n)
		}
		fmt.Fprint(w, "]")
	}))
	defer srv.Close()

	cache := fetch.NewCache(fetch.CacheOptions{MaxEntries: 100})
	list := fetch.NewInfinite(context.Background(), cache,
		fetch.IndexKeys[Bundle]("/api/extensions/7/bundles", 2),
		fetch.JSONFetcher[[]Bundle](fetch.HTTPOptions{BaseURL: srv.URL}),
		fetch.InfiniteOptions[[]Bundle]{})
	defer list.Close()

	for s := settle(list); ; s = settle(list) {
		fmt.Printf("size %d: %d bundles, has more: %v\n", s.Size, fetch.Total(s.Data), s.HasMore)
		if !s.HasMore {
			break
		}
		list.SetSizeFunc(func(n int) int { return n + 1 }) // "load more"
	}
	for _, b := range fetch.Flatten(list.Snapshot().Data) {
		fmt.Print(b.Number, " ")
	}
	fmt.Println()
	// Output:
	// size 1: 2 bundles, has more: true
	// size 2: 4 bundles, has more: true
	// size 3: 5 bundles, has more: true
	// size 4: 5 bundles, has more: false
	// 5 4 3 2 1
}

// The cursor convention: GET …/testers?cursor=C&limit=L&q=… answers
// {"data": [...], "nextCursor": "…"}; the list ends on a page without
// nextCursor. Changing the search is SetGetKey.
func ExampleCursorKeys() {
	testers := []string{"ann@example.com", "anna@example.com", "bob@example.com"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var match []string
		for _, t := range testers {
			if len(t) >= len(q.Get("q")) && t[:len(q.Get("q"))] == q.Get("q") {
				match = append(match, t)
			}
		}
		from, _ := strconv.Atoi(q.Get("cursor"))
		limit, _ := strconv.Atoi(q.Get("limit"))
		to := min(from+limit, len(match))
		fmt.Fprint(w, `{"data":[`)
		for i, t := range match[from:to] {
			if i > 0 {
				fmt.Fprint(w, ",")
			}
			fmt.Fprintf(w, `{"email":%q}`, t)
		}
		fmt.Fprint(w, "]")
		if to < len(match) {
			fmt.Fprintf(w, `,"nextCursor":"%d"`, to)
		}
		fmt.Fprint(w, "}")
	}))
	defer srv.Close()

	search := func(q string) fetch.GetKey[fetch.CursorPage[Tester]] {
		return fetch.CursorKeys[Tester]("/api/extensions/7/testers", url.Values{"q": {q}}, 1)
	}
	cache := fetch.NewCache(fetch.CacheOptions{})
	list := fetch.NewInfinite(context.Background(), cache, search("ann"),
		fetch.JSONFetcher[fetch.CursorPage[Tester]](fetch.HTTPOptions{BaseURL: srv.URL}),
		fetch.InfiniteOptions[fetch.CursorPage[Tester]]{InitialSize: 5})
	defer list.Close()

	s := settle(list)
	fmt.Println(s.Key, len(s.Data), "pages", fetch.CursorItems(s.Data))

	list.SetGetKey(search("b")) // size goes back to InitialSize
	s = settle(list)
	fmt.Println(s.Key, len(s.Data), "page", fetch.CursorItems(s.Data))
	// Output:
	// /api/extensions/7/testers?limit=1&q=ann 2 pages [{ann@example.com} {anna@example.com}]
	// /api/extensions/7/testers?limit=1&q=b 1 page [{bob@example.com}]
}

// The base model: one keyed value. Classic previous/next pagination is a
// Query whose key holds the page index.
func ExampleNew() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `[{"number":%s}]`, r.URL.Query().Get("page"))
	}))
	defer srv.Close()

	cache := fetch.NewCache(fetch.CacheOptions{})
	key := func(page int) string { return "/api/extensions/7/bundles?limit=1&page=" + strconv.Itoa(page) }
	q := fetch.New(context.Background(), cache, key(0), fetch.JSONFetcher[[]Bundle](fetch.HTTPOptions{BaseURL: srv.URL}),
		fetch.Options[[]Bundle]{Config: fetch.Config{KeepPreviousData: true}})
	defer q.Close()

	wait := func() fetch.State[[]Bundle] {
		q.Wait(context.Background())
		return q.Snapshot()
	}
	fmt.Println(wait().Data)
	q.SetKey(key(1)) // "next"
	fmt.Println(wait().Data)
	// Output:
	// [{0}]
	// [{1}]
}

// A list that holds three pages at most: the reader's and its neighbours.
// The others keep their place (and item count) but not their data, which
// is fetched again when the reader comes back to them.
func ExampleInfiniteOptions_maxPages() {
	ctx := context.Background()
	cache := fetch.NewCache(fetch.CacheOptions{})
	twoPerPage := fetch.Func(func(_ context.Context, key string) ([]int, error) {
		u, _ := url.Parse(key)
		page, _ := strconv.Atoi(u.Query().Get("page"))
		return []int{2 * page, 2*page + 1}, nil
	})
	l := fetch.NewInfinite(ctx, cache, fetch.IndexKeys[int]("/items", 2), twoPerPage,
		fetch.InfiniteOptions[[]int]{MaxPages: 3, Count: func(p []int) int { return len(p) }})
	defer l.Close()

	held := func(s fetch.InfiniteState[[]int]) (pages []int) {
		for i := range s.Data {
			if !s.Dropped[i] {
				pages = append(pages, i)
			}
		}
		return pages
	}
	l.SetSize(10) // ten pages loaded, one after another
	s := settle(l)
	rows := fetch.RowsOf(s, func(p []int) []int { return p })
	_, ok := rows.At(0)
	fmt.Println(len(s.Data), "pages,", rows.Len(), "rows, held:", held(s), "row 0 held:", ok)

	l.SetReading(0) // the reader went back to the top
	s = settle(l)
	rows = fetch.RowsOf(s, func(p []int) []int { return p })
	first, _ := rows.At(0)
	fmt.Println("held:", held(s), "row 0:", first, "cached keys:", cache.Len())
	// Output:
	// 10 pages, 20 rows, held: [7 8 9] row 0 held: false
	// held: [0 1 2] row 0: 0 cached keys: 4
}
