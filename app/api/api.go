// Package api is Betaport's wire contract: the JSON types, the paths and the
// problem types shared by the server, the browser app and the command line.
//
// It imports nothing heavy on purpose: the browser app links it into the wasm
// binary, where every dependency costs download time.
package api

import "time"

// Plans a team can be on. Only Professional teams may submit bundles.
const (
	PlanProfessional = "professional"
	PlanStarter      = "starter"
)

// Team is a customer account; its admins manage all of its extensions.
type Team struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Plan      string    `json:"plan"`
	Seats     int       `json:"seats"`
	CreatedAt time.Time `json:"createdAt"`
}

// Extension is one browser extension whose bundles Betaport builds and serves.
type Extension struct {
	ID        int64     `json:"id"`
	TeamID    int64     `json:"teamId"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
	// CurrentBundle is the number of the bundle testers get; 0 before the
	// first publish.
	CurrentBundle int64 `json:"currentBundle,omitempty"`
	// ChromeID is the ID Chromium gives the extension's CRX packages
	// (32 letters a–p, from the public half of its signing key); empty
	// until the key is made, at the first sign or settings visit.
	ChromeID string `json:"chromeId,omitempty"`
}

// Bundle is one published, immutable build of an extension.
type Bundle struct {
	ID          int64  `json:"id"`
	ExtensionID int64  `json:"extensionId"`
	Number      int64  `json:"number"`
	Name        string `json:"name"`
	// Version is the manifest version browsers are served: always higher
	// than every earlier bundle's, so installed copies update.
	Version string `json:"version"`
	// VersionName is the version the upload's manifest gave, when Version
	// had to be derived from it. It is then the CRX's version_name, unless
	// the manifest gave a version_name of its own, which is kept.
	VersionName     string    `json:"versionName,omitempty"`
	ManifestVersion int       `json:"manifestVersion"`
	Size            int64     `json:"size"`
	SHA256          string    `json:"sha256"`
	FileCount       int       `json:"fileCount"`
	Source          string    `json:"source"`
	CreatedAt       time.Time `json:"createdAt"`
	Current         bool      `json:"current,omitempty"`
}

// Tester statuses.
const (
	TesterInvited = "invited"
	TesterActive  = "active"
	TesterRevoked = "revoked"
)

// Tester is a person invited to test one extension.
type Tester struct {
	ID          int64      `json:"id"`
	ExtensionID int64      `json:"extensionId"`
	Email       string     `json:"email"`
	Name        string     `json:"name"`
	Status      string     `json:"status"`
	CreatedAt   time.Time  `json:"createdAt"`
	LastSeenAt  *time.Time `json:"lastSeenAt,omitempty"`
}

// Health is the body of /healthz and /readyz.
type Health struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks,omitempty"`
}

// User is an admin: a person who manages every extension of one team.
type User struct {
	ID        int64     `json:"id"`
	TeamID    int64     `json:"teamId"`
	Email     string    `json:"email"`
	CreatedAt time.Time `json:"createdAt"`
}

// Session kinds.
const (
	KindAdmin  = "admin"
	KindTester = "tester"
)

// Session says who is signed in (GET /api/session).
type Session struct {
	Kind   string  `json:"kind"` // admin or tester
	User   *User   `json:"user,omitempty"`
	Team   *Team   `json:"team,omitempty"`
	Tester *Tester `json:"tester,omitempty"`
}

// SignIn is the body of POST /api/session.
type SignIn struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// Invite is the body of POST /api/extensions/{id}/testers.
type Invite struct {
	Email string `json:"email"`
	Name  string `json:"name"`
}

// Invited answers an invite: the tester and their personal link, shown once.
type Invited struct {
	Tester
	InviteURL string `json:"inviteUrl"`
}

// Page is one page of a cursor-based list; NextCursor is empty on the last.
type Page[T any] struct {
	Data       []T    `json:"data"`
	NextCursor string `json:"nextCursor,omitempty"`
}
