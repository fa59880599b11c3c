package http

import (
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/blobstore"
)

// handleListBundles answers page N (from 0, newest first) of an
// extension's bundles as a JSON array. Bundle numbers are dense (1…last,
// never reused), so page N is the number range below last - N*limit: no
// OFFSET scan, page 5,000 costs what page 0 costs. The store reads it in
// one snapshot (FindBundlePage).
//
// Each bundle lists the channels it was put on. A tester gets the bundles
// of their channel only, marked current by what they get.
func (s *Server) handleListBundles(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	q := r.URL.Query()
	limit, ok := limitParam(w, q)
	if !ok {
		return
	}
	page := int64(0)
	if v := q.Get("page"); v != "" || q.Has("page") {
		n, ok := api.ParseNumber(v)
		if !ok || n > math.MaxInt32 {
			badParam(w, "page", "page must be a whole number from 0 (the newest bundles).")
			return
		}
		page = n
	}
	// One read: the page's range and which bundle is current come from
	// one snapshot, whatever is published meanwhile.
	bundles, err := s.Store.FindBundlePage(r.Context(), ext.ID, page, limit)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	numbers := make([]int64, len(bundles))
	for i, b := range bundles {
		numbers[i] = b.Number
	}
	channels, err := s.Store.BundleChannels(r.Context(), ext.ID, numbers)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	var open map[int64]int64 // the admins' counts of reports to read
	if who.admin() {
		if open, err = s.Store.OpenFeedbackCounts(r.Context(), ext.ID, numbers); err != nil {
			s.Error(w, r, err)
			return
		}
	}
	var mine int64 // the bundle a tester gets
	if who.tester != nil {
		var err error
		if mine, _, err = s.testerBundle(r.Context(), who.tester); err != nil {
			s.Error(w, r, err)
			return
		}
	}
	list := make([]betaport.Bundle, 0, len(bundles))
	for _, b := range bundles {
		b.Channels, b.OpenFeedback = channels[b.Number], open[b.Number]
		if who.tester != nil {
			if !slices.Contains(b.Channels, who.tester.Channel) {
				continue
			}
			b.Current, b.Channels = b.Number == mine, nil
		}
		list = append(list, *b)
	}
	writeJSONPage(w, r, list)
}

var errNoCurrent = betaport.Errorf(betaport.ENOTFOUND, "This extension has no published bundle yet.")

// currentBundle is the bundle the person gets: a tester their channel's
// (the rollout's when it reaches them), an admin the default channel's, or
// the one of the channel ?channel= names.
func (s *Server) currentBundle(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) (*betaport.Bundle, bool) {
	number := ext.CurrentBundle
	var err error
	switch name := r.URL.Query().Get("channel"); {
	case who.tester != nil:
		number, _, err = s.testerBundle(r.Context(), who.tester)
	case name != "":
		var c *betaport.Channel
		if c, err = s.Store.FindChannel(r.Context(), ext.ID, name); err == nil {
			number = c.CurrentBundle
		}
	}
	if err != nil {
		s.Error(w, r, err)
		return nil, false
	}
	if number == 0 {
		s.Error(w, r, errNoCurrent)
		return nil, false
	}
	b, err := s.Store.FindBundle(r.Context(), ext.ID, number)
	if err != nil {
		s.Error(w, r, err)
		return nil, false
	}
	return b, true
}

func (s *Server) handleCurrentBundle(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	if b, ok := s.currentBundle(w, r, who, ext); ok {
		b.Current = true
		writeJSON(w, r, http.StatusOK, *b)
	}
}

func (s *Server) handleDownloadCurrent(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	if b, ok := s.currentBundle(w, r, who, ext); ok {
		s.serveBundle(w, r, b)
	}
}

func (s *Server) handleDownloadBundle(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	b, ok := s.bundleFromPath(w, r, ext)
	if !ok {
		return
	}
	if err := s.mayDownload(r.Context(), who, b); err != nil {
		s.Error(w, r, err)
		return
	}
	s.serveBundle(w, r, b)
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// serveBundle sends a bundle's zip.
func (s *Server) serveBundle(w http.ResponseWriter, r *http.Request, b *betaport.Bundle) {
	s.serveFile(w, r, b, b.BlobKey, b.SHA256, api.ZipContentType, ".zip")
}

// serveFile sends one of bundle b's stored files (its zip or its CRX) as an
// attachment named after the bundle, once the caller has checked access.
//
// On file storage this replica sends the bytes, with the SHA-256 as ETag
// and range support (a resumed download picks up where it stopped).
//
// On S3 storage it sends none: it answers 302 Found with a presigned URL of
// the object that expires in downloadURLExpiry, and the storage sends the
// bytes, with its own ETag, ranges and conditional requests, and the
// Content-Type and Content-Disposition this function would have sent (the
// URL signs them). A browser ignores an <a download> attribute across
// origins, so that Content-Disposition is what names the file.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, b *betaport.Bundle, key, sha256, contentType, ext string) {
	setServed(r, strings.TrimPrefix(ext, "."))
	disposition := fmt.Sprintf(`attachment; filename="%s-%s%s"`, fileName(b.Name), b.Version, ext)
	if s.downloadsDirect() {
		s.redirectToStorage(w, r, b, key, contentType, disposition)
		return
	}
	rd, err := s.Blobs.NewReader(r.Context(), key, nil)
	if err != nil {
		s.Error(w, r, fmt.Errorf("opening %s of bundle %d of extension %d: %w", key, b.Number, b.ExtensionID, err))
		return
	}
	defer rd.Close()
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("ETag", `"`+sha256+`"`)
	h.Set("Cache-Control", fileCacheControl)
	h.Set("Content-Disposition", disposition)
	// A range outside the file is answered as a problem, as every error is.
	http.ServeContent(&problemWriter{ResponseWriter: w}, r, "", time.Time{}, rd)
}

