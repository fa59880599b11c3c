package betaport

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// An access token lets a script call an extension's admin API with
// "Authorization: Bearer …", limited to its scopes: what a pipeline's key
// is to the submit flow, a token is to everything else an admin does.
// Tokens belong to one extension, as keys do; only a hash of the secret is
// kept.
type AccessToken struct {
	ID          int64      `json:"id"`
	ExtensionID int64      `json:"extensionId"`
	Name        string     `json:"name"`
	Scopes      []string   `json:"scopes"`
	CreatedAt   time.Time  `json:"createdAt"`
	CreatedBy   string     `json:"createdBy"`
	ExpiresAt   *time.Time `json:"expiresAt,omitempty"`
	LastUsedAt  *time.Time `json:"lastUsedAt,omitempty"`
	RevokedAt   *time.Time `json:"revokedAt,omitempty"`
}

// Scopes: what a token may do. Every admin API route names the one it
// needs (the access table); a route that names none refuses tokens.
const (
	// ScopeRead reads: bundles, testers, channels, adoption, keys,
	// webhooks, feedback, the audit trail, downloads.
	ScopeRead = "read"
	// ScopeTesters invites, revokes and restores testers, sends new
	// links and moves testers between channels.
	ScopeTesters = "testers"
	// ScopeReleases rolls back, promotes, makes channels and runs
	// rollouts.
	ScopeReleases = "releases"
	// ScopeFeedback moves testers' reports between statuses and deletes
	// them.
	ScopeFeedback = "feedback"
	// ScopeSettings makes and revokes submit keys and webhooks and rotates
	// the shared update URL.
	ScopeSettings = "settings"
)

// AllScopes lists every scope, in the order pages and help show them.
var AllScopes = []string{ScopeRead, ScopeTesters, ScopeReleases, ScopeFeedback, ScopeSettings}

// MaxTokenName is the longest name a token takes, in characters.
const MaxTokenName = 100

// MaxTokenLifetime is the longest a token may be made to last; a token
// with no expiry lasts until it is revoked.
const MaxTokenLifetime = 366 * 24 * time.Hour

// TokenPrefix starts every token's secret, so that secret scanners (and
// people) can tell one in a log or a commit.
const TokenPrefix = "bpt_"

// Validate reports what is wrong with a token about to be saved.
func (t *AccessToken) Validate() error {
	switch name := strings.TrimSpace(t.Name); {
	case name == "":
		return &Error{Code: EINVALID, Param: "name", Message: `Name the token after the script that uses it, like "nightly release".`}
	case utf8.RuneCountInString(name) > MaxTokenName:
		return &Error{Code: EINVALID, Param: "name", Message: fmt.Sprintf("A token's name is at most %d characters.", MaxTokenName)}
	case strings.ContainsFunc(name, unicode.IsControl) || !utf8.ValidString(name):
		return &Error{Code: EINVALID, Param: "name", Message: "A token's name is one line of text, without control characters."}
	case strings.TrimSpace(t.CreatedBy) == "":
		return &Error{Code: EINVALID, Param: "createdBy", Message: "A token records who made it."}
	}
	if err := ValidateScopes(t.Scopes); err != nil {
		return err
	}
	if t.ExpiresAt != nil && !t.ExpiresAt.After(t.CreatedAt) {
		return &Error{Code: EINVALID, Param: "expiresAt", Message: "A token's expiry is after the moment it is made."}
	}
	if t.ExpiresAt != nil && t.ExpiresAt.Sub(t.CreatedAt) > MaxTokenLifetime+time.Minute {
		return &Error{Code: EINVALID, Param: "expiresAt", Message: "A token lasts at most a year (366 days), or until it is revoked when it has no expiry."}
	}
	return nil
}

// ValidateScopes refuses an empty list, an unknown scope or one given
// twice.
func ValidateScopes(scopes []string) error {
	if len(scopes) == 0 {
		return &Error{Code: EINVALID, Param: "scopes", Message: "Give the token at least one scope: " + strings.Join(AllScopes, ", ") + "."}
	}
	for i, s := range scopes {
		if !slices.Contains(AllScopes, s) {
			return &Error{Code: EINVALID, Param: "scopes", Message: fmt.Sprintf("There is no scope %q; the scopes are %s.", s, strings.Join(AllScopes, ", "))}
		}
		if slices.Contains(scopes[:i], s) {
			return &Error{Code: EINVALID, Param: "scopes", Message: fmt.Sprintf("The scope %q is given twice.", s)}
		}
	}
	return nil
}

// Allows reports whether the token has scope.
func (t *AccessToken) Allows(scope string) bool { return slices.Contains(t.Scopes, scope) }

// Expired reports whether the token's expiry has passed at now.
func (t *AccessToken) Expired(now time.Time) bool {
	return t.ExpiresAt != nil && !now.Before(*t.ExpiresAt)
}

// Actor is how the audit trail names a change made with the token: its
// name and who made it, so that the person to ask is known.
func (t *AccessToken) Actor() string {
	return fmt.Sprintf("token %q of %s", t.Name, t.CreatedBy)
}

// Audit actions of tokens.
const (
	AuditTokenCreated = "token.created"
	AuditTokenRevoked = "token.revoked"
)

// TokenStore keeps extensions' access tokens, as hashes of their secrets.
type TokenStore interface {
	// CreateAccessToken adds t, whose secret hashes to hash, and records
	// it in the audit trail (by t.CreatedBy).
	CreateAccessToken(ctx context.Context, t *AccessToken, hash string) error
	// FindAccessTokens returns up to limit of an extension's tokens,
	// revoked ones too, newest first, keyset-paged by id.
	FindAccessTokens(ctx context.Context, extensionID, beforeID int64, limit int) ([]*AccessToken, error)
	// FindAccessTokenByHash returns the token whose secret hashes to hash,
	// expired or not, unless it was revoked (ENOTFOUND).
	FindAccessTokenByHash(ctx context.Context, hash string) (*AccessToken, error)
	// RevokeAccessToken revokes one of an extension's tokens and records
	// actor in the audit trail, once: a second revoke answers it as it is.
	RevokeAccessToken(ctx context.Context, extensionID, tokenID int64, actor string) (*AccessToken, error)
	// AccessTokenUsed records that a token authorised a call at at.
	AccessTokenUsed(ctx context.Context, tokenID int64, at time.Time) error
}
