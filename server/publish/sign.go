package publish

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/crx"
	"github.com/betaport/betaport/server/zipcheck"
)

// Sign is call 3: it validates the zip of ext's latest upload and
// publishes it, exactly once: a retried sign answers the same bundle.
func (s *Service) Sign(ctx context.Context, ext *betaport.Extension) (*betaport.Bundle, error) {
	// Signs of one extension take turns on this replica: a retried sign
	// then finds the upload published instead of building the same bundle
	// key at once, which file storage cannot write concurrently (its
	// attributes file is not replaced atomically). Across replicas the
	// database decides, on storage that writes objects atomically (S3).
	unlock, err := s.signLocks.lock(ctx, ext.ID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	u, err := s.Store.LatestUpload(ctx, ext.ID)
	if betaport.ErrorCode(err) == betaport.ENOTFOUND {
		return nil, betaport.Reasonf(betaport.ECONFLICT, betaport.ReasonNoUpload,
			"There is nothing to sign: request an upload URL (POST /api/submit/upload) and PUT the zip to it first.")
	} else if err != nil {
		return nil, err
	}
	src := uploadBlobKey(u.ID)
	dst := betaport.BundleKey(ext.ID, fmt.Sprintf("upload-%d", u.ID))
	if s.Direct() && (u.State == betaport.UploadRequested || u.State == betaport.UploadReceived) {
		// The zip went straight to storage: receive it now, as the PUT
		// handler does on file storage.
		d, refused, err := s.receiveDirect(ctx, u)
		if d != nil && d.snapshot != "" {
			defer s.deleteQuietly(ctx, d.snapshot)
		}
		switch {
		case refused != nil:
			return nil, refused
		case gcerrors.Code(err) == gcerrors.NotFound:
			// A racing sign published this upload and removed its source
			// meanwhile: answer as a retried sign does, from the upload's
			// state now.
			if u, err = s.Store.FindUpload(ctx, u.ID); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, err
		default:
			u, src, dst = d.upload, d.source, d.bundleKey
		}
	}
	switch u.State {
	case betaport.UploadRequested:
		if s.now().Before(s.urlExpiry(u)) {
			return nil, betaport.Reasonf(betaport.ECONFLICT, betaport.ReasonZipNotReceived,
				"The zip has not arrived yet: PUT it to the upload URL, then sign.")
		}
		fallthrough
	case betaport.UploadExpired:
		return nil, betaport.Reasonf(betaport.ECONFLICT, betaport.ReasonUploadExpired,
			"The upload URL expired before its zip arrived. Request a new one and upload again.")
	case betaport.UploadRejected:
		return nil, rejected(u.Problems)
	case betaport.UploadPublished:
		b, err := s.Store.FindBundle(ctx, ext.ID, u.BundleNumber)
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	if p, err := s.versionCeiling(ctx, ext); p != nil || err != nil {
		if err == nil {
			err = s.Store.RejectUpload(ctx, u.ID, p)
		}
		if err != nil {
			return nil, err
		}
		return nil, rejected(p)
	}
	// The zip is read from storage once, into a work folder: validating
	// it inflates every entry, and its CRX is packed from the same copy.
	work, err := os.MkdirTemp("", crxWorkPrefix)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	b, local, problems, err := s.build(ctx, ext, u, src, dst, work)
	if local != nil {
		defer local.Close()
	}
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		if err := s.Store.RejectUpload(ctx, u.ID, problems); err != nil {
			return nil, err
		}
		return nil, rejected(problems)
	}
	// From here b's zip is in storage (and its CRX, once packed): sign
	// leaves them there only if a bundle record points to them, so a sign
	// that fails, however often it is retried, leaves nothing behind.
	published, fresh, err := s.publishBuilt(ctx, ext, u, b, local)
	if err != nil || !fresh {
		s.discardUnpublished(ctx, u, b)
	}
	if err != nil {
		return nil, err
	}
	if fresh {
		// The bundle has its own copy now: keep the bytes once.
		if s.Direct() {
			s.deleteQuietly(ctx, uploadBlobKey(u.ID))
		} else {
			s.deleteQuietly(ctx, src)
		}
		s.warmAfterPublish(ext, published)
	}
	return published, nil
}

// publishBuilt packs b, built from upload u, as a CRX and publishes it.
// fresh is false when another sign published u first; published is then
// that sign's bundle.
func (s *Service) publishBuilt(ctx context.Context, ext *betaport.Extension, u *betaport.Upload, b *betaport.Bundle, local *os.File) (published *betaport.Bundle, fresh bool, err error) {
	if err := s.prepareCRX(ctx, ext, b, local); err != nil {
		return nil, false, fmt.Errorf("packing upload %d as a CRX: %w", u.ID, err)
	}
	return s.Store.PublishUpload(ctx, u.ID, b)
}

// discardUnpublished deletes the zip and CRX a sign of upload u stored for
// b, unless the bundle u was published as points to them: a racing sign
// that won may have written the same keys (file storage names a bundle's
// zip after its upload, and a CRX after its hash), and a publish that
// failed may still have committed. It asks the store rather than trusting
// the failed call; should that fail too, the blobs are left to the
// sweeper, which removes what no record points to.
func (s *Service) discardUnpublished(ctx context.Context, u *betaport.Upload, b *betaport.Bundle) {
	ctx = context.WithoutCancel(ctx)
	var kept *betaport.Bundle
	now, err := s.Store.FindUpload(ctx, u.ID)
	if err == nil && now.State == betaport.UploadPublished {
		kept, err = s.Store.FindBundle(ctx, u.ExtensionID, now.BundleNumber)
	}
	if err != nil {
		s.logger().WarnContext(ctx, "a failed sign's blobs are left to the sweeper", "upload", u.ID, "err", err)
		return
	}
	for _, key := range []string{b.BlobKey, b.CRX.BlobKey} {
		if key != "" && (kept == nil || (key != kept.BlobKey && key != kept.CRX.BlobKey)) {
			s.deleteQuietly(ctx, key)
		}
	}
}

// versionCeiling refuses a sign once the extension has served the highest
// version Chrome accepts: the bundle would be served under that same
// version, and no installed copy would ever receive it.
func (s *Service) versionCeiling(ctx context.Context, ext *betaport.Extension) ([]betaport.ZipProblem, error) {
	earlier, err := s.Store.BundleVersions(ctx, ext.ID)
	if err != nil || !crx.Exhausted(earlier) {
		return nil, err
	}
	return []betaport.ZipProblem{{Code: betaport.ZipProblemVersionExhausted, Path: zipcheck.ManifestName,
		Message: "This extension has already served version 65535.65535.65535.65535, the highest Chrome accepts, so installed copies can never receive another update. Create a new extension in Betaport, publish there, and ask testers to install it from its page."}}, nil
}

// Lint runs on a zip every check a sign runs on its upload's (all but the
// extension's own state: a version ceiling reached), and returns what it
// read or the problems a sign would refuse it with. betaport lint runs it
// on a file, without a server.
func Lint(r io.ReaderAt, size int64, limits zipcheck.Limits) (*zipcheck.Result, []betaport.ZipProblem, error) {
	res, err := zipcheck.Check(r, size, limits)
	if err != nil || res.OK() {
		return res, nil, err
	}
	problems := make([]betaport.ZipProblem, len(res.Problems))
	for i, p := range res.Problems {
		problems[i] = betaport.ZipProblem{Code: p.Code, Path: p.Path, Message: p.Message}
	}
	return res, problems, nil
}

// rejected is the error a sign answers for a zip it did not publish.
func rejected(problems []betaport.ZipProblem) *betaport.Error {
	e := betaport.Reasonf(betaport.EINVALID, betaport.ReasonInvalidZip,
		"The zip was not published: %d problem(s) to fix, listed in problems. Fix them, then upload and sign again.", len(problems))
	e.Problems = problems
	return e
}

// build validates an upload's zip, every entry inflated, then stores the
// bundle immutably (normalised when the manifest sat in one top folder). It
// returns the bundle to publish with a local copy of its zip (in work), or
// the problems found.
//
// src is where the upload's zip is read from and dst where the bundle's is
// written.
func (s *Service) build(ctx context.Context, ext *betaport.Extension, u *betaport.Upload, src, dst, work string) (*betaport.Bundle, *os.File, []betaport.ZipProblem, error) {
	limits := s.Config.withDefaults().Limits
	maxZip := limits.MaxZipSize
	if maxZip <= 0 {
		maxZip = zipcheck.DefaultLimits().MaxZipSize
	}
	var ra io.ReaderAt = &blobReaderAt{ctx: ctx, bucket: s.Blobs, key: src}
	var local *os.File
	closeLocal := func() {
		if local != nil {
			local.Close()
		}
	}
	fail := func(err error) (*betaport.Bundle, *os.File, []betaport.ZipProblem, error) {
		closeLocal()
		return nil, nil, nil, err
	}
	if u.Size <= maxZip {
		// One read of the whole zip, to a local copy: what is validated,
		// hashed, packed and published is this copy, whatever happens to
		// storage meanwhile. (An oversized zip is refused from its size,
		// without being read.)
		f, err := os.Create(filepath.Join(work, "upload.zip"))
		if err != nil {
			return fail(err)
		}
		ra, local = f, f
		h := sha256.New()
		cw := &countingWriter{w: io.MultiWriter(f, h)}
		if err := s.Blobs.Download(ctx, src, cw, nil); gcerrors.Code(err) == gcerrors.NotFound {
			// Received, but its zip is not in storage (a restore from a
			// backup, which keeps no unpublished zip): start again.
			return fail(betaport.Reasonf(betaport.ECONFLICT, betaport.ReasonUploadExpired,
				"This upload's zip is no longer stored (was the service restored from a backup?). Request a new upload URL and upload again."))
		} else if err != nil {
			return fail(err)
		}
		if sum := hex.EncodeToString(h.Sum(nil)); cw.n != u.Size || sum != u.SHA256 {
			// Receive and sign take turns, so this is storage changed
			// behind the service's back: publish nothing.
			return fail(fmt.Errorf("upload %d: its stored zip (%d bytes, SHA-256 %s) is not the one received (%d bytes, %s)", u.ID, cw.n, sum, u.Size, u.SHA256))
		}
	}
	res, problems, err := Lint(ra, u.Size, limits)
	if err != nil {
		return fail(fmt.Errorf("reading upload %d: %w", u.ID, err))
	}
	if len(problems) > 0 {
		closeLocal()
		return nil, nil, problems, nil
	}
	b := &betaport.Bundle{
		ExtensionID:     ext.ID,
		Name:            res.Manifest.Name,
		Version:         res.Manifest.Version,
		ManifestVersion: res.Manifest.ManifestVersion,
		FileCount:       res.FileCount,
		Source:          "upload",
		Size:            u.Size,
		SHA256:          u.SHA256,
		ReleaseNotes:    u.ReleaseNotes,
	}
	b.BlobKey = dst
	if res.Prefix == "" {
		if err := s.storeLocal(ctx, b.BlobKey, local); err != nil {
			return fail(err)
		}
		return b, local, nil, nil
	}
	// Normalise: the manifest moves to the root, and the served bytes (so
	// their size and hash, and the CRX) are the normalised zip's.
	normalised, err := os.Create(filepath.Join(work, "bundle.zip"))
	if err != nil {
		return fail(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bw, err := s.Blobs.NewWriter(wctx, b.BlobKey, &blob.WriterOptions{ContentType: api.ZipContentType})
	if err != nil {
		normalised.Close()
		return fail(err)
	}
	h := sha256.New()
	cw := &countingWriter{w: io.MultiWriter(bw, h, normalised)}
	if err := zipcheck.Normalize(cw, ra, u.Size, res.Prefix); err != nil {
		cancel()
		bw.Close()
		normalised.Close()
		return fail(err)
	}
	if err := bw.Close(); err != nil {
		normalised.Close()
		s.deleteQuietly(ctx, b.BlobKey) // should the storage have kept part of it
		return fail(err)
	}
	closeLocal() // the upload's copy: the CRX is packed from the normalised one
	b.Size, b.SHA256 = cw.n, hex.EncodeToString(h.Sum(nil))
	return b, normalised, nil, nil
}

// storeLocal writes the local copy f to key, as the bundle's zip.
func (s *Service) storeLocal(ctx context.Context, key string, f *os.File) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bw, err := s.Blobs.NewWriter(wctx, key, &blob.WriterOptions{ContentType: api.ZipContentType})
	if err != nil {
		return err
	}
	if _, err := io.Copy(bw, f); err != nil {
		cancel() // before Close, so that nothing of it is kept
		bw.Close()
		return err
	}
	return bw.Close()
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
	b.CRX, b.MinChromeVersion, err = s.buildCRX(ctx, ext, sg, b.BlobKey, local, b.Version, b.VersionName)
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
func (s *Service) buildCRX(ctx context.Context, ext *betaport.Extension, sg *betaport.Signing, zipKey string, local *os.File, version, versionName string) (c betaport.CRX, minChrome string, err error) {
	pem, err := s.openSigningKey(ext.ID, sg.PrivateKey)
	if err != nil {
		return c, "", fmt.Errorf("extension %d's signing key: %w", ext.ID, err)
	}
	key, err := crx.ParsePrivateKey(pem)
	if err != nil {
		return c, "", fmt.Errorf("extension %d's signing key: %w", ext.ID, err)
	}
	dir, err := os.MkdirTemp("", crxWorkPrefix)
	if err != nil {
		return c, "", err
	}
	defer os.RemoveAll(dir)

	bundle := local
	if bundle == nil {
		if bundle, err = os.Create(dir + "/bundle.zip"); err != nil {
			return c, "", err
		}
		defer bundle.Close()
		if err := s.Blobs.Download(ctx, zipKey, bundle, nil); err != nil {
			return c, "", err
		}
	}
	size, err := bundle.Seek(0, io.SeekEnd)
	if err != nil {
		return c, "", err
	}
	zr, err := zip.NewReader(bundle, size)
	if err != nil {
		return c, "", err
	}
	manifest, err := readManifest(zr)
	if err != nil {
		return c, "", err
	}
	var named struct {
		VersionName *string `json:"version_name"`
		MinChrome   string  `json:"minimum_chrome_version"`
	}
	if json.Unmarshal(manifest, &named) == nil && named.VersionName != nil {
		versionName = ""
	}
	if crx.ValidVersion(named.MinChrome) {
		minChrome = named.MinChrome
	}
	manifest, err = crx.PrepareManifest(manifest, crx.PublicKeyDER(&key.PublicKey), s.updateURL(ext.ID, sg.UpdateToken), version, versionName)
	if err != nil {
		return c, "", err
	}

	packed, err := os.Create(dir + "/packed.zip")
	if err != nil {
		return c, "", err
	}
	defer packed.Close()
	lastEntryAt, err := crx.RewriteManifest(packed, zr, manifest)
	if err != nil {
		return c, "", err
	}
	packedSize, err := packed.Seek(0, io.SeekCurrent)
	if err != nil {
		return c, "", err
	}
	out, err := os.Create(dir + "/bundle.crx")
	if err != nil {
		return c, "", err
	}
	defer out.Close()
	h := sha256.New()
	tp, err := crx.WritePackage(io.MultiWriter(out, h), packed, packedSize, lastEntryAt, key)
	if err != nil {
		return c, "", err
	}
	c = betaport.CRX{SHA256: hex.EncodeToString(h.Sum(nil)), TokenHash: credential.HashToken(sg.UpdateToken),
		HeaderSize: tp.HeaderSize, TailAt: tp.TailAt, State: base64.StdEncoding.EncodeToString(tp.State)}
	c.BlobKey = betaport.CRXKey(ext.ID, c.SHA256)
	// The package's size is where writing it ended; then read it from the
	// start to store it.
	if c.Size, err = out.Seek(0, io.SeekCurrent); err != nil {
		return c, "", err
	}
	if _, err = out.Seek(0, io.SeekStart); err != nil {
		return c, "", err
	}
	err = s.Blobs.Upload(ctx, c.BlobKey, out, &blob.WriterOptions{ContentType: api.CRXContentType})
	return c, minChrome, err
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

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// blobReaderAt reads a blob with ranged reads, so validating a zip reads its
// central directory and manifest, not the whole object.
type blobReaderAt struct {
	ctx    context.Context
	bucket *blob.Bucket
	key    string
}

func (b *blobReaderAt) ReadAt(p []byte, off int64) (int, error) {
	r, err := b.bucket.NewRangeReader(b.ctx, b.key, off, int64(len(p)), nil)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	n, err := io.ReadFull(r, p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	return n, err
}

// DefaultLimits are the limits a sign checks a zip against when the
// service sets none (serve's defaults): what betaport lint checks.
func DefaultLimits() zipcheck.Limits { return Config{}.withDefaults().Limits }
