package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
)

// adoptionHour is a fixed hour the adoption tests count in.
var adoptionHour = time.Date(2026, 11, 26, 13, 0, 0, 0, time.UTC)

// adoptionRows reads every count of an extension since since, paged by
// size, as "hour version checks" lines.
func adoptionRows(t *testing.T, s betaport.Store, extensionID int64, since time.Time, size int) []string {
	t.Helper()
	var out []string
	f := betaport.AdoptionFilter{ExtensionID: extensionID, Since: since, Limit: size}
	for range 1000 {
		page, err := s.FindAdoption(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page {
			out = append(out, fmt.Sprintf("%s %s %d", c.Hour.Format("02T15"), c.Version, c.Checks))
		}
		if len(page) < size {
			return out
		}
		last := page[len(page)-1]
		f.After = &betaport.AdoptionPosition{Hour: last.Hour, Version: last.Version}
	}
	t.Fatal("the adoption pages never ended")
	return nil
}

func testAdoption(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	other := MustExtension(t, s, team, "Other")
	h0, h1, h2 := adoptionHour.Add(-2*time.Hour), adoptionHour.Add(-time.Hour), adoptionHour
	add := func(counts ...betaport.AdoptionCount) {
		t.Helper()
		if err := s.AddAdoption(ctx, counts); err != nil {
			t.Fatal(err)
		}
	}
	if got := adoptionRows(t, s, e.ID, h0, 10); len(got) != 0 {
		t.Fatalf("before any check: %q, want nothing", got)
	}
	add() // nothing to add is fine
	add(
		betaport.AdoptionCount{ExtensionID: e.ID, Hour: h1, Version: "1.10.0", Checks: 2},
		betaport.AdoptionCount{ExtensionID: e.ID, Hour: h1, Version: "1.9.0", Checks: 1},
		betaport.AdoptionCount{ExtensionID: e.ID, Hour: h0, Version: "1.9.0", Checks: 7},
		betaport.AdoptionCount{ExtensionID: e.ID, Hour: h2, Version: betaport.OtherVersion, Checks: 1},
		betaport.AdoptionCount{ExtensionID: other.ID, Hour: h2, Version: "9.9.9", Checks: 5},
	)
	// A later flush adds to the rows it shares with earlier ones.
	add(
		betaport.AdoptionCount{ExtensionID: e.ID, Hour: h1, Version: "1.10.0", Checks: 3},
		betaport.AdoptionCount{ExtensionID: e.ID, Hour: h2, Version: "1.10.0", Checks: 4},
	)
	// Newest hour first, then versions byte by byte ("1.10.0" before
	// "1.9.0", digits before "other"), whatever the database's locale.
	want := []string{"26T13 1.10.0 4", "26T13 other 1", "26T12 1.10.0 5", "26T12 1.9.0 1", "26T11 1.9.0 7"}
	for _, size := range []int{1, 2, 3, 5, 100} {
		if got := adoptionRows(t, s, e.ID, h0, size); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("pages of %d: %q, want %q", size, got, want)
		}
	}
	// Since leaves older hours out.
	if got := adoptionRows(t, s, e.ID, h1, 100); fmt.Sprint(got) != fmt.Sprint(want[:4]) {
		t.Fatalf("since %s: %q, want %q", h1, got, want[:4])
	}
	if got := adoptionRows(t, s, other.ID, h0, 100); fmt.Sprint(got) != "[26T13 9.9.9 5]" {
		t.Fatalf("the other extension: %q", got)
	}
	// Hours read back are UTC instants equal to what was written.
	page, err := s.FindAdoption(ctx, betaport.AdoptionFilter{ExtensionID: e.ID, Since: h0, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !page[0].Hour.Equal(h2) || page[0].Hour.Location() != time.UTC || page[0].ExtensionID != e.ID {
		t.Fatalf("first row = %+v, want hour %s UTC", page[0], h2)
	}
}

// RunReplicas runs the tests of stores that share one database, as
// replicas do: open returns two stores over one new, empty database.
func RunReplicas(t *testing.T, open func(t *testing.T) (a, b betaport.Store)) {
	t.Run("AdoptionConcurrentReplicas", func(t *testing.T) {
		t.Parallel()
		a, b := open(t)
		testAdoptionConcurrent(t, a, b)
	})
}

// testAdoptionConcurrent adds counts to the same rows from two stores at
// once, in batches listing the rows in opposite orders: every check is
// counted once, and neither replica's flush fails (no lost update, no
// deadlock, no unique violation on a row the other made first).
func testAdoptionConcurrent(t *testing.T, a, b betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, a, betaport.PlanProfessional)
	e := MustExtension(t, a, team, "E")
	versions := []string{"1.0.0", "1.1.0", "1.2.0", betaport.OtherVersion}
	batch := func(reverse bool) []betaport.AdoptionCount {
		var counts []betaport.AdoptionCount
		for h := range 3 {
			for _, v := range versions {
				counts = append(counts, betaport.AdoptionCount{ExtensionID: e.ID, Hour: adoptionHour.Add(time.Duration(h) * time.Hour), Version: v, Checks: 1})
			}
		}
		if reverse {
			for i, j := 0, len(counts)-1; i < j; i, j = i+1, j-1 {
				counts[i], counts[j] = counts[j], counts[i]
			}
		}
		return counts
	}
	const rounds = 20
	var wg sync.WaitGroup
	errs := make(chan error, 2*rounds)
	for i, s := range []betaport.Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				if err := s.AddAdoption(ctx, batch(i == 1)); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := adoptionRows(t, a, e.ID, adoptionHour, 100)
	if len(got) != 3*len(versions) {
		t.Fatalf("rows: %q, want %d", got, 3*len(versions))
	}
	for _, row := range got {
		var hour, version string
		var checks int
		fmt.Sscan(row, &hour, &version, &checks)
		if checks != 2*rounds {
			t.Fatalf("row %q: %d checks, want %d (each replica added %d)", row, checks, 2*rounds, rounds)
		}
	}
}
