package http_test

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/blobstore"
	"github.com/betaport/betaport/server/credential"
	bphttp "github.com/betaport/betaport/server/http"
	"github.com/betaport/betaport/server/postgres"
	"github.com/betaport/betaport/server/sqlite"
	"github.com/betaport/betaport/server/storetest"
)

type env struct {
	*httptest.Server
	DB      betaport.Store
	Blobs   *blob.Bucket
	App     *bphttp.Server
	Dir     string
	Backend string // backendFiles or backendScaleOut
}

// newEnv starts the real handler on real storage: a new SQLite file and
// file blobs, or, when this test binary runs the suite on the scale-out
// backend (see TestOnPostgresAndS3), a new PostgreSQL database and S3
// bucket. The database is migrated: a copy of emptyStore.
func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvFrom(t, emptyStore)
}

// newEnvFrom starts the real handler on a copy of a snapshot, the test's
// own (see snapshot).
func newEnvFrom(t testing.TB, from *snapshot) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	var db betaport.Store
	dbURL, blobURL := from.copyTo(t, dir)
	var err error
	switch backend() {
	case backendScaleOut:
		db, err = postgres.Open(ctx, dbURL)
	default:
		db, err = sqlite.Open(ctx, dbURL)
		blobURL, _ = blobstore.FileURL(filepath.Join(dir, "blobs"))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	blobs, err := blobstore.Open(ctx, blobURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blobs.Close() })
	s := &bphttp.Server{Store: db, Blobs: blobs, Logger: testLogger(t),
		Secret: []byte(credential.NewToken()), SigningKeys: testKeyring, // each server its own secret
		WebhookAllowPrivate: true, // the tests' receivers are on loopback
		CLIBinary:           testCLIBinary(t)}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	s.BaseURL = ts.URL
	s.Publish.BaseURL = s.BaseURL
	return &env{Server: ts, DB: db, Blobs: blobs, App: s, Dir: dir, Backend: backend()}
}

func (e *env) do(t *testing.T, method, path string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	return e.send(t, method, path, header, nil)
}

// rawBody is a request body sent as it is, with its content type (a
// multipart form).
type rawBody struct {
	contentType string
	data        []byte
}

// send makes one request; a non-nil body is sent as JSON (a rawBody as
// it is).
func (e *env) send(t *testing.T, method, path string, header http.Header, body any) (*http.Response, []byte) {
	t.Helper()
	if raw, ok := body.(rawBody); ok {
		req, err := http.NewRequest(method, e.URL+path, bytes.NewReader(raw.data))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", raw.contentType)
		for k, v := range header {
			req.Header[k] = v
		}
		req.Header.Set("Accept-Encoding", "identity")
		return e.roundTrip(t, req)
	}
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.URL+path, r)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	// Ask for exactly the encodings the test names; Go's transport would
	// otherwise add gzip and decode it behind our back.
	if req.Header.Get("Accept-Encoding") == "" {
		req.Header.Set("Accept-Encoding", "identity")
	}
	return e.roundTrip(t, req)
}

