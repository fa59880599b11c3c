package model_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
	"github.com/betaport/betaport/app/model/modeltest"
)

// bundlesPage is the bundles page's model on a UI loop against a fake
// service, with the effects it asked for. Effects are recorded on the UI
// goroutine: read them in do.
type bundlesPage struct {
	t     *testing.T
	loop  *modeltest.Loop
	svc   *bundleSvc
	env   model.Env
	clock *modeltest.Clock // the model's (its questions' delay)
	cache *fetch.Cache
	// cancel ends the page, as leaving it does.
	cancel context.CancelFunc
	// async counts the model's goroutines, so a test can wait for an
	// answer that is dropped.
	async sync.WaitGroup
	m     *model.Bundles

	titles    []string
	focus     []int64 // FocusRollback's numbers
	rowFocus  []model.RowControl
	signedOut []error
	read      []string
	loaded    int
}

// newBundlesPage makes the page's model (not opened) on a fresh cache;
// fallback, when not nil, is the first page the server rendered.
func newBundlesPage(t *testing.T, svc *bundleSvc, fallback []betaport.Bundle) *bundlesPage {
	p := &bundlesPage{t: t, loop: modeltest.NewLoop(t), svc: svc, clock: modeltest.NewClock()}
	p.env = p.loop.Env(modeltest.Client(svc), p.clock)
	ctx, cancel := context.WithCancel(p.env.Context)
	p.env.Context, p.cancel = ctx, cancel
	async := p.env.Async
	p.env.Async = func(f func()) {
		p.async.Add(1)
		async(func() {
			defer p.async.Done()
			f()
		})
	}
	// The fetch cache's clock stands still: nothing is deduped away or
	// retried behind a test's back.
	p.cache = fetch.NewCache(fetch.CacheOptions{Clock: fetch.NewFakeClock(svcEpoch)})
	p.do(func(*model.Bundles) {
		p.m = model.NewBundles(model.BundlesConfig{
			Env: p.env, Cache: p.cache, MaxPages: 8,
			Fallback: func(key string) [][]betaport.Bundle {
				if fallback == nil || key != "/api/extensions/7/bundles?page=0&limit=20" {
					return nil
				}
				return [][]betaport.Bundle{fallback}
			},
			Title:         func(s string) { p.titles = append(p.titles, s) },
			SignedOut:     func(err error) { p.signedOut = append(p.signedOut, err) },
			Read:          func(e betaport.Extension) { p.read = append(p.read, e.Name) },
			Loaded:        func() { p.loaded++ },
			FocusRollback: func(n int64) { p.focus = append(p.focus, n) },
		})
	})
	return p
}

// openBundles opens extension 7's page and waits until it has read.
func openBundles(t *testing.T, svc *bundleSvc) *bundlesPage {
	p := newBundlesPage(t, svc, nil)
	p.do(func(m *model.Bundles) { m.Open(7) })
	p.waitSettled("the page's first reads")
	return p
}

// do runs f on the UI goroutine, as a person's action or a render.
func (p *bundlesPage) do(f func(m *model.Bundles)) { p.loop.Do(func() { f(p.m) }) }

func (p *bundlesPage) wait(what string, cond func(m *model.Bundles) bool) {
	p.t.Helper()
	p.loop.Wait(what, func() bool { return cond(p.m) })
}

// waitSettled waits until the page's reads have landed with data.
func (p *bundlesPage) waitSettled(what string) {
	p.t.Helper()
	p.wait(what, func(m *model.Bundles) bool {
		return m.Settled() && m.Extension.HasData && !m.List.IsLoadingMore && len(m.List.Data) == m.List.Size
	})
}

// drain waits for the model's goroutines and runs what they dispatched.
func (p *bundlesPage) drain() {
	p.async.Wait()
	p.do(func(*model.Bundles) {})
}

