package model_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/model"
)

// keysFake is the keys part of the API: it makes keys (each with its own
// secret), revokes them, and refuses what the test tells it to.
type keysFake struct {
	*settingsFake
	mu      sync.Mutex
	keys    map[int64]*betaport.Key
	labels  []string // the labels of the keys made, in order
	refuse  *api.Problem
	revokes map[int64]*api.Problem
}

func newKeysFake(t *testing.T) *keysFake {
	f := &keysFake{settingsFake: newSettingsFake(t), keys: map[int64]*betaport.Key{}, revokes: map[int64]*api.Problem{}}
	f.keys[1] = &betaport.Key{ID: 1, ExtensionID: settingsExt, Label: "release laptop", CreatedBy: betaport.ActorCommandLine}
	f.keys[2] = &betaport.Key{ID: 2, ExtensionID: settingsExt, Label: "GitLab CI", CreatedBy: "ada@example.com"}
	f.handle("POST "+api.KeysPath(settingsExt), func(w http.ResponseWriter, r *http.Request) {
		var in api.NewKey
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			settingsProblem(w, http.StatusBadRequest, "", "not JSON")
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if p := f.refuse; p != nil {
			settingsProblem(w, p.Status, p.Param, p.Detail)
			return
		}
		k := &betaport.Key{ID: int64(len(f.keys) + 1), ExtensionID: settingsExt, Label: in.Label, CreatedBy: "ada@example.com", CreatedAt: time.Now()}
		if err := k.Validate(); err != nil {
			settingsProblem(w, http.StatusBadRequest, "label", err.Error())
			return
		}
		f.keys[k.ID] = k
		f.labels = append(f.labels, in.Label)
		settingsJSON(w, http.StatusCreated, api.CreatedKey{Key: *k, KeyFile: api.KeyFile{Service: api.ServiceKey{
			ExtensionID: strconv.Itoa(settingsExt), APIKey: "secret-" + strconv.FormatInt(k.ID, 10)}}})
	})
	f.handle("DELETE "+api.KeysPath(settingsExt)+"/{key}", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseInt(r.PathValue("key"), 10, 64)
		f.mu.Lock()
		defer f.mu.Unlock()
		if p := f.revokes[id]; p != nil {
			settingsProblem(w, p.Status, p.Param, p.Detail)
			return
		}
		k := f.keys[id]
		if k == nil {
			settingsProblem(w, http.StatusNotFound, "", "There is no such key.")
			return
		}
		if k.RevokedAt == nil {
			now := time.Date(2026, 11, 27, 9, 30, 0, 0, time.UTC)
			k.RevokedAt = &now
		}
		settingsJSON(w, http.StatusOK, k)
	})
	return f
}

func (f *keysFake) key(id int64) betaport.Key {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *f.keys[id]
}

func (f *keysFake) made() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.labels...)
}

func (f *keysFake) set(do func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	do()
}

// keysHarness is a Keys on a page against the keys fake; its effects are
// recorded, its downloads kept.
type keysHarness struct {
	*settingsPage
	api       *keysFake
	fx        *settingsEffects
	k         *model.Keys
	downloads [][]byte
	announced string
	signOut   int
}

func newKeysHarness(t *testing.T) *keysHarness {
	h := &keysHarness{api: newKeysFake(t), fx: &settingsEffects{}}
	h.settingsPage = newSettingsPage(t, h.api)
	h.do(func() {
		h.k = model.NewKeys(model.KeysConfig{
			Env: h.env, ExtensionID: settingsExt,
			Download: func(name, mimeType string, data []byte) {
				h.fx.add("download %s %s", name, mimeType)
				h.downloads = append(h.downloads, data)
			},
			Focus: func(f model.KeysFocus, id int64) {
				h.fx.add("focus %s %d", map[model.KeysFocus]string{model.KeysFocusLabel: "label", model.KeysFocusConfirm: "confirm", model.KeysFocusRevoke: "revoke"}[f], id)
			},
			ClearLabel: func() { h.fx.add("clear label") },
			Changed:    func() { h.fx.add("lists changed") },
			Announce:   func(text string) { h.announced = text },
			SignedOut: func(err error) bool {
				if p, ok := api.AsProblem(err); ok && p.Status == http.StatusUnauthorized {
					h.signOut++
					return true
				}
				return false
			},
		})
	})
	return h
}

// typeLabel types a label, as the field's input events tell the model.
func (h *keysHarness) typeLabel(label string) { h.do(func() { h.k.SetLabel(label) }) }

