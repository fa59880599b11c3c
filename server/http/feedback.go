package http

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/metrics"
	"github.com/betaport/betaport/server/publish"
	"github.com/betaport/betaport/server/screenshot"
)

// Testers' feedback (issue 32): a tester sends a report on a build, with
// screenshots, from their builds page; the extension's admins list the
// reports, open their screenshots and move them new → seen → resolved; a
// tester sees their own.

// maxFeedbackBody bounds a report's request: its screenshots at their
// limit, the text, and the form's own bytes.
const maxFeedbackBody = betaport.MaxFeedbackScreenshots*screenshot.MaxBytes + betaport.MaxFeedbackText + 64<<10

// Feedback's rate: a tester's reports come at most this often, after a
// burst (per replica, as the other limits).
const (
	feedbackRefill = 30 * time.Second
	feedbackBurst  = 10
)

func (s *Server) feedbackLimiter() *limiter {
	s.feedbackOnce.Do(func() {
		refill := feedbackRefill
		if s.FeedbackRefill > 0 {
			refill = s.FeedbackRefill
		}
		s.feedbackLimit = newLimiter(refill, feedbackBurst)
	})
	return s.feedbackLimit
}

// handleCreateFeedback keeps a report from a tester's builds page (their
// session).
func (s *Server) handleCreateFeedback(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	if who.tester == nil {
		s.Error(w, r, betaport.Errorf(betaport.EFORBIDDEN, "Testers send reports; admins read them in the extension's feedback list."))
		return
	}
	s.receiveFeedback(w, r, ext, who.tester, betaport.FeedbackFromBuildsPage)
}

// receiveFeedback keeps a tester's report: multipart/form-data with
// "text", "bundle" (the build's number) or "version" (the version their
// copy runs), and up to five "screenshots". Without either, the report is
// on the build the tester gets. Each screenshot is checked and encoded
// again (package screenshot) and stored before the report is; a refused
// report leaves nothing behind.
func (s *Server) receiveFeedback(w http.ResponseWriter, r *http.Request, ext *betaport.Extension, t *betaport.Tester, source string) {
	metric := map[string]string{betaport.FeedbackFromBuildsPage: metrics.FeedbackFromBuildsPage,
		betaport.FeedbackFromExtension: metrics.FeedbackFromExtension}[source]
	refuse := func(err error) {
		s.Metrics.Feedback(metric, strings.TrimPrefix(ProblemFor(err).Type, "/problems/"))
		s.Error(w, r, err)
	}
	key := "tester:" + strconv.FormatInt(t.ID, 10)
	if wait := s.feedbackLimiter().wait(key); wait > 0 {
		s.Metrics.RateLimited(metrics.LimiterFeedback)
		refuse(&betaport.Error{Code: betaport.ERATELIMITED, RetryAfter: time.Duration(wait) * time.Second,
			Message: fmt.Sprintf("You sent many reports just now. Send this one in %d seconds.", wait)})
		return
	}
	f, err := s.readFeedback(w, r)
	if err != nil {
		refuse(err)
		return
	}
	f.ExtensionID, f.TesterID, f.Source = ext.ID, t.ID, source
	f.Browser, f.OS = browserOf(r.UserAgent())
	if err := s.feedbackBuild(r.Context(), t, f); err != nil {
		refuse(err)
		return
	}
	if err := s.keepFeedback(r.Context(), f); err != nil {
		refuse(err)
		return
	}
	s.feedbackLimiter().fail(key)
	s.Metrics.Feedback(metric, "received")
	w.Header().Set("Location", api.FeedbackReportPath(ext.ID, f.ID))
	writeJSON(w, r, http.StatusCreated, f)
}

// handleExtensionFeedback keeps a report the extension itself sends: the
// tester's own update URL (the manifest's update_url) authorises it, and
// only the extension's own pages (chrome-extension://<its id>) may call it
// from a browser. A revoked tester's URL is refused.
func (s *Server) handleExtensionFeedback(w http.ResponseWriter, r *http.Request, _ *subject) {
	feed, err := s.extensionFeedbackFeed(w, r)
	if err != nil {
		s.Metrics.Feedback(metrics.FeedbackFromExtension, strings.TrimPrefix(ProblemFor(err).Type, "/problems/"))
		s.Error(w, r, err)
		return
	}
	s.receiveFeedback(w, r, feed.Extension, feed.Tester, betaport.FeedbackFromExtension)
}

