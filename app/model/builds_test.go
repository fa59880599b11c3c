package model_test

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
)

// buildsAPI answers GET /api/builds for the tester of extension 7 (one
// page, newest first); revoked, it answers as the service does a tester
// whose access ended.
type buildsAPI struct {
	mu      sync.Mutex
	builds  []betaport.Bundle
	revoked bool
	reads   int
}

func newBuildsAPI() *buildsAPI {
	return &buildsAPI{builds: []betaport.Bundle{
		{ID: 12, ExtensionID: 7, Name: "Tab Tamer", Number: 3, Version: "1.3.0", Current: true, ReleaseNotes: "Faster tabs."},
		{ID: 11, ExtensionID: 7, Name: "Tab Tamer", Number: 2, Version: "1.2.0"},
	}}
}

// publish puts a new current build on top, as a pipeline's publish does.
func (a *buildsAPI) publish(b betaport.Bundle) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.builds {
		a.builds[i].Current = false
	}
	b.Current = true
	a.builds = append([]betaport.Bundle{b}, a.builds...)
}

func (a *buildsAPI) read() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reads
}

func (a *buildsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r.URL.Path != api.PathBuilds {
		writeProblem(w, http.StatusNotFound, "/problems/not-found", "No such page.")
		return
	}
	a.reads++
	if a.revoked {
		writeProblem(w, http.StatusUnauthorized, api.ProblemAccessEnded, "Your access to Tab Tamer ended. Ask ada@example.com.")
		return
	}
	json.NewEncoder(w).Encode(fetch.CursorPage[betaport.Bundle]{Data: append([]betaport.Bundle(nil), a.builds...)})
}

// buildsPage is the builds page's model on a page against its service;
// its event stream is the test's.
type buildsPage struct {
	*testPage
	svc       *buildsAPI
	m         *model.Builds
	fx        effects
	loaded    int
	listening []int64
	shows     func(api.Revision) bool
	changed   func()
	stopped   int
}

func newBuildsPage(t *testing.T, svc *buildsAPI, s *model.Session) *buildsPage {
	p := &buildsPage{testPage: newPage(t, svc), svc: svc}
	p.do(func() {
		p.m = model.NewBuilds(model.BuildsConfig{
			Env: p.env, Session: s, Cache: fetch.NewCache(fetch.CacheOptions{}),
			Title: p.fx.title, Navigate: p.fx.goTo, Loaded: func() { p.loaded++ },
			Listen: func(id int64, shows func(api.Revision) bool, changed func()) func() {
				p.listening = append(p.listening, id)
				p.shows, p.changed = shows, changed
				return func() { p.stopped++ }
			},
		})
	})
	t.Cleanup(func() { p.do(p.m.Close) })
	return p
}

// event is one "bundles" event of the extension's stream, as the page's
// listener hands it over: the page reads again unless it shows rev.
func (p *buildsPage) event(rev api.Revision) {
	p.do(func() {
		if !p.shows(rev) {
			p.changed()
		}
	})
}

func (p *buildsPage) open() {
	p.do(p.m.Open)
	p.wait("the builds", func() bool { return p.m.List.Data != nil && !p.m.List.IsValidating })
}

func buildNumbers(m *model.Builds) (out []int64) {
	rows := m.Rows()
	for i := range rows.Len() {
		if b, ok := rows.At(i); ok {
			out = append(out, b.Number)
		}
	}
	return out
}

