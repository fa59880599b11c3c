package api

import (
	"strconv"

	"github.com/betaport/betaport/app/betaport"
)

// Paths of the HTTP API. Functions build paths with parameters.
const (
	PathHealth     = "/healthz"
	PathReady      = "/readyz"
	PathExtensions = "/api/extensions"
	PathBuilds     = "/api/builds"
)

// ExtensionPath is the API path of one extension.
func ExtensionPath(id int64) string {
	return PathExtensions + "/" + strconv.FormatInt(id, 10)
}

// Paths of sessions and testers.
const (
	PathSession = "/api/session"
	// InvitePrefix starts a tester's personal sign-in link: /t/{token}.
	InvitePrefix = "/t/"
	// SessionCookie is the name of the session cookie.
	SessionCookie = "betaport_session"
)

// TestersPath is the API path of an extension's testers.
func TestersPath(extensionID int64) string {
	return ExtensionPath(extensionID) + "/testers"
}

// TesterPath is the API path of one tester.
func TesterPath(extensionID, testerID int64) string {
	return TestersPath(extensionID) + "/" + strconv.FormatInt(testerID, 10)
}

// EventsPath is an extension's event stream (server-sent events): each
// "bundles" event carries a Revision, the current one first.
func EventsPath(extensionID int64) string { return ExtensionPath(extensionID) + "/events" }

// Revision says what an extension's bundles and testers are at
// (betaport.Revision).
type Revision = betaport.Revision

// ParseNumber reads a whole number as the API writes it in paths and
// queries: decimal digits, "0" or without a leading zero, no sign, no
// spaces, at most the largest int64. Every number has that one spelling:
// "+7", "07", " 7" and "" are not 7 (issue 29: DELETE …/testers/03 revoked
// tester 3), and they are refused rather than read.
func ParseNumber(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= 0 && strconv.FormatInt(n, 10) == s
}

// ParseID reads an id or a bundle number in a path, a query or a body: a
// ParseNumber from 1. Any other text names no resource.
func ParseID(s string) (int64, bool) {
	n, ok := ParseNumber(s)
	return n, ok && n > 0
}

// FeedbackPath is the API path of an extension's reports from testers.
func FeedbackPath(extensionID int64) string { return ExtensionPath(extensionID) + "/feedback" }

// FeedbackReportPath is the API path of one report.
func FeedbackReportPath(extensionID, id int64) string {
	return FeedbackPath(extensionID) + "/" + strconv.FormatInt(id, 10)
}

// FeedbackScreenshotPath is the API path of screenshot n of a report.
func FeedbackScreenshotPath(extensionID, id int64, n int) string {
	return FeedbackReportPath(extensionID, id) + "/screenshots/" + strconv.Itoa(n)
}

// FeedbackPagePath is a report opened on the admins' feedback page.
func FeedbackPagePath(extensionID, id int64) string {
	return "/extensions/" + strconv.FormatInt(extensionID, 10) + "/feedback/" + strconv.FormatInt(id, 10)
}
