package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/metrics"
)

// Session lifetimes: a session ends after SessionTTL without use; its expiry
// slides forward at most once per sessionRefresh, so a busy page does not
// write on every request.
const (
	defaultSessionTTL = 14 * 24 * time.Hour
	sessionRefresh    = time.Hour
)

// subject is who made a request: an admin, a tester, or nobody.
type subject struct {
	session *betaport.Session
	user    *betaport.User   // an admin
	tester  *betaport.Tester // an active tester
	// token is a script's access token: it acts as an admin of its one
	// extension, within its scopes (tokenAllowed).
	token *betaport.AccessToken
	// ended is a tester whose session outlived their access (revoked):
	// anonymous for every route, told so rather than asked to sign in.
	ended *betaport.Tester
}

func (who *subject) anonymous() bool { return who.user == nil && who.tester == nil && who.token == nil }

// admin reports whether who acts as an admin: a signed-in admin, or a
// script with an access token (of the extension extensionFor allowed).
func (who *subject) admin() bool { return who.user != nil || who.token != nil }

// actor is who the audit trail and the records name for a change who
// makes: an admin's e-mail, or the access token used.
func (who *subject) actor() string {
	if who.token != nil {
		return who.token.Actor()
	}
	return who.user.Email
}

// authenticate reads the session cookie. Any failure (no cookie, unknown or
// expired session, revoked tester) leaves the request anonymous. A request
// with an Authorization header is a script's, authenticated by its access
// token alone; a token that does not authenticate is an error that says
// why.
func (s *Server) authenticate(r *http.Request) (*subject, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		return s.authenticateToken(r, h)
	}
	who := &subject{}
	c, err := r.Cookie(api.SessionCookie)
	if err != nil || c.Value == "" {
		return who, nil
	}
	ctx := r.Context()
	ss, err := s.Store.FindSession(ctx, credential.HashToken(c.Value))
	if betaport.ErrorCode(err) == betaport.EUNAUTHORIZED {
		return who, nil
	} else if err != nil {
		return nil, err
	}
	switch {
	case ss.UserID != 0:
		if who.user, err = s.Store.FindUser(ctx, ss.UserID); err != nil {
			return nil, err
		}
	case ss.TesterID != 0:
		t, err := s.Store.FindTester(ctx, ss.TesterID)
		if err != nil {
			return nil, err
		}
		if t.Status == betaport.TesterRevoked {
			who.ended = t
		}
		if t.Status != betaport.TesterActive {
			return who, nil
		}
		who.tester = t
	}
	who.session = ss
	if time.Until(ss.ExpiresAt) < s.sessionTTL()-sessionRefresh {
		if err := s.Store.ExtendSession(ctx, ss.TokenHash, betaport.Now().Add(s.sessionTTL())); err != nil {
			s.Logger.WarnContext(ctx, "extending a session", "err", err)
		}
	}
	return who, nil
}

func (s *Server) sessionTTL() time.Duration {
	if s.SessionTTL > 0 {
		return s.SessionTTL
	}
	return defaultSessionTTL
}

// startSession creates a session and sets its cookie.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, ss *betaport.Session) error {
	token := credential.NewToken()
	ss.TokenHash = credential.HashToken(token)
	ss.ExpiresAt = betaport.Now().Add(s.sessionTTL())
	if err := s.Store.CreateSession(r.Context(), ss); err != nil {
		return err
	}
	http.SetCookie(w, s.sessionCookie(token, ss.ExpiresAt))
	return nil
}

func (s *Server) sessionCookie(value string, expires time.Time) *http.Cookie {
	c := &http.Cookie{
		Name:     api.SessionCookie,
		Value:    value,
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		Secure:   strings.HasPrefix(s.BaseURL, "https://"),
	}
	if value == "" {
		c.MaxAge = -1
	} else {
		// The cookie outlives the session's sliding expiry; the server
		// decides when a session ends.
		c.Expires = expires.Add(365 * 24 * time.Hour)
	}
	return c
}

