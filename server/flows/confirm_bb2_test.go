package flows_test

// Second-look black-box flows of the destructive questions (roll back,
// revoke a tester, revoke a key, delete a webhook): their Yes takes no
// press until model.ConfirmDelay has passed on the page's clock, however
// clumsily the person presses (double-clicks, a press just before the
// delay ends, Yes in another row or tab, a late Yes after Keep, Cancel or
// Escape). Also: a revoked tester's installed copy gets no newer build,
// and a restore resumes it; webhooks on private addresses are refused by
// the page, and a delivery the service refuses fails at once.
//
// Written from the issue text and the models' public API only. Helpers are
// prefixed bb2.

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/model"
	"github.com/betaport/betaport/server/storetest"
)

const bb2JustBefore = model.ConfirmDelay - time.Millisecond

// ---------------------------------------------------------------------
// Roll back.

// A double-click on "Roll back to #2" (its second click on the Yes, or on
// the button again), and a Yes pressed a millisecond before the delay
// ends, roll nothing back; pressing the button again keeps the question
// without restarting its delay; a Yes in another row does nothing; the Yes
// taken after the delay rolls back once.
func TestBB2RollbackDoubleClickTakesNoYes(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2 // bundles #1..#3, #3 current
	bp := bbtbOpenBundles(t, a, ext)
	bp.settled("the bundles page shows #3 on top", 3)

	var focus []model.RowControl
	var r2, r1 *model.BundleRow
	bp.Do(func() {
		r2 = bp.row(t, 2, &focus)
		r1 = bp.row(t, 1, nil)
		r2.Ask()
		r2.Confirm() // the double-click's second click, on the Yes
		r2.Ask()     // a triple-click, back on the button
		r2.Confirm()
	})
	bp.Do(func() {
		if !r2.AsksRollback() {
			t.Errorf("a Yes pressed at once (a double-click) closed the question; it should do nothing")
		}
		if r2.ConfirmReady() {
			t.Errorf("the question takes its Yes at once, before ConfirmDelay")
		}
		if r2.RollingBack() || bp.B.Rollback.RollingBack != 0 {
			t.Errorf("a double-click on Roll back to #2 started rolling back (#%d)", bp.B.Rollback.RollingBack)
		}
		if len(focus) == 0 || focus[len(focus)-1] != model.ConfirmRollback {
			t.Errorf("when asked, the focus went %v; want the Yes (keyboard users keep their path)", focus)
		}
	})

	bp.Clock.Advance(bb2JustBefore)
	bp.Do(func() {
		if r2.ConfirmReady() {
			t.Errorf("the question takes its Yes %v after it showed, before ConfirmDelay (%v)", bb2JustBefore, model.ConfirmDelay)
		}
		r2.Confirm() // just before the delay ends
		if r2.RollingBack() || bp.B.Rollback.RollingBack != 0 {
			t.Errorf("a Yes a millisecond before ConfirmDelay started rolling back")
		}
		r2.Ask() // Roll back pressed again, late: the question stays, the delay is not restarted
		if !r2.AsksRollback() {
			t.Errorf("Roll back pressed again closed the question")
		}
	})
	bp.Clock.Advance(time.Millisecond)
	bp.Do(func() {
		if !r2.ConfirmReady() {
			t.Errorf("ConfirmDelay after the question showed, its Yes takes no press: pressing Roll back again restarted the delay")
		}
		r1.Confirm() // Yes in a row that asks nothing
	})
	bp.Do(func() {
		if bp.B.Rollback.RollingBack != 0 || r1.RollingBack() {
			t.Errorf("a Yes in #1's row, which asked nothing, started rolling back #%d", bp.B.Rollback.RollingBack)
		}
	})
	if n := countRollbackPosts(w); n != 0 {
		t.Fatalf("before a Yes was taken, %d rollbacks were sent:\n%s", n, w.log())
	}
	if cur, last := bbtbRevision(t, m, ext); cur != 3 || last != 3 {
		t.Fatalf("before a Yes was taken the service serves #%d (last #%d)", cur, last)
	}

	bp.Do(func() {
		r2.Confirm()
		if !r2.RollingBack() {
			t.Errorf("the Yes taken after ConfirmDelay does not roll back")
		}
	})
	bp.Wait("the rollback on top", func() bool {
		return bp.B.Rollback.RollingBack == 0 && bp.B.Top() == 4 && bp.B.Settled()
	})
	if n := countRollbackPosts(w); n != 1 {
		t.Errorf("%d rollbacks sent, want 1:\n%s", n, w.log())
	}
	stored, err := m.Store.FindBundle(context.Background(), ext, 4)
	if err != nil || stored.RollbackOf != 2 {
		t.Errorf("#4 is %+v (%v), want a rollback of #2", stored, err)
	}
}

