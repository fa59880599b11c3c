package http

import (
	"net/http"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/ui"
)

// resources tells go-app where our files are. It is deliberately not an
// http.Handler: /web/ is served by assets (precompressed, embedded), and
// go-app only renders pages.
type resources struct{}

func (resources) Package() string { return "" }
func (resources) Static() string  { return "" }
func (resources) AppWASM() string { return "/web/app.wasm" }

// newAppHandler returns go-app's handler for the browser app's pages.
func newAppHandler(version string) http.Handler {
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
		Styles:                  []string{"/web/app.css", "/web/upload.css"},
		BackgroundColor:         "#f7f8fa",
		ThemeColor:              "#3b5bdb",
		LoadingLabel:            "Loading Betaport… {progress}%",
		Version:                 version,
		Resources:               resources{},
		WasmContentLengthHeader: uncompressedLengthHeader,
		ServiceWorkerTemplate:   serviceWorkerJS,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// go-app answers If-None-Match with 304 whenever the build is the
		// same, but a prerendered page also carries data that changes; only
		// its own generated scripts may be revalidated that way.
		if !isGoAppFile(r.URL.Path) {
			r.Header.Del("If-None-Match")
		}
		h.ServeHTTP(w, r)
	})
}

func isGoAppFile(path string) bool {
	switch path {
	case "/app.js", "/app-worker.js", "/manifest.webmanifest", "/app.css":
		return true
	}
	return false
}

// serviceWorkerJS replaces go-app's default worker, which answers every
// request, PUTs and API calls included, from a cache or through fetch(). Ours
// answers only GETs of the build's own assets; everything else — pages with
// live data, the API, upload PUTs whose progress events and streamed body a
// worker would swallow — goes to the network untouched.
const serviceWorkerJS = `const cacheName = "betaport-{{.Version}}";
const resourcesToCache = {{.ResourcesToCache}}.filter((r) => r !== "/");

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
