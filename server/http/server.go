// Package http is Betaport's HTTP server: the JSON API, the browser app
// (go-app, prerendered on the server) and its static assets.
package http

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"path"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/adoption"
	"github.com/betaport/betaport/server/blobstore"
	"github.com/betaport/betaport/server/keyring"
	"github.com/betaport/betaport/server/metrics"
	"github.com/betaport/betaport/server/publish"
)

// Version is the build id, set by the linker (-X). When empty the server
// derives one from the embedded wasm, so every replica of one build agrees.
var Version string

// Server serves Betaport over HTTP. Set its fields, then call Serve.
type Server struct {
	Store   betaport.Store
	Blobs   *blob.Bucket
	Logger  *slog.Logger
	BaseURL string // the public URL, e.g. https://beta.example.com
	// TrustedProxies are the addresses whose X-Request-Id a request keeps
	// as its id (none: every id is the service's own).
	TrustedProxies []netip.Prefix
	// Secret signs cursors (and, later, upload URLs). Replicas share it.
	Secret []byte
	// SessionTTL is how long a session lasts unused; 0 means 14 days.
	SessionTTL time.Duration
	// UploadOrigin is the origin (scheme://host) of S3 storage's presigned
	// upload URLs, which the browser's upload panel PUTs to; empty when
	// uploads come to this server.
	UploadOrigin string
	// Publish runs the submit flow, CRX packing and the update feed. Nil
	// means one made from the fields above (with SigningKeys), on the
	// first call to Handler.
	Publish *publish.Service
	// SigningKeys seals and opens extensions' CRX signing keys at rest;
	// only for the Publish made when Publish is nil.
	SigningKeys *keyring.Keyring
	// EventPoll is how often a replica reads the revision of an extension
	// a browser watches (live lists); 0 means DefaultEventPoll.
	EventPoll time.Duration
	// Metrics records what the service does (nil: nothing); serve
	// --metrics-addr serves them on a listener of their own.
	Metrics *metrics.Metrics
	// NoUI serves the API without the browser app's pages (serve
	// --no-ui), for a binary built without the app.
	NoUI bool
	// FeedbackRefill is how often a tester gets one more report after a
	// burst; 0 means 30 s. Tests that count refusals set it long, so that
	// a slow machine's pace refills nothing.
	FeedbackRefill time.Duration
	// CLIBinary is the betaport command the service offers at PathCLI
	// (serve: its own executable); "" offers none.
	CLIBinary string
	// WebhookAllowPrivate takes webhooks whose host is an address that is
	// not public: loopback, private, link-local, reserved, or an IPv6
	// address carrying such an IPv4 one (serve --webhooks-allow-private,
	// which lets the worker send to them); without it they are refused
	// when made.
	WebhookAllowPrivate bool
	// Timeouts bound slow clients; the zero value means the defaults.
	Timeouts Timeouts
	// SignInRefill is how often a throttled address or account gets one
	// more sign-in try; 0 means DefaultSignInRefill. Tests that count
	// tries set it long, so that a slow machine's pace refills nothing.
	SignInRefill time.Duration
	// InviteExpiry is how long a new invite link works unused unless the
	// admin gives another; 0 means betaport.DefaultInviteExpiry (serve
	// --invite-days).
	InviteExpiry time.Duration
	// Now is the clock upload URLs expire by; nil means time.Now. Tests
	// move it instead of sleeping.
	Now func() time.Time

	once         sync.Once
	handler      http.Handler
	srvOnce      sync.Once
	srv          *http.Server
	eventsOnce   sync.Once
	eventHub     *eventHub
	shutdownOnce sync.Once
	shutdown     chan struct{}
	routeTable   []Route
	cli          cliFile
	crossOrigin  *http.CrossOriginProtection
	signInOnce   sync.Once
	signIn       *limiter
	// feedbackLimit paces each tester's reports.
	feedbackOnce  sync.Once
	feedbackLimit *limiter
}

