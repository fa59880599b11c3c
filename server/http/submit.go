package http

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
	"golang.org/x/time/rate"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/server/auth"
	"github.com/betaport/betaport/server/betaport"
	"github.com/betaport/betaport/server/zipcheck"
	"github.com/betaport/betaport/server/crx"
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

// SubmitConfig tunes the submit flow. Zero fields take the defaults.
type SubmitConfig struct {
	UploadTTL     time.Duration // how long an upload URL works
	MaxUploadSize int64         // the largest zip a PUT takes
	Burst         int           // calls per key allowed at once
	Every         time.Duration // then one call per key every Every
	Limits        zipcheck.Limits
}

func (c SubmitConfig) withDefaults() SubmitConfig {
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

// HashKey is what is stored of an extension's API key.
func HashKey(apiKey string) string { return auth.HashToken(apiKey) }

var errBadKey = &api.Problem{Type: api.ProblemInvalidKey, Status: http.StatusUnauthorized,
	Detail: "The extension id and API key do not match a current key. Download a new key file from the extension's settings page; downloading one replaces the old key."}

// submitKey authenticates calls 1 and 3: the key object in the body, the
// team's plan and the key's rate limit. It answers the problem itself.
func (s *Server) submitKey(w http.ResponseWriter, r *http.Request) (*betaport.Extension, bool) {
	var raw map[string]json.RawMessage
	if !s.readJSON(w, r, &raw) {
		return nil, false
	}
	if _, wrapped := raw["service"]; wrapped && raw["extensionId"] == nil {
		writeProblem(w, &api.Problem{Type: api.ProblemBadRequest, Status: http.StatusBadRequest, Param: "service",
			Detail: `This is the whole key file. Send only the object under "service": {"extensionId": …, "apiKey": …}.`})
		return nil, false
	}
	for name := range raw {
		if name != "extensionId" && name != "apiKey" {
			writeProblem(w, &api.Problem{Type: api.ProblemBadRequest, Status: http.StatusBadRequest, Param: shorten(name, 64),
				Detail: fmt.Sprintf("The key object has an unknown field %s. Send only the key file's service object: {\"extensionId\": …, \"apiKey\": …}.", strconv.Quote(shorten(name, 64)))})
			return nil, false
		}
	}
	var key api.ServiceKey
	for _, f := range []struct {
		name string
		dst  *string
	}{{"extensionId", &key.ExtensionID}, {"apiKey", &key.APIKey}} {
		v, ok := raw[f.name]
		if ok && json.Unmarshal(v, f.dst) != nil {
			var n json.Number
			if json.Unmarshal(v, &n) == nil { // an id sent as a number
				*f.dst, ok = n.String(), true
			} else {
				ok = false
			}
		}
		if !ok || *f.dst == "" {
			writeProblem(w, &api.Problem{Type: api.ProblemBadRequest, Status: http.StatusBadRequest, Param: f.name,
				Detail: fmt.Sprintf("%s is missing. Send the key file's service object: {\"extensionId\": …, \"apiKey\": …}.", f.name)})
			return nil, false
		}
	}
	id, err := strconv.ParseInt(key.ExtensionID, 10, 64)
	if err != nil || id <= 0 {
		writeProblem(w, errBadKey)
		return nil, false
	}
	ctx := r.Context()
	stored, err := s.Store.ExtensionKey(ctx, id)
	if err != nil && betaport.ErrorCode(err) != betaport.ENOTFOUND {
		s.Error(w, r, err)
		return nil, false
	}
	// Unknown extension, no key, wrong key and rotated key all compare a
	// hash in constant time and get one answer.
	given := HashKey(key.APIKey)
	if stored == "" {
		stored = strings.Repeat("0", len(given))
	}
	if subtle.ConstantTimeCompare([]byte(given), []byte(stored)) != 1 || err != nil {
		writeProblem(w, errBadKey)
		return nil, false
	}
	if wait := s.submitLimiter().take(id); wait > 0 {
		p := problem(http.StatusTooManyRequests, api.ProblemTooManyRequests,
			fmt.Sprintf("Too many submit calls for this key. Wait %d seconds, then try again.", wait))
		p.RetryAfter = wait
		writeProblem(w, p)
		return nil, false
	}
	ext, err := s.Store.FindExtension(ctx, id)
	if err != nil {
		s.Error(w, r, err)
		return nil, false
	}
	team, err := s.Store.FindTeam(ctx, ext.TeamID)
	if err != nil {
		s.Error(w, r, err)
		return nil, false
	}
	if team.Plan != api.PlanProfessional {
		writeProblem(w, problem(http.StatusForbidden, api.ProblemPlanRequired,
			"Manual upload needs the Professional plan. Ask an admin of "+team.Name+" to upgrade, then try again."))
		return nil, false
	}
	return ext, true
}

// handleSubmitUpload is call 1: issue an upload URL.
func (s *Server) handleSubmitUpload(w http.ResponseWriter, r *http.Request, _ *subject) {
	ext, ok := s.submitKey(w, r)
	if !ok {
		return
	}
	cfg := s.Submit.withDefaults()
	urlExpires := s.now().Add(cfg.UploadTTL)
	u := &betaport.Upload{ExtensionID: ext.ID, ExpiresAt: urlExpires}
	if s.uploadsDirect() {
		u.ExpiresAt = urlExpires.Add(directUploadGrace)
	}
	if err := s.Store.CreateUpload(r.Context(), u); err != nil {
		s.Error(w, r, err)
		return
	}
	url, err := s.issueUploadURL(r.Context(), u, urlExpires, cfg.UploadTTL)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, api.UploadURL{
		URL:       url,
		ExpiresAt: urlExpires,
		UploadID:  u.ID,
		MaxSize:   cfg.MaxUploadSize,
	})
}

