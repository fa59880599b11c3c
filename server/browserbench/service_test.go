package browserbench

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/demo"
)

// benchData is the demo's shape (demo.Small, as the browser tests load)
// with the first extension made long enough for 100 "Load more" on both
// lists and 10,000 testers: 20 bundles and 100 testers a page.
var benchData = demo.Size{Extensions: []demo.ExtensionSize{
	{Name: "Tab Tamer", Bundles: 2_600, Testers: 12_000},
	{Name: "Reader Mode Plus", Bundles: 3, Testers: 5},
	{Name: "Quiet Hours", Bundles: 0, Testers: 0},
}}

// service is Betaport, started as the browser tests start it (cli.Main on
// port 0, a fresh data dir, the demo data), and answered on one origin
// together with the reference page under /ref/.
type service struct {
	main  *cli.Main
	data  *demo.Result
	url   string // the one origin both pages are served from
	wire  *wireCounter
	srv   *http.Server
	close func()
}

// startService runs Betaport and serves it on a listener of ours, whose
// handler is Betaport's own root handler with /ref/ added in front. The
// service's base URL is that listener's, so Betaport's pages, API, cookies
// and cross-origin checks see the origin the browser uses. cli.Main's own
// listener is left idle.
func startService(tb testing.TB, refDir string) *service {
	tb.Helper()
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	wire := &wireCounter{}
	m := cli.NewMain()
	m.Config.Addr = "127.0.0.1:0"
	m.Config.Data = tb.TempDir()
	m.Config.BaseURL = "http://" + ln.Addr().String()
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		m.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if err := m.Run(ctx); err != nil {
		ln.Close()
		tb.Fatal(err)
	}
	started := time.Now()
	d, err := demo.Load(ctx, m.Store, m.Blobs, benchData)
	if err != nil {
		m.Close()
		ln.Close()
		tb.Fatal(err)
	}
	tb.Logf("demo data loaded in %v: %d bundles, %d testers", time.Since(started).Round(time.Millisecond), d.Bundles, d.Testers)
	ref, err := newReferenceHandler(refDir)
	if err != nil {
		m.Close()
		ln.Close()
		tb.Fatal(err)
	}
	betaport := m.Server.Handler()
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/ref" || strings.HasPrefix(r.URL.Path, "/ref/") {
				ref.ServeHTTP(w, r)
				return
			}
			betaport.ServeHTTP(w, r)
		}),
		// What Betaport's own server sets (server/http Timeouts' defaults).
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
	go srv.Serve(&countingListener{Listener: ln, c: wire})
	s := &service{main: m, data: d, url: m.URL(), wire: wire, srv: srv}
	s.close = func() {
		srv.Close() // also ends the pages' event streams
		if err := m.Close(); err != nil {
			tb.Logf("closing the service: %v", err)
		}
	}
	if s.url != "http://"+ln.Addr().String() {
		s.close()
		tb.Fatalf("the service's base URL is %s, want the listener's %s", s.url, ln.Addr())
	}
	return s
}

// signIn signs the demo's first admin (Acme, Professional plan) in through
// the API and returns the session cookie, which each fresh browser context
// gets before its first visit: signing in through the sign-in page would
// load the app, and warm the caches the cold visit must find empty.
func (s *service) signIn(tb testing.TB) *http.Cookie {
	tb.Helper()
	a := s.data.Admins[0]
	body, _ := json.Marshal(api.SignIn{Email: a.Email, Password: a.Password})
	resp, err := http.Post(s.url+"/api/session", "application/json", bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		tb.Fatalf("signing in as %s: %s", a.Email, resp.Status)
	}
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie {
			return c
		}
	}
	tb.Fatalf("signing in as %s: no %s cookie in the answer", a.Email, api.SessionCookie)
	return nil
}

// wireCounter counts the bytes that cross the service's connections: what
// the browser receives (down: response headers, bodies, chunk framing) and
// sends (up: requests). It sees every request of every tab and worker,
// served or revalidated, whatever the browser reports.
type wireCounter struct {
	down, up atomic.Int64
}

func (w *wireCounter) snapshot() wireBytes {
	return wireBytes{Down: w.down.Load(), Up: w.up.Load()}
}

type wireBytes struct{ Down, Up int64 }

func (a wireBytes) sub(b wireBytes) wireBytes { return wireBytes{a.Down - b.Down, a.Up - b.Up} }

type countingListener struct {
	net.Listener
	c *wireCounter
}

func (l *countingListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: conn, c: l.c}, nil
}

type countingConn struct {
	net.Conn
	c *wireCounter
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.c.up.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.c.down.Add(int64(n))
	return n, err
}

// referenceHandler serves the built reference page the way a single-page
// app is usually deployed: files named by their content hash are
// immutable for a year, every other path under /ref/ answers index.html,
// revalidated on each visit (ETag, 304); bodies are compressed (br or gzip,
// as the browser accepts), once, at start.
type referenceHandler struct {
	files map[string]*refFile // by base name
	index *refFile
}

type refFile struct {
	contentType string
	etag        string
	immutable   bool
	raw, gz, br []byte
}

// referenceDir is where `make bench-reference` builds the reference page.
func referenceDir() string {
	if d := os.Getenv("BETAPORT_BENCH_REFERENCE"); d != "" {
		return d
	}
	return filepath.Join("..", "..", ".cache", "browserbench", "reference", "dist")
}

func newReferenceHandler(dir string) (*referenceHandler, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	h := &referenceHandler{files: map[string]*refFile{}}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(raw)
		f := &refFile{
			contentType: mime.TypeByExtension(filepath.Ext(e.Name())),
			etag:        `"` + hex.EncodeToString(sum[:8]) + `"`,
			immutable:   e.Name() != "index.html",
			raw:         raw,
		}
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		zw.Write(raw)
		zw.Close()
		f.gz = gz.Bytes()
		var br bytes.Buffer
		bw := brotli.NewWriterLevel(&br, brotli.BestCompression)
		bw.Write(raw)
		bw.Close()
		f.br = br.Bytes()
		h.files[e.Name()] = f
	}
	if h.index = h.files["index.html"]; h.index == nil {
		return nil, errors.New("no index.html in " + dir)
	}
	return h, nil
}

func (h *referenceHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, "/ref/")
	f, ok := h.files[name]
	if !ok || name == "index.html" || strings.Contains(name, "/") {
		f = h.index
	}
	hd := w.Header()
	hd.Set("Content-Type", f.contentType)
	hd.Set("ETag", f.etag)
	hd.Set("Vary", "Accept-Encoding")
	if f.immutable {
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		hd.Set("Cache-Control", "no-cache")
	}
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, f.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := f.raw
	switch accept := r.Header.Get("Accept-Encoding"); {
	case acceptsEncoding(accept, "br"):
		hd.Set("Content-Encoding", "br")
		body = f.br
	case acceptsEncoding(accept, "gzip"):
		hd.Set("Content-Encoding", "gzip")
		body = f.gz
	}
	hd.Set("Content-Length", fmt.Sprint(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body)
}

func acceptsEncoding(header, enc string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), enc) {
			continue
		}
		q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		if v, err := strconv.ParseFloat(q, 64); ok && err == nil && v == 0 {
			return false
		}
		return true
	}
	return false
}
