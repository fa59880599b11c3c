package model

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
	"github.com/betaport/betaport/app/fetch"
)

const (
	// TestersPageSize is the limit of one page of an extension's testers.
	TestersPageSize = 100
	// TestersSearchDelay debounces the search box: one request when
	// typing pauses.
	TestersSearchDelay = 300 * time.Millisecond
)

// TesterPage is one page of an extension's testers (cursor pages).
type TesterPage = fetch.CursorPage[betaport.Tester]

// TestersKeys are the pages of extension id's testers that the search q
// and the status filter select ("" for none).
func TestersKeys(id int64, q, status string, channel ...string) fetch.GetKey[TesterPage] {
	params := url.Values{}
	if q != "" {
		params.Set("q", q)
	}
	if status != "" {
		params.Set("status", status)
	}
	if len(channel) > 0 && channel[0] != "" {
		params.Set("channel", channel[0])
	}
	return fetch.CursorKeys[betaport.Tester](api.TestersPath(id), params, TestersPageSize)
}

// TesterID is a testers list's key.
func TesterID(t betaport.Tester) int64 { return t.ID }

// TestersOf is the testers of one page.
func TestersOf(p TesterPage) []betaport.Tester { return p.Data }

// TesterFocus is where the testers page moves the focus.
type TesterFocus int

const (
	// TesterFocusYes is the "Yes, revoke" of a tester's revoke question.
	TesterFocusYes TesterFocus = iota + 1
	// TesterFocusRevoke is a tester's Revoke.
	TesterFocusRevoke
	// TesterFocusRestoreOffer is the refused invite's "Restore them".
	TesterFocusRestoreOffer
	// TesterFocusLink is the personal link shown.
	TesterFocusLink
)

// TesterField is a field of the testers page that the model writes (the
// browser keeps what the person types; these are written only when
// something else changes them).
type TesterField int

const (
	TesterFieldSearch TesterField = iota + 1
	TesterFieldEmail
	TesterFieldName
)

// TestersConfig is what the testers page gives its model.
type TestersConfig struct {
	Env
	Session *Session
	// Cache is the page's fetch cache.
	Cache *fetch.Cache
	// Fallback returns the first page the server rendered the page with,
	// by its key (nil: none): the list shows it at once.
	Fallback func(key string) []TesterPage
	// MaxPages bounds the pages the list holds (0: every page).
	MaxPages int

	// Effects, run on the UI goroutine; any may be nil.
	//
	// Title titles the page; Navigate goes to an in-app page.
	Title    func(title string)
	Navigate func(path string)
	// Read is told each extension record read (the breadcrumbs name it).
	Read func(e betaport.Extension)
	// Loaded is told once per list, when it first has data (the page
	// scrolls back to where the person was).
	Loaded func()
	// Address writes the search and the filter into the page's address,
	// in place: back, forward, a reload and a shared link bring the same
	// list, without a history entry per keystroke.
	Address func(q, status string)
	// SetField writes a field's value.
	SetField func(f TesterField, value string)
	// Focus moves the focus: testerID names the row for the row's
	// controls.
	Focus func(f TesterFocus, testerID int64)
	// Copy puts text on the clipboard.
	Copy func(text string)
}

// Testers is an extension's testers page: find (search and status filter,
// kept in the address), invite, revoke (after a question), restore, and a
// new invite link. The list runs on app/fetch's infinite model with cursor
// pages; the search and the filter are its data source, and changing them
// starts it again from its first page. Its fields and methods are for the
// UI goroutine.
type Testers struct {
	cfg TestersConfig

	// ExtensionID is the extension shown; Tester is set when a tester
	// opened the admins' page (nothing of it is shown).
	ExtensionID int64
	Tester      bool
	// Query is the search as typed, Applied as searched (after the
	// pause), Status the filter.
	Query, Applied, Status string
	// Channel keeps the testers of one channel ("": every channel);
	// InviteChannel is the channel the invite form puts a tester on (""
	// the default one).
	Channel, InviteChannel string
	// List is the list's last state.
	List fetch.InfiniteState[TesterPage]
	// Live decides what the extension's "testers" events make the list
	// read: a check from a tester's copy, an invite or a revoke elsewhere.
	Live Live

	// Email and Name are the invite form's fields as typed; ExpiresInDays
	// how long the link works unused (one of InviteExpiryChoices; 0 is
	// the service's default).
	Email, Name   string
	ExpiresInDays int
	// Inviting is set while an invite is on its way; InviteErr is why
	// the last one was refused.
	Inviting  bool
	InviteErr error
	// Invited is the tester and the personal link last made (an invite, a
	// restore, a new link), LinkNote what it is; Copied is set once the
	// link is copied.
	Invited  *api.Invited
	LinkNote string
	Copied   bool
	// RevokeErr is why the last revoke, restore or new link failed.
	RevokeErr error
	// Restore is the path that restores the revoked tester a refused
	// invite named: the server's offer instead of a plain refusal.
	Restore string

	ext      *Extension
	list     *fetch.Infinite[TesterPage]
	stopList func()
	loaded   bool
	// gen counts the extensions shown: an answer for an earlier one is
	// dropped.
	gen int
	// asking holds the testers whose revoke question is open; renewing
	// those whose new link is on its way.
	asking     map[int64]time.Time // when each question showed
	renewing   map[int64]bool
	typed      int
	stopSearch func() bool
}

