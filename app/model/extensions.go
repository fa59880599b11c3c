package model

import (
	"context"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
)

// ExtensionsConfig is what the extensions page (the admins' home) gives
// its model.
type ExtensionsConfig struct {
	Env
	Session *Session
	// Title titles the page; Navigate goes to an in-app page. Either may
	// be nil.
	Title    func(title string)
	Navigate func(path string)
}

// Extensions is the admins' home: the extensions the signed-in person may
// see. Its fields and methods are for the UI goroutine.
type Extensions struct {
	cfg ExtensionsConfig

	// Loaded is set once the list came; List is it, Err why it did not.
	Loaded bool
	List   []betaport.Extension
	Err    error
}

// NewExtensions returns the page's model; Open loads it.
func NewExtensions(cfg ExtensionsConfig) *Extensions { return &Extensions{cfg: cfg} }

// Open loads the list, each time the page is shown. Someone known to be
// signed out goes to sign in at once (not after a 401), and a tester to
// their builds, a tester's home.
func (h *Extensions) Open() {
	if h.cfg.Title != nil {
		h.cfg.Title("Extensions")
	}
	h.cfg.Session.Check(h.cfg.Env, func(who *api.Session) {
		switch {
		case who == nil:
			h.navigate(PathLogin)
		case who.Kind == api.KindTester:
			h.navigate(PathBuilds)
		}
	})
	Call(h.cfg.Env, func(ctx context.Context, c *client.Client) ([]betaport.Extension, error) {
		return c.Extensions(ctx)
	}, func(list []betaport.Extension, err error) {
		if to := h.cfg.Session.Refused(err); to != "" {
			h.navigate(to)
			return
		}
		h.Loaded, h.List, h.Err = true, list, err
	})
}

func (h *Extensions) navigate(path string) {
	if h.cfg.Navigate != nil {
		h.cfg.Navigate(path)
	}
}
