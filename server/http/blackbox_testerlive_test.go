package http_test

// Black-box tests of issue 27, item 4 ("who runs what", live):
//
//   - GET …/adoption?count=testers counts, per UTC day and version, the
//     distinct testers whose own copy (their personal update URL) checked
//     that day, under the version of their last check that day;
//   - the event stream sends a "testers" event (the extension's testers
//     revision R) on connect and on every change of the testers, and the
//     JSON answer of …/events carries it;
//   - the testers pages and the installs count carry "revision": R.
//
// Written from the contract and the wire types only, not from the
// implementation. The clock of the update checks is the one the harness
// offers (e.App.Publish.Adoption.Now, as TestAdoptionCountsUpdateChecks
// uses it). Built on newEnv (through newBBTUWorld), so they run on (SQLite,
// files) here and on (PostgreSQL, S3) through TestOnPostgresAndS3. JSON is
// decoded into this file's own structs, so that a field missing from an
// answer shows as missing rather than as 0.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	bphttp "github.com/betaport/betaport/server/http"
)

// bbtlWait is how long a test waits for something the service must do.
const bbtlWait = 30 * time.Second

// ------------------------------------------------------------ the world

// bbtlWorld is a bbtuWorld (one extension, its admin, its shared update
// URL) whose update checks are counted at the time the test sets.
type bbtlWorld struct {
	*bbtuWorld
	clock *atomic.Int64 // Unix nanoseconds the checks are counted at; 0: the real time
}

func newBBTLWorld(t *testing.T) *bbtlWorld {
	t.Helper()
	w := &bbtlWorld{bbtuWorld: newBBTUWorld(t), clock: new(atomic.Int64)}
	w.e.App.EventPoll = 20 * time.Millisecond
	clock := w.clock
	w.e.App.Publish.Adoption.Now = func() time.Time {
		if n := clock.Load(); n != 0 {
			return time.Unix(0, n).UTC()
		}
		return time.Now()
	}
	return w
}

// at makes the checks that follow happen at tm.
func (w *bbtlWorld) at(tm time.Time) { w.clock.Store(tm.UnixNano()) }

// sibling is another team's extension on the same service, with a
// published bundle, its admin and its shared update URL; its checks are
// counted on w's clock.
func (w *bbtlWorld) sibling(t *testing.T, version string) *bbtlWorld {
	t.Helper()
	p := newPipeline(t, w.e, betaport.PlanProfessional)
	team := mustTeam(t, w.e, p.ext)
	admin := w.e.adminOf(t, team)
	upd := bbtuUpdates(t, w.e, p.ext, admin)
	o := &bbtlWorld{bbtuWorld: &bbtuWorld{e: w.e, p: p, team: team, admin: admin, upd: upd,
		prefix: upd.UpdateURL[:strings.LastIndex(upd.UpdateURL, "/")+1]}, clock: w.clock}
	o.publish(t, version)
	return o
}

func (w *bbtlWorld) id() int64 { return w.p.ext.ID }

// bbtlTester is an active tester and the update URL their installed copy
// checks with.
type bbtlTester struct {
	*bbtuTester
	url string
}

// tester invites a tester through the API, opens their link, and reads
// their update URL from their Linux policy file.
func (w *bbtlWorld) tester(t *testing.T, name string) *bbtlTester {
	t.Helper()
	tt := w.invite(t, name)
	return &bbtlTester{tt, w.policyURL(t, tt.session)}
}

// policyURL is the update URL the Linux policy file gives who.
func (w *bbtlWorld) policyURL(t *testing.T, who http.Header) string {
	t.Helper()
	resp, body := w.e.do(t, "GET", api.ExtensionPath(w.id())+"/policy/linux", who)
	var pol struct {
		ExtensionSettings map[string]struct {
			UpdateURL string `json:"update_url"`
		} `json:"ExtensionSettings"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &pol) != nil {
		t.Fatalf("the Linux policy = %d %.300s", resp.StatusCode, body)
	}
	u := pol.ExtensionSettings[w.upd.ChromeID].UpdateURL
	if !strings.HasPrefix(u, w.prefix) || u == w.upd.UpdateURL || strings.Contains(strings.TrimPrefix(u, w.prefix), "/") {
		t.Fatalf("the tester's Linux policy names the update URL %q: want %s{their token}, not the shared %s", u, w.prefix, w.upd.UpdateURL)
	}
	return u
}

// check is an update check of the extension at version through
// updateURL, as Chromium's updater makes it; it must be answered.
func (w *bbtlWorld) check(t *testing.T, what, updateURL, version string) {
	t.Helper()
	st, g, body := bbtuCheck(t, w.e, updateURL, bbtuX(w.upd.ChromeID, version))
	if st != 200 || len(g.Apps) != 1 || g.Apps[0].AppID != w.upd.ChromeID || g.Apps[0].Status != "ok" {
		t.Fatalf("%s: the check at %s = %d %.300s", what, version, st, body)
	}
}

// get reads path as who and wants 200.
func (w *bbtlWorld) get(t *testing.T, what, path string, who http.Header) []byte {
	t.Helper()
	resp, body := w.e.do(t, "GET", path, who)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: GET %s = %d %.300s", what, path, resp.StatusCode, body)
	}
	return body
}

// ------------------------------------------------------------ adoption

type bbtlRow struct {
	Hour    time.Time `json:"hour"`
	Version string    `json:"version"`
	Testers *int64    `json:"testers"`
	Checks  *int64    `json:"checks"`
}

type bbtlAdoptionPage struct {
	Data       []bbtlRow `json:"data"`
	NextCursor string    `json:"nextCursor"`
}

var bbtlHourField = regexp.MustCompile(`"hour"\s*:\s*"([^"]*)"`)

func bbtlAdoption(t *testing.T, e *env, extID int64, who http.Header, query string) (bbtlAdoptionPage, []byte) {
	t.Helper()
	path := api.AdoptionPath(extID)
	if query != "" {
		path += "?" + query
	}
	resp, body := e.do(t, "GET", path, who)
	var p bbtlAdoptionPage
	if resp.StatusCode != 200 || json.Unmarshal(body, &p) != nil || p.Data == nil {
		t.Fatalf("GET %s = %d %.500s", path, resp.StatusCode, body)
	}
	return p, body
}

func bbtlDay(tm time.Time) string { return tm.UTC().Format("2006-01-02") }

