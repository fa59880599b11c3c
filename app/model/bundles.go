package model

import (
	"context"
	"net/http"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
	"github.com/betaport/betaport/app/fetch"
)

// BundlesPageSize is the limit of one page of an extension's bundles.
const BundlesPageSize = 20

// BundlesKeys is the getKey of an extension's bundles, newest first
// (index-based pages).
func BundlesKeys(id int64) fetch.GetKey[[]betaport.Bundle] {
	return fetch.IndexKeys[betaport.Bundle](api.BundlesPath(id), BundlesPageSize)
}

// BundleNumber is a bundles list's key: its bundles are numbered.
func BundleNumber(b betaport.Bundle) int64 { return b.Number }

// BundlesOf is the items of one page of bundles: the page.
func BundlesOf(page []betaport.Bundle) []betaport.Bundle { return page }

// BundlesConfig is what the bundles page gives its model.
type BundlesConfig struct {
	Env Env
	// Cache is the page's fetch cache.
	Cache *fetch.Cache
	// Fallback returns the first page the server rendered the page with,
	// by its key (nil: none): the list shows it at once.
	Fallback func(key string) [][]betaport.Bundle
	// MaxPages bounds the pages the list holds (0: every page).
	MaxPages int

	// Effects, run on the UI goroutine; any may be nil.
	//
	// Title titles the page ("Bundles", then the extension's name).
	Title func(title string)
	// SignedOut is told a request the service answered 401 (the page
	// sends the person to sign in); the answer is not shown.
	SignedOut func(err error)
	// Read is told each extension record read (the breadcrumbs of the
	// extension's other pages name it).
	Read func(e betaport.Extension)
	// Loaded is told once, when the list first has data (the page scrolls
	// back to where the person was).
	Loaded func()
	// FocusRollback moves the focus to "Roll back to #number" in that
	// bundle's row: after a refused rollback, and once a rollback shows on
	// top (the row it was pressed in moved down).
	FocusRollback func(number int64)
}

// Bundles is an extension's page: the extension's record and its bundles,
// newest first, in an infinite list (index-based pages, app/fetch), kept
// up to date by the extension's event stream (Live), by bundles the upload
// panel publishes, and by rollbacks. Its fields and methods are for the UI
// goroutine.
type Bundles struct {
	cfg BundlesConfig

	// ID is the extension shown.
	ID int64
	// Extension is the state of the extension's record, List of its
	// bundles.
	Extension fetch.State[betaport.Extension]
	List      fetch.InfiniteState[[]betaport.Bundle]
	// Rollback is the page's rollbacks (its rows start them).
	Rollback *Rollback
	// Live decides what the extension's event stream makes the page read.
	Live Live
	// Channels are the extension's channels as last read (nil before, and
	// for a visitor who may not read them): a row says which channels
	// serve its bundle, and how far a rollout of it has reached.
	Channels []*betaport.Channel

	ext      *Extension
	list     *fetch.Infinite[[]betaport.Bundle]
	stopList func()
	// What the page learned of the list's top, kept while the pages that
	// showed it are dropped (a long scroll drops the first page): the
	// highest bundle number, and the current bundle.
	last    int64
	current betaport.Bundle
	// currentRecord reads the current bundle's record when the list does
	// not hold it (the page opened with its first page dropped).
	currentRecord *fetch.Query[betaport.Bundle]
	stopCurrent   func()
	channels      *fetch.Query[api.Channels]
	stopChannels  func()
	seenEvents    map[string]api.Revision
	loaded        bool
	titled        string
	// refocus is the number of the bundle whose "Roll back" takes the
	// focus once the list shows the rollback on top, 0 for none.
	refocus int64
}

// NewBundles returns the page's model, showing nothing until Open.
func NewBundles(cfg BundlesConfig) *Bundles {
	m := &Bundles{cfg: cfg}
	m.Rollback = &Rollback{env: cfg.Env, signedOut: cfg.SignedOut, then: m.rolledBack}
	m.Live = Live{Shows: m.Shows, Settled: m.Settled, ReadAgain: m.ReadAgain}
	return m
}

// PrerenderedBundles is the page the server renders: extension id with the
// record and the first page it read for the visitor (either may be nil),
// and no requests.
func PrerenderedBundles(id int64, e *betaport.Extension, pages [][]betaport.Bundle) *Bundles {
	m := &Bundles{ID: id, Rollback: &Rollback{}}
	if e != nil {
		m.Extension = fetch.State[betaport.Extension]{Key: api.ExtensionPath(id), Data: *e, HasData: true}
	}
	if pages != nil {
		m.List = fetch.InfiniteState[[]betaport.Bundle]{Data: pages, Size: 1, HasMore: fetch.IndexHasMore[betaport.Bundle](BundlesPageSize)(pages)}
	}
	return m
}

