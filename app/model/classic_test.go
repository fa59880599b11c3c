package model_test

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
	"github.com/betaport/betaport/app/model/modeltest"
)

// classicView is the page-by-page view's model on a UI loop against a fake
// service, with the effects it asked for (read them in do).
type classicView struct {
	t     *testing.T
	loop  *modeltest.Loop
	svc   *bundleSvc
	clock *fetch.FakeClock
	// uiClock is the model's own (its timers, its questions' delay).
	uiClock *modeltest.Clock
	m       *model.Classic

	titles []string
	focus  []int64
	// focusTop is the top of the page shown when the focus moved.
	focusTop []int64
}

func newClassicView(t *testing.T, svc *bundleSvc) *classicView {
	v := &classicView{t: t, loop: modeltest.NewLoop(t), svc: svc, clock: fetch.NewFakeClock(svcEpoch), uiClock: modeltest.NewClock()}
	env := v.loop.Env(modeltest.Client(svc), v.uiClock)
	cache := fetch.NewCache(fetch.CacheOptions{Clock: v.clock})
	v.loop.Do(func() {
		v.m = model.NewClassic(model.ClassicConfig{
			Env: env, Cache: cache,
			Title: func(s string) { v.titles = append(v.titles, s) },
			FocusRollback: func(n int64) {
				v.focus = append(v.focus, n)
				top := int64(0)
				if len(v.m.Current.Data) > 0 {
					top = v.m.Current.Data[0].Number
				}
				v.focusTop = append(v.focusTop, top)
			},
		})
	})
	return v
}

func (v *classicView) do(f func(m *model.Classic)) { v.loop.Do(func() { f(v.m) }) }

// nav goes to the address, as a link, Back or Forward does.
func (v *classicView) nav(address string) {
	v.t.Helper()
	u, err := url.Parse(address)
	if err != nil {
		v.t.Fatal(err)
	}
	v.do(func(m *model.Classic) { m.Nav(u.Path, u.Query()) })
}

// waitShown waits until the view shows page n of extension id, and the
// page after it, read.
func (v *classicView) waitShown(id int64, n int) {
	v.t.Helper()
	v.loop.Wait("page "+strconv.Itoa(n), func() bool {
		m := v.m
		return m.Page == n && m.Current.Key == model.ClassicKey(id, n) && m.Current.HasData && !m.Current.IsValidating &&
			m.Next.Key == model.ClassicKey(id, n+1) && m.Next.HasData && !m.Next.IsValidating
	})
}

// numbers are the bundle numbers of a page.
func numbers(s fetch.State[[]betaport.Bundle]) []int64 {
	var out []int64
	for _, b := range s.Data {
		out = append(out, b.Number)
	}
	return out
}

// pageReads is how often page n of extension 7 was read.
func pageReads(svc *bundleSvc, n int) int { return svc.countLine("GET " + model.ClassicKey(7, n)) }

// Next shows the page read ahead at once and asks nothing for it; Back
// and Forward show the pages from the cache; each page is read once while
// fresh, and read again (conditionally) once older than the view's
// deduping interval. The page number comes from the address.
func TestClassicBackAndForward(t *testing.T) {
	svc := newBundleSvc(t, 45) // pages of 20: #45–#26, #25–#6, #5–#1
	v := newClassicView(t, svc)
	arrived, release := svc.hold("page=1&")
	defer release()
	v.nav("/extensions/7/pages")
	arrive(t, arrived)
	v.do(func(m *model.Classic) {
		if m.HasNext() || m.Last() {
			t.Errorf("before the next page is read: has next %v, last %v", m.HasNext(), m.Last())
		}
	})
	release()
	v.waitShown(7, 0)
	v.do(func(m *model.Classic) {
		if got := numbers(m.Current); len(got) != 20 || got[0] != 45 {
			t.Errorf("page 0 shows %v", got)
		}
		if got := numbers(m.Next); len(got) != 20 || got[0] != 25 {
			t.Errorf("the page read ahead is %v", got)
		}
		if !m.HasNext() || m.Last() {
			t.Errorf("page 0: has next %v, last %v", m.HasNext(), m.Last())
		}
	})

	// Next: the page read ahead, at once, without a request.
	v.nav("/extensions/7/pages?page=1")
	v.do(func(m *model.Classic) {
		if m.Page != 1 {
			t.Errorf("the address names page 1, the view shows %d", m.Page)
		}
	})
	v.waitShown(7, 1)
	if pageReads(svc, 1) != 1 || pageReads(svc, 2) != 1 {
		t.Errorf("Next read page 1 %d times and page 2 %d times, want once each:\n%s", pageReads(svc, 1), pageReads(svc, 2), svc.requests())
	}

	// Back, then Forward, a while later: from the cache, nothing asked.
	v.clock.Advance(model.ClassicDedupe / 2)
	v.nav("/extensions/7/pages?page=0")
	v.waitShown(7, 0)
	v.nav("/extensions/7/pages?page=1")
	v.waitShown(7, 1)
	for n, want := range []int{1, 1, 1} {
		if got := pageReads(svc, n); got != want {
			t.Errorf("after Back and Forward page %d was read %d times, want %d:\n%s", n, got, want, svc.requests())
		}
	}

	// The last page: no Next.
	v.nav("/extensions/7/pages?page=2")
	v.waitShown(7, 2)
	v.do(func(m *model.Classic) {
		if got := numbers(m.Current); !slices.Equal(got, []int64{5, 4, 3, 2, 1}) {
			t.Errorf("page 2 shows %v", got)
		}
		if m.HasNext() || !m.Last() {
			t.Errorf("the last page: has next %v, last %v", m.HasNext(), m.Last())
		}
	})

	// Later, Back reads the page again.
	v.clock.Advance(model.ClassicDedupe + 1)
	v.nav("/extensions/7/pages?page=1")
	v.waitShown(7, 1)
	v.loop.Wait("page 1 read again", func() bool { return pageReads(svc, 1) == 2 })

	v.do(func(m *model.Classic) {
		for _, title := range v.titles {
			if title != "Bundles, page by page" {
				t.Errorf("the view was titled %q", title)
			}
		}
		if len(v.titles) != 6 {
			t.Errorf("the view was titled %d times, want at each of its 6 addresses", len(v.titles))
		}
	})
}

