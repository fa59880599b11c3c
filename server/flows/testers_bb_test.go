package flows_test

// Black-box flows of the testers page (model.Testers) against the real
// service: invite, revoke after its question, restore, a new link, search
// and filter. Helpers (bbtb…) live in bundles_bb_test.go.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
	"github.com/betaport/betaport/server/cli"
)

type bbtbFocusAt struct {
	F  model.TesterFocus
	ID int64
}

type bbtbTestersPage struct {
	*page
	T       *model.Testers
	Session *model.Session
	Went    []string
	Addr    [][2]string
	Fields  map[model.TesterField]string
	Focus   []bbtbFocusAt
	Copied  []string
}

func bbtbOpenTesters(t *testing.T, c *client.Client, ext int64, q, status string) *bbtbTestersPage {
	t.Helper()
	tp := &bbtbTestersPage{page: openPage(t, c), Session: model.NewSession(nil), Fields: map[model.TesterField]string{}}
	tp.Do(func() {
		tp.T = model.NewTesters(model.TestersConfig{
			Env:      tp.Env,
			Session:  tp.Session,
			Cache:    fetch.NewCache(fetch.CacheOptions{}),
			Navigate: func(p string) { tp.Went = append(tp.Went, p) },
			Address:  func(q, s string) { tp.Addr = append(tp.Addr, [2]string{q, s}) },
			SetField: func(f model.TesterField, v string) { tp.Fields[f] = v },
			Focus:    func(f model.TesterFocus, id int64) { tp.Focus = append(tp.Focus, bbtbFocusAt{f, id}) },
			Copy:     func(s string) { tp.Copied = append(tp.Copied, s) },
		})
		tp.T.Open(ext, q, status)
	})
	return tp
}

// loaded waits until the list shows what the service answered.
func (tp *bbtbTestersPage) loaded(what string) {
	tp.Wait(what, func() bool { return tp.T.List.Data != nil && !tp.T.List.IsValidating })
}

func (tp *bbtbTestersPage) rows() []betaport.Tester { return bbtbItems(tp.T.Rows()) }

// shows reports whether the list shows the service's answer for the
// search q and the filter status.
func (tp *bbtbTestersPage) shows(q, status string) bool {
	st := tp.T.List
	u, err := url.Parse(st.Key)
	if err != nil || st.Key == "" || st.Data == nil || st.IsValidating {
		return false
	}
	return u.Query().Get("q") == q && u.Query().Get("status") == status
}

func (tp *bbtbTestersPage) row(t *testing.T, email string) betaport.Tester {
	t.Helper()
	for _, r := range tp.rows() {
		if strings.EqualFold(r.Email, email) {
			return r
		}
	}
	t.Errorf("the testers page shows no %s", email)
	return betaport.Tester{}
}

func (tp *bbtbTestersPage) find(email string) (betaport.Tester, int) {
	var found betaport.Tester
	n := 0
	for _, r := range tp.rows() {
		if strings.EqualFold(strings.TrimSpace(r.Email), email) {
			found = r
			n++
		}
	}
	return found, n
}

func (tp *bbtbTestersPage) lastFocus() bbtbFocusAt {
	if len(tp.Focus) == 0 {
		return bbtbFocusAt{}
	}
	return tp.Focus[len(tp.Focus)-1]
}

func bbtbStoredTester(t *testing.T, m *cli.Main, ext int64, email string) *betaport.Tester {
	t.Helper()
	tr, err := m.Store.FindTesterByEmail(context.Background(), ext, email)
	if err != nil {
		t.Fatalf("the service has no tester %s: %v", email, err)
	}
	return tr
}

func isTestersGet(ext int64) func(string, *url.URL) bool {
	return func(method string, u *url.URL) bool {
		return method == http.MethodGet && u.Path == api.TestersPath(ext)
	}
}

