package cli

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// These are unit tests of the submit command's flow, retries and exit codes
// against fakes of the three calls; the end-to-end test runs it against the
// real server.

const testAPIKey = "bpk_secret_0123456789"

// call is one request a fake received.
type call struct {
	method, path, query string
	header              http.Header
	contentLength       int64
	body                []byte
}

func (c call) String() string { return c.method + " " + c.path }

// fakeService answers the submit flow: the API on one server, the upload
// URLs on another (as S3 presigned URLs are), both on loopback.
type fakeService struct {
	t          *testing.T
	api, store *httptest.Server
	maxSize    int64
	expiresIn  time.Duration

	mu      sync.Mutex
	calls   []call
	uploads int
	// cutPuts is how many PUTs break off (the connection closes) after
	// their first 100 bytes.
	cutPuts int
	// scripted answers by "METHOD /path", used before the default answer.
	scripted map[string][]http.HandlerFunc
}

const bundleJSON = `{"id":40,"extensionId":7,"number":12,"name":"Tab Tamer","version":"1.4.0","manifestVersion":3,"size":180,"sha256":"ab12","fileCount":2,"source":"upload","createdAt":"2026-01-02T03:04:05Z","current":true}`

func newFakeService(t *testing.T) *fakeService {
	f := &fakeService{t: t, maxSize: 1 << 20, expiresIn: 15 * time.Minute, scripted: map[string][]http.HandlerFunc{}}
	f.api = httptest.NewServer(f.record(f.serveAPI))
	f.store = httptest.NewServer(f.record(f.serveStore))
	t.Cleanup(f.api.Close)
	t.Cleanup(f.store.Close)
	return f
}

// script queues answers for the next calls to "METHOD /path".
func (f *fakeService) script(key string, h ...http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scripted[key] = append(f.scripted[key], h...)
}

func (f *fakeService) record(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		cut := r.Method == http.MethodPut && f.cutPuts > 0
		if cut {
			f.cutPuts--
		}
		f.mu.Unlock()
		if cut {
			part := make([]byte, 100)
			n, _ := io.ReadFull(r.Body, part)
			f.mu.Lock()
			f.calls = append(f.calls, call{r.Method, r.URL.Path + " (cut)", r.URL.RawQuery, r.Header.Clone(), r.ContentLength, part[:n]})
			f.mu.Unlock()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				f.t.Errorf("hijack: %v", err)
				return
			}
			conn.Close()
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			f.t.Errorf("%s %s: reading the body: %v", r.Method, r.URL.Path, err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		key := r.Method + " " + r.URL.Path
		if r.Method == http.MethodPut {
			key = "PUT " + api.UploadPrefix
		}
		f.mu.Lock()
		f.calls = append(f.calls, call{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), r.ContentLength, body})
		var h http.HandlerFunc
		if q := f.scripted[key]; len(q) > 0 {
			h, f.scripted[key] = q[0], q[1:]
		}
		f.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		next(w, r)
	}
}

func (f *fakeService) serveAPI(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case api.PathSubmitUpload:
		f.mu.Lock()
		f.uploads++
		id := f.uploads
		f.mu.Unlock()
		// A cookie the client must not send anywhere (it keeps no jar).
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s3cr3t", Path: "/"})
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(api.UploadURL{
			URL:       fmt.Sprintf("%s%s%d?expires=1&signature=sig%d", f.store.URL, api.UploadPrefix, id, id),
			ExpiresAt: time.Now().Add(f.expiresIn),
			UploadID:  int64(id),
			MaxSize:   f.maxSize,
		})
	case api.PathSubmitSign:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, bundleJSON)
	default:
		answerProblem(w, http.StatusNotFound, api.Problem{Type: api.ProblemNotFound})
	}
}

