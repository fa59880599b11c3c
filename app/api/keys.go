package api

import (
	"strconv"

	"github.com/betaport/betaport/app/betaport"
)

// KeysPath lists an extension's named keys (GET) and adds one (POST a
// NewKey; the answer, a CreatedKey, is the only time its secret is shown).
func KeysPath(extensionID int64) string { return ExtensionPath(extensionID) + "/keys" }

// KeyPath revokes one key (DELETE); the others keep working.
func KeyPath(extensionID, keyID int64) string {
	return KeysPath(extensionID) + "/" + strconv.FormatInt(keyID, 10)
}

// NewKey is the body of POST /api/extensions/{id}/keys.
type NewKey struct {
	// Label says where the key is used: "GitHub Actions", "release laptop".
	Label string `json:"label"`
	// Channel, when set, binds the key to one channel: it publishes there
	// only.
	Channel string `json:"channel,omitempty"`
}

// CreatedKey answers a new key: its record and the key file that holds its
// secret, shown this once (only a hash is kept).
type CreatedKey struct {
	Key     betaport.Key `json:"key"`
	KeyFile KeyFile      `json:"keyFile"`
}

// AuditPath is an extension's audit trail, newest first, cursor-paged: who
// made and revoked keys, invited, revoked and restored testers.
func AuditPath(extensionID int64) string { return ExtensionPath(extensionID) + "/audit" }

// TesterRestorePath restores a revoked tester (POST): the same record,
// invited again with a new link (answers Invited).
func TesterRestorePath(extensionID, testerID int64) string {
	return TesterPath(extensionID, testerID) + "/restore"
}

// TesterInvitePath gives a tester a new invite link (POST; answers
// Invited); the old link stops working.
func TesterInvitePath(extensionID, testerID int64) string {
	return TesterPath(extensionID, testerID) + "/invite"
}

// Problem types of keys and testers.
const (
	// ProblemTesterRevoked answers an invite of an e-mail whose tester was
	// revoked: Restore names the path that brings them back.
	ProblemTesterRevoked = "/problems/tester-revoked"
	// ProblemAccessEnded answers a tester whose access was revoked: the
	// detail says whom to ask.
	ProblemAccessEnded = "/problems/access-ended"
)
