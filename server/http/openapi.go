package http

import (
	_ "embed"
	"net/http"
)

// openAPI is the contract of every public API route, OpenAPI 3.1. Tests
// keep it true: TestOpenAPIDescribesEveryRoute walks the router's routes,
// and the API tests validate every request and answer they make against it
// (kin-openapi).
//
//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the document (for tests and tools).
func OpenAPI() []byte { return openAPI }

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request, _ *subject) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache")
	etag := contentETag(openAPI)
	h.Set("ETag", etag)
	if notModified(r, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Write(openAPI)
}
