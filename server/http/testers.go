package http

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/ui"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/metrics"
)

// handleInviteTester adds a tester and answers their personal link, shown
// this once: only its hash is kept. An e-mail whose tester was revoked is
// refused with the path that restores them.
func (s *Server) handleInviteTester(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	var in api.Invite
	if !s.readJSON(w, r, &in) {
		return
	}
	ctx := r.Context()
	link, token, ok := s.newLink(w, in.ExpiresInDays)
	if !ok {
		return
	}
	t := &betaport.Tester{ExtensionID: ext.ID, Email: in.Email, Name: in.Name, Status: betaport.TesterInvited, Channel: in.Channel}
	err := s.Store.InviteTester(ctx, t, link, who.actor())
	if betaport.ErrorCode(err) == betaport.ECONFLICT {
		if old, ferr := s.Store.FindTesterByEmail(ctx, ext.ID, t.Email); ferr == nil && old.Status == betaport.TesterRevoked {
			writeProblem(w, &api.Problem{Type: api.ProblemTesterRevoked, Status: http.StatusConflict, Param: "email",
				Restore: api.TesterRestorePath(ext.ID, old.ID),
				Detail:  old.Email + " was a tester whose access was revoked. Restore them to send a new invite link."})
			return
		}
	}
	if err != nil {
		s.Error(w, r, err)
		return
	}
	w.Header().Set("Location", api.TesterPath(ext.ID, t.ID))
	writeJSON(w, r, http.StatusCreated, s.invited(t, token))
}

// newLink makes a personal link that works once, for the days given (or
// the service's default), answering a bad number of days. The range is
// checked on the number itself, before it becomes a duration (whose
// overflow once made links that had expired before they were made).
func (s *Server) newLink(w http.ResponseWriter, days api.Days) (betaport.InviteLink, string, bool) {
	expiry := s.inviteExpiry()
	if days.Given {
		maxDays := int(betaport.MaxInviteExpiry / (24 * time.Hour))
		if days.N < 1 || days.N > maxDays {
			badParam(w, "expiresInDays", fmt.Sprintf("expiresInDays is how many days the link works unused: a whole number from 1 to %d, or leave it out for the default (%d).",
				maxDays, int(expiry/(24*time.Hour))))
			return betaport.InviteLink{}, "", false
		}
		expiry = time.Duration(days.N) * 24 * time.Hour
	}
	token := credential.NewToken()
	return betaport.InviteLink{Hash: credential.HashToken(token), ExpiresAt: s.now().Add(expiry)}, token, true
}

// inviteExpiry is how long a link works unless the admin says otherwise.
func (s *Server) inviteExpiry() time.Duration {
	if s.InviteExpiry > 0 {
		return s.InviteExpiry
	}
	return betaport.DefaultInviteExpiry
}

// invited is a tester with their new personal link.
func (s *Server) invited(t *betaport.Tester, token string) api.Invited {
	return api.Invited{Tester: *t, InviteURL: s.BaseURL + api.InvitePrefix + token}
}

// testerOf finds the {testerId} of the path among ext's testers.
func (s *Server) testerOf(w http.ResponseWriter, r *http.Request, ext *betaport.Extension) (*betaport.Tester, bool) {
	id, ok := pathID(w, r, "testerId")
	if !ok {
		return nil, false
	}
	t, err := s.Store.FindTester(r.Context(), id)
	if err == nil && t.ExtensionID != ext.ID {
		err = betaport.Errorf(betaport.ENOTFOUND, "There is no such tester.")
	}
	if err != nil {
		s.Error(w, r, err)
		return nil, false
	}
	return t, true
}

// handleRestoreTester brings a revoked tester back, invited with a new link.
func (s *Server) handleRestoreTester(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	s.newInviteLink(w, r, who, ext, s.Store.RestoreTester)
}

// handleResendInvite gives a tester a new link; the old one stops working.
func (s *Server) handleResendInvite(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	s.newInviteLink(w, r, who, ext, s.Store.ResendInvite)
}