// row is a row component's model for bundle n, as the list renders it.
func (p *bundlesPage) row(n int64) *model.BundleRow {
	p.t.Helper()
	var r *model.BundleRow
	p.do(func(m *model.Bundles) {
		rows := m.Rows()
		for i := range rows.Len() {
			if b, ok := rows.At(i); ok && b.Number == n {
				r = &model.BundleRow{Rollback: m.Rollback, Focus: func(c model.RowControl) { p.rowFocus = append(p.rowFocus, c) }}
				r.Show(b)
			}
		}
	})
	if r == nil {
		p.t.Fatalf("the list has no row for #%d", n)
	}
	return r
}

// shown is the list's rows as "#N" (plus "*" when marked current).
func shown(m *model.Bundles) []string {
	rows := m.Rows()
	out := make([]string, 0, rows.Len())
	for i := range rows.Len() {
		b, ok := rows.At(i)
		switch {
		case !ok:
			out = append(out, "?")
		case b.Current:
			out = append(out, fmt.Sprintf("#%d*", b.Number))
		default:
			out = append(out, fmt.Sprintf("#%d", b.Number))
		}
	}
	return out
}

func TestBundlesOpenReadsTheRecordAndTheFirstPage(t *testing.T) {
	svc := newBundleSvc(t, 45)
	p := openBundles(t, svc)
	p.do(func(m *model.Bundles) {
		if e := m.Record(); e == nil || e.Name != "Tab Tamer" || e.CurrentBundle != 45 {
			t.Errorf("the record is %+v", e)
		}
		if got := shown(m); len(got) != 20 || got[0] != "#45*" || got[19] != "#26" {
			t.Errorf("the list shows %v, want #45 (current) to #26", got)
		}
		if b, ok := m.Current(); !ok || b.Version != "1.0.45" {
			t.Errorf("the current bundle is %+v (%v), want #45, 1.0.45", b, ok)
		}
		if !m.List.HasMore {
			t.Error("the list has no more, with 45 bundles in pages of 20")
		}
		if want := []string{"Bundles", "Tab Tamer"}; !slices.Equal(p.titles, want) {
			t.Errorf("the titles were %q, want %q", p.titles, want)
		}
		if p.loaded != 1 || len(p.read) == 0 || p.read[0] != "Tab Tamer" {
			t.Errorf("loaded %d times, read %q", p.loaded, p.read)
		}
	})

	// The same address again (go-app calls OnNav for it): nothing is read
	// again, the list is the same.
	p.do(func(m *model.Bundles) {
		list := m.Infinite()
		m.Open(7)
		if m.Infinite() != list {
			t.Error("opening the same extension again made a new list")
		}
	})

	// Load more: the second page, once.
	p.do(func(m *model.Bundles) { m.Infinite().SetSizeFunc(func(n int) int { return n + 1 }) })
	p.waitSettled("the second page")
	p.do(func(m *model.Bundles) {
		if got := shown(m); len(got) != 40 || got[39] != "#6" {
			t.Errorf("after load more the list shows %d rows, ending %v", len(got), got[len(got)-1])
		}
		if p.loaded != 1 {
			t.Errorf("the list told it loaded %d times, want once", p.loaded)
		}
	})
	if n := svc.countLine("GET /api/extensions/7/bundles?page=1&limit=20"); n != 1 {
		t.Errorf("page 1 was read %d times, want once:\n%s", n, svc.requests())
	}
}

// The first page the server rendered the page with shows at once, before
// any answer.
func TestBundlesShowTheServersFirstPageAtOnce(t *testing.T) {
	svc := newBundleSvc(t, 3)
	first := []betaport.Bundle{{ID: 7003, ExtensionID: 7, Number: 3, Version: "1.0.3", Current: true}, {ID: 7002, ExtensionID: 7, Number: 2}}
	p := newBundlesPage(t, svc, first)
	arrived, release := svc.hold("/bundles?")
	defer release()
	p.do(func(m *model.Bundles) {
		m.Open(7)
		if got := shown(m); !slices.Equal(got, []string{"#3*", "#2"}) {
			t.Errorf("before any answer the list shows %v, want the server's page", got)
		}
	})
	arrive(t, arrived)
	release()
	p.waitSettled("the first page")
	p.do(func(m *model.Bundles) {
		if got := shown(m); !slices.Equal(got, []string{"#3*", "#2", "#1"}) {
			t.Errorf("the list shows %v once read", got)
		}
	})
}