// fileCacheControl lets a browser keep a downloaded file but revalidate it
// (with its ETag) before use.
const fileCacheControl = "private, no-cache"

// downloadURLExpiry is how long a presigned download URL lets its holder
// start a download (the storage checks the expiry when a request starts; a
// download under way finishes). The client follows the redirect at once,
// so the URL needs to live for a moment; the margin is for a busy client
// and for clock skew between replicas and storage, which shortens or
// lengthens the URL's life by as much. Short, because the URL is a bearer
// credential that no longer asks who holds it: one copied out of a browser,
// or kept by a tester whose access was revoked meanwhile, stops working
// within minutes. Asking Betaport again (a new click, the updater's next
// try) checks access again and gives a new URL. The cost: a client that
// resumes an interrupted download by the storage's URL after it expired is
// refused (403) and must start again from the Betaport link.
var downloadURLExpiry = 5 * time.Minute

// downloadsDirect reports whether bundle files go from storage straight to
// the client (S3, through a presigned URL) rather than through this replica
// (file storage). blobstore.Presigns decides it for uploads as well.
func (s *Server) downloadsDirect() bool { return blobstore.Presigns(s.Blobs) }

// redirectToStorage answers 302 Found with a presigned URL of the object at
// key, for the request's method (GET, or HEAD, which the mux routes with
// GET: a presigned URL binds its method). The answer carries no body and
// Cache-Control: no-store, so no cache keeps the URL past the access check
// that issued it or past its expiry.
//
// 302, not 307 or 303: for GET and HEAD the three are followed alike (only
// a POST may be turned into a GET, and these routes take none), and 302 is
// the one every HTTP client and downloader follows, HTTP/1.0 ones included
// (307 and 303 are HTTP/1.1's); Chromium's extension updater and download
// manager follow it (server/browser tests both). 301 and 308 are permanent
// and cacheable by default, which a URL that expires must not be.
func (s *Server) redirectToStorage(w http.ResponseWriter, r *http.Request, b *betaport.Bundle, key, contentType, disposition string) {
	u, err := blobstore.PresignDownload(r.Context(), s.Blobs, r.Method, key, downloadURLExpiry, blobstore.Response{
		ContentType:        contentType,
		ContentDisposition: disposition,
		CacheControl:       fileCacheControl,
	})
	if err != nil {
		s.Error(w, r, fmt.Errorf("presigning %s of bundle %d of extension %d: %w", key, b.Number, b.ExtensionID, err))
		return
	}
	h := w.Header()
	h.Set("Location", u)
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusFound)
}

// handleListBuilds answers the signed-in person's builds across the
// extensions they may see, newest first, cursor-paged: a tester's
// extension, or every extension of an admin's team.
func (s *Server) handleListBuilds(w http.ResponseWriter, r *http.Request, who *subject) {
	before, limit, ok := s.pageParams(w, r.URL.Query(), "builds")
	if !ok {
		return
	}
	var ids []int64
	names := map[int64]string{}
	channel := "" // an admin sees every build
	var mine int64
	if who.tester != nil {
		n, c, err := s.testerBundle(r.Context(), who.tester)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		channel, mine = c.Name, n
		ids = []int64{who.tester.ExtensionID}
		ext, err := s.Store.FindExtension(r.Context(), who.tester.ExtensionID)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		names[ext.ID] = ext.Name
	} else {
		exts, err := s.Store.FindExtensions(r.Context(), betaport.ExtensionFilter{TeamID: who.user.TeamID})
		if err != nil {
			s.Error(w, r, err)
			return
		}
		for _, e := range exts {
			ids = append(ids, e.ID)
			names[e.ID] = e.Name
		}
	}
	bundles, err := s.Store.FindBuilds(r.Context(), ids, channel, before, limit+1)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	// The builds show the extension by its own name, the same on each.
	for _, b := range bundles {
		b.ExtensionName = names[b.ExtensionID]
		if who.tester != nil {
			b.Current = b.Number == mine
		}
	}
	writeJSONPage(w, r, cursorPage(s, "builds", bundles, limit, func(b *betaport.Bundle) int64 { return b.ID }))
}

// handleRollback makes an older bundle current again, as a new bundle
// (201), or answers the rollback a racing or retried request published
// (200). An optional body names the channel ({"channel": "nightly"}; the
// default channel without one).
func (s *Server) handleRollback(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	n, ok := pathID(w, r, "number")
	if !ok {
		return
	}
	var in api.ChannelChoice
	if r.ContentLength != 0 && !s.readJSON(w, r, &in) {
		return
	}
	b, fresh, err := s.Publish.Rollback(r.Context(), ext, n, in.Channel, who.actor())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	status := http.StatusOK
	if fresh {
		status = http.StatusCreated
	}
	writeJSON(w, r, status, b)
}
