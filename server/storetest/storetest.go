// This file is long (about 620 lines) on purpose: it is the one suite every
// store runs, and its cases read in order, each entity after the ones it
// needs.

// Package storetest is one suite of behaviour every betaport.Store must
// show. Each backend's tests call Run with a function that opens a fresh,
// empty store of that backend.
package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
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
		{"BundlePages", testBundlePages},
		{"BundlePageOneSnapshot", testBundlePageOneSnapshot},
		{"TestersAllOrNothing", testTestersAllOrNothing},
		{"UploadLifecycle", testUploadLifecycle},
		{"PublishUploadOnce", testPublishUploadOnce},
		{"CreateUploadConcurrent", testCreateUploadConcurrent},
		{"NamedKeys", testNamedKeys},
		{"AccessTokens", testAccessTokens},
		{"AuditTrail", testAuditTrail},
		{"RestoreAndResend", testRestoreAndResend},
		{"InviteLinks", testInviteLinks},
		{"UsersAndSessions", testUsersAndSessions},
		{"TesterSearch", testTesterSearch},
		{"TesterSearchIndex", testTesterSearchIndex},
		{"RevokeEndsSessions", testRevokeEndsSessions},
		{"Builds", testBuilds},
		{"Signing", testSigning},
		{"BundleCRXAndVersions", testBundleCRXAndVersions},
		{"Adoption", testAdoption},
		{"ReleaseNotes", testReleaseNotes},
		{"RollbackOnce", testRollbackOnce},
		{"Webhooks", testWebhooks},
		{"PruneDeliveries", testPruneDeliveries},
		{"InterruptedDelivery", testInterruptedDelivery},
		{"TesterUpdates", testTesterUpdates},
		{"TesterAdoption", testTesterAdoption},
		{"Channels", testChannels},
		{"TesterChannels", testTesterChannels},
		{"RolloutRaces", testRolloutRaces},
		{"Feedback", testFeedback},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, open(t))
		})
	}
}

// SQLOpener returns a new, empty store and a connection to its database,
// for the tests that change rows as only SQL can (a tester renamed or
// deleted) or read them as stored; both arrange their own cleanup.
type SQLOpener func(t *testing.T) (betaport.Store, *sql.DB)

// RunSQL runs the tests that need the store's database besides the store.
func RunSQL(t *testing.T, open SQLOpener) {
	t.Run("TesterSearchFollowsChanges", func(t *testing.T) {
		t.Parallel()
		s, db := open(t)
		testTesterSearchFollowsChanges(t, s, db)
	})
	t.Run("WebhookSecretsSealed", func(t *testing.T) {
		t.Parallel()
		s, db := open(t)
		testWebhookSecretsSealed(t, s, db)
	})
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
	MustTeam(t, s, betaport.PlanStarter)
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
		{Name: " ", Plan: betaport.PlanProfessional},
		{Name: "Acme", Plan: "enterprise"},
		{Name: "Acme", Plan: betaport.PlanStarter, Seats: -1},
	} {
		err := s.CreateTeam(ctx, &bad)
		wantCode(t, err, betaport.EINVALID)
	}
	team := &betaport.Team{Name: "  Acme ", Plan: betaport.PlanProfessional}
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
	a, b := MustTeam(t, s, betaport.PlanProfessional), MustTeam(t, s, betaport.PlanStarter)
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
		ExtensionID: extensionID, Name: "Ext", Version: fmt.Sprintf("1.0.%d", i),
		ManifestVersion: 3, Size: 100 + int64(i), SHA256: sha, FileCount: 2, Source: "test",
		BlobKey: betaport.BundleKey(extensionID, sha),
	}
}

func testPublishBundleNumbers(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
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
	if n, err := CountBundles(ctx, s, e.ID); err != nil || n != 3 {
		t.Fatalf("CountBundles = %d, %v; want 3", n, err)
	}
}

