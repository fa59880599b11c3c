// Package publish is Betaport's publishing pipeline: it takes an
// extension's zip through the submit flow's three calls and makes it the
// bundle testers get, with its signed CRX and update feed.
//
// One submission, top to bottom:
//
//  1. server/http/submit.go decodes each call and hands it here;
//  2. [Service.Authorize] checks the key object of calls 1 and 3, the team's
//     plan and the key's rate limit, and [Service.RequestUpload] issues an
//     upload URL (this file);
//  3. [Service.Receive] streams the PUT zip to storage, counting and hashing
//     it (upload.go; on S3 the zip goes straight to storage and sign
//     receives it);
//  4. [Service.Sign] validates the zip (package zipcheck), normalises it,
//     packs its CRX (package crx) and publishes it exactly once (sign.go).
//
// crx.go keeps the extension's signing key, rebuilds a CRX whose update URL
// changed and answers the update feed Chromium reads; sweep.go removes what
// finished or crashed submissions leave in storage.
//
// Errors a caller should show are *betaport.Error values whose message says
// what to do, with a Reason where programs tell the failure apart (and the
// zip's problems, or how long to wait); package http maps them to problems.
// Anything else is internal.
package publish

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/maypok86/otter/v2"

	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/adoption"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/keyring"
	"github.com/betaport/betaport/server/zipcheck"
)

// Submit settings, with their defaults.
const (
	defaultUploadTTL     = 15 * time.Minute
	defaultMaxUploadSize = 256 << 20
	// A busy CI may submit in bursts: 60 calls (30 submissions) at once, then
	// one call a second.
	defaultSubmitBurst = 60
	defaultSubmitEvery = time.Second
)

// Config tunes the submit flow. Zero fields take the defaults.
type Config struct {
	UploadTTL     time.Duration // how long an upload URL works
	MaxUploadSize int64         // the largest zip a PUT takes
	Burst         int           // calls per key allowed at once
	Every         time.Duration // then one call per key every Every
	Limits        zipcheck.Limits
	// TesterCopiesBytes bounds the memory testers' packed copies are kept
	// in (0: DefaultTesterCopiesBytes); WarmTesterCopies makes a bundle's
	// copies as it is published (serve sets it; tests call
	// WarmTesterCopies themselves).
	TesterCopiesBytes int64
	WarmTesterCopies  bool
}

func (c Config) withDefaults() Config {
	if c.UploadTTL <= 0 {
		c.UploadTTL = defaultUploadTTL
	}
	if c.MaxUploadSize <= 0 {
		c.MaxUploadSize = defaultMaxUploadSize
	}
	if c.Burst <= 0 {
		c.Burst = defaultSubmitBurst
	}
	if c.Every <= 0 {
		c.Every = defaultSubmitEvery
	}
	if c.Limits == (zipcheck.Limits{}) {
		c.Limits = zipcheck.DefaultLimits()
	}
	c.Limits.MaxZipSize = c.MaxUploadSize
	return c
}

// Store is what publishing reads and writes of Betaport's records.
type Store interface {
	betaport.TeamStore
	betaport.ExtensionStore
	betaport.KeyStore
	betaport.BundleStore
	betaport.UploadStore
	betaport.SigningStore
	betaport.TesterStore
	betaport.ChannelStore
}