// Open shows extension id: it reads the record and the first page of its
// bundles, unless they are open already.
func (m *Bundles) Open(id int64) {
	m.title("Bundles")
	if id == m.ID && m.list != nil {
		return
	}
	m.Close()
	m.ID, m.loaded, m.refocus, m.last, m.current = id, false, 0, 0, betaport.Bundle{}
	m.Live.Reset()
	m.Rollback.reset()
	m.ext = OpenExtension(m.cfg.Env, m.cfg.Cache, id, m.extensionChanged)
	m.Channels, m.seenEvents = nil, map[string]api.Revision{}
	if m.cfg.Env.Client != nil {
		m.channels, m.stopChannels = openRecord(m.cfg.Env, m.cfg.Cache, api.ChannelsPath(id), func(s fetch.State[api.Channels]) {
			if s.HasData {
				m.Channels = s.Data.Items
			}
		})
	}
	getKey := BundlesKeys(id)
	var fallback [][]betaport.Bundle
	if m.cfg.Fallback != nil {
		key, _ := getKey(0, nil)
		fallback = m.cfg.Fallback(key)
	}
	m.list = fetch.NewInfinite(m.cfg.Env.context(), m.cfg.Cache, getKey,
		jsonFetcher[[]betaport.Bundle](m.cfg.Env.Client),
		fetch.InfiniteOptions[[]betaport.Bundle]{
			HasMore: fetch.IndexHasMore[betaport.Bundle](BundlesPageSize), FallbackData: fallback,
			MaxPages: m.cfg.MaxPages, Count: func(p []betaport.Bundle) int { return len(p) },
		})
	list := m.list
	m.stopList = follow(m.cfg.Env, list.SubscribeChanges, list.Snapshot,
		func(s fetch.InfiniteState[[]betaport.Bundle]) uint64 { return s.Version }, m.listChanged)
}

// Close stops reading: requests on their way are cancelled, and a
// rollback's answer is not shown.
func (m *Bundles) Close() {
	if m.stopList != nil {
		m.stopList()
		m.stopList = nil
		m.list.Close()
	}
	m.list = nil
	m.ext.Close()
	m.ext = nil
	if m.stopChannels != nil {
		m.stopChannels()
		m.channels.Close()
		m.stopChannels, m.channels = nil, nil
	}
	if m.stopCurrent != nil {
		m.stopCurrent()
		m.currentRecord.Close()
		m.stopCurrent, m.currentRecord = nil, nil
	}
	if m.Rollback != nil {
		m.Rollback.gen++
	}
}

// Infinite is the open list (nil when closed), for the list view's own
// controls: load more, retry, the page being read.
func (m *Bundles) Infinite() *fetch.Infinite[[]betaport.Bundle] { return m.list }

// Record is the extension's record, nil until read.
func (m *Bundles) Record() *betaport.Extension {
	if !m.Extension.HasData {
		return nil
	}
	e := m.Extension.Data
	return &e
}

// Rows places the bundles on the list's rows.
func (m *Bundles) Rows() fetch.Rows[betaport.Bundle] { return fetch.RowsOf(m.List, BundlesOf) }

// Top is the number of the list's first bundle, 0 while there is none or
// its page is not held.
func (m *Bundles) Top() int64 {
	if b, ok := m.Rows().At(0); ok {
		return b.Number
	}
	return 0
}

// Total is how many bundles the extension has (bundle numbers count from
// 1 without gaps), as far as the page knows: the list's top, or the
// highest number the page has seen while that page is dropped; 0 while
// unknown.
func (m *Bundles) Total() int64 { return max(m.last, m.Top()) }

// Current is the current bundle, when the page knows it: from the list's
// first page, or, once that page is dropped, as last seen or read.
func (m *Bundles) Current() (betaport.Bundle, bool) {
	e := m.Record()
	if e == nil || e.CurrentBundle == 0 {
		return betaport.Bundle{}, false
	}
	if b, ok := m.currentInRows(e.CurrentBundle); ok {
		return b, true
	}
	if m.current.Number == e.CurrentBundle {
		return m.current, true
	}
	return betaport.Bundle{}, false
}