// NewTesters returns the page's model, showing nothing until Open.
func NewTesters(cfg TestersConfig) *Testers {
	m := &Testers{cfg: cfg, asking: map[int64]time.Time{}, renewing: map[int64]bool{}}
	m.Live = Live{Shows: m.Shows, Settled: m.Settled, ReadAgain: m.ReadAgain}
	return m
}

// Prerender is the page the server renders for extension id, searched and
// filtered as its address says, for a tester (nothing) or an admin; it
// sends nothing. Only the unfiltered list has a first page from the server
// (Fallback).
func (m *Testers) Prerender(id int64, q, status string, tester bool) {
	m.ExtensionID, m.Query, m.Status, m.Tester = id, q, status, tester
	if tester || q != "" || status != "" || m.cfg.Fallback == nil {
		return
	}
	getKey := TestersKeys(id, "", "")
	key, _ := getKey(0, nil)
	pages := m.cfg.Fallback(key)
	if pages == nil {
		return
	}
	_, more := getKey(1, &pages[0])
	m.List = fetch.InfiniteState[TesterPage]{Key: key, Data: pages, Size: 1, HasMore: more}
}

// Open shows extension id's testers as the address says: searched for q
// and filtered by status. Back and Forward open the page again with the
// address they bring: the same extension's list is then searched again
// (the search box follows), not opened anew.
func (m *Testers) Open(id int64, q, status string) {
	if m.cfg.Title != nil {
		m.cfg.Title("Testers")
	}
	q = strings.TrimSpace(q)
	if id == m.ExtensionID && m.list != nil {
		if q != m.Applied || status != m.Status {
			if q != m.Query {
				m.setField(TesterFieldSearch, q)
			}
			m.Query, m.Applied, m.Status = q, q, status
			m.searchAgain()
		}
		return
	}
	if q != m.Query {
		m.setField(TesterFieldSearch, q)
	}
	m.Query, m.Applied, m.Status = q, q, status
	m.cfg.Session.Check(m.cfg.Env, func(who *api.Session) {
		m.Tester = who != nil && who.Kind == api.KindTester
	})
	m.Close()
	m.Live.Reset()
	m.gen++
	m.ExtensionID = id
	m.Inviting, m.InviteErr, m.Invited, m.Copied, m.RevokeErr, m.Restore = false, nil, nil, false, nil, ""
	clear(m.asking)
	clear(m.renewing)
	m.ext = OpenExtension(m.cfg.Env, m.cfg.Cache, id, func(s fetch.State[betaport.Extension]) {
		if s.HasData && m.cfg.Read != nil {
			m.cfg.Read(s.Data)
		}
	})
	m.openList()
}

func (m *Testers) openList() {
	m.loaded = false
	m.list, m.stopList = openCursorList(m.cfg.Env, m.cfg.Cache, m.getKey(), m.cfg.Fallback, m.cfg.MaxPages, m.listChanged)
}

// listChanged takes the list's new state; a 401 sends the person away
// instead of showing an error.
func (m *Testers) listChanged(s fetch.InfiniteState[TesterPage]) {
	if m.refused(s.Err) {
		return
	}
	m.List = s
	if !m.loaded && s.Data != nil {
		m.loaded = true
		if m.cfg.Loaded != nil {
			m.cfg.Loaded()
		}
	}
	m.Live.Landed()
}

// Settled reports whether the list's own reads have landed (or failed).
func (m *Testers) Settled() bool {
	s := m.List
	return !s.IsValidating && (s.Data != nil || s.Err != nil)
}