// Invite, ask to revoke and keep, revoke (Yes pressed twice), restore: at
// every step the page shows what the person did, the service stores it,
// and the tester's personal link and session stop working on the revoke
// and work again — through the new link — once restored.
func TestBBTestersInviteRevokeRestore(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	ctx := context.Background()
	admin := d.Admins[0].Email
	a, w := bbtbAdmin(t, m, admin, d.Admins[0].Password)
	const ext = 2
	tp := bbtbOpenTesters(t, a, ext, "", "")
	tp.loaded("the testers")
	before := len(tp.rows())

	// Invite, with the e-mail as a person types it.
	tp.Do(func() {
		tp.T.Email, tp.T.Name = " Zed@Example.com", "Zed Tester"
		tp.T.Invite()
		if !tp.T.Inviting {
			t.Errorf("the invite does not say it is on its way")
		}
	})
	tp.Do(func() {
		if rows := tp.rows(); len(rows) == 0 || !strings.EqualFold(strings.TrimSpace(rows[0].Email), "zed@example.com") {
			t.Errorf("the invited tester is not on top of the list at once (top: %+v)", rows)
		}
	})
	tp.Wait("the invite answered", func() bool { return !tp.T.Inviting })
	var link string
	tp.Do(func() {
		if tp.T.InviteErr != nil || tp.T.Invited == nil {
			t.Errorf("the invite was refused: %v", tp.T.InviteErr)
			return
		}
		link = tp.T.Invited.InviteURL
		if tp.T.Invited.Email != "zed@example.com" || !strings.Contains(link, api.InvitePrefix) || tp.T.LinkNote == "" {
			t.Errorf("the page shows invited %+v, link %q, note %q", tp.T.Invited.Tester, link, tp.T.LinkNote)
		}
	})
	stored := bbtbStoredTester(t, m, ext, "zed@example.com")
	if stored.Status != betaport.TesterInvited || stored.Name != "Zed Tester" {
		t.Errorf("the service stored %+v, want Zed Tester, invited", stored)
	}
	tp.Wait("the list holds the invited tester once", func() bool {
		_, n := tp.find("zed@example.com")
		return n == 1 && len(tp.rows()) == before+1 && !tp.T.List.IsValidating
	})

	// The tester opens their link.
	tc, tw := bbtbBrowser(t, m)
	if !bbtbOpenLink(t, m, tc, tw, link) {
		t.Fatal("the personal link from the invite does not sign the tester in")
	}
	if st := bbtbStoredTester(t, m, ext, "zed@example.com"); st.Status != betaport.TesterActive {
		t.Errorf("after opening their link the tester is %s, want active", st.Status)
	}

	// Revoke? No: nothing changes.
	deletes := func(method string, u *url.URL) bool {
		return method == http.MethodDelete && u.Path == api.TesterPath(ext, stored.ID)
	}
	tp.Do(func() {
		z := tp.row(t, "zed@example.com")
		tp.T.Ask(z)
		tp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		if !tp.T.Asking(z.ID) || tp.lastFocus() != (bbtbFocusAt{model.TesterFocusYes, z.ID}) {
			t.Errorf("Revoke does not ask with the focus on Yes: asking %v, focus %+v", tp.T.Asking(z.ID), tp.lastFocus())
		}
		tp.T.Keep(z)
		if tp.T.Asking(z.ID) || tp.lastFocus() != (bbtbFocusAt{model.TesterFocusRevoke, z.ID}) {
			t.Errorf("No leaves asking %v, focus %+v; want the question closed, focus on Revoke", tp.T.Asking(z.ID), tp.lastFocus())
		}
	})
	if n := w.count(deletes); n != 0 {
		t.Fatalf("answering the question no sent %d revokes", n)
	}
	if st := bbtbStoredTester(t, m, ext, "zed@example.com"); st.Status != betaport.TesterActive {
		t.Fatalf("answering no left the tester %s", st.Status)
	}

	// Revoke: yes, and Yes again while the answer is on its way.
	held := w.hold(t, func(r *http.Request) bool { return deletes(r.Method, r.URL) })
	tp.Do(func() {
		z := tp.row(t, "zed@example.com")
		tp.T.Ask(z)
		tp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		tp.T.Revoke(z)
		tp.T.Revoke(z)
	})
	tp.Do(func() {
		if z, _ := tp.find("zed@example.com"); z.Status != betaport.TesterRevoked {
			t.Errorf("after Yes the tester shows %s, want revoked at once", z.Status)
		}
	})
	bbtbWait(t, held, "the revoke")
	held.Release()
	tp.Wait("the revoke answered", func() bool {
		z, _ := tp.find("zed@example.com")
		return z.Status == betaport.TesterRevoked && !tp.T.List.IsValidating && w.count(deletes) > 0 && w.idle()
	})
	tp.Do(func() {}) // the answer's own dispatch
	tp.Do(func() {
		if tp.T.RevokeErr != nil {
			t.Errorf("the revoke shows an error: %v", tp.T.RevokeErr)
		}
	})
	if n := w.count(deletes); n != 1 {
		t.Errorf("Yes pressed twice sent %d revokes, want 1", n)
	}
	st := bbtbStoredTester(t, m, ext, "zed@example.com")
	if st.Status != betaport.TesterRevoked || st.RevokedBy != admin {
		t.Errorf("the service stored %s by %q, want revoked by %s", st.Status, st.RevokedBy, admin)
	}
	if n := bbtbAudit(t, m, ext, betaport.AuditTesterRevoked); n != 1 {
		t.Errorf("the audit trail records %d revokes, want 1", n)
	}

	// The revoked tester's session and link stop working.
	if _, err := tc.Session(ctx); err == nil {
		t.Errorf("the revoked tester's browser is still signed in")
	} else if p, ok := api.AsProblem(err); !ok || p.Type != api.ProblemAccessEnded || !strings.Contains(p.Detail, admin) {
		t.Errorf("the revoked tester is told %v; want access ended, and whom to ask", err)
	}
	if err := tc.Do(ctx, http.MethodGet, api.PathBuilds, nil, nil); err == nil {
		t.Errorf("the revoked tester still reads builds")
	}
	fresh, fw := bbtbBrowser(t, m)
	if bbtbOpenLink(t, m, fresh, fw, link) {
		t.Errorf("the revoked tester's personal link still signs in")
	}

	// Restore: a new link.
	tp.Do(func() {
		z := tp.row(t, "zed@example.com")
		tp.T.Renew(z)
		tp.T.Renew(z) // pressed twice
	})
	tp.Wait("the restore answered", func() bool {
		return tp.T.Invited != nil && tp.T.Invited.InviteURL != link && tp.T.Invited.ID == stored.ID
	})
	var newLink string
	tp.Do(func() {
		newLink = tp.T.Invited.InviteURL
		if tp.T.RevokeErr != nil || tp.T.LinkNote == "" {
			t.Errorf("the restore shows error %v, note %q", tp.T.RevokeErr, tp.T.LinkNote)
		}
	})
	tp.Wait("the row shows the tester restored", func() bool {
		z, n := tp.find("zed@example.com")
		return n == 1 && z.Status == betaport.TesterInvited && !tp.T.List.IsValidating
	})
	restores := w.count(func(method string, u *url.URL) bool {
		return method == http.MethodPost && u.Path == api.TesterRestorePath(ext, stored.ID)
	})
	if restores != 1 {
		t.Errorf("Restore pressed twice sent %d restores, want 1", restores)
	}
	if st := bbtbStoredTester(t, m, ext, "zed@example.com"); st.Status != betaport.TesterInvited || st.ID != stored.ID {
		t.Errorf("after the restore the service has %+v, want the same tester, invited", st)
	}
	if n := bbtbAudit(t, m, ext, betaport.AuditTesterRestored); n != 1 {
		t.Errorf("the audit trail records %d restores, want 1", n)
	}
	if bbtbOpenLink(t, m, fresh, fw, link) {
		t.Errorf("after the restore the old link signs in again")
	}
	if !bbtbOpenLink(t, m, tc, tw, newLink) {
		t.Fatalf("the restored tester's new link does not sign them in")
	}
	if err := tc.Do(ctx, http.MethodGet, api.PathBuilds, nil, nil); err != nil {
		t.Errorf("the restored tester cannot read their builds: %v", err)
	}
}

