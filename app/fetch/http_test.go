package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/betaport/betaport/app/api"
)

type bundle struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

func TestJSONFetcher(t *testing.T) {
	var mu sync.Mutex
	var got []string // method, URL, If-None-Match, Accept, Authorization
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, fmt.Sprintf("%s %s inm=%q accept=%q auth=%q", r.Method, r.URL, r.Header.Get("If-None-Match"), r.Header.Get("Accept"), r.Header.Get("Authorization")))
		mu.Unlock()
		switch r.URL.Path {
		case "/api/bundles":
			if r.Header.Get("If-None-Match") == `"v1"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `[{"id":1,"name":"one"}]`)
		case "/api/missing":
			w.Header().Set("Content-Type", "application/problem+json; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"type":"/problems/not-found","title":"Not Found","status":404,"detail":"no extension 7"}`)
		case "/api/broken":
			http.Error(w, "oops", http.StatusInternalServerError)
		case "/api/garbage":
			fmt.Fprint(w, `[{`)
		case "/api/big":
			fmt.Fprint(w, strings.Repeat(" ", 100)+"[]")
		}
	}))
	defer srv.Close()

	opts := HTTPOptions{BaseURL: srv.URL + "/app/", Header: http.Header{"Authorization": {"Bearer t"}}}
	fetch := JSONFetcher[[]bundle](opts)
	ctx := context.Background()

	t.Run("decodes, reports ETag and size, sends headers", func(t *testing.T) {
		r, err := fetch(ctx, "/api/bundles?page=0&limit=2", "")
		if err != nil || len(r.Data) != 1 || r.Data[0].Name != "one" || r.ETag != `"v1"` || r.Size != 23 {
			t.Fatalf("result %+v, %v", r, err)
		}
		mu.Lock()
		defer mu.Unlock()
		want := `GET /api/bundles?page=0&limit=2 inm="" accept="application/json, application/problem+json" auth="Bearer t"`
		if got[len(got)-1] != want {
			t.Fatalf("request %s\nwant    %s", got[len(got)-1], want)
		}
	})
	t.Run("sends If-None-Match; 304 is ErrNotModified", func(t *testing.T) {
		_, err := fetch(ctx, "/api/bundles", `"v1"`)
		if !errors.Is(err, ErrNotModified) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("problem details become an api.Problem", func(t *testing.T) {
		_, err := fetch(ctx, "/api/missing", "")
		he, ok := api.AsProblem(fmt.Errorf("wrapped: %w", err))
		if !ok || he.Status != 404 || he.Title != "Not Found" || he.Detail != "no extension 7" ||
			he.Type != "/problems/not-found" || err.Error() != "no extension 7" || !strings.HasSuffix(he.Instance, "/api/missing") {
			t.Fatalf("err = %#v", err)
		}
	})
	t.Run("other errors carry the status", func(t *testing.T) {
		_, err := fetch(ctx, "/api/broken", "")
		if he, ok := api.AsProblem(err); !ok || he.Status != 500 || err.Error() != "500 Internal Server Error" {
			t.Fatalf("err = %#v", err)
		}
	})
	t.Run("bad JSON is an error", func(t *testing.T) {
		if _, err := fetch(ctx, "/api/garbage", ""); err == nil || !strings.Contains(err.Error(), "/api/garbage") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("body limit", func(t *testing.T) {
		small := JSONFetcher[[]bundle](HTTPOptions{BaseURL: srv.URL, MaxBodyBytes: 10})
		if _, err := small(ctx, "/api/big", ""); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("absolute keys without a base URL", func(t *testing.T) {
		raw := HTTPFetcher(HTTPOptions{})
		if r, err := raw(ctx, srv.URL+"/api/bundles", ""); err != nil || !strings.HasPrefix(string(r.Data), "[") {
			t.Fatalf("%s, %v", r.Data, err)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := fetch(cctx, "/api/bundles", ""); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestHTTPInfinite runs a cursor list against a real HTTP server: the
// first page is revalidated with If-None-Match and costs a 304.
func TestHTTPInfinite(t *testing.T) {
	var mu sync.Mutex
	var log []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cursor := r.URL.Query().Get("cursor")
		etag := `"` + cursor + `"`
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get("If-None-Match") == etag {
			log = append(log, "304 "+r.URL.RawQuery)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		log = append(log, "200 "+r.URL.RawQuery)
		w.Header().Set("ETag", etag)
		switch cursor {
		case "":
			fmt.Fprint(w, `{"data":[{"id":1},{"id":2}],"nextCursor":"b"}`)
		case "b":
			fmt.Fprint(w, `{"data":[{"id":3}]}`)
		}
	}))
	defer srv.Close()

	e := newEnv(t, CacheOptions{})
	l := NewInfinite(context.Background(), e.cache, CursorKeys[bundle]("/api/extensions/7/testers", nil, 2),
		JSONFetcher[CursorPage[bundle]](HTTPOptions{BaseURL: srv.URL}), InfiniteOptions[CursorPage[bundle]]{})
	defer l.Close()
	idle(t, l)
	l.SetSize(3)
	s := idle(t, l)
	if n := len(CursorItems(s.Data)); n != 3 || s.HasMore {
		t.Fatalf("%d items, state %+v", n, s)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"200 limit=2", "304 limit=2", "200 cursor=b&limit=2"}
	if strings.Join(log, "|") != strings.Join(want, "|") {
		t.Fatalf("server saw %q, want %q", log, want)
	}
}
