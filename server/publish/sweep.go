package publish

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gocloud.dev/gcerrors"
)

// Sweep marks uploads whose URL expired before their zip came, removes
// the bytes of uploads that are over (expired, rejected, superseded, or
// published: the bundle has its own copy), then whatever no record points
// to (see sweepOrphans). It returns how many blobs and work folders it
// removed.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	n, err := s.sweepUploads(ctx)
	if err != nil {
		return n, err
	}
	orphans, err := s.sweepOrphans(ctx)
	return n + orphans, err
}

func (s *Service) sweepUploads(ctx context.Context) (int, error) {
	if err := s.Store.ExpireUploads(ctx, s.now()); err != nil {
		return 0, err
	}
	dead, err := s.Store.SweepableUploads(ctx, 500)
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, u := range dead {
		switch err := s.Blobs.Delete(ctx, uploadBlobKey(u.ID)); {
		case err == nil:
			removed++
		case gcerrors.Code(err) != gcerrors.NotFound:
			return removed, err
		}
		if err := s.Store.MarkUploadSwept(ctx, u.ID); err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// DefaultOrphanGrace is how old an unreferenced blob or work folder must be
// before the sweeper removes it. A sign writes its bundle's bytes before the
// record that points to them, and a replica may be in the middle of one:
// anything younger may still be about to be recorded.
const DefaultOrphanGrace = time.Hour

// sweepOrphans removes what crashes leave behind: blobs no record points to
// (bundle bytes of signs that never committed, a file store's *.tmp files of
// interrupted writes, upload snapshots), and this machine's CRX work folders
// (betaport-crx-*), once they are older than the grace.
func (s *Service) sweepOrphans(ctx context.Context) (int, error) {
	grace := s.OrphanGrace
	if grace <= 0 {
		grace = DefaultOrphanGrace
	}
	cutoff := time.Now().Add(-grace)
	// Listing first and reading the records second means a blob recorded
	// between the two is kept; one written after the listing is not seen.
	var old []string
	it := s.Blobs.List(nil)
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		} else if err != nil {
			return 0, err
		}
		if !obj.IsDir && obj.ModTime.Before(cutoff) {
			old = append(old, obj.Key)
		}
	}
	live, err := s.Store.LiveBlobs(ctx)
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, key := range old {
		if live.Keys[key] {
			continue
		}
		if id, ok := pendingUploadID(key); ok && live.PendingUploads[id] {
			continue
		}
		if err := s.Blobs.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return removed, err
		}
		s.logger().InfoContext(ctx, "swept an orphaned blob", "key", key)
		removed++
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), crxWorkPrefix+"*"))
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err == nil && fi.ModTime().Before(cutoff) {
			if os.RemoveAll(dir) == nil {
				removed++
			}
		}
	}
	return removed, nil
}

// pendingUploadID is the upload a key of uploads/ belongs to: its zip
// (uploads/7.zip) or a sign's snapshot of it (uploads/7.<attempt>.checked.zip).
func pendingUploadID(key string) (int64, bool) {
	rest, ok := strings.CutPrefix(key, "uploads/")
	if !ok {
		return 0, false
	}
	digits, _, _ := strings.Cut(rest, ".")
	id, err := strconv.ParseInt(digits, 10, 64)
	return id, err == nil
}
