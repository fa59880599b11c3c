package ui

import (
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
)

// The settings page's named keys and audit trail: two lists that page like
// the others (the one list component), a form that adds a key and
// downloads its key.json, and a Revoke that asks first.

const keysPageSize = 20

type keyPage = fetch.CursorPage[betaport.Key]

func keysList() *pageList[keyPage, betaport.Key] {
	return &pageList[keyPage, betaport.Key]{listSpec: listSpec[keyPage, betaport.Key]{
		name: "keys", section: "keys-list", rowsID: "keys", label: "Keys",
		grid: "keys-grid", columns: []string{"Label", "Created", "Last used", ""},
		loading: "Loading the keys…", end: "That is every key.",
		pageSize: keysPageSize, items: func(page keyPage) []betaport.Key { return page.Data },
	}}
}

func keysKeys(id int64) fetch.GetKey[keyPage] {
	return fetch.CursorKeys[betaport.Key](api.KeysPath(id), nil, keysPageSize)
}

const auditPageSize = 20

type auditPage = fetch.CursorPage[betaport.AuditEvent]

func auditList() *pageList[auditPage, betaport.AuditEvent] {
	return &pageList[auditPage, betaport.AuditEvent]{listSpec: listSpec[auditPage, betaport.AuditEvent]{
		name: "audit", section: "audit-list", rowsID: "audit", label: "Audit trail",
		grid: "audit-grid", columns: []string{"When", "Who", "What"},
		loading: "Loading the audit trail…", end: "That is the whole trail.",
		pageSize: auditPageSize, items: func(page auditPage) []betaport.AuditEvent { return page.Data },
	}}
}

func auditKeys(id int64) fetch.GetKey[auditPage] {
	return fetch.CursorKeys[betaport.AuditEvent](api.AuditPath(id), nil, auditPageSize)
}

// auditText says what an audit event did, for people.
var auditText = map[string]string{
	betaport.AuditKeyCreated:       "created the key",
	betaport.AuditKeyRevoked:       "revoked the key",
	betaport.AuditTesterInvited:    "invited",
	betaport.AuditInviteResent:     "sent a new invite link to",
	betaport.AuditTesterRevoked:    "revoked",
	betaport.AuditTesterRestored:   "restored",
	betaport.AuditBundleRollback:   "rolled back to bundle",
	betaport.AuditWebhookCreated:   "added the webhook",
	betaport.AuditWebhookDeleted:   "deleted the webhook",
	betaport.AuditChannelCreated:   "made the channel",
	betaport.AuditTesterChannel:    "moved to another channel",
	betaport.AuditBundlePromoted:   "promoted bundle",
	betaport.AuditRolloutStarted:   "started the rollout of",
	betaport.AuditRolloutAdvanced:  "advanced the rollout of",
	betaport.AuditRolloutHalted:    "halted the rollout of",
	betaport.AuditRolloutResumed:   "resumed the rollout of",
	betaport.AuditRolloutCompleted: "completed the rollout of",
	betaport.AuditFeedbackNew:      "marked new the report",
	betaport.AuditFeedbackSeen:     "marked seen the report",
	betaport.AuditFeedbackResolved: "resolved the report",
	betaport.AuditFeedbackDeleted:  "deleted the report",
	betaport.AuditTokenCreated:     "made the access token",
	betaport.AuditTokenRevoked:     "revoked the access token",
}

func auditRow(e betaport.AuditEvent) app.UI {
	what := auditText[e.Action]
	if what == "" {
		what = e.Action
	}
	return app.Div().Class("row audit-grid").DataSet("audit", e.ID).Body(
		cell(app.Text(e.CreatedAt.Local().Format(time.DateTime))),
		cell(app.Text(e.Actor)),
		// Cut to the column on a narrow window: the whole on hover.
		app.Span().Attr("role", "cell").Title(what+" "+e.Subject).Body(app.Text(what+" "), app.Strong().Text(e.Subject)),
	)
}

