package http

import (
	"net/http"
	"strconv"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/publish"
)

// An extension's named submit keys and its audit trail, for its admins.

// handleCreateKey adds a named key and answers its record with the key
// file, the only time the secret is shown. The other keys keep working.
func (s *Server) handleCreateKey(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	var in api.NewKey
	if !s.readJSON(w, r, &in) {
		return
	}
	secret := credential.NewToken()
	k := &betaport.Key{ExtensionID: ext.ID, Label: in.Label, CreatedBy: who.actor(), Channel: in.Channel}
	if err := s.Store.CreateKey(r.Context(), k, publish.HashKey(secret)); err != nil {
		s.Error(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Location", api.KeyPath(ext.ID, k.ID))
	writeJSON(w, r, http.StatusCreated, api.CreatedKey{Key: *k, KeyFile: api.KeyFile{Service: api.ServiceKey{
		ExtensionID: strconv.FormatInt(ext.ID, 10),
		APIKey:      secret,
	}}})
}

// handleListKeys answers an extension's keys, revoked ones too, newest
// first, cursor-paged.
func (s *Server) handleListKeys(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	list := "keys/" + strconv.FormatInt(ext.ID, 10)
	before, limit, ok := s.pageParams(w, r.URL.Query(), list)
	if !ok {
		return
	}
	keys, err := s.Store.FindKeys(r.Context(), ext.ID, before, limit+1)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSONPage(w, r, cursorPage(s, list, keys, limit, func(k *betaport.Key) int64 { return k.ID }))
}

// handleRevokeKey revokes one key at once: the next call made with it is
// refused. Revoking twice is fine.
func (s *Server) handleRevokeKey(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	id, ok := pathID(w, r, "keyId")
	if !ok {
		return
	}
	k, err := s.Store.RevokeKey(r.Context(), ext.ID, id, who.actor())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, k)
}

// handleListAudit answers an extension's audit trail, newest first,
// cursor-paged.
func (s *Server) handleListAudit(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	list := "audit/" + strconv.FormatInt(ext.ID, 10)
	before, limit, ok := s.pageParams(w, r.URL.Query(), list)
	if !ok {
		return
	}
	events, err := s.Store.FindAuditEvents(r.Context(), ext.ID, before, limit+1)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSONPage(w, r, cursorPage(s, list, events, limit, func(e *betaport.AuditEvent) int64 { return e.ID }))
}