func TestBundlesExtensionThatIsNotThere(t *testing.T) {
	svc := newBundleSvc(t, 3)
	p := newBundlesPage(t, svc, nil)
	p.do(func(m *model.Bundles) { m.Open(99) })
	p.wait("the record's error", func(m *model.Bundles) bool { return m.Extension.Err != nil })
	p.do(func(m *model.Bundles) {
		if pr, ok := api.AsProblem(m.Extension.Err); !ok || pr.Status != http.StatusNotFound {
			t.Errorf("the error is %v, want a 404 problem", m.Extension.Err)
		}
		if m.Record() != nil || len(p.signedOut) != 0 {
			t.Errorf("record %+v, signed out %v", m.Record(), p.signedOut)
		}
	})
}

// A 401 sends the person to sign in; the page does not show it as its
// error.
func TestBundlesSignedOutAnswer(t *testing.T) {
	svc := newBundleSvc(t, 3)
	svc.status["/api/extensions/7/bundles"] = http.StatusUnauthorized
	p := newBundlesPage(t, svc, nil)
	p.do(func(m *model.Bundles) { m.Open(7) })
	p.wait("the sign-out", func(*model.Bundles) bool { return len(p.signedOut) > 0 })
	p.do(func(m *model.Bundles) {
		if pr, ok := api.AsProblem(p.signedOut[0]); !ok || pr.Status != http.StatusUnauthorized {
			t.Errorf("signed out for %v", p.signedOut[0])
		}
		if m.List.Err != nil {
			t.Errorf("the list shows the 401 as its error: %v", m.List.Err)
		}
	})
}

// Roll back, then Cancel: nothing is sent; the focus goes to Yes, then
// back to Roll back.
func TestRollbackAskThenCancel(t *testing.T) {
	svc := newBundleSvc(t, 45)
	p := openBundles(t, svc)
	row := p.row(43)
	p.do(func(m *model.Bundles) {
		if !row.OffersRollback() || row.AsksRollback() {
			t.Fatalf("row #43 offers a rollback %v, asks %v", row.OffersRollback(), row.AsksRollback())
		}
		row.Ask()
		if !row.AsksRollback() {
			t.Error("Roll back did not ask")
		}
		if !slices.Equal(p.rowFocus, []model.RowControl{model.ConfirmRollback}) {
			t.Errorf("the focus went to %v, want Yes", p.rowFocus)
		}
		row.Cancel()
		if row.AsksRollback() {
			t.Error("Cancel left the question open")
		}
		if !slices.Equal(p.rowFocus, []model.RowControl{model.ConfirmRollback, model.RollbackButton}) {
			t.Errorf("the focus went to %v, want Yes, then Roll back", p.rowFocus)
		}
		if m.Rollback.RollingBack != 0 {
			t.Errorf("Cancel started a rollback of #%d", m.Rollback.RollingBack)
		}
	})
	p.drain()
	if n := svc.count("POST "); n != 0 {
		t.Errorf("Cancel sent %d requests:\n%s", n, svc.requests())
	}
	// The current bundle's row offers none.
	current := p.row(45)
	p.do(func(*model.Bundles) {
		current.Ask()
		if current.OffersRollback() || current.AsksRollback() {
			t.Error("the current bundle offers a rollback to itself")
		}
	})
}