// A typo in the e-mail is refused and the optimistic row goes again; the
// fixed e-mail, sent with Enter pressed twice, makes one tester.
func TestBBTestersInviteTypoThenEnterTwice(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2
	tp := bbtbOpenTesters(t, a, ext, "", "")
	tp.loaded("the testers")
	before := len(tp.rows())
	invites := func(method string, u *url.URL) bool {
		return method == http.MethodPost && u.Path == api.TestersPath(ext)
	}

	tp.Do(func() {
		tp.T.Email, tp.T.Name = "zed@", "Zed"
		tp.T.Invite()
	})
	tp.Wait("the typo refused", func() bool { return !tp.T.Inviting && tp.T.InviteErr != nil })
	tp.Do(func() {
		if p, ok := api.AsProblem(tp.T.InviteErr); !ok || p.Status != http.StatusBadRequest || p.Detail == "" {
			t.Errorf("the typo is answered %v, want a 400 that says what is wrong", tp.T.InviteErr)
		}
		if _, n := tp.find("zed@"); n != 0 || len(tp.rows()) != before {
			t.Errorf("the refused tester still shows in the list (%d rows, was %d)", len(tp.rows()), before)
		}
		if tp.T.Invited != nil {
			t.Errorf("a refused invite shows a link: %+v", tp.T.Invited)
		}
	})
	if _, err := m.Store.FindTesterByEmail(context.Background(), ext, "zed@"); err == nil {
		t.Errorf("the service stored the typo")
	}

	held := w.hold(t, func(r *http.Request) bool { return invites(r.Method, r.URL) })
	tp.Do(func() {
		tp.T.Email = "zed@example.com"
		tp.T.Invite()
		tp.T.Invite()
	})
	bbtbWait(t, held, "the invite")
	tp.Do(func() { tp.T.Invite() }) // once more while the answer is on its way
	held.Release()
	tp.Wait("the invite answered", func() bool { return !tp.T.Inviting && tp.T.Invited != nil })
	tp.Do(func() {
		if tp.T.InviteErr != nil {
			t.Errorf("after the fix the page still shows %v", tp.T.InviteErr)
		}
	})
	tp.Wait("the list settled", func() bool { return !tp.T.List.IsValidating })
	tp.Do(func() {
		if _, n := tp.find("zed@example.com"); n != 1 {
			t.Errorf("the list shows zed@example.com %d times, want once", n)
		}
	})
	if n := w.count(invites); n != 2 { // the typo, then one for the three presses
		t.Errorf("the invites sent: %d, want 2 (the typo, then one)\n%s", n, w.log())
	}
	ts, err := m.Store.FindTesters(context.Background(), betaport.TesterFilter{ExtensionID: ext, Query: "zed", Limit: 10})
	if err != nil || len(ts) != 1 {
		t.Errorf("the service holds %d testers named zed (%v), want 1", len(ts), err)
	}
}

// An admin invites an e-mail whose tester another admin revoked: the page
// offers to restore them instead; Restore (pressed twice) brings the same
// tester back once, with a link that works.
func TestBBTestersInviteOfRevokedOffersRestore(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	ctx := context.Background()
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	b, _ := bbtbSecondAdmin(t, m, d)
	const ext, email = 2, "ken.lovelace.5@example.com"
	ken := bbtbStoredTester(t, m, ext, email)
	tp := bbtbOpenTesters(t, a, ext, "", "")
	tp.loaded("the testers")
	if err := b.Revoke(ctx, ext, ken.ID); err != nil { // the other admin
		t.Fatal(err)
	}
	tp.Do(func() {
		tp.T.Email, tp.T.Name = "Ken.Lovelace.5@example.com", "Ken"
		tp.T.Invite()
	})
	tp.Wait("the invite refused", func() bool { return !tp.T.Inviting && tp.T.InviteErr != nil })
	tp.Do(func() {
		if p, ok := api.AsProblem(tp.T.InviteErr); !ok || p.Type != api.ProblemTesterRevoked {
			t.Errorf("the page shows %v, want the revoked tester's problem", tp.T.InviteErr)
		}
		if tp.T.Restore != api.TesterRestorePath(ext, ken.ID) {
			t.Errorf("the page offers to restore %q, want %q", tp.T.Restore, api.TesterRestorePath(ext, ken.ID))
		}
		if tp.lastFocus().F != model.TesterFocusRestoreOffer {
			t.Errorf("the focus went to %+v, want the offer's Restore", tp.lastFocus())
		}
		tp.T.RestoreOffered()
		tp.T.RestoreOffered()
	})
	tp.Wait("the restore answered", func() bool { return tp.T.Invited != nil })
	var link string
	tp.Do(func() {
		link = tp.T.Invited.InviteURL
		if tp.T.Invited.ID != ken.ID || link == "" {
			t.Errorf("the restore shows %+v, want Ken (%d) with a link", tp.T.Invited, ken.ID)
		}
		if tp.T.Restore != "" || tp.T.InviteErr != nil {
			t.Errorf("after restoring, the offer (%q) or the refusal (%v) still shows", tp.T.Restore, tp.T.InviteErr)
		}
	})
	tp.Wait("the list shows Ken invited, once", func() bool {
		k, n := tp.find(email)
		return n == 1 && k.Status == betaport.TesterInvited && !tp.T.List.IsValidating
	})
	if n := w.count(func(method string, u *url.URL) bool {
		return method == http.MethodPost && u.Path == api.TesterRestorePath(ext, ken.ID)
	}); n != 1 {
		t.Errorf("Restore pressed twice sent %d restores, want 1", n)
	}
	if st := bbtbStoredTester(t, m, ext, email); st.Status != betaport.TesterInvited || st.ID != ken.ID {
		t.Errorf("the service has %+v, want Ken restored (invited)", st)
	}
	kc, kw := bbtbBrowser(t, m)
	if !bbtbOpenLink(t, m, kc, kw, link) {
		t.Errorf("the restored tester's link does not sign them in")
	}
}

