package model_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/model"
	"github.com/betaport/betaport/app/model/modeltest"
)

// The settings page's models (settings.go, keys.go, webhooks.go) are run
// here as the page runs them: on a UI loop, against a small fake of the
// API in the process, on a clock the test moves. The helpers below are
// shared by settings_test.go, keys_test.go and webhooks_test.go.

const settingsExt = 7

// settingsPage is one visit of the settings page: its Env, and how the
// person leaves it while answers are on their way.
type settingsPage struct {
	t     *testing.T
	loop  *modeltest.Loop
	clock *modeltest.Clock
	env   model.Env
	// leave ends the page's context: the person went elsewhere.
	leave context.CancelFunc

	// The page's async work, counted: started ever, running now.
	mu      sync.Mutex
	idle    *sync.Cond
	started int
	running int
}

func newSettingsPage(t *testing.T, h http.Handler) *settingsPage {
	p := &settingsPage{t: t, loop: modeltest.NewLoop(t), clock: modeltest.NewClock()}
	p.idle = sync.NewCond(&p.mu)
	p.env = p.loop.Env(modeltest.Client(h), p.clock)
	ctx, cancel := context.WithCancel(p.env.Context)
	p.env.Context, p.leave = ctx, cancel
	t.Cleanup(cancel)
	// The page's async work is counted, so settle knows when every
	// request sent has been answered.
	p.env.Async = func(f func()) {
		p.mu.Lock()
		p.started++
		p.running++
		p.mu.Unlock()
		p.loop.Async(func() {
			defer func() {
				p.mu.Lock()
				p.running--
				p.idle.Broadcast()
				p.mu.Unlock()
			}()
			f()
		})
	}
	return p
}

// do acts as the person (or reads the page) on the UI goroutine.
func (p *settingsPage) do(f func()) { p.loop.Do(f) }

// settle waits until every request sent is answered and every answer is
// handled (none may be held).
func (p *settingsPage) settle() {
	for {
		p.loop.Do(func() {}) // what was dispatched has started its work
		p.mu.Lock()
		n := p.started
		for p.running > 0 {
			p.idle.Wait()
		}
		p.mu.Unlock()
		p.loop.Do(func() {}) // the answers are handled
		p.mu.Lock()
		again := p.started != n
		p.mu.Unlock()
		if !again {
			return
		}
	}
}

// advance moves the page's clock, then settles what its timers started.
func (p *settingsPage) advance(d time.Duration) {
	p.clock.Advance(d)
	p.settle()
}

// settingsEffects records what a model asked of its page, in order.
type settingsEffects struct {
	mu  sync.Mutex
	log []string
}

func (e *settingsEffects) add(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, fmt.Sprintf(format, args...))
}

// take returns what was recorded since the last take.
func (e *settingsEffects) take() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.log
	e.log = nil
	return out
}

// settingsFake is a small fake of the API: routes by pattern, a log of
// the calls, and requests held until the test lets them be answered.
type settingsFake struct {
	t   *testing.T
	mux *http.ServeMux

	mu      sync.Mutex
	calls   []string
	held    map[string]chan struct{}
	arrived chan string
	early   map[string]int // held calls arrived, not waited for yet
}

func newSettingsFake(t *testing.T) *settingsFake {
	return &settingsFake{t: t, mux: http.NewServeMux(), held: map[string]chan struct{}{}, arrived: make(chan string, 100), early: map[string]int{}}
}

func (f *settingsFake) handle(pattern string, h http.HandlerFunc) { f.mux.HandleFunc(pattern, h) }

func (f *settingsFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	call := r.Method + " " + r.URL.Path
	f.mu.Lock()
	f.calls = append(f.calls, call)
	hold := f.held[call]
	f.mu.Unlock()
	if hold != nil {
		f.arrived <- call
		<-hold // answered after the release, whatever became of the page
	}
	f.mux.ServeHTTP(w, r)
}

// hold keeps the answers to call ("METHOD /path") until release.
func (f *settingsFake) hold(call string) (release func()) {
	ch := make(chan struct{})
	f.mu.Lock()
	f.held[call] = ch
	f.mu.Unlock()
	var once sync.Once
	release = func() {
		once.Do(func() {
			f.mu.Lock()
			delete(f.held, call)
			f.mu.Unlock()
			close(ch)
		})
	}
	f.t.Cleanup(release)
	return release
}

