package browser_test

// Black-box tests of issue 27 item 4 ("who runs which build, live") as
// admins meet it in the browser, written from the issue without reading
// the app's code: the testers list's Installed column and the extension
// page's "N of M testers on the current build" follow, with no reload or
// input, testers' copies checking in, testers invited, revoked and
// restored elsewhere; the Adoption section counts update checks or
// testers. They act only through the DevTools input domain (mouse clicks,
// wheel, keys) and navigation; JavaScript only reads the page. Plain HTTP
// stands in for testers' copies checking for updates (with their personal
// update URL, from their Linux policy file) and for other admins' sessions.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/demo"
	"github.com/betaport/betaport/server/storetest"
)

// ---------------------------------------------------------------- helpers

// bbtlbFlush is how often the service writes the checks it counted: short,
// so a check reaches open pages within about a second.
const bbtlbFlush = 200 * time.Millisecond

// bbtlbLive is how long a change may take to reach an open page: the
// flush, then the event "within about a second" (patient stretches it).
const bbtlbLive = bbtlbFlush + 1500*time.Millisecond

func bbtlbServe(t *testing.T) (*cli.Main, *demo.Result) {
	t.Helper()
	return serve(t, 0, func(m *cli.Main) { m.Config.AdoptionFlush = bbtlbFlush })
}

// bbtlbTester is a tester whose browser opened their invite link and
// downloaded their Linux policy file: what their copy checks with.
type bbtlbTester struct {
	ID        int64
	Email     string
	UpdateURL string
	ChromeID  string
}

// check is one update check of the tester's installed copy, reporting
// version, as Chromium's updater sends it (no cookie).
func (tt *bbtlbTester) check(t *testing.T, version string) {
	t.Helper()
	bbtlbCheck(t, tt.UpdateURL, tt.ChromeID, version)
}