// A new invite link for a tester who is not revoked: the link shows and
// is copied; the old link stops working and the new one works; New link
// pressed twice makes one link.
func TestBBTestersNewLinkOldLinkStops(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 1
	tc, tw := bbtbBrowser(t, m)
	if !bbtbOpenLink(t, m, tc, tw, d.TesterLink) {
		t.Fatal("the demo link does not sign in")
	}
	tp := bbtbOpenTesters(t, a, ext, "", "")
	tp.loaded("the testers")
	var demoTester betaport.Tester
	tp.Do(func() { demoTester = tp.row(t, "tester@example.com") })
	renews := func(method string, u *url.URL) bool {
		return method == http.MethodPost && u.Path == api.TesterInvitePath(ext, demoTester.ID)
	}
	held := w.hold(t, func(r *http.Request) bool { return renews(r.Method, r.URL) })
	tp.Do(func() {
		tp.T.Renew(demoTester)
		tp.T.Renew(demoTester)
	})
	bbtbWait(t, held, "the new link")
	held.Release()
	tp.Wait("the new link shows", func() bool { return tp.T.Invited != nil })
	var link string
	tp.Do(func() {
		link = tp.T.Invited.InviteURL
		if tp.T.RevokeErr != nil || tp.T.Invited.ID != demoTester.ID || !strings.Contains(link, api.InvitePrefix) || tp.T.LinkNote == "" {
			t.Errorf("the page shows %+v, link %q, note %q, error %v", tp.T.Invited.Tester, link, tp.T.LinkNote, tp.T.RevokeErr)
		}
		if strings.HasSuffix(link, d.TesterLink) {
			t.Errorf("the new link is the old one")
		}
		tp.T.CopyLink()
		if len(tp.Copied) != 1 || tp.Copied[0] != link || !tp.T.Copied {
			t.Errorf("Copy put %v on the clipboard (copied %v), want the link", tp.Copied, tp.T.Copied)
		}
	})
	if n := w.count(renews); n != 1 {
		t.Errorf("New link pressed twice sent %d requests, want 1", n)
	}
	old, ow := bbtbBrowser(t, m)
	if bbtbOpenLink(t, m, old, ow, d.TesterLink) {
		t.Errorf("the old link still signs in after a new one was made")
	}
	nb, nw := bbtbBrowser(t, m)
	if !bbtbOpenLink(t, m, nb, nw, link) {
		t.Errorf("the new link does not sign in")
	}
	if st := bbtbStoredTester(t, m, ext, "tester@example.com"); st.Status == betaport.TesterRevoked {
		t.Errorf("a new link revoked the tester")
	}
}

// Search follows typing once it pauses (one request), the filter at once;
// the address follows both; a slow answer of a filter the person already
// changed never shows; Back/Forward's address searches the list again.
func TestBBTestersSearchAndFilter(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	ctx := context.Background()
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 1 // 61 testers
	tp := bbtbOpenTesters(t, a, ext, "", "")
	tp.loaded("the testers")
	tp.Do(func() {
		if n := len(tp.rows()); n != 61 {
			t.Errorf("the page shows %d testers, want 61", n)
		}
		if tp.T.Filtered() {
			t.Errorf("an unfiltered list says it is filtered")
		}
	})
	searches := func(q string) func(string, *url.URL) bool {
		return func(method string, u *url.URL) bool {
			return isTestersGet(ext)(method, u) && u.Query().Get("q") == q
		}
	}
	anySearch := func(method string, u *url.URL) bool { return isTestersGet(ext)(method, u) && u.Query().Get("q") != "" }
	serviceHas := func(q, status string) []betaport.Tester {
		p, err := a.Testers(ctx, ext, url.Values{"q": {q}, "status": {status}, "limit": {"100"}})
		if err != nil {
			t.Errorf("the service's own answer for q=%q status=%q: %v", q, status, err)
			return nil
		}
		return p.Data
	}
	same := func(what string, want []betaport.Tester) {
		t.Helper()
		var g, e []string
		for _, r := range tp.rows() {
			g = append(g, r.Email)
		}
		for _, r := range want {
			e = append(e, r.Email)
		}
		if fmt.Sprint(g) != fmt.Sprint(e) {
			t.Errorf("%s: the page shows %d testers %v, the service has %d %v", what, len(g), g, len(e), e)
		}
	}

	// Typing "hop", a letter at a time, quicker than the pause.
	tp.Do(func() { tp.T.Search("h") })
	tp.Clock.Advance(100 * time.Millisecond)
	tp.Do(func() { tp.T.Search("ho") })
	tp.Clock.Advance(100 * time.Millisecond)
	tp.Do(func() { tp.T.Search("hop") })
	tp.Clock.Advance(model.TestersSearchDelay - time.Millisecond)
	tp.Do(func() {})
	if n := w.count(anySearch); n != 0 {
		t.Errorf("the list was searched %d times while typing went on", n)
	}
	tp.Clock.Advance(time.Millisecond)
	tp.Wait("the search", func() bool { return tp.shows("hop", "") && w.count(searches("hop")) > 0 })
	if n, all := w.count(searches("hop")), w.count(anySearch); n != 1 || all != 1 {
		t.Errorf("typing h, o, p searched %d times (%d for hop), want once for hop\n%s", all, n, w.log())
	}
	tp.Do(func() {
		same("searched for hop", serviceHas("hop", ""))
		for _, r := range tp.rows() {
			if !strings.Contains(strings.ToLower(r.Name+" "+r.Email), "hop") {
				t.Errorf("the search for hop shows %s <%s>", r.Name, r.Email)
			}
		}
		if len(tp.Addr) == 0 || tp.Addr[len(tp.Addr)-1] != [2]string{"hop", ""} {
			t.Errorf("the address says %v, want q=hop", tp.Addr)
		}
		if !tp.T.Filtered() {
			t.Errorf("a searched list does not say it is narrowed")
		}
		tp.T.Filter(betaport.TesterActive)
	})
	tp.Wait("the filter", func() bool { return tp.shows("hop", betaport.TesterActive) })
	tp.Do(func() {
		same("hop, active", serviceHas("hop", betaport.TesterActive))
		for _, r := range tp.rows() {
			if r.Status != betaport.TesterActive {
				t.Errorf("the active filter shows %s (%s)", r.Email, r.Status)
			}
		}
		if tp.Addr[len(tp.Addr)-1] != [2]string{"hop", betaport.TesterActive} {
			t.Errorf("the address says %v, want q=hop&status=active", tp.Addr[len(tp.Addr)-1])
		}
	})

	// A slow answer: the person picks "revoked", then "invited" before
	// "revoked" is answered.
	held := w.hold(t, func(r *http.Request) bool {
		return r.Method == http.MethodGet && r.URL.Path == api.TestersPath(ext) && r.URL.Query().Get("status") == betaport.TesterRevoked
	})
	tp.Do(func() { tp.T.Filter(betaport.TesterRevoked) })
	bbtbWait(t, held, "the revoked filter")
	tp.Do(func() { tp.T.Filter(betaport.TesterInvited) })
	tp.Wait("the invited filter", func() bool { return tp.shows("hop", betaport.TesterInvited) })
	held.Release()
	tp.Do(func() {})
	tp.Wait("settled", func() bool { return !tp.T.List.IsValidating })
	tp.Do(func() {
		same("hop, invited (after a slow revoked answer)", serviceHas("hop", betaport.TesterInvited))
		for _, r := range tp.rows() {
			if r.Status != betaport.TesterInvited {
				t.Errorf("after choosing invited the page shows %s (%s): the stale answer showed", r.Email, r.Status)
			}
		}
	})

	// Clearing both.
	tp.Do(func() { tp.T.Search("") })
	tp.Clock.Advance(model.TestersSearchDelay)
	tp.Wait("the search cleared", func() bool { return tp.shows("", betaport.TesterInvited) })
	tp.Do(func() { tp.T.Filter("") })
	tp.Wait("everyone again", func() bool { return tp.shows("", "") && len(tp.rows()) == 61 })
	tp.Do(func() {
		if tp.T.Filtered() {
			t.Errorf("the cleared list says it is narrowed")
		}
		if tp.Addr[len(tp.Addr)-1] != [2]string{"", ""} {
			t.Errorf("the address says %v, want neither q nor status", tp.Addr[len(tp.Addr)-1])
		}
	})

	// Back brings an address with a search: the box follows and the list
	// is searched again.
	tp.Do(func() { tp.T.Open(ext, "vint", "") })
	tp.Wait("the list of the address", func() bool { return tp.shows("vint", "") })
	tp.Do(func() {
		if tp.T.Query != "vint" || tp.Fields[model.TesterFieldSearch] != "vint" {
			t.Errorf("after Back the search box says %q (query %q), want vint", tp.Fields[model.TesterFieldSearch], tp.T.Query)
		}
		same("Back to q=vint", serviceHas("vint", ""))
	})
	tp.Do(func() { tp.T.Open(ext, "", betaport.TesterRevoked) })
	tp.Wait("Forward to status=revoked", func() bool { return tp.shows("", betaport.TesterRevoked) })
	tp.Do(func() {
		if tp.Fields[model.TesterFieldSearch] != "" || tp.T.Query != "" {
			t.Errorf("after Forward the search box says %q, want empty", tp.Fields[model.TesterFieldSearch])
		}
		same("Forward to status=revoked", serviceHas("", betaport.TesterRevoked))
	})
}

