package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
)

// Release notes given with an upload reach the bundle it publishes, and
// every way bundles are read returns them.
func testReleaseNotes(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	notes := "Fixes the popup.\n\n- one\n- <b>two</b>\n\n[docs](https://example.com) é ✓ " + strings.Repeat("x", 9000)
	u := &betaport.Upload{ExtensionID: e.ID, ExpiresAt: betaport.Now().Add(time.Hour), ReleaseNotes: notes}
	if err := s.CreateUpload(ctx, u); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.LatestUpload(ctx, e.ID); got.ReleaseNotes != notes {
		t.Fatalf("the upload's notes came back as %d bytes, want the %d given", len(got.ReleaseNotes), len(notes))
	}
	s.ReceiveUpload(ctx, u.ID, 100, fmt.Sprintf("%064x", 1))
	b := newBundle(e.ID, 1)
	b.ReleaseNotes = u.ReleaseNotes
	if _, _, err := s.PublishUpload(ctx, u.ID, b); err != nil {
		t.Fatal(err)
	}
	found, _ := s.FindBundle(ctx, e.ID, 1)
	page, _ := s.FindBundles(ctx, e.ID, 1, 10)
	builds, _ := s.FindBuilds(ctx, []int64{e.ID}, "", 0, 10)
	for _, got := range []*betaport.Bundle{found, page[0], builds[0]} {
		if got.ReleaseNotes != notes || got.RollbackOf != 0 {
			t.Fatalf("bundle read back with notes %.40q… (%d bytes), rollbackOf %d", got.ReleaseNotes, len(got.ReleaseNotes), got.RollbackOf)
		}
	}
}

func rollbackOf(b *betaport.Bundle, number int64) *betaport.Bundle {
	r := *b
	r.ID, r.Number, r.Current, r.CreatedAt = 0, number, false, time.Time{}
	r.RollbackOf = b.Number
	r.Version = fmt.Sprintf("9.0.%d", number)
	return &r
}

// A rollback is published once however many race for it, with its audit
// event; racing publishes from uploads leave numbers without gaps or
// reuse and exactly one current bundle.
func testRollbackOnce(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	for i := 1; i <= 2; i++ {
		if err := s.PublishBundle(ctx, newBundle(e.ID, i)); err != nil {
			t.Fatal(err)
		}
	}
	first, _ := s.FindBundle(ctx, e.ID, 1)

	// Rolling back to the current bundle is a conflict, and publishes nothing.
	current, _ := s.FindBundle(ctx, e.ID, 2)
	if _, _, err := s.PublishRollback(ctx, rollbackOf(current, 3), "admin@example.com"); betaport.ErrorCode(err) != betaport.ECONFLICT {
		t.Fatalf("rollback to the current bundle: %v, want a conflict", err)
	}
	// Built for a number another bundle took: a conflict.
	if _, _, err := s.PublishRollback(ctx, rollbackOf(first, 2), "admin@example.com"); betaport.ErrorCode(err) != betaport.ECONFLICT {
		t.Fatalf("rollback built for a taken number: %v, want a conflict", err)
	}

	const n = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	fresh, conflicts := 0, 0
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, published, err := s.PublishRollback(ctx, rollbackOf(first, 3), "admin@example.com")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case betaport.ErrorCode(err) == betaport.ECONFLICT:
				conflicts++ // lost the number to... nothing else here
			case err != nil:
				t.Errorf("PublishRollback: %v", err)
			case b.Number != 3 || b.RollbackOf != 1 || !b.Current:
				t.Errorf("PublishRollback answered %+v, want bundle 3, the current rollback of 1", b)
			case published:
				fresh++
			}
		}()
	}
	wg.Wait()
	if fresh != 1 || conflicts != 0 {
		t.Fatalf("%d of %d racing rollbacks published (and %d conflicted), want exactly 1 and the others answered it", fresh, n, conflicts)
	}
	got, _ := s.FindBundle(ctx, e.ID, 3)
	if got.BlobKey != first.BlobKey || got.SHA256 != first.SHA256 || got.RollbackOf != 1 || !got.Current {
		t.Fatalf("rollback bundle = %+v, want bundle 1's zip, current", got)
	}
	events, _ := s.FindAuditEvents(ctx, e.ID, 0, 10)
	rollbacks := 0
	for _, ev := range events {
		if ev.Action == betaport.AuditBundleRollback {
			rollbacks++
			if ev.Actor != "admin@example.com" || !strings.Contains(ev.Subject, "#1") {
				t.Errorf("audit event %+v", ev)
			}
		}
	}
	if rollbacks != 1 {
		t.Fatalf("%d rollback audit events, want 1", rollbacks)
	}

	// Rollbacks and publishes racing, each built for the number it read:
	// the losers conflict, numbers stay 1..N without reuse, one is current.
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			last, _ := s.LastBundleNumber(ctx, e.ID)
			b := newBundle(e.ID, 100+i)
			b.Number = last + 1
			errs <- s.PublishBundle(ctx, b)
		}()
		go func() {
			defer wg.Done()
			last, _ := s.LastBundleNumber(ctx, e.ID)
			_, _, err := s.PublishRollback(ctx, rollbackOf(first, last+1), "admin@example.com")
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil && betaport.ErrorCode(err) != betaport.ECONFLICT {
			t.Fatal(err)
		}
	}
	last, _ := s.LastBundleNumber(ctx, e.ID)
	all, _ := s.FindBundles(ctx, e.ID, last, 1000)
	if int64(len(all)) != last {
		t.Fatalf("%d bundles numbered up to %d: a number was skipped or reused", len(all), last)
	}
	currents := 0
	for i, b := range all {
		if b.Number != last-int64(i) {
			t.Fatalf("bundle numbers %d at %d", b.Number, i)
		}
		if b.Current {
			currents++
		}
	}
	if currents != 1 {
		t.Fatalf("%d current bundles, want 1", currents)
	}
}
