package http_test

// Black-box tests of issue 31: channels, promote, and staged rollouts.
//
// Written by a second pair of eyes from the issue, the API as offered
// (channels, promote, rollout actions, the tester's channel, the submit
// flow's "channel" and "rollout", webhooks, audit) and the public types in
// app/api and app/betaport only, not from the implementation. Which testers
// a rollout reaches is checked against betaport.InRollout, the pure bucket
// function the contract names. Testers are invited through the API, sign
// in with their invite link, and read their personal update URL from their
// Linux policy, as in the tests of issue 27 (helpers of
// blackbox_testerupdates_test.go and blackbox_testerlive_test.go). Like
// every test built on newEnv they run on (SQLite, files) here and on
// (PostgreSQL, S3) through TestOnPostgresAndS3.
//
// Every refused request is checked to leave the state as it was: the
// channels, the bundles list, the testers list, the audit trail, the
// extension's revision, and the stored uploads and bundles, read before and
// after.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/storetest"
)

// ------------------------------------------------------------ the world

// bbchWorld is one extension with its admin, its submit key and its shared
// update URL (a bbtuWorld), and the versions of the bundles published.
type bbchWorld struct {
	*bbtuWorld
	ext      int64
	versions map[int64]string
}

func newBBCHWorld(t *testing.T) *bbchWorld {
	t.Helper()
	w := newBBTUWorld(t)
	return &bbchWorld{bbtuWorld: w, ext: w.p.ext.ID, versions: map[int64]string{}}
}

// bbchTester is an active tester, the channel they were put on, and the
// update URL their installed copy checks with.
type bbchTester struct {
	*bbtuTester
	channel string
	url     string
}

func (w *bbchWorld) channelsPath() string { return api.ExtensionPath(w.ext) + "/channels" }

func (w *bbchWorld) promotePath(number int64) string {
	return api.BundlesPath(w.ext) + "/" + strconv.FormatInt(number, 10) + "/promote"
}

func (w *bbchWorld) rolloutPath(channel, action string) string {
	return api.ChannelPath(w.ext, channel) + "/rollout/" + action
}

func (w *bbchWorld) testerChannelPath(id int64) string {
	return api.TesterPath(w.ext, id) + "/channel"
}

// join invites a tester through the API onto channel ("": none named),
// opens their link as a browser does, and reads their update URL.
func (w *bbchWorld) join(t *testing.T, name, channel string) *bbchTester {
	t.Helper()
	email := uniqueEmail("bbch-" + strings.ToLower(name))
	resp, body := w.e.send(t, "POST", api.TestersPath(w.ext), w.admin, api.Invite{Email: email, Name: name, Channel: channel})
	var inv api.Invited
	if resp.StatusCode != 201 || json.Unmarshal(body, &inv) != nil || inv.ID == 0 || inv.InviteURL == "" {
		t.Fatalf("inviting %s onto channel %q = %d %s", email, channel, resp.StatusCode, body)
	}
	want := channel
	if want == "" {
		want = betaport.DefaultChannel
	}
	if inv.Channel != want {
		t.Fatalf("inviting %s onto channel %q: the answer puts them on %q: %s", email, channel, inv.Channel, body)
	}
	tt := &bbtuTester{id: inv.ID, email: email, invite: inv.InviteURL}
	tt.session = bbtuOpenLink(t, w.e, inv.InviteURL)
	u := (&bbtlWorld{bbtuWorld: w.bbtuWorld}).policyURL(t, tt.session)
	return &bbchTester{bbtuTester: tt, channel: want, url: u}
}

// ------------------------------------------------------------ reading

// channels reads the channels list, which must be sorted by name.
func (w *bbchWorld) channels(t *testing.T) []betaport.Channel {
	t.Helper()
	resp, body := w.e.do(t, "GET", w.channelsPath(), w.admin)
	var list struct {
		Items []betaport.Channel `json:"items"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &list) != nil || list.Items == nil {
		t.Fatalf("GET channels = %d %s", resp.StatusCode, body)
	}
	for i := 1; i < len(list.Items); i++ {
		if list.Items[i-1].Name >= list.Items[i].Name {
			t.Fatalf("the channels list is not sorted by name: %v", bbchNames(list.Items))
		}
	}
	return list.Items
}

func bbchNames(list []betaport.Channel) []string {
	var names []string
	for _, c := range list {
		names = append(names, c.Name)
	}
	return names
}

// channel reads one channel.
func (w *bbchWorld) channel(t *testing.T, name string) betaport.Channel {
	t.Helper()
	resp, body := w.e.do(t, "GET", api.ChannelPath(w.ext, name), w.admin)
	var c betaport.Channel
	if resp.StatusCode != 200 || json.Unmarshal(body, &c) != nil || c.Name != name {
		t.Fatalf("GET channel %s = %d %s", name, resp.StatusCode, body)
	}
	return c
}

// create makes a channel through the API.
func (w *bbchWorld) create(t *testing.T, name string) betaport.Channel {
	t.Helper()
	resp, body := w.e.send(t, "POST", w.channelsPath(), w.admin, api.NewChannel{Name: name})
	var c betaport.Channel
	if resp.StatusCode != 201 || json.Unmarshal(body, &c) != nil {
		t.Fatalf("creating channel %q = %d %s", name, resp.StatusCode, body)
	}
	if c.Name != name || c.CurrentBundle != 0 || c.Rollout != nil || c.Testers != 0 || c.CreatedAt.IsZero() {
		t.Fatalf("the new channel %q answered %s", name, body)
	}
	if loc := resp.Header.Get("Location"); !strings.HasSuffix(loc, api.ChannelPath(w.ext, name)) {
		t.Errorf("the new channel %q: Location %q, want its path %s", name, loc, api.ChannelPath(w.ext, name))
	}
	return c
}

// problem checks a refusal: status, a problem document of type typ (any
// type when ""), with a title and a detail.
func bbchProblem(t *testing.T, what string, resp *http.Response, body []byte, status int, typ string) api.Problem {
	t.Helper()
	var p api.Problem
	if resp.StatusCode != status || resp.Header.Get("Content-Type") != api.ProblemContentType || json.Unmarshal(body, &p) != nil {
		t.Fatalf("%s: %d %q %s; want a %d problem", what, resp.StatusCode, resp.Header.Get("Content-Type"), body, status)
	}
	if p.Status != status || (typ != "" && p.Type != typ) || p.Title == "" || len(p.Detail) < 10 {
		t.Fatalf("%s: problem %s; want status %d, type %q, a title and a detail", what, body, status, typ)
	}
	return p
}

// refused checks a refusal with one of statuses, as a problem document.
func bbchRefused(t *testing.T, what string, resp *http.Response, body []byte, statuses ...int) api.Problem {
	t.Helper()
	if !slices.Contains(statuses, resp.StatusCode) {
		t.Fatalf("%s: %d %s; want one of %v", what, resp.StatusCode, body, statuses)
	}
	return bbchProblem(t, what, resp, body, resp.StatusCode, "")
}

// namesChannels checks a 404's detail names every channel there is.
func bbchNamesChannels(t *testing.T, what string, p api.Problem, channels ...string) {
	t.Helper()
	for _, c := range channels {
		if !strings.Contains(p.Detail, c) {
			t.Errorf("%s: the detail %q does not name the channel %q there is", what, p.Detail, c)
		}
	}
}

// state is everything a refused request must leave as it was, as the API
// and the storage show it, one field per line.
func (w *bbchWorld) state(t *testing.T) string {
	t.Helper()
	var out strings.Builder
	section := func(name string, body []byte) {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("state: %s: %v: %s", name, err, body)
		}
		// A tester's own reads move their lastSeenAt: not part of what a
		// refused request must leave alone.
		if m, ok := v.(map[string]any); ok {
			if data, ok := m["data"].([]any); ok {
				for _, d := range data {
					if dm, ok := d.(map[string]any); ok {
						delete(dm, "lastSeenAt")
					}
				}
			}
		}
		b, _ := json.MarshalIndent(v, name+" ", " ")
		out.WriteString(name + " ")
		out.Write(b)
		out.WriteString("\n")
	}
	get := func(path string) []byte {
		resp, body := w.e.do(t, "GET", path, w.admin)
		if resp.StatusCode != 200 {
			t.Fatalf("state: GET %s = %d %s", path, resp.StatusCode, body)
		}
		return body
	}
	// The testers list first: its read writes the update checks pending
	// (as in issue 27), which the channels' counts then show.
	section("testers", get(api.TestersPath(w.ext)+"?limit=100"))
	section("channels", get(w.channelsPath()))
	section("bundles", get(api.BundlesPath(w.ext)+"?page=0&limit=50"))
	audit, _ := json.Marshal(bbkAudit(t, w.e, w.ext, w.admin, 0))
	section("audit", audit)
	h := w.admin.Clone()
	h.Set("Accept", "application/json")
	resp, body := w.e.do(t, "GET", api.EventsPath(w.ext), h)
	var rev map[string]any
	if resp.StatusCode != 200 || json.Unmarshal(body, &rev) != nil {
		t.Fatalf("state: the revision = %d %s", resp.StatusCode, body)
	}
	if _, ok := rev["channels"]; !ok {
		t.Errorf("the extension's revision %s has no \"channels\"", body)
	}
	delete(rev, "testers") // moved by a tester's own activity
	b, _ := json.Marshal(rev)
	section("revision", b)
	zips, crxs := storedBundles(t, w.e)
	fmt.Fprintf(&out, "stored uploads %q\nstored bundles %q %q\n", w.e.keys(t, "uploads/"), zips, crxs)
	return out.String()
}

// wantSame checks the state is before's.
func (w *bbchWorld) wantSame(t *testing.T, what, before string) {
	t.Helper()
	after := w.state(t)
	if after == before {
		return
	}
	a, b := strings.Split(before, "\n"), strings.Split(after, "\n")
	var diff []string
	for i := 0; i < max(len(a), len(b)) && len(diff) < 12; i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			diff = append(diff, "- "+x, "+ "+y)
		}
	}
	t.Errorf("%s changed the state:\n%s", what, strings.Join(diff, "\n"))
}

// revision is the extension's "channels" revision.
func (w *bbchWorld) revision(t *testing.T) int64 {
	t.Helper()
	h := w.admin.Clone()
	h.Set("Accept", "application/json")
	resp, body := w.e.do(t, "GET", api.EventsPath(w.ext), h)
	var rev struct {
		Channels *int64 `json:"channels"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &rev) != nil || rev.Channels == nil {
		t.Fatalf("the revision = %d %s; want \"channels\"", resp.StatusCode, body)
	}
	return *rev.Channels
}