// A question closed by Cancel, by Escape, or by its row being given
// another bundle takes no late Yes; a question asked again after it was
// closed waits its own delay (it is shown anew) rather than the old one's.
func TestBB2RollbackClosedQuestionTakesNoLateYes(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2
	bp := bbtbOpenBundles(t, a, ext)
	bp.settled("the bundles page shows #3 on top", 3)
	var focus []model.RowControl
	var r2 *model.BundleRow
	bp.Do(func() {
		r2 = bp.row(t, 2, &focus)
		r2.Ask()
	})
	bp.Clock.Advance(model.ConfirmDelay)
	bp.Do(func() {
		if !r2.ConfirmReady() {
			t.Errorf("ConfirmDelay after it showed, the question does not take its Yes")
		}
		r2.Cancel()
		if r2.ConfirmReady() {
			t.Errorf("a cancelled question says its Yes takes a press")
		}
		r2.Confirm() // late Yes, after Cancel
		if r2.RollingBack() || r2.AsksRollback() {
			t.Errorf("a Yes after Cancel: rolling back %v, asking %v", r2.RollingBack(), r2.AsksRollback())
		}
		if focus[len(focus)-1] != model.RollbackButton {
			t.Errorf("after Cancel the focus went %v, want Roll back", focus)
		}
		r2.Ask() // asked anew: a new delay
		if r2.ConfirmReady() {
			t.Errorf("a question asked again after Cancel takes its Yes at once (the old question's delay)")
		}
		r2.Confirm()
		if r2.RollingBack() {
			t.Errorf("a question asked again after Cancel took a Yes at once")
		}
	})
	bp.Clock.Advance(model.ConfirmDelay)
	bp.Do(func() {
		r2.Escape()
		if r2.AsksRollback() {
			t.Errorf("Escape left the question open")
		}
		r2.Confirm() // late Yes, after Escape
		if r2.RollingBack() {
			t.Errorf("a Yes after Escape rolled back")
		}
		r2.Ask()
	})
	bp.Clock.Advance(model.ConfirmDelay)
	bp.Do(func() {
		b1, _ := bbtbFind(bp.rows(), 1)
		r2.Show(b1) // the list's window moved: the row shows #1 now
		if r2.AsksRollback() || r2.ConfirmReady() {
			t.Errorf("a row given #1 still asks (%v) or takes a Yes (%v) about #2", r2.AsksRollback(), r2.ConfirmReady())
		}
		r2.Confirm()
	})
	bp.Do(func() {})
	bp.Do(func() {
		if bp.B.Rollback.RollingBack != 0 {
			t.Errorf("a late Yes started rolling back #%d", bp.B.Rollback.RollingBack)
		}
	})
	if n := countRollbackPosts(w); n != 0 {
		t.Fatalf("late Yeses sent %d rollbacks:\n%s", n, w.log())
	}
	if cur, last := bbtbRevision(t, m, ext); cur != 3 || last != 3 {
		t.Fatalf("late Yeses moved the service to #%d (last #%d)", cur, last)
	}

	// The row (now #1's) still works as asked.
	bp.Do(func() { r2.Ask() })
	bp.Clock.Advance(model.ConfirmDelay)
	bp.Do(func() { r2.Confirm() })
	bp.Wait("the rollback of #1 on top", func() bool {
		return bp.B.Rollback.RollingBack == 0 && bp.B.Top() == 4 && bp.B.Settled()
	})
	if stored, err := m.Store.FindBundle(context.Background(), ext, 4); err != nil || stored.RollbackOf != 1 {
		t.Errorf("#4 is %+v (%v), want a rollback of #1", stored, err)
	}
}

// ---------------------------------------------------------------------
// A tester's revoke, and their installed copy's updates.

