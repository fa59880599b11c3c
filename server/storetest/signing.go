package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/betaport/betaport/app/betaport"
)

func testSigning(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e, other := MustExtension(t, s, team, "E"), MustExtension(t, s, team, "Other")
	if _, err := s.FindSigning(ctx, e.ID); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatalf("FindSigning before any: %v, want not found", err)
	}
	if err := s.RotateUpdateToken(ctx, e.ID, "t"); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatalf("rotating a token that does not exist: %v", err)
	}
	first := &betaport.Signing{ExtensionID: e.ID, PrivateKey: []byte("-----BEGIN PRIVATE KEY-----\nfirst\n-----END PRIVATE KEY-----\n"), UpdateToken: "token-1"}
	kept, err := s.CreateSigning(ctx, first, "aaaabbbbccccddddeeeeffffgggghhhh")
	if err != nil || string(kept.PrivateKey) != string(first.PrivateKey) || kept.UpdateToken != "token-1" || kept.RotatedAt != nil {
		t.Fatalf("CreateSigning = %v, %v", kept, err)
	}
	// A racing second key loses: the first stays, with its Chrome ID.
	second := &betaport.Signing{ExtensionID: e.ID, PrivateKey: []byte("second"), UpdateToken: "token-2"}
	kept, err = s.CreateSigning(ctx, second, "ppppoooonnnnmmmmllllkkkkjjjjiiii")
	if err != nil || string(kept.PrivateKey) != string(first.PrivateKey) || kept.UpdateToken != "token-1" {
		t.Fatalf("second CreateSigning replaced the first: %v", err)
	}
	got, err := s.FindExtension(ctx, e.ID)
	if err != nil || got.ChromeID != "aaaabbbbccccddddeeeeffffgggghhhh" {
		t.Fatalf("Chrome ID = %q, %v", got.ChromeID, err)
	}
	if got, _ := s.FindExtension(ctx, other.ID); got.ChromeID != "" {
		t.Fatalf("another extension got Chrome ID %q", got.ChromeID)
	}
	if err := s.RotateUpdateToken(ctx, e.ID, "token-3"); err != nil {
		t.Fatal(err)
	}
	sg, err := s.FindSigning(ctx, e.ID)
	if err != nil || sg.UpdateToken != "token-3" || sg.RotatedAt == nil || string(sg.PrivateKey) != string(first.PrivateKey) {
		t.Fatalf("after rotation: %+v, %v", sg, err)
	}
	if _, err := s.CreateSigning(ctx, &betaport.Signing{ExtensionID: 999999, PrivateKey: []byte("k"), UpdateToken: "t"}, "x"); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatalf("signing for a missing extension: %v", err)
	}
}

func testBundleCRXAndVersions(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	b1 := newBundle(e.ID, 1)
	b1.Version = "1.0"
	b1.CRX = betaport.CRX{BlobKey: "bundles/1/a.crx", Size: 10, SHA256: "aa", TokenHash: "th"}
	if err := s.PublishBundle(ctx, b1); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindBundle(ctx, e.ID, 1)
	if err != nil || got.CRX != b1.CRX {
		t.Fatalf("CRX read back %+v, %v; want %+v", got.CRX, err, b1.CRX)
	}
	// A bundle built for number 2 publishes as 2; one built for a number
	// taken meanwhile publishes nothing.
	b2 := newBundle(e.ID, 2)
	b2.Number, b2.Version, b2.VersionName = 2, "1.0.0.2", "1.0"
	if err := s.PublishBundle(ctx, b2); err != nil || b2.Number != 2 {
		t.Fatalf("publish for number 2: %d, %v", b2.Number, err)
	}
	stale := newBundle(e.ID, 3)
	stale.Number = 2
	if err := s.PublishBundle(ctx, stale); betaport.ErrorCode(err) != betaport.ECONFLICT {
		t.Fatalf("publish for a taken number: %v, want conflict", err)
	}
	if n, _ := CountBundles(ctx, s, e.ID); n != 2 {
		t.Fatalf("a conflicting publish left %d bundles", n)
	}
	got, _ = s.FindBundle(ctx, e.ID, 2)
	if got.VersionName != "1.0" || got.Version != "1.0.0.2" || !got.Current {
		t.Fatalf("bundle 2 read back %+v", *got)
	}
	versions, err := s.BundleVersions(ctx, e.ID)
	slices.Sort(versions)
	if err != nil || !slices.Equal(versions, []string{"1.0", "1.0.0.2"}) {
		t.Fatalf("BundleVersions = %v, %v", versions, err)
	}
	c := betaport.CRX{BlobKey: "bundles/1/b.crx", Size: 20, SHA256: "bb", TokenHash: "th2"}
	if err := s.SetBundleCRX(ctx, got.ID, c); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.FindBundle(ctx, e.ID, 2); got.CRX != c {
		t.Fatalf("SetBundleCRX: read back %+v", got.CRX)
	}
	if err := s.SetBundleCRX(ctx, 999999, c); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatalf("SetBundleCRX of a missing bundle: %v", err)
	}
}