// Service publishes bundles. Set its fields before the first call; it is
// safe for concurrent use.
type Service struct {
	Store  Store
	Blobs  *blob.Bucket
	Logger *slog.Logger
	// BaseURL is the service's public URL: upload URLs and the update URL
	// every CRX carries start with it.
	BaseURL string
	// Secret signs upload URLs on file storage. Replicas share it.
	Secret []byte
	// SigningKeys seals and opens extensions' CRX signing keys at rest.
	// Without it no CRX can be built.
	SigningKeys *keyring.Keyring
	// Config tunes the submit flow (URL expiry, size and rate limits).
	Config Config
	// OrphanGrace is the age at which the sweeper removes blobs no record
	// points to; 0 means DefaultOrphanGrace.
	OrphanGrace time.Duration
	// Now is the clock upload URLs expire by; nil means time.Now. Tests
	// move it instead of sleeping.
	Now func() time.Time
	// Adoption counts the update checks the feed answers; nil counts
	// nothing.
	Adoption *adoption.Counter

	limiterOnce sync.Once
	limiter     *keyLimiter
	signLocks   keyedMutex
	copiesOnce  sync.Once
	copies      *otter.Cache[copyKey, *Package]
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// MaxUploadSize is the largest zip a PUT takes, in bytes.
func (s *Service) MaxUploadSize() int64 { return s.Config.withDefaults().MaxUploadSize }

// HashKey is what is stored of an extension's API key.
func HashKey(apiKey string) string { return credential.HashToken(apiKey) }

var errBadKey = &betaport.Error{Code: betaport.EUNAUTHORIZED, Reason: betaport.ReasonInvalidKey,
	Message: "The extension id and API key do not match a current key: the key may have been revoked. Create a new key on the extension's settings page and use its key file."}

// Authorize authenticates calls 1 and 3 made with a key: the key, the
// team's plan and the key's rate limit. It returns the extension the key
// submits to and the key's id, which KeyUsed records once the call has
// done what it was asked (a refused call leaves the key as it was).
func (s *Service) Authorize(ctx context.Context, key api.ServiceKey) (*betaport.Extension, int64, error) {
	id, ok := api.ParseID(key.ExtensionID)
	if !ok {
		return nil, 0, errBadKey
	}
	// Unknown extension, no key, wrong key and revoked key get one answer.
	// The key is found by the hash of its secret, a random 256-bit token:
	// how long the lookup takes says nothing about any stored key.
	k, err := s.Store.FindKeyByHash(ctx, HashKey(key.APIKey))
	if betaport.ErrorCode(err) == betaport.ENOTFOUND || (err == nil && k.ExtensionID != id) {
		return nil, 0, errBadKey
	} else if err != nil {
		return nil, 0, err
	}
	ext, err := s.admit(ctx, id, "Submitting from a pipeline")
	if err != nil {
		return nil, 0, err
	}
	return ext, k.ID, nil
}

// KeyUsed records that the key keyID (from Authorize) made a call that
// succeeded.
func (s *Service) KeyUsed(ctx context.Context, keyID int64) error {
	return s.Store.KeyUsed(ctx, keyID, s.now())
}

// AuthorizeAdmin authenticates calls 1 and 3 made by an admin signed in to
// the browser, whom the caller has checked may manage the extension: the
// team's plan and the extension's rate limit apply as they do to keys.
func (s *Service) AuthorizeAdmin(ctx context.Context, extensionID int64) (*betaport.Extension, error) {
	return s.admit(ctx, extensionID, "Manual upload")
}

// admit applies what every submit call meets, however it is authorised:
// the rate limit and the Professional plan (seats never limit it).
//
// what names the way in, for the person refused ("Manual upload").
func (s *Service) admit(ctx context.Context, id int64, what string) (*betaport.Extension, error) {
	if wait := s.keyLimiter().take(id); wait > 0 {
		e := betaport.Errorf(betaport.ERATELIMITED, "Too many submit calls for this extension. Wait %d seconds, then try again.", wait)
		e.RetryAfter = time.Duration(wait) * time.Second
		return nil, e
	}
	ext, err := s.Store.FindExtension(ctx, id)
	if err != nil {
		return nil, err
	}
	team, err := s.Store.FindTeam(ctx, ext.TeamID)
	if err != nil {
		return nil, err
	}
	if team.Plan != betaport.PlanProfessional {
		return nil, betaport.Reasonf(betaport.EFORBIDDEN, betaport.ReasonPlanRequired,
			"%s needs the Professional plan. Ask an admin of %s to upgrade, then try again.", what, team.Name)
	}
	return ext, nil
}

// RequestUpload is call 1: it records a new upload of ext (superseding any
// earlier one not published) and answers the URL its zip is PUT to.
//
// notes are the release notes the bundle will carry (betaport.MaxReleaseNotes
// at most); refused, they leave the extension's uploads as they were.
func (s *Service) RequestUpload(ctx context.Context, ext *betaport.Extension, notes string) (*api.UploadURL, error) {
	return s.RequestRelease(ctx, ext, notes, betaport.Placement{})
}

// RequestRelease is RequestUpload for a bundle that goes to a channel, at
// a percentage of its testers (p's zero fields: the default channel, all
// of them). An unknown channel or a percentage outside 1–100 is refused
// here, before any zip is sent.
func (s *Service) RequestRelease(ctx context.Context, ext *betaport.Extension, notes string, p betaport.Placement) (*api.UploadURL, error) {
	if err := betaport.ValidateReleaseNotes(notes); err != nil {
		return nil, &betaport.Error{Code: betaport.EINVALID, Reason: betaport.ReasonInvalidReleaseNotes,
			Message: betaport.ErrorMessage(err), Param: "releaseNotes"}
	}
	cfg := s.Config.withDefaults()
	urlExpires := s.now().Add(cfg.UploadTTL)
	u := &betaport.Upload{ExtensionID: ext.ID, ExpiresAt: urlExpires, ReleaseNotes: notes, Channel: p.Channel, Percent: p.Percent}
	if s.Direct() {
		u.ExpiresAt = urlExpires.Add(directUploadGrace)
	}
	if err := s.Store.CreateUpload(ctx, u); err != nil {
		return nil, err
	}
	url, err := s.issueUploadURL(ctx, u, urlExpires, cfg.UploadTTL)
	if err != nil {
		return nil, err
	}
	return &api.UploadURL{URL: url, ExpiresAt: urlExpires, UploadID: u.ID, MaxSize: cfg.MaxUploadSize}, nil
}
