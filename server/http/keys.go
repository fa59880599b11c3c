package http

import (
	"net/http"
	"strconv"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/publish"
)

// handleCreateKey creates the extension's submit key, replacing (rotating)
// the previous one, and answers the key file. The key is shown only now.
func (s *Server) handleCreateKey(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	key := credential.NewToken()
	if err := s.Store.SetExtensionKey(r.Context(), ext.ID, publish.HashKey(key)); err != nil {
		s.Error(w, r, err)
		return
	}
	w.Header().Set("Content-Disposition", `attachment; filename="key.json"`)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, r, http.StatusOK, api.KeyFile{Service: api.ServiceKey{
		ExtensionID: strconv.FormatInt(ext.ID, 10),
		APIKey:      key,
	}})
}
