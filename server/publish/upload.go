package publish

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/blobstore"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/zipcheck"
)

// Put is call 2 as it arrived: a PUT to a URL RequestUpload gave out.
type Put struct {
	UploadID      string     // the {upload} of /uploads/{upload}
	Path          string     // the URL's path, which the signature covers
	Query         url.Values // its expires and signature
	ContentType   string
	ContentLength int64 // -1 when unknown
	Body          io.Reader
}

// ErrIncomplete wraps the error that stopped a PUT's body from being
// stored (the client went away or was too slow, or storage failed):
// nothing was kept, and the upload still waits for its zip.
var ErrIncomplete = errors.New("the zip was not stored")

// Receive is call 2 on file storage: the zip streams to blob storage while
// its size and SHA-256 are computed; it becomes visible only when complete.
func (s *Service) Receive(ctx context.Context, p Put) error {
	if s.Direct() {
		return betaport.Reasonf(betaport.EFORBIDDEN, betaport.ReasonBadSignature,
			"This service takes zips straight into its storage: PUT the zip to the URL that POST /api/submit/upload answered.")
	}
	id, ok := api.ParseID(p.UploadID)
	if !ok {
		return betaport.Reasonf(betaport.EFORBIDDEN, betaport.ReasonBadSignature, "This is not an upload URL Betaport gave out.")
	}
	if e := s.checkUploadURL(p.Path, p.Query, id); e != nil {
		return e
	}
	if mt, _, _ := mime.ParseMediaType(p.ContentType); mt != api.ZipContentType {
		return betaport.Reasonf(betaport.EINVALID, betaport.ReasonUnsupportedMediaType,
			"Send the zip with the header Content-Type: application/zip.")
	}
	u, err := s.Store.FindUpload(ctx, id)
	if err != nil {
		return err
	}
	if u.State != betaport.UploadRequested && u.State != betaport.UploadReceived {
		return betaport.Reasonf(betaport.ECONFLICT, betaport.ReasonUploadClosed,
			"This upload is %s and takes no more bytes. Request a new upload URL to submit another zip.", u.State)
	}
	cfg := s.Config.withDefaults()
	if p.ContentLength > cfg.MaxUploadSize {
		return tooLarge(cfg.MaxUploadSize)
	}
	// The body goes to a key of its own first: it becomes the upload's
	// zip only if no sign has begun meanwhile. Sign reads the upload's zip
	// holding the extension's sign lock, so taking that lock here makes
	// the two take turns: a PUT that arrives during a sign waits for it,
	// then finds the upload closed. What sign validated is then what it
	// publishes (issue 29: a zip PUT during sign was published unchecked),
	// and a refused PUT leaves nothing behind.
	staging := uploadBlobKey(id) + ".put-" + credential.NewToken()[:16]
	defer s.deleteQuietly(ctx, staging) // it outlives a cancelled request itself
	size, sum, refused, err := s.storeZip(ctx, staging, p.Body, cfg.MaxUploadSize)
	if refused != nil {
		return refused
	} else if err != nil {
		return fmt.Errorf("%w: upload %d: %w", ErrIncomplete, id, err)
	}
	unlock, err := s.signLocks.lock(ctx, u.ExtensionID)
	if err != nil {
		return fmt.Errorf("%w: upload %d: %w", ErrIncomplete, id, err)
	}
	defer unlock()
	if u, err = s.Store.FindUpload(ctx, id); err != nil {
		return err
	}
	if u.State != betaport.UploadRequested && u.State != betaport.UploadReceived {
		return betaport.Reasonf(betaport.ECONFLICT, betaport.ReasonUploadClosed,
			"This upload was %s while the zip arrived, so the zip was not kept. Request a new upload URL to submit another zip.", u.State)
	}
	if err := s.Blobs.Copy(ctx, uploadBlobKey(id), staging, nil); err != nil {
		return fmt.Errorf("%w: upload %d: %w", ErrIncomplete, id, err)
	}
	return s.Store.ReceiveUpload(ctx, id, size, sum)
}

// uploadBlobKey is where an upload's zip is kept until it is published.
func uploadBlobKey(id int64) string { return "uploads/" + strconv.FormatInt(id, 10) + ".zip" }

func tooLarge(limit int64) *betaport.Error {
	return betaport.Reasonf(betaport.EINVALID, betaport.ReasonTooLarge,
		"The zip is larger than %d MiB, the most Betaport takes. Make the bundle smaller.", limit>>20)
}

