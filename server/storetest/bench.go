package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/demo"
)

// BenchSearch loads n demo testers into one extension of s (the bulk path
// the demo uses) and measures, side by side in one run, the first page of
// its testers and the first page of three searches:
//
//   - rare: part of one tester's e-mail address, a single match;
//   - common: "example.com", in every tester's e-mail;
//   - name: "knuth", in one tester's name of 32.
//
// It reports each search's time over the plain page's (rare/plain…): a
// trigram index keeps them small, where a scan of the testers grows with n.
// The load's time is reported too, as seed-s.
func BenchSearch(b *testing.B, s betaport.Store, n int) {
	ctx := context.Background()
	team := MustTeam(b, s, betaport.PlanProfessional)
	ext := MustExtension(b, s, team, "Search")
	// A few testers of another extension: every search must leave them out.
	other := MustExtension(b, s, team, "Other")
	t0 := time.Now()
	if err := demo.LoadTesters(ctx, s, ext.ID, n); err != nil {
		b.Fatal(err)
	}
	if err := demo.LoadTesters(ctx, s, other.ID, 1000); err != nil {
		b.Fatal(err)
	}
	seed := time.Since(t0)
	b.Logf("loaded %d testers in %s", n, seed.Round(time.Millisecond))

	page := func(query string, want int) func() error {
		return func() error {
			list, err := s.FindTesters(ctx, betaport.TesterFilter{ExtensionID: ext.ID, Query: query, Limit: 21})
			if err == nil && len(list) != want {
				err = fmt.Errorf("a search for %q found %d testers, want %d", query, len(list), want)
			}
			return err
		}
	}
	runs := []struct {
		name string
		run  func() error
		took time.Duration
	}{
		{name: "plain", run: page("", 21)},
		// The e-mail address of the tester numbered n/2, as LoadTesters
		// numbers them: "….500000@example.com" at a million.
		{name: "rare", run: page(fmt.Sprintf(".%d@", n/2), 1)},
		{name: "common", run: page("example.com", 21)},
		{name: "name", run: page("knuth", 21)},
	}
	b.Run(fmt.Sprintf("testers=%d", n), func(b *testing.B) {
		for i := range runs {
			runs[i].took = 0
		}
		for b.Loop() {
			for i := range runs {
				t0 := time.Now()
				if err := runs[i].run(); err != nil {
					b.Fatal(err)
				}
				runs[i].took += time.Since(t0)
			}
		}
		plain := runs[0].took
		for _, r := range runs {
			b.ReportMetric(float64(r.took.Microseconds())/float64(b.N)/1000, r.name+"-ms")
			if r.name != "plain" {
				b.ReportMetric(float64(r.took)/float64(plain), r.name+"/plain")
			}
		}
		b.ReportMetric(seed.Seconds(), "seed-s")
	})
}