// bundles reads the admin's bundles list by number.
func (w *bbchWorld) bundles(t *testing.T) map[int64]betaport.Bundle {
	t.Helper()
	resp, body := w.e.do(t, "GET", api.BundlesPath(w.ext)+"?page=0&limit=50", w.admin)
	var list []betaport.Bundle
	if resp.StatusCode != 200 || json.Unmarshal(body, &list) != nil {
		t.Fatalf("GET bundles = %d %s", resp.StatusCode, body)
	}
	out := map[int64]betaport.Bundle{}
	for _, b := range list {
		out[b.Number] = b
	}
	return out
}

// testers reads the testers list (filtered by channel when not "").
func (w *bbchWorld) testers(t *testing.T, channel string) map[int64]betaport.Tester {
	t.Helper()
	path := api.TestersPath(w.ext) + "?limit=100"
	if channel != "" {
		path += "&channel=" + channel
	}
	resp, body := w.e.do(t, "GET", path, w.admin)
	var page api.Page[betaport.Tester]
	if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil || page.NextCursor != "" {
		t.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
	}
	out := map[int64]betaport.Tester{}
	for _, tt := range page.Data {
		out[tt.ID] = tt
	}
	return out
}

// current is the number of the bundle "current" names for who (0: 404).
func (w *bbchWorld) current(t *testing.T, who http.Header, query string) int64 {
	t.Helper()
	resp, body := w.e.do(t, "GET", api.CurrentBundlePath(w.ext)+query, who)
	if resp.StatusCode == 404 {
		return 0
	}
	var b betaport.Bundle
	if resp.StatusCode != 200 || json.Unmarshal(body, &b) != nil || b.Number == 0 {
		t.Fatalf("GET current%s = %d %s", query, resp.StatusCode, body)
	}
	return b.Number
}

// builds lists the numbers of the extension's bundles on who's builds page.
func (w *bbchWorld) builds(t *testing.T, who http.Header) []int64 {
	t.Helper()
	resp, body := w.e.do(t, "GET", api.PathBuilds+"?limit=100", who)
	var page api.Page[betaport.Bundle]
	if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil {
		t.Fatalf("GET builds = %d %s", resp.StatusCode, body)
	}
	var ns []int64
	for _, b := range page.Data {
		if b.ExtensionID == w.ext {
			ns = append(ns, b.Number)
		}
	}
	return ns
}

// fetch gets a download as who, following a redirect to the storage.
func (w *bbchWorld) fetch(t *testing.T, path string, who http.Header) (int, []byte) {
	t.Helper()
	resp, body := bbtuFetch(t, w.e, "GET", path, who)
	return resp.StatusCode, body
}

// wantFeed checks tt's update URL offers bundle number to a copy at
// installed (number 0: noupdate).
func (w *bbchWorld) wantFeed(t *testing.T, what string, tt *bbchTester, installed string, number int64) {
	t.Helper()
	if number == 0 {
		w.wantNoUpdate(t, what, tt.url, installed)
		return
	}
	w.wantOffer(t, what, tt.url, installed, w.versions[number], number)
}

// feedOffers is the version tt's update URL offers a copy at installed
// ("" for noupdate).
func (w *bbchWorld) feedOffers(t *testing.T, tt *bbchTester, installed string) string {
	t.Helper()
	st, g, body := bbtuCheck(t, w.e, tt.url, bbtuX(w.upd.ChromeID, installed))
	v, _, _ := bbtuOffer(t, "the update check of "+tt.email, st, g, body, w.upd.ChromeID)
	return v
}

// ------------------------------------------------------------ changing

// call1 is call 1 of the submit flow with the key and extra fields.
func (w *bbchWorld) call1(t *testing.T, extra map[string]any) (*http.Response, []byte) {
	t.Helper()
	body := map[string]any{"extensionId": w.p.key.ExtensionID, "apiKey": w.p.key.APIKey}
	maps.Copy(body, extra)
	return w.e.send(t, "POST", api.PathSubmitUpload, nil, body)
}

// submit publishes version through the three calls, call 1 carrying extra.
func (w *bbchWorld) submit(t *testing.T, version string, extra map[string]any) betaport.Bundle {
	t.Helper()
	resp, body := w.call1(t, extra)
	var u api.UploadURL
	if resp.StatusCode != 200 || json.Unmarshal(body, &u) != nil || u.URL == "" {
		t.Fatalf("call 1 with %v = %d %s", extra, resp.StatusCode, body)
	}
	if resp, body := w.p.put(t, u.URL, api.ZipContentType, validZip(t, version)); resp.StatusCode != 200 {
		t.Fatalf("call 2 = %d %s", resp.StatusCode, body)
	}
	resp, body = w.p.sign(t)
	var b betaport.Bundle
	if resp.StatusCode != 200 || json.Unmarshal(body, &b) != nil || b.Number == 0 {
		t.Fatalf("call 3 (%s, %v) = %d %s", version, extra, resp.StatusCode, body)
	}
	w.versions[b.Number] = b.Version
	return b
}

func (w *bbchWorld) promote(t *testing.T, number int64, body any) (*http.Response, []byte) {
	t.Helper()
	return w.e.send(t, "POST", w.promotePath(number), w.admin, body)
}

// promoteOK promotes number to channel at percent (0: none sent).
func (w *bbchWorld) promoteOK(t *testing.T, number int64, channel string, percent int) betaport.Channel {
	t.Helper()
	resp, body := w.promote(t, number, api.Promotion{Channel: channel, Percent: percent})
	var c betaport.Channel
	if resp.StatusCode != 200 || json.Unmarshal(body, &c) != nil || c.Name != channel {
		t.Fatalf("promoting bundle %d to %s at %d %% = %d %s", number, channel, percent, resp.StatusCode, body)
	}
	if percent == 0 || percent == 100 {
		if c.CurrentBundle != number || c.Rollout != nil {
			t.Fatalf("promoting bundle %d to %s at once answered %s", number, channel, body)
		}
	} else if c.Rollout == nil || c.Rollout.Bundle != number || c.Rollout.Percent != percent || c.Rollout.State != betaport.RolloutActive {
		t.Fatalf("promoting bundle %d to %s at %d %% answered %s", number, channel, percent, body)
	}
	return c
}

func (w *bbchWorld) rollout(t *testing.T, channel, action string, body any) (*http.Response, []byte) {
	t.Helper()
	return w.e.send(t, "POST", w.rolloutPath(channel, action), w.admin, body)
}

// rolloutOK makes a rollout change that must answer 200 with the channel.
func (w *bbchWorld) rolloutOK(t *testing.T, channel, action string, body any) betaport.Channel {
	t.Helper()
	resp, b := w.rollout(t, channel, action, body)
	var c betaport.Channel
	if resp.StatusCode != 200 || json.Unmarshal(b, &c) != nil || c.Name != channel {
		t.Fatalf("rollout %s on %s (%v) = %d %s", action, channel, body, resp.StatusCode, b)
	}
	return c
}

// raw sends body as it is, JSON-typed, as the admin.
func (w *bbchWorld) raw(t *testing.T, method, path, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, w.e.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Encoding", "identity")
	for k, v := range w.admin {
		req.Header[k] = v
	}
	return w.e.roundTrip(t, req)
}

// setChannel moves a tester.
func (w *bbchWorld) setChannel(t *testing.T, who http.Header, id int64, body any) (*http.Response, []byte) {
	t.Helper()
	return w.e.send(t, "PUT", w.testerChannelPath(id), who, body)
}

// reached is the set of testers InRollout puts in the rollout at percent.
func bbchReached(rolloutID int64, testers []*bbchTester, percent int) map[int64]bool {
	in := map[int64]bool{}
	for _, tt := range testers {
		if betaport.InRollout(rolloutID, tt.id, percent) {
			in[tt.id] = true
		}
	}
	return in
}

// wantCurrent checks every tester's "current" is want(tester), and lists
// every one that is not.
func (w *bbchWorld) wantCurrent(t *testing.T, what string, testers []*bbchTester, want func(*bbchTester) int64) {
	t.Helper()
	var wrong []string
	for _, tt := range testers {
		if got, exp := w.current(t, tt.session, ""), want(tt); got != exp {
			wrong = append(wrong, fmt.Sprintf("tester %d: current %d, want %d", tt.id, got, exp))
		}
	}
	if len(wrong) > 0 {
		t.Errorf("%s: %d of %d testers get the wrong bundle:\n%s", what, len(wrong), len(testers), strings.Join(wrong, "\n"))
	}
}

