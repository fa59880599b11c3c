package model

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
)

// The settings page's webhooks: an extension's webhooks, a form that adds
// one (and shows its secret, once), and each webhook's recent deliveries,
// read again while the page is open so an outcome and new events show
// without a reload, with "Send test event" and Delete, which asks first.

// WebhooksFocus is where the webhooks section moves the focus after a
// change.
type WebhooksFocus int

const (
	WebhooksFocusURL     WebhooksFocus = iota + 1 // the URL field
	WebhooksFocusSecret                           // the new webhook's secret
	WebhooksFocusConfirm                          // a webhook's "Yes, delete"
	WebhooksFocusDelete                           // a webhook's Delete button
)

// WebhookDeliveriesShown is how many of a webhook's recent deliveries are
// shown.
const WebhookDeliveriesShown = 5

// A webhook's deliveries are read again every WebhookPoll while one is
// pending, and every WebhookIdlePoll otherwise, so new events show up.
const (
	WebhookPoll     = time.Second
	WebhookIdlePoll = 5 * time.Second
)

// webhooksListed is how many webhooks are read: an extension has a handful.
const webhooksListed = 100

// WebhooksConfig is what a Webhooks needs from its page.
type WebhooksConfig struct {
	// Env runs the requests and the timers; its Context is the section's
	// for one extension.
	Env         Env
	ExtensionID int64
	// Focus moves the focus; hookID names the webhook's row (0 for the
	// form's fields).
	Focus func(f WebhooksFocus, hookID int64)
	// ClearURL empties the URL field, once its webhook is added.
	ClearURL func()
	// Copy puts text on the clipboard, reporting false when the page has
	// none: the secret is then focused to be copied by hand.
	Copy func(text string) bool
	// SignedOut and ErrorText are as in SettingsConfig.
	SignedOut func(error) bool
	ErrorText func(error) string
}

// Webhook is one webhook as its row shows it.
type Webhook struct {
	betaport.Webhook
	// Deliveries are its recent deliveries, newest first.
	Deliveries []betaport.WebhookDelivery
	// Err is why its last request (deliveries, test, delete) failed.
	Err error
	// Asking: the question before deleting it is open; Deleting: the
	// delete is on its way; Testing: a test event is being sent.
	Asking, Deleting, Testing bool
	// ConfirmReady: the question's "Yes, delete" takes a press (not until
	// ConfirmDelay after it showed).
	ConfirmReady bool
	askedAt      time.Time
}

// Webhooks is the webhooks section's state. Its fields and methods are
// for the UI goroutine.
type Webhooks struct {
	cfg WebhooksConfig

	ExtensionID int64

	// Hooks are the extension's webhooks, newest first; Loading while
	// they are read, Err why they could not be.
	Hooks   []Webhook
	Loading bool
	Err     error

	// URL is the address typed for the next webhook; Busy while it is
	// being added; CreateErr why it was not, and URLInvalid when the
	// service refused the URL itself (its problem names the url).
	URL        string
	Busy       bool
	CreateErr  error
	URLInvalid bool
	// Secret is the new webhook's (SecretURL), shown until another is
	// added, it is deleted, or the page is left: it is never shown again.
	Secret, SecretURL string
	// Copied: the secret was put on the clipboard.
	Copied bool
	// Announce is the latest text of the section's live region.
	Announce string

	polls map[int64]*webhookPoll
}

// webhookPoll is a webhook's deliveries being read again and again.
type webhookPoll struct {
	reading bool
	due     time.Time   // when the next read is set for
	stop    func() bool // its timer, nil when none is set
}

// NewWebhooks returns the webhooks section of cfg.ExtensionID; Load reads
// them.
func NewWebhooks(cfg WebhooksConfig) *Webhooks {
	return &Webhooks{cfg: cfg, ExtensionID: cfg.ExtensionID, polls: map[int64]*webhookPoll{}}
}

// Load reads the extension's webhooks, then each one's deliveries.
func (w *Webhooks) Load() {
	w.Loading = true
	ext := w.ExtensionID
	Call(w.cfg.Env, func(ctx context.Context, c *client.Client) (api.Page[betaport.Webhook], error) {
		var page api.Page[betaport.Webhook]
		err := c.Do(ctx, http.MethodGet, api.WebhooksPath(ext)+"?limit="+strconv.Itoa(webhooksListed), nil, &page)
		return page, err
	}, func(page api.Page[betaport.Webhook], err error) {
		if settingsSignedOut(w.cfg.SignedOut, err) {
			return
		}
		w.Loading, w.Err = false, err
		if err != nil {
			return
		}
		old := w.Hooks
		w.Hooks = make([]Webhook, 0, len(page.Data))
		for _, h := range page.Data {
			row := Webhook{Webhook: h}
			for _, o := range old {
				if o.ID == h.ID {
					row = o
					row.Webhook = h
				}
			}
			w.Hooks = append(w.Hooks, row)
		}
		for id := range w.polls {
			if w.Hook(id) == nil {
				w.stopPoll(id)
			}
		}
		for _, h := range w.Hooks {
			w.watch(h.ID)
		}
	})
}

