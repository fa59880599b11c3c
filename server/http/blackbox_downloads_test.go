package http_test

// Black-box tests of bundle downloads (zip and CRX, the testers', the
// admins' and Chromium's updater's) on any storage. On S3 Betaport checks
// access and answers 302 Found with a presigned GET at the storage that
// lives at most 5 minutes and names the file, so replicas serve no bundle
// bytes; on file storage Betaport serves the bytes itself. Refusals look the
// same on both and never carry a URL.
//
// Written from the issue, README.md ("Scaling out", "Updates that install
// themselves"), DESIGN.md and the wire contract (app/api) only, not from the
// implementation. Like every test built on newEnv they run on (SQLite,
// files) here and on (PostgreSQL, S3) through TestOnPostgresAndS3; to run
// them alone on S3:
//
//	BETAPORT_HTTP_BACKEND=postgres+s3 go test -run BlackBoxDownloads ./server/http

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/blobstore"
	"github.com/betaport/betaport/server/credential"
	bphttp "github.com/betaport/betaport/server/http"
	"github.com/betaport/betaport/server/sqlite"
	"github.com/betaport/betaport/server/storetest"
	"github.com/betaport/betaport/server/testenv"
)

// ---------------------------------------------------------------- helpers

// bbdWorld is a server with two teams, their people, and published bundles
// (each with its CRX, built at sign).
type bbdWorld struct {
	e                      *env
	extA, extB, extC       *betaport.Extension // A and B: other teams; C: team A, no bundle
	adminA, adminB         http.Header
	testerA, testerB       http.Header // active testers of A and of B
	revokedOld, revokedNew http.Header // a revoked tester of A: the session from before the revoke, one made after
	bundlesA               []betaport.Bundle
	bundleB                betaport.Bundle
	updA, updB             api.Updates
}

// newBBDWorld builds the same world, in the same order, on any server, so
// ids match between two servers built alike.
func newBBDWorld(t *testing.T, e *env) *bbdWorld {
	t.Helper()
	w := &bbdWorld{e: e}
	pa := newPipeline(t, e, betaport.PlanProfessional)
	pb := newPipeline(t, e, betaport.PlanProfessional)
	w.extA, w.extB = pa.ext, pb.ext
	teamA := mustTeam(t, e, pa.ext)
	w.adminA = e.adminOf(t, teamA)
	w.adminB = e.adminOf(t, mustTeam(t, e, pb.ext))
	w.extC = storetest.MustExtension(t, e.DB, teamA, "Empty")
	w.bundlesA = []betaport.Bundle{pa.submitAny(t, validZip(t, "1.0.0")), pa.submitAny(t, validZip(t, "1.1.0"))}
	w.bundleB = pb.submitAny(t, validZip(t, "2.0.0"))
	if w.bundlesA[0].Number != 1 || w.bundlesA[1].Number != 2 || w.bundleB.Number != 1 {
		t.Fatalf("bundle numbers %d, %d, %d; want 1, 2 and 1", w.bundlesA[0].Number, w.bundlesA[1].Number, w.bundleB.Number)
	}
	ta, _ := e.testerOf(t, w.extA, betaport.TesterActive)
	tb, _ := e.testerOf(t, w.extB, betaport.TesterActive)
	w.testerA = e.cookie(t, betaport.Session{TesterID: ta.ID})
	w.testerB = e.cookie(t, betaport.Session{TesterID: tb.ID})
	rv, _ := e.testerOf(t, w.extA, betaport.TesterActive)
	w.revokedOld = e.cookie(t, betaport.Session{TesterID: rv.ID})
	bbdRevoke(t, e, w.adminA, w.extA.ID, rv.ID)
	w.revokedNew = e.cookie(t, betaport.Session{TesterID: rv.ID})
	w.updA = e.updates(t, w.extA, w.adminA)
	w.updB = e.updates(t, w.extB, w.adminB)
	return w
}

// bbdRevoke revokes a tester as the admin does, through the API.
func bbdRevoke(t *testing.T, e *env, admin http.Header, extID, testerID int64) {
	t.Helper()
	resp, body := e.do(t, "DELETE", api.TesterPath(extID, testerID), admin)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoking tester %d = %d %s", testerID, resp.StatusCode, body)
	}
}

// bbdFilesEnv is a server on (SQLite, files) whatever backend this run is
// on: the reference a refusal on S3 must look like.
func bbdFilesEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "betaport.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	blobURL, err := blobstore.FileURL(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := blobstore.Open(ctx, blobURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blobs.Close() })
	s := &bphttp.Server{Store: db, Blobs: blobs, Logger: testLogger(t), Secret: []byte(credential.NewToken()), SigningKeys: testKeyring}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	s.BaseURL = ts.URL
	s.Publish.BaseURL = s.BaseURL
	return &env{Server: ts, DB: db, Blobs: blobs, App: s, Dir: dir, Backend: backendFiles}
}

// stored is what a bundle's zip or CRX is, read from the storage: the bytes
// every download of it must give.
func (w *bbdWorld) stored(t *testing.T, ext *betaport.Extension, number int64, kind string) []byte {
	t.Helper()
	return bbdStored(t, w.e, ext.ID, number, kind)
}

func bbdStored(t *testing.T, e *env, extID, number int64, kind string) []byte {
	t.Helper()
	ctx := context.Background()
	b, err := e.DB.FindBundle(ctx, extID, number)
	if err != nil {
		t.Fatal(err)
	}
	key := b.BlobKey
	if kind == "crx" {
		key = b.CRX.BlobKey
		if key == "" {
			t.Fatalf("bundle %d of extension %d has no CRX stored", number, extID)
		}
	}
	data, err := e.Blobs.ReadAll(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if kind == "zip" {
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != b.SHA256 || int64(len(data)) != b.Size {
			t.Fatalf("the stored zip of bundle %d does not match its record", number)
		}
	}
	return data
}

// bbdType is the media type a download of kind ("zip" or "crx") has.
func bbdType(kind string) string {
	if kind == "crx" {
		return api.CRXContentType
	}
	return api.ZipContentType
}

// bbdHop is one HTTP answer, read whole.
type bbdHop struct {
	resp *http.Response
	body []byte
}

// bbdRaw sends one request as it is: no redirect followed, no cookie but
// the header's, no compression asked for.
func bbdRaw(t *testing.T, method, rawURL string, h http.Header) bbdHop {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if req.Header.Get("Accept-Encoding") == "" {
		req.Header.Set("Accept-Encoding", "identity")
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, rawURL, err)
	}
	return bbdHop{resp, body}
}

// bbdGet asks Betaport (target: a path on e, or an absolute URL) and follows
// a redirect, as a browser or the updater does, with the same headers but
// no cookie: the storage's URL must authorise by itself.
func (e *env) bbdGet(t *testing.T, method, target string, h http.Header) (first, final bbdHop) {
	t.Helper()
	if strings.HasPrefix(target, "/") {
		target = e.URL + target
	}
	first = bbdRaw(t, method, target, h)
	final = first
	if first.resp.StatusCode/100 == 3 {
		loc, err := first.resp.Location()
		if err != nil {
			t.Fatalf("%s %s answered %d with a Location that does not parse: %v", method, target, first.resp.StatusCode, err)
		}
		next := http.Header{}
		for k, v := range h {
			next[k] = v
		}
		next.Del("Cookie")
		final = bbdRaw(t, method, loc.String(), next)
	}
	return first, final
}

// bbdEndpoint is the test gateway's endpoint (the storage's URLs are on
// it), found once; the mutex keeps parallel tests from finding it at once.
var (
	bbdEndpointMu sync.Mutex
	bbdEndpoint   *url.URL
)

func bbdStorage(t *testing.T) *url.URL {
	t.Helper()
	bbdEndpointMu.Lock()
	defer bbdEndpointMu.Unlock()
	if bbdEndpoint == nil {
		u, err := url.Parse(testenv.BucketURL(t))
		if err != nil {
			t.Fatal(err)
		}
		ep, err := url.Parse(u.Query().Get("endpoint"))
		if err != nil || ep.Host == "" {
			t.Fatalf("no endpoint in %s", u)
		}
		bbdEndpoint = ep
	}
	return bbdEndpoint
}