// Two admins on the same testers: the second admin's pages (two tabs)
// still show them active. A Revoke of a tester the first admin already
// revoked ends with the tester revoked and no error; a New link for
// another tester the first admin revoked meanwhile is refused with the
// reason, and nothing changes.
func TestBBTestersTwoAdminsOnOneTester(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	ctx := context.Background()
	a, _ := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	b, bw := bbtbSecondAdmin(t, m, d)
	const ext = 2
	ken := bbtbStoredTester(t, m, ext, "ken.lovelace.5@example.com")
	margaret := bbtbStoredTester(t, m, ext, "margaret.lovelace.4@example.com")
	tab1 := bbtbOpenTesters(t, b, ext, "", "")
	tab2 := bbtbOpenTesters(t, b, ext, "", "")
	tab1.loaded("the second admin's first tab")
	tab2.loaded("the second admin's second tab")
	if err := a.Revoke(ctx, ext, ken.ID); err != nil {
		t.Fatal(err)
	}
	if err := a.Revoke(ctx, ext, margaret.ID); err != nil {
		t.Fatal(err)
	}

	// Tab 1: Revoke Ken, whom the first admin revoked.
	tab1.Do(func() {
		k := tab1.row(t, ken.Email)
		if k.Status != betaport.TesterActive {
			t.Errorf("the second admin's page was meant to be stale, shows Ken %s", k.Status)
			return
		}
		tab1.T.Ask(k)
		tab1.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		tab1.T.Revoke(k)
	})
	tab1.Wait("the stale revoke answered", func() bool {
		k, _ := tab1.find(ken.Email)
		return k.Status == betaport.TesterRevoked && !tab1.T.List.IsValidating && bw.idle()
	})
	tab1.Do(func() {})
	tab1.Do(func() {
		if tab1.T.RevokeErr != nil {
			t.Errorf("revoking a tester someone else just revoked shows %v", tab1.T.RevokeErr)
		}
	})
	if st := bbtbStoredTester(t, m, ext, ken.Email); st.Status != betaport.TesterRevoked || st.RevokedBy != d.Admins[0].Email {
		t.Errorf("Ken is %s, revoked by %q; want revoked by the first admin", st.Status, st.RevokedBy)
	}

	// Tab 2: New link for Margaret, whom the first admin revoked.
	tab2.Do(func() {
		mg := tab2.row(t, margaret.Email)
		if mg.Status != betaport.TesterActive {
			t.Errorf("the second tab was meant to be stale, shows Margaret %s", mg.Status)
			return
		}
		tab2.T.Renew(mg)
	})
	tab2.Wait("the stale new link answered", func() bool {
		return (tab2.T.RevokeErr != nil || tab2.T.Invited != nil) && bw.idle()
	})
	tab2.Do(func() {
		if tab2.T.Invited != nil {
			t.Errorf("a New link pressed on a tester shown active, whom another admin revoked, made a link: %+v", tab2.T.Invited)
		}
		if p, ok := api.AsProblem(tab2.T.RevokeErr); !ok || !strings.Contains(strings.ToLower(p.Detail), "revoked") {
			t.Errorf("the second admin is told %v, want that Margaret was revoked", tab2.T.RevokeErr)
		}
	})
	if st := bbtbStoredTester(t, m, ext, margaret.Email); st.Status != betaport.TesterRevoked {
		t.Errorf("the refused new link left Margaret %s", st.Status)
	}
}

