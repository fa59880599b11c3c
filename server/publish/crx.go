package publish

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strconv"

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

// UpdateFeed checks the id and token of an update URL and returns its
// extension. An unknown extension, one without a key yet and a wrong or
// replaced token all get one answer, compared in constant time.
func (s *Service) UpdateFeed(ctx context.Context, extensionID, token string) (*betaport.Extension, error) {
	id, err := strconv.ParseInt(extensionID, 10, 64)
	var sg *betaport.Signing
	if err == nil {
		sg, err = s.Store.FindSigning(ctx, id)
		if err != nil && betaport.ErrorCode(err) != betaport.ENOTFOUND {
			return nil, err
		}
	}
	want := ""
	if sg != nil {
		want = sg.UpdateToken
	}
	if subtle.ConstantTimeCompare([]byte(token), []byte(want)) != 1 || want == "" {
		return nil, errStaleUpdateURL
	}
	return s.Store.FindExtension(ctx, id)
}

// UpdateCheck answers Chromium's update check of ext (the query
// ?x=id%3D<id>%26v%3D<version>…, one x per extension) with gupdate XML:
// the current bundle's CRX when it is newer than the installed version.
func (s *Service) UpdateCheck(ctx context.Context, ext *betaport.Extension, rawQuery string) ([]byte, error) {
	sg, err := s.signing(ctx, ext)
	if err != nil {
		return nil, err
	}
	var current *betaport.Bundle
	if ext.CurrentBundle != 0 {
		if current, err = s.Store.FindBundle(ctx, ext.ID, ext.CurrentBundle); err != nil {
			return nil, err
		}
	}
	checks := crx.ParseUpdateCheck(rawQuery)
	s.countCheck(ctx, ext, current, checks)
	if len(checks) == 0 { // opened by hand: say what is current
		checks = []crx.UpdateCheck{{ID: ext.ChromeID}}
	}
	apps := make([]crx.App, len(checks))
	for i, c := range checks {
		switch {
		case c.ID != ext.ChromeID:
			// This feed serves one extension; a policy may list others.
			apps[i] = crx.App{ID: c.ID, Status: crx.AppUnknown}
		case current == nil || crx.CompareVersions(current.Version, c.Version) <= 0:
			apps[i] = crx.App{ID: c.ID} // no update
		default:
			apps[i] = crx.App{ID: c.ID, Version: current.Version,
				Codebase: s.updateURL(ext.ID, sg.UpdateToken) + "/crx/" + strconv.FormatInt(current.Number, 10)}
		}
	}
	return crx.UpdateResponse(apps...), nil
}

// countCheck counts the check of ext among checks (a policy may list other
// extensions on the same request; they are not ours to count), by the
// version it reports. A failed count is logged: an installed copy is told
// about updates all the same.
func (s *Service) countCheck(ctx context.Context, ext *betaport.Extension, current *betaport.Bundle, checks []crx.UpdateCheck) {
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
		return // one check per request, however many x name it
	}
}

// CRX returns b's CRX package, building it first when it was never built
// or embeds a replaced update token.
func (s *Service) CRX(ctx context.Context, ext *betaport.Extension, b *betaport.Bundle) (betaport.CRX, error) {
	sg, err := s.signing(ctx, ext)
	if err != nil {
		return betaport.CRX{}, err
	}
	c := b.CRX
	if c.BlobKey != "" && c.TokenHash == credential.HashToken(sg.UpdateToken) {
		return c, nil
	}
	if c, err = s.buildCRX(ctx, ext, sg, b.BlobKey, nil, b.Version, b.VersionName); err != nil {
		return c, fmt.Errorf("building the CRX of bundle %d of extension %d: %w", b.Number, ext.ID, err)
	}
	if err := s.Store.SetBundleCRX(ctx, b.ID, c); err != nil {
		return c, err
	}
	if old := b.CRX.BlobKey; old != "" && old != c.BlobKey {
		s.deleteQuietly(ctx, old) // it names a replaced update URL
	}
	return c, nil
}
