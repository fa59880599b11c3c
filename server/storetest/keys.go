package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
)

// An extension has any number of named keys; revoking one leaves the
// others working, and a key's use is recorded.
func testNamedKeys(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e, other := MustExtension(t, s, team, "E"), MustExtension(t, s, team, "Other")
	var keys []*betaport.Key
	for i, label := range []string{"GitHub Actions", " release laptop ", "GitHub Actions"} {
		k := &betaport.Key{ExtensionID: e.ID, Label: label, CreatedBy: "ada@example.com"}
		if err := s.CreateKey(ctx, k, "hash-"+string(rune('a'+i))); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if keys[1].Label != "release laptop" || keys[1].ID == 0 || keys[1].CreatedAt.IsZero() {
		t.Fatalf("created %+v", keys[1])
	}
	for _, bad := range []*betaport.Key{
		{ExtensionID: e.ID, Label: "  ", CreatedBy: "ada@example.com"},
		{ExtensionID: e.ID, Label: string(make([]rune, betaport.MaxKeyLabel+1)), CreatedBy: "ada@example.com"},
		{ExtensionID: e.ID, Label: "CI", CreatedBy: ""},
	} {
		wantCode(t, s.CreateKey(ctx, bad, "hash-bad"), betaport.EINVALID)
	}
	wantCode(t, s.CreateKey(ctx, &betaport.Key{ExtensionID: e.ID + 1000, Label: "CI", CreatedBy: "x"}, "hash-x"), betaport.ENOTFOUND)
	if err := s.CreateKey(ctx, &betaport.Key{ExtensionID: other.ID, Label: "CI", CreatedBy: "ada@example.com"}, "hash-o"); err != nil {
		t.Fatal(err)
	}

	// Newest first, paged by id; another extension's key is not listed.
	page, err := s.FindKeys(ctx, e.ID, 0, 2)
	if err != nil || len(page) != 2 || page[0].ID != keys[2].ID || page[1].ID != keys[1].ID {
		t.Fatalf("first page = %v, %v", page, err)
	}
	if rest, _ := s.FindKeys(ctx, e.ID, page[1].ID, 2); len(rest) != 1 || rest[0].ID != keys[0].ID {
		t.Fatalf("second page = %v", rest)
	}

	// Found by the hash of its secret until revoked; revoking one leaves
	// the others.
	if k, err := s.FindKeyByHash(ctx, "hash-b"); err != nil || k.ID != keys[1].ID || k.ExtensionID != e.ID {
		t.Fatalf("FindKeyByHash = %+v, %v", k, err)
	}
	revoked, err := s.RevokeKey(ctx, e.ID, keys[1].ID, "grace@example.com")
	if err != nil || revoked.RevokedAt == nil {
		t.Fatalf("RevokeKey = %+v, %v", revoked, err)
	}
	_, err = s.FindKeyByHash(ctx, "hash-b")
	wantCode(t, err, betaport.ENOTFOUND)
	for _, h := range []string{"hash-a", "hash-c", "hash-o"} {
		if _, err := s.FindKeyByHash(ctx, h); err != nil {
			t.Fatalf("after revoking another key, %s: %v", h, err)
		}
	}
	again, err := s.RevokeKey(ctx, e.ID, keys[1].ID, "grace@example.com")
	if err != nil || !again.RevokedAt.Equal(*revoked.RevokedAt) {
		t.Fatalf("revoking twice = %+v, %v; want the first revoke kept", again, err)
	}
	_, err = s.RevokeKey(ctx, other.ID, keys[0].ID, "grace@example.com")
	wantCode(t, err, betaport.ENOTFOUND) // another extension's key
	if k, _ := s.FindKeyByHash(ctx, "hash-a"); k == nil {
		t.Fatal("a key revoked through another extension stopped working")
	}

	// Last used moves forward, not back, and not within the same second.
	at := betaport.Now()
	if err := s.KeyUsed(ctx, keys[0].ID, at); err != nil {
		t.Fatal(err)
	}
	s.KeyUsed(ctx, keys[0].ID, at.Add(-time.Hour))
	s.KeyUsed(ctx, keys[0].ID, at.Add(500*time.Millisecond))
	k, _ := s.FindKeyByHash(ctx, "hash-a")
	if k.LastUsedAt == nil || !k.LastUsedAt.Equal(at) {
		t.Fatalf("last used = %v, want %v", k.LastUsedAt, at)
	}
	s.KeyUsed(ctx, keys[0].ID, at.Add(2*time.Second))
	if k, _ := s.FindKeyByHash(ctx, "hash-a"); !k.LastUsedAt.Equal(at.Add(2 * time.Second)) {
		t.Fatalf("last used = %v, want two seconds later", k.LastUsedAt)
	}
}

// Key and tester changes each leave one audit event, in the same
// transaction; a change that changes nothing leaves none.
func testAuditTrail(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e, other := MustExtension(t, s, team, "E"), MustExtension(t, s, team, "Other")
	k := &betaport.Key{ExtensionID: e.ID, Label: "CI", CreatedBy: "ada@example.com"}
	if err := s.CreateKey(ctx, k, "audit-hash"); err != nil {
		t.Fatal(err)
	}
	s.RevokeKey(ctx, e.ID, k.ID, "grace@example.com")
	s.RevokeKey(ctx, e.ID, k.ID, "grace@example.com") // nothing new
	tt := &betaport.Tester{ExtensionID: e.ID, Email: "tim@example.com"}
	if err := s.InviteTester(ctx, tt, Link("audit-invite"), betaport.ActorCommandLine); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.InviteTester(ctx, &betaport.Tester{ExtensionID: e.ID, Email: "TIM@example.com"}, Link("audit-invite-2"), "ada@example.com"), betaport.ECONFLICT)
	if _, err := s.ResendInvite(ctx, tt.ID, Link("audit-resend"), "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	s.RevokeTester(ctx, tt.ID, "ada@example.com")
	if _, err := s.RestoreTester(ctx, tt.ID, Link("audit-restore"), "grace@example.com"); err != nil {
		t.Fatal(err)
	}
	if err := s.InviteTester(ctx, &betaport.Tester{ExtensionID: other.ID, Email: "o@example.com"}, Link("audit-other"), "ada@example.com"); err != nil {
		t.Fatal(err)
	}

	want := []struct{ actor, action, subject string }{
		{"grace@example.com", betaport.AuditTesterRestored, "tim@example.com"},
		{"ada@example.com", betaport.AuditTesterRevoked, "tim@example.com"},
		{"ada@example.com", betaport.AuditInviteResent, "tim@example.com"},
		{betaport.ActorCommandLine, betaport.AuditTesterInvited, "tim@example.com"},
		{"grace@example.com", betaport.AuditKeyRevoked, "CI"},
		{"ada@example.com", betaport.AuditKeyCreated, "CI"},
	}
	var got []*betaport.AuditEvent
	for before := int64(0); ; {
		page, err := s.FindAuditEvents(ctx, e.ID, before, 4)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		got = append(got, page...)
		before = page[len(page)-1].ID
	}
	if len(got) != len(want) {
		t.Fatalf("%d audit events, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Actor != w.actor || g.Action != w.action || g.Subject != w.subject || g.ExtensionID != e.ID || g.CreatedAt.IsZero() {
			t.Errorf("event %d = %+v, want %+v", i, g, w)
		}
	}
}

// A revoked tester is restored on the same record with a new link; a
// resend replaces the link of a tester who is not revoked.
func testRestoreAndResend(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	tt := &betaport.Tester{ExtensionID: e.ID, Email: "Ada@Example.com", Name: "Ada"}
	if err := s.InviteTester(ctx, tt, Link("first-link"), "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	if tt.InvitedAt == nil {
		t.Fatal("an invited tester has no invite time")
	}
	if got, _ := s.FindTesterByEmail(ctx, e.ID, " ADA@example.com"); got == nil || got.ID != tt.ID {
		t.Fatalf("FindTesterByEmail = %+v", got)
	}

	resent, err := s.ResendInvite(ctx, tt.ID, Link("second-link"), "admin@example.com")
	if err != nil || resent.Status != betaport.TesterInvited || resent.InvitedAt.Before(*tt.InvitedAt) {
		t.Fatalf("ResendInvite = %+v, %v", resent, err)
	}
	_, err = s.FindTesterByInvite(ctx, "first-link")
	wantCode(t, err, betaport.ENOTFOUND)
	if got, err := s.FindTesterByInvite(ctx, "second-link"); err != nil || got.ID != tt.ID {
		t.Fatalf("the new link finds %+v, %v", got, err)
	}
	_, err = s.RestoreTester(ctx, tt.ID, Link("x"), "admin@example.com")
	wantCode(t, err, betaport.ECONFLICT) // not revoked

	mustUseInvite(t, s, "second-link")
	if err := s.CreateSession(ctx, &betaport.Session{TokenHash: "before-revoke", TesterID: tt.ID, ExpiresAt: betaport.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeTester(ctx, tt.ID, "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	_, err = s.ResendInvite(ctx, tt.ID, Link("y"), "admin@example.com")
	wantCode(t, err, betaport.ECONFLICT) // revoked: restore instead

	restored, err := s.RestoreTester(ctx, tt.ID, Link("third-link"), "admin@example.com")
	if err != nil || restored.ID != tt.ID || restored.Status != betaport.TesterInvited || restored.RevokedBy != "" {
		t.Fatalf("RestoreTester = %+v, %v", restored, err)
	}
	if got, _ := s.FindTester(ctx, tt.ID); got.Status != betaport.TesterInvited || got.Email != "ada@example.com" || got.Name != "Ada" {
		t.Fatalf("restored tester reads back as %+v", got)
	}
	_, err = s.FindSession(ctx, "before-revoke")
	wantCode(t, err, betaport.EUNAUTHORIZED) // a restore does not revive old sessions
	if got, err := s.FindTesterByInvite(ctx, "third-link"); err != nil || got.ID != tt.ID {
		t.Fatalf("the restored tester's link finds %+v, %v", got, err)
	}
	_, err = s.RestoreTester(ctx, tt.ID+1000, Link("z"), "admin@example.com")
	wantCode(t, err, betaport.ENOTFOUND)
}