// Roll back, then Yes: one new bundle on top, "rollback of #43", current in
// the list and the header; the status says so, and the focus goes back to
// the row it was pressed in once the new bundle shows on top.
func TestRollbackAskThenYes(t *testing.T) {
	svc := newBundleSvc(t, 45)
	p := openBundles(t, svc)
	row := p.row(43)
	arrived, release := svc.hold("POST ")
	defer release()
	p.do(func(m *model.Bundles) {
		row.Ask()
		p.clock.Advance(model.ConfirmDelay)
		row.Confirm()
		if row.AsksRollback() || !row.RollingBack() || m.Rollback.RollingBack != 43 {
			t.Errorf("after Yes: asking %v, rolling back %v (#%d)", row.AsksRollback(), row.RollingBack(), m.Rollback.RollingBack)
		}
		if want := []model.RowControl{model.ConfirmRollback, model.RollbackButton}; !slices.Equal(p.rowFocus, want) {
			t.Errorf("the focus went to %v, want %v", p.rowFocus, want)
		}
		// While it is on its way, Roll back in its row asks nothing.
		row.Ask()
		if row.AsksRollback() {
			t.Error("the row asks again while its rollback is on its way")
		}
	})
	arrive(t, arrived)
	release()
	p.wait("the rollback on top", func(m *model.Bundles) bool {
		return m.Rollback.Done != nil && m.Top() == 46 && m.Settled()
	})
	p.do(func(m *model.Bundles) {
		top, _ := m.Rows().At(0)
		if top.RollbackOf != 43 || !top.Current {
			t.Errorf("the new top is %+v, want a current rollback of #43", top)
		}
		if got := shown(m); got[0] != "#46*" || slices.ContainsFunc(got[1:], func(s string) bool { return s[len(s)-1] == '*' }) {
			t.Errorf("the list shows %v, want only #46 current", got)
		}
		if m.Extension.Data.CurrentBundle != 46 {
			t.Errorf("the header's current bundle is #%d, want #46", m.Extension.Data.CurrentBundle)
		}
		if b, ok := m.Current(); !ok || b.Number != 46 {
			t.Errorf("the current version is that of %+v", b)
		}
		if r := m.Rollback; r.RollingBack != 0 || r.Of != 43 || r.Err != nil || r.Done.Number != 46 {
			t.Errorf("the rollback's state is %+v", r)
		}
		if !slices.Equal(p.focus, []int64{43}) {
			t.Errorf("the focus went to Roll back of %v, want #43's", p.focus)
		}
	})
	if n := svc.count("POST "); n != 1 {
		t.Errorf("%d rollbacks were sent, want 1:\n%s", n, svc.requests())
	}
}

// Yes pressed twice (a double click, a key held down), and Yes in another
// row while the first is on its way: one request.
func TestRollbackYesTwiceSendsOneRequest(t *testing.T) {
	svc := newBundleSvc(t, 45)
	p := openBundles(t, svc)
	row, other := p.row(43), p.row(40)
	arrived, release := svc.hold("POST ")
	defer release()
	p.do(func(*model.Bundles) {
		row.Ask()
		p.clock.Advance(model.ConfirmDelay)
		row.Confirm()
		row.Confirm()
	})
	arrive(t, arrived)
	p.do(func(*model.Bundles) {
		other.Ask()
		p.clock.Advance(model.ConfirmDelay)
		other.Confirm()
	})
	release()
	p.wait("the rollback", func(m *model.Bundles) bool { return m.Rollback.Done != nil })
	p.drain()
	if n := svc.count("POST "); n != 1 {
		t.Errorf("%d rollbacks were sent, want 1:\n%s", n, svc.requests())
	}
	p.do(func(m *model.Bundles) {
		if m.Rollback.Of != 43 {
			t.Errorf("the rollback served #%d again, want #43", m.Rollback.Of)
		}
	})
}

