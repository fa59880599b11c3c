package http_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/storetest"
)

// adoptionPages reads every page of an extension's adoption list with the
// given days and limit, as "hours-ago version checks" lines (hours counted
// back from now's hour).
func (e *env) adoptionPages(t *testing.T, ext *betaport.Extension, admin http.Header, now time.Time, days, limit int) []string {
	t.Helper()
	var out []string
	cursor := ""
	for range 100 {
		resp, body := e.do(t, "GET", api.AdoptionPagePath(ext.ID, days, limit, cursor), admin)
		var page api.Page[betaport.AdoptionCount]
		if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil {
			t.Fatalf("GET adoption = %d %s", resp.StatusCode, body)
		}
		if len(page.Data) > limit || (page.NextCursor != "" && len(page.Data) != limit) {
			t.Fatalf("a page of limit %d held %d rows, next cursor %q", limit, len(page.Data), page.NextCursor)
		}
		for _, c := range page.Data {
			ago := now.Truncate(time.Hour).Sub(c.Hour) / time.Hour
			out = append(out, fmt.Sprintf("-%dh %s %d", ago, c.Version, c.Checks))
		}
		if page.NextCursor == "" {
			return out
		}
		cursor = page.NextCursor
	}
	t.Fatal("the adoption pages never ended")
	return nil
}

// Chromium's update checks are counted per hour and reported version, and
// the admins' adoption list pages through them, newest hour first.
func TestAdoptionCountsUpdateChecks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Counted")
	admin := e.adminOf(t, team)
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		e.publish(t, ext, v)
	}
	u := e.updates(t, ext, admin)
	otherExt := storetest.MustExtension(t, e.DB, team, "Other")
	otherU := e.updates(t, otherExt, admin)

	// The checks come at hours the test chooses: now, 2 hours and 26
	// hours ago.
	now := time.Now().UTC()
	var clock atomic.Int64
	e.App.Publish.Adoption.Now = func() time.Time { return time.Unix(0, clock.Load()) }
	at := func(ago time.Duration) { clock.Store(now.Add(-ago).UnixNano()) }
	check := func(version string, n int) {
		t.Helper()
		for range n {
			if status, _ := checkUpdate(t, u.UpdateURL, u.ChromeID, version); status != 200 {
				t.Fatalf("update check of %s answered %d", version, status)
			}
		}
	}
	at(26 * time.Hour)
	check("1.0.0", 3)
	at(2 * time.Hour)
	check("1.0.0", 2)
	check("1.1.0", 1)
	at(0)
	check("1.2.0", 3)
	check("1.1.0", 1)
	check("9.9.9", 1) // never served: "other"
	check("", 1)      // no version: not counted
	// Opened by hand, with no x: not counted.
	if resp, _ := get(t, u.UpdateURL); resp.StatusCode != 200 {
		t.Fatalf("the feed opened by hand answered %d", resp.StatusCode)
	}
	// Another extension's check on this feed is not ours to count; a
	// request listing ours and another counts ours once.
	x := func(id, v string) string { return url.QueryEscape("id=" + id + "&v=" + v + "&uc") }
	get(t, u.UpdateURL+"?x="+x(otherU.ChromeID, "1.0.0"))
	get(t, u.UpdateURL+"?x="+x(u.ChromeID, "1.2.0")+"&x="+x(otherU.ChromeID, "1.2.0"))

	want := []string{"-0h 1.1.0 1", "-0h 1.2.0 4", "-0h other 1", "-2h 1.0.0 2", "-2h 1.1.0 1", "-26h 1.0.0 3"}
	for _, limit := range []int{1, 2, 4, 100} {
		if got := e.adoptionPages(t, ext, admin, now, 7, limit); strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Fatalf("pages of %d:\n got %q\nwant %q", limit, got, want)
		}
	}
	// days=1 is the hour under way and the 23 before it.
	if got := e.adoptionPages(t, ext, admin, now, 1, 100); strings.Join(got, ", ") != strings.Join(want[:5], ", ") {
		t.Fatalf("days=1: %q, want %q", got, want[:5])
	}
	// The defaults: 7 days, up to 100 rows, one page.
	resp, body := e.do(t, "GET", api.AdoptionPath(ext.ID), admin)
	var page api.Page[betaport.AdoptionCount]
	if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil || len(page.Data) != len(want) || page.NextCursor != "" {
		t.Fatalf("GET adoption with no parameters = %d %s", resp.StatusCode, body)
	}
	// A check after a read adds to the row the read wrote.
	check("1.2.0", 1)
	if got := e.adoptionPages(t, ext, admin, now, 7, 100); got[1] != "-0h 1.2.0 5" {
		t.Fatalf("after one more check: %q", got)
	}
	if got := e.adoptionPages(t, otherExt, admin, now, 7, 100); len(got) != 0 {
		t.Fatalf("the other extension was never checked on its own feed: %q", got)
	}
}

