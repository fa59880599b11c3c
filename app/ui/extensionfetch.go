package ui

import (
	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
)

// requestTimeout bounds a request the app sends on its own (not a list's
// page, which the list cancels when it is closed): model.RequestTimeout,
// which model.Call applies.
const requestTimeout = model.RequestTimeout

// openExtension reads extension id's record through the page's fetch cache
// (model.OpenExtension) and hands each new state to set on the UI
// goroutine; the returned func closes it with the page. A record read is
// remembered for the breadcrumbs of the extension's other pages.
//
// The record the server rendered the page with is in the cache already
// (readPrerendered primed it a moment ago), so the page shows it at once
// and the first read, within the deduping interval, asks nothing again. A
// later visit finds it older than that and asks again, showing the cached
// record meanwhile.
func openExtension(ctx app.Context, id int64, set func(fetch.State[betaport.Extension])) (e *model.Extension, closeQuery func()) {
	e = model.OpenExtension(pageEnv(ctx), listCache(), id, func(s fetch.State[betaport.Extension]) {
		if s.HasData {
			rememberExtension(&s.Data)
		}
		set(s)
	})
	return e, e.Close
}

// extensionOf is the record a state shows, nil while there is none.
func extensionOf(s fetch.State[betaport.Extension]) *betaport.Extension {
	if !s.HasData {
		return nil
	}
	e := s.Data
	return &e
}
