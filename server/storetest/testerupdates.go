package storetest

import (
	"context"
	"strconv"
	"strings"
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
	if err := s.InviteTester(ctx, ada, Link("invite-ada"), "admin@example.com"); err != nil {
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
	if err := s.InviteTester(ctx, bob, Link("invite-bob"), "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	if err := s.RecordTesterChecks(ctx, []betaport.TesterCheck{{ExtensionID: e.ID, TesterID: ada.ID, Version: "1.0.1", At: at}, {ExtensionID: e.ID, TesterID: bob.ID, Version: "1.0.0", At: at}}); err != nil {
		t.Fatal(err)
	}
	// An older check (another replica's late flush) changes nothing.
	if err := s.RecordTesterChecks(ctx, []betaport.TesterCheck{{ExtensionID: e.ID, TesterID: ada.ID, Version: "0.9", At: at.Add(-time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordTesterChecks(ctx, []betaport.TesterCheck{{ExtensionID: e.ID, TesterID: bob.ID, Version: "1.0.1", At: at.Add(time.Minute)}}); err != nil {
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
		if err := s.InviteTester(ctx, tt, Link("invite-"+tt.Name), "admin@example.com"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordTesterChecks(ctx, []betaport.TesterCheck{{ExtensionID: e.ID, TesterID: dee.ID, Version: "1.0.0", At: at}}); err != nil {
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
	if _, err := s.RestoreTester(ctx, ada.ID, Link("invite-ada-2"), "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	if sealed, _ := s.TesterUpdateToken(ctx, ada.ID); sealed != kept {
		t.Fatalf("after a restore the token is %q, want %q", sealed, kept)
	}
	if _, err := s.ResendInvite(ctx, ada.ID, Link("invite-ada-3"), "admin@example.com"); err != nil {
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

// testTesterAdoption: the testers revision moves with every change the
// testers list shows, and only the changed extension's; adoption by
// testers counts each tester once a day, under the version of their copy's
// last check that day, whichever replica's flush comes first.
func testTesterAdoption(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e, other := MustExtension(t, s, team, "E"), MustExtension(t, s, team, "Other")
	rev := func(id int64) int64 {
		t.Helper()
		r, err := s.Revision(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return r.Testers
	}
	moves := func(what string, change func()) {
		t.Helper()
		before := rev(e.ID)
		change()
		if after := rev(e.ID); after <= before {
			t.Errorf("%s: testers revision %d → %d, want it to grow", what, before, after)
		}
	}
	ada := &betaport.Tester{ExtensionID: e.ID, Email: "ada@example.com", Name: "Ada"}
	bob := &betaport.Tester{ExtensionID: e.ID, Email: "bob@example.com", Name: "Bob"}
	moves("an invite", func() {
		if err := s.InviteTester(ctx, ada, Link("invite-ada"), "admin@example.com"); err != nil {
			t.Fatal(err)
		}
	})
	moves("an import", func() {
		if err := s.CreateTesters(ctx, []*betaport.Tester{bob}); err != nil {
			t.Fatal(err)
		}
	})
	moves("a link opened", func() {
		mustUseInvite(t, s, "invite-ada")
	})
	moves("a revoke", func() {
		if err := s.RevokeTester(ctx, bob.ID, "admin@example.com"); err != nil {
			t.Fatal(err)
		}
	})
	moves("a restore", func() {
		if _, err := s.RestoreTester(ctx, bob.ID, Link("invite-bob-2"), "admin@example.com"); err != nil {
			t.Fatal(err)
		}
	})
	moves("a new link", func() {
		if _, err := s.ResendInvite(ctx, bob.ID, Link("invite-bob-3"), "admin@example.com"); err != nil {
			t.Fatal(err)
		}
	})
	day1 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	day2 := day1.AddDate(0, 0, 1)
	moves("checks written", func() {
		if err := s.RecordTesterChecks(ctx, []betaport.TesterCheck{
			{ExtensionID: e.ID, TesterID: ada.ID, Version: "1.0.0", At: day1.Add(9 * time.Hour)},
			{ExtensionID: e.ID, TesterID: ada.ID, Version: "1.0.1", At: day1.Add(15 * time.Hour)},
			{ExtensionID: e.ID, TesterID: bob.ID, Version: "1.0.0", At: day1.Add(11 * time.Hour)},
			{ExtensionID: e.ID, TesterID: ada.ID, Version: "1.0.1", At: day2.Add(time.Hour)},
		}); err != nil {
			t.Fatal(err)
		}
	})
	// Another replica's flush, late: its check of day 1 is older than the
	// one kept, and changes nothing; bob's later check of day 2 counts.
	if err := s.RecordTesterChecks(ctx, []betaport.TesterCheck{
		{ExtensionID: e.ID, TesterID: ada.ID, Version: "1.0.0", At: day1.Add(12 * time.Hour)},
		{ExtensionID: e.ID, TesterID: bob.ID, Version: "1.0.2", At: day2.Add(2 * time.Hour)},
		// A check naming another extension than the tester's writes no
		// row for either.
		{ExtensionID: other.ID, TesterID: bob.ID, Version: "9.9.9", At: day2.Add(3 * time.Hour)},
	}); err != nil {
		t.Fatal(err)
	}
	list := func(f betaport.AdoptionFilter) string {
		t.Helper()
		f.ByTesters = true
		rows, err := s.FindAdoption(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rows {
			if r.Checks != 0 {
				t.Errorf("a testers row carries checks: %+v", r)
			}
			out = append(out, r.Hour.Format("Jan 2")+" "+r.Version+" "+strconv.FormatInt(r.Testers, 10))
		}
		return strings.Join(out, ", ")
	}
	all := betaport.AdoptionFilter{ExtensionID: e.ID, Since: day1, Limit: 10}
	if got, want := list(all), "Nov 27 1.0.1 1, Nov 27 1.0.2 1, Nov 26 1.0.0 1, Nov 26 1.0.1 1"; got != want {
		t.Errorf("testers by day: %s\nwant %s", got, want)
	}
	if got := list(betaport.AdoptionFilter{ExtensionID: other.ID, Since: day1, Limit: 10}); got != "" {
		t.Errorf("the other extension's testers by day: %s, want none", got)
	}
	if got, want := list(betaport.AdoptionFilter{ExtensionID: e.ID, Since: day2, Limit: 10}), "Nov 27 1.0.1 1, Nov 27 1.0.2 1"; got != want {
		t.Errorf("since day 2: %s, want %s", got, want)
	}
	// Keyset pages: after (day 2, 1.0.2), day 1's rows.
	after := all
	after.After, after.Limit = &betaport.AdoptionPosition{Hour: day2, Version: "1.0.2"}, 1
	if got, want := list(after), "Nov 26 1.0.0 1"; got != want {
		t.Errorf("the page after (Nov 27, 1.0.2): %s, want %s", got, want)
	}
	// The checks count is a list of its own: no testers rows in it.
	if rows, err := s.FindAdoption(ctx, betaport.AdoptionFilter{ExtensionID: e.ID, Since: day1, Limit: 10}); err != nil || len(rows) != 0 {
		t.Errorf("adoption by checks after tester checks only: %d rows, %v", len(rows), err)
	}
}
