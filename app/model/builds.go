package model

import (
	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
)

// BuildsPageSize is the limit of one page of a tester's builds.
const BuildsPageSize = 50

// BuildPage is one page of a tester's builds (cursor pages).
type BuildPage = fetch.CursorPage[betaport.Bundle]

// BuildsKeys are the pages of the signed-in tester's builds.
func BuildsKeys() fetch.GetKey[BuildPage] {
	return fetch.CursorKeys[betaport.Bundle](api.PathBuilds, nil, BuildsPageSize)
}

// BuildID is a builds list's key: builds of several extensions share
// numbers.
func BuildID(b betaport.Bundle) int64 { return b.ID }

// BuildsOf is the builds of one page.
func BuildsOf(p BuildPage) []betaport.Bundle { return p.Data }

// BuildsConfig is what a tester's builds page gives its model.
type BuildsConfig struct {
	Env
	Session *Session
	// Cache is the page's fetch cache.
	Cache *fetch.Cache
	// Fallback returns the first page the server rendered the page with,
	// by its key (nil: none): the list shows it at once.
	Fallback func(key string) []BuildPage
	// MaxPages bounds the pages the list holds (0: every page).
	MaxPages int

	// Effects, run on the UI goroutine; any may be nil.
	//
	// Title titles the page; Navigate goes to an in-app page.
	Title    func(title string)
	Navigate func(path string)
	// Loaded is told once, when the list first has data (the page scrolls
	// back to where the person was).
	Loaded func()
	// Listen follows an extension's publishes (its event stream): for each
	// event it asks shows whether the page shows the event's revision, and
	// calls changed when not. It returns the function that stops.
	Listen func(extensionID int64, shows func(api.Revision) bool, changed func()) (stop func())
}

// Builds is a tester's home: the builds of the extension they test, newest
// first, with the current one's download and notes, following the
// extension's publishes as the admins' bundles list does. Its fields and
// methods are for the UI goroutine.
type Builds struct {
	cfg BuildsConfig

	// List is the list's last state.
	List fetch.InfiniteState[BuildPage]

	list     *fetch.Infinite[BuildPage]
	stopList func()
	loaded   bool
	stopLive func()
}

// NewBuilds returns the page's model, showing nothing until Open.
func NewBuilds(cfg BuildsConfig) *Builds { return &Builds{cfg: cfg} }

// Prerender is the page the server renders: the first page it read for the
// tester (Fallback), and no requests.
func (b *Builds) Prerender() {
	if b.cfg.Fallback == nil {
		return
	}
	getKey := BuildsKeys()
	key, _ := getKey(0, nil)
	pages := b.cfg.Fallback(key)
	if pages == nil {
		return
	}
	_, more := getKey(1, &pages[0])
	b.List = fetch.InfiniteState[BuildPage]{Key: key, Data: pages, Size: 1, HasMore: more}
}

// Open shows the builds, unless they are shown already, and follows the
// tester's extension once who is signed in is known.
func (b *Builds) Open() {
	if b.cfg.Title != nil {
		b.cfg.Title("Your builds")
	}
	if b.list != nil {
		return
	}
	b.loaded = false
	b.list, b.stopList = openCursorList(b.cfg.Env, b.cfg.Cache, BuildsKeys(), b.cfg.Fallback, b.cfg.MaxPages, b.listChanged)
	list := b.list
	b.cfg.Session.Check(b.cfg.Env, func(who *api.Session) {
		if who == nil || who.Tester == nil || b.list != list || b.stopLive != nil || b.cfg.Listen == nil {
			return
		}
		b.stopLive = b.cfg.Listen(who.Tester.ExtensionID, b.Shows, b.readFirst)
	})
}

// listChanged takes the list's new state; a 401 (a tester revoked) sends
// the person away instead of showing an error.
func (b *Builds) listChanged(s fetch.InfiniteState[BuildPage]) {
	if to := b.cfg.Session.Refused(s.Err); to != "" {
		if b.cfg.Navigate != nil {
			b.cfg.Navigate(to)
		}
		return
	}
	b.List = s
	if !b.loaded && s.Data != nil {
		b.loaded = true
		if b.cfg.Loaded != nil {
			b.cfg.Loaded()
		}
	}
}

// Downloading is told a build's download started (Install or Zip): the
// first page is read again, so that a tester whose access ended while the
// page was open is sent to the page that says so, as a reload would,
// rather than pressing a download that gets no file and says nothing.
func (b *Builds) Downloading() { b.readFirst() }

// readFirst reads the first page again: a publish puts its build on top
// and moves the current mark, which the first page shows.
func (b *Builds) readFirst() {
	if b.list != nil {
		b.list.RevalidateFunc(func(BuildPage, string) bool { return false })
	}
}

// Close stops reading and following: requests on their way are
// cancelled.
func (b *Builds) Close() {
	if b.stopLive != nil {
		b.stopLive()
		b.stopLive = nil
	}
	if b.stopList != nil {
		b.stopList()
		b.stopList = nil
		b.list.Close()
		b.list = nil
	}
}

// Infinite is the list (nil until Open and after Close): its load more
// and retry are the list's own.
func (b *Builds) Infinite() *fetch.Infinite[BuildPage] { return b.list }

// Rows places the list's builds on rows.
func (b *Builds) Rows() fetch.Rows[betaport.Bundle] { return fetch.RowsOf(b.List, BuildsOf) }

// Shows reports whether the first page shows rev: its newest build is the
// last bundle, and the current one is marked so. A page that cannot tell
// (no first page yet, the current build further down) says no: reading it
// again is the way to be sure.
func (b *Builds) Shows(rev api.Revision) bool {
	if len(b.List.Data) == 0 {
		return false
	}
	builds := b.List.Data[0].Data
	if len(builds) == 0 {
		return rev.LastBundle == 0
	}
	if builds[0].Number != rev.LastBundle {
		return false
	}
	for _, x := range builds {
		if x.Current {
			return x.Number == rev.CurrentBundle
		}
	}
	return false
}

// CurrentNotes are the current builds with release notes (one per
// extension the tester tests), read from the first page.
func (b *Builds) CurrentNotes() []betaport.Bundle {
	var current []betaport.Bundle
	if len(b.List.Data) > 0 {
		for _, x := range b.List.Data[0].Data {
			if x.Current && x.ReleaseNotes != "" {
				current = append(current, x)
			}
		}
	}
	return current
}
