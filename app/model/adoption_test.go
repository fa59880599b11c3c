package model_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
	"github.com/betaport/betaport/app/model/modeltest"
)

// adoptionSection is the Adoption section's model on a UI loop against a
// fake service.
type adoptionSection struct {
	t         *testing.T
	loop      *modeltest.Loop
	clock     *modeltest.Clock
	m         *model.Adoption
	signedOut []error
}

func newAdoptionSection(t *testing.T, svc *bundleSvc) *adoptionSection {
	a := &adoptionSection{t: t, loop: modeltest.NewLoop(t), clock: modeltest.NewClock()}
	env := a.loop.Env(modeltest.Client(svc), a.clock)
	cache := fetch.NewCache(fetch.CacheOptions{Clock: fetch.NewFakeClock(svcEpoch)})
	a.loop.Do(func() {
		a.m = model.NewAdoption(model.AdoptionConfig{Env: env, Cache: cache,
			SignedOut: func(err error) { a.signedOut = append(a.signedOut, err) }})
	})
	return a
}

func (a *adoptionSection) do(f func(m *model.Adoption)) { a.loop.Do(func() { f(a.m) }) }

func (a *adoptionSection) wait(what string, cond func(m *model.Adoption) bool) {
	a.t.Helper()
	a.loop.Wait(what, func() bool { return cond(a.m) })
}

// checks are counts of the hours before the clock's now (2026-11-27 09:00
// UTC): version, hours ago, checks.
func checks(now time.Time, rows ...any) []betaport.AdoptionCount {
	var out []betaport.AdoptionCount
	for i := 0; i < len(rows); i += 3 {
		out = append(out, betaport.AdoptionCount{ExtensionID: 7, Version: rows[i].(string),
			Hour: now.Truncate(time.Hour).Add(-time.Duration(rows[i+1].(int)) * time.Hour), Checks: int64(rows[i+2].(int))})
	}
	return out
}

// The section reads every page of counts, one after the other, and the
// current bundle; it is loading until both are there, then sums them up
// as of the clock. The same extension and current bundle read nothing
// again; a publish (another current bundle) reads both again.
func TestAdoptionLoads(t *testing.T) {
	svc := newBundleSvc(t, 3)
	now := modeltest.NewClock().Now()
	svc.counts = checks(now, "1.0.3", 1, 30, "1.0.3", 2, 10, "1.0.2", 3, 20, "1.0.2", 30, 40, "1.0.1", 50, 5, "1.0.1", 100, 5, "1.0.3", 0, 10)
	a := newAdoptionSection(t, svc)
	countsHeld, release := svc.hold("/adoption?")
	defer release()
	a.do(func(m *model.Adoption) {
		m.Open(7, 3)
		if !m.Loading() || m.Failed() != nil {
			t.Errorf("just opened: loading %v, failed %v", m.Loading(), m.Failed())
		}
	})
	arrive(t, countsHeld)
	a.wait("the current bundle", func(m *model.Adoption) bool { return m.CurrentVersion() == "1.0.3" })
	a.do(func(m *model.Adoption) {
		if !m.Loading() {
			t.Error("not loading with the counts on their way")
		}
	})
	release()
	// Every page read, and nothing on its way (setting the size reads the
	// first page again, as SWR's revalidateFirstPage does).
	a.wait("every page", func(m *model.Adoption) bool {
		return !m.Loading() && !m.Counts.IsValidating && !m.Current.IsValidating
	})
	a.do(func(m *model.Adoption) {
		if n := len(m.Counts.Data); n != 3 || !m.Complete() {
			t.Errorf("%d pages read (complete %v), want the 3 of 7 counts", n, m.Complete())
		}
		sum := m.Summary()
		if sum.Total != 120 || sum.Current != "1.0.3" || sum.Last24 != 70 || sum.OnCurrent != 50 {
			t.Errorf("the summary is total %d, current %q, last 24 h %d, on current %d; want 120, 1.0.3, 70, 50",
				sum.Total, sum.Current, sum.Last24, sum.OnCurrent)
		}
	})
	if n := svc.count("GET /api/extensions/7/adoption?cursor=6&days=7&limit=500"); n != 1 {
		t.Errorf("the last page was read %d times, want once:\n%s", n, svc.requests())
	}

	// The page renders again with the same extension: nothing is read.
	a.do(func(m *model.Adoption) {
		m.Open(7, 3)
		if m.Loading() || m.Counts.IsValidating || m.Current.IsValidating {
			t.Errorf("the same extension again: loading %v, reading the counts %v, the current bundle %v",
				m.Loading(), m.Counts.IsValidating, m.Current.IsValidating)
		}
	})

	// A publish moves the current bundle: both are read again, and the
	// figures shown stay, marked as refreshing, until they land (a loading
	// view instead would change the section's height under the reader).
	svc.publish()
	currentHeld, releaseCurrent := svc.hold("/bundles/current")
	defer releaseCurrent()
	a.do(func(m *model.Adoption) {
		m.Open(7, 4)
		if m.Loading() || !m.Refreshing() {
			t.Errorf("just after the publish: loading %v, refreshing %v; want the figures shown, refreshing", m.Loading(), m.Refreshing())
		}
		if sum := m.Summary(); sum.Current != "1.0.3" || sum.Total != 120 {
			t.Errorf("while the publish's figures are read the section shows current %q, total %d; want the previous 1.0.3, 120", sum.Current, sum.Total)
		}
	})
	arrive(t, currentHeld)
	a.do(func(m *model.Adoption) {
		if m.Loading() || !m.Refreshing() {
			t.Errorf("with the new current bundle on its way: loading %v, refreshing %v", m.Loading(), m.Refreshing())
		}
	})
	releaseCurrent()
	a.wait("the new current bundle", func(m *model.Adoption) bool {
		return !m.Loading() && !m.Refreshing() && m.CurrentVersion() == "1.0.4"
	})
	a.do(func(m *model.Adoption) {
		if sum := m.Summary(); sum.Current != "1.0.4" || sum.OnCurrent != 0 {
			t.Errorf("after the publish the current build is %q with %d checks", sum.Current, sum.OnCurrent)
		}
	})
}