// keysSection is the form that adds a key and the list of keys.
func (p *SettingsPage) keysSection() app.UI {
	k := p.keys
	return app.Section().ID("key-section").Class("settings-key").Aria("labelledby", "keys-title").Body(
		app.H2().ID("keys-title").Text("Keys"),
		app.P().Class("muted").Text("Pipelines authenticate with a key file, key.json. Give each place that publishes its own key, named after it, and revoke one without touching the others. Betaport keeps only a hash of a key: its file is downloaded once, when you create it. Signed in here, you upload without one."),
		app.Form().ID("key-form").Class("invite").OnSubmit(p.createKey).Body(
			app.Label().For("key-label").Text("Label"),
			typedValue(app.Input().ID("key-label").Type("text").Required(true).MaxLength(betaport.MaxKeyLabel).
				Placeholder("GitHub Actions"), k.Label).OnInput(p.keyLabelInput),
			app.Label().For("key-channel").Text("Publishes to"),
			app.Select().ID("key-channel").OnChange(func(ctx app.Context, e app.Event) {
				k.Channel = ctx.JSSrc().Get("value").String()
			}).Body(p.keyChannelOptions(k.Channel)...),
			button().ID("create-key").Type("submit").Class("primary").Aria("disabled", k.Busy).
				Text(map[bool]string{true: "Creating…", false: "Create key and download key.json"}[k.Busy]),
		),
		app.P().ID("key-downloaded").Class("state state-ok").Attr("role", "status").Hidden(k.Downloaded == "").Text(
			"key.json of “"+k.Downloaded+"” downloaded. Store it as your pipeline's secret: it is not shown again."),
		app.P().ID("key-error").Class("state state-error").Attr("role", "alert").Hidden(k.Err == nil).Text(problemText(k.Err)),
		&listView[keyPage, betaport.Key]{
			List:  p.keyList,
			Empty: "No keys yet. Create one for each pipeline that publishes.",
			Row: func(key betaport.Key) app.UI {
				return &keyRow{Key: k.Shown(key), Asking: k.Asking(key.ID), Ready: k.ConfirmReady(key.ID), Act: p.keyAction}
			},
			Key: func(k betaport.Key) int64 { return k.ID },
		},
	)
}

// auditSection is the extension's audit trail.
func (p *SettingsPage) auditSection() app.UI {
	return app.Section().ID("audit-section").Class("settings-key").Aria("labelledby", "audit-title").Body(
		app.H2().ID("audit-title").Text("Audit trail"),
		app.P().Class("muted").Text("Who created and revoked keys, and invited, revoked and restored testers, newest first."),
		&listView[auditPage, betaport.AuditEvent]{
			List:  p.audit,
			Empty: "Nothing yet: key and tester changes are listed here.",
			Row:   auditRow,
			Key:   func(e betaport.AuditEvent) int64 { return e.ID },
		},
	)
}

// keyLabelInput follows the label field as it is typed.
func (p *SettingsPage) keyLabelInput(ctx app.Context, e app.Event) {
	p.keys.SetLabel(ctx.JSSrc().Get("value").String())
}

// createKey is the form's submit (Enter, or the button).
func (p *SettingsPage) createKey(ctx app.Context, e app.Event) {
	e.PreventDefault()
	p.keys.Create()
}

// keyAction runs a row's action on the page's model, in the page's own
// context: the page (and every row) renders what it changed, and the
// focus moves after that render.
func (p *SettingsPage) keyAction(act func(*model.Keys)) {
	keys := p.keys
	p.ctx.Dispatch(func(app.Context) { act(keys) })
}

// keyRow is one key, with a Revoke that asks first (model.Keys holds the
// question). It is its own component so its handlers see its own key
// (go-app #1107).
type keyRow struct {
	app.Compo

	Key betaport.Key
	// Asking: its question is open; Ready: the question's Yes takes a
	// press (model.ConfirmDelay after it showed).
	Asking, Ready bool
	// Act runs an action on the page's model.Keys.
	Act func(func(*model.Keys))
}

