package ui

import (
	"strconv"
	"strings"
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
)

// The settings page's access tokens: a form that makes one (name, scopes,
// lifetime) and shows its secret once, and the list of tokens, each with a
// Revoke that asks first, as keys do.

const tokensPageSize = 20

type tokenPage = fetch.CursorPage[betaport.AccessToken]

func tokensList() *pageList[tokenPage, betaport.AccessToken] {
	return &pageList[tokenPage, betaport.AccessToken]{listSpec: listSpec[tokenPage, betaport.AccessToken]{
		name: "tokens", section: "tokens-list", rowsID: "tokens", label: "Access tokens",
		grid: "tokens-grid", columns: []string{"Name", "Scopes", "Created", "Expires", "Last used", ""},
		loading: "Loading the tokens…", end: "That is every token.",
		pageSize: tokensPageSize, items: func(page tokenPage) []betaport.AccessToken { return page.Data },
	}}
}

func tokensKeys(id int64) fetch.GetKey[tokenPage] {
	return fetch.CursorKeys[betaport.AccessToken](api.TokensPath(id), nil, tokensPageSize)
}

// lifetimeText names a lifetime choice.
func lifetimeText(days int) string {
	if days == 0 {
		return "until revoked"
	}
	return strconv.Itoa(days) + " days"
}

// tokensSection is the form that makes a token, its secret once made, and
// the list of tokens.
func (p *SettingsPage) tokensSection() app.UI {
	k := p.tokens
	scopes := make([]app.UI, 0, len(betaport.AllScopes))
	for _, s := range betaport.AllScopes {
		scopes = append(scopes, &scopeBox{Scope: s, Checked: k.Scopes[s], Act: p.tokenAction})
	}
	lifetimes := make([]app.UI, 0, len(model.TokenLifetimes))
	for _, d := range model.TokenLifetimes {
		lifetimes = append(lifetimes, app.Option().Value(strconv.Itoa(d)).Text(lifetimeText(d)).Selected(d == k.Days))
	}
	var made app.UI = app.Div().ID("token-made").Hidden(true)
	if k.Made != nil {
		made = app.Div().ID("token-made").Class("state state-ok").Attr("role", "status").Body(
			app.P().Text("Token “"+k.Made.Name+"” made. Copy it now: Betaport keeps only its hash, and it is not shown again. Scripts send it as BETAPORT_TOKEN, or as Authorization: Bearer."),
			app.Input().ID("token-secret").Type("text").ReadOnly(true).Value(k.Secret).Aria("label", "The new token"),
			button().ID("copy-token").Type("button").Text(map[bool]string{true: "Copied", false: "Copy"}[k.Copied]).
				OnClick(func(ctx app.Context, e app.Event) { p.tokenAction(func(m *model.Tokens) { m.CopySecret() }) }),
			button().ID("token-done").Type("button").Text("Done").
				OnClick(func(ctx app.Context, e app.Event) { p.tokenAction(func(m *model.Tokens) { m.Done() }) }),
		)
	}
	return app.Section().ID("token-section").Class("settings-key").Aria("labelledby", "tokens-title").Body(
		app.H2().ID("tokens-title").Text("Access tokens"),
		app.P().Class("muted").Text("Scripts call the API and the betaport command with an access token: each only what its scopes allow, until it expires or is revoked. Make one per script, named after it."),
		app.Form().ID("token-form").Class("invite token-form").OnSubmit(p.createToken).Body(
			app.Label().For("token-name").Text("Name"),
			typedValue(app.Input().ID("token-name").Type("text").Aria("required", true).MaxLength(betaport.MaxTokenName).
				Placeholder("nightly release"), k.Name).OnInput(p.tokenNameInput),
			app.FieldSet().ID("token-scopes").Class("token-scopes").Body(append([]app.UI{app.Legend().Text("Scopes")}, scopes...)...),
			app.Label().For("token-lifetime").Text("Expires after"),
			app.Select().ID("token-lifetime").OnChange(func(ctx app.Context, e app.Event) {
				days, _ := strconv.Atoi(ctx.JSSrc().Get("value").String())
				p.tokens.Days = days
			}).Body(lifetimes...),
			button().ID("create-token").Type("submit").Class("primary").Aria("disabled", k.Busy).
				Text(map[bool]string{true: "Making…", false: "Make token"}[k.Busy]),
		),
		made,
		app.P().ID("token-error").Class("state state-error").Attr("role", "alert").Hidden(k.Err == nil).Text(problemText(k.Err)),
		&listView[tokenPage, betaport.AccessToken]{
			List:  p.tokenList,
			Empty: "No tokens yet. Make one for each script that calls Betaport.",
			Row: func(t betaport.AccessToken) app.UI {
				return &tokenRow{Token: k.Shown(t), Asking: k.Asking(t.ID), Ready: k.ConfirmReady(t.ID), Act: p.tokenAction}
			},
			Key: func(t betaport.AccessToken) int64 { return t.ID },
		},
	)
}

