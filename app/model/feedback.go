package model

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
	"github.com/betaport/betaport/app/fetch"
)

// Testers' reports (issue 32): the admins' feedback page, a third infinite
// list on app/fetch (searched, filtered by status, build and tester, kept
// in the address) with a viewer of one report (/extensions/{id}/feedback/
// {report}); a tester's own reports on their builds page; and the form
// they write one with (Composer).

const (
	// FeedbackPageSize is the limit of one page of reports.
	FeedbackPageSize = 50
	// FeedbackSearchDelay debounces the search box.
	FeedbackSearchDelay = 300 * time.Millisecond
)

// FeedbackPage is one page of reports (cursor pages).
type FeedbackPage = fetch.CursorPage[betaport.Feedback]

// FeedbackQuery is what the feedback list shows: its search, status,
// build and tester ("" and 0: all), as its address says.
type FeedbackQuery struct {
	Q, Status      string
	Bundle, Tester int64
}

// ParseFeedbackQuery reads a feedback page's address query; numbers that
// do not read are left out.
func ParseFeedbackQuery(v url.Values) FeedbackQuery {
	q := FeedbackQuery{Q: strings.TrimSpace(v.Get("q")), Status: v.Get("status")}
	if n, ok := api.ParseID(v.Get("bundle")); ok {
		q.Bundle = n
	}
	if n, ok := api.ParseID(v.Get("tester")); ok {
		q.Tester = n
	}
	return q
}

// Values is the query as an address (and the API) spells it.
func (q FeedbackQuery) Values() url.Values {
	v := url.Values{}
	if q.Q != "" {
		v.Set("q", q.Q)
	}
	if q.Status != "" {
		v.Set("status", q.Status)
	}
	if q.Bundle != 0 {
		v.Set("bundle", strconv.FormatInt(q.Bundle, 10))
	}
	if q.Tester != 0 {
		v.Set("tester", strconv.FormatInt(q.Tester, 10))
	}
	return v
}

// FeedbackKeys are the pages of extension id's reports that q selects.
func FeedbackKeys(id int64, q FeedbackQuery) fetch.GetKey[FeedbackPage] {
	return fetch.CursorKeys[betaport.Feedback](api.FeedbackPath(id), q.Values(), FeedbackPageSize)
}

// FeedbackID is a feedback list's key.
func FeedbackID(f betaport.Feedback) int64 { return f.ID }

// FeedbackOf is the reports of one page.
func FeedbackOf(p FeedbackPage) []betaport.Feedback { return p.Data }

// FeedbackStatusText names a report's status for people.
func FeedbackStatusText(status string) string {
	switch status {
	case betaport.FeedbackNew:
		return "New"
	case betaport.FeedbackSeen:
		return "Seen"
	case betaport.FeedbackResolved:
		return "Resolved"
	}
	return status
}

// FeedbackFocus is where the feedback page moves the focus.
type FeedbackFocus int

const (
	// FeedbackFocusViewer is the opened report's viewer.
	FeedbackFocusViewer FeedbackFocus = iota + 1
	// FeedbackFocusRow is the row of the report the viewer showed.
	FeedbackFocusRow
	// FeedbackFocusConfirmDelete is the viewer's "Yes, delete".
	FeedbackFocusConfirmDelete
)

// FeedbackConfig is what the feedback page gives its model.
type FeedbackConfig struct {
	Env
	Session  *Session
	Cache    *fetch.Cache
	Fallback func(key string) []FeedbackPage
	MaxPages int

	// Effects, run on the UI goroutine; any may be nil.
	Title    func(title string)
	Navigate func(path string)
	Read     func(e betaport.Extension)
	Loaded   func()
	// Address writes the query into the page's address, in place.
	Address func(q FeedbackQuery)
	// SetSearch writes the search box.
	SetSearch func(q string)
	// Focus moves the focus; id names the report.
	Focus func(f FeedbackFocus, id int64)
}

// Feedback is the admins' feedback page of one extension. Its fields and
// methods are for the UI goroutine.
type Feedback struct {
	cfg FeedbackConfig

	ExtensionID int64
	// Tester is set when a tester opened the admins' page.
	Tester bool
	// Query is the search as typed; Applied what the list shows.
	Query   string
	Applied FeedbackQuery
	List    fetch.InfiniteState[FeedbackPage]
	// Live decides what the stream's "feedback" events make the list
	// read.
	Live Live

	// Viewing is the report the viewer shows (its id; 0: none), Report
	// the report once known, Shot the screenshot shown (from 0).
	Viewing int64
	Report  *betaport.Feedback
	Shot    int
	// ViewErr is why the report could not be read; MoveErr why the last
	// status change or delete failed.
	ViewErr, MoveErr error
	// Moving is set while a status change or a delete is on its way;
	// AskingDelete while the viewer asks whether to delete.
	Moving, AskingDelete bool

	ext        *Extension
	list       *fetch.Infinite[FeedbackPage]
	stopList   func()
	loaded     bool
	typed      int
	stopSearch func() bool
	// viewGen counts the reports viewed: an answer for another is
	// dropped.
	viewGen int
	// moved holds the reports whose status this page set: a new one the
	// list has not read again since is not marked seen twice.
	moved map[int64]bool
}

