// Package storetest is one suite of behaviour every betaport.Store must
// show. Each backend's tests call Run with a function that opens a fresh,
// empty store of that backend.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/server/betaport"
)

// Opener returns a new, empty store; it arranges its own cleanup.
type Opener func(t *testing.T) betaport.Store

// Run runs the suite against the stores open returns.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s betaport.Store)
	}{
		{"Empty", testEmpty},
		{"Teams", testTeams},
		{"Extensions", testExtensions},
		{"PublishBundleNumbers", testPublishBundleNumbers},
		{"PublishBundleConcurrent", testPublishBundleConcurrent},
		{"TestersAllOrNothing", testTestersAllOrNothing},
		{"UploadLifecycle", testUploadLifecycle},
		{"PublishUploadOnce", testPublishUploadOnce},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, open(t))
		})
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := betaport.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

// MustTeam creates a team on the given plan.
func MustTeam(t testing.TB, s betaport.Store, plan string) *betaport.Team {
	t.Helper()
	team := &betaport.Team{Name: "Team " + plan, Plan: plan, Seats: 1}
	if err := s.CreateTeam(context.Background(), team); err != nil {
		t.Fatal(err)
	}
	return team
}

// MustExtension creates an extension of team.
func MustExtension(t testing.TB, s betaport.Store, team *betaport.Team, name string) *betaport.Extension {
	t.Helper()
	e := &betaport.Extension{TeamID: team.ID, Name: name}
	if err := s.CreateExtension(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	return e
}

func testEmpty(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	if empty, err := s.Empty(ctx); err != nil || !empty {
		t.Fatalf("new store: Empty() = %v, %v; want true", empty, err)
	}
	MustTeam(t, s, api.PlanStarter)
	if empty, err := s.Empty(ctx); err != nil || empty {
		t.Fatalf("after a team: Empty() = %v, %v; want false", empty, err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

func testTeams(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	for _, bad := range []betaport.Team{
		{Name: " ", Plan: api.PlanProfessional},
		{Name: "Acme", Plan: "enterprise"},
		{Name: "Acme", Plan: api.PlanStarter, Seats: -1},
	} {
		err := s.CreateTeam(ctx, &bad)
		wantCode(t, err, betaport.EINVALID)
	}
	team := &betaport.Team{Name: "  Acme ", Plan: api.PlanProfessional}
	if err := s.CreateTeam(ctx, team); err != nil {
		t.Fatal(err)
	}
	if team.ID == 0 || team.Name != "Acme" || team.Seats != 1 || team.CreatedAt.IsZero() {
		t.Fatalf("created team = %+v", team)
	}
	got, err := s.FindTeam(ctx, team.ID)
	if err != nil {
		t.Fatal(err)
	}
	if *got != *team {
		t.Fatalf("FindTeam = %+v, want %+v", got, team)
	}
	_, err = s.FindTeam(ctx, team.ID+100)
	wantCode(t, err, betaport.ENOTFOUND)
}

func testExtensions(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	a, b := MustTeam(t, s, api.PlanProfessional), MustTeam(t, s, api.PlanStarter)
	err := s.CreateExtension(ctx, &betaport.Extension{TeamID: b.ID + 100, Name: "Orphan"})
	wantCode(t, err, betaport.ENOTFOUND)
	err = s.CreateExtension(ctx, &betaport.Extension{TeamID: a.ID, Name: ""})
	wantCode(t, err, betaport.EINVALID)

	e1 := MustExtension(t, s, a, "One")
	e2 := MustExtension(t, s, b, "Two")
	e3 := MustExtension(t, s, a, "Three")
	got, err := s.FindExtension(ctx, e2.ID)
	if err != nil || *got != *e2 {
		t.Fatalf("FindExtension = %+v, %v; want %+v", got, err, e2)
	}
	all, err := s.FindExtensions(ctx, betaport.ExtensionFilter{})
	if err != nil || len(all) != 3 {
		t.Fatalf("FindExtensions() = %d, %v; want 3", len(all), err)
	}
	ofA, err := s.FindExtensions(ctx, betaport.ExtensionFilter{TeamID: a.ID})
	if err != nil || len(ofA) != 2 || ofA[0].ID != e1.ID || ofA[1].ID != e3.ID {
		t.Fatalf("FindExtensions(team a) = %v, %v; want [%d %d]", ofA, err, e1.ID, e3.ID)
	}
	_, err = s.FindExtension(ctx, e3.ID+100)
	wantCode(t, err, betaport.ENOTFOUND)
}

func newBundle(extensionID int64, i int) *betaport.Bundle {
	sha := fmt.Sprintf("%064x", i)
	return &betaport.Bundle{
		Bundle: api.Bundle{
			ExtensionID: extensionID, Name: "Ext", Version: fmt.Sprintf("1.0.%d", i),
			ManifestVersion: 3, Size: 100 + int64(i), SHA256: sha, FileCount: 2, Source: "test",
		},
		BlobKey: betaport.BundleKey(extensionID, sha),
	}
}

func testPublishBundleNumbers(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, api.PlanProfessional)
	e, other := MustExtension(t, s, team, "E"), MustExtension(t, s, team, "Other")
	for i := 1; i <= 3; i++ {
		b := newBundle(e.ID, i)
		if err := s.PublishBundle(ctx, b); err != nil {
			t.Fatal(err)
		}
		if b.Number != int64(i) || !b.Current {
			t.Fatalf("bundle %d: number %d current %v", i, b.Number, b.Current)
		}
	}
	// Numbers are per extension.
	ob := newBundle(other.ID, 9)
	if err := s.PublishBundle(ctx, ob); err != nil || ob.Number != 1 {
		t.Fatalf("other extension's first bundle: number %d, %v", ob.Number, err)
	}
	got, err := s.FindExtension(ctx, e.ID)
	if err != nil || got.CurrentBundle != 3 {
		t.Fatalf("current bundle = %d, %v; want 3", got.CurrentBundle, err)
	}
	b2, err := s.FindBundle(ctx, e.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	if b2.Version != "1.0.2" || b2.Current || b2.BlobKey != betaport.BundleKey(e.ID, fmt.Sprintf("%064x", 2)) {
		t.Fatalf("bundle 2 = %+v", b2)
	}
	if b3, _ := s.FindBundle(ctx, e.ID, 3); !b3.Current {
		t.Fatal("bundle 3 is not current")
	}
	_, err = s.FindBundle(ctx, e.ID, 4)
	wantCode(t, err, betaport.ENOTFOUND)
	err = s.PublishBundle(ctx, newBundle(other.ID+100, 1))
	wantCode(t, err, betaport.ENOTFOUND)
	if n, err := s.CountBundles(ctx, e.ID); err != nil || n != 3 {
		t.Fatalf("CountBundles = %d, %v; want 3", n, err)
	}
}

// Concurrent publishes take distinct numbers, 1..n with no gap or reuse.
func testPublishBundleConcurrent(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, api.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	const n = 16
	var wg sync.WaitGroup
	numbers := make(chan int64, n)
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := newBundle(e.ID, i)
			if err := s.PublishBundle(ctx, b); err != nil {
				errs <- err
				return
			}
			numbers <- b.Number
		}()
	}
	wg.Wait()
	close(numbers)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for num := range numbers {
		if seen[num] || num < 1 || num > n {
			t.Fatalf("number %d reused or out of 1..%d", num, n)
		}
		seen[num] = true
	}
	got, _ := s.FindExtension(ctx, e.ID)
	if !seen[got.CurrentBundle] {
		t.Fatalf("current bundle %d is not one that was published", got.CurrentBundle)
	}
}

func testTestersAllOrNothing(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, api.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	ts := []*betaport.Tester{
		{ExtensionID: e.ID, Email: " Ada@Example.com ", Name: "Ada"},
		{ExtensionID: e.ID, Email: "grace@example.com", Name: "Grace"},
	}
	if err := s.CreateTesters(ctx, ts); err != nil {
		t.Fatal(err)
	}
	if ts[0].Email != "ada@example.com" || ts[0].Status != api.TesterInvited || ts[0].ID == 0 {
		t.Fatalf("tester = %+v", ts[0])
	}
	// A duplicate in a batch saves nothing of that batch.
	err := s.CreateTesters(ctx, []*betaport.Tester{
		{ExtensionID: e.ID, Email: "linus@example.com"},
		{ExtensionID: e.ID, Email: "ADA@example.com"},
	})
	wantCode(t, err, betaport.ECONFLICT)
	var be *betaport.Error
	if !errors.As(err, &be) || be.Param != "email" {
		t.Fatalf("conflict error = %#v, want param email", err)
	}
	if n, err := s.CountTesters(ctx, e.ID); err != nil || n != 2 {
		t.Fatalf("CountTesters = %d, %v; want 2", n, err)
	}
	err = s.CreateTesters(ctx, []*betaport.Tester{{ExtensionID: e.ID, Email: "no-at-sign"}})
	wantCode(t, err, betaport.EINVALID)
}

func testUploadLifecycle(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, api.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	_, err := s.LatestUpload(ctx, e.ID)
	wantCode(t, err, betaport.ENOTFOUND)

	first := &betaport.Upload{ExtensionID: e.ID, ExpiresAt: betaport.Now().Add(time.Hour)}
	if err := s.CreateUpload(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := s.ReceiveUpload(ctx, first.ID, 10, "aa"); err != nil {
		t.Fatal(err)
	}
	second := &betaport.Upload{ExtensionID: e.ID, ExpiresAt: betaport.Now().Add(-time.Minute)}
	if err := s.CreateUpload(ctx, second); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindUpload(ctx, first.ID); got.State != betaport.UploadSuperseded || got.Size != 10 {
		t.Fatalf("first upload after a second URL = %+v, want superseded", got)
	}
	wantCode(t, s.ReceiveUpload(ctx, first.ID, 20, "bb"), betaport.ECONFLICT)
	if latest, _ := s.LatestUpload(ctx, e.ID); latest.ID != second.ID || latest.State != betaport.UploadRequested {
		t.Fatalf("latest = %+v, want the second, requested", latest)
	}
	if err := s.ExpireUploads(ctx, betaport.Now()); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindUpload(ctx, second.ID); got.State != betaport.UploadExpired {
		t.Fatalf("an upload past its expiry is %s", got.State)
	}
	dead, err := s.SweepableUploads(ctx, 10)
	if err != nil || len(dead) != 2 {
		t.Fatalf("SweepableUploads = %d, %v; want the superseded and the expired", len(dead), err)
	}
	for _, u := range dead {
		s.MarkUploadSwept(ctx, u.ID)
	}
	if dead, _ := s.SweepableUploads(ctx, 10); len(dead) != 0 {
		t.Fatalf("swept uploads listed again: %v", dead)
	}

	third := &betaport.Upload{ExtensionID: e.ID, ExpiresAt: betaport.Now().Add(time.Hour)}
	s.CreateUpload(ctx, third)
	s.ReceiveUpload(ctx, third.ID, 5, "cc")
	problems := []api.ZipProblem{{Code: "manifest_missing", Message: "m"}, {Code: "path_traversal", Path: "../x", Message: "p"}}
	if err := s.RejectUpload(ctx, third.ID, problems); err != nil {
		t.Fatal(err)
	}
	got, _ := s.FindUpload(ctx, third.ID)
	if got.State != betaport.UploadRejected || len(got.Problems) != 2 || got.Problems[1] != problems[1] {
		t.Fatalf("rejected upload = %+v", got)
	}
}

// Concurrent publishes of one upload make one bundle; every caller gets it.
func testPublishUploadOnce(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, api.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	u := &betaport.Upload{ExtensionID: e.ID, ExpiresAt: betaport.Now().Add(time.Hour)}
	s.CreateUpload(ctx, u)
	if _, _, err := s.PublishUpload(ctx, u.ID, newBundle(e.ID, 1)); betaport.ErrorCode(err) != betaport.ECONFLICT {
		t.Fatalf("publishing an upload with no zip: %v, want a conflict", err)
	}
	s.ReceiveUpload(ctx, u.ID, 100, fmt.Sprintf("%064x", 1))
	const n = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	fresh := 0
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, published, err := s.PublishUpload(ctx, u.ID, newBundle(e.ID, i))
			if err != nil {
				t.Errorf("PublishUpload: %v", err)
				return
			}
			if b.Number != 1 {
				t.Errorf("PublishUpload answered bundle %d, want 1", b.Number)
			}
			mu.Lock()
			if published {
				fresh++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if fresh != 1 {
		t.Fatalf("%d of %d concurrent publishes created a bundle, want exactly 1", fresh, n)
	}
	if c, _ := s.CountBundles(ctx, e.ID); c != 1 {
		t.Fatalf("%d bundles, want 1", c)
	}
	if got, _ := s.FindUpload(ctx, u.ID); got.State != betaport.UploadPublished || got.BundleNumber != 1 {
		t.Fatalf("published upload = %+v", got)
	}
}
