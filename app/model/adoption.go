package model

import (
	"net/url"
	"strconv"

	"github.com/betaport/betaport/app/adoption"
	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
)

// AdoptionPageSize is the limit of one page of adoption counts: a week of
// an extension's hours and versions fits in a page or two.
const AdoptionPageSize = api.AdoptionMaxLimit

// AdoptionMaxPages bounds how many pages the section reads (a week of 24
// hours × 80 versions): it never reads on and on.
const AdoptionMaxPages = 8

// AdoptionConfig is what the extension page's Adoption section gives its
// model.
type AdoptionConfig struct {
	Env Env
	// Cache is the page's fetch cache.
	Cache *fetch.Cache
	// SignedOut is told a read of the counts the service answered 401 (nil:
	// nothing); the answer is not shown.
	SignedOut func(err error)
}

// AdoptionCounts is a list of pages of adoption counts.
type AdoptionCounts = fetch.InfiniteState[fetch.CursorPage[betaport.AdoptionCount]]

// Adoption is the extension page's Adoption section: the update checks of
// the last days (every page of them, read one after the other, up to
// AdoptionMaxPages) and the current bundle (whose version is "the current
// build"), summed up by package app/adoption. Its fields and methods are
// for the UI goroutine.
type Adoption struct {
	cfg AdoptionConfig

	// ExtensionID and CurrentBundle are what the section reads for.
	ExtensionID, CurrentBundle int64
	// Counts is the state of the counts' pages, Current of the current
	// bundle's record.
	Counts  AdoptionCounts
	Current fetch.State[betaport.Bundle]
	// Installs counts the testers by the build their copies run.
	Installs fetch.State[betaport.Installs]
	// ByTesters counts testers per day rather than checks (the person's
	// choice, kept while the page is open); Chosen is set once they chose.
	ByTesters, Chosen bool
	// Channel, counting testers, keeps the testers of one channel ("":
	// every tester).
	Channel string

	opened       bool
	byTesters    bool   // what the open list counts
	channel      string // and of which channel
	movedFrom    string // the version the figures were of before a publish moved the current bundle
	heard        int64  // the last testers revision the stream sent
	followed     int64  // the last one read again for
	installs     *fetch.Query[betaport.Installs]
	stopInstalls func()
	list         *fetch.Infinite[fetch.CursorPage[betaport.AdoptionCount]]
	stopList     func()
	current      *fetch.Query[betaport.Bundle]
	stopCurrent  func()
}

// NewAdoption returns the section's model, showing nothing until Open.
func NewAdoption(cfg AdoptionConfig) *Adoption { return &Adoption{cfg: cfg} }

// Open reads the counts of extension id and its current bundle's record,
// unless they are read for them already: a publish that moves the current
// bundle reads both again, showing the figures it has meanwhile.
func (a *Adoption) Open(id, currentBundle int64) {
	if a.opened && a.ExtensionID == id && a.byTesters == a.ByTesters && a.channel == a.Channel {
		if a.CurrentBundle != currentBundle {
			a.moveCurrent(currentBundle)
		}
		return
	}
	a.Close()
	a.opened, a.ExtensionID, a.CurrentBundle, a.byTesters, a.followed = true, id, currentBundle, a.ByTesters, 0
	a.channel = a.Channel
	a.movedFrom = ""
	a.Counts, a.Current = AdoptionCounts{}, fetch.State[betaport.Bundle]{}
	env, ctx := a.cfg.Env, a.cfg.Env.context()
	if currentBundle != 0 {
		a.current, a.stopCurrent = openRecord(env, a.cfg.Cache, api.CurrentBundlePath(id),
			func(s fetch.State[betaport.Bundle]) { a.Current = s })
		// What the cache held may be an older current bundle: read it now.
		a.current.Revalidate()
	}
	a.Installs = fetch.State[betaport.Installs]{}
	a.installs, a.stopInstalls = openRecord(env, a.cfg.Cache, api.InstallsPath(id),
		func(s fetch.State[betaport.Installs]) { a.Installs = s; a.follow() })
	// A publish moved the current build: count again.
	a.installs.Revalidate()
	params := url.Values{"days": {strconv.Itoa(adoption.Days)}}
	if a.byTesters {
		params.Set("count", betaport.AdoptionByTesters)
		if a.channel != "" {
			params.Set("channel", a.channel)
		}
	}
	keys := fetch.CursorKeys[betaport.AdoptionCount](api.AdoptionPath(id), params, AdoptionPageSize)
	a.list = fetch.NewInfinite(ctx, a.cfg.Cache, keys,
		jsonFetcher[fetch.CursorPage[betaport.AdoptionCount]](env.Client),
		fetch.InfiniteOptions[fetch.CursorPage[betaport.AdoptionCount]]{})
	list := a.list
	a.stopList = follow(env, list.SubscribeChanges, list.Snapshot, func(s AdoptionCounts) uint64 { return s.Version }, a.countsChanged)
}

