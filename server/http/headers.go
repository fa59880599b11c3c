package http

import (
	"fmt"
	"net/http"
)

// contentSecurityPolicy allows what the go-app page needs and nothing more:
// our own scripts, styles, images, worker and API; compiling wasm
// ('wasm-unsafe-eval', not 'unsafe-eval'); no framing, no plugins, no
// inline scripts.
const contentSecurityPolicy = "default-src 'self'; " +
	"script-src 'self' 'wasm-unsafe-eval'; " +
	"style-src 'self'; " +
	"img-src 'self' data:; " +
	"connect-src 'self'%s; " +
	"worker-src 'self'; " +
	"manifest-src 'self'; " +
	"object-src 'none'; " +
	"base-uri 'self'; " +
	"form-action 'self'; " +
	"frame-ancestors 'none'"

// securityHeaders sets the headers every response carries. uploadOrigin,
// when not empty, is where the browser PUTs zips (S3 storage's own
// presigned URLs): the one other origin the page may connect to.
func securityHeaders(uploadOrigin string, next http.Handler) http.Handler {
	extra := ""
	if uploadOrigin != "" {
		extra = " " + uploadOrigin
	}
	csp := fmt.Sprintf(contentSecurityPolicy, extra)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}