// roundTrip sends req as it is and reads the whole answer.
func (e *env) roundTrip(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	var reqBody []byte
	if req.GetBody != nil {
		if r, err := req.GetBody(); err == nil {
			reqBody, _ = io.ReadAll(r)
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	checkContract(t, req, reqBody, resp, body)
	return resp, body
}

// wantProblem checks that a response is a problem of the given status and
// type whose detail says something.
func wantProblem(t *testing.T, resp *http.Response, body []byte, status int, typ string) api.Problem {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != api.ProblemContentType {
		t.Fatalf("Content-Type = %q, want %q; body %s", ct, api.ProblemContentType, body)
	}
	var p api.Problem
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("problem body %q: %v", body, err)
	}
	if p.Status != status || p.Type != typ || p.Title == "" || len(p.Detail) < 10 {
		t.Fatalf("problem = %+v, want status %d type %s with a title and detail", p, status, typ)
	}
	return p
}

func TestHealth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, path := range []string{api.PathHealth, api.PathReady} {
		resp, body := e.do(t, "GET", path, nil)
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"status":"ok"`) {
			t.Fatalf("%s = %d %s", path, resp.StatusCode, body)
		}
	}
	// With its database gone the service is alive but not ready.
	e.DB.Close()
	resp, body := e.do(t, "GET", api.PathReady, nil)
	p := wantProblem(t, resp, body, http.StatusServiceUnavailable, api.ProblemUnavailable)
	if !strings.Contains(p.Detail, "database unreachable") || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("readyz problem = %+v, Retry-After %q", p, resp.Header.Get("Retry-After"))
	}
	if resp, _ := e.do(t, "GET", api.PathHealth, nil); resp.StatusCode != 200 {
		t.Fatalf("healthz with the database gone = %d, want 200", resp.StatusCode)
	}
}

func TestExtensions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	a := storetest.MustExtension(t, e.DB, team, "Alpha")
	storetest.MustExtension(t, e.DB, team, "Beta")
	other := storetest.MustTeam(t, e.DB, betaport.PlanStarter)
	storetest.MustExtension(t, e.DB, other, "Not theirs")
	admin := e.adminOf(t, team)

	resp, body := e.do(t, "GET", api.PathExtensions, admin)
	var list []betaport.Extension
	if resp.StatusCode != 200 || json.Unmarshal(body, &list) != nil || len(list) != 2 || list[0].Name != "Alpha" {
		t.Fatalf("GET /api/extensions = %d %s", resp.StatusCode, body)
	}
	resp, body = e.do(t, "GET", api.ExtensionPath(a.ID), admin)
	var got betaport.Extension
	if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil || got.ID != a.ID || got.Name != "Alpha" {
		t.Fatalf("GET extension = %d %s", resp.StatusCode, body)
	}
}

func TestProblems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		method, path string
		status       int
		typ          string
	}{
		{"GET", "/api/extensions/999", 401, api.ProblemUnauthorized},
		{"GET", "/api/no-such-thing", 404, api.ProblemNotFound},
		{"DELETE", "/api/extensions", 405, api.ProblemMethodNotAllowed},
		{"POST", "/healthz", 405, api.ProblemMethodNotAllowed},
		{"GET", "/web/missing.css", 404, api.ProblemNotFound},
	}
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	admin := e.adminOf(t, team)
	for _, path := range []string{"/api/extensions/999", "/api/extensions/abc", "/api/extensions/-1"} {
		resp, body := e.do(t, "GET", path, admin)
		wantProblem(t, resp, body, 404, api.ProblemNotFound)
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			resp, body := e.do(t, tt.method, tt.path, nil)
			p := wantProblem(t, resp, body, tt.status, tt.typ)
			if tt.status == 405 && (resp.Header.Get("Allow") == "" || !strings.Contains(p.Detail, "GET")) {
				t.Fatalf("405 without the allowed methods: Allow %q, detail %q", resp.Header.Get("Allow"), p.Detail)
			}
		})
	}
}

// An address that names no page answers 404 with a page of the app that
// says so and offers the way back, not a problem document.
func TestUnknownPageIsAPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, path := range []string{"/no/such/page", "/extensions/abc", "/extensions/1/nope", "/login/"} {
		resp, body := e.do(t, "GET", path, nil)
		if resp.StatusCode != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET %s = %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		// (go-app writes attributes in no set order.)
		back := regexp.MustCompile(`<a [^>]*id="back-home"[^>]*>|<a [^>]*href="/"[^>]*id="back-home"[^>]*>`).Find(body)
		if !bytes.Contains(body, []byte(`Page not found`)) || !bytes.Contains(back, []byte(`href="/"`)) {
			t.Errorf("GET %s: the page does not say so or offer the way back:\n%.600s", path, body)
		}
	}
}

func TestPagesArePrerendered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Signed in: signed out, "/" is the sign-in page (TestSignedOutPagesGoToSignIn).
	admin := e.adminOf(t, storetest.MustTeam(t, e.DB, betaport.PlanProfessional))
	resp, body := e.do(t, "GET", "/", admin)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{`data-app="server"`, `<h1>Extensions</h1>`, `src="/wasm_exec.js"`, `href="/web/app.css"`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("prerendered / lacks %s", want)
		}
	}
	// Every asset the page names is ours: nothing points at another host.
	if bytes.Contains(body, []byte("githubusercontent")) || bytes.Contains(body, []byte("https://")) {
		t.Errorf("page refers to an outside host:\n%s", body)
	}
	// A page carries data: its ETag is of the page's bytes, not the build,
	// so an unchanged page revalidates with 304 (TestBlackBoxPagesETag*
	// check that one whose data changed does not).
	etag := resp.Header.Get("ETag")
	again := admin.Clone()
	again.Set("If-None-Match", etag)
	if resp, _ = e.do(t, "GET", "/", again); resp.StatusCode != 304 {
		t.Fatalf("revalidated unchanged page = %d, want 304", resp.StatusCode)
	}
	resp, body = e.do(t, "GET", "/extensions/12", admin)
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`class="shell"`)) {
		t.Fatalf("GET /extensions/12 = %d", resp.StatusCode)
	}
}

func TestServiceWorkerLeavesOtherRequestsAlone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	resp, body := e.do(t, "GET", "/app-worker.js", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /app-worker.js = %d", resp.StatusCode)
	}
	// Uploads (PUT) and API calls must reach the network with their
	// progress events: the worker answers GETs of its own assets only.
	for _, want := range []string{`event.request.method !== "GET"`, "resourcesToCache.includes(url.pathname)"} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("app-worker.js lacks %q", want)
		}
	}
}

func TestWasmExecIsGOROOTs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The go command says where GOROOT is: runtime.GOROOT() is empty in a
	// binary built with -trimpath, as make test builds.
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	want, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		t.Fatal(err)
	}
	resp, body := e.do(t, "GET", "/wasm_exec.js", nil)
	if resp.StatusCode != 200 || !bytes.Equal(body, want) {
		t.Fatalf("/wasm_exec.js = %d, %d bytes; want GOROOT's %d bytes", resp.StatusCode, len(body), len(want))
	}
}

func TestWasmIsPrecompressed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	resp, raw := e.do(t, "GET", "/web/app.wasm", nil)
	if resp.StatusCode == 404 {
		t.Fatal("web/app.wasm is not built: run `make wasm` before the tests (make test does)")
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/wasm" || resp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("identity wasm = %d %v", resp.StatusCode, resp.Header)
	}
	if !bytes.HasPrefix(raw, []byte("\x00asm")) {
		t.Fatal("app.wasm does not start with the wasm magic")
	}
	decoders := map[string]func(io.Reader) (io.Reader, error){
		"br":   func(r io.Reader) (io.Reader, error) { return brotli.NewReader(r), nil },
		"gzip": func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
	}
	for _, tt := range []struct{ accept, want string }{
		{"gzip, deflate, br, zstd", "br"},
		{"gzip", "gzip"},
		{"br;q=0, gzip", "gzip"},
	} {
		resp, body := e.do(t, "GET", "/web/app.wasm", http.Header{"Accept-Encoding": {tt.accept}})
		if got := resp.Header.Get("Content-Encoding"); got != tt.want {
			t.Fatalf("Accept-Encoding %q: Content-Encoding %q, want %q", tt.accept, got, tt.want)
		}
		if !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
			t.Fatalf("encoded wasm lacks Vary: Accept-Encoding")
		}
		if got := resp.Header.Get("X-Uncompressed-Content-Length"); got != strconv.Itoa(len(raw)) {
			t.Fatalf("X-Uncompressed-Content-Length = %q, want %d", got, len(raw))
		}
		if len(body) >= len(raw)/2 {
			t.Fatalf("%s body is %d bytes of %d: not compressed", tt.want, len(body), len(raw))
		}
		r, err := decoders[tt.want](bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		decoded, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(decoded, raw) {
			t.Fatalf("%s copy does not decode to app.wasm (%v)", tt.want, err)
		}
		// A second fetch with the ETag costs no body.
		resp2, body2 := e.do(t, "GET", "/web/app.wasm", http.Header{"Accept-Encoding": {tt.accept}, "If-None-Match": {resp.Header.Get("ETag")}})
		if resp2.StatusCode != http.StatusNotModified || len(body2) != 0 {
			t.Fatalf("revalidation = %d with %d bytes, want 304", resp2.StatusCode, len(body2))
		}
	}
}

// The submit flow on any storage. On file storage the zip goes through the
// server's own signed URL; on S3 straight to the storage with a presigned
// URL, and sign establishes what the server's PUT would have checked. The
// tests below hold on both; where the two answer at different calls (the
// storage cannot refuse a zip for its size), they say which.

// askURL is call 1: the URL leads to the server on file storage and to the
// storage, not the server, on S3.
func (p *pipeline) askURL(t *testing.T) api.UploadURL {
	t.Helper()
	resp, body := p.e.send(t, "POST", api.PathSubmitUpload, nil, p.key)
	var u api.UploadURL
	if resp.StatusCode != 200 || json.Unmarshal(body, &u) != nil || u.URL == "" || u.UploadID == 0 {
		t.Fatalf("call 1 = %d %s", resp.StatusCode, body)
	}
	if time.Until(u.ExpiresAt) <= 0 || time.Until(u.ExpiresAt) > 16*time.Minute {
		t.Fatalf("call 1: the URL expires at %v", u.ExpiresAt)
	}
	throughServer := strings.HasPrefix(u.URL, p.e.URL+api.UploadPrefix)
	if throughServer != (p.e.Backend == backendFiles) {
		t.Fatalf("on %s call 1 answered %s", p.e.Backend, u.URL)
	}
	return u
}

// submitAny runs the three calls and returns the published bundle.
func (p *pipeline) submitAny(t *testing.T, zipBytes []byte) betaport.Bundle {
	t.Helper()
	u := p.askURL(t)
	if resp, body := p.put(t, u.URL, api.ZipContentType, zipBytes); resp.StatusCode != 200 {
		t.Fatalf("call 2 = %d %s", resp.StatusCode, body)
	}
	resp, body := p.sign(t)
	var b betaport.Bundle
	if resp.StatusCode != 200 || json.Unmarshal(body, &b) != nil {
		t.Fatalf("call 3 = %d %s", resp.StatusCode, body)
	}
	return b
}

func (p *pipeline) uploadState(t *testing.T, id int64) string {
	t.Helper()
	u, err := p.e.DB.FindUpload(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return u.State
}

// keys lists the stored blobs under prefix.
func (e *env) keys(t *testing.T, prefix string) []string {
	t.Helper()
	var keys []string
	it := e.Blobs.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(context.Background())
		if err == io.EOF {
			return keys
		} else if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(obj.Key, ".attrs") { // fileblob's metadata
			keys = append(keys, obj.Key)
		}
	}
}

func TestSubmitOnAnyStorage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, &betaport.Team{ID: p.ext.TeamID})
	zipBytes := validZip(t, "1.2.3")
	sum := sha256.Sum256(zipBytes)

	u := p.askURL(t)
	if resp, body := p.put(t, u.URL, api.ZipContentType, zipBytes); resp.StatusCode != 200 {
		t.Fatalf("call 2 = %d %s", resp.StatusCode, body)
	}
	resp, body := p.sign(t)
	var b betaport.Bundle
	if json.Unmarshal(body, &b); resp.StatusCode != 200 || b.Number != 1 || b.Version != "1.2.3" || b.FileCount != 2 ||
		b.SHA256 != hex.EncodeToString(sum[:]) || b.Size != int64(len(zipBytes)) || !b.Current || b.Source != "upload" {
		t.Fatalf("call 3 = %d %s", resp.StatusCode, body)
	}
	resp, body = e.fetchFile(t, "GET", api.CurrentBundlePath(p.ext.ID)+"/download", admin)
	if resp.StatusCode != 200 || !bytes.Equal(body, zipBytes) || (e.Backend == backendFiles && resp.Header.Get("ETag") != `"`+b.SHA256+`"`) {
		t.Fatalf("download = %d, %d bytes, ETag %s", resp.StatusCode, len(body), resp.Header.Get("ETag"))
	}
	resp, body = e.fetchFile(t, "GET", api.BundlesPath(p.ext.ID)+"/1/download", http.Header{"Cookie": admin["Cookie"], "Range": {"bytes=10-"}})
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, zipBytes[10:]) {
		t.Fatalf("range download = %d, %d bytes", resp.StatusCode, len(body))
	}

	// A retried sign answers the same bundle.
	resp, body = p.sign(t)
	var again betaport.Bundle
	if json.Unmarshal(body, &again); resp.StatusCode != 200 || again.Number != 1 || again.SHA256 != b.SHA256 {
		t.Fatalf("retried sign = %d %s", resp.StatusCode, body)
	}
	// A PUT replayed after publish changes nothing testers get: file
	// storage refuses it; S3 cannot, but the upload is published and its
	// bytes are never read again.
	before := p.served(t)
	resp, body = p.put(t, u.URL, api.ZipContentType, validZip(t, "6.6.6"))
	if e.Backend == backendFiles && resp.StatusCode != http.StatusConflict {
		t.Fatalf("PUT after publish = %d %s", resp.StatusCode, body)
	}
	if resp, body := p.sign(t); resp.StatusCode != 200 || !strings.Contains(string(body), `"number":1,`) {
		t.Fatalf("sign after a replayed PUT = %d %s", resp.StatusCode, body)
	}
	p.wantUnchanged(t, before)

	// A manifest in one top folder is moved to the root; the bundle
	// describes the served (normalised) bytes.
	b2 := p.submitAny(t, makeZip(t, map[string]string{
		"dist/manifest.json": `{"manifest_version": 2, "name": "Tab Tamer", "version": "2.0"}`,
		"dist/js/app.js":     "1",
	}))
	served := p.served(t)
	servedSum := sha256.Sum256([]byte(served.bytes))
	if b2.Number != 2 || served.number != 2 || b2.SHA256 != hex.EncodeToString(servedSum[:]) || b2.Size != int64(len(served.bytes)) {
		t.Fatalf("normalised bundle %+v does not describe the served bytes", b2)
	}
	zr, err := zip.NewReader(strings.NewReader(served.bytes), int64(len(served.bytes)))
	if err != nil || len(zr.File) != 2 || (zr.File[0].Name != "manifest.json" && zr.File[1].Name != "manifest.json") {
		t.Fatalf("served zip: %v", err)
	}
	// Only the published bundles are stored, each a zip and a CRX: no
	// copy a sign made is left.
	if zips, crxs := storedBundles(t, e); len(zips) != 2 || len(crxs) != 2 {
		t.Fatalf("bundles stored: %v and %v, want the zip and CRX of the 2 published", zips, crxs)
	}
	for _, k := range e.keys(t, "uploads/") {
		if strings.Contains(k, ".checked.") {
			t.Fatalf("a sign's checked copy was left behind: %s", k)
		}
	}
}

// Refused zips are never published, on either storage; the storage refuses
// what it can at the PUT, and sign refuses the rest.
func TestSubmitOnAnyStorageRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.App.Publish.Config.MaxUploadSize = 1 << 20
	p := newPipeline(t, e, betaport.PlanProfessional)
	first := p.submitAny(t, validZip(t, "1.0"))
	before := p.served(t)

	// A wrong or missing content type: refused at the PUT (the server
	// checks it; S3 checks the signature, which binds it), nothing stored,
	// and the upload still waits for its zip.
	u := p.askURL(t)
	for _, ct := range []string{"application/octet-stream", ""} {
		req, _ := http.NewRequest("PUT", u.URL, bytes.NewReader(validZip(t, "2.0")))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Fatalf("PUT with Content-Type %q = %d, want it refused", ct, resp.StatusCode)
		}
		if ok, _ := e.Blobs.Exists(context.Background(), "uploads/"+strconv.FormatInt(u.UploadID, 10)+".zip"); ok {
			t.Fatalf("a PUT with Content-Type %q was stored", ct)
		}
	}
	resp, body := p.sign(t)
	wantProblem(t, resp, body, http.StatusConflict, api.ProblemZipNotReceived)
	if st := p.uploadState(t, u.UploadID); st != betaport.UploadRequested {
		t.Fatalf("after refused PUTs the upload is %s", st)
	}

	// Not a zip, and over the size limit: the server refuses them at its
	// PUT; a presigned PUT cannot, so sign refuses them (the oversize one
	// without reading it) and the upload is rejected.
	for _, tt := range []struct {
		name    string
		body    []byte
		putType string // the problem of a refusing PUT
		code    string // the zip problem of a refusing sign
	}{
		{"not a zip", []byte("%PDF-1.7 not a zip"), api.ProblemNotAZip, "not_a_zip"},
		{"over the size limit", append([]byte("PK\x03\x04"), make([]byte, 1<<20)...), api.ProblemTooLarge, "too_large"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := p.askURL(t)
			resp, body := p.put(t, u.URL, api.ZipContentType, tt.body)
			if e.Backend == backendFiles {
				wantProblem(t, resp, body, map[string]int{api.ProblemNotAZip: 422, api.ProblemTooLarge: 413}[tt.putType], tt.putType)
				resp, body = p.sign(t)
				wantProblem(t, resp, body, http.StatusConflict, api.ProblemZipNotReceived)
			} else {
				if resp.StatusCode != 200 {
					t.Fatalf("PUT to storage = %d %s", resp.StatusCode, body)
				}
				resp, body = p.sign(t)
				pr := wantProblem(t, resp, body, http.StatusUnprocessableEntity, api.ProblemInvalidZip)
				if len(pr.Problems) != 1 || pr.Problems[0].Code != tt.code {
					t.Fatalf("problems = %+v, want %s", pr.Problems, tt.code)
				}
				if st := p.uploadState(t, u.UploadID); st != betaport.UploadRejected {
					t.Fatalf("the upload is %s, want rejected", st)
				}
			}
			p.wantUnchanged(t, before)
		})
	}

	// An invalid zip: every problem listed, nothing changes for testers,
	// and a retried sign says the same.
	u = p.askURL(t)
	p.put(t, u.URL, api.ZipContentType, makeZip(t, map[string]string{"../evil.js": "x", "src/index.js": "y"}))
	resp, body = p.sign(t)
	pr := wantProblem(t, resp, body, http.StatusUnprocessableEntity, api.ProblemInvalidZip)
	if len(pr.Problems) < 2 {
		t.Fatalf("problems = %+v, want the traversal and the missing manifest", pr.Problems)
	}
	if resp, body2 := p.sign(t); resp.StatusCode != 422 || withoutInstance(body2) != withoutInstance(body) {
		t.Fatalf("retried sign of a rejected upload = %d %s", resp.StatusCode, body2)
	}
	p.wantUnchanged(t, before)
	if n, _ := storetest.CountBundles(context.Background(), e.DB, p.ext.ID); n != 1 || first.Number != 1 {
		t.Fatalf("%d bundles, want only the first", n)
	}
}

// An upload URL works until it expires, on either storage; then the upload
// is gone.
func TestSubmitOnAnyStorageURLExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.App.Publish.Config.UploadTTL = time.Second
	p := newPipeline(t, e, betaport.PlanProfessional)
	u := p.askURL(t)
	time.Sleep(time.Until(u.ExpiresAt) + 1100*time.Millisecond)
	if resp, body := p.put(t, u.URL, api.ZipContentType, validZip(t, "1.0")); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("PUT to an expired URL = %d %s", resp.StatusCode, body)
	}
	resp, body := p.sign(t)
	wantProblem(t, resp, body, http.StatusGone, api.ProblemUploadExpired)
}

// Signs racing on one upload publish it once; every one answers that
// bundle, and only its bytes stay stored.
func TestSubmitOnAnyStorageRaces(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.App.Publish.Config.Burst = 1000
	p := newPipeline(t, e, betaport.PlanProfessional)
	u := p.askURL(t)
	p.put(t, u.URL, api.ZipContentType, validZip(t, "1.0"))
	var wg sync.WaitGroup
	numbers := make(chan string, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, body := p.sign(t)
			var b betaport.Bundle
			json.Unmarshal(body, &b)
			if resp.StatusCode != 200 {
				t.Errorf("racing sign = %d %s", resp.StatusCode, body)
			}
			numbers <- strconv.FormatInt(b.Number, 10) + " " + b.SHA256
		}()
	}
	wg.Wait()
	close(numbers)
	var first string
	for n := range numbers {
		if first == "" {
			first = n
		}
		if n != first || !strings.HasPrefix(n, "1 ") {
			t.Fatalf("racing signs answered %q and %q, want bundle 1 for all", first, n)
		}
	}
	if n, _ := storetest.CountBundles(context.Background(), e.DB, p.ext.ID); n != 1 {
		t.Fatalf("8 racing signs published %d bundles", n)
	}
	if zips, crxs := storedBundles(t, e); len(zips) != 1 || len(crxs) != 1 {
		t.Fatalf("stored bundles after racing signs: %v and %v, want one zip and one CRX", zips, crxs)
	}
	if got := p.served(t); got.number != 1 || !strings.HasPrefix(got.bytes, "PK") {
		t.Fatalf("served %d", got.number)
	}
}

// The sweeper removes the bytes of dead uploads on either storage.
func TestSweepOnAnyStorage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	old := p.askURL(t)
	p.put(t, old.URL, api.ZipContentType, validZip(t, "1.0"))
	p.submitAny(t, validZip(t, "1.1")) // supersedes the first
	key := "uploads/" + strconv.FormatInt(old.UploadID, 10) + ".zip"
	if ok, _ := e.Blobs.Exists(context.Background(), key); !ok {
		t.Fatalf("%s is not stored", key)
	}
	if n, err := e.App.Publish.Sweep(context.Background()); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want the superseded upload", n, err)
	}
	if ok, _ := e.Blobs.Exists(context.Background(), key); ok {
		t.Fatalf("%s is still stored after the sweep", key)
	}
	if p.served(t).number != 1 {
		t.Fatal("the sweep touched the published bundle")
	}
}

// storedBundles lists the stored bundle zips and CRX packages.
func storedBundles(t *testing.T, e *env) (zips, crxs []string) {
	t.Helper()
	for _, k := range e.keys(t, "bundles/") {
		if strings.HasSuffix(k, ".crx") {
			crxs = append(crxs, k)
		} else {
			zips = append(zips, k)
		}
	}
	return zips, crxs
}

// TestAppJSFetchesTheWasmForCodeCaching runs the wasm fetch of the served
// app.js in Node against a real HTTP server: it must hand
// WebAssembly.instantiateStreaming fetch's own Response (V8 caches a
// module's compiled code only for one that came from fetch, with its URL;
// go-app's own builds a new Response, url ""), with the whole body, and
// still report the loader's progress up to 100 %.
func TestAppJSFetchesTheWasmForCodeCaching(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("this test runs app.js's fetch in Node: install it (sudo apt-get install -y nodejs)")
	}
	e := newEnv(t)
	resp, body := e.do(t, "GET", "/app.js", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /app.js = %d", resp.StatusCode)
	}
	js := string(body)
	start := strings.Index(js, "async function fetchWithProgress(")
	end := strings.Index(js, "async function goappFetchWithProgressUnused(")
	if start < 0 || end < start || !strings.Contains(js, "fetchWithProgress(\"/web/app.wasm\"") {
		t.Fatalf("app.js does not fetch the wasm through the replaced fetchWithProgress (did go-app's app.js change?):\n%s", js)
	}
	wasm := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB, sent in pieces
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(wasm)))
		for p := wasm; len(p) > 0; p = p[min(len(p), 64<<10):] {
			w.Write(p[:min(len(p), 64<<10)])
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	script := `const goappWasmContentLengthHeader = "";
globalThis.requestAnimationFrame = (f) => setTimeout(f, 1);
` + js[start:end] + `
(async () => {
  const seen = [];
  const url = ` + strconv.Quote(srv.URL+"/web/app.wasm") + `;
  const r = await fetchWithProgress(url, (p) => seen.push(p));
  const n = (await r.arrayBuffer()).byteLength;
  await new Promise((res) => setTimeout(res, 50));
  console.log(JSON.stringify({ url: r.url, n, last: seen[seen.length - 1] }));
})();`
	out, err := exec.Command(node, "-e", script).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var got struct {
		URL  string `json:"url"`
		N    int    `json:"n"`
		Last int    `json:"last"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &got); err != nil {
		t.Fatalf("node printed %q: %v", out, err)
	}
	if got.URL != srv.URL+"/web/app.wasm" {
		t.Errorf("the Response handed on has url %q, want fetch's own (%s/web/app.wasm): a built Response defeats V8's code cache", got.URL, srv.URL)
	}
	if got.N != len(wasm) {
		t.Errorf("the Response handed on has %d bytes, want %d", got.N, len(wasm))
	}
	if got.Last != 100 {
		t.Errorf("the loader's last progress was %d %%, want 100", got.Last)
	}
}
