package api

import (
	"errors"
	"fmt"

	"github.com/betaport/betaport/app/betaport"
)

// ProblemContentType is the media type of every error response (RFC 9457).
const ProblemContentType = "application/problem+json"

// Problem types. Programs switch on these; they are relative URI references
// as RFC 9457 allows, resolved against the service's base URL.
const (
	ProblemBadRequest          = "/problems/bad-request"
	ProblemNotFound            = "/problems/not-found"
	ProblemMethodNotAllowed    = "/problems/method-not-allowed"
	ProblemUnauthorized        = "/problems/unauthorized"
	ProblemForbidden           = "/problems/forbidden"
	ProblemConflict            = "/problems/conflict"
	ProblemTooLarge            = "/problems/too-large"
	ProblemUnsupportedMedia    = "/problems/unsupported-media-type"
	ProblemTooManyRequests     = "/problems/too-many-requests"
	ProblemUnavailable         = "/problems/unavailable"
	ProblemInternal            = "/problems/internal"
	ProblemRequestTimeout      = "/problems/request-timeout"
	ProblemRangeNotSatisfiable = "/problems/range-not-satisfiable"
	// ProblemInviteUsed: an invite link that signed a browser in already
	// (each works once); ProblemInviteExpired: one past its expiry. Both
	// 410: the tester asks their admin for a new link.
	ProblemInviteUsed    = "/problems/invite-used"
	ProblemInviteExpired = "/problems/invite-expired"
)

// Problem is an RFC 9457 problem details object.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`

	// Param names the request parameter or field at fault, when there is one.
	Param string `json:"param,omitempty"`
	// RetryAfter is the number of seconds to wait before trying again.
	RetryAfter int `json:"retryAfter,omitempty"`
	// Restore is the path that restores a revoked tester (POST), on a
	// refused invite of their e-mail.
	Restore string `json:"restore,omitempty"`
	// Scope names the scope an access token lacked (missing-scope).
	Scope string `json:"scope,omitempty"`
	// Problems lists everything wrong with a rejected zip.
	Problems []betaport.ZipProblem `json:"problems,omitempty"`
}

func (p *Problem) Error() string {
	if p.Detail != "" {
		return p.Detail
	}
	return fmt.Sprintf("%d %s", p.Status, p.Title)
}

// AsProblem returns the problem inside err, if there is one.
func AsProblem(err error) (*Problem, bool) {
	var p *Problem
	ok := errors.As(err, &p)
	return p, ok
}

// NewProblem returns a problem of the given status and type whose detail
// tells the person what to do.
func NewProblem(status int, typ, detail string) *Problem {
	return &Problem{Type: typ, Status: status, Detail: detail}
}
