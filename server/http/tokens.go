package http

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
)

// Access tokens: a script's credential for one extension's admin API,
// sent as "Authorization: Bearer bpt_…". A token is the whole credential
// of its request: it is refused beside a session cookie, and from a page in
// a browser (which names itself with Origin or Sec-Fetch-Site), so that a
// token pasted into a page never acts with the page's session and a
// session never stands in for a token.

// authenticateToken reads the bearer token of r. Its errors are problems
// that say what to do; the caller answers them.
func (s *Server) authenticateToken(r *http.Request, header string) (*subject, error) {
	// The scheme is case-insensitive (RFC 9110) and any blanks part it
	// from the token; a second header would leave which one counts to the
	// reader.
	parts := strings.Fields(header)
	switch {
	case len(r.Header.Values("Authorization")) > 1:
		return nil, problem(http.StatusUnauthorized, api.ProblemInvalidToken,
			"This request carries more than one Authorization header. Send one: Authorization: Bearer <token>.")
	case len(parts) != 2 || !strings.EqualFold(parts[0], "Bearer"):
		return nil, problem(http.StatusUnauthorized, api.ProblemInvalidToken,
			`Send an access token as "Authorization: Bearer <token>"; Betaport takes no other kind of Authorization.`)
	case r.Header.Get("Cookie") != "":
		return nil, problem(http.StatusBadRequest, api.ProblemBadRequest,
			"This request carries an access token and cookies. A token is the whole credential of a script's request: send it without cookies.")
	case r.Header.Get("Origin") != "" || r.Header.Get("Sec-Fetch-Site") != "":
		return nil, problem(http.StatusForbidden, api.ProblemForbidden,
			"Access tokens are for scripts, not for pages in a browser. In a browser, sign in instead.")
	}
	ctx := r.Context()
	tok, err := s.Store.FindAccessTokenByHash(ctx, credential.HashToken(parts[1]))
	if betaport.ErrorCode(err) == betaport.ENOTFOUND {
		return nil, problem(http.StatusUnauthorized, api.ProblemInvalidToken,
			"This access token is not known: it was revoked, or it is mistyped. An admin can make a new one on the extension's settings page.")
	} else if err != nil {
		return nil, err
	}
	now := betaport.Now()
	if tok.Expired(now) {
		return nil, problem(http.StatusUnauthorized, api.ProblemTokenExpired,
			fmt.Sprintf("The access token %q expired on %s. An admin can make a new one on the extension's settings page.",
				tok.Name, tok.ExpiresAt.UTC().Format("2 January 2006, 15:04 UTC")))
	}
	// The record read says when it was last used: a busy script's calls
	// (and a stream's checks) within the second write nothing, and do not
	// go to the store to find that out.
	if tok.LastUsedAt == nil || now.Sub(*tok.LastUsedAt) >= time.Second {
		if err := s.Store.AccessTokenUsed(ctx, tok.ID, now); err != nil {
			s.Logger.WarnContext(ctx, "recording a token's use", "err", err)
		}
	}
	return &subject{token: tok}, nil
}

// tokenAllowed answers whether who, when a token, may call a route that
// needs scope, and writes the refusal when not. People pass.
func tokenAllowed(w http.ResponseWriter, who *subject, scope string) bool {
	switch {
	case who.token == nil:
		return true
	case scope == ScopeAnyToken:
		return true
	case scope == "":
		writeProblem(w, problem(http.StatusForbidden, api.ProblemForbidden,
			"Access tokens work on an extension's admin API; this address is for people signed in (or for a submit key)."))
		return false
	case !who.token.Allows(scope):
		p := problem(http.StatusForbidden, api.ProblemMissingScope, fmt.Sprintf(
			"The access token %q lacks the %q scope, which this call needs (it has %s). Make a token with it on the extension's settings page.",
			who.token.Name, scope, strings.Join(who.token.Scopes, ", ")))
		p.Scope = scope
		writeProblem(w, p)
		return false
	}
	return true
}