// Concurrent publishes take distinct numbers, 1..n with no gap or reuse.
func testPublishBundleConcurrent(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
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
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	ts := []*betaport.Tester{
		{ExtensionID: e.ID, Email: " Ada@Example.com ", Name: "Ada"},
		{ExtensionID: e.ID, Email: "grace@example.com", Name: "Grace"},
	}
	if err := s.CreateTesters(ctx, ts); err != nil {
		t.Fatal(err)
	}
	if ts[0].Email != "ada@example.com" || ts[0].Status != betaport.TesterInvited || ts[0].ID == 0 {
		t.Fatalf("tester = %+v", ts[0])
	}
	// Loaded as invited, their invite is as old as they are (the testers
	// list shows its age); one loaded as active has none.
	if got, err := s.FindTester(ctx, ts[0].ID); err != nil || got.InvitedAt == nil || !got.InvitedAt.Equal(got.CreatedAt) {
		t.Fatalf("a tester loaded as invited reads back as %+v (%v): want invitedAt = createdAt", got, err)
	}
	active := &betaport.Tester{ExtensionID: e.ID, Email: "alan@example.com", Status: betaport.TesterActive}
	if err := s.CreateTesters(ctx, []*betaport.Tester{active}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.FindTester(ctx, active.ID); err != nil || got.InvitedAt != nil {
		t.Fatalf("a tester loaded as active reads back as %+v (%v): want no invite", got, err)
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
	if n, err := CountTesters(ctx, s, e.ID); err != nil || n != 3 {
		t.Fatalf("CountTesters = %d, %v; want 3", n, err)
	}
	err = s.CreateTesters(ctx, []*betaport.Tester{{ExtensionID: e.ID, Email: "no-at-sign"}})
	wantCode(t, err, betaport.EINVALID)
}

func testUploadLifecycle(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
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
	problems := []betaport.ZipProblem{{Code: "manifest_missing", Message: "m"}, {Code: "path_traversal", Path: "../x", Message: "p"}}
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
	team := MustTeam(t, s, betaport.PlanProfessional)
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
	if c, _ := CountBundles(ctx, s, e.ID); c != 1 {
		t.Fatalf("%d bundles, want 1", c)
	}
	if got, _ := s.FindUpload(ctx, u.ID); got.State != betaport.UploadPublished || got.BundleNumber != 1 {
		t.Fatalf("published upload = %+v", got)
	}
}

// Uploads requested at once for one extension (calls 1 on several
// replicas) leave exactly one open: the latest; the others are superseded.
func testCreateUploadConcurrent(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	const n = 12
	var wg sync.WaitGroup
	ids := make(chan int64, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := &betaport.Upload{ExtensionID: e.ID, ExpiresAt: betaport.Now().Add(time.Hour)}
			if err := s.CreateUpload(ctx, u); err != nil {
				t.Errorf("CreateUpload: %v", err)
				return
			}
			ids <- u.ID
		}()
	}
	wg.Wait()
	close(ids)
	latest, err := s.LatestUpload(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	open := 0
	for id := range ids {
		u, err := s.FindUpload(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		switch u.State {
		case betaport.UploadRequested:
			open++
			if id != latest.ID {
				t.Errorf("upload %d is open but the latest is %d", id, latest.ID)
			}
		case betaport.UploadSuperseded:
		default:
			t.Errorf("upload %d is %s", id, u.State)
		}
	}
	if open != 1 {
		t.Fatalf("%d of %d concurrently requested uploads are open, want 1", open, n)
	}
	err = s.CreateUpload(ctx, &betaport.Upload{ExtensionID: e.ID + 100, ExpiresAt: betaport.Now()})
	wantCode(t, err, betaport.ENOTFOUND)
}

func testUsersAndSessions(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	u := &betaport.User{TeamID: team.ID, Email: " Ada@Example.com "}
	if err := s.CreateUser(ctx, u, "hash"); err != nil {
		t.Fatal(err)
	}
	if u.ID == 0 || u.Email != "ada@example.com" {
		t.Fatalf("created user = %+v", u)
	}
	wantCode(t, s.CreateUser(ctx, &betaport.User{TeamID: team.ID, Email: "ADA@example.com"}, "h"), betaport.ECONFLICT)
	wantCode(t, s.CreateUser(ctx, &betaport.User{TeamID: team.ID, Email: "nobody"}, "h"), betaport.EINVALID)
	wantCode(t, s.CreateUser(ctx, &betaport.User{TeamID: team.ID + 100, Email: "x@example.com"}, "h"), betaport.ENOTFOUND)
	got, hash, err := s.FindUserByEmail(ctx, "ADA@example.com ")
	if err != nil || got.ID != u.ID || hash != "hash" {
		t.Fatalf("FindUserByEmail = %+v, %q, %v", got, hash, err)
	}
	if got, err := s.FindUser(ctx, u.ID); err != nil || *got != *u {
		t.Fatalf("FindUser = %+v, %v; want %+v", got, err, u)
	}
	_, _, err = s.FindUserByEmail(ctx, "grace@example.com")
	wantCode(t, err, betaport.ENOTFOUND)

	ss := &betaport.Session{TokenHash: "h1", UserID: u.ID, ExpiresAt: betaport.Now().Add(time.Hour)}
	if err := s.CreateSession(ctx, ss); err != nil {
		t.Fatal(err)
	}
	found, err := s.FindSession(ctx, "h1")
	if err != nil || found.UserID != u.ID || found.TesterID != 0 || !found.ExpiresAt.Equal(ss.ExpiresAt) {
		t.Fatalf("FindSession = %+v, %v", found, err)
	}
	later := betaport.Now().Add(48 * time.Hour)
	if err := s.ExtendSession(ctx, "h1", later); err != nil {
		t.Fatal(err)
	}
	if found, _ := s.FindSession(ctx, "h1"); !found.ExpiresAt.Equal(later) {
		t.Fatalf("extended session expires %v, want %v", found.ExpiresAt, later)
	}
	s.CreateSession(ctx, &betaport.Session{TokenHash: "old", UserID: u.ID, ExpiresAt: betaport.Now().Add(-time.Second)})
	_, err = s.FindSession(ctx, "old")
	wantCode(t, err, betaport.EUNAUTHORIZED)
	if err := s.DeleteSession(ctx, "h1"); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindSession(ctx, "h1")
	wantCode(t, err, betaport.EUNAUTHORIZED)
}

func testTesterSearch(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e, other := MustExtension(t, s, team, "E"), MustExtension(t, s, team, "Other")
	var ts []*betaport.Tester
	for i, name := range []string{"Ada Lovelace", "Grace Hopper", "Alan Turing", "Barbara Liskov", "Adele Goldberg"} {
		tt := &betaport.Tester{ExtensionID: e.ID, Email: fmt.Sprintf("t%d@%s.example", i, strings.ToLower(strings.Fields(name)[1])), Name: name}
		if err := s.InviteTester(ctx, tt, Link(fmt.Sprintf("invite-%d", i)), "admin@example.com"); err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tt)
	}
	if err := s.InviteTester(ctx, &betaport.Tester{ExtensionID: other.ID, Email: "t0@lovelace.example", Name: "Ada"}, Link("invite-other"), "admin@example.com"); err != nil {
		t.Fatalf("the same e-mail on another extension: %v", err)
	}
	wantCode(t, s.InviteTester(ctx, &betaport.Tester{ExtensionID: e.ID, Email: "T0@Lovelace.example"}, Link("invite-dup"), "admin@example.com"), betaport.ECONFLICT)
	mustUseInvite(t, s, "invite-1")
	mustUseInvite(t, s, "invite-3")

	names := func(f betaport.TesterFilter) string {
		t.Helper()
		f.ExtensionID = e.ID
		if f.Limit == 0 {
			f.Limit = 10
		}
		list, err := s.FindTesters(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tt := range list {
			out = append(out, strings.Fields(tt.Name)[0])
		}
		return strings.Join(out, ",")
	}
	for _, tt := range []struct {
		f    betaport.TesterFilter
		want string
	}{
		{betaport.TesterFilter{}, "Adele,Barbara,Alan,Grace,Ada"},
		{betaport.TesterFilter{Limit: 2}, "Adele,Barbara"},
		{betaport.TesterFilter{BeforeID: ts[3].ID, Limit: 2}, "Alan,Grace"},
		{betaport.TesterFilter{Query: "ad"}, "Adele,Ada"},                       // in the name, whatever its case
		{betaport.TesterFilter{Query: "HOPPER"}, "Grace"},                       // in the e-mail, whatever the query's case
		{betaport.TesterFilter{Status: betaport.TesterActive}, "Barbara,Grace"}, // a status
		{betaport.TesterFilter{Status: betaport.TesterInvited, Query: "a"}, "Adele,Alan,Ada"},
		{betaport.TesterFilter{Query: "%"}, ""}, // no pattern characters
	} {
		if got := names(tt.f); got != tt.want {
			t.Errorf("FindTesters(%+v) = %s, want %s", tt.f, got, tt.want)
		}
	}
	got, err := s.FindTesterByInvite(ctx, "invite-2")
	if err != nil || got.ID != ts[2].ID {
		t.Fatalf("FindTesterByInvite = %+v, %v", got, err)
	}
	_, err = s.FindTesterByInvite(ctx, "no-such-invite")
	wantCode(t, err, betaport.ENOTFOUND)
	if got, _ := s.FindTester(ctx, ts[1].ID); got.Status != betaport.TesterActive || got.LastSeenAt == nil {
		t.Fatalf("activated tester = %+v", got)
	}
}

// Revoking a tester ends their sessions at once, and they stay revoked.
func testRevokeEndsSessions(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	tt := &betaport.Tester{ExtensionID: e.ID, Email: "ada@example.com", Name: "Ada"}
	if err := s.InviteTester(ctx, tt, Link("invite"), "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	mustUseInvite(t, s, "invite")
	if err := s.CreateSession(ctx, &betaport.Session{TokenHash: "t1", TesterID: tt.ID, ExpiresAt: betaport.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeTester(ctx, tt.ID, "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	// The session is kept, so the tester's browser can be told their
	// access ended; its tester says so, and every request checks.
	ss, err := s.FindSession(ctx, "t1")
	if err != nil || ss.TesterID != tt.ID {
		t.Fatalf("the revoked tester's session = %+v, %v", ss, err)
	}
	got, _ := s.FindTester(ctx, tt.ID)
	if got.Status != betaport.TesterRevoked || got.RevokedBy != "admin@example.com" {
		t.Fatalf("revoked tester = %+v", got)
	}
	_, err = s.UseInvite(ctx, "invite", betaport.Now())
	wantCode(t, err, betaport.EFORBIDDEN)
	if got, _ := s.FindTester(ctx, tt.ID); got.Status != betaport.TesterRevoked {
		t.Fatalf("a revoked tester who opens their link again is %s", got.Status)
	}
	wantCode(t, s.RevokeTester(ctx, tt.ID+100, "admin@example.com"), betaport.ENOTFOUND)
}

// Builds are keyset-paged across extensions, newest first.
func testBuilds(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	a, b, c := MustExtension(t, s, team, "A"), MustExtension(t, s, team, "B"), MustExtension(t, s, team, "C")
	var ids []int64
	for i := range 6 {
		ext := []*betaport.Extension{a, b, c}[i%3]
		bd := newBundle(ext.ID, i)
		if err := s.PublishBundle(ctx, bd); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, bd.ID)
	}
	page, err := s.FindBuilds(ctx, []int64{a.ID, b.ID}, "", 0, 3)
	if err != nil || len(page) != 3 || page[0].ID != ids[4] || page[1].ID != ids[3] || page[2].ID != ids[1] {
		t.Fatalf("first page of builds = %v, %v; want bundles %d, %d, %d", page, err, ids[4], ids[3], ids[1])
	}
	if !page[0].Current || !page[1].Current || page[2].Current {
		t.Fatalf("current flags of builds: %+v", page)
	}
	next, err := s.FindBuilds(ctx, []int64{a.ID, b.ID}, "", page[2].ID, 3)
	if err != nil || len(next) != 1 || next[0].ID != ids[0] {
		t.Fatalf("second page of builds = %v, %v; want bundle %d", next, err, ids[0])
	}
	if none, err := s.FindBuilds(ctx, nil, "", 0, 3); err != nil || len(none) != 0 {
		t.Fatalf("builds of no extension = %v, %v", none, err)
	}
}
