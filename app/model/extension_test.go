package model_test

import (
	"net/http"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
	"github.com/betaport/betaport/app/model/modeltest"
)

func TestExtensionID(t *testing.T) {
	for _, c := range []struct {
		path string
		id   int64
		page string
		ok   bool
	}{
		{"/extensions/7", 7, "", true},
		{"/extensions/7/testers", 7, "testers", true},
		{"/extensions/7/pages", 7, "pages", true},
		{"/extensions/12/settings", 12, "settings", true},
		{"/extensions/007", 0, "", false}, // as the API: one spelling per id
		{"/extensions/07/testers", 0, "", false},
		{"/extensions/9223372036854775807", 9223372036854775807, "", true},
		{"/extensions/9223372036854775808", 0, "", false},
		{"/extensions/0", 0, "", false},
		{"/extensions/+7", 0, "", false},
		{"/extensions/-7", 0, "", false},
		{"/extensions/7a", 0, "", false},
		{"/extensions/ 7", 0, "", false},
		{"/extensions/", 0, "", false},
		{"/extensions", 0, "", false},
		{"/extensions//testers", 0, "", false},
		{"/builds", 0, "", false},
		{"/x/extensions/7", 0, "", false},
		{"", 0, "", false},
	} {
		id, page, ok := model.ExtensionPage(c.path)
		if id != c.id || page != c.page || ok != c.ok {
			t.Errorf("ExtensionPage(%q) = %d, %q, %v; want %d, %q, %v", c.path, id, page, ok, c.id, c.page, c.ok)
		}
		if id, ok := model.ExtensionID(c.path); id != c.id || ok != c.ok {
			t.Errorf("ExtensionID(%q) = %d, %v; want %d, %v", c.path, id, ok, c.id, c.ok)
		}
	}
}

func FuzzExtensionID(f *testing.F) {
	for _, s := range []string{"/extensions/7", "/extensions/7/testers", "/extensions/+1", "/extensions/01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		id, page, ok := model.ExtensionPage(path)
		if !ok {
			if id != 0 || page != "" {
				t.Fatalf("%q: no id, yet %d, %q", path, id, page)
			}
			return
		}
		if id <= 0 {
			t.Fatalf("%q: id %d", path, id)
		}
		// The address names the id it was read as.
		again, _, ok := model.ExtensionPage(api.ExtensionPath(id)[len("/api"):])
		if !ok || again != id {
			t.Fatalf("%q: %d reads back as %d, %v", path, id, again, ok)
		}
	})
}

// An extension's record: read once, shown from the cache on the next
// visit while it is read again; Mutate shows a change at once; an error
// stays until the page asks again.
func TestExtensionRecord(t *testing.T) {
	svc := newBundleSvc(t, 3)
	loop := modeltest.NewLoop(t)
	env := loop.Env(modeltest.Client(svc), modeltest.NewClock())
	clock := fetch.NewFakeClock(svcEpoch)
	cache := fetch.NewCache(fetch.CacheOptions{Clock: clock})
	var e *model.Extension
	var states []fetch.State[betaport.Extension]
	loop.Do(func() {
		e = model.OpenExtension(env, cache, 7, func(s fetch.State[betaport.Extension]) { states = append(states, s) })
	})
	loop.Wait("the record", func() bool { return e.Record() != nil && !e.State.IsValidating })
	loop.Do(func() {
		if r := e.Record(); r.Name != "Tab Tamer" || r.CurrentBundle != 3 {
			t.Errorf("the record is %+v", r)
		}
		if len(states) == 0 || states[len(states)-1].Version != e.State.Version {
			t.Errorf("changed was not told the last state: %d states", len(states))
		}
		x := *e.Record()
		x.CurrentBundle = 4
		e.Mutate(x)
	})
	loop.Wait("the change", func() bool { return e.Record().CurrentBundle == 4 })
	loop.Do(func() { e.Close() })

	// The next visit, later: the cached record at once, read again (the
	// answer is held until the page has been looked at).
	clock.Advance(model.RequestTimeout)
	arrived, release := svc.hold("GET /api/extensions/7")
	defer release()
	var next *model.Extension
	loop.Do(func() {
		next = model.OpenExtension(env, cache, 7, nil)
		if r := next.Record(); r == nil || r.CurrentBundle != 4 {
			t.Errorf("the next visit shows %+v at once, want the cached record", r)
		}
	})
	arrive(t, arrived)
	release()
	loop.Wait("the record read again", func() bool { return next.Record().CurrentBundle == 3 && !next.State.IsValidating })
	if n := svc.countLine("GET /api/extensions/7"); n != 2 {
		t.Errorf("the record was read %d times, want twice:\n%s", n, svc.requests())
	}

	// An error stays (no retry behind the page's back) until asked again.
	svc.set(func() { svc.status["/api/extensions/7"] = http.StatusInternalServerError })
	loop.Do(func() { next.Revalidate() })
	loop.Wait("the error", func() bool { return next.State.Err != nil && !next.State.IsValidating })
	clock.Advance(fetch.DefaultErrorRetryInterval * 4)
	svc.set(func() { delete(svc.status, "/api/extensions/7") })
	loop.Do(func() {})
	if n := svc.countLine("GET /api/extensions/7"); n != 3 {
		t.Errorf("the record was read %d times after an error, want 3 (no retry):\n%s", n, svc.requests())
	}
	loop.Do(func() { next.Revalidate() })
	loop.Wait("the record again", func() bool { return next.State.Err == nil && !next.State.IsValidating })
	loop.Do(func() { next.Close() })
}