// Handler returns the server's root handler.
func (s *Server) Handler() http.Handler {
	s.once.Do(func() {
		if s.Logger == nil {
			s.Logger = slog.Default()
		}
		if s.Publish == nil {
			s.Publish = &publish.Service{Store: s.Store, Blobs: s.Blobs, Logger: s.Logger,
				BaseURL: s.BaseURL, Secret: s.Secret, SigningKeys: s.SigningKeys, Now: s.Now}
		}
		if s.Publish.Adoption == nil {
			// Counts are then written when the adoption API reads them.
			s.Publish.Adoption = &adoption.Counter{Store: s.Store, Now: s.Now}
		}
		s.crossOrigin = http.NewCrossOriginProtection()
		s.handler = s.logRequests(securityHeaders(s.UploadOrigin, s.writeDeadlines(s.bodyDeadlines(s.routes()))))
	})
	return s.handler
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	s.route(mux, "GET "+api.PathHealth, Public, s.handleHealth)
	s.route(mux, "GET "+api.PathReady, Public, s.handleReady)
	s.route(mux, "GET /api/openapi.json", Public, s.handleOpenAPI)

	s.route(mux, "POST /api/session", Public, s.handleSignIn)
	s.route(mux, "GET /api/session", SignedIn, s.handleGetSession)
	s.route(mux, "DELETE /api/session", Public, s.handleSignOut)
	s.route(mux, "GET /t/{token}", Public, s.handleInviteLink)

	s.routeScoped(mux, "GET /api/extensions", SignedIn, betaport.ScopeRead, s.handleListExtensions)
	s.routeScoped(mux, "GET "+api.PathToken, SignedIn, ScopeAnyToken, s.handleGetToken)
	s.route(mux, "GET /api/builds", SignedIn, s.handleListBuilds)
	s.routeExtension(mux, "GET /api/extensions/{id}", ExtensionMember, betaport.ScopeRead, s.handleGetExtension)
	s.routeExtension(mux, "GET /api/extensions/{id}/testers", ExtensionAdmin, betaport.ScopeRead, s.handleListTesters)
	s.routeExtension(mux, "POST /api/extensions/{id}/testers", ExtensionAdmin, betaport.ScopeTesters, s.handleInviteTester)
	// A script that acts on a tester it knows by address finds them here,
	// with the scope it acts with.
	s.routeExtension(mux, "GET /api/extensions/{id}/tester", ExtensionAdmin, betaport.ScopeTesters, s.handleTesterByEmail)
	s.routeExtension(mux, "DELETE /api/extensions/{id}/testers/{testerId}", ExtensionAdmin, betaport.ScopeTesters, s.handleRevokeTester)
	s.routeExtension(mux, "POST /api/extensions/{id}/testers/{testerId}/restore", ExtensionAdmin, betaport.ScopeTesters, s.handleRestoreTester)
	s.routeExtension(mux, "POST /api/extensions/{id}/testers/{testerId}/invite", ExtensionAdmin, betaport.ScopeTesters, s.handleResendInvite)
	s.routeExtension(mux, "PUT /api/extensions/{id}/testers/{testerId}/channel", ExtensionAdmin, betaport.ScopeTesters, s.handleSetTesterChannel)
	s.routeExtension(mux, "GET /api/extensions/{id}/keys", ExtensionAdmin, betaport.ScopeRead, s.handleListKeys)
	s.routeExtension(mux, "POST /api/extensions/{id}/keys", ExtensionAdmin, betaport.ScopeSettings, s.handleCreateKey)
	s.routeExtension(mux, "DELETE /api/extensions/{id}/keys/{keyId}", ExtensionAdmin, betaport.ScopeSettings, s.handleRevokeKey)
	s.routeExtension(mux, "GET /api/extensions/{id}/audit", ExtensionAdmin, betaport.ScopeRead, s.handleListAudit)
	s.routeExtension(mux, "GET /api/extensions/{id}/adoption", ExtensionAdmin, betaport.ScopeRead, s.handleAdoption)
	s.routeExtension(mux, "GET /api/extensions/{id}/installs", ExtensionAdmin, betaport.ScopeRead, s.handleInstalls)
	s.routeExtension(mux, "GET /api/extensions/{id}/webhooks", ExtensionAdmin, betaport.ScopeRead, s.handleListWebhooks)
	s.routeExtension(mux, "POST /api/extensions/{id}/webhooks", ExtensionAdmin, betaport.ScopeSettings, s.handleCreateWebhook)
	s.routeExtension(mux, "DELETE /api/extensions/{id}/webhooks/{webhookId}", ExtensionAdmin, betaport.ScopeSettings, s.handleDeleteWebhook)
	s.routeExtension(mux, "GET /api/extensions/{id}/webhooks/{webhookId}/deliveries", ExtensionAdmin, betaport.ScopeRead, s.handleListDeliveries)
	s.routeExtension(mux, "POST /api/extensions/{id}/webhooks/{webhookId}/test", ExtensionAdmin, betaport.ScopeSettings, s.handleTestWebhook)
	s.routeExtension(mux, "GET /api/extensions/{id}/bundles", ExtensionMember, betaport.ScopeRead, s.handleListBundles)
	s.routeExtension(mux, "GET /api/extensions/{id}/events", ExtensionMember, betaport.ScopeRead, s.handleEvents)
	s.routeExtension(mux, "GET /api/extensions/{id}/bundles/current", ExtensionMember, betaport.ScopeRead, s.handleCurrentBundle)
	s.routeExtension(mux, "GET /api/extensions/{id}/bundles/current/download", ExtensionMember, betaport.ScopeRead, s.handleDownloadCurrent)
	s.routeExtension(mux, "GET /api/extensions/{id}/bundles/{number}/download", ExtensionMember, betaport.ScopeRead, s.handleDownloadBundle)
	s.routeExtension(mux, "GET /api/extensions/{id}/bundles/{number}/crx", ExtensionMember, betaport.ScopeRead, s.handleDownloadCRX)
	s.routeExtension(mux, "POST /api/extensions/{id}/bundles/{number}/rollback", ExtensionAdmin, betaport.ScopeReleases, s.handleRollback)
	s.routeExtension(mux, "POST /api/extensions/{id}/bundles/{number}/promote", ExtensionAdmin, betaport.ScopeReleases, s.handlePromote)
	s.routeExtension(mux, "GET /api/extensions/{id}/channels", ExtensionAdmin, betaport.ScopeRead, s.handleListChannels)
	s.routeExtension(mux, "POST /api/extensions/{id}/channels", ExtensionAdmin, betaport.ScopeReleases, s.handleCreateChannel)
	s.routeExtension(mux, "GET /api/extensions/{id}/channels/{channel}", ExtensionAdmin, betaport.ScopeRead, s.handleGetChannel)
	s.routeExtension(mux, "POST /api/extensions/{id}/channels/{channel}/rollout/{action}", ExtensionAdmin, betaport.ScopeReleases, s.handleChangeRollout)
	s.routeExtension(mux, "GET /api/extensions/{id}/policy/{system}", ExtensionMember, betaport.ScopeRead, s.handlePolicy)
	s.routeExtension(mux, "POST /api/extensions/{id}/feedback", ExtensionMember, "", s.handleCreateFeedback)
	s.routeExtension(mux, "GET /api/extensions/{id}/feedback", ExtensionMember, betaport.ScopeRead, s.handleListFeedback)
	s.routeExtension(mux, "GET /api/extensions/{id}/feedback/{feedbackId}", ExtensionMember, betaport.ScopeRead, s.handleGetFeedback)
	s.routeExtension(mux, "POST /api/extensions/{id}/feedback/{feedbackId}/status", ExtensionAdmin, betaport.ScopeFeedback, s.handleFeedbackStatus)
	s.routeExtension(mux, "DELETE /api/extensions/{id}/feedback/{feedbackId}", ExtensionAdmin, betaport.ScopeFeedback, s.handleDeleteFeedback)
	s.routeExtension(mux, "GET /api/extensions/{id}/feedback/{feedbackId}/screenshots/{number}", ExtensionMember, betaport.ScopeRead, s.handleFeedbackScreenshot)
	s.routeExtension(mux, "GET /api/extensions/{id}/updates", ExtensionAdmin, betaport.ScopeRead, s.handleGetUpdates)
	// Access tokens are made and revoked by people only: a token never
	// makes a token.
	s.routeExtension(mux, "GET /api/extensions/{id}/tokens", ExtensionAdmin, "", s.handleListTokens)
	s.routeExtension(mux, "POST /api/extensions/{id}/tokens", ExtensionAdmin, "", s.handleCreateToken)
	s.routeExtension(mux, "DELETE /api/extensions/{id}/tokens/{tokenId}", ExtensionAdmin, "", s.handleRevokeToken)
	s.routeExtension(mux, "POST /api/extensions/{id}/updates/token", ExtensionAdmin, betaport.ScopeSettings, s.handleRotateUpdateToken)

	// Chromium's updater sends no cookies: the update token in the URL
	// authorises.
	s.route(mux, "GET "+api.UpdatePrefix+"{id}/{token}", KeyAuth, s.handleUpdateCheck)
	s.route(mux, "GET "+api.UpdatePrefix+"{id}/{token}/crx/{number}", KeyAuth, s.handleUpdateCRX)
	// The extension itself reports with the same URL (its manifest's
	// update_url), from its own origin only.
	s.route(mux, "POST "+api.UpdatePrefix+"{id}/{token}/feedback", KeyAuth, s.handleExtensionFeedback)
	s.route(mux, "OPTIONS "+api.UpdatePrefix+"{id}/{token}/feedback", KeyAuth, s.handleExtensionFeedbackPreflight)

	// Calls 1 and 3 take a key, or an admin's session in the browser; the
	// PUT of call 2 is authorised by its signed URL.
	s.route(mux, "POST "+api.PathSubmitUpload, KeyOrAdmin, s.handleSubmitUpload)
	s.route(mux, "POST "+api.PathSubmitSign, KeyOrAdmin, s.handleSubmitSign)
	s.route(mux, "GET /api/submit/limits", Public, s.handleSubmitLimits)
	// The command pipelines run, from the service they talk to.
	s.route(mux, "GET "+PathCLI, Public, s.handleCLI)
	s.route(mux, "GET "+PathCLI+".sha256", Public, s.handleCLISum)
	s.route(mux, "PUT "+api.UploadPrefix+"{upload}", KeyAuth, s.handleUploadPut)
	for _, method := range []string{"GET", "POST", "PATCH", "DELETE"} {
		mux.HandleFunc(method+" "+api.UploadPrefix+"{upload}", uploadMethodNotAllowed)
	}

	assets := newAssets(s.Logger)
	mux.Handle("GET /web/", assets)
	mux.Handle("GET /wasm_exec.js", assets)
	mux.Handle("GET /robots.txt", assets)

	// Everything else is a page of the browser app, prerendered by go-app
	// (unless the service runs without it).
	if s.NoUI {
		mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
			writeProblem(w, problem(http.StatusNotFound, api.ProblemNotFound,
				"This service runs without its browser app (serve --no-ui): only the API under /api/ answers."))
		})
	} else {
		mux.Handle("GET /", newAppHandler(assets.version, mux))
	}

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.RequestURI == "*" {
			// The mux answers a bare 400 to any request for "*" (but
			// OPTIONS, which net/http answers before it), as to the
			// preface of HTTP/2 without TLS, which this service does not
			// speak.
			w.Header().Set("Connection", "close")
			writeProblem(w, problem(http.StatusBadRequest, api.ProblemBadRequest,
				"The request's target is *, which names nothing here (and HTTP/2 is not spoken without TLS). Send an HTTP/1.1 request for a path, such as GET /healthz."))
			return
		}
		if isAPIPath(r.URL.Path) && path.Clean(r.URL.Path) != r.URL.Path {
			// The mux would redirect to the cleaned path: an empty id
			// (/api/extensions//testers) would then name a resource
			// after all, or another one. An API address is spelled one
			// way.
			writeProblem(w, problem(http.StatusNotFound, api.ProblemNotFound,
				"There is no API endpoint at this address: API addresses have no empty, \".\" or \"..\" segments and no trailing slash. Check the path against the API reference."))
			return
		}
		_, pattern := mux.Handler(r)
		setRoute(r, pattern)
		if (pattern == "" || pattern == "GET /") && isAPIPath(r.URL.Path) {
			// The page catch-all must not answer for the API: a wrong
			// method there is a 405 that says which methods work.
			if allow := allowedMethods(mux, r); allow != "" {
				w.Header().Set("Allow", allow)
				writeProblem(w, problem(http.StatusMethodNotAllowed, api.ProblemMethodNotAllowed,
					"This address does not take "+r.Method+"; use "+allow+"."))
				return
			}
			// The path is not repeated: an answer says nothing a link's
			// author chose (a "detail" reading as the service's word).
			writeProblem(w, problem(http.StatusNotFound, api.ProblemNotFound,
				"There is no API endpoint at this address. Check the path against the API reference."))
			return
		}
		if pattern == "" {
			// Not found or a wrong method, answered by the mux: the
			// answers are turned into problems. (Pages answer for
			// themselves: an unknown one is ui.NotFoundPage.)
			w = &problemWriter{ResponseWriter: w}
		}
		mux.ServeHTTP(w, r)
	})
}