// The page number is the address's "page", from 0; anything else is the
// first page.
func TestClassicPageFromTheAddress(t *testing.T) {
	for query, want := range map[string]int{"": 0, "page=0": 0, "page=3": 3, "page=-2": 0, "page=two": 0, "page=1&page=4": 1, "page=%20": 0} {
		q, _ := url.ParseQuery(query)
		if got := model.ClassicPage(q); got != want {
			t.Errorf("?%s is page %d, want %d", query, got, want)
		}
	}
	svc := newBundleSvc(t, 45)
	v := newClassicView(t, svc)
	v.nav("/extensions/7/pages?page=-3")
	v.waitShown(7, 0)
	if n := svc.count("GET /api/extensions/7/bundles?page=-"); n != 0 {
		t.Errorf("a negative page was asked for:\n%s", svc.requests())
	}

	// Another extension's view opens anew.
	svc.addExtension(8, "Other", 3)
	v.nav("/extensions/8/pages?page=0")
	v.waitShown(8, 0)
	v.do(func(m *model.Classic) {
		if m.ID != 8 || !slices.Equal(numbers(m.Current), []int64{3, 2, 1}) || !m.Last() {
			t.Errorf("extension 8's view: id %d, page %v, last %v", m.ID, numbers(m.Current), m.Last())
		}
	})
}

// A rollback from the view reads the page (and the next) again: the new
// bundle on top, the focus back on the row it was pressed in once the
// page is read; a refusal shows and changes nothing.
func TestClassicRollback(t *testing.T) {
	svc := newBundleSvc(t, 45)
	v := newClassicView(t, svc)
	v.nav("/extensions/7/pages")
	v.waitShown(7, 0)
	row := &model.BundleRow{}
	v.do(func(m *model.Classic) {
		row.Rollback = m.Rollback
		row.Show(m.Current.Data[0])
		if row.OffersRollback() {
			t.Error("the current bundle offers a rollback")
		}
		row.Show(m.Current.Data[1])
		row.Ask()
		v.uiClock.Advance(model.ConfirmDelay)
		row.Confirm()
		row.Confirm()
	})
	v.loop.Wait("the rollback on top", func() bool {
		m := v.m
		return m.Rollback.Done != nil && len(m.Current.Data) > 0 && m.Current.Data[0].Number == 46 && !m.Current.IsValidating
	})
	v.loop.Wait("the next page read again", func() bool { return len(v.m.Next.Data) > 0 && v.m.Next.Data[0].Number == 26 })
	v.do(func(m *model.Classic) {
		if top := m.Current.Data[0]; top.RollbackOf != 44 || !top.Current {
			t.Errorf("the new top is %+v", top)
		}
		if !slices.Equal(v.focus, []int64{44}) || !slices.Equal(v.focusTop, []int64{46}) {
			t.Errorf("the focus went to %v with %v on top, want #44's Roll back once #46 shows", v.focus, v.focusTop)
		}
	})

	// Next, and Back: the view is the same, and so is what the rollback
	// said.
	v.nav("/extensions/7/pages?page=1")
	v.waitShown(7, 1)
	v.nav("/extensions/7/pages")
	v.waitShown(7, 0)
	v.do(func(m *model.Classic) {
		if m.Rollback.Done == nil || m.Rollback.Of != 44 {
			t.Errorf("after Next and Back the rollback's status is gone: %+v", m.Rollback)
		}
	})
	if n := svc.count("POST "); n != 1 {
		t.Errorf("%d rollbacks sent, want 1", n)
	}

	// Refused.
	svc.set(func() {
		svc.refuse = api.NewProblem(http.StatusConflict, api.ProblemConflict, "Chrome takes no version above 65535.65535.65535.65535.")
	})
	var before []int64
	v.do(func(m *model.Classic) {
		before = numbers(m.Current)
		row.Show(m.Current.Data[3])
		row.Ask()
		v.uiClock.Advance(model.ConfirmDelay)
		row.Confirm()
	})
	v.loop.Wait("the refusal", func() bool { return v.m.Rollback.Err != nil })
	v.do(func(m *model.Classic) {
		if pr, ok := api.AsProblem(m.Rollback.Err); !ok || pr.Status != http.StatusConflict {
			t.Errorf("the error is %v", m.Rollback.Err)
		}
		if got := numbers(m.Current); !slices.Equal(got, before) {
			t.Errorf("after a refusal the page shows %v, want %v", got, before)
		}
		if !slices.Equal(v.focus, []int64{44, 43}) {
			t.Errorf("the focus went to %v, want #43's Roll back last", v.focus)
		}
	})
}
