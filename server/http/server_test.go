package http_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/server/auth"
	"github.com/betaport/betaport/server/blobstore"
	bphttp "github.com/betaport/betaport/server/http"
	"github.com/betaport/betaport/server/sqlite"
	"github.com/betaport/betaport/server/storetest"
)

type env struct {
	*httptest.Server
	DB    *sqlite.DB
	Blobs *blob.Bucket
	App   *bphttp.Server
	Dir   string
}

// newEnv starts the real handler on a real SQLite file and file blobs.
func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "betaport.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	u, _ := blobstore.FileURL(filepath.Join(dir, "blobs"))
	blobs, err := blobstore.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blobs.Close() })
	s := &bphttp.Server{Store: db, Blobs: blobs, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Secret: []byte(auth.NewToken())} // each server its own secret
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	s.BaseURL = ts.URL
	return &env{Server: ts, DB: db, Blobs: blobs, App: s, Dir: dir}
}

func (e *env) do(t *testing.T, method, path string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	return e.send(t, method, path, header, nil)
}

// send makes one request; a non-nil body is sent as JSON.
func (e *env) send(t *testing.T, method, path string, header http.Header, body any) (*http.Response, []byte) {
	t.Helper()
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
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, respBody
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
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, api.PlanProfessional)
	a := storetest.MustExtension(t, e.DB, team, "Alpha")
	storetest.MustExtension(t, e.DB, team, "Beta")
	other := storetest.MustTeam(t, e.DB, api.PlanStarter)
	storetest.MustExtension(t, e.DB, other, "Not theirs")
	admin := e.adminOf(t, team)

	resp, body := e.do(t, "GET", api.PathExtensions, admin)
	var list []api.Extension
	if resp.StatusCode != 200 || json.Unmarshal(body, &list) != nil || len(list) != 2 || list[0].Name != "Alpha" {
		t.Fatalf("GET /api/extensions = %d %s", resp.StatusCode, body)
	}
	resp, body = e.do(t, "GET", api.ExtensionPath(a.ID), admin)
	var got api.Extension
	if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil || got.ID != a.ID || got.Name != "Alpha" {
		t.Fatalf("GET extension = %d %s", resp.StatusCode, body)
	}
}

func TestProblems(t *testing.T) {
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
		{"GET", "/no/such/page", 404, api.ProblemNotFound},
		{"GET", "/web/missing.css", 404, api.ProblemNotFound},
	}
	team := storetest.MustTeam(t, e.DB, api.PlanProfessional)
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

func TestPagesArePrerendered(t *testing.T) {
	e := newEnv(t)
	resp, body := e.do(t, "GET", "/", nil)
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
	// A page carries data, so a revalidation must not answer 304 just
	// because the build is the same.
	resp, _ = e.do(t, "GET", "/", http.Header{"If-None-Match": {resp.Header.Get("ETag")}})
	if resp.StatusCode != 200 {
		t.Fatalf("revalidated page = %d, want 200", resp.StatusCode)
	}
	resp, body = e.do(t, "GET", "/extensions/12", nil)
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`class="shell"`)) {
		t.Fatalf("GET /extensions/12 = %d", resp.StatusCode)
	}
}

func TestServiceWorkerLeavesOtherRequestsAlone(t *testing.T) {
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
	e := newEnv(t)
	want, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		t.Fatal(err)
	}
	resp, body := e.do(t, "GET", "/wasm_exec.js", nil)
	if resp.StatusCode != 200 || !bytes.Equal(body, want) {
		t.Fatalf("/wasm_exec.js = %d, %d bytes; want GOROOT's %d bytes", resp.StatusCode, len(body), len(want))
	}
}

func TestWasmIsPrecompressed(t *testing.T) {
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