// waitArrived waits until a held call has arrived (held calls arrive in
// any order).
func (f *settingsFake) waitArrived(call string) {
	f.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		f.mu.Lock()
		if f.early[call] > 0 {
			f.early[call]--
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		select {
		case got := <-f.arrived:
			f.mu.Lock()
			f.early[got]++
			f.mu.Unlock()
		case <-timeout:
			f.t.Fatalf("waited 10 s for %s", call)
		}
	}
}

// count is how many times call was made.
func (f *settingsFake) count(call string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c == call {
			n++
		}
	}
	return n
}

// takeCalls returns the calls made since the last take.
func (f *settingsFake) takeCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.calls
	f.calls = nil
	return out
}

func settingsJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// settingsProblem answers a problem, as the service does.
func settingsProblem(w http.ResponseWriter, status int, param, detail string) {
	w.Header().Set("Content-Type", api.ProblemContentType)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(api.Problem{Type: "/problems/test", Title: http.StatusText(status), Status: status, Detail: detail, Param: param})
}

var (
	settingsAdmin  = &api.Session{Kind: api.KindAdmin, User: &betaport.User{Email: "ada@example.com"}, Team: &betaport.Team{Name: "Acme", Plan: betaport.PlanProfessional}}
	settingsTester = &api.Session{Kind: api.KindTester, Tester: &betaport.Tester{Email: "tess@example.com"}}
)

// updatesFake answers the browser updates: the update URL, and a new one
// for each rotation (rotateFails answers the next ones a 503 instead).
type updatesFake struct {
	*settingsFake
	token       atomic.Int64
	rotateFails atomic.Bool
	getStatus   atomic.Int64 // answers the updates' GET with this status when set
}

func newUpdatesFake(t *testing.T) *updatesFake {
	f := &updatesFake{settingsFake: newSettingsFake(t)}
	f.token.Store(1)
	f.handle("GET "+api.UpdatesPath(settingsExt), func(w http.ResponseWriter, r *http.Request) {
		if s := f.getStatus.Load(); s != 0 {
			settingsProblem(w, int(s), "", "Sign in again.")
			return
		}
		settingsJSON(w, http.StatusOK, f.updates())
	})
	f.handle("POST "+api.UpdateTokenPath(settingsExt), func(w http.ResponseWriter, r *http.Request) {
		if f.rotateFails.Load() {
			settingsProblem(w, http.StatusServiceUnavailable, "", "The service is busy. Try again in a minute.")
			return
		}
		f.token.Add(1)
		settingsJSON(w, http.StatusOK, f.updates())
	})
	return f
}

func (f *updatesFake) updates() api.Updates {
	return api.Updates{ChromeID: "abcdefghijklmnopabcdefghijklmnop", UpdateURL: fmt.Sprintf("https://betaport.test/update/7/token%d", f.token.Load())}
}

// settingsHarness is a Settings on a page against the updates fake.
type settingsHarness struct {
	*settingsPage
	api     *updatesFake
	fx      *settingsEffects
	s       *model.Settings
	copies  bool // the page has a clipboard
	signOut []error
}

func newSettingsHarness(t *testing.T) *settingsHarness {
	h := &settingsHarness{api: newUpdatesFake(t), fx: &settingsEffects{}, copies: true}
	h.settingsPage = newSettingsPage(t, h.api)
	h.do(func() {
		h.s = model.NewSettings(model.SettingsConfig{
			Env: h.env, ExtensionID: settingsExt,
			Focus: func(f model.SettingsFocus) { h.fx.add("focus %s", settingsFocusName[f]) },
			Copy: func(text string) bool {
				h.fx.add("copy %s", text)
				return h.copies
			},
			SignedOut: func(err error) bool {
				if p, ok := api.AsProblem(err); ok && p.Status == http.StatusUnauthorized {
					h.signOut = append(h.signOut, err)
					return true
				}
				return false
			},
		})
	})
	return h
}

var settingsFocusName = map[model.SettingsFocus]string{
	model.SettingsFocusRotate: "rotate", model.SettingsFocusConfirmRotate: "confirm-rotate", model.SettingsFocusUpdateURL: "update-url",
}

// admin signs an admin in and waits for the update URL.
func (h *settingsHarness) admin() {
	h.t.Helper()
	var admin bool
	h.do(func() { admin = h.s.SetSession(settingsAdmin) })
	if !admin {
		h.t.Fatal("SetSession(an admin) reports no admin")
	}
	h.settle()
	h.do(func() {
		if h.s.Updates == nil || h.s.UpdatesErr != nil {
			h.t.Fatalf("an admin's page shows updates %+v, error %v", h.s.Updates, h.s.UpdatesErr)
		}
	})
	h.api.takeCalls()
	h.fx.take()
}

