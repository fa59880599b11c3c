package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/sqlite"
	"github.com/betaport/betaport/server/storetest"
)

// MustOpenDB opens a store on a new SQLite file in a temp dir.
func MustOpenDB(tb testing.TB) *sqlite.DB {
	tb.Helper()
	db, _ := mustOpenFile(tb)
	return db
}

// mustOpenFile opens a store on a new SQLite file and returns its path.
func mustOpenFile(tb testing.TB) (*sqlite.DB, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "betaport.db")
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db, path
}

// mustOpenSQL opens a store on a new SQLite file, and the file a second
// time as a plain database, as another program would.
func mustOpenSQL(t *testing.T) (betaport.Store, *sql.DB) {
	t.Helper()
	s, path := mustOpenFile(t)
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return s, db
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) betaport.Store { return MustOpenDB(t) })
	storetest.RunSQL(t, mustOpenSQL)
	// Two processes on one file (serve and a command) share it as replicas
	// share PostgreSQL.
	storetest.RunReplicas(t, func(t *testing.T) (betaport.Store, betaport.Store) {
		a, path := mustOpenFile(t)
		b, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return a, b
	})
}

// Workers racing on one SQLite store (one replica, several claimers) never
// both claim one delivery attempt either.
func TestClaimDeliveriesOnce(t *testing.T) {
	s := MustOpenDB(t)
	storetest.RunClaimRace(t, []betaport.Store{s, s})
}

// The FTS5 index the triggers keep stays sound through inserts, renames
// and deletes, one at a time and many at once: FTS5's own integrity check
// finds nothing wrong.
func TestSearchIndexIntegrity(t *testing.T) {
	ctx := context.Background()
	s, db := mustOpenSQL(t)
	team := storetest.MustTeam(t, s, "professional")
	e := storetest.MustExtension(t, s, team, "E")
	ts := make([]*betaport.Tester, 5000)
	for i := range ts {
		ts[i] = &betaport.Tester{ExtensionID: e.ID, Email: fmt.Sprintf("t%d@example.com", i), Name: fmt.Sprintf("Tester %d", i)}
	}
	if err := s.CreateTesters(ctx, ts); err != nil {
		t.Fatal(err)
	}
	if err := s.InviteTester(ctx, &betaport.Tester{ExtensionID: e.ID, Email: "one@example.com", Name: "One"}, storetest.Link("one"), "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE testers SET name = 'Renamed ' || id WHERE id % 7 = 0`,
		`UPDATE testers SET email = 'x' || email WHERE id % 11 = 0`,
		`UPDATE testers SET status = 'active', last_seen_at = 1 WHERE id % 3 = 0`,
		`DELETE FROM testers WHERE id % 13 = 0`,
		`INSERT INTO testers_search (testers_search, rank) VALUES ('integrity-check', 0)`,
		`INSERT INTO testers_search (testers_search) VALUES ('optimize')`,
		`INSERT INTO testers_search (testers_search, rank) VALUES ('integrity-check', 0)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	list, err := s.FindTesters(ctx, betaport.TesterFilter{ExtensionID: e.ID, Query: "renamed 4998", Limit: 10})
	if err != nil || len(list) != 1 || list[0].ID != 4998 {
		t.Fatalf("renamed 4998 finds %v, %v", list, err)
	}
}

// FuzzTesterSearch: a search for any text is never an error, and an ASCII
// one finds exactly what reading the testers finds (beyond ASCII, FTS5's
// case folding and Go's may differ on rare letters).
func FuzzTesterSearch(f *testing.F) {
	ctx := context.Background()
	s := MustOpenDB(f)
	team := storetest.MustTeam(f, s, "professional")
	e := storetest.MustExtension(f, s, team, "E")
	var all []*betaport.Tester
	for i, name := range []string{"Ada Lovelace", `Nina "Q" O'Neil`, `Perc\y 100%_Sure`, "Nor (OR) AND* ^Not: NEAR", "Élodie Ångström", "Иван Петров"} {
		tt := &betaport.Tester{ExtensionID: e.ID, Email: fmt.Sprintf("t%d.%s@example.com", i, strings.ToLower(strings.Fields(name)[0])), Name: name}
		if err := s.InviteTester(ctx, tt, storetest.Link(fmt.Sprint(i)), "admin@example.com"); err != nil {
			f.Fatal(err)
		}
		all = append(all, tt)
	}
	for _, q := range []string{"", "a", "ada", `"`, `""`, `"q"`, "%", "_", `\`, "100%_", "(or)", "and*", "^not:", "NEAR", "ÉLO", "иван", "\x00", "\xff"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		list, err := s.FindTesters(ctx, betaport.TesterFilter{ExtensionID: e.ID, Query: q, Limit: 10})
		if err != nil {
			t.Fatalf("search for %q: %v", q, err)
		}
		if !isASCII(q) {
			return
		}
		var want []int64
		for i := len(all) - 1; i >= 0; i-- {
			if storetest.Matches(all[i], q) {
				want = append(want, all[i].ID)
			}
		}
		var got []int64
		for _, tt := range list {
			got = append(got, tt.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("search for %q finds %v, want %v", q, got, want)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Reopening a file runs no migration twice and keeps the data.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "betaport.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	team := storetest.MustTeam(t, db, "starter")
	db.Close()

	db, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	if got, err := db.FindTeam(ctx, team.ID); err != nil || got.Name != team.Name {
		t.Fatalf("after reopen FindTeam = %+v, %v", got, err)
	}
}