// testerCounts reads every page of the adoption list counting testers
// (days 0: the default), checks each row's and page's shape and the
// order, and returns the rows as "YYYY-MM-DD version testers".
func (w *bbtlWorld) testerCounts(t *testing.T, days, limit int) []string {
	t.Helper()
	var out []string
	var prev *bbtlRow
	cursor := ""
	for range 200 {
		q := url.Values{"count": {"testers"}, "limit": {strconv.Itoa(limit)}}
		if days > 0 {
			q.Set("days", strconv.Itoa(days))
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		p, body := bbtlAdoption(t, w.e, w.id(), w.admin, q.Encode())
		if len(p.Data) > limit || (p.NextCursor != "" && len(p.Data) != limit) {
			t.Fatalf("count=testers, limit %d: a page of %d rows with next cursor %q", limit, len(p.Data), p.NextCursor)
		}
		for _, m := range bbtlHourField.FindAllStringSubmatch(string(body), -1) {
			if !strings.HasSuffix(m[1], "T00:00:00Z") {
				t.Fatalf("count=testers: a row's hour is %q, want the 00:00:00Z of a UTC day: %s", m[1], body)
			}
		}
		for _, r := range p.Data {
			if r.Testers == nil || *r.Testers < 1 || r.Checks != nil || r.Version == "" {
				t.Fatalf("count=testers: row %+v is not {hour, version, testers ≥ 1}: %s", r, body)
			}
			if !r.Hour.Equal(r.Hour.Truncate(24 * time.Hour)) {
				t.Fatalf("count=testers: row hour %v is not the start of a UTC day", r.Hour)
			}
			if prev != nil && !(r.Hour.Before(prev.Hour) || (r.Hour.Equal(prev.Hour) && r.Version > prev.Version)) {
				t.Fatalf("count=testers: row %s %s after %s %s: want newest day first, then version in byte order, no row twice",
					bbtlDay(r.Hour), r.Version, bbtlDay(prev.Hour), prev.Version)
			}
			row := r
			prev = &row
			out = append(out, fmt.Sprintf("%s %s %d", bbtlDay(r.Hour), r.Version, *r.Testers))
		}
		if p.NextCursor == "" {
			return out
		}
		cursor = p.NextCursor
	}
	t.Fatal("count=testers: the pages never ended")
	return nil
}

// wantTesterCounts checks the rows of count=testers over days, the same in
// pages of each limit.
func (w *bbtlWorld) wantTesterCounts(t *testing.T, what string, days int, want []string, limits ...int) {
	t.Helper()
	if len(limits) == 0 {
		limits = []int{api.AdoptionMaxLimit}
	}
	for _, limit := range limits {
		got := w.testerCounts(t, days, limit)
		if strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Fatalf("%s: count=testers&days=%d in pages of %d:\n got %q\nwant %q", what, days, limit, got, want)
		}
	}
}

// checkCounts reads the hourly list (one page; query adds to it) and
// returns "YYYY-MM-DDTHH version" → checks.
func (w *bbtlWorld) checkCounts(t *testing.T, query string) (map[string]int64, []byte) {
	t.Helper()
	q := "days=90&limit=500"
	if query != "" {
		q += "&" + query
	}
	p, body := bbtlAdoption(t, w.e, w.id(), w.admin, q)
	if p.NextCursor != "" {
		t.Fatalf("?%s: more than 500 rows", q)
	}
	out := map[string]int64{}
	for _, r := range p.Data {
		if r.Checks == nil || *r.Checks < 1 || r.Testers != nil || !r.Hour.Equal(r.Hour.Truncate(time.Hour)) {
			t.Fatalf("?%s: row %+v is not {hour, version, checks ≥ 1}: %s", q, r, body)
		}
		out[r.Hour.UTC().Format("2006-01-02T15")+" "+r.Version] = *r.Checks
	}
	return out, body
}

// ------------------------------------------------------------ events

type bbtlEvent struct {
	Name   string
	Data   string
	Fields map[string]json.RawMessage
}

// int is an integer field of the event's data, which must be there.
func (ev bbtlEvent) int(t *testing.T, what, key string) int64 {
	t.Helper()
	raw, ok := ev.Fields[key]
	var n int64
	if !ok || json.Unmarshal(raw, &n) != nil {
		t.Fatalf("%s: the %q event's data %s has no integer %q", what, ev.Name, ev.Data, key)
	}
	return n
}

type bbtlStream struct {
	events <-chan bbtlEvent
}

// bbtlOpenStream opens base's event stream of extension extID as who and
// reads its events as they come (the event name and data of each, as the
// server-sent events format defines them).
func bbtlOpenStream(t *testing.T, base string, extID int64, who http.Header) *bbtlStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", base+api.EventsPath(extID), nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range who {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 2000))
		resp.Body.Close()
		cancel()
		t.Fatalf("the event stream = %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	events := make(chan bbtlEvent, 4096)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		defer close(events)
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		name, data := "", []string(nil)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			switch {
			case line == "":
				if data != nil {
					ev := bbtlEvent{Name: name, Data: strings.Join(data, "\n")}
					if ev.Name == "" {
						ev.Name = "message"
					}
					json.Unmarshal([]byte(ev.Data), &ev.Fields)
					if ev.Name == "channels" || ev.Name == "feedback" {
						// Issue 31's channels and issue 32's feedback
						// events: these tests follow the bundles and the
						// testers, as a page that listens for those two
						// does.
						name, data = "", nil
						continue
					}
					select {
					case events <- ev:
					case <-ctx.Done():
						return
					}
				}
				name, data = "", nil
			case strings.HasPrefix(line, ":"): // a comment
			default:
				field, value, _ := strings.Cut(line, ":")
				value = strings.TrimPrefix(value, " ")
				switch field {
				case "event":
					name = value
				case "data":
					data = append(data, value)
				}
			}
		}
	}()
	return &bbtlStream{events: events}
}

func (s *bbtlStream) next(t *testing.T, what string) bbtlEvent {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatalf("%s: the event stream ended", what)
		}
		return ev
	case <-time.After(bbtlWait):
		t.Fatalf("%s: no event within %s", what, bbtlWait)
	}
	return bbtlEvent{}
}

// wantTesters wants the next event to be a testers event with a revision
// above after, and returns it.
func (s *bbtlStream) wantTesters(t *testing.T, what string, after int64) int64 {
	t.Helper()
	ev := s.next(t, what)
	if ev.Name != "testers" {
		t.Fatalf("%s: the next event is %q %s, want a testers event", what, ev.Name, ev.Data)
	}
	r := ev.int(t, what, "testers")
	if r <= after {
		t.Fatalf("%s: a testers event with revision %d, want one above %d (R only grows, and an event is sent for a change)", what, r, after)
	}
	return r
}

// wantBundles wants the next event to be a bundles event saying current
// and last.
func (s *bbtlStream) wantBundles(t *testing.T, what string, current, last int64) {
	t.Helper()
	ev := s.next(t, what)
	if ev.Name != "bundles" {
		t.Fatalf("%s: the next event is %q %s, want a bundles event", what, ev.Name, ev.Data)
	}
	if c, l := ev.int(t, what, "currentBundle"), ev.int(t, what, "lastBundle"); c != current || l != last {
		t.Fatalf("%s: bundles event %s, want currentBundle %d and lastBundle %d", what, ev.Data, current, last)
	}
}

// until reads testers events (only: no bundles event), each above the one
// before, until one reaches target; it returns that one.
func (s *bbtlStream) until(t *testing.T, what string, after, target int64) int64 {
	t.Helper()
	r := after
	for r < target {
		r = s.wantTesters(t, fmt.Sprintf("%s (waiting for revision %d)", what, target), r)
	}
	return r
}

type bbtlRevision struct {
	CurrentBundle *int64 `json:"currentBundle"`
	LastBundle    *int64 `json:"lastBundle"`
	Testers       *int64 `json:"testers"`
}

