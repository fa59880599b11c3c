package betaport

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Webhook event types: what a receiver finds in Betaport-Event and in the
// body's "type".
const (
	EventBundlePublished  = "bundle.published"
	EventBundleRolledBack = "bundle.rolled_back"
	EventBundlePromoted   = "bundle.promoted"
	EventRolloutStarted   = "rollout.started"
	EventRolloutAdvanced  = "rollout.advanced"
	EventRolloutHalted    = "rollout.halted"
	EventRolloutResumed   = "rollout.resumed"
	EventRolloutCompleted = "rollout.completed"
	EventFeedbackCreated  = "feedback.created"
	EventFeedbackResolved = "feedback.resolved"
	EventPing             = "ping"
)

// Delivery states. A delivery is pending until a receiver answers 2xx
// (delivered) or its retries run out 24 hours after the event, or its
// webhook is deleted (failed).
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// MaxWebhookURL is the longest webhook URL taken, in bytes.
const MaxWebhookURL = 2048

// WebhookRetryWindow is how long after its event a delivery is retried.
const WebhookRetryWindow = 24 * time.Hour

// DeliveryRetention is how long a finished delivery (delivered, or failed
// for good) is kept for its webhook's list, and its event with it.
const DeliveryRetention = 30 * 24 * time.Hour

// Webhook is a URL that receives an extension's events, each POST signed
// with its secret. The secret is shown only once, when the webhook is
// made, and stored sealed with the service's keyring (it must sign, so it
// is sealed rather than hashed): read back from a store, Secret is the
// sealed value.
type Webhook struct {
	ID          int64     `json:"id"`
	ExtensionID int64     `json:"-"`
	URL         string    `json:"url"`
	CreatedAt   time.Time `json:"createdAt"`
	CreatedBy   string    `json:"createdBy"`

	Secret    string     `json:"-"`
	DeletedAt *time.Time `json:"-"`
}

// Validate reports what is wrong with a webhook about to be saved.
func (w *Webhook) Validate() error {
	if err := ValidateWebhookURL(w.URL); err != nil {
		return err
	}
	switch {
	case w.ExtensionID <= 0:
		return Errorf(EINVALID, "A webhook belongs to an extension.")
	case w.Secret == "":
		return Errorf(EINVALID, "A webhook needs the secret it signs with.")
	case strings.TrimSpace(w.CreatedBy) == "":
		return &Error{Code: EINVALID, Param: "createdBy", Message: "A webhook records who made it."}
	}
	return nil
}

// ValidateWebhookURL reports what is wrong with a webhook's URL: it must be
// an absolute http or https URL with a host, no user or password (they
// would be sent to the receiver with every event, and shown on the page),
// and at most MaxWebhookURL bytes. Where it points is checked when an event
// is sent, as names may resolve elsewhere later.
func ValidateWebhookURL(raw string) error {
	bad := func(msg string) error { return &Error{Code: EINVALID, Param: "url", Message: msg} }
	if len(raw) > MaxWebhookURL {
		return bad("A webhook URL is at most 2048 characters. Use a shorter address.")
	}
	u, err := url.Parse(raw)
	switch {
	case raw == "" || strings.TrimSpace(raw) != raw || strings.ContainsAny(raw, " \t\r\n"):
		return bad("Give the full address that receives the events, like https://ci.example.com/betaport, without spaces.")
	case err != nil || !u.IsAbs() || u.Opaque != "":
		return bad("Give the full address that receives the events, like https://ci.example.com/betaport.")
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("A webhook URL starts with https:// (or http://).")
	case u.Hostname() == "":
		return bad("A webhook URL names a host, like https://ci.example.com/betaport.")
	case u.User != nil:
		return bad("A webhook URL cannot hold a user name or password: verify the Betaport-Signature header instead.")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return bad("A webhook URL has no #fragment: it is never sent to the receiver.")
	case !validPort(u):
		return bad("The port of a webhook URL is a number from 1 to 65535, like https://ci.example.com:8443/betaport, or none for the scheme's own.")
	}
	return nil
}