// A rollback the service refuses (409: the bundle is current already,
// another admin made it so) shows the problem, leaves the rows and the
// header as they were and the focus on the row's Roll back; once the
// reason is gone, a second try goes through.
func TestRollbackRefusedThenRetried(t *testing.T) {
	svc := newBundleSvc(t, 45)
	p := openBundles(t, svc)
	row := p.row(44)
	var before []string
	p.do(func(m *model.Bundles) { before = shown(m) })
	svc.set(func() { svc.exts[7].CurrentBundle = 44 })
	p.do(func(*model.Bundles) {
		row.Ask()
		p.clock.Advance(model.ConfirmDelay)
		row.Confirm()
	})
	p.wait("the refusal", func(m *model.Bundles) bool { return m.Rollback.Err != nil })
	p.do(func(m *model.Bundles) {
		pr, ok := api.AsProblem(m.Rollback.Err)
		if !ok || pr.Status != http.StatusConflict || pr.Detail != "Bundle #44 is current already." {
			t.Errorf("the error is %v, want the service's 409", m.Rollback.Err)
		}
		if r := m.Rollback; r.RollingBack != 0 || r.Done != nil || r.Of != 44 {
			t.Errorf("the rollback's state is %+v", r)
		}
		if got := shown(m); !slices.Equal(got, before) {
			t.Errorf("after the refusal the list shows %v, want %v", got, before)
		}
		if m.Extension.Data.CurrentBundle != 45 {
			t.Errorf("after the refusal the header says #%d", m.Extension.Data.CurrentBundle)
		}
		if !slices.Equal(p.focus, []int64{44}) {
			t.Errorf("the focus went to Roll back of %v, want #44's", p.focus)
		}
	})

	svc.set(func() { svc.exts[7].CurrentBundle = 45 })
	p.do(func(*model.Bundles) {
		row.Ask()
		p.clock.Advance(model.ConfirmDelay)
		row.Confirm()
	})
	p.wait("the second try", func(m *model.Bundles) bool { return m.Rollback.Done != nil && m.Top() == 46 })
	p.do(func(m *model.Bundles) {
		if m.Rollback.Err != nil {
			t.Errorf("the old error stays: %v", m.Rollback.Err)
		}
	})
}

// The answer to a rollback sent from a page that is gone, or that shows
// another extension by then, is not shown.
func TestRollbackAnswerAfterThePageIsGone(t *testing.T) {
	t.Run("left", func(t *testing.T) {
		svc := newBundleSvc(t, 45)
		p := openBundles(t, svc)
		row := p.row(43)
		arrived, release := svc.hold("POST ")
		defer release()
		p.do(func(*model.Bundles) { row.Ask(); p.clock.Advance(model.ConfirmDelay); row.Confirm() })
		arrive(t, arrived)
		p.cancel()
		release()
		p.drain()
		p.do(func(m *model.Bundles) {
			if m.Rollback.Done != nil || m.Rollback.Err != nil || len(p.focus) != 0 {
				t.Errorf("a gone page showed the answer: %+v, focus %v", m.Rollback, p.focus)
			}
		})
	})
	t.Run("another extension", func(t *testing.T) {
		svc := newBundleSvc(t, 45)
		svc.addExtension(8, "Other", 5)
		p := openBundles(t, svc)
		row := p.row(43)
		arrived, release := svc.hold("POST ")
		defer release()
		p.do(func(*model.Bundles) { row.Ask(); p.clock.Advance(model.ConfirmDelay); row.Confirm() })
		arrive(t, arrived)
		p.do(func(m *model.Bundles) { m.Open(8) })
		release()
		p.waitSettled("extension 8")
		p.drain()
		p.do(func(m *model.Bundles) {
			if m.Rollback.Done != nil || m.Rollback.RollingBack != 0 || len(p.focus) != 0 {
				t.Errorf("extension 8's page shows extension 7's rollback: %+v, focus %v", m.Rollback, p.focus)
			}
			if got := shown(m); got[0] != "#5*" || m.Extension.Data.CurrentBundle != 5 {
				t.Errorf("extension 8's page shows %v, current #%d", got, m.Extension.Data.CurrentBundle)
			}
		})
	})
}