// isAPIPath reports whether path belongs to the API, the update feed or
// upload URLs rather than to the browser app's pages.
func isAPIPath(path string) bool {
	return strings.HasPrefix(path, "/api/") || path == "/api" ||
		strings.HasPrefix(path, api.UpdatePrefix) || strings.HasPrefix(path, api.UploadPrefix)
}

// allowedMethods lists the methods mux routes path with, other than to the
// page catch-all, as an Allow header value.
func allowedMethods(mux *http.ServeMux, r *http.Request) string {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := mux.Handler(probe); pattern != "" && pattern != "GET /" {
			allow = append(allow, m)
		}
	}
	return strings.Join(allow, ", ")
}

// httpServer is the net/http server Serve runs, made once: Serve and a
// Shutdown that may come first (a quick Close) share it without a race.
func (s *Server) httpServer() *http.Server {
	s.srvOnce.Do(func() {
		t := s.Timeouts.withDefaults()
		s.srv = &http.Server{
			Handler: answering(s.Handler()),
			// No ReadTimeout or WriteTimeout: a large upload or download
			// may take long. Bodies get their own deadlines (bodyDeadlines).
			ReadHeaderTimeout: t.Header,
			IdleTimeout:       t.Idle,
			MaxHeaderBytes:    maxHeaderBytes,
			ErrorLog:          slog.NewLogLogger(s.Logger.Handler(), slog.LevelWarn),
			// net/http's own error answers become problems (goanswers.go).
			ConnContext: connContext,
			ConnState:   connState,
		}
		// Event streams end when shutdown starts, instead of holding it.
		s.srv.RegisterOnShutdown(func() {
			s.shuttingDown()
			close(s.shutdown)
		})
	})
	return s.srv
}