// errText is the error shown by the form ("" for none).
func (h *keysHarness) errText() string {
	var s string
	h.do(func() {
		if h.k.Err != nil {
			s = h.k.Err.Error()
		}
	})
	return s
}

// checkKeyFile checks the one download is the key file of key id.
func (h *keysHarness) checkKeyFile(id int64) {
	h.t.Helper()
	var downloads [][]byte
	h.do(func() { downloads = h.downloads })
	if len(downloads) != 1 {
		h.t.Fatalf("%d files downloaded, want one key.json", len(downloads))
	}
	key, bare, err := api.ParseKeyFile(downloads[0])
	if err != nil || bare || key.ExtensionID != strconv.Itoa(settingsExt) || key.APIKey != "secret-"+strconv.FormatInt(id, 10) {
		h.t.Errorf("the download %s is not key %d's key file (%+v, bare %v, %v)", downloads[0], id, key, bare, err)
	}
	if !strings.HasSuffix(string(downloads[0]), "}\n") {
		h.t.Errorf("the key file %q does not end with a newline", downloads[0])
	}
}

const keysPost = "POST /api/extensions/7/keys"

func TestKeysEmptyLabelIsRefusedWithAMessage(t *testing.T) {
	h := newKeysHarness(t)
	want := `Name the key after where it is used, like "GitHub Actions".`
	for _, label := range []string{"", "   "} {
		h.typeLabel(label)
		h.do(h.k.Create)
		h.settle()
		if got := h.errText(); got != want {
			t.Errorf("Create with the label %q shows %q, want %q", label, got, want)
		}
		h.do(func() {
			if h.k.Busy || !strings.HasPrefix(h.announced, "The key was not created: Name the key") {
				t.Errorf("after %q: busy %v, announced %q", label, h.k.Busy, h.announced)
			}
		})
		settingsSame(t, "effects of an empty label", h.fx.take(), []string{"focus label 0"})
	}
	if n := h.api.count(keysPost); n != 0 {
		t.Fatalf("an empty label was sent %d times", n)
	}

	h.typeLabel("GitHub Actions")
	h.do(h.k.Create)
	h.settle()
	if got := h.errText(); got != "" {
		t.Errorf("after a good label the form still shows %q", got)
	}
	settingsSame(t, "labels made", h.api.made(), []string{"GitHub Actions"})
	settingsSame(t, "effects of a key made", h.fx.take(), []string{"download key.json application/json", "clear label", "lists changed"})
	h.checkKeyFile(3)
	h.do(func() {
		if h.k.Downloaded != "GitHub Actions" || h.k.Label != "" || h.announced != "Key GitHub Actions created; key.json downloaded." {
			t.Errorf("after the key: downloaded %q, label %q, announced %q", h.k.Downloaded, h.k.Label, h.announced)
		}
	})
}

func TestKeysTypoThenRetry(t *testing.T) {
	h := newKeysHarness(t)
	// Pasted from two lines: refused, and kept to be fixed.
	h.typeLabel("GitHub\nActions")
	h.do(h.k.Create)
	h.settle()
	if got := h.errText(); got != "A key's label is one line of text, without control characters." {
		t.Errorf("a label on two lines shows %q", got)
	}
	h.do(func() {
		if h.k.Label != "GitHub\nActions" {
			t.Errorf("a refused label became %q: the person fixes what they typed", h.k.Label)
		}
	})
	settingsSame(t, "effects of a refused label", h.fx.take(), []string{"focus label 0"})
	h.typeLabel("GitHub Actions")
	h.do(h.k.Create)
	h.settle()
	settingsSame(t, "labels made", h.api.made(), []string{"GitHub Actions"})
	if got := h.errText(); got != "" {
		t.Errorf("after the fix the form still shows %q", got)
	}
	h.checkKeyFile(3)
}

func TestKeysRefusedByTheServiceThenRetry(t *testing.T) {
	h := newKeysHarness(t)
	h.api.set(func() {
		h.api.refuse = &api.Problem{Status: http.StatusForbidden, Detail: "Pipelines need the Professional plan. Upgrade the team, then create a key."}
	})
	h.typeLabel("GitHub Actions")
	h.do(h.k.Create)
	h.settle()
	if got := h.errText(); got != "Pipelines need the Professional plan. Upgrade the team, then create a key." {
		t.Errorf("a refused key shows %q, want the service's detail", got)
	}
	h.do(func() {
		if h.k.Busy || h.k.Label != "GitHub Actions" || h.k.Downloaded != "" || !strings.HasPrefix(h.announced, "The key was not created: Pipelines need") {
			t.Errorf("after the refusal: busy %v, label %q, downloaded %q, announced %q", h.k.Busy, h.k.Label, h.k.Downloaded, h.announced)
		}
	})
	settingsSame(t, "effects of a refusal", h.fx.take(), []string{"focus label 0"})

	h.api.set(func() { h.api.refuse = nil })
	h.do(h.k.Create)
	h.settle()
	if got := h.errText(); got != "" {
		t.Errorf("after the retry the form still shows %q", got)
	}
	settingsSame(t, "effects of the retry", h.fx.take(), []string{"download key.json application/json", "clear label", "lists changed"})
	h.checkKeyFile(3)
}

