package betaport

import (
	"errors"
	"fmt"
)

// Error codes, mapped to HTTP statuses by the http package and to exit codes
// by the command line. Keep the list short: a code is a kind of failure a
// caller handles differently, not a message.
const (
	EINVALID      = "invalid"
	ENOTFOUND     = "not_found"
	ECONFLICT     = "conflict"
	EUNAUTHORIZED = "unauthorized"
	EFORBIDDEN    = "forbidden"
	EINTERNAL     = "internal"
)

// Error is a domain error whose message is safe to show to the person who
// caused it. Anything else is an internal error, logged and never shown.
type Error struct {
	Code    string
	Message string
	// Param names the field or parameter at fault, when there is one.
	Param string
}

func (e *Error) Error() string { return fmt.Sprintf("betaport: %s: %s", e.Code, e.Message) }

// Errorf returns an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
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