// jsonRevision reads …/events without text/event-stream.
func bbtlJSONRevision(t *testing.T, e *env, base string, extID int64, who http.Header) (current, last, testers int64) {
	t.Helper()
	req, err := http.NewRequest("GET", base+api.EventsPath(extID), nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range who {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "identity")
	resp, body := e.roundTrip(t, req)
	var rev bbtlRevision
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || json.Unmarshal(body, &rev) != nil ||
		rev.CurrentBundle == nil || rev.LastBundle == nil || rev.Testers == nil {
		t.Fatalf("the revision as JSON = %d %q %s, want {currentBundle, lastBundle, testers}", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	return *rev.CurrentBundle, *rev.LastBundle, *rev.Testers
}

func (w *bbtlWorld) jsonRevision(t *testing.T) (current, last, testers int64) {
	t.Helper()
	return bbtlJSONRevision(t, w.e, w.e.URL, w.id(), w.admin)
}

// pageRevision reads path (a testers page or the installs count) as the
// admin and returns its "revision", which must be there.
func (w *bbtlWorld) pageRevision(t *testing.T, what, path string) (int64, []byte) {
	t.Helper()
	body := w.get(t, what, path, w.admin)
	var p struct {
		Revision *int64 `json:"revision"`
	}
	if json.Unmarshal(body, &p) != nil || p.Revision == nil {
		t.Fatalf("%s: GET %s carries no integer revision: %.400s", what, path, body)
	}
	return *p.Revision, body
}

// testersPage reads the testers list (one page of 100) as the admin:
// each tester by id, and the page's revision.
func (w *bbtlWorld) testersPage(t *testing.T, what string) (map[int64]betaport.Tester, int64) {
	t.Helper()
	rev, body := w.pageRevision(t, what, api.TestersPath(w.id())+"?limit=100")
	var p struct {
		Data       []betaport.Tester `json:"data"`
		NextCursor string            `json:"nextCursor"`
	}
	if json.Unmarshal(body, &p) != nil || p.NextCursor != "" {
		t.Fatalf("%s: the testers list %.400s", what, body)
	}
	out := map[int64]betaport.Tester{}
	for _, tt := range p.Data {
		out[tt.ID] = tt
	}
	return out, rev
}

// ------------------------------------------------------------ adoption by testers

// TestBBTLAdoptionCountsTestersPerDay: over checks on four UTC days (the
// harness's clock), count=testers counts each tester once a day under the
// version of their last check that day: duplicate checks, a mid-day
// update, requests that are no check of their copy (no x, garbage x,
// another app only), checks of the shared URL and a revoked tester's copy
// are each counted as the contract says; rows are newest day first, then
// version in byte order, the same in pages of 1, 2, 3 and 500; days bounds
// the list; the hourly list (count=checks, or no count) is unchanged.
func TestBBTLAdoptionCountsTestersPerDay(t *testing.T) {
	t.Parallel()
	w := newBBTLWorld(t)
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		w.publish(t, v)
	}
	ann, bob, cat, dan := w.tester(t, "Ann"), w.tester(t, "Bob"), w.tester(t, "Cat"), w.tester(t, "Dan")

	now := time.Now().UTC()
	today := now.Truncate(24 * time.Hour)
	d1, d2, d10 := today.AddDate(0, 0, -1), today.AddDate(0, 0, -2), today.AddDate(0, 0, -10)
	h := func(day time.Time, hour, minute int) time.Time {
		return day.Add(time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute)
	}

	// Ten days ago Dan's copy checked; then he is revoked.
	w.at(h(d10, 10, 0))
	w.check(t, "Dan, 10 days ago", dan.url, "1.0.0")
	w.wantTesterCounts(t, "after Dan's check 10 days ago", 90, []string{bbtlDay(d10) + " 1.0.0 1"})
	w.wantTesterCounts(t, "days=7 leaves out 10 days ago", 7, nil)
	if resp, body := w.e.do(t, "DELETE", api.TesterPath(w.id(), dan.id), w.admin); resp.StatusCode != 204 {
		t.Fatalf("revoking Dan = %d %s", resp.StatusCode, body)
	}

	// Two days ago: Ann checks three times at 1.0.0, then updates to
	// 1.1.0 and checks twice; Bob once at 1.0.0; the admins' copies
	// through the shared URL; then requests on Ann's URL that are no
	// check of her copy.
	w.at(h(d2, 9, 0))
	for range 3 {
		w.check(t, "Ann, twice too many", ann.url, "1.0.0")
	}
	w.at(h(d2, 9, 30))
	w.check(t, "Bob", bob.url, "1.0.0")
	w.at(h(d2, 9, 40))
	w.check(t, "an admin's copy", w.upd.UpdateURL, "1.0.0")
	w.check(t, "another admin's copy", w.upd.UpdateURL, "1.0.0")
	w.at(h(d2, 15, 0))
	w.check(t, "Ann updated", ann.url, "1.1.0")
	w.at(h(d2, 16, 0))
	w.check(t, "Ann again", ann.url, "1.1.0")
	w.at(h(d2, 17, 0))
	for _, q := range []string{"", "?x=garbage", "?x=" + url.QueryEscape(bbtuX(strings.Repeat("b", 32), "1.0.0"))} {
		if resp, body := bbtuFetch(t, w.e, "GET", ann.url+q, nil); resp.StatusCode >= 500 {
			t.Fatalf("GET Ann's URL%s = %d %s", q, resp.StatusCode, body)
		}
	}
	w.at(h(d2, 17, 30))
	w.check(t, "an admin's copy, late", w.upd.UpdateURL, "2.0.0")
	d2Rows := []string{bbtlDay(d2) + " 1.0.0 1", bbtlDay(d2) + " 1.1.0 1"}
	w.wantTesterCounts(t, "two days ago", 7, d2Rows)

	// The hourly list counts every check, the testers' and the admins'.
	checks, _ := w.checkCounts(t, "")
	for k, n := range map[string]int64{
		h(d2, 9, 0).Format("2006-01-02T15") + " 1.0.0":   6, // Ann 3, Bob 1, the shared URL 2
		h(d2, 15, 0).Format("2006-01-02T15") + " 1.1.0":  1,
		h(d2, 16, 0).Format("2006-01-02T15") + " 1.1.0":  1,
		h(d10, 10, 0).Format("2006-01-02T15") + " 1.0.0": 1,
	} {
		if checks[k] != n {
			t.Errorf("the hourly list has %d checks at %s, want %d: %v", checks[k], k, n, checks)
		}
	}

	// Yesterday: Ann at 1.1.0; Bob at 1.1.0 then 2.0.0; revoked Dan's copy
	// still runs 1.0.0; Cat's copy reports a version never served.
	w.at(h(d1, 8, 0))
	w.check(t, "Ann yesterday", ann.url, "1.1.0")
	w.at(h(d1, 8, 10))
	w.check(t, "Bob yesterday", bob.url, "1.1.0")
	w.at(h(d1, 10, 0))
	w.check(t, "revoked Dan's copy", dan.url, "1.0.0")
	w.at(h(d1, 12, 0))
	w.check(t, "Cat's copy at a version never served", cat.url, "7.7.7")
	w.at(h(d1, 20, 0))
	w.check(t, "Bob updated", bob.url, "2.0.0")
	w.at(h(d1, 20, 30))
	w.check(t, "an admin's copy yesterday", w.upd.UpdateURL, "2.0.0")
	got := w.testerCounts(t, 7, 500)
	// Cat's never-served version may be counted as itself or as "other":
	// one row either way, after 2.0.0.
	norm := strings.ReplaceAll(strings.Join(got, ", "), bbtlDay(d1)+" 7.7.7 ", bbtlDay(d1)+" other ")
	d1Rows := []string{bbtlDay(d1) + " 1.0.0 1", bbtlDay(d1) + " 1.1.0 1", bbtlDay(d1) + " 2.0.0 1", bbtlDay(d1) + " other 1"}
	if want := strings.Join(append(append([]string{}, d1Rows...), d2Rows...), ", "); norm != want {
		t.Fatalf("after yesterday's checks: count=testers\n got %q\nwant %q (Cat's row as 7.7.7 or other)", got, want)
	}

	// Today (at the test's start): Ann at 2.0.0, and the shared URL.
	w.at(now)
	w.check(t, "Ann today", ann.url, "2.0.0")
	w.check(t, "an admin's copy today", w.upd.UpdateURL, "2.0.0")
	got = w.testerCounts(t, 7, 500)
	catVersion := "other"
	for _, r := range got {
		if strings.HasPrefix(r, bbtlDay(d1)+" 7.7.7 ") {
			catVersion = "7.7.7"
		}
	}
	d1Rows[3] = bbtlDay(d1) + " " + catVersion + " 1"
	week := append(append([]string{bbtlDay(today) + " 2.0.0 1"}, d1Rows...), d2Rows...)
	w.wantTesterCounts(t, "the week", 7, week, 1, 2, 3, 500)
	w.wantTesterCounts(t, "the default days (7)", 0, week, 500)
	w.wantTesterCounts(t, "90 days", 90, append(append([]string{}, week...), bbtlDay(d10)+" 1.0.0 1"), 1, 3, 500)
	// days=1 holds today's row and nothing from two days ago or before.
	if got := w.testerCounts(t, 1, 500); len(got) == 0 || got[0] != bbtlDay(today)+" 2.0.0 1" || strings.Contains(strings.Join(got, ","), bbtlDay(d2)) {
		t.Fatalf("days=1: %q", got)
	}

	// count=checks and no count: the same hourly list.
	checked, body := w.checkCounts(t, "count=checks")
	_, plain := w.checkCounts(t, "")
	if string(body) != string(plain) {
		t.Errorf("count=checks and no count answer differently:\n%s\n%s", body, plain)
	}
	if checked[now.Format("2006-01-02T15")+" 2.0.0"] != 2 {
		t.Errorf("the hourly list has %d checks at 2.0.0 this hour, want 2: %v", checked[now.Format("2006-01-02T15")+" 2.0.0"], checked)
	}
}

// TestBBTLAdoptionTestersAtOnce: within one day (the test's start) two
// testers, duplicate checks, a mid-day update, the shared URL, a revoked
// tester's copy; each check shows in count=testers at once; a tester's
// token used on another extension counts nowhere, and each extension
// counts only its own testers.
func TestBBTLAdoptionTestersAtOnce(t *testing.T) {
	t.Parallel()
	w := newBBTLWorld(t)
	w.at(time.Now()) // one instant for all the checks: one day, one hour
	day := bbtlDay(time.Unix(0, w.clock.Load()))
	hour := time.Unix(0, w.clock.Load()).UTC().Format("2006-01-02T15")
	for _, v := range []string{"1.0.0", "1.1.0"} {
		w.publish(t, v)
	}
	ann, bob, cat := w.tester(t, "Ann"), w.tester(t, "Bob"), w.tester(t, "Cat")
	w.wantTesterCounts(t, "before any check", 7, nil)

	w.check(t, "Ann", ann.url, "1.0.0")
	w.wantTesterCounts(t, "Ann's first check, read at once", 7, []string{day + " 1.0.0 1"})
	w.check(t, "Ann again", ann.url, "1.0.0")
	w.check(t, "Bob", bob.url, "1.0.0")
	for range 3 {
		w.check(t, "an admin's copy", w.upd.UpdateURL, "1.0.0")
	}
	w.wantTesterCounts(t, "Ann twice and Bob at 1.0.0, the shared URL thrice", 7, []string{day + " 1.0.0 2"})
	w.check(t, "Ann updated", ann.url, "1.1.0")
	w.wantTesterCounts(t, "Ann updated", 7, []string{day + " 1.0.0 1", day + " 1.1.0 1"}, 1, 500)
	checks, _ := w.checkCounts(t, "")
	if checks[hour+" 1.0.0"] != 6 || checks[hour+" 1.1.0"] != 1 {
		t.Errorf("the hourly list: %v, want 6 checks at 1.0.0 and 1 at 1.1.0 in %s", checks, hour)
	}

	// Cat is revoked; her copy still checks, and runs 1.0.0.
	if resp, body := w.e.do(t, "DELETE", api.TesterPath(w.id(), cat.id), w.admin); resp.StatusCode != 204 {
		t.Fatalf("revoking Cat = %d %s", resp.StatusCode, body)
	}
	w.check(t, "revoked Cat's copy", cat.url, "1.0.0")
	w.wantTesterCounts(t, "revoked Cat's copy checked", 7, []string{day + " 1.0.0 2", day + " 1.1.0 1"})
	w.check(t, "Bob updated", bob.url, "1.1.0")
	w.wantTesterCounts(t, "Bob updated", 7, []string{day + " 1.0.0 1", day + " 1.1.0 2"})

	// Another extension and its tester Eve.
	o := w.sibling(t, "5.0")
	eve := o.tester(t, "Eve")
	annToken := strings.TrimPrefix(ann.url, w.prefix)
	eveToken := strings.TrimPrefix(eve.url, o.prefix)
	for _, c := range []struct{ what, url, id string }{
		{"Eve's token on Ann's extension", w.prefix + eveToken, w.upd.ChromeID},
		{"Eve's token on Ann's extension, for Eve's app", w.prefix + eveToken, o.upd.ChromeID},
		{"Ann's token on Eve's extension", o.prefix + annToken, o.upd.ChromeID},
		{"Ann's token on Eve's extension, for Ann's app", o.prefix + annToken, w.upd.ChromeID},
	} {
		if st, _, body := bbtuCheck(t, w.e, c.url, bbtuX(c.id, "1.1.0")); st != 404 {
			t.Fatalf("%s = %d %.300s, want 404", c.what, st, body)
		}
	}
	o.wantTesterCounts(t, "Eve's extension, after tokens of Ann's were tried on it", 7, nil)
	w.wantTesterCounts(t, "Ann's extension, after Eve's token was tried on it", 7, []string{day + " 1.0.0 1", day + " 1.1.0 2"})
	o.check(t, "Eve", eve.url, "5.0")
	o.wantTesterCounts(t, "Eve's extension", 7, []string{day + " 5.0 1"})
	w.wantTesterCounts(t, "Ann's extension, after Eve checked on hers", 7, []string{day + " 1.0.0 1", day + " 1.1.0 2"})
}

// TestBBTLAdoptionBatchSpanningMidnight: a tester whose copy checks just
// before and just after midnight UTC, with no read between (one batch of
// counts), is counted on both days, under each day's last version.
func TestBBTLAdoptionBatchSpanningMidnight(t *testing.T) {
	t.Parallel()
	w := newBBTLWorld(t)
	for _, v := range []string{"1.0.0", "1.1.0"} {
		w.publish(t, v)
	}
	ann, bob := w.tester(t, "Ann"), w.tester(t, "Bob")
	midnight := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -3)
	w.at(midnight.Add(-3 * time.Second))
	w.check(t, "Ann before midnight", ann.url, "1.0.0")
	w.check(t, "Bob before midnight", bob.url, "1.0.0")
	w.at(midnight.Add(-time.Second))
	w.check(t, "Bob just before midnight", bob.url, "1.1.0")
	w.at(midnight.Add(time.Second))
	w.check(t, "Ann after midnight", ann.url, "1.1.0")
	w.wantTesterCounts(t, "checks on both sides of midnight in one batch", 7, []string{
		bbtlDay(midnight) + " 1.1.0 1",
		bbtlDay(midnight.Add(-time.Hour)) + " 1.0.0 1",
		bbtlDay(midnight.Add(-time.Hour)) + " 1.1.0 1",
	}, 1, 500)
}

// TestBBTLAdoptionCountRefusals: a count other than checks or testers is a
// 400 problem naming count and saying what it takes; bad days, limit and
// cursor with count=testers are refused as for the hourly list; only the
// extension's admins may read the testers count.
func TestBBTLAdoptionCountRefusals(t *testing.T) {
	t.Parallel()
	w := newBBTLWorld(t)
	w.publish(t, "1.0.0")
	ann, bob := w.tester(t, "Ann"), w.tester(t, "Bob")
	w.check(t, "Ann", ann.url, "1.0.0")
	w.at(time.Now().Add(-24 * time.Hour))
	w.check(t, "Bob yesterday", bob.url, "1.0.0")
	w.at(time.Now())
	base := api.AdoptionPath(w.id())
	for _, v := range []string{"tester", "TESTERS", "Testers", "testers ", " checks", "check", "users", "installs", "1", "0",
		"testers,checks", "checks;testers", "testers\x00", "<script>alert(1)</script>", strings.Repeat("t", 5000), ""} {
		resp, body := w.e.do(t, "GET", base+"?count="+url.QueryEscape(v), w.admin)
		p := wantProblem(t, resp, body, 400, api.ProblemBadRequest)
		if p.Param != "count" || !strings.Contains(p.Detail, "checks") || !strings.Contains(p.Detail, "testers") {
			t.Fatalf("?count=%.40q: param %q, detail %q: want count, and the values it takes (checks, testers)", v, p.Param, p.Detail)
		}
	}
	for _, v := range []string{"checks", "testers"} {
		if resp, body := w.e.do(t, "GET", base+"?count="+v, w.admin); resp.StatusCode != 200 {
			t.Fatalf("?count=%s = %d %s", v, resp.StatusCode, body)
		}
	}

	p, _ := bbtlAdoption(t, w.e, w.id(), w.admin, "count=testers&limit=1")
	if p.NextCursor == "" {
		t.Fatalf("two rows in pages of one gave no next cursor: %+v", p)
	}
	other := w.sibling(t, "2.0")
	for _, c := range []struct{ query, param string }{
		{"days=0", "days"}, {"days=91", "days"}, {"days=x", "days"}, {"days=", "days"},
		{"limit=0", "limit"}, {"limit=501", "limit"}, {"limit=-1", "limit"}, {"limit=x", "limit"},
		{"cursor=", "cursor"}, {"cursor=junk", "cursor"}, {"cursor=" + url.QueryEscape(p.NextCursor+"x"), "cursor"},
	} {
		resp, body := w.e.do(t, "GET", base+"?count=testers&"+c.query, w.admin)
		if got := wantProblem(t, resp, body, 400, api.ProblemBadRequest); got.Param != c.param {
			t.Fatalf("?count=testers&%s: param %q, want %q", c.query, got.Param, c.param)
		}
	}
	// A cursor is bound to its extension's list.
	resp, body := w.e.do(t, "GET", api.AdoptionPath(other.id())+"?count=testers&cursor="+url.QueryEscape(p.NextCursor), other.admin)
	if got := wantProblem(t, resp, body, 400, api.ProblemBadRequest); got.Param != "cursor" {
		t.Fatalf("another extension's cursor: param %q", got.Param)
	}

	for _, who := range []struct {
		name   string
		header http.Header
		status int
	}{
		{"no session", http.Header{}, 401},
		{"a tester of the extension", ann.session, 403},
		{"another team's admin", other.admin, 404},
	} {
		for _, q := range []string{"?count=testers", "?count=testers&days=90&limit=500", "?count=bogus"} {
			resp, body := w.e.do(t, "GET", base+q, who.header)
			if resp.StatusCode != who.status || resp.Header.Get("Content-Type") != api.ProblemContentType || strings.Contains(string(body), "1.0.0") {
				t.Fatalf("%s, %s: %d %s, want a %d problem", who.name, q, resp.StatusCode, body, who.status)
			}
		}
	}
}

// ------------------------------------------------------------ the event stream

// TestBBTLEventsTestersOnEveryChange: on connect a bundles event, then a
// testers event; then one testers event, with a higher revision, for each
// change of the testers (invite, link opened, new link, revoke, restore,
// a check of a tester's copy recorded by a read of the testers list, the
// installs count or either adoption list) and no bundles event; publishes
// send bundles events and no testers event, and so do reads with nothing
// pending and a check of the shared URL; the JSON answer carries R.
func TestBBTLEventsTestersOnEveryChange(t *testing.T) {
	t.Parallel()
	w := newBBTLWorld(t)
	b1 := w.publish(t, "1.0.0")
	ann := w.tester(t, "Ann")

	s := bbtlOpenStream(t, w.e.URL, w.id(), w.admin)
	s.wantBundles(t, "on connect", b1.Number, b1.Number)
	r := s.wantTesters(t, "on connect, after the bundles event", 0)
	if cur, last, jr := w.jsonRevision(t); cur != b1.Number || last != b1.Number || jr != r {
		t.Fatalf("as JSON: %d %d testers %d, want %d %d testers %d (the stream's)", cur, last, jr, b1.Number, b1.Number, r)
	}

	resp, body := w.e.send(t, "POST", api.TestersPath(w.id()), w.admin, api.Invite{Email: uniqueEmail("bbtl-bob"), Name: "Bob"})
	var bob api.Invited
	if resp.StatusCode != 201 || json.Unmarshal(body, &bob) != nil || bob.InviteURL == "" {
		t.Fatalf("inviting Bob = %d %s", resp.StatusCode, body)
	}
	r = s.wantTesters(t, "after an invite", r)
	bbtuOpenLink(t, w.e, bob.InviteURL)
	r = s.wantTesters(t, "after Bob opened his invite link", r)
	resp, body = w.e.do(t, "POST", api.TesterInvitePath(w.id(), bob.ID), w.admin)
	var again api.Invited
	if resp.StatusCode != 200 || json.Unmarshal(body, &again) != nil || again.InviteURL == "" {
		t.Fatalf("a new link for Bob = %d %s", resp.StatusCode, body)
	}
	r = s.wantTesters(t, "after Bob was given a new link", r)
	bbtuOpenLink(t, w.e, again.InviteURL)
	r = s.wantTesters(t, "after Bob opened his new link", r)
	if resp, body := w.e.do(t, "DELETE", api.TesterPath(w.id(), bob.ID), w.admin); resp.StatusCode != 204 {
		t.Fatalf("revoking Bob = %d %s", resp.StatusCode, body)
	}
	r = s.wantTesters(t, "after Bob was revoked", r)
	if resp, body := w.e.do(t, "POST", api.TesterRestorePath(w.id(), bob.ID), w.admin); resp.StatusCode != 200 {
		t.Fatalf("restoring Bob = %d %s", resp.StatusCode, body)
	}
	r = s.wantTesters(t, "after Bob was restored", r)

	for _, read := range []struct{ name, path string }{
		{"the testers list", api.TestersPath(w.id())},
		{"the installs count", api.InstallsPath(w.id())},
		{"the adoption list counting testers", api.AdoptionPath(w.id()) + "?count=testers"},
		{"the adoption list counting checks", api.AdoptionPath(w.id())},
	} {
		w.check(t, "Ann's copy", ann.url, "1.0.0")
		w.get(t, read.name, read.path, w.admin)
		r = s.wantTesters(t, "after Ann's copy checked and "+read.name+" was read", r)
	}

	// No testers change: reads with nothing pending, a check of an admin's
	// copy through the shared URL written by a read, and two publishes.
	w.check(t, "an admin's copy", w.upd.UpdateURL, "1.0.0")
	for _, path := range []string{api.AdoptionPath(w.id()), api.TestersPath(w.id()), api.InstallsPath(w.id()), api.AdoptionPath(w.id()) + "?count=testers"} {
		w.get(t, "a read with nothing of testers pending", path, w.admin)
	}
	b2 := w.publish(t, "1.1.0")
	s.wantBundles(t, "after a publish (since the last testers event: reads, and a check of the shared URL)", b2.Number, b2.Number)
	b3 := w.publish(t, "1.2.0")
	s.wantBundles(t, "after a second publish", b3.Number, b3.Number)
	if cur, last, jr := w.jsonRevision(t); cur != b3.Number || last != b3.Number || jr != r {
		t.Fatalf("as JSON after the publishes: %d %d testers %d, want %d %d testers %d (no testers change since)", cur, last, jr, b3.Number, b3.Number, r)
	}

	// The testers events go on after the bundles events.
	w.check(t, "Ann's copy updated", ann.url, "1.2.0")
	w.get(t, "the testers list", api.TestersPath(w.id()), w.admin)
	r = s.wantTesters(t, "after Ann's copy updated and the testers list was read", r)
	if _, _, jr := w.jsonRevision(t); jr != r {
		t.Fatalf("as JSON at the end: testers %d, want the stream's %d", jr, r)
	}
}

// TestBBTLEventsCheckFlushedOnTimer: with the counts written every 100 ms
// (what serve does every AdoptionFlush), a check of a tester's copy sends a
// testers event with nothing read.
func TestBBTLEventsCheckFlushedOnTimer(t *testing.T) {
	t.Parallel()
	w := newBBTLWorld(t)
	b := w.publish(t, "1.0.0")
	ann := w.tester(t, "Ann")
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		w.e.App.Publish.Adoption.Run(ctx, 100*time.Millisecond, testLogger(t))
	}()
	t.Cleanup(func() { cancel(); <-ran })

	s := bbtlOpenStream(t, w.e.URL, w.id(), w.admin)
	s.wantBundles(t, "on connect", b.Number, b.Number)
	r := s.wantTesters(t, "on connect", 0)
	w.check(t, "Ann's copy", ann.url, "0.9")
	r = s.wantTesters(t, "after Ann's copy checked, with nothing read (the periodic write)", r)
	list, rev := w.testersPage(t, "after the event")
	if list[ann.id].InstalledVersion != "0.9" || rev < r {
		t.Fatalf("after the event the testers list shows Ann at %q with revision %d; want 0.9 and a revision at least the event's %d", list[ann.id].InstalledVersion, rev, r)
	}
	w.check(t, "Ann's copy updated", ann.url, "1.0.0")
	r = s.wantTesters(t, "after Ann's copy updated, with nothing read", r)
	if list, _ := w.testersPage(t, "at the end"); list[ann.id].InstalledVersion != "1.0.0" {
		t.Fatalf("the testers list shows Ann at %q, want 1.0.0", list[ann.id].InstalledVersion)
	}
}

