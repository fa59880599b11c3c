package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/betaport/betaport/server/betaport"
	"github.com/betaport/betaport/server/sqlite"
	"github.com/betaport/betaport/server/storetest"
)

// MustOpenDB opens a store on a new SQLite file in a temp dir.
func MustOpenDB(tb testing.TB) *sqlite.DB {
	tb.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "betaport.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) betaport.Store { return MustOpenDB(t) })
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