func (m *Bundles) currentInRows(number int64) (betaport.Bundle, bool) {
	rows := m.Rows()
	for i := 0; i < min(rows.Len(), BundlesPageSize); i++ {
		if b, ok := rows.At(i); ok && b.Number == number {
			return b, true
		}
	}
	return betaport.Bundle{}, false
}

// Event is one "bundles" event of the extension's stream: its revision
// names the top of the list (for Total), and Live decides what to read.
func (m *Bundles) Event(rev api.Revision, known bool) {
	if known {
		m.last = max(m.last, rev.LastBundle)
	}
	m.Live.Event(rev, known)
}

// ChannelsText is what bundle number's row says of the channels that serve
// it: "beta · 25 % · 12 of 48 testers on it; internal".
func (m *Bundles) ChannelsText(number int64) string { return BundleChannelsText(number, m.Channels) }

// ChannelsEvent is one event of the extension's stream that may change
// what the rows say of channels: "bundles" (a publish), "channels" (a
// promote, a rollout's step) or "testers" (their copies' checks, the
// counts). The first of each kind is the revision at connect, which the
// page's reads show already; a later one that differs, or one that could
// not be read, reads the channels again.
func (m *Bundles) ChannelsEvent(kind string) func(api.Revision, bool) {
	return func(rev api.Revision, known bool) {
		last, seen := m.seenEvents[kind]
		m.seenEvents[kind] = rev
		if (!known || (seen && last != rev)) && m.channels != nil {
			m.channels.Revalidate()
		}
	}
}

// FeedbackEvent is the stream's "feedback" event: a report came, moved or
// went, so a bundle's count of open reports may have changed. The first
// is the revision at connect, which the page's reads show already; a later
// one that differs, or one that could not be read, reads the held pages
// again (unchanged ones answer 304).
func (m *Bundles) FeedbackEvent(rev api.Revision, known bool) {
	last, seen := m.seenEvents["feedback"]
	m.seenEvents["feedback"] = rev
	if (!known || (seen && last.Feedback != rev.Feedback)) && m.list != nil {
		m.list.Revalidate()
	}
}

// remember keeps what the held pages show of the list's top, and reads
// the current bundle's record when the list does not hold it.
func (m *Bundles) remember() {
	m.last = max(m.last, m.Top())
	e := m.Record()
	if e == nil || e.CurrentBundle == 0 || m.List.Data == nil {
		return
	}
	if b, ok := m.currentInRows(e.CurrentBundle); ok {
		m.current = b
		return
	}
	if m.current.Number == e.CurrentBundle {
		return
	}
	if m.currentRecord == nil {
		m.currentRecord, m.stopCurrent = openRecord(m.cfg.Env, m.cfg.Cache, api.CurrentBundlePath(m.ID), m.currentRead)
		return
	}
	if s := m.currentRecord.Snapshot(); !s.IsValidating && (!s.HasData || s.Data.Number != e.CurrentBundle) {
		m.currentRecord.Revalidate()
	}
}

func (m *Bundles) currentRead(s fetch.State[betaport.Bundle]) {
	if e := m.Record(); s.HasData && e != nil && s.Data.Number == e.CurrentBundle {
		m.current = s.Data
	}
}

func (m *Bundles) extensionChanged(s fetch.State[betaport.Extension]) {
	if m.signedOut(s.Err) {
		return
	}
	m.Extension = s
	if s.HasData {
		if m.cfg.Read != nil {
			m.cfg.Read(s.Data)
		}
		m.title(s.Data.Name)
	}
	m.remember()
	m.Live.Landed()
}

func (m *Bundles) listChanged(s fetch.InfiniteState[[]betaport.Bundle]) {
	if m.signedOut(s.Err) {
		return
	}
	m.List = s
	m.remember()
	if !m.loaded && s.Data != nil {
		m.loaded = true
		if m.cfg.Loaded != nil {
			m.cfg.Loaded()
		}
	}
	m.Live.Landed()
	if m.refocus != 0 && m.Rollback.Done != nil && m.Top() == m.Rollback.Done.Number {
		n := m.refocus
		m.refocus = 0
		m.focusRollback(n)
	}
}

// Settled reports whether the page's own reads have landed (or failed):
// the extension's record and the list's pages.
func (m *Bundles) Settled() bool {
	s := m.List
	return !m.Extension.IsValidating && !s.IsValidating && (s.Data != nil || s.Err != nil)
}

// Shows reports whether the header and the list's first page show rev.
func (m *Bundles) Shows(rev api.Revision) bool {
	s := m.List
	return m.Extension.HasData && m.Extension.Data.CurrentBundle == rev.CurrentBundle &&
		len(s.Data) > 0 && (s.Dropped == nil || !s.Dropped[0]) && m.Top() == rev.LastBundle
}

