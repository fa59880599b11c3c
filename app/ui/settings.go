package ui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
)

// SettingsPage shows an extension, its team's plan, and the key file that
// pipelines and the upload panel submit with. Downloading the key file
// creates a new key (the previous one stops working), after a confirmation.
type SettingsPage struct {
	app.Compo

	id        int64
	extension *api.Extension
	session   *api.Session
	err       error

	confirming bool
	busy       bool
	keyErr     error
	downloaded bool
	announce   string
	// ctx is the page's own context: the buttons that start work are
	// replaced as it runs, and a handler's context dies with its element.
	ctx app.Context
}

func (p *SettingsPage) OnNav(ctx app.Context) {
	p.ctx = ctx
	path := strings.TrimPrefix(ctx.Page().URL().Path, "/extensions/")
	p.id, _ = strconv.ParseInt(strings.TrimSuffix(path, "/settings"), 10, 64)
	p.extension, p.err = nil, nil
	p.confirming, p.busy, p.keyErr, p.downloaded, p.announce = false, false, nil, false, ""
	currentSession(ctx, func(s *api.Session) { p.session = s })
	c, id := apiClient(), p.id
	ctx.Async(func() {
		e, err := c.Extension(ctx, id)
		ctx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) {
				return
			}
			p.extension, p.err = e, err
		})
	})
}

func (p *SettingsPage) Render() app.UI {
	ext := "/extensions/" + strconv.FormatInt(p.id, 10)
	crumbs := app.P().Class("crumbs").Body(
		app.A().Href("/").Text("Extensions"), app.Text(" / "),
		app.A().ID("extension-link").Href(ext).Text(p.extensionName()), app.Text(" / "),
	)
	var body app.UI
	switch {
	case p.err != nil:
		body = statusView("error", problemText(p.err))
	case p.extension == nil || p.session == nil:
		body = statusView("loading", "Loading the settings…")
	default:
		body = app.Div().Body(p.renderFacts(), p.renderKey())
	}
	return shell("extensions",
		crumbs,
		app.H1().Text("Settings"),
		body,
		app.P().ID("settings-status").Class("visually-hidden").Attr("role", "status").
			Aria("live", "polite").Aria("atomic", "true").Text(p.announce),
	)
}

func (p *SettingsPage) extensionName() string {
	if p.extension != nil {
		return p.extension.Name
	}
	return "Extension"
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
	section := app.Section().ID("key-section").Class("settings-key")
	title := app.H2().Text("Key file")
	switch {
	case s.Kind != api.KindAdmin:
		return section.Body(title, app.P().ID("key-admins-only").Class("state").Text("Only the extension's admins manage its key file."))
	case s.Team == nil || s.Team.Plan != api.PlanProfessional:
		return section.Body(title, app.P().ID("key-plan-required").Class("state").Text(fmt.Sprintf(
			"Manual upload needs the Professional plan, and so do pipelines. %s is on the %s plan: upgrade the team to get a key file.",
			teamName(s), planName(teamPlan(s)))))
	}
	var action app.UI
	if p.confirming {
		action = app.Div().ID("key-confirm").Class("confirm").Attr("role", "group").Aria("labelledby", "key-confirm-text").Body(
			app.P().ID("key-confirm-text").Body(
				app.Strong().Text("Create a new key? "),
				app.Text("The previous key stops working at once: every pipeline that uses it must be updated with the new key.json."),
			),
			app.Button().ID("confirm-key").Type("button").Class("primary").Disabled(p.busy).
				Text(map[bool]string{true: "Creating…", false: "Create the key and download key.json"}[p.busy]).OnClick(p.createKey),
			app.Button().ID("cancel-key").Type("button").Disabled(p.busy).Text("Cancel").OnClick(p.cancelKey),
		)
	} else {
		action = app.Button().ID("download-key").Type("button").Text("Download key file").OnClick(p.askKey)
	}
	return section.Body(
		title,
		app.P().Class("muted").Text("Pipelines and the upload panel authenticate with a key file, key.json. Betaport keeps only a hash of the key, so each download creates a new one and the file is shown only then. Keep it secret: it publishes bundles."),
		action,
		app.If(p.downloaded, app.P().ID("key-downloaded").Class("state state-ok").Text(
			"key.json downloaded. The previous key no longer works: update your pipelines with the new file.")),
		app.If(p.keyErr != nil, app.P().ID("key-error").Class("state state-error").Text(problemText(p.keyErr))),
	)
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

func (p *SettingsPage) askKey(ctx app.Context, e app.Event) {
	p.confirming, p.keyErr = true, nil
	p.announce = "Creating a new key makes the previous key stop working. Confirm or cancel."
	focusByID(p.ctx, "confirm-key")
}

func (p *SettingsPage) cancelKey(ctx app.Context, e app.Event) {
	p.confirming = false
	p.announce = "Cancelled. The key was not changed."
	focusByID(p.ctx, "download-key")
}

func (p *SettingsPage) createKey(ctx app.Context, e app.Event) {
	if p.busy {
		return
	}
	p.busy, p.keyErr, p.downloaded = true, nil, false
	c, id, ctx := apiClient(), p.id, p.ctx
	ctx.Async(func() {
		var kf api.KeyFile
		err := c.Do(ctx, http.MethodPost, api.KeyPath(id), nil, &kf)
		ctx.Dispatch(func(ctx app.Context) {
			if signedOut(ctx, err) {
				return
			}
			p.busy, p.confirming, p.keyErr = false, false, err
			if err != nil {
				p.announce = "The key was not created: " + problemText(err)
				focusByID(ctx, "download-key")
				return
			}
			b, _ := json.MarshalIndent(kf, "", "  ")
			saveFile(ctx, "key.json", "application/json", string(b)+"\n")
			p.downloaded = true
			p.announce = "key.json downloaded. The previous key no longer works."
			focusByID(ctx, "download-key")
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