// wantFeeds checks every tester's update URL, asked for a copy at
// installed(tester), offers the version of want(tester) (0: noupdate).
func (w *bbchWorld) wantFeeds(t *testing.T, what string, testers []*bbchTester, installed func(*bbchTester) string, want func(*bbchTester) int64) {
	t.Helper()
	var wrong []string
	for _, tt := range testers {
		exp := ""
		if n := want(tt); n != 0 {
			exp = w.versions[n]
		}
		if got := w.feedOffers(t, tt, installed(tt)); got != exp {
			wrong = append(wrong, fmt.Sprintf("tester %d at %s: offered %q, want %q", tt.id, installed(tt), got, exp))
		}
	}
	if len(wrong) > 0 {
		t.Errorf("%s: %d of %d update checks answer wrong:\n%s", what, len(wrong), len(testers), strings.Join(wrong, "\n"))
	}
}

// newer reports whether dotted version a is above b.
func bbchNewer(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x > y
		}
	}
	return false
}

func bbchAuditCount(events []betaport.AuditEvent, action string) (n int, subjects []string) {
	for _, ev := range events {
		if ev.Action == action {
			n++
			subjects = append(subjects, ev.Subject)
		}
	}
	return n, subjects
}

// ------------------------------------------------------------ the tests

// TestBlackBoxChannelCreate: every extension has "beta"; an admin adds a
// channel (201, Location, listed by name); a duplicate, a bad name, an
// unknown field and one past the limit of 20 are refused and make
// nothing; an unknown channel's 404 names the channels there are.
func TestBlackBoxChannelCreate(t *testing.T) {
	t.Parallel()
	w := newBBCHWorld(t)

	list := w.channels(t)
	if len(list) != 1 || list[0].Name != betaport.DefaultChannel || list[0].CurrentBundle != 0 || list[0].Rollout != nil || list[0].Testers != 0 {
		t.Fatalf("a new extension's channels = %+v, want beta alone, empty", list)
	}
	w.channel(t, "beta")
	rev0 := w.revision(t)
	w.create(t, "internal")
	if got := bbchNames(w.channels(t)); !slices.Equal(got, []string{"beta", "internal"}) {
		t.Fatalf("channels after creating internal = %v", got)
	}
	if rev1 := w.revision(t); rev1 <= rev0 {
		t.Errorf("creating a channel left the channels revision at %d (was %d)", rev1, rev0)
	}
	if c := w.channel(t, "internal"); c.CurrentBundle != 0 || c.Rollout != nil {
		t.Fatalf("GET internal = %+v", c)
	}

	before := w.state(t)
	for _, name := range []string{"internal", "beta"} {
		resp, body := w.e.send(t, "POST", w.channelsPath(), w.admin, api.NewChannel{Name: name})
		bbchProblem(t, "a second channel "+name, resp, body, 409, api.ProblemConflict)
	}
	for _, name := range []string{"Internal", "in ternal", "internal ", " internal", "", "1nightly", "-x", "../x", "a/b", "night_ly",
		"nightly.1", "nïghtly", "a" + strings.Repeat("b", betaport.MaxChannelName), "internal\n", "%2e%2e"} {
		resp, body := w.e.send(t, "POST", w.channelsPath(), w.admin, api.NewChannel{Name: name})
		p := bbchProblem(t, fmt.Sprintf("channel name %q", name), resp, body, 400, api.ProblemBadRequest)
		if p.Param != "channel" {
			t.Errorf("channel name %q refused with param %q, want \"channel\"", name, p.Param)
		}
	}
	for _, raw := range []string{`{"name":"nightly","extra":1}`, `{"name":1}`, `{"name":"nightly"`, `[]`, `null`, ``} {
		resp, body := w.raw(t, "POST", w.channelsPath(), raw)
		bbchRefused(t, "POST channels "+raw, resp, body, 400)
	}
	resp, body := w.e.do(t, "GET", api.ChannelPath(w.ext, "nightly"), w.admin)
	p := bbchProblem(t, "GET an unknown channel", resp, body, 404, api.ProblemNotFound)
	bbchNamesChannels(t, "GET an unknown channel", p, "beta", "internal")
	for _, name := range []string{"Beta", "..%2Fbeta", "beta%20"} {
		resp, body := w.e.do(t, "GET", api.ChannelPath(w.ext, name), w.admin)
		bbchRefused(t, "GET channel "+name, resp, body, 404, 400)
	}
	w.wantSame(t, "the refused creations", before)

	// The longest name there may be, then up to the limit of 20.
	longest := "a" + strings.Repeat("7", betaport.MaxChannelName-1)
	w.create(t, longest)
	for i := len(w.channels(t)); i < betaport.MaxChannels; i++ {
		w.create(t, fmt.Sprintf("c%02d", i))
	}
	if n := len(w.channels(t)); n != betaport.MaxChannels {
		t.Fatalf("%d channels, want %d", n, betaport.MaxChannels)
	}
	before = w.state(t)
	resp, body = w.e.send(t, "POST", w.channelsPath(), w.admin, api.NewChannel{Name: "one-too-many"})
	bbchRefused(t, "the 21st channel", resp, body, 400, 409, 422)
	w.wantSame(t, "the refused 21st channel", before)

	// Each creation is in the audit trail, naming the channel.
	n, subjects := bbchAuditCount(bbkAudit(t, w.e, w.ext, w.admin, 0), betaport.AuditChannelCreated)
	if n != betaport.MaxChannels-1 || !slices.ContainsFunc(subjects, func(s string) bool { return strings.Contains(s, "internal") }) {
		t.Errorf("the audit trail has %d %s events (%q), want %d, one naming internal", n, betaport.AuditChannelCreated, subjects, betaport.MaxChannels-1)
	}
}

// TestBlackBoxChannelAccess: testers, admins of another team, no session
// and a made-up session are refused every admin route of channels and
// rollouts, and change nothing; a tester cannot reach another channel's
// bundle by asking for it (?channel= on current).
func TestBlackBoxChannelAccess(t *testing.T) {
	t.Parallel()
	w := newBBCHWorld(t)
	w.create(t, "internal")
	w.create(t, "nightly")
	b1 := w.submit(t, "1.0.0", nil)
	w.promoteOK(t, b1.Number, "nightly", 0)
	b2 := w.submit(t, "1.1.0", map[string]any{"channel": "internal"})
	b3 := w.submit(t, "1.2.0", map[string]any{"channel": "nightly", "rollout": 50})
	ann := w.join(t, "Ann", "")
	ivy := w.join(t, "Ivy", "internal")
	other := newPipeline(t, w.e, betaport.PlanProfessional)
	stranger := w.e.adminOf(t, mustTeam(t, w.e, other.ext))

	type call struct {
		method, path string
		body         any
	}
	calls := []call{
		{"GET", w.channelsPath(), nil},
		{"POST", w.channelsPath(), api.NewChannel{Name: "sneaky"}},
		{"GET", api.ChannelPath(w.ext, "internal"), nil},
		{"POST", w.promotePath(b2.Number), api.Promotion{Channel: "beta"}},
		{"POST", w.promotePath(b3.Number), api.Promotion{Channel: "internal", Percent: 10}},
		{"POST", w.rolloutPath("nightly", "advance"), api.RolloutChange{Percent: 100}},
		{"POST", w.rolloutPath("nightly", "halt"), nil},
		{"POST", w.rolloutPath("nightly", "complete"), nil},
		{"PUT", w.testerChannelPath(ann.id), api.ChannelChoice{Channel: "internal"}},
		{"PUT", w.testerChannelPath(ivy.id), api.ChannelChoice{Channel: "beta"}},
		{"GET", api.TestersPath(w.ext) + "?channel=internal", nil},
		{"POST", api.RollbackPath(w.ext, b1.Number), api.ChannelChoice{Channel: "nightly"}},
	}
	before := w.state(t)
	whos := []struct {
		name     string
		h        http.Header
		statuses []int
	}{
		{"no session", nil, []int{401}},
		{"a made-up session", http.Header{"Cookie": {api.SessionCookie + "=bm90LWEtc2Vzc2lvbg"}}, []int{401}},
		{"a tester of the extension", ann.session, []int{403, 404}},
		{"a tester on internal", ivy.session, []int{403, 404}},
		{"an admin of another team", stranger, []int{403, 404}},
	}
	for _, who := range whos {
		for _, c := range calls {
			resp, body := w.e.send(t, c.method, c.path, who.h, c.body)
			bbchRefused(t, who.name+": "+c.method+" "+c.path, resp, body, who.statuses...)
		}
	}
	for _, path := range []string{"/api/extensions/987654321/channels", api.ChannelPath(other.ext.ID, "beta")} {
		resp, body := w.e.do(t, "GET", path, w.admin)
		bbchRefused(t, "the admin reading "+path, resp, body, 403, 404)
	}
	w.wantSame(t, "the refused calls", before)

	// A beta tester asking for internal's or nightly's current bundle gets
	// beta's, or a refusal: never another channel's bundle.
	st, b1Zip := w.fetch(t, api.BundleDownloadPath(w.ext, b1.Number), w.admin)
	if st != 200 || len(b1Zip) == 0 {
		t.Fatalf("the admin's download of bundle 1 = %d", st)
	}
	for _, q := range []string{"?channel=internal", "?channel=nightly", "?channel=nope"} {
		resp, body := w.e.do(t, "GET", api.CurrentBundlePath(w.ext)+q, ann.session)
		var b betaport.Bundle
		if resp.StatusCode == 200 && (json.Unmarshal(body, &b) != nil || b.Number != b1.Number) {
			t.Errorf("Ann (beta) asking current%s got bundle %d: %s", q, b.Number, body)
		}
		if st, data := w.fetch(t, api.CurrentBundlePath(w.ext)+"/download"+q, ann.session); st == 200 {
			if !bytes.Equal(data, b1Zip) {
				t.Errorf("Ann (beta) downloading current%s got another bundle's bytes (%d bytes)", q, len(data))
			}
		}
	}
	if got := w.current(t, ann.session, ""); got != b1.Number {
		t.Errorf("after the refused calls Ann gets bundle %d, want %d", got, b1.Number)
	}
	if got := w.current(t, ivy.session, ""); got != b2.Number {
		t.Errorf("after the refused calls Ivy gets bundle %d, want %d", got, b2.Number)
	}
}