func (f *fakeService) serveStore(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut || !strings.HasPrefix(r.URL.Path, api.UploadPrefix) {
		answerProblem(w, http.StatusMethodNotAllowed, api.Problem{})
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (f *fakeService) recorded() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

// sequence is the calls as "METHOD /path" lines.
func (f *fakeService) sequence() string {
	var s []string
	for _, c := range f.recorded() {
		s = append(s, c.String())
	}
	return strings.Join(s, ", ")
}

func answerProblem(w http.ResponseWriter, status int, p api.Problem) {
	p.Status = status
	if p.Title == "" {
		p.Title = http.StatusText(status)
	}
	if p.Detail == "" {
		p.Detail = "Detail of " + http.StatusText(status) + "."
	}
	w.Header().Set("Content-Type", api.ProblemContentType)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(p)
}

func status(code int, p api.Problem, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		answerProblem(w, code, p)
	}
}

// instantSleep makes the retries' waits instant and records them.
func instantSleep(t *testing.T) *[]time.Duration {
	t.Helper()
	var waits []time.Duration
	old := submitSleep
	submitSleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	t.Cleanup(func() { submitSleep = old })
	return &waits
}

// exitCode is what Run returns for err (with its one-line exitError case).
func exitCode(err error) int {
	var ue usageError
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		return ExitUsage
	case errors.As(err, &ee):
		return ee.code
	}
	return ExitFailure
}

type result struct {
	code           int
	err            error
	stdout, stderr string
}

func runSubmit(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	err := submit(context.Background(), args, &out, &errOut)
	return result{exitCode(err), err, out.String(), errOut.String()}
}

// testFiles writes a zip and a key file and returns their paths.
func testFiles(t *testing.T) (zipPath, keyPath string, zipBytes []byte) {
	t.Helper()
	dir := t.TempDir()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range map[string]string{
		"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "1.4.0"}`,
		"background.js": strings.Repeat("console.log('tab');\n", 500),
	} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zipPath = filepath.Join(dir, "tab-tamer.zip")
	keyPath = filepath.Join(dir, "key.json")
	writeFile(t, zipPath, buf.String())
	writeFile(t, keyPath, `{"service": {"extensionId": "7", "apiKey": "`+testAPIKey+`"}}`)
	return zipPath, keyPath, buf.Bytes()
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestSubmitPublishes(t *testing.T) {
	waits := instantSleep(t)
	f := newFakeService(t)
	zipPath, keyPath, zipBytes := testFiles(t)

	r := runSubmit(t, "--base-url", f.api.URL+"/", "--key", keyPath, zipPath)
	if r.err != nil {
		t.Fatalf("submit: %v\nstderr: %s", r.err, r.stderr)
	}
	want := "POST /api/submit/upload, PUT /uploads/1, POST /api/submit/sign"
	if got := f.sequence(); got != want {
		t.Fatalf("calls: %s; want %s", got, want)
	}
	calls := f.recorded()
	for _, c := range []call{calls[0], calls[2]} {
		if ct := c.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q", c, ct)
		}
		// The service object, never the key file's wrapper.
		var body map[string]any
		if err := json.Unmarshal(c.body, &body); err != nil {
			t.Fatalf("%s: body %q: %v", c, c.body, err)
		}
		if len(body) != 2 || body["extensionId"] != "7" || body["apiKey"] != testAPIKey {
			t.Errorf("%s: body %s; want exactly the service object", c, c.body)
		}
	}
	put := calls[1]
	if ct := put.header.Get("Content-Type"); ct != api.ZipContentType {
		t.Errorf("PUT Content-Type %q; want %s", ct, api.ZipContentType)
	}
	if !bytes.Equal(put.body, zipBytes) || put.contentLength != int64(len(zipBytes)) {
		t.Errorf("PUT sent %d bytes (Content-Length %d); want the zip's %d exactly", len(put.body), put.contentLength, len(zipBytes))
	}
	if put.query != "expires=1&signature=sig1" {
		t.Errorf("PUT query %q; want the upload URL's, unchanged", put.query)
	}
	for name, v := range put.header {
		if strings.Contains(strings.Join(v, " "), testAPIKey) {
			t.Errorf("PUT header %s carries the API key", name)
		}
	}
	for _, h := range []string{"Authorization", "Cookie"} {
		if v := put.header.Get(h); v != "" {
			t.Errorf("PUT sent %s: %q", h, v)
		}
	}
	if v := calls[2].header.Get("Cookie"); v != "" {
		t.Errorf("sign sent the cookie of call 1: %q", v)
	}
	var b betaport.Bundle
	if err := json.Unmarshal([]byte(r.stdout), &b); err != nil || b.Number != 12 || b.Version != "1.4.0" || b.ExtensionID != 7 {
		t.Errorf("stdout %q (%v); want the bundle record", r.stdout, err)
	}
	if !strings.Contains(r.stderr, "Published bundle #12 (version 1.4.0) of extension 7.") {
		t.Errorf("stderr %q lacks the summary", r.stderr)
	}
	// stderr is no terminal here: plain lines, no bar.
	if !strings.Contains(r.stderr, "uploading ") || strings.Contains(r.stderr, "\r") {
		t.Errorf("stderr %q: want plain progress lines", r.stderr)
	}
	if strings.Contains(r.stderr, "signature=") {
		t.Errorf("stderr shows the signed upload URL: %q", r.stderr)
	}
	if len(*waits) != 0 {
		t.Errorf("waited %v on a clean run", *waits)
	}
}

