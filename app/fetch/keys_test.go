package fetch

import (
	"encoding/json"
	"net/url"
	"slices"
	"testing"
)

func TestIndexKeys(t *testing.T) {
	k := IndexKeys[int]("/api/extensions/7/bundles", 20)
	for _, c := range []struct {
		i    int
		prev *[]int
		want string
		ok   bool
	}{
		{0, nil, "/api/extensions/7/bundles?page=0&limit=20", true},
		{1, &[]int{1}, "/api/extensions/7/bundles?page=1&limit=20", true},
		{2, &[]int{}, "", false},
		{2, new([]int), "", false}, // a JSON null page is empty too
	} {
		if got, ok := k(c.i, c.prev); got != c.want || ok != c.ok {
			t.Errorf("getKey(%d, %v) = %q, %v; want %q, %v", c.i, c.prev, got, ok, c.want, c.ok)
		}
	}
	if got, _ := IndexKeys[int]("/x?q=a", 0)(3, &[]int{1}); got != "/x?q=a&page=3" {
		t.Errorf("with a query and no limit: %q", got)
	}
}

func TestCursorKeys(t *testing.T) {
	params := url.Values{"q": {"ann"}, "status": {"active"}}
	k := CursorKeys[int]("/api/extensions/7/testers", params, 50)
	type P = CursorPage[int]
	for _, c := range []struct {
		name string
		i    int
		prev *P
		want string
		ok   bool
	}{
		{"first page: limit only", 0, nil, "/api/extensions/7/testers?limit=50&q=ann&status=active", true},
		{"next page: cursor", 1, &P{Data: []int{1}, NextCursor: "x y"}, "/api/extensions/7/testers?cursor=x+y&limit=50&q=ann&status=active", true},
		{"empty data but a cursor goes on", 1, &P{Data: []int{}, NextCursor: "c"}, "/api/extensions/7/testers?cursor=c&limit=50&q=ann&status=active", true},
		{"no nextCursor: null", 2, &P{Data: []int{1}}, "", false},
		{"data missing: null", 2, &P{NextCursor: "c"}, "", false},
	} {
		if got, ok := k(c.i, c.prev); got != c.want || ok != c.ok {
			t.Errorf("%s: got %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
	if len(params) != 2 {
		t.Error("params modified")
	}
	if got, _ := CursorKeys[int]("/t", nil, 0)(0, nil); got != "/t" {
		t.Errorf("bare: %q", got)
	}
}

func TestCursorPageJSON(t *testing.T) {
	var missing, empty, null CursorPage[int]
	for s, p := range map[string]*CursorPage[int]{`{"nextCursor":"c"}`: &missing, `{"data":[]}`: &empty, `{"data":null}`: &null} {
		if err := json.Unmarshal([]byte(s), p); err != nil {
			t.Fatal(err)
		}
	}
	if missing.Data != nil || missing.NextCursor != "c" || empty.Data == nil || null.Data != nil {
		t.Fatalf("missing %#v, empty %#v, null %#v", missing, empty, null)
	}
	b, _ := json.Marshal(CursorPage[int]{Data: []int{1}})
	if string(b) != `{"data":[1]}` {
		t.Fatalf("marshal: %s", b)
	}
}

func TestPageHelpers(t *testing.T) {
	pages := [][]int{{1, 2}, {}, {3}}
	if Total(pages) != 3 || !slices.Equal(Flatten(pages), []int{1, 2, 3}) {
		t.Fatal("Total/Flatten")
	}
	if got := CursorItems([]CursorPage[int]{{Data: []int{1}}, {Data: []int{2, 3}}}); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("CursorItems = %v", got)
	}
	more := IndexHasMore[int](2)
	if !more(nil) || !more([][]int{{1, 2}}) || more([][]int{{1, 2}, {3}}) {
		t.Fatal("IndexHasMore")
	}
	if SizeKey("/a") != "$len$/a" {
		t.Fatal("SizeKey")
	}
}
