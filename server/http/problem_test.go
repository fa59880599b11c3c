package http_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	bphttp "github.com/betaport/betaport/server/http"
)

// answer is what a client reads for err, written by (*Server).Error.
func answer(t *testing.T, err error) (*httptest.ResponseRecorder, api.Problem) {
	t.Helper()
	s := &bphttp.Server{Logger: slog.New(slog.DiscardHandler)}
	w := httptest.NewRecorder()
	s.Error(w, httptest.NewRequest("POST", "/api/submit/sign", nil), err)
	var p api.Problem
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatalf("the answer to %v is not a problem: %v\n%s", err, err, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != api.ProblemContentType {
		t.Errorf("the answer to %v has Content-Type %q", err, ct)
	}
	if w.Code != p.Status {
		t.Errorf("the answer to %v has status %d and a problem of status %d", err, w.Code, p.Status)
	}
	return w, p
}

// Every code and every reason of betaport.Error has one answer: a status
// and a problem type programs switch on.
func TestErrorMapsCodesAndReasons(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code, reason string
		status       int
		typ          string
	}{
		{betaport.EINVALID, "", 400, api.ProblemBadRequest},
		{betaport.ENOTFOUND, "", 404, api.ProblemNotFound},
		{betaport.ECONFLICT, "", 409, api.ProblemConflict},
		{betaport.EUNAUTHORIZED, "", 401, api.ProblemUnauthorized},
		{betaport.EFORBIDDEN, "", 403, api.ProblemForbidden},
		{betaport.ERATELIMITED, "", 429, api.ProblemTooManyRequests},
		{betaport.EINTERNAL, "", 500, api.ProblemInternal},

		{betaport.EUNAUTHORIZED, betaport.ReasonInvalidKey, 401, api.ProblemInvalidKey},
		{betaport.EFORBIDDEN, betaport.ReasonPlanRequired, 403, api.ProblemPlanRequired},
		{betaport.EFORBIDDEN, betaport.ReasonBadSignature, 403, api.ProblemBadSignature},
		{betaport.EFORBIDDEN, betaport.ReasonUploadURLExpired, 403, api.ProblemURLExpired},
		{betaport.EINVALID, betaport.ReasonInvalidReleaseNotes, 400, api.ProblemInvalidNotes},
		{betaport.EINVALID, betaport.ReasonTooLarge, 413, api.ProblemTooLarge},
		{betaport.EINVALID, betaport.ReasonUnsupportedMediaType, 415, api.ProblemUnsupportedMedia},
		{betaport.EINVALID, betaport.ReasonNotAZip, 422, api.ProblemNotAZip},
		{betaport.EINVALID, betaport.ReasonInvalidZip, 422, api.ProblemInvalidZip},
		{betaport.ECONFLICT, betaport.ReasonNoUpload, 409, api.ProblemNoUpload},
		{betaport.ECONFLICT, betaport.ReasonZipNotReceived, 409, api.ProblemZipNotReceived},
		{betaport.ECONFLICT, betaport.ReasonUploadExpired, 410, api.ProblemUploadExpired},
		{betaport.ECONFLICT, betaport.ReasonUploadClosed, 409, api.ProblemAlreadyDone},
		{betaport.ECONFLICT, betaport.ReasonAlreadyCurrent, 409, api.ProblemAlreadyCurrent},
		{betaport.ECONFLICT, betaport.ReasonInviteUsed, 410, api.ProblemInviteUsed},
		{betaport.ECONFLICT, betaport.ReasonInviteExpired, 410, api.ProblemInviteExpired},

		// A reason the http package does not know is answered by its code.
		{betaport.ECONFLICT, "no_such_reason", 409, api.ProblemConflict},
	}
	for _, c := range cases {
		err := betaport.Reasonf(c.code, c.reason, "Do this next (%s).", c.code)
		_, p := answer(t, err)
		if p.Status != c.status || p.Type != c.typ {
			t.Errorf("code %s reason %q answers %d %s, want %d %s", c.code, c.reason, p.Status, p.Type, c.status, c.typ)
		}
		if want := "Do this next (" + c.code + ")."; p.Detail != want {
			t.Errorf("code %s reason %q answers detail %q, want %q", c.code, c.reason, p.Detail, want)
		}
		if p.Title != http.StatusText(c.status) {
			t.Errorf("code %s reason %q answers title %q", c.code, c.reason, p.Title)
		}
		if p.Param != "" || p.RetryAfter != 0 || p.Problems != nil {
			t.Errorf("code %s reason %q answers fields it was not given: %+v", c.code, c.reason, p)
		}
	}
}

// A domain error wrapped on its way up keeps everything it says: found with
// errors.As, not a type assertion that sees only the wrapper.
func TestErrorKeepsWhatAWrappedErrorSays(t *testing.T) {
	t.Parallel()
	t.Run("param", func(t *testing.T) {
		inner := betaport.Errorf(betaport.EINVALID, "Give the tester an e-mail address.")
		inner.Param = "email"
		_, p := answer(t, fmt.Errorf("inviting a tester: %w", inner))
		if p.Status != 400 || p.Type != api.ProblemBadRequest || p.Param != "email" || p.Detail != inner.Message {
			t.Errorf("wrapped invalid error answers %+v, want 400 %s with param email and its message", p, api.ProblemBadRequest)
		}
	})

	t.Run("zip problems", func(t *testing.T) {
		inner := betaport.Reasonf(betaport.EINVALID, betaport.ReasonInvalidZip, "Fix them.")
		inner.Problems = []betaport.ZipProblem{{Code: "no_manifest", Path: "manifest.json", Message: "Add a manifest."}}
		_, p := answer(t, fmt.Errorf("sign: %w", inner))
		if p.Status != 422 || p.Type != api.ProblemInvalidZip || !slices.Equal(p.Problems, inner.Problems) {
			t.Errorf("wrapped rejected zip answers %+v, want 422 %s with its problems", p, api.ProblemInvalidZip)
		}
	})

	t.Run("retry after", func(t *testing.T) {
		for _, c := range []struct {
			wait time.Duration
			want int
		}{{7 * time.Second, 7}, {1500 * time.Millisecond, 2}} {
			inner := betaport.Errorf(betaport.ERATELIMITED, "Wait, then try again.")
			inner.RetryAfter = c.wait
			w, p := answer(t, fmt.Errorf("authorizing: %w", inner))
			if p.Status != 429 || p.Type != api.ProblemTooManyRequests || p.RetryAfter != c.want {
				t.Errorf("rate limit of %v answers %+v, want 429 with retryAfter %d", c.wait, p, c.want)
			}
			if got := w.Header().Get("Retry-After"); got != fmt.Sprint(c.want) {
				t.Errorf("rate limit of %v answers Retry-After %q, want %d", c.wait, got, c.want)
			}
		}
	})
}

// Any other error is internal, and shows nothing of itself.
func TestErrorHidesOtherErrors(t *testing.T) {
	t.Parallel()
	_, p := answer(t, fmt.Errorf("query users: %w", errors.New("SQL logic error near password_hash")))
	if p.Status != 500 || p.Type != api.ProblemInternal || p.Detail != betaport.ErrorMessage(errors.New("")) {
		t.Errorf("internal error answers %+v", p)
	}
}
