package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
)

// testTesterUpdates: a tester's update token is given once (of racing
// gives, the first is kept and every caller reads it), found by its hash
// within its own extension only, kept by a restore and dropped by a new
// link; their checks keep the latest (version, time), an older check
// changing nothing.
func testTesterUpdates(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e, other := MustExtension(t, s, team, "E"), MustExtension(t, s, team, "Other")
	ada := &betaport.Tester{ExtensionID: e.ID, Email: "ada@example.com", Name: "Ada"}
	if err := s.InviteTester(ctx, ada, "invite-ada", "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	if sealed, err := s.TesterUpdateToken(ctx, ada.ID); err != nil || sealed != "" {
		t.Fatalf("before any: %q, %v", sealed, err)
	}
	if _, err := s.TesterUpdateToken(ctx, 987654); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatalf("an unknown tester's token: %v", err)
	}

	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Go(func() {
			sealed, err := s.SetTesterUpdateToken(ctx, ada.ID, "hash-"+string(rune('a'+i)), "sealed-"+string(rune('a'+i)))
			if err != nil {
				t.Error(err)
			}
			got[i] = sealed
		})
	}
	wg.Wait()
	kept := got[0]
	for _, g := range got {
		if g != kept || g == "" {
			t.Fatalf("racing gives answered %q: want one token for all", got)
		}
	}
	hash := "hash-" + kept[len("sealed-"):]
	if found, err := s.FindTesterByUpdateToken(ctx, e.ID, hash); err != nil || found.ID != ada.ID {
		t.Fatalf("by the kept token's hash: %v, %v", found, err)
	}
	if _, err := s.FindTesterByUpdateToken(ctx, other.ID, hash); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatalf("with another extension: %v, want not found", err)
	}
	for _, h := range got {
		if h != kept {
			if _, err := s.FindTesterByUpdateToken(ctx, e.ID, "hash-"+h[len("sealed-"):]); betaport.ErrorCode(err) != betaport.ENOTFOUND {
				t.Fatalf("a losing token's hash finds someone: %v", err)
			}
		}
	}

	// Checks: the latest is kept, in one write for many testers.
	bob := &betaport.Tester{ExtensionID: e.ID, Email: "bob@example.com", Name: "Bob"}
	if err := s.InviteTester(ctx, bob, "invite-bob", "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	if err := s.RecordTesterChecks(ctx, []betaport.TesterCheck{{TesterID: ada.ID, Version: "1.0.1", At: at}, {TesterID: bob.ID, Version: "1.0.0", At: at}}); err != nil {
		t.Fatal(err)
	}
	// An older check (another replica's late flush) changes nothing.
	if err := s.RecordTesterChecks(ctx, []betaport.TesterCheck{{TesterID: ada.ID, Version: "0.9", At: at.Add(-time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordTesterChecks(ctx, []betaport.TesterCheck{{TesterID: bob.ID, Version: "1.0.1", At: at.Add(time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id      int64
		version string
		at      time.Time
	}{{ada.ID, "1.0.1", at}, {bob.ID, "1.0.1", at.Add(time.Minute)}} {
		tt, err := s.FindTester(ctx, c.id)
		if err != nil || tt.InstalledVersion != c.version || tt.LastCheckAt == nil || !tt.LastCheckAt.Equal(c.at) {
			t.Errorf("tester %d: %q at %v (%v), want %q at %v", c.id, tt.InstalledVersion, tt.LastCheckAt, err, c.version, c.at)
		}
	}

	// Counted by what their copies reported: a tester who never checked
	// is not installed, a revoked one is not counted.
	cy := &betaport.Tester{ExtensionID: e.ID, Email: "cy@example.com", Name: "Cy"}
	dee := &betaport.Tester{ExtensionID: e.ID, Email: "dee@example.com", Name: "Dee"}
	for _, tt := range []*betaport.Tester{cy, dee} {
		if err := s.InviteTester(ctx, tt, "invite-"+tt.Name, "admin@example.com"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordTesterChecks(ctx, []betaport.TesterCheck{{TesterID: dee.ID, Version: "1.0.0", At: at}}); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeTester(ctx, dee.ID, "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		current string
		since   time.Time
		want    betaport.Installs
	}{
		{"1.0.1", at.Add(30 * time.Second), betaport.Installs{Testers: 3, OnCurrent: 2, Silent: 1, NotInstalled: 1}},
		{"1.0.0", at, betaport.Installs{Testers: 3, Behind: 2, NotInstalled: 1}},
	} {
		got, err := s.CountInstalls(ctx, e.ID, c.current, c.since)
		if err != nil || got != c.want {
			t.Errorf("CountInstalls(%s, %v) = %+v, %v; want %+v", c.current, c.since, got, err, c.want)
		}
	}
	if got, err := s.CountInstalls(ctx, other.ID, "1.0.1", at); err != nil || got != (betaport.Installs{}) {
		t.Errorf("another extension's installs: %+v, %v", got, err)
	}

	// A restore keeps the token; a new link drops it.
	if err := s.RevokeTester(ctx, ada.ID, "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RestoreTester(ctx, ada.ID, "invite-ada-2", "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	if sealed, _ := s.TesterUpdateToken(ctx, ada.ID); sealed != kept {
		t.Fatalf("after a restore the token is %q, want %q", sealed, kept)
	}
	if _, err := s.ResendInvite(ctx, ada.ID, "invite-ada-3", "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	if sealed, _ := s.TesterUpdateToken(ctx, ada.ID); sealed != "" {
		t.Fatalf("after a new link the token is %q, want none", sealed)
	}
	if _, err := s.FindTesterByUpdateToken(ctx, e.ID, hash); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatalf("the old token after a new link: %v, want not found", err)
	}
	if sealed, err := s.SetTesterUpdateToken(ctx, ada.ID, "hash-new", "sealed-new"); err != nil || sealed != "sealed-new" {
		t.Fatalf("a new token after the new link: %q, %v", sealed, err)
	}
}
