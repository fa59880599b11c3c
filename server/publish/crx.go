package publish

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/crx"
	"github.com/betaport/betaport/server/keyring"
)

// Self-hosted updates. Every published bundle gets a CRX3 signed with its
// extension's key, whose manifest names the extension's update URL. That URL
// carries an unguessable per-extension token, because Chromium's updater
// sends no cookies: whoever has the token (every tester who installed a CRX)
// can check for updates and fetch the current CRX, until an admin rotates it.

// signing returns ext's signing key and update token, making them the first
// time they are needed; ext.ChromeID is set from the key.
func (s *Service) signing(ctx context.Context, ext *betaport.Extension) (*betaport.Signing, error) {
	sg, err := s.Store.FindSigning(ctx, ext.ID)
	if betaport.ErrorCode(err) != betaport.ENOTFOUND {
		return sg, err
	}
	key, err := crx.GenerateKey()
	if err != nil {
		return nil, err
	}
	pem, err := crx.MarshalPrivateKey(key)
	if err != nil {
		return nil, err
	}
	if s.SigningKeys == nil {
		return nil, errNoKeyring
	}
	pem = s.SigningKeys.Seal(pem, SigningContext(ext.ID))
	id := crx.ExtensionID(crx.PublicKeyDER(&key.PublicKey))
	sg, err = s.Store.CreateSigning(ctx, &betaport.Signing{ExtensionID: ext.ID, PrivateKey: pem, UpdateToken: credential.NewToken()}, id)
	if err != nil {
		return nil, err
	}
	// A racing caller may have kept its key first: read the ID back.
	kept, err := s.Store.FindExtension(ctx, ext.ID)
	if err != nil {
		return nil, err
	}
	ext.ChromeID = kept.ChromeID
	return sg, nil
}

var errNoKeyring = errors.New("no signing keyring is configured, so signing keys can be neither sealed nor opened")

// SigningContext binds a sealed signing key to its extension's row.
func SigningContext(extensionID int64) string {
	return "extension_signing " + strconv.FormatInt(extensionID, 10)
}

// openSigningKey returns the PEM of a stored signing key. Keys stored
// before sealing existed are plaintext PEM until serve seals them at start.
func (s *Service) openSigningKey(extensionID int64, stored []byte) ([]byte, error) {
	if !keyring.IsSealed(stored) {
		return stored, nil
	}
	if s.SigningKeys == nil {
		return nil, errNoKeyring
	}
	return s.SigningKeys.Open(stored, SigningContext(extensionID))
}

// updateURL is the manifest's update_url for an extension and token.
func (s *Service) updateURL(extensionID int64, token string) string {
	return s.BaseURL + api.UpdatePrefix + strconv.FormatInt(extensionID, 10) + "/" + token
}

// updates is what an admin sees of ext's self-hosted updates.
func (s *Service) updates(ext *betaport.Extension, sg *betaport.Signing) api.Updates {
	return api.Updates{ChromeID: ext.ChromeID, UpdateURL: s.updateURL(ext.ID, sg.UpdateToken), RotatedAt: sg.RotatedAt}
}

// Updates answers ext's Chrome ID and update URL, making its signing key
// the first time.
func (s *Service) Updates(ctx context.Context, ext *betaport.Extension) (api.Updates, error) {
	sg, err := s.signing(ctx, ext)
	if err != nil {
		return api.Updates{}, err
	}
	return s.updates(ext, sg), nil
}

// RotateUpdateToken replaces ext's update token. Every copy installed from
// an earlier CRX then checks a URL that answers 404 and stops updating.
func (s *Service) RotateUpdateToken(ctx context.Context, ext *betaport.Extension) (api.Updates, error) {
	if _, err := s.signing(ctx, ext); err != nil {
		return api.Updates{}, err
	}
	if err := s.Store.RotateUpdateToken(ctx, ext.ID, credential.NewToken()); err != nil {
		return api.Updates{}, err
	}
	sg, err := s.Store.FindSigning(ctx, ext.ID)
	if err != nil {
		return api.Updates{}, err
	}
	return s.updates(ext, sg), nil
}

var errStaleUpdateURL = betaport.Errorf(betaport.ENOTFOUND,
	"This update URL is not current: the extension's update token was replaced, or the URL is wrong. Install the extension again from its Betaport builds page.")

