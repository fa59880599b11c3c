package ui

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// The settings page's Webhooks section: an extension's webhooks, a form
// that adds one (and shows its secret, once), and each webhook's recent
// deliveries with a "Send test event" button.

// webhooksPanel places the section for the extension's admins, once the
// extension is loaded.
func webhooksPanel(id int64, s *api.Session, loaded bool) app.UI {
	if !loaded || s == nil || s.Kind != api.KindAdmin {
		return app.Div()
	}
	return &webhooksSection{ExtensionID: id}
}

// deliveriesShown is how many of a webhook's recent deliveries are shown.
const deliveriesShown = 5

// A webhook's deliveries are read again every second while one is
// pending, and every few seconds otherwise, so new events show up.
const (
	deliveryPoll     = time.Second
	deliveryIdlePoll = 5 * time.Second
)

type webhooksSection struct {
	app.Compo

	ExtensionID int64

	loadedFor int64
	hooks     []betaport.Webhook
	loading   bool
	err       error

	url       string
	busy      bool
	createErr error
	// secret is the new webhook's, shown until another is made or the
	// page is left: it is never shown again.
	secret, secretURL string
	copied            bool
	announce          string
	ctx               app.Context
}

func (s *webhooksSection) OnMount(ctx app.Context) {
	s.ctx = ctx
	s.load()
}

func (s *webhooksSection) OnUpdate(ctx app.Context) {
	if s.ExtensionID != s.loadedFor {
		s.secret, s.secretURL, s.createErr = "", "", nil
		s.load()
	}
}

// load reads the extension's webhooks (the first hundred: an extension
// has a handful).
func (s *webhooksSection) load() {
	if s.ctx == nil {
		return
	}
	c, id, ctx := apiClient(), s.ExtensionID, s.ctx
	s.loadedFor, s.loading = id, true
	ctx.Async(func() {
		reqCtx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		var page api.Page[betaport.Webhook]
		err := c.Do(reqCtx, http.MethodGet, api.WebhooksPath(id)+"?limit=100", nil, &page)
		ctx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) || id != s.ExtensionID {
				return
			}
			s.loading, s.err = false, err
			if err == nil {
				s.hooks = page.Data
			}
		})
	})
}

func (s *webhooksSection) Render() app.UI {
	copyText := "Copy"
	if s.copied {
		copyText = "Copied"
	}
	var list app.UI
	switch {
	case s.err != nil:
		list = app.P().ID("webhooks-error").Class("state state-error").Attr("role", "alert").Text(problemText(s.err))
	case s.loading && s.hooks == nil:
		list = app.P().ID("webhooks-loading").Class("state state-loading").Attr("role", "status").Text("Loading the webhooks…")
	case len(s.hooks) == 0:
		list = app.P().ID("webhooks-empty").Class("state").Text("No webhooks yet. Add one to hear of every publish and rollback.")
	default:
		list = app.Div().ID("webhooks").Body(app.Range(s.hooks).Slice(func(i int) app.UI {
			return &webhookRow{ExtensionID: s.ExtensionID, Hook: s.hooks[i], OnDeleted: s.deleted}
		}))
	}
	return app.Section().ID("webhooks-section").Class("settings-key settings-webhooks").Aria("labelledby", "webhooks-title").Body(
		app.H2().ID("webhooks-title").Text("Webhooks"),
		app.P().Class("muted").Text("Betaport POSTs each publish and rollback of this extension, as JSON, to every webhook, signed with the webhook's secret in the Betaport-Signature header. A receiver that does not answer 2xx within 10 seconds gets the event again, later, for up to 24 hours; events reach each webhook in order."),
		app.Form().ID("webhook-form").Class("invite").OnSubmit(s.create).Body(
			app.Label().For("webhook-url").Text("URL"),
			typedValue(app.Input().ID("webhook-url").Type("url").Required(true).MaxLength(betaport.MaxWebhookURL).
				Placeholder("https://ci.example.com/betaport").Attr("autocomplete", "off").Attr("spellcheck", "false").
				Aria("invalid", s.createErr != nil).Aria("describedby", map[bool]string{true: "webhook-error"}[s.createErr != nil]), s.url).
				OnInput(ctx2str(&s.url)),
			button().ID("add-webhook").Type("submit").Class("primary").Aria("disabled", s.busy).
				Text(map[bool]string{true: "Adding…", false: "Add webhook"}[s.busy]),
		),
		app.P().ID("webhook-error").Class("state state-error").Attr("role", "alert").Hidden(s.createErr == nil).Text(problemText(s.createErr)),
		app.Div().ID("webhook-created").Class("state state-ok").Attr("role", "status").Hidden(s.secret == "").Body(
			app.P().Body(
				app.Text("Webhook "), app.Strong().Text(s.secretURL),
				app.Text(" added. Its secret verifies the Betaport-Signature of each event. Copy it now: it is not shown again."),
			),
			app.Label().For("webhook-secret").Text("Secret"),
			app.Input().ID("webhook-secret").Type("text").ReadOnly(true).Value(s.secret).
				Attr("spellcheck", "false").Attr("autocomplete", "off").OnFocus(selectAll),
			button().ID("copy-webhook-secret").Type("button").Text(copyText).OnClick(s.copySecret),
		),
		list,
		app.P().ID("webhooks-status").Class("visually-hidden").Attr("role", "status").
			Aria("live", "polite").Aria("atomic", "true").Text(s.announce),
	)
}