// moveCurrent follows a publish (or rollback) that made currentBundle the
// current one: the counts, the installs line and the current bundle's
// record are read again while the figures already shown stay, marked as
// refreshing. Replacing them with "Loading" would shrink the section for a
// moment and move the list under the reader's pointer.
func (a *Adoption) moveCurrent(currentBundle int64) {
	a.movedFrom = a.CurrentVersion()
	a.CurrentBundle = currentBundle
	if a.current == nil && currentBundle != 0 {
		a.current, a.stopCurrent = openRecord(a.cfg.Env, a.cfg.Cache, api.CurrentBundlePath(a.ExtensionID),
			func(s fetch.State[betaport.Bundle]) { a.Current = s })
	}
	if a.current != nil {
		a.current.Revalidate()
	}
	a.installs.Revalidate()
	a.list.Revalidate()
}

func (a *Adoption) countsChanged(s AdoptionCounts) {
	if unauthorized(a.cfg.SignedOut, s.Err) {
		return
	}
	a.Counts = s
	// The chart needs every page: read the next one as each lands.
	if s.HasMore && !s.IsValidating && !s.IsLoadingMore && s.Err == nil && len(s.Data) == s.Size && s.Size < AdoptionMaxPages {
		a.list.SetSize(s.Size + 1)
	}
}

// Close stops reading: requests on their way are cancelled.
func (a *Adoption) Close() {
	if a.stopList != nil {
		a.stopList()
		a.list.Close()
		a.stopList, a.list = nil, nil
	}
	if a.stopCurrent != nil {
		a.stopCurrent()
		a.current.Close()
		a.stopCurrent, a.current = nil, nil
	}
	if a.stopInstalls != nil {
		a.stopInstalls()
		a.installs.Close()
		a.stopInstalls, a.installs = nil, nil
	}
	a.opened = false
}

// CountTesters chooses what the chart counts: testers per day (true) or
// update checks; the counts are read for it.
func (a *Adoption) CountTesters(on bool) {
	a.ByTesters, a.Chosen = on, true
	if a.opened {
		a.Open(a.ExtensionID, a.CurrentBundle)
	}
}

// CountChannel chooses whose testers the chart counts: one channel's, or
// every tester's (""); the counts are read for it.
func (a *Adoption) CountChannel(channel string) {
	a.Channel = channel
	if a.opened {
		a.Open(a.ExtensionID, a.CurrentBundle)
	}
}

// Follow takes the extension's testers revision from its event stream:
// once the installs line has landed, a revision past what it shows reads
// the line and the counts again (an installed copy's checks were written,
// or a tester came or went), once per revision.
func (a *Adoption) Follow(testers int64) {
	a.heard = max(a.heard, testers)
	a.follow()
}

func (a *Adoption) follow() {
	s := a.Installs
	if !a.opened || !s.HasData || s.IsValidating || a.heard <= s.Data.Revision || a.heard <= a.followed {
		return
	}
	a.followed = a.heard
	a.installs.Revalidate()
	if a.list != nil {
		a.list.Revalidate()
	}
}

// Retry reads the counts again (after an error).
func (a *Adoption) Retry() {
	if a.list != nil {
		a.list.Revalidate()
	}
}

// Failed is why the counts could not be read, nil when they could (or
// some pages were).
func (a *Adoption) Failed() error {
	if a.Counts.Data == nil {
		return a.Counts.Err
	}
	return nil
}

// Complete reports whether every page is read (or the bound reached).
func (a *Adoption) Complete() bool {
	s := a.Counts
	return s.Data != nil && (!s.HasMore || len(s.Data) >= AdoptionMaxPages) && len(s.Data) >= s.Size
}

// CurrentVersion is the current bundle's version, "" while unknown. While
// a publish's new current bundle is read, it is the version the figures
// shown are of (see Refreshing).
func (a *Adoption) CurrentVersion() string {
	if a.currentKnown() {
		return a.Current.Data.Version
	}
	if a.Current.Err != nil {
		return ""
	}
	return a.movedFrom
}

func (a *Adoption) currentKnown() bool {
	return a.Current.HasData && a.Current.Data.Number == a.CurrentBundle
}

// Refreshing reports whether the figures shown are those from before the
// current bundle moved, being read again.
func (a *Adoption) Refreshing() bool {
	return a.movedFrom != "" && a.Current.Err == nil && (!a.currentKnown() || a.Counts.IsValidating)
}

// Loading reports whether the section waits for what it shows: a page of
// counts, or the current bundle's version (unless that failed: the
// counts show without it).
func (a *Adoption) Loading() bool {
	return !a.Complete() || (a.CurrentBundle != 0 && a.CurrentVersion() == "" && a.Current.Err == nil)
}

// Summary sums the counts up as of the Env's clock.
func (a *Adoption) Summary() adoption.Summary {
	s := adoption.Summarize(fetch.CursorItems(a.Counts.Data), a.cfg.Env.clock().Now(), a.CurrentVersion())
	s.Testers = a.byTesters
	return s
}
