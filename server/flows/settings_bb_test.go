package flows_test

// Black-box flows of the extension's settings page: the update URL and its
// rotation (model.Settings), the named keys (model.Keys). Written against
// the models' public API and the wire contract only; the service is the
// real one on loopback (harness_test.go).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
	"github.com/betaport/betaport/app/model"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/demo"
)

// ---------------------------------------------------------------------
// Helpers (prefixed bbs: other files of this package are written at the
// same time).

// bbsWire is a browser's network: it counts the requests by "METHOD path"
// and can hold some of them, as a slow network would, until the test lets
// them through. A held request whose page is left still reaches the
// service once let through (the answer then comes back to a page that is
// gone), unless it was cancelled before: a cancelled one never goes.
type bbsWire struct {
	next *http.Client

	mu    sync.Mutex
	count map[string]int
	holds map[string]*bbsGate
}

type bbsGate struct {
	arrived chan struct{}
	release chan struct{}
	once    sync.Once
	// detached: once let through, the request goes on even when its
	// page's context ended while it was held (the service acts; the
	// answer comes back after the page is gone).
	detached bool
}

// Let lets the held requests (and every later one of the same kind) through.
func (g *bbsGate) Let() { g.once.Do(func() { close(g.release) }) }

func bbsWireOf(c *client.Client) *bbsWire {
	hc, ok := c.HTTP.(*http.Client)
	if !ok {
		panic("bbsWireOf: the client has no *http.Client")
	}
	w := &bbsWire{next: hc, count: map[string]int{}, holds: map[string]*bbsGate{}}
	c.HTTP = w
	return w
}

func (w *bbsWire) Do(req *http.Request) (*http.Response, error) {
	k := req.Method + " " + req.URL.Path
	w.mu.Lock()
	w.count[k]++
	g := w.holds[k]
	w.mu.Unlock()
	if g != nil {
		select {
		case g.arrived <- struct{}{}:
		default:
		}
		select {
		case <-g.release:
			if g.detached {
				req = req.WithContext(context.WithoutCancel(req.Context()))
			}
		case <-req.Context().Done():
			if !g.detached {
				return nil, req.Context().Err()
			}
			<-g.release
			req = req.WithContext(context.WithoutCancel(req.Context()))
		}
	}
	return w.next.Do(req)
}

// Hold holds the requests METHOD path until the gate is let through.
func (w *bbsWire) Hold(t *testing.T, method, path string, detached bool) *bbsGate {
	t.Helper()
	g := &bbsGate{arrived: make(chan struct{}, 64), release: make(chan struct{}), detached: detached}
	w.mu.Lock()
	w.holds[method+" "+path] = g
	w.mu.Unlock()
	t.Cleanup(g.Let)
	return g
}

// Count is how many requests METHOD path the browser sent.
func (w *bbsWire) Count(method, path string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.count[method+" "+path]
}

// Arrived waits until a held request has reached the gate.
func (g *bbsGate) Arrived(t *testing.T, p *bbsPage, what string) {
	t.Helper()
	p.Wait(what+" on its way", func() bool {
		select {
		case <-g.arrived:
			return true
		default:
			return false
		}
	})
}

// bbsPage is an open page whose person can leave it (Leave ends its
// context, as go-app ends a page's) and whose work off the UI goroutine
// the test can wait out (Settle).
type bbsPage struct {
	*page
	env   model.Env
	leave context.CancelFunc
	busy  atomic.Int64
	left  atomic.Bool
}

func bbsOpen(t *testing.T, c *client.Client) *bbsPage {
	t.Helper()
	p := &bbsPage{page: openPage(t, c)}
	ctx, cancel := context.WithCancel(p.page.Env.Context)
	t.Cleanup(cancel)
	p.env = p.page.Env
	p.env.Context = ctx
	p.leave = cancel
	inner := p.env.Async
	p.env.Async = func(f func()) {
		p.busy.Add(1)
		inner(func() {
			defer p.busy.Add(-1)
			f()
		})
	}
	return p
}

// Leave is the person going to another page.
func (p *bbsPage) Leave() {
	p.left.Store(true)
	p.leave()
}

// Settle waits until the page's requests have landed and what they
// dispatched has run.
func (p *bbsPage) Settle() {
	for {
		p.Wait("the page's requests land", func() bool { return p.busy.Load() == 0 })
		var n int64
		p.Do(func() { n = p.busy.Load() })
		if n == 0 {
			return
		}
	}
}

func bbsErrorText(err error) string {
	if pr, ok := api.AsProblem(err); ok && pr.Detail != "" {
		return pr.Detail
	}
	return err.Error()
}

// bbsStatus is the HTTP status of a problem inside err (0: none).
func bbsStatus(err error) int {
	if pr, ok := api.AsProblem(err); ok {
		return pr.Status
	}
	return 0
}

func bbsSignIn(t *testing.T, m *cli.Main, a demo.Admin) *client.Client {
	t.Helper()
	c := browserClient(t, m)
	if _, err := c.SignIn(context.Background(), a.Email, a.Password); err != nil {
		t.Fatalf("signing in as %s: %v", a.Email, err)
	}
	return c
}

// bbsUpdates reads extension id's Updates as the service has them now.
func bbsUpdates(t *testing.T, c *client.Client, id int64) api.Updates {
	t.Helper()
	var u api.Updates
	if err := c.Do(context.Background(), http.MethodGet, api.UpdatesPath(id), nil, &u); err != nil {
		t.Fatalf("reading the updates of extension %d: %v", id, err)
	}
	return u
}