// bb2CRXUpdateURL reads the update_url of a CRX3's manifest.
func bb2CRXUpdateURL(t *testing.T, data []byte) string {
	t.Helper()
	if len(data) < 12 || string(data[:4]) != "Cr24" {
		t.Fatalf("not a CRX: %d bytes, starting %q", len(data), data[:min(16, len(data))])
	}
	hlen := binary.LittleEndian.Uint32(data[8:12])
	if uint64(hlen)+12 > uint64(len(data)) {
		t.Fatalf("CRX header of %d bytes in %d", hlen, len(data))
	}
	z := data[12+hlen:]
	zr, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	if err != nil {
		t.Fatalf("the CRX's zip: %v", err)
	}
	for _, f := range zr.File {
		if f.Name != "manifest.json" {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		var man map[string]any
		if err := json.Unmarshal(b, &man); err != nil {
			t.Fatalf("the CRX's manifest %s: %v", b, err)
		}
		u, _ := man["update_url"].(string)
		return u
	}
	t.Fatal("the CRX holds no manifest.json")
	return ""
}

func bb2Get(t *testing.T, hc *http.Client, rawURL string) (int, []byte) {
	t.Helper()
	resp, err := hc.Get(rawURL)
	if err != nil {
		t.Fatalf("GET %s: %v", rawURL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// bb2Check is an installed copy's update check at updateURL (no cookies):
// the updatecheck's status, and the version and codebase it offers.
func bb2Check(t *testing.T, updateURL, chromeID, installed string) (status, version, codebase string) {
	t.Helper()
	x := url.Values{"id": {chromeID}, "v": {installed}, "installsource": {"notfromwebstore"}, "uc": {""}}.Encode()
	q := url.Values{"os": {"linux"}, "arch": {"x64"}, "prod": {"chromiumcrx"}, "prodversion": {"126.0.6478.126"}, "acceptformat": {"crx3"}, "x": {x}}
	code, body := bb2Get(t, &http.Client{}, updateURL+"?"+q.Encode())
	if code != http.StatusOK {
		t.Fatalf("the update check at %s answered %d: %.300s", updateURL, code, body)
	}
	var g struct {
		Apps []struct {
			AppID       string `xml:"appid,attr"`
			UpdateCheck *struct {
				Status   string `xml:"status,attr"`
				Codebase string `xml:"codebase,attr"`
				Version  string `xml:"version,attr"`
			} `xml:"updatecheck"`
		} `xml:"app"`
	}
	if err := xml.Unmarshal(body, &g); err != nil || len(g.Apps) != 1 || g.Apps[0].UpdateCheck == nil {
		t.Fatalf("the update answer %s (%v): want one app with an updatecheck", body, err)
	}
	uc := g.Apps[0].UpdateCheck
	return uc.Status, uc.Version, uc.Codebase
}

// The demo tester's copy names an update URL of their own. An admin asks
// to revoke them and presses Yes at once (a double-click), then just
// before the delay ends: nothing. The Yes after the delay revokes them:
// their update URL answers noupdate although a newer build exists, and
// the build it offered answers 404. Restoring them resumes both.
func TestBB2TesterRevokeWaitsItsDelayThenStopsUpdatesRestoreResumes(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	ctx := context.Background()
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	tc, tw := bbtbBrowser(t, m)
	if !bbtbOpenLink(t, m, tc, tw, d.TesterLink) {
		t.Fatal("the demo tester's link did not sign them in")
	}
	who, err := tc.Session(ctx)
	if err != nil || who.Tester == nil {
		t.Fatalf("the demo tester's session: %+v, %v", who, err)
	}
	tester := *who.Tester
	ext := tester.ExtensionID
	upd := bbsUpdates(t, a, ext)

	key := bbtbKey(t, a, ext)
	b1 := bbtbPublish(t, m, key, "2.0.0", "")
	code, crx := bb2Get(t, tw.next, m.URL()+api.BundleCRXPath(ext, b1.Number))
	if code != http.StatusOK {
		t.Fatalf("the tester's CRX of #%d answered %d: %.200s", b1.Number, code, crx)
	}
	mine := bb2CRXUpdateURL(t, crx)
	if mine == "" || mine == upd.UpdateURL {
		t.Fatalf("the tester's CRX names update_url %q; want one of their own, not the shared %s", mine, upd.UpdateURL)
	}
	if st, v, _ := bb2Check(t, mine, upd.ChromeID, "2.0.0"); st != "noupdate" {
		t.Errorf("an up-to-date copy is offered %q (%s)", v, st)
	}
	b2 := bbtbPublish(t, m, key, "2.1.0", "")
	st, v, cb := bb2Check(t, mine, upd.ChromeID, "2.0.0")
	if st != "ok" || v != "2.1.0" || cb == "" {
		t.Fatalf("before the revoke the tester's copy is offered %q at %q (%s), want 2.1.0", v, cb, st)
	}
	if code, body := bb2Get(t, &http.Client{}, cb); code != http.StatusOK || !bytes.HasPrefix(body, []byte("Cr24")) {
		t.Fatalf("before the revoke the offered build answers %d", code)
	}

	tp := bbtbOpenTesters(t, a, ext, tester.Email, "")
	tp.loaded("the testers searched for the demo tester")
	deletes := func(method string, u *url.URL) bool {
		return method == http.MethodDelete && u.Path == api.TesterPath(ext, tester.ID)
	}
	var z betaport.Tester
	tp.Do(func() {
		z = tp.row(t, tester.Email)
		tp.T.Ask(z)
		tp.T.Revoke(z) // a double-click's second click
		tp.T.Revoke(z)
		if !tp.T.Asking(z.ID) {
			t.Errorf("a Yes pressed at once closed the question; it should do nothing")
		}
		if tp.T.ConfirmReady(z.ID) {
			t.Errorf("the question takes its Yes at once")
		}
		if r, _ := tp.find(tester.Email); r.Status == betaport.TesterRevoked {
			t.Errorf("a double-click on Revoke shows the tester revoked")
		}
		if tp.lastFocus() != (bbtbFocusAt{model.TesterFocusYes, z.ID}) {
			t.Errorf("asked, the focus went to %+v, want Yes of %d", tp.lastFocus(), z.ID)
		}
	})
	tp.Clock.Advance(bb2JustBefore)
	tp.Do(func() {
		if tp.T.ConfirmReady(z.ID) {
			t.Errorf("the question takes its Yes before ConfirmDelay")
		}
		tp.T.Revoke(z)
		if r, _ := tp.find(tester.Email); r.Status == betaport.TesterRevoked {
			t.Errorf("a Yes a millisecond before ConfirmDelay revoked the tester")
		}
		tp.T.Ask(z) // Revoke pressed again: the question stays, its delay runs on
		if !tp.T.Asking(z.ID) {
			t.Errorf("Revoke pressed again closed the question")
		}
	})
	tp.Clock.Advance(time.Millisecond)
	tp.Do(func() {
		if !tp.T.ConfirmReady(z.ID) {
			t.Errorf("ConfirmDelay after the question showed it takes no Yes: pressing Revoke again restarted the delay")
		}
	})
	if n := w.count(deletes); n != 0 {
		t.Fatalf("before a Yes was taken, %d revokes were sent", n)
	}
	if st := bbtbStoredTester(t, m, ext, tester.Email); st.Status == betaport.TesterRevoked {
		t.Fatalf("before a Yes was taken the tester is revoked")
	}
	tp.Do(func() { tp.T.Revoke(z) })
	tp.Wait("the tester revoked", func() bool {
		r, _ := tp.find(tester.Email)
		return r.Status == betaport.TesterRevoked && w.count(deletes) > 0 && w.idle() && !tp.T.List.IsValidating
	})
	tp.Do(func() {
		if tp.T.RevokeErr != nil {
			t.Errorf("the revoke failed: %v", tp.T.RevokeErr)
		}
	})
	if n := w.count(deletes); n != 1 {
		t.Errorf("%d revokes sent, want 1", n)
	}
	if st := bbtbStoredTester(t, m, ext, tester.Email); st.Status != betaport.TesterRevoked {
		t.Fatalf("the service has the tester %s, want revoked", st.Status)
	}

	// Their access ends, and their installed copy gets nothing newer.
	if _, err := tc.Session(ctx); err == nil {
		t.Errorf("the revoked tester's browser is still signed in")
	}
	if st, v, cb := bb2Check(t, mine, upd.ChromeID, "2.0.0"); st != "noupdate" {
		t.Errorf("the revoked tester's copy at 2.0.0 is offered %q at %q (%s), want noupdate", v, cb, st)
	}
	if st, v, _ := bb2Check(t, mine, upd.ChromeID, "0.0.1"); st != "noupdate" {
		t.Errorf("the revoked tester's copy at 0.0.1 is offered %q (%s), want noupdate", v, st)
	}
	if code, body := bb2Get(t, &http.Client{}, cb); code != http.StatusNotFound || bytes.HasPrefix(body, []byte("Cr24")) {
		t.Errorf("the revoked tester's download of #%d answered %d, want 404", b2.Number, code)
	}
	if code, _ := bb2Get(t, &http.Client{}, strings.TrimSuffix(cb, fmt.Sprint(b2.Number))+fmt.Sprint(b1.Number)); code != http.StatusNotFound {
		t.Errorf("the revoked tester's download of the older #%d answered %d, want 404", b1.Number, code)
	}
	// Others are untouched: the shared URL still offers 2.1.0.
	if st, v, _ := bb2Check(t, upd.UpdateURL, upd.ChromeID, "2.0.0"); st != "ok" || v != "2.1.0" {
		t.Errorf("while the tester is revoked the shared update URL offers %q (%s), want 2.1.0", v, st)
	}

	// Restore (the row's button, on the row as it shows now): both resume.
	tp.Do(func() { tp.T.Renew(tp.row(t, tester.Email)) })
	tp.Wait("the restore answered", func() bool {
		return (tp.T.Invited != nil && tp.T.Invited.ID == tester.ID) || tp.T.RevokeErr != nil
	})
	var restoreErr error
	tp.Do(func() { restoreErr = tp.T.RevokeErr })
	if restoreErr != nil {
		t.Fatalf("the restore failed: %v", restoreErr)
	}
	if st, v, cb2 := bb2Check(t, mine, upd.ChromeID, "2.0.0"); st != "ok" || v != "2.1.0" || cb2 != cb {
		t.Errorf("the restored tester's copy is offered %q at %q (%s), want 2.1.0 at %s", v, cb2, st, cb)
	}
	if code, body := bb2Get(t, &http.Client{}, cb); code != http.StatusOK || !bytes.HasPrefix(body, []byte("Cr24")) {
		t.Errorf("the restored tester's download answers %d, want the CRX", code)
	}
}

// Two testers, two tabs of one admin. A Yes in another row (whose tester
// was not asked about), a Yes in another tab (which asked nothing, or
// asked just now), and a late Yes after Keep revoke nobody.
func TestBB2TestersYesElsewhereRevokesNobody(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	ctx := context.Background()
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	ext := d.Extensions[2].ID
	for _, e := range []string{"ann.bb2@example.com", "bob.bb2@example.com"} {
		if _, err := a.Invite(ctx, ext, api.Invite{Email: e, Name: strings.SplitN(e, ".", 2)[0]}); err != nil {
			t.Fatalf("inviting %s: %v", e, err)
		}
	}
	tabA := bbtbOpenTesters(t, a, ext, "", "")
	tabB := bbtbOpenTesters(t, a, ext, "", "")
	tabA.loaded("tab A's testers")
	tabB.loaded("tab B's testers")
	var ann, bob betaport.Tester
	tabA.Do(func() {
		ann = tabA.row(t, "ann.bb2@example.com")
		bob = tabA.row(t, "bob.bb2@example.com")
		if model.TesterPending(ann) || model.TesterPending(bob) {
			t.Errorf("testers invited through the API show as pending")
		}
		tabA.T.Ask(ann)
	})
	tabA.Clock.Advance(model.ConfirmDelay)
	tabA.Do(func() {
		if !tabA.T.ConfirmReady(ann.ID) {
			t.Errorf("ConfirmDelay after Ann's question showed, it takes no Yes")
		}
		if tabA.T.Asking(bob.ID) || tabA.T.ConfirmReady(bob.ID) {
			t.Errorf("Ann's question opened Bob's too (asking %v, ready %v)", tabA.T.Asking(bob.ID), tabA.T.ConfirmReady(bob.ID))
		}
		tabA.T.Revoke(bob) // Yes in Bob's row, which asks nothing
		if r, _ := tabA.find("bob.bb2@example.com"); r.Status == betaport.TesterRevoked {
			t.Errorf("a Yes in Bob's row, which asked nothing, shows Bob revoked")
		}
	})
	tabB.Do(func() {
		if tabB.T.Asking(ann.ID) || tabB.T.ConfirmReady(ann.ID) {
			t.Errorf("tab A's question shows in tab B")
		}
		tabB.T.Revoke(ann) // a Yes in the tab that asked nothing
		tabB.T.Ask(ann)
		tabB.T.Revoke(ann) // and one at once in the tab that just asked
		if tabB.T.ConfirmReady(ann.ID) {
			t.Errorf("tab B's new question takes its Yes at once (tab A's delay has passed, not its own)")
		}
		if r, _ := tabB.find("ann.bb2@example.com"); r.Status == betaport.TesterRevoked {
			t.Errorf("a Yes in tab B shows Ann revoked")
		}
	})
	tabA.Do(func() {
		tabA.T.Keep(ann)
		if tabA.T.Asking(ann.ID) || tabA.T.ConfirmReady(ann.ID) {
			t.Errorf("after Keep the question is open (%v) or takes a Yes (%v)", tabA.T.Asking(ann.ID), tabA.T.ConfirmReady(ann.ID))
		}
		if tabA.lastFocus() != (bbtbFocusAt{model.TesterFocusRevoke, ann.ID}) {
			t.Errorf("after Keep the focus is on %+v, want Ann's Revoke", tabA.lastFocus())
		}
		tabA.T.Revoke(ann) // late Yes, after Keep
		if r, _ := tabA.find("ann.bb2@example.com"); r.Status == betaport.TesterRevoked {
			t.Errorf("a Yes after Keep shows Ann revoked")
		}
		tabA.T.Ask(ann) // asked anew: its own delay
		if tabA.T.ConfirmReady(ann.ID) {
			t.Errorf("asked again after Keep, the question takes its Yes at once")
		}
		tabA.T.Revoke(ann)
	})
	tabA.Do(func() {})
	tabB.Do(func() {})
	for _, e := range []string{"ann.bb2@example.com", "bob.bb2@example.com"} {
		if st := bbtbStoredTester(t, m, ext, e); st.Status == betaport.TesterRevoked {
			t.Errorf("%s was revoked by a Yes that should do nothing", e)
		}
	}
	n := w.count(func(method string, u *url.URL) bool {
		return method == http.MethodDelete && strings.HasPrefix(u.Path, api.TestersPath(ext)+"/")
	})
	if n != 0 {
		t.Errorf("Yeses that should do nothing sent %d revokes", n)
	}
}

// ---------------------------------------------------------------------
// Keys.

// Revoke a key: a Yes at once, a Yes just before the delay ends, a Yes on
// another key, a Yes in another tab, and a late Yes after Keep revoke
// nothing; the Yes after the delay revokes the key asked about, once.
func TestBB2KeysRevokeTakesNoEarlyOrMisplacedYes(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	wire := bbsWireOf(c)
	ext := d.Extensions[2]
	p := bbsOpen(t, c)
	k, spy := bbsOpenKeys(t, p, ext.ID)
	bbsCreateKey(t, p, k, spy, "CI")
	bbsCreateKey(t, p, k, spy, "laptop")
	keys := bbsKeys(t, c, ext.ID)
	ci, laptop := bbsKeyLabelled(t, keys, "CI"), bbsKeyLabelled(t, keys, "laptop")
	delCI, delLaptop := api.KeyPath(ext.ID, ci.ID), api.KeyPath(ext.ID, laptop.ID)

	p.Do(func() {
		k.Ask(ci)
		k.Revoke(ci) // double-click
		if !k.Asking(ci.ID) || k.ConfirmReady(ci.ID) {
			t.Errorf("after Revoke and a Yes at once: asking %v, ready %v; want the question open, not taking its Yes", k.Asking(ci.ID), k.ConfirmReady(ci.ID))
		}
		if f, id := bbsLastKeysFocus(spy); f != model.KeysFocusConfirm || id != ci.ID {
			t.Errorf("asked, the focus is on %d of key %d, want Yes of %d", f, id, ci.ID)
		}
	})
	p.Clock.Advance(bb2JustBefore)
	p.Do(func() {
		if k.ConfirmReady(ci.ID) {
			t.Errorf("the key's question takes its Yes before ConfirmDelay")
		}
		k.Revoke(ci)
		k.Ask(ci) // Revoke pressed again: the delay is not restarted
		k.Revoke(laptop)
		if k.ConfirmReady(laptop.ID) || k.Asking(laptop.ID) {
			t.Errorf("laptop's question is open (%v) or ready (%v) though nobody asked", k.Asking(laptop.ID), k.ConfirmReady(laptop.ID))
		}
	})
	p.Settle()
	if n1, n2 := wire.Count(http.MethodDelete, delCI), wire.Count(http.MethodDelete, delLaptop); n1+n2 != 0 {
		t.Fatalf("early or misplaced Yeses sent %d revokes of CI and %d of laptop", n1, n2)
	}
	p.Clock.Advance(time.Millisecond)
	p.Do(func() {
		if !k.ConfirmReady(ci.ID) {
			t.Errorf("ConfirmDelay after the question showed, its Yes takes no press: pressing Revoke again restarted the delay")
		}
		k.Revoke(ci)
	})
	p.Wait("CI shown revoked", func() bool { return k.Shown(ci).RevokedAt != nil || k.Err != nil })
	p.Settle()
	if n := wire.Count(http.MethodDelete, delCI); n != 1 {
		t.Errorf("%d revokes of CI sent, want 1", n)
	}

	// Keep, then a late Yes.
	p.Do(func() { k.Ask(laptop) })
	p.Clock.Advance(model.ConfirmDelay)
	p.Do(func() {
		k.Keep(laptop)
		k.Revoke(laptop)
		if k.Shown(laptop).RevokedAt != nil {
			t.Errorf("a Yes after Keep shows laptop revoked")
		}
		k.Ask(laptop)
		if k.ConfirmReady(laptop.ID) {
			t.Errorf("asked again after Keep, the question takes its Yes at once")
		}
	})
	// Another tab: it asked nothing, then asks and presses Yes at once.
	tabB := bbsOpen(t, c)
	kb, _ := bbsOpenKeys(t, tabB, ext.ID)
	p.Clock.Advance(model.ConfirmDelay) // tab A's question is ready
	tabB.Do(func() {
		kb.Revoke(laptop)
		kb.Ask(laptop)
		if kb.ConfirmReady(laptop.ID) {
			t.Errorf("tab B's new question takes its Yes at once")
		}
		kb.Revoke(laptop)
	})
	p.Do(func() { k.Keep(laptop) })
	p.Settle()
	tabB.Settle()
	if n := wire.Count(http.MethodDelete, delLaptop); n != 0 {
		t.Errorf("late or other tabs' Yeses sent %d revokes of laptop", n)
	}
	keys = bbsKeys(t, c, ext.ID)
	if bbsKeyLabelled(t, keys, "laptop").RevokedAt != nil {
		t.Errorf("laptop was revoked")
	}
	if bbsKeyLabelled(t, keys, "CI").RevokedAt == nil {
		t.Errorf("CI was not revoked")
	}
}

// ---------------------------------------------------------------------
// Webhooks.

// Delete a webhook: the same clumsy presses as the keys'. Public names are
// taken without being resolved (nothing is delivered here).
func TestBB2WebhooksDeleteTakesNoEarlyOrMisplacedYes(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	wire := bbsWireOf(c)
	ext := d.Extensions[2]
	p := bbsOpen(t, c)
	w, spy := bbsOpenWebhooks(t, p, ext.ID)
	one := bbsAddHook(t, p, w, "https://hooks.example.com/bb2/one")
	two := bbsAddHook(t, p, w, "https://hooks.example.com/bb2/two")
	delOne, delTwo := api.WebhookPath(ext.ID, one), api.WebhookPath(ext.ID, two)

	p.Do(func() {
		w.AskDelete(one)
		w.Delete(one) // double-click
		h := w.Hook(one)
		if h == nil || !h.Asking || h.ConfirmReady || h.Deleting {
			t.Errorf("after Delete and a Yes at once the webhook is %+v; want its question open, not ready, not deleting", h)
		}
		if f, id := bbsLastHooksFocus(spy); f != model.WebhooksFocusConfirm || id != one {
			t.Errorf("asked, the focus is on %d of %d, want Yes of %d", f, id, one)
		}
	})
	p.Clock.Advance(bb2JustBefore)
	p.Do(func() {
		if h := w.Hook(one); h == nil || h.ConfirmReady {
			t.Errorf("the webhook's question takes its Yes before ConfirmDelay")
		}
		w.Delete(one)
		w.AskDelete(one) // Delete pressed again: the delay is not restarted
		w.Delete(two)    // Yes on the other webhook, which asks nothing
		if h := w.Hook(two); h == nil || h.Asking || h.ConfirmReady || h.Deleting {
			t.Errorf("the other webhook is %+v after a Yes on it that should do nothing", h)
		}
	})
	p.Settle()
	if n1, n2 := wire.Count(http.MethodDelete, delOne), wire.Count(http.MethodDelete, delTwo); n1+n2 != 0 {
		t.Fatalf("early or misplaced Yeses sent %d deletes of one and %d of two", n1, n2)
	}
	p.Clock.Advance(time.Millisecond)
	p.Do(func() {
		if h := w.Hook(one); h == nil || !h.ConfirmReady {
			t.Errorf("ConfirmDelay after the question showed, its Yes takes no press: pressing Delete again restarted the delay")
		}
		w.Delete(one)
	})
	p.Wait("one gone from the page", func() bool { return w.Hook(one) == nil })
	p.Settle()
	if n := wire.Count(http.MethodDelete, delOne); n != 1 {
		t.Errorf("%d deletes of one sent, want 1", n)
	}

	// Keep, then a late Yes.
	p.Do(func() { w.AskDelete(two) })
	p.Clock.Advance(model.ConfirmDelay)
	p.Do(func() {
		w.Keep(two)
		w.Delete(two)
		if h := w.Hook(two); h == nil || h.Asking || h.Deleting {
			t.Errorf("a Yes after Keep: the webhook is %+v", h)
		}
		w.AskDelete(two)
		if h := w.Hook(two); h == nil || h.ConfirmReady {
			t.Errorf("asked again after Keep, the question takes its Yes at once")
		}
	})
	p.Clock.Advance(model.ConfirmDelay) // tab A's question is ready
	tabB := bbsOpen(t, c)
	wb, _ := bbsOpenWebhooks(t, tabB, ext.ID)
	tabB.Do(func() {
		if wb.Hook(two) == nil {
			t.Errorf("tab B does not list the webhook")
			return
		}
		wb.Delete(two) // a Yes in a tab that asked nothing
		wb.AskDelete(two)
		if h := wb.Hook(two); h.ConfirmReady {
			t.Errorf("tab B's new question takes its Yes at once")
		}
		wb.Delete(two)
	})
	p.Do(func() { w.Keep(two) })
	p.Settle()
	tabB.Settle()
	if n := wire.Count(http.MethodDelete, delTwo); n != 0 {
		t.Errorf("late or other tabs' Yeses sent %d deletes of two", n)
	}
	hooks, raw := bbsHooks(t, c, ext.ID)
	if len(hooks) != 1 || hooks[0].ID != two {
		t.Errorf("the service lists %s, want only webhook %d", raw, two)
	}
}

// bb2PrivateURLs are loopback, private and link-local addresses, spelt as
// a person (or an attacker) might.
var bb2PrivateURLs = []string{
	"http://127.0.0.1/hook",
	"http://127.0.0.1:8080/hook",
	"http://[::ffff:127.0.0.1]/hook",
	"http://[::1]:9000/hook",
	"http://[0:0:0:0:0:0:0:1]/hook",
	"http://localhost/hook",
	"http://LOCALHOST./hook",
	"https://LocalHost:8443/hook",
	"http://10.0.0.1/hook",
	"http://172.16.5.4/hook",
	"http://192.168.1.1/hook",
	"http://[fd00::1]/hook",
	"http://169.254.169.254/latest/meta-data/",
	"http://[fe80::1%25eth0]/hook",
	"http://[fe80::1]/hook",
	"http://[::ffff:10.0.0.1]/hook",
	"http://0.0.0.0/hook",
}

// bb2OddIPv4URLs are IPv4 literals in the forms browsers, curl and
// inet_aton take (127.1, hex, one number, octal): all loopback.
var bb2OddIPv4URLs = []string{"http://127.1/hook", "http://0x7f000001/hook", "http://2130706433/hook", "http://0177.0.0.1/hook"}

// bb2WantPageRefuses adds each of urls through the page and checks it is
// refused on the URL field, naming the setting, the field kept.
func bb2WantPageRefuses(t *testing.T, p *bbsPage, w *model.Webhooks, urls []string) {
	t.Helper()
	for _, u := range urls {
		p.Do(func() {
			w.SetURL(u)
			w.Add()
		})
		p.Wait("the add of "+u+" answered", func() bool { return !w.Busy })
		p.Do(func() {
			pr, ok := api.AsProblem(w.CreateErr)
			if !ok || pr.Status != http.StatusBadRequest || pr.Param != "url" {
				t.Errorf("%s: added with error %v; want a 400 on the url field", u, w.CreateErr)
				return
			}
			if !strings.Contains(u, "@") && !strings.Contains(pr.Detail, "--webhooks-allow-private") {
				t.Errorf("%s: refused with %q, which does not name --webhooks-allow-private", u, pr.Detail)
			}
			if !w.URLInvalid {
				t.Errorf("%s: refused, but the page does not mark the URL field invalid", u)
			}
			if w.URL != u {
				t.Errorf("%s: refused, the field now holds %q; want what was typed kept", u, w.URL)
			}
		})
	}
}

// The unusual IPv4 spellings of loopback are refused by the page too.
func TestBB2WebhooksOddIPv4RefusedByThePage(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	ext := d.Extensions[2]
	p := bbsOpen(t, c)
	w, _ := bbsOpenWebhooks(t, p, ext.ID)
	bb2WantPageRefuses(t, p, w, bb2OddIPv4URLs)
	if hooks, raw := bbsHooks(t, c, ext.ID); len(hooks) != 0 {
		t.Errorf("refused webhooks were stored: %s", raw)
	}
}

// Without --webhooks-allow-private, the page refuses webhooks at private
// addresses, however spelt: the field says why and names the setting,
// keeps what was typed, and nothing is stored. A public name that merely
// contains "localhost" is taken.
func TestBB2WebhooksPrivateSpellingsRefusedByThePage(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	ext := d.Extensions[2]
	p := bbsOpen(t, c)
	w, _ := bbsOpenWebhooks(t, p, ext.ID)
	bb2WantPageRefuses(t, p, w, append(append([]string(nil), bb2PrivateURLs...), "http://user:pass@127.0.0.1/hook", "http://hooks.example.com@10.0.0.1/hook"))
	if hooks, raw := bbsHooks(t, c, ext.ID); len(hooks) != 0 {
		t.Errorf("refused webhooks were stored: %s", raw)
	}
	for _, u := range []string{"https://localhost.example.com/hook", "https://hooks.example.com:8443/a?b=c"} {
		p.Do(func() {
			w.SetURL(u)
			w.Add()
		})
		p.Wait("the add of "+u+" answered", func() bool { return !w.Busy })
		p.Do(func() {
			if w.URLInvalid || w.CreateErr != nil {
				t.Errorf("the public %s was refused: %v", u, w.CreateErr)
			}
		})
	}
	hooks, raw := bbsHooks(t, c, ext.ID)
	for _, want := range []string{"https://localhost.example.com/hook", "https://hooks.example.com:8443/a?b=c"} {
		found := false
		for _, h := range hooks {
			found = found || h.URL == want
		}
		if !found {
			t.Errorf("the public %s is not stored: %s", want, raw)
		}
	}
}

// A webhook on a private address stored before the service refused them
// (or since) is refused at delivery time: its event fails after one
// attempt, the receiver is never called, and no retry is planned; the
// page shows it failed.
func TestBB2WebhooksDeliveryRefusedAtDialFailsAtOnce(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	ext := d.Extensions[2]
	recv := bbsNewReceiver(t, http.StatusOK, "must not be reached")
	port := recv.URL[strings.LastIndex(recv.URL, ":")+1:]
	p := bbsOpen(t, c)
	var ids []int64
	for _, u := range []string{recv.URL + "/old", "http://localhost:" + port + "/old"} {
		ids = append(ids, storetest.MustWebhook(t, m.Store, ext.ID, u).ID)
	}
	w, _ := bbsOpenWebhooks(t, p, ext.ID)
	for _, id := range ids {
		var listed bool
		p.Do(func() {
			if listed = w.Hook(id) != nil; listed {
				w.Test(id)
			}
		})
		if !listed {
			t.Fatalf("the page does not list the stored webhook %d", id)
		}
		bbsWaitStored(t, p, m, id, "the ping's outcome", func(ds []*betaport.WebhookDelivery) bool {
			return len(ds) == 1 && ds[0].State != betaport.DeliveryPending
		})
		ds := bbsStoredDeliveries(t, m, id)
		if dl := ds[0]; dl.State != betaport.DeliveryFailed || dl.Attempts != 1 || dl.NextAttemptAt != nil || dl.LastError == "" {
			t.Errorf("webhook %d: the refused delivery is %s after %d attempts (next %v, error %q); want failed after 1, no retry, why", id, dl.State, dl.Attempts, dl.NextAttemptAt, dl.LastError)
		}
		bbsPollUntil(t, p, model.WebhookPoll, "the ping failed", func() bool {
			h := w.Hook(id)
			return h != nil && len(h.Deliveries) == 1 && h.Deliveries[0].State == betaport.DeliveryFailed
		})
	}
	if n := recv.hits.Load(); n != 0 {
		t.Errorf("the private receiver was called %d times", n)
	}
}