// Shows reports whether the list shows the testers at rev: its first page
// is at least as new (every page is read again together, first one first).
func (m *Testers) Shows(rev api.Revision) bool {
	s := m.List
	return len(s.Data) > 0 && (s.Dropped == nil || !s.Dropped[0]) && rev.Testers <= s.Data[0].Revision
}

// ReadAgain reads every held page again (the testers changed elsewhere);
// an unchanged page answers 304, without a body.
func (m *Testers) ReadAgain() {
	if m.list != nil {
		m.list.Revalidate()
	}
}

// Close stops reading: requests on their way are cancelled, and their
// answers are not shown.
func (m *Testers) Close() {
	m.gen++ // answers on their way are for a page that is gone
	if m.stopSearch != nil {
		m.stopSearch()
		m.stopSearch = nil
	}
	if m.stopList != nil {
		m.stopList()
		m.stopList = nil
		m.list.Close()
		m.list = nil
	}
	if m.ext != nil {
		m.ext.Close()
		m.ext = nil
	}
}

// Infinite is the list (nil until Open and after Close): its load more,
// retry and refresh are the list's own.
func (m *Testers) Infinite() *fetch.Infinite[TesterPage] { return m.list }

// Rows places the list's testers on rows.
func (m *Testers) Rows() fetch.Rows[betaport.Tester] { return fetch.RowsOf(m.List, TestersOf) }

// Filtered reports whether a search or a filter narrows the list.
func (m *Testers) Filtered() bool { return m.Applied != "" || m.Status != "" || m.Channel != "" }

// Now is the clock an invite's age is told by.
func (m *Testers) Now() time.Time { return m.cfg.Env.clock().Now() }

func (m *Testers) getKey() fetch.GetKey[TesterPage] {
	return TestersKeys(m.ExtensionID, m.Applied, m.Status, m.Channel)
}

// searchAgain starts the list again on the search and filter applied.
func (m *Testers) searchAgain() {
	if m.list != nil {
		m.list.SetGetKey(m.getKey())
	}
}

// Search follows the search box: the list is searched once typing pauses
// (TestersSearchDelay on the Env's clock), and the address follows.
func (m *Testers) Search(typed string) {
	m.Query = typed
	m.typed++
	mine := m.typed
	if m.stopSearch != nil {
		m.stopSearch()
	}
	env := m.cfg.Env
	page := env.context()
	m.stopSearch = env.clock().AfterFunc(TestersSearchDelay, func() {
		env.Dispatch(func() {
			if page.Err() != nil || mine != m.typed || m.list == nil {
				return // a later keystroke searches, or the page is gone
			}
			m.stopSearch = nil
			m.Applied = strings.TrimSpace(m.Query)
			m.searchAgain()
			m.address()
		})
	})
}

// SetChannel keeps the testers of one channel ("" for all), as the
// address says (before Open, or on Back and Forward): an open list is read
// again when it changes.
func (m *Testers) SetChannel(channel string) {
	if channel == m.Channel {
		return
	}
	m.Channel = channel
	if m.list != nil {
		m.searchAgain()
	}
}

// FilterChannel shows the testers of one channel ("" for all), at once,
// and writes it in the address.
func (m *Testers) FilterChannel(channel string) {
	m.SetChannel(channel)
	m.address()
}

// Filter shows the testers of one status ("" for all), at once.
func (m *Testers) Filter(status string) {
	m.Status = status
	m.searchAgain()
	m.address()
}

func (m *Testers) address() {
	if m.cfg.Address != nil {
		m.cfg.Address(m.Applied, m.Status)
	}
}

// InviteExpiryChoices are the invite form's choices of how many days a
// link works unused; 0 is the service's default (14 days unless its
// operator set another).
var InviteExpiryChoices = []int{0, 1, 7, 30, 90}

// LinkNote says what the link just made does and until when, for the
// admin who sends it: "It works once, in one browser, until 12 Dec 2026
// 14:05."
func LinkNote(in *api.Invited) string {
	s := "It works once, in one browser"
	if in.InviteExpiresAt != nil {
		s += ", until " + in.InviteExpiresAt.Local().Format("2 Jan 2006 15:04")
	}
	return s + "; it signs them in without a password, and is shown only now."
}