// TestBBTLRevisionInPages: the testers pages (first, next, filtered) and the
// installs count carry the revision; with nothing changing it is the
// current one (the stream's and the JSON answer's); a change made after a
// read sends an event above the read's revision, so a client holding the
// read does not ignore it.
func TestBBTLRevisionInPages(t *testing.T) {
	t.Parallel()
	w := newBBTLWorld(t)
	w.publish(t, "1.0.0")
	ann, _, cat := w.tester(t, "Ann"), w.tester(t, "Bob"), w.tester(t, "Cat")

	rev1, body := w.pageRevision(t, "first page", api.TestersPath(w.id())+"?limit=2")
	var first struct {
		NextCursor string `json:"nextCursor"`
	}
	if json.Unmarshal(body, &first) != nil || first.NextCursor == "" {
		t.Fatalf("three testers in pages of two gave no next cursor: %s", body)
	}
	rev2, _ := w.pageRevision(t, "second page", api.TestersPath(w.id())+"?limit=2&cursor="+url.QueryEscape(first.NextCursor))
	rev3, _ := w.pageRevision(t, "active testers", api.TestersPath(w.id())+"?status=active")
	rev4, _ := w.pageRevision(t, "a search", api.TestersPath(w.id())+"?q=bbtu")
	rev5, _ := w.pageRevision(t, "installs", api.InstallsPath(w.id()))
	_, _, cur := w.jsonRevision(t)
	for i, rev := range []int64{rev1, rev2, rev3, rev4, rev5} {
		if rev != cur || rev < 1 {
			t.Fatalf("read %d (of the pages and installs, nothing changing) carries revision %d, want the current %d (≥ 1 after three invites)", i+1, rev, cur)
		}
	}
	s := bbtlOpenStream(t, w.e.URL, w.id(), w.admin)
	s.wantBundles(t, "on connect", 1, 1)
	if r := s.wantTesters(t, "on connect", 0); r != cur {
		t.Fatalf("the stream's first testers event is %d, the JSON answer's %d", r, cur)
	}

	// A revoke after a read of the list.
	_, rl := w.testersPage(t, "before the revoke")
	if resp, body := w.e.do(t, "DELETE", api.TesterPath(w.id(), cat.id), w.admin); resp.StatusCode != 204 {
		t.Fatalf("revoking Cat = %d %s", resp.StatusCode, body)
	}
	r := s.wantTesters(t, fmt.Sprintf("Cat revoked after a read of the list with revision %d", rl), rl)
	list, rl := w.testersPage(t, "after the revoke")
	if list[cat.id].Status != betaport.TesterRevoked || rl != r {
		t.Fatalf("after the revoke's event %d the list shows Cat %s with revision %d", r, list[cat.id].Status, rl)
	}

	// A check after a read of installs.
	ri, body := w.pageRevision(t, "installs before the check", api.InstallsPath(w.id()))
	w.check(t, "Ann's copy", ann.url, "1.0.0")
	w.get(t, "the adoption list", api.AdoptionPath(w.id())+"?count=testers", w.admin)
	r = s.wantTesters(t, fmt.Sprintf("Ann's copy checked after a read of installs with revision %d", ri), max(ri, r))
	ri, body = w.pageRevision(t, "installs after the check", api.InstallsPath(w.id()))
	var inst struct {
		OnCurrent *int64 `json:"onCurrent"`
	}
	if json.Unmarshal(body, &inst) != nil || inst.OnCurrent == nil || *inst.OnCurrent != 1 || ri != r {
		t.Fatalf("after the check's event %d installs answers %s (want onCurrent 1 and revision %d)", r, body, r)
	}
	// A check written by the read of the list itself: that answer shows it.
	w.check(t, "Ann's copy again", ann.url, "0.5")
	list, _ = w.testersPage(t, "the list that writes the check")
	if list[ann.id].InstalledVersion != "0.5" {
		t.Fatalf("the list read after a check shows Ann at %q, want 0.5", list[ann.id].InstalledVersion)
	}
	r = s.wantTesters(t, "the check written by a read of the list", r)
	if _, rl := w.testersPage(t, "after that event"); rl != r {
		t.Fatalf("the list read after the event %d carries revision %d", r, rl)
	}
}

