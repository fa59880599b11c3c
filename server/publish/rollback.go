package publish

import (
	"context"
	"errors"
	"fmt"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/crx"
)

// Rollback makes an older bundle of ext current again. Chromium never
// installs a lower version, so the rollback is a new bundle: it serves the
// old bundle's zip (the same stored bytes, not a copy) under a version
// above every version served before, with a CRX of its own, and the
// extension's current bundle and update feed switch to it in one
// transaction. actor is who asked, for the audit trail.
//
// Racing rollbacks to one bundle publish it once: when the current bundle
// already is a rollback of number, Rollback returns that bundle and false.
//
// The rollback is published to one channel (channel; DefaultChannel when
// empty), and replaces a rollout in progress there: it reaches everyone on
// the channel.
func (s *Service) Rollback(ctx context.Context, ext *betaport.Extension, number int64, channel, actor string) (*betaport.Bundle, bool, error) {
	if channel == "" {
		channel = betaport.DefaultChannel
	}
	unlock, err := s.signLocks.lock(ctx, ext.ID)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	// A sign on another replica may take the number the rollback was built
	// for; it is then built again for the next one.
	for attempt := 1; ; attempt++ {
		b, fresh, err := s.rollbackOnce(ctx, ext, number, channel, actor)
		var r raced
		if errors.As(err, &r) {
			if attempt < 3 {
				continue
			}
			return b, fresh, r.error
		}
		if err == nil && fresh {
			s.warmAfterPublish(ext, b)
		}
		return b, fresh, err
	}
}

// raced is the conflict publishing a rollback met: a sign took its number,
// or a rollback to the same bundle made it current. Rollback looks again;
// the conflicts rollbackOnce answers itself (the bundle is current already,
// no version is left) are final.
type raced struct{ error }

func (r raced) Unwrap() error { return r.error }

func (s *Service) rollbackOnce(ctx context.Context, ext *betaport.Extension, number int64, channel, actor string) (*betaport.Bundle, bool, error) {
	old, err := s.Store.FindBundle(ctx, ext.ID, number)
	if betaport.ErrorCode(err) == betaport.ENOTFOUND {
		return nil, false, betaport.Errorf(betaport.ENOTFOUND,
			"This extension has no bundle #%d. Pick a bundle from its list to roll back to.", number)
	} else if err != nil {
		return nil, false, err
	}
	ch, err := s.Store.FindChannel(ctx, ext.ID, channel)
	if err != nil {
		return nil, false, err
	}
	last, err := s.Store.LastBundleNumber(ctx, ext.ID)
	if err != nil {
		return nil, false, err
	}
	// With a rollout in progress the rollback replaces it (its testers
	// have a newer bundle than the channel's current one).
	current := ch.CurrentBundle
	if ch.Rollout == nil && current == number {
		return nil, false, alreadyCurrent(number, channel)
	}
	if ch.Rollout == nil && current != 0 {
		cur, err := s.Store.FindBundle(ctx, ext.ID, current)
		if err != nil {
			return nil, false, err
		}
		if cur.RollbackOf == number {
			return cur, false, nil // a retried or racing rollback
		}
	}
	if p, err := s.versionCeiling(ctx, ext); err != nil {
		return nil, false, err
	} else if p != nil {
		return nil, false, &betaport.Error{Code: betaport.ECONFLICT, Message: p[0].Message}
	}
	earlier, err := s.Store.BundleVersions(ctx, ext.ID)
	if err != nil {
		return nil, false, err
	}
	b := &betaport.Bundle{
		ExtensionID:     ext.ID,
		Number:          last + 1,
		Name:            old.Name,
		ManifestVersion: old.ManifestVersion,
		Size:            old.Size,
		SHA256:          old.SHA256,
		FileCount:       old.FileCount,
		Source:          "rollback",
		ReleaseNotes:    old.ReleaseNotes,
		RollbackOf:      old.Number,
		BlobKey:         old.BlobKey,
		Placement:       betaport.Placement{Channel: channel, Actor: actor},
	}
	// Testers see the version the old bundle was uploaded as.
	uploaded := old.VersionName
	if uploaded == "" {
		uploaded = old.Version
	}
	b.Version, b.VersionName = crx.ServedVersion(uploaded, earlier, b.Number)
	// The CRX embeds the service's public update URL. Without one (the
	// command line), the bundle is published without a CRX, and the
	// service builds it when it is first asked for, as for bundles from
	// before CRXs.
	if s.BaseURL != "" {
		sg, err := s.signing(ctx, ext)
		if err != nil {
			return nil, false, err
		}
		if b.CRX, _, err = s.buildCRX(ctx, ext, sg, b.BlobKey, nil, b.Version, b.VersionName); err != nil {
			return nil, false, fmt.Errorf("packing the rollback of bundle %d as a CRX: %w", number, err)
		}
	}
	published, fresh, err := s.Store.PublishRollback(ctx, b, actor)
	if b.CRX.BlobKey != "" && !fresh && (err != nil || published.CRX.BlobKey != b.CRX.BlobKey) {
		s.deleteQuietly(ctx, b.CRX.BlobKey) // built for nothing
	}
	if betaport.ErrorCode(err) == betaport.ECONFLICT {
		// A sign took the number, or a rollback to this bundle made it
		// current; Rollback looks again.
		return nil, false, raced{err}
	} else if err != nil {
		return nil, false, err
	}
	return published, fresh, nil
}

func alreadyCurrent(number int64, channel string) *betaport.Error {
	return betaport.Reasonf(betaport.ECONFLICT, betaport.ReasonAlreadyCurrent,
		"Bundle #%d is already the one testers on %s get: there is nothing to roll back. Pick an older bundle.", number, channel)
}
