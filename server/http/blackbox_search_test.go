package http_test

// Black-box tests of tester search through the HTTP API:
//
//	GET /api/extensions/{id}/testers?cursor=C&limit=L&q=…&status=…
//
// q matches a substring of a tester's e-mail or name, case-insensitively,
// newest first, combined with the status filter and cursor paging. Written
// from the issue, DESIGN.md and the wire contract (app/api) only, not from
// the implementation. Every test starts its server with newEnv, so
// TestOnPostgresAndS3 runs them again on PostgreSQL (pg_trgm) as well as
// here on SQLite (FTS5 trigram):
//
//	go test -run BlackBoxSearch ./server/http
//	BETAPORT_HTTP_BACKEND=postgres+s3 go test -run BlackBoxSearch ./server/http
//
// The reference every answer is compared with is computed here, from the
// testers the test invited (or, with thousands of demo testers, from the
// plain list): keep a tester when strings.ToLower of its e-mail or name
// contains strings.ToLower of the query with the white space around it
// trimmed; an empty (or all-blank) query keeps everyone. Order: the plain
// list's, newest first.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/demo"
	"github.com/betaport/betaport/server/storetest"
)

// ---------------------------------------------------------------- fixture

// bbsPerson is one tester the fixture invites, and what becomes of them.
type bbsPerson struct {
	email, name, status string
	// optional: the address is unusual enough that a strict validator
	// may refuse it; then the tester is left out (and logged).
	optional bool
}

// bbsPeople have no digits anywhere (so a query made of a tester's id
// matches nobody) and put every kind of text users type into the names:
// accents in both cases, ß, Cyrillic, CJK, emoji (one with a ZWJ), and the
// punctuation that SQL LIKE, FTS5 and tsquery give a meaning to.
var bbsPeople = []bbsPerson{
	{"ada.lovelace@analytical.example", "Ada Lovelace", betaport.TesterActive, false},
	{"grace.hopper@navy.example", "Grace Hopper", betaport.TesterRevoked, false},
	{"lady.byron@poets.example", "Lovelace Ada", betaport.TesterInvited, false},
	{"elodie@paris.example", "Élodie Durand", betaport.TesterActive, false},
	{"renee@lyon.example", "Renée Écoute", betaport.TesterInvited, false},
	{"juergen@berlin.example", "Jürgen Straße", betaport.TesterInvited, false},
	{"dmitry@moscow.example", "Дмитрий Иванов", betaport.TesterActive, false},
	{"yamada@tokyo.example", "山田太郎", betaport.TesterActive, false},
	{"zoe@rainbow.example", "Zoë 🦄 Unicorn", betaport.TesterRevoked, false},
	{"dev@code.example", "👩‍💻 Dev Person", betaport.TesterInvited, false},
	{"percent@odd.example", "Half% Pure_Fun", betaport.TesterInvited, false},
	{"quotes@odd.example", `O'Brien "Bob" \ Slash`, betaport.TesterInvited, false},
	{"star@odd.example", "Star*Power ^Caret (Paren): Colon", betaport.TesterActive, false},
	{"cartoon@odd.example", "Tom AND Jerry OR NOT NEAR Spike", betaport.TesterInvited, false},
	{"semi@odd.example", "Semi;Colon -- Dash", betaport.TesterRevoked, false},
	{"wild@odd.example", "abXcd Wild", betaport.TesterInvited, false},
	{"alex@andes.example", "Alexander Anderson", betaport.TesterActive, false},
	{"LOUD.Person@Shout.EXAMPLE", "UPPER CASE", betaport.TesterInvited, false},
	{"noname@quiet.example", "", betaport.TesterInvited, false},
	{"ab@tiny.example", "Ab", betaport.TesterInvited, false},
	{"x@y.example", "X", betaport.TesterInvited, false},
	{"zyzzyva@marker.example", "Quixotic Zyzzyva", betaport.TesterActive, false},
	{"first_last+beta@dash-domain.example", "Under Score", betaport.TesterInvited, true},
}

// bbsSite is a server, an extension with bbsPeople invited through the
// API, its admin, and what the test expects the extension's testers to be.
type bbsSite struct {
	*env
	team  *betaport.Team
	ext   *betaport.Extension
	admin http.Header
	// testers are the extension's testers as the invites answered them,
	// with the statuses the test gave them since.
	testers map[int64]*betaport.Tester
	links   map[int64]string
	// allHasRevoked: the list without a status shows revoked testers too
	// (the design does not say; the fixture reads it from the plain list).
	allHasRevoked bool
}

func bbsNewSite(t *testing.T) *bbsSite {
	t.Helper()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	s := &bbsSite{env: e, team: team, ext: storetest.MustExtension(t, e.DB, team, "Search Me"),
		admin: e.adminOf(t, team), testers: map[int64]*betaport.Tester{}, links: map[int64]string{}}
	for _, p := range bbsPeople {
		inv, ok := s.invite(t, s.ext.ID, s.admin, p.email, p.name, p.optional)
		if !ok {
			continue
		}
		switch p.status {
		case betaport.TesterActive:
			s.activate(t, inv.ID)
		case betaport.TesterRevoked:
			s.revoke(t, inv.ID)
		}
	}
	s.checkPlainLists(t)
	return s
}

// invite invites a tester through the API as the testers page does. An
// optional one that the server refuses with a 400 is left out.
func (s *bbsSite) invite(t *testing.T, ext int64, admin http.Header, email, name string, optional bool) (api.Invited, bool) {
	t.Helper()
	resp, body := s.send(t, http.MethodPost, api.TestersPath(ext), admin, api.Invite{Email: email, Name: name})
	if optional && resp.StatusCode == http.StatusBadRequest {
		t.Logf("the server refuses the address %q (%s); left out", email, body)
		return api.Invited{}, false
	}
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("inviting %q <%s>: %d %s", name, email, resp.StatusCode, body)
	}
	var inv api.Invited
	if err := json.Unmarshal(body, &inv); err != nil || inv.ID == 0 {
		t.Fatalf("inviting %q <%s> answered %s (%v)", name, email, body, err)
	}
	if inv.ExtensionID != ext || inv.Status != betaport.TesterInvited {
		t.Fatalf("inviting %q <%s> answered %s: want extension %d, status invited", name, email, body, ext)
	}
	if ext == s.ext.ID {
		tt := inv.Tester
		s.testers[inv.ID] = &tt
		s.links[inv.ID] = strings.TrimPrefix(inv.InviteURL, s.URL)
	}
	return inv, true
}

