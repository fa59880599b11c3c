package http

import (
	"net/http"
	"time"
)

// Internals the fuzz targets of http_test drive directly.

func (s *Server) EncodeCursor(list string, id int64) string { return s.encodeCursor(list, id) }
func (s *Server) DecodeCursor(list, cursor string) (int64, bool) {
	return s.decodeCursor(list, cursor)
}
func (s *Server) UploadURL(id int64, expires time.Time) string { return s.uploadURL(id, expires) }
func (s *Server) UploadURLAccepted(r *http.Request, id int64) bool {
	return s.checkUploadURL(r, id) == nil
}

var EscapeAttributes = escapeAttributes