func TestBuildsFollowThePublishes(t *testing.T) {
	svc := newBuildsAPI()
	p := newBuildsPage(t, svc, model.NewSession(testerSession))
	p.open()
	p.do(func() {
		if got := buildNumbers(p.m); len(got) != 2 || got[0] != 3 {
			t.Errorf("builds %v", got)
		}
		if lastOf(p.fx.titles) != "Your builds" || p.loaded != 1 || len(p.listening) != 1 || p.listening[0] != 7 {
			t.Errorf("titles %v, loaded %d, listening to %v", p.fx.titles, p.loaded, p.listening)
		}
		if notes := p.m.CurrentNotes(); len(notes) != 1 || notes[0].Number != 3 {
			t.Errorf("current notes %+v", notes)
		}
	})
	reads := svc.read()
	// The stream's first event repeats what the page shows: nothing read.
	p.event(api.Revision{CurrentBundle: 3, LastBundle: 3})
	p.settle()
	if n := svc.read(); n != reads {
		t.Errorf("%d reads for a revision the page shows", n-reads)
	}
	// A publish: the first page is read again, the new build on top.
	svc.publish(betaport.Bundle{ID: 13, ExtensionID: 7, Name: "Tab Tamer", Number: 4, Version: "1.4.0"})
	p.event(api.Revision{CurrentBundle: 4, LastBundle: 4})
	p.wait("build #4 on top", func() bool { got := buildNumbers(p.m); return len(got) == 3 && got[0] == 4 })
	p.do(func() {
		if notes := p.m.CurrentNotes(); len(notes) != 0 {
			t.Errorf("the notes of a build no longer current: %+v", notes)
		}
	})
	// The page shown again (Back): the same list, not another.
	p.do(p.m.Open)
	p.do(func() {
		if len(p.listening) != 1 || p.loaded != 1 {
			t.Errorf("opened again: listening %v, loaded %d", p.listening, p.loaded)
		}
	})
	p.do(p.m.Close)
	p.do(func() {
		if p.stopped != 1 {
			t.Errorf("stopped listening %d times", p.stopped)
		}
	})
}

// A rollback moves the current mark, not the top: that is news too.
func TestBuildsShowsTheCurrentMark(t *testing.T) {
	p := newBuildsPage(t, newBuildsAPI(), model.NewSession(testerSession))
	p.open()
	p.do(func() {
		for _, c := range []struct {
			rev   api.Revision
			shown bool
		}{
			{api.Revision{CurrentBundle: 3, LastBundle: 3}, true},
			{api.Revision{CurrentBundle: 2, LastBundle: 3}, false},
			{api.Revision{CurrentBundle: 4, LastBundle: 4}, false},
			{api.Revision{CurrentBundle: 3, LastBundle: 4}, false}, // a build above the current one
		} {
			if got := p.m.Shows(c.rev); got != c.shown {
				t.Errorf("Shows(%+v) = %v", c.rev, got)
			}
		}
	})
}

// An admin here follows nothing: the stream is a tester's.
func TestBuildsOfAnAdminListenToNothing(t *testing.T) {
	svc := newBuildsAPI()
	p := newBuildsPage(t, svc, model.NewSession(adminSession))
	p.open()
	p.do(func() {
		if len(p.listening) != 0 {
			t.Errorf("listening to %v", p.listening)
		}
	})
}

// A tester revoked while away: their builds page says their access ended.
func TestBuildsOfARevokedTester(t *testing.T) {
	svc := newBuildsAPI()
	svc.revoked = true
	s := model.NewSession(testerSession)
	p := newBuildsPage(t, svc, s)
	p.do(p.m.Open)
	p.wait("the ended page", func() bool { return p.fx.last() == model.PathEnded })
	p.do(func() {
		if p.m.List.Err != nil || s.Ended() == "" {
			t.Errorf("the 401 is shown (%v), or its reason lost (%q)", p.m.List.Err, s.Ended())
		}
	})
}

// A tester revoked while their builds page is open presses Install: the
// download gets no file, and the page reads the builds again and says
// their access ended, as a reload would (issue 28: it did nothing and said
// nothing).
func TestBuildsDownloadAfterTheTesterWasRevoked(t *testing.T) {
	svc := newBuildsAPI()
	s := model.NewSession(testerSession)
	p := newBuildsPage(t, svc, s)
	p.open()
	reads := svc.read()
	svc.mu.Lock()
	svc.revoked = true
	svc.mu.Unlock()
	p.do(p.m.Downloading)
	p.wait("the ended page", func() bool { return p.fx.last() == model.PathEnded })
	if n := svc.read(); n != reads+1 {
		t.Errorf("a download read the builds %d times, want once", n-reads)
	}
	p.do(func() {
		if s.Ended() == "" {
			t.Error("the reason the access ended is lost")
		}
	})
}

func TestBuildsPrerender(t *testing.T) {
	first := []model.BuildPage{{Data: newBuildsAPI().builds}}
	m := model.NewBuilds(model.BuildsConfig{Fallback: func(key string) []model.BuildPage {
		if key == api.PathBuilds+"?limit=50" {
			return first
		}
		return nil
	}})
	m.Prerender()
	if got := buildNumbers(m); len(got) != 2 || m.List.HasMore || m.List.Size != 1 {
		t.Errorf("prerendered %v (%+v)", got, m.List)
	}
}