// TestBlackBoxChannelTesters: a tester joins beta unless the invite names
// a channel; an admin moves testers between channels; the testers list
// shows and filters by channel; the channels count their testers (not
// revoked); unknown channels are 404s that name the channels there are;
// hostile moves change nothing; each move is audited.
func TestBlackBoxChannelTesters(t *testing.T) {
	t.Parallel()
	w := newBBCHWorld(t)
	w.create(t, "internal")
	ann := w.join(t, "Ann", "")
	bob := w.join(t, "Bob", "internal")
	cat := w.join(t, "Cat", "beta")

	all := w.testers(t, "")
	for _, tt := range []*bbchTester{ann, bob, cat} {
		if all[tt.id].Channel != tt.channel {
			t.Errorf("the testers list shows %s on %q, want %q", tt.email, all[tt.id].Channel, tt.channel)
		}
	}
	wantFilter := func(what, channel string, ids ...int64) {
		t.Helper()
		got := slices.Sorted(maps.Keys(w.testers(t, channel)))
		slices.Sort(ids)
		if !slices.Equal(got, ids) {
			t.Errorf("%s: ?channel=%s lists %v, want %v", what, channel, got, ids)
		}
	}
	wantCounts := func(what string, beta, internal int64) {
		t.Helper()
		got := map[string]int64{}
		for _, c := range w.channels(t) {
			got[c.Name] = c.Testers
		}
		if got["beta"] != beta || got["internal"] != internal {
			t.Errorf("%s: channels count %v testers, want beta %d, internal %d", what, got, beta, internal)
		}
	}
	wantFilter("after the invites", "beta", ann.id, cat.id)
	wantFilter("after the invites", "internal", bob.id)
	wantCounts("after the invites", 2, 1)

	// Refused invites make no tester.
	before := w.state(t)
	resp, body := w.e.send(t, "POST", api.TestersPath(w.ext), w.admin, api.Invite{Email: uniqueEmail("bbch-nope"), Channel: "nightly"})
	p := bbchProblem(t, "an invite onto an unknown channel", resp, body, 404, api.ProblemNotFound)
	bbchNamesChannels(t, "an invite onto an unknown channel", p, "beta", "internal")
	resp, body = w.e.send(t, "POST", api.TestersPath(w.ext), w.admin, api.Invite{Email: uniqueEmail("bbch-bad"), Channel: "../internal"})
	bbchRefused(t, "an invite onto a bad channel name", resp, body, 400, 404)
	resp, body = w.e.do(t, "GET", api.TestersPath(w.ext)+"?channel=nightly", w.admin)
	p = bbchProblem(t, "the testers of an unknown channel", resp, body, 404, api.ProblemNotFound)
	bbchNamesChannels(t, "the testers of an unknown channel", p, "beta", "internal")
	w.wantSame(t, "the refused invites and filter", before)

	// Move Ann to internal.
	rev := w.revision(t)
	resp, body = w.setChannel(t, w.admin, ann.id, api.ChannelChoice{Channel: "internal"})
	var moved betaport.Tester
	if resp.StatusCode != 200 || json.Unmarshal(body, &moved) != nil || moved.ID != ann.id || moved.Channel != "internal" {
		t.Fatalf("moving Ann to internal = %d %s", resp.StatusCode, body)
	}
	if w.revision(t) <= rev {
		t.Errorf("moving a tester left the channels revision at %d", rev)
	}
	wantFilter("after moving Ann", "beta", cat.id)
	wantFilter("after moving Ann", "internal", ann.id, bob.id)
	wantCounts("after moving Ann", 1, 2)
	// Moving her again to where she is changes nothing a tester sees.
	if resp, body := w.setChannel(t, w.admin, ann.id, api.ChannelChoice{Channel: "internal"}); resp.StatusCode != 200 {
		t.Errorf("moving Ann to the channel she is on = %d %s, want 200", resp.StatusCode, body)
	}

	// Hostile and clumsy moves: nothing changes.
	otherExt := storetest.MustExtension(t, w.e.DB, w.team, "Other")
	stranger, _ := w.e.testerOf(t, otherExt, betaport.TesterActive)
	before = w.state(t)
	resp, body = w.setChannel(t, w.admin, cat.id, api.ChannelChoice{Channel: "nightly"})
	p = bbchProblem(t, "a move to an unknown channel", resp, body, 404, api.ProblemNotFound)
	bbchNamesChannels(t, "a move to an unknown channel", p, "beta", "internal")
	for _, raw := range []string{`{"channel":"internal","x":1}`, `{"channel":5}`, `{}`, `{"channel":""}`, `{"channel":"Internal"}`, `nope`} {
		resp, body := w.raw(t, "PUT", w.testerChannelPath(cat.id), raw)
		bbchRefused(t, "PUT channel "+raw, resp, body, 400, 404)
	}
	resp, body = w.setChannel(t, w.admin, 987654321, api.ChannelChoice{Channel: "internal"})
	bbchProblem(t, "moving a tester who does not exist", resp, body, 404, api.ProblemNotFound)
	resp, body = w.setChannel(t, w.admin, stranger.ID, api.ChannelChoice{Channel: "internal"})
	bbchProblem(t, "moving another extension's tester", resp, body, 404, api.ProblemNotFound)
	resp, body = w.setChannel(t, cat.session, cat.id, api.ChannelChoice{Channel: "internal"})
	bbchRefused(t, "a tester moving themselves", resp, body, 401, 403, 404)
	w.wantSame(t, "the refused moves", before)
	if got, err := w.e.DB.FindTester(t.Context(), stranger.ID); err != nil || got.Channel != "beta" {
		t.Errorf("the other extension's tester is now on %q (%v), want beta", got.Channel, err)
	}

	// A revoked tester is not counted.
	if resp, body := w.e.do(t, "DELETE", api.TesterPath(w.ext, bob.id), w.admin); resp.StatusCode != 204 {
		t.Fatalf("revoking Bob = %d %s", resp.StatusCode, body)
	}
	wantCounts("after revoking Bob", 1, 1)

	n, subjects := bbchAuditCount(bbkAudit(t, w.e, w.ext, w.admin, 0), betaport.AuditTesterChannel)
	if n < 1 || !strings.Contains(strings.Join(subjects, " "), ann.email) {
		t.Errorf("the audit trail has %d %s events (%q), want Ann's move", n, betaport.AuditTesterChannel, subjects)
	}
}

