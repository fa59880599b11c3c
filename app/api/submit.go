package api

import (
	"strconv"
	"time"

	"github.com/betaport/betaport/app/betaport"
)

// Paths of the submit flow. The upload URL itself is not under /api: the
// server hands it out, and it authorises the PUT by its signature.
const (
	PathSubmitUpload = "/api/submit/upload"
	PathSubmitSign   = "/api/submit/sign"
	// PathSubmitLimits announces the flow's limits before any upload (GET,
	// public), as SubmitLimits.
	PathSubmitLimits = "/api/submit/limits"
	// UploadPrefix starts the server's own signed upload URLs (file storage).
	UploadPrefix = "/uploads/"
	// ZipContentType is the only content type an upload PUT takes.
	ZipContentType = "application/zip"
)

// KeyFile is the file an admin downloads from an extension's settings page.
// Pipelines send only the Service object, never the wrapper.
type KeyFile struct {
	Service ServiceKey `json:"service"`
}

// ServiceKey authenticates calls 1 and 3 of the submit flow.
type ServiceKey struct {
	ExtensionID string `json:"extensionId"`
	// APIKey is the key's secret. An admin's browser leaves it out: their
	// session authorises the call instead.
	APIKey string `json:"apiKey,omitempty"`
}

// UploadURL answers call 1: where to PUT the zip, until when.
type UploadURL struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expiresAt"`
	UploadID  int64     `json:"uploadId"`
	// MaxSize is the largest zip the PUT takes, in bytes.
	MaxSize int64 `json:"maxSize"`
}

// Problem types of the submit flow.
const (
	ProblemInvalidKey     = "/problems/invalid-key"
	ProblemPlanRequired   = "/problems/plan-required"
	ProblemNoUpload       = "/problems/no-upload"
	ProblemZipNotReceived = "/problems/zip-not-received"
	ProblemUploadExpired  = "/problems/upload-expired"
	ProblemURLExpired     = "/problems/upload-url-expired"
	ProblemBadSignature   = "/problems/bad-signature"
	ProblemAlreadyDone    = "/problems/upload-closed"
	ProblemNotAZip        = "/problems/not-a-zip"
	ProblemInvalidZip     = "/problems/invalid-zip"
	// ProblemInvalidNotes: call 1's releaseNotes are too long or not text.
	ProblemInvalidNotes = "/problems/invalid-release-notes"
	// ProblemAlreadyCurrent: a rollback to the bundle testers already get.
	ProblemAlreadyCurrent = "/problems/already-current"
)

// Paths of bundles.
func BundlesPath(extensionID int64) string { return ExtensionPath(extensionID) + "/bundles" }

// RollbackPath makes bundle number current again (POST), as a new bundle.
func RollbackPath(extensionID, number int64) string {
	return BundlesPath(extensionID) + "/" + strconv.FormatInt(number, 10) + "/rollback"
}

// CurrentBundlePath is the record of the bundle testers get.
func CurrentBundlePath(extensionID int64) string { return BundlesPath(extensionID) + "/current" }

// SubmitLimits are what a client checks before it sends anything.
type SubmitLimits struct {
	// MaxSize is the largest zip a PUT takes, in bytes.
	MaxSize int64 `json:"maxSize"`
}

// Signed answers the sign call (POST /api/submit/sign): the bundle
// published, and what the person who submitted it should know but that
// did not stop it ("warnings"), such as a manifest name that changed.
type Signed struct {
	betaport.Bundle
	Warnings []string `json:"warnings,omitempty"`
}