func (s *Server) newInviteLink(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension,
	renew func(ctx context.Context, id int64, link betaport.InviteLink, actor string) (*betaport.Tester, error)) {
	// The body is optional: without one the link works for the default.
	var in api.NewLink
	if (r.ContentLength > 0 || r.Header.Get("Content-Type") != "") && !s.readJSON(w, r, &in) {
		return
	}
	t, ok := s.testerOf(w, r, ext)
	if !ok {
		return
	}
	link, token, ok := s.newLink(w, in.ExpiresInDays)
	if !ok {
		return
	}
	t, err := renew(r.Context(), t.ID, link, who.actor())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, r, http.StatusOK, s.invited(t, token))
}

var testerStatuses = map[string]bool{betaport.TesterInvited: true, betaport.TesterActive: true, betaport.TesterRevoked: true}

// handleListTesters answers a cursor-paged list of an extension's testers,
// newest first.
func (s *Server) handleListTesters(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	q := r.URL.Query()
	list := "testers/" + strconv.FormatInt(ext.ID, 10)
	before, limit, ok := s.pageParams(w, q, list)
	if !ok {
		return
	}
	f := betaport.TesterFilter{ExtensionID: ext.ID, BeforeID: before, Limit: limit + 1, Query: strings.TrimSpace(q.Get("q")), Status: q.Get("status"),
		Channel: q.Get("channel")}
	switch f.Status {
	case betaport.TestersBehind:
		// Behind the current build: before the first bundle, nobody.
		if ext.CurrentBundle == 0 {
			writeJSONPage(w, r, cursorPage(s, list, []*betaport.Tester{}, limit, func(t *betaport.Tester) int64 { return t.ID }))
			return
		}
		current, err := s.currentVersion(r.Context(), ext)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		f.Status, f.Behind = "", current
	case betaport.TestersSilent:
		f.Status, f.SilentSince = "", s.now().Add(-betaport.SilentDays*24*time.Hour)
	case "":
	default:
		if !testerStatuses[f.Status] {
			badParam(w, "status", "status must be invited, active, revoked, behind (copies not on the current build) or silent (no update check for 7 days), or absent for all.")
			return
		}
	}
	if f.Channel != "" {
		if _, err := s.Store.FindChannel(r.Context(), ext.ID, f.Channel); err != nil {
			s.Error(w, r, err)
			return
		}
	}
	if utf8.RuneCountInString(f.Query) > 200 { // characters, in any script
		badParam(w, "q", "q is longer than 200 characters; search for part of an e-mail address or name.")
		return
	}
	s.writeChecks(r.Context())
	// Read before the page: the page is at least as new as it.
	rev, err := s.Store.Revision(r.Context(), ext.ID)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	testers, err := s.Store.FindTesters(r.Context(), f)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	page := cursorPage(s, list, testers, limit, func(t *betaport.Tester) int64 { return t.ID })
	page.Revision = rev.Testers
	writeJSONPage(w, r, page)
}

