package http

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/model"
	"github.com/betaport/betaport/app/ui"
)

// resources tells go-app where our files are. It is deliberately not an
// http.Handler: /web/ is served by assets (precompressed, embedded), and
// go-app only renders pages.
type resources struct{}

func (resources) Package() string { return "" }
func (resources) Static() string  { return "" }
func (resources) AppWASM() string { return "/web/app.wasm" }

// newAppHandler returns go-app's handler for the browser app's pages. api
// answers the API requests a page is prerendered with.
func newAppHandler(version string, api http.Handler) http.Handler {
	ui.Register()
	h := &app.Handler{
		Name:        "Betaport",
		ShortName:   "Betaport",
		Title:       "Betaport",
		Description: "Beta builds of your browser extensions, delivered to your testers.",
		Lang:        "en",
		// Every asset is ours: go-app's default icon points at an outside
		// host the page would try to reach.
		Icon: app.Icon{
			Default:    "/web/icon-192.png",
			Large:      "/web/icon-512.png",
			SVG:        "/web/icon.svg",
			AppleTouch: "/web/icon-192.png",
		},
		Styles: []string{"/web/app.css", "/web/upload.css"},
		// Keeps the presses made before the app has booted (app/ui
		// makeKeptPresses): in the head, so it listens before the page
		// shows a button.
		Scripts:                 []string{"/web/boot.js"},
		BackgroundColor:         "#f7f8fa",
		ThemeColor:              "#3b5bdb",
		LoadingLabel:            "Loading Betaport… {progress}%",
		Version:                 version,
		Resources:               resources{},
		WasmContentLengthHeader: uncompressedLengthHeader,
		ServiceWorkerTemplate:   serviceWorkerJS,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/app.js" {
			serveAppJS(w, r, h)
			return
		}
		if isGoAppFile(r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		servePage(w, r, h, api, ui.PrerenderRequests(r.URL.Path))
	})
}

// goAppViewport is the viewport go-app hard-codes, which forbids pinch zoom;
// ourViewport allows it, as people who need larger text rely on it.
const (
	goAppViewport = `content="width=device-width, initial-scale=1, maximum-scale=1, user-scalable=0, viewport-fit=cover"`
	ourViewport   = `content="width=device-width, initial-scale=1, viewport-fit=cover"`
)