// TestBlackBoxChannelPromote: a bundle published to internal reaches only
// internal's testers (builds, current, downloads, CRX, update URL); beta's
// testers get 404 for it. Promoted to beta, the same bytes and version
// reach beta's testers without a new bundle. Promoting a bundle not newer
// than what a channel serves is 409, and every bad promote changes nothing.
func TestBlackBoxChannelPromote(t *testing.T) {
	t.Parallel()
	w := newBBCHWorld(t)
	w.create(t, "internal")
	b1 := w.submit(t, "1.0.0", nil)
	ann := w.join(t, "Ann", "")
	ivy := w.join(t, "Ivy", "internal")

	if c := w.channel(t, "beta"); c.CurrentBundle != b1.Number {
		t.Fatalf("after a publish without a channel, beta = %+v", c)
	}
	if c := w.channel(t, "internal"); c.CurrentBundle != 0 {
		t.Fatalf("after a publish to beta, internal serves bundle %d", c.CurrentBundle)
	}
	if got := w.builds(t, ivy.session); len(got) != 0 {
		t.Errorf("Ivy (internal, nothing on it) sees builds %v", got)
	}
	if st, _ := w.fetch(t, api.BundleDownloadPath(w.ext, b1.Number), ivy.session); st != 404 {
		t.Errorf("Ivy downloads beta's bundle 1: %d, want 404", st)
	}

	// Internal only.
	b2 := w.submit(t, "1.1.0", map[string]any{"channel": "internal"})
	if c := w.channel(t, "internal"); c.CurrentBundle != b2.Number || c.Rollout != nil {
		t.Fatalf("after a publish to internal: %+v", c)
	}
	if c := w.channel(t, "beta"); c.CurrentBundle != b1.Number {
		t.Fatalf("a publish to internal moved beta to %d", c.CurrentBundle)
	}
	if got := w.current(t, w.admin, ""); got != b1.Number {
		t.Errorf("the admin's current (beta) = %d, want %d", got, b1.Number)
	}
	if got := w.current(t, w.admin, "?channel=internal"); got != b2.Number {
		t.Errorf("the admin's current?channel=internal = %d, want %d", got, b2.Number)
	}
	list := w.bundles(t)
	if !slices.Equal(list[b2.Number].Channels, []string{"internal"}) || !slices.Equal(list[b1.Number].Channels, []string{"beta"}) ||
		list[b2.Number].Current || !list[b1.Number].Current {
		t.Errorf("bundles list: 1 on %v (current %v), 2 on %v (current %v); want 1 on beta and current, 2 on internal",
			list[b1.Number].Channels, list[b1.Number].Current, list[b2.Number].Channels, list[b2.Number].Current)
	}
	// Ann (beta): bundle 2 does not exist for her.
	if got := w.current(t, ann.session, ""); got != b1.Number {
		t.Errorf("Ann's current = %d, want %d", got, b1.Number)
	}
	if got := w.builds(t, ann.session); !slices.Equal(got, []int64{b1.Number}) {
		t.Errorf("Ann's builds = %v, want [%d]", got, b1.Number)
	}
	for _, path := range []string{api.BundleDownloadPath(w.ext, b2.Number), api.BundleCRXPath(w.ext, b2.Number), ann.url + "/crx/" + strconv.FormatInt(b2.Number, 10)} {
		st, data := w.fetch(t, path, ann.session)
		if st != 404 || bytes.Contains(data, []byte("PK\x03\x04")) {
			t.Errorf("Ann (beta) fetching internal-only bundle 2 at %s: %d (%d bytes), want 404", path, st, len(data))
		}
	}
	w.wantFeed(t, "Ann's update URL", ann, "1.0.0", 0)
	w.wantFeed(t, "Ann's update URL, fresh", ann, "", b1.Number)
	// Ivy (internal): bundle 2.
	if got := w.current(t, ivy.session, ""); got != b2.Number {
		t.Errorf("Ivy's current = %d, want %d", got, b2.Number)
	}
	if got := w.builds(t, ivy.session); !slices.Equal(got, []int64{b2.Number}) {
		t.Errorf("Ivy's builds = %v, want [%d]", got, b2.Number)
	}
	_, b2Zip := w.fetch(t, api.BundleDownloadPath(w.ext, b2.Number), w.admin)
	st, ivyZip := w.fetch(t, api.CurrentBundlePath(w.ext)+"/download", ivy.session)
	if st != 200 || len(ivyZip) == 0 || !bytes.Equal(ivyZip, b2Zip) {
		t.Errorf("Ivy's current download = %d, %d bytes; want bundle 2's zip", st, len(ivyZip))
	}
	w.wantFeed(t, "Ivy's update URL", ivy, "1.0.0", b2.Number)

	// Promote 2 to beta: Ann gets the same bytes, no new bundle.
	rev := w.revision(t)
	w.promoteOK(t, b2.Number, "beta", 0)
	if w.revision(t) <= rev {
		t.Errorf("a promote left the channels revision at %d", rev)
	}
	list = w.bundles(t)
	if len(list) != 2 || !slices.Contains(list[b2.Number].Channels, "beta") || !slices.Contains(list[b2.Number].Channels, "internal") ||
		!list[b2.Number].Current || list[b2.Number].Version != b2.Version || list[b2.Number].SHA256 != b2.SHA256 {
		t.Errorf("after promoting 2 to beta the bundles list is %+v", list)
	}
	if got := w.current(t, ann.session, ""); got != b2.Number {
		t.Errorf("after the promote Ann's current = %d, want %d", got, b2.Number)
	}
	if got := w.builds(t, ann.session); !slices.Equal(got, []int64{b2.Number, b1.Number}) {
		t.Errorf("after the promote Ann's builds = %v, want [2 1]", got)
	}
	if st, annZip := w.fetch(t, api.BundleDownloadPath(w.ext, b2.Number), ann.session); st != 200 || !bytes.Equal(annZip, ivyZip) {
		t.Errorf("after the promote Ann's download of 2 = %d, %d bytes; want Ivy's %d bytes", st, len(annZip), len(ivyZip))
	}
	w.wantFeed(t, "Ann's update URL after the promote", ann, "1.0.0", b2.Number)
	if _, _, c := w.crx(t, "Ann's CRX of 2", b2.Number, ann.session); c.Manifest["version"] != b2.Version || c.updateURL() != ann.url {
		t.Errorf("Ann's CRX of 2 has version %v and update URL %q", c.Manifest["version"], c.updateURL())
	}

	// Bad promotes: nothing changes.
	b3 := w.submit(t, "1.2.0", map[string]any{"channel": "internal"})
	before := w.state(t)
	for _, c := range []struct {
		what   string
		number int64
		body   any
		status []int
	}{
		{"an older bundle than internal serves", b1.Number, api.Promotion{Channel: "internal"}, []int{409}},
		{"bundle 2 to internal, which serves 3", b2.Number, api.Promotion{Channel: "internal"}, []int{409}},
		{"bundle 2 to beta again", b2.Number, api.Promotion{Channel: "beta"}, []int{409}},
		{"bundle 1 back onto beta", b1.Number, api.Promotion{Channel: "beta"}, []int{409}},
		{"bundle 1 to beta at 50 %", b1.Number, api.Promotion{Channel: "beta", Percent: 50}, []int{409}},
		{"a bundle that does not exist", 99, api.Promotion{Channel: "beta"}, []int{404}},
		{"to an unknown channel", b3.Number, api.Promotion{Channel: "nightly"}, []int{404}},
		{"to a bad channel name", b3.Number, api.Promotion{Channel: "Beta"}, []int{400, 404}},
		{"without a channel", b3.Number, map[string]any{"percent": 50}, []int{400, 404}},
		{"at 101 %", b3.Number, api.Promotion{Channel: "beta", Percent: 101}, []int{400}},
		{"at -5 %", b3.Number, api.Promotion{Channel: "beta", Percent: -5}, []int{400}},
		{"at \"50\" %", b3.Number, map[string]any{"channel": "beta", "percent": "50"}, []int{400}},
		{"at 12.5 %", b3.Number, map[string]any{"channel": "beta", "percent": 12.5}, []int{400}},
		{"with an unknown field", b3.Number, map[string]any{"channel": "beta", "percentage": 50}, []int{400}},
	} {
		resp, body := w.promote(t, c.number, c.body)
		p := bbchRefused(t, "promoting "+c.what, resp, body, c.status...)
		if resp.StatusCode == 409 && p.Type != api.ProblemConflict {
			t.Errorf("promoting %s: type %q, want %s", c.what, p.Type, api.ProblemConflict)
		}
		if resp.StatusCode == 404 && strings.Contains(c.what, "channel") {
			bbchNamesChannels(t, "promoting "+c.what, p, "beta", "internal")
		}
	}
	for _, path := range []string{api.BundlesPath(w.ext) + "/0/promote", api.BundlesPath(w.ext) + "/x/promote", api.BundlesPath(w.ext) + "/01/promote"} {
		resp, body := w.e.send(t, "POST", path, w.admin, api.Promotion{Channel: "beta"})
		bbchRefused(t, "POST "+path, resp, body, 404, 400)
	}
	w.wantSame(t, "the refused promotes", before)
	if got := w.current(t, ann.session, ""); got != b2.Number {
		t.Errorf("after the refused promotes Ann's current = %d, want %d", got, b2.Number)
	}

	// Moved to internal, Ann's copy follows internal; moved back, it is
	// offered nothing older than it has.
	if resp, body := w.setChannel(t, w.admin, ann.id, api.ChannelChoice{Channel: "internal"}); resp.StatusCode != 200 {
		t.Fatalf("moving Ann to internal = %d %s", resp.StatusCode, body)
	}
	if got := w.current(t, ann.session, ""); got != b3.Number {
		t.Errorf("Ann moved to internal: current %d, want %d", got, b3.Number)
	}
	w.wantFeed(t, "Ann moved to internal", ann, b2.Version, b3.Number)
	if st, _ := w.fetch(t, api.BundleDownloadPath(w.ext, b3.Number), ann.session); st != 200 {
		t.Errorf("Ann moved to internal downloads internal's bundle 3: %d, want 200", st)
	}
	if resp, body := w.setChannel(t, w.admin, ann.id, api.ChannelChoice{Channel: "beta"}); resp.StatusCode != 200 {
		t.Fatalf("moving Ann back to beta = %d %s", resp.StatusCode, body)
	}
	if got := w.current(t, ann.session, ""); got != b2.Number {
		t.Errorf("Ann moved back to beta: current %d, want %d", got, b2.Number)
	}
	w.wantFeed(t, "Ann moved back to beta, her copy at 1.2.0", ann, b3.Version, 0)
	if st, _ := w.fetch(t, api.BundleDownloadPath(w.ext, b3.Number), ann.session); st != 404 {
		t.Errorf("Ann back on beta downloads internal-only bundle 3: %d, want 404", st)
	}

	n, subjects := bbchAuditCount(bbkAudit(t, w.e, w.ext, w.admin, 0), betaport.AuditBundlePromoted)
	if n != 1 || !strings.Contains(subjects[0], "beta") {
		t.Errorf("the audit trail has %d %s events (%q), want one naming beta", n, betaport.AuditBundlePromoted, subjects)
	}
}

