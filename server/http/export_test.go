package http

// Internals the fuzz targets of http_test drive directly.

func (s *Server) EncodeCursor(list string, id int64) string { return s.encodeCursor(list, id) }
func (s *Server) DecodeCursor(list, cursor string) (int64, bool) {
	return s.decodeCursor(list, cursor)
}

var EscapeAttributes = escapeAttributes
