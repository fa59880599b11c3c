package ui

import (
	"context"
	"fmt"
	"strconv"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
)

// SettingsPage shows an extension, its team's plan, its named keys (the key
// files pipelines submit with; keys.go), its browser updates, its webhooks
// (webhooks.go) and its audit trail. Its state and steps are models
// (model.Settings, model.Keys), one pair per visit of an extension's page;
// the component renders them and hands them the person's events.
type SettingsPage struct {
	app.Compo

	id int64
	m  *model.Settings
	// keys is the keys section's model; keyList and audit are the lists
	// it asks to read again (list.go).
	keys    *model.Keys
	keyList *pageList[keyPage, betaport.Key]
	audit   *pageList[auditPage, betaport.AuditEvent]
	// tokens is the access tokens section's model, tokenList its list
	// (tokens.go).
	tokens    *model.Tokens
	tokenList *pageList[tokenPage, betaport.AccessToken]
	// channels are the extension's channels, for the key form.
	channels *model.Channels
	// closeExtension closes the extension's Query (useFetch).
	closeExtension func()
	// leave ends this visit's models: their requests and answers.
	leave context.CancelFunc
	// ctx is the page's own context: the buttons that start work are
	// replaced as it runs, and a handler's context dies with its element.
	ctx app.Context
}

func (p *SettingsPage) OnInit() {
	p.keyList, p.audit, p.tokenList = keysList(), auditList(), tokensList()
	p.m, p.keys, p.tokens = model.NewSettings(model.SettingsConfig{}), model.NewKeys(model.KeysConfig{}), model.NewTokens(model.TokensConfig{})
}

// OnPreRender knows, on the server, who is visiting: a tester gets the
// admins-only page there too.
func (p *SettingsPage) OnPreRender(ctx app.Context) {
	if s, ok := prerendered[api.Session](api.PathSession); ok && s.Kind != "" {
		p.m.Session = &s
	}
}

func (p *SettingsPage) OnNav(ctx app.Context) {
	setTitle(ctx, "Settings")
	p.ctx = ctx
	p.id, _ = model.ExtensionID(ctx.Page().URL().Path)
	p.OnDismount() // the previous visit's models, queries and lists

	// This visit's models, tied to a context of their own: a visit of
	// another extension's page ends them, as leaving the page does.
	visit, leave := context.WithCancel(ctx)
	p.leave = leave
	env := pageEnv(ctx)
	env.Context = visit
	gone := func(err error) bool { return signedOut(ctx, err) }
	m := model.NewSettings(model.SettingsConfig{
		Env: env, ExtensionID: p.id,
		Focus: func(f model.SettingsFocus) { focusByID(ctx, settingsFocusIDs[f]) },
		Copy:  copyText, SignedOut: gone, ErrorText: problemText,
	})
	p.m = m
	typed := p.keys.Label
	p.keys = model.NewKeys(model.KeysConfig{
		Env: env, ExtensionID: p.id,
		Download: func(name, mimeType string, data []byte) { saveFile(ctx, name, mimeType, string(data)) },
		Focus: func(f model.KeysFocus, keyID int64) {
			if f == model.KeysFocusLabel {
				focusByID(ctx, "key-label")
				return
			}
			focusFirst(ctx, `[data-key="`+strconv.FormatInt(keyID, 10)+`"] .`+keysFocusClasses[f])
		},
		ClearLabel: func() { setField(ctx, "key-label", "") },
		Changed: func() {
			p.keyList.revalidate()
			p.audit.revalidate()
		},
		Announce: m.Say, SignedOut: gone, ErrorText: problemText,
	})
	// The label field keeps what was typed in it (typedValue).
	p.keys.SetLabel(typed)
	typedName := p.tokens.Name
	p.tokens = model.NewTokens(model.TokensConfig{
		Env: env, ExtensionID: p.id,
		Focus: func(f model.TokensFocus, tokenID int64) {
			switch f {
			case model.TokensFocusName:
				focusByID(ctx, "token-name")
			case model.TokensFocusSecret:
				focusByID(ctx, "token-secret")
			default:
				focusFirst(ctx, `[data-token="`+strconv.FormatInt(tokenID, 10)+`"] .`+tokensFocusClasses[f])
			}
		},
		ClearName: func() { setField(ctx, "token-name", "") },
		Changed: func() {
			p.tokenList.revalidate()
			p.audit.revalidate()
		},
		Copy: copyText, Announce: m.Say, SignedOut: gone, ErrorText: problemText,
	})
	p.tokens.SetName(typedName)
	id := p.id
	currentSession(ctx, func(s *api.Session) {
		if m != p.m {
			return // another visit's
		}
		if m.SetSession(s) {
			p.keyList.open(ctx, keysKeys(id), nil)
			p.audit.open(ctx, auditKeys(id), nil)
			p.tokenList.open(ctx, tokensKeys(id), nil)
			p.channels = model.NewChannels(model.ChannelsConfig{Env: env, Cache: listCache(), ExtensionID: id})
		}
	})
	_, p.closeExtension = openExtension(ctx, id, func(s fetch.State[betaport.Extension]) {
		if signedOut(ctx, s.Err) {
			return
		}
		m.SetExtension(extensionOf(s), s.Err)
	})
}