func TestSubmitRetriesAPutWithTheWholeZip(t *testing.T) {
	waits := instantSleep(t)
	f := newFakeService(t)
	zipPath, keyPath, zipBytes := testFiles(t)
	f.script("PUT /uploads/", status(http.StatusServiceUnavailable, api.Problem{Type: api.ProblemUnavailable}))

	r := runSubmit(t, "--base-url", f.api.URL, "--key", keyPath, zipPath)
	if r.err != nil {
		t.Fatalf("submit: %v\nstderr: %s", r.err, r.stderr)
	}
	want := "POST /api/submit/upload, PUT /uploads/1, PUT /uploads/1, POST /api/submit/sign"
	if got := f.sequence(); got != want {
		t.Fatalf("calls: %s; want %s", got, want)
	}
	for i, c := range f.recorded()[1:3] {
		if !bytes.Equal(c.body, zipBytes) {
			t.Errorf("PUT %d sent %d bytes; want the whole zip (%d) from its first byte", i+1, len(c.body), len(zipBytes))
		}
	}
	if fmt.Sprint(*waits) != "[1s]" {
		t.Errorf("waits %v; want [1s]", *waits)
	}
	if !strings.Contains(r.stderr, "503") || !strings.Contains(r.stderr, "retrying in 1s") {
		t.Errorf("stderr %q does not say it retries", r.stderr)
	}
}

func TestSubmitResendsACutPutFromTheFirstByte(t *testing.T) {
	waits := instantSleep(t)
	f := newFakeService(t)
	f.cutPuts = 2
	zipPath, keyPath, zipBytes := testFiles(t)

	r := runSubmit(t, "--base-url", f.api.URL, "--key", keyPath, zipPath)
	if r.err != nil {
		t.Fatalf("submit: %v\nstderr: %s", r.err, r.stderr)
	}
	want := "POST /api/submit/upload, PUT /uploads/1 (cut), PUT /uploads/1 (cut), PUT /uploads/1, POST /api/submit/sign"
	if got := f.sequence(); got != want {
		t.Fatalf("calls: %s; want %s", got, want)
	}
	calls := f.recorded()
	if !bytes.Equal(calls[1].body, zipBytes[:100]) || !bytes.Equal(calls[2].body, zipBytes[:100]) || !bytes.Equal(calls[3].body, zipBytes) {
		t.Errorf("the retried PUTs did not resend the zip from its first byte")
	}
	if fmt.Sprint(*waits) != "[1s 2s]" {
		t.Errorf("waits %v; want [1s 2s]", *waits)
	}
	if strings.Contains(r.stderr, "signature=") {
		t.Errorf("stderr shows the signed upload URL: %q", r.stderr)
	}
}

