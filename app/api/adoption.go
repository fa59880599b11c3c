package api

import (
	"net/url"
	"strconv"
)

// The adoption list: an extension's update checks per hour and reported
// version (GET …/adoption?days=D&cursor=C&limit=L), newest hour first.
const (
	AdoptionDefaultDays  = 7
	AdoptionMaxDays      = 90
	AdoptionDefaultLimit = 100
	AdoptionMaxLimit     = 500
)

// AdoptionPath is the API path of an extension's adoption counts.
func AdoptionPath(extensionID int64) string { return ExtensionPath(extensionID) + "/adoption" }

// InstallsPath counts an extension's testers by the build their copies run
// (betaport.Installs).
func InstallsPath(extensionID int64) string { return ExtensionPath(extensionID) + "/installs" }

// AdoptionPagePath is the path of one page of the counts of the last days
// days, after cursor ("" for the first page).
func AdoptionPagePath(extensionID int64, days, limit int, cursor string) string {
	q := url.Values{"days": {strconv.Itoa(days)}, "limit": {strconv.Itoa(limit)}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	return AdoptionPath(extensionID) + "?" + q.Encode()
}
