package model

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
)

// The settings page's keys: a form that creates a named key and hands its
// key.json to the page to download (the only time its secret exists
// outside the service), and each key's Revoke, which asks first. The lists
// of keys and of the audit trail are app/fetch lists the page holds; the
// model tells it when they changed.

// KeysFocus is where the keys section moves the focus after a change.
type KeysFocus int

const (
	KeysFocusLabel   KeysFocus = iota + 1 // the label field
	KeysFocusConfirm                      // a key's "Yes, revoke"
	KeysFocusRevoke                       // a key's Revoke button
)

// KeyFileName and KeyFileType are what a new key's file is downloaded as.
const (
	KeyFileName = "key.json"
	KeyFileType = "application/json"
)

// KeysConfig is what a Keys needs from its page.
type KeysConfig struct {
	// Env runs the requests; its Context is the page's for one extension.
	Env         Env
	ExtensionID int64
	// Download saves a file made in the page (a new key's key.json).
	Download func(name, mimeType string, data []byte)
	// Focus moves the focus; keyID names the key's row (0 for the label).
	Focus func(f KeysFocus, keyID int64)
	// ClearLabel empties the label field, once its key is made.
	ClearLabel func()
	// Changed says the keys and the audit trail changed: the page reads
	// its lists again.
	Changed func()
	// Announce speaks text in the page's live region.
	Announce func(text string)
	// SignedOut and ErrorText are as in SettingsConfig.
	SignedOut func(error) bool
	ErrorText func(error) string
}

// Keys is the keys section's state. Its fields and methods are for the UI
// goroutine.
type Keys struct {
	cfg KeysConfig

	ExtensionID int64

	// Label is the label typed for the next key; Channel the one channel
	// it publishes to ("": any).
	Label, Channel string
	// Busy: a key is being created. Err is why the last create or revoke
	// failed.
	Busy bool
	Err  error
	// Downloaded is the label of the key whose key.json was just
	// downloaded ("" for none).
	Downloaded string

	asking   map[int64]time.Time // when each question showed
	revoking map[int64]bool
	// revoked are the keys revoked on this page, as the service answered,
	// until the list is read again.
	revoked map[int64]betaport.Key
}

// NewKeys returns the keys section of cfg.ExtensionID.
func NewKeys(cfg KeysConfig) *Keys {
	return &Keys{cfg: cfg, ExtensionID: cfg.ExtensionID, asking: map[int64]time.Time{}, revoking: map[int64]bool{}, revoked: map[int64]betaport.Key{}}
}

// SetLabel follows the label field as it is typed.
func (k *Keys) SetLabel(label string) { k.Label = label }

// Create creates a key named by the label and downloads its key.json. A
// label the service would refuse is refused at once, with its message; a
// press while a key is being created does nothing (Enter pressed twice
// makes one key).
func (k *Keys) Create() {
	if k.Busy {
		return
	}
	label, channel := k.Label, k.Channel
	if err := keyLabelProblem(label); err != nil {
		k.Err, k.Downloaded = err, ""
		k.announce("The key was not created: " + settingsErrorText(k.cfg.ErrorText, err))
		k.focus(KeysFocusLabel, 0)
		return
	}
	k.Busy, k.Err, k.Downloaded = true, nil, ""
	id := k.ExtensionID
	Call(k.cfg.Env, func(ctx context.Context, c *client.Client) (api.CreatedKey, error) {
		var out api.CreatedKey
		err := c.Do(ctx, http.MethodPost, api.KeysPath(id), api.NewKey{Label: label, Channel: channel}, &out)
		return out, err
	}, func(out api.CreatedKey, err error) {
		k.Busy = false
		if settingsSignedOut(k.cfg.SignedOut, err) {
			return
		}
		k.Err = err
		if err != nil {
			k.announce("The key was not created: " + settingsErrorText(k.cfg.ErrorText, err))
			k.focus(KeysFocusLabel, 0)
			return
		}
		if k.cfg.Download != nil {
			k.cfg.Download(KeyFileName, KeyFileType, KeyFileBytes(out.KeyFile))
		}
		k.Downloaded = out.Key.Label
		// The field is emptied for the next key, unless another label was
		// typed meanwhile.
		if k.Label == label {
			k.Label = ""
			if k.cfg.ClearLabel != nil {
				k.cfg.ClearLabel()
			}
		}
		k.announce("Key " + out.Key.Label + " created; key.json downloaded.")
		k.changed()
	})
}