// activate opens a tester's link in a browser, which makes them active.
func (s *bbsSite) activate(t *testing.T, id int64) {
	t.Helper()
	resp, body := s.do(t, http.MethodGet, s.links[id], http.Header{"Accept": {"text/html"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("opening the invite link of tester %d = %d, want 303; %.300s", id, resp.StatusCode, body)
	}
	s.testers[id].Status = betaport.TesterActive
}

// revoke revokes a tester through the API.
func (s *bbsSite) revoke(t *testing.T, id int64) {
	t.Helper()
	resp, body := s.do(t, http.MethodDelete, api.TesterPath(s.ext.ID, id), s.admin)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoking tester %d = %d, want 204; %s", id, resp.StatusCode, body)
	}
	s.testers[id].Status = betaport.TesterRevoked
}

// base is what the list without q shows for a status filter, newest first,
// from what the test did.
func (s *bbsSite) base(status string) []betaport.Tester {
	var out []betaport.Tester
	for _, tt := range s.testers {
		if status == "" && tt.Status == betaport.TesterRevoked && !s.allHasRevoked {
			continue
		}
		if status == "" || tt.Status == status {
			out = append(out, *tt)
		}
	}
	slices.SortFunc(out, func(a, b betaport.Tester) int { return int(b.ID - a.ID) })
	return out
}

// want is the reference answer to a search.
func (s *bbsSite) want(q, status string) []betaport.Tester { return bbsFilter(s.base(status), q) }

// checkPlainLists checks that the lists without q are what the test did,
// so that the reference the searches are held to is the server's own list.
func (s *bbsSite) checkPlainLists(t *testing.T) {
	t.Helper()
	all := bbsSearchAll(t, s.env, s.admin, s.ext.ID, "", "", 100)
	switch len(all) {
	case len(s.testers):
		s.allHasRevoked = true
	default:
		s.allHasRevoked = false
	}
	for _, status := range []string{"", betaport.TesterInvited, betaport.TesterActive, betaport.TesterRevoked} {
		got := all
		if status != "" {
			got = bbsSearchAll(t, s.env, s.admin, s.ext.ID, "", status, 100)
		}
		if diff := bbsDiff(got, s.base(status)); diff != "" {
			t.Fatalf("the plain list (status=%q) is not what the test made, so no search can be checked against it:\n%s", status, diff)
		}
	}
	for i := 1; i < len(all); i++ {
		if all[i].CreatedAt.After(all[i-1].CreatedAt) {
			t.Fatalf("the plain list is not newest first: %s (%s) before %s (%s)",
				all[i-1].Email, all[i-1].CreatedAt, all[i].Email, all[i].CreatedAt)
		}
	}
}

// ---------------------------------------------------------------- helpers

// bbsFilter keeps the testers whose e-mail or name contains q, ignoring
// case and the white space around q, in their order.
func bbsFilter(list []betaport.Tester, q string) []betaport.Tester {
	q = strings.ToLower(strings.TrimSpace(q))
	out := []betaport.Tester{}
	for _, tt := range list {
		if q == "" || strings.Contains(strings.ToLower(tt.Email), q) || strings.Contains(strings.ToLower(tt.Name), q) {
			out = append(out, tt)
		}
	}
	return out
}

// bbsQuery is the query string of one list request.
func bbsQuery(q, status string, limit int, cursor string) string {
	v := url.Values{}
	if q != "" {
		v.Set("q", q)
	}
	if status != "" {
		v.Set("status", status)
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	return v.Encode()
}

// bbsLeaks are words that must never reach a client: they come from the
// database, its driver or a panic.
var bbsLeaks = []string{"sqlite", "SQLSTATE", "syntax error", "fts5", "FTS5", "pg_trgm", "pgx", "pq:", "ERROR:",
	"panic", "goroutine ", "unterminated", "no such column", "malformed MATCH", "escape character", "invalid byte sequence"}

func bbsNoLeak(t *testing.T, label string, body []byte) {
	t.Helper()
	for _, w := range bbsLeaks {
		if strings.Contains(string(body), w) {
			t.Errorf("%s: the answer shows %q: %.400s", label, w, body)
		}
	}
}

// bbsPage decodes a 200 page of testers, or fails. (A page's own data
// may hold any text, so only an answer that is not a page is checked for
// leaks.)
func bbsPage(t *testing.T, label string, resp *http.Response, body []byte) api.Page[betaport.Tester] {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		bbsNoLeak(t, label, body)
		t.Fatalf("%s = %d, want 200; %.600s", label, resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s: Content-Type %q, want application/json", label, ct)
	}
	var page api.Page[betaport.Tester]
	if err := json.Unmarshal(body, &page); err != nil {
		bbsNoLeak(t, label, body)
		t.Fatalf("%s: the page does not decode: %v; %.600s", label, err, body)
	}
	return page
}

// bbsSearchAll pages through a search with the given page size and
// returns every tester it gives, checking each page on the way: no more
// than limit testers, none twice, nextCursor absent on the last page.
func bbsSearchAll(t *testing.T, e *env, who http.Header, ext int64, q, status string, limit int) []betaport.Tester {
	t.Helper()
	out := []betaport.Tester{}
	seen := map[int64]int{}
	cursor := ""
	for pages := 1; ; pages++ {
		qs := bbsQuery(q, status, limit, cursor)
		label := fmt.Sprintf("GET testers?%.200s (page %d)", qs, pages)
		resp, body := e.do(t, http.MethodGet, api.TestersPath(ext)+"?"+qs, who)
		page := bbsPage(t, label, resp, body)
		if len(page.Data) > limit {
			t.Errorf("%s: %d testers on a page of %d", label, len(page.Data), limit)
		}
		for _, tt := range page.Data {
			if p, dup := seen[tt.ID]; dup {
				t.Fatalf("%s: tester %d (%s) again, first seen on page %d", label, tt.ID, tt.Email, p)
			}
			seen[tt.ID] = pages
			if tt.ExtensionID != ext {
				t.Errorf("%s: tester %d (%s) of extension %d in extension %d's list", label, tt.ID, tt.Email, tt.ExtensionID, ext)
			}
			if status != "" && tt.Status != status {
				t.Errorf("%s: tester %d (%s) is %s", label, tt.ID, tt.Email, tt.Status)
			}
			out = append(out, tt)
		}
		if page.NextCursor == "" {
			if strings.Contains(string(body), "nextCursor") {
				t.Errorf("%s: the last page carries nextCursor (want it absent): %.300s", label, body)
			}
			return out
		}
		if len(page.Data) == 0 {
			t.Fatalf("%s: an empty page with a nextCursor %q", label, page.NextCursor)
		}
		if pages > 20000/limit+50 {
			t.Fatalf("%s: still paging after %d pages", label, pages)
		}
		cursor = page.NextCursor
	}
}

// bbsDiff says how got differs from want (ids, order, and the fields a
// search could show stale), or "" when they are the same.
func bbsDiff(got, want []betaport.Tester) string {
	same := len(got) == len(want)
	for i := 0; same && i < len(got); i++ {
		g, w := got[i], want[i]
		same = g.ID == w.ID && g.Email == w.Email && g.Name == w.Name && g.Status == w.Status && g.ExtensionID == w.ExtensionID
	}
	if same {
		return ""
	}
	var b strings.Builder
	ids := func(l []betaport.Tester) map[int64]betaport.Tester {
		m := map[int64]betaport.Tester{}
		for _, tt := range l {
			m[tt.ID] = tt
		}
		return m
	}
	gm, wm := ids(got), ids(want)
	missing, extra := 0, 0
	for _, tt := range want {
		if _, ok := gm[tt.ID]; !ok {
			if missing++; missing <= 15 {
				fmt.Fprintf(&b, "\tmissing: %d %q <%s> %s\n", tt.ID, tt.Name, tt.Email, tt.Status)
			}
		}
	}
	for _, tt := range got {
		if _, ok := wm[tt.ID]; !ok {
			if extra++; extra <= 15 {
				fmt.Fprintf(&b, "\tnot wanted: %d %q <%s> %s (extension %d)\n", tt.ID, tt.Name, tt.Email, tt.Status, tt.ExtensionID)
			}
		}
	}
	if missing+extra > 30 {
		fmt.Fprintf(&b, "\t… %d missing and %d not wanted in all\n", missing, extra)
	}
	if missing == 0 && extra == 0 {
		for i := range got {
			if g, w := got[i], want[i]; g.ID != w.ID || g.Email != w.Email || g.Name != w.Name || g.Status != w.Status || g.ExtensionID != w.ExtensionID {
				fmt.Fprintf(&b, "\tat %d: got %d %q <%s> %s, want %d %q <%s> %s\n", i, g.ID, g.Name, g.Email, g.Status, w.ID, w.Name, w.Email, w.Status)
				break
			}
		}
	}
	fmt.Fprintf(&b, "\tgot %d testers, want %d", len(got), len(want))
	return b.String()
}

// bbsNames lists testers for a message.
func bbsNames(l []betaport.Tester) string {
	var names []string
	for _, tt := range l {
		names = append(names, fmt.Sprintf("%q <%s>", tt.Name, tt.Email))
	}
	return strings.Join(names, ", ")
}

// check runs one search, through every page of the given size, and holds
// it to the reference.
func (s *bbsSite) check(t *testing.T, q, status string, limit int) []betaport.Tester {
	t.Helper()
	got := bbsSearchAll(t, s.env, s.admin, s.ext.ID, q, status, limit)
	if diff := bbsDiff(got, s.want(q, status)); diff != "" {
		t.Errorf("q=%q status=%q limit=%d is not the reference:\n%s", q, status, limit, diff)
	}
	return got
}

// bbsProblem checks a 400 answer: a problem a person can act on, about
// the parameter at fault, with nothing from the database in it.
func bbsProblem(t *testing.T, label string, resp *http.Response, body []byte, param string) {
	t.Helper()
	bbsNoLeak(t, label, body)
	if ct := resp.Header.Get("Content-Type"); ct != api.ProblemContentType {
		t.Errorf("%s: 400 with Content-Type %q, want %s; %.300s", label, ct, api.ProblemContentType, body)
		return
	}
	var p api.Problem
	if err := json.Unmarshal(body, &p); err != nil {
		t.Errorf("%s: the problem does not decode: %v; %.300s", label, err, body)
		return
	}
	if p.Status != http.StatusBadRequest || p.Type != api.ProblemBadRequest || p.Title == "" || len(p.Detail) < 10 {
		t.Errorf("%s: problem %+v, want a 400 %s with a title and a detail", label, p, api.ProblemBadRequest)
	}
	if param != "" && p.Param != param {
		t.Errorf("%s: the problem names param %q, want %q", label, p.Param, param)
	}
}

var bbsStatuses = []string{"", betaport.TesterInvited, betaport.TesterActive, betaport.TesterRevoked}

// ---------------------------------------------------------------- tests

// TestBlackBoxSearchSubstrings: a query finds every tester whose e-mail or
// name contains it, wherever (start, middle, end), whatever the case, in
// any script, from one character up, alone or with a status filter, and
// nobody else.
func TestBlackBoxSearchSubstrings(t *testing.T) {
	t.Parallel()
	s := bbsNewSite(t)
	cases := []struct {
		q    string
		must []string // names (or e-mails) the reference must hold: keeps the reference honest
	}{
		// e-mail: start, middle, end, whole, mixed case
		{"ada.", []string{"Ada Lovelace"}},
		{"lovelace@", []string{"Ada Lovelace"}},
		{"@analytical", []string{"Ada Lovelace"}},
		{"analytical.example", []string{"Ada Lovelace"}},
		{"ada.lovelace@analytical.example", []string{"Ada Lovelace"}},
		{"ADA.LoveLace@Analytical.EXAMPLE", []string{"Ada Lovelace"}},
		{"navy.EXAMPLE", []string{"Grace Hopper"}},
		{"shout.example", []string{"UPPER CASE"}},
		{"LOUD.person", []string{"UPPER CASE"}},
		{"noname@", []string{"noname@quiet.example"}},
		{".example", nil},
		{"@", nil},
		{"example", nil},
		// name: start, middle, end, whole, mixed case
		{"Grace", []string{"Grace Hopper"}},
		{"race hop", []string{"Grace Hopper"}},
		{"hopper", []string{"Grace Hopper"}},
		{"gRACE hOPPER", []string{"Grace Hopper"}},
		{"ada", []string{"Ada Lovelace", "Lovelace Ada", "山田太郎"}}, // yamada@ ends in "ada"
		{"ADA", []string{"Ada Lovelace", "Lovelace Ada"}},
		{"Ada Lovelace", []string{"Ada Lovelace"}},
		{"lovelace ada", []string{"Lovelace Ada"}},
		{"zyzzyva", []string{"Quixotic Zyzzyva"}},
		{"QUIXOTIC", []string{"Quixotic Zyzzyva"}},
		{"per", []string{"Grace Hopper", "👩‍💻 Dev Person", "UPPER CASE"}},
		// accents, both cases
		{"élodie", []string{"Élodie Durand"}},
		{"ÉLODIE", []string{"Élodie Durand"}},
		{"lodie dur", []string{"Élodie Durand"}},
		{"écoute", []string{"Renée Écoute"}},
		{"RENÉE", []string{"Renée Écoute"}},
		{"ée É", []string{"Renée Écoute"}},
		{"é", []string{"Élodie Durand", "Renée Écoute"}},
		{"É", []string{"Élodie Durand", "Renée Écoute"}},
		{"Zoë", []string{"Zoë 🦄 Unicorn"}},
		{"ZOË", []string{"Zoë 🦄 Unicorn"}},
		{"ë", []string{"Zoë 🦄 Unicorn"}},
		{"ürg", []string{"Jürgen Straße"}},
		{"JÜRGEN", []string{"Jürgen Straße"}},
		// ß
		{"ß", []string{"Jürgen Straße"}},
		{"straße", []string{"Jürgen Straße"}},
		{"STRAßE", []string{"Jürgen Straße"}},
		{"aße", []string{"Jürgen Straße"}},
		// Cyrillic
		{"иванов", []string{"Дмитрий Иванов"}},
		{"ДМИТРИЙ", []string{"Дмитрий Иванов"}},
		{"митрий ив", []string{"Дмитрий Иванов"}},
		{"д", []string{"Дмитрий Иванов"}},
		{"Ив", []string{"Дмитрий Иванов"}},
		{"ов", []string{"Дмитрий Иванов"}},
		// CJK
		{"山田太郎", []string{"山田太郎"}},
		{"田太郎", []string{"山田太郎"}},
		{"太郎", []string{"山田太郎"}},
		{"山田", []string{"山田太郎"}},
		{"田", []string{"山田太郎"}},
		{"郎", []string{"山田太郎"}},
		// emoji, one of them a ZWJ sequence
		{"🦄", []string{"Zoë 🦄 Unicorn"}},
		{"🦄 u", []string{"Zoë 🦄 Unicorn"}},
		{"ë 🦄", []string{"Zoë 🦄 Unicorn"}},
		{"👩‍💻", []string{"👩‍💻 Dev Person"}},
		{"💻", []string{"👩‍💻 Dev Person"}},
		{"👩‍💻 dev", []string{"👩‍💻 Dev Person"}},
		// one and two characters
		{"a", nil},
		{"A", nil},
		{"x", []string{"X", "abXcd Wild", "Alexander Anderson"}},
		{"z", []string{"Quixotic Zyzzyva", "Zoë 🦄 Unicorn"}},
		{"q", []string{"Quixotic Zyzzyva"}},
		{".", nil},
		{"ab", []string{"Ab", "abXcd Wild"}},
		{"AB", []string{"Ab", "abXcd Wild"}},
		{"yz", []string{"Quixotic Zyzzyva"}},
		{"er", nil},
		{"@y", []string{"X"}},
		// words that are operators elsewhere are words here
		{"and", []string{"Alexander Anderson", "Tom AND Jerry OR NOT NEAR Spike"}},
		{"AND", []string{"Alexander Anderson", "Tom AND Jerry OR NOT NEAR Spike"}},
		{"near", []string{"Tom AND Jerry OR NOT NEAR Spike"}},
		{"or not", []string{"Tom AND Jerry OR NOT NEAR Spike"}},
		{"Jerry OR NOT", []string{"Tom AND Jerry OR NOT NEAR Spike"}},
	}
	for _, c := range cases {
		for _, status := range bbsStatuses {
			t.Run(fmt.Sprintf("q=%s/status=%s", c.q, status), func(t *testing.T) {
				if status == "" {
					// The reference must hold the testers named (those the
					// plain list shows): else the test, not the server, is wrong.
					is := func(m string) func(betaport.Tester) bool {
						return func(tt betaport.Tester) bool { return tt.Name == m || tt.Email == m }
					}
					for _, m := range c.must {
						if slices.ContainsFunc(s.base(""), is(m)) && !slices.ContainsFunc(s.want(c.q, ""), is(m)) {
							t.Fatalf("the test's reference for %q misses %q: fix the test", c.q, m)
						}
					}
				}
				s.check(t, c.q, status, 100)
			})
		}
	}
}

// TestBlackBoxSearchIsExactSubstring: search is a substring match, not a
// fuzzy, word or prefix match: no near misses, words in another order,
// words split across the e-mail and the name, LIKE wildcards, or ids and
// statuses.
func TestBlackBoxSearchIsExactSubstring(t *testing.T) {
	t.Parallel()
	s := bbsNewSite(t)
	var id string
	for k := range s.testers {
		id = strconv.FormatInt(k, 10)
		break
	}
	for _, q := range []string{
		"Grace Hoper",           // a typo: similar, not a substring
		"Grace  Hopper",         // two spaces
		"Ada\tLovelace",         // a tab inside
		"hopper grace",          // words in another order
		"Lovelace Ada Lovelace", // more than the name
		"Ada Lovelace ada.lovelace",
		"Ada Lovelace ada",                    // name then e-mail, as if one text
		"Lovelaceada.lovelace",                // name and e-mail run together
		"Lovelace\nada.lovelace",              // across a line break
		"ada.lovelace@analytical.example Ada", // e-mail then name
		"example Ada",                         // across the end of an e-mail
		"Ada Lov*",                            // a prefix operator elsewhere
		"b_c",                                 // "_" is not any character: abXcd must not match
		"ab%cd",                               // "%" is not any text
		"a%e",                                 // would match most of the list as LIKE
		"%a%",                                 // likewise
		"_____",                               // likewise
		"*",                                   // a GLOB / FTS wildcard
		"a*e",
		"[a-z]",
		"ab?cd",
		id,                             // ids are not searched
		"1",                            // nor any digit
		"invited", "active", "revoked", // nor statuses
		"extension", "Search Me", // nor the extension
		"Lovelacf", "lovelacea", // one letter past the end
		"zyzzyvaz",
		"ДмитрийИванов",
		"山田 太郎",
	} {
		for _, status := range bbsStatuses {
			t.Run(fmt.Sprintf("q=%s/status=%s", q, status), func(t *testing.T) {
				s.check(t, q, status, 100)
			})
		}
	}
}

// TestBlackBoxSearchSpacesAroundAreIgnored: white space typed before or
// after a query (or pasted with it) does not change what it finds, and an
// all-blank query is no query. White space inside a query is part of it.
func TestBlackBoxSearchSpacesAroundAreIgnored(t *testing.T) {
	t.Parallel()
	s := bbsNewSite(t)
	for _, c := range []struct{ q, same string }{
		{" ada", "ada"},
		{"ada ", "ada"},
		{"   ada   ", "ada"},
		{"\tada\n", "ada"},
		{" Ada Lovelace ", "Ada Lovelace"},
		{" é", "é"},
		{"田 ", "田"},
		{" x ", "x"},
		{" @ ", "@"},
		{" ", ""},
		{"   ", ""},
		{"\t", ""},
	} {
		for _, status := range []string{"", betaport.TesterActive} {
			t.Run(fmt.Sprintf("q=%q/status=%s", c.q, status), func(t *testing.T) {
				got := s.check(t, c.q, status, 100)
				same := bbsSearchAll(t, s.env, s.admin, s.ext.ID, c.same, status, 100)
				if diff := bbsDiff(got, same); diff != "" {
					t.Errorf("q=%q finds other testers than q=%q:\n%s", c.q, c.same, diff)
				}
			})
		}
	}
	t.Run("q= (empty)", func(t *testing.T) {
		for _, raw := range []string{"q=&limit=100", "q&limit=100", "limit=100&q=%20"} {
			resp, body := s.do(t, http.MethodGet, api.TestersPath(s.ext.ID)+"?"+raw, s.admin)
			page := bbsPage(t, raw, resp, body)
			if diff := bbsDiff(page.Data, s.base("")); diff != "" {
				t.Errorf("?%s is not the plain list:\n%s", raw, diff)
			}
		}
	})
}

// TestBlackBoxSearchSyntaxIsText: quotes, LIKE wildcards, backslashes and
// the operators of FTS5 and SQL are text to look for. A query a tester's
// name contains finds them (O'Brien must be findable); one nobody's does
// finds nobody, or is refused with a clear 400; never a 500, never a
// database message, and the data is still there afterwards.
func TestBlackBoxSearchSyntaxIsText(t *testing.T) {
	t.Parallel()
	s := bbsNewSite(t)
	queries := []string{
		`"`, `'`, `%`, `_`, `\`, `*`, `^`, `:`, `(`, `)`, `--`, `;`, `-`, `+`, `?`, `$`, `|`, `{`, `}`, `[`, `]`, `/`, `!`, `.`, `,`, `=`, `~`, "`", `@`, `#`, `&`,
		`""`, `''`, `%%`, `__`, `\\`, `**`, `\%`, `\_`, `\'`, `\"`, `%_`, `_%`,
		`O'Brien`, `o'brien "bob"`, `"Bob"`, `"bob" \ sl`, `\ Slash`, `Half%`, `% Pure_`, `Pure_Fun`, `_Fun`,
		`Star*`, `*Power`, `r*P`, `^Caret`, `(Paren)`, `(Paren):`, `): Colon`, `Semi;Colon`, `;Colon --`, `-- Dash`,
		`AND`, `OR`, `NOT`, `NEAR`, `and`, `or`, `not`, `near`, `AND OR`, `OR NOT NEAR`, `NOT NEAR Spike`,
		`NEAR(ada grace)`, `NEAR(ada grace, 5)`, `ada NEAR grace`, `ada AND grace`, `ada OR grace`, `NOT ada`, `ada NOT grace`, `ada + grace`,
		`email:ada`, `name:Ada`, `{email name}:ada`, `- ada`, `-ada`, `ada*`, `^ada`, `"ada"`, `"ada" OR "grace"`, `(ada)`, `ada:`, `:ada`,
		`' OR '1'='1`, `' OR 1=1 --`, `'; DROP TABLE testers; --`, `"; DROP TABLE testers; --`, `ada'); DELETE FROM testers; --`,
		`%' OR email LIKE '%`, `ada' ESCAPE '!`, `ada\' OR 1=1 --`, `" OR "" = "`, `1; SELECT pg_sleep(5)`, `$1`, `$$`, `E'\\x41'`,
		`/* */`, `ada/*`, `*/`, `::text`, `ada::text`, `'a' || 'da'`, `\x00`, `\u0000`, `%00`, `ada\`, `\ada`, `ada%`, `%ada`, `_ada`, `ada_`,
		`'`, `''''`, `'"'"`, `\'\'`, `&ada`, `ada & grace`, `ada | grace`, `!ada`, `ada:*`, `<->`, `ada <-> grace`, `<ada>`, `~ada`,
	}
	for _, q := range queries {
		for _, status := range []string{"", betaport.TesterInvited, betaport.TesterRevoked} {
			t.Run(fmt.Sprintf("q=%s/status=%s", q, status), func(t *testing.T) {
				want := s.want(q, status)
				label := fmt.Sprintf("q=%q status=%q", q, status)
				resp, body := s.do(t, http.MethodGet, api.TestersPath(s.ext.ID)+"?"+bbsQuery(q, status, 100, ""), s.admin)
				if resp.StatusCode == http.StatusBadRequest && len(want) == 0 {
					bbsProblem(t, label, resp, body, "q")
					return
				}
				if resp.StatusCode != http.StatusOK && len(want) > 0 {
					t.Errorf("%s = %d, want 200 with %s; %.400s", label, resp.StatusCode, bbsNames(want), body)
					return
				}
				page := bbsPage(t, label, resp, body)
				if page.NextCursor != "" {
					t.Errorf("%s: a nextCursor on a page of 100 with %d testers in all", label, len(s.testers))
				}
				if diff := bbsDiff(page.Data, want); diff != "" {
					t.Errorf("%s is not the reference:\n%s", label, diff)
				}
			})
		}
	}
	// Still all there, still searchable.
	s.checkPlainLists(t)
	s.check(t, "ada", "", 100)
}

// TestBlackBoxSearchHostileBytes: bytes no browser should send, sent
// anyway: invalid UTF-8, NUL, broken escapes, very long queries, q twice.
// Never a 500 or a database message; a 400 problem about q, or an answer
// that is the reference (empty, or for the query with the bad bytes left
// out).
func TestBlackBoxSearchHostileBytes(t *testing.T) {
	t.Parallel()
	s := bbsNewSite(t)
	long := func(unit string, size int) string { return strings.Repeat(unit, size/len(unit)) }
	escaped := func(q string) string { return url.QueryEscape(q) }
	cases := []struct {
		name, rawQ string // rawQ is the query string's q, as sent
		strict     bool   // a 200 must be exactly the reference of the decoded q (or of it with bad bytes dropped)
		answer     bool   // a 400 is wrong: a person could type or paste this
	}{
		{"lone 0xFF", "%FF", true, false},
		{"0xFF 0xFE", "%FF%FE", true, false},
		{"ada then 0xFF", "ada%FF", true, false},
		{"0xFF then ada", "%FFada", true, false},
		{"bad continuation", "%C3%28", true, false},
		{"truncated é", "%C3", true, false},
		{"truncated emoji", "%F0%9F%A6", true, false},
		{"surrogate half", "%ED%A0%80", true, false},
		{"overlong slash", "%C0%AF", true, false},
		{"beyond U+10FFFF", "%F4%90%80%80", true, false},
		{"Latin-1 é", "%E9", true, false},
		{"Latin-1 Élodie", "%C9lodie", true, false},
		{"NUL", "%00", true, false},
		{"NUL inside", "ad%00a", true, false},
		{"NUL after", "ada%00", true, false},
		{"NUL before", "%00ada", true, false},
		{"NUL and quote", "%00%27%22%25", true, false},
		{"NUL and wildcard", "%25%00%25", true, false},
		{"10 KB of a", escaped(long("a", 10<<10)), true, false},
		{"10 KB of é", escaped(long("é", 10<<10)), true, false},
		{"10 KB of 🦄", escaped(long("🦄", 10<<10)), true, false},
		{"10 KB of a name", escaped(long("Ada Lovelace ", 10<<10)), true, false},
		{"10 KB of syntax", escaped(long(`ada' OR 1=1 -- %_\*"^:() NEAR AND NOT ; `, 10<<10)), true, false},
		{"10 KB of wildcards", escaped(long("%_", 10<<10)), true, false},
		{"64 KB of a", escaped(long("a", 64<<10)), true, false},
		{"broken escape %", "%", false, false},
		{"broken escape %z", "%zz", false, false},
		{"broken escape at the end", "ada%2", false, false},
		{"q twice", "ada&q=grace", false, false},
		{"q empty and q", "&q=ada", false, false},
		{"raw plus", "ada+lovelace", true, true}, // "+" is a space in a query string
		{"NFD é", escaped("e\u0301lodie"), false, false},
		{"capital sharp s", escaped("STRAẞE"), false, false},
		{"zero width space", escaped("\u200bada"), false, false},
		{"no-break spaces", escaped("\u00a0ada\u00a0"), false, false},
		{"BOM", escaped("\ufeffada"), false, false},
		{"right-to-left mark", escaped("\u202eada"), false, false},
		{"replacement character", escaped("\ufffd"), true, false},
		{"control characters", escaped("\x01\x02\x1b[31mada"), true, false},
		// At the limit the server states ("longer than 200 characters" is
		// refused): 200 characters are not too long, whatever their bytes.
		{"200 × a", escaped(strings.Repeat("a", 200)), true, true},
		{"200 × é", escaped(strings.Repeat("é", 200)), true, true},
		// Long but plausible pastes: 100 characters, however many bytes.
		{"100 × é", escaped(strings.Repeat("é", 100)), true, true},
		{"100 × 🦄", escaped(strings.Repeat("🦄", 100)), true, true},
		{"100 × 山", escaped(strings.Repeat("山", 100)), true, true},
		{"a 100-character e-mail", escaped("x" + strings.Repeat("ab", 40) + "@analytical.example"), true, true},
	}
	for _, c := range cases {
		for _, status := range []string{"", betaport.TesterActive} {
			t.Run(c.name+"/status="+status, func(t *testing.T) {
				raw := "limit=100&q=" + c.rawQ
				if status != "" {
					raw += "&status=" + status
				}
				label := fmt.Sprintf("%s (q=%.60s…, %d bytes)", c.name, c.rawQ, len(c.rawQ))
				start := time.Now()
				resp, body := s.do(t, http.MethodGet, api.TestersPath(s.ext.ID)+"?"+raw, s.admin)
				if d := time.Since(start); d > 20*time.Second {
					t.Errorf("%s took %s", label, d)
				}
				switch resp.StatusCode {
				case http.StatusBadRequest:
					bbsProblem(t, label, resp, body, "q")
					if c.answer {
						t.Errorf("%s: refused (%d characters): %s", label, utf8.RuneCountInString(func() string { d, _ := url.QueryUnescape(c.rawQ); return d }()), body)
					}
					t.Logf("%s: refused: %s", label, body)
					return
				case http.StatusOK:
				default:
					bbsNoLeak(t, label, body)
					t.Fatalf("%s = %d, want 200 or a 400 problem; %.400s", label, resp.StatusCode, body)
				}
				page := bbsPage(t, label, resp, body)
				if page.NextCursor != "" {
					t.Errorf("%s: a nextCursor on a page of 100 with %d testers in all", label, len(s.testers))
				}
				if c.strict {
					decoded, _ := url.QueryUnescape(c.rawQ)
					cleaned := strings.ToValidUTF8(strings.ReplaceAll(decoded, "\x00", ""), "")
					if bbsDiff(page.Data, s.want(decoded, status)) != "" && bbsDiff(page.Data, s.want(cleaned, status)) != "" {
						t.Errorf("%s: 200 with %s; want the reference of %q (%s) or, with the bad bytes left out, of %q (%s)",
							label, bbsNames(page.Data), decoded, bbsNames(s.want(decoded, status)), cleaned, bbsNames(s.want(cleaned, status)))
					}
					return
				}
				// Lenient: some of the extension's testers, as they are.
				for _, tt := range page.Data {
					mine, ok := s.testers[tt.ID]
					if !ok || mine.Email != tt.Email || mine.Name != tt.Name || mine.Status != tt.Status || (status != "" && tt.Status != status) {
						t.Errorf("%s: answered a tester the extension does not have as such: %+v", label, tt)
					}
				}
			})
		}
	}
	s.checkPlainLists(t)
}

// TestBlackBoxSearchPaging: paging through a search with small pages and
// cursors gives the same testers, in the same order, as one big page,
// without duplicates or gaps, for every status; nextCursor is absent on
// the last page.
func TestBlackBoxSearchPaging(t *testing.T) {
	t.Parallel()
	s := bbsNewSite(t)
	// More testers that match "pager", so pages of 1 to 7 take a while.
	for i := range 23 {
		inv, _ := s.invite(t, s.ext.ID, s.admin, fmt.Sprintf("pager.%c%c@book.example", 'a'+i%26, 'a'+i/26), fmt.Sprintf("Pager %c Pérez", 'A'+i), false)
		switch i % 3 {
		case 1:
			s.activate(t, inv.ID)
		case 2:
			s.revoke(t, inv.ID)
		}
	}
	s.checkPlainLists(t)
	// From here on the testers only are read: the subtests run in
	// parallel.
	for _, q := range []string{"pager", "PÉREZ", "e", "a", "example", "@", "é", "ad", "lovelace"} {
		for _, status := range bbsStatuses {
			for _, limit := range []int{1, 2, 3, 7, 100} {
				t.Run(fmt.Sprintf("q=%s/status=%s/limit=%d", q, status, limit), func(t *testing.T) {
					t.Parallel()
					s.check(t, q, status, limit)
				})
			}
		}
	}

	// A page fills up exactly: the next page holds the rest, or none, and
	// the last never carries a cursor (checked by bbsSearchAll).
	n := len(s.want("pager", ""))
	for _, limit := range []int{n, n - 1, n + 1} {
		t.Run(fmt.Sprintf("exactly/limit=%d", limit), func(t *testing.T) {
			t.Parallel()
			s.check(t, "pager", "", limit)
		})
	}

	t.Run("cursor of another search", func(t *testing.T) {
		t.Parallel()
		// A cursor carried over to another q or status (a clumsy client)
		// is refused, or continues the other search after the same tester.
		resp, body := s.do(t, http.MethodGet, api.TestersPath(s.ext.ID)+"?"+bbsQuery("pager", "", 4, ""), s.admin)
		page := bbsPage(t, "first page of pager", resp, body)
		if page.NextCursor == "" || len(page.Data) != 4 {
			t.Fatalf("first page of pager: %d testers, cursor %q", len(page.Data), page.NextCursor)
		}
		after := page.Data[len(page.Data)-1].ID
		for _, other := range []struct{ q, status string }{{"e", ""}, {"example", betaport.TesterInvited}, {"", ""}, {"lovelace", ""}} {
			qs := bbsQuery(other.q, other.status, 100, page.NextCursor)
			resp, body := s.do(t, http.MethodGet, api.TestersPath(s.ext.ID)+"?"+qs, s.admin)
			if resp.StatusCode == http.StatusBadRequest {
				bbsProblem(t, qs, resp, body, "cursor")
				continue
			}
			got := bbsPage(t, qs, resp, body)
			var want []betaport.Tester
			for _, tt := range s.want(other.q, other.status) {
				if tt.ID < after {
					want = append(want, tt)
				}
			}
			if diff := bbsDiff(got.Data, want); diff != "" {
				t.Errorf("%s: want the testers of that search after tester %d, or a 400:\n%s", qs, after, diff)
			}
		}
	})

	t.Run("bad parameters with q", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct{ raw, param string }{
			{"q=ada&limit=0", "limit"},
			{"q=ada&limit=-1", "limit"},
			{"q=ada&limit=101", "limit"},
			{"q=ada&limit=x", "limit"},
			{"q=ada&limit=1e2", "limit"},
			{"q=ada&status=gone", "status"},
			{"q=ada&status=%27%20OR%201%3D1", "status"},
			{"q=ada&cursor=abc", "cursor"},
			{"q=ada&cursor=%00", "cursor"},
			{"q=ada&cursor=1.AAAAAAAAAAAAAAAA", "cursor"},
			{"q=%27%3B--&cursor=%27%3B--", "cursor"},
		} {
			resp, body := s.do(t, http.MethodGet, api.TestersPath(s.ext.ID)+"?"+c.raw, s.admin)
			if resp.StatusCode != http.StatusBadRequest {
				bbsNoLeak(t, c.raw, body)
				t.Errorf("%s = %d, want 400; %.300s", c.raw, resp.StatusCode, body)
				continue
			}
			bbsProblem(t, c.raw, resp, body, c.param)
		}
	})
}

// TestBlackBoxSearchFollowsChanges: the search index follows every change
// at once: a tester invited after a search is found by it, opening the
// link moves them from invited to active, revoking from active (or
// invited) to revoked, and a browser revalidating a search page with its
// old ETag gets the new answer, not a 304.
func TestBlackBoxSearchFollowsChanges(t *testing.T) {
	t.Parallel()
	s := bbsNewSite(t)
	queries := []string{"newcomer", "NINA", "ñ", "ÑÚÑ", "úñ", "later.example", "nina.n", "a"}
	checkAll := func(t *testing.T, when string) {
		t.Helper()
		for _, q := range queries {
			for _, status := range bbsStatuses {
				t.Run(when+"/q="+q+"/status="+status, func(t *testing.T) { s.check(t, q, status, 100) })
			}
		}
	}
	// What a browser last got for each search: its ETag and its rows.
	type seenPage struct{ etag, rows string }
	rows := func(l []betaport.Tester) string {
		var b strings.Builder
		for _, tt := range l {
			fmt.Fprintf(&b, "%d:%s:%s ", tt.ID, tt.Status, tt.Name)
		}
		return b.String()
	}
	seen := map[string]seenPage{}
	revalidate := func(t *testing.T, when string) {
		t.Helper()
		for _, q := range queries {
			for _, status := range bbsStatuses {
				path := api.TestersPath(s.ext.ID) + "?" + bbsQuery(q, status, 100, "")
				key := q + "|" + status
				if old := seen[key]; old.etag != "" {
					resp, body := s.do(t, http.MethodGet, path, http.Header{"Cookie": s.admin["Cookie"], "If-None-Match": {old.etag}})
					now := rows(s.want(q, status))
					if resp.StatusCode == http.StatusNotModified && now != old.rows {
						t.Errorf("%s: q=%q status=%q revalidated with the ETag from before answers 304: the browser keeps %q, the answer is now %q",
							when, q, status, old.rows, now)
					}
					if resp.StatusCode != http.StatusNotModified {
						bbsPage(t, path, resp, body)
					}
				}
				resp, body := s.do(t, http.MethodGet, path, s.admin)
				page := bbsPage(t, path, resp, body)
				seen[key] = seenPage{resp.Header.Get("ETag"), rows(page.Data)}
			}
		}
	}

	checkAll(t, "before")
	revalidate(t, "before")

	inv, _ := s.invite(t, s.ext.ID, s.admin, "nina.newcomer@later.example", "Nina Ñúñez Newcomer", false)
	if len(s.want("newcomer", betaport.TesterInvited)) != 1 {
		t.Fatalf("the test's reference does not find the newcomer")
	}
	checkAll(t, "invited")
	revalidate(t, "invited")

	s.activate(t, inv.ID)
	checkAll(t, "active")
	revalidate(t, "active")

	s.revoke(t, inv.ID)
	checkAll(t, "revoked")
	revalidate(t, "revoked")

	// An invited tester who never opened the link, revoked.
	other, _ := s.invite(t, s.ext.ID, s.admin, "nino.newcomer@later.example", "Niño Newcomer", false)
	checkAll(t, "second invited")
	s.revoke(t, other.ID)
	checkAll(t, "second revoked")

	// The fixture's active, invited and revoked testers after all that.
	for _, q := range []string{"ada", "hopper", "é", "山田", "🦄"} {
		for _, status := range bbsStatuses {
			t.Run("fixture/q="+q+"/status="+status, func(t *testing.T) { s.check(t, q, status, 2) })
		}
	}
}

// TestBlackBoxSearchManyTesters: searches give the same answers before
// and after thousands of testers are added (in bulk, as the seed and the
// benchmarks add them), and on the big list every search, short or long,
// is the reference computed from the whole plain list.
func TestBlackBoxSearchManyTesters(t *testing.T) {
	t.Parallel()
	s := bbsNewSite(t)
	snapshot := map[string][]betaport.Tester{}
	marked := []string{"zyzzyva", "ZYZZ", "quixotic z", "lovelace", "ada.lovelace@", "山田", "🦄", "Straße", "иван", "O'Brien", "Half%", "Pure_Fun"}
	for _, q := range marked {
		snapshot[q] = s.check(t, q, "", 100)
	}

	const many = 4000
	start := time.Now()
	if err := demo.LoadTesters(context.Background(), s.DB, s.ext.ID, many); err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %d testers in %s on %s", many, time.Since(start).Round(time.Millisecond), s.Backend)
	// One more through the API, after the bulk load.
	s.invite(t, s.ext.ID, s.admin, "zyzzyva.late@marker.example", "Late Zyzzyva", false)

	// The reference: the plain list, every status, in its order.
	plain := map[string][]betaport.Tester{}
	for _, status := range bbsStatuses {
		plain[status] = bbsSearchAll(t, s.env, s.admin, s.ext.ID, "", status, 100)
	}
	if n := len(plain[betaport.TesterInvited]) + len(plain[betaport.TesterActive]) + len(plain[betaport.TesterRevoked]); n != many+len(s.testers) {
		t.Fatalf("the plain lists hold %d testers, want %d", n, many+len(s.testers))
	}
	for _, status := range bbsStatuses[1:] {
		// Each status's list is the whole list's, in the same order.
		var want []betaport.Tester
		for _, tt := range plain[""] {
			if tt.Status == status {
				want = append(want, tt)
			}
		}
		if s.allHasRevoked || status != betaport.TesterRevoked {
			if diff := bbsDiff(plain[status], want); diff != "" {
				t.Errorf("the plain list with status=%s is not the plain list's %s testers:\n%s", status, status, diff)
			}
		}
	}

	check := func(t *testing.T, q, status string, limit int) []betaport.Tester {
		t.Helper()
		got := bbsSearchAll(t, s.env, s.admin, s.ext.ID, q, status, limit)
		if diff := bbsDiff(got, bbsFilter(plain[status], q)); diff != "" {
			t.Errorf("q=%q status=%q limit=%d on %d testers is not the reference:\n%s", q, status, limit, len(plain[""]), diff)
		}
		return got
	}

	// From here on the testers only are read: the searches run in
	// parallel, each its own subtest.
	t.Run("same as before", func(t *testing.T) {
		t.Parallel()
		for _, q := range marked {
			got := check(t, q, "", 100)
			before := snapshot[q]
			if q == "zyzzyva" || q == "ZYZZ" {
				// The late one is new; the rest is as before.
				got = slices.DeleteFunc(got, func(tt betaport.Tester) bool { return tt.Email == "zyzzyva.late@marker.example" })
			}
			if len(got) < len(before) {
				t.Errorf("q=%q found %s before the load and %s after", q, bbsNames(before), bbsNames(got))
			}
			for _, b := range before {
				if !slices.ContainsFunc(got, func(tt betaport.Tester) bool { return tt.ID == b.ID }) {
					t.Errorf("q=%q found %q <%s> before the load, not after", q, b.Name, b.Email)
				}
			}
			if q == "zyzzyva" && bbsDiff(got, before) != "" {
				t.Errorf("q=zyzzyva: %s before, %s after (less the late one)", bbsNames(before), bbsNames(got))
			}
		}
	})

	// Queries taken from the loaded testers themselves: the start, middle
	// and end of names and e-mails, in other cases, short and long.
	queries := []string{"a", "e", "É", "an", "ma", "MA", "son", "ez", "example", "@", ".", "-", "'", "%", "_", "xyz", "qq", "zz", " son ", "ada", "山", "🦄"}
	loaded := plain[""]
	for i := 0; i < len(loaded); i += len(loaded)/12 + 1 {
		tt := loaded[i]
		name, email := []rune(tt.Name), tt.Email
		if len(name) >= 6 {
			queries = append(queries, string(name[:3]), strings.ToUpper(string(name[len(name)/2-1:len(name)/2+2])), string(name[len(name)-3:]),
				strings.ToLower(tt.Name), string(name[1:2]), string(name[2:4]))
		}
		if at := strings.IndexByte(email, '@'); at > 2 {
			queries = append(queries, email[:at], strings.ToUpper(email[1:min(at+3, len(email))]), email[at:], email, email[at-2:at+1])
		}
	}
	seen := map[string]bool{}
	for _, q := range queries {
		if seen[q] || !utf8.ValidString(q) {
			continue
		}
		seen[q] = true
		statuses := []string{""}
		if len(bbsFilter(plain[""], q)) < 300 {
			statuses = bbsStatuses
		}
		for _, status := range statuses {
			t.Run(fmt.Sprintf("q=%s/status=%s", q, status), func(t *testing.T) {
				t.Parallel()
				check(t, q, status, 100)
			})
		}
	}
	for _, q := range []string{"son", "ma", "zyzzyva"} {
		for _, limit := range []int{3, 17} {
			t.Run(fmt.Sprintf("paged/q=%s/limit=%d", q, limit), func(t *testing.T) {
				t.Parallel()
				check(t, q, betaport.TesterActive, limit)
			})
		}
	}
}

// TestBlackBoxSearchOtherExtensions: a search shows only the extension's
// own testers, even when another extension (of the same team or another)
// has testers with the same e-mail and name; a change to one never shows
// in the other; the other team's admin learns nothing.
func TestBlackBoxSearchOtherExtensions(t *testing.T) {
	t.Parallel()
	s := bbsNewSite(t)
	sibling := storetest.MustExtension(t, s.DB, s.team, "Sibling")
	otherTeam := storetest.MustTeam(t, s.DB, betaport.PlanProfessional)
	stranger := storetest.MustExtension(t, s.DB, otherTeam, "Stranger")
	otherAdmin := s.adminOf(t, otherTeam)

	copies := map[int64][]betaport.Tester{} // extension → its copies of the testers
	for _, c := range []struct {
		ext   int64
		admin http.Header
	}{{sibling.ID, s.admin}, {stranger.ID, otherAdmin}} {
		for _, p := range bbsPeople {
			inv, ok := s.invite(t, c.ext, c.admin, p.email, p.name, p.optional)
			if ok {
				copies[c.ext] = append(copies[c.ext], inv.Tester)
			}
		}
	}
	// Revoke Ada in the sibling and open nobody's link there: her status
	// in the extension under test must not change.
	var siblingAda betaport.Tester
	for _, tt := range copies[sibling.ID] {
		if tt.Name == "Ada Lovelace" {
			siblingAda = tt
		}
	}
	if resp, body := s.do(t, http.MethodDelete, api.TesterPath(sibling.ID, siblingAda.ID), s.admin); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoking Ada in the sibling: %d %s", resp.StatusCode, body)
	}
	// Revoking another team's tester through the path of the extension
	// under test is no way in either, and changes nothing there.
	strangerAda := copies[stranger.ID][0]
	if resp, body := s.do(t, http.MethodDelete, api.TesterPath(s.ext.ID, strangerAda.ID), s.admin); resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Errorf("revoking the stranger's tester through this extension's path = %d, want a 4xx; %s", resp.StatusCode, body)
	}
	if got := bbsSearchAll(t, s.env, otherAdmin, stranger.ID, strangerAda.Email, betaport.TesterRevoked, 100); len(got) != 0 {
		t.Errorf("the stranger's %s is revoked after a DELETE through another extension's path", strangerAda.Email)
	}

	// From here on the testers only are read: the subtests run in
	// parallel.
	for _, q := range []string{"ada", "ada.lovelace@analytical.example", "@", "example", "a", "é", "山田", "🦄", "O'Brien", "%", "grace"} {
		for _, status := range bbsStatuses {
			t.Run(fmt.Sprintf("q=%s/status=%s", q, status), func(t *testing.T) {
				t.Parallel()
				s.check(t, q, status, 3) // every tester of s.ext, nobody else's (bbsSearchAll checks extensionId)
				// The sibling's list: its own copies, Ada revoked there.
				got := bbsSearchAll(t, s.env, s.admin, sibling.ID, q, status, 100)
				for _, tt := range got {
					if _, ours := s.testers[tt.ID]; ours {
						t.Errorf("the sibling's search shows %q <%s> of the extension under test", tt.Name, tt.Email)
					}
				}
				wantSibling := len(bbsFilter(copies[sibling.ID], q))
				switch status {
				case betaport.TesterRevoked:
					if len(bbsFilter([]betaport.Tester{siblingAda}, q)) == 1 && !slices.ContainsFunc(got, func(tt betaport.Tester) bool { return tt.ID == siblingAda.ID }) {
						t.Errorf("the sibling's revoked Ada is not found by q=%q status=revoked", q)
					}
				case betaport.TesterActive:
					if len(got) != 0 {
						t.Errorf("nobody opened a link in the sibling, yet q=%q status=active finds %s there", q, bbsNames(got))
					}
				case betaport.TesterInvited:
					if slices.ContainsFunc(got, func(tt betaport.Tester) bool { return tt.ID == siblingAda.ID }) {
						t.Errorf("the sibling's revoked Ada is still found by q=%q status=invited", q)
					}
				case "":
					if s.allHasRevoked && len(got) != wantSibling {
						t.Errorf("the sibling's q=%q finds %d testers, want %d: %s", q, len(got), wantSibling, bbsNames(got))
					}
				}
			})
		}
	}

	t.Run("the other team's admin", func(t *testing.T) {
		t.Parallel()
		for _, raw := range []string{"q=ada", "q=%40", "q=a&status=active", "q=%27", "q=%00", "q=ada&limit=1"} {
			resp, body := s.do(t, http.MethodGet, api.TestersPath(s.ext.ID)+"?"+raw, otherAdmin)
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("the other team's admin searching ?%s = %d, want 404 as for the plain list; %.300s", raw, resp.StatusCode, body)
			}
			for id := range s.testers {
				if strings.Contains(string(body), fmt.Sprintf(`"id":%d,`, id)) {
					t.Errorf("the other team's admin searching ?%s sees tester %d", raw, id)
				}
			}
		}
		// Their own extension: only their own copies.
		got := bbsSearchAll(t, s.env, otherAdmin, stranger.ID, "ada", "", 100)
		if len(got) == 0 {
			t.Errorf("the other team's admin finds nobody named Ada in their own extension")
		}
		for _, tt := range got {
			if tt.ExtensionID != stranger.ID {
				t.Errorf("the other team's search shows %q of extension %d", tt.Email, tt.ExtensionID)
			}
		}
	})
}

// TestBlackBoxSearchEmptyResult: a search that finds nobody answers an
// empty list (not null), without a cursor, and a fresh extension's search
// too.
func TestBlackBoxSearchEmptyResult(t *testing.T) {
	t.Parallel()
	s := bbsNewSite(t)
	empty := storetest.MustExtension(t, s.DB, s.team, "Empty")
	for _, c := range []struct {
		ext int64
		raw string
	}{
		{s.ext.ID, "q=nobody-matches-this"},
		{s.ext.ID, "q=zyzzyva&status=invited"},
		{s.ext.ID, "q=%27%22%25_&limit=1"},
		{empty.ID, "q=ada"},
		{empty.ID, "q=a"},
		{empty.ID, ""},
	} {
		resp, body := s.do(t, http.MethodGet, api.TestersPath(c.ext)+"?"+c.raw, s.admin)
		page := bbsPage(t, c.raw, resp, body)
		var shape map[string]json.RawMessage
		json.Unmarshal(body, &shape)
		if len(page.Data) != 0 || page.NextCursor != "" || strings.TrimSpace(string(shape["data"])) != "[]" {
			t.Errorf("?%s in extension %d answered %s, want {\"data\":[]}", c.raw, c.ext, body)
		}
	}
}