func (s *Server) sessionInfo(ctx context.Context, who *subject) (*api.Session, error) {
	if who.user != nil {
		team, err := s.Store.FindTeam(ctx, who.user.TeamID)
		if err != nil {
			return nil, err
		}
		return &api.Session{Kind: api.KindAdmin, User: who.user, Team: team}, nil
	}
	return &api.Session{Kind: api.KindTester, Tester: who.tester}, nil
}

func (s *Server) handleGetSession(w http.ResponseWriter, r *http.Request, who *subject) {
	info, err := s.sessionInfo(r.Context(), who)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, info)
}

var errWrongSignIn = betaport.Errorf(betaport.EUNAUTHORIZED, "The e-mail address or the password is wrong. Check both and try again.")

// handleSignIn checks an admin's e-mail and password. Unknown e-mails and
// wrong passwords get the same answer, in the same time; repeated failures
// are slowed down per address and per account.
//
// The account's limit must not let a stranger lock its owner out (issue
// 29: two wrong passwords a second from one address kept the real admin
// out from another). So an address with failures to spare still has its
// password checked when the account is throttled: the right password
// signs in; a wrong one costs that address its whole allowance. Guessing
// from many addresses then gets one guess per address per account lockout.
func (s *Server) handleSignIn(w http.ResponseWriter, r *http.Request, _ *subject) {
	if refusesTokens(w, r) {
		return
	}
	var in api.SignIn
	if !s.readJSON(w, r, &in) {
		return
	}
	email := strings.ToLower(strings.TrimSpace(in.Email))
	if email == "" || in.Password == "" {
		writeProblem(w, &api.Problem{Type: api.ProblemBadRequest, Status: http.StatusBadRequest,
			Param: "email", Detail: "Give your e-mail address and your password."})
		return
	}
	address, account := "ip:"+clientIP(r), "email:"+email
	limits := s.signInLimiter()
	tooMany := func(wait int, why string) {
		s.Metrics.RateLimited(metrics.LimiterSignIn)
		s.Logger.WarnContext(r.Context(), "sign-in throttled", "why", why, "address", clientIP(r), "request_id", w.Header().Get(RequestIDHeader))
		p := problem(http.StatusTooManyRequests, api.ProblemTooManyRequests,
			"Too many failed sign-ins. Wait "+strconv.Itoa(wait)+" seconds, then try again.")
		p.RetryAfter = wait
		writeProblem(w, p)
	}
	if wait := limits.wait(address); wait > 0 {
		tooMany(wait, "failures from this address")
		return
	}
	accountWait := limits.wait(account)
	user, hash, err := s.Store.FindUserByEmail(r.Context(), email)
	if err != nil && betaport.ErrorCode(err) != betaport.ENOTFOUND {
		s.Error(w, r, err)
		return
	}
	if !credential.CheckPassword(hash, in.Password) {
		limits.fail(address, account)
		s.Metrics.Session(metrics.SessionSignInFailed)
		if accountWait > 0 {
			limits.drain(address)
			tooMany(accountWait, "failures for this account")
			return
		}
		s.Error(w, r, errWrongSignIn)
		return
	}
	who := &subject{user: user, session: &betaport.Session{UserID: user.ID}}
	if err := s.startSession(w, r, who.session); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Metrics.Session(metrics.SessionSignedIn)
	s.handleGetSession(w, r, who)
}