// KeyFileBytes is a key file as downloaded: indented JSON and a newline.
func KeyFileBytes(f api.KeyFile) []byte {
	b, _ := json.MarshalIndent(f, "", "  ")
	return append(b, '\n')
}

// keyLabelProblem is what the service would answer a label it refuses (a
// key's own Validate says what), as its problem; nil for a good label.
func keyLabelProblem(label string) error {
	probe := betaport.Key{Label: label, CreatedBy: "-"}
	var e *betaport.Error
	if err := probe.Validate(); errors.As(err, &e) && e.Param == "label" {
		return &api.Problem{Type: api.ProblemBadRequest, Title: http.StatusText(http.StatusBadRequest),
			Status: http.StatusBadRequest, Detail: e.Message, Param: e.Param}
	}
	return nil
}

// Asking reports whether key id's question (revoke it?) is open.
func (k *Keys) Asking(id int64) bool { _, ok := k.asking[id]; return ok }

// ConfirmReady reports whether key id's open question takes its "Yes,
// revoke": not until ConfirmDelay after it showed.
func (k *Keys) ConfirmReady(id int64) bool {
	shown, ok := k.asking[id]
	return ok && confirmReady(shown, k.cfg.Env.clock().Now())
}

// Ask opens a key's question before it is revoked, with the focus on its
// "Yes, revoke" (which takes a press only after ConfirmDelay; pressed
// again, Revoke keeps the question as it is).
func (k *Keys) Ask(key betaport.Key) {
	if k.Shown(key).RevokedAt != nil {
		return
	}
	if !k.Asking(key.ID) {
		k.asking[key.ID] = k.cfg.Env.clock().Now()
		afterConfirmDelay(k.cfg.Env)
	}
	k.focus(KeysFocusConfirm, key.ID)
}

// Keep closes a key's question: the key is kept.
func (k *Keys) Keep(key betaport.Key) {
	delete(k.asking, key.ID)
	k.focus(KeysFocusRevoke, key.ID)
}

// Revoke revokes a key whose question is open (its "Yes, revoke"); the
// other keys keep working. Pressed again, or within ConfirmDelay of the
// question showing, it does nothing.
func (k *Keys) Revoke(key betaport.Key) {
	if !k.ConfirmReady(key.ID) || k.revoking[key.ID] {
		return
	}
	delete(k.asking, key.ID)
	k.revoking[key.ID] = true
	k.Err = nil
	ext := k.ExtensionID
	Call(k.cfg.Env, func(ctx context.Context, c *client.Client) (betaport.Key, error) {
		var out betaport.Key
		err := c.Do(ctx, http.MethodDelete, api.KeyPath(ext, key.ID), nil, &out)
		return out, err
	}, func(out betaport.Key, err error) {
		delete(k.revoking, key.ID)
		if settingsSignedOut(k.cfg.SignedOut, err) {
			return
		}
		k.Err = err
		if err != nil {
			k.announce("The key was not revoked: " + settingsErrorText(k.cfg.ErrorText, err))
			return
		}
		if out.ID != key.ID || out.RevokedAt == nil {
			now := k.cfg.Env.clock().Now()
			out = key
			out.RevokedAt = &now
		}
		k.revoked[key.ID] = out
		k.announce("Key " + key.Label + " revoked. Calls made with it are refused from now on.")
		k.changed()
	})
}

// Shown is key as its row shows it: revoked once revoked here, before
// the list is read again.
func (k *Keys) Shown(key betaport.Key) betaport.Key {
	if r, ok := k.revoked[key.ID]; ok && key.RevokedAt == nil {
		key.RevokedAt = r.RevokedAt
	}
	return key
}

func (k *Keys) announce(text string) {
	if k.cfg.Announce != nil {
		k.cfg.Announce(text)
	}
}

func (k *Keys) focus(f KeysFocus, id int64) {
	if k.cfg.Focus != nil {
		k.cfg.Focus(f, id)
	}
}

func (k *Keys) changed() {
	if k.cfg.Changed != nil {
		k.cfg.Changed()
	}
}
