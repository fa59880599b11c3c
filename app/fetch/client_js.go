//go:build js

package fetch

// DefaultClient sends the requests of HTTPOptions without a Client. Under
// GOOS=js there is none: net/http's client links its whole Transport (TLS,
// HTTP/2, about a third of a browser app's wasm) for a fallback a browser
// never takes, so a browser app passes a Doer over the page's fetch (and
// the tests under Node set http.DefaultClient).
var DefaultClient Doer