// servePage renders a page with the first pages of its lists, fetched
// through the API with the visitor's own session (so the same access rules
// hold), and embeds those answers as JSON for the wasm to start from. Every
// attribute value of the page is HTML-escaped on the way out (see
// escapeAttributes).
func servePage(w http.ResponseWriter, r *http.Request, h http.Handler, apiHandler http.Handler, reqs []ui.PrerenderRequest) {
	pages := map[string][]byte{}
	var blocks strings.Builder
	for _, pr := range reqs {
		body, etag, ok := internalGet(r, apiHandler, pr.Key)
		if !ok {
			continue
		}
		pages[pr.Key] = body
		// encoding/json escapes <, > and & in strings, so the JSON cannot
		// close the script element it sits in.
		fmt.Fprintf(&blocks, `<script type="application/json" data-prerender-kind="%s" data-prerender-key="%s" data-etag="%s">%s</script>`,
			html.EscapeString(pr.Kind), html.EscapeString(pr.Key), html.EscapeString(etag), bytes.TrimSpace(body))
	}
	// Who is visiting, so that a page renders as it will in the browser
	// (a tester on an admins' page never sees admin controls, not even
	// before the app takes over). Embedded too: the app's first render
	// then knows it, as the server's did, and does not ask again.
	status, body, _ := internalAnswer(r, apiHandler, api.PathSession)
	switch {
	case status == http.StatusOK:
		pages[api.PathSession] = body
		fmt.Fprintf(&blocks, `<script type="application/json" data-prerender-kind="%s" data-prerender-key="%s" data-etag="">%s</script>`,
			ui.KindSession, html.EscapeString(api.PathSession), bytes.TrimSpace(body))
	case isAccessEnded(status, body) && r.URL.Path != ui.PathEnded:
		// A revoked tester, on any page: the one that tells them.
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, ui.PathEnded, http.StatusSeeOther)
		return
	case status == http.StatusUnauthorized && !isAccessEnded(status, body) && ui.SignInFirst(r.URL.Path):
		// Nobody is signed in, on a page that needs someone: the sign-in
		// page at once, not this page's "Loading…" until the app boots
		// and finds out.
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, model.PathLogin, http.StatusSeeOther)
		return
	case status == http.StatusUnauthorized && !isAccessEnded(status, body):
		// Nobody is signed in: said too, so that a signed-out page (the
		// sign-in page) does not ask again as it boots.
		pages[api.PathSession] = []byte(`{}`)
		fmt.Fprintf(&blocks, `<script type="application/json" data-prerender-kind="%s" data-prerender-key="%s" data-etag="">{}</script>`,
			ui.KindSession, html.EscapeString(api.PathSession))
	case isAccessEnded(status, body):
		pages[ui.KindEnded] = body
		fmt.Fprintf(&blocks, `<script type="application/json" data-prerender-kind="%s" data-prerender-key="%s" data-etag="">%s</script>`,
			ui.KindEnded, ui.KindEnded, bytes.TrimSpace(body))
	}
	rec := &bufferedResponse{header: http.Header{}, status: http.StatusOK}
	// go-app answers If-None-Match with 304 whenever the build is the same,
	// but a prerendered page also carries data that changes: the page's own
	// ETag, of its bytes, is checked below instead.
	render := r.Clone(r.Context())
	render.Header.Del("If-None-Match")
	ui.RenderWith(pages, func() { h.ServeHTTP(rec, render) })
	if rec.status == http.StatusOK && !ui.KnownPage(r.URL.Path) {
		rec.status = http.StatusNotFound // ui.NotFoundPage, with a status that says so
	}
	out := rec.body.Bytes()
	if strings.HasPrefix(rec.header.Get("Content-Type"), "text/html") {
		var err error
		if out, err = escapeAttributes(out); err != nil {
			// Never serve a page whose attributes could not be escaped.
			writeProblem(w, problem(http.StatusInternalServerError, api.ProblemInternal,
				"This page could not be shown safely. Try again in a moment; if it keeps happening, tell us the time it happened."))
			return
		}
		out = bytes.Replace(out, []byte(goAppViewport), []byte(ourViewport), 1)
	}
	if rec.status == http.StatusOK && blocks.Len() > 0 {
		if i := bytes.LastIndex(out, []byte("</body>")); i >= 0 {
			out = append(out[:i:i], append([]byte(blocks.String()), out[i:]...)...)
		}
	}
	hdr := w.Header()
	for k, v := range rec.header {
		hdr[k] = v
	}
	// A page is made for the person asking (their session, their data):
	// kept only by their browser, revalidated on every visit. A repeat
	// visit to a page whose data did not change costs a 304 and no body.
	hdr.Set("Cache-Control", "private, no-cache")
	hdr.Set("Vary", "Accept-Encoding, Cookie")
	if rec.status == http.StatusOK {
		// Weak: the same page is sent in three encodings.
		etag := "W/" + contentETag(out)
		hdr.Set("ETag", etag)
		if notModified(r, etag) {
			hdr.Del("Content-Type")
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	if enc, body, ok := compressPage(r, out); ok {
		hdr.Set("Content-Encoding", enc)
		out = body
	}
	hdr.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(rec.status)
	w.Write(out)
}

// compressPage encodes a page for the wire with the best encoding the
// request accepts: brotli, else gzip. Pages are small (tens of KB) and made
// per request, so the levels are quick ones, which still shrink one to a
// sixth or less. The encoders are pooled: a new brotli writer allocates
// 1.8 MB of tables, a reset one 40 KB.
func compressPage(r *http.Request, page []byte) (enc string, body []byte, ok bool) {
	var buf bytes.Buffer
	switch {
	case acceptsEncoding(r, "br"):
		bw := brotliWriters.Get().(*brotli.Writer)
		defer brotliWriters.Put(bw)
		bw.Reset(&buf)
		bw.Write(page)
		if bw.Close() != nil {
			return "", nil, false
		}
		return "br", buf.Bytes(), true
	case acceptsEncoding(r, "gzip"):
		gw := gzipWriters.Get().(*gzip.Writer)
		defer gzipWriters.Put(gw)
		gw.Reset(&buf)
		gw.Write(page)
		if gw.Close() != nil {
			return "", nil, false
		}
		return "gzip", buf.Bytes(), true
	}
	return "", nil, false
}

var (
	brotliWriters = sync.Pool{New: func() any { return brotli.NewWriterLevel(nil, 5) }}
	gzipWriters   = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}
)

// internalGet answers GET key through the API handler with the visitor's
// cookies, as if the browser had asked.
func internalGet(r *http.Request, apiHandler http.Handler, key string) ([]byte, string, bool) {
	status, body, etag := internalAnswer(r, apiHandler, key)
	return body, etag, status == http.StatusOK
}

// isAccessEnded reports whether an answer is the problem a revoked tester
// gets.
func isAccessEnded(status int, body []byte) bool {
	var p api.Problem
	return status == http.StatusUnauthorized && json.Unmarshal(body, &p) == nil && p.Type == api.ProblemAccessEnded
}

