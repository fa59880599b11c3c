package http

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/betaport/betaport/app/api"
)

// statusRecorder remembers the status and size of a response for the log.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (rec *statusRecorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *statusRecorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	n, err := rec.ResponseWriter.Write(b)
	rec.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection (flush, deadlines).
func (rec *statusRecorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// RequestIDHeader carries each request's id in its answer; every problem
// body names it too (instance), so a person's error report finds its log
// line.
const RequestIDHeader = "X-Request-Id"

// requestInfo is what the log line of a request learns on the way: its id,
// and the route pattern that answered (never the raw path: ids in paths
// would make every line a new route).
type requestInfo struct {
	id      string
	pattern string
	kind    string // what a download served: zip, crx, wasm ("" for none)
}

type requestInfoKey struct{}

// setRoute records the route pattern that answers r, for its log line.
func setRoute(r *http.Request, pattern string) {
	if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		info.pattern = pattern
	}
}

// setServed records that r serves a file of a kind (zip, crx, wasm), whose
// bytes the metrics count.
func setServed(r *http.Request, kind string) {
	if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		info.kind = kind
	}
}

// newRequestID is 16 random hex digits.
func newRequestID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// logRequests writes one structured line per request: the route pattern,
// the path without its secrets (see loggedPath; never the query, which may
// carry an upload URL's signature), the status, the bytes, the duration and
// the request id, which the answer carries in X-Request-Id.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{id: s.requestID(r)}
		w.Header().Set(RequestIDHeader, info.id)
		r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))
		rec := &statusRecorder{ResponseWriter: w}
		cut := s.serveRecovering(next, rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		took := time.Since(start)
		s.Metrics.Request(info.pattern, r.Method, rec.status, took.Seconds())
		if info.kind != "" && rec.status < 300 {
			s.Metrics.Served(info.kind, rec.bytes)
		}
		s.Logger.LogAttrs(r.Context(), levelFor(info.pattern, rec.status), "request",
			slog.String("method", r.Method),
			slog.String("route", info.pattern),
			slog.String("path", loggedPath(r.URL.Path)),
			slog.Int("status", rec.status),
			slog.Int64("bytes", rec.bytes),
			slog.Duration("duration", took),
			slog.String("request_id", info.id),
		)
		if cut {
			// The answer had begun when the handler panicked: end the
			// connection, so the client sees it cut rather than whole.
			panic(http.ErrAbortHandler)
		}
	})
}

// serveRecovering serves r, and answers a handler's panic as the internal
// error it is: logged with its stack and the request's id, answered with a
// 500 problem that names the request (net/http would only close the
// connection, and log to stderr, outside the service's log). It reports
// whether the answer had begun, so that the connection must be cut.
func (s *Server) serveRecovering(next http.Handler, rec *statusRecorder, r *http.Request) (cut bool) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler { //nolint:errorlint // net/http's own sentinel, compared as net/http does
			panic(v)
		}
		s.Logger.ErrorContext(r.Context(), "handler panicked", "method", r.Method, "path", loggedPath(r.URL.Path),
			"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		if rec.status != 0 {
			cut = true
			return
		}
		writeProblem(rec, problem(http.StatusInternalServerError, api.ProblemInternal,
			"Something went wrong on our side. Try again; if it keeps failing, tell the service's operator this answer's request id."))
	}()
	next.ServeHTTP(rec, r)
	return false
}

// levelFor is a request's log level: ERROR for the service's own failures,
// WARN for what an operator watches (a failed sign-in, a rate limit, a
// refused upload), INFO for the rest.
func levelFor(route string, status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status == http.StatusTooManyRequests:
		return slog.LevelWarn
	case route == "POST "+api.PathSession && status >= 400:
		return slog.LevelWarn
	case strings.Contains(route, " /api/submit/") && status >= 400:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// requestIDPattern is what an X-Request-Id from a trusted proxy may be.
var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// requestID is r's id: the X-Request-Id a trusted proxy (TrustedProxies)
// gave it, so one id follows the request through both logs, or a new one.
// Anyone else's is ignored: a client must not choose the id of another
// request's log line.
func (s *Server) requestID(r *http.Request) string {
	if id := r.Header.Get(RequestIDHeader); id != "" && len(s.TrustedProxies) > 0 && requestIDPattern.MatchString(id) {
		if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
			for _, p := range s.TrustedProxies {
				if p.Contains(ap.Addr().Unmap()) {
					return id
				}
			}
		}
	}
	return newRequestID()
}

// loggedPath hides the tokens some paths carry: a tester's sign-in link
// (/t/{token}) and an extension's update URL (/update/{id}/{token}/…).
func loggedPath(p string) string {
	switch {
	case strings.HasPrefix(p, api.InvitePrefix):
		return api.InvitePrefix + "…"
	case strings.HasPrefix(p, api.UpdatePrefix):
		parts := strings.SplitN(strings.TrimPrefix(p, api.UpdatePrefix), "/", 3)
		if len(parts) >= 2 {
			parts[1] = "…"
		}
		return api.UpdatePrefix + strings.Join(parts, "/")
	}
	return p
}
