package ui

import (
	"context"
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
)

// requestTimeout bounds a request the app sends on its own (not a list's
// page, which the list cancels when it is closed).
const requestTimeout = 30 * time.Second

// extensionConfig reads an extension's record when a page opens and when
// the page asks again (Revalidate: a publish moved its current bundle),
// not on focus or reconnect, and an error stays until then: the pages
// show the error with the way back rather than retry behind it.
var extensionConfig = fetch.Config{
	RevalidateOnFocus:     fetch.Bool(false),
	RevalidateOnReconnect: fetch.Bool(false),
	RetryOnError:          fetch.Bool(false),
}

// openExtension reads extension id's record through the page's fetch cache
// (useFetch) and hands each new state to set on the UI goroutine; the
// returned func closes the Query with the page.
//
// The record the server rendered the page with is in the cache already
// (readPrerendered primed it a moment ago), so the page shows it at once
// and the Query's first read, within the deduping interval, asks nothing
// again. A later visit finds it older than that and asks again, showing
// the cached record meanwhile.
func openExtension(ctx app.Context, id int64, set func(fetch.State[betaport.Extension])) (q *fetch.Query[betaport.Extension], closeQuery func()) {
	get := fetch.JSONFetcher[betaport.Extension](httpOptions())
	q = fetch.New(context.Background(), listCache(), api.ExtensionPath(id),
		func(ctx context.Context, key, etag string) (fetch.Result[betaport.Extension], error) {
			ctx, cancel := context.WithTimeout(ctx, requestTimeout)
			defer cancel()
			return get(ctx, key, etag)
		},
		fetch.Options[betaport.Extension]{Config: extensionConfig})
	return q, bindQuery(ctx, q, func(s fetch.State[betaport.Extension]) {
		if s.HasData {
			rememberExtension(&s.Data)
		}
		set(s)
	})
}

// extensionOf is the record a state shows, nil while there is none.
func extensionOf(s fetch.State[betaport.Extension]) *betaport.Extension {
	if !s.HasData {
		return nil
	}
	e := s.Data
	return &e
}