// A publish whose current bundle cannot be read does not keep showing the
// previous build as the current one: the figures show without one.
func TestAdoptionPublishCurrentUnreadable(t *testing.T) {
	svc := newBundleSvc(t, 3)
	svc.counts = checks(modeltest.NewClock().Now(), "1.0.3", 1, 30)
	a := newAdoptionSection(t, svc)
	a.do(func(m *model.Adoption) { m.Open(7, 3) })
	a.wait("the counts", func(m *model.Adoption) bool { return !m.Loading() && m.CurrentVersion() == "1.0.3" })
	svc.publish()
	svc.set(func() { svc.status["/api/extensions/7/bundles/current"] = http.StatusInternalServerError })
	a.do(func(m *model.Adoption) { m.Open(7, 4) })
	a.wait("the failed read", func(m *model.Adoption) bool { return m.Current.Err != nil && !m.Current.IsValidating })
	a.do(func(m *model.Adoption) {
		if m.Refreshing() || m.Loading() || m.CurrentVersion() != "" {
			t.Errorf("the new current bundle unreadable: refreshing %v, loading %v, current version %q; want the figures without a current build",
				m.Refreshing(), m.Loading(), m.CurrentVersion())
		}
	})
}

// Counts that cannot be read show why, with Try again, which reads them.
func TestAdoptionErrorThenRetry(t *testing.T) {
	svc := newBundleSvc(t, 3)
	svc.counts = checks(modeltest.NewClock().Now(), "1.0.3", 1, 30)
	svc.status["/api/extensions/7/adoption"] = http.StatusInternalServerError
	a := newAdoptionSection(t, svc)
	a.do(func(m *model.Adoption) { m.Open(7, 3) })
	a.wait("the error", func(m *model.Adoption) bool { return m.Failed() != nil })
	a.do(func(m *model.Adoption) {
		if pr, ok := api.AsProblem(m.Failed()); !ok || pr.Status != http.StatusInternalServerError {
			t.Errorf("the error is %v", m.Failed())
		}
	})
	svc.set(func() { delete(svc.status, "/api/extensions/7/adoption") })
	a.do(func(m *model.Adoption) { m.Retry() })
	a.wait("the counts", func(m *model.Adoption) bool { return !m.Loading() })
	a.do(func(m *model.Adoption) {
		if m.Failed() != nil || m.Summary().Total != 30 {
			t.Errorf("after Try again: failed %v, total %d", m.Failed(), m.Summary().Total)
		}
	})
}

