package http

import "time"

// SetDownloadURLExpiry sets how long presigned download URLs live and
// returns what restores the default. Tests in this package do not run in
// parallel.
func SetDownloadURLExpiry(d time.Duration) (restore func()) {
	was := downloadURLExpiry
	downloadURLExpiry = d
	return func() { downloadURLExpiry = was }
}
