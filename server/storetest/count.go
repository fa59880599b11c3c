package storetest

import (
	"context"
	"math"

	"github.com/betaport/betaport/app/betaport"
)

// The service never counts whole lists (they are paged), so the stores
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