// handleExtensionFeedbackPreflight answers a browser's CORS preflight of a
// report from the extension (one that sets headers of its own).
func (s *Server) handleExtensionFeedbackPreflight(w http.ResponseWriter, r *http.Request, _ *subject) {
	if _, err := s.extensionFeedbackFeed(w, r); err != nil {
		s.Error(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", "POST")
	h.Set("Access-Control-Allow-Headers", "Content-Type")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

// extensionFeedbackFeed authorises a report from the extension: a tester's
// update URL, not revoked, and no Origin or the extension's own. Other
// origins (a web page that learned the URL) are refused before the body
// is read; the extension's gets its CORS header, on refusals too.
func (s *Server) extensionFeedbackFeed(w http.ResponseWriter, r *http.Request) (*publish.Feed, error) {
	w.Header().Add("Vary", "Origin")
	feed, err := s.Publish.UpdateFeed(r.Context(), r.PathValue("id"), r.PathValue("token"))
	if err != nil {
		return nil, err
	}
	origin := r.Header.Get("Origin")
	own := "chrome-extension://" + feed.Extension.ChromeID
	if origin != "" && (feed.Extension.ChromeID == "" || origin != own) {
		return nil, betaport.Errorf(betaport.EFORBIDDEN, "Reports to this URL come from the extension itself (%s), not from %s.", own, origin)
	}
	if origin != "" {
		w.Header().Set("Access-Control-Allow-Origin", origin)
	}
	switch {
	case feed.Tester == nil:
		return nil, betaport.Errorf(betaport.EFORBIDDEN,
			"This is the extension's shared update URL, which no tester owns. Reports come from a tester's copy: install it from their builds page.")
	case feed.Revoked():
		return nil, betaport.Errorf(betaport.EFORBIDDEN,
			"This tester's access to the beta was revoked, so their reports are not taken. Ask the extension's admins to restore them.")
	}
	return feed, nil
}

// feedbackForm is a report as sent, before its build is known.
type feedbackForm struct {
	betaport.Feedback
	images []*screenshot.Image
}

// readFeedback reads a report's form. Its screenshots are taken as they
// come (each checked and encoded again); nothing is stored yet.
func (s *Server) readFeedback(w http.ResponseWriter, r *http.Request) (*feedbackForm, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		return nil, problem(http.StatusUnsupportedMediaType, api.ProblemUnsupportedMedia,
			`Send the report as multipart/form-data: "text", "bundle" and up to five "screenshots".`)
	}
	if r.ContentLength > maxFeedbackBody {
		// Said by its length: refused before a byte of it is read.
		return nil, problem(http.StatusRequestEntityTooLarge, api.ProblemTooLarge, fmt.Sprintf(
			"A report is at most %d MB with its screenshots. Send fewer or smaller screenshots.", maxFeedbackBody/1_000_000))
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFeedbackBody)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, problem(http.StatusBadRequest, api.ProblemBadRequest, "The report's form does not read: "+err.Error()+".")
	}
	// unreadable is a form that broke off: over the body's limit, or not
	// a form.
	unreadable := func(err error) error {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return problem(http.StatusRequestEntityTooLarge, api.ProblemTooLarge, "The report is too large: at most five screenshots of 5 MB each.")
		}
		return problem(http.StatusBadRequest, api.ProblemBadRequest, "The report's form does not read: "+err.Error()+".")
	}
	f := &feedbackForm{}
	f.Screenshots = []betaport.Screenshot{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, unreadable(err)
		}
		switch part.FormName() {
		case "text":
			b, err := io.ReadAll(io.LimitReader(part, betaport.MaxFeedbackText+1))
			if err != nil {
				return nil, unreadable(err)
			}
			f.Text = string(b)
		case "bundle":
			b, err := io.ReadAll(io.LimitReader(part, 32))
			if err != nil {
				return nil, unreadable(err)
			}
			n, ok := api.ParseID(strings.TrimSpace(string(b)))
			if !ok {
				return nil, &betaport.Error{Code: betaport.EINVALID, Param: "bundle", Message: "bundle is the number of the build the report is on, like 12."}
			}
			f.BundleNumber = n
		case "version":
			b, err := io.ReadAll(io.LimitReader(part, 64))
			if err != nil {
				return nil, unreadable(err)
			}
			v := strings.TrimSpace(string(b))
			if !publish.ValidVersion(v) {
				return nil, &betaport.Error{Code: betaport.EINVALID, Param: "version", Message: fmt.Sprintf(
					"version is the version the extension's manifest says, like 1.2.3 (chrome.runtime.getManifest().version); not %q.", v)}
			}
			f.Version = v
		case "screenshots":
			if len(f.images) == betaport.MaxFeedbackScreenshots {
				return nil, &betaport.Error{Code: betaport.EINVALID, Param: "screenshots", Message: fmt.Sprintf(
					"A report carries at most %d screenshots. Send the others in another report.", betaport.MaxFeedbackScreenshots)}
			}
			img, err := screenshot.Take(part.Header.Get("Content-Type"), part)
			var refused *betaport.Error
			if err != nil && !errors.As(err, &refused) {
				return nil, unreadable(err)
			} else if err != nil {
				return nil, err
			}
			f.images = append(f.images, img)
		default:
			return nil, &betaport.Error{Code: betaport.EINVALID, Param: part.FormName(), Message: fmt.Sprintf(
				`A report has "text", "bundle" or "version", and "screenshots"; not %q.`, part.FormName())}
		}
	}
	for i, img := range f.images {
		f.Screenshots = append(f.Screenshots, betaport.Screenshot{Number: i + 1, Type: img.Type, Width: img.Width,
			Height: img.Height, Size: int64(len(img.Data)), BlobKey: "pending"})
	}
	// Checked before anything is stored.
	probe := f.Feedback
	probe.ExtensionID, probe.TesterID, probe.Source = 1, 1, betaport.FeedbackFromBuildsPage
	if err := probe.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// feedbackBuild fills in the build the report is on: the one named by
