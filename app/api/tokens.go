package api

import (
	"strconv"

	"github.com/betaport/betaport/app/betaport"
)

// TokensPath lists an extension's access tokens (GET) and makes one (POST
// a NewToken; the answer, a CreatedToken, is the only time its secret is
// shown). Only a signed-in admin's session may: a token never makes or
// revokes tokens.
func TokensPath(extensionID int64) string { return ExtensionPath(extensionID) + "/tokens" }

// TokenPath revokes one token (DELETE).
func TokenPath(extensionID, tokenID int64) string {
	return TokensPath(extensionID) + "/" + strconv.FormatInt(tokenID, 10)
}

// NewToken is the body of POST /api/extensions/{id}/tokens.
type NewToken struct {
	// Name says which script uses it: "nightly release".
	Name string `json:"name"`
	// Scopes are what it may do: read, testers, releases, feedback,
	// settings.
	Scopes []string `json:"scopes"`
	// ExpiresAt, when set, ends it: a time in RFC 3339, like
	// 2027-01-31T00:00:00Z, at most a year ahead. Without it, the token
	// lasts until it is revoked.
	ExpiresAt string `json:"expiresAt,omitempty"`
}

// CreatedToken answers a new token: its record and its secret, shown this
// once (only a hash is kept). Send it as "Authorization: Bearer <token>".
type CreatedToken struct {
	Token  betaport.AccessToken `json:"token"`
	Secret string               `json:"secret"`
}

// PathToken answers the calling access token's own record (GET): which
// extension it is for, its scopes and expiry. Any token may ask; people
// have no token to ask about.
const PathToken = "/api/token"

// TesterByEmailPath finds one of an extension's testers by e-mail (GET,
// ?email=): what a script acting on a tester it knows by address needs.
func TesterByEmailPath(extensionID int64) string { return ExtensionPath(extensionID) + "/tester" }

// Problem types of access tokens.
const (
	// ProblemInvalidToken answers a bearer token that is not one: unknown,
	// revoked or mistyped.
	ProblemInvalidToken = "/problems/invalid-token"
	// ProblemTokenExpired answers a token past its expiry.
	ProblemTokenExpired = "/problems/token-expired"
	// ProblemMissingScope answers a token without the scope a route needs;
	// the problem's scope field names it.
	ProblemMissingScope = "/problems/missing-scope"
)