// NewFeedback returns the page's model, showing nothing until Open.
func NewFeedback(cfg FeedbackConfig) *Feedback {
	m := &Feedback{cfg: cfg, moved: map[int64]bool{}}
	m.Live = Live{Shows: m.Shows, Settled: m.Settled, ReadAgain: m.ReadAgain}
	return m
}

// Prerender is the page the server renders: the unfiltered first page it
// read (Fallback), and no requests.
func (m *Feedback) Prerender(id int64, q FeedbackQuery, tester bool) {
	m.ExtensionID, m.Applied, m.Query, m.Tester = id, q, q.Q, tester
	if tester || q != (FeedbackQuery{}) || m.cfg.Fallback == nil {
		return
	}
	getKey := FeedbackKeys(id, q)
	key, _ := getKey(0, nil)
	if pages := m.cfg.Fallback(key); pages != nil {
		_, more := getKey(1, &pages[0])
		m.List = fetch.InfiniteState[FeedbackPage]{Key: key, Data: pages, Size: 1, HasMore: more}
	}
}

// Open shows extension id's reports as the address says, and report
// viewing in the viewer (0: none). Back and Forward open it again with
// their address: the same extension's list is then filtered again, not
// opened anew.
func (m *Feedback) Open(id int64, q FeedbackQuery, viewing int64) {
	if m.cfg.Title != nil {
		m.cfg.Title("Feedback")
	}
	if id == m.ExtensionID && m.list != nil {
		if q != m.Applied {
			if q.Q != strings.TrimSpace(m.Query) && m.cfg.SetSearch != nil {
				m.cfg.SetSearch(q.Q)
			}
			m.Query, m.Applied = q.Q, q
			m.list.SetGetKey(m.getKey())
		}
		m.view(viewing)
		return
	}
	if q.Q != m.Query && m.cfg.SetSearch != nil {
		m.cfg.SetSearch(q.Q)
	}
	m.Query, m.Applied = q.Q, q
	m.cfg.Session.Check(m.cfg.Env, func(who *api.Session) {
		m.Tester = who != nil && who.Kind == api.KindTester
	})
	m.Close()
	m.Live.Reset()
	m.ExtensionID = id
	m.ext = OpenExtension(m.cfg.Env, m.cfg.Cache, id, func(s fetch.State[betaport.Extension]) {
		if s.HasData && m.cfg.Read != nil {
			m.cfg.Read(s.Data)
		}
	})
	m.loaded = false
	m.list, m.stopList = openCursorList(m.cfg.Env, m.cfg.Cache, m.getKey(), m.cfg.Fallback, m.cfg.MaxPages, m.listChanged)
	m.Viewing = -1 // whatever it was, view again
	m.view(viewing)
}

func (m *Feedback) getKey() fetch.GetKey[FeedbackPage] { return FeedbackKeys(m.ExtensionID, m.Applied) }

// refused sends a person whose session a request was refused with to the
// page that says so, and reports whether it did.
func (m *Feedback) refused(err error) bool {
	to := m.cfg.Session.Refused(err)
	if to != "" && m.cfg.Navigate != nil {
		m.cfg.Navigate(to)
	}
	return to != ""
}

func (m *Feedback) listChanged(s fetch.InfiniteState[FeedbackPage]) {
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
	// The viewer shows the report as the list last read it.
	if m.Report != nil && !m.Moving {
		if f, ok := m.find(m.Report.ID); ok {
			m.Report = &f
		}
	}
	m.Live.Landed()
}

// Settled reports whether the list's own reads have landed (or failed).
func (m *Feedback) Settled() bool {
	s := m.List
	return !s.IsValidating && (s.Data != nil || s.Err != nil)
}

// Shows reports whether the list's first page is at least as new as rev.
func (m *Feedback) Shows(rev api.Revision) bool {
	s := m.List
	return len(s.Data) > 0 && (s.Dropped == nil || !s.Dropped[0]) && rev.Feedback <= s.Data[0].Revision
}

// ReadAgain reads every held page again; unchanged pages answer 304.
func (m *Feedback) ReadAgain() {
	if m.list != nil {
		m.list.Revalidate()
	}
	if m.Report != nil && !m.Moving {
		m.fetchReport(m.Report.ID) // a status moved elsewhere, or the report went
	}
}