func TestSubmitHonorsRetryAfterAndRetriesTheSign(t *testing.T) {
	waits := instantSleep(t)
	f := newFakeService(t)
	zipPath, keyPath, _ := testFiles(t)
	tooMany := api.Problem{Type: api.ProblemTooManyRequests}
	f.script("POST "+api.PathSubmitUpload,
		status(http.StatusTooManyRequests, tooMany, "Retry-After", "7"),
		status(http.StatusTooManyRequests, tooMany, "Retry-After", "3600")) // capped
	f.script("POST "+api.PathSubmitSign, status(http.StatusBadGateway, api.Problem{}))

	r := runSubmit(t, "--base-url", f.api.URL, "--key", keyPath, zipPath)
	if r.err != nil {
		t.Fatalf("submit: %v\nstderr: %s", r.err, r.stderr)
	}
	want := "POST /api/submit/upload, POST /api/submit/upload, POST /api/submit/upload, PUT /uploads/1, POST /api/submit/sign, POST /api/submit/sign"
	if got := f.sequence(); got != want {
		t.Fatalf("calls: %s; want %s", got, want)
	}
	if fmt.Sprint(*waits) != "[7s 1m0s 1s]" {
		t.Errorf("waits %v; want [7s 1m0s 1s]", *waits)
	}
}

func TestSubmitNetworkFailureExitsServer(t *testing.T) {
	waits := instantSleep(t)
	zipPath, keyPath, _ := testFiles(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	r := runSubmit(t, "--base-url", closed.URL, "--key", keyPath, zipPath)
	if r.code != ExitServer {
		t.Fatalf("exit %d (%v); want %d", r.code, r.err, ExitServer)
	}
	if fmt.Sprint(*waits) != "[1s 2s 4s 8s]" {
		t.Errorf("waits %v; want the default 4 retries backing off [1s 2s 4s 8s]", *waits)
	}
	if msg := r.err.Error(); !strings.Contains(msg, "5 attempts") || !strings.Contains(msg, "--base-url") {
		t.Errorf("message %q: want the attempts and what to check", msg)
	}
	if r.stdout != "" {
		t.Errorf("stdout %q; want nothing", r.stdout)
	}

	*waits = nil
	if r := runSubmit(t, "--base-url", closed.URL, "--key", keyPath, "--retries", "0", zipPath); r.code != ExitServer || len(*waits) != 0 {
		t.Errorf("--retries 0: exit %d, waits %v; want %d at once", r.code, *waits, ExitServer)
	}
}

func TestSubmitServerRefusals(t *testing.T) {
	zipPath, keyPath, _ := testFiles(t)
	tests := []struct {
		name     string
		key      string
		answer   http.HandlerFunc
		code     int
		calls    string
		inStderr []string
	}{{
		name:   "401 bad or rotated key",
		key:    "POST " + api.PathSubmitUpload,
		answer: status(http.StatusUnauthorized, api.Problem{Type: api.ProblemInvalidKey, Detail: "Download a new key file."}),
		code:   ExitAuth,
		calls:  "POST /api/submit/upload",
	}, {
		name:   "403 plan not Professional",
		key:    "POST " + api.PathSubmitUpload,
		answer: status(http.StatusForbidden, api.Problem{Type: api.ProblemPlanRequired, Detail: "Manual upload needs the Professional plan."}),
		code:   ExitAuth,
		calls:  "POST /api/submit/upload",
	}, {
		name: "422 rejected zip lists every problem",
		key:  "POST " + api.PathSubmitSign,
		answer: status(http.StatusUnprocessableEntity, api.Problem{Type: api.ProblemInvalidZip, Problems: []betaport.ZipProblem{
			{Code: "missing-version", Path: "manifest.json", Message: "version is missing"},
			{Code: "zip-slip", Path: "../evil.js", Message: "the path leaves the bundle"},
		}}),
		code:     ExitInvalid,
		calls:    "POST /api/submit/upload, PUT /uploads/1, POST /api/submit/sign",
		inStderr: []string{"manifest.json: version is missing (missing-version)\n", "../evil.js: the path leaves the bundle (zip-slip)\n"},
	}, {
		name:   "413 on the PUT",
		key:    "PUT " + api.UploadPrefix,
		answer: status(http.StatusRequestEntityTooLarge, api.Problem{Type: api.ProblemTooLarge}),
		code:   ExitInvalid,
		calls:  "POST /api/submit/upload, PUT /uploads/1",
	}, {
		name:   "415 on the PUT",
		key:    "PUT " + api.UploadPrefix,
		answer: status(http.StatusUnsupportedMediaType, api.Problem{Type: api.ProblemUnsupportedMedia}),
		code:   ExitInvalid,
		calls:  "POST /api/submit/upload, PUT /uploads/1",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			waits := instantSleep(t)
			f := newFakeService(t)
			f.script(tt.key, tt.answer)
			r := runSubmit(t, "--base-url", f.api.URL, "--key", keyPath, "--quiet", zipPath)
			if r.code != tt.code {
				t.Fatalf("exit %d (%v); want %d", r.code, r.err, tt.code)
			}
			if got := f.sequence(); got != tt.calls {
				t.Errorf("calls: %s; want %s (no retry)", got, tt.calls)
			}
			if len(*waits) != 0 {
				t.Errorf("waited %v; a refusal is not retried", *waits)
			}
			for _, s := range tt.inStderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr %q lacks %q", r.stderr, s)
				}
			}
			if r.stdout != "" {
				t.Errorf("stdout %q; want nothing", r.stdout)
			}
		})
	}
}