// An admin who signed out in another tab invites: the page sends them to
// sign in, and the service stores nobody.
func TestBBTestersSignedOutAdminInvites(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, _ := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2
	tp := bbtbOpenTesters(t, a, ext, "", "")
	tp.loaded("the testers")
	if err := a.SignOut(context.Background()); err != nil {
		t.Fatal(err)
	}
	tp.Do(func() {
		tp.T.Email, tp.T.Name = "late@example.com", "Late"
		tp.T.Invite()
	})
	// (The page then leaves for the sign-in page: its own state no longer
	// shows, so whether it still says "inviting" is not checked.)
	tp.Wait("the refused invite answered", func() bool { return len(tp.Went) > 0 || tp.T.InviteErr != nil })
	tp.Do(func() {
		if len(tp.Went) == 0 || tp.Went[len(tp.Went)-1] != model.PathLogin {
			t.Errorf("a signed-out admin's invite went %v (error %v), want to %s", tp.Went, tp.T.InviteErr, model.PathLogin)
		}
		if tp.T.Invited != nil {
			t.Errorf("the page shows a link for an invite the service refused")
		}
	})
	if _, err := m.Store.FindTesterByEmail(context.Background(), ext, "late@example.com"); err == nil {
		t.Errorf("the service stored a signed-out admin's invite")
	}
}

// Leaving the page while an invite is on its way: the gone page shows
// nothing of the answer (its link is not copied anywhere); the invite the
// service answered is there on the next visit, once.
func TestBBTestersLeavePageBeforeInviteAnswer(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2
	tp := bbtbOpenTesters(t, a, ext, "", "")
	tp.loaded("the testers")
	held := w.hold(t, bbtbIs(http.MethodPost, api.TestersPath(ext)))
	tp.Do(func() {
		tp.T.Email, tp.T.Name = "gone@example.com", "Gone"
		tp.T.Invite()
	})
	bbtbWait(t, held, "the invite")
	tp.Do(func() { tp.T.Close() })
	held.Release()
	bbtbNever(t, tp.page, held, "the testers page closed before the invite's answer still took it: its link and note show on a page the person left", func() bool {
		return tp.T.Invited != nil || tp.T.Inviting == false && tp.T.InviteErr != nil
	})
	tp.Do(func() {
		if tp.T.Invited != nil {
			t.Logf("after Close the page holds the link %s for %s (note %q)", tp.T.Invited.InviteURL, tp.T.Invited.Email, tp.T.LinkNote)
		}
		if tp.T.InviteErr != nil {
			t.Logf("after Close the page holds the error %v", tp.T.InviteErr)
		}
	})
	bbtbStoredTester(t, m, ext, "gone@example.com")
	tp2 := bbtbOpenTesters(t, a, ext, "", "")
	tp2.loaded("the next visit")
	tp2.Do(func() {
		if _, n := tp2.find("gone@example.com"); n != 1 {
			t.Errorf("the next visit shows gone@example.com %d times, want once", n)
		}
	})
}

// A tester who opens the admins' testers page sees nothing of it: the
// page knows a tester opened it and shows no tester of the extension
// (the service refuses a tester the list, so nothing can leak either).
func TestBBTestersTesterOpensAdminsPage(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	tc, tw := bbtbBrowser(t, m)
	if !bbtbOpenLink(t, m, tc, tw, d.TesterLink) {
		t.Fatal("the demo link does not sign in")
	}
	tp := bbtbOpenTesters(t, tc, 1, "", "")
	tp.Wait("the page knows a tester opened it", func() bool { return tp.T.Tester })
	tp.Wait("the page's reads settled", func() bool { return !tp.T.List.IsValidating })
	tp.Do(func() {
		if n := len(tp.rows()); n != 0 {
			t.Errorf("a tester sees %d testers on the admins' page", n)
		}
		if len(tp.Went) != 0 {
			t.Logf("the tester was sent to %v", tp.Went)
		}
	})
	if err := tc.Do(context.Background(), http.MethodGet, api.TestersPath(1), nil, nil); err == nil {
		t.Errorf("the service gives a tester the list of testers")
	}
}

// A revoke the service refuses (answered with a problem): the tester shows
// as they were again, and the page says why.
func TestBBTestersRevokeRefusedShowsTesterAsBefore(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2
	ken := bbtbStoredTester(t, m, ext, "ken.lovelace.5@example.com")
	tp := bbtbOpenTesters(t, a, ext, "", "")
	tp.loaded("the testers")
	const why = "Betaport is being updated: try again in a minute."
	w.fake(bbtbIs(http.MethodDelete, api.TesterPath(ext, ken.ID)), http.StatusServiceUnavailable, api.Problem{
		Type: api.ProblemUnavailable, Title: "Unavailable", Status: http.StatusServiceUnavailable, Detail: why,
	})
	tp.Do(func() {
		k := tp.row(t, ken.Email)
		tp.T.Ask(k)
		tp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		tp.T.Revoke(k)
	})
	tp.Wait("the refusal", func() bool { return tp.T.RevokeErr != nil })
	tp.Wait("the list settled", func() bool { return !tp.T.List.IsValidating })
	tp.Do(func() {
		if p, ok := api.AsProblem(tp.T.RevokeErr); !ok || p.Detail != why {
			t.Errorf("the page says %v, want %q", tp.T.RevokeErr, why)
		}
		if k, n := tp.find(ken.Email); n != 1 || k.Status != betaport.TesterActive {
			t.Errorf("after a refused revoke Ken shows %s (%d rows), want active as before", k.Status, n)
		}
	})
	if st := bbtbStoredTester(t, m, ext, ken.Email); st.Status != betaport.TesterActive {
		t.Errorf("the service has Ken %s", st.Status)
	}
}

