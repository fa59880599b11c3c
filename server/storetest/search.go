package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/betaport/betaport/app/betaport"
)

// searchTesters are the testers the search tests look through, oldest
// first: substrings to find in the middle of e-mails and names, letters
// beyond ASCII in both cases, and the characters LIKE and FTS5 give a
// meaning to.
var searchTesters = []struct{ name, email string }{
	{"Ada Lovelace", "ada.lovelace@analytical.example"},
	{"Grace Hopper", "grace@navy.example"},
	{"Élodie Durand", "elodie.durand@exemple.fr"},
	{"Zoë Ångström", "zoe@chem.example"},
	{"Иван Петров", "ivan.petrov@mail.example"},
	{`Nina "Q" O'Neil`, "nina.oneil+qa@example.com"},
	{`Percy 100%_Sure \o/`, "percy@example.com"},
	{"Nor (OR) AND* ^Not: NEAR", "nor@example.com"},
	{"Søren Kierkegaard", "SOREN@Example.com"},
}

// hostileQueries are searches that must find what they say, never a
// syntax error: the quotes, wildcards and escapes of SQL, LIKE and FTS5
// queries, FTS5's operators, and text no tester can hold.
var hostileQueries = []string{
	`"`, `""`, `"""`, `'`, `''`, `'''`, `%`, `%%`, `_`, `__`, `\`, `\\`, `\%`, `%_\`, `50%`, `0%_`, `\o/`, `e \o`,
	`*`, `^`, `:`, `(`, `)`, `()`, `{}`, `-`, `+`, `?`, `$1`, `@`, `.`, `..`, `...`,
	`AND`, `OR`, `NOT`, `NEAR`, `a OR b`, `"a" AND "b"`, `NEAR(a b)`, `name:ada`, `{email}:ada`, `email:`, `-ada`, `+ada`, `ada*`, `^ada`, `"ada"`, `"ada`,
	`'; DROP TABLE testers; --`, `" OR 1=1 --`, `%' OR '1'='1`,
	" ", "   ", "\t", "a\x00b", "\x00", "\xff\xfe", "ada\xff", "🙂", "e\u0301", "ΣΟΦΊΑ",
	strings.Repeat("x", 200), strings.Repeat(`"`, 100),
}