// ReadAgain reads the record and every held page again (a publish
// elsewhere): by number, a bundle on top moves every later bundle one place
// down, so each held page is asked again; an unchanged page answers 304,
// without a body.
func (m *Bundles) ReadAgain() {
	if m.list == nil {
		return
	}
	m.ext.Revalidate()
	m.list.Revalidate()
}

// Published shows a bundle just published (the upload panel's, or a
// rollback's) without asking: on top of the first page with the
// "current" badge, cleared on the others, through the list's Mutate (which
// then reads every page again); the extension's current bundle follows.
//
// current says whether b is what the default channel now serves (the
// answer's own Current may not say, on a retried sign): a bundle published
// to another channel, or as a rollout, goes on top without the badge.
func (m *Bundles) Published(b betaport.Bundle, current bool) {
	b.Current = current
	m.last = max(m.last, b.Number)
	if current {
		m.current = b
		if e := m.ext.Record(); e != nil {
			e.CurrentBundle = b.Number
			m.ext.Mutate(*e)
		}
	}
	if m.channels != nil {
		m.channels.Revalidate()
	}
	if m.list == nil {
		return
	}
	old := m.list.Snapshot().Data // shared with the cache: copied, not changed
	pages := make([][]betaport.Bundle, max(len(old), 1))
	for i, page := range old {
		pages[i] = make([]betaport.Bundle, 0, len(page)+1)
		for _, x := range page {
			if x.Number != b.Number {
				x.Current = x.Current && !current
				pages[i] = append(pages[i], x)
			}
		}
	}
	pages[0] = append([]betaport.Bundle{b}, pages[0]...)
	m.list.Mutate(pages, true)
}

// rolledBack shows what a rollback did: the new bundle as a publish, and,
// once it is on top, the focus back on the row it was pressed in (which
// moved down); a refusal keeps the focus on that row's button.
func (m *Bundles) rolledBack(b betaport.Bundle, nb *betaport.Bundle, err error) {
	if err != nil {
		m.focusRollback(b.Number)
		return
	}
	m.refocus = b.Number
	m.Published(*nb, true) // a rollback reaches everyone on the default channel
}

// title titles the page, when t is another title than the last.
func (m *Bundles) title(t string) {
	if m.cfg.Title != nil && t != m.titled {
		m.titled = t
		m.cfg.Title(t)
	}
}

func (m *Bundles) focusRollback(n int64) {
	if m.cfg.FocusRollback != nil {
		m.cfg.FocusRollback(n)
	}
}

func (m *Bundles) signedOut(err error) bool {
	return unauthorized(m.cfg.SignedOut, err)
}

// Rollback serves an older bundle again, as a new bundle on top with a
// higher version (POST …/bundles/{n}/rollback), for the page that owns
// it; one at a time. Its fields are for the UI goroutine.
type Rollback struct {
	// RollingBack is the number of the bundle being served again, 0 when
	// none.
	RollingBack int64
	// Of is the number the last rollback served again; Done what it
	// published, Err why it failed.
	Of   int64
	Done *betaport.Bundle
	Err  error

	env       Env
	signedOut func(error)
	// then shows the outcome on the page: nb, or err.
	then func(b betaport.Bundle, nb *betaport.Bundle, err error)
	// gen counts the page's openings: an answer for an earlier one is not
	// shown.
	gen int
}

// Start serves b again, unless a rollback is under way (a second Yes, or
// Yes in another row, does nothing) or the page shows nothing.
func (r *Rollback) Start(b betaport.Bundle) {
	if r.RollingBack != 0 || r.then == nil {
		return
	}
	r.RollingBack, r.Of, r.Err, r.Done = b.Number, b.Number, nil, nil
	gen, path := r.gen, api.RollbackPath(b.ExtensionID, b.Number)
	Call(r.env, func(ctx context.Context, c *client.Client) (betaport.Bundle, error) {
		var nb betaport.Bundle
		err := c.Do(ctx, http.MethodPost, path, struct{}{}, &nb)
		return nb, err
	}, func(nb betaport.Bundle, err error) {
		if gen != r.gen || unauthorized(r.signedOut, err) {
			return
		}
		r.RollingBack = 0
		if err != nil {
			r.Err = err
			r.then(b, nil, err)
			return
		}
		r.Done = &nb
		r.then(b, &nb, nil)
	})
}