// storeZip streams body into key, computing size and SHA-256 on the way. A
// refusal (too large, not a zip) or an error aborts the write: gocloud
// discards a write whose context is cancelled before Close, so nothing of
// it becomes visible.
func (s *Service) storeZip(ctx context.Context, key string, body io.Reader, limit int64) (int64, string, *betaport.Error, error) {
	head := make([]byte, api.ZipHeadSize)
	n, err := io.ReadFull(body, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return 0, "", nil, err
	}
	if !api.IsZipStart(head[:n]) {
		e := betaport.Reasonf(betaport.EINVALID, betaport.ReasonNotAZip,
			"The body is not a zip (it does not start with a zip signature). Upload the extension's .zip file.")
		// The same list sign answers with, so a pipeline reads one shape.
		e.Problems = []betaport.ZipProblem{{Code: zipcheck.CodeNotAZip,
			Message: "The file is not a zip archive, or it is damaged. Upload the extension as a .zip file."}}
		return 0, "", e, nil
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

// Upload URLs on file storage are the server's own: a path under /uploads/
// signed with HMAC-SHA256 over the method, the path, the upload id, the
// content type and the expiry, under a key derived from the server secret
// and used for nothing else. The PUT handler streams the zip to storage,
// computing its size and SHA-256, and receives the upload.
//
// On S3 storage the storage's own presigned PUT URL takes their place, so
// the zip goes straight to storage and never through a replica; sign then
// receives the upload (receiveDirect). This file is the seam between the
// two: issueUploadURL, urlExpiry, Receive and receiveDirect.

const uploadMethod = http.MethodPut

func (s *Service) uploadKey() []byte {
	m := hmac.New(sha256.New, s.Secret)
	m.Write([]byte("betaport upload URL v1"))
	return m.Sum(nil)
}

func (s *Service) uploadSignature(path string, uploadID int64, expires int64) string {
	m := hmac.New(sha256.New, s.uploadKey())
	for _, part := range []string{uploadMethod, path, strconv.FormatInt(uploadID, 10), api.ZipContentType, strconv.FormatInt(expires, 10)} {
		m.Write([]byte(part))
		m.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// uploadURL returns the signed URL a zip for upload id is PUT to.
func (s *Service) uploadURL(uploadID int64, expires time.Time) string {
	path := api.UploadPrefix + strconv.FormatInt(uploadID, 10)
	exp := expires.Unix()
	q := url.Values{"expires": {strconv.FormatInt(exp, 10)}, "signature": {s.uploadSignature(path, uploadID, exp)}}
	return s.BaseURL + path + "?" + q.Encode()
}

// checkUploadURL verifies the signature and expiry of an upload URL's path
// and query and returns the error to answer when they do not hold.
func (s *Service) checkUploadURL(path string, q url.Values, uploadID int64) *betaport.Error {
	sig, expStr := q.Get("signature"), q.Get("expires")
	// The signature covers the time, not its text: "+1790000000" or
	// "01790000000" would pass as well, so only the one spelling is read.
	exp, ok := api.ParseNumber(expStr)
	if sig == "" || !ok {
		return betaport.Reasonf(betaport.EFORBIDDEN, betaport.ReasonBadSignature,
			"This upload URL is not signed. Use the exact URL that POST /api/submit/upload answered.")
	}
	want := s.uploadSignature(path, uploadID, exp)
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return betaport.Reasonf(betaport.EFORBIDDEN, betaport.ReasonBadSignature,
			"This upload URL's signature does not match. Use the exact URL that POST /api/submit/upload answered, unchanged.")
	}
	if s.now().Unix() >= exp {
		return betaport.Reasonf(betaport.EFORBIDDEN, betaport.ReasonUploadURLExpired,
			"This upload URL has expired. Request a new one with POST /api/submit/upload and upload again.")
	}
	return nil
}

// directUploadGrace is how much longer than its presigned URL a direct
// upload stays open: a PUT that starts just before the URL expires may take
// this long to finish and be signed before the sweeper expires the upload.
const directUploadGrace = 5 * time.Minute

// Direct reports whether zips go straight to storage (S3, with a
// presigned URL) rather than through PUT /uploads/{id} (file storage).
func (s *Service) Direct() bool { return blobstore.Presigns(s.Blobs) }

// issueUploadURL returns the URL the zip of upload u is PUT to: the
// server's own until urlExpires, or the storage's presigned URL for ttl.
func (s *Service) issueUploadURL(ctx context.Context, u *betaport.Upload, urlExpires time.Time, ttl time.Duration) (string, error) {
	if !s.Direct() {
		return s.uploadURL(u.ID, urlExpires), nil
	}
	return blobstore.PresignPut(ctx, s.Blobs, uploadBlobKey(u.ID), api.ZipContentType, ttl)
}

// urlExpiry is when upload u's URL stops taking a PUT.
func (s *Service) urlExpiry(u *betaport.Upload) time.Time {
	if s.Direct() {
		return u.ExpiresAt.Add(-directUploadGrace)
	}
	return u.ExpiresAt
}

// direct is a direct upload as sign sees it after receiveDirect.
type direct struct {
	upload *betaport.Upload
	// source is the key the zip is validated and published from, and
	// snapshot the copy to delete when sign ends ("" for none).
	source, snapshot string
	// bundleKey is where this sign writes the bundle: its own key, so
	// signs racing on several replicas never write over each other's
	// bytes; the one whose publish wins is kept (discardUnpublished).
	bundleKey string
}

// receiveDirect establishes what the server's PUT handler checks, for a zip
// that went straight to storage, and moves upload u to received:
//
//   - nothing stored yet: u is returned as it is, and its state answers;
//   - the content type is application/zip: the presigned URL signs it, so
//     the storage refuses another; should a storage not, the object is
//     deleted and sign answers 415, as the PUT handler would;
//   - the size comes from the object's attributes; over the limit, the
//     upload is received and then rejected (too_large) without reading it;
//   - the SHA-256 is computed by the storage while it copies the object to
//     a key only this sign writes (CopyObject with a SHA-256 checksum, on
//     the condition that the object is still the version whose attributes
//     were checked). That copy is what is validated and published, so a
//     later PUT to the presigned URL (valid until it expires) changes
//     nothing that was checked.
func (s *Service) receiveDirect(ctx context.Context, u *betaport.Upload) (*direct, *betaport.Error, error) {
	cfg := s.Config.withDefaults()
	key := uploadBlobKey(u.ID)
	nonce := make([]byte, 8)
	rand.Read(nonce)
	attempt := hex.EncodeToString(nonce)
	d := &direct{upload: u, source: key,
		bundleKey: betaport.BundleKey(u.ExtensionID, fmt.Sprintf("upload-%d-%s", u.ID, attempt))}
	var obj *blobstore.Object
	for try := 0; ; try++ {
		head, err := blobstore.Stat(ctx, s.Blobs, key)
		if gcerrors.Code(err) == gcerrors.NotFound {
			return d, nil, nil
		} else if err != nil {
			return d, nil, err
		}
		if mt, _, _ := mime.ParseMediaType(head.ContentType); mt != api.ZipContentType {
			if err := s.Blobs.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
				return d, nil, err
			}
			return d, betaport.Reasonf(betaport.EINVALID, betaport.ReasonUnsupportedMediaType,
				"The zip was stored with Content-Type %q, so it was not kept. PUT it again to the same URL with the header Content-Type: application/zip, then sign.", head.ContentType), nil
		}
		if head.Size > cfg.MaxUploadSize {
			// Presigned PUTs cannot cap the size; the zip is refused
			// here without being read (build checks the size first).
			obj = head
			break
		}
		d.snapshot = fmt.Sprintf("uploads/%d.%s.checked.zip", u.ID, attempt)
		obj, err = blobstore.CopyChecked(ctx, s.Blobs, key, d.snapshot, head.ETag)
		if gcerrors.Code(err) == gcerrors.FailedPrecondition && try < 3 {
			continue // a new PUT replaced the object between the two calls
		} else if err != nil {
			return d, nil, err
		}
		d.source = d.snapshot
		break
	}
	if err := s.Store.ReceiveUpload(ctx, u.ID, obj.Size, obj.SHA256); betaport.ErrorCode(err) == betaport.ECONFLICT {
		// Closed meanwhile: published or rejected by a racing sign, or
		// superseded by a newer URL. Its state answers.
		now, err := s.Store.FindUpload(ctx, u.ID)
		if err != nil {
			return d, nil, err
		}
		d.upload = now
		if now.State == betaport.UploadSuperseded {
			return d, nil, betaport.Errorf(betaport.ECONFLICT,
				"A newer upload URL was requested while this upload was being signed, and sign finalises the newest one. PUT the zip to the newest URL, then sign again.")
		}
		return d, nil, nil
	} else if err != nil {
		return d, nil, err
	}
	received := *u
	received.State, received.Size, received.SHA256 = betaport.UploadReceived, obj.Size, obj.SHA256
	d.upload = &received
	return d, nil, nil
}

// deleteQuietly deletes a blob the request no longer needs, even when the
// client has gone, logging a failure rather than answering it.
func (s *Service) deleteQuietly(ctx context.Context, key string) {
	ctx = context.WithoutCancel(ctx)
	if err := s.Blobs.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		s.logger().WarnContext(ctx, "deleting a blob", "key", key, "err", err)
	}
}
