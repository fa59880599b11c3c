package model

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
)

// The settings page's access tokens: a form that makes a named token with
// its scopes and expiry and shows its secret once, to copy, and each
// token's Revoke, which asks first, as a key's does. The list of tokens is
// an app/fetch list the page holds; the model tells it when it changed.

// TokensFocus is where the tokens section moves the focus after a change.
type TokensFocus int

const (
	TokensFocusName    TokensFocus = iota + 1 // the name field
	TokensFocusSecret                         // the new token's secret
	TokensFocusConfirm                        // a token's "Yes, revoke"
	TokensFocusRevoke                         // a token's Revoke button
	TokensFocusRevoked                        // a revoked token's state
)

// TokenLifetimes are the form's expiry choices, in days (0: until revoked).
var TokenLifetimes = []int{30, 90, 365, 0}

// TokensConfig is what a Tokens needs from its page.
type TokensConfig struct {
	Env         Env
	ExtensionID int64
	// Focus moves the focus; tokenID names the token's row.
	Focus func(f TokensFocus, tokenID int64)
	// ClearName empties the name field once its token is made.
	ClearName func()
	// Changed says the tokens and the audit trail changed.
	Changed func()
	// Copy puts text on the clipboard, and says whether it could.
	Copy func(text string) bool
	// Announce, SignedOut and ErrorText are as in KeysConfig.
	Announce  func(text string)
	SignedOut func(error) bool
	ErrorText func(error) string
}

// Tokens is the tokens section's state, for the UI goroutine.
type Tokens struct {
	cfg TokensConfig

	// Name is typed for the next token; Scopes are the boxes ticked (read
	// is ticked to start with); Days is its lifetime (0: until revoked).
	Name   string
	Scopes map[string]bool
	Days   int
	// Busy: a token is being made. Err is why the last make or revoke
	// failed.
	Busy bool
	Err  error
	// Made is the token just made and Secret its secret, shown until the
	// page is left or Done is pressed.
	Made   *betaport.AccessToken
	Secret string
	// Copied: the secret was copied.
	Copied bool

	asking   map[int64]time.Time
	revoking map[int64]bool
	revoked  map[int64]betaport.AccessToken
}

// NewTokens returns the tokens section of cfg.ExtensionID.
func NewTokens(cfg TokensConfig) *Tokens {
	return &Tokens{cfg: cfg, Scopes: map[string]bool{betaport.ScopeRead: true}, Days: TokenLifetimes[1],
		asking: map[int64]time.Time{}, revoking: map[int64]bool{}, revoked: map[int64]betaport.AccessToken{}}
}

// SetName follows the name field as it is typed.
func (k *Tokens) SetName(name string) { k.Name = name }

// SetScope ticks or clears a scope's box.
func (k *Tokens) SetScope(scope string, on bool) { k.Scopes[scope] = on }

// chosenScopes are the ticked scopes, in AllScopes' order.
func (k *Tokens) chosenScopes() []string {
	var out []string
	for _, s := range betaport.AllScopes {
		if k.Scopes[s] {
			out = append(out, s)
		}
	}
	return out
}

// Create makes a token of the name, scopes and lifetime chosen and shows
// its secret. What the service would refuse is refused at once; a press
// while one is being made does nothing.
func (k *Tokens) Create() {
	if k.Busy {
		return
	}
	now := k.cfg.Env.clock().Now()
	in := api.NewToken{Name: k.Name, Scopes: k.chosenScopes()}
	probe := betaport.AccessToken{Name: in.Name, Scopes: in.Scopes, CreatedBy: "-", CreatedAt: now}
	if k.Days > 0 {
		at := now.Add(time.Duration(k.Days) * 24 * time.Hour)
		probe.ExpiresAt = &at
		in.ExpiresAt = at.UTC().Format(time.RFC3339)
	}
	if err := probe.Validate(); err != nil {
		var e *betaport.Error
		errors.As(err, &e)
		k.Err = &api.Problem{Type: api.ProblemBadRequest, Title: http.StatusText(http.StatusBadRequest),
			Status: http.StatusBadRequest, Detail: betaport.ErrorMessage(err), Param: e.Param}
		k.announce("The token was not made: " + settingsErrorText(k.cfg.ErrorText, k.Err))
		k.focus(TokensFocusName, 0)
		return
	}
	k.Busy, k.Err, k.Made, k.Secret, k.Copied = true, nil, nil, "", false
	id, name := k.cfg.ExtensionID, k.Name
	Call(k.cfg.Env, func(ctx context.Context, c *client.Client) (api.CreatedToken, error) {
		var out api.CreatedToken
		err := c.Do(ctx, http.MethodPost, api.TokensPath(id), in, &out)
		return out, err
	}, func(out api.CreatedToken, err error) {
		k.Busy = false
		if settingsSignedOut(k.cfg.SignedOut, err) {
			return
		}
		k.Err = err
		if err != nil {
			k.announce("The token was not made: " + settingsErrorText(k.cfg.ErrorText, err))
			k.focus(TokensFocusName, 0)
			return
		}
		k.Made, k.Secret = &out.Token, out.Secret
		if k.Name == name {
			k.Name = ""
			if k.cfg.ClearName != nil {
				k.cfg.ClearName()
			}
		}
		k.announce("Token " + out.Token.Name + " made. Copy it now: it is not shown again.")
		k.focus(TokensFocusSecret, 0)
		k.changed()
	})
}

