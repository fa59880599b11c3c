package model

import (
	"context"
	"net/http"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
)

// The settings page of an extension (/extensions/{id}/settings): its facts,
// its browser updates (the update URL and the rotation of its token), and
// the live region the page's sections speak through. Its keys and audit
// trail are a Keys (keys.go), its webhooks a Webhooks (webhooks.go).

// SettingsFocus is where the settings page moves the focus after a change.
type SettingsFocus int

const (
	SettingsFocusRotate        SettingsFocus = iota + 1 // the "Rotate update token" button
	SettingsFocusConfirmRotate                          // the question's "Rotate the token"
	SettingsFocusUpdateURL                              // the update URL field
)

// SettingsConfig is what a Settings needs from its page.
type SettingsConfig struct {
	// Env runs the requests; its Context is the page's for one extension.
	Env         Env
	ExtensionID int64
	// Focus moves the focus (after the render that shows the element).
	Focus func(SettingsFocus)
	// Copy puts text on the clipboard, reporting false when the page has
	// none (not served over HTTPS): the field is then focused, its text
	// selected, to be copied by hand.
	Copy func(text string) bool
	// SignedOut is given every failed answer: it reports whether the
	// error says the person is no longer signed in (the page then leaves
	// for the sign-in page), and the answer is dropped.
	SignedOut func(error) bool
	// ErrorText is a failed request as a person reads it.
	ErrorText func(error) string
}

// Settings is the settings page's state. Its fields and methods are for
// the UI goroutine.
type Settings struct {
	cfg SettingsConfig

	ExtensionID int64
	// Session is who is signed in, nil until known; Extension the
	// extension (Err why it could not be read).
	Session   *api.Session
	Extension *betaport.Extension
	Err       error

	// Updates is the extension's Chrome ID and update URL, nil until read
	// (UpdatesErr says why it could not be).
	Updates    *api.Updates
	UpdatesErr error
	// RotateAsking: the question before a rotation is open; Rotating: the
	// rotation is on its way; Rotated: it was done (RotateErr: it failed).
	RotateAsking, Rotating, Rotated bool
	RotateErr                       error
	// UpdateURLCopied: the update URL was put on the clipboard.
	UpdateURLCopied bool

	// Announce is the latest text of the page's live region.
	Announce string

	updatesAsked bool
}

// NewSettings returns the settings page of cfg.ExtensionID.
func NewSettings(cfg SettingsConfig) *Settings {
	return &Settings{cfg: cfg, ExtensionID: cfg.ExtensionID}
}

// SetSession records who is signed in and reports whether they are an
// admin, who sees the keys, the audit trail and the browser updates: their
// update URL is read then (the page opens the lists).
func (s *Settings) SetSession(se *api.Session) (admin bool) {
	s.Session = se
	if !s.Admin() {
		return false
	}
	if !s.updatesAsked {
		s.loadUpdates()
	}
	return true
}

// Admin reports whether an admin is signed in.
func (s *Settings) Admin() bool { return s.Session != nil && s.Session.Kind == api.KindAdmin }

// SetExtension records the extension as read (or why it could not be).
func (s *Settings) SetExtension(e *betaport.Extension, err error) { s.Extension, s.Err = e, err }

// Say puts text in the page's live region (the keys speak through it).
func (s *Settings) Say(text string) { s.Announce = text }

// loadUpdates reads the extension's Chrome ID and update URL. The first
// read makes the extension's signing key if no bundle was signed yet.
func (s *Settings) loadUpdates() {
	s.updatesAsked, s.UpdatesErr = true, nil
	id := s.ExtensionID
	Call(s.cfg.Env, func(ctx context.Context, c *client.Client) (api.Updates, error) {
		var u api.Updates
		err := c.Do(ctx, http.MethodGet, api.UpdatesPath(id), nil, &u)
		return u, err
	}, func(u api.Updates, err error) {
		if s.signedOut(err) {
			return
		}
		s.UpdatesErr = err
		if err == nil {
			s.Updates = &u
		}
	})
}

// CopyUpdateURL copies the update URL, or selects it to be copied by hand.
func (s *Settings) CopyUpdateURL() {
	if s.Updates == nil {
		return
	}
	if s.cfg.Copy != nil && s.cfg.Copy(s.Updates.UpdateURL) {
		s.UpdateURLCopied = true
		s.Announce = "Update URL copied."
		return
	}
	s.focus(SettingsFocusUpdateURL)
}

// AskRotate opens the question before rotating the update token.
func (s *Settings) AskRotate() {
	if s.Updates == nil || s.Rotating {
		return
	}
	s.RotateAsking, s.RotateErr, s.Rotated = true, nil, false
	s.Announce = "Rotating the update token stops updates for every installed copy. Confirm or cancel."
	s.focus(SettingsFocusConfirmRotate)
}

// CancelRotate closes the question: nothing changes.
func (s *Settings) CancelRotate() {
	if s.Rotating {
		return
	}
	s.RotateAsking = false
	s.Announce = "Cancelled. The update token was not changed."
	s.focus(SettingsFocusRotate)
}

// Rotate replaces the update token, once the question is open; pressed
// again while it is on its way, it does nothing.
func (s *Settings) Rotate() {
	if s.Rotating || !s.RotateAsking {
		return
	}
	s.Rotating, s.RotateErr, s.Rotated = true, nil, false
	id := s.ExtensionID
	Call(s.cfg.Env, func(ctx context.Context, c *client.Client) (api.Updates, error) {
		var u api.Updates
		err := c.Do(ctx, http.MethodPost, api.UpdateTokenPath(id), nil, &u)
		return u, err
	}, func(u api.Updates, err error) {
		if s.signedOut(err) {
			return
		}
		s.Rotating, s.RotateAsking, s.RotateErr = false, false, err
		if err != nil {
			s.Announce = "The update token was not rotated: " + settingsErrorText(s.cfg.ErrorText, err)
			s.focus(SettingsFocusRotate)
			return
		}
		s.Updates, s.Rotated, s.UpdateURLCopied = &u, true, false
		s.Announce = "Update token rotated. The new update URL is " + u.UpdateURL + ". Copies installed from an earlier CRX no longer update."
		s.focus(SettingsFocusUpdateURL)
	})
}

func (s *Settings) focus(f SettingsFocus) {
	if s.cfg.Focus != nil {
		s.cfg.Focus(f)
	}
}

func (s *Settings) signedOut(err error) bool { return settingsSignedOut(s.cfg.SignedOut, err) }

// settingsSignedOut asks the page's SignedOut about a failed answer (the
// settings page's models share it).
func settingsSignedOut(signedOut func(error) bool, err error) bool {
	return err != nil && signedOut != nil && signedOut(err)
}

// settingsErrorText is err as a person reads it.
func settingsErrorText(text func(error) string, err error) string {
	switch {
	case err == nil:
		return ""
	case text != nil:
		return text(err)
	}
	return err.Error()
}
