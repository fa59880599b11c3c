package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
)

// Access tokens: kept by hash with their scopes (in one order) and expiry,
// refused once revoked, recorded in the audit trail, their use noted.
func testAccessTokens(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e, other := MustExtension(t, s, team, "E"), MustExtension(t, s, team, "Other")
	in := betaport.Now().Add(30 * 24 * time.Hour)
	ci := &betaport.AccessToken{ExtensionID: e.ID, Name: " nightly ", Scopes: []string{"testers", "read"}, CreatedBy: "ada@example.com", ExpiresAt: &in}
	if err := s.CreateAccessToken(ctx, ci, "hash-ci"); err != nil {
		t.Fatal(err)
	}
	if ci.ID == 0 || ci.Name != "nightly" || !slices.Equal(ci.Scopes, []string{"read", "testers"}) {
		t.Fatalf("created %+v", ci)
	}
	forever := &betaport.AccessToken{ExtensionID: e.ID, Name: "dashboard", Scopes: []string{"read"}, CreatedBy: "ada@example.com"}
	if err := s.CreateAccessToken(ctx, forever, "hash-forever"); err != nil {
		t.Fatal(err)
	}
	past := betaport.Now().Add(-time.Hour)
	tooLong := betaport.Now().Add(2 * betaport.MaxTokenLifetime)
	for name, bad := range map[string]*betaport.AccessToken{
		"no name":       {ExtensionID: e.ID, Name: " ", Scopes: []string{"read"}, CreatedBy: "a"},
		"no scope":      {ExtensionID: e.ID, Name: "x", CreatedBy: "a"},
		"unknown scope": {ExtensionID: e.ID, Name: "x", Scopes: []string{"admin"}, CreatedBy: "a"},
		"twice":         {ExtensionID: e.ID, Name: "x", Scopes: []string{"read", "read"}, CreatedBy: "a"},
		"expired":       {ExtensionID: e.ID, Name: "x", Scopes: []string{"read"}, CreatedBy: "a", ExpiresAt: &past},
		"too long":      {ExtensionID: e.ID, Name: "x", Scopes: []string{"read"}, CreatedBy: "a", ExpiresAt: &tooLong},
		"no maker":      {ExtensionID: e.ID, Name: "x", Scopes: []string{"read"}},
	} {
		if err := s.CreateAccessToken(ctx, bad, "hash-bad"); betaport.ErrorCode(err) != betaport.EINVALID {
			t.Errorf("%s: CreateAccessToken = %v, want EINVALID", name, err)
		}
	}
	wantCode(t, s.CreateAccessToken(ctx, &betaport.AccessToken{ExtensionID: e.ID + 1000, Name: "x", Scopes: []string{"read"}, CreatedBy: "a"}, "hash-x"), betaport.ENOTFOUND)
	if err := s.CreateAccessToken(ctx, &betaport.AccessToken{ExtensionID: other.ID, Name: "o", Scopes: []string{"read"}, CreatedBy: "a"}, "hash-o"); err != nil {
		t.Fatal(err)
	}

	got, err := s.FindAccessTokenByHash(ctx, "hash-ci")
	if err != nil || got.ID != ci.ID || got.ExtensionID != e.ID || !slices.Equal(got.Scopes, ci.Scopes) ||
		got.ExpiresAt == nil || !got.ExpiresAt.Equal(*ci.ExpiresAt) || got.LastUsedAt != nil {
		t.Fatalf("FindAccessTokenByHash = %+v, %v; made %+v", got, err, ci)
	}
	if got, _ := s.FindAccessTokenByHash(ctx, "hash-forever"); got == nil || got.ExpiresAt != nil {
		t.Fatalf("a token without expiry came back as %+v", got)
	}
	_, err = s.FindAccessTokenByHash(ctx, "hash-nothing")
	wantCode(t, err, betaport.ENOTFOUND)

	page, err := s.FindAccessTokens(ctx, e.ID, 0, 1)
	if err != nil || len(page) != 1 || page[0].ID != forever.ID {
		t.Fatalf("first page = %v, %v", page, err)
	}
	if rest, _ := s.FindAccessTokens(ctx, e.ID, page[0].ID, 5); len(rest) != 1 || rest[0].ID != ci.ID {
		t.Fatalf("second page = %v", rest)
	}

	at := betaport.Now()
	if err := s.AccessTokenUsed(ctx, ci.ID, at); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindAccessTokenByHash(ctx, "hash-ci"); got.LastUsedAt == nil || got.LastUsedAt.UnixMilli() != at.UnixMilli() {
		t.Fatalf("last used = %v, want %v", got.LastUsedAt, at)
	}

	// Revoked: no longer found by its secret, listed with its time, once
	// in the audit trail however often it is revoked; another extension's
	// id names nothing.
	_, err = s.RevokeAccessToken(ctx, other.ID, ci.ID, "bob@example.com")
	wantCode(t, err, betaport.ENOTFOUND)
	for range 2 {
		r, err := s.RevokeAccessToken(ctx, e.ID, ci.ID, "bob@example.com")
		if err != nil || r.RevokedAt == nil {
			t.Fatalf("RevokeAccessToken = %+v, %v", r, err)
		}
	}
	_, err = s.FindAccessTokenByHash(ctx, "hash-ci")
	wantCode(t, err, betaport.ENOTFOUND)
	if still, _ := s.FindAccessTokenByHash(ctx, "hash-forever"); still == nil {
		t.Fatal("revoking one token revoked another")
	}
	events, err := s.FindAuditEvents(ctx, e.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, ev := range events {
		actions = append(actions, ev.Action+" "+ev.Subject+" by "+ev.Actor)
	}
	want := []string{
		"token.revoked nightly by bob@example.com",
		"token.created dashboard by ada@example.com",
		"token.created nightly by ada@example.com",
	}
	if !slices.Equal(actions, want) {
		t.Fatalf("audit trail = %q, want %q", actions, want)
	}
}