// OnDismount ends the visit's models and closes the extension's Query and
// the lists: their requests are cancelled.
func (p *SettingsPage) OnDismount() {
	if p.channels != nil {
		p.channels.Close()
		p.channels = nil
	}
	if p.leave != nil {
		p.leave()
		p.leave = nil
	}
	if p.closeExtension != nil {
		p.closeExtension()
		p.closeExtension = nil
	}
	p.keyList.close()
	p.audit.close()
	p.tokenList.close()
}

// settingsFocusIDs are the elements model.Settings moves the focus to.
var settingsFocusIDs = map[model.SettingsFocus]string{
	model.SettingsFocusRotate:        "rotate-token",
	model.SettingsFocusConfirmRotate: "confirm-rotate",
	model.SettingsFocusUpdateURL:     "update-url",
}

// copyText puts text on the clipboard, reporting false when the page has
// none (a page not served over HTTPS).
func copyText(text string) bool {
	cb := app.Window().Get("navigator").Get("clipboard")
	if !cb.Truthy() {
		return false
	}
	cb.Call("writeText", text)
	return true
}

func (p *SettingsPage) Render() app.UI {
	m := p.m
	if m.Session != nil && m.Session.Kind == api.KindTester {
		return adminsOnlyPage()
	}
	crumbs := extensionCrumbs(p.id)
	var body app.UI
	switch {
	case m.Err != nil:
		body = statusView("error", problemText(m.Err))
	case m.Extension == nil || m.Session == nil:
		body = statusView("loading", "Loading the settings…")
	default:
		body = app.Div().Body(p.renderFacts(), p.renderKey(), p.renderTokens(), p.renderUpdates(), p.renderAudit())
	}
	return shell("extensions",
		crumbs,
		app.H1().Text("Settings"),
		extensionNav(p.id, "settings"),
		body,
		webhooksPanel(p.id, m.Session, m.Extension != nil && m.Err == nil),
		app.P().ID("settings-status").Class("visually-hidden").Attr("role", "status").
			Aria("live", "polite").Aria("atomic", "true").Text(m.Announce),
	)
}

func (p *SettingsPage) renderFacts() app.UI {
	e, s := p.m.Extension, p.m.Session
	team, plan := "", ""
	if s.Team != nil {
		team, plan = s.Team.Name, planName(s.Team.Plan)
	}
	return app.Dl().Class("facts").ID("settings-facts").Body(
		app.Dt().Text("Extension"), app.Dd().ID("settings-extension").Text(fmt.Sprintf("%s (#%d)", e.Name, e.ID)),
		app.If(team != "",
			app.Dt().Text("Team"), app.Dd().ID("settings-team").Text(team),
			app.Dt().Text("Plan"), app.Dd().ID("settings-plan").Text(plan),
		),
	)
}

func (p *SettingsPage) renderKey() app.UI {
	s := p.m.Session
	switch {
	case s.Kind != api.KindAdmin:
		return app.Section().ID("key-section").Class("settings-key").Body(app.H2().Text("Keys"),
			app.P().ID("key-admins-only").Class("state").Text("Only the extension's admins manage its keys."))
	case s.Team == nil || s.Team.Plan != betaport.PlanProfessional:
		return app.Section().ID("key-section").Class("settings-key").Body(app.H2().Text("Keys"),
			app.P().ID("key-plan-required").Class("state").Text(fmt.Sprintf(
				"Manual upload needs the Professional plan, and so do pipelines. %s is on the %s plan: upgrade the team to create keys.",
				teamName(s), planName(teamPlan(s)))))
	}
	return p.keysSection()
}

// renderTokens is the access tokens section, for admins on any plan.
func (p *SettingsPage) renderTokens() app.UI {
	if !p.m.Admin() {
		return app.Div()
	}
	return p.tokensSection()
}

func (p *SettingsPage) renderAudit() app.UI {
	if !p.m.Admin() {
		return app.Div()
	}
	return p.auditSection()
}

func teamName(s *api.Session) string {
	if s.Team == nil {
		return "Your team"
	}
	return s.Team.Name
}

