package publish

import (
	"net/url"
	"time"
)

// Internals the fuzz targets of publish_test drive directly.

func (s *Service) UploadURL(id int64, expires time.Time) string { return s.uploadURL(id, expires) }
func (s *Service) UploadURLAccepted(path string, q url.Values, id int64) bool {
	return s.checkUploadURL(path, q, id) == nil
}