// number, if it is on the tester's channel; else the one of the version
// their copy says it runs (kept as said, with no number, when none of
// their channel's builds has it: a copy loaded by hand); else the one they
// get.
func (s *Server) feedbackBuild(ctx context.Context, t *betaport.Tester, f *feedbackForm) error {
	if f.BundleNumber == 0 && f.Version != "" {
		b, err := s.Store.FindChannelBundleByVersion(ctx, t.ExtensionID, t.Channel, f.Version)
		if betaport.ErrorCode(err) == betaport.ENOTFOUND {
			return nil
		} else if err != nil {
			return err
		}
		f.BundleNumber = b.Number
		return nil
	}
	if f.BundleNumber == 0 {
		n, _, err := s.testerBundle(ctx, t)
		if err != nil || n == 0 {
			return err
		}
		f.BundleNumber = n
	}
	b, err := s.Store.FindBundle(ctx, t.ExtensionID, f.BundleNumber)
	if err == nil {
		err = s.mayDownload(ctx, &subject{tester: t}, b)
	}
	if betaport.ErrorCode(err) == betaport.ENOTFOUND {
		return &betaport.Error{Code: betaport.ENOTFOUND, Param: "bundle", Message: fmt.Sprintf(
			"There is no build #%d among yours. Pick one from your builds page.", f.BundleNumber)}
	} else if err != nil {
		return err
	}
	f.Version = b.Version
	return nil
}

// keepFeedback stores the report's screenshots under a new random name,
// then the report; if either fails, what was stored goes.
func (s *Server) keepFeedback(ctx context.Context, f *feedbackForm) error {
	name := credential.NewToken()[:24]
	var written []string
	drop := func() {
		for _, k := range written {
			if err := s.Blobs.Delete(context.WithoutCancel(ctx), k); err != nil {
				s.Logger.WarnContext(ctx, "deleting a screenshot of a report not kept", "key", k, "err", err)
			}
		}
	}
	for i, img := range f.images {
		key := betaport.FeedbackKey(f.ExtensionID, name, i+1, img.Type)
		if err := s.Blobs.WriteAll(ctx, key, img.Data, &blob.WriterOptions{ContentType: img.Type}); err != nil {
			drop()
			return fmt.Errorf("storing a screenshot: %w", err)
		}
		written = append(written, key)
		f.Screenshots[i].BlobKey = key
	}
	if err := s.Store.CreateFeedback(ctx, &f.Feedback); err != nil {
		drop()
		return err
	}
	return nil
}

// browserOf reads the browser and the system from a User-Agent, as a
// person names them ("Chrome 131", "Linux"); "" for what it does not say.
func browserOf(ua string) (browser, os string) {
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"Chrome/", "Chrome"}, {"Safari/", "Safari"},
	} {
		if i := strings.Index(ua, b.token); i >= 0 {
			v := ua[i+len(b.token):]
			if j := strings.IndexAny(v, ". "); j >= 0 {
				v = v[:j]
			}
			browser = strings.TrimSpace(b.name + " " + v)
			break
		}
	}
	for _, o := range []struct{ token, name string }{
		{"CrOS", "ChromeOS"}, {"Android", "Android"}, {"Windows", "Windows"}, {"Mac OS X", "macOS"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, o.token) {
			os = o.name
			break
		}
	}
	return browser, os
}

