package api

import (
	"strconv"

	"github.com/betaport/betaport/app/betaport"
)

// WebhooksPath lists an extension's webhooks (GET, cursor-paged) and adds
// one (POST a NewWebhook; the answer, a CreatedWebhook, is the only time
// its secret is shown).
func WebhooksPath(extensionID int64) string { return ExtensionPath(extensionID) + "/webhooks" }

// WebhookPath deletes one webhook (DELETE): its pending deliveries stop.
func WebhookPath(extensionID, webhookID int64) string {
	return WebhooksPath(extensionID) + "/" + strconv.FormatInt(webhookID, 10)
}

// WebhookDeliveriesPath lists a webhook's deliveries, newest first,
// cursor-paged.
func WebhookDeliveriesPath(extensionID, webhookID int64) string {
	return WebhookPath(extensionID, webhookID) + "/deliveries"
}

// WebhookTestPath sends a ping event to one webhook (POST; answers 202
// with its delivery).
func WebhookTestPath(extensionID, webhookID int64) string {
	return WebhookPath(extensionID, webhookID) + "/test"
}

// NewWebhook is the body of POST /api/extensions/{id}/webhooks.
type NewWebhook struct {
	URL string `json:"url"`
}

// CreatedWebhook answers a new webhook: its record and the secret that
// signs its events, shown this once.
type CreatedWebhook struct {
	betaport.Webhook
	Secret string `json:"secret"`
}

// ProblemInvalidWebhookURL refuses a webhook URL that is not an absolute
// http(s) URL, holds a user or password, or is over 2048 characters.
const ProblemInvalidWebhookURL = "/problems/invalid-webhook-url"

// WebhookSecretPrefix starts every webhook secret.
const WebhookSecretPrefix = "whsec_"