// handleCreateToken makes an access token and answers it with its secret,
// the only time it is shown.
func (s *Server) handleCreateToken(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	var in api.NewToken
	if !s.readJSON(w, r, &in) {
		return
	}
	tok := &betaport.AccessToken{ExtensionID: ext.ID, Name: in.Name, Scopes: in.Scopes, CreatedBy: who.actor()}
	if in.ExpiresAt != "" {
		at, err := time.Parse(time.RFC3339, in.ExpiresAt)
		if err != nil {
			s.Error(w, r, &betaport.Error{Code: betaport.EINVALID, Param: "expiresAt", Message: fmt.Sprintf(
				"expiresAt is a time in RFC 3339, like %s; not %q.", betaport.Now().AddDate(0, 3, 0).Format("2006-01-02T15:04:05Z"), in.ExpiresAt)})
			return
		}
		tok.ExpiresAt = &at
	}
	secret := credential.NewAccessToken()
	if err := s.Store.CreateAccessToken(r.Context(), tok, credential.HashToken(secret)); err != nil {
		s.Error(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Location", api.TokenPath(ext.ID, tok.ID))
	writeJSON(w, r, http.StatusCreated, api.CreatedToken{Token: *tok, Secret: secret})
}

// handleListTokens answers an extension's tokens, revoked ones too, newest
// first, cursor-paged.
func (s *Server) handleListTokens(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	list := "tokens/" + strconv.FormatInt(ext.ID, 10)
	before, limit, ok := s.pageParams(w, r.URL.Query(), list)
	if !ok {
		return
	}
	tokens, err := s.Store.FindAccessTokens(r.Context(), ext.ID, before, limit+1)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSONPage(w, r, cursorPage(s, list, tokens, limit, func(t *betaport.AccessToken) int64 { return t.ID }))
}

// handleRevokeToken revokes a token at once: its next call is refused.
// Revoking twice is fine.
func (s *Server) handleRevokeToken(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	id, ok := pathID(w, r, "tokenId")
	if !ok {
		return
	}
	tok, err := s.Store.RevokeAccessToken(r.Context(), ext.ID, id, who.actor())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, tok)
}

// handleGetToken answers the calling token's own record.
func (s *Server) handleGetToken(w http.ResponseWriter, r *http.Request, who *subject) {
	if who.token == nil {
		writeProblem(w, problem(http.StatusForbidden, api.ProblemForbidden,
			"This address answers an access token about itself: send one as Authorization: Bearer <token>."))
		return
	}
	writeJSON(w, r, http.StatusOK, who.token)
}

// refusesTokens answers a session route (sign-in, sign-out, an invite
// link) called with an access token: those are a browser's, and a token
// never stands for a session.
func refusesTokens(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Authorization") == "" {
		return false
	}
	writeProblem(w, problem(http.StatusForbidden, api.ProblemForbidden,
		"Sessions are for people in a browser: send this request without an Authorization header. Scripts use their access token on the admin API alone."))
	return true
}

// stillTheSame reports whether now, who a request is as read again (by a
// long-lived event stream), is still the subject it started as.
func (who *subject) stillTheSame(now *subject) bool {
	switch {
	case now == nil:
		return false
	case who.token != nil:
		return now.token != nil && now.token.ID == who.token.ID
	case who.user != nil:
		return now.user != nil && now.user.ID == who.user.ID
	default:
		return now.tester != nil && who.tester != nil && now.tester.ID == who.tester.ID
	}
}

// handleTesterByEmail answers the extension's tester with ?email=, or 404.
func (s *Server) handleTesterByEmail(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	email := strings.TrimSpace(r.URL.Query().Get("email"))
	if email == "" {
		badParam(w, "email", "Give the tester's e-mail address: ?email=ann@example.com.")
		return
	}
	t, err := s.Store.FindTesterByEmail(r.Context(), ext.ID, email)
	if betaport.ErrorCode(err) == betaport.ENOTFOUND {
		s.Error(w, r, betaport.Errorf(betaport.ENOTFOUND, "The extension has no tester %s.", email))
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, t)
}