func TestSubmitStartsOverWhenTheUploadURLIsSpent(t *testing.T) {
	waits := instantSleep(t)
	f := newFakeService(t)
	zipPath, keyPath, _ := testFiles(t)
	f.script("PUT /uploads/", status(http.StatusForbidden, api.Problem{Type: api.ProblemURLExpired}))
	r := runSubmit(t, "--base-url", f.api.URL, "--key", keyPath, zipPath)
	if r.err != nil {
		t.Fatalf("submit: %v\nstderr: %s", r.err, r.stderr)
	}
	want := "POST /api/submit/upload, PUT /uploads/1, POST /api/submit/upload, PUT /uploads/2, POST /api/submit/sign"
	if got := f.sequence(); got != want {
		t.Fatalf("calls: %s; want %s", got, want)
	}

	// A 409 that persists ends with ExitServer.
	*waits = nil
	f = newFakeService(t)
	notReceived := status(http.StatusConflict, api.Problem{Type: api.ProblemZipNotReceived})
	f.script("POST "+api.PathSubmitSign, notReceived, notReceived)
	r = runSubmit(t, "--base-url", f.api.URL, "--key", keyPath, "--retries", "1", zipPath)
	if r.code != ExitServer {
		t.Fatalf("exit %d (%v); want %d", r.code, r.err, ExitServer)
	}
	want = "POST /api/submit/upload, PUT /uploads/1, POST /api/submit/sign, POST /api/submit/upload, PUT /uploads/2, POST /api/submit/sign"
	if got := f.sequence(); got != want {
		t.Fatalf("calls: %s; want %s", got, want)
	}
}

func TestSubmitChecksBeforeAnyRequest(t *testing.T) {
	instantSleep(t)
	f := newFakeService(t)
	zipPath, keyPath, _ := testFiles(t)
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		writeFile(t, p, content)
		return p
	}
	notZip := file("bundle.zip", "<html>not a zip</html>")
	empty := file("empty.zip", "")
	bare := file("bare.json", `{"extensionId": "7", "apiKey": "k"}`)
	noKey := file("nokey.json", `{"service": {"extensionId": "7"}}`)
	notJSON := file("key.txt", "extensionId=7")
	base := f.api.URL
	tests := []struct {
		name string
		args []string
		in   string
	}{
		{"not a zip", []string{"--base-url", base, "--key", keyPath, notZip}, "not a zip file"},
		{"empty file", []string{"--base-url", base, "--key", keyPath, empty}, "not a zip file"},
		{"missing zip", []string{"--base-url", base, "--key", keyPath, filepath.Join(dir, "nope.zip")}, "cannot read the zip"},
		{"a folder", []string{"--base-url", base, "--key", keyPath, dir}, "is not a file"},
		{"no zip", []string{"--base-url", base, "--key", keyPath}, "give the zip"},
		{"two zips", []string{"--base-url", base, "--key", keyPath, zipPath, zipPath}, "one zip"},
		{"no base URL", []string{"--key", keyPath, zipPath}, "--base-url is required"},
		{"bad base URL", []string{"--base-url", "betaport.example.com", "--key", keyPath, zipPath}, "http(s) URL"},
		{"no key", []string{"--base-url", base, zipPath}, "--key is required"},
		{"missing key file", []string{"--base-url", base, "--key", filepath.Join(dir, "nope.json"), zipPath}, "cannot read it"},
		{"bare service object", []string{"--base-url", base, "--key", bare, zipPath}, `whole key file as downloaded, {"service"`},
		{"no apiKey", []string{"--base-url", base, "--key", noKey, zipPath}, "service.apiKey is missing"},
		{"not JSON", []string{"--base-url", base, "--key", notJSON, zipPath}, "not a key file"},
		{"negative retries", []string{"--base-url", base, "--key", keyPath, "--retries", "-1", zipPath}, "--retries"},
		{"unknown flag", []string{"--base-url", base, "--key", keyPath, "--bogus", zipPath}, ""},
	}
	for _, tt := range tests {
		r := runSubmit(t, tt.args...)
		if r.code != ExitUsage || (tt.in != "" && !strings.Contains(r.err.Error(), tt.in)) {
			t.Errorf("%s: exit %d (%v); want %d saying %q", tt.name, r.code, r.err, ExitUsage, tt.in)
		}
		if r.err != nil && strings.Contains(r.err.Error(), testAPIKey) {
			t.Errorf("%s: the message shows the API key", tt.name)
		}
	}
	if got := f.sequence(); got != "" {
		t.Errorf("requests made: %s; want none", got)
	}
}