// Close stops reading the deliveries (the section is gone; its context
// ending stops them too).
func (w *Webhooks) Close() {
	for id := range w.polls {
		w.stopPoll(id)
	}
}

// Hook returns the webhook id, nil when the list has none.
func (w *Webhooks) Hook(id int64) *Webhook {
	for i := range w.Hooks {
		if w.Hooks[i].ID == id {
			return &w.Hooks[i]
		}
	}
	return nil
}

// SetURL follows the URL field as it is typed.
func (w *Webhooks) SetURL(url string) { w.URL = url }

// Add adds a webhook at the typed URL. Refused, the error shows by the
// field, which keeps what was typed; added, the field is emptied and the
// new webhook's secret shows. A press while one is being added does
// nothing.
func (w *Webhooks) Add() {
	if w.Busy {
		return
	}
	w.Busy, w.CreateErr, w.URLInvalid, w.Copied = true, nil, false, false
	ext, url := w.ExtensionID, w.URL
	Call(w.cfg.Env, func(ctx context.Context, c *client.Client) (api.CreatedWebhook, error) {
		var out api.CreatedWebhook
		err := c.Do(ctx, http.MethodPost, api.WebhooksPath(ext), api.NewWebhook{URL: url}, &out)
		return out, err
	}, func(out api.CreatedWebhook, err error) {
		w.Busy = false
		if settingsSignedOut(w.cfg.SignedOut, err) {
			return
		}
		w.CreateErr = err
		if err != nil {
			p, ok := api.AsProblem(err)
			w.URLInvalid = ok && p.Param == "url"
			w.Announce = "The webhook was not added: " + settingsErrorText(w.cfg.ErrorText, err)
			w.focus(WebhooksFocusURL, 0)
			return
		}
		w.Secret, w.SecretURL = out.Secret, out.URL
		// The field is emptied for the next one, unless another address
		// was typed meanwhile.
		if w.URL == url {
			w.URL = ""
			if w.cfg.ClearURL != nil {
				w.cfg.ClearURL()
			}
		}
		if w.Hook(out.ID) == nil {
			w.Hooks = append([]Webhook{{Webhook: out.Webhook}}, w.Hooks...)
		}
		w.watch(out.ID)
		w.Announce = "Webhook added. Copy its secret now: it is not shown again."
		w.focus(WebhooksFocusSecret, 0)
	})
}

// CopySecret copies the new webhook's secret, or selects it to be copied
// by hand.
func (w *Webhooks) CopySecret() {
	if w.Secret == "" {
		return
	}
	if w.cfg.Copy != nil && w.cfg.Copy(w.Secret) {
		w.Copied = true
		w.Announce = "Secret copied."
		return
	}
	w.focus(WebhooksFocusSecret, 0)
}

// Test sends a test event (a ping) to webhook id: its delivery shows at
// once, pending, and its outcome once the service has it. A press while
// one is being sent does nothing.
func (w *Webhooks) Test(id int64) {
	h := w.Hook(id)
	if h == nil || h.Testing {
		return
	}
	h.Testing, h.Err = true, nil
	ext := w.ExtensionID
	Call(w.cfg.Env, func(ctx context.Context, c *client.Client) (betaport.WebhookDelivery, error) {
		var d betaport.WebhookDelivery
		err := c.Do(ctx, http.MethodPost, api.WebhookTestPath(ext, id), nil, &d)
		return d, err
	}, func(d betaport.WebhookDelivery, err error) {
		h := w.Hook(id)
		if h == nil || settingsSignedOut(w.cfg.SignedOut, err) {
			return
		}
		h.Testing, h.Err = false, err
		if err != nil {
			return
		}
		h.Deliveries = webhookPrepend(h.Deliveries, d)
		w.schedule(id)
	})
}

// webhookPrepend puts d on top of list (replacing the same delivery read
// meanwhile), keeping WebhookDeliveriesShown.
func webhookPrepend(list []betaport.WebhookDelivery, d betaport.WebhookDelivery) []betaport.WebhookDelivery {
	out := []betaport.WebhookDelivery{d}
	for _, o := range list {
		if o.ID != d.ID {
			out = append(out, o)
		}
	}
	return out[:min(len(out), WebhookDeliveriesShown)]
}

// AskDelete opens webhook id's question before it is deleted, with the
// focus on its "Yes, delete" (which takes a press only after
// ConfirmDelay; pressed again, Delete keeps the question as it is).
func (w *Webhooks) AskDelete(id int64) {
	h := w.Hook(id)
	if h == nil {
		return
	}
	if !h.Asking {
		h.Asking, h.ConfirmReady, h.askedAt = true, false, w.cfg.Env.clock().Now()
		env := w.cfg.Env
		env.clock().AfterFunc(ConfirmDelay, func() {
			env.Dispatch(func() {
				if h := w.Hook(id); h != nil && h.Asking {
					h.ConfirmReady = confirmReady(h.askedAt, env.clock().Now())
				}
			})
		})
	}
	w.focus(WebhooksFocusConfirm, id)
}

