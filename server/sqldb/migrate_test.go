package sqldb

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the "sqlite" driver

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The search migration indexes the testers there already are, its down
// migration takes away all it made, and up again makes it anew: on a real
// SQLite file and a real PostgreSQL database.
func TestSearchMigration(t *testing.T) {
	for _, d := range []*Dialect{SQLite, Postgres} {
		t.Run(d.Name, func(t *testing.T) {
			ctx := context.Background()
			s := &DB{db: conn{DB: openRaw(t, d), d: d}, dialect: d, name: d.Name}
			p, err := s.migrations()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.UpTo(ctx, 4); err != nil {
				t.Fatal(err)
			}
			team := &betaport.Team{Name: "T", Plan: betaport.PlanProfessional}
			if err := s.CreateTeam(ctx, team); err != nil {
				t.Fatal(err)
			}
			// Written as the schema of version 4 takes it (the store's own
			// CreateExtension makes the channels of later versions).
			e := &betaport.Extension{TeamID: team.ID, Name: "E"}
			if err := s.db.QueryRowContext(ctx, `INSERT INTO extensions (team_id, name, created_at) VALUES (?, 'E', 1) RETURNING id`,
				team.ID).Scan(&e.ID); err != nil {
				t.Fatal(err)
			}
			// Written as the schema of version 4 takes them: the store's
			// own CreateTesters writes what later versions add.
			if _, err := s.db.ExecContext(ctx, `INSERT INTO testers (extension_id, email, name, status, created_at)
				VALUES (?, 'ada@analytical.example', 'Ada Lovelace', 'invited', 1), (?, 'grace@navy.example', 'Grace Hopper', 'invited', 1)`,
				e.ID, e.ID); err != nil {
				t.Fatal(err)
			}
			search := func(q string) string {
				t.Helper()
				list, err := s.FindTesters(ctx, betaport.TesterFilter{ExtensionID: e.ID, Query: q, Limit: 10})
				if err != nil {
					t.Fatalf("search for %q: %v", q, err)
				}
				var names []string
				for _, tt := range list {
					names = append(names, tt.Name)
				}
				return strings.Join(names, ",")
			}
			for round := range 2 {
				if _, err := p.Up(ctx); err != nil {
					t.Fatalf("round %d: up: %v", round, err)
				}
				if got := search("LOVELACE"); got != "Ada Lovelace" {
					t.Fatalf("round %d: after the migration, a tester from before is found as %q", round, got)
				}
				if got := search("navy"); got != "Grace Hopper" {
					t.Fatalf("round %d: navy finds %q", round, got)
				}
				if _, err := p.DownTo(ctx, 4); err != nil {
					t.Fatalf("round %d: down: %v", round, err)
				}
				if left := searchObjects(t, s); left != 0 {
					t.Fatalf("round %d: the down migration leaves %d of its objects", round, left)
				}
			}
		})
	}
}

// openRaw opens a new, empty database of dialect d, without migrating it.
func openRaw(t *testing.T, d *Dialect) *sql.DB {
	t.Helper()
	var db *sql.DB
	var err error
	switch d {
	case SQLite:
		db, err = sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "m.db")+"?_pragma=foreign_keys(1)")
	case Postgres:
		db, err = sql.Open("pgx", testenv.PostgresURL(t))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// searchObjects counts what migration 00005 creates that is still there.
func searchObjects(t *testing.T, s *DB) int {
	t.Helper()
	q := `SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'testers_search%'`
	if s.dialect == Postgres {
		q = `SELECT COUNT(*) FROM pg_indexes WHERE indexname LIKE 'testers_%_trgm'`
	}
	var n int
	if err := s.db.QueryRowContext(context.Background(), q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// SQLite reads a search page from the FTS5 index in its own order and
// looks each match up by id: no sort of all the matches (which would make
// a common query read every one of them), whatever the filters.
func TestSQLiteSearchPlan(t *testing.T) {
	ctx := context.Background()
	s := &DB{db: conn{DB: openRaw(t, SQLite), d: SQLite}, dialect: SQLite, name: "plan"}
	if err := s.migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, f := range []betaport.TesterFilter{
		{ExtensionID: 1, Query: "example.com", Limit: 21},
		{ExtensionID: 1, Query: "example.com", Status: betaport.TesterActive, BeforeID: 1000, Limit: 21},
	} {
		q, args := s.testersQuery(f)
		rows, err := s.db.QueryContext(ctx, `EXPLAIN QUERY PLAN `+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		got := strings.Join(plan, "; ")
		if len(plan) != 2 || !strings.HasPrefix(plan[0], "SCAN testers_search VIRTUAL TABLE") ||
			!strings.HasPrefix(plan[1], "SEARCH t USING INTEGER PRIMARY KEY") {
			t.Errorf("the plan of %+v is %s", f, got)
		}
	}
}