// bbdUncacheable reports whether a header keeps every cache from storing the
// answer: a redirect to a URL that expires in minutes and that only
// this person may have must not be kept by a browser or a proxy.
func bbdUncacheable(h http.Header) bool {
	cc := strings.ToLower(strings.Join(h.Values("Cache-Control"), ","))
	if strings.Contains(cc, "no-store") {
		return true
	}
	return strings.Contains(cc, "private") && (strings.Contains(cc, "no-cache") || strings.Contains(cc, "max-age=0"))
}

// bbdNoBundleBytes reports whether a body is too small and too plain to
// carry a bundle.
func bbdNoBundleBytes(body []byte) bool {
	return len(body) <= 2048 && !bytes.Contains(body, []byte("PK\x03\x04")) && !bytes.Contains(body, []byte("Cr24"))
}

// bbdWantRedirect checks Betaport's answer to a download on S3: 302 Found
// to a presigned GET at the storage's endpoint that lives at most maxLife
// seconds and signs the file's Content-Type and Content-Disposition, an
// answer no cache keeps, and no bundle byte in it. It returns the URL.
func (e *env) bbdWantRedirect(t *testing.T, what string, h bbdHop, sent http.Header, kind string, maxLife int) *url.URL {
	t.Helper()
	resp := h.resp
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("%s on S3: %d (%s, %d bytes), want 302 Found to the storage", what, resp.StatusCode, resp.Header.Get("Content-Type"), len(h.body))
	}
	raw := resp.Header.Get("Location")
	loc, err := url.Parse(raw)
	if err != nil || !loc.IsAbs() {
		t.Fatalf("%s: Location %q is not an absolute URL", what, raw)
	}
	st := bbdStorage(t)
	if loc.Scheme != st.Scheme || loc.Host != st.Host {
		t.Errorf("%s: Location %s is not on the storage's endpoint %s", what, raw, st)
	}
	if !bbdUncacheable(resp.Header) {
		t.Errorf("%s: the redirect has Cache-Control %q: a browser or proxy may keep a URL that expires and belongs to one person (want no-store)",
			what, resp.Header.Values("Cache-Control"))
	}
	if !bbdNoBundleBytes(h.body) || resp.ContentLength > 2048 {
		t.Errorf("%s: the redirect carries %d bytes (Content-Length %d): the replica must serve no bundle bytes", what, len(h.body), resp.ContentLength)
	}
	q := loc.Query()
	life, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil || life <= 0 || life > maxLife {
		t.Errorf("%s: the presigned URL lives %q seconds, want at most %d", what, q.Get("X-Amz-Expires"), maxLife)
	}
	if q.Get("X-Amz-Signature") == "" {
		t.Errorf("%s: Location %s is not a presigned URL (no X-Amz-Signature)", what, raw)
	}
	if got := q.Get("response-content-type"); got != bbdType(kind) {
		t.Errorf("%s: the presigned URL signs Content-Type %q, want %q", what, got, bbdType(kind))
	}
	if got := q.Get("response-content-disposition"); !strings.HasPrefix(got, "attachment") {
		t.Errorf("%s: the presigned URL signs Content-Disposition %q, want an attachment", what, got)
	}
	for k, v := range q {
		if len(v) != 1 {
			t.Errorf("%s: the presigned URL repeats %s: %q", what, k, v)
		}
	}
	if strings.Contains(raw, testenv.SecretKey) {
		t.Errorf("%s: the presigned URL carries the storage's secret key", what)
	}
	for _, c := range sent.Values("Cookie") {
		if _, token, ok := strings.Cut(c, "="); ok && len(token) > 8 && strings.Contains(raw, token) {
			t.Errorf("%s: the presigned URL carries the session token", what)
		}
	}
	return loc
}

// bbdWantServedByBetaport checks a download's first answer on file storage:
// the bytes themselves, from Betaport, with no redirect.
func bbdWantServedByBetaport(t *testing.T, what string, h bbdHop) {
	t.Helper()
	if h.resp.StatusCode != http.StatusOK || h.resp.Header.Get("Location") != "" {
		t.Fatalf("%s on file storage: %d, Location %q; want 200 with the bytes from Betaport", what, h.resp.StatusCode, h.resp.Header.Get("Location"))
	}
}

// bbdWantFirst checks a download's first answer for the backend: a redirect
// on S3, the bytes on files.
func (e *env) bbdWantFirst(t *testing.T, what string, h bbdHop, sent http.Header, kind string) {
	t.Helper()
	if e.Backend == backendScaleOut {
		e.bbdWantRedirect(t, what, h, sent, kind, 300)
	} else {
		bbdWantServedByBetaport(t, what, h)
	}
}

// bbdWantFileName checks a Content-Disposition: an attachment whose file
// name a person can save as it is, ending in ext.
func bbdWantFileName(t *testing.T, what, cd, ext string) string {
	t.Helper()
	typ, params, err := mime.ParseMediaType(cd)
	if err != nil || typ != "attachment" {
		t.Errorf("%s: Content-Disposition %q is not a well-formed attachment (%v)", what, cd, err)
		return ""
	}
	name := params["filename"]
	bad := func(why string) {
		if len(name) > 80 {
			t.Errorf("%s: file name %q… (%d bytes) %s", what, name[:60], len(name), why)
			return
		}
		t.Errorf("%s: file name %q (Content-Disposition %q) %s", what, name, cd, why)
	}
	switch {
	case !strings.HasSuffix(strings.ToLower(name), ext) || len(name) <= len(ext):
		bad("does not name a " + ext + " file")
	case strings.HasPrefix(name, "."):
		bad("is a hidden file")
	case strings.ContainsAny(name, `/\"`):
		bad("holds a path separator or a quote")
	case !utf8.ValidString(name):
		bad("is not UTF-8")
	case len(name) > 255:
		bad("is longer than file systems take (255 bytes)")
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			bad(fmt.Sprintf("holds the control or format character %U", r))
			break
		}
	}
	return name
}

// bbdWantFile checks the answer a download ends with, wherever it came
// from: exactly the bundle's bytes, typed and named.
func bbdWantFile(t *testing.T, what string, h bbdHop, kind string, want []byte) {
	t.Helper()
	resp := h.resp
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: the download ends with %d %s: %.300s", what, resp.StatusCode, resp.Header.Get("Content-Type"), h.body)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != bbdType(kind) {
		t.Errorf("%s: Content-Type %q, want %s", what, resp.Header.Get("Content-Type"), bbdType(kind))
	}
	bbdWantFileName(t, what, resp.Header.Get("Content-Disposition"), "."+kind)
	if !bytes.Equal(h.body, want) {
		got, exp := sha256.Sum256(h.body), sha256.Sum256(want)
		t.Errorf("%s: %d bytes (SHA-256 %x…), want the bundle's %d (%x…)", what, len(h.body), got[:6], len(want), exp[:6])
	}
	if resp.ContentLength != int64(len(want)) {
		t.Errorf("%s: Content-Length %d, want %d", what, resp.ContentLength, len(want))
	}
	if resp.Header.Get("ETag") == "" {
		t.Errorf("%s: no ETag", what)
	}
}

// bbdLocation asks Betaport for a download on S3 and returns the storage
// URL it redirects to.
func (e *env) bbdLocation(t *testing.T, path string, who http.Header, kind string, maxLife int) *url.URL {
	t.Helper()
	h := bbdRaw(t, "GET", e.URL+path, who)
	return e.bbdWantRedirect(t, "GET "+path, h, who, kind, maxLife)
}

// bbdFlip changes the last character of s.
func bbdFlip(s string) string {
	if s == "" {
		return "0"
	}
	last := s[len(s)-1]
	repl := byte('0')
	if last == '0' {
		repl = '1'
	}
	return s[:len(s)-1] + string(repl)
}

