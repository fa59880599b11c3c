package http

import (
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
)

// handleInviteTester adds a tester and answers their personal link, shown
// this once: only its hash is kept.
func (s *Server) handleInviteTester(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	var in api.Invite
	if !s.readJSON(w, r, &in) {
		return
	}
	token := credential.NewToken()
	t := &betaport.Tester{ExtensionID: ext.ID, Email: in.Email, Name: in.Name, Status: betaport.TesterInvited}
	if err := s.Store.InviteTester(r.Context(), t, credential.HashToken(token)); err != nil {
		s.Error(w, r, err)
		return
	}
	w.Header().Set("Location", api.TesterPath(ext.ID, t.ID))
	writeJSON(w, r, http.StatusCreated, api.Invited{Tester: *t, InviteURL: s.BaseURL + api.InvitePrefix + token})
}

var testerStatuses = map[string]bool{betaport.TesterInvited: true, betaport.TesterActive: true, betaport.TesterRevoked: true}

// handleListTesters answers a cursor-paged list of an extension's testers,
// newest first.
func (s *Server) handleListTesters(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	q := r.URL.Query()
	limit, ok := limitParam(w, q)
	if !ok {
		return
	}
	f := betaport.TesterFilter{ExtensionID: ext.ID, Limit: limit + 1, Query: strings.TrimSpace(q.Get("q")), Status: q.Get("status")}
	if f.Status != "" && !testerStatuses[f.Status] {
		badParam(w, "status", "status must be invited, active or revoked (or absent for all).")
		return
	}
	if utf8.RuneCountInString(f.Query) > 200 { // characters, in any script
		badParam(w, "q", "q is longer than 200 characters; search for part of an e-mail address or name.")
		return
	}
	list := "testers/" + strconv.FormatInt(ext.ID, 10)
	if c := q.Get("cursor"); c != "" || q.Has("cursor") {
		id, ok := s.decodeCursor(list, c)
		if !ok {
			badParam(w, "cursor", "cursor is not one this list gave out; start again from the first page, without a cursor.")
			return
		}
		f.BeforeID = id
	}
	testers, err := s.Store.FindTesters(r.Context(), f)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	page := api.Page[betaport.Tester]{Data: make([]betaport.Tester, 0, limit)}
	for i, t := range testers {
		if i == limit {
			page.NextCursor = s.encodeCursor(list, testers[i-1].ID)
			break
		}
		page.Data = append(page.Data, *t)
	}
	writeJSONPage(w, r, page)
}

// handleRevokeTester revokes a tester: their sessions end and their link
// stops working at once. Revoking twice is fine.
func (s *Server) handleRevokeTester(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	id, ok := pathID(w, r, "testerId")
	if !ok {
		return
	}
	t, err := s.Store.FindTester(r.Context(), id)
	if err == nil && t.ExtensionID != ext.ID {
		err = betaport.Errorf(betaport.ENOTFOUND, "There is no such tester.")
	}
	if err == nil {
		err = s.Store.RevokeTester(r.Context(), id)
	}
	if err != nil {
		s.Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleInviteLink signs a tester in from their personal link and sends them
// to their builds. A link that no longer works sends a browser to the sign-in
// page, which says so; other clients get a problem.
func (s *Server) handleInviteLink(w http.ResponseWriter, r *http.Request, _ *subject) {
	t, err := s.Store.FindTesterByInvite(r.Context(), credential.HashToken(r.PathValue("token")))
	if err == nil && t.Status == betaport.TesterRevoked {
		err = betaport.Errorf(betaport.ENOTFOUND, "This invite link no longer works. Ask the extension's admin for a new one.")
	}
	if betaport.ErrorCode(err) == betaport.ENOTFOUND {
		if strings.Contains(r.Header.Get("Accept"), "text/html") {
			http.Redirect(w, r, "/login?link=invalid", http.StatusSeeOther)
			return
		}
		writeProblem(w, problem(http.StatusNotFound, api.ProblemNotFound,
			"This invite link no longer works. Ask the extension's admin for a new one."))
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	if err := s.Store.ActivateTester(r.Context(), t.ID); err != nil {
		s.Error(w, r, err)
		return
	}
	if err := s.startSession(w, r, &betaport.Session{TesterID: t.ID}); err != nil {
		s.Error(w, r, err)
		return
	}
	// The token must not stay in the address bar or the history.
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, "/builds", http.StatusSeeOther)
}