func (p *SettingsPage) tokenNameInput(ctx app.Context, e app.Event) {
	p.tokens.SetName(ctx.JSSrc().Get("value").String())
}

func (p *SettingsPage) createToken(ctx app.Context, e app.Event) {
	e.PreventDefault()
	p.tokens.Create()
}

// tokenAction runs an action on the page's model.Tokens, as keyAction.
func (p *SettingsPage) tokenAction(act func(*model.Tokens)) {
	tokens := p.tokens
	p.ctx.Dispatch(func(app.Context) { act(tokens) })
}

// scopeBox is one scope's checkbox, its own component so its handler sees
// its own scope (go-app #1107).
type scopeBox struct {
	app.Compo
	Scope   string
	Checked bool
	Act     func(func(*model.Tokens))
}

func (b *scopeBox) Render() app.UI {
	id := "scope-" + b.Scope
	return app.Label().For(id).Class("scope").Body(
		app.Input().ID(id).Type("checkbox").Checked(b.Checked).OnChange(b.change),
		app.Strong().Text(b.Scope),
		app.Small().Class("muted").Text(" "+model.ScopeHelp[b.Scope]),
	)
}

func (b *scopeBox) change(ctx app.Context, e app.Event) {
	on, scope := ctx.JSSrc().Get("checked").Bool(), b.Scope
	b.Act(func(m *model.Tokens) { m.SetScope(scope, on) })
}

// tokenRow is one token, with a Revoke that asks first.
type tokenRow struct {
	app.Compo
	Token         betaport.AccessToken
	Asking, Ready bool
	Act           func(func(*model.Tokens))
}

func (r *tokenRow) Render() app.UI {
	t := r.Token
	used, expires := "Never", "Never"
	if t.LastUsedAt != nil {
		used = t.LastUsedAt.Local().Format(time.DateTime)
	}
	if t.ExpiresAt != nil {
		expires = t.ExpiresAt.Local().Format(time.DateTime)
	}
	var action, question app.UI
	switch state := model.TokenState(t, time.Now()); state {
	case "active":
		action = button().Type("button").Class("revoke").Aria("label", "Revoke "+t.Name).
			Aria("expanded", r.Asking).Text("Revoke").OnClick(r.ask)
		if r.Asking {
			question = confirmPop("Revoke "+t.Name+"?",
				"Scripts that use this token are refused from then on; other tokens keep working.",
				button().Type("button").Class("danger confirm-revoke").DataSet("takes-focus", true).Aria("disabled", !r.Ready).
					Aria("label", "Yes, revoke "+t.Name).Text("Yes, revoke").OnClick(r.confirm),
				button().Type("button").Class("cancel-revoke").Text("Keep").OnClick(r.cancel),
			)
		}
	default:
		// Focusable from script: a revoke done by keys leaves the focus
		// here, where the Revoke button was.
		action = app.Span().Class("badge badge-revoked token-state").TabIndex(-1).Text(state)
	}
	row := app.Div().Class("row tokens-grid").DataSet("token", t.ID)
	if r.Asking {
		row = row.Class("row-open")
	}
	return row.Body(
		cell(app.Strong().Text(t.Name)),
		cell(app.Text(strings.Join(t.Scopes, ", "))),
		cell(app.Text(t.CreatedAt.Local().Format(time.DateTime)+" by "+t.CreatedBy)),
		cell(app.Text(expires)),
		cell(app.Text(used)),
		cell(action, question),
	)
}

func (r *tokenRow) ask(ctx app.Context, e app.Event) {
	t := r.Token
	r.Act(func(m *model.Tokens) { m.Ask(t) })
}

func (r *tokenRow) cancel(ctx app.Context, e app.Event) {
	t := r.Token
	r.Act(func(m *model.Tokens) { m.Keep(t) })
}

func (r *tokenRow) confirm(ctx app.Context, e app.Event) {
	t := r.Token
	r.Act(func(m *model.Tokens) { m.Revoke(t) })
}

// tokensFocusClasses are the row controls model.Tokens moves the focus to.
var tokensFocusClasses = map[model.TokensFocus]string{
	model.TokensFocusConfirm: "confirm-revoke",
	model.TokensFocusRevoke:  "revoke",
	model.TokensFocusRevoked: "token-state",
}