// bbdSetQuery returns u with one query parameter replaced (or removed when
// value is nil), leaving the others exactly as they were encoded.
func bbdSetQuery(u *url.URL, key string, value *string) string {
	c := *u
	var parts []string
	for _, p := range strings.Split(u.RawQuery, "&") {
		k, _, _ := strings.Cut(p, "=")
		if dk, err := url.QueryUnescape(k); err == nil && dk == key {
			if value != nil {
				parts = append(parts, k+"="+strings.ReplaceAll(url.QueryEscape(*value), "+", "%20"))
			}
			continue
		}
		parts = append(parts, p)
	}
	c.RawQuery = strings.Join(parts, "&")
	return c.String()
}

func bbdPtr(s string) *string { return &s }

// ---------------------------------------------------------------- tests

// TestBlackBoxDownloadsEveryRoute downloads through every download route
// as everyone allowed to: on S3 each answers a 302 to the storage with no
// bundle bytes, on files the bytes themselves; either way the download ends
// with exactly the bundle's bytes, typed and named as a file. The update
// feed names Betaport's own CRX URL (which does not expire), not the
// storage's.
func TestBlackBoxDownloadsEveryRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := newBBDWorld(t, e)
	a := w.extA.ID

	resp, body := e.do(t, "GET", api.CurrentBundlePath(a), w.testerA)
	var cur betaport.Bundle
	if resp.StatusCode != 200 || json.Unmarshal(body, &cur) != nil || cur.Number != 2 {
		t.Fatalf("current bundle = %d %s, want bundle 2", resp.StatusCode, body)
	}
	status, g := checkUpdate(t, w.updA.UpdateURL, w.updA.ChromeID, "1.0.0")
	version, codebase := offered(t, g, w.updA.ChromeID)
	if status != 200 || version != w.bundlesA[1].Version {
		t.Fatalf("the update check offers %q, want %s", version, w.bundlesA[1].Version)
	}
	if !strings.HasPrefix(codebase, w.updA.UpdateURL+"/crx/") {
		t.Errorf("the update check offers codebase %s: it must be Betaport's CRX URL under the update URL, which does not expire", codebase)
	}

	people := map[string]http.Header{"admin": w.adminA, "tester": w.testerA}
	updater := map[string]http.Header{
		"updater (no cookie)":                  nil,
		"updater carrying an admin's cookie":   w.adminA,
		"updater carrying a stranger's cookie": w.adminB,
	}
	routes := []struct {
		name, target, kind string
		number             int64
		who                map[string]http.Header
	}{
		{"current zip", api.CurrentBundlePath(a) + "/download", "zip", 2, people},
		{"zip #1", api.BundleDownloadPath(a, 1), "zip", 1, people},
		{"zip #2", api.BundleDownloadPath(a, 2), "zip", 2, people},
		{"CRX #1", api.BundleCRXPath(a, 1), "crx", 1, map[string]http.Header{"admin": w.adminA}}, // a tester gets their own copy (TestBBTU…)
		{"CRX #2", api.BundleCRXPath(a, 2), "crx", 2, map[string]http.Header{"admin": w.adminA}},
		{"updater's CRX from the feed", codebase, "crx", 2, updater},
		{"updater's CRX #1", w.updA.UpdateURL + "/crx/1", "crx", 1, updater},
	}
	locations := map[string]string{} // storage URL path → route
	for _, r := range routes {
		for who, h := range r.who {
			what := fmt.Sprintf("%s as %s", r.name, who)
			first, final := e.bbdGet(t, "GET", r.target, h)
			e.bbdWantFirst(t, what, first, h, r.kind)
			want := w.stored(t, w.extA, r.number, r.kind)
			bbdWantFile(t, what, final, r.kind, want)
			if r.kind == "crx" {
				b := w.bundlesA[r.number-1]
				wantCRX(t, final.body, w.updA, b.Version, b.VersionName)
			}
			if loc := first.resp.Header.Get("Location"); loc != "" {
				u, _ := url.Parse(loc)
				key := fmt.Sprintf("%s #%d", r.kind, r.number)
				if prev, ok := locations[u.Path]; ok && prev != key {
					t.Errorf("%s redirects to the object of %s (%s)", what, prev, u.Path)
				}
				locations[u.Path] = key
			}
		}
	}
	if e.Backend == backendScaleOut && len(locations) != 4 {
		t.Errorf("the routes led to %d storage objects, want 4 (zips and CRXs of bundles 1 and 2): %v", len(locations), locations)
	}
}

// TestBlackBoxDownloadsRangesAndHEAD: a download can be resumed (ranges,
// If-Range with the ETag it got) and probed with HEAD, through Betaport's
// link as a browser follows it and, on S3, at the storage's URL directly.
func TestBlackBoxDownloadsRangesAndHEAD(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := newBBDWorld(t, e)
	a := w.extA.ID
	for _, r := range []struct {
		name, target, kind string
		who                http.Header
	}{
		{"tester's zip", api.BundleDownloadPath(a, 2), "zip", w.testerA},
		{"admin's CRX", api.BundleCRXPath(a, 2), "crx", w.adminA}, // a tester gets their own copy (TestBBTU…)
		{"updater's CRX", w.updA.UpdateURL + "/crx/2", "crx", nil},
	} {
		t.Run(strings.ReplaceAll(r.name, " ", "_"), func(t *testing.T) {
			want := w.stored(t, w.extA, 2, r.kind)
			n := len(want)
			if n < 200 {
				t.Fatalf("the bundle is only %d bytes", n)
			}
			with := func(kv ...string) http.Header {
				h := http.Header{}
				for k, v := range r.who {
					h[k] = v
				}
				for i := 0; i < len(kv); i += 2 {
					h.Set(kv[i], kv[i+1])
				}
				return h
			}
			first, full := e.bbdGet(t, "GET", r.target, r.who)
			e.bbdWantFirst(t, r.name, first, r.who, r.kind)
			bbdWantFile(t, r.name, full, r.kind, want)
			etag := full.resp.Header.Get("ETag")

			// The same object answers the same ETag through a new link,
			// so a resumed download can prove it resumes the same file.
			if _, again := e.bbdGet(t, "GET", r.target, r.who); again.resp.Header.Get("ETag") != etag {
				t.Errorf("ETag %q, then %q for the same bundle", etag, again.resp.Header.Get("ETag"))
			}

			ranges := []struct {
				header   string
				from, to int
			}{
				{"bytes=0-99", 0, 99},
				{"bytes=100-", 100, n - 1},
				{"bytes=-10", n - 10, n - 1},
				{fmt.Sprintf("bytes=%d-%d", n-1, n+1000), n - 1, n - 1},
			}
			check := func(what string, h bbdHop, from, to int) {
				t.Helper()
				if h.resp.StatusCode != http.StatusPartialContent {
					t.Errorf("%s: %d, want 206 (%.200s)", what, h.resp.StatusCode, h.body)
					return
				}
				if cr := h.resp.Header.Get("Content-Range"); cr != fmt.Sprintf("bytes %d-%d/%d", from, to, n) {
					t.Errorf("%s: Content-Range %q, want bytes %d-%d/%d", what, cr, from, to, n)
				}
				if !bytes.Equal(h.body, want[from:to+1]) {
					t.Errorf("%s: %d bytes that are not bytes %d-%d of the bundle", what, len(h.body), from, to)
				}
			}
			for _, rg := range ranges {
				first, got := e.bbdGet(t, "GET", r.target, with("Range", rg.header))
				if e.Backend == backendScaleOut {
					e.bbdWantRedirect(t, "Range "+rg.header, first, r.who, r.kind, 300)
				}
				check("through Betaport, Range "+rg.header, got, rg.from, rg.to)
			}
			_, got := e.bbdGet(t, "GET", r.target, with("Range", "bytes=10-19", "If-Range", etag))
			check("If-Range with the ETag", got, 10, 19)
			_, got = e.bbdGet(t, "GET", r.target, with("Range", fmt.Sprintf("bytes=%d-", n)))
			if got.resp.StatusCode != http.StatusRequestedRangeNotSatisfiable || bytes.Contains(got.body, want) {
				t.Errorf("a range past the end: %d with %d bytes, want 416", got.resp.StatusCode, len(got.body))
			}

			if e.Backend == backendScaleOut {
				// At the storage's URL itself, as a download manager
				// resumes it.
				loc := e.bbdLocation(t, strings.TrimPrefix(r.target, e.URL), r.who, r.kind, 300)
				for _, rg := range ranges {
					check("at the storage, Range "+rg.header, bbdRaw(t, "GET", loc.String(), http.Header{"Range": {rg.header}}), rg.from, rg.to)
				}
			}

			// HEAD, as download managers and curl -I -L ask first: it ends
			// in a 200 that describes the file, without the bytes.
			first, head := e.bbdGet(t, "HEAD", r.target, r.who)
			if e.Backend == backendScaleOut {
				t.Logf("HEAD on S3: Betaport answers %d (Location %q), the end of it %d",
					first.resp.StatusCode, first.resp.Header.Get("Location"), head.resp.StatusCode)
				if first.resp.StatusCode == http.StatusFound {
					e.bbdWantRedirect(t, "HEAD", first, r.who, r.kind, 300)
				}
			}
			if head.resp.StatusCode != http.StatusOK || len(head.body) != 0 {
				t.Errorf("HEAD ends with %d and %d body bytes, want 200 and none (%.200s)", head.resp.StatusCode, len(head.body), head.body)
			} else {
				if cl := head.resp.Header.Get("Content-Length"); cl != strconv.Itoa(n) {
					t.Errorf("HEAD: Content-Length %q, want %d", cl, n)
				}
				if mt, _, _ := mime.ParseMediaType(head.resp.Header.Get("Content-Type")); mt != bbdType(r.kind) {
					t.Errorf("HEAD: Content-Type %q, want %s", head.resp.Header.Get("Content-Type"), bbdType(r.kind))
				}
				if got := head.resp.Header.Get("ETag"); got != etag {
					t.Errorf("HEAD: ETag %q, GET's %q", got, etag)
				}
			}
		})
	}
}