// A Yes that comes after the question was answered No (a late click on a
// button that is gone) revokes nobody.
func TestBBTestersLateYesAfterNoRevokesNobody(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2
	ken := bbtbStoredTester(t, m, ext, "ken.lovelace.5@example.com")
	tp := bbtbOpenTesters(t, a, ext, "", "")
	tp.loaded("the testers")
	tp.Do(func() {
		k := tp.row(t, ken.Email)
		tp.T.Ask(k)
		tp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		tp.T.Keep(k)
		tp.T.Revoke(k) // the late Yes
	})
	tp.Do(func() {})
	tp.Do(func() {
		if k, _ := tp.find(ken.Email); k.Status != betaport.TesterActive {
			t.Errorf("a Yes after No shows Ken %s", k.Status)
		}
	})
	if n := w.count(func(method string, u *url.URL) bool { return method == http.MethodDelete }); n != 0 {
		t.Errorf("a Yes after No sent %d revokes", n)
	}
	if st := bbtbStoredTester(t, m, ext, ken.Email); st.Status != betaport.TesterActive {
		t.Errorf("a Yes after No left Ken %s in the service", st.Status)
	}
}

// Typing a search, then Back (an address with another search) before the
// pause ends: the page shows the address's list, and the typing's late
// timer neither searches nor rewrites the address. Typing then clearing
// the box before the pause searches nothing; a page left with a search
// pending sends nothing.
func TestBBTestersSearchPendingThenBackClearOrLeave(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 1
	searched := func(q string) func(string, *url.URL) bool {
		return func(method string, u *url.URL) bool {
			return isTestersGet(ext)(method, u) && u.Query().Get("q") == q
		}
	}
	tp := bbtbOpenTesters(t, a, ext, "", "")
	tp.loaded("the testers")

	// Typing, then clearing, quicker than the pause.
	tp.Do(func() { tp.T.Search("hop") })
	tp.Clock.Advance(100 * time.Millisecond)
	tp.Do(func() { tp.T.Search("") })
	tp.Clock.Advance(model.TestersSearchDelay)
	tp.Wait("settled", func() bool { return !tp.T.List.IsValidating })
	tp.Do(func() {
		if n := len(tp.rows()); n != 61 || tp.T.Applied != "" {
			t.Errorf("typing then clearing left %d rows searched for %q, want all 61", n, tp.T.Applied)
		}
	})
	if n := w.count(searched("hop")); n != 0 {
		t.Errorf("a search typed and cleared before the pause was sent %d times", n)
	}

	// Typing, then Back before the pause.
	tp.Do(func() { tp.T.Search("hop") })
	tp.Clock.Advance(100 * time.Millisecond)
	tp.Do(func() { tp.T.Open(ext, "vint", "") })
	tp.Clock.Advance(model.TestersSearchDelay)
	tp.Wait("the address's list", func() bool { return tp.shows("vint", "") })
	tp.Clock.Advance(model.TestersSearchDelay)
	tp.Do(func() {})
	tp.Wait("settled", func() bool { return !tp.T.List.IsValidating })
	tp.Do(func() {
		if tp.T.Applied != "vint" || tp.T.Query != "vint" {
			t.Errorf("after Back to q=vint the page searched %q (box %q): the typing's late timer won", tp.T.Applied, tp.T.Query)
		}
		for _, r := range tp.rows() {
			if !strings.Contains(strings.ToLower(r.Name+r.Email), "vint") {
				t.Errorf("after Back to q=vint the page shows %s", r.Email)
			}
		}
		for _, ad := range tp.Addr {
			if ad[0] == "hop" {
				t.Errorf("the address was rewritten to q=hop after Back (addresses %v)", tp.Addr)
				break
			}
		}
	})
	if n := w.count(searched("hop")); n != 0 {
		t.Errorf("the search typed before Back was sent %d times", n)
	}

	// Typing, then leaving.
	tp.Do(func() { tp.T.Search("lovelace") })
	tp.Do(func() { tp.T.Close() })
	tp.Clock.Advance(model.TestersSearchDelay)
	tp.Do(func() {})
	if n := w.count(searched("lovelace")); n != 0 {
		t.Errorf("a page left with a search pending sent it %d times", n)
	}
}

// Inviting someone who already tests the extension: refused with the
// reason; the list does not show them twice.
func TestBBTestersInviteExistingTester(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, _ := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext, email = 2, "ken.lovelace.5@example.com"
	tp := bbtbOpenTesters(t, a, ext, "", "")
	tp.loaded("the testers")
	tp.Do(func() {
		tp.T.Email, tp.T.Name = "KEN.lovelace.5@example.com", "Ken again"
		tp.T.Invite()
	})
	tp.Wait("the refusal", func() bool { return !tp.T.Inviting && tp.T.InviteErr != nil })
	tp.Wait("settled", func() bool { return !tp.T.List.IsValidating })
	tp.Do(func() {
		if p, ok := api.AsProblem(tp.T.InviteErr); !ok || !strings.Contains(p.Detail, email) {
			t.Errorf("the page says %v, want that %s already tests it", tp.T.InviteErr, email)
		}
		if k, n := tp.find(email); n != 1 || k.Name == "Ken again" {
			t.Errorf("the list shows %s %d times (name %q), want once as before", email, n, k.Name)
		}
		if tp.T.Restore != "" || tp.T.Invited != nil {
			t.Errorf("an active tester's refusal offers restore %q / link %+v", tp.T.Restore, tp.T.Invited)
		}
	})
	if st := bbtbStoredTester(t, m, ext, email); st.Name == "Ken again" || st.Status != betaport.TesterActive {
		t.Errorf("the refused invite changed Ken: %+v", st)
	}
}

// The person invites before the list's first page has arrived (it was
// answered before the invite, and is slow on its way): once everything
// lands, the list shows the invited tester, once.
func TestBBTestersInviteBeforeListArrives(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2
	held := w.hold(t, func(r *http.Request) bool { return isTestersGet(ext)(r.Method, r.URL) })
	tp := bbtbOpenTesters(t, a, ext, "", "")
	bbtbWait(t, held, "the first page of testers")
	tp.Do(func() {
		tp.T.Email, tp.T.Name = "early@example.com", "Early"
		tp.T.Invite()
	})
	tp.Wait("the invite answered", func() bool { return !tp.T.Inviting && (tp.T.Invited != nil || tp.T.InviteErr != nil) })
	held.Release()
	tp.loaded("the list")
	tp.Do(func() {})
	tp.Wait("settled", func() bool { return !tp.T.List.IsValidating })
	tp.Do(func() {
		if tp.T.InviteErr != nil {
			t.Errorf("the invite was refused: %v", tp.T.InviteErr)
			return
		}
		if _, n := tp.find("early@example.com"); n != 1 {
			t.Errorf("the tester invited while the list loaded shows %d times, want once (the list shows %d testers)", n, len(tp.rows()))
		}
		if n := len(tp.rows()); n != 6 {
			t.Errorf("the list shows %d testers, want 6 (5 and the invited one)", n)
		}
	})
}

