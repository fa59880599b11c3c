package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
)

// Link is an invite link whose token hashes to hash, working unused for
// the default expiry from now.
func Link(hash string) betaport.InviteLink {
	return betaport.InviteLink{Hash: hash, ExpiresAt: betaport.Now().Add(betaport.DefaultInviteExpiry)}
}

// mustUseInvite signs the tester of the link hashing to hash in.
func mustUseInvite(t *testing.T, s betaport.Store, hash string) *betaport.Tester {
	t.Helper()
	tt, err := s.UseInvite(context.Background(), hash, betaport.Now())
	if err != nil {
		t.Fatalf("UseInvite(%q): %v", hash, err)
	}
	return tt
}

// wantReason fails unless err is a *betaport.Error with the reason.
func wantReason(t *testing.T, err error, reason string) {
	t.Helper()
	var e *betaport.Error
	if !errors.As(err, &e) || e.Reason != reason {
		t.Fatalf("error = %v, want reason %q", err, reason)
	}
}

// An invite link signs one browser in, once, before it expires; a new
// link works again; of browsers racing with one link, one gets in.
func testInviteLinks(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	now := betaport.Now()
	ada := &betaport.Tester{ExtensionID: e.ID, Email: "ada@example.com", Name: "Ada"}
	if err := s.InviteTester(ctx, ada, betaport.InviteLink{Hash: "ada-1", ExpiresAt: now.Add(time.Hour)}, "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindTesterByInvite(ctx, "ada-1")
	if err != nil || got.InviteExpiresAt == nil || !got.InviteExpiresAt.Equal(now.Add(time.Hour)) || got.InviteUsedAt != nil {
		t.Fatalf("the new link reads back as %+v, %v; want it expiring at %v, unused", got, err, now.Add(time.Hour))
	}
	if st := got.InviteLinkState(now); st != betaport.InviteOpen {
		t.Fatalf("a new link is %s", st)
	}

	// Expired: refused, and nothing changes.
	_, err = s.UseInvite(ctx, "ada-1", now.Add(time.Hour))
	wantReason(t, err, betaport.ReasonInviteExpired)
	if got, _ := s.FindTester(ctx, ada.ID); got.Status != betaport.TesterInvited || got.InviteUsedAt != nil || got.LastSeenAt != nil {
		t.Fatalf("an expired link changed the tester: %+v", got)
	}

	// Used once, before it expires: active, seen, the link used.
	used, err := s.UseInvite(ctx, "ada-1", now.Add(time.Minute))
	if err != nil || used.ID != ada.ID || used.Status != betaport.TesterActive || used.InviteUsedAt == nil ||
		!used.InviteUsedAt.Equal(now.Add(time.Minute)) || used.LastSeenAt == nil {
		t.Fatalf("UseInvite = %+v, %v", used, err)
	}
	_, err = s.UseInvite(ctx, "ada-1", now.Add(2*time.Minute))
	wantReason(t, err, betaport.ReasonInviteUsed)
	// Used, then past its expiry: it says used (what the tester did).
	_, err = s.UseInvite(ctx, "ada-1", now.Add(2*time.Hour))
	wantReason(t, err, betaport.ReasonInviteUsed)
	_, err = s.UseInvite(ctx, "nobody", now)
	wantCode(t, err, betaport.ENOTFOUND)

	// A new link: open again, the old one gone, the tester still active.
	again, err := s.ResendInvite(ctx, ada.ID, betaport.InviteLink{Hash: "ada-2", ExpiresAt: now.Add(48 * time.Hour)}, "admin@example.com")
	if err != nil || again.InviteUsedAt != nil || !again.InviteExpiresAt.Equal(now.Add(48*time.Hour)) || again.Status != betaport.TesterActive {
		t.Fatalf("ResendInvite = %+v, %v", again, err)
	}
	if got, _ := s.FindTester(ctx, ada.ID); got.InviteUsedAt != nil || !got.InviteExpiresAt.Equal(now.Add(48*time.Hour)) {
		t.Fatalf("after a new link the tester reads %+v", got)
	}
	_, err = s.UseInvite(ctx, "ada-1", now)
	wantCode(t, err, betaport.ENOTFOUND)

	// Browsers racing with one link: one gets in.
	var wg sync.WaitGroup
	var mu sync.Mutex
	in, refused := 0, 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.UseInvite(ctx, "ada-2", now.Add(time.Minute))
			mu.Lock()
			defer mu.Unlock()
			var be *betaport.Error
			switch {
			case err == nil:
				in++
			case errors.As(err, &be) && be.Reason == betaport.ReasonInviteUsed:
				refused++
			default:
				t.Errorf("a racing UseInvite: %v", err)
			}
		}()
	}
	wg.Wait()
	if in != 1 || refused != 7 {
		t.Fatalf("8 browsers racing with one link: %d signed in, %d refused as used; want 1 and 7", in, refused)
	}

	// Revoked: refused as such, whatever the link's state; restored with
	// a new link that works.
	if err := s.RevokeTester(ctx, ada.ID, "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	_, err = s.UseInvite(ctx, "ada-2", now)
	wantCode(t, err, betaport.EFORBIDDEN)
	restored, err := s.RestoreTester(ctx, ada.ID, betaport.InviteLink{Hash: "ada-3", ExpiresAt: now.Add(time.Hour)}, "admin@example.com")
	if err != nil || restored.InviteUsedAt != nil || !restored.InviteExpiresAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("RestoreTester = %+v, %v", restored, err)
	}
	if got := mustUseInvite(t, s, "ada-3"); got.Status != betaport.TesterActive {
		t.Fatalf("the restored tester's link signs in as %s", got.Status)
	}

	// Testers loaded in bulk have no link to expire.
	bob := &betaport.Tester{ExtensionID: e.ID, Email: "bob@example.com"}
	if err := s.CreateTesters(ctx, []*betaport.Tester{bob}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindTester(ctx, bob.ID); got.InviteExpiresAt != nil || got.InviteUsedAt != nil {
		t.Fatalf("a tester loaded in bulk reads %+v", got)
	}
}