// A Feed is whom an update URL speaks for: the extension's shared token
// (copies installed from the shared CRX, the admins' own), or one
// tester's own token (Tester is set).
type Feed struct {
	Extension *betaport.Extension
	Tester    *betaport.Tester
	// Token is the URL's token: the codebase of an update it offers is
	// under the same URL.
	Token string
}

// UpdateFeed checks the id and token of an update URL: the extension's
// shared token, or one of its testers' own. An unknown extension, one
// without a key yet and a wrong or replaced token all get one answer (the
// shared token compared in constant time; a tester's found by its hash).
func (s *Service) UpdateFeed(ctx context.Context, extensionID, token string) (*Feed, error) {
	id, ok := api.ParseID(extensionID)
	if !ok || token == "" {
		return nil, errStaleUpdateURL
	}
	feed := &Feed{Token: token}
	if strings.HasPrefix(token, testerTokenPrefix) {
		// A tester's token exists only once the extension has its key:
		// finding it is enough.
		t, err := s.Store.FindTesterByUpdateToken(ctx, id, credential.HashToken(token))
		if betaport.ErrorCode(err) == betaport.ENOTFOUND {
			return nil, errStaleUpdateURL
		} else if err != nil {
			return nil, err
		}
		feed.Tester = t
	} else {
		sg, err := s.Store.FindSigning(ctx, id)
		if betaport.ErrorCode(err) == betaport.ENOTFOUND {
			return nil, errStaleUpdateURL
		} else if err != nil {
			return nil, err
		}
		if subtle.ConstantTimeCompare([]byte(token), []byte(sg.UpdateToken)) != 1 {
			return nil, errStaleUpdateURL
		}
	}
	ext, err := s.Store.FindExtension(ctx, id)
	if err != nil {
		return nil, err
	}
	feed.Extension = ext
	return feed, nil
}

// Revoked reports whether the feed is a revoked tester's: their copy is
// told there is no update, and their CRX downloads are refused.
func (f *Feed) Revoked() bool { return f.Tester != nil && f.Tester.Status == betaport.TesterRevoked }

// UpdateCheck answers Chromium's update check of the feed's extension
// (the query ?x=id%3D<id>%26v%3D<version>…, one x per extension) with
// gupdate XML: the current bundle's CRX when it is newer than the
// installed version, never to a revoked tester, and never to a browser
// older than the bundle's minimum_chrome_version (prodversionmin).
func (s *Service) UpdateCheck(ctx context.Context, feed *Feed, rawQuery string) ([]byte, error) {
	ext := feed.Extension
	if ext.ChromeID == "" { // the feed's token implies a key: made with it
		if _, err := s.signing(ctx, ext); err != nil {
			return nil, err
		}
	}
	served, err := s.servedBundle(ctx, feed)
	if err != nil {
		return nil, err
	}
	var current *betaport.Bundle
	if served != 0 {
		if current, err = s.Store.FindBundle(ctx, ext.ID, served); err != nil {
			return nil, err
		}
	}
	checks := crx.ParseUpdateCheck(rawQuery)
	s.countCheck(ctx, feed, current, checks)
	if len(checks) == 0 { // opened by hand: say what is current
		checks = []crx.UpdateCheck{{ID: ext.ChromeID}}
	}
	apps := make([]crx.App, len(checks))
	for i, c := range checks {
		switch {
		case c.ID != ext.ChromeID:
			// This feed serves one extension; a policy may list others.
			apps[i] = crx.App{ID: c.ID, Status: crx.AppUnknown}
		case feed.Revoked() || current == nil || crx.CompareVersions(current.Version, c.Version) <= 0:
			apps[i] = crx.App{ID: c.ID} // no update
		default:
			apps[i] = crx.App{ID: c.ID, Version: current.Version, ProdVersionMin: current.MinChromeVersion,
				Codebase: s.updateURL(ext.ID, feed.Token) + "/crx/" + strconv.FormatInt(current.Number, 10)}
		}
	}
	return crx.UpdateResponse(apps...), nil
}

