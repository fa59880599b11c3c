package http

import (
	"net/http"
	"strconv"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/webhook"
)

// An extension's webhooks and their deliveries, for its admins. Package
// webhook sends the events; these handlers keep the records.

// handleCreateWebhook adds a webhook and answers it with its secret, the
// only time the secret is shown.
func (s *Server) handleCreateWebhook(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	var in api.NewWebhook
	if !s.readJSON(w, r, &in) {
		return
	}
	err := betaport.ValidateWebhookURL(in.URL)
	if err == nil && !s.WebhookAllowPrivate {
		err = webhook.Refusal(in.URL)
	}
	if err != nil {
		writeProblem(w, &api.Problem{Type: api.ProblemInvalidWebhookURL, Status: http.StatusBadRequest,
			Param: "url", Detail: betaport.ErrorMessage(err)})
		return
	}
	hook := &betaport.Webhook{ExtensionID: ext.ID, URL: in.URL, CreatedBy: who.actor(),
		Secret: api.WebhookSecretPrefix + credential.NewToken()}
	// Stored sealed with the keyring that seals signing keys; the admin
	// sees the secret itself, this once.
	if err := s.Store.CreateWebhook(r.Context(), hook, webhook.Sealer(s.Publish.SigningKeys)); err != nil {
		s.Error(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Location", api.WebhookPath(ext.ID, hook.ID))
	writeJSON(w, r, http.StatusCreated, api.CreatedWebhook{Webhook: *hook, Secret: hook.Secret})
}

// handleListWebhooks answers an extension's webhooks, newest first,
// cursor-paged; never their secrets.
func (s *Server) handleListWebhooks(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	list := "webhooks/" + strconv.FormatInt(ext.ID, 10)
	before, limit, ok := s.pageParams(w, r.URL.Query(), list)
	if !ok {
		return
	}
	hooks, err := s.Store.FindWebhooks(r.Context(), ext.ID, before, limit+1)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSONPage(w, r, cursorPage(s, list, hooks, limit, func(h *betaport.Webhook) int64 { return h.ID }))
}

// handleDeleteWebhook deletes a webhook: its pending deliveries stop.
func (s *Server) handleDeleteWebhook(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	id, ok := pathID(w, r, "webhookId")
	if !ok {
		return
	}
	if err := s.Store.DeleteWebhook(r.Context(), ext.ID, id, who.actor()); err != nil {
		s.Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleListDeliveries answers a webhook's deliveries, newest first,
// cursor-paged.
func (s *Server) handleListDeliveries(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	id, ok := pathID(w, r, "webhookId")
	if !ok {
		return
	}
	if _, err := s.Store.FindWebhook(r.Context(), ext.ID, id); err != nil {
		s.Error(w, r, err)
		return
	}
	list := "deliveries/" + strconv.FormatInt(id, 10)
	before, limit, ok := s.pageParams(w, r.URL.Query(), list)
	if !ok {
		return
	}
	deliveries, err := s.Store.FindDeliveries(r.Context(), id, before, limit+1)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeJSONPage(w, r, cursorPage(s, list, deliveries, limit, func(d *betaport.WebhookDelivery) int64 { return d.ID }))
}

// handleTestWebhook sends a ping to one webhook: 202, as it is sent by the
// worker, with the delivery to watch.
func (s *Server) handleTestWebhook(w http.ResponseWriter, r *http.Request, _ *subject, ext *betaport.Extension) {
	id, ok := pathID(w, r, "webhookId")
	if !ok {
		return
	}
	d, err := s.Store.PingWebhook(r.Context(), ext.ID, id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, r, http.StatusAccepted, d)
}
