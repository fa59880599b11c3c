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