func settingsSame(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestSettingsAdminSeesTheUpdateURL(t *testing.T) {
	h := newSettingsHarness(t)
	var admin bool
	h.do(func() {
		h.s.SetExtension(&betaport.Extension{ID: settingsExt, Name: "Tab Tamer"}, nil)
		admin = h.s.SetSession(settingsAdmin)
		if !h.s.Admin() || h.s.Updates != nil {
			t.Errorf("right after an admin's session: Admin %v, updates %+v", h.s.Admin(), h.s.Updates)
		}
	})
	if !admin {
		t.Fatal("SetSession(an admin) reports no admin: the keys would not be listed")
	}
	h.settle()
	h.do(func() {
		if h.s.Updates == nil || h.s.Updates.UpdateURL != "https://betaport.test/update/7/token1" || h.s.UpdatesErr != nil {
			t.Errorf("the page shows updates %+v (error %v), want the update URL", h.s.Updates, h.s.UpdatesErr)
		}
	})
	settingsSame(t, "calls", h.api.takeCalls(), []string{"GET " + api.UpdatesPath(settingsExt)})
}

func TestSettingsTesterSeesNoUpdateURL(t *testing.T) {
	h := newSettingsHarness(t)
	var admin bool
	h.do(func() { admin = h.s.SetSession(settingsTester) })
	h.settle()
	if admin {
		t.Error("SetSession(a tester) reports an admin")
	}
	if calls := h.api.takeCalls(); len(calls) != 0 {
		t.Errorf("a tester's page asked %q", calls)
	}
}

func TestSettingsSignedOutWhileReadingUpdates(t *testing.T) {
	h := newSettingsHarness(t)
	h.api.getStatus.Store(http.StatusUnauthorized)
	h.do(func() { h.s.SetSession(settingsAdmin) })
	h.settle()
	h.do(func() {
		if len(h.signOut) != 1 {
			t.Errorf("a 401 was handed to SignedOut %d times, want once", len(h.signOut))
		}
		if h.s.UpdatesErr != nil {
			t.Errorf("a 401 shows as an error (%v): the page leaves for the sign-in page instead", h.s.UpdatesErr)
		}
	})
}

func TestSettingsRotateAskCancelThenConfirm(t *testing.T) {
	h := newSettingsHarness(t)
	h.admin()

	// Rotate before the question is open does nothing.
	h.do(h.s.Rotate)
	h.settle()
	if n := h.api.count("POST " + api.UpdateTokenPath(settingsExt)); n != 0 {
		t.Fatalf("Rotate without the question rotated (%d calls)", n)
	}

	// Ask, then Cancel: nothing changes.
	h.do(func() {
		h.s.AskRotate()
		if !h.s.RotateAsking || !strings.Contains(h.s.Announce, "Confirm or cancel") {
			t.Errorf("after Rotate update token: asking %v, announced %q", h.s.RotateAsking, h.s.Announce)
		}
	})
	settingsSame(t, "focus after asking", h.fx.take(), []string{"focus confirm-rotate"})
	h.do(func() {
		h.s.CancelRotate()
		if h.s.RotateAsking || !strings.Contains(h.s.Announce, "not changed") {
			t.Errorf("after Cancel: asking %v, announced %q", h.s.RotateAsking, h.s.Announce)
		}
	})
	settingsSame(t, "focus after Cancel", h.fx.take(), []string{"focus rotate"})
	h.settle()
	if calls := h.api.takeCalls(); len(calls) != 0 {
		t.Fatalf("Cancel sent %q", calls)
	}

	// Ask, then the confirmation, pressed twice: one rotation.
	release := h.api.hold("POST " + api.UpdateTokenPath(settingsExt))
	h.do(func() { h.s.AskRotate(); h.s.Rotate(); h.s.Rotate() })
	h.api.waitArrived("POST " + api.UpdateTokenPath(settingsExt))
	h.do(func() {
		if !h.s.Rotating || !h.s.RotateAsking {
			t.Errorf("while rotating: rotating %v, asking %v", h.s.Rotating, h.s.RotateAsking)
		}
		h.s.CancelRotate() // too late: the rotation is on its way
	})
	h.fx.take()
	release()
	h.settle()
	h.do(func() {
		s := h.s
		switch {
		case s.Rotating || s.RotateAsking || !s.Rotated || s.RotateErr != nil:
			t.Errorf("after the rotation: rotating %v, asking %v, rotated %v, error %v", s.Rotating, s.RotateAsking, s.Rotated, s.RotateErr)
		case s.Updates.UpdateURL != "https://betaport.test/update/7/token2":
			t.Errorf("the page shows %q, want the new update URL", s.Updates.UpdateURL)
		case !strings.Contains(s.Announce, s.Updates.UpdateURL):
			t.Errorf("announced %q, want the new URL", s.Announce)
		}
	})
	settingsSame(t, "focus after the rotation", h.fx.take(), []string{"focus update-url"})
	if n := h.api.count("POST " + api.UpdateTokenPath(settingsExt)); n != 1 {
		t.Errorf("the confirmation pressed twice rotated %d times, want once", n)
	}
}

func TestSettingsRotateFailsThenRetry(t *testing.T) {
	h := newSettingsHarness(t)
	h.admin()
	h.api.rotateFails.Store(true)
	h.do(func() { h.s.AskRotate(); h.s.Rotate() })
	h.settle()
	h.do(func() {
		s := h.s
		if s.RotateErr == nil || s.RotateErr.Error() != "The service is busy. Try again in a minute." || s.Rotating || s.RotateAsking || s.Rotated {
			t.Errorf("a failed rotation: error %v, rotating %v, asking %v, rotated %v", s.RotateErr, s.Rotating, s.RotateAsking, s.Rotated)
		}
		if !strings.HasPrefix(s.Announce, "The update token was not rotated: The service is busy") {
			t.Errorf("announced %q", s.Announce)
		}
		if s.Updates.UpdateURL != "https://betaport.test/update/7/token1" {
			t.Errorf("a failed rotation shows %q", s.Updates.UpdateURL)
		}
	})
	settingsSame(t, "focus", h.fx.take(), []string{"focus confirm-rotate", "focus rotate"})

	h.api.rotateFails.Store(false)
	h.do(func() {
		h.s.AskRotate()
		if h.s.RotateErr != nil {
			t.Errorf("asking again still shows the old error %v", h.s.RotateErr)
		}
		h.s.Rotate()
	})
	h.settle()
	h.do(func() {
		if !h.s.Rotated || h.s.RotateErr != nil || h.s.Updates.UpdateURL != "https://betaport.test/update/7/token2" {
			t.Errorf("the retry: rotated %v, error %v, URL %q", h.s.Rotated, h.s.RotateErr, h.s.Updates.UpdateURL)
		}
	})
}

func TestSettingsCopyUpdateURL(t *testing.T) {
	h := newSettingsHarness(t)
	h.admin()
	h.do(func() {
		h.s.CopyUpdateURL()
		if !h.s.UpdateURLCopied || h.s.Announce != "Update URL copied." {
			t.Errorf("after Copy: copied %v, announced %q", h.s.UpdateURLCopied, h.s.Announce)
		}
	})
	settingsSame(t, "copy", h.fx.take(), []string{"copy https://betaport.test/update/7/token1"})

	// A rotation makes the button say Copy again.
	h.do(func() { h.s.AskRotate(); h.s.Rotate() })
	h.settle()
	h.fx.take()
	h.copies = false // no clipboard: the field is selected instead
	h.do(func() {
		if h.s.UpdateURLCopied {
			t.Error("after a rotation the new URL reads as copied")
		}
		h.s.CopyUpdateURL()
		if h.s.UpdateURLCopied {
			t.Error("with no clipboard the URL reads as copied")
		}
	})
	settingsSame(t, "copy without a clipboard", h.fx.take(), []string{"copy https://betaport.test/update/7/token2", "focus update-url"})
}

func TestSettingsRotationAnsweredAfterThePageIsGone(t *testing.T) {
	h := newSettingsHarness(t)
	h.admin()
	release := h.api.hold("POST " + api.UpdateTokenPath(settingsExt))
	h.do(func() { h.s.AskRotate(); h.s.Rotate() })
	h.api.waitArrived("POST " + api.UpdateTokenPath(settingsExt))
	h.fx.take()
	var before string
	h.do(func() { before = h.s.Announce })
	h.leave()
	release()
	h.settle()
	h.do(func() {
		s := h.s
		if !s.Rotating || s.Rotated || s.Updates.UpdateURL != "https://betaport.test/update/7/token1" || s.Announce != before {
			t.Errorf("an answer after the page was left changed it: rotating %v, rotated %v, URL %q, announced %q", s.Rotating, s.Rotated, s.Updates.UpdateURL, s.Announce)
		}
	})
	if fx := h.fx.take(); len(fx) != 0 {
		t.Errorf("an answer after the page was left asked the page for %q", fx)
	}
}
