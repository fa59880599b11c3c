package publish

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"

	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/crx"
	"github.com/betaport/betaport/server/keyring"
	"github.com/betaport/betaport/server/zipcheck"
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

var errStaleUpdateURL = api.NewProblem(http.StatusNotFound, api.ProblemNotFound,
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

// prepareCRX chooses the served version of b, a new bundle built from an
// upload, and builds its CRX, before b is published: b is numbered as the
// extension's next bundle, and publishing fails with a conflict if another
// bundle takes that number meanwhile.
func (s *Service) prepareCRX(ctx context.Context, ext *betaport.Extension, b *betaport.Bundle, local *os.File) error {
	sg, err := s.signing(ctx, ext)
	if err != nil {
		return err
	}
	last, err := s.Store.LastBundleNumber(ctx, ext.ID)
	if err != nil {
		return err
	}
	earlier, err := s.Store.BundleVersions(ctx, ext.ID)
	if err != nil {
		return err
	}
	b.Number = last + 1
	b.Version, b.VersionName = crx.ServedVersion(b.Version, earlier, b.Number)
	b.CRX, err = s.buildCRX(ctx, ext, sg, b.BlobKey, local, b.Version, b.VersionName)
	return err
}

// crxWorkPrefix names the local folders CRXs are packed in; the sweeper
// removes old ones a crash left.
const crxWorkPrefix = "betaport-crx-"

// buildCRX packs the zip stored at zipKey as a CRX3 of ext: its manifest
// gets the extension's public key, its update URL and version (and
// versionName, unless the manifest names its version itself), and the
// package is signed with the extension's key. Work files are local, so the
// zip is read from storage once and memory stays flat whatever its size;
// the CRX is stored under its own hash. local, when not nil, is the zip's
// bytes already on this machine (sign has them), so storage is not read
// again.
func (s *Service) buildCRX(ctx context.Context, ext *betaport.Extension, sg *betaport.Signing, zipKey string, local *os.File, version, versionName string) (betaport.CRX, error) {
	pem, err := s.openSigningKey(ext.ID, sg.PrivateKey)
	if err != nil {
		return betaport.CRX{}, fmt.Errorf("extension %d's signing key: %w", ext.ID, err)
	}
	key, err := crx.ParsePrivateKey(pem)
	if err != nil {
		return betaport.CRX{}, fmt.Errorf("extension %d's signing key: %w", ext.ID, err)
	}
	dir, err := os.MkdirTemp("", crxWorkPrefix)
	if err != nil {
		return betaport.CRX{}, err
	}
	defer os.RemoveAll(dir)

	bundle := local
	if bundle == nil {
		if bundle, err = os.Create(dir + "/bundle.zip"); err != nil {
			return betaport.CRX{}, err
		}
		defer bundle.Close()
		if err := s.Blobs.Download(ctx, zipKey, bundle, nil); err != nil {
			return betaport.CRX{}, err
		}
	}
	size, err := bundle.Seek(0, io.SeekEnd)
	if err != nil {
		return betaport.CRX{}, err
	}
	zr, err := zip.NewReader(bundle, size)
	if err != nil {
		return betaport.CRX{}, err
	}
	manifest, err := readManifest(zr)
	if err != nil {
		return betaport.CRX{}, err
	}
	var named struct {
		VersionName *string `json:"version_name"`
	}
	if json.Unmarshal(manifest, &named) == nil && named.VersionName != nil {
		versionName = ""
	}
	manifest, err = crx.PrepareManifest(manifest, crx.PublicKeyDER(&key.PublicKey), s.updateURL(ext.ID, sg.UpdateToken), version, versionName)
	if err != nil {
		return betaport.CRX{}, err
	}

	packed, err := os.Create(dir + "/packed.zip")
	if err != nil {
		return betaport.CRX{}, err
	}
	defer packed.Close()
	if err := crx.RewriteManifest(packed, zr, manifest); err != nil {
		return betaport.CRX{}, err
	}
	packedSize, err := packed.Seek(0, io.SeekCurrent)
	if err != nil {
		return betaport.CRX{}, err
	}
	out, err := os.Create(dir + "/bundle.crx")
	if err != nil {
		return betaport.CRX{}, err
	}
	defer out.Close()
	h := sha256.New()
	if err := crx.Write(io.MultiWriter(out, h), packed, packedSize, key); err != nil {
		return betaport.CRX{}, err
	}
	c := betaport.CRX{SHA256: hex.EncodeToString(h.Sum(nil)), TokenHash: credential.HashToken(sg.UpdateToken)}
	c.BlobKey = betaport.CRXKey(ext.ID, c.SHA256)
	if c.Size, err = out.Seek(0, io.SeekStart); err != nil {
		return betaport.CRX{}, err
	}
	err = s.Blobs.Upload(ctx, c.BlobKey, out, &blob.WriterOptions{ContentType: api.CRXContentType})
	return c, err
}

// readManifest returns the root manifest.json of a bundle's zip.
func readManifest(zr *zip.Reader) ([]byte, error) {
	for _, f := range zr.File {
		if f.Name != "manifest.json" {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		data, err := io.ReadAll(io.LimitReader(rc, 4<<20))
		// The builder accepts a byte order mark and comments, as Chrome
		// does; the rewritten manifest has neither.
		return zipcheck.StandardManifest(data), err
	}
	return nil, errors.New("the bundle has no manifest.json at its root")
}