// reset forgets the last rollback (the page shows another extension); one
// on its way is not shown.
func (r *Rollback) reset() {
	r.RollingBack, r.Of, r.Done, r.Err = 0, 0, nil, nil
	r.gen++
}

// RowControl is one of a bundle row's controls, where the focus goes.
type RowControl int

const (
	RollbackButton  RowControl = iota + 1 // "Roll back to #N"
	ConfirmRollback                       // the question's "Yes, roll back"
	NotesToggle                           // "Notes", which opens the release notes
)

// BundleRow is one bundle's row in a list (an admin's bundles, or a
// tester's builds): its release notes, open or closed, and the rollback
// question ("Roll back to #N", then "Yes, roll back" or "Cancel"). A row
// may be given another bundle (the list's window moves): its notes and its
// question then close. Its fields and methods are for the UI goroutine.
type BundleRow struct {
	// Bundle is the row's bundle (Show).
	Bundle betaport.Bundle
	// Rollback, when set, is the page's: the row offers to serve its
	// bundle again (not the current bundle's row).
	Rollback *Rollback
	// Focus moves the focus to one of the row's controls (nil: nowhere).
	Focus func(RowControl)

	// NotesOpen is whether the notes are open, Asking whether the
	// question is.
	NotesOpen bool
	Asking    bool

	shownFor int64 // the bundle NotesOpen and Asking belong to
	shown    bool
	askedAt  time.Time // when the question showed
}

// Show gives the row its bundle: another bundle than the last closes the
// notes and the question.
func (r *BundleRow) Show(b betaport.Bundle) {
	if !r.shown || r.shownFor != b.ID {
		r.shown, r.shownFor, r.NotesOpen, r.Asking = true, b.ID, false, false
	}
	r.Bundle = b
}

// NotesShown reports whether the notes show: open, and there are some.
func (r *BundleRow) NotesShown() bool { return r.NotesOpen && r.Bundle.ReleaseNotes != "" }

// OffersRollback reports whether the row offers "Roll back to #N".
func (r *BundleRow) OffersRollback() bool { return r.Rollback != nil && !r.Bundle.Current }

// RollingBack reports whether the row's bundle is being served again.
func (r *BundleRow) RollingBack() bool {
	return r.Rollback != nil && r.Rollback.RollingBack != 0 && r.Rollback.RollingBack == r.Bundle.Number
}

// AsksRollback reports whether the row shows the question.
func (r *BundleRow) AsksRollback() bool { return r.OffersRollback() && r.Asking }

// ToggleNotes opens the notes, or closes them.
func (r *BundleRow) ToggleNotes() { r.NotesOpen = !r.NotesOpen }

// Ask asks whether to roll back, with the focus on Yes, which takes a
// press only after ConfirmDelay (the row's view has itself rendered again
// then); pressed again, it keeps the question as it is. While the row's
// bundle is being served again it does nothing.
func (r *BundleRow) Ask() {
	if r.RollingBack() || !r.OffersRollback() {
		return
	}
	if !r.Asking {
		r.Asking, r.askedAt = true, r.now()
	}
	r.focus(ConfirmRollback)
}

// ConfirmReady reports whether the open question takes its Yes: not until
// ConfirmDelay after it showed.
func (r *BundleRow) ConfirmReady() bool { return r.AsksRollback() && confirmReady(r.askedAt, r.now()) }

func (r *BundleRow) now() time.Time {
	if r.Rollback == nil {
		return time.Now()
	}
	return r.Rollback.env.clock().Now()
}

// Cancel closes the question; the focus goes back to "Roll back".
func (r *BundleRow) Cancel() {
	r.Asking = false
	r.focus(RollbackButton)
}

// Confirm is Yes: the question closes, the focus goes back to "Roll
// back", and the page serves the bundle again. Pressed again (the answer
// is on its way), or within ConfirmDelay of the question showing, it does
// nothing.
func (r *BundleRow) Confirm() {
	if !r.ConfirmReady() {
		return
	}
	r.Asking = false
	r.focus(RollbackButton)
	if r.Rollback != nil {
		r.Rollback.Start(r.Bundle)
	}
}

// Escape closes the question, else the open notes, leaving the focus on
// the control that opened them.
func (r *BundleRow) Escape() {
	switch {
	case r.Asking:
		r.Cancel()
	case r.NotesOpen:
		r.NotesOpen = false
		r.focus(NotesToggle)
	}
}

func (r *BundleRow) focus(c RowControl) {
	if r.Focus != nil {
		r.Focus(c)
	}
}