func (s *webhooksSection) create(ctx app.Context, e app.Event) {
	e.PreventDefault()
	if s.busy {
		return
	}
	s.busy, s.createErr, s.copied = true, nil, false
	c, id, pageCtx, url := apiClient(), s.ExtensionID, s.ctx, s.url
	ctx.Async(func() {
		reqCtx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		var out api.CreatedWebhook
		err := c.Do(reqCtx, http.MethodPost, api.WebhooksPath(id), api.NewWebhook{URL: url}, &out)
		pageCtx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) || id != s.ExtensionID {
				return
			}
			s.busy, s.createErr = false, err
			if err != nil {
				s.announce = "The webhook was not added: " + problemText(err)
				focusByID(ctx, "webhook-url")
				return
			}
			s.secret, s.secretURL, s.url = out.Secret, out.URL, ""
			setField(ctx, "webhook-url", "")
			s.hooks = append([]betaport.Webhook{out.Webhook}, s.hooks...)
			s.announce = "Webhook added. Copy its secret now: it is not shown again."
			focusByID(ctx, "webhook-secret")
		})
	})
}

func (s *webhooksSection) copySecret(ctx app.Context, e app.Event) {
	if s.secret == "" {
		return
	}
	if cb := app.Window().Get("navigator").Get("clipboard"); cb.Truthy() {
		cb.Call("writeText", s.secret)
		s.copied = true
		s.announce = "Secret copied."
		return
	}
	// No clipboard (a page not served over HTTPS): select it to copy by hand.
	focusByID(s.ctx, "webhook-secret")
}

// deleted drops a deleted webhook from the list (called by its row: the
// section's own context re-renders the section).
func (s *webhooksSection) deleted(h betaport.Webhook) {
	s.ctx.Dispatch(func(app.Context) { s.removeHook(h) })
}

func (s *webhooksSection) removeHook(h betaport.Webhook) {
	for i := range s.hooks {
		if s.hooks[i].ID == h.ID {
			s.hooks = append(s.hooks[:i:i], s.hooks[i+1:]...)
			break
		}
	}
	if s.secretURL == h.URL {
		s.secret, s.secretURL = "", ""
	}
	s.announce = "Webhook " + h.URL + " deleted. It gets no more events."
	focusByID(s.ctx, "webhook-url")
}

// webhookRow is one webhook: its URL, when it was made, its recent
// deliveries, Send test event, and Delete, which asks first. It is its own
// component so its handlers see its own webhook (go-app #1107).
type webhookRow struct {
	app.Compo

	ExtensionID int64
	Hook        betaport.Webhook
	OnDeleted   func(betaport.Webhook)

	deliveries []betaport.WebhookDelivery
	err        error
	asking     bool
	deleting   bool
	testing    bool
	mounted    bool
	polling    bool
	ctx        app.Context
}

