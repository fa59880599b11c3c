package publish

import (
	"context"
	"time"

	"github.com/maypok86/otter/v2"

	"github.com/betaport/betaport/app/betaport"
)

// Testers' copies of a bundle's CRX (TesterCRX) are kept in memory once
// made: a copy is its header (with its one RSA signature, about 1 ms to
// make) and its rewritten tail, a few KB beside a bundle of any size, and
// its bytes never change. A bundle just published has its copies made
// before anyone asks (WarmTesterCopies), so the updaters that fetch it
// hours later wait for no signature.
//
// A copy is found by bundle, tester and the hash of the tester's update
// token: a new install link (a new token) finds none, and a revoked tester
// is refused before the cache is asked.

// DefaultTesterCopiesBytes bounds the memory the kept copies take: about
// 60,000 copies of a bundle of a few hundred files.
const DefaultTesterCopiesBytes = 64 << 20

// copyKey names one tester's copy of one bundle.
type copyKey struct {
	bundleID, testerID int64
	tokenHash          string
}

func (s *Service) testerCopies() *otter.Cache[copyKey, *Package] {
	s.copiesOnce.Do(func() {
		limit := s.Config.TesterCopiesBytes
		if limit <= 0 {
			limit = DefaultTesterCopiesBytes
		}
		s.copies = otter.Must(&otter.Options[copyKey, *Package]{
			MaximumWeight: uint64(limit),
			Weigher: func(k copyKey, p *Package) uint32 {
				return uint32(len(p.Header) + len(p.Tail) + len(p.BlobKey) + len(p.ETag) + len(k.tokenHash) + 128)
			},
		})
	})
	return s.copies
}

// warmBatch is how many testers WarmTesterCopies reads at a time.
const warmBatch = 500

// WarmTesterCopies makes the copies of bundle b for every tester of ext
// who has an update token and is not revoked, newest tester first, until
// they are made, the kept copies' bound would be passed, or ctx ends. It
// returns how many it made. A tester whose copy cannot be made is skipped
// (their download will say why).
func (s *Service) WarmTesterCopies(ctx context.Context, ext *betaport.Extension, b *betaport.Bundle) (int, error) {
	cache := s.testerCopies()
	made := 0
	f := betaport.TesterFilter{ExtensionID: ext.ID, Installed: true, Limit: warmBatch}
	for {
		testers, err := s.Store.FindTesters(ctx, f)
		if err != nil {
			return made, err
		}
		for _, t := range testers {
			if ctx.Err() != nil {
				return made, ctx.Err()
			}
			// Stop short of evicting the copies just made.
			if cache.WeightedSize()+4<<10 > cache.GetMaximum() {
				return made, nil
			}
			if _, err := s.TesterCRX(ctx, ext, b, t); err == nil {
				made++
			}
		}
		if len(testers) < warmBatch {
			return made, nil
		}
		f.BeforeID = testers[len(testers)-1].ID
	}
}

// warmAfterPublish makes bundle b's testers' copies in the background, when
// the service is set to (Config.WarmTesterCopies): a publish answers at
// once, and the copies are ready for the updaters' next checks.
func (s *Service) warmAfterPublish(ext *betaport.Extension, b *betaport.Bundle) {
	if !s.Config.WarmTesterCopies || s.SigningKeys == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		start := time.Now()
		made, err := s.WarmTesterCopies(ctx, ext, b)
		s.logger().Info("made testers' copies of a new bundle", "extension", ext.ID, "bundle", b.Number,
			"copies", made, "duration", time.Since(start).Round(time.Millisecond), "err", err)
	}()
}

// WarmChannel makes the copies of the bundle a channel's rollout serves,
// when the service is set to, as a publish does: a rollout just started or
// advanced reaches updaters that find their copy made.
func (s *Service) WarmChannel(ext *betaport.Extension, c *betaport.Channel) {
	if c.Rollout == nil || c.Rollout.State != betaport.RolloutActive || !s.Config.WarmTesterCopies {
		return
	}
	b, err := s.Store.FindBundle(context.Background(), ext.ID, c.Rollout.Bundle)
	if err != nil {
		s.logger().Warn("finding a rollout's bundle to make its copies", "extension", ext.ID, "err", err)
		return
	}
	s.warmAfterPublish(ext, b)
}