// internalAnswer answers GET key through the API handler with the
// visitor's cookies, as if the browser had asked: the status, the body and
// its ETag.
func internalAnswer(r *http.Request, apiHandler http.Handler, key string) (int, []byte, string) {
	u, err := url.Parse(key)
	if err != nil {
		return http.StatusBadRequest, nil, ""
	}
	req := r.Clone(r.Context())
	req.Method, req.URL, req.RequestURI, req.Body = http.MethodGet, u, key, http.NoBody
	req.Header = http.Header{"Accept": {"application/json"}}
	if c := r.Header.Get("Cookie"); c != "" {
		req.Header.Set("Cookie", c)
	}
	rec := &bufferedResponse{header: http.Header{}, status: http.StatusOK}
	apiHandler.ServeHTTP(rec, req)
	return rec.status, rec.body.Bytes(), rec.header.Get("ETag")
}

// bufferedResponse keeps a response in memory (a page or an API page: small).
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header         { return b.header }
func (b *bufferedResponse) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bufferedResponse) WriteHeader(status int)      { b.status = status }

// serveAppJS serves go-app's app.js with its wasm fetch replaced
// (wasmFetchJS).
func serveAppJS(w http.ResponseWriter, r *http.Request, h http.Handler) {
	rec := &bufferedResponse{header: w.Header(), status: http.StatusOK}
	h.ServeHTTP(rec, r)
	body := rec.body.Bytes()
	if rec.status == http.StatusOK {
		body = bytes.Replace(body, []byte(goAppWasmFetch), []byte(wasmFetchJS), 1)
		w.Header().Del("Content-Length")
	}
	w.WriteHeader(rec.status)
	w.Write(body)
}

// go-app's app.js hands WebAssembly.instantiateStreaming a Response it
// builds itself from a ReadableStream, to count the bytes for its loader.
// V8 caches a module's compiled code only for a Response that came from
// fetch (it keys the cache to the response's URL and cache entry), so with
// go-app's every visit compiles the wasm again, function by function as
// each is first called: most of the time between go.run and the first
// render (issue 30). wasmFetchJS passes fetch's own Response on, and counts
// the bytes for the loader on a clone, updating its label at most once a
// frame. app.js is served by go-app's handler; the function is replaced
// whole, and a test (TestAppJSFetchesTheWasmForCodeCaching) fails if a
// go-app update changes it.
const goAppWasmFetch = `async function fetchWithProgress(url, progess) {`

const wasmFetchJS = `async function fetchWithProgress(url, progress) {
  const response = await fetch(url);
  const header = (name) => { try { return name ? response.headers.get(name) : null; } catch { return null; } };
  const total = parseInt(header(goappWasmContentLengthHeader) || header("Content-Length"), 10);
  if (response.ok && response.body && total > 0) {
    (async () => {
      const reader = response.clone().body.getReader();
      let loaded = 0, shown = false;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        loaded += value.byteLength;
        if (!shown) {
          shown = true;
          requestAnimationFrame(() => { shown = false; progress(Math.min(100, Math.round((loaded * 100) / total))); });
        }
      }
    })().catch(() => {});
  }
  return response;
}
async function goappFetchWithProgressUnused(url, progess) {`

func isGoAppFile(path string) bool {
	switch path {
	case "/app.js", "/app-worker.js", "/manifest.webmanifest", "/app.css":
		return true
	}
	return false
}

// pageAssets are the files every page loads: its styles and scripts, the
// wasm, the icon in the top bar and the one the loader shows.
var pageAssets = []string{
	"/app.css", "/app.js", "/manifest.webmanifest", "/wasm_exec.js",
	"/web/app.css", "/web/upload.css", "/web/boot.js", "/web/app.wasm",
	"/web/icon.svg", "/web/icon-192.png",
}

func jsonList(list []string) string {
	b, _ := json.Marshal(list)
	return string(b)
}

// serviceWorkerJS replaces go-app's default worker, which answers every
// request, PUTs and API calls included, from a cache or through fetch(). Ours
// answers only GETs of the build's own assets; everything else — pages with
// live data, the API, upload PUTs whose progress events and streamed body a
// worker would swallow — goes to the network untouched.
//
// It keeps what every page loads (pageAssets), not go-app's list, which
// holds "/" (a page) and the manifest's large icon, which no page uses.
var serviceWorkerJS = `const cacheName = "betaport-{{.Version}}";
const resourcesToCache = ` + jsonList(pageAssets) + `;

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches.open(cacheName)
      .then((cache) => cache.addAll(resourcesToCache))
      .then(() => self.skipWaiting())
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== cacheName).map((k) => caches.delete(k))))
      .then(() => self.clients.claim())
  );
});

self.addEventListener("fetch", (event) => {
  if (event.request.method !== "GET") {
    return;
  }
  const url = new URL(event.request.url);
  if (url.origin !== self.location.origin || !resourcesToCache.includes(url.pathname)) {
    return;
  }
  event.respondWith(
    caches.match(event.request).then((response) => response || fetch(event.request))
  );
});
`