func (r *webhookRow) OnMount(ctx app.Context) {
	r.ctx, r.mounted = ctx, true
	r.loadDeliveries()
}

func (r *webhookRow) OnDismount() { r.mounted = false }

// loadDeliveries reads the recent deliveries, and again and again while
// the row is shown, so a delivery's outcome, and new events, show without
// a reload.
func (r *webhookRow) loadDeliveries() {
	if r.ctx == nil || !r.mounted {
		return
	}
	c, ext, hook, ctx := apiClient(), r.ExtensionID, r.Hook.ID, r.ctx
	ctx.Async(func() {
		reqCtx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		var page api.Page[betaport.WebhookDelivery]
		err := c.Do(reqCtx, http.MethodGet, api.WebhookDeliveriesPath(ext, hook)+"?limit="+strconv.Itoa(deliveriesShown), nil, &page)
		ctx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) || !r.mounted || hook != r.Hook.ID {
				return
			}
			r.err = err
			if err == nil {
				r.deliveries = page.Data
			}
			r.pollWhilePending()
		})
	})
}

func (r *webhookRow) pollWhilePending() {
	every := deliveryIdlePoll
	for _, d := range r.deliveries {
		if d.State == betaport.DeliveryPending {
			every = deliveryPoll
		}
	}
	if r.polling || !r.mounted {
		return
	}
	r.polling = true
	r.ctx.After(every, func(app.Context) {
		r.polling = false
		r.loadDeliveries()
	})
}

func (r *webhookRow) Render() app.UI {
	h := r.Hook
	var action app.UI
	if r.asking {
		action = app.Span().Class("confirm-inline").Attr("role", "group").Aria("label", "Delete the webhook "+h.URL+"?").Body(
			button().Type("button").Class("danger confirm-delete").Aria("label", "Yes, delete the webhook "+h.URL).
				Aria("disabled", r.deleting).Text("Yes, delete").OnClick(r.confirm),
			button().Type("button").Class("cancel-delete").Text("Keep").OnClick(r.cancel),
		)
	} else {
		action = button().Type("button").Class("delete-webhook").Aria("label", "Delete the webhook "+h.URL).Text("Delete").OnClick(r.ask)
	}
	var deliveries app.UI
	if len(r.deliveries) == 0 {
		deliveries = app.P().Class("state no-deliveries").Text("No deliveries yet: they appear here when an event is sent.")
	} else {
		deliveries = app.Table().Class("deliveries").Body(
			app.Caption().Class("visually-hidden").Text("Recent deliveries to "+h.URL+", newest first"),
			app.THead().Body(app.Tr().Body(
				app.Th().Scope("col").Text("Event"), app.Th().Scope("col").Text("State"),
				app.Th().Scope("col").Text("Attempts"), app.Th().Scope("col").Text("Status"),
				app.Th().Scope("col").Text("When"), app.Th().Scope("col").Text("Answer"),
			)),
			app.TBody().Body(app.Range(r.deliveries).Slice(func(i int) app.UI { return deliveryRow(r.deliveries[i]) })),
		)
	}
	return app.Article().Class("webhook").DataSet("webhook", h.ID).Aria("label", "Webhook "+h.URL).Body(
		app.Div().Class("webhook-head").Body(
			app.Code().Class("webhook-url").Text(h.URL),
			app.Span().Class("muted webhook-created").Text(" added "+h.CreatedAt.Local().Format(time.DateTime)+" by "+h.CreatedBy+" "),
			button().Type("button").Class("test-webhook").Aria("label", "Send test event to "+h.URL).
				Aria("disabled", r.testing).Text(map[bool]string{true: "Sending…", false: "Send test event"}[r.testing]).OnClick(r.test),
			action,
		),
		app.P().Class("state state-error webhook-error").Attr("role", "alert").Hidden(r.err == nil).Text(problemText(r.err)),
		deliveries,
	)
}