// handleRevokeTester revokes a tester: their sessions and their link stop
// working at once. Revoking twice is fine.
func (s *Server) handleRevokeTester(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	t, ok := s.testerOf(w, r, ext)
	if !ok {
		return
	}
	if err := s.Store.RevokeTester(r.Context(), t.ID, who.actor()); err != nil {
		s.Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleInviteLink signs a tester in from their personal link, once, and
// sends them to their builds. A link that no longer works (used by another
// browser, expired, replaced) sends a browser to the sign-in page, which
// says why and to ask for a new one; other clients get a problem. Opened
// again in the browser it signed in, the link goes to the builds.
func (s *Server) handleInviteLink(w http.ResponseWriter, r *http.Request, who *subject) {
	if refusesTokens(w, r) {
		return
	}
	if r.Method == http.MethodHead {
		// Mail scanners and link previews look before the tester does:
		// a look must not use up a link that works once.
		w.Header().Set("Cache-Control", "no-store")
		return
	}
	hash := credential.HashToken(r.PathValue("token"))
	html := strings.Contains(r.Header.Get("Accept"), "text/html")
	used, err := s.Store.UseInvite(r.Context(), hash, s.now())
	if err == nil {
		if err := s.startSession(w, r, &betaport.Session{TesterID: used.ID}); err != nil {
			s.Error(w, r, err)
			return
		}
		s.Metrics.Session(metrics.SessionTesterLink)
		// The token must not stay in the address bar or the history.
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, "/builds", http.StatusSeeOther)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	var refused *betaport.Error
	if errors.As(err, &refused) && (refused.Reason == betaport.ReasonInviteUsed || refused.Reason == betaport.ReasonInviteExpired) {
		if t, ferr := s.Store.FindTesterByInvite(r.Context(), hash); ferr == nil && who.tester != nil && who.tester.ID == t.ID {
			http.Redirect(w, r, "/builds", http.StatusSeeOther)
			return
		}
		s.Logger.InfoContext(r.Context(), "invite link refused", "reason", refused.Reason)
		if html {
			http.Redirect(w, r, "/login?link="+strings.TrimPrefix(refused.Reason, "invite_"), http.StatusSeeOther)
			return
		}
		s.Error(w, r, err)
		return
	}
	if betaport.ErrorCode(err) == betaport.EFORBIDDEN {
		// A revoked tester's link: a session that says so, so that the
		// app tells them their access ended and whom to ask, rather than
		// showing the admins' sign-in.
		t, err := s.Store.FindTesterByInvite(r.Context(), hash)
		if err == nil {
			err = s.startSession(w, r, &betaport.Session{TesterID: t.ID})
		}
		switch {
		case err != nil:
			s.Error(w, r, err)
		case html:
			http.Redirect(w, r, ui.PathEnded, http.StatusSeeOther)
		default:
			s.Error(w, r, s.accessEnded(r.Context(), t))
		}
		return
	}
	if betaport.ErrorCode(err) != betaport.ENOTFOUND {
		s.Error(w, r, err)
		return
	}
	if html {
		http.Redirect(w, r, "/login?link=invalid", http.StatusSeeOther)
		return
	}
	writeProblem(w, problem(http.StatusNotFound, api.ProblemNotFound,
		"This invite link no longer works. Ask the extension's admin for a new one."))
}

// handleInstalls counts the extension's testers by the build their copies
// last reported ("37 of 50 testers on the current build"), with this
// replica's checks not yet written.
func (s *Server) handleInstalls(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	s.writeChecks(r.Context())
	current, err := s.currentVersion(r.Context(), ext)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	// Read before the counts: they are at least as new as it.
	rev, err := s.Store.Revision(r.Context(), ext.ID)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	n, err := s.Store.CountInstalls(r.Context(), ext.ID, current, s.now().Add(-betaport.SilentDays*24*time.Hour))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	n.Revision = rev.Testers
	w.Header().Set("Cache-Control", "no-cache")
	writeJSON(w, r, http.StatusOK, n)
}

// writeChecks writes this replica's update checks not yet written, so that
// what a read answers includes every check made before it was asked for.
// A failure is logged: the checks stay for the next write.
func (s *Server) writeChecks(ctx context.Context) {
	if s.Publish == nil || s.Publish.Adoption == nil {
		return
	}
	if err := s.Publish.Adoption.Flush(ctx); err != nil {
		s.Logger.WarnContext(ctx, "writing update checks", "err", err)
	}
}

// currentVersion is the version of ext's current bundle, "" before the
// first.
func (s *Server) currentVersion(ctx context.Context, ext *betaport.Extension) (string, error) {
	if ext.CurrentBundle == 0 {
		return "", nil
	}
	b, err := s.Store.FindBundle(ctx, ext.ID, ext.CurrentBundle)
	if err != nil {
		return "", err
	}
	return b.Version, nil
}