// bbdCase is a download request that must be refused.
type bbdCase struct {
	name   string
	method string
	target func(w *bbdWorld) string      // path on Betaport
	who    func(w *bbdWorld) http.Header // nil: no cookie
	status int                           // 0: any 4xx
}

func bbdCases() []bbdCase {
	nobody := func(*bbdWorld) http.Header { return nil }
	subjects := []struct {
		name   string
		who    func(w *bbdWorld) http.Header
		status int
	}{
		{"no session", nobody, http.StatusUnauthorized},
		{"another team's admin", func(w *bbdWorld) http.Header { return w.adminB }, http.StatusNotFound},
		{"a tester of another extension", func(w *bbdWorld) http.Header { return w.testerB }, http.StatusNotFound},
		{"a revoked tester (session from before the revoke)", func(w *bbdWorld) http.Header { return w.revokedOld }, http.StatusUnauthorized},
		{"a revoked tester (session made after the revoke)", func(w *bbdWorld) http.Header { return w.revokedNew }, http.StatusUnauthorized},
		{"a garbage session cookie", func(*bbdWorld) http.Header {
			return http.Header{"Cookie": {api.SessionCookie + "=not-a-session"}}
		}, http.StatusUnauthorized},
	}
	routes := []struct {
		name string
		path func(ext, number string) string
	}{
		{"zip", func(ext, number string) string { return "/api/extensions/" + ext + "/bundles/" + number + "/download" }},
		{"CRX", func(ext, number string) string { return "/api/extensions/" + ext + "/bundles/" + number + "/crx" }},
	}
	idA := func(w *bbdWorld) string { return strconv.FormatInt(w.extA.ID, 10) }
	var cases []bbdCase
	for _, s := range subjects {
		cases = append(cases,
			bbdCase{"current zip, " + s.name, "GET", func(w *bbdWorld) string { return api.CurrentBundlePath(w.extA.ID) + "/download" }, s.who, s.status},
			bbdCase{"HEAD current zip, " + s.name, "HEAD", func(w *bbdWorld) string { return api.CurrentBundlePath(w.extA.ID) + "/download" }, s.who, s.status})
		for _, r := range routes {
			cases = append(cases,
				bbdCase{r.name + " #1, " + s.name, "GET", func(w *bbdWorld) string { return r.path(idA(w), "1") }, s.who, s.status},
				bbdCase{"HEAD " + r.name + " #2, " + s.name, "HEAD", func(w *bbdWorld) string { return r.path(idA(w), "2") }, s.who, s.status})
		}
	}
	// Bundle numbers that are not bundles, asked by people who may see
	// the extension's bundles.
	readers := []struct {
		name string
		who  func(w *bbdWorld) http.Header
	}{
		{"admin", func(w *bbdWorld) http.Header { return w.adminA }},
		{"tester", func(w *bbdWorld) http.Header { return w.testerA }},
	}
	numbers := []struct {
		number string
		status int
	}{
		// (a 3000-digit number is named by its length in messages)
		{"3", http.StatusNotFound},
		{"99", http.StatusNotFound},
		{"9223372036854775807", http.StatusNotFound},
		{"0", 0},
		{"-1", 0},
		{"-0", 0},
		{"9223372036854775808", 0},
		{"99999999999999999999999999999", 0},
		{strings.Repeat("9", 3000), 0},
		{"abc", 0},
		{"1.0", 0},
		{"1e0", 0},
		{"0x1", 0},
		{"1.crx", 0},
		{"%20", 0},
		{"1%00", 0},
		{"1%0D%0ALocation:%20http:%2F%2Fevil.example", 0},
		{"1%2F..%2F2", 0},
		{"%2E%2E", 0},
		{"%EF%BC%91", 0},  // a fullwidth digit one
		{"%E2%80%AE1", 0}, // a right-to-left override, then 1
		{"%27%20OR%201=1", 0},
	}
	for _, rd := range readers {
		for _, nb := range numbers {
			for _, r := range routes {
				cases = append(cases, bbdCase{fmt.Sprintf("%s %s, %s", r.name, bbdShort(nb.number), rd.name), "GET",
					func(w *bbdWorld) string { return r.path(idA(w), nb.number) }, rd.who, nb.status})
			}
		}
	}
	admin := func(w *bbdWorld) http.Header { return w.adminA }
	// Extensions that are not there, or have no bundle yet.
	for _, ext := range []string{"0", "-1", "99999", "9223372036854775808", "abc", "1%00", "%2E%2E"} {
		cases = append(cases, bbdCase{fmt.Sprintf("current zip of extension %q", ext), "GET",
			func(*bbdWorld) string { return "/api/extensions/" + ext + "/bundles/current/download" }, admin, 0})
	}
	cases = append(cases,
		bbdCase{"current zip of an extension with no bundle", "GET", func(w *bbdWorld) string { return api.CurrentBundlePath(w.extC.ID) + "/download" }, admin, http.StatusNotFound},
		bbdCase{"zip #1 of an extension with no bundle", "GET", func(w *bbdWorld) string { return api.BundleDownloadPath(w.extC.ID, 1) }, admin, http.StatusNotFound},
		bbdCase{"CRX #1 of an extension with no bundle", "GET", func(w *bbdWorld) string { return api.BundleCRXPath(w.extC.ID, 1) }, admin, http.StatusNotFound},
		bbdCase{"B's zip, as A's admin", "GET", func(w *bbdWorld) string { return api.BundleDownloadPath(w.extB.ID, 1) }, admin, http.StatusNotFound},
		bbdCase{"B's CRX, as A's admin", "GET", func(w *bbdWorld) string { return api.BundleCRXPath(w.extB.ID, 1) }, admin, http.StatusNotFound},
		bbdCase{"B's zip, as A's tester", "GET", func(w *bbdWorld) string { return api.BundleDownloadPath(w.extB.ID, 1) }, func(w *bbdWorld) http.Header { return w.testerA }, http.StatusNotFound},
	)
	// Methods a download does not take.
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		cases = append(cases,
			bbdCase{m + " zip #1", m, func(w *bbdWorld) string { return api.BundleDownloadPath(w.extA.ID, 1) }, admin, http.StatusMethodNotAllowed},
			bbdCase{m + " CRX #1", m, func(w *bbdWorld) string { return api.BundleCRXPath(w.extA.ID, 1) }, admin, http.StatusMethodNotAllowed},
			bbdCase{m + " updater's CRX #1", m, func(w *bbdWorld) string { return bbdUpdatePath(w, w.updA) + "/crx/1" }, nobody, http.StatusMethodNotAllowed})
	}
	// The updater: the token in the path decides, cookies do not.
	upd := func(name string, path func(w *bbdWorld) string, who func(w *bbdWorld) http.Header, status int) {
		cases = append(cases, bbdCase{"updater: " + name, "GET", path, who, status})
	}
	tokenOf := func(u api.Updates) string { return u.UpdateURL[strings.LastIndex(u.UpdateURL, "/")+1:] }
	upd("a wrong token", func(w *bbdWorld) string {
		return api.UpdatePrefix + idA(w) + "/" + bbdFlip(tokenOf(w.updA)) + "/crx/1"
	}, nobody, http.StatusNotFound)
	upd("a wrong token, with the admin's cookie", func(w *bbdWorld) string {
		return api.UpdatePrefix + idA(w) + "/" + bbdFlip(tokenOf(w.updA)) + "/crx/1"
	}, admin, http.StatusNotFound)
	upd("B's token under A's id", func(w *bbdWorld) string {
		return api.UpdatePrefix + idA(w) + "/" + tokenOf(w.updB) + "/crx/1"
	}, nobody, http.StatusNotFound)
	upd("A's token under B's id", func(w *bbdWorld) string {
		return api.UpdatePrefix + strconv.FormatInt(w.extB.ID, 10) + "/" + tokenOf(w.updA) + "/crx/1"
	}, nobody, http.StatusNotFound)
	upd("a one-letter token", func(w *bbdWorld) string { return api.UpdatePrefix + idA(w) + "/x/crx/1" }, nobody, http.StatusNotFound)
	upd("a HEAD with a wrong token", func(w *bbdWorld) string {
		return api.UpdatePrefix + idA(w) + "/" + bbdFlip(tokenOf(w.updA)) + "/crx/2"
	}, nobody, http.StatusNotFound)
	cases[len(cases)-1].method = "HEAD"
	for _, nb := range numbers {
		upd(fmt.Sprintf("CRX %s", bbdShort(nb.number)), func(w *bbdWorld) string { return bbdUpdatePath(w, w.updA) + "/crx/" + nb.number }, nobody, nb.status)
	}
	return cases
}

