package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/sqldb"
)

// testBundlePages: the bundles list's index-based pages, newest first,
// with the current bundle marked.
func testBundlePages(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e, other := MustExtension(t, s, team, "E"), MustExtension(t, s, team, "Other")
	if list, err := s.FindBundlePage(ctx, e.ID, 0, 10); err != nil || len(list) != 0 {
		t.Fatalf("no bundles: page 0 = %v, %v; want an empty page", list, err)
	}
	for i := 1; i <= 5; i++ {
		if err := s.PublishBundle(ctx, newBundle(e.ID, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PublishBundle(ctx, newBundle(other.ID, 9)); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		page  int64
		limit int
		want  string
	}{
		{0, 2, "[5* 4]"}, {1, 2, "[3 2]"}, {2, 2, "[1]"}, {3, 2, "[]"}, {0, 10, "[5* 4 3 2 1]"},
		{1, 4, "[1]"}, {1 << 31, 100, "[]"},
	} {
		list, err := s.FindBundlePage(ctx, e.ID, tt.page, tt.limit)
		if err != nil {
			t.Fatalf("page %d of %d: %v", tt.page, tt.limit, err)
		}
		if got := pageNumbers(list); got != tt.want {
			t.Errorf("page %d of %d = %s, want %s", tt.page, tt.limit, got, tt.want)
		}
		for _, b := range list {
			if b.ExtensionID != e.ID {
				t.Errorf("page %d of %d holds bundle %d of extension %d", tt.page, tt.limit, b.Number, b.ExtensionID)
			}
		}
	}
	for _, bad := range []struct {
		page  int64
		limit int
	}{{-1, 10}, {0, 0}} {
		_, err := s.FindBundlePage(ctx, e.ID, bad.page, bad.limit)
		wantCode(t, err, betaport.EINVALID)
	}
}

// pageNumbers writes a page as its bundle numbers, * after the current one.
func pageNumbers(list []*betaport.Bundle) string {
	out := "["
	for i, b := range list {
		if i > 0 {
			out += " "
		}
		out += fmt.Sprint(b.Number)
		if b.Current {
			out += "*"
		}
	}
	return out + "]"
}

// testBundlePageOneSnapshot: a page of bundles is one snapshot, whatever is
// published while it is read. The store's statement hook publishes a
// bundle before every statement the page read runs, so a read made of two
// statements (the extension's last number, then the bundles below it, as
// the handler once did) has a publish land between them, every time, with
// no timing: its page 0 then begins with a bundle that is not current, and
// holds no current one. A read in one statement (or one snapshot) gives a
// page that some single state of the database had: its top is last -
// page*limit of that state, and its only current bundle (current is the
// last published) is that state's last.
func testBundlePageOneSnapshot(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	next := 1
	publish := func() {
		if err := s.PublishBundle(ctx, newBundle(e.ID, next)); err != nil {
			t.Errorf("publishing bundle %d: %v", next, err)
		}
		next++
	}
	for range 6 {
		publish()
	}
	const limit = 2
	for page := range int64(4) {
		before := int64(next - 1) // the last number before this read
		publishes := 0
		hooked := sqldb.WithStatementHook(ctx, func() { publish(); publishes++ })
		list, err := s.FindBundlePage(hooked, e.ID, page, limit)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if publishes == 0 {
			t.Fatal("the store ran no statement through its hook: this test cannot interleave a publish")
		}
		after := int64(next - 1)
		// Which state was it? Page 0's top is that state's last; a deeper
		// page's top is last - page*limit.
		consistent := func(last int64) bool {
			if len(list) == 0 {
				return last-page*limit < 1
			}
			top := last - page*limit
			for i, b := range list {
				if b.Number != top-int64(i) || b.Current != (b.Number == last) {
					return false
				}
			}
			return len(list) == int(min(int64(limit), top))
		}
		ok := false
		for last := before; last <= after && !ok; last++ {
			ok = consistent(last)
		}
		if !ok {
			t.Errorf("page %d of %d read while %d bundles were published (last %d → %d) = %s: no single state had that page",
				page, limit, publishes, before, after, pageNumbers(list))
		}
	}
}
