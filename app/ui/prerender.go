package ui

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
)

// Prerendered first pages. The server fetches, with the visitor's own
// session, the first page of the lists a page shows (PrerenderRequests),
// renders the page with them (OnPreRender) and embeds them in the HTML as
// JSON. When the wasm takes over, it primes the fetch cache with them, so
// the list shows the same rows at once and asks for nothing.

// Kinds of prerendered data.
const (
	KindExtension = "extension"
	KindBundles   = "bundles"
	KindTesters   = "testers"
	KindBuilds    = "builds"
	KindFeedback  = "feedback"
	KindSession   = "session" // who is visiting
)

// PrerenderRequest is one API answer a page is rendered with; Key is both
// the API path and the list's fetch key.
type PrerenderRequest struct {
	Kind string
	Key  string
}

// The server asks for the first page the browser's list would ask for.

func firstBundlesKey(id int64) string { return firstKey(bundlesKeys(id)) }

func firstTestersKey(id int64) string { return firstKey(testersKeys(id, nil)) }

func firstBuildsKey() string { return firstKey(buildsKeys()) }

func firstFeedbackKey(id int64) string {
	return firstKey(model.FeedbackKeys(id, model.FeedbackQuery{}))
}

// PrerenderRequests lists the API answers the page at path is rendered
// with.
func PrerenderRequests(path string) []PrerenderRequest {
	if path == "/builds" {
		return []PrerenderRequest{{KindBuilds, firstBuildsKey()}}
	}
	id, sub, ok := model.ExtensionPage(path)
	if !ok {
		return nil
	}
	switch sub {
	case "":
		return []PrerenderRequest{{KindExtension, api.ExtensionPath(id)}, {KindBundles, firstBundlesKey(id)}}
	case "adoption":
		return []PrerenderRequest{{KindExtension, api.ExtensionPath(id)}}
	case "testers":
		// The extension too: the breadcrumbs name it.
		return []PrerenderRequest{{KindExtension, api.ExtensionPath(id)}, {KindTesters, firstTestersKey(id)}}
	}
	if sub == "feedback" || strings.HasPrefix(sub, "feedback/") {
		// The unfiltered list's first page (a filtered address reads its
		// own once the app runs), the report opened among it.
		return []PrerenderRequest{{KindExtension, api.ExtensionPath(id)}, {KindFeedback, firstFeedbackKey(id)}}
	}
	return nil
}

// Server side: the answers for the page being rendered. go-app renders a
// page synchronously in the request's goroutine, so a lock held around the
// render scopes the data to one request.
var serverPages struct {
	sync.Mutex
	pages map[string][]byte
}

// RenderWith runs render (the server's prerender of one page) with the
// given API answers, by key.
func RenderWith(pages map[string][]byte, render func()) {
	serverPages.Lock()
	defer serverPages.Unlock()
	serverPages.pages = pages
	defer func() { serverPages.pages = nil }()
	render()
}

// Client side: the answers embedded in the page, decoded at start.
var clientPages = map[string]any{}

// prerendered returns the page-time answer for key, on the server while
// rendering and in the browser from the embedded JSON.
func prerendered[T any](key string) (T, bool) {
	var zero T
	if app.IsServer {
		b, ok := serverPages.pages[key] // read under RenderWith's lock
		if !ok {
			return zero, false
		}
		var v T
		if json.Unmarshal(b, &v) != nil {
			return zero, false
		}
		return v, true
	}
	v, ok := clientPages[key].(T)
	return v, ok
}

// readPrerendered reads the answers the server embedded, before go-app
// replaces the prerendered body, and primes the fetch cache with them.
func readPrerendered() {
	nodes := app.Window().Get("document").Call("querySelectorAll", "script[data-prerender-key]")
	for i := 0; i < nodes.Length(); i++ {
		n := nodes.Index(i)
		key, kind := n.Call("getAttribute", "data-prerender-key").String(), n.Call("getAttribute", "data-prerender-kind").String()
		etag := n.Call("getAttribute", "data-etag").String()
		body := []byte(n.Get("textContent").String())
		switch kind {
		case KindExtension:
			primeJSON[betaport.Extension](key, body, etag)
		case KindBundles:
			primeJSON[[]betaport.Bundle](key, body, etag)
		case KindTesters:
			primeJSON[fetch.CursorPage[betaport.Tester]](key, body, etag)
		case KindBuilds:
			primeJSON[fetch.CursorPage[betaport.Bundle]](key, body, etag)
		case KindFeedback:
			primeJSON[fetch.CursorPage[betaport.Feedback]](key, body, etag)
		case KindEnded:
			var pr api.Problem
			if json.Unmarshal(body, &pr) == nil {
				clientPages[KindEnded] = pr
			}
		case KindSession:
			var s api.Session
			if json.Unmarshal(body, &s) == nil {
				clientPages[api.PathSession] = s // appSession starts from it; no Kind: nobody
			}
		}
	}
}

func primeJSON[T any](key string, body []byte, etag string) {
	var v T
	if json.Unmarshal(body, &v) != nil {
		return
	}
	clientPages[key] = v
	fetch.Prime(listCache(), key, v, etag)
}

// prerenderedPages is a list's first page from the server, as fallback
// pages (nil when there is none).
func prerenderedPages[P any](key string) []P {
	if page, ok := prerendered[P](key); ok {
		return []P{page}
	}
	return nil
}
