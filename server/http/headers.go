package http

import (
	"fmt"
	"net/http"
)

// contentSecurityPolicy allows what the go-app page needs and nothing more:
// our own scripts, styles, images, worker and API; compiling wasm
// ('wasm-unsafe-eval', not 'unsafe-eval'); no framing, no plugins, no
// inline scripts. blob: images are the report form's previews of the
// screenshots a tester attaches (object URLs the page itself makes of
// their files).
const contentSecurityPolicy = "default-src 'self'; " +
	"script-src 'self' 'wasm-unsafe-eval'; " +
	"style-src 'self'; " +
	"img-src 'self' data: blob:; " +
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
	csp := contentSecurityPolicyFor(uploadOrigin)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header(), csp)
		next.ServeHTTP(w, r)
	})
}

// contentSecurityPolicyFor is the policy of a service whose browser PUTs
// zips to uploadOrigin (none: to the service).
func contentSecurityPolicyFor(uploadOrigin string) string {
	extra := ""
	if uploadOrigin != "" {
		extra = " " + uploadOrigin
	}
	return fmt.Sprintf(contentSecurityPolicy, extra)
}

// setSecurityHeaders sets the headers every response carries, with csp
// its Content-Security-Policy.
func setSecurityHeaders(h http.Header, csp string) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
}
