package http

import "net/http"

// submitLimits answers GET /api/submit/limits: what a client checks before
// it sends anything. Call 1 announces the same maxSize with each upload
// URL; this lets the browser refuse a zip that is too large before any
// request of the submit flow.
type submitLimits struct {
	MaxSize int64 `json:"maxSize"` // the largest zip a PUT takes, in bytes
}

// handleSubmitLimits is public: the limit is no secret, and pipelines may
// check it too.
func (s *Server) handleSubmitLimits(w http.ResponseWriter, r *http.Request, _ *subject) {
	writeJSON(w, r, http.StatusOK, submitLimits{MaxSize: s.Submit.withDefaults().MaxUploadSize})
}