// CopySecret copies the new token's secret.
func (k *Tokens) CopySecret() {
	if k.Secret == "" || k.cfg.Copy == nil {
		return
	}
	k.Copied = k.cfg.Copy(k.Secret)
	if k.Copied {
		k.announce("Token copied.")
	} else {
		k.announce("The token could not be copied: select it and copy it by hand.")
	}
}

// Done hides the new token's secret for good.
func (k *Tokens) Done() {
	k.Made, k.Secret, k.Copied = nil, "", false
	k.focus(TokensFocusName, 0)
}

// Asking reports whether token id's question (revoke it?) is open.
func (k *Tokens) Asking(id int64) bool { _, ok := k.asking[id]; return ok }

// ConfirmReady reports whether token id's "Yes, revoke" takes a press.
func (k *Tokens) ConfirmReady(id int64) bool {
	shown, ok := k.asking[id]
	return ok && confirmReady(shown, k.cfg.Env.clock().Now())
}

// Ask opens a token's question before it is revoked.
func (k *Tokens) Ask(t betaport.AccessToken) {
	if k.Shown(t).RevokedAt != nil {
		return
	}
	if !k.Asking(t.ID) {
		k.asking[t.ID] = k.cfg.Env.clock().Now()
		afterConfirmDelay(k.cfg.Env)
	}
	k.focus(TokensFocusConfirm, t.ID)
}

// Keep closes a token's question: the token is kept.
func (k *Tokens) Keep(t betaport.AccessToken) {
	delete(k.asking, t.ID)
	k.focus(TokensFocusRevoke, t.ID)
}

// Revoke revokes a token whose question is open; pressed again, or too
// soon after the question showed, it does nothing.
func (k *Tokens) Revoke(t betaport.AccessToken) {
	if !k.ConfirmReady(t.ID) || k.revoking[t.ID] {
		return
	}
	delete(k.asking, t.ID)
	k.revoking[t.ID] = true
	k.Err = nil
	ext := k.cfg.ExtensionID
	Call(k.cfg.Env, func(ctx context.Context, c *client.Client) (betaport.AccessToken, error) {
		var out betaport.AccessToken
		err := c.Do(ctx, http.MethodDelete, api.TokenPath(ext, t.ID), nil, &out)
		return out, err
	}, func(out betaport.AccessToken, err error) {
		delete(k.revoking, t.ID)
		if settingsSignedOut(k.cfg.SignedOut, err) {
			return
		}
		k.Err = err
		if err != nil {
			k.announce("The token was not revoked: " + settingsErrorText(k.cfg.ErrorText, err))
			return
		}
		if out.ID != t.ID || out.RevokedAt == nil {
			now := k.cfg.Env.clock().Now()
			out = t
			out.RevokedAt = &now
		}
		k.revoked[t.ID] = out
		k.announce("Token " + t.Name + " revoked. Scripts that use it are refused from now on.")
		// Its Revoke is gone: the focus stays on its row, not the page.
		k.focus(TokensFocusRevoked, t.ID)
		k.changed()
	})
}

// Shown is a token as its row shows it: revoked once revoked here.
func (k *Tokens) Shown(t betaport.AccessToken) betaport.AccessToken {
	if r, ok := k.revoked[t.ID]; ok && t.RevokedAt == nil {
		t.RevokedAt = r.RevokedAt
	}
	return t
}

// TokenState is a token's state in words: active, expired or revoked.
func TokenState(t betaport.AccessToken, now time.Time) string {
	switch {
	case t.RevokedAt != nil:
		return "revoked"
	case t.Expired(now):
		return "expired"
	default:
		return "active"
	}
}

// ScopeHelp says what each scope allows, as the form shows it.
var ScopeHelp = map[string]string{
	betaport.ScopeRead:     "read bundles, testers, channels, adoption, feedback and settings",
	betaport.ScopeTesters:  "invite, revoke and restore testers; move them between channels",
	betaport.ScopeReleases: "roll back, promote, make channels, run rollouts",
	betaport.ScopeFeedback: "resolve, reopen and delete reports",
	betaport.ScopeSettings: "make and revoke submit keys and webhooks; rotate the update URL",
}

func (k *Tokens) announce(text string) {
	if k.cfg.Announce != nil {
		k.cfg.Announce(text)
	}
}

func (k *Tokens) focus(f TokensFocus, id int64) {
	if k.cfg.Focus != nil {
		k.cfg.Focus(f, id)
	}
}

func (k *Tokens) changed() {
	if k.cfg.Changed != nil {
		k.cfg.Changed()
	}
}
