package http

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"gocloud.dev/gcerrors"
)

// writeProblem is the one way an error response is written: RFC 9457
// problem details whose detail tells a person what to do next.
func writeProblem(w http.ResponseWriter, p *api.Problem) {
	cp := *p // problems are shared values: this answer's instance is its own
	p = &cp
	if p.Title == "" {
		p.Title = http.StatusText(p.Status)
	}
	if id := w.Header().Get(RequestIDHeader); id != "" && p.Instance == "" {
		p.Instance = RequestInstance(id)
	}
	if p.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(p.RetryAfter))
	}
	h := w.Header()
	h.Del("Content-Length")
	h.Del("Content-Encoding")
	h.Del("ETag")
	h.Set("Content-Type", api.ProblemContentType)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	json.NewEncoder(w).Encode(p)
}

// RequestInstance is a problem's instance: the request that got it, by
// the id its log line and X-Request-Id carry.
func RequestInstance(id string) string { return "urn:betaport:request:" + id }

// StatusClientClosedRequest is logged for a request whose client left
// before the answer (nginx's 499; no client ever sees it).
const StatusClientClosedRequest = 499

// problem builds a problem of the given type and status.
var problem = api.NewProblem

// wire is the status and problem type an error is answered with.
type wire struct {
	status int
	typ    string
}

// codeStatus is the answer to each code of betaport.Error.
var codeStatus = map[string]wire{
	betaport.EINVALID:      {http.StatusBadRequest, api.ProblemBadRequest},
	betaport.ENOTFOUND:     {http.StatusNotFound, api.ProblemNotFound},
	betaport.ECONFLICT:     {http.StatusConflict, api.ProblemConflict},
	betaport.EUNAUTHORIZED: {http.StatusUnauthorized, api.ProblemUnauthorized},
	betaport.EFORBIDDEN:    {http.StatusForbidden, api.ProblemForbidden},
	betaport.ERATELIMITED:  {http.StatusTooManyRequests, api.ProblemTooManyRequests},
	betaport.EINTERNAL:     {http.StatusInternalServerError, api.ProblemInternal},
}

// reasonStatus is the answer to each reason of betaport.Error: its own
// problem type, with its code's status, or its own where the answer needs
// one (410, 413, 415, 422 have no code; see package betaport). An error
// whose reason is not here is answered by its code.
var reasonStatus = map[string]wire{
	betaport.ReasonInvalidKey:           {http.StatusUnauthorized, api.ProblemInvalidKey},
	betaport.ReasonPlanRequired:         {http.StatusForbidden, api.ProblemPlanRequired},
	betaport.ReasonBadSignature:         {http.StatusForbidden, api.ProblemBadSignature},
	betaport.ReasonUploadURLExpired:     {http.StatusForbidden, api.ProblemURLExpired},
	betaport.ReasonInvalidReleaseNotes:  {http.StatusBadRequest, api.ProblemInvalidNotes},
	betaport.ReasonTooLarge:             {http.StatusRequestEntityTooLarge, api.ProblemTooLarge},
	betaport.ReasonUnsupportedMediaType: {http.StatusUnsupportedMediaType, api.ProblemUnsupportedMedia},
	betaport.ReasonNotAZip:              {http.StatusUnprocessableEntity, api.ProblemNotAZip},
	betaport.ReasonInvalidZip:           {http.StatusUnprocessableEntity, api.ProblemInvalidZip},
	betaport.ReasonNoUpload:             {http.StatusConflict, api.ProblemNoUpload},
	betaport.ReasonZipNotReceived:       {http.StatusConflict, api.ProblemZipNotReceived},
	betaport.ReasonUploadExpired:        {http.StatusGone, api.ProblemUploadExpired},
	betaport.ReasonUploadClosed:         {http.StatusConflict, api.ProblemAlreadyDone},
	betaport.ReasonAlreadyCurrent:       {http.StatusConflict, api.ProblemAlreadyCurrent},
	betaport.ReasonInviteUsed:           {http.StatusGone, api.ProblemInviteUsed},
	betaport.ReasonInviteExpired:        {http.StatusGone, api.ProblemInviteExpired},
}