// A 401 signs out; the section does not show it.
func TestAdoptionSignedOut(t *testing.T) {
	svc := newBundleSvc(t, 3)
	svc.status["/api/extensions/7/adoption"] = http.StatusUnauthorized
	a := newAdoptionSection(t, svc)
	a.do(func(m *model.Adoption) { m.Open(7, 3) })
	a.wait("the sign-out", func(*model.Adoption) bool { return len(a.signedOut) > 0 })
	a.do(func(m *model.Adoption) {
		if m.Failed() != nil {
			t.Errorf("the section shows the 401: %v", m.Failed())
		}
	})
}

// The section reads at most AdoptionMaxPages pages; without a current
// bundle (or when its record cannot be read) the counts show without it.
func TestAdoptionBounds(t *testing.T) {
	t.Run("pages", func(t *testing.T) {
		svc := newBundleSvc(t, 3)
		svc.counts = checks(modeltest.NewClock().Now(), "1.0.3", 1, 1, "1.0.3", 2, 1, "1.0.3", 3, 1)
		svc.countsPage, svc.endless = 1, true
		a := newAdoptionSection(t, svc)
		a.do(func(m *model.Adoption) { m.Open(7, 3) })
		a.wait("the pages", func(m *model.Adoption) bool { return !m.Loading() })
		a.do(func(m *model.Adoption) {
			if n := len(m.Counts.Data); n != model.AdoptionMaxPages || !m.Counts.HasMore {
				t.Errorf("%d pages read (more: %v), want %d", n, m.Counts.HasMore, model.AdoptionMaxPages)
			}
		})
		if n := svc.count("GET /api/extensions/7/adoption?cursor=8&days=7&limit=500"); n != 0 {
			t.Errorf("a ninth page was read")
		}
	})
	t.Run("no current bundle", func(t *testing.T) {
		svc := newBundleSvc(t, 0)
		a := newAdoptionSection(t, svc)
		a.do(func(m *model.Adoption) { m.Open(7, 0) })
		a.wait("the counts", func(m *model.Adoption) bool { return !m.Loading() })
		if n := svc.count("GET /api/extensions/7/bundles/current"); n != 0 {
			t.Errorf("the current bundle of an extension without one was read")
		}
		a.do(func(m *model.Adoption) {
			if m.Summary().Total != 0 || m.CurrentVersion() != "" {
				t.Errorf("total %d, current %q", m.Summary().Total, m.CurrentVersion())
			}
		})
	})
	t.Run("current bundle not there", func(t *testing.T) {
		svc := newBundleSvc(t, 3)
		svc.counts = checks(modeltest.NewClock().Now(), "1.0.3", 1, 30)
		svc.status["/api/extensions/7/bundles/current"] = http.StatusNotFound
		a := newAdoptionSection(t, svc)
		a.do(func(m *model.Adoption) { m.Open(7, 3) })
		a.wait("the counts", func(m *model.Adoption) bool { return !m.Loading() })
		a.do(func(m *model.Adoption) {
			if m.CurrentVersion() != "" || m.Current.Err == nil || m.Summary().Total != 30 {
				t.Errorf("current %q, error %v, total %d", m.CurrentVersion(), m.Current.Err, m.Summary().Total)
			}
		})
	})
}

