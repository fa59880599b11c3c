package ui

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
)

// SettingsPage shows an extension, its team's plan, its named keys (the key
// files pipelines submit with; keys.go), its browser updates and its audit
// trail.
type SettingsPage struct {
	app.Compo

	id        int64
	extension *betaport.Extension
	session   *api.Session
	err       error
	// closeExtension closes the extension's Query (useFetch).
	closeExtension func()

	// Keys: the label typed, a key being created, the label of the one
	// just downloaded, and the lists (keys.go).
	keyLabel   string
	busy       bool
	keyErr     error
	downloaded string
	announce   string
	keys       *pageList[keyPage, betaport.Key]
	audit      *pageList[auditPage, betaport.AuditEvent]

	// Browser updates: the extension's Chrome ID and update URL (admins).
	updates         *api.Updates
	updatesErr      error
	rotateAsking    bool
	rotating        bool
	rotateErr       error
	rotated         bool
	updateURLCopied bool
	// ctx is the page's own context: the buttons that start work are
	// replaced as it runs, and a handler's context dies with its element.
	ctx app.Context
}

func (p *SettingsPage) OnInit() { p.keys, p.audit = keysList(), auditList() }

// OnPreRender knows, on the server, who is visiting: a tester gets the
// admins-only page there too.
func (p *SettingsPage) OnPreRender(ctx app.Context) {
	if s, ok := prerendered[api.Session](api.PathSession); ok {
		p.session = &s
	}
}

func (p *SettingsPage) OnNav(ctx app.Context) {
	setTitle(ctx, "Settings")
	p.ctx = ctx
	path := strings.TrimPrefix(ctx.Page().URL().Path, "/extensions/")
	p.id, _ = strconv.ParseInt(strings.TrimSuffix(path, "/settings"), 10, 64)
	p.extension, p.err = nil, nil
	p.busy, p.keyErr, p.downloaded, p.announce = false, nil, "", ""
	p.updates, p.updatesErr = nil, nil
	p.rotateAsking, p.rotating, p.rotateErr, p.rotated, p.updateURLCopied = false, false, nil, false, false
	id := p.id
	p.OnDismount() // the previous extension's queries and lists
	currentSession(ctx, func(s *api.Session) {
		p.session = s
		if s != nil && s.Kind == api.KindAdmin && id == p.id {
			p.loadUpdates(ctx, id)
			p.keys.open(ctx, keysKeys(id), nil)
			p.audit.open(ctx, auditKeys(id), nil)
		}
	})
	_, p.closeExtension = openExtension(ctx, id, func(s fetch.State[betaport.Extension]) {
		if signedOut(ctx, s.Err) {
			return
		}
		p.extension, p.err = extensionOf(s), s.Err
	})
}

// OnDismount closes the extension's Query and the lists: their requests
// are cancelled.
func (p *SettingsPage) OnDismount() {
	if p.closeExtension != nil {
		p.closeExtension()
		p.closeExtension = nil
	}
	p.keys.close()
	p.audit.close()
}

func (p *SettingsPage) Render() app.UI {
	if p.session != nil && p.session.Kind == api.KindTester {
		return adminsOnlyPage()
	}
	crumbs := extensionCrumbs(p.id)
	var body app.UI
	switch {
	case p.err != nil:
		body = statusView("error", problemText(p.err))
	case p.extension == nil || p.session == nil:
		body = statusView("loading", "Loading the settings…")
	default:
		body = app.Div().Body(p.renderFacts(), p.renderKey(), p.renderUpdates(), p.renderAudit())
	}
	return shell("extensions",
		crumbs,
		app.H1().Text("Settings"),
		extensionNav(p.id, "settings"),
		body,
		webhooksPanel(p.id, p.session, p.extension != nil && p.err == nil),
		app.P().ID("settings-status").Class("visually-hidden").Attr("role", "status").
			Aria("live", "polite").Aria("atomic", "true").Text(p.announce),
	)
}

func (p *SettingsPage) renderFacts() app.UI {
	e, s := p.extension, p.session
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
	s := p.session
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

func (p *SettingsPage) renderAudit() app.UI {
	if p.session.Kind != api.KindAdmin {
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

// loadUpdates fetches the extension's Chrome ID and update URL. The first
// fetch makes the extension's signing key if no bundle was signed yet.
func (p *SettingsPage) loadUpdates(ctx app.Context, id int64) {
	c := apiClient()
	ctx.Async(func() {
		var u api.Updates
		err := c.Do(ctx, http.MethodGet, api.UpdatesPath(id), nil, &u)
		ctx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) || id != p.id {
				return
			}
			p.updatesErr = err
			if err == nil {
				p.updates = &u
			}
		})
	})
}