// The upload panel's bundle shows on top at once, current; the header
// follows.
func TestBundlesPublishedShowsOnTop(t *testing.T) {
	svc := newBundleSvc(t, 45)
	p := openBundles(t, svc)
	b, _ := svc.publish()
	b.Current = false // as the sign call's answer may say
	// The list is read again after; what shows first is the page's own.
	_, release := svc.hold("/bundles?")
	defer release()
	p.do(func(m *model.Bundles) { m.Published(b, true) })
	p.wait("the new bundle on top", func(m *model.Bundles) bool { return m.Top() == 46 })
	p.do(func(m *model.Bundles) {
		if got := shown(m); got[0] != "#46*" || got[1] != "#45" || len(got) != 21 {
			t.Errorf("the list shows %v", got)
		}
		if m.Extension.Data.CurrentBundle != 46 {
			t.Errorf("the header's current bundle is #%d", m.Extension.Data.CurrentBundle)
		}
	})
	release()
	p.waitSettled("the pages read again")
	p.do(func(m *model.Bundles) {
		if got := shown(m); len(got) != 20 || got[0] != "#46*" {
			t.Errorf("read again, the list shows %v", got)
		}
	})
}

// A row's release notes open and close; Escape closes them with the focus
// on Notes, or closes the question first; a row given another bundle (the
// window moved) closes both, one given the same bundle again keeps them.
func TestBundleRowNotesShownAndHidden(t *testing.T) {
	var focus []model.RowControl
	rb := &model.Rollback{}
	r := &model.BundleRow{Rollback: rb, Focus: func(c model.RowControl) { focus = append(focus, c) }}
	withNotes := betaport.Bundle{ID: 1, Number: 1, ReleaseNotes: "- Faster tabs"}
	r.Show(withNotes)
	if r.NotesShown() {
		t.Fatal("the notes show before Notes is pressed")
	}
	r.ToggleNotes()
	if !r.NotesShown() {
		t.Fatal("Notes did not show the notes")
	}
	r.ToggleNotes()
	if r.NotesShown() {
		t.Fatal("Notes pressed again did not hide them")
	}

	r.ToggleNotes()
	r.Escape()
	if r.NotesShown() || !slices.Equal(focus, []model.RowControl{model.NotesToggle}) {
		t.Errorf("Escape: notes shown %v, focus %v", r.NotesShown(), focus)
	}

	// Escape with the question and the notes open closes the question.
	r.ToggleNotes()
	r.Ask()
	focus = nil
	r.Escape()
	if r.AsksRollback() || !r.NotesShown() || !slices.Equal(focus, []model.RowControl{model.RollbackButton}) {
		t.Errorf("Escape with the question open: asking %v, notes %v, focus %v", r.AsksRollback(), r.NotesShown(), focus)
	}

	// The same bundle, changed (no longer current): still open.
	r.Ask()
	changed := withNotes
	changed.Version = "2"
	r.Show(changed)
	if !r.NotesShown() || !r.AsksRollback() {
		t.Errorf("the same bundle again closed the notes (%v) or the question (%v)", r.NotesShown(), r.AsksRollback())
	}
	// Another bundle: both close.
	r.Show(betaport.Bundle{ID: 2, Number: 2, ReleaseNotes: "x"})
	if r.NotesShown() || r.AsksRollback() {
		t.Errorf("another bundle keeps the notes (%v) or the question (%v) open", r.NotesShown(), r.AsksRollback())
	}

	// A bundle without notes shows none, whatever is pressed.
	r.Show(betaport.Bundle{ID: 3, Number: 3})
	r.ToggleNotes()
	if r.NotesShown() {
		t.Error("a bundle without notes shows some")
	}
}

// liveCounts are the reads of extension 7's record and first three pages.
func liveCounts(svc *bundleSvc) [4]int {
	return [4]int{
		svc.countLine("GET /api/extensions/7"),
		svc.countLine("GET /api/extensions/7/bundles?page=0&limit=20"),
		svc.countLine("GET /api/extensions/7/bundles?page=1&limit=20"),
		svc.countLine("GET /api/extensions/7/bundles?page=2&limit=20"),
	}
}