// validPort reports whether u names no port, or one a connection can be
// made to (1–65535, digits only).
func validPort(u *url.URL) bool {
	p := u.Port()
	if p == "" {
		return !strings.HasSuffix(u.Host, ":") // "host:" names an empty port
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535 && p[0] != '0'
}

// EventExtension names the extension an event is about.
type EventExtension struct {
	ID   string `json:"id"` // as the API spells it in key files
	Name string `json:"name"`
}

// EventBundle is the bundle an event is about.
type EventBundle struct {
	Number       int64  `json:"number"`
	Version      string `json:"version"`
	VersionName  string `json:"versionName,omitempty"`
	ReleaseNotes string `json:"releaseNotes,omitempty"`
	RollbackOf   int64  `json:"rollbackOf,omitempty"`
	SHA256       string `json:"sha256"`
	DownloadPath string `json:"downloadPath"`
}

// WebhookEvent is one event as every webhook of its extension receives it:
// the body of the POST. It is kept in an outbox, written in the same
// transaction as what it reports.
type WebhookEvent struct {
	ID        string         `json:"id"`
	Type      string         `json:"type"`
	CreatedAt time.Time      `json:"createdAt"`
	Extension EventExtension `json:"extension"`
	Bundle    *EventBundle   `json:"bundle,omitempty"`
	// Channel is the channel the bundle was published, promoted or rolled
	// out to.
	Channel string        `json:"channel,omitempty"`
	Rollout *EventRollout `json:"rollout,omitempty"`
	// Feedback is the report a feedback event is about: links to it and
	// its screenshots, never their bytes.
	Feedback *EventFeedback `json:"feedback,omitempty"`
}

// EventFeedback is a tester's report as its events carry it.
type EventFeedback struct {
	ID           int64  `json:"id"`
	Status       string `json:"status"`
	Tester       string `json:"tester"` // their e-mail address
	BundleNumber int64  `json:"bundleNumber"`
	Version      string `json:"version"`
	Text         string `json:"text"`
	Source       string `json:"source"`
	Browser      string `json:"browser"`
	OS           string `json:"os"`
	// PagePath is the report in the admins' feedback list, APIPath the
	// report in the API; ScreenshotPaths its screenshots (each for the
	// extension's admins, signed in).
	PagePath        string   `json:"pagePath"`
	APIPath         string   `json:"apiPath"`
	ScreenshotPaths []string `json:"screenshotPaths"`
}

// EventRollout is the rollout an event is about, as it is after the event.
type EventRollout struct {
	ID       int64  `json:"id"`
	Percent  int    `json:"percent"`
	State    string `json:"state"`
	Previous int64  `json:"previous"` // the bundle the testers it does not reach keep
}

// WebhookDelivery is one event on its way to one webhook: attempted until a
// 2xx answer, with backoff, for WebhookRetryWindow after the event.
type WebhookDelivery struct {
	ID        int64  `json:"id"`
	WebhookID int64  `json:"-"`
	EventID   string `json:"eventId"`
	Type      string `json:"type"`
	State     string `json:"state"`
	Attempts  int    `json:"attempts"`
	// LastStatus is the HTTP status of the last answer; 0 when none came.
	LastStatus int `json:"lastStatus"`
	// LastError says why the last attempt did not deliver.
	LastError string `json:"lastError"`
	// Response is the start (MaxDeliveryResponse bytes) of the last
	// answer's body.
	Response      string     `json:"response"`
	CreatedAt     time.Time  `json:"createdAt"`
	DeliveredAt   *time.Time `json:"deliveredAt,omitempty"`
	NextAttemptAt *time.Time `json:"nextAttemptAt,omitempty"`

	// What a claimed delivery is sent with (never answered by the API);
	// Secret is its webhook's, as stored (sealed).
	URL       string    `json:"-"`
	Secret    string    `json:"-"`
	Body      []byte    `json:"-"`
	ExpiresAt time.Time `json:"-"`
}

// DeliveryInterrupted is the error of an attempt cut short before its
// answer was recorded: the service stopped (or crashed) during it. The
// event is sent again; the receiver may have had it (delivery is at least
// once).
const DeliveryInterrupted = "Interrupted: the service stopped before an answer came; the event is sent again."

// MaxDeliveryResponse is how much of a receiver's answer is kept.
const MaxDeliveryResponse = 1024

// DeliveryResult is what one attempt of a claimed delivery came to.
type DeliveryResult struct {
	DeliveryID int64
	Attempt    int // the delivery's Attempts when claimed
	Claimer    string
	Status     int // 0 when no answer came
	Error      string
	Response   string
	At         time.Time
	// Delivered is true for a 2xx answer. Otherwise NextAttemptAt is when
	// to try again, or zero when no attempt is left (the delivery fails).
	Delivered     bool
	NextAttemptAt time.Time
}

// SealFunc seals a secret for the row of the given id, as it is to be
// stored: sealed with the service's keyring and bound to that row.
type SealFunc func(id int64, secret string) (string, error)

// WebhookStore keeps webhooks, the outbox of their events and the
// deliveries. Publishing a bundle (BundleStore, UploadStore) writes its
// event and one delivery per webhook in the same transaction.
type WebhookStore interface {
	// CreateWebhook adds w and records it in the audit trail. Its secret
	// is stored as seal makes it for the new webhook's id, in the same
	// transaction: w.Secret itself never reaches the database, and a seal
	// that fails stores nothing.
	CreateWebhook(ctx context.Context, w *Webhook, seal SealFunc) error
	// WebhookSecrets returns every webhook's stored secret, by webhook
	// (deleted webhooks keep none).
	WebhookSecrets(ctx context.Context) (map[int64]string, error)
	// ReplaceWebhookSecret stores a webhook's secret sealed anew, if what
	// is stored is still old.
	ReplaceWebhookSecret(ctx context.Context, id int64, old, sealed string) error
	// FindWebhook returns an extension's webhook unless deleted.
	FindWebhook(ctx context.Context, extensionID, id int64) (*Webhook, error)
	// FindWebhooks returns up to limit of an extension's webhooks that are
	// not deleted, newest first, keyset-paged by id.
	FindWebhooks(ctx context.Context, extensionID, beforeID int64, limit int) ([]*Webhook, error)
	// DeleteWebhook deletes a webhook: its pending deliveries fail and no
	// event reaches it again. It is recorded in the audit trail.
	DeleteWebhook(ctx context.Context, extensionID, id int64, actor string) error
	// PingWebhook writes a ping event for one webhook, and its delivery.
	PingWebhook(ctx context.Context, extensionID, webhookID int64) (*WebhookDelivery, error)
	// FindDeliveries returns up to limit of a webhook's deliveries, newest
	// first, keyset-paged by id.
	FindDeliveries(ctx context.Context, webhookID, beforeID int64, limit int) ([]*WebhookDelivery, error)
	// ClaimDeliveries leases up to limit due deliveries to claimer until
	// now+lease, counting an attempt of each: a delivery is due when its
	// next attempt time has come, no lease on it is running and no earlier
	// delivery to the same webhook is pending. Claimers racing on one
	// database (replicas) never both claim one attempt.
	ClaimDeliveries(ctx context.Context, claimer string, now time.Time, lease time.Duration, limit int) ([]*WebhookDelivery, error)
	// RecordDelivery records an attempt's result, if the attempt's lease
	// is still the claimer's.
	RecordDelivery(ctx context.Context, r DeliveryResult) error
	// PruneDeliveries removes the finished deliveries (delivered, or
	// failed for good) made before t, and the events no delivery needs any
	// more. It returns how many deliveries it removed.
	PruneDeliveries(ctx context.Context, t time.Time) (int64, error)
	// DeliveriesAdded receives (without blocking the writer) after this
	// store wrote new deliveries, so the worker beside it sends them at
	// once rather than at its next poll.
	DeliveriesAdded() <-chan struct{}
}

// Audit actions of webhooks.
const (
	AuditWebhookCreated = "webhook.created"
	AuditWebhookDeleted = "webhook.deleted"
)
