package demo_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/demo"
	"github.com/betaport/betaport/server/sqlite"
	"github.com/betaport/betaport/server/storetest"
)

func openStore(t *testing.T) *sqlite.DB {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "demo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The bulk load gives every tester a distinct e-mail and a real name,
// oldest first, and a mix of statuses; the testers are found by search
// right after it.
func TestLoadTesters(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	team := storetest.MustTeam(t, s, betaport.PlanProfessional)
	e := storetest.MustExtension(t, s, team, "E")
	const n = 12_345 // enough to tidy the indexes after
	if err := demo.LoadTesters(ctx, s, e.ID, n); err != nil {
		t.Fatal(err)
	}
	list, err := s.FindTesters(ctx, betaport.TesterFilter{ExtensionID: e.ID, Limit: n + 1})
	if err != nil || len(list) != n {
		t.Fatalf("FindTesters = %d testers, %v; want %d", len(list), err, n)
	}
	emails, names, statuses := map[string]bool{}, map[string]bool{}, map[string]int{}
	for i, tt := range list {
		emails[tt.Email], names[tt.Name] = true, true
		statuses[tt.Status]++
		if len(strings.Fields(tt.Name)) < 2 || !strings.HasSuffix(tt.Email, "@example.com") {
			t.Fatalf("tester %+v has no real name or e-mail", tt)
		}
		if i > 0 && !tt.CreatedAt.Before(list[i-1].CreatedAt) {
			t.Fatalf("tester %d was created at %v, not before the next one (%v)", tt.ID, tt.CreatedAt, list[i-1].CreatedAt)
		}
	}
	if len(emails) != n || len(names) < 1000 {
		t.Errorf("%d distinct e-mails and %d names among %d testers", len(emails), len(names), n)
	}
	if statuses[betaport.TesterActive] == 0 || statuses[betaport.TesterInvited] == 0 || statuses[betaport.TesterRevoked] == 0 {
		t.Errorf("statuses: %v", statuses)
	}
	found, err := s.FindTesters(ctx, betaport.TesterFilter{ExtensionID: e.ID, Query: ".12345@", Limit: 10})
	if err != nil || len(found) != 1 || found[0].ID != list[0].ID {
		t.Errorf("the newest tester by search: %v, %v", found, err)
	}
}

// The small demo loads into an empty store.
func TestLoadSmall(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	blobs := memblob.OpenBucket(nil)
	defer blobs.Close()
	r, err := demo.Load(ctx, s, blobs, demo.Small)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := storetest.CountTesters(ctx, s, r.Extensions[0].ID); err != nil || n != 61 {
		t.Fatalf("the first extension has %d testers, %v; want 61", n, err)
	}
	grace, err := s.FindTesters(ctx, betaport.TesterFilter{ExtensionID: r.Extensions[0].ID, Query: "grace", Limit: 100})
	if err != nil || len(grace) == 0 || len(grace) >= 61 {
		t.Fatalf("grace finds %d testers, %v", len(grace), err)
	}
}
