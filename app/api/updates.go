package api

import (
	"strconv"
	"time"
)

// CRXContentType is the media type of a CRX package; Chromium offers to
// install a download served with it.
const CRXContentType = "application/x-chrome-extension"

// Updates is what an admin sees of an extension's self-hosted updates.
type Updates struct {
	// ChromeID is the extension's ID in Chromium (see Extension.ChromeID).
	ChromeID string `json:"chromeId"`
	// UpdateURL is the update_url every CRX of the extension carries. It
	// holds the extension's secret update token: whoever has it can fetch
	// the current build.
	UpdateURL string `json:"updateUrl"`
	// RotatedAt is when the token was last replaced (nil: never).
	RotatedAt *time.Time `json:"rotatedAt,omitempty"`
}

// UpdatesPath answers an extension's Updates (GET).
func UpdatesPath(extensionID int64) string { return ExtensionPath(extensionID) + "/updates" }

// UpdateTokenPath rotates an extension's update token (POST) and answers
// the new Updates.
func UpdateTokenPath(extensionID int64) string { return UpdatesPath(extensionID) + "/token" }

// BundleDownloadPath downloads one bundle's zip (load unpacked).
func BundleDownloadPath(extensionID, number int64) string {
	return BundlesPath(extensionID) + "/" + strconv.FormatInt(number, 10) + "/download"
}

// BundleCRXPath downloads one bundle's signed CRX (install).
func BundleCRXPath(extensionID, number int64) string {
	return BundlesPath(extensionID) + "/" + strconv.FormatInt(number, 10) + "/crx"
}

// UpdatePrefix starts the URLs browsers fetch updates from, without
// cookies: /update/{id}/{token} answers the update check and
// /update/{id}/{token}/crx/{number} serves a CRX.
const UpdatePrefix = "/update/"