// uploadBlobKey is where an upload's zip is kept until it is published.
func uploadBlobKey(id int64) string { return "uploads/" + strconv.FormatInt(id, 10) + ".zip" }

// handleUploadPut is call 2: the zip streams to blob storage while its size
// and SHA-256 are computed; it becomes visible only when complete.
func (s *Server) handleUploadPut(w http.ResponseWriter, r *http.Request, _ *subject) {
	if s.uploadsDirect() {
		writeProblem(w, problem(http.StatusForbidden, api.ProblemBadSignature,
			"This service takes zips straight into its storage: PUT the zip to the URL that POST /api/submit/upload answered."))
		return
	}
	id, err := strconv.ParseInt(r.PathValue("upload"), 10, 64)
	if err != nil || id <= 0 {
		writeProblem(w, problem(http.StatusForbidden, api.ProblemBadSignature, "This is not an upload URL Betaport gave out."))
		return
	}
	if p := s.checkUploadURL(r, id); p != nil {
		writeProblem(w, p)
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != api.ZipContentType {
		writeProblem(w, problem(http.StatusUnsupportedMediaType, api.ProblemUnsupportedMedia,
			"Send the zip with the header Content-Type: application/zip."))
		return
	}
	ctx := r.Context()
	u, err := s.Store.FindUpload(ctx, id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if u.State != betaport.UploadRequested && u.State != betaport.UploadReceived {
		writeProblem(w, problem(http.StatusConflict, api.ProblemAlreadyDone,
			"This upload is "+u.State+" and takes no more bytes. Request a new upload URL to submit another zip."))
		return
	}
	cfg := s.Submit.withDefaults()
	if r.ContentLength > cfg.MaxUploadSize {
		writeProblem(w, tooLarge(cfg.MaxUploadSize))
		return
	}
	size, sum, p, err := s.storeZip(ctx, uploadBlobKey(id), r.Body, cfg.MaxUploadSize)
	if p != nil {
		writeProblem(w, p)
		return
	} else if isTimeout(err) {
		t := s.Timeouts.withDefaults()
		writeProblem(w, problem(http.StatusRequestTimeout, api.ProblemRequestTimeout,
			fmt.Sprintf("The zip arrived slower than %d KiB/s, so the upload was stopped and nothing was kept. Send it again to the same URL, from a faster connection.", t.UploadMinRate>>10)))
		return
	} else if err != nil {
		// The client went away or storage failed: nothing was kept, and the
		// upload still waits for its zip.
		s.Logger.WarnContext(ctx, "upload not stored", "upload", id, "err", err)
		writeProblem(w, problem(http.StatusBadRequest, api.ProblemBadRequest,
			"The upload did not complete, so nothing was kept. Send the zip again to the same URL."))
		return
	}
	if err := s.Store.ReceiveUpload(ctx, id, size, sum); err != nil {
		s.Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// uploadMethodNotAllowed answers any method but PUT on an upload URL.
func uploadMethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", uploadMethod)
	writeProblem(w, problem(http.StatusMethodNotAllowed, api.ProblemMethodNotAllowed, "Upload the zip with PUT, to the URL exactly as given."))
}

func tooLarge(limit int64) *api.Problem {
	return problem(http.StatusRequestEntityTooLarge, api.ProblemTooLarge,
		fmt.Sprintf("The zip is larger than %d MiB, the most Betaport takes. Make the bundle smaller.", limit>>20))
}

var zipSignatures = [][]byte{[]byte("PK\x03\x04"), []byte("PK\x05\x06")}

// storeZip streams body into key, computing size and SHA-256 on the way. A
// problem (too large, not a zip) or an error aborts the write: gocloud
// discards a write whose context is cancelled before Close, so nothing of
// it becomes visible.
func (s *Server) storeZip(ctx context.Context, key string, body io.Reader, limit int64) (int64, string, *api.Problem, error) {
	head := make([]byte, 4)
	n, err := io.ReadFull(body, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return 0, "", nil, err
	}
	if !isZipStart(head[:n]) {
		p := problem(http.StatusUnprocessableEntity, api.ProblemNotAZip,
			"The body is not a zip (it does not start with a zip signature). Upload the extension's .zip file.")
		// The same list sign answers with, so a pipeline reads one shape.
		p.Problems = []api.ZipProblem{{Code: zipcheck.CodeNotAZip,
			Message: "The file is not a zip archive, or it is damaged. Upload the extension as a .zip file."}}
		return 0, "", p, nil
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bw, err := s.Blobs.NewWriter(wctx, key, &blob.WriterOptions{ContentType: api.ZipContentType})
	if err != nil {
		return 0, "", nil, err
	}
	h := sha256.New()
	counted := &countingReader{r: io.MultiReader(bytes.NewReader(head[:n]), body), limit: limit, h: h}
	if _, err := io.Copy(bw, counted); err != nil {
		cancel()
		bw.Close()
		if counted.over {
			return 0, "", tooLarge(limit), nil
		}
		return 0, "", nil, err
	}
	if err := bw.Close(); err != nil {
		return 0, "", nil, err
	}
	return counted.n, hex.EncodeToString(h.Sum(nil)), nil, nil
}

func isZipStart(b []byte) bool {
	for _, sig := range zipSignatures {
		if bytes.Equal(b, sig) {
			return true
		}
	}
	return false
}

// countingReader hashes and counts what it reads, failing past limit.
type countingReader struct {
	r     io.Reader
	n     int64
	limit int64
	h     hash.Hash
	over  bool
}

var errTooLarge = errors.New("body over the size limit")

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.h.Write(p[:n])
	if c.n > c.limit {
		c.over = true
		return n, errTooLarge
	}
	return n, err
}

// handleSubmitSign is call 3: validate the latest upload's zip and publish it.
func (s *Server) handleSubmitSign(w http.ResponseWriter, r *http.Request, _ *subject) {
	ext, ok := s.submitKey(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	// Signs of one extension take turns on this replica: a retried sign
	// then finds the upload published instead of building the same bundle
	// key at once, which file storage cannot write concurrently (its
	// attributes file is not replaced atomically). Across replicas the
	// database decides, on storage that writes objects atomically (S3).
	unlock, err := s.signLocks.lock(ctx, ext.ID)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	defer unlock()
	u, err := s.Store.LatestUpload(ctx, ext.ID)
	if betaport.ErrorCode(err) == betaport.ENOTFOUND {
		writeProblem(w, problem(http.StatusConflict, api.ProblemNoUpload,
			"There is nothing to sign: request an upload URL (POST /api/submit/upload) and PUT the zip to it first."))
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	src := uploadBlobKey(u.ID)
	dst := betaport.BundleKey(ext.ID, fmt.Sprintf("upload-%d", u.ID))
	if s.uploadsDirect() && (u.State == betaport.UploadRequested || u.State == betaport.UploadReceived) {
		// The zip went straight to storage: receive it now, as the PUT
		// handler does on file storage.
		d, p, err := s.receiveDirect(ctx, u)
		if d != nil && d.snapshot != "" {
			defer s.deleteQuietly(ctx, d.snapshot)
		}
		switch {
		case p != nil:
			writeProblem(w, p)
			return
		case gcerrors.Code(err) == gcerrors.NotFound:
			// A racing sign published this upload and removed its source
			// meanwhile: answer as a retried sign does, from the upload's
			// state now.
			if u, err = s.Store.FindUpload(ctx, u.ID); err != nil {
				s.Error(w, r, err)
				return
			}
		case err != nil:
			s.Error(w, r, err)
			return
		default:
			u, src, dst = d.upload, d.source, d.bundleKey
		}
	}
	switch u.State {
	case betaport.UploadRequested:
		if s.now().Before(s.urlExpiry(u)) {
			writeProblem(w, problem(http.StatusConflict, api.ProblemZipNotReceived,
				"The zip has not arrived yet: PUT it to the upload URL, then sign."))
			return
		}
		fallthrough
	case betaport.UploadExpired:
		writeProblem(w, problem(http.StatusGone, api.ProblemUploadExpired,
			"The upload URL expired before its zip arrived. Request a new one and upload again."))
		return
	case betaport.UploadRejected:
		s.writeRejected(w, u.Problems)
		return
	case betaport.UploadPublished:
		b, err := s.Store.FindBundle(ctx, ext.ID, u.BundleNumber)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		writeJSON(w, r, http.StatusOK, b.Bundle)
		return
	}
	if p, err := s.versionCeiling(ctx, ext); p != nil || err != nil {
		if err == nil {
			err = s.Store.RejectUpload(ctx, u.ID, p)
		}
		if err != nil {
			s.Error(w, r, err)
			return
		}
		s.writeRejected(w, p)
		return
	}
	// The zip is read from storage once, into a work folder: validating
	// it inflates every entry, and its CRX is packed from the same copy.
	work, err := os.MkdirTemp("", crxWorkPrefix)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	defer os.RemoveAll(work)
	b, local, problems, err := s.build(ctx, ext, u, src, dst, work)
	if local != nil {
		defer local.Close()
	}
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if len(problems) > 0 {
		if err := s.Store.RejectUpload(ctx, u.ID, problems); err != nil {
			s.Error(w, r, err)
			return
		}
		s.writeRejected(w, problems)
		return
	}
	if err := s.prepareCRX(ctx, ext, b, local); err != nil {
		s.Error(w, r, fmt.Errorf("packing upload %d as a CRX: %w", u.ID, err))
		return
	}
	published, fresh, err := s.Store.PublishUpload(ctx, u.ID, b)
	if !fresh && (err != nil || published.CRX.BlobKey != b.CRX.BlobKey) {
		s.deleteQuietly(ctx, b.CRX.BlobKey) // built for nothing
	}
	if s.uploadsDirect() {
		s.afterDirectPublish(ctx, u, b, published, fresh, err)
	} else if err == nil && fresh {
		// The bundle has its own copy now: keep the bytes once.
		s.deleteQuietly(ctx, src)
	}
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, published.Bundle)
}

// versionCeiling refuses a sign once the extension has served the highest
// version Chrome accepts: the bundle would be served under that same
// version, and no installed copy would ever receive it.
func (s *Server) versionCeiling(ctx context.Context, ext *betaport.Extension) ([]api.ZipProblem, error) {
	earlier, err := s.Store.BundleVersions(ctx, ext.ID)
	if err != nil || !crx.Exhausted(earlier) {
		return nil, err
	}
	return []api.ZipProblem{{Code: api.ZipProblemVersionExhausted, Path: zipcheck.ManifestName,
		Message: "This extension has already served version 65535.65535.65535.65535, the highest Chrome accepts, so installed copies can never receive another update. Create a new extension in Betaport, publish there, and ask testers to install it from its page."}}, nil
}

func (s *Server) writeRejected(w http.ResponseWriter, problems []api.ZipProblem) {
	p := problem(http.StatusUnprocessableEntity, api.ProblemInvalidZip,
		fmt.Sprintf("The zip was not published: %d problem(s) to fix, listed in problems. Fix them, then upload and sign again.", len(problems)))
	p.Problems = problems
	writeProblem(w, p)
}

// build validates an upload's zip, every entry inflated, then stores the
// bundle immutably (normalised when the manifest sat in one top folder). It
// returns the bundle to publish with a local copy of its zip (in work), or
// the problems found.
//
// src is where the upload's zip is read from and dst where the bundle's is
// written.
func (s *Server) build(ctx context.Context, ext *betaport.Extension, u *betaport.Upload, src, dst, work string) (*betaport.Bundle, *os.File, []api.ZipProblem, error) {
	limits := s.Submit.withDefaults().Limits
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
	fail := func(err error) (*betaport.Bundle, *os.File, []api.ZipProblem, error) {
		closeLocal()
		return nil, nil, nil, err
	}
	if u.Size <= maxZip {
		// One read of the whole zip, to a local copy. (An oversized zip is
		// refused from its size, without being read.)
		f, err := os.Create(filepath.Join(work, "upload.zip"))
		if err != nil {
			return fail(err)
		}
		ra, local = f, f
		if err := s.Blobs.Download(ctx, src, f, nil); err != nil {
			return fail(err)
		}
	}
	res, err := zipcheck.Check(ra, u.Size, limits)
	if err != nil {
		return fail(fmt.Errorf("reading upload %d: %w", u.ID, err))
	}
	if !res.OK() {
		problems := make([]api.ZipProblem, len(res.Problems))
		for i, p := range res.Problems {
			problems[i] = api.ZipProblem{Code: p.Code, Path: p.Path, Message: p.Message}
		}
		closeLocal()
		return nil, nil, problems, nil
	}
	b := &betaport.Bundle{Bundle: api.Bundle{
		ExtensionID:     ext.ID,
		Name:            res.Manifest.Name,
		Version:         res.Manifest.Version,
		ManifestVersion: res.Manifest.ManifestVersion,
		FileCount:       res.FileCount,
		Source:          "upload",
		Size:            u.Size,
		SHA256:          u.SHA256,
	}}
	b.BlobKey = dst
	if res.Prefix == "" {
		if err := s.Blobs.Copy(ctx, b.BlobKey, src, nil); err != nil {
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
		return fail(err)
	}
	closeLocal() // the upload's copy: the CRX is packed from the normalised one
	b.Size, b.SHA256 = cw.n, hex.EncodeToString(h.Sum(nil))
	return b, normalised, nil, nil
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

// keyLimiter is a token bucket per extension key. It is per replica (see
// README).
type keyLimiter struct {
	mu      sync.Mutex
	limit   rate.Limit
	burst   int
	buckets map[int64]*rate.Limiter
}

func (s *Server) submitLimiter() *keyLimiter {
	s.submitOnce.Do(func() {
		cfg := s.Submit.withDefaults()
		s.submitLimits = &keyLimiter{limit: rate.Every(cfg.Every), burst: cfg.Burst, buckets: map[int64]*rate.Limiter{}}
	})
	return s.submitLimits
}

// take spends one call of key's bucket, or returns the seconds to wait.
func (l *keyLimiter) take(key int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		b = rate.NewLimiter(l.limit, l.burst)
		l.buckets[key] = b
	}
	now := time.Now()
	if b.AllowN(now, 1) {
		return 0
	}
	missing := 1 - b.TokensAt(now)
	return int(math.Ceil(missing / float64(l.limit)))
}

// keyedMutex is a mutex per key whose lock gives up when the context ends.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[int64]*keyedLock
}

type keyedLock struct {
	turn    chan struct{} // holds a token while the lock is free
	waiters int
}

func (k *keyedMutex) lock(ctx context.Context, key int64) (unlock func(), err error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[int64]*keyedLock{}
	}
	l, ok := k.locks[key]
	if !ok {
		l = &keyedLock{turn: make(chan struct{}, 1)}
		l.turn <- struct{}{}
		k.locks[key] = l
	}
	l.waiters++
	k.mu.Unlock()
	release := func() {
		k.mu.Lock()
		if l.waiters--; l.waiters == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
	select {
	case <-l.turn:
		return func() { l.turn <- struct{}{}; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// shorten cuts s to at most n bytes, on a rune boundary, for echoing a
// caller's text back in a problem.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
