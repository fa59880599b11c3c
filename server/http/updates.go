package http

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
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
	s.Logger.InfoContext(ctx, "update token rotated", "extension", ext.ID, "user", who.user.ID)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, r, http.StatusOK, u)
}

// handleUpdateCheck answers Chromium's update check with gupdate XML.
func (s *Server) handleUpdateCheck(w http.ResponseWriter, r *http.Request, _ *subject) {
	ext, err := s.Publish.UpdateFeed(r.Context(), r.PathValue("id"), r.PathValue("token"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	xml, err := s.Publish.UpdateCheck(r.Context(), ext, r.URL.RawQuery)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Metrics.UpdateCheck()
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(xml)
}

// handleUpdateCRX serves a bundle's CRX to Chromium's updater.
func (s *Server) handleUpdateCRX(w http.ResponseWriter, r *http.Request, _ *subject) {
	ext, err := s.Publish.UpdateFeed(r.Context(), r.PathValue("id"), r.PathValue("token"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if b, ok := s.bundleFromPath(w, r, ext); ok {
		s.serveCRX(w, r, ext, b)
	}
}

// handleDownloadCRX serves a bundle's CRX to a signed-in admin or tester.
func (s *Server) handleDownloadCRX(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	if b, ok := s.bundleFromPath(w, r, ext); ok {
		s.serveCRX(w, r, ext, b)
	}
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

// bundleFromPath finds the bundle the {number} path parameter names.
func (s *Server) bundleFromPath(w http.ResponseWriter, r *http.Request, ext *betaport.Extension) (*betaport.Bundle, bool) {
	n, ok := s.bundleNumber(w, r)
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

// bundleNumber reads the {number} path parameter; a number no bundle can
// have is a 404, as a bundle that does not exist is. A bundle has one
// address: "01" and "+1" are not bundle 1.
func (s *Server) bundleNumber(w http.ResponseWriter, r *http.Request) (int64, bool) {
	raw := r.PathValue("number")
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n <= 0 || strconv.FormatInt(n, 10) != raw {
		s.Error(w, r, betaport.Errorf(betaport.ENOTFOUND, "Bundles are numbered 1, 2, 3…; %q is not a bundle number.", r.PathValue("number")))
		return 0, false
	}
	return n, true
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