// renderUpdates is the "Browser updates" section. Its nodes stay in the
// tree and are shown or hidden: go-app matches children by position, and a
// button that moved would be a new node.
func (p *SettingsPage) renderUpdates() app.UI {
	s := p.session
	section := app.Section().ID("updates-section").Class("settings-key settings-updates").Aria("labelledby", "updates-title")
	title := app.H2().ID("updates-title").Text("Browser updates")
	if s.Kind != api.KindAdmin {
		return section.Body(title, app.P().ID("updates-admins-only").Class("state").Text("Only the extension's admins see its update URL."))
	}
	u := p.updates
	chromeID, updateURL := "", ""
	if u != nil {
		chromeID, updateURL = u.ChromeID, u.UpdateURL
	}
	loading := u == nil && p.updatesErr == nil
	copyText := "Copy"
	if p.updateURLCopied {
		copyText = "Copied"
	}
	return section.Body(
		title,
		app.P().Class("muted").Text("Every published bundle is also a signed CRX package. Chrome, Edge, Brave and Opera check the update URL inside it and update installed copies on their own. The URL holds a secret token: whoever has it can download the current build."),
		app.P().ID("updates-loading").Class("state state-loading").Attr("role", "status").Hidden(!loading).Text("Loading the update URL…"),
		app.P().ID("updates-error").Class("state state-error").Attr("role", "alert").Hidden(p.updatesErr == nil).Text(problemText(p.updatesErr)),
		app.Dl().ID("updates-facts").Class("facts").Hidden(u == nil).Body(
			app.Dt().Text("Chrome extension ID"),
			app.Dd().Body(app.Code().ID("chrome-id").Text(chromeID)),
			app.Dt().Body(app.Label().For("update-url").Text("Update URL")),
			app.Dd().Class("update-url").Body(
				app.Input().ID("update-url").Type("text").ReadOnly(true).Value(updateURL).
					Attr("spellcheck", "false").Attr("autocomplete", "off").OnFocus(selectAll),
				button().ID("copy-update-url").Type("button").Text(copyText).OnClick(p.copyUpdateURL),
			),
		),
		button().ID("rotate-token").Type("button").Hidden(p.rotateAsking).Disabled(u == nil || p.rotating || app.IsServer).
			Text("Rotate update token").OnClick(p.askRotate),
		app.Div().ID("rotate-confirm").Class("confirm").Attr("role", "group").Aria("labelledby", "rotate-confirm-text").Hidden(!p.rotateAsking).Body(
			app.P().ID("rotate-confirm-text").Body(
				app.Strong().Text("Rotate the update token? "),
				app.Text("Every copy installed from an earlier CRX is cut off at once: those browsers stop getting updates. Each tester must install the new CRX from their builds page to get updates again."),
			),
			button().ID("confirm-rotate").Type("button").Class("primary").Aria("disabled", p.rotating).
				Text(map[bool]string{true: "Rotating…", false: "Rotate the token"}[p.rotating]).OnClick(p.rotate),
			button().ID("cancel-rotate").Type("button").Aria("disabled", p.rotating).Text("Cancel").OnClick(p.cancelRotate),
		),
		app.P().ID("rotate-done").Class("state state-ok").Hidden(!p.rotated).Text(
			"The update token was replaced and the update URL above is the new one. Copies installed from an earlier CRX no longer update: testers must install the new CRX from their builds page."),
		app.P().ID("rotate-error").Class("state state-error").Attr("role", "alert").Hidden(p.rotateErr == nil).Text(problemText(p.rotateErr)),
	)
}

// selectAll selects a read-only field's text when it gets the focus, so it
// is copied whole.
func selectAll(ctx app.Context, e app.Event) {
	ctx.JSSrc().Call("select")
}

func (p *SettingsPage) copyUpdateURL(ctx app.Context, e app.Event) {
	if p.updates == nil {
		return
	}
	if cb := app.Window().Get("navigator").Get("clipboard"); cb.Truthy() {
		cb.Call("writeText", p.updates.UpdateURL)
		p.updateURLCopied = true
		p.announce = "Update URL copied."
		return
	}
	// No clipboard (a page not served over HTTPS): select it to copy by hand.
	focusByID(p.ctx, "update-url")
}

func (p *SettingsPage) askRotate(ctx app.Context, e app.Event) {
	if p.updates == nil || p.rotating {
		return
	}
	p.rotateAsking, p.rotateErr, p.rotated = true, nil, false
	p.announce = "Rotating the update token stops updates for every installed copy. Confirm or cancel."
	focusByID(p.ctx, "confirm-rotate")
}

func (p *SettingsPage) cancelRotate(ctx app.Context, e app.Event) {
	if p.rotating {
		return
	}
	p.rotateAsking = false
	p.announce = "Cancelled. The update token was not changed."
	focusByID(p.ctx, "rotate-token")
}

func (p *SettingsPage) rotate(ctx app.Context, e app.Event) {
	if p.rotating || !p.rotateAsking {
		return
	}
	p.rotating, p.rotateErr, p.rotated = true, nil, false
	c, id, ctx := apiClient(), p.id, p.ctx
	ctx.Async(func() {
		var u api.Updates
		err := c.Do(ctx, http.MethodPost, api.UpdateTokenPath(id), nil, &u)
		ctx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) || id != p.id {
				return
			}
			p.rotating, p.rotateAsking, p.rotateErr = false, false, err
			if err != nil {
				p.announce = "The update token was not rotated: " + problemText(err)
				focusByID(ctx, "rotate-token")
				return
			}
			p.updates, p.rotated, p.updateURLCopied = &u, true, false
			p.announce = "Update token rotated. The new update URL is " + u.UpdateURL + ". Copies installed from an earlier CRX no longer update."
			focusByID(ctx, "update-url")
		})
	})
}

// focusByID moves the focus to the element with id once it is rendered.
func focusByID(ctx app.Context, id string) {
	ctx.Defer(func(app.Context) {
		if el := app.Window().GetElementByID(id); el != nil && el.Truthy() {
			el.Call("focus")
		}
	})
}