// Bad days, limit and cursor are 400 problems naming the parameter; only
// the extension's admins may read the counts.
func TestAdoptionRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Counted")
	admin := e.adminOf(t, team)
	e.publish(t, ext, "1.0.0")
	u := e.updates(t, ext, admin)
	for _, v := range []string{"1.0.0", "0.9.0"} {
		checkUpdate(t, u.UpdateURL, u.ChromeID, v)
	}
	other := storetest.MustExtension(t, e.DB, team, "Other")
	first := func(id int64) string {
		resp, body := e.do(t, "GET", api.AdoptionPagePath(id, 7, 1, ""), admin)
		var page api.Page[betaport.AdoptionCount]
		if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil {
			t.Fatalf("GET adoption = %d %s", resp.StatusCode, body)
		}
		return page.NextCursor
	}
	cursor := first(ext.ID)
	if cursor == "" {
		t.Fatal("two rows in pages of one gave no next cursor")
	}
	base := api.AdoptionPath(ext.ID)
	for _, c := range []struct{ query, param string }{
		{"days=0", "days"}, {"days=91", "days"}, {"days=seven", "days"}, {"days=", "days"}, {"days=1.5", "days"},
		{"limit=0", "limit"}, {"limit=501", "limit"}, {"limit=-1", "limit"}, {"limit=x", "limit"},
		{"cursor=", "cursor"}, {"cursor=junk", "cursor"}, {"cursor=" + url.QueryEscape(cursor+"x"), "cursor"},
		// A cursor whose position was changed.
		{"cursor=" + url.QueryEscape(strings.Replace(cursor, ".", "0.", 1)), "cursor"},
	} {
		resp, body := e.do(t, "GET", base+"?"+c.query, admin)
		p := wantProblem(t, resp, body, 400, api.ProblemBadRequest)
		if p.Param != c.param {
			t.Fatalf("?%s: param %q, want %q", c.query, p.Param, c.param)
		}
	}
	// A cursor is bound to its extension's list.
	resp, body := e.do(t, "GET", api.AdoptionPath(other.ID)+"?cursor="+url.QueryEscape(cursor), admin)
	if p := wantProblem(t, resp, body, 400, api.ProblemBadRequest); p.Param != "cursor" {
		t.Fatalf("another list's cursor: %+v", p)
	}

	tester, _ := e.testerOf(t, ext, betaport.TesterActive)
	otherAdmin := e.adminOf(t, storetest.MustTeam(t, e.DB, betaport.PlanProfessional))
	for _, who := range []struct {
		name   string
		header http.Header
		status int
	}{
		{"no session", http.Header{}, 401},
		{"a tester of the extension", e.cookie(t, betaport.Session{TesterID: tester.ID}), 403},
		{"another team's admin", otherAdmin, 404},
	} {
		resp, body := e.do(t, "GET", base, who.header)
		if resp.StatusCode != who.status || resp.Header.Get("Content-Type") != api.ProblemContentType || strings.Contains(string(body), "1.0.0") {
			t.Fatalf("%s: %d %s, want a %d problem", who.name, resp.StatusCode, body, who.status)
		}
	}
}