func TestKeysEnterPressedTwiceMakesOneKey(t *testing.T) {
	h := newKeysHarness(t)
	release := h.api.hold(keysPost)
	h.typeLabel("GitHub Actions")
	h.do(func() { h.k.Create(); h.k.Create() })
	h.api.waitArrived(keysPost)
	h.do(func() {
		if !h.k.Busy {
			t.Error("while the key is made the form is not busy")
		}
		h.k.Create() // a third Enter, while the answer is on its way
	})
	release()
	h.settle()
	if n := h.api.count(keysPost); n != 1 {
		t.Fatalf("Enter pressed twice sent %d creates, want 1", n)
	}
	settingsSame(t, "effects", h.fx.take(), []string{"download key.json application/json", "clear label", "lists changed"})
	h.checkKeyFile(3)
	h.do(func() {
		if h.k.Busy {
			t.Error("after the answer the form is still busy")
		}
	})
}

func TestKeysLabelTypedWhileCreatingIsKept(t *testing.T) {
	h := newKeysHarness(t)
	release := h.api.hold(keysPost)
	h.typeLabel("GitHub Actions")
	h.do(h.k.Create)
	h.api.waitArrived(keysPost)
	h.typeLabel("release laptop 2") // the next key's label, typed already
	release()
	h.settle()
	h.do(func() {
		if h.k.Label != "release laptop 2" || h.k.Downloaded != "GitHub Actions" {
			t.Errorf("after the first key: label %q, downloaded %q", h.k.Label, h.k.Downloaded)
		}
	})
	settingsSame(t, "effects", h.fx.take(), []string{"download key.json application/json", "lists changed"})
}

func TestKeysRevokeAskThenKeep(t *testing.T) {
	h := newKeysHarness(t)
	laptop := h.api.key(1)
	h.do(func() {
		h.k.Ask(laptop)
		if !h.k.Asking(1) || h.k.Asking(2) {
			t.Errorf("after Revoke of key 1: asking 1 %v, asking 2 %v", h.k.Asking(1), h.k.Asking(2))
		}
	})
	settingsSame(t, "effects of Revoke", h.fx.take(), []string{"focus confirm 1"})
	h.do(func() {
		h.clock.Advance(model.ConfirmDelay) // its Yes would take a press now
		h.k.Keep(laptop)
		if h.k.Asking(1) {
			t.Error("after Keep the question is still open")
		}
		h.k.Revoke(laptop) // its Yes is gone: nothing happens
	})
	settingsSame(t, "effects of Keep", h.fx.take(), []string{"focus revoke 1"})
	h.settle()
	if calls := h.api.takeCalls(); len(calls) != 0 {
		t.Fatalf("Keep sent %q", calls)
	}
	h.do(func() {
		if h.k.Shown(laptop).RevokedAt != nil {
			t.Error("a kept key shows as revoked")
		}
	})
}

func TestKeysRevokeAskThenYes(t *testing.T) {
	h := newKeysHarness(t)
	laptop, ci := h.api.key(1), h.api.key(2)
	release := h.api.hold("DELETE /api/extensions/7/keys/1")
	h.do(func() {
		h.k.Ask(laptop)
		h.k.Ask(ci)
		h.clock.Advance(model.ConfirmDelay)
		h.k.Revoke(laptop)
		h.k.Revoke(laptop)
	})
	h.api.waitArrived("DELETE /api/extensions/7/keys/1")
	h.do(func() {
		if h.k.Asking(1) || !h.k.Asking(2) {
			t.Errorf("after Yes on key 1: asking 1 %v, asking 2 %v", h.k.Asking(1), h.k.Asking(2))
		}
		h.k.Keep(ci)
	})
	h.fx.take()
	release()
	h.settle()
	if n := h.api.count("DELETE /api/extensions/7/keys/1"); n != 1 {
		t.Fatalf("Yes pressed twice sent %d revokes, want 1", n)
	}
	settingsSame(t, "effects of the revoke", h.fx.take(), []string{"lists changed"})
	h.do(func() {
		// The revoked key leaves the keys that can be revoked (its row says
		// revoked) before the list is read again; the other stays.
		if h.k.Shown(laptop).RevokedAt == nil {
			t.Error("the revoked key still shows as a working key")
		}
		if h.k.Shown(ci).RevokedAt != nil {
			t.Error("revoking one key shows the other as revoked")
		}
		if h.k.Err != nil || h.announced != "Key release laptop revoked. Calls made with it are refused from now on." {
			t.Errorf("after the revoke: error %v, announced %q", h.k.Err, h.announced)
		}
		h.k.Ask(laptop) // a revoked key asks nothing
		if h.k.Asking(1) {
			t.Error("a revoked key's Revoke asks again")
		}
	})
	if fx := h.fx.take(); len(fx) != 0 {
		t.Errorf("Revoke of a revoked key asked the page for %q", fx)
	}
}