// handleSignOut ends the session, if any. Signing out twice is fine.
func (s *Server) handleSignOut(w http.ResponseWriter, r *http.Request, who *subject) {
	if refusesTokens(w, r) {
		return
	}
	if who.session != nil {
		if err := s.Store.DeleteSession(r.Context(), who.session.TokenHash); err != nil {
			s.Error(w, r, err)
			return
		}
	}
	http.SetCookie(w, s.sessionCookie("", time.Time{}))
	s.Metrics.Session(metrics.SessionSignedOut)
	w.WriteHeader(http.StatusNoContent)
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// maxJSONBody bounds every JSON request body.
const maxJSONBody = 64 << 10

// readJSON decodes a JSON request body into v, answering the problem itself
// when the body is not what the API takes. It is the one reader of JSON
// bodies: every field of every call is checked here for text that is not
// Unicode (see invalidText), which encoding/json would quietly replace.
func (s *Server) readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/json" {
		writeProblem(w, problem(http.StatusUnsupportedMediaType, api.ProblemUnsupportedMedia,
			"Send the body as JSON with the header Content-Type: application/json."))
		return false
	}
	// JSON is UTF-8 (RFC 8259): a body declared in another charset would
	// be read otherwise than its sender meant.
	if cs, given := params["charset"]; given && !strings.EqualFold(cs, "utf-8") {
		writeProblem(w, problem(http.StatusUnsupportedMediaType, api.ProblemUnsupportedMedia,
			"JSON is UTF-8: send the body as UTF-8 with Content-Type: application/json (a charset, if given, is utf-8), not charset="+cs+"."))
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(body))
		// A misspelt field would otherwise be dropped, and the call done
		// without it (an invite's "expiresInDay" made a 14-day link).
		dec.DisallowUnknownFields()
		if err = dec.Decode(v); err == nil {
			if _, end := dec.Token(); end != io.EOF {
				writeProblem(w, problem(http.StatusBadRequest, api.ProblemBadRequest,
					"The body has more after its JSON object. Send exactly one JSON object."))
				return false
			}
		}
	}
	var tooBig *http.MaxBytesError
	where, inName, notUnicode := invalidText(body)
	switch {
	case (err == nil || isUnknownField(err)) && notUnicode:
		// Text that is not Unicode is named where it is, a field's name
		// included (before that name is refused as unknown).
		writeProblem(w, invalidTextProblem(where, inName))
		return false
	case err == nil && bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("null")):
		// Go decodes null into an object as nothing at all: a body that
		// is null would pass for {} (a new link made, a restore done).
		writeProblem(w, problem(http.StatusBadRequest, api.ProblemBadRequest,
			"The body is null. Send a JSON object ({…}), or no body where the call takes none."))
		return false
	case err == nil:
	case isTimeout(err):
		writeProblem(w, problem(http.StatusRequestTimeout, api.ProblemRequestTimeout,
			fmt.Sprintf("The body did not arrive within %s. Send the request again.", s.Timeouts.withDefaults().Body)))
		return false
	case errors.As(err, &tooBig):
		writeProblem(w, problem(http.StatusRequestEntityTooLarge, api.ProblemTooLarge,
			"The body is larger than 64 KiB; send only the fields this call takes."))
		return false
	default:
		p := problem(http.StatusBadRequest, api.ProblemBadRequest, jsonErrorText(err))
		// A field of the wrong kind, or one the call does not take, is
		// named, as every other bad field is.
		if typeErr := (*json.UnmarshalTypeError)(nil); errors.As(err, &typeErr) {
			p.Param = typeErr.Field
		} else if field, ok := unknownField(err); ok {
			p.Param = field
		}
		writeProblem(w, p)
		return false
	}
	return true
}

// invalidTextProblem answers a body whose text at where is not Unicode.
// Release notes keep their own problem type, which says what is wrong
// with them.
func invalidTextProblem(where string, inName bool) *api.Problem {
	const how = " is not Unicode text: it holds half of a UTF-16 surrogate pair (such as \\ud800 alone) or bytes that are not UTF-8. " +
		"Nothing was stored. Send UTF-8 text; escape a character beyond U+FFFF as its whole pair (\\ud83d\\ude00) or write it as it is."
	typ := api.ProblemBadRequest
	var detail string
	switch {
	case inName && where == "":
		detail = "A field's name" + how
	case inName:
		detail = "A field's name in " + strconv.Quote(where) + how
	case where == "":
		detail = "The body" + how
	default:
		detail = strconv.Quote(where) + how
	}
	if where == "releaseNotes" && !inName {
		typ = api.ProblemInvalidNotes
	}
	p := problem(http.StatusBadRequest, typ, detail)
	p.Param = where
	return p
}