// servedBundle is the number of the bundle the feed offers (0: none yet):
// a tester's channel's, the rollout's when it reaches them; the default
// channel's current bundle on the shared URL, which no rollout reaches.
func (s *Service) servedBundle(ctx context.Context, feed *Feed) (int64, error) {
	if feed.Tester == nil {
		return feed.Extension.CurrentBundle, nil
	}
	c, err := s.Store.FindChannel(ctx, feed.Extension.ID, feed.Tester.Channel)
	if err != nil {
		return 0, err
	}
	return c.BundleFor(feed.Tester.ID), nil
}

// countCheck counts the check of ext among checks (a policy may list other
// extensions on the same request; they are not ours to count), by the
// version it reports. A failed count is logged: an installed copy is told
// about updates all the same.
func (s *Service) countCheck(ctx context.Context, feed *Feed, current *betaport.Bundle, checks []crx.UpdateCheck) {
	ext := feed.Extension
	if s.Adoption == nil {
		return
	}
	served := ""
	if current != nil {
		served = current.Version
	}
	for _, c := range checks {
		if c.ID != ext.ChromeID {
			continue
		}
		if err := s.Adoption.Count(ctx, ext, served, c.Version); err != nil {
			s.logger().WarnContext(ctx, "counting an update check", "extension", ext.ID, "err", err)
		}
		if feed.Tester != nil && crx.ValidVersion(c.Version) {
			// Only a version Chrome could run: anything else is not a copy
			// of the extension speaking (adoption counts it as "other").
			s.Adoption.CountTester(ext.ID, feed.Tester.ID, c.Version)
		}
		return // one check per request, however many x name it
	}
}

// CRX returns b's CRX package, building it first when it was never built,
// embeds a replaced update token, or was packed before testers' copies
// (it keeps no template for them).
func (s *Service) CRX(ctx context.Context, ext *betaport.Extension, b *betaport.Bundle) (betaport.CRX, error) {
	sg, err := s.signing(ctx, ext)
	if err != nil {
		return betaport.CRX{}, err
	}
	return s.crx(ctx, ext, sg, b)
}

func (s *Service) crx(ctx context.Context, ext *betaport.Extension, sg *betaport.Signing, b *betaport.Bundle) (betaport.CRX, error) {
	c := b.CRX
	if c.Personal() && c.TokenHash == credential.HashToken(sg.UpdateToken) {
		return c, nil
	}
	c, _, err := s.buildCRX(ctx, ext, sg, b.BlobKey, nil, b.Version, b.VersionName)
	if err != nil {
		return c, fmt.Errorf("building the CRX of bundle %d of extension %d: %w", b.Number, ext.ID, err)
	}
	if err := s.Store.SetBundleCRX(ctx, b.ID, c); err != nil {
		return c, err
	}
	if old := b.CRX.BlobKey; old != "" && old != c.BlobKey {
		s.deleteQuietly(ctx, old) // it names a replaced update URL, or has no template
	}
	return c, nil
}

// testerTokenPrefix starts every tester's update token, so that a check
// looks it up among the testers' (by its hash) and never compares it with
// the extension's: a check costs the same reads with either.
const testerTokenPrefix = "t_"

// TesterTokenContext binds a tester's sealed update token to their row.
func TesterTokenContext(testerID int64) string {
	return "tester_update " + strconv.FormatInt(testerID, 10)
}

// testerToken returns a tester's own update token, making it the first
// time: a secret of 256 bits, found by its hash, kept sealed with the
// keyring so that their CRX can be packed again for each new bundle.
func (s *Service) testerToken(ctx context.Context, t *betaport.Tester) (string, error) {
	if s.SigningKeys == nil {
		return "", errNoKeyring
	}
	sealed, err := s.Store.TesterUpdateToken(ctx, t.ID)
	if err != nil {
		return "", err
	}
	if sealed == "" {
		token := testerTokenPrefix + credential.NewToken()
		made := string(s.SigningKeys.Seal([]byte(token), TesterTokenContext(t.ID)))
		if sealed, err = s.Store.SetTesterUpdateToken(ctx, t.ID, credential.HashToken(token), made); err != nil {
			return "", err
		}
		if sealed == "" { // replaced meanwhile (a new link): theirs is made at the next ask
			return "", betaport.Errorf(betaport.ECONFLICT, "Your install link was replaced meanwhile. Open the builds page again.")
		}
	}
	token, err := s.SigningKeys.Open([]byte(sealed), TesterTokenContext(t.ID))
	if err != nil {
		return "", fmt.Errorf("tester %d's update token: %w", t.ID, err)
	}
	return string(token), nil
}