// Close stops reading.
func (m *Feedback) Close() {
	m.viewGen++
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

// Infinite is the list (nil until Open and after Close).
func (m *Feedback) Infinite() *fetch.Infinite[FeedbackPage] { return m.list }

// Rows places the list's reports on rows.
func (m *Feedback) Rows() fetch.Rows[betaport.Feedback] { return fetch.RowsOf(m.List, FeedbackOf) }

// Filtered reports whether a search or a filter narrows the list.
func (m *Feedback) Filtered() bool { return m.Applied != FeedbackQuery{} }

// Search follows the search box: the list is searched once typing pauses.
func (m *Feedback) Search(typed string) {
	m.Query = typed
	m.typed++
	mine := m.typed
	if m.stopSearch != nil {
		m.stopSearch()
	}
	env := m.cfg.Env
	page := env.context()
	m.stopSearch = env.clock().AfterFunc(FeedbackSearchDelay, func() {
		env.Dispatch(func() {
			if page.Err() != nil || mine != m.typed || m.list == nil {
				return
			}
			m.stopSearch = nil
			q := m.Applied
			q.Q = strings.TrimSpace(m.Query)
			m.apply(q)
		})
	})
}

// FilterStatus shows the reports of one status ("", "open", "new",
// "seen", "resolved"), at once.
func (m *Feedback) FilterStatus(status string) {
	q := m.Applied
	q.Status = status
	m.apply(q)
}

// FilterBundle shows the reports on one build (0: every build).
func (m *Feedback) FilterBundle(number int64) {
	q := m.Applied
	q.Bundle = number
	m.apply(q)
}

// FilterTester shows one tester's reports (0: everyone's).
func (m *Feedback) FilterTester(id int64) {
	q := m.Applied
	q.Tester = id
	m.apply(q)
}

func (m *Feedback) apply(q FeedbackQuery) {
	if q == m.Applied {
		return
	}
	m.Applied = q
	if m.list != nil {
		m.list.SetGetKey(m.getKey())
	}
	if m.cfg.Address != nil {
		m.cfg.Address(q)
	}
}

// find returns a report the list holds.
func (m *Feedback) find(id int64) (betaport.Feedback, bool) {
	for _, p := range m.List.Data {
		for _, f := range p.Data {
			if f.ID == id {
				return f, true
			}
		}
	}
	return betaport.Feedback{}, false
}

// TesterEmail is the e-mail of the tester the list is filtered by, when a
// report of theirs is held ("" otherwise).
func (m *Feedback) TesterEmail() string {
	for _, p := range m.List.Data {
		for _, f := range p.Data {
			if f.TesterID == m.Applied.Tester {
				return f.TesterEmail
			}
		}
	}
	return ""
}

// view shows report id in the viewer (0: closes it): from the list when it
// holds it, else read. A new report an admin opens is marked seen.
func (m *Feedback) view(id int64) {
	if id == m.Viewing {
		return
	}
	closing := id == 0 && m.Viewing > 0
	last := m.Viewing
	m.viewGen++
	m.Viewing, m.Shot, m.ViewErr, m.MoveErr, m.AskingDelete, m.Moving = id, 0, nil, nil, false, false
	m.Report = nil
	if id <= 0 {
		m.Viewing = 0
		if closing && m.cfg.Focus != nil {
			m.cfg.Focus(FeedbackFocusRow, last)
		}
		return
	}
	if f, ok := m.find(id); ok {
		m.Report = &f
		m.shown()
	} else {
		m.fetchReport(id)
	}
	if m.cfg.Focus != nil {
		m.cfg.Focus(FeedbackFocusViewer, id)
	}
}

// fetchReport reads report id for the viewer.
func (m *Feedback) fetchReport(id int64) {
	gen, ext := m.viewGen, m.ExtensionID
	Call(m.cfg.Env, func(ctx context.Context, c *client.Client) (*betaport.Feedback, error) {
		return c.Feedback(ctx, ext, id)
	}, func(f *betaport.Feedback, err error) {
		if gen != m.viewGen {
			return
		}
		if m.refused(err) {
			return
		}
		if err != nil {
			m.Report, m.ViewErr = nil, err
			return
		}
		first := m.Report == nil
		m.Report, m.ViewErr = f, nil
		if m.Shot >= len(f.Screenshots) {
			m.Shot = 0
		}
		if first {
			m.shown()
		}
	})
}

// shown: an admin sees a new report, which is then seen (once: a report
// this page moved already keeps the status it was given).
func (m *Feedback) shown() {
	if !m.Tester && m.Report != nil && m.Report.Status == betaport.FeedbackNew && !m.moved[m.Report.ID] {
		m.SetStatus(betaport.FeedbackSeen)
	}
}

// ViewPath is the address of report id in the viewer, the list's query
// kept (0: the list's own address).
func (m *Feedback) ViewPath(id int64) string {
	p := "/extensions/" + strconv.FormatInt(m.ExtensionID, 10) + "/feedback"
	if id != 0 {
		p += "/" + strconv.FormatInt(id, 10)
	}
	if q := m.Applied.Values().Encode(); q != "" {
		p += "?" + q
	}
	return p
}

// NextShot and PrevShot move the viewer between the report's screenshots
// (the arrow keys), stopping at either end.
func (m *Feedback) NextShot() {
	if m.Report != nil && m.Shot+1 < len(m.Report.Screenshots) {
		m.Shot++
	}
}

func (m *Feedback) PrevShot() {
	if m.Shot > 0 {
		m.Shot--
	}
}

// ShowShot shows screenshot i.
func (m *Feedback) ShowShot(i int) {
	if m.Report != nil && i >= 0 && i < len(m.Report.Screenshots) {
		m.Shot = i
	}
}

// SetStatus moves the viewed report to status; the list follows (its
// event, and a read now).
func (m *Feedback) SetStatus(status string) {
	if m.Report == nil || m.Moving || m.Report.Status == status {
		return
	}
	m.Moving, m.MoveErr = true, nil
	gen, ext, id := m.viewGen, m.ExtensionID, m.Report.ID
	m.moved[id] = true
	Call(m.cfg.Env, func(ctx context.Context, c *client.Client) (*betaport.Feedback, error) {
		return c.SetFeedbackStatus(ctx, ext, id, status)
	}, func(f *betaport.Feedback, err error) {
		if gen != m.viewGen {
			return
		}
		m.Moving = false
		if m.refused(err) {
			return
		}
		if err != nil {
			m.MoveErr = err
			return
		}
		m.Report = f
		if m.list != nil {
			m.list.Revalidate()
		}
		// The button pressed is gone (the status it sets is the report's
		// now): the focus stays in the viewer, where the keys work.
		if m.cfg.Focus != nil {
			m.cfg.Focus(FeedbackFocusViewer, f.ID)
		}
	})
}

// AskDelete asks whether to delete the viewed report; KeepReport answers
// no, DeleteReport yes.
func (m *Feedback) AskDelete() {
	if m.Report != nil && !m.Moving {
		m.AskingDelete = true
		if m.cfg.Focus != nil {
			m.cfg.Focus(FeedbackFocusConfirmDelete, m.Report.ID)
		}
	}
}

func (m *Feedback) KeepReport() { m.AskingDelete = false }

// DeleteReport deletes the viewed report and its screenshots, closes the
// viewer and reads the list again.
func (m *Feedback) DeleteReport() {
	if m.Report == nil || m.Moving || !m.AskingDelete {
		return
	}
	m.Moving, m.MoveErr = true, nil
	gen, ext, id := m.viewGen, m.ExtensionID, m.Report.ID
	Call(m.cfg.Env, func(ctx context.Context, c *client.Client) (struct{}, error) {
		return struct{}{}, c.DeleteFeedback(ctx, ext, id)
	}, func(_ struct{}, err error) {
		if gen != m.viewGen {
			return
		}
		m.Moving = false
		if m.refused(err) {
			return
		}
		if err != nil && !isNotFound(err) {
			m.MoveErr = err
			return
		}
		m.AskingDelete = false
		if m.list != nil {
			m.list.Revalidate()
		}
		if m.cfg.Navigate != nil {
			m.cfg.Navigate(m.ViewPath(0))
		}
	})
}

func isNotFound(err error) bool {
	pr, ok := api.AsProblem(err)
	return ok && pr.Status == http.StatusNotFound
}

// ScreenshotPath is where the viewer's screenshot i is read.
func (m *Feedback) ScreenshotPath(i int) string {
	if m.Report == nil || i < 0 || i >= len(m.Report.Screenshots) {
		return ""
	}
	return api.FeedbackScreenshotPath(m.ExtensionID, m.Report.ID, m.Report.Screenshots[i].Number)
}

// ReportBuild says which build a report is on, as a row shows it.
func ReportBuild(f betaport.Feedback) string {
	switch {
	case f.BundleNumber != 0:
		return fmt.Sprintf("#%d (%s)", f.BundleNumber, f.Version)
	case f.Version != "":
		return f.Version + ", not one of the published builds"
	}
	return "no build yet"
}

// FirstLine is a report's text as a row shows it: its first line, cut.
func FirstLine(text string, max int) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.TrimSpace(line)
	if r := []rune(line); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return line
}
