package http

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/betaport/betaport/app/api"
)

// Upload URLs on file storage are the server's own: a path under /uploads/
// signed with HMAC-SHA256 over the method, the path, the upload id, the
// content type and the expiry, under a key derived from the server secret
// and used for nothing else. On S3 storage the storage's own presigned URL
// takes their place (uploadURL is the seam).

const uploadMethod = http.MethodPut

func (s *Server) uploadKey() []byte {
	m := hmac.New(sha256.New, s.Secret)
	m.Write([]byte("betaport upload URL v1"))
	return m.Sum(nil)
}

func (s *Server) uploadSignature(path string, uploadID int64, expires int64) string {
	m := hmac.New(sha256.New, s.uploadKey())
	for _, part := range []string{uploadMethod, path, strconv.FormatInt(uploadID, 10), api.ZipContentType, strconv.FormatInt(expires, 10)} {
		m.Write([]byte(part))
		m.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// uploadURL returns the signed URL a zip for upload id is PUT to.
func (s *Server) uploadURL(uploadID int64, expires time.Time) string {
	path := api.UploadPrefix + strconv.FormatInt(uploadID, 10)
	exp := expires.Unix()
	q := url.Values{"expires": {strconv.FormatInt(exp, 10)}, "signature": {s.uploadSignature(path, uploadID, exp)}}
	return s.BaseURL + path + "?" + q.Encode()
}

// checkUploadURL verifies the signature and expiry of an upload request and
// returns the problem to answer when they do not hold.
func (s *Server) checkUploadURL(r *http.Request, uploadID int64) *api.Problem {
	q := r.URL.Query()
	sig, expStr := q.Get("signature"), q.Get("expires")
	exp, err := strconv.ParseInt(expStr, 10, 64)
	if sig == "" || err != nil {
		return problem(http.StatusForbidden, api.ProblemBadSignature,
			"This upload URL is not signed. Use the exact URL that POST /api/submit/upload answered.")
	}
	want := s.uploadSignature(r.URL.Path, uploadID, exp)
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return problem(http.StatusForbidden, api.ProblemBadSignature,
			"This upload URL's signature does not match. Use the exact URL that POST /api/submit/upload answered, unchanged.")
	}
	if s.now().Unix() >= exp {
		return problem(http.StatusForbidden, api.ProblemURLExpired,
			"This upload URL has expired. Request a new one with POST /api/submit/upload and upload again.")
	}
	return nil
}