// TesterUpdateURL is the update URL a tester's installed copy checks: their
// own, made the first time it is needed.
func (s *Service) TesterUpdateURL(ctx context.Context, ext *betaport.Extension, t *betaport.Tester) (string, error) {
	token, err := s.testerToken(ctx, t)
	if err != nil {
		return "", err
	}
	return s.updateURL(ext.ID, token), nil
}

// A Package is a tester's own copy of a bundle's CRX: Header, then bytes
// [PrefixFrom, PrefixTo) of the shared package stored at BlobKey, then
// Tail. Its bytes are the same every time it is made (PKCS#1 v1.5
// signatures are deterministic), so ETag names them.
type Package struct {
	Header, Tail         []byte
	BlobKey              string
	PrefixFrom, PrefixTo int64
	Size                 int64
	ETag                 string
}

// TesterCRX makes tester t's copy of bundle b's CRX, whose manifest names
// their own update URL: the shared package's tail is read (its manifest
// entry and central directory, a few KB), rewritten, hashed from the kept
// state and signed. A revoked tester gets none (ENOTFOUND).
//
// A copy made is kept in memory (testerCopies), by bundle, tester and
// update token, and WarmTesterCopies makes the copies of a bundle just
// published: a download then costs what the shared package's does.
func (s *Service) TesterCRX(ctx context.Context, ext *betaport.Extension, b *betaport.Bundle, t *betaport.Tester) (*Package, error) {
	if t.Status == betaport.TesterRevoked || t.ExtensionID != ext.ID {
		return nil, errNoPackage
	}
	if t.UpdateTokenHash != "" {
		if p, ok := s.testerCopies().GetIfPresent(copyKey{b.ID, t.ID, t.UpdateTokenHash}); ok {
			return p, nil
		}
	}
	sg, err := s.signing(ctx, ext)
	if err != nil {
		return nil, err
	}
	c, err := s.crx(ctx, ext, sg, b)
	if err != nil {
		return nil, err
	}
	state, err := base64.StdEncoding.DecodeString(c.State)
	if err != nil {
		return nil, fmt.Errorf("bundle %d's CRX template: %w", b.ID, err)
	}
	tp := crx.Template{HeaderSize: c.HeaderSize, TailAt: c.TailAt, State: state}
	token, err := s.testerToken(ctx, t)
	if err != nil {
		return nil, err
	}
	url := s.updateURL(ext.ID, token)
	tail, err := s.Blobs.NewRangeReader(ctx, c.BlobKey, c.TailAt, c.Size-c.TailAt, nil)
	if err != nil {
		return nil, err
	}
	tailBytes, err := io.ReadAll(tail)
	tail.Close()
	if err != nil {
		return nil, err
	}
	pem, err := s.openSigningKey(ext.ID, sg.PrivateKey)
	if err != nil {
		return nil, err
	}
	key, err := crx.ParsePrivateKey(pem)
	if err != nil {
		return nil, err
	}
	shared, err := crx.TailManifest(tailBytes)
	if err != nil {
		return nil, err
	}
	manifest, err := crx.SetUpdateURL(shared, url)
	if err != nil {
		return nil, err
	}
	p, err := crx.MakePersonal(tp, tailBytes, manifest, key)
	if err != nil {
		return nil, fmt.Errorf("tester %d's copy of bundle %d: %w", t.ID, b.ID, err)
	}
	sum := sha256.Sum256([]byte(c.SHA256 + " " + credential.HashToken(url)))
	pkg := &Package{Header: p.Header, Tail: p.Tail, BlobKey: c.BlobKey, PrefixFrom: tp.HeaderSize, PrefixTo: tp.TailAt,
		Size: p.Size(tp), ETag: hex.EncodeToString(sum[:16])}
	s.testerCopies().Set(copyKey{b.ID, t.ID, credential.HashToken(token)}, pkg)
	return pkg, nil
}

var errNoPackage = betaport.Errorf(betaport.ENOTFOUND, "There is no such package.")

// ValidVersion reports whether v is a version Chrome takes in a manifest,
// like 1.2.3: what an installed copy reports as its own (feedback names
// its build by it).
func ValidVersion(v string) bool { return crx.ValidVersion(v) }
