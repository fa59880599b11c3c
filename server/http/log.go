package http

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
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
		info := &requestInfo{id: newRequestID()}
		w.Header().Set(RequestIDHeader, info.id)
		r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		took := time.Since(start)
		s.Metrics.Request(info.pattern, r.Method, rec.status, took.Seconds())
		if info.kind != "" && rec.status < 300 {
			s.Metrics.Served(info.kind, rec.bytes)
		}
		s.Logger.LogAttrs(r.Context(), levelFor(rec.status), "request",
			slog.String("method", r.Method),
			slog.String("route", info.pattern),
			slog.String("path", loggedPath(r.URL.Path)),
			slog.Int("status", rec.status),
			slog.Int64("bytes", rec.bytes),
			slog.Duration("duration", took),
			slog.String("request_id", info.id),
		)
	})
}

func levelFor(status int) slog.Level {
	if status >= 500 {
		return slog.LevelError
	}
	return slog.LevelInfo
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