func teamPlan(s *api.Session) string {
	if s.Team == nil {
		return ""
	}
	return s.Team.Plan
}

// renderUpdates is the "Browser updates" section. Its nodes stay in the
// tree and are shown or hidden: go-app matches children by position, and a
// button that moved would be a new node.
func (p *SettingsPage) renderUpdates() app.UI {
	m := p.m
	s := m.Session
	section := app.Section().ID("updates-section").Class("settings-key settings-updates").Aria("labelledby", "updates-title")
	title := app.H2().ID("updates-title").Text("Browser updates")
	if s.Kind != api.KindAdmin {
		return section.Body(title, app.P().ID("updates-admins-only").Class("state").Text("Only the extension's admins see its update URL."))
	}
	u := m.Updates
	chromeID, updateURL := "", ""
	if u != nil {
		chromeID, updateURL = u.ChromeID, u.UpdateURL
	}
	loading := u == nil && m.UpdatesErr == nil
	copyLabel := "Copy"
	if m.UpdateURLCopied {
		copyLabel = "Copied"
	}
	return section.Body(
		title,
		app.P().Class("muted").Text("Every published bundle is also a signed CRX package. Chrome, Edge, Brave and Opera check the update URL inside it and update installed copies on their own. The URL holds a secret token: whoever has it can download the current build."),
		app.P().ID("updates-loading").Class("state state-loading").Attr("role", "status").Hidden(!loading).Text("Loading the update URL…"),
		app.P().ID("updates-error").Class("state state-error").Attr("role", "alert").Hidden(m.UpdatesErr == nil).Text(problemText(m.UpdatesErr)),
		app.Dl().ID("updates-facts").Class("facts").Hidden(u == nil).Body(
			app.Dt().Text("Chrome extension ID"),
			app.Dd().Body(app.Code().ID("chrome-id").Text(chromeID)),
			app.Dt().Body(app.Label().For("update-url").Text("Update URL")),
			app.Dd().Class("update-url").Body(
				app.Input().ID("update-url").Type("text").ReadOnly(true).Value(updateURL).
					Attr("spellcheck", "false").Attr("autocomplete", "off").OnFocus(selectAll),
				button().ID("copy-update-url").Type("button").Text(copyLabel).OnClick(p.copyUpdateURL),
			),
		),
		button().ID("rotate-token").Type("button").Hidden(m.RotateAsking).Disabled(u == nil || m.Rotating || app.IsServer).
			Text("Rotate update token").OnClick(p.askRotate),
		app.Div().ID("rotate-confirm").Class("confirm").Attr("role", "group").Aria("labelledby", "rotate-confirm-text").Hidden(!m.RotateAsking).Body(
			app.P().ID("rotate-confirm-text").Body(
				app.Strong().Text("Rotate the update token? "),
				app.Text("Every copy installed from an earlier CRX is cut off at once: those browsers stop getting updates. Each tester must install the new CRX from their builds page to get updates again."),
			),
			button().ID("confirm-rotate").Type("button").Class("primary").Aria("disabled", m.Rotating).
				Text(map[bool]string{true: "Rotating…", false: "Rotate the token"}[m.Rotating]).OnClick(p.rotate),
			button().ID("cancel-rotate").Type("button").Aria("disabled", m.Rotating).Text("Cancel").OnClick(p.cancelRotate),
		),
		app.P().ID("rotate-done").Class("state state-ok").Hidden(!m.Rotated).Text(
			"The update token was replaced and the update URL above is the new one. Copies installed from an earlier CRX no longer update: testers must install the new CRX from their builds page."),
		app.P().ID("rotate-error").Class("state state-error").Attr("role", "alert").Hidden(m.RotateErr == nil).Text(problemText(m.RotateErr)),
	)
}

// selectAll selects a read-only field's text when it gets the focus, so it
// is copied whole.
func selectAll(ctx app.Context, e app.Event) {
	ctx.JSSrc().Call("select")
}

func (p *SettingsPage) copyUpdateURL(ctx app.Context, e app.Event) { p.m.CopyUpdateURL() }

func (p *SettingsPage) askRotate(ctx app.Context, e app.Event) { p.m.AskRotate() }

func (p *SettingsPage) cancelRotate(ctx app.Context, e app.Event) { p.m.CancelRotate() }

func (p *SettingsPage) rotate(ctx app.Context, e app.Event) { p.m.Rotate() }

// focusByID moves the focus to the element with id once it is rendered.
func focusByID(ctx app.Context, id string) {
	ctx.Defer(func(app.Context) {
		if el := app.Window().GetElementByID(id); el != nil && el.Truthy() {
			el.Call("focus")
		}
	})
}