// The person opens another extension's testers while an invite is on its
// way: the other extension's list never shows the invited tester.
func TestBBTestersOtherExtensionWhileInviting(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	tp := bbtbOpenTesters(t, a, 2, "", "")
	tp.loaded("Reader Mode Plus's testers")
	held := w.hold(t, bbtbIs(http.MethodPost, api.TestersPath(2)))
	tp.Do(func() {
		tp.T.Email, tp.T.Name = "rmp@example.com", "For Reader Mode Plus"
		tp.T.Invite()
	})
	bbtbWait(t, held, "the invite")
	tp.Do(func() { tp.T.Open(1, "", "") })
	tp.Wait("Tab Tamer's testers", func() bool {
		return tp.T.ExtensionID == 1 && tp.shows("", "") && strings.HasPrefix(tp.T.List.Key, api.TestersPath(1)+"?")
	})
	held.Release()
	bbtbNever(t, tp.page, held, "Tab Tamer's testers show the tester invited to Reader Mode Plus", func() bool {
		_, n := tp.find("rmp@example.com")
		return n != 0
	})
	tp.Wait("settled", func() bool { return !tp.T.List.IsValidating })
	tp.Do(func() {
		if _, n := tp.find("rmp@example.com"); n != 0 {
			t.Errorf("Tab Tamer's testers show the tester invited to Reader Mode Plus")
		}
		for _, r := range tp.rows() {
			if r.ExtensionID != 1 {
				t.Errorf("Tab Tamer's list shows %s of extension %d", r.Email, r.ExtensionID)
			}
		}
	})
	if st := bbtbStoredTester(t, m, 2, "rmp@example.com"); st.ExtensionID != 2 {
		t.Errorf("the service stored the tester for extension %d", st.ExtensionID)
	}
}

// The person presses Revoke (and Yes) on the row of a tester whose invite
// is still on its way: the page sends no revoke for a tester the service
// has not made yet; once made, the tester can be revoked as any other.
func TestBBTestersRevokeRowOfInviteOnItsWay(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2
	tp := bbtbOpenTesters(t, a, ext, "", "")
	tp.loaded("the testers")
	held := w.hold(t, bbtbIs(http.MethodPost, api.TestersPath(ext)))
	// A revoke's answer, if one is sent, comes after the invite's.
	heldRevoke := w.hold(t, func(r *http.Request) bool { return r.Method == http.MethodDelete })
	tp.Do(func() {
		tp.T.Email, tp.T.Name = "quick@example.com", "Quick"
		tp.T.Invite()
	})
	tp.Do(func() {
		q, n := tp.find("quick@example.com")
		if n != 1 {
			t.Errorf("the invited tester is not shown at once")
			return
		}
		tp.T.Ask(q)
		tp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		tp.T.Revoke(q)
	})
	bbtbWait(t, held, "the invite")
	held.Release()
	tp.Wait("the invite answered", func() bool { return !tp.T.Inviting && tp.T.Invited != nil })
	heldRevoke.Release()
	tp.Wait("the invite and the revoke answered", func() bool {
		return !tp.T.Inviting && tp.T.Invited != nil && !tp.T.List.IsValidating && w.idle()
	})
	for i := 0; i < 20; i++ {
		tp.Do(func() {})
	}
	tp.Wait("settled", func() bool { return !tp.T.List.IsValidating && w.idle() })
	var deletes []string
	w.mu.Lock()
	for i, u := range w.sent {
		if w.methods[i] == http.MethodDelete {
			deletes = append(deletes, u.Path)
		}
	}
	w.mu.Unlock()
	st := bbtbStoredTester(t, m, ext, "quick@example.com")
	for _, p := range deletes {
		if p != api.TesterPath(ext, st.ID) {
			t.Errorf("Revoke → Yes on the row of a tester whose invite is on its way sent DELETE %s, for a tester the service never made (the invite made id %d)", p, st.ID)
		}
	}
	tp.Do(func() {
		if tp.T.RevokeErr != nil {
			t.Errorf("the person who pressed Revoke → Yes on the tester they just invited reads: %q", tp.T.RevokeErr.Error())
		}
		q, n := tp.find("quick@example.com")
		if n != 1 || q.ID != st.ID {
			t.Errorf("once the invite and that revoke are answered, the list shows quick@example.com %d time(s), with id %d (the service made %d): a row with the placeholder id stays, and every Revoke or New link on it is refused the same way", n, q.ID, st.ID)
		}
	})
	t.Logf("Revoke on the row of an invite on its way: requests %v, the tester is %s in the service", deletes, st.Status)

	// Revoke pressed once "Invited." shows, while the list is being read
	// again (slowly): the row must name the tester the service made.
	heldList := w.hold(t, func(r *http.Request) bool { return isTestersGet(ext)(r.Method, r.URL) })
	tp.Do(func() {
		tp.T.Email, tp.T.Name = "quick2@example.com", "Quick Two"
		tp.T.Invite()
	})
	tp.Wait("the second invite answered", func() bool {
		return !tp.T.Inviting && tp.T.Invited != nil && tp.T.Invited.Email == "quick2@example.com"
	})
	st2 := bbtbStoredTester(t, m, ext, "quick2@example.com")
	tp.Wait(fmt.Sprintf("the new tester's row to carry the id the service made (%d) once \"Invited.\" shows, while the list is read again: until then a Revoke → Yes is sent for the placeholder id", st2.ID), func() bool {
		q, n := tp.find("quick2@example.com")
		return n == 1 && q.ID == st2.ID
	})
	heldList.Release()
}