// bbdShort names a path segment in a message: quoted, or by its length
// when long.
func bbdShort(s string) string {
	if len(s) > 40 {
		return fmt.Sprintf("%q… (%d characters)", s[:10], len(s))
	}
	return strconv.Quote(s)
}

// bbdUpdatePath is the path of an update URL.
func bbdUpdatePath(w *bbdWorld, u api.Updates) string {
	return strings.TrimPrefix(u.UpdateURL, w.e.URL)
}

// bbdRefused checks a refusal: a 4xx problem, no Location, nothing of the
// storage in it; it returns the problem (empty for HEAD).
func bbdRefused(t *testing.T, e *env, c bbdCase, h bbdHop) api.Problem {
	t.Helper()
	resp := h.resp
	what := c.method + " " + c.name
	if loc := resp.Header.Get("Location"); loc != "" {
		t.Errorf("%s: refused with Location %q: a refusal must not carry a URL", what, loc)
	}
	if resp.StatusCode < 400 || resp.StatusCode >= 500 || (c.status != 0 && resp.StatusCode != c.status) {
		want := "a 4xx"
		if c.status != 0 {
			want = strconv.Itoa(c.status)
		}
		t.Errorf("%s: %d, want %s (%.200s)", what, resp.StatusCode, want, h.body)
		return api.Problem{}
	}
	if ct := resp.Header.Get("Content-Type"); ct != api.ProblemContentType {
		t.Errorf("%s: Content-Type %q, want %s", what, ct, api.ProblemContentType)
	}
	low := strings.ToLower(string(h.body))
	if strings.Contains(low, "x-amz") || bytes.Contains(h.body, []byte("PK\x03\x04")) || bytes.Contains(h.body, []byte("Cr24")) ||
		(e.Backend == backendScaleOut && strings.Contains(low, bbdStorage(t).Host)) {
		t.Errorf("%s: the refusal carries something of the storage or the bundle: %.300s", what, h.body)
	}
	var p api.Problem
	if c.method == "HEAD" {
		if len(h.body) != 0 {
			t.Errorf("%s: a HEAD answered %d body bytes", what, len(h.body))
		}
		return p
	}
	if err := json.Unmarshal(h.body, &p); err != nil || p.Status != resp.StatusCode || p.Type == "" || p.Title == "" || len(p.Detail) < 10 {
		t.Errorf("%s: problem %+v (%v), want status %d, a type, a title and a detail", what, p, err, resp.StatusCode)
	}
	return p
}

// TestBlackBoxDownloadsRefusals: no session, a stranger, a revoked tester,
// a wrong update token, a bundle that does not exist, junk for a number:
// each is refused with a problem and no Location, and on S3 with the very
// problem file storage answers.
func TestBlackBoxDownloadsRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := newBBDWorld(t, e)
	var ref *bbdWorld // the same world on file storage
	if e.Backend == backendScaleOut {
		ref = newBBDWorld(t, bbdFilesEnv(t))
		if ref.extA.ID != w.extA.ID || ref.extB.ID != w.extB.ID {
			t.Logf("ids differ between the backends (A %d/%d, B %d/%d): details are compared without them", w.extA.ID, ref.extA.ID, w.extB.ID, ref.extB.ID)
		}
	}
	cases := bbdCases()
	for _, c := range cases {
		h := bbdRaw(t, c.method, e.URL+c.target(w), c.who(w))
		p := bbdRefused(t, e, c, h)
		if ref == nil {
			continue
		}
		rh := bbdRaw(t, c.method, ref.e.URL+c.target(ref), c.who(ref))
		rp := bbdRefused(t, ref.e, c, rh)
		// The admins of the two worlds have e-mails of their own, and a
		// revoked tester is told whom to ask: compared without them.
		if h.resp.StatusCode != rh.resp.StatusCode || p.Type != rp.Type || p.Title != rp.Title || bbdWithoutEmails(p.Detail) != bbdWithoutEmails(rp.Detail) {
			t.Errorf("%s %s: on S3 %d %+v; on file storage %d %+v", c.method, c.name, h.resp.StatusCode, p, rh.resp.StatusCode, rp)
		}
	}
	t.Logf("%d refusals checked on %s", len(cases), e.Backend)
}

// TestBlackBoxDownloadsRevokedTesterIsCutOff: a tester who got a download
// is revoked; their next request to Betaport is refused, zip and CRX. On S3
// the storage URL they already had is the storage's to judge: it is logged
// what it does, and checked that it stops working once it expires.
func TestBlackBoxDownloadsRevokedTesterIsCutOff(t *testing.T) {
	// Not parallel: it sets how long the package's download URLs live.
	const life = 3 // seconds: the URL lifetime this test sets
	restore := bphttp.SetDownloadURLExpiry(life * time.Second)
	t.Cleanup(restore)
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	b := p.submitAny(t, validZip(t, "1.0.0"))
	tt, _ := e.testerOf(t, p.ext, betaport.TesterActive)
	tester := e.cookie(t, betaport.Session{TesterID: tt.ID})
	zipPath := api.CurrentBundlePath(p.ext.ID) + "/download"
	crxPath := api.BundleCRXPath(p.ext.ID, b.Number)
	want := bbdStored(t, e, p.ext.ID, b.Number, "zip")

	first, final := e.bbdGet(t, "GET", zipPath, tester)
	var old *url.URL
	if e.Backend == backendScaleOut {
		old = e.bbdWantRedirect(t, "the tester's zip", first, tester, "zip", life)
	} else {
		bbdWantServedByBetaport(t, "the tester's zip", first)
	}
	bbdWantFile(t, "the tester's zip", final, "zip", want)

	bbdRevoke(t, e, admin, p.ext.ID, tt.ID)
	later := e.cookie(t, betaport.Session{TesterID: tt.ID}) // a session made after the revoke
	for _, who := range []struct {
		name string
		h    http.Header
	}{{"the session they had", tester}, {"a session made after", later}} {
		for _, path := range []string{zipPath, api.BundleDownloadPath(p.ext.ID, b.Number), crxPath} {
			for _, m := range []string{"GET", "HEAD"} {
				h := bbdRaw(t, m, e.URL+path, who.h)
				bbdRefused(t, e, bbdCase{name: "revoked tester, " + who.name + ", " + path, method: m}, h)
				if h.resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("%s %s as a revoked tester (%s): %d, want 401", m, path, who.name, h.resp.StatusCode)
				}
			}
		}
	}
	if old == nil {
		return // file storage: Betaport serves every byte, and refuses them now
	}
	start := time.Now()
	h := bbdRaw(t, "GET", old.String(), nil)
	t.Logf("the storage URL the tester got before the revoke answers %d (%d bytes) right after it: it is the storage's until it expires (%d s here, 5 minutes by default)",
		h.resp.StatusCode, len(h.body), life)
	for h.resp.StatusCode == http.StatusOK {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("the storage URL still answers 200 %s after the revoke, though it was made to live %d s", time.Since(start).Round(time.Second), life)
		}
		time.Sleep(250 * time.Millisecond)
		h = bbdRaw(t, "GET", old.String(), nil)
	}
	if h.resp.StatusCode != http.StatusForbidden || bytes.Contains(h.body, want) {
		t.Errorf("the expired storage URL answers %d with %d bytes, want 403 and no bundle", h.resp.StatusCode, len(h.body))
	}
	t.Logf("it is refused (%d) from %s after the revoke on", h.resp.StatusCode, time.Since(start).Round(100*time.Millisecond))
}