// LinkExpiry says what a tester's current link can still do at now, for
// the testers list: "link expires in 3 days", "link expires in 5 h",
// "link expired 2 days ago"; "" once it signed a browser in (or for a
// tester with no link, or revoked).
func LinkExpiry(t betaport.Tester, now time.Time) string {
	if t.Status == betaport.TesterRevoked || t.InviteExpiresAt == nil || t.InviteUsedAt != nil {
		return ""
	}
	if left := t.InviteExpiresAt.Sub(now); left > 0 {
		return "link expires in " + span(left)
	}
	return "link expired " + span(now.Sub(*t.InviteExpiresAt)) + " ago"
}

// span says a duration as a person reads it on a list, to the nearest
// unit: days from 36 hours (a link made for 7 days says 7, not 6, a
// moment later), hours from an hour, else minutes (at least 1).
func span(d time.Duration) string {
	switch {
	case d >= 36*time.Hour:
		return strconv.Itoa(int(d.Round(24*time.Hour).Hours()/24)) + " days"
	case d >= 24*time.Hour:
		return "1 day"
	case d >= time.Hour:
		return strconv.Itoa(int(d.Hours())) + " h"
	default:
		return strconv.Itoa(max(int(d.Minutes()), 1)) + " min"
	}
}

// Invite invites the tester the form names. The tester shows on top of the
// list at once (optimistically), and goes again if the service refuses; a
// refusal because the e-mail's tester was revoked offers to restore them.
// A press while an invite is on its way does nothing.
func (m *Testers) Invite() {
	if m.Inviting {
		return
	}
	m.Inviting, m.InviteErr, m.Invited, m.Copied, m.Restore = true, nil, nil, false, ""
	id, gen, in := m.ExtensionID, m.gen, api.Invite{Email: m.Email, Name: m.Name, ExpiresInDays: api.DaysOf(m.ExpiresInDays), Channel: m.InviteChannel}
	list := m.list
	var before []TesterPage
	if list != nil {
		before = list.Snapshot().Data
		pending := betaport.Tester{ID: -1, ExtensionID: id, Email: strings.ToLower(strings.TrimSpace(in.Email)), Name: in.Name, Status: betaport.TesterInvited, Channel: in.Channel}
		list.Mutate(withTester(before, pending), false)
	}
	Call(m.cfg.Env, func(ctx context.Context, c *client.Client) (*api.Invited, error) {
		return c.Invite(ctx, id, in)
	}, func(out *api.Invited, err error) {
		if gen != m.gen || m.refused(err) {
			return
		}
		m.Inviting, m.InviteErr, m.Invited, m.LinkNote = false, err, out, "Invited."
		if pr, ok := api.AsProblem(err); ok && pr.Type == api.ProblemTesterRevoked {
			m.Restore = pr.Restore
		}
		if err != nil {
			if list != nil {
				list.Mutate(before, false) // take it back
			}
			if m.Restore != "" {
				m.focus(TesterFocusRestoreOffer, 0)
			}
			return
		}
		m.Email, m.Name = "", ""
		m.setField(TesterFieldEmail, "")
		m.setField(TesterFieldName, "")
		if list != nil {
			list.Mutate(withTester(before, out.Tester), true)
		}
	})
}

// withTester returns pages with t first on the first page (a copy: pages
// in a snapshot are shared with the cache).
func withTester(pages []TesterPage, t betaport.Tester) []TesterPage {
	out := make([]TesterPage, max(len(pages), 1))
	copy(out, pages)
	first := out[0]
	first.Data = append([]betaport.Tester{t}, first.Data...)
	out[0] = first
	return out
}

// replaceTester returns pages with t in place of the tester of its id.
func replaceTester(pages []TesterPage, t betaport.Tester) []TesterPage {
	out := make([]TesterPage, len(pages))
	for i, page := range pages {
		data := make([]betaport.Tester, len(page.Data))
		for j, x := range page.Data {
			if x.ID == t.ID {
				x = t
			}
			data[j] = x
		}
		page.Data = data
		out[i] = page
	}
	return out
}

// Asking reports whether tester id's revoke question is open.
func (m *Testers) Asking(id int64) bool { _, ok := m.asking[id]; return ok }

// ConfirmReady reports whether tester id's open question takes its "Yes,
// revoke": not until ConfirmDelay after it showed.
func (m *Testers) ConfirmReady(id int64) bool {
	shown, ok := m.asking[id]
	return ok && confirmReady(shown, m.cfg.Env.clock().Now())
}

// TesterPending reports whether t is a tester whose invite is on its way: shown
// at once, but not yet made by the service, so there is nobody to revoke
// or give a new link yet.
func TesterPending(t betaport.Tester) bool { return t.ID <= 0 }