// ProblemFor is the problem a client is answered for err, the one mapping
// of errors to answers: an *api.Problem (the HTTP layer's own) as it is; a
// *betaport.Error, wrapped or not, by its reason or else its code, with its
// message, param, zip problems and retry-after; any other error as an
// internal error that shows nothing of it.
func ProblemFor(err error) *api.Problem {
	if p, ok := api.AsProblem(err); ok {
		return p
	}
	var e *betaport.Error
	if !errors.As(err, &e) {
		m := codeStatus[betaport.EINTERNAL]
		return problem(m.status, m.typ, betaport.ErrorMessage(err))
	}
	m, ok := reasonStatus[e.Reason]
	if !ok {
		if m, ok = codeStatus[e.Code]; !ok {
			m = codeStatus[betaport.EINTERNAL]
		}
	}
	p := problem(m.status, m.typ, e.Message)
	p.Param = e.Param
	p.Problems = e.Problems
	if e.RetryAfter > 0 {
		// Whole seconds, rounded up: waiting less would be refused again.
		p.RetryAfter = int((e.RetryAfter + time.Second - 1) / time.Second)
	}
	return p
}

// Error writes err as a problem (see ProblemFor). Domain errors show their
// message; any other error is logged with the request and shown only as an
// internal error, so no SQL, path or secret leaks into a response.
func (s *Server) Error(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		// The client went away (a closed tab, a second click that aborted
		// the first request): nobody reads this answer, and it is not a
		// server error. 499 is what the access log shows for it.
		w.WriteHeader(StatusClientClosedRequest)
		return
	}
	p := ProblemFor(err)
	if _, ok := api.AsProblem(err); !ok && betaport.ErrorCode(err) == betaport.EINTERNAL {
		if gcerrors.Code(err) != gcerrors.Unknown {
			s.Metrics.BlobError() // gocloud's errors carry a code; others are Unknown
		}
		s.Logger.ErrorContext(r.Context(), "internal error", "method", r.Method, "path", loggedPath(r.URL.Path), "err", err)
	}
	writeProblem(w, p)
}

// problemWriter turns an error answer written by code that is not ours (the
// mux's 404 and 405, go-app's not-found page, http.ServeContent's 416) into
// a problem.
type problemWriter struct {
	http.ResponseWriter
	problem bool
}

func (pw *problemWriter) WriteHeader(status int) {
	if status < 400 {
		pw.ResponseWriter.WriteHeader(status)
		return
	}
	pw.problem = true
	p := problem(status, api.ProblemInternal, "")
	switch status {
	case http.StatusNotFound:
		p.Type, p.Detail = api.ProblemNotFound, "Nothing lives at this address. Check the URL, or start again from the home page."
	case http.StatusMethodNotAllowed:
		p.Type = api.ProblemMethodNotAllowed
		p.Detail = "This address does not take that method; use one of: " + pw.Header().Get("Allow") + "."
	case http.StatusRequestedRangeNotSatisfiable:
		p.Type = api.ProblemRangeNotSatisfiable
		p.Detail = "The range asked for is outside the file (its size is in Content-Range). Ask for a range inside it, or for the whole file."
	}
	writeProblem(pw.ResponseWriter, p)
}

func (pw *problemWriter) Write(b []byte) (int, error) {
	if pw.problem {
		return len(b), nil // the problem body replaces the original text
	}
	return pw.ResponseWriter.Write(b)
}

func (pw *problemWriter) Unwrap() http.ResponseWriter { return pw.ResponseWriter }

// writeJSONPage writes a list page with an ETag of its bytes; a request
// whose If-None-Match names it gets 304 and no body, so revalidating a page
// that did not change costs no body.
func writeJSONPage(w http.ResponseWriter, r *http.Request, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeJSON(w, r, http.StatusOK, v) // reports the error
		return
	}
	etag := contentETag(b)
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "private, no-cache")
	if notModified(r, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeJSON(w, r, http.StatusOK, json.RawMessage(b))
}

// contentETag is a strong entity tag of b's bytes.
func contentETag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// notModified reports whether the request's If-None-Match names etag, by
// the weak comparison RFC 9110 asks of If-None-Match (W/ is ignored on
// either side).
func notModified(r *http.Request, etag string) bool {
	want := strings.TrimPrefix(etag, "W/")
	for _, tag := range strings.Split(r.Header.Get("If-None-Match"), ",") {
		if t := strings.TrimPrefix(strings.TrimSpace(tag), "W/"); t == want || t == "*" {
			return true
		}
	}
	return false
}

// writeJSON writes v as a JSON response.
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		slog.ErrorContext(r.Context(), "encoding response", "err", err)
		writeProblem(w, problem(http.StatusInternalServerError, api.ProblemInternal, betaport.ErrorMessage(err)))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	// Answers depend on who asks: never shared, always revalidated.
	if w.Header().Get("Cache-Control") == "" {
		w.Header().Set("Cache-Control", "private, no-cache")
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