// Search finds a query anywhere in e-mails and names, whatever the case
// of its letters or theirs and whatever characters it holds, with the
// status filter and cursors as without a query: the same on every backend.
func testTesterSearchIndex(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e, other := MustExtension(t, s, team, "E"), MustExtension(t, s, team, "Other")
	var all []*betaport.Tester
	for i, st := range searchTesters {
		tt := &betaport.Tester{ExtensionID: e.ID, Email: st.email, Name: st.name}
		if err := s.InviteTester(ctx, tt, Link(fmt.Sprintf("search-%d", i)), "admin@example.com"); err != nil {
			t.Fatal(err)
		}
		all = append(all, tt)
	}
	// The same people testing another extension: never in E's results.
	for i, st := range searchTesters {
		if err := s.InviteTester(ctx, &betaport.Tester{ExtensionID: other.ID, Email: st.email, Name: st.name}, Link(fmt.Sprintf("other-%d", i)), "admin@example.com"); err != nil {
			t.Fatal(err)
		}
	}
	mustUseInvite(t, s, "search-1")                     // Grace
	mustUseInvite(t, s, "search-8")                     // Søren
	s.RevokeTester(ctx, all[0].ID, "admin@example.com") // Ada

	for _, tt := range []struct {
		f    betaport.TesterFilter
		want string
	}{
		{betaport.TesterFilter{Query: "lovelace"}, "Ada"},   // in the middle of the e-mail and the name
		{betaport.TesterFilter{Query: "VELA"}, "Ada"},       // whatever the query's case
		{betaport.TesterFilter{Query: "ace@ana"}, "Ada"},    // across the e-mail's punctuation
		{betaport.TesterFilter{Query: "RACE hop"}, "Grace"}, // across the name's space, in mixed case
		{betaport.TesterFilter{Query: "soren@"}, "Søren"},   // e-mails are kept lowercased
		{betaport.TesterFilter{Query: "élodie"}, "Élodie"},  // a capital beyond ASCII, searched in lower case
		{betaport.TesterFilter{Query: "ÉLODIE"}, "Élodie"},  // and in upper case
		{betaport.TesterFilter{Query: "é"}, "Élodie"},       // a short query too
		{betaport.TesterFilter{Query: "Ö"}, "Zoë"},          // and the other way round
		{betaport.TesterFilter{Query: "ångSTRÖM"}, "Zoë"},
		{betaport.TesterFilter{Query: "иван"}, "Иван"}, // Cyrillic
		{betaport.TesterFilter{Query: "ПЕТ"}, "Иван"},
		{betaport.TesterFilter{Query: "Ø"}, "Søren"},
		{betaport.TesterFilter{Query: "ex"}, "Søren,Nor,Percy,Nina,Иван,Zoë,Élodie,Grace,Ada"}, // 1–2 characters
		{betaport.TesterFilter{Query: "OR"}, "Søren,Nor"},
		{betaport.TesterFilter{Query: "y"}, "Percy,Grace,Ada"},
		{betaport.TesterFilter{Query: `"Q"`}, "Nina"}, // FTS5's and SQL's quotes
		{betaport.TesterFilter{Query: `O'N`}, "Nina"},
		{betaport.TesterFilter{Query: "+qa"}, "Nina"},
		{betaport.TesterFilter{Query: `%`}, "Percy"}, // LIKE's wildcards and escape
		{betaport.TesterFilter{Query: `_`}, "Percy"},
		{betaport.TesterFilter{Query: `\`}, "Percy"},
		{betaport.TesterFilter{Query: `0%_s`}, "Percy"},
		{betaport.TesterFilter{Query: `e \o`}, "Percy"},
		{betaport.TesterFilter{Query: "(or) and*"}, "Nor"}, // FTS5's operators
		{betaport.TesterFilter{Query: "^not: near"}, "Nor"},
		{betaport.TesterFilter{Query: "NOT"}, "Nor"},
		{betaport.TesterFilter{Query: "xyz"}, ""},
		{betaport.TesterFilter{Query: "example", Status: betaport.TesterActive}, "Søren,Grace"}, // with a status
		{betaport.TesterFilter{Query: "ex", Status: betaport.TesterRevoked}, "Ada"},
		{betaport.TesterFilter{Query: "example", Status: betaport.TesterInvited}, "Nor,Percy,Nina,Иван,Zoë"},
		{betaport.TesterFilter{Query: "example", BeforeID: all[6].ID, Limit: 2}, "Nina,Иван"}, // after a cursor
		{betaport.TesterFilter{Query: "e", BeforeID: all[3].ID, Limit: 2}, "Élodie,Grace"},
	} {
		if got := searchNames(t, s, e.ID, tt.f); got != tt.want {
			t.Errorf("FindTesters(%+v) = %s, want %s", tt.f, got, tt.want)
		}
	}

	// Every query finds what a plain reading of the testers finds, and is
	// paged alike by its cursors, whatever characters it holds.
	queries := append([]string{"", "e", "ex", "exa", "example", ".example", "a", "an", "ana", "é"}, hostileQueries...)
	for _, q := range queries {
		for _, status := range []string{"", betaport.TesterInvited} {
			var want []string
			for i := len(all) - 1; i >= 0; i-- {
				if (status == "" || statusOf(t, s, all[i].ID) == status) && Matches(all[i], q) {
					want = append(want, all[i].Email)
				}
			}
			if got := pagedEmails(t, s, betaport.TesterFilter{ExtensionID: e.ID, Query: q, Status: status}, 2); !equal(got, want) {
				t.Errorf("pages of the search for %q (status %q) = %q, want %q", q, status, got, want)
			}
		}
	}
}

// A tester saved, renamed, updated or deleted is found (or not) by the
// next search: the search index is kept in step with the testers, through
// bulk inserts and their rollback too.
func testTesterSearchFollowsChanges(t *testing.T, s betaport.Store, db *sql.DB) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	find := func(q string) string {
		t.Helper()
		return searchNames(t, s, e.ID, betaport.TesterFilter{Query: q})
	}
	exec := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ada := &betaport.Tester{ExtensionID: e.ID, Email: "ada@analytical.example", Name: "Ada Lovelace"}
	grace := &betaport.Tester{ExtensionID: e.ID, Email: "grace@navy.example", Name: "Grace Hopper"}
	alan := &betaport.Tester{ExtensionID: e.ID, Email: "alan@bletchley.example", Name: "Alan Turing"}
	if err := s.CreateTesters(ctx, []*betaport.Tester{ada, grace, alan}); err != nil {
		t.Fatal(err)
	}
	if got := find("lovelace"); got != "Ada" {
		t.Fatalf("before any change, lovelace finds %s", got)
	}

	// A batch that fails leaves nothing in the index either.
	err := s.CreateTesters(ctx, []*betaport.Tester{
		{ExtensionID: e.ID, Email: "linus@kernel.example", Name: "Linus Torvalds"},
		{ExtensionID: e.ID, Email: "ADA@analytical.example", Name: "Ada Again"},
	})
	wantCode(t, err, betaport.ECONFLICT)
	if got := find("torvalds"); got != "" {
		t.Errorf("a tester of a batch rolled back is found: %s", got)
	}

	// Signing in and revoking change no e-mail or name.
	if _, err := s.ResendInvite(ctx, grace.ID, Link("grace"), "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	mustUseInvite(t, s, "grace")
	s.RevokeTester(ctx, alan.ID, "admin@example.com")
	if got := find("hopper"); got != "Grace" {
		t.Errorf("after sign-in, hopper finds %q", got)
	}
	if got := searchNames(t, s, e.ID, betaport.TesterFilter{Query: "turing", Status: betaport.TesterRevoked}); got != "Alan" {
		t.Errorf("after revoking, turing among the revoked finds %q", got)
	}

	// Renamed: found by the new name and e-mail, not by the old ones.
	exec(fmt.Sprintf(`UPDATE testers SET name = 'Ada King', email = 'ada.king@analytical.example' WHERE id = %d`, ada.ID))
	for q, want := range map[string]string{"lovelace": "", "king": "Ada", "ada.king@": "Ada", "analytical": "Ada"} {
		if got := find(q); got != want {
			t.Errorf("after the rename, %s finds %q, want %q", q, got, want)
		}
	}
	// Several renamed in one statement.
	exec(fmt.Sprintf(`UPDATE testers SET name = name || ' Jr' WHERE extension_id = %d`, e.ID))
	if got := find(" jr"); got != "Alan,Grace,Ada" {
		t.Errorf("after renaming them all, ' jr' finds %q", got)
	}
	// Deleted: gone from the results, the others still there.
	exec(fmt.Sprintf(`DELETE FROM testers WHERE id = %d`, grace.ID))
	for q, want := range map[string]string{"hopper": "", "grace": "", "navy": "", "turing": "Alan", "king": "Ada", "jr": "Alan,Ada"} {
		if got := find(q); got != want {
			t.Errorf("after the delete, %s finds %q, want %q", q, got, want)
		}
	}

	// A big batch: several INSERTs, ids in the order given, every tester
	// found, and the next invite after them.
	batch := make([]*betaport.Tester, 9001)
	for i := range batch {
		batch[i] = &betaport.Tester{ExtensionID: e.ID, Email: fmt.Sprintf("bulk.%05d@example.com", i), Name: fmt.Sprintf("Bulk %d", i)}
	}
	if err := s.CreateTesters(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(batch); i++ {
		if batch[i].ID <= batch[i-1].ID {
			t.Fatalf("tester %d of the batch has id %d, after %d", i, batch[i].ID, batch[i-1].ID)
		}
	}
	for _, i := range []int{0, 3999, 4000, 9000} {
		q := fmt.Sprintf("bulk.%05d@", i)
		list, err := s.FindTesters(ctx, betaport.TesterFilter{ExtensionID: e.ID, Query: q, Limit: 10})
		if err != nil || len(list) != 1 || list[0].ID != batch[i].ID {
			t.Errorf("%s finds %v, %v; want tester %d", q, list, err, batch[i].ID)
		}
	}
	late := &betaport.Tester{ExtensionID: e.ID, Email: "late@example.com", Name: "Late Bulk"}
	if err := s.InviteTester(ctx, late, Link("late"), "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	if late.ID <= batch[len(batch)-1].ID {
		t.Errorf("an invite after the batch has id %d, not after %d", late.ID, batch[len(batch)-1].ID)
	}
	if got := pagedEmails(t, s, betaport.TesterFilter{ExtensionID: e.ID, Query: "bulk"}, 1000); len(got) != len(batch)+1 || got[0] != "late@example.com" || got[len(got)-1] != "bulk.00000@example.com" {
		t.Errorf("the pages of bulk hold %d testers, from %q to %q", len(got), got[0], got[len(got)-1])
	}
}

// Matches is what a search for q finds: q in the tester's e-mail or name,
// whatever the case of the letters of either. Text that is not UTF-8, or
// holds a NUL, is in no tester.
func Matches(t *betaport.Tester, q string) bool {
	if !utf8.ValidString(q) || strings.ContainsRune(q, 0) {
		return false
	}
	q = foldCase(q)
	return strings.Contains(foldCase(t.Email), q) || strings.Contains(foldCase(t.Name), q)
}

// foldCase maps every letter to one of its cases, the same for all of
// them: the smallest rune of its orbit under unicode.SimpleFold.
func foldCase(s string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for c := unicode.SimpleFold(r); c != r; c = unicode.SimpleFold(c) {
			least = min(least, c)
		}
		return least
	}, s)
}

// searchNames is the first word of the names of the testers a filter on
// extension finds (10 at most unless f says), in order.
func searchNames(t *testing.T, s betaport.Store, extension int64, f betaport.TesterFilter) string {
	t.Helper()
	f.ExtensionID = extension
	if f.Limit == 0 {
		f.Limit = 10
	}
	list, err := s.FindTesters(context.Background(), f)
	if err != nil {
		t.Fatalf("FindTesters(%+v): %v", f, err)
	}
	var out []string
	for _, tt := range list {
		out = append(out, strings.Fields(tt.Name)[0])
	}
	return strings.Join(out, ",")
}

// pagedEmails reads every page of f, size testers at a time, following the
// cursor as the HTTP list does, and returns the e-mails in order.
func pagedEmails(t *testing.T, s betaport.Store, f betaport.TesterFilter, size int) []string {
	t.Helper()
	var out []string
	for f.Limit = size + 1; ; {
		list, err := s.FindTesters(context.Background(), f)
		if err != nil {
			t.Fatalf("FindTesters(%+v): %v", f, err)
		}
		for i, tt := range list {
			if i < size {
				out = append(out, tt.Email)
			}
		}
		if len(list) <= size {
			return out
		}
		f.BeforeID = list[size-1].ID
	}
}

func statusOf(t *testing.T, s betaport.Store, id int64) string {
	t.Helper()
	tt, err := s.FindTester(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return tt.Status
}

func equal(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n") && len(a) == len(b)
}