// deliveryRow is one delivery: its event, state, attempts, last status and
// when it was made (and delivered, or next attempted).
func deliveryRow(d betaport.WebhookDelivery) app.UI {
	status := "—"
	if d.LastStatus != 0 {
		status = strconv.Itoa(d.LastStatus)
	}
	when := d.CreatedAt.Local().Format(time.DateTime)
	switch {
	case d.DeliveredAt != nil:
		when += ", delivered " + d.DeliveredAt.Local().Format(time.TimeOnly)
	case d.NextAttemptAt != nil && d.Attempts > 0:
		when += ", next attempt " + d.NextAttemptAt.Local().Format(time.TimeOnly)
	}
	state := app.Span().Class("badge badge-" + d.State).Text(d.State)
	return app.Tr().Class("delivery").DataSet("delivery", d.ID).DataSet("state", d.State).Body(
		// data-label names the column where a narrow window shows each
		// delivery as a card, without the table's head.
		app.Td().DataSet("label", "Event").Text(d.Type),
		app.Td().DataSet("label", "State").Body(state),
		app.Td().DataSet("label", "Attempts").Text(strconv.Itoa(d.Attempts)),
		app.Td().DataSet("label", "Status").Class("delivery-status").Text(status),
		app.Td().DataSet("label", "When").Text(when),
		app.Td().DataSet("label", "Answer").Class("delivery-answer").Body(deliveryAnswer(d)),
	)
}

// deliveryAnswer is what the receiver said (the start of its last
// answer's body) or why the last attempt failed, as text anyone can read.
func deliveryAnswer(d betaport.WebhookDelivery) app.UI {
	var parts []app.UI
	if d.LastError != "" {
		parts = append(parts, app.Span().Class("delivery-error").Text(d.LastError))
	}
	if d.Response != "" {
		parts = append(parts, app.Code().Class("delivery-response").Text(d.Response))
	}
	if len(parts) == 0 {
		return app.Text("—")
	}
	return app.Div().Body(parts...)
}

func (r *webhookRow) test(ctx app.Context, e app.Event) {
	if r.testing {
		return
	}
	r.testing, r.err = true, nil
	c, ext, hook, rowCtx := apiClient(), r.ExtensionID, r.Hook.ID, r.ctx
	rowCtx.Async(func() {
		reqCtx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		var d betaport.WebhookDelivery
		err := c.Do(reqCtx, http.MethodPost, api.WebhookTestPath(ext, hook), nil, &d)
		rowCtx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) || !r.mounted {
				return
			}
			r.testing, r.err = false, err
			if err == nil {
				r.deliveries = append([]betaport.WebhookDelivery{d}, r.deliveries...)
				if len(r.deliveries) > deliveriesShown {
					r.deliveries = r.deliveries[:deliveriesShown]
				}
				r.pollWhilePending()
			}
		})
	})
}

func (r *webhookRow) ask(ctx app.Context, e app.Event) {
	r.asking = true
	focusFirst(rowCtx(r.ctx, ctx), `[data-webhook="`+strconv.FormatInt(r.Hook.ID, 10)+`"] .confirm-delete`)
}

func (r *webhookRow) cancel(ctx app.Context, e app.Event) {
	r.asking = false
	focusFirst(rowCtx(r.ctx, ctx), `[data-webhook="`+strconv.FormatInt(r.Hook.ID, 10)+`"] .delete-webhook`)
}

func (r *webhookRow) confirm(ctx app.Context, e app.Event) {
	if r.deleting {
		return
	}
	r.deleting, r.err = true, nil
	c, ext, h, rowCtx := apiClient(), r.ExtensionID, r.Hook, r.ctx
	rowCtx.Async(func() {
		reqCtx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		err := c.Do(reqCtx, http.MethodDelete, api.WebhookPath(ext, h.ID), nil, nil)
		rowCtx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) {
				return
			}
			r.deleting, r.asking, r.err = false, false, err
			if err == nil && r.OnDeleted != nil {
				r.OnDeleted(h)
			}
		})
	})
}