// readAnn reads the testers list as the admin, off the test's goroutine
// (no Fatal): tester id's installed version and the page's revision.
func (w *bbtlWorld) readAnn(id int64) (string, int64, error) {
	req, err := http.NewRequest("GET", w.e.URL+api.TestersPath(w.id())+"?limit=100", nil)
	if err != nil {
		return "", 0, err
	}
	for k, v := range w.admin {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", 0, err
	}
	var p struct {
		Data     []betaport.Tester `json:"data"`
		Revision *int64            `json:"revision"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &p) != nil || p.Revision == nil {
		return "", 0, fmt.Errorf("the testers list = %d %.300s, want a page with a revision", resp.StatusCode, body)
	}
	for _, tt := range p.Data {
		if tt.ID == id {
			return tt.InstalledVersion, *p.Revision, nil
		}
	}
	return "", 0, fmt.Errorf("tester %d is not in the list", id)
}

// TestBBTLRevisionNeverAheadOfPage: while a tester's copy checks with a new
// version again and again (each written at once by a read of installs),
// readers of the testers list never get a page whose revision is at least
// that of a version's write but which shows an older version: a client
// would ignore the event of the write it does not show.
func TestBBTLRevisionNeverAheadOfPage(t *testing.T) {
	t.Parallel()
	w := newBBTLWorld(t)
	w.publish(t, "1.0.0")
	ann := w.tester(t, "Ann")
	const n = 40
	type seen struct{ k, rev int64 }
	written := make([]int64, n+1) // written[k]: the current revision once version k is written
	var mu sync.Mutex
	var reads [][]seen
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		i := len(reads)
		reads = append(reads, nil)
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				v, rev, err := w.readAnn(ann.id)
				if err != nil {
					t.Error(err)
					return
				}
				k := int64(0)
				if v != "" {
					var err error
					if k, err = strconv.ParseInt(strings.TrimPrefix(v, "0.0."), 10, 64); err != nil {
						t.Errorf("Ann's installed version %q", v)
						return
					}
				}
				mu.Lock()
				reads[i] = append(reads[i], seen{k, rev})
				mu.Unlock()
			}
		})
	}
	for k := 1; k <= n; k++ {
		w.check(t, "Ann's copy", ann.url, "0.0."+strconv.Itoa(k))
		w.get(t, "installs", api.InstallsPath(w.id()), w.admin)
		_, _, written[k] = w.jsonRevision(t)
	}
	close(stop)
	wg.Wait()
	if t.Failed() {
		return
	}
	total := 0
	for i, rs := range reads {
		total += len(rs)
		for j, s := range rs {
			if j > 0 && s.rev < rs[j-1].rev {
				t.Errorf("reader %d: revision %d after %d (R only grows)", i, s.rev, rs[j-1].rev)
			}
			for k := s.k + 1; k <= n; k++ {
				if written[k] <= s.rev {
					t.Fatalf("reader %d read a page with revision %d showing Ann at 0.0.%d, but 0.0.%d was written by revision %d: the page claims what it does not show", i, s.rev, s.k, k, written[k])
				}
			}
		}
	}
	for k := 2; k <= n; k++ {
		if written[k] <= written[k-1] {
			t.Fatalf("the revision after version %d's write is %d, after %d's %d: a write that did not move it", k, written[k], k-1, written[k-1])
		}
	}
	t.Logf("%d pages read during %d writes", total, n)
}

// TestBBTLEventsAcrossReplicas: two replicas on one store; a tester's copy
// checks on replica B; once B writes it (a read on B), replica A's stream
// sends a testers event and A's counts show the check; both replicas'
// JSON answers carry the same revision.
func TestBBTLEventsAcrossReplicas(t *testing.T) {
	t.Parallel()
	w := newBBTLWorld(t)
	b := w.publish(t, "1.0.0")
	w.publish(t, "1.1.0")
	ann := w.tester(t, "Ann")
	rb := &bphttp.Server{Store: w.e.DB, Blobs: w.e.Blobs, Logger: testLogger(t), Secret: w.e.App.Secret, SigningKeys: testKeyring}
	tsb := httptest.NewServer(rb.Handler())
	t.Cleanup(tsb.Close)
	rb.BaseURL = tsb.URL
	rb.Publish.BaseURL = tsb.URL
	rb.EventPoll = 20 * time.Millisecond
	annOnB := tsb.URL + strings.TrimPrefix(ann.url, w.e.URL)
	day := bbtlDay(time.Now())

	s := bbtlOpenStream(t, w.e.URL, w.id(), w.admin)
	s.wantBundles(t, "on connect to A", b.Number+1, b.Number+1)
	r := s.wantTesters(t, "on connect to A", 0)

	w.check(t, "Ann's copy, on B", annOnB, "1.0.0")
	req, _ := http.NewRequest("GET", tsb.URL+api.TestersPath(w.id()), nil)
	for k, v := range w.admin {
		req.Header[k] = v
	}
	if resp, body := w.e.roundTrip(t, req); resp.StatusCode != 200 {
		t.Fatalf("B's testers list = %d %s", resp.StatusCode, body)
	}
	r = s.wantTesters(t, "on A, after Ann's copy checked on B and B's testers list was read", r)
	w.wantTesterCounts(t, "A's count, after B wrote Ann's check", 7, []string{day + " 1.0.0 1"})

	s2 := bbtlOpenStream(t, tsb.URL, w.id(), w.admin)
	s2.wantBundles(t, "on connect to B", b.Number+1, b.Number+1)
	if r2 := s2.wantTesters(t, "on connect to B", 0); r2 != r {
		t.Fatalf("B's stream starts at testers %d, A's is at %d", r2, r)
	}
	w.check(t, "Ann's copy updated, on B", annOnB, "1.1.0")
	req, _ = http.NewRequest("GET", tsb.URL+api.AdoptionPath(w.id())+"?count=testers", nil)
	for k, v := range w.admin {
		req.Header[k] = v
	}
	if resp, body := w.e.roundTrip(t, req); resp.StatusCode != 200 || !strings.Contains(string(body), `"1.1.0"`) {
		t.Fatalf("B's count=testers right after the check on B = %d %s, want Ann at 1.1.0", resp.StatusCode, body)
	}
	r = s.wantTesters(t, "on A, after Ann's update was written on B", r)
	if r2 := s2.wantTesters(t, "on B, after Ann's update was written on B", 0); r2 != r {
		t.Fatalf("B's stream says testers %d, A's %d", r2, r)
	}
	w.wantTesterCounts(t, "A's count after Ann's update on B", 7, []string{day + " 1.1.0 1"})
	_, _, ja := w.jsonRevision(t)
	_, _, jb := bbtlJSONRevision(t, w.e, tsb.URL, w.id(), w.admin)
	if ja != r || jb != r {
		t.Fatalf("the JSON answers: A testers %d, B %d; the streams %d", ja, jb, r)
	}
}

// TestBBTLEventsRefusals: the stream (and its JSON answer) is refused to no
// session, a revoked tester, a tester of another extension and another
// team's admin, at once and as a problem, never as a stream.
func TestBBTLEventsRefusals(t *testing.T) {
	t.Parallel()
	w := newBBTLWorld(t)
	w.publish(t, "1.0.0")
	ann := w.tester(t, "Ann")
	other := w.sibling(t, "2.0")
	eve := other.tester(t, "Eve")
	if resp, body := w.e.do(t, "DELETE", api.TesterPath(w.id(), ann.id), w.admin); resp.StatusCode != 204 {
		t.Fatalf("revoking Ann = %d %s", resp.StatusCode, body)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	for _, who := range []struct {
		name   string
		header http.Header
		status int
	}{
		{"no session", http.Header{}, 401},
		{"a revoked tester's session", ann.session, 401},
		{"a tester of another extension", eve.session, 404},
		{"another team's admin", other.admin, 404},
	} {
		for _, accept := range []string{"text/event-stream", "application/json", ""} {
			req, _ := http.NewRequest("GET", w.e.URL+api.EventsPath(w.id()), nil)
			for k, v := range who.header {
				req.Header[k] = v
			}
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s, Accept %q: %v", who.name, accept, err)
			}
			ct := resp.Header.Get("Content-Type")
			if resp.StatusCode != who.status || ct != api.ProblemContentType {
				resp.Body.Close()
				t.Fatalf("%s, Accept %q: %d %q, want a %d problem", who.name, accept, resp.StatusCode, ct, who.status)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || strings.Contains(string(body), `"testers"`) {
				t.Fatalf("%s, Accept %q: the problem %s (%v)", who.name, accept, body, err)
			}
		}
	}
}

// TestBBTLEventsTesterSessionGetsNoTestersRevision: a tester of the
// extension may follow its bundles (as before), but what changes among the
// other testers (the testers list is refused to them) is not sent to them:
// no testers event on their stream, no testers revision in their JSON
// answer. (The contract does not say who gets testers events; this is our
// reading: a tester must not watch the others' activity.)
func TestBBTLEventsTesterSessionGetsNoTestersRevision(t *testing.T) {
	t.Parallel()
	w := newBBTLWorld(t)
	b1 := w.publish(t, "1.0.0")
	ann, bob := w.tester(t, "Ann"), w.tester(t, "Bob")
	if resp, body := w.e.do(t, "GET", api.TestersPath(w.id()), ann.session); resp.StatusCode != 403 {
		t.Fatalf("a tester reading the testers list = %d %s, want 403", resp.StatusCode, body)
	}
	admin := bbtlOpenStream(t, w.e.URL, w.id(), w.admin)
	admin.wantBundles(t, "the admin's stream, on connect", b1.Number, b1.Number)
	r := admin.wantTesters(t, "the admin's stream, on connect", 0)
	s := bbtlOpenStream(t, w.e.URL, w.id(), ann.session)
	s.wantBundles(t, "Ann's stream, on connect", b1.Number, b1.Number)

	// Bob's copy checks and is written; another tester is invited.
	w.check(t, "Bob's copy", bob.url, "1.0.0")
	w.get(t, "installs", api.InstallsPath(w.id()), w.admin)
	r = admin.wantTesters(t, "the admin's stream, after Bob's check", r)
	w.invite(t, "Cat")
	admin.until(t, "the admin's stream, after Cat's invite", r, r+1)
	b2 := w.publish(t, "1.1.0")
	ev := s.next(t, "Ann's stream after Bob's check, Cat's invite and a publish")
	if ev.Name != "bundles" {
		t.Fatalf("Ann (a tester) got a %q event %s: the testers' activity is sent to a tester", ev.Name, ev.Data)
	}
	if ev.int(t, "Ann's stream", "currentBundle") != b2.Number {
		t.Fatalf("Ann's stream: %s, want bundle %d", ev.Data, b2.Number)
	}
	req, _ := http.NewRequest("GET", w.e.URL+api.EventsPath(w.id()), nil)
	for k, v := range ann.session {
		req.Header[k] = v
	}
	resp, body := w.e.roundTrip(t, req)
	var rev bbtlRevision
	if resp.StatusCode != 200 || json.Unmarshal(body, &rev) != nil || rev.CurrentBundle == nil || *rev.CurrentBundle != b2.Number {
		t.Fatalf("Ann's revision as JSON = %d %s", resp.StatusCode, body)
	}
	if rev.Testers != nil && *rev.Testers != 0 {
		t.Fatalf("Ann (a tester) is told the testers revision: %s", body)
	}
}

// bbtlSmallSendBuffers gives each accepted connection a small send buffer,
// so that a stream nobody reads fills it after a few KB and the server's
// writes to that stream block, as they would on a slow network after
// megabytes.
type bbtlSmallSendBuffers struct{ net.Listener }

func (l bbtlSmallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4096)
	}
	return c, err
}

// TestBBTLSlowStreamClientsDoNotBlock: streams that are never read (their
// buffers full, the server's writes to them blocked) and a request that
// never ends its headers hold no one up: while hundreds of testers changes
// happen, a reading client gets every revision up to the last, the API
// answers, and a new client connects and gets its first events. It runs
// on a replica of the store whose connections have small send buffers
// (see bbtlSmallSendBuffers).
func TestBBTLSlowStreamClientsDoNotBlock(t *testing.T) {
	t.Parallel()
	w := newBBTLWorld(t)
	b := w.publish(t, "1.0.0")
	ann := w.tester(t, "Ann")
	rs := &bphttp.Server{Store: w.e.DB, Blobs: w.e.Blobs, Logger: testLogger(t), Secret: w.e.App.Secret, SigningKeys: testKeyring}
	ts := httptest.NewUnstartedServer(rs.Handler())
	ts.Listener = bbtlSmallSendBuffers{ts.Listener}
	ts.Start()
	t.Cleanup(ts.Close)
	rs.BaseURL, rs.Publish.BaseURL, rs.EventPoll = ts.URL, ts.URL, 5*time.Millisecond
	e := &env{Server: ts, DB: w.e.DB, Blobs: w.e.Blobs, App: rs, Dir: w.e.Dir, Backend: w.e.Backend}
	annURL := ts.URL + strings.TrimPrefix(ann.url, w.e.URL)

	addr := strings.TrimPrefix(ts.URL, "http://")
	path := api.EventsPath(w.id())
	var stalled []net.Conn
	t.Cleanup(func() {
		for _, c := range stalled {
			c.Close()
		}
	})
	for range 4 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		stalled = append(stalled, c)
		c.(*net.TCPConn).SetReadBuffer(1024)
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nCookie: %s\r\n\r\n", path, addr, w.admin.Get("Cookie"))
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	stalled = append(stalled, c)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nCookie: %s\r\n", path, addr, w.admin.Get("Cookie"))

	change := func() {
		t.Helper()
		if st, _, body := bbtuCheck(t, e, annURL, bbtuX(w.upd.ChromeID, "1.0.0")); st != 200 {
			t.Fatalf("Ann's check = %d %s", st, body)
		}
		if resp, body := e.do(t, "GET", api.InstallsPath(w.id()), w.admin); resp.StatusCode != 200 {
			t.Fatalf("installs = %d %s", resp.StatusCode, body)
		}
	}
	s := bbtlOpenStream(t, ts.URL, w.id(), w.admin)
	s.wantBundles(t, "on connect", b.Number, b.Number)
	r := s.wantTesters(t, "on connect", 0)
	const changes = 300
	for i := range changes {
		change()
		if i%50 == 0 {
			// The reading client keeps up meanwhile.
			_, _, cur := bbtlJSONRevision(t, e, ts.URL, w.id(), w.admin)
			r = s.until(t, fmt.Sprintf("after %d changes", i+1), r, cur)
		}
	}
	_, _, target := bbtlJSONRevision(t, e, ts.URL, w.id(), w.admin)
	r = s.until(t, fmt.Sprintf("after %d changes beside never-reading streams", changes), r, target)
	s2 := bbtlOpenStream(t, ts.URL, w.id(), w.admin)
	s2.wantBundles(t, "a new client, on connect", b.Number, b.Number)
	if r2 := s2.wantTesters(t, "a new client, on connect", 0); r2 != r {
		t.Fatalf("a new client starts at testers %d, want %d", r2, r)
	}
	if resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(ts.URL + api.PathHealth); err != nil || resp.StatusCode != 200 {
		t.Fatalf("/healthz beside never-reading streams: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	change()
	r = s.wantTesters(t, "the first client, at the end", r)
	if r2 := s2.wantTesters(t, "the new client, at the end", 0); r2 != r {
		t.Fatalf("the new client got testers %d, the first %d", r2, r)
	}
}