func TestKeysFailedRevokeSaysWhy(t *testing.T) {
	h := newKeysHarness(t)
	laptop := h.api.key(1)
	h.api.set(func() {
		h.api.revokes[1] = &api.Problem{Status: http.StatusServiceUnavailable, Detail: "The service is busy. Try again in a minute."}
	})
	h.do(func() { h.k.Ask(laptop); h.clock.Advance(model.ConfirmDelay); h.k.Revoke(laptop) })
	h.settle()
	if got := h.errText(); got != "The service is busy. Try again in a minute." {
		t.Errorf("a failed revoke shows %q", got)
	}
	h.do(func() {
		if h.k.Shown(laptop).RevokedAt != nil || h.announced != "The key was not revoked: The service is busy. Try again in a minute." {
			t.Errorf("a failed revoke: shown revoked %v, announced %q", h.k.Shown(laptop).RevokedAt != nil, h.announced)
		}
	})
	settingsSame(t, "effects of a failed revoke", h.fx.take(), []string{"focus confirm 1"})

	// Again, once the service is back.
	h.api.set(func() { delete(h.api.revokes, 1) })
	h.do(func() { h.k.Ask(laptop); h.clock.Advance(model.ConfirmDelay); h.k.Revoke(laptop) })
	h.settle()
	if got := h.errText(); got != "" {
		t.Errorf("after the retry the form still shows %q", got)
	}
	h.do(func() {
		if h.k.Shown(laptop).RevokedAt == nil {
			t.Error("the retried revoke left the key working")
		}
	})
}

func TestKeysAnswersAfterThePageIsGone(t *testing.T) {
	h := newKeysHarness(t)
	laptop := h.api.key(1)
	releaseCreate := h.api.hold(keysPost)
	releaseRevoke := h.api.hold("DELETE /api/extensions/7/keys/1")
	h.typeLabel("GitHub Actions")
	h.do(h.k.Create)
	h.api.waitArrived(keysPost)
	h.do(func() { h.k.Ask(laptop); h.clock.Advance(model.ConfirmDelay); h.k.Revoke(laptop) })
	h.api.waitArrived("DELETE /api/extensions/7/keys/1")
	h.fx.take()
	h.leave()
	releaseCreate()
	releaseRevoke()
	h.settle()
	if fx := h.fx.take(); len(fx) != 0 {
		t.Errorf("answers after the page was left asked it for %q", fx)
	}
	h.do(func() {
		if len(h.downloads) != 0 || h.k.Downloaded != "" || h.k.Label != "GitHub Actions" || h.k.Shown(laptop).RevokedAt != nil || h.announced != "" {
			t.Errorf("answers after the page was left changed it: %d downloads, downloaded %q, label %q, revoked %v, announced %q",
				len(h.downloads), h.k.Downloaded, h.k.Label, h.k.Shown(laptop).RevokedAt != nil, h.announced)
		}
	})
}

func TestKeysSignedOut(t *testing.T) {
	h := newKeysHarness(t)
	h.api.set(func() { h.api.refuse = &api.Problem{Status: http.StatusUnauthorized, Detail: "Sign in again."} })
	h.typeLabel("GitHub Actions")
	h.do(h.k.Create)
	h.settle()
	h.do(func() {
		if h.signOut != 1 || h.k.Err != nil || h.k.Busy || len(h.downloads) != 0 {
			t.Errorf("a 401: signed out %d times, error %v, busy %v, %d downloads", h.signOut, h.k.Err, h.k.Busy, len(h.downloads))
		}
	})
}