// TestBlackBoxChannelSubmitFlow: call 1's "channel" and "rollout" are
// checked at call 1: a bad or unknown one is refused before any upload
// exists, with nothing written; good ones publish to the channel, at once
// or as a rollout.
func TestBlackBoxChannelSubmitFlow(t *testing.T) {
	t.Parallel()
	w := newBBCHWorld(t)
	w.create(t, "internal")

	before := w.state(t)
	for _, c := range []struct {
		what   string
		extra  map[string]any
		status []int
	}{
		{"an unknown channel", map[string]any{"channel": "nightly"}, []int{404}},
		{"an unknown channel with a rollout", map[string]any{"channel": "nightly", "rollout": 50}, []int{404}},
		{"an upper-case channel", map[string]any{"channel": "Internal"}, []int{400, 404}},
		{"a path as channel", map[string]any{"channel": "../internal"}, []int{400, 404}},
		{"a number as channel", map[string]any{"channel": 7}, []int{400}},
		{"a rollout of 101 %", map[string]any{"channel": "internal", "rollout": 101}, []int{400}},
		{"a rollout of -1 %", map[string]any{"rollout": -1}, []int{400}},
		{"a rollout of 1000 %", map[string]any{"rollout": 1000}, []int{400}},
		{"a rollout as a string", map[string]any{"rollout": "50"}, []int{400}},
		{"a rollout of 12.5 %", map[string]any{"rollout": 12.5}, []int{400}},
	} {
		resp, body := w.call1(t, c.extra)
		p := bbchRefused(t, "call 1 with "+c.what, resp, body, c.status...)
		if resp.StatusCode == 404 {
			bbchNamesChannels(t, "call 1 with "+c.what, p, "beta", "internal")
		}
		bbkNoUploadIssued(t, w.e, w.ext, "call 1 with "+c.what)
	}
	w.wantSame(t, "the refused calls 1", before)

	// To internal at once: beta has nothing.
	b1 := w.submit(t, "1.0.0", map[string]any{"channel": "internal", "rollout": 100})
	if c := w.channel(t, "internal"); c.CurrentBundle != b1.Number || c.Rollout != nil {
		t.Errorf("after a publish to internal at 100 %%: %+v", c)
	}
	if c := w.channel(t, "beta"); c.CurrentBundle != 0 {
		t.Errorf("a publish to internal put bundle %d on beta", c.CurrentBundle)
	}
	if got := w.current(t, w.admin, ""); got != 0 {
		t.Errorf("the admin's current (beta) is %d after a publish to internal only", got)
	}
	if b := w.bundles(t)[b1.Number]; !slices.Equal(b.Channels, []string{"internal"}) || b.Current {
		t.Errorf("the bundles list shows bundle 1 on %v, current %v; want internal, not current on beta", b.Channels, b.Current)
	}
	// To beta (the default).
	b2 := w.submit(t, "1.1.0", nil)
	if c := w.channel(t, "beta"); c.CurrentBundle != b2.Number {
		t.Errorf("a publish naming no channel: beta serves %d, want %d", c.CurrentBundle, b2.Number)
	}
	if c := w.channel(t, "internal"); c.CurrentBundle != b1.Number {
		t.Errorf("a publish to beta moved internal to %d", c.CurrentBundle)
	}
	// A rollout on internal.
	ivy := w.join(t, "Ivy", "internal")
	b3 := w.submit(t, "1.2.0", map[string]any{"channel": "internal", "rollout": 30})
	c := w.channel(t, "internal")
	if c.CurrentBundle != b1.Number || c.Rollout == nil || c.Rollout.Bundle != b3.Number || c.Rollout.Previous != b1.Number ||
		c.Rollout.Percent != 30 || c.Rollout.State != betaport.RolloutActive || c.Rollout.Channel != "internal" || c.Rollout.ID == 0 || c.Testers != 1 {
		t.Fatalf("after a publish at 30 %%, internal = %+v (rollout %+v)", c, c.Rollout)
	}
	want := b1.Number
	if betaport.InRollout(c.Rollout.ID, ivy.id, 30) {
		want = b3.Number
	}
	if got := w.current(t, ivy.session, ""); got != want {
		t.Errorf("Ivy's current during the 30 %% rollout = %d, want %d (InRollout says %v)", got, want, want == b3.Number)
	}
	if c.Rollout.Reached != map[bool]int64{true: 1, false: 0}[want == b3.Number] {
		t.Errorf("the rollout reaches %d testers, want %v", c.Rollout.Reached, want == b3.Number)
	}
}

// bbchRolloutWorld is an extension with a channel "nightly" of 40 testers
// on bundle 1 (1.0.0), and one beta tester.
type bbchRolloutWorld struct {
	*bbchWorld
	night   []*bbchTester
	control *bbchTester
	b1      betaport.Bundle
}

func newBBCHRolloutWorld(t *testing.T, testers int) *bbchRolloutWorld {
	t.Helper()
	w := &bbchRolloutWorld{bbchWorld: newBBCHWorld(t)}
	w.create(t, "nightly")
	w.b1 = w.submit(t, "1.0.0", nil)
	w.promoteOK(t, w.b1.Number, "nightly", 0)
	for i := range testers {
		w.night = append(w.night, w.join(t, fmt.Sprintf("N%02d", i), "nightly"))
	}
	w.control = w.join(t, "Control", "")
	return w
}