// "Count: Testers" reads the testers per day (?count=testers) and sums
// them as testers; back to checks reads the checks' list, from the cache.
// The stream's testers revisions read the installs line and the counts
// again once each, and only past what the line shows.
func TestAdoptionByTestersAndLive(t *testing.T) {
	svc := newBundleSvc(t, 3)
	now := modeltest.NewClock().Now()
	today := now.Truncate(24 * time.Hour)
	svc.counts = checks(now, "1.0.3", 1, 30)
	svc.testers = []betaport.AdoptionCount{
		{Hour: today, Version: "1.0.3", Testers: 4},
		{Hour: today, Version: "1.0.2", Testers: 1},
		{Hour: today.AddDate(0, 0, -1), Version: "1.0.2", Testers: 6},
	}
	svc.installs = betaport.Installs{Testers: 12, OnCurrent: 4, Behind: 7, NotInstalled: 1, Revision: 9}
	a := newAdoptionSection(t, svc)
	a.do(func(m *model.Adoption) { m.Open(7, 3) })
	a.wait("the checks", func(m *model.Adoption) bool { return !m.Loading() && m.Installs.HasData })
	a.do(func(m *model.Adoption) {
		if sum := m.Summary(); sum.Testers || sum.Total != 30 {
			t.Errorf("by checks: testers %v, total %d", sum.Testers, sum.Total)
		}
		m.CountTesters(true)
	})
	// Choosing reopens the section, which reads the installs line again too:
	// wait for it, or its answer could land after the revision below and
	// stand for the read Follow owes.
	a.wait("the testers", func(m *model.Adoption) bool {
		return !m.Loading() && !m.Counts.IsValidating && !m.Installs.IsValidating
	})
	a.do(func(m *model.Adoption) {
		sum := m.Summary()
		if !sum.Testers || sum.Total != 11 || len(sum.Days[len(sum.Days)-1].Shares) != 2 {
			t.Errorf("by testers: testers %v, total %d, today %+v", sum.Testers, sum.Total, sum.Days[len(sum.Days)-1])
		}
	})
	if n := svc.count("GET /api/extensions/7/adoption?count=testers&days=7"); n != 1 {
		t.Errorf("the testers' counts were read %d times, want once:\n%s", n, svc.requests())
	}

	installs := func() int { return svc.count("GET /api/extensions/7/installs") }
	testers := func() int { return svc.count("GET /api/extensions/7/adoption?count=testers") }
	i0, t0 := installs(), testers()
	a.do(func(m *model.Adoption) { m.Follow(9); m.Follow(8) })
	if installs() != i0 || testers() != t0 {
		t.Fatalf("revisions the line shows read again: installs %d → %d, counts %d → %d", i0, installs(), t0, testers())
	}
	svc.set(func() { svc.installs.OnCurrent, svc.installs.Behind, svc.installs.Revision = 5, 6, 10 })
	a.do(func(m *model.Adoption) { m.Follow(10) })
	a.wait("the line read again", func(m *model.Adoption) bool {
		return m.Installs.HasData && m.Installs.Data.OnCurrent == 5 && !m.Installs.IsValidating && !m.Counts.IsValidating
	})
	a.do(func(m *model.Adoption) { m.Follow(10) })
	if installs() != i0+1 || testers() != t0+1 {
		t.Errorf("one revision past the line: installs read %d times, counts %d; want once each", installs()-i0, testers()-t0)
	}
}

// Counting testers, one channel's are read (?channel=), and every
// channel's again from the cache; counting checks sends no channel.
func TestAdoptionByChannel(t *testing.T) {
	svc := newBundleSvc(t, 3)
	now := modeltest.NewClock().Now()
	svc.counts = checks(now, "1.0.3", 1, 30)
	svc.testers = []betaport.AdoptionCount{{Hour: now.Truncate(24 * time.Hour), Version: "1.0.3", Testers: 4}}
	a := newAdoptionSection(t, svc)
	a.do(func(m *model.Adoption) {
		m.CountChannel("nightly") // chosen while checks are counted: kept for testers
		m.Open(7, 3)
	})
	a.wait("the checks", func(m *model.Adoption) bool { return !m.Loading() })
	a.do(func(m *model.Adoption) { m.CountTesters(true) })
	a.wait("nightly's testers", func(m *model.Adoption) bool { return !m.Loading() && !m.Counts.IsValidating })
	if n := svc.count("GET /api/extensions/7/adoption?channel=nightly&count=testers&days=7"); n != 1 {
		t.Fatalf("nightly's testers were read %d times, want once:\n%s", n, svc.requests())
	}
	if n := svc.count("GET /api/extensions/7/adoption?channel="); n != 1 {
		t.Fatalf("a channel was sent %d times (the checks carry none):\n%s", n, svc.requests())
	}
	a.do(func(m *model.Adoption) { m.CountChannel("") })
	a.wait("every tester", func(m *model.Adoption) bool { return !m.Loading() && !m.Counts.IsValidating })
	if n := svc.count("GET /api/extensions/7/adoption?count=testers&days=7"); n != 1 {
		t.Fatalf("every channel's testers were read %d times, want once:\n%s", n, svc.requests())
	}
}