// jsonErrorText explains a decoding error in JSON's words, never Go's:
// encoding/json names Go types (map[string]json.RawMessage) that mean
// nothing to the caller.
func jsonErrorText(err error) string {
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return "The body is empty. Send a JSON object."
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "The body ends in the middle of its JSON. Send a whole JSON object."
	case errors.As(err, &syntax):
		return fmt.Sprintf("The body is not valid JSON (at byte %d). Send a JSON object.", syntax.Offset)
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return fmt.Sprintf("%s must be %s, not %s.", strconv.Quote(typeErr.Field), jsonKind(typeErr.Type), typeErr.Value)
	case errors.As(err, &typeErr):
		return "The body must be a JSON object ({…}), not " + typeErr.Value + "."
	case isUnknownField(err):
		field, _ := unknownField(err)
		return fmt.Sprintf("This call takes no field %s. Check its spelling against the API reference.", strconv.Quote(field))
	default:
		return "The body is not a JSON object this call understands. Send a JSON object."
	}
}

// unknownField is the field encoding/json's DisallowUnknownFields refused:
// its error has no type of its own, only the text `json: unknown field "x"`.
func unknownField(err error) (string, bool) {
	const prefix = `json: unknown field `
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return "", false
	}
	field, uerr := strconv.Unquote(strings.TrimPrefix(msg, prefix))
	return field, uerr == nil
}

func isUnknownField(err error) bool { _, ok := unknownField(err); return ok }

// jsonKind names the JSON value a Go type is decoded from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

// limiter slows down repeated failures per key: each failure takes a token
// from every key's bucket, and a request waits while any bucket is empty.
// It is per replica (see README): a client spread over replicas gets each
// replica's allowance.
type limiter struct {
	mu      sync.Mutex
	every   time.Duration
	burst   int
	buckets map[string]*rate.Limiter
}

func newLimiter(every time.Duration, burst int) *limiter {
	return &limiter{every: every, burst: burst, buckets: map[string]*rate.Limiter{}}
}

// DefaultSignInRefill is how often a throttled address or account gets
// one more sign-in try (after a burst of 5).
const DefaultSignInRefill = 10 * time.Second

func (s *Server) signInLimiter() *limiter {
	s.signInOnce.Do(func() {
		if s.signIn == nil {
			every := s.SignInRefill
			if every <= 0 {
				every = DefaultSignInRefill
			}
			s.signIn = newLimiter(every, 5)
		}
	})
	return s.signIn
}

// wait returns the seconds until every key may try again (0: now).
func (l *limiter) wait(keys ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	longest := 0.0
	for _, k := range keys {
		if b, ok := l.buckets[k]; ok {
			if tokens := b.TokensAt(now); tokens < 1 {
				longest = max(longest, (1-tokens)*l.every.Seconds())
			}
		}
	}
	return int(math.Ceil(longest))
}

// fail takes a token from each key's bucket.
func (l *limiter) fail(keys ...string) { l.take(1, keys) }

// drain empties each key's bucket: its next try waits a whole interval.
func (l *limiter) drain(keys ...string) { l.take(l.burst, keys) }

func (l *limiter) take(n int, keys []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if len(l.buckets) > 100_000 {
		// Forget buckets that have refilled: they hold no state worth keeping.
		for k, b := range l.buckets {
			if b.TokensAt(now) >= float64(l.burst) {
				delete(l.buckets, k)
			}
		}
	}
	for _, k := range keys {
		b, ok := l.buckets[k]
		if !ok {
			b = rate.NewLimiter(rate.Every(l.every), l.burst)
			l.buckets[k] = b
		}
		b.ReserveN(now, min(n, int(b.TokensAt(now))))
	}
}