// Keep closes webhook id's question: it is kept.
func (w *Webhooks) Keep(id int64) {
	if h := w.Hook(id); h != nil && !h.Deleting {
		h.Asking = false
		w.focus(WebhooksFocusDelete, id)
	}
}

// Delete deletes webhook id once its question is open (its "Yes,
// delete"): it leaves the list and gets no more events. Pressed again
// while it is on its way, or within ConfirmDelay of the question showing,
// it does nothing.
func (w *Webhooks) Delete(id int64) {
	h := w.Hook(id)
	if h == nil || !h.Asking || h.Deleting || !confirmReady(h.askedAt, w.cfg.Env.clock().Now()) {
		return
	}
	h.Deleting, h.Err = true, nil
	ext, hook := w.ExtensionID, h.Webhook
	Call(w.cfg.Env, func(ctx context.Context, c *client.Client) (struct{}, error) {
		return struct{}{}, c.Do(ctx, http.MethodDelete, api.WebhookPath(ext, id), nil, nil)
	}, func(_ struct{}, err error) {
		h := w.Hook(id)
		if h == nil || settingsSignedOut(w.cfg.SignedOut, err) {
			return
		}
		h.Deleting, h.Asking, h.Err = false, false, err
		if err != nil {
			return
		}
		w.remove(hook)
	})
}

// remove drops a deleted webhook from the list, and its secret if it is
// the one shown.
func (w *Webhooks) remove(h betaport.Webhook) {
	for i := range w.Hooks {
		if w.Hooks[i].ID == h.ID {
			w.Hooks = append(w.Hooks[:i:i], w.Hooks[i+1:]...)
			break
		}
	}
	w.stopPoll(h.ID)
	if w.SecretURL == h.URL {
		w.Secret, w.SecretURL = "", ""
	}
	w.Announce = "Webhook " + h.URL + " deleted. It gets no more events."
	w.focus(WebhooksFocusURL, 0)
}

// watch starts reading webhook id's deliveries, unless they are read
// already.
func (w *Webhooks) watch(id int64) {
	if w.polls[id] == nil {
		w.polls[id] = &webhookPoll{}
		w.readDeliveries(id)
	}
}

// readDeliveries reads webhook id's recent deliveries, then sets the next
// read.
func (w *Webhooks) readDeliveries(id int64) {
	p := w.polls[id]
	if p == nil || p.reading {
		return
	}
	p.reading = true
	ext := w.ExtensionID
	Call(w.cfg.Env, func(ctx context.Context, c *client.Client) (api.Page[betaport.WebhookDelivery], error) {
		var page api.Page[betaport.WebhookDelivery]
		err := c.Do(ctx, http.MethodGet, api.WebhookDeliveriesPath(ext, id)+"?limit="+strconv.Itoa(WebhookDeliveriesShown), nil, &page)
		return page, err
	}, func(page api.Page[betaport.WebhookDelivery], err error) {
		p.reading = false
		h := w.Hook(id)
		if w.polls[id] != p || h == nil || settingsSignedOut(w.cfg.SignedOut, err) {
			return
		}
		h.Err = err
		if err == nil {
			h.Deliveries = page.Data
		}
		w.schedule(id)
	})
}

// schedule sets webhook id's next read: soon while a delivery is pending,
// later otherwise. A read set later than needed is brought forward.
func (w *Webhooks) schedule(id int64) {
	p, h := w.polls[id], w.Hook(id)
	if p == nil || h == nil {
		return
	}
	every := WebhookIdlePoll
	for _, d := range h.Deliveries {
		if d.State == betaport.DeliveryPending {
			every = WebhookPoll
		}
	}
	clock, page := w.cfg.Env.clock(), w.cfg.Env.context()
	due := clock.Now().Add(every)
	if p.stop != nil {
		if !p.due.After(due) {
			return
		}
		p.stop()
	}
	p.due = due
	p.stop = clock.AfterFunc(every, func() {
		if page.Err() != nil {
			return
		}
		w.cfg.Env.Dispatch(func() {
			if page.Err() != nil || w.polls[id] != p {
				return
			}
			p.stop = nil
			w.readDeliveries(id)
		})
	})
}

func (w *Webhooks) stopPoll(id int64) {
	if p := w.polls[id]; p != nil && p.stop != nil {
		p.stop()
	}
	delete(w.polls, id)
}

func (w *Webhooks) focus(f WebhooksFocus, id int64) {
	if w.cfg.Focus != nil {
		w.cfg.Focus(f, id)
	}
}
