package postgres_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/postgres"
	"github.com/betaport/betaport/server/storetest"
	"github.com/betaport/betaport/server/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// MustOpenDB opens a store on a new database of the test cluster.
func MustOpenDB(tb testing.TB) *postgres.DB {
	tb.Helper()
	db, err := postgres.Open(context.Background(), testenv.PostgresURL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) betaport.Store { return MustOpenDB(t) })
	storetest.RunSQL(t, func(t *testing.T) (betaport.Store, *sql.DB) {
		url := testenv.PostgresURL(t)
		s, err := postgres.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		db, err := sql.Open("pgx", url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return s, db
	})
	// Two replicas' stores on one database.
	storetest.RunReplicas(t, func(t *testing.T) (betaport.Store, betaport.Store) {
		url := testenv.PostgresURL(t)
		var stores [2]betaport.Store
		for i := range stores {
			s, err := postgres.Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			stores[i] = s
		}
		return stores[0], stores[1]
	})
}

// Replicas sharing one database lease each webhook delivery attempt to one
// of them: racing workers on two stores never both claim one.
func TestReplicasClaimDeliveriesOnce(t *testing.T) {
	url := testenv.PostgresURL(t)
	var stores []betaport.Store
	for range 2 {
		s, err := postgres.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	storetest.RunClaimRace(t, stores)
}

// Replicas starting at once on one empty database migrate it once: the
// migrations are serialised by an advisory lock, not run twice.
func TestReplicasMigrateOnce(t *testing.T) {
	ctx := context.Background()
	url := testenv.PostgresURL(t)
	const n = 4
	var wg sync.WaitGroup
	dbs := make([]*postgres.DB, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dbs[i], errs[i] = postgres.Open(ctx, url)
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("replica %d: %v", i, errs[i])
		}
		defer dbs[i].Close()
	}
	team := storetest.MustTeam(t, dbs[0], "starter")
	if got, err := dbs[n-1].FindTeam(ctx, team.ID); err != nil || got.Name != team.Name {
		t.Fatalf("another replica's FindTeam = %+v, %v", got, err)
	}
}

func TestOpenRefusesOtherURLs(t *testing.T) {
	for _, bad := range []string{"sqlite:///tmp/x.db", "postgres://h/db?pool_max_conns=0", "::"} {
		if _, err := postgres.Open(context.Background(), bad); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
}