// openThreePages opens extension 7 (45 bundles) with its three pages
// loaded, and returns the reads that took.
func openThreePages(t *testing.T) (*bundlesPage, *bundleSvc, [4]int) {
	svc := newBundleSvc(t, 45)
	p := openBundles(t, svc)
	p.do(func(m *model.Bundles) { m.Infinite().SetSize(3) })
	p.waitSettled("three pages")
	p.drain()
	return p, svc, liveCounts(svc)
}

// plus is the reads of base, each n more.
func plus(base [4]int, n int) [4]int {
	for i := range base {
		base[i] += n
	}
	return base
}

// waitReads waits until extension 7's record and first three pages were
// read want times, and the page has settled.
func (p *bundlesPage) waitReads(what string, want [4]int) {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for liveCounts(p.svc) != want {
		if time.Now().After(deadline) {
			p.t.Fatalf("%s: the reads are %v, want %v:\n%s", what, liveCounts(p.svc), want, p.svc.requests())
		}
		time.Sleep(time.Millisecond)
	}
	p.wait(what, func(m *model.Bundles) bool { return m.Settled() && !m.List.IsLoadingMore })
	p.drain()
}

// publishAndTell publishes a bundle and tells the page, then waits until
// it shows it.
func publishAndTell(p *bundlesPage, svc *bundleSvc) {
	p.t.Helper()
	b, rev := svc.publish()
	p.do(func(m *model.Bundles) { m.Live.Event(rev, true) })
	p.wait("the publish", func(m *model.Bundles) bool { return m.Top() == b.Number && m.Settled() && !m.List.IsLoadingMore })
	p.drain()
}

// The stream's first event (and every reconnect's) repeats what the page
// shows: nothing is read again. A publish that follows reads the record
// and every held page once.
func TestLiveEventTheListShowsReadsNothing(t *testing.T) {
	p, svc, base := openThreePages(t)
	rev := svc.revision()
	p.do(func(m *model.Bundles) {
		if !m.Shows(rev) {
			t.Fatalf("the page does not show %+v", rev)
		}
		m.Live.Event(rev, true)
		m.Live.Event(rev, true)
		if m.Infinite().Snapshot().IsValidating {
			t.Error("an event the page shows started reading the list again")
		}
	})
	p.drain()
	if got := liveCounts(svc); got != base {
		t.Errorf("an event the page shows read %v, after %v", got, base)
	}
	publishAndTell(p, svc)
	p.waitReads("a publish: each read once more", plus(base, 1))
}

// An event that cannot be read is taken as news.
func TestLiveEventUnknownReadsAgain(t *testing.T) {
	p, _, base := openThreePages(t)
	p.do(func(m *model.Bundles) { m.Live.Event(api.Revision{}, false) })
	p.waitReads("an unknown event: each read once more", plus(base, 1))
}