// Serve accepts connections on ln until Shutdown (after a Shutdown, it
// closes ln and returns at once).
func (s *Server) Serve(ln net.Listener) error {
	err := s.httpServer().Serve(answerListener{Listener: ln, s: s})
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting connections and waits for in-flight requests to
// finish, or for ctx to end.
func (s *Server) Shutdown(ctx context.Context) error {
	return s.httpServer().Shutdown(ctx)
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC().Truncate(time.Millisecond)
	}
	return betaport.Now()
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request, _ *subject) {
	writeJSON(w, r, http.StatusOK, api.Health{Status: "ok", Version: BuildID(), Go: runtime.Version()})
}

// handleReady answers 200 only when the database and the blob store answer.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request, _ *subject) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	checks := map[string]string{"database": "ok", "blobs": "ok"}
	ready := true
	if err := s.Store.Ping(ctx); err != nil {
		s.Logger.WarnContext(ctx, "readiness: database", "err", err)
		checks["database"], ready = "unreachable", false
	}
	if err := blobstore.Ping(ctx, s.Blobs); err != nil {
		s.Logger.WarnContext(ctx, "readiness: blobs", "err", err)
		checks["blobs"], ready = "unreachable", false
	}
	if !ready {
		p := problem(http.StatusServiceUnavailable, api.ProblemUnavailable,
			"The service cannot reach its storage: database "+checks["database"]+", blobs "+checks["blobs"]+". Check the --db and --blob settings and that the storage is up.")
		p.RetryAfter = 5
		writeProblem(w, p)
		return
	}
	writeJSON(w, r, http.StatusOK, api.Health{Status: "ok", Checks: checks})
}