func TestSubmitZipOverMaxSizeIsNotPut(t *testing.T) {
	instantSleep(t)
	f := newFakeService(t)
	f.maxSize = 100
	zipPath, keyPath, _ := testFiles(t)
	r := runSubmit(t, "--base-url", f.api.URL, "--key", keyPath, zipPath)
	if r.code != ExitUsage || !strings.Contains(r.err.Error(), "at most 100 B") {
		t.Fatalf("exit %d (%v); want %d naming the limit", r.code, r.err, ExitUsage)
	}
	if got := f.sequence(); got != "POST /api/submit/upload" {
		t.Errorf("calls: %s; want only the upload URL request", got)
	}
}

func TestSubmitEnvQuietAndEmptyZip(t *testing.T) {
	instantSleep(t)
	f := newFakeService(t)
	_, keyPath, _ := testFiles(t)
	emptyZip := filepath.Join(t.TempDir(), "empty.zip")
	writeFile(t, emptyZip, "PK\x05\x06"+strings.Repeat("\x00", 18))
	t.Setenv("BETAPORT_BASE_URL", f.api.URL)
	t.Setenv("BETAPORT_KEY_FILE", keyPath)
	// The zip may come before the flags.
	r := runSubmit(t, emptyZip, "--quiet")
	if r.err != nil {
		t.Fatalf("submit: %v", r.err)
	}
	if r.stderr != "" {
		t.Errorf("--quiet printed %q", r.stderr)
	}
	if !strings.Contains(r.stdout, `"number": 12`) {
		t.Errorf("stdout %q; want the bundle even when quiet", r.stdout)
	}
}

func TestSubmitSendsTheKeyThroughNoRedirect(t *testing.T) {
	instantSleep(t)
	f := newFakeService(t)
	zipPath, keyPath, _ := testFiles(t)
	f.script("POST "+api.PathSubmitUpload, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, f.store.URL+api.PathSubmitUpload, http.StatusPermanentRedirect)
	})
	r := runSubmit(t, "--base-url", f.api.URL, "--key", keyPath, zipPath)
	if r.code != ExitFailure || !strings.Contains(r.err.Error(), "redirected") {
		t.Fatalf("exit %d (%v); want %d saying it was redirected", r.code, r.err, ExitFailure)
	}
	if got := f.sequence(); got != "POST /api/submit/upload" {
		t.Errorf("calls: %s; want the key sent nowhere else", got)
	}
}