// TestBlackBoxDownloadsTamperedURLsAreRefused: a presigned URL edited by
// hand (its signature, its object key, the file's type or name it signs,
// its lifetime) is refused by the storage, and it only reads: PUT and
// DELETE with it change nothing.
func TestBlackBoxDownloadsTamperedURLsAreRefused(t *testing.T) {
	t.Parallel()
	if backend() != backendScaleOut {
		t.Skip("file storage hands out no storage URL; this runs on PostgreSQL + S3 (TestOnPostgresAndS3)")
	}
	e := newEnv(t)
	w := newBBDWorld(t, e)
	zipA := e.bbdLocation(t, api.BundleDownloadPath(w.extA.ID, 2), w.testerA, "zip", 300)
	zipA1 := e.bbdLocation(t, api.BundleDownloadPath(w.extA.ID, 1), w.testerA, "zip", 300)
	crxA := e.bbdLocation(t, api.BundleCRXPath(w.extA.ID, 2), w.adminA, "crx", 300)
	zipB := e.bbdLocation(t, api.BundleDownloadPath(w.extB.ID, 1), w.adminB, "zip", 300)
	wantA, wantB := w.stored(t, w.extA, 2, "zip"), w.stored(t, w.extB, 1, "zip")
	wantA1, wantCRX := w.stored(t, w.extA, 1, "zip"), w.stored(t, w.extA, 2, "crx")

	// Untouched, each works: a refusal below is the edit's.
	for _, u := range []struct {
		name string
		u    *url.URL
		want []byte
	}{{"A's zip #2", zipA, wantA}, {"A's zip #1", zipA1, wantA1}, {"A's CRX", crxA, wantCRX}, {"B's zip", zipB, wantB}} {
		if h := bbdRaw(t, "GET", u.u.String(), nil); h.resp.StatusCode != 200 || !bytes.Equal(h.body, u.want) {
			t.Fatalf("the untouched URL of %s answers %d with %d bytes", u.name, h.resp.StatusCode, len(h.body))
		}
	}
	// The same URL rebuilt by this test's editing, with nothing changed,
	// still works: the editing itself breaks nothing.
	q := zipA.Query()
	if h := bbdRaw(t, "GET", bbdSetQuery(zipA, "X-Amz-Signature", bbdPtr(q.Get("X-Amz-Signature"))), nil); h.resp.StatusCode != 200 {
		t.Fatalf("the URL rebuilt unchanged answers %d: %.300s", h.resp.StatusCode, h.body)
	}
	withPath := func(u, other *url.URL) string {
		c := *u
		c.Path, c.RawPath = other.Path, other.RawPath
		return c.String()
	}
	appendPath := func(u *url.URL, s string) string {
		c := *u
		c.Path, c.RawPath = u.Path+s, ""
		return c.String()
	}
	date, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if err != nil {
		t.Fatalf("X-Amz-Date %q: %v", q.Get("X-Amz-Date"), err)
	}
	tampered := []struct{ name, url string }{
		{"signature changed", bbdSetQuery(zipA, "X-Amz-Signature", bbdPtr(bbdFlip(q.Get("X-Amz-Signature"))))},
		{"signature removed", bbdSetQuery(zipA, "X-Amz-Signature", nil)},
		{"signature of another bundle's URL", bbdSetQuery(zipA, "X-Amz-Signature", bbdPtr(zipB.Query().Get("X-Amz-Signature")))},
		{"object key of another extension's bundle", withPath(zipA, zipB)},
		{"object key of an older bundle", withPath(zipA, zipA1)},
		{"object key of the CRX", withPath(zipA, crxA)},
		{"object key with a character more", appendPath(zipA, "x")},
		{"Content-Type changed to text/html", bbdSetQuery(zipA, "response-content-type", bbdPtr("text/html"))},
		{"Content-Type removed", bbdSetQuery(zipA, "response-content-type", nil)},
		{"Content-Disposition changed to inline", bbdSetQuery(zipA, "response-content-disposition", bbdPtr("inline"))},
		{"Content-Disposition renamed to .html", bbdSetQuery(zipA, "response-content-disposition", bbdPtr(`attachment; filename="x.html"`))},
		{"Content-Disposition removed", bbdSetQuery(zipA, "response-content-disposition", nil)},
		{"lifetime raised to 7 days", bbdSetQuery(zipA, "X-Amz-Expires", bbdPtr("604800"))},
		{"signed an hour later", bbdSetQuery(zipA, "X-Amz-Date", bbdPtr(date.Add(time.Hour).Format("20060102T150405Z")))},
		{"CRX signature changed", bbdSetQuery(crxA, "X-Amz-Signature", bbdPtr(bbdFlip(crxA.Query().Get("X-Amz-Signature"))))},
	}
	for _, tc := range tampered {
		h := bbdRaw(t, "GET", tc.url, nil)
		if h.resp.StatusCode < 400 || h.resp.StatusCode >= 500 ||
			bytes.Contains(h.body, wantA) || bytes.Contains(h.body, wantB) || bytes.Contains(h.body, wantA1) || bytes.Contains(h.body, wantCRX) {
			t.Errorf("tampered URL (%s) answers %d with %d bytes (%s), want a refusal", tc.name, h.resp.StatusCode, len(h.body), h.resp.Header.Get("Content-Type"))
		} else {
			t.Logf("tampered URL (%s): %d", tc.name, h.resp.StatusCode)
		}
	}

	// The URL is for reading: writing or deleting with it is refused and
	// the bundle stays as published.
	for _, m := range []string{"PUT", "DELETE", "POST"} {
		req, err := http.NewRequest(m, zipA.String(), strings.NewReader("PK\x03\x04 not the bundle"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", api.ZipContentType)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("%s with the presigned GET URL answers %d, want a refusal", m, resp.StatusCode)
		}
	}
	if h := bbdRaw(t, "GET", zipA.String(), nil); h.resp.StatusCode != 200 || !bytes.Equal(h.body, wantA) {
		t.Errorf("after the PUT/DELETE attempts the URL answers %d with %d bytes, want the bundle unchanged", h.resp.StatusCode, len(h.body))
	}
	if got := w.stored(t, w.extA, 2, "zip"); !bytes.Equal(got, wantA) {
		t.Error("the stored bundle changed")
	}
}

// TestBlackBoxDownloadsExpiredURLStartsAgainFromBetaport (S3): a download
// under way when its URL expires finishes; resumed later at the same URL
// it is refused; Betaport's link then gives a new URL that resumes it.
func TestBlackBoxDownloadsExpiredURLStartsAgainFromBetaport(t *testing.T) {
	// Not parallel: it sets how long the package's download URLs live.
	if backend() != backendScaleOut {
		t.Skip("file storage hands out no storage URL; this runs on PostgreSQL + S3 (TestOnPostgresAndS3)")
	}
	const life = 2
	restore := bphttp.SetDownloadURLExpiry(life * time.Second)
	t.Cleanup(restore)
	e := newEnv(t)
	ctx := context.Background()
	team := storetest.MustTeam(t, e.DB, betaport.PlanStarter)
	ext := storetest.MustExtension(t, e.DB, team, "Big")
	admin := e.adminOf(t, team)
	// A bundle far larger than the socket buffers on the way, so most of
	// it is still at the storage when the URL expires.
	data := make([]byte, 24<<20)
	rand.Read(data)
	sum := sha256.Sum256(data)
	b := &betaport.Bundle{ExtensionID: ext.ID, Name: ext.Name, Version: "1.0.0", ManifestVersion: 3,
		Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), FileCount: 1, Source: "test"}
	b.BlobKey = betaport.BundleKey(ext.ID, b.SHA256)
	if err := e.Blobs.WriteAll(ctx, b.BlobKey, data, &blob.WriterOptions{ContentType: api.ZipContentType}); err != nil {
		t.Fatal(err)
	}
	if err := e.DB.PublishBundle(ctx, b); err != nil {
		t.Fatal(err)
	}
	path := api.BundleDownloadPath(ext.ID, b.Number)

	loc := e.bbdLocation(t, path, admin, "zip", life)
	req, _ := http.NewRequest("GET", loc.String(), nil)
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the storage URL answers %d", resp.StatusCode)
	}
	head := make([]byte, 64<<10)
	if _, err := io.ReadFull(resp.Body, head); err != nil {
		t.Fatal(err)
	}
	time.Sleep((life + 2) * time.Second) // the URL has expired
	rest, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(append(head, rest...), data) {
		t.Fatalf("a download under way when its URL expired ended with %d of %d bytes (%v)", len(head)+len(rest), len(data), err)
	}

	// Resumed at the expired URL: refused.
	h := bbdRaw(t, "GET", loc.String(), http.Header{"Range": {"bytes=1000-"}})
	if h.resp.StatusCode != http.StatusForbidden || len(h.body) > 4096 {
		t.Errorf("resuming at the expired URL answers %d with %d bytes, want 403", h.resp.StatusCode, len(h.body))
	}
	// Betaport's link again: a new URL that resumes.
	loc2 := e.bbdLocation(t, path, admin, "zip", life)
	if loc2.String() == loc.String() {
		t.Error("Betaport handed out the expired URL again")
	}
	h = bbdRaw(t, "GET", loc2.String(), http.Header{"Range": {"bytes=1000-"}})
	if h.resp.StatusCode != http.StatusPartialContent || !bytes.Equal(h.body, data[1000:]) {
		t.Errorf("resuming at the new URL answers %d with %d bytes, want 206 and the rest of the bundle", h.resp.StatusCode, len(h.body))
	}
}

