package sqlite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/storetest"
)

// BenchmarkPaging measures, side by side in one run, a list's first page
// and a deep page (the 5,000th of 20 bundles; the last of 100,000 testers)
// and reports deep/first: keyset and number-range pages should keep it
// near 1, where an OFFSET scan would grow with the depth.
func BenchmarkPaging(b *testing.B) {
	ctx := context.Background()
	db := MustOpenDB(b)
	team := storetest.MustTeam(b, db, betaport.PlanProfessional)
	ext := storetest.MustExtension(b, db, team, "E")
	const bundles, testers = 100_000, 100_000
	for i := 1; i <= bundles; i++ {
		sha := fmt.Sprintf("%064x", i)
		bd := &betaport.Bundle{ExtensionID: ext.ID, Name: "E", Version: "1.0", ManifestVersion: 3, Size: 1, SHA256: sha, FileCount: 1, Source: "bench", BlobKey: sha}
		if err := db.PublishBundle(ctx, bd); err != nil {
			b.Fatal(err)
		}
		if i%10_000 == 0 {
			b.Logf("%d bundles", i)
		}
	}
	ts := make([]*betaport.Tester, testers)
	for i := range ts {
		ts[i] = &betaport.Tester{ExtensionID: ext.ID, Email: fmt.Sprintf("t%d@example.com", i), Name: "T", Status: betaport.TesterActive}
	}
	if err := db.CreateTesters(ctx, ts); err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name        string
		first, deep func() error
	}{
		{"bundles/page0-vs-page4999",
			func() error { _, err := db.FindBundlePage(ctx, ext.ID, 0, 20); return err },
			func() error { _, err := db.FindBundlePage(ctx, ext.ID, 4999, 20); return err }},
		{"testers/first-vs-last",
			func() error {
				_, err := db.FindTesters(ctx, betaport.TesterFilter{ExtensionID: ext.ID, Limit: 21})
				return err
			},
			func() error {
				_, err := db.FindTesters(ctx, betaport.TesterFilter{ExtensionID: ext.ID, Limit: 21, BeforeID: ts[20].ID})
				return err
			}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var first, deep time.Duration
			for b.Loop() {
				t0 := time.Now()
				if err := c.first(); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := c.deep(); err != nil {
					b.Fatal(err)
				}
				first, deep = first+t1.Sub(t0), deep+time.Since(t1)
			}
			b.ReportMetric(float64(deep)/float64(first), "deep/first")
		})
	}
}

// BenchmarkSearch measures tester search at a million testers against a
// plain page (see storetest.BenchSearch), on an SQLite file.
func BenchmarkSearch(b *testing.B) {
	storetest.BenchSearch(b, MustOpenDB(b), 1_000_000)
}
