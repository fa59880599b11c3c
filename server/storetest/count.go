package storetest

import (
	"context"
	"math"
	"testing"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
)

// Helpers for tests of every store. The service never counts whole lists (they are paged), so the stores
// have no count methods; tests count through the reads the service uses.

// CountBundles counts an extension's bundles, page by page.
func CountBundles(ctx context.Context, s betaport.BundleStore, extensionID int64) (int64, error) {
	var n int64
	for max := int64(math.MaxInt64); ; {
		page, err := s.FindBundles(ctx, extensionID, max, 500)
		if err != nil || len(page) == 0 {
			return n, err
		}
		n += int64(len(page))
		max = page[len(page)-1].Number - 1
	}
}

// CountTesters counts an extension's testers, page by page.
func CountTesters(ctx context.Context, s betaport.TesterStore, extensionID int64) (int64, error) {
	var n int64
	for before := int64(0); ; {
		page, err := s.FindTesters(ctx, betaport.TesterFilter{ExtensionID: extensionID, BeforeID: before, Limit: 500})
		if err != nil || len(page) == 0 {
			return n, err
		}
		n += int64(len(page))
		before = page[len(page)-1].ID
	}
}

// MustKey gives an extension a named key whose secret is secret, as
// `betaport key create` does, and returns the key.
func MustKey(t testing.TB, s betaport.KeyStore, extensionID int64, label, secret string) *betaport.Key {
	t.Helper()
	k := &betaport.Key{ExtensionID: extensionID, Label: label, CreatedBy: betaport.ActorCommandLine}
	if err := s.CreateKey(context.Background(), k, credential.HashToken(secret)); err != nil {
		t.Fatal(err)
	}
	return k
}

// RevokeKeys revokes every key of an extension.
func RevokeKeys(t testing.TB, s betaport.KeyStore, extensionID int64) {
	t.Helper()
	ctx := context.Background()
	keys, err := s.FindKeys(ctx, extensionID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if _, err := s.RevokeKey(ctx, extensionID, k.ID, betaport.ActorCommandLine); err != nil {
			t.Fatal(err)
		}
	}
}