// Ask is a tester's Revoke: it asks first, with the focus on "Yes, revoke",
// which takes a press only after ConfirmDelay (pressed again, Revoke keeps
// the question as it is). A tester whose invite is on its way is not asked
// about (TesterPending).
func (m *Testers) Ask(t betaport.Tester) {
	if TesterPending(t) {
		return
	}
	if !m.Asking(t.ID) {
		m.asking[t.ID] = m.cfg.Env.clock().Now()
		afterConfirmDelay(m.cfg.Env)
	}
	m.focus(TesterFocusYes, t.ID)
}

// Keep answers the question no: nothing changes, and the focus goes back
// to the tester's Revoke.
func (m *Testers) Keep(t betaport.Tester) {
	delete(m.asking, t.ID)
	m.focus(TesterFocusRevoke, t.ID)
}

// Revoke answers the question yes: the tester shows revoked at once, and
// as they were again if the service refuses (the error is shown). A Yes
// for a question already answered, or pressed within ConfirmDelay of the
// question showing, does nothing.
func (m *Testers) Revoke(t betaport.Tester) {
	if !m.ConfirmReady(t.ID) {
		return
	}
	delete(m.asking, t.ID)
	list, gen := m.list, m.gen
	if list == nil {
		return
	}
	before := list.Snapshot().Data
	revoked := t
	revoked.Status = betaport.TesterRevoked
	list.Mutate(replaceTester(before, revoked), false)
	m.RevokeErr = nil
	Call(m.cfg.Env, func(ctx context.Context, c *client.Client) (struct{}, error) {
		return struct{}{}, c.Revoke(ctx, t.ExtensionID, t.ID)
	}, func(_ struct{}, err error) {
		if gen != m.gen || m.refused(err) {
			return
		}
		m.RevokeErr = err
		if err != nil {
			list.Mutate(before, false)
			return
		}
		list.Revalidate()
	})
}

// Renew gives a tester a new link: a restore when revoked, else a new
// invite link (the old one stops working). A press while that tester's is
// on its way does nothing.
func (m *Testers) Renew(t betaport.Tester) {
	if TesterPending(t) {
		return
	}
	if t.Status == betaport.TesterRevoked {
		m.renewAt(t.ID, api.TesterRestorePath(t.ExtensionID, t.ID), "Restored.")
		return
	}
	m.renewAt(t.ID, api.TesterInvitePath(t.ExtensionID, t.ID), "New link made; the old one no longer works.")
}

// RestoreOffered restores the revoked tester a refused invite named.
func (m *Testers) RestoreOffered() {
	if m.Restore == "" {
		return
	}
	path := m.Restore
	m.Email, m.Name = "", ""
	m.setField(TesterFieldEmail, "")
	m.setField(TesterFieldName, "")
	m.renewAt(0, path, "Restored.")
}

func (m *Testers) renewAt(id int64, path, note string) {
	if m.renewing[id] {
		return
	}
	m.renewing[id] = true
	m.RevokeErr, m.InviteErr, m.Restore = nil, nil, ""
	list, gen := m.list, m.gen
	Call(m.cfg.Env, func(ctx context.Context, c *client.Client) (*api.Invited, error) {
		return c.Renew(ctx, path)
	}, func(out *api.Invited, err error) {
		if gen != m.gen {
			return
		}
		delete(m.renewing, id)
		if m.refused(err) {
			return
		}
		if err != nil {
			m.RevokeErr = err
			return
		}
		m.Invited, m.LinkNote, m.Copied = out, note, false
		if list != nil {
			list.Mutate(replaceTester(list.Snapshot().Data, out.Tester), true)
		}
		m.focus(TesterFocusLink, out.ID)
	})
}

// CopyLink puts the link shown on the clipboard.
func (m *Testers) CopyLink() {
	if m.Invited == nil {
		return
	}
	if m.cfg.Copy != nil {
		m.cfg.Copy(m.Invited.InviteURL)
	}
	m.Copied = true
}

// refused sends the person away when err says they may not be here, and
// reports whether it did.
func (m *Testers) refused(err error) bool {
	to := m.cfg.Session.Refused(err)
	if to == "" {
		return false
	}
	if m.cfg.Navigate != nil {
		m.cfg.Navigate(to)
	}
	return true
}

func (m *Testers) setField(f TesterField, v string) {
	if m.cfg.SetField != nil {
		m.cfg.SetField(f, v)
	}
}

func (m *Testers) focus(f TesterFocus, id int64) {
	if m.cfg.Focus != nil {
		m.cfg.Focus(f, id)
	}
}