func TestProgressPlainLines(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	var out bytes.Buffer
	p := newProgress(&out, false, 1000, clock)
	for range 100 { // 10 bytes every 500 ms: 50 s in all
		now = now.Add(500 * time.Millisecond)
		p.add(10)
	}
	p.finish(true)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if lines[0] != "uploading 1000 B…" || !strings.HasPrefix(lines[len(lines)-1], "uploaded 1000 B in 50s") {
		t.Errorf("lines %q", lines)
	}
	// At most one line per 10 % (and 2 s): 10 %…90 %, then the last.
	if len(lines) != 11 || lines[1] != "uploading 1000 B… 10%" {
		t.Errorf("%d lines %q; want a line per 10 %%", len(lines), lines)
	}
	p.add(5) // after finish: nothing more
	if strings.Count(out.String(), "\n") != 11 {
		t.Errorf("wrote after finish: %q", out.String())
	}
	var bar bytes.Buffer
	p = newProgress(&bar, true, 1000, clock)
	now = now.Add(time.Second)
	p.add(500)
	p.finish(false)
	if want := "\r\x1b[K[############------------]  50%  500 B / 1000 B  500 B/s"; !strings.HasPrefix(bar.String(), want) || !strings.HasSuffix(bar.String(), "\n") {
		t.Errorf("bar %q; want it to start %q", bar.String(), want)
	}
	if got := formatBytes(12 << 20); got != "12.0 MiB" {
		t.Errorf("formatBytes = %q", got)
	}
}

// --notes and --notes-file send release notes with call 1 (sign sends the
// key object alone); both at once is a usage error on one line; notes over
// 10 KiB (or not text) are refused before any request, exit 1.
func TestSubmitReleaseNotes(t *testing.T) {
	instantSleep(t)
	zipPath, keyPath, _ := testFiles(t)
	dir := t.TempDir()
	notes := "Faster tabs.\n\n- [changelog](https://example.com/changes)\n- <b>bold</b>\n"
	notesPath := filepath.Join(dir, "NOTES.md")
	writeFile(t, notesPath, notes)

	for _, args := range [][]string{{"--notes", notes}, {"--notes-file", notesPath}} {
		f := newFakeService(t)
		r := runSubmit(t, append([]string{"--base-url", f.api.URL, "--key", keyPath, zipPath}, args...)...)
		if r.err != nil {
			t.Fatalf("%v: %v", args[0], r.err)
		}
		calls := f.recorded()
		var upload, sign map[string]any
		json.Unmarshal(calls[0].body, &upload)
		json.Unmarshal(calls[2].body, &sign)
		if len(upload) != 3 || upload["releaseNotes"] != notes || upload["apiKey"] != testAPIKey {
			t.Errorf("%s: call 1 sent %s; want the key and the notes", args[0], calls[0].body)
		}
		if len(sign) != 2 {
			t.Errorf("%s: sign sent %s; want the key object alone", args[0], calls[2].body)
		}
	}

	f := newFakeService(t)
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"submit", "--base-url", f.api.URL, "--key", keyPath, "--notes", "x", "--notes-file", notesPath, zipPath}, &out, &errOut)
	if code != ExitUsage || strings.Count(errOut.String(), "\n") != 1 || !strings.Contains(errOut.String(), "not both") {
		t.Errorf("--notes with --notes-file: exit %d, stderr %q; want %d and one line", code, errOut.String(), ExitUsage)
	}

	long := strings.Repeat("é", betaport.MaxReleaseNotes/2) + "x" // 10 KiB and one byte
	longPath := filepath.Join(dir, "LONG.md")
	writeFile(t, longPath, long)
	binPath := filepath.Join(dir, "BIN.md")
	writeFile(t, binPath, "notes\x00")
	for _, args := range [][]string{{"--notes", long}, {"--notes-file", longPath}, {"--notes-file", binPath}, {"--notes-file", filepath.Join(dir, "none.md")}} {
		out.Reset()
		errOut.Reset()
		code := Run(context.Background(), append([]string{"submit", "--base-url", f.api.URL, "--key", keyPath, zipPath}, args...), &out, &errOut)
		if code != ExitFailure || strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("%s %.20q: exit %d, stderr %q; want %d and one line", args[0], args[1], code, errOut.String(), ExitFailure)
		}
	}
	if got := f.sequence(); got != "" {
		t.Errorf("requests made: %s; want none", got)
	}
}