// handleListFeedback answers a page of reports, newest first: every one to
// an admin (filtered by ?status=, ?bundle=, ?tester=, ?q=), a tester's own
// to a tester.
func (s *Server) handleListFeedback(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	q := r.URL.Query()
	list := "feedback/" + strconv.FormatInt(ext.ID, 10)
	before, limit, ok := s.pageParams(w, q, list)
	if !ok {
		return
	}
	f := betaport.FeedbackFilter{ExtensionID: ext.ID, BeforeID: before, Limit: limit + 1, Status: q.Get("status"), Query: q.Get("q")}
	for name, into := range map[string]*int64{"bundle": &f.BundleNumber, "tester": &f.TesterID} {
		if v := q.Get(name); v != "" || q.Has(name) {
			n, ok := api.ParseID(v)
			if !ok {
				badParam(w, name, name+" is a number, like 12.")
				return
			}
			*into = n
		}
	}
	if who.tester != nil {
		f.TesterID = who.tester.ID // their own, whatever ?tester= says
	}
	if utf8.RuneCountInString(f.Query) > 200 {
		badParam(w, "q", "q is longer than 200 characters; search for a word of the report or part of an e-mail address.")
		return
	}
	// Read before the page: the page is at least as new as it (a list
	// open in a browser compares it with the stream's "feedback" events).
	rev, err := s.Store.Revision(r.Context(), ext.ID)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	reports, err := s.Store.FindFeedbackList(r.Context(), f)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	page := cursorPage(s, list, reports, limit, func(f *betaport.Feedback) int64 { return f.ID })
	page.Revision = rev.Feedback
	writeJSONPage(w, r, page)
}

// feedbackFromPath finds the report {feedbackId} names, for an admin or
// its tester (another tester is told it does not exist).
func (s *Server) feedbackFromPath(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) (*betaport.Feedback, bool) {
	id, ok := pathID(w, r, "feedbackId")
	if !ok {
		return nil, false
	}
	f, err := s.Store.FindFeedback(r.Context(), ext.ID, id)
	if err == nil && who.tester != nil && f.TesterID != who.tester.ID {
		err = betaport.Errorf(betaport.ENOTFOUND, "This extension has no such report.")
	}
	if err != nil {
		s.Error(w, r, err)
		return nil, false
	}
	return f, true
}

func (s *Server) handleGetFeedback(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	if f, ok := s.feedbackFromPath(w, r, who, ext); ok {
		writeJSON(w, r, http.StatusOK, f)
	}
}

// handleFeedbackStatus moves a report to new, seen or resolved.
func (s *Server) handleFeedbackStatus(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	id, ok := pathID(w, r, "feedbackId")
	if !ok {
		return
	}
	var in api.FeedbackStatus
	if !s.readJSON(w, r, &in) {
		return
	}
	f, err := s.Store.SetFeedbackStatus(r.Context(), ext.ID, id, in.Status, who.actor())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, f)
}

// handleDeleteFeedback deletes a report and its screenshots: its record
// first, then their bytes (a blob left by a failure is swept, as no report
// names it).
func (s *Server) handleDeleteFeedback(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	id, ok := pathID(w, r, "feedbackId")
	if !ok {
		return
	}
	f, err := s.Store.DeleteFeedback(r.Context(), ext.ID, id, who.actor())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	for _, sc := range f.Screenshots {
		if err := s.Blobs.Delete(context.WithoutCancel(r.Context()), sc.BlobKey); err != nil {
			s.Logger.WarnContext(r.Context(), "deleting a screenshot of a deleted report (the sweeper takes it)", "key", sc.BlobKey, "err", err)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleFeedbackScreenshot serves one screenshot of a report, to the
// extension's admins and the report's tester: as the type it was kept as
// (it was decoded and encoded again), never sniffed, and sandboxed should
// a browser open it as a document.
func (s *Server) handleFeedbackScreenshot(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	f, ok := s.feedbackFromPath(w, r, who, ext)
	if !ok {
		return
	}
	n, ok := pathID(w, r, "number")
	if !ok {
		return
	}
	if n > int64(len(f.Screenshots)) {
		s.Error(w, r, betaport.Errorf(betaport.ENOTFOUND, "Report #%d has %d screenshots.", f.ID, len(f.Screenshots)))
		return
	}
	sc := f.Screenshots[n-1]
	rd, err := s.Blobs.NewReader(r.Context(), sc.BlobKey, nil)
	if err != nil {
		s.Error(w, r, fmt.Errorf("opening screenshot %d of report %d: %w", n, f.ID, err))
		return
	}
	defer rd.Close()
	h := w.Header()
	h.Set("Content-Type", sc.Type)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", "private, max-age=3600")
	h.Set("Content-Disposition", fmt.Sprintf(`inline; filename="report-%d-%d%s"`, f.ID, n, map[bool]string{true: ".jpg", false: ".png"}[sc.Type == screenshot.JPEG]))
	h.Set("Content-Length", strconv.FormatInt(rd.Size(), 10))
	// A few MB at most: sent whole (no ranges to describe or to resume).
	if _, err := io.Copy(w, rd); err != nil {
		s.Logger.WarnContext(r.Context(), "sending a screenshot", "report", f.ID, "err", err)
	}
}
