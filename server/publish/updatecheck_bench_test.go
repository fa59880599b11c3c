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

// BenchmarkUpdateCheckRollout measures, side by side in one run, a tester's
// update check on an extension of 10,000 testers across three channels
// with a rollout under way (the check reads the tester's channel and its
// rollout, and places the tester in a bucket) against one on an extension
// of 10,000 testers on its one channel, without a rollout. It reports
// rollout/single (issue 31 asks at most 1.1).
func BenchmarkUpdateCheckRollout(b *testing.B) {
	const testers = 10_000
	// world makes an extension with a published bundle and testers, each
	// with their own update token, on the channel channelOf names, in a
	// database of its own: the two are alike but for what is measured
	// (in one file, the extension made second was the quicker to check).
	world := func(channels []string, channelOf func(i int) string) (w *bbWorld, ext *betaport.Extension, id, chromeID string, tokens []string) {
		w = newBBWorld(b, publish.Config{})
		w.svc.Adoption = &adoption.Counter{Store: w.db}
		ext, key := w.extension(betaport.PlanProfessional)
		w.submit(key, goodZip(b, "1.0.0"))
		for _, c := range channels {
			if _, err := w.db.CreateChannel(w.ctx, ext.ID, c, "bench"); err != nil {
				b.Fatal(err)
			}
		}
		ext = w.reload(ext)
		up, err := w.svc.Updates(w.ctx, ext)
		if err != nil {
			b.Fatal(err)
		}
		ts := make([]*betaport.Tester, testers)
		for i := range ts {
			ts[i] = &betaport.Tester{ExtensionID: ext.ID, Email: fmt.Sprintf("t%d@example.com", i), Name: "T", Status: betaport.TesterActive}
		}
		if err := w.db.CreateTesters(w.ctx, ts); err != nil {
			b.Fatal(err)
		}
		tokens = make([]string, testers)
		for i, t := range ts {
			tokens[i] = "t_" + credential.NewToken()
			if _, err := w.db.SetTesterUpdateToken(w.ctx, t.ID, credential.HashToken(tokens[i]), "sealed"); err != nil {
				b.Fatal(err)
			}
			if c := channelOf(i); c != betaport.DefaultChannel {
				if _, err := w.db.SetTesterChannel(w.ctx, t.ID, c, "bench"); err != nil {
					b.Fatal(err)
				}
			}
		}
		return w, ext, fmt.Sprint(ext.ID), up.ChromeID, tokens
	}
	singleW, _, singleID, singleChrome, singleTokens := world(nil, func(int) string { return betaport.DefaultChannel })
	channels := []string{betaport.DefaultChannel, "internal", "nightly"}
	w, ext, rolloutID, rolloutChrome, rolloutTokens := world(channels[1:], func(i int) string { return channels[i%3] })
	// The first bundle is on every channel; a second goes out to half of
	// beta, and to all of internal.
	last, _ := w.db.LastBundleNumber(w.ctx, ext.ID)
	// Every channel serves a bundle, as the single one does: a check
	// without one would cost less.
	if _, err := w.db.PromoteBundle(w.ctx, ext.ID, last, betaport.Placement{Channel: "nightly", Actor: "bench"}); err != nil {
		b.Fatal(err)
	}
	second := *mustBundle(b, w, ext.ID, last)
	second.ID, second.Number, second.Version, second.Placement = 0, 0, "1.0.1", betaport.Placement{Percent: 50}
	second.CRX = betaport.CRX{}
	if err := w.db.PublishBundle(w.ctx, &second); err != nil {
		b.Fatal(err)
	}
	if _, err := w.db.PromoteBundle(w.ctx, ext.ID, second.Number, betaport.Placement{Channel: "internal", Actor: "bench"}); err != nil {
		b.Fatal(err)
	}

	check := func(w *bbWorld, id, chromeID, token string) {
		ctx := w.ctx
		feed, err := w.svc.UpdateFeed(ctx, id, token)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.svc.UpdateCheck(ctx, feed, "x="+url.QueryEscape("id="+chromeID+"&v=0.9&uc")); err != nil {
			b.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var singleT, rolloutT time.Duration
	single := func() {
		start := time.Now()
		check(singleW, singleID, singleChrome, singleTokens[rng.IntN(testers)])
		singleT += time.Since(start)
	}
	rollout := func() {
		start := time.Now()
		check(w, rolloutID, rolloutChrome, rolloutTokens[rng.IntN(testers)])
		rolloutT += time.Since(start)
	}
	// The two take turns going first: neither pays for the other's cache
	// misses every time.
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			single()
			rollout()
		} else {
			rollout()
			single()
		}
	}
	b.ReportMetric(float64(rolloutT)/float64(singleT), "rollout/single")
	for _, w := range []*bbWorld{singleW, w} {
		if err := w.svc.Adoption.Flush(w.ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func mustBundle(b *testing.B, w *bbWorld, extensionID, number int64) *betaport.Bundle {
	found, err := w.db.FindBundle(w.ctx, extensionID, number)
	if err != nil {
		b.Fatal(err)
	}
	return found
}