// An event that comes while the page's own reads are under way (it was
// just opened, or reached by Back) waits for them and is compared with
// what they bring: the revision they show is not read twice; one past it
// is read once they land.
func TestLiveEventDuringTheReads(t *testing.T) {
	t.Run("what they bring", func(t *testing.T) {
		svc := newBundleSvc(t, 45)
		p := newBundlesPage(t, svc, nil)
		arrived, release := svc.hold("GET /api/extensions/7")
		defer release()
		p.do(func(m *model.Bundles) { m.Open(7) })
		arrive(t, arrived) // the record
		arrive(t, arrived) // the first page
		rev := svc.revision()
		p.do(func(m *model.Bundles) {
			m.Live.Event(rev, true)
			if !m.Live.Awaiting() {
				t.Error("an event during the reads was not kept for them")
			}
		})
		release()
		p.waitSettled("the reads")
		p.drain()
		p.do(func(m *model.Bundles) {
			if m.Live.Awaiting() {
				t.Error("the event still waits after the reads landed")
			}
			if m.Infinite().Snapshot().IsValidating {
				t.Error("the reads landed with what the event says, and the list is read again")
			}
		})
		if got := liveCounts(svc); got[0] != 1 || got[1] != 1 {
			t.Errorf("the record and the first page were read %d and %d times, want once:\n%s", got[0], got[1], svc.requests())
		}
		publishAndTell(p, svc)
		p.waitReads("a publish after: each read once more", [4]int{2, 2, 0, 0})
	})
	t.Run("past what they bring", func(t *testing.T) {
		svc := newBundleSvc(t, 45)
		p := newBundlesPage(t, svc, nil)
		arrived, release := svc.hold("GET /api/extensions/7")
		defer release()
		p.do(func(m *model.Bundles) { m.Open(7) })
		arrive(t, arrived)
		arrive(t, arrived)
		// A publish after the service made its answers: they bring #45.
		_, rev := svc.publish()
		p.do(func(m *model.Bundles) { m.Live.Event(rev, true) })
		release()
		p.wait("the publish", func(m *model.Bundles) bool { return m.Top() == 46 && m.Settled() })
		p.waitReads("an event past the reads: each read once more", [4]int{2, 2, 0, 0})
		p.do(func(m *model.Bundles) {
			if m.Extension.Data.CurrentBundle != 46 {
				t.Errorf("the header says #%d", m.Extension.Data.CurrentBundle)
			}
		})
	})
}

// Reads that failed have landed too: an event past them reads again (the
// person sees the list, not the old error).
func TestLiveEventAfterAFailedRead(t *testing.T) {
	svc := newBundleSvc(t, 45)
	svc.status["/api/extensions/7/bundles"] = http.StatusInternalServerError
	p := newBundlesPage(t, svc, nil)
	p.do(func(m *model.Bundles) { m.Open(7) })
	p.wait("the error", func(m *model.Bundles) bool { return m.List.Err != nil && m.Settled() })
	// The reads failed: the page is settled, and an event it cannot show
	// reads again.
	svc.set(func() { delete(svc.status, "/api/extensions/7/bundles") })
	_, rev := svc.publish()
	p.do(func(m *model.Bundles) { m.Live.Event(rev, true) })
	p.wait("the list", func(m *model.Bundles) bool { return m.Top() == 46 && m.List.Err == nil })
}

// A long scroll drops the list's first page (MaxPages): the header still
// names the current bundle's version and the total, and both follow a
// publish made elsewhere meanwhile (a person who scrolled to bundle 100
// of 500 saw "Current version …" and "(180 loaded)" instead).
func TestBundlesTopKnownWhileItsPageIsDropped(t *testing.T) {
	svc := newBundleSvc(t, 300)
	p := openBundles(t, svc)
	p.do(func(m *model.Bundles) { m.Infinite().SetSize(12) })
	p.waitSettled("twelve pages")
	p.drain()
	p.do(func(m *model.Bundles) {
		if s := m.List; len(s.Dropped) == 0 || !s.Dropped[0] {
			t.Fatalf("with 12 pages held in 8, the first is not dropped: %v", s.Dropped)
		}
		if b, ok := m.Current(); !ok || b.Number != 300 {
			t.Errorf("the current bundle is %+v (%v), want #300", b, ok)
		}
		if m.Total() != 300 {
			t.Errorf("the total is %d, want 300", m.Total())
		}
	})

	b, rev := svc.publish()
	p.do(func(m *model.Bundles) { m.Event(rev, true) })
	p.wait("the publish's current bundle", func(m *model.Bundles) bool {
		c, ok := m.Current()
		return ok && c.Number == b.Number && m.Total() == b.Number
	})
	p.do(func(m *model.Bundles) {
		if c, _ := m.Current(); c.Version != b.Version {
			t.Errorf("the current version is %q, want %q", c.Version, b.Version)
		}
	})
}