func (r *keyRow) Render() app.UI {
	k := r.Key
	used := "Never"
	if k.LastUsedAt != nil {
		used = k.LastUsedAt.Local().Format(time.DateTime)
	}
	var action app.UI
	var question app.UI
	switch {
	case k.RevokedAt != nil:
		action = app.Span().Class("badge badge-revoked").Text("revoked")
	default:
		action = button().Type("button").Class("revoke").Aria("label", "Revoke "+k.Label).
			Aria("expanded", r.Asking).Text("Revoke").OnClick(r.ask)
		if r.Asking {
			question = confirmPop("Revoke "+k.Label+"?",
				"Pipelines that submit with this key file are refused from then on; the extension's other keys keep working.",
				button().Type("button").Class("danger confirm-revoke").DataSet("takes-focus", true).Aria("disabled", !r.Ready).
					Aria("label", "Yes, revoke "+k.Label).Text("Yes, revoke").OnClick(r.confirm),
				button().Type("button").Class("cancel-revoke").Text("Keep").OnClick(r.cancel),
			)
		}
	}
	row := app.Div().Class("row keys-grid").DataSet("key", k.ID)
	if r.Asking {
		row = row.Class("row-open")
	}
	return row.Body(
		cell(app.Strong().Text(k.Label), app.If(k.Channel != "", app.Small().Class("tester-channel key-channel").Text(k.Channel+" only"))),
		cell(app.Text(k.CreatedAt.Local().Format(time.DateTime)+" by "+k.CreatedBy)),
		cell(app.Text(used)),
		// The question is in the cell (a row holds only cells), shown
		// under the row.
		cell(action, question),
	)
}

func (r *keyRow) ask(ctx app.Context, e app.Event) {
	k := r.Key
	r.Act(func(m *model.Keys) { m.Ask(k) })
}

func (r *keyRow) cancel(ctx app.Context, e app.Event) {
	k := r.Key
	r.Act(func(m *model.Keys) { m.Keep(k) })
}

func (r *keyRow) confirm(ctx app.Context, e app.Event) {
	k := r.Key
	r.Act(func(m *model.Keys) { m.Revoke(k) })
}

// keysFocusClasses are the row controls model.Keys moves the focus to.
var keysFocusClasses = map[model.KeysFocus]string{
	model.KeysFocusConfirm: "confirm-revoke",
	model.KeysFocusRevoke:  "revoke",
}

// rowCtx is a row's own context once mounted, else the handler's: the
// handler's ends with the button it came from.
func rowCtx(row, handler app.Context) app.Context {
	if row != nil {
		return row
	}
	return handler
}

// focusFirst moves the focus to the first element selector matches once
// it is rendered.
func focusFirst(ctx app.Context, selector string) {
	ctx.Defer(func(app.Context) {
		if el := app.Window().Get("document").Call("querySelector", selector); el.Truthy() {
			placeQuestion(el)
			el.Call("focus")
		}
	})
}

// placeQuestion opens the row's question that el is in above its row when,
// under the row, it would run past the bottom of the viewport (the row is
// low on the screen) and there is room above. Moving the focus to it then
// scrolls nothing: the button that asked stays under the pointer, and the
// second press of a double-click lands on it, not on another row's.
func placeQuestion(el app.Value) {
	pop := el.Call("closest", ".confirm-pop")
	row := el.Call("closest", ".row")
	if !pop.Truthy() || !row.Truthy() {
		return
	}
	height := pop.Call("getBoundingClientRect").Get("height").Float()
	r := row.Call("getBoundingClientRect")
	above := r.Get("bottom").Float()+height > app.Window().Get("innerHeight").Float() && r.Get("top").Float() >= height
	pop.Get("classList").Call("toggle", "confirm-pop-above", above)
}

// keyChannelOptions are the key form's choices of where a key publishes:
// any channel, or one.
func (p *SettingsPage) keyChannelOptions(picked string) []app.UI {
	options := []app.UI{app.Option().Value("").Text("any channel").Selected(picked == "")}
	if p.channels != nil {
		for _, c := range p.channels.Items() {
			options = append(options, app.Option().Value(c.Name).Text(c.Name+" only").Selected(c.Name == picked))
		}
	}
	return options
}
