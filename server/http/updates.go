package http

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/policy"
)

// Self-hosted updates, as package publish makes them: an extension's
// Chrome ID and update URL for admins, the update feed and CRX downloads
// for Chromium's updater and for people.

// handleGetUpdates answers an extension's Chrome ID and update URL.
func (s *Server) handleGetUpdates(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	u, err := s.Publish.Updates(r.Context(), ext)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store") // the URL holds a secret
	writeJSON(w, r, http.StatusOK, u)
}

// handleRotateUpdateToken replaces the update token. Every copy installed
// from an earlier CRX then checks a URL that answers 404 and stops updating.
func (s *Server) handleRotateUpdateToken(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	ctx := r.Context()
	u, err := s.Publish.RotateUpdateToken(ctx, ext)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Logger.InfoContext(ctx, "update token rotated", "extension", ext.ID, "by", who.actor())
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, r, http.StatusOK, u)
}

// handleUpdateCheck answers Chromium's update check with gupdate XML, for
// the extension's shared update URL or a tester's own.
func (s *Server) handleUpdateCheck(w http.ResponseWriter, r *http.Request, _ *subject) {
	feed, err := s.Publish.UpdateFeed(r.Context(), r.PathValue("id"), r.PathValue("token"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	xml, err := s.Publish.UpdateCheck(r.Context(), feed, r.URL.RawQuery)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Metrics.UpdateCheck()
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(xml)
}

// handleUpdateCRX serves a bundle's CRX to Chromium's updater: a tester's
// URL gets their own copy (none once they are revoked), the shared URL
// the shared package.
func (s *Server) handleUpdateCRX(w http.ResponseWriter, r *http.Request, _ *subject) {
	feed, err := s.Publish.UpdateFeed(r.Context(), r.PathValue("id"), r.PathValue("token"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	b, ok := s.bundleFromPath(w, r, feed.Extension)
	if !ok {
		return
	}
	if feed.Tester != nil {
		if err := s.mayDownload(r.Context(), &subject{tester: feed.Tester}, b); err != nil {
			s.Error(w, r, err)
			return
		}
		s.serveTesterCRX(w, r, feed.Extension, b, feed.Tester)
		return
	}
	s.serveCRX(w, r, feed.Extension, b)
}

// handleDownloadCRX serves a bundle's CRX to a signed-in admin (the shared
// package) or tester (their own copy, which updates from their own URL).
func (s *Server) handleDownloadCRX(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	b, ok := s.bundleFromPath(w, r, ext)
	if !ok {
		return
	}
	if err := s.mayDownload(r.Context(), who, b); err != nil {
		s.Error(w, r, err)
		return
	}
	if who.tester != nil {
		s.serveTesterCRX(w, r, ext, b, who.tester)
		return
	}
	s.serveCRX(w, r, ext, b)
}

// serveCRX sends b's CRX, which publish builds first when it was never
// built or embeds a replaced update token.
func (s *Server) serveCRX(w http.ResponseWriter, r *http.Request, ext *betaport.Extension, b *betaport.Bundle) {
	c, err := s.Publish.CRX(r.Context(), ext, b)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.serveFile(w, r, b, c.BlobKey, c.SHA256, api.CRXContentType, ".crx")
}

// serveTesterCRX sends tester t's own copy of b's CRX. It is made for the
// request (a hash of its tail and a signature) and streamed: its shared
// part from storage, through this replica on S3 too, since no stored
// object holds the tester's bytes for a presigned URL to point at.
// Range requests resume it: its bytes are the same every time.
func (s *Server) serveTesterCRX(w http.ResponseWriter, r *http.Request, ext *betaport.Extension, b *betaport.Bundle, t *betaport.Tester) {
	p, err := s.Publish.TesterCRX(r.Context(), ext, b, t)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	setServed(r, "crx")
	h := w.Header()
	h.Set("Content-Type", api.CRXContentType)
	h.Set("ETag", `"`+p.ETag+`"`)
	h.Set("Cache-Control", fileCacheControl)
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s.crx"`, fileName(b.Name), b.Version))
	rd := &packageReader{ctx: r.Context(), blobs: s.Blobs, p: p}
	defer rd.Close()
	http.ServeContent(&problemWriter{ResponseWriter: w}, r, "", time.Time{}, rd)
}

// bundleFromPath finds the bundle the {number} path parameter names.
func (s *Server) bundleFromPath(w http.ResponseWriter, r *http.Request, ext *betaport.Extension) (*betaport.Bundle, bool) {
	n, ok := pathID(w, r, "number")
	if !ok {
		return nil, false
	}
	b, err := s.Store.FindBundle(r.Context(), ext.ID, n)
	if err != nil {
		s.Error(w, r, err)
		return nil, false
	}
	return b, true
}

// fileName makes a bundle's name safe for a download's file name.
func fileName(name string) string {
	name = unsafeFileChars.ReplaceAllString(name, "-")
	// A leading dot would save a hidden file (".." one too); a long name
	// would not fit a file system's 255 bytes once the version and the
	// extension are added.
	if len(name) > maxFileNameStem {
		name = name[:maxFileNameStem]
	}
	name = strings.Trim(name, "-.")
	if name == "" {
		return "extension"
	}
	return name
}

// maxFileNameStem is how much of an extension's name a download's file
// name keeps (ASCII only, see unsafeFileChars).
const maxFileNameStem = 100

// policyFiles are the policy files a tester (or an admin) downloads to
// keep the extension across browser restarts, by system.
var policyFiles = map[string]struct {
	suffix, contentType string
	write               func(policy.Extension) []byte
}{
	"linux":   {".json", "application/json", policy.Linux},
	"macos":   {".mobileconfig", "application/x-apple-aspen-config", policy.MacOS},
	"windows": {".reg", "application/octet-stream", policy.Windows},
}

// handlePolicy answers a browser policy file that installs the extension
// from the visitor's update URL: a tester's own, the shared one for an
// admin.
func (s *Server) handlePolicy(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	f, ok := policyFiles[r.PathValue("system")]
	if !ok {
		s.Error(w, r, betaport.Errorf(betaport.ENOTFOUND, "There are policy files for linux, macos and windows."))
		return
	}
	u, err := s.Publish.Updates(r.Context(), ext) // makes the key (the Chrome ID) the first time
	if err != nil {
		s.Error(w, r, err)
		return
	}
	url := u.UpdateURL
	if who.tester != nil {
		if url, err = s.Publish.TesterUpdateURL(r.Context(), ext, who.tester); err != nil {
			s.Error(w, r, err)
			return
		}
	}
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("Cache-Control", "no-store") // it holds the update URL's secret
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="betaport-%s%s"`, fileName(ext.Name), f.suffix))
	w.Write(f.write(policy.Extension{ChromeID: u.ChromeID, UpdateURL: url, Name: "Betaport: " + ext.Name}))
}
