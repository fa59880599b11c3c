package ui

import (
	"context"
	"strconv"
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/model"
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

// webhooksSection is the section: a model.Webhooks holds its state and
// steps, one per extension shown; the component renders it and hands it
// the person's events.
type webhooksSection struct {
	app.Compo

	ExtensionID int64

	m *model.Webhooks
	// leave ends the model's requests and timers.
	leave context.CancelFunc
	ctx   app.Context
}

func (s *webhooksSection) OnInit() { s.m = model.NewWebhooks(model.WebhooksConfig{}) }

func (s *webhooksSection) OnMount(ctx app.Context) {
	s.ctx = ctx
	s.open()
}

func (s *webhooksSection) OnUpdate(ctx app.Context) {
	if s.ExtensionID != s.m.ExtensionID {
		s.open()
	}
}

func (s *webhooksSection) OnDismount() { s.close() }

// open starts a model for the extension shown, ending the previous one.
func (s *webhooksSection) open() {
	if s.ctx == nil {
		return
	}
	s.close()
	ctx, typed := s.ctx, s.m.URL
	visit, leave := context.WithCancel(ctx)
	s.leave = leave
	env := pageEnv(ctx)
	env.Context = visit
	s.m = model.NewWebhooks(model.WebhooksConfig{
		Env: env, ExtensionID: s.ExtensionID,
		Focus: func(f model.WebhooksFocus, hookID int64) {
			switch f {
			case model.WebhooksFocusURL:
				focusByID(ctx, "webhook-url")
			case model.WebhooksFocusSecret:
				focusByID(ctx, "webhook-secret")
			default:
				focusFirst(ctx, `[data-webhook="`+strconv.FormatInt(hookID, 10)+`"] .`+webhooksFocusClasses[f])
			}
		},
		ClearURL:  func() { setField(ctx, "webhook-url", "") },
		Copy:      copyText,
		SignedOut: func(err error) bool { return signedOut(ctx, err) },
		ErrorText: problemText,
	})
	// The URL field keeps what was typed in it (typedValue).
	s.m.SetURL(typed)
	s.m.Load()
}

func (s *webhooksSection) close() {
	if s.leave != nil {
		s.leave()
		s.leave = nil
	}
	s.m.Close()
}

// webhooksFocusClasses are the row controls model.Webhooks moves the
// focus to.
var webhooksFocusClasses = map[model.WebhooksFocus]string{
	model.WebhooksFocusConfirm: "confirm-delete",
	model.WebhooksFocusDelete:  "delete-webhook",
}

func (s *webhooksSection) Render() app.UI {
	m := s.m
	copyLabel := "Copy"
	if m.Copied {
		copyLabel = "Copied"
	}
	var list app.UI
	switch {
	case m.Err != nil:
		list = app.P().ID("webhooks-error").Class("state state-error").Attr("role", "alert").Text(problemText(m.Err))
	case len(m.Hooks) == 0 && (m.Loading || s.ctx == nil):
		list = app.P().ID("webhooks-loading").Class("state state-loading").Attr("role", "status").Text("Loading the webhooks…")
	case len(m.Hooks) == 0:
		list = app.P().ID("webhooks-empty").Class("state").Text("No webhooks yet. Add one to hear of every publish and rollback.")
	default:
		list = app.Div().ID("webhooks").Body(app.Range(m.Hooks).Slice(func(i int) app.UI {
			return &webhookRow{Hook: m.Hooks[i], Act: s.act}
		}))
	}
	return app.Section().ID("webhooks-section").Class("settings-key settings-webhooks").Aria("labelledby", "webhooks-title").Body(
		app.H2().ID("webhooks-title").Text("Webhooks"),
		app.P().Class("muted").Text("Betaport POSTs each publish and rollback of this extension, as JSON, to every webhook, signed with the webhook's secret in the Betaport-Signature header. A receiver that does not answer 2xx within 10 seconds gets the event again, later, for up to 24 hours; events reach each webhook in order."),
		app.Form().ID("webhook-form").Class("invite").OnSubmit(s.create).Body(
			app.Label().For("webhook-url").Text("URL"),
			typedValue(app.Input().ID("webhook-url").Type("url").Required(true).MaxLength(betaport.MaxWebhookURL).
				Placeholder("https://ci.example.com/betaport").Attr("autocomplete", "off").Attr("spellcheck", "false").
				Aria("invalid", m.URLInvalid).Aria("describedby", map[bool]string{true: "webhook-error"}[m.CreateErr != nil]), m.URL).
				OnInput(s.urlInput),
			button().ID("add-webhook").Type("submit").Class("primary").Aria("disabled", m.Busy).
				Text(map[bool]string{true: "Adding…", false: "Add webhook"}[m.Busy]),
		),
		app.P().ID("webhook-error").Class("state state-error").Attr("role", "alert").Hidden(m.CreateErr == nil).Text(problemText(m.CreateErr)),
		app.Div().ID("webhook-created").Class("state state-ok").Attr("role", "status").Hidden(m.Secret == "").Body(
			app.P().Body(
				app.Text("Webhook "), app.Strong().Text(m.SecretURL),
				app.Text(" added. Its secret verifies the Betaport-Signature of each event. Copy it now: it is not shown again."),
			),
			app.Label().For("webhook-secret").Text("Secret"),
			app.Input().ID("webhook-secret").Type("text").ReadOnly(true).Value(m.Secret).
				Attr("spellcheck", "false").Attr("autocomplete", "off").OnFocus(selectAll),
			button().ID("copy-webhook-secret").Type("button").Text(copyLabel).OnClick(s.copySecret),
		),
		list,
		app.P().ID("webhooks-status").Class("visually-hidden").Attr("role", "status").
			Aria("live", "polite").Aria("atomic", "true").Text(m.Announce),
	)
}

// urlInput follows the URL field as it is typed.
func (s *webhooksSection) urlInput(ctx app.Context, e app.Event) {
	s.m.SetURL(ctx.JSSrc().Get("value").String())
}

// create is the form's submit (Enter, or the button).
func (s *webhooksSection) create(ctx app.Context, e app.Event) {
	e.PreventDefault()
	s.m.Add()
}

func (s *webhooksSection) copySecret(ctx app.Context, e app.Event) { s.m.CopySecret() }

// act runs a row's action on the section's model, in the section's own
// context: the section (and every row) renders what it changed, and the
// focus moves after that render.
func (s *webhooksSection) act(f func(*model.Webhooks)) {
	m := s.m
	s.ctx.Dispatch(func(app.Context) { f(m) })
}

// webhookRow is one webhook: its URL, when it was made, its recent
// deliveries, Send test event, and Delete, which asks first. It is its own
// component so its handlers see its own webhook (go-app #1107); its state
// is the section's model's.
type webhookRow struct {
	app.Compo

	Hook model.Webhook
	// Act runs an action on the section's model.Webhooks.
	Act func(func(*model.Webhooks))
}

func (r *webhookRow) Render() app.UI {
	h := r.Hook
	action := button().Type("button").Class("delete-webhook").Aria("label", "Delete the webhook "+h.URL).
		Aria("expanded", h.Asking).Text("Delete").OnClick(r.ask)
	var question app.UI
	if h.Asking {
		// Under the head, away from the Delete that asked.
		question = app.Div().Class("confirm-block").Attr("role", "group").Aria("label", "Delete the webhook "+h.URL+"?").Body(
			app.P().Text("It gets no more events, and deliveries still waiting for a retry are dropped."),
			button().Type("button").Class("danger confirm-delete").DataSet("takes-focus", true).Aria("label", "Yes, delete the webhook "+h.URL).
				Aria("disabled", h.Deleting || !h.ConfirmReady).Text("Yes, delete").OnClick(r.confirm),
			button().Type("button").Class("cancel-delete").Text("Keep").OnClick(r.cancel),
		)
	}
	var deliveries app.UI
	if len(h.Deliveries) == 0 {
		deliveries = app.P().Class("state no-deliveries").Text("No deliveries yet: they appear here when an event is sent.")
	} else {
		deliveries = app.Table().Class("deliveries").Body(
			app.Caption().Class("visually-hidden").Text("Recent deliveries to "+h.URL+", newest first"),
			app.THead().Body(app.Tr().Body(
				app.Th().Scope("col").Text("Event"), app.Th().Scope("col").Text("State"),
				app.Th().Scope("col").Text("Attempts"), app.Th().Scope("col").Text("Status"),
				app.Th().Scope("col").Text("When"), app.Th().Scope("col").Text("Answer"),
			)),
			app.TBody().Body(app.Range(h.Deliveries).Slice(func(i int) app.UI { return deliveryRow(h.Deliveries[i]) })),
		)
	}
	return app.Article().Class("webhook").DataSet("webhook", h.ID).Aria("label", "Webhook "+h.URL).Body(
		app.Div().Class("webhook-head").Body(
			app.Code().Class("webhook-url").Text(h.URL),
			app.Span().Class("muted webhook-created").Text(" added "+h.CreatedAt.Local().Format(time.DateTime)+" by "+h.CreatedBy+" "),
			button().Type("button").Class("test-webhook").Aria("label", "Send test event to "+h.URL).
				Aria("disabled", h.Testing).Text(map[bool]string{true: "Sending…", false: "Send test event"}[h.Testing]).OnClick(r.test),
			action,
		),
		question,
		app.P().Class("state state-error webhook-error").Attr("role", "alert").Hidden(h.Err == nil).Text(problemText(h.Err)),
		deliveries,
	)
}

func (r *webhookRow) test(ctx app.Context, e app.Event) {
	id := r.Hook.ID
	r.Act(func(m *model.Webhooks) { m.Test(id) })
}

func (r *webhookRow) ask(ctx app.Context, e app.Event) {
	id := r.Hook.ID
	r.Act(func(m *model.Webhooks) { m.AskDelete(id) })
}

func (r *webhookRow) cancel(ctx app.Context, e app.Event) {
	id := r.Hook.ID
	r.Act(func(m *model.Webhooks) { m.Keep(id) })
}

func (r *webhookRow) confirm(ctx app.Context, e app.Event) {
	id := r.Hook.ID
	r.Act(func(m *model.Webhooks) { m.Delete(id) })
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