// TestBlackBoxChannelRollout: a 50 % rollout over 40 testers reaches
// exactly the testers InRollout picks (their "current" and their update
// URL), the rest keep bundle 1; advance to 75 only adds testers; a lower
// percentage is 409; halt: no one new gets it, those who have it are not
// sent back; advance while halted is 409; halt twice is fine; resume;
// complete: everyone. The channel's counts follow; the beta tester never
// sees the nightly bundle; with no rollout every action is 409, and an
// unknown action 404; every refusal changes nothing.
func TestBlackBoxChannelRollout(t *testing.T) {
	t.Parallel()
	w := newBBCHRolloutWorld(t, 40)
	one := func(*bbchTester) int64 { return w.b1.Number }
	at := func(v string) func(*bbchTester) string { return func(*bbchTester) string { return v } }
	w.wantCurrent(t, "before the rollout", w.night, one)
	if c := w.channel(t, "nightly"); c.Testers != 40 || c.CurrentBundle != w.b1.Number || c.Rollout != nil {
		t.Fatalf("nightly before the rollout = %+v", c)
	}

	b2 := w.submit(t, "2.0.0", map[string]any{"channel": "nightly", "rollout": 50})
	c := w.channel(t, "nightly")
	if c.Rollout == nil || c.Rollout.Bundle != b2.Number || c.Rollout.Previous != w.b1.Number || c.Rollout.Percent != 50 ||
		c.Rollout.State != betaport.RolloutActive || c.CurrentBundle != w.b1.Number || c.Testers != 40 || c.Rollout.StartedAt.IsZero() {
		t.Fatalf("nightly at 50 %% = %+v, rollout %+v", c, c.Rollout)
	}
	rid := c.Rollout.ID
	r50 := bbchReached(rid, w.night, 50)
	if len(r50) == 0 || len(r50) == len(w.night) {
		t.Fatalf("InRollout puts %d of %d testers in a 50 %% rollout: the test cannot tell", len(r50), len(w.night))
	}
	if c.Rollout.Reached != int64(len(r50)) || c.Rollout.Installed != 0 {
		t.Errorf("at 50 %% the rollout says reached %d, installed %d; want %d, 0", c.Rollout.Reached, c.Rollout.Installed, len(r50))
	}
	in := func(set map[int64]bool) func(*bbchTester) int64 {
		return func(tt *bbchTester) int64 {
			if set[tt.id] {
				return b2.Number
			}
			return w.b1.Number
		}
	}
	offer := func(set map[int64]bool) func(*bbchTester) int64 {
		return func(tt *bbchTester) int64 {
			if set[tt.id] {
				return b2.Number
			}
			return 0
		}
	}
	w.wantCurrent(t, "at 50 %", w.night, in(r50))
	w.wantFeeds(t, "at 50 %, copies at 1.0.0", w.night, at("1.0.0"), offer(r50))
	// A retried check answers alike (stable).
	w.wantFeeds(t, "at 50 %, checked again", w.night, at("1.0.0"), offer(r50))

	// The beta tester never sees the nightly bundle.
	wantControl := func(what string) {
		t.Helper()
		if got := w.current(t, w.control.session, ""); got != w.b1.Number {
			t.Errorf("%s: the beta tester's current = %d, want %d", what, got, w.b1.Number)
		}
		w.wantFeed(t, what+": the beta tester's update URL", w.control, "1.0.0", 0)
		if got := w.builds(t, w.control.session); slices.Contains(got, b2.Number) {
			t.Errorf("%s: the beta tester's builds list nightly's bundle: %v", what, got)
		}
		for _, path := range []string{api.BundleDownloadPath(w.ext, b2.Number), api.BundleCRXPath(w.ext, b2.Number), w.control.url + "/crx/" + strconv.FormatInt(b2.Number, 10)} {
			if st, _ := w.fetch(t, path, w.control.session); st != 404 {
				t.Errorf("%s: the beta tester fetching nightly's bundle at %s: %d, want 404", what, path, st)
			}
		}
	}
	wantControl("at 50 %")

	// The testers it reaches install it: their copies report 2.0.0.
	var r50t []*bbchTester
	for _, tt := range w.night {
		if r50[tt.id] {
			r50t = append(r50t, tt)
		}
	}
	w.wantFeeds(t, "at 50 %, the updated copies", r50t, at(b2.Version), func(*bbchTester) int64 { return 0 })
	// Read at once, the channel counts the copies that reported 2.0.0, as
	// the testers list and the installs count show a check at once.
	if c := w.channel(t, "nightly"); c.Rollout == nil || c.Rollout.Installed != int64(len(r50)) {
		t.Errorf("read right after %d copies reported %s, the rollout says installed %d (%+v); the testers list would show them", len(r50), b2.Version, c.Rollout.Installed, c.Rollout)
	}
	// After the testers list shows them, the channel's counts match it.
	list := w.testers(t, "nightly")
	var on2 int64
	for _, tt := range list {
		if tt.InstalledVersion == b2.Version {
			on2++
		}
	}
	if on2 != int64(len(r50)) || len(list) != len(w.night) {
		t.Errorf("the testers list shows %d of %d nightly testers on %s, want %d of %d", on2, len(list), b2.Version, len(r50), len(w.night))
	}
	if c := w.channel(t, "nightly"); c.Rollout == nil || c.Rollout.Installed != on2 || c.Rollout.Reached != int64(len(r50)) || c.Testers != int64(len(list)) {
		t.Errorf("with the testers list showing %d on %s, the channel says testers %d, rollout %+v; want installed %d, reached %d", on2, b2.Version, c.Testers, c.Rollout, on2, len(r50))
	}

	// Advance to 75: only adds testers.
	c = w.rolloutOK(t, "nightly", "advance", api.RolloutChange{Percent: 75})
	if c.Rollout == nil || c.Rollout.ID != rid || c.Rollout.Percent != 75 || c.Rollout.State != betaport.RolloutActive || c.CurrentBundle != w.b1.Number {
		t.Fatalf("advance to 75 answered %+v, rollout %+v", c, c.Rollout)
	}
	r75 := bbchReached(rid, w.night, 75)
	for id := range r50 {
		if !r75[id] {
			t.Fatalf("InRollout is not monotone: tester %d at 50 %% but not 75 %%", id)
		}
	}
	if c.Rollout.Reached != int64(len(r75)) {
		t.Errorf("at 75 %% the rollout says reached %d, want %d", c.Rollout.Reached, len(r75))
	}
	w.wantCurrent(t, "at 75 %", w.night, in(r75))
	installed := func(tt *bbchTester) string {
		if r50[tt.id] {
			return b2.Version
		}
		return "1.0.0"
	}
	offerNew := func(tt *bbchTester) int64 {
		if r75[tt.id] && !r50[tt.id] {
			return b2.Number
		}
		return 0
	}
	w.wantFeeds(t, "at 75 %", w.night, installed, offerNew)
	wantControl("at 75 %")

	// Refused changes: nothing moves.
	before := w.state(t)
	for _, r := range []struct {
		what, action string
		body         any
		status       []int
		typ          string
	}{
		{"advance to a lower percentage", "advance", api.RolloutChange{Percent: 60}, []int{409}, api.ProblemConflict},
		{"advance to 1 %", "advance", api.RolloutChange{Percent: 1}, []int{409}, api.ProblemConflict},
		{"advance to 101 %", "advance", api.RolloutChange{Percent: 101}, []int{400}, ""},
		{"advance to -75 %", "advance", api.RolloutChange{Percent: -75}, []int{400, 409}, ""},
		{"advance to \"80\"", "advance", map[string]any{"percent": "80"}, []int{400}, ""},
		{"advance with an unknown field", "advance", map[string]any{"percent": 80, "force": true}, []int{400}, ""},
		{"advance with no percentage", "advance", map[string]any{}, []int{400, 409}, ""},
		{"an unknown action", "pause", nil, []int{404}, ""},
		{"an upper-case action", "HALT", nil, []int{404}, ""},
		{"an action on an unknown channel", "halt", nil, []int{404}, ""},
	} {
		channel := "nightly"
		if strings.Contains(r.what, "unknown channel") {
			channel = "weekly"
		}
		resp, body := w.rollout(t, channel, r.action, r.body)
		p := bbchRefused(t, r.what, resp, body, r.status...)
		if r.typ != "" && p.Type != r.typ {
			t.Errorf("%s: type %q, want %s", r.what, p.Type, r.typ)
		}
	}
	w.wantSame(t, "the refused rollout changes", before)
	// Idempotent retries: 200, nothing changes.
	w.rolloutOK(t, "nightly", "advance", api.RolloutChange{Percent: 75})
	w.rolloutOK(t, "nightly", "resume", nil)
	w.wantSame(t, "advance to the same percentage and resume of an active rollout", before)

	// Halt: no one new gets it; those who have it are not sent back.
	c = w.rolloutOK(t, "nightly", "halt", nil)
	if c.Rollout == nil || c.Rollout.State != betaport.RolloutHalted || c.Rollout.Percent != 75 || c.CurrentBundle != w.b1.Number {
		t.Fatalf("halt answered %+v, rollout %+v", c, c.Rollout)
	}
	var notYet []*bbchTester // not on 2.0.0: those never reached, and those reached at 75 % who had not updated
	for _, tt := range w.night {
		if !r50[tt.id] {
			notYet = append(notYet, tt)
		}
	}
	w.wantCurrent(t, "halted, the testers not on it", notYet, one)
	w.wantFeeds(t, "halted, the testers not on it", notYet, at("1.0.0"), func(*bbchTester) int64 { return 0 })
	w.wantFeeds(t, "halted, the testers who have it", r50t, at(b2.Version), func(*bbchTester) int64 { return 0 })
	w.testers(t, "")
	if c := w.channel(t, "nightly"); c.Rollout == nil || c.Rollout.Installed != int64(len(r50)) {
		t.Errorf("halted, the rollout says %+v; want installed %d", c.Rollout, len(r50))
	}
	wantControl("halted")

	before = w.state(t)
	resp, body := w.rollout(t, "nightly", "advance", api.RolloutChange{Percent: 90})
	bbchProblem(t, "advance of a halted rollout", resp, body, 409, api.ProblemConflict)
	w.wantSame(t, "the refused advance of a halted rollout", before)
	w.rolloutOK(t, "nightly", "halt", nil)
	w.wantSame(t, "a second halt", before)

	// Resume: the 75 % again.
	c = w.rolloutOK(t, "nightly", "resume", nil)
	if c.Rollout == nil || c.Rollout.State != betaport.RolloutActive || c.Rollout.Percent != 75 || c.Rollout.ID != rid {
		t.Fatalf("resume answered %+v, rollout %+v", c, c.Rollout)
	}
	w.wantCurrent(t, "resumed", w.night, in(r75))
	w.wantFeeds(t, "resumed", w.night, installed, offerNew)

	// Complete: everyone.
	c = w.rolloutOK(t, "nightly", "complete", nil)
	if c.Rollout != nil || c.CurrentBundle != b2.Number || c.Testers != 40 {
		t.Fatalf("complete answered %+v, rollout %+v", c, c.Rollout)
	}
	w.wantCurrent(t, "completed", w.night, func(*bbchTester) int64 { return b2.Number })
	w.wantFeeds(t, "completed", w.night, at("1.0.0"), func(*bbchTester) int64 { return b2.Number })
	wantControl("completed")
	if b := w.bundles(t)[b2.Number]; !slices.Equal(b.Channels, []string{"nightly"}) || b.Current {
		t.Errorf("the bundles list shows bundle 2 on %v, current %v; want nightly only, not current on beta", b.Channels, b.Current)
	}

	// No rollout: every action is 409, an unknown one 404.
	before = w.state(t)
	for _, action := range []string{"advance", "halt", "resume", "complete"} {
		var body any
		if action == "advance" {
			body = api.RolloutChange{Percent: 100}
		}
		resp, b := w.rollout(t, "nightly", action, body)
		bbchProblem(t, action+" with no rollout", resp, b, 409, api.ProblemConflict)
		resp, b = w.rollout(t, "beta", action, body)
		bbchProblem(t, action+" on beta, which never had a rollout", resp, b, 409, api.ProblemConflict)
	}
	resp, body = w.rollout(t, "nightly", "restart", nil)
	bbchProblem(t, "an unknown action with no rollout", resp, body, 404, api.ProblemNotFound)
	w.wantSame(t, "the rollout actions with no rollout", before)

	events := bbkAudit(t, w.e, w.ext, w.admin, 0)
	for _, action := range []string{betaport.AuditRolloutStarted, "rollout.advanced", "rollout.halted", "rollout.resumed", betaport.AuditRolloutCompleted} {
		if n, _ := bbchAuditCount(events, action); n != 1 {
			t.Errorf("the audit trail has %d %s events, want 1:\n%s", n, action, strings.Join(bbkAuditLines(events), "\n"))
		}
	}
}

// TestBlackBoxChannelRollback: a rollback onto a channel with a halted
// rollout is a new bundle, newer, that reaches every tester on the channel
// and no one on beta; a publish at 100 % during a rollout replaces it, and
// advancing to 100 % completes one.
func TestBlackBoxChannelRollback(t *testing.T) {
	t.Parallel()
	w := newBBCHRolloutWorld(t, 12)
	b2 := w.submit(t, "2.0.0", map[string]any{"channel": "nightly", "rollout": 50})
	w.rolloutOK(t, "nightly", "halt", nil)

	before := w.state(t)
	resp, body := w.e.send(t, "POST", api.RollbackPath(w.ext, w.b1.Number), w.admin, api.ChannelChoice{Channel: "weekly"})
	p := bbchProblem(t, "a rollback onto an unknown channel", resp, body, 404, api.ProblemNotFound)
	bbchNamesChannels(t, "a rollback onto an unknown channel", p, "beta", "nightly")
	resp, body = w.e.send(t, "POST", api.RollbackPath(w.ext, w.b1.Number), w.admin, map[string]any{"channel": "nightly", "percent": 10})
	bbchRefused(t, "a rollback with an unknown field", resp, body, 400)
	w.wantSame(t, "the refused rollbacks", before)

	resp, body = w.e.send(t, "POST", api.RollbackPath(w.ext, w.b1.Number), w.admin, api.ChannelChoice{Channel: "nightly"})
	var rb betaport.Bundle
	if resp.StatusCode != 201 || json.Unmarshal(body, &rb) != nil || rb.Number != b2.Number+1 || rb.RollbackOf != w.b1.Number || rb.SHA256 != w.b1.SHA256 {
		t.Fatalf("the rollback onto nightly = %d %s; want 201, bundle %d rolling back 1", resp.StatusCode, body, b2.Number+1)
	}
	if !bbchNewer(rb.Version, b2.Version) {
		t.Fatalf("the rollback is served as %s, not above %s: browsers on 2.0.0 would not take it", rb.Version, b2.Version)
	}
	w.versions[rb.Number] = rb.Version
	c := w.channel(t, "nightly")
	if c.CurrentBundle != rb.Number || c.Rollout != nil {
		t.Fatalf("after the rollback nightly = %+v, rollout %+v; want bundle %d to everyone", c, c.Rollout, rb.Number)
	}
	w.wantCurrent(t, "after the rollback", w.night, func(*bbchTester) int64 { return rb.Number })
	w.wantFeeds(t, "after the rollback, copies at 2.0.0", w.night, func(*bbchTester) string { return b2.Version }, func(*bbchTester) int64 { return rb.Number })
	w.wantFeeds(t, "after the rollback, copies at 1.0.0", w.night, func(*bbchTester) string { return "1.0.0" }, func(*bbchTester) int64 { return rb.Number })
	if got := w.current(t, w.control.session, ""); got != w.b1.Number {
		t.Errorf("the beta tester's current after nightly's rollback = %d, want %d", got, w.b1.Number)
	}
	if st, _ := w.fetch(t, api.BundleDownloadPath(w.ext, rb.Number), w.control.session); st != 404 {
		t.Errorf("the beta tester downloads nightly's rollback: %d, want 404", st)
	}
	if b := w.bundles(t)[rb.Number]; !slices.Equal(b.Channels, []string{"nightly"}) {
		t.Errorf("the bundles list shows the rollback on %v, want nightly", b.Channels)
	}
	if c := w.channel(t, "beta"); c.CurrentBundle != w.b1.Number {
		t.Errorf("nightly's rollback moved beta to %d", c.CurrentBundle)
	}
	n, subjects := bbchAuditCount(bbkAudit(t, w.e, w.ext, w.admin, 0), betaport.AuditBundleRollback)
	if n != 1 || !strings.Contains(subjects[0], "nightly") {
		t.Errorf("the audit trail has %d %s events (%q), want one naming nightly", n, betaport.AuditBundleRollback, subjects)
	}

	// A publish at 100 % during a rollout replaces it.
	b4 := w.submit(t, "4.0.0", map[string]any{"channel": "nightly", "rollout": 25})
	if c := w.channel(t, "nightly"); c.Rollout == nil || c.Rollout.Bundle != b4.Number || c.Rollout.Previous != rb.Number {
		t.Fatalf("a rollout of 4 = %+v", c.Rollout)
	}
	b5 := w.submit(t, "5.0.0", map[string]any{"channel": "nightly"})
	if c := w.channel(t, "nightly"); c.Rollout != nil || c.CurrentBundle != b5.Number {
		t.Fatalf("a publish at 100 %% during a rollout left nightly %+v, rollout %+v", c, c.Rollout)
	}
	w.wantCurrent(t, "after a publish replaced the rollout", w.night, func(*bbchTester) int64 { return b5.Number })
	// A promote below 100 %, advanced to 100 %: completed.
	b6 := w.submit(t, "6.0.0", nil)
	w.promoteOK(t, b6.Number, "nightly", 10)
	c = w.rolloutOK(t, "nightly", "advance", api.RolloutChange{Percent: 100})
	if c.Rollout != nil || c.CurrentBundle != b6.Number {
		t.Fatalf("advance to 100 %% answered %+v, rollout %+v; want it completed", c, c.Rollout)
	}
	w.wantCurrent(t, "after advancing to 100 %", w.night, func(*bbchTester) int64 { return b6.Number })
	w.wantFeeds(t, "after advancing to 100 %", w.night, func(*bbchTester) string { return "5.0.0" }, func(*bbchTester) int64 { return b6.Number })
}