// bbdPublish publishes a valid zip whose manifest carries the extension's
// name, JSON-encoded whatever it holds, as ext's next bundle (as the
// package's publish does, whose demo zip quotes the name the Go way, which
// is not JSON for control characters).
func bbdPublish(t *testing.T, e *env, ext *betaport.Extension, version string) *betaport.Bundle {
	t.Helper()
	ctx := context.Background()
	manifest, err := json.Marshal(map[string]any{"manifest_version": 3, "name": ext.Name, "version": version})
	if err != nil {
		t.Fatal(err)
	}
	zipBytes := makeZip(t, map[string]string{"manifest.json": string(manifest), "background.js": "// hi"})
	sum := sha256.Sum256(zipBytes)
	b := &betaport.Bundle{ExtensionID: ext.ID, Name: ext.Name, Version: version, ManifestVersion: 3,
		Size: int64(len(zipBytes)), SHA256: hex.EncodeToString(sum[:]), FileCount: 2, Source: "test"}
	b.BlobKey = betaport.BundleKey(ext.ID, b.SHA256)
	if err := e.Blobs.WriteAll(ctx, b.BlobKey, zipBytes, &blob.WriterOptions{ContentType: api.ZipContentType}); err != nil {
		t.Fatal(err)
	}
	if err := e.DB.PublishBundle(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBlackBoxDownloadsHostileNamesGiveSafeFileNames: extensions named
// with quotes, paths, line breaks, control and bidi characters, or at
// great length still download under a file name a person can save: one
// attachment, no header injected, no path, no hidden or spoofed extension.
func TestBlackBoxDownloadsHostileNamesGiveSafeFileNames(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanStarter)
	admin := e.adminOf(t, team)
	for _, name := range []string{
		`..\..\Windows\evil"; filename="x.html`,
		"../../../etc/passwd",
		"Tab\r\nSet-Cookie: pwned=1\r\n\r\n<script>alert(1)</script>",
		"Tab\x01Tamer\x7f\x1b[31m", // (PostgreSQL text cannot hold NUL)
		"Ünïcødé 🚀 Ŧab Ŧamer",
		"\u202eexe.zip",
		`/\:*?"<>|`,
		"...",
		strings.Repeat("A very long extension name ", 15),
	} {
		ext := storetest.MustExtension(t, e.DB, team, name)
		b := bbdPublish(t, e, ext, "1.0.0")
		for _, r := range []struct{ kind, path string }{
			{"zip", api.BundleDownloadPath(ext.ID, b.Number)},
			{"crx", api.BundleCRXPath(ext.ID, b.Number)},
		} {
			what := fmt.Sprintf("%s of %s", r.kind, bbdShort(name))
			first, final := e.bbdGet(t, "GET", r.path, admin)
			e.bbdWantFirst(t, what, first, admin, r.kind)
			if final.resp.StatusCode != 200 {
				t.Errorf("%s: the download ends with %d: %.300s", what, final.resp.StatusCode, final.body)
				continue
			}
			got := bbdWantFileName(t, what, final.resp.Header.Get("Content-Disposition"), "."+r.kind)
			if mt, _, _ := mime.ParseMediaType(final.resp.Header.Get("Content-Type")); mt != bbdType(r.kind) {
				t.Errorf("%s: Content-Type %q", what, final.resp.Header.Get("Content-Type"))
			}
			for _, h := range []bbdHop{first, final} {
				for _, c := range h.resp.Header.Values("Set-Cookie") {
					if strings.Contains(c, "pwned") {
						t.Errorf("%s: the name injected a header: Set-Cookie %q", what, c)
					}
				}
			}
			t.Logf("%s saves as %q", what, got)
		}
	}
}

// TestBlackBoxDownloadsIgnoreStorageParameters: storage parameters added
// to Betaport's link (a type, a name, a lifetime, a signature, a version)
// change nothing of what it hands out: the file stays an attachment of its
// own type, and the storage URL lives no longer.
func TestBlackBoxDownloadsIgnoreStorageParameters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := newBBDWorld(t, e)
	junk := "?response-content-type=text%2Fhtml&response-content-disposition=inline%3B%20filename%3Dx.html" +
		"&X-Amz-Expires=604800&X-Amz-Signature=00&versionId=1&x-id=PutObject&Range=bytes%3D0-0"
	for _, r := range []struct {
		name, target, kind string
		number             int64
		who                http.Header
	}{
		{"current zip", api.CurrentBundlePath(w.extA.ID) + "/download", "zip", 2, w.testerA},
		{"zip #1", api.BundleDownloadPath(w.extA.ID, 1), "zip", 1, w.testerA},
		{"CRX #2", api.BundleCRXPath(w.extA.ID, 2), "crx", 2, w.adminA},
		{"updater's CRX", w.updA.UpdateURL + "/crx/2", "crx", 2, nil},
	} {
		first, final := e.bbdGet(t, "GET", r.target+junk, r.who)
		e.bbdWantFirst(t, r.name+" with storage parameters", first, r.who, r.kind)
		if loc := first.resp.Header.Get("Location"); loc != "" {
			u, _ := url.Parse(loc)
			for _, k := range []string{"versionId", "Range"} {
				if u.Query().Has(k) {
					t.Errorf("%s: the storage URL took the request's %s: %s", r.name, k, loc)
				}
			}
			// (the SDK's presigner adds x-id=GetObject itself)
			if x := u.Query()["x-id"]; len(x) > 1 || (len(x) == 1 && x[0] != "GetObject") {
				t.Errorf("%s: the storage URL took the request's x-id: %s", r.name, loc)
			}
			if strings.Contains(loc, "x.html") || strings.Contains(loc, "text%2Fhtml") {
				t.Errorf("%s: the storage URL took the request's type or name: %s", r.name, loc)
			}
		}
		bbdWantFile(t, r.name+" with storage parameters", final, r.kind, w.stored(t, w.extA, r.number, r.kind))
	}
}

