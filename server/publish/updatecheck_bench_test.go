package publish_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/adoption"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/publish"
)

// BenchmarkUpdateCheck measures, side by side in one run, an update check
// with a tester's own URL (the token found among 10,000 testers', the
// check kept for that tester until the flush) against today's check with
// the extension's shared URL, both counted for adoption, on SQLite. It
// reports tester/shared.
func BenchmarkUpdateCheck(b *testing.B) {
	w := newBBWorld(b, publish.Config{})
	w.svc.Adoption = &adoption.Counter{Store: w.db}
	ext, key := w.extension(betaport.PlanProfessional)
	w.submit(key, goodZip(b, "1.0.0"))
	ext = w.reload(ext)
	up, err := w.svc.Updates(w.ctx, ext)
	if err != nil {
		b.Fatal(err)
	}
	sharedToken := up.UpdateURL[strings.LastIndex(up.UpdateURL, "/")+1:]

	const testers = 10_000
	ts := make([]*betaport.Tester, testers)
	for i := range ts {
		ts[i] = &betaport.Tester{ExtensionID: ext.ID, Email: fmt.Sprintf("t%d@example.com", i), Name: "T", Status: betaport.TesterActive}
	}
	if err := w.db.CreateTesters(w.ctx, ts); err != nil {
		b.Fatal(err)
	}
	tokens := make([]string, testers)
	for i, t := range ts {
		tokens[i] = "t_" + credential.NewToken()
		if _, err := w.db.SetTesterUpdateToken(w.ctx, t.ID, credential.HashToken(tokens[i]), "sealed"); err != nil {
			b.Fatal(err)
		}
	}
	query := "x=" + url.QueryEscape("id="+up.ChromeID+"&v=0.9&uc")
	id := fmt.Sprint(ext.ID)
	check := func(ctx context.Context, token string) {
		feed, err := w.svc.UpdateFeed(ctx, id, token)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.svc.UpdateCheck(ctx, feed, query); err != nil {
			b.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var sharedT, testerT time.Duration
	for b.Loop() {
		start := time.Now()
		check(w.ctx, sharedToken)
		sharedT += time.Since(start)
		start = time.Now()
		check(w.ctx, tokens[rng.IntN(testers)])
		testerT += time.Since(start)
	}
	b.ReportMetric(float64(testerT)/float64(sharedT), "tester/shared")
	if err := w.svc.Adoption.Flush(w.ctx); err != nil {
		b.Fatal(err)
	}
}
