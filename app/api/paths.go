package api

import "strconv"

// Paths of the HTTP API. Functions build paths with parameters.
const (
	PathHealth     = "/healthz"
	PathReady      = "/readyz"
	PathExtensions = "/api/extensions"
)

// ExtensionPath is the API path of one extension.
func ExtensionPath(id int64) string {
	return PathExtensions + "/" + strconv.FormatInt(id, 10)
}
