//go:build !js

package fetch

import "net/http"

// DefaultClient sends the requests of HTTPOptions without a Client.
var DefaultClient Doer = http.DefaultClient