func bbtlbCheck(t *testing.T, updateURL, chromeID, version string) {
	t.Helper()
	resp, err := http.Get(updateURL + "?x=" + url.QueryEscape("id="+chromeID+"&v="+version+"&uc"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("update check of %s through %s: %d %s", version, updateURL, resp.StatusCode, b)
	}
}

// bbtlbInvite invites a tester as another admin session (the API).
func bbtlbInvite(t *testing.T, a *bb20API, extID int64, email, name string) api.Invited {
	t.Helper()
	code, body := a.call(http.MethodPost, api.TestersPath(extID), api.Invite{Email: email, Name: name})
	if code != http.StatusCreated {
		t.Fatalf("inviting %s through the API: %d %s", email, code, body)
	}
	var inv api.Invited
	if err := json.Unmarshal(body, &inv); err != nil || inv.ID == 0 || inv.InviteURL == "" {
		t.Fatalf("the invite of %s answered %s (%v)", email, body, err)
	}
	return inv
}

// bbtlbJoin opens the tester's invite link in a browser of theirs and
// downloads their Linux policy file, which names their update URL.
func bbtlbJoin(t *testing.T, base string, extID int64, inv api.Invited) *bbtlbTester {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	link := inv.InviteURL
	if strings.HasPrefix(link, "/") {
		link = base + link
	}
	resp, err := hc.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s's invite link answered %d", inv.Email, resp.StatusCode)
	}
	resp, err = hc.Get(base + api.ExtensionPath(extID) + "/policy/linux")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var policy struct {
		ExtensionSettings map[string]struct {
			UpdateURL string `json:"update_url"`
		} `json:"ExtensionSettings"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &policy) != nil {
		t.Fatalf("%s's Linux policy file: %d %s", inv.Email, resp.StatusCode, raw)
	}
	for id, s := range policy.ExtensionSettings {
		if chromeIDPattern.MatchString(id) && strings.HasPrefix(s.UpdateURL, base+api.UpdatePrefix) {
			return &bbtlbTester{ID: inv.ID, Email: inv.Email, UpdateURL: s.UpdateURL, ChromeID: id}
		}
	}
	t.Fatalf("%s's policy file names no extension with an update URL of the service: %s", inv.Email, raw)
	return nil
}

func bbtlbNewTester(t *testing.T, m *cli.Main, a *bb20API, extID int64, email, name string) *bbtlbTester {
	t.Helper()
	return bbtlbJoin(t, m.URL(), extID, bbtlbInvite(t, a, extID, email, name))
}

// bbtlbVersions are the current bundle's version and the one before.
func bbtlbVersions(t *testing.T, a *bb20API, extID int64) (cur, prev string) {
	t.Helper()
	bs := a.bundles(extID)
	if len(bs) < 2 || !bs[0].Current || bs[0].Version == bs[1].Version {
		t.Fatalf("the bundles of extension %d are %+v: want the current on top of an older version", extID, bs)
	}
	return bs[0].Version, bs[1].Version
}

// bbtlbRecorded waits until the service says the tester's copy reported
// version (the checks are written in batches).
func bbtlbRecorded(t *testing.T, a *bb20API, extID, testerID int64, version string) {
	t.Helper()
	bbtlbUntil(t, 10*time.Second, fmt.Sprintf("the service never recorded tester %d's copy on %s", testerID, version), func() (bool, string) {
		var page api.Page[betaport.Tester]
		a.get(api.TestersPath(extID)+"?limit=100", &page)
		for _, x := range page.Data {
			if x.ID == testerID {
				return x.InstalledVersion == version, fmt.Sprintf("it says %q", x.InstalledVersion)
			}
		}
		return false, "the tester is absent"
	})
}

// bbtlbCounted waits until the adoption API counts want checks by version.
func bbtlbCounted(t *testing.T, a *bb20API, extID int64, want map[string]int64) {
	t.Helper()
	bbtlbUntil(t, 10*time.Second, fmt.Sprintf("the adoption API never counted %v", want), func() (bool, string) {
		var page api.Page[betaport.AdoptionCount]
		a.get(api.AdoptionPath(extID)+"?days=7", &page)
		got := map[string]int64{}
		for _, c := range page.Data {
			got[c.Version] += c.Checks
		}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("it counts %v", got)
	})
}

// bbtlbStream reads an extension's event stream as an admin session of
// its own: which events come, and when.
type bbtlbStream struct {
	mu     sync.Mutex
	events []bbtlbEvent
	ended  error
}

type bbtlbEvent struct {
	Name, Data string
	At         time.Time
}

func bbtlbListen(t *testing.T, a *bb20API, extID int64) *bbtlbStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.base+api.EventsPath(extID), nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Origin", a.base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := a.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET %s: %d %s", api.EventsPath(extID), resp.StatusCode, b)
	}
	s := &bbtlbStream{}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		name, data := "", ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if name != "" || data != "" {
					if name == "" {
						name = "message"
					}
					s.mu.Lock()
					s.events = append(s.events, bbtlbEvent{Name: name, Data: data, At: time.Now()})
					s.mu.Unlock()
				}
				name, data = "", ""
			case strings.HasPrefix(line, ":"):
			case strings.HasPrefix(line, "event:"):
				name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
			}
		}
		s.mu.Lock()
		s.ended = fmt.Errorf("the stream ended: %v", sc.Err())
		s.mu.Unlock()
	}()
	return s
}

func (s *bbtlbStream) mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}

func (s *bbtlbStream) names(from int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, e := range s.events[min(from, len(s.events)):] {
		out = append(out, e.Name)
	}
	return out
}

// wait returns the first event called name at or after index from.
func (s *bbtlbStream) wait(t *testing.T, name string, from int, d time.Duration) bbtlbEvent {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		s.mu.Lock()
		for _, e := range s.events[min(from, len(s.events)):] {
			if e.Name == name {
				s.mu.Unlock()
				return e
			}
		}
		ended := s.ended
		s.mu.Unlock()
		if ended != nil || time.Now().After(deadline) {
			t.Fatalf("no %q event on the stream within %v (%v); events since: %v", name, d, ended, s.names(from))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// quiet waits until no event has come for d.
func (s *bbtlbStream) quiet(t *testing.T, d, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	n, since := s.mark(), time.Now()
	for time.Since(since) < d {
		if m := s.mark(); m != n {
			n, since = m, time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("the event stream never fell quiet for %v: %v", d, s.names(0))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// bbtlbWait waits for expr in the page and says what the page shows when
// it never holds.
func bbtlbWait(t *testing.T, ctx context.Context, d time.Duration, expr, msg string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(30*time.Millisecond), chromedp.WithPollingTimeout(patient(d)))); err != nil {
		shown, err2 := chromedp.Run(context.WithoutCancel(ctx), chromedp.Evaluate[string](`location.href + "\n" + (document.querySelector("main")?.innerText ?? document.body.innerText)`))
		t.Fatalf("%s (waited %v for %s: %v); the page shows (%v):\n%s", msg, patient(d), expr, err, err2, shown)
	}
}

// bbtlbUntil waits until cond, which reads the page, holds; it reports
// what cond last saw.
func bbtlbUntil(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(patient(d))
	for {
		ok, seen := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s (waited %v); last seen: %s", what, patient(d), seen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// bbtlbMark marks the document: a reload or a navigation loses the mark.
func bbtlbMark(t *testing.T, ctx context.Context) {
	t.Helper()
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`window.__bbtlbSameDocument = true`))
}

func bbtlbSameDocument(t *testing.T, ctx context.Context) bool {
	t.Helper()
	return evalJS[bool](t, ctx, `window.__bbtlbSameDocument === true`)
}

// bbtlbCell reads a tester's Installed cell (null without the row).
func bbtlbCell(id int64) string {
	return fmt.Sprintf(`(document.querySelector('#testers [data-tester="%d"] .installed')?.textContent.trim() ?? null)`, id)
}

// bbtlbBadge reads a tester's status badge (null without the row).
func bbtlbBadge(id int64) string {
	return fmt.Sprintf(`(document.querySelector('#testers [data-tester="%d"] .badge')?.textContent.trim() ?? null)`, id)
}

// bbtlbRows are the ids of the testers rows in the DOM.
const bbtlbRows = `[...document.querySelectorAll("#testers [data-tester]")].map(r => r.dataset.tester).sort().join(",")`

func bbtlbIDs(ids ...int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	// The page's ids are sorted as strings.
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return strings.Join(s, ",")
}

// bbtlbStops waits until the tracked requests settle, then watches a
// further 3 s in which none may start: a list that reloads in a loop on
// its own events (or on every flush, every 200 ms) asks again within it.
// The window is the measurement of an absence, not a wait for the app. It
// returns how many requests started since from.
func bbtlbStops(t *testing.T, tr *reqTracker, what string, from int) int {
	t.Helper()
	tr.waitSettled(t, 500*time.Millisecond, patient(15*time.Second))
	settled, _ := tr.counts()
	time.Sleep(3 * time.Second)
	if now, _ := tr.counts(); now != settled {
		t.Errorf("%s: requests to %s went on after they had settled: %d more within 3 s:\n%s", what, tr.part, now-settled, strings.Join(tr.since(settled), "\n"))
	}
	return settled - from
}

var bbtlbInstallsLine = regexp.MustCompile(`^(\d+) of (\d+) testers on the current build`)

// bbtlbInstalls reads the Adoption tab's "N of M testers on the current
// build" line: N and M, or -1 and the text when it does not read so.
func bbtlbInstalls(t *testing.T, ctx context.Context) (n, of int, line string) {
	t.Helper()
	line = evalJS[string](t, ctx, `document.getElementById("installs")?.textContent.trim() ?? ""`)
	m := bbtlbInstallsLine.FindStringSubmatch(line)
	if m == nil {
		return -1, -1, line
	}
	n, _ = strconv.Atoi(m[1])
	of, _ = strconv.Atoi(m[2])
	return n, of, line
}

func bbtlbWaitInstalls(t *testing.T, ctx context.Context, n, of int, what string) string {
	t.Helper()
	var line string
	bbtlbUntil(t, bbtlbLive+5*time.Second, what, func() (bool, string) {
		gn, gof, l := bbtlbInstalls(t, ctx)
		line = l
		return gn == n && gof == of, fmt.Sprintf("%q, want %d of %d", l, n, of)
	})
	return line
}

// bbtlbAdoptionJS reads the Adoption section: the Count choice (its
// group's name, each radio's name, checked state and focus), the table
// and the chart's segments.
const bbtlbPrelude = `const sec = document.getElementById("adoption");
	const text = e => (e?.textContent ?? "").replace(/\s+/g, " ").trim();
	const byIds = ids => (ids || "").split(/\s+/).filter(Boolean).map(id => text(document.getElementById(id))).join(" ");
	const radios = sec ? [...sec.querySelectorAll('input[type=radio], [role=radio]')] : [];
	const nameOf = r => (r.getAttribute("aria-label") || byIds(r.getAttribute("aria-labelledby")) || (r.labels && r.labels.length ? text(r.labels[0]) : "") || text(r)).trim();
	const isChecked = r => r.matches("input") ? r.checked : r.getAttribute("aria-checked") === "true";`

const bbtlbAdoptionJS = `(() => { ` + bbtlbPrelude + `
	if (!sec) return {found: false, group: "", radios: [], caption: "", headers: [], rows: [], chart: []};
	const group = radios.length ? radios[0].closest('[role=radiogroup], fieldset') : null;
	const gname = group ? (group.getAttribute("aria-label") || byIds(group.getAttribute("aria-labelledby")) || text(group.querySelector("legend"))) : "";
	const table = sec.querySelector("table");
	return {found: true, group: gname.trim(),
		radios: radios.map(r => ({label: nameOf(r), checked: isChecked(r), focused: document.activeElement === r})),
		caption: text(table?.querySelector("caption")),
		headers: table ? [...table.querySelectorAll("thead th")].map(text) : [],
		rows: table ? [...table.querySelectorAll("tbody tr")].map(r => [...r.cells].map(text)) : [],
		chart: [...sec.querySelectorAll("svg g[data-version]")].map(g => g.dataset.day + "|" + g.dataset.version + "|" + g.dataset.percent)};
})()`

type bbtlbAdoption struct {
	Found   bool         `json:"found"`
	Group   string       `json:"group"`
	Radios  []bbtlbRadio `json:"radios"`
	Caption string       `json:"caption"`
	Headers []string     `json:"headers"`
	Rows    [][]string   `json:"rows"`
	Chart   []string     `json:"chart"`
}

type bbtlbRadio struct {
	Label   string `json:"label"`
	Checked bool   `json:"checked"`
	Focused bool   `json:"focused"`
}

func bbtlbReadAdoption(t *testing.T, ctx context.Context) bbtlbAdoption {
	t.Helper()
	return evalJS[bbtlbAdoption](t, ctx, bbtlbAdoptionJS)
}

func (a bbtlbAdoption) String() string {
	b, _ := json.Marshal(a)
	return string(b)
}

// checked is the label of the checked radio ("" for none, "+" joined
// when several are).
func (a bbtlbAdoption) checked() string {
	var on []string
	for _, r := range a.Radios {
		if r.Checked {
			on = append(on, r.Label)
		}
	}
	return strings.Join(on, "+")
}

func (a bbtlbAdoption) focusedRadio() string {
	for _, r := range a.Radios {
		if r.Focused {
			return r.Label
		}
	}
	return ""
}

// row is today's table row of version ("Jan 2" or ISO day), or nil.
func (a bbtlbAdoption) row(version string) []string {
	now := time.Now().UTC()
	for _, r := range a.Rows {
		if len(r) >= 3 && (r[0] == now.Format("Jan 2") || r[0] == now.Format("2006-01-02")) && r[1] == version {
			return r
		}
	}
	return nil
}

// shows: today's row of version counts count, with share (when given).
func (a bbtlbAdoption) shows(version, count, share string) bool {
	r := a.row(version)
	return r != nil && r[2] == count && (share == "" || (len(r) > 3 && r[3] == share))
}

// chartToday is the chart's share of version today ("" without it).
func (a bbtlbAdoption) chartToday(version string) string {
	day := time.Now().UTC().Format("Jan 2")
	for _, s := range a.Chart {
		if p := strings.Split(s, "|"); len(p) == 3 && p[0] == day && p[1] == version {
			return p[2]
		}
	}
	return ""
}

// testersView: the section counts testers, consistently (choice, caption,
// count column).
func (a bbtlbAdoption) testersView() bool {
	return a.checked() == "Testers" && strings.HasPrefix(a.Caption, "Testers by day") && len(a.Headers) >= 3 && a.Headers[2] == "Testers"
}

func (a bbtlbAdoption) checksView() bool {
	return a.checked() == "Update checks" && !strings.HasPrefix(a.Caption, "Testers by day") && len(a.Headers) >= 3 && a.Headers[2] == "Checks"
}

// bbtlbTabToCount clicks where a hand starts (the Adoption heading) and
// presses Tab until the Count choice has the focus.
func bbtlbTabToCount(t *testing.T, ctx context.Context) {
	t.Helper()
	bbkClickFound(t, ctx, "the Adoption heading", `document.querySelector("#adoption-heading, #adoption h2, #adoption h3")`)
	// The heading is in the page's main element, which takes the focus
	// on a click: the Tabs walk from the top of main.
	for range 40 {
		bbPress(t, ctx, kb.Tab)
		if evalJS[bool](t, ctx, `!!document.activeElement?.closest("#adoption") && document.activeElement.matches('input[type=radio], [role=radio]')`) {
			return
		}
	}
	t.Fatalf("40 Tabs from a click on the Adoption heading never reached the Count choice; the focus is on %s", focused(t, ctx))
}

// bbtlbClickChoice clicks, with the mouse, the Count choice named label
// (its label, where it has one).
func bbtlbClickChoice(t *testing.T, ctx context.Context, label string) {
	t.Helper()
	bbkClickFound(t, ctx, "the choice "+label, `(() => { `+bbtlbPrelude+`
		const r = radios.find(r => nameOf(r) === `+jsString(label)+`); if (!r) return null;
		return r.matches("input") && r.labels && r.labels.length ? r.labels[0] : r; })()`)
}

// ---------------------------------------------------------------- testers list

// TestBBTLBInstalledCellLive: on the testers list, reached from the
// extension page, a tester's Installed cell changes from "not installed"
// to the version her copy reported, with no reload and no input; the list
// asks the service again a bounded number of times, then stops. After a
// reload, and after leaving and coming Back, the cell is still live; after
// Forward, the Adoption tab's line is.
func TestBBTLBInstalledCellLive(t *testing.T) {
	t.Parallel()
	m, d := bbtlbServe(t)
	ext := d.Extensions[1] // a small list: every row fits the window
	admin := bb20AdminAPI(t, m, d)
	cur, prev := bbtlbVersions(t, admin, ext.ID)
	lin := bbtlbNewTester(t, m, admin, ext.ID, "lin.bbtlb@example.com", "Lin Live")

	ctx := adminTab(t, m, d)
	extPage := fmt.Sprintf("%s/extensions/%d/adoption", m.URL(), ext.ID)
	openApp(t, ctx, extPage)
	bbkClickFound(t, ctx, "the Testers link", `document.getElementById("nav-testers")`)
	waitLocation(t, ctx, testersURL(m, ext))
	cell := bbtlbCell(lin.ID)
	bbtlbWait(t, ctx, 20*time.Second, cell+` === "not installed"`, "before her copy checked, Lin's Installed cell does not say not installed")
	bbtlbMark(t, ctx)
	tr := trackRequests(t, ctx, api.TestersPath(ext.ID))

	// Her copy checks in; nobody touches the page.
	lin.check(t, cur)
	start := time.Now()
	bbtlbWait(t, ctx, bbtlbLive+5*time.Second, fmt.Sprintf(`(%s ?? "").startsWith(%q)`, cell, cur+" · "),
		"Lin's copy checked in on "+cur+", and her open row never said so")
	t.Logf("Lin's check in showed on the open list after %v: %q", time.Since(start).Round(time.Millisecond), evalJS[string](t, ctx, cell))
	if !bbtlbSameDocument(t, ctx) {
		t.Fatal("the list showed the check in by reloading the page")
	}
	n := bbtlbStops(t, tr, "after one check in", 0)
	t.Logf("one check in: %d requests for testers: %v", n, tr.since(0))
	if n > 3 {
		t.Errorf("one check in made the one-page list ask for testers %d times:\n%s", n, strings.Join(tr.since(0), "\n"))
	}

	// A reload shows what was recorded, and the list is live again.
	do(t, ctx, chromedp.Reload())
	bbtlbWait(t, ctx, 20*time.Second, fmt.Sprintf(`(%s ?? "").startsWith(%q)`, cell, cur+" · "), "after a reload Lin's row does not say "+cur)
	bbtlbMark(t, ctx)
	lin.check(t, prev)
	bbtlbWait(t, ctx, bbtlbLive+5*time.Second, fmt.Sprintf(`(%s ?? "").startsWith(%q)`, cell, prev+" · "),
		"after a reload, Lin's copy reported "+prev+" and her row never said so")
	if !bbtlbSameDocument(t, ctx) {
		t.Fatal("after a reload the list showed the check in by reloading the page")
	}

	// Away to the Adoption tab and Back: still live.
	bbkClickFound(t, ctx, "the Adoption link", `document.getElementById("nav-adoption")`)
	waitLocation(t, ctx, extPage)
	do(t, ctx, chromedp.NavigateBack())
	waitLocation(t, ctx, testersURL(m, ext))
	bbtlbWait(t, ctx, 20*time.Second, fmt.Sprintf(`(%s ?? "").startsWith(%q)`, cell, prev+" · "), "Back on the list, Lin's row does not say "+prev)
	bbtlbMark(t, ctx)
	mark, _ := tr.counts()
	lin.check(t, cur)
	bbtlbWait(t, ctx, bbtlbLive+5*time.Second, fmt.Sprintf(`(%s ?? "").startsWith(%q)`, cell, cur+" · "),
		"after Back, Lin's copy reported "+cur+" and her row never said so")
	if !bbtlbSameDocument(t, ctx) {
		t.Fatal("after Back the list showed the check in by reloading the page")
	}
	bbtlbStops(t, tr, "after Back and a check in", mark)

	// Forward to the Adoption tab: its line follows her copy too.
	do(t, ctx, chromedp.NavigateForward())
	waitLocation(t, ctx, extPage)
	bbtlbUntil(t, 20*time.Second, "after Forward the extension page's #installs line does not count Lin on the current build", func() (bool, string) {
		n, _, line := bbtlbInstalls(t, ctx)
		return n == 1, line
	})
	_, of, before := bbtlbInstalls(t, ctx)
	bbtlbMark(t, ctx)
	lin.check(t, prev)
	after := bbtlbWaitInstalls(t, ctx, 0, of, "Lin's copy went back to "+prev+" and the open extension page's line never counted it")
	if !bbtlbSameDocument(t, ctx) {
		t.Fatal("the extension page showed the check in by reloading")
	}
	t.Logf("#installs: %q, then %q", before, after)
}

// TestBBTLBSecondTabAndAPIChangesShowLive: with the testers list open in
// two tabs, a tester invited with the form in the second shows in the
// first, revoked there (after its confirmation) shows revoked in the
// first, and restored and revoked again by another admin session (the
// API) shows so in both; the first tab is never reloaded, and its
// requests stop after each change.
func TestBBTLBSecondTabAndAPIChangesShowLive(t *testing.T) {
	t.Parallel()
	m, d := bbtlbServe(t)
	ext := d.Extensions[1]
	admin := bb20AdminAPI(t, m, d)
	a := adminTab(t, m, d)
	openApp(t, a, testersURL(m, ext))
	bbtlbWait(t, a, 20*time.Second, `!!document.querySelector("#testers [data-tester]")`, "the testers list never showed")
	b := newTab(t) // the same browser: the same admin, a second tab
	openApp(t, b, testersURL(m, ext))
	bbtlbWait(t, b, 20*time.Second, `!!document.querySelector("#testers [data-tester]") && !!document.querySelector("#invite-email")`, "the second tab's testers list never showed")
	bbtlbMark(t, a)
	tr := trackRequests(t, a, api.TestersPath(ext.ID))
	rowsBefore := evalJS[string](t, a, bbtlbRows)

	// The second tab invites Ada.
	bbkType(t, b, `#invite-email`, "ada.bbtlb@example.com")
	bbkType(t, b, `#invite-name`, "Ada Elsewhere")
	bbkPress(t, b, kb.Enter)
	bbkShownLink(t, b, "")
	ada := bbkTester(t, m, ext.ID, "ada.bbtlb@example.com")
	bbtlbWait(t, a, bbtlbLive+5*time.Second, fmt.Sprintf(`%s === "invited" && %s === "not installed"`, bbtlbBadge(ada.ID), bbtlbCell(ada.ID)),
		"Ada, invited in the second tab, never showed in the first as invited and not installed")
	if rows := evalJS[string](t, a, bbtlbRows); rows == rowsBefore {
		t.Fatalf("the first tab's rows are still %s", rows)
	}
	if n := bbtlbStops(t, tr, "after an invite in the second tab", 0); n > 3 {
		t.Errorf("one invite elsewhere made the first tab ask for testers %d times:\n%s", n, strings.Join(tr.since(0), "\n"))
	}

	// The second tab revokes her, which asks first.
	mark, _ := tr.counts()
	do(t, b, chromedp.Click(chromedp.CSS(bbkRow(ada.ID)+` button.revoke`)))
	do(t, b, chromedp.Click(chromedp.CSS(bbkRow(ada.ID)+` button.confirm-revoke[aria-disabled="false"]`)))
	bbtlbWait(t, a, bbtlbLive+5*time.Second, bbtlbBadge(ada.ID)+` === "revoked"`, "Ada, revoked in the second tab, never showed revoked in the first")
	bbtlbStops(t, tr, "after a revoke in the second tab", mark)

	// Another admin session restores her, then revokes her again.
	mark, _ = tr.counts()
	if code, body := admin.call(http.MethodPost, api.TesterRestorePath(ext.ID, ada.ID), nil); code/100 != 2 {
		t.Fatalf("restoring Ada through the API: %d %s", code, body)
	}
	for _, tab := range []context.Context{a, b} {
		bbtlbWait(t, tab, bbtlbLive+5*time.Second, bbtlbBadge(ada.ID)+` === "invited"`, "Ada, restored through the API, never showed invited again")
	}
	if code, body := admin.call(http.MethodDelete, api.TesterPath(ext.ID, ada.ID), nil); code/100 != 2 {
		t.Fatalf("revoking Ada through the API: %d %s", code, body)
	}
	for _, tab := range []context.Context{a, b} {
		bbtlbWait(t, tab, bbtlbLive+5*time.Second, bbtlbBadge(ada.ID)+` === "revoked"`, "Ada, revoked through the API, never showed revoked")
	}
	if n := bbtlbStops(t, tr, "after a restore and a revoke through the API", mark); n > 6 {
		t.Errorf("a restore and a revoke elsewhere made the first tab ask for testers %d times:\n%s", n, strings.Join(tr.since(mark), "\n"))
	}
	if !bbtlbSameDocument(t, a) {
		t.Fatal("the first tab was reloaded")
	}
	if n := evalJS[int](t, a, `[...document.querySelectorAll("#testers [data-tester]")].filter(r => r.innerText.includes("ada.bbtlb@example.com")).length`); n != 1 {
		t.Errorf("Ada shows in %d rows of the first tab, want 1", n)
	}
}

// TestBBTLBFilteredListKeepsItsFilterWhenEventsArrive: an admin types a
// search into the testers list while a tester's copy checks in: the
// search text, the caret in the field, the address and the filtered rows
// are kept, and the matching row shows the check; a tester invited
// elsewhere who matches joins the filtered rows, one who does not never
// shows.
func TestBBTLBFilteredListKeepsItsFilterWhenEventsArrive(t *testing.T) {
	t.Parallel()
	m, d := bbtlbServe(t)
	ext := d.Extensions[0] // 60 testers: more than the window holds
	admin := bb20AdminAPI(t, m, d)
	cur, _ := bbtlbVersions(t, admin, ext.ID)
	lin := bbtlbNewTester(t, m, admin, ext.ID, "lin.bbtlb@example.com", "Lin Filter")
	ctx := adminTab(t, m, d)
	openApp(t, ctx, testersURL(m, ext))
	bbtlbWait(t, ctx, 20*time.Second, `+document.getElementById("testers")?.dataset.count > 20`, "the testers list never showed")
	bbtlbMark(t, ctx)

	// Typing, with the check in on its way between two keys.
	bbkClickIntoField(t, ctx, `#tester-search`)
	do(t, ctx, chromedp.KeyEvent("bbt"))
	lin.check(t, cur)
	do(t, ctx, chromedp.KeyEvent("lb"))
	onlyLin := fmt.Sprintf(`%s === %q`, bbtlbRows, bbtlbIDs(lin.ID))
	// The whole search applied (the address says so): on a busy machine a
	// pause between two keys applies "bb" first, which Lin alone matches
	// too, and the checks below would read the page before "bbtlb" came.
	bbtlbWait(t, ctx, bbtlbLive+10*time.Second, onlyLin+fmt.Sprintf(` && (%s ?? "").startsWith(%q) && new URLSearchParams(location.search).get("q") === "bbtlb"`, bbtlbCell(lin.ID), cur+" · "),
		"searching bbtlb while Lin's copy checked in, the list never showed only Lin, on "+cur+", with the search in the address")
	kept := func(when string) {
		t.Helper()
		if v := evalJS[string](t, ctx, `document.getElementById("tester-search").value`); v != "bbtlb" {
			t.Errorf("%s: the search field holds %q, want bbtlb", when, v)
		}
		if f := focused(t, ctx); f.ID != "tester-search" {
			t.Errorf("%s: the focus moved from the search field to %s", when, f)
		}
		if s := evalJS[string](t, ctx, `location.search`); !strings.Contains(s, "bbtlb") {
			t.Errorf("%s: the address lost the search: %q", when, s)
		}
		if !bbtlbSameDocument(t, ctx) {
			t.Errorf("%s: the page was reloaded", when)
		}
	}
	kept("after the check in")

	// Another admin invites two testers: one matches the search.
	tr := trackRequests(t, ctx, api.TestersPath(ext.ID))
	mx := bbtlbInvite(t, admin, ext.ID, "max.bbtlb@example.com", "Max Filter")
	zed := bbtlbInvite(t, admin, ext.ID, "zed.other@example.com", "Zed Other")
	bbtlbWait(t, ctx, bbtlbLive+5*time.Second, fmt.Sprintf(`%s === %q`, bbtlbRows, bbtlbIDs(lin.ID, mx.ID)),
		"Max, invited elsewhere and matching the search, never joined Lin in the filtered list")
	bbtlbStops(t, tr, "after two invites elsewhere", 0)
	if rows := evalJS[string](t, ctx, bbtlbRows); rows != bbtlbIDs(lin.ID, mx.ID) {
		t.Errorf("the filtered list shows testers %s, want Lin and Max (%s); Zed (%d) does not match", rows, bbtlbIDs(lin.ID, mx.ID), zed.ID)
	}
	kept("after the invites")
}

// TestBBTLBScrolledListKeepsItsPlaceWhenEventsArrive: an admin has wheeled
// down the testers list to a tester's row; her copy checks in and the row
// says so where it was, the page not scrolled; a tester invited elsewhere
// (on top, out of view) leaves the row in view.
func TestBBTLBScrolledListKeepsItsPlaceWhenEventsArrive(t *testing.T) {
	t.Parallel()
	m, d := bbtlbServe(t)
	ext := d.Extensions[0]
	admin := bb20AdminAPI(t, m, d)
	cur, _ := bbtlbVersions(t, admin, ext.ID)
	lin := bbtlbNewTester(t, m, admin, ext.ID, "lin.bbtlb@example.com", "Lin Scroll")
	// Thirty newer testers: Lin's row is far below the top of the list.
	for i := range 30 {
		tt := &betaport.Tester{ExtensionID: ext.ID, Email: fmt.Sprintf("filler%02d.bbtlb@example.com", i), Name: fmt.Sprintf("Filler %02d", i)}
		if err := m.Store.InviteTester(context.Background(), tt, storetest.Link(credential.HashToken(credential.NewToken())), d.Admins[0].Email); err != nil {
			t.Fatal(err)
		}
	}
	ctx := adminTab(t, m, d)
	openApp(t, ctx, testersURL(m, ext))
	bbtlbWait(t, ctx, 20*time.Second, `+document.getElementById("testers")?.dataset.count >= 91`, "the testers list never showed its testers")
	bbtlbMark(t, ctx)

	// The wheel, until Lin's row is in the middle of the window.
	type place struct {
		Found  bool    `json:"found"`
		Top    float64 `json:"top"`
		Height float64 `json:"height"`
		H      float64 `json:"h"`
		Y      float64 `json:"y"`
	}
	where := func() place {
		return evalJS[place](t, ctx, fmt.Sprintf(`(() => { const r = document.querySelector('#testers [data-tester="%d"]');
			if (!r) return {found: false, top: 0, height: 0, h: innerHeight, y: scrollY};
			const b = r.getBoundingClientRect(); return {found: true, top: b.top, height: b.height, h: innerHeight, y: scrollY}; })()`, lin.ID))
	}
	const still = `new Promise(done => { let last = scrollY, frames = 0;
		const look = () => { if (scrollY !== last) { last = scrollY; frames = 0; } else if (++frames >= 10) { return done(true); } requestAnimationFrame(look); };
		requestAnimationFrame(look); })`
	x, y := listCenter(t, ctx, "testers")
	var p place
	for try := 0; ; try++ {
		evalJS[bool](t, ctx, still)
		p = where()
		if p.Found && p.Top > p.H*0.3 && p.Top+p.Height < p.H*0.7 {
			break
		}
		if try == 60 {
			t.Fatalf("the wheel never brought Lin's row to the middle of the window: %+v", p)
		}
		delta := 300.0
		if p.Found {
			delta = p.Top + p.Height/2 - p.H/2
		}
		if err := wheel(ctx, x, y, delta); err != nil {
			t.Fatal(err)
		}
	}
	if p.Y < 200 {
		t.Fatalf("Lin's row was in view with the page scrolled by %v only: the list is not in the order this test needs (newest first)", p.Y)
	}
	tr := trackRequests(t, ctx, api.TestersPath(ext.ID))

	// Her copy checks in.
	lin.check(t, cur)
	bbtlbWait(t, ctx, bbtlbLive+5*time.Second, fmt.Sprintf(`(%s ?? "").startsWith(%q)`, bbtlbCell(lin.ID), cur+" · "),
		"Lin's copy checked in and her row, scrolled to, never said so")
	bbtlbStops(t, tr, "after a check in, scrolled", 0)
	evalJS[bool](t, ctx, still)
	q := where()
	if !q.Found || math.Abs(q.Y-p.Y) > 2 || math.Abs(q.Top-p.Top) > 2 {
		t.Errorf("after the check in the page moved: Lin's row at %v with the page scrolled by %v, was %v and %v", q.Top, q.Y, p.Top, p.Y)
	}

	// A tester invited elsewhere comes on top, out of view.
	mark, _ := tr.counts()
	count := evalJS[int](t, ctx, `+document.getElementById("testers").dataset.count`)
	bbtlbInvite(t, admin, ext.ID, "max.bbtlb@example.com", "Max Scroll")
	bbtlbWait(t, ctx, bbtlbLive+5*time.Second, fmt.Sprintf(`+document.getElementById("testers").dataset.count === %d`, count+1),
		"a tester invited elsewhere never reached the scrolled list")
	bbtlbStops(t, tr, "after an invite elsewhere, scrolled", mark)
	evalJS[bool](t, ctx, still)
	r := where()
	if !r.Found || r.Y < p.Y/2 || r.Top < 0 || r.Top+r.Height > r.H || math.Abs(r.Top-p.Top) > p.Height+2 {
		t.Errorf("after an invite elsewhere Lin's row is at %v (found %v) with the page scrolled by %v; it was at %v with %v: the place was lost", r.Top, r.Found, r.Y, p.Top, p.Y)
	}
	if !bbtlbSameDocument(t, ctx) {
		t.Error("the page was reloaded")
	}
}

// ---------------------------------------------------------------- extension page

// TestBBTLBInstallsLineLive: the Adoption tab's "N of M testers on the
// current build" line, open in two tabs, follows a tester invited by
// another admin session, her copy checking in (the service pushes a
// testers event within about a second of its flush), her revoke and her
// restore, with no reload; its requests stop after each change.
func TestBBTLBInstallsLineLive(t *testing.T) {
	t.Parallel()
	m, d := bbtlbServe(t)
	ext := d.Extensions[1]
	admin := bb20AdminAPI(t, m, d)
	cur, _ := bbtlbVersions(t, admin, ext.ID)
	page := fmt.Sprintf("%s/extensions/%d/adoption", m.URL(), ext.ID)
	a := adminTab(t, m, d)
	openApp(t, a, page)
	b := newTab(t)
	openApp(t, b, page)
	var n0, m0 int
	bbtlbUntil(t, 20*time.Second, "the extension page never said how many testers are on the current build", func() (bool, string) {
		var line string
		n0, m0, line = bbtlbInstalls(t, a)
		return n0 >= 0, line
	})
	bbtlbWaitInstalls(t, b, n0, m0, "the second tab's line never showed")
	bbtlbMark(t, a)
	bbtlbMark(t, b)
	tr := trackRequests(t, a, api.InstallsPath(ext.ID))
	stream := bbtlbListen(t, admin, ext.ID)
	stream.wait(t, "bundles", 0, patient(10*time.Second))

	// Another admin session invites Lin.
	inv := bbtlbInvite(t, admin, ext.ID, "lin.bbtlb@example.com", "Lin Installs")
	for _, tab := range []context.Context{a, b} {
		bbtlbWaitInstalls(t, tab, n0, m0+1, "Lin, invited elsewhere, was never counted among the testers")
	}
	lin := bbtlbJoin(t, m.URL(), ext.ID, inv)
	stream.quiet(t, 1500*time.Millisecond, patient(15*time.Second))

	// Her copy checks in on the current build.
	from := stream.mark()
	start := time.Now()
	lin.check(t, cur)
	ev := stream.wait(t, "testers", from, patient(bbtlbLive))
	t.Logf("the testers event came %v after the check (flush every %v): %s", ev.At.Sub(start).Round(time.Millisecond), bbtlbFlush, ev.Data)
	for _, tab := range []context.Context{a, b} {
		line := bbtlbWaitInstalls(t, tab, n0+1, m0+1, "Lin's copy checked in on the current build and the open page never counted it")
		t.Logf("#installs after the check in: %q", line)
	}

	// Revoked elsewhere: no longer counted; restored: a tester again.
	if code, body := admin.call(http.MethodDelete, api.TesterPath(ext.ID, lin.ID), nil); code/100 != 2 {
		t.Fatalf("revoking Lin through the API: %d %s", code, body)
	}
	for _, tab := range []context.Context{a, b} {
		bbtlbWaitInstalls(t, tab, n0, m0, "Lin, revoked elsewhere, is still counted")
	}
	if code, body := admin.call(http.MethodPost, api.TesterRestorePath(ext.ID, lin.ID), nil); code/100 != 2 {
		t.Fatalf("restoring Lin through the API: %d %s", code, body)
	}
	bbtlbUntil(t, bbtlbLive+5*time.Second, "Lin, restored elsewhere, was never counted among the testers again", func() (bool, string) {
		_, of, line := bbtlbInstalls(t, a)
		return of == m0+1, line
	})
	if !bbtlbSameDocument(t, a) || !bbtlbSameDocument(t, b) {
		t.Fatal("a tab was reloaded")
	}
	if n := bbtlbStops(t, tr, "after an invite, a check in, a revoke and a restore", 0); n > 12 {
		t.Errorf("four changes made the page ask for its counts %d times:\n%s", n, strings.Join(tr.since(0), "\n"))
	}
	// A reload reads the same.
	_, _, line := bbtlbInstalls(t, b)
	do(t, b, chromedp.Reload())
	bbtlbUntil(t, 20*time.Second, "after a reload the line differs", func() (bool, string) {
		_, _, l := bbtlbInstalls(t, b)
		return l == line, fmt.Sprintf("%q, want %q", l, line)
	})
}

// bbtlbAdoptionSetup: Lin's copy checks three times on the current build,
// Max's twice on the one before, and three checks come through the
// extension's shared update URL on the current build; the service has
// written them all.
func bbtlbAdoptionSetup(t *testing.T, m *cli.Main, admin *bb20API, ext *betaport.Extension) (cur, prev string, lin, mx *bbtlbTester, upd api.Updates) {
	t.Helper()
	cur, prev = bbtlbVersions(t, admin, ext.ID)
	admin.get(api.UpdatesPath(ext.ID), &upd)
	lin = bbtlbNewTester(t, m, admin, ext.ID, "lin.bbtlb@example.com", "Lin Adoption")
	mx = bbtlbNewTester(t, m, admin, ext.ID, "max.bbtlb@example.com", "Max Adoption")
	if lin.ChromeID != upd.ChromeID {
		t.Fatalf("Lin's policy names %s, the extension is %s", lin.ChromeID, upd.ChromeID)
	}
	for range 3 {
		lin.check(t, cur)
		bbtlbCheck(t, upd.UpdateURL, upd.ChromeID, cur)
	}
	for range 2 {
		mx.check(t, prev)
	}
	bbtlbCounted(t, admin, ext.ID, map[string]int64{cur: 6, prev: 2})
	bbtlbRecorded(t, admin, ext.ID, lin.ID, cur)
	bbtlbRecorded(t, admin, ext.ID, mx.ID, prev)
	return cur, prev, lin, mx, upd
}

// TestBBTLBAdoptionCountsTesters: the Adoption section offers a choice
// labelled Count, "Update checks" (chosen) or "Testers". Chosen with Tab
// and an arrow key, Testers counts distinct testers per day by the version
// their copy reported (checks through the shared update URL are checks,
// not testers), in the chart and in a table captioned "Testers by day"
// whose count column is headed Testers, the focus staying on the choice; a
// mouse click goes back to checks and to testers again.
func TestBBTLBAdoptionCountsTesters(t *testing.T) {
	t.Parallel()
	m, d := bbtlbServe(t)
	ext := d.Extensions[1]
	admin := bb20AdminAPI(t, m, d)
	cur, prev, _, _, _ := bbtlbAdoptionSetup(t, m, admin, ext)
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/adoption", m.URL(), ext.ID))

	var ad bbtlbAdoption
	read := func() bbtlbAdoption { ad = bbtlbReadAdoption(t, ctx); return ad }
	checks := func() (bool, string) {
		a := read()
		return a.checksView() && a.shows(cur, "6", "75%") && a.shows(prev, "2", "25%"), a.String()
	}
	testers := func() (bool, string) {
		a := read()
		return a.testersView() && a.shows(cur, "1", "50%") && a.shows(prev, "1", "50%"), a.String()
	}
	bbtlbUntil(t, 20*time.Second, "the Adoption section does not count 6 and 2 update checks today, with Update checks chosen", checks)
	if ad.Group != "Count" {
		t.Errorf("the choice's group is named %q, want Count", ad.Group)
	}
	if len(ad.Radios) != 2 || ad.Radios[0].Label != "Update checks" || ad.Radios[1].Label != "Testers" {
		t.Fatalf("the choice offers %+v, want Update checks and Testers", ad.Radios)
	}
	if c := ad.chartToday(cur); c != "75" {
		t.Errorf("counting checks, today's chart gives %s %q%%, want 75 (chart %v)", cur, c, ad.Chart)
	}

	// With the keys: Tab to the group, an arrow to Testers.
	bbtlbTabToCount(t, ctx)
	if f := read().focusedRadio(); f != "Update checks" {
		t.Errorf("Tab into the group focused %q, want the chosen Update checks", f)
	}
	bbPress(t, ctx, kb.ArrowRight)
	bbtlbUntil(t, 10*time.Second, "an arrow key in the Count group never made the section count testers (1 and 1 today)", testers)
	if f := ad.focusedRadio(); f != "Testers" {
		t.Errorf("after the arrow key the focus is on %q (%s), want the Testers choice", f, focused(t, ctx))
	}
	if c, p := ad.chartToday(cur), ad.chartToday(prev); c != "50" || p != "50" {
		t.Errorf("counting testers, today's chart gives %s %q%% and %s %q%%, want 50 and 50 (chart %v)", cur, c, prev, p, ad.Chart)
	}
	checkAccessible(t, ctx, "the adoption section counting testers")

	// With the mouse: back to checks, then testers again.
	bbtlbClickChoice(t, ctx, "Update checks")
	bbtlbUntil(t, 10*time.Second, "a click on Update checks never counted checks again", checks)
	bbtlbClickChoice(t, ctx, "Testers")
	bbtlbUntil(t, 10*time.Second, "a click on Testers never counted testers again", testers)
}

// TestBBTLBCheckArrivesWhileChoosingTesters: the admin chooses Testers
// with the keys while its counts are on their way and a new tester's copy
// checks in (the service pushes its event before the counts arrive): the
// choice holds, the section counts testers consistently once the counts
// arrive, the installs line counts the new copy, and nothing reloads in a
// loop; after a reload the counts include her.
func TestBBTLBCheckArrivesWhileChoosingTesters(t *testing.T) {
	t.Parallel()
	m, d := bbtlbServe(t)
	ext := d.Extensions[1]
	admin := bb20AdminAPI(t, m, d)
	cur, prev, _, _, _ := bbtlbAdoptionSetup(t, m, admin, ext)
	sam := bbtlbNewTester(t, m, admin, ext.ID, "sam.bbtlb@example.com", "Sam Adoption")
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/adoption", m.URL(), ext.ID))
	var ad bbtlbAdoption
	read := func() bbtlbAdoption { ad = bbtlbReadAdoption(t, ctx); return ad }
	bbtlbUntil(t, 20*time.Second, "the Adoption section does not count today's checks", func() (bool, string) {
		a := read()
		return a.checksView() && a.shows(cur, "6", "") && a.shows(prev, "2", ""), a.String()
	})
	n0, of0 := -1, -1
	bbtlbUntil(t, 20*time.Second, "the extension page's #installs line never showed", func() (bool, string) {
		var line string
		n0, of0, line = bbtlbInstalls(t, ctx)
		return n0 >= 0, line
	})
	stream := bbtlbListen(t, admin, ext.ID)
	stream.wait(t, "bundles", 0, patient(10*time.Second))
	stream.quiet(t, 1500*time.Millisecond, patient(15*time.Second))
	bbtlbMark(t, ctx)
	adoptionReqs := trackRequestsExcept(t, ctx, api.ExtensionPath(ext.ID)+"/", "/events")

	bbtlbTabToCount(t, ctx)
	// What the page asks the service from now on waits, as on a slow line.
	release := holdRequests(t, ctx, fmt.Sprintf("*/api/extensions/%d/*", ext.ID))
	bbPress(t, ctx, kb.ArrowRight)
	bbtlbUntil(t, 10*time.Second, "the arrow key did not choose Testers at once", func() (bool, string) {
		a := read()
		return a.checked() == "Testers", a.String()
	})
	from := stream.mark()
	sam.check(t, cur)
	stream.wait(t, "testers", from, patient(bbtlbLive))
	release()

	bbtlbUntil(t, 15*time.Second, "once the counts arrived the section did not count testers, consistently", func() (bool, string) {
		a := read()
		return a.testersView() && (a.shows(cur, "1", "") || a.shows(cur, "2", "")) && a.shows(prev, "1", ""), a.String()
	})
	bbtlbWaitInstalls(t, ctx, n0+1, of0, "Sam's copy checked in on the current build and the #installs line never counted it")
	n := bbtlbStops(t, adoptionReqs, "after the choice and the check in", 0)
	t.Logf("the page's %d requests to the extension's API after the choice: %v", n, adoptionReqs.since(0))
	if a := read(); !a.testersView() || a.focusedRadio() != "Testers" {
		t.Errorf("after the requests settled the section is %s: want Testers chosen, focused and counted", a)
	}
	t.Logf("the open section, counting testers after Sam's check in: %v (the current build's row %v)", ad.Rows, ad.row(cur))
	if !bbtlbSameDocument(t, ctx) {
		t.Error("the page was reloaded")
	}

	// A reload: Sam is counted among today's testers.
	do(t, ctx, chromedp.Reload())
	bbtlbUntil(t, 20*time.Second, "after a reload the Adoption section shows no choice", func() (bool, string) {
		a := read()
		return len(a.Radios) == 2 && len(a.Rows) > 0, a.String()
	})
	if ad.checked() != "Testers" {
		bbtlbClickChoice(t, ctx, "Testers")
	}
	bbtlbUntil(t, 15*time.Second, "after a reload, counting testers, Sam is not counted on the current build (2 and 1 today)", func() (bool, string) {
		a := read()
		return a.testersView() && a.shows(cur, "2", "") && a.shows(prev, "1", ""), a.String()
	})
	bbtlbClickChoice(t, ctx, "Update checks")
	bbtlbUntil(t, 15*time.Second, "after a reload, counting checks, Sam's check is not counted (7 and 2 today)", func() (bool, string) {
		a := read()
		return a.checksView() && a.shows(cur, "7", "") && a.shows(prev, "2", ""), a.String()
	})
}