// TestBlackBoxDownloadsUpdaterInstallsThroughTheRedirect: Chromium's
// updater (no cookies, follows redirects) gets from the update check to a
// valid CRX of the offered version; after a token rotation the old CRX URL
// is refused without a Location, and the new one installs the rebuilt CRX.
func TestBlackBoxDownloadsUpdaterInstallsThroughTheRedirect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	p.submitAny(t, validZip(t, "1.0.0"))
	b2 := p.submitAny(t, validZip(t, "1.2.0"))
	u := e.updates(t, p.ext, admin)
	chromium := http.Header{"User-Agent": {"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"}}

	_, g := checkUpdate(t, u.UpdateURL, u.ChromeID, "1.0.0")
	version, codebase := offered(t, g, u.ChromeID)
	if version != b2.Version || !strings.HasPrefix(codebase, u.UpdateURL+"/crx/") {
		t.Fatalf("the update check offers %s at %s, want %s under %s", version, codebase, b2.Version, u.UpdateURL)
	}
	first, final := e.bbdGet(t, "GET", codebase, chromium)
	e.bbdWantFirst(t, "the updater's CRX", first, chromium, "crx")
	bbdWantFile(t, "the updater's CRX", final, "crx", bbdStored(t, e, p.ext.ID, b2.Number, "crx"))
	wantCRX(t, final.body, u, version, "")
	// With Go's client and its own redirect policy, as an updater would.
	resp, body := get(t, codebase)
	if resp.StatusCode != 200 || !bytes.Equal(body, final.body) {
		t.Fatalf("following redirects on its own, the updater gets %d and %d bytes", resp.StatusCode, len(body))
	}
	oldLocation := first.resp.Header.Get("Location")

	resp, body = e.do(t, "POST", api.UpdateTokenPath(p.ext.ID), admin)
	var rotated api.Updates
	if resp.StatusCode != 200 || json.Unmarshal(body, &rotated) != nil || rotated.UpdateURL == u.UpdateURL {
		t.Fatalf("rotating the token = %d %s", resp.StatusCode, body)
	}
	h := bbdRaw(t, "GET", codebase, chromium)
	bbdRefused(t, e, bbdCase{name: "the CRX URL of a rotated token", method: "GET", status: http.StatusNotFound}, h)
	if oldLocation != "" {
		h := bbdRaw(t, "GET", oldLocation, nil)
		t.Logf("the storage URL handed to the updater before the rotation answers %d (%d bytes) after it; it expires within 5 minutes either way",
			h.resp.StatusCode, len(h.body))
	}
	_, g = checkUpdate(t, rotated.UpdateURL, rotated.ChromeID, "1.0.0")
	version, codebase = offered(t, g, rotated.ChromeID)
	first, final = e.bbdGet(t, "GET", codebase, chromium)
	e.bbdWantFirst(t, "the updater's CRX after rotation", first, chromium, "crx")
	bbdWantFile(t, "the updater's CRX after rotation", final, "crx", bbdStored(t, e, p.ext.ID, b2.Number, "crx"))
	wantCRX(t, final.body, rotated, version, "")
	if oldLocation != "" {
		h := bbdRaw(t, "GET", oldLocation, nil)
		t.Logf("once the rebuilt CRX was fetched, the old storage URL answers %d (%d bytes)", h.resp.StatusCode, len(h.body))
	}
}

// TestBlackBoxDownloadsFileStorageServesTheBytes (files): Betaport serves
// every download itself: 200 with the bytes, the SHA-256 as the zip's ETag,
// 304 for it, ranges, HEAD, and a problem for a range it cannot serve.
func TestBlackBoxDownloadsFileStorageServesTheBytes(t *testing.T) {
	t.Parallel()
	if backend() != backendFiles {
		t.Skip("on S3 the storage serves the bytes (the other BlackBoxDownloads tests)")
	}
	e := newEnv(t)
	w := newBBDWorld(t, e)
	for _, r := range []struct {
		name, target, kind string
		number             int64
		who                http.Header
	}{
		{"current zip", e.URL + api.CurrentBundlePath(w.extA.ID) + "/download", "zip", 2, w.testerA},
		{"zip #1", e.URL + api.BundleDownloadPath(w.extA.ID, 1), "zip", 1, w.adminA},
		{"CRX #2", e.URL + api.BundleCRXPath(w.extA.ID, 2), "crx", 2, w.adminA},
		{"updater's CRX", w.updA.UpdateURL + "/crx/2", "crx", 2, nil},
	} {
		want := w.stored(t, w.extA, r.number, r.kind)
		with := func(kv ...string) http.Header {
			h := http.Header{}
			for k, v := range r.who {
				h[k] = v
			}
			for i := 0; i < len(kv); i += 2 {
				h.Set(kv[i], kv[i+1])
			}
			return h
		}
		h := bbdRaw(t, "GET", r.target, r.who)
		bbdWantServedByBetaport(t, r.name, h)
		bbdWantFile(t, r.name, h, r.kind, want)
		etag := h.resp.Header.Get("ETag")
		if r.kind == "zip" && !strings.Contains(etag, w.bundlesA[r.number-1].SHA256) {
			t.Errorf("%s: ETag %q, want the SHA-256 %s", r.name, etag, w.bundlesA[r.number-1].SHA256)
		}
		if nm := bbdRaw(t, "GET", r.target, with("If-None-Match", etag)); nm.resp.StatusCode != http.StatusNotModified || len(nm.body) != 0 {
			t.Errorf("%s: If-None-Match with its ETag answers %d with %d bytes, want 304", r.name, nm.resp.StatusCode, len(nm.body))
		}
		rg := bbdRaw(t, "GET", r.target, with("Range", "bytes=5-14"))
		if rg.resp.StatusCode != http.StatusPartialContent || !bytes.Equal(rg.body, want[5:15]) ||
			rg.resp.Header.Get("Content-Range") != fmt.Sprintf("bytes 5-14/%d", len(want)) {
			t.Errorf("%s: Range bytes=5-14 answers %d %q with %d bytes", r.name, rg.resp.StatusCode, rg.resp.Header.Get("Content-Range"), len(rg.body))
		}
		hd := bbdRaw(t, "HEAD", r.target, r.who)
		if hd.resp.StatusCode != 200 || len(hd.body) != 0 || hd.resp.Header.Get("Content-Length") != strconv.Itoa(len(want)) ||
			hd.resp.Header.Get("ETag") != etag || hd.resp.Header.Get("Location") != "" {
			t.Errorf("%s: HEAD answers %d, %d bytes, Content-Length %q, ETag %q", r.name, hd.resp.StatusCode, len(hd.body),
				hd.resp.Header.Get("Content-Length"), hd.resp.Header.Get("ETag"))
		}
		bad := bbdRaw(t, "GET", r.target, with("Range", fmt.Sprintf("bytes=%d-", len(want))))
		if bad.resp.StatusCode != http.StatusRequestedRangeNotSatisfiable {
			t.Errorf("%s: a range past the end answers %d, want 416", r.name, bad.resp.StatusCode)
		} else if ct := bad.resp.Header.Get("Content-Type"); ct != api.ProblemContentType {
			t.Errorf("%s: the 416 is %q (%.100q), want a problem as every error (DESIGN: Errors)", r.name, ct, bad.body)
		}
	}
}

var bbdEmail = regexp.MustCompile(`[a-z0-9.+-]+@example\.com`)

func bbdWithoutEmails(s string) string { return bbdEmail.ReplaceAllString(s, "EMAIL") }
