package betaport

import (
	"errors"
	"fmt"
	"time"
)

// Error codes, mapped to HTTP statuses by the http package and to exit codes
// by the command line. Keep the list short: a code is a kind of failure a
// caller handles differently, not a message.
//
// A failure that programs tell apart within its kind (a revoked key, an
// expired upload, a rejected zip) keeps the kind's code and says which one
// it is with a Reason. The http package maps a reason to its own problem
// type and, where the answer needs one, its own status: the statuses with no
// code of their own (410, 413, 415, 422) are reasons, not codes. Only a kind
// no code describes gets a code: ERATELIMITED (429), which is neither
// invalid nor forbidden nor a conflict, and which every caller handles the
// same way: wait RetryAfter, then try again.
const (
	EINVALID      = "invalid"
	ENOTFOUND     = "not_found"
	ECONFLICT     = "conflict"
	EUNAUTHORIZED = "unauthorized"
	EFORBIDDEN    = "forbidden"
	ERATELIMITED  = "rate_limited"
	EINTERNAL     = "internal"
)

// Reasons: the specific failures of the submit flow and of publishing that
// a program reading the answer tells apart. Each goes with one code, named
// beside it.
const (
	// ReasonInvalidKey (EUNAUTHORIZED): the extension id and API key match
	// no current key.
	ReasonInvalidKey = "invalid_key"
	// ReasonPlanRequired (EFORBIDDEN): the team is not on the Professional
	// plan.
	ReasonPlanRequired = "plan_required"
	// ReasonBadSignature (EFORBIDDEN): not an upload URL Betaport gave out,
	// or one changed since.
	ReasonBadSignature = "bad_signature"
	// ReasonUploadURLExpired (EFORBIDDEN): the upload URL has expired.
	ReasonUploadURLExpired = "upload_url_expired"
	// ReasonInvalidReleaseNotes (EINVALID): release notes too long or not
	// plain text.
	ReasonInvalidReleaseNotes = "invalid_release_notes"
	// ReasonTooLarge (EINVALID): the zip is over the size limit.
	ReasonTooLarge = "too_large"
	// ReasonUnsupportedMediaType (EINVALID): the zip was not sent as
	// application/zip.
	ReasonUnsupportedMediaType = "unsupported_media_type"
	// ReasonNotAZip (EINVALID): the body is not a zip; Problems says so too.
	ReasonNotAZip = "not_a_zip"
	// ReasonInvalidZip (EINVALID): the zip was rejected; Problems lists
	// everything wrong with it.
	ReasonInvalidZip = "invalid_zip"
	// ReasonNoUpload (ECONFLICT): sign before any upload URL was requested.
	ReasonNoUpload = "no_upload"
	// ReasonZipNotReceived (ECONFLICT): sign before the zip arrived.
	ReasonZipNotReceived = "zip_not_received"
	// ReasonUploadExpired (ECONFLICT): the upload URL expired before its zip
	// arrived; the flow starts over with a new one.
	ReasonUploadExpired = "upload_expired"
	// ReasonUploadClosed (ECONFLICT): the upload takes no more bytes.
	ReasonUploadClosed = "upload_closed"
	// ReasonAlreadyCurrent (ECONFLICT): a rollback to the bundle testers
	// already get.
	ReasonAlreadyCurrent = "already_current"
	// ReasonInviteUsed (ECONFLICT): an invite link that already signed a
	// browser in; each link works once.
	ReasonInviteUsed = "invite_used"
	// ReasonInviteExpired (ECONFLICT): an invite link past its expiry.
	ReasonInviteExpired = "invite_expired"
	// ReasonNotNewer (ECONFLICT): a bundle put on a channel that already
	// serves a newer one (browsers never go back a version).
	ReasonNotNewer = "not_newer"
	// ReasonNoRollout (ECONFLICT): a rollout change on a channel with no
	// rollout in progress.
	ReasonNoRollout = "no_rollout"
	// ReasonRolloutHalted (ECONFLICT): advancing a halted rollout.
	ReasonRolloutHalted = "rollout_halted"
	// ReasonRolloutLower (ECONFLICT): advancing a rollout to a lower
	// percentage (a rollout only grows).
	ReasonRolloutLower = "rollout_lower"
)

// Error is a domain error whose message is safe to show to the person who
// caused it. Anything else is an internal error, logged and never shown.
type Error struct {
	Code    string
	Message string
	// Param names the field or parameter at fault, when there is one.
	Param string
	// Reason names the specific failure within Code, when programs tell
	// it apart (one of the Reason constants); "" for the code alone.
	Reason string
	// Problems lists everything wrong with a rejected zip.
	Problems []ZipProblem
	// RetryAfter is how long to wait before trying again (ERATELIMITED).
	RetryAfter time.Duration
}

func (e *Error) Error() string { return fmt.Sprintf("betaport: %s: %s", e.Code, e.Message) }

// Errorf returns an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Reasonf returns an *Error of a specific reason with a formatted message.
func Reasonf(code, reason, format string, args ...any) *Error {
	return &Error{Code: code, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err: an *Error's code, EINTERNAL for any
// other error, and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Code
	default:
		return EINTERNAL
	}
}

// ErrorMessage returns the human message of err, hiding internal details.
func ErrorMessage(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Message
	default:
		return "Something went wrong on our side. Try again in a moment; if it keeps happening, tell us the time it happened."
	}
}
