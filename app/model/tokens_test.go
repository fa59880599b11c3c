package model_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/model"
)

// tokensFake is the tokens part of the API: it keeps what each make sent.
type tokensFake struct {
	*settingsFake
	mu   sync.Mutex
	sent []api.NewToken
}

func newTokensFake(t *testing.T) *tokensFake {
	f := &tokensFake{settingsFake: newSettingsFake(t)}
	f.handle("POST "+api.TokensPath(settingsExt), func(w http.ResponseWriter, r *http.Request) {
		var in api.NewToken
		json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		f.sent = append(f.sent, in)
		n := len(f.sent)
		f.mu.Unlock()
		settingsJSON(w, http.StatusCreated, api.CreatedToken{
			Token:  betaport.AccessToken{ID: int64(n), ExtensionID: settingsExt, Name: in.Name, Scopes: in.Scopes, CreatedBy: "ada@example.com"},
			Secret: "bpt_secret"})
	})
	f.handle("DELETE "+api.TokensPath(settingsExt)+"/{token}", func(w http.ResponseWriter, r *http.Request) {
		now := time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC)
		settingsJSON(w, http.StatusOK, betaport.AccessToken{ID: 1, Name: "nightly", Scopes: []string{"read"}, RevokedAt: &now})
	})
	return f
}

func (f *tokensFake) made() []api.NewToken {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sent)
}

// The form refuses what the service would before sending, sends the
// scopes ticked in one order with the expiry chosen, shows the secret
// once with the focus on it, and makes one token for two presses.
func TestTokensFormAndSecret(t *testing.T) {
	f := newTokensFake(t)
	p := newSettingsPage(t, f)
	fx := &settingsEffects{}
	var tk *model.Tokens
	copied := ""
	p.do(func() {
		tk = model.NewTokens(model.TokensConfig{
			Env: p.env, ExtensionID: settingsExt,
			Focus: func(ff model.TokensFocus, id int64) {
				fx.add("focus %d %d", ff, id)
			},
			ClearName: func() { fx.add("clear name") },
			Changed:   func() { fx.add("lists changed") },
			Copy:      func(s string) bool { copied = s; return true },
		})
	})
	// No name; then no scope.
	p.do(tk.Create)
	p.do(func() {
		tk.SetName("nightly")
		tk.SetScope(betaport.ScopeRead, false)
	})
	p.do(tk.Create)
	p.settle()
	if n := len(f.made()); n != 0 {
		t.Fatalf("a form without a name or a scope was sent %d times", n)
	}
	p.do(func() {
		if p, ok := api.AsProblem(tk.Err); !ok || p.Param != "scopes" {
			t.Errorf("without a scope the form shows %v", tk.Err)
		}
	})
	settingsSame(t, "focus after the refusals", fx.take(), []string{"focus 1 0", "focus 1 0"})

	p.do(func() {
		tk.SetScope(betaport.ScopeTesters, true)
		tk.SetScope(betaport.ScopeRead, true)
		tk.Days = 30
		tk.Create()
		tk.Create() // Enter pressed twice
	})
	p.settle()
	made := f.made()
	if len(made) != 1 {
		t.Fatalf("two presses made %d tokens", len(made))
	}
	if !slices.Equal(made[0].Scopes, []string{"read", "testers"}) || made[0].Name != "nightly" {
		t.Errorf("sent %+v", made[0])
	}
	if made[0].ExpiresAt != "2026-12-27T09:00:00Z" { // 30 days after the page's clock
		t.Errorf("expiry sent %q, want 30 days after 2026-11-27 09:00 UTC", made[0].ExpiresAt)
	}
	settingsSame(t, "effects of a token made", fx.take(), []string{"clear name", "focus 2 0", "lists changed"})
	p.do(func() {
		if tk.Secret != "bpt_secret" || tk.Made == nil || tk.Name != "" {
			t.Errorf("after the make: secret %q, made %v, name %q", tk.Secret, tk.Made, tk.Name)
		}
		tk.CopySecret()
		if copied != "bpt_secret" || !tk.Copied {
			t.Errorf("copied %q (%v)", copied, tk.Copied)
		}
		tk.Done()
		if tk.Secret != "" || tk.Made != nil {
			t.Errorf("Done left the secret %q", tk.Secret)
		}
	})
}