// handleListExtensions lists an admin's team's extensions, or the one
// extension a tester tests.
func (s *Server) handleListExtensions(w http.ResponseWriter, r *http.Request, who *subject) {
	var list []*betaport.Extension
	var err error
	switch {
	case who.user != nil:
		list, err = s.Store.FindExtensions(r.Context(), betaport.ExtensionFilter{TeamID: who.user.TeamID})
	case who.token != nil: // a token is its one extension's
		var e *betaport.Extension
		if e, err = s.Store.FindExtension(r.Context(), who.token.ExtensionID); err == nil {
			list = []*betaport.Extension{e}
		}
	default:
		var e *betaport.Extension
		if e, err = s.Store.FindExtension(r.Context(), who.tester.ExtensionID); err == nil {
			list = []*betaport.Extension{e}
		}
	}
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, list)
}

func (s *Server) handleGetExtension(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	writeJSON(w, r, http.StatusOK, ext)
}

// pathIDNames say what each numeric path parameter names.
var pathIDNames = map[string]string{
	"id": "extension", "testerId": "tester", "keyId": "key", "webhookId": "webhook",
	"number": "bundle", "upload": "upload",
}

// pathID reads a numeric path parameter (an id, or a bundle number) by
// api.ParseID, the one reading of ids: digits without a sign, spaces or
// leading zeros. Any other text, "+7" or "07" as much as "x", names no
// resource, so it gets the 404 of an id that does not exist.
func pathID(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	raw := r.PathValue(name)
	id, ok := api.ParseID(raw)
	if !ok {
		what := pathIDNames[name]
		if what == "" {
			what = name
		}
		writeProblem(w, problem(http.StatusNotFound, api.ProblemNotFound,
			fmt.Sprintf("There is no %s %s: %ss are numbered 1, 2, 3… and written in digits only, without a sign, spaces or leading zeros.", what, strconv.Quote(raw), what)))
		return 0, false
	}
	return id, true
}