// bbsUpdateCheck is a browser's update check at url (no cookies): its status.
func bbsUpdateCheck(t *testing.T, url, chromeID string) int {
	t.Helper()
	resp, err := http.Get(url + "?x=id%3D" + chromeID + "%26v%3D0.0.1")
	if err != nil {
		t.Fatalf("update check at %s: %v", url, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// bbsKeys reads an extension's named keys as the service has them.
func bbsKeys(t *testing.T, c *client.Client, id int64) []betaport.Key {
	t.Helper()
	var pg api.Page[betaport.Key]
	if err := c.Do(context.Background(), http.MethodGet, api.KeysPath(id), nil, &pg); err != nil {
		t.Fatalf("reading the keys of extension %d: %v", id, err)
	}
	return pg.Data
}

func bbsKeyLabelled(t *testing.T, keys []betaport.Key, label string) betaport.Key {
	t.Helper()
	for _, k := range keys {
		if k.Label == label {
			return k
		}
	}
	t.Fatalf("the service lists no key labelled %q: %+v", label, keys)
	return betaport.Key{}
}

var bbsVersion atomic.Int64

// bbsSubmit runs a pipeline's three calls with key (no browser, no
// cookies) and a fresh valid zip.
func bbsSubmit(m *cli.Main, key api.ServiceKey) (*client.Submitted, error) {
	zip, _, err := demo.Zip("Settings BB", fmt.Sprintf("9.%d.0", bbsVersion.Add(1)))
	if err != nil {
		return nil, err
	}
	pipeline := client.New(m.URL())
	pipeline.HTTP = &http.Client{}
	return pipeline.Submit(context.Background(), client.Submission{
		Key: key,
		Zip: &client.ReaderZip{R: bytes.NewReader(zip), Size: int64(len(zip)), HTTP: pipeline.HTTP},
	})
}

// bbsRawUpload is call 1 as a script sends it: a raw POST of the key
// file's service object. It returns the status.
func bbsRawUpload(t *testing.T, m *cli.Main, keyFile []byte) int {
	t.Helper()
	var f struct {
		Service json.RawMessage `json:"service"`
	}
	if err := json.Unmarshal(keyFile, &f); err != nil || len(f.Service) == 0 {
		t.Fatalf("the key file %q holds no service object (%v)", keyFile, err)
	}
	resp, err := http.Post(m.URL()+api.PathSubmitUpload, "application/json", bytes.NewReader(f.Service))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// ---------------------------------------------------------------------
// The settings page: its update URL.

type bbsSettingsSpy struct {
	focus     []model.SettingsFocus
	copied    []string
	copyOK    bool
	signedOut int
	afterLeft []string // what the page did after the person left it
}

func bbsOpenSettings(t *testing.T, p *bbsPage, id int64) (*model.Settings, *bbsSettingsSpy) {
	t.Helper()
	spy := &bbsSettingsSpy{copyOK: true}
	var s *model.Settings
	p.Do(func() {
		s = model.NewSettings(model.SettingsConfig{
			Env:         p.env,
			ExtensionID: id,
			Focus: func(f model.SettingsFocus) {
				if p.left.Load() {
					spy.afterLeft = append(spy.afterLeft, fmt.Sprintf("focus %d", f))
				}
				spy.focus = append(spy.focus, f)
			},
			Copy: func(text string) bool {
				spy.copied = append(spy.copied, text)
				return spy.copyOK
			},
			SignedOut: func(err error) bool {
				if client.IsUnauthorized(err) {
					if p.left.Load() {
						spy.afterLeft = append(spy.afterLeft, "sent to sign in")
					}
					spy.signedOut++
					return true
				}
				return false
			},
			ErrorText: bbsErrorText,
		})
		sess := model.NewSession(nil)
		sess.Check(p.env, func(who *api.Session) { s.SetSession(who) })
		model.Call(p.env, func(ctx context.Context, c *client.Client) (*betaport.Extension, error) {
			return c.Extension(ctx, id)
		}, func(e *betaport.Extension, err error) { s.SetExtension(e, err) })
	})
	return s, spy
}

func bbsLastSettingsFocus(spy *bbsSettingsSpy) model.SettingsFocus {
	if len(spy.focus) == 0 {
		return 0
	}
	return spy.focus[len(spy.focus)-1]
}

// An admin opens the settings page: the update URL shows and works for a
// browser's update check; a Rotate that was never asked does nothing; the
// question, then "Rotate the token" pressed twice while the answer is on
// its way, rotates once: the page shows the new URL (what the service
// now has), the old one answers 404, the new one works, and Copy copies
// the new one.
func TestBBSettingsRotateTheUpdateURLAfterItsQuestion(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	w := bbsWireOf(c)
	ext := d.Extensions[0]
	p := bbsOpen(t, c)
	s, spy := bbsOpenSettings(t, p, ext.ID)
	p.Wait("the update URL shown", func() bool { return s.Updates != nil || s.UpdatesErr != nil })

	var before api.Updates
	p.Do(func() {
		if s.UpdatesErr != nil || !s.Admin() {
			t.Fatalf("the admin's settings page shows no update URL: %v (admin %v)", s.UpdatesErr, s.Admin())
		}
		before = *s.Updates
	})
	if stored := bbsUpdates(t, c, ext.ID); stored.UpdateURL != before.UpdateURL || stored.ChromeID != before.ChromeID {
		t.Fatalf("the page shows %+v, the service has %+v", before, stored)
	}
	if !strings.HasPrefix(before.UpdateURL, m.URL()+api.UpdatePrefix) {
		t.Errorf("the update URL %q is not under %s%s", before.UpdateURL, m.URL(), api.UpdatePrefix)
	}
	if st := bbsUpdateCheck(t, before.UpdateURL, before.ChromeID); st != http.StatusOK {
		t.Fatalf("a browser's update check at the shown URL got %d, want 200", st)
	}

	// Copy.
	p.Do(func() { s.CopyUpdateURL() })
	p.Do(func() {
		if len(spy.copied) != 1 || spy.copied[0] != before.UpdateURL || !s.UpdateURLCopied {
			t.Errorf("Copy put %q on the clipboard (copied flag %v), want the update URL %q", spy.copied, s.UpdateURLCopied, before.UpdateURL)
		}
	})

	// "Rotate the token" without the question: nothing.
	p.Do(func() { s.Rotate() })
	p.Settle()
	if n := w.Count(http.MethodPost, api.UpdateTokenPath(ext.ID)); n != 0 {
		t.Errorf("Rotate without its question sent %d rotations", n)
	}
	if got := bbsUpdates(t, c, ext.ID).UpdateURL; got != before.UpdateURL {
		t.Fatalf("Rotate without its question changed the update URL to %q", got)
	}

	// The question, then Yes twice while the rotation is on its way.
	p.Do(func() { s.AskRotate() })
	p.Do(func() {
		if !s.RotateAsking {
			t.Errorf("AskRotate: the question is not open")
		}
		if f := bbsLastSettingsFocus(spy); f != model.SettingsFocusConfirmRotate {
			t.Errorf("the question opened with the focus on %d, want its confirm button (%d)", f, model.SettingsFocusConfirmRotate)
		}
	})
	gate := w.Hold(t, http.MethodPost, api.UpdateTokenPath(ext.ID), false)
	p.Do(func() { s.Rotate() })
	gate.Arrived(t, p, "the rotation")
	p.Do(func() {
		if !s.Rotating {
			t.Errorf("while the rotation is on its way the page does not say so")
		}
		s.Rotate() // pressed again
	})
	gate.Let()
	p.Wait("the rotation done", func() bool { return !s.Rotating && (s.Rotated || s.RotateErr != nil) })
	p.Settle()
	if n := w.Count(http.MethodPost, api.UpdateTokenPath(ext.ID)); n != 1 {
		t.Errorf("Yes pressed twice sent %d rotations, want 1", n)
	}
	var after api.Updates
	p.Do(func() {
		if s.RotateErr != nil || !s.Rotated || s.RotateAsking {
			t.Fatalf("after the rotation: error %v, rotated %v, question open %v", s.RotateErr, s.Rotated, s.RotateAsking)
		}
		if s.Updates == nil {
			t.Fatalf("after the rotation the page shows no update URL")
		}
		after = *s.Updates
	})
	if after.UpdateURL == before.UpdateURL {
		t.Fatalf("after the rotation the page still shows the old update URL %q", after.UpdateURL)
	}
	if after.RotatedAt == nil {
		t.Errorf("after the rotation the page does not say when the token was rotated")
	}
	stored := bbsUpdates(t, c, ext.ID)
	if stored.UpdateURL != after.UpdateURL {
		t.Errorf("the page shows %q, the service has %q", after.UpdateURL, stored.UpdateURL)
	}
	if stored.ChromeID != before.ChromeID {
		t.Errorf("rotating the update token changed the Chrome ID from %s to %s", before.ChromeID, stored.ChromeID)
	}
	if st := bbsUpdateCheck(t, before.UpdateURL, before.ChromeID); st != http.StatusNotFound {
		t.Errorf("the replaced update URL answers %d, want 404", st)
	}
	if st := bbsUpdateCheck(t, after.UpdateURL, after.ChromeID); st != http.StatusOK {
		t.Errorf("the new update URL answers %d, want 200", st)
	}
	p.Do(func() { s.CopyUpdateURL() })
	p.Do(func() {
		if last := spy.copied[len(spy.copied)-1]; last != after.UpdateURL {
			t.Errorf("Copy after the rotation copied %q, want the new URL %q", last, after.UpdateURL)
		}
	})
}

// Cancel closes the question and changes nothing; a Rotate after Cancel
// does nothing; without a clipboard (plain HTTP) Copy selects the field.
func TestBBSettingsCancelTheRotationKeepsTheURL(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	w := bbsWireOf(c)
	ext := d.Extensions[1]
	p := bbsOpen(t, c)
	s, spy := bbsOpenSettings(t, p, ext.ID)
	p.Wait("the update URL shown", func() bool { return s.Updates != nil || s.UpdatesErr != nil })
	before := bbsUpdates(t, c, ext.ID)

	p.Do(func() { s.AskRotate() })
	p.Do(func() { s.CancelRotate() })
	p.Do(func() {
		if s.RotateAsking {
			t.Errorf("Cancel left the question open")
		}
		if f := bbsLastSettingsFocus(spy); f != model.SettingsFocusRotate {
			t.Errorf("after Cancel the focus went to %d, want back to \"Rotate update token\" (%d)", f, model.SettingsFocusRotate)
		}
		s.Rotate() // a stale "Rotate the token" press after Cancel
	})
	p.Settle()
	if n := w.Count(http.MethodPost, api.UpdateTokenPath(ext.ID)); n != 0 {
		t.Errorf("Cancel then a stale Yes sent %d rotations, want none", n)
	}
	if got := bbsUpdates(t, c, ext.ID); got.UpdateURL != before.UpdateURL {
		t.Errorf("Cancel changed the update URL from %q to %q", before.UpdateURL, got.UpdateURL)
	}
	p.Do(func() {
		if s.Rotated || s.Updates == nil || s.Updates.UpdateURL != before.UpdateURL {
			t.Errorf("after Cancel the page shows rotated %v, %+v; want the same URL %q", s.Rotated, s.Updates, before.UpdateURL)
		}
		spy.copyOK = false
		s.CopyUpdateURL()
	})
	p.Do(func() {
		if s.UpdateURLCopied {
			t.Errorf("without a clipboard the page says the URL was copied")
		}
		if f := bbsLastSettingsFocus(spy); f != model.SettingsFocusUpdateURL {
			t.Errorf("without a clipboard the focus went to %d, want the update URL field (%d) to copy by hand", f, model.SettingsFocusUpdateURL)
		}
	})
}

// Another team's admin types the address of Acme's settings page: they
// see no update URL of Acme's, and a rotation from there changes nothing.
func TestBBSettingsAnotherTeamsAdminGetsNoUpdateURL(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	acme := adminClient(t, m, d)
	hobby := bbsSignIn(t, m, d.Admins[1])
	ext := d.Extensions[0]
	before := bbsUpdates(t, acme, ext.ID)

	p := bbsOpen(t, hobby)
	s, _ := bbsOpenSettings(t, p, ext.ID)
	p.Wait("the page settled on its answers", func() bool {
		return (s.Extension != nil || s.Err != nil) && s.Session != nil
	})
	p.Settle()
	p.Do(func() {
		if s.Updates != nil {
			t.Errorf("Hobby's admin sees Acme's update URL %q", s.Updates.UpdateURL)
		}
		if s.Extension != nil {
			t.Errorf("Hobby's admin sees Acme's extension %q on its settings page", s.Extension.Name)
		}
		s.AskRotate()
	})
	p.Do(func() { s.Rotate() })
	p.Settle()
	if got := bbsUpdates(t, acme, ext.ID); got.UpdateURL != before.UpdateURL {
		t.Fatalf("Hobby's admin rotated Acme's update token: %q became %q", before.UpdateURL, got.UpdateURL)
	}
	p.Do(func() {
		if s.Rotated {
			t.Errorf("the page tells Hobby's admin the token of Acme's extension was rotated")
		}
	})
}

// A tester who opens a settings address is no admin: the page reads no
// update URL (it holds the extension's secret token) and cannot rotate.
func TestBBSettingsTesterSeesNoUpdateURL(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	tc := testerClient(t, m, d)
	w := bbsWireOf(tc)
	acme := adminClient(t, m, d)
	ext := d.Extensions[0]
	before := bbsUpdates(t, acme, ext.ID)

	p := bbsOpen(t, tc)
	s, _ := bbsOpenSettings(t, p, ext.ID)
	p.Wait("who is signed in known", func() bool { return s.Session != nil })
	p.Settle()
	p.Do(func() {
		if s.Admin() {
			t.Errorf("the page takes the tester for an admin")
		}
		if s.Updates != nil {
			t.Errorf("a tester sees the update URL %q (its token lets anyone fetch every build)", s.Updates.UpdateURL)
		}
		s.AskRotate()
	})
	p.Do(func() { s.Rotate() })
	p.Settle()
	if n := w.Count(http.MethodGet, api.UpdatesPath(ext.ID)); n != 0 {
		t.Errorf("the tester's page asked for the update URL %d times", n)
	}
	if got := bbsUpdates(t, acme, ext.ID); got.UpdateURL != before.UpdateURL {
		t.Fatalf("a tester rotated the update token")
	}
}

// Signed out in another tab, the admin presses Rotate: the page sends
// them to sign in, and the token is not rotated.
func TestBBSettingsSignedOutInAnotherTabBeforeRotating(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	ext := d.Extensions[0]
	p := bbsOpen(t, c)
	s, spy := bbsOpenSettings(t, p, ext.ID)
	p.Wait("the update URL shown", func() bool { return s.Updates != nil || s.UpdatesErr != nil })
	before := bbsUpdates(t, c, ext.ID)

	if err := c.SignOut(context.Background()); err != nil { // the other tab shares the cookie
		t.Fatal(err)
	}
	p.Do(func() { s.AskRotate() })
	p.Do(func() { s.Rotate() })
	p.Wait("the rotation answered", func() bool { return spy.signedOut > 0 || s.Rotated || s.RotateErr != nil })
	p.Settle()
	p.Do(func() {
		if spy.signedOut == 0 {
			t.Errorf("signed out, the page did not send the person to sign in (rotate error %v)", s.RotateErr)
		}
		if s.Rotated {
			t.Errorf("signed out, the page says the token was rotated")
		}
	})
	other := adminClient(t, m, d)
	if got := bbsUpdates(t, other, ext.ID); got.UpdateURL != before.UpdateURL {
		t.Errorf("a signed-out browser rotated the update token")
	}
}

// The admin presses Yes and leaves the page before the answer: the
// rotation's answer lands on no page (no focus moves on the page they
// went to, nobody is sent anywhere).
func TestBBSettingsLeavingWhileTheRotationIsOnItsWay(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	w := bbsWireOf(c)
	ext := d.Extensions[0]
	p := bbsOpen(t, c)
	s, spy := bbsOpenSettings(t, p, ext.ID)
	p.Wait("the update URL shown", func() bool { return s.Updates != nil || s.UpdatesErr != nil })

	gate := w.Hold(t, http.MethodPost, api.UpdateTokenPath(ext.ID), true)
	p.Do(func() { s.AskRotate() })
	p.Do(func() { s.Rotate() })
	gate.Arrived(t, p, "the rotation")
	p.Leave()
	gate.Let()
	p.Settle()
	p.Do(func() {
		if len(spy.afterLeft) > 0 {
			t.Errorf("after the person left, the settings page still acted: %v", spy.afterLeft)
		}
	})
}

// ---------------------------------------------------------------------
// The keys section.

type bbsDownload struct {
	name, typ string
	data      []byte
}

type bbsKeysSpy struct {
	downloads []bbsDownload
	focus     []struct {
		f  model.KeysFocus
		id int64
	}
	cleared   int
	changed   int
	announced []string
	signedOut int
	afterLeft []string
}

func bbsOpenKeys(t *testing.T, p *bbsPage, id int64) (*model.Keys, *bbsKeysSpy) {
	t.Helper()
	spy := &bbsKeysSpy{}
	after := func(what string) {
		if p.left.Load() {
			spy.afterLeft = append(spy.afterLeft, what)
		}
	}
	var k *model.Keys
	p.Do(func() {
		k = model.NewKeys(model.KeysConfig{
			Env:         p.env,
			ExtensionID: id,
			Download: func(name, typ string, data []byte) {
				after("download " + name)
				spy.downloads = append(spy.downloads, bbsDownload{name, typ, append([]byte(nil), data...)})
			},
			Focus: func(f model.KeysFocus, id int64) {
				after(fmt.Sprintf("focus %d", f))
				spy.focus = append(spy.focus, struct {
					f  model.KeysFocus
					id int64
				}{f, id})
			},
			ClearLabel: func() { after("clear the label"); spy.cleared++ },
			Changed:    func() { spy.changed++ },
			Announce:   func(text string) { after("announce " + text); spy.announced = append(spy.announced, text) },
			SignedOut: func(err error) bool {
				if client.IsUnauthorized(err) {
					after("sent to sign in")
					spy.signedOut++
					return true
				}
				return false
			},
			ErrorText: bbsErrorText,
		})
	})
	return k, spy
}

// bbsCreateKey creates a key labelled label through the page, as a person
// does (type, Enter), and returns its key file.
func bbsCreateKey(t *testing.T, p *bbsPage, k *model.Keys, spy *bbsKeysSpy, label string) []byte {
	t.Helper()
	var n int
	p.Do(func() {
		n = len(spy.downloads)
		k.SetLabel(label)
		k.Create()
	})
	p.Wait("the key "+label+" made", func() bool { return !k.Busy && (len(spy.downloads) > n || k.Err != nil) })
	var file []byte
	p.Do(func() {
		if k.Err != nil {
			t.Fatalf("creating the key %q: %v", label, k.Err)
		}
		file = spy.downloads[len(spy.downloads)-1].data
	})
	return file
}

func bbsServiceKey(t *testing.T, file []byte) api.ServiceKey {
	t.Helper()
	key, bare, err := api.ParseKeyFile(file)
	if err != nil || bare {
		t.Fatalf("the downloaded key file %q does not read as a key file (bare %v): %v", file, bare, err)
	}
	return key
}

func bbsLastKeysFocus(spy *bbsKeysSpy) (model.KeysFocus, int64) {
	if len(spy.focus) == 0 {
		return 0, 0
	}
	f := spy.focus[len(spy.focus)-1]
	return f.f, f.id
}

// Type a label, press Enter: key.json downloads, the label field empties,
// the service lists the key (its label, who made it, never used), and the
// file publishes a bundle through the pipeline's three calls; the list
// then says when the key was last used.
func TestBBKeysCreateDownloadsAKeyFileThatPublishes(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	ext := d.Extensions[2]
	p := bbsOpen(t, c)
	k, spy := bbsOpenKeys(t, p, ext.ID)

	file := bbsCreateKey(t, p, k, spy, "GitHub Actions")
	p.Do(func() {
		dl := spy.downloads[0]
		if len(spy.downloads) != 1 || dl.name != model.KeyFileName || dl.typ != model.KeyFileType {
			t.Errorf("downloads %d, the first as %q (%s); want one %s (%s)", len(spy.downloads), dl.name, dl.typ, model.KeyFileName, model.KeyFileType)
		}
		if k.Downloaded != "GitHub Actions" {
			t.Errorf("the page says the key file of %q was downloaded, want \"GitHub Actions\"", k.Downloaded)
		}
		if spy.cleared == 0 {
			t.Errorf("the label field was not emptied once the key was made")
		}
		if spy.changed == 0 {
			t.Errorf("the page was not told to read the keys again: the new key is not listed")
		}
		if len(spy.announced) == 0 {
			t.Errorf("nothing was announced for a screen reader when the key file downloaded")
		}
	})
	if !bytes.HasSuffix(file, []byte("\n")) || !json.Valid(file) {
		t.Errorf("the key file is not indented JSON with a newline: %q", file)
	}
	key := bbsServiceKey(t, file)
	if key.ExtensionID != fmt.Sprint(ext.ID) || key.APIKey == "" {
		t.Fatalf("the key file names extension %q with key %q, want extension %d and a key", key.ExtensionID, key.APIKey, ext.ID)
	}
	keys := bbsKeys(t, c, ext.ID)
	if len(keys) != 1 {
		t.Fatalf("the service lists %d keys, want 1: %+v", len(keys), keys)
	}
	got := keys[0]
	if got.Label != "GitHub Actions" || got.CreatedBy != d.Admins[0].Email || got.RevokedAt != nil || got.LastUsedAt != nil {
		t.Errorf("the new key is listed as %+v; want label GitHub Actions, made by %s, never used, not revoked", got, d.Admins[0].Email)
	}
	if bytes.Contains(mustJSON(t, keys), []byte(key.APIKey)) {
		t.Errorf("the keys list shows the key's secret again")
	}

	sub, err := bbsSubmit(m, key)
	if err != nil {
		t.Fatalf("the pipeline could not publish with the downloaded key file: %v", err)
	}
	if sub.Bundle.Number != 1 {
		t.Errorf("the pipeline published bundle #%d, want #1", sub.Bundle.Number)
	}
	if used := bbsKeys(t, c, ext.ID)[0]; used.LastUsedAt == nil {
		t.Errorf("after a publish with it, the key is still listed as never used")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Enter pressed again while the key is being made makes one key and one
// download.
func TestBBKeysEnterPressedTwiceMakesOneKey(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	w := bbsWireOf(c)
	ext := d.Extensions[2]
	p := bbsOpen(t, c)
	k, spy := bbsOpenKeys(t, p, ext.ID)

	gate := w.Hold(t, http.MethodPost, api.KeysPath(ext.ID), false)
	p.Do(func() {
		k.SetLabel("release laptop")
		k.Create()
		k.Create() // the same keypress, repeated
	})
	gate.Arrived(t, p, "the new key")
	p.Do(func() {
		if !k.Busy {
			t.Errorf("while the key is being made the page does not say so")
		}
		k.Create() // and again, while the answer is on its way
	})
	gate.Let()
	p.Wait("the key made", func() bool { return !k.Busy && (len(spy.downloads) > 0 || k.Err != nil) })
	p.Settle()
	if n := w.Count(http.MethodPost, api.KeysPath(ext.ID)); n != 1 {
		t.Errorf("Enter pressed three times sent %d creates, want 1", n)
	}
	p.Do(func() {
		if len(spy.downloads) != 1 || k.Err != nil {
			t.Errorf("%d key files downloaded (error %v), want 1", len(spy.downloads), k.Err)
		}
	})
	if keys := bbsKeys(t, c, ext.ID); len(keys) != 1 {
		t.Errorf("the service made %d keys, want 1: %+v", len(keys), keys)
	}
}

// Labels the service refuses are refused at once, with a message and
// nothing sent; the person corrects the label and the key is made. A
// label of exactly MaxKeyLabel characters (not bytes) is taken.
func TestBBKeysLabelTyposAreRefusedAtOnceThenFixed(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	w := bbsWireOf(c)
	ext := d.Extensions[2]
	p := bbsOpen(t, c)
	k, spy := bbsOpenKeys(t, p, ext.ID)

	for _, bad := range []string{"", "   ", strings.Repeat("x", betaport.MaxKeyLabel+1)} {
		p.Do(func() {
			k.SetLabel(bad)
			k.Create()
			if k.Err == nil || k.Busy {
				t.Errorf("label %q: not refused at once (error %v, busy %v)", bbsShort(bad), k.Err, k.Busy)
			} else if bbsErrorText(k.Err) == "" {
				t.Errorf("label %q refused without a message", bbsShort(bad))
			}
		})
	}
	p.Settle()
	if n := w.Count(http.MethodPost, api.KeysPath(ext.ID)); n != 0 {
		t.Errorf("labels the service refuses were sent %d times", n)
	}
	p.Do(func() {
		if len(spy.downloads) != 0 {
			t.Errorf("a refused label downloaded a key file")
		}
	})

	long := strings.Repeat("é", betaport.MaxKeyLabel) // 100 characters, 200 bytes
	if utf8.RuneCountInString(long) != betaport.MaxKeyLabel {
		t.Fatal("bad test label")
	}
	bbsCreateKey(t, p, k, spy, long)
	bbsCreateKey(t, p, k, spy, "  CI  ") // pasted with spaces around
	p.Do(func() {
		if k.Err != nil {
			t.Errorf("after the label was fixed the error still shows: %v", k.Err)
		}
	})
	keys := bbsKeys(t, c, ext.ID)
	if len(keys) != 2 {
		t.Fatalf("the service lists %d keys, want 2: %+v", len(keys), keys)
	}
	bbsKeyLabelled(t, keys, long)
	bbsKeyLabelled(t, keys, "CI")
}

func bbsShort(s string) string {
	if len(s) > 20 {
		return fmt.Sprintf("%s… (%d chars)", s[:10], utf8.RuneCountInString(s))
	}
	return s
}

// Revoke asks first: Keep keeps the key; Yes (pressed twice while on its
// way) revokes it once. The page shows it revoked, the service lists it
// revoked, and from then on call 1 refuses it (401) — through the client
// and as a raw POST of the key file's service object — while the other
// key keeps publishing.
func TestBBKeysRevokeAsksFirstAndTheRevokedKeyIsRefused(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	w := bbsWireOf(c)
	ext := d.Extensions[2]
	p := bbsOpen(t, c)
	k, spy := bbsOpenKeys(t, p, ext.ID)

	ciFile := bbsCreateKey(t, p, k, spy, "CI")
	laptopFile := bbsCreateKey(t, p, k, spy, "laptop")
	if st := bbsRawUpload(t, m, ciFile); st != http.StatusOK {
		t.Fatalf("before any revoke, call 1 with the CI key answered %d", st)
	}
	ci := bbsKeyLabelled(t, bbsKeys(t, c, ext.ID), "CI")
	del := api.KeyPath(ext.ID, ci.ID)

	// Yes without the question: nothing.
	p.Do(func() { k.Revoke(ci) })
	p.Settle()
	if n := w.Count(http.MethodDelete, del); n != 0 {
		t.Errorf("Revoke without its question sent %d revokes", n)
	}

	// The question, then Keep.
	p.Do(func() { k.Ask(ci) })
	p.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
	p.Do(func() {
		if !k.Asking(ci.ID) {
			t.Errorf("Revoke did not ask first")
		}
		if f, id := bbsLastKeysFocus(spy); f != model.KeysFocusConfirm || id != ci.ID {
			t.Errorf("the question opened with the focus on %d of key %d, want \"Yes, revoke\" of key %d", f, id, ci.ID)
		}
		k.Keep(ci)
	})
	p.Do(func() {
		if k.Asking(ci.ID) {
			t.Errorf("Keep left the question open")
		}
		if f, id := bbsLastKeysFocus(spy); f != model.KeysFocusRevoke || id != ci.ID {
			t.Errorf("after Keep the focus is on %d of key %d, want the key's Revoke", f, id)
		}
		if k.Shown(ci).RevokedAt != nil {
			t.Errorf("Keep: the page shows the key revoked")
		}
	})
	p.Settle()
	if n := w.Count(http.MethodDelete, del); n != 0 {
		t.Fatalf("Keep revoked the key")
	}

	// The question, then Yes twice.
	gate := w.Hold(t, http.MethodDelete, del, false)
	p.Do(func() { k.Ask(ci) })
	p.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
	p.Do(func() { k.Revoke(ci) })
	gate.Arrived(t, p, "the revoke")
	p.Do(func() { k.Revoke(ci) })
	gate.Let()
	p.Wait("the key shown revoked", func() bool { return k.Shown(ci).RevokedAt != nil || k.Err != nil })
	p.Settle()
	if n := w.Count(http.MethodDelete, del); n != 1 {
		t.Errorf("Yes pressed twice sent %d revokes, want 1", n)
	}
	p.Do(func() {
		if k.Err != nil {
			t.Fatalf("revoking the key failed: %v", k.Err)
		}
		if k.Asking(ci.ID) {
			t.Errorf("the question is still open after the revoke")
		}
	})
	keys := bbsKeys(t, c, ext.ID)
	if bbsKeyLabelled(t, keys, "CI").RevokedAt == nil {
		t.Errorf("the service does not list the CI key as revoked")
	}
	if bbsKeyLabelled(t, keys, "laptop").RevokedAt != nil {
		t.Errorf("revoking CI revoked laptop too")
	}

	if st := bbsRawUpload(t, m, ciFile); st != http.StatusUnauthorized {
		t.Errorf("call 1 (raw POST) with the revoked key answered %d, want 401", st)
	}
	_, err := bbsSubmit(m, bbsServiceKey(t, ciFile))
	if err == nil || bbsStatus(err) != http.StatusUnauthorized {
		t.Errorf("the pipeline's submit with the revoked key: %v, want refused with 401", err)
	}
	if _, err := bbsSubmit(m, bbsServiceKey(t, laptopFile)); err != nil {
		t.Errorf("the other key no longer publishes after CI was revoked: %v", err)
	}
}

// A pipeline is between call 1 and call 3 when the admin revokes its key
// on the settings page: call 3 is refused (401) and nothing is published.
func TestBBKeysRevokedBetweenUploadAndSign(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	ext := d.Extensions[2]
	p := bbsOpen(t, c)
	k, spy := bbsOpenKeys(t, p, ext.ID)
	file := bbsCreateKey(t, p, k, spy, "CI")
	key := bbsKeyLabelled(t, bbsKeys(t, c, ext.ID), "CI")

	zip, _, err := demo.Zip("Settings BB", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	pipeline := client.New(m.URL())
	pipeline.HTTP = &http.Client{}
	_, err = pipeline.Submit(context.Background(), client.Submission{
		Key: bbsServiceKey(t, file),
		Zip: &client.ReaderZip{R: bytes.NewReader(zip), Size: int64(len(zip)), HTTP: pipeline.HTTP},
		Step: func(step client.Step, _ *api.UploadURL) error {
			if step == client.StepSign {
				p.Do(func() { k.Ask(key) })
				p.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
				p.Do(func() { k.Revoke(key) })
				p.Wait("the key revoked", func() bool { return k.Shown(key).RevokedAt != nil || k.Err != nil })
			}
			return nil
		},
	})
	if err == nil || bbsStatus(err) != http.StatusUnauthorized {
		t.Errorf("call 3 with a key revoked after call 1: %v, want refused with 401", err)
	}
	e, err := c.Extension(context.Background(), ext.ID)
	if err != nil {
		t.Fatal(err)
	}
	if e.CurrentBundle != 0 {
		t.Errorf("a sign with a revoked key published bundle #%d", e.CurrentBundle)
	}
}

// A key revoked in one tab, then revoked from a second tab that still
// lists it as active: the second tab shows it revoked and no error (the
// person got what they asked for); the key stays revoked.
func TestBBKeysRevokedInAnotherTabThenHere(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	ext := d.Extensions[2]
	tabA := bbsOpen(t, c)
	ka, spyA := bbsOpenKeys(t, tabA, ext.ID)
	file := bbsCreateKey(t, tabA, ka, spyA, "CI")
	key := bbsKeyLabelled(t, bbsKeys(t, c, ext.ID), "CI")

	tabB := bbsOpen(t, c)
	kb, _ := bbsOpenKeys(t, tabB, ext.ID)

	tabA.Do(func() { ka.Ask(key) })
	tabA.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
	tabA.Do(func() { ka.Revoke(key) })
	tabA.Wait("revoked in tab A", func() bool { return ka.Shown(key).RevokedAt != nil || ka.Err != nil })

	tabB.Do(func() { kb.Ask(key) })        // tab B's row still says active
	tabB.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
	tabB.Do(func() { kb.Revoke(key) })
	tabB.Wait("tab B's revoke answered", func() bool { return kb.Shown(key).RevokedAt != nil || kb.Err != nil })
	tabB.Settle()
	tabB.Do(func() {
		if kb.Err != nil {
			t.Errorf("revoking a key another tab had revoked shows an error: %q (the key is revoked, as the person wanted)", bbsErrorText(kb.Err))
		}
		if kb.Shown(key).RevokedAt == nil {
			t.Errorf("tab B still shows the revoked key as active")
		}
	})
	if bbsKeyLabelled(t, bbsKeys(t, c, ext.ID), "CI").RevokedAt == nil {
		t.Errorf("the key is no longer revoked")
	}
	if st := bbsRawUpload(t, m, file); st != http.StatusUnauthorized {
		t.Errorf("call 1 with the key revoked twice answered %d, want 401", st)
	}
}

// Another team's admin on Acme's settings address can neither make a key
// for Acme's extension nor revoke one: the page shows why, no key file
// downloads, and Acme's key keeps working.
func TestBBKeysAnotherTeamsAdminCannotCreateOrRevoke(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	acme := adminClient(t, m, d)
	ext := d.Extensions[2]
	pa := bbsOpen(t, acme)
	ka, spyA := bbsOpenKeys(t, pa, ext.ID)
	file := bbsCreateKey(t, pa, ka, spyA, "CI")
	key := bbsKeyLabelled(t, bbsKeys(t, acme, ext.ID), "CI")

	hobby := bbsSignIn(t, m, d.Admins[1])
	p := bbsOpen(t, hobby)
	k, spy := bbsOpenKeys(t, p, ext.ID)
	p.Do(func() {
		k.SetLabel("stolen")
		k.Create()
	})
	p.Wait("the create answered", func() bool { return !k.Busy })
	p.Do(func() { k.Ask(key) })
	p.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
	p.Do(func() { k.Revoke(key) })
	p.Settle()
	p.Do(func() {
		if len(spy.downloads) != 0 {
			t.Errorf("Hobby's admin downloaded a key file for Acme's extension: %q", spy.downloads[0].data)
		}
		if k.Err == nil {
			t.Errorf("Hobby's admin was refused without a message")
		}
		if k.Shown(key).RevokedAt != nil {
			t.Errorf("Hobby's admin sees Acme's key as revoked")
		}
	})
	keys := bbsKeys(t, acme, ext.ID)
	if len(keys) != 1 || keys[0].RevokedAt != nil {
		t.Errorf("after Hobby's admin acted, Acme's keys are %+v; want CI alone, active", keys)
	}
	if st := bbsRawUpload(t, m, file); st != http.StatusOK {
		t.Errorf("Acme's key answers %d after Hobby's admin tried to revoke it, want 200", st)
	}
}

// Signed out in another tab, the admin makes a key: they are sent to sign
// in, nothing downloads and no key is made.
func TestBBKeysSignedOutBeforeCreating(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	ext := d.Extensions[2]
	p := bbsOpen(t, c)
	k, spy := bbsOpenKeys(t, p, ext.ID)
	if err := c.SignOut(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.Do(func() {
		k.SetLabel("CI")
		k.Create()
	})
	p.Wait("the create answered", func() bool { return !k.Busy })
	p.Settle()
	p.Do(func() {
		if spy.signedOut == 0 {
			t.Errorf("signed out, the person was not sent to sign in (error %v)", k.Err)
		}
		if len(spy.downloads) != 0 {
			t.Errorf("signed out, a key file downloaded")
		}
	})
	if keys := bbsKeys(t, adminClient(t, m, d), ext.ID); len(keys) != 0 {
		t.Errorf("a signed-out browser made keys: %+v", keys)
	}
}

// The admin presses Enter and leaves the settings page before the answer
// (the service makes the key): the page they went to is left alone (no
// focus moves there, no label field is cleared, nothing is announced).
func TestBBKeysLeavingBeforeTheKeyArrives(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	w := bbsWireOf(c)
	ext := d.Extensions[2]
	p := bbsOpen(t, c)
	k, spy := bbsOpenKeys(t, p, ext.ID)

	gate := w.Hold(t, http.MethodPost, api.KeysPath(ext.ID), true)
	p.Do(func() {
		k.SetLabel("CI")
		k.Create()
	})
	gate.Arrived(t, p, "the new key")
	p.Leave()
	gate.Let()
	p.Settle()
	p.Do(func() {
		for _, a := range spy.afterLeft {
			if !strings.HasPrefix(a, "download ") {
				t.Errorf("after the person left the settings page it still acted: %s", a)
			}
		}
	})
	if keys := bbsKeys(t, c, ext.ID); len(keys) == 1 {
		p.Do(func() {
			t.Logf("the key was made after the person left; key file downloaded anyway: %v", len(spy.downloads) == 1)
		})
	}
}