// TestBlackBoxChannelWebhooks: a webhook receiver on 127.0.0.1 gets
// bundle.published (with its channel), bundle.promoted, rollout.started,
// rollout.advanced, rollout.halted, rollout.resumed, rollout.completed
// and bundle.rolled_back, each naming the channel and the rollout as it is
// after the event.
func TestBlackBoxChannelWebhooks(t *testing.T) {
	t.Parallel()
	w := newBBCHWorld(t)
	w.e.startWebhooks(t)
	rc := newReceiver(t, 0)
	resp, body := w.e.send(t, "POST", api.WebhooksPath(w.ext), w.admin, api.NewWebhook{URL: rc.URL + "/hook"})
	if resp.StatusCode != 201 {
		t.Fatalf("creating the webhook = %d %s", resp.StatusCode, body)
	}
	w.create(t, "nightly")
	w.join(t, "Nia", "nightly")
	b1 := w.submit(t, "1.0.0", nil)
	w.promoteOK(t, b1.Number, "nightly", 0)
	b2 := w.submit(t, "2.0.0", map[string]any{"channel": "nightly", "rollout": 20})
	w.rolloutOK(t, "nightly", "advance", api.RolloutChange{Percent: 40})
	w.rolloutOK(t, "nightly", "halt", nil)
	w.rolloutOK(t, "nightly", "resume", nil)
	w.rolloutOK(t, "nightly", "complete", nil)
	b3 := w.submit(t, "3.0.0", map[string]any{"channel": "nightly", "rollout": 5})
	w.rolloutOK(t, "nightly", "halt", nil)
	resp, body = w.e.send(t, "POST", api.RollbackPath(w.ext, b2.Number), w.admin, api.ChannelChoice{Channel: "nightly"})
	var rb betaport.Bundle
	if resp.StatusCode != 201 || json.Unmarshal(body, &rb) != nil {
		t.Fatalf("the rollback = %d %s", resp.StatusCode, body)
	}

	type want struct {
		typ, channel string
		bundle       int64
		percent      int    // 0: no rollout expected or not checked
		state        string // "" : not checked
		previous     int64
	}
	wants := []want{
		{betaport.EventBundlePublished, "beta", b1.Number, 0, "", 0},
		{betaport.EventBundlePromoted, "nightly", b1.Number, 0, "", 0},
		{betaport.EventRolloutStarted, "nightly", b2.Number, 20, betaport.RolloutActive, b1.Number},
		{betaport.EventRolloutAdvanced, "nightly", b2.Number, 40, betaport.RolloutActive, b1.Number},
		{betaport.EventRolloutHalted, "nightly", b2.Number, 40, betaport.RolloutHalted, b1.Number},
		{betaport.EventRolloutResumed, "nightly", b2.Number, 40, betaport.RolloutActive, b1.Number},
		{betaport.EventRolloutCompleted, "nightly", b2.Number, 0, betaport.RolloutCompleted, b1.Number},
		{betaport.EventRolloutStarted, "nightly", b3.Number, 5, betaport.RolloutActive, b2.Number},
		{betaport.EventRolloutHalted, "nightly", b3.Number, 5, betaport.RolloutHalted, b2.Number},
		{betaport.EventBundleRolledBack, "nightly", rb.Number, 0, "", 0},
	}
	match := func(r received, x want) bool {
		ev := r.event
		if ev.Type != x.typ || ev.Channel != x.channel || ev.Bundle == nil || ev.Bundle.Number != x.bundle {
			return false
		}
		if x.state != "" && (ev.Rollout == nil || ev.Rollout.State != x.state || ev.Rollout.Previous != x.previous ||
			(x.percent != 0 && ev.Rollout.Percent != x.percent)) {
			return false
		}
		return true
	}
	missing := func(got []received) []want {
		var out []want
		for _, x := range wants {
			if !slices.ContainsFunc(got, func(r received) bool { return match(r, x) }) {
				out = append(out, x)
			}
		}
		return out
	}
	// Wait for every event, as long as deliveries keep arriving (at most a
	// minute without one).
	got := rc.requests()
	for quiet := false; len(missing(got)) > 0 && !quiet; got = rc.requests() {
		select {
		case <-rc.arrived:
		case <-time.After(time.Minute):
			quiet = true
		}
	}
	if m := missing(got); len(m) > 0 {
		var seen []string
		for _, r := range got {
			rj, _ := json.Marshal(r.event.Rollout)
			n := int64(0)
			if r.event.Bundle != nil {
				n = r.event.Bundle.Number
			}
			seen = append(seen, fmt.Sprintf("%s channel=%q bundle=%d rollout=%s", r.event.Type, r.event.Channel, n, rj))
		}
		t.Errorf("the receiver lacks %+v; it got:\n%s", m, strings.Join(seen, "\n"))
	}
}

// TestBlackBoxChannelOpenAPI: the issue puts the API "in the OpenAPI
// file": the document describes the new routes, call 1's "channel" and
// "rollout", and the new audit actions (every answer the tests above get
// is also checked against it, through env.send).
func TestBlackBoxChannelOpenAPI(t *testing.T) {
	t.Parallel()
	doc, _ := loadContract(t)
	if item := doc.Paths.Find("/api/extensions/{id}/bundles/{number}/rollback"); item == nil || item.Post == nil {
		t.Fatal("the test cannot find the rollback route in the document: Paths.Find does not match templates here")
	}
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/extensions/{id}/channels"},
		{"POST", "/api/extensions/{id}/channels"},
		{"GET", "/api/extensions/{id}/channels/{channel}"},
		{"POST", "/api/extensions/{id}/bundles/{number}/promote"},
		{"POST", "/api/extensions/{id}/channels/{channel}/rollout/{action}"},
		{"PUT", "/api/extensions/{id}/testers/{testerId}/channel"},
	} {
		item := doc.Paths.Find(r.path)
		if item == nil || item.GetOperation(r.method) == nil {
			t.Errorf("the OpenAPI document does not describe %s %s", r.method, r.path)
		}
	}
	item := doc.Paths.Find(api.PathSubmitUpload)
	if item == nil || item.Post == nil || item.Post.RequestBody == nil {
		t.Fatalf("the OpenAPI document does not describe call 1")
	}
	for _, media := range item.Post.RequestBody.Value.Content {
		if s := media.Schema; s != nil && s.Value != nil {
			props := map[string]bool{}
			for name := range s.Value.Properties {
				props[name] = true
			}
			for _, alt := range append(s.Value.OneOf, s.Value.AnyOf...) {
				for name := range alt.Value.Properties {
					props[name] = true
				}
			}
			for _, f := range []string{"channel", "rollout"} {
				if !props[f] {
					t.Errorf("the OpenAPI document's call 1 body has no %q", f)
				}
			}
		}
	}
	raw, _ := json.Marshal(doc)
	for _, action := range []string{betaport.AuditChannelCreated, betaport.AuditTesterChannel, betaport.AuditBundlePromoted,
		betaport.AuditRolloutStarted, "rollout.advanced", "rollout.halted", "rollout.resumed", betaport.AuditRolloutCompleted} {
		if !bytes.Contains(raw, []byte(`"`+action+`"`)) {
			t.Errorf("the OpenAPI document never names the audit action %q", action)
		}
	}
}
