package ui

import (
	"net/url"
	"strconv"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
)

type testerPage = model.TesterPage

// testersList is an extension's testers, as searched and filtered (cursor
// pages): how the list renders. The list itself is the page model's.
func testersList() *pageList[testerPage, betaport.Tester] {
	return &pageList[testerPage, betaport.Tester]{listSpec: listSpec[testerPage, betaport.Tester]{
		name: "testers", section: "testers-list", rowsID: "testers", label: "Testers",
		grid: "testers-grid", columns: []string{"Name", "E-mail", "Status", "Invited", "Installed", ""},
		loading: "Loading testers…", end: "That is every tester.",
		pageSize: model.TestersPageSize, items: model.TestersOf,
	}}
}

// testersKeys are the pages of an extension's testers that params (q,
// status) select.
func testersKeys(id int64, params url.Values) fetch.GetKey[testerPage] {
	return model.TestersKeys(id, params.Get("q"), params.Get("status"))
}

// testerFields are the ids of the fields the model writes.
var testerFields = map[model.TesterField]string{
	model.TesterFieldSearch: "tester-search",
	model.TesterFieldEmail:  "invite-email",
	model.TesterFieldName:   "invite-name",
}

// TestersPage lets an admin find, invite and revoke an extension's testers.
// Its state and steps are a model.Testers (tested natively in app/model);
// the component renders it and hands it the person's events.
type TestersPage struct {
	app.Compo

	m       *model.Testers
	testers *pageList[testerPage, betaport.Tester]
	// ctx is the page's own context (OnNav's). The rows' presses go to the
	// model through it, so that the page renders after them: a handler's
	// context is its element's, which goes with the row's buttons.
	ctx app.Context
	// live stops the event stream of the extension listened to, liveID.
	live   func()
	liveID int64
	// channels are the extension's channels, for the channel filter and
	// the invite form.
	channels *model.Channels
}

func (p *TestersPage) OnInit() { p.testers = testersList() }

// page returns the model, made with the page's context the first time.
func (p *TestersPage) page(ctx app.Context) *model.Testers {
	if p.m != nil {
		return p.m
	}
	var cache *fetch.Cache // the server renders without one: it reads nothing
	if app.IsClient {
		cache = listCache()
	}
	p.m = model.NewTesters(model.TestersConfig{
		Env: pageEnv(ctx), Session: appSession(ctx),
		Cache: cache, Fallback: prerenderedPages[testerPage], MaxPages: keptPages(model.TestersPageSize),
		Title:    func(t string) { setTitle(ctx, t) },
		Navigate: ctx.Navigate,
		Read:     func(e betaport.Extension) { rememberExtension(&e) },
		Loaded:   func() { restoreScroll(ctx, ctx.Page().URL().Path) },
		Address: func(q, status string) {
			channel := ""
			if p.m != nil {
				channel = p.m.Channel
			}
			keepInAddress(ctx, q, status, channel)
		},
		SetField: func(f model.TesterField, v string) { setField(ctx, testerFields[f], v) },
		Focus: func(f model.TesterFocus, id int64) {
			row := `[data-tester="` + strconv.FormatInt(id, 10) + `"] `
			switch f {
			case model.TesterFocusYes:
				focusFirst(ctx, row+".confirm-revoke")
			case model.TesterFocusRevoke:
				focusFirst(ctx, row+".revoke")
			case model.TesterFocusRestoreOffer:
				focusByID(ctx, "restore-offer")
			case model.TesterFocusLink:
				focusByID(ctx, "invite-url")
			}
		},
		Copy: func(text string) {
			app.Window().Get("navigator").Get("clipboard").Call("writeText", text)
		},
	})
	return p.m
}

func (p *TestersPage) OnNav(ctx app.Context) {
	p.ctx = ctx
	u := ctx.Page().URL()
	id, _ := model.ExtensionID(u.Path)
	// The search and the status filter live in the address (?q=&status=),
	// so back, forward, a reload and a shared link bring the same list.
	m := p.page(ctx)
	m.SetChannel(u.Query().Get("channel"))
	m.Open(id, u.Query().Get("q"), u.Query().Get("status"))
	if p.channels == nil || p.channels.ExtensionID != id {
		if p.channels != nil {
			p.channels.Close()
		}
		// The channels, for the filter and the invite form.
		p.channels = model.NewChannels(model.ChannelsConfig{Env: pageEnv(ctx), Cache: listCache(), ExtensionID: id})
	}
	if p.live == nil || p.liveID != id {
		p.stopLive()
		// A tester's copy checking in, an invite or a revoke from
		// anywhere shows without a reload (model.Live decides what is
		// read again).
		p.live, p.liveID = listenEvents(ctx, id, map[string]func(api.Revision, bool){"testers": m.Live.Event}), id
	}
}

func (p *TestersPage) stopLive() {
	if p.live != nil {
		p.live()
		p.live = nil
	}
}

// OnPreRender renders, on the server, the first page of testers the server
// fetched for this admin.
func (p *TestersPage) OnPreRender(ctx app.Context) {
	u := ctx.Page().URL()
	id, _ := model.ExtensionID(u.Path)
	s, ok := prerendered[api.Session](api.PathSession)
	p.page(ctx).Prerender(id, u.Query().Get("q"), u.Query().Get("status"), ok && s.Kind == api.KindTester)
}

func (p *TestersPage) OnDismount() {
	p.stopLive()
	if p.m != nil {
		p.m.Close()
	}
	if p.channels != nil {
		p.channels.Close()
		p.channels = nil
	}
}

// keepInAddress writes the search and the filter into the address, in
// place (no new history entry per keystroke).
func keepInAddress(ctx app.Context, q, status string, channel ...string) {
	u := *ctx.Page().URL()
	query := u.Query()
	set := func(k, v string) {
		if v == "" {
			query.Del(k)
		} else {
			query.Set(k, v)
		}
	}
	set("q", q)
	set("status", status)
	if len(channel) > 0 {
		set("channel", channel[0])
	}
	u.RawQuery = query.Encode()
	ctx.Page().ReplaceURL(&u)
}

// dispatch runs f, a row's press, on the page's context: the page renders
// afterwards.
func (p *TestersPage) dispatch(f func(m *model.Testers)) {
	if p.m == nil || p.ctx == nil {
		return
	}
	m := p.m
	p.ctx.Dispatch(func(app.Context) { f(m) })
}

func (p *TestersPage) onSearch(ctx app.Context, e app.Event) {
	if p.m != nil {
		p.m.Search(ctx.JSSrc().Get("value").String())
	}
}

func (p *TestersPage) onChannel(ctx app.Context, e app.Event) {
	if p.m != nil {
		p.m.FilterChannel(ctx.JSSrc().Get("value").String())
	}
}

func (p *TestersPage) onInviteChannel(ctx app.Context, e app.Event) {
	if p.m != nil {
		p.m.InviteChannel = ctx.JSSrc().Get("value").String()
	}
}

// manyChannels reports whether the extension has channels to choose
// between.
func (p *TestersPage) manyChannels() bool { return p.channels != nil && len(p.channels.Items()) > 1 }

// channelOptions are the channels as a select's options, the one picked
// selected, after first (the option for none, when not nil).
func (p *TestersPage) channelOptions(picked string, first app.UI) []app.UI {
	var options []app.UI
	if first != nil {
		options = append(options, first)
	}
	names := []string{betaport.DefaultChannel}
	if p.channels != nil && len(p.channels.Items()) > 0 {
		names = channelNames(p.channels.Items())
	}
	for _, n := range names {
		options = append(options, app.Option().Value(n).Text(n).Selected(n == picked))
	}
	return options
}

func (p *TestersPage) onStatus(ctx app.Context, e app.Event) {
	if p.m != nil {
		p.m.Filter(ctx.JSSrc().Get("value").String())
	}
}

func (p *TestersPage) onInvite(ctx app.Context, e app.Event) {
	if p.m != nil {
		p.m.Invite()
	}
}

func (p *TestersPage) onRestoreOffer(ctx app.Context, e app.Event) {
	if p.m != nil {
		p.m.RestoreOffered()
	}
}

func (p *TestersPage) onCopy(ctx app.Context, e app.Event) {
	if p.m != nil {
		p.m.CopyLink()
	}
}

func (p *TestersPage) typedEmail(ctx app.Context, e app.Event) {
	if p.m != nil {
		p.m.Email = ctx.JSSrc().Get("value").String()
	}
}

// daysChoiceText names one of the invite form's expiry choices.
func daysChoiceText(days int) string {
	switch days {
	case 0:
		// The service's (14 days unless its operator set another); the
		// note after the invite gives the date.
		return "The default time"
	case 1:
		return "1 day"
	}
	return itoa(days) + " days"
}

func (p *TestersPage) choseDays(ctx app.Context, e app.Event) {
	if p.m != nil {
		p.m.ExpiresInDays, _ = strconv.Atoi(ctx.JSSrc().Get("value").String())
	}
}

func (p *TestersPage) typedName(ctx app.Context, e app.Event) {
	if p.m != nil {
		p.m.Name = ctx.JSSrc().Get("value").String()
	}
}

// state is the model, or an empty one before it exists.
func (p *TestersPage) state() *model.Testers {
	if p.m == nil {
		return &model.Testers{}
	}
	return p.m
}

func (p *TestersPage) Render() app.UI {
	m := p.state()
	if m.Tester {
		return adminsOnlyPage()
	}
	// The list is the model's: the list view renders its last state.
	p.testers.list, p.testers.state = m.Infinite(), m.List
	return shell("extensions",
		extensionCrumbs(m.ExtensionID),
		app.H1().Text("Testers"),
		extensionNav(m.ExtensionID, "testers"),
		p.renderInvite(m),
		app.Div().Class("toolbar").Body(
			app.Div().Body(
				app.Label().For("tester-search").Text("Search"),
				typedValue(app.Input().ID("tester-search").Type("search").Placeholder("e-mail or name"), m.Query).
					OnInput(p.onSearch),
			),
			app.Div().Body(
				app.Label().For("tester-status").Text("Status"),
				app.Select().ID("tester-status").OnChange(p.onStatus).Body(
					app.Option().Value("").Text("All").Selected(m.Status == ""),
					app.Option().Value(betaport.TesterActive).Text("Active").Selected(m.Status == betaport.TesterActive),
					app.Option().Value(betaport.TesterInvited).Text("Invited").Selected(m.Status == betaport.TesterInvited),
					app.Option().Value(betaport.TesterRevoked).Text("Revoked").Selected(m.Status == betaport.TesterRevoked),
					app.Option().Value(betaport.TestersBehind).Text("Behind the current build").Selected(m.Status == betaport.TestersBehind),
					app.Option().Value(betaport.TestersSilent).Text("No update check for 7 days").Selected(m.Status == betaport.TestersSilent),
				),
			),
			// With one channel (or while they are read) there is nothing to
			// filter by, unless the address says a channel.
			app.If(p.manyChannels() || m.Channel != "", app.Div().Body(
				app.Label().For("tester-channel").Text("Channel"),
				app.Select().ID("tester-channel").OnChange(p.onChannel).Body(
					p.channelOptions(m.Channel, app.Option().Value("").Text("All").Selected(m.Channel == ""))...),
			)),
			button().ID("refresh-testers").Type("button").Text("Refresh").OnClick(p.testers.onRetry),
		),
		app.If(m.RevokeErr != nil, app.P().ID("revoke-error").Class("state state-error").Attr("role", "alert").Text(problemText(m.RevokeErr))),
		p.renderList(m),
	)
}

func (p *TestersPage) renderList(m *model.Testers) app.UI {
	empty := "No testers yet. Invite one above: they get a personal link to sign in with."
	if m.Filtered() {
		empty = "No tester matches. Clear the search or choose another status."
	}
	rows := p.testers.rows()
	return &listView[testerPage, betaport.Tester]{
		List: p.testers,
		Header: app.If(rows.Len() > 0,
			app.P().ID("testers-total").Class("muted").Text(strconv.Itoa(rows.Len())+" loaded")),
		Empty: empty,
		Row: func(t betaport.Tester) app.UI {
			return &testerRow{
				Tester: t, Asking: m.Asking(t.ID), Ready: m.ConfirmReady(t.ID), Now: m.Now,
				OnAsk:    func(t betaport.Tester) { p.dispatch(func(m *model.Testers) { m.Ask(t) }) },
				OnKeep:   func(t betaport.Tester) { p.dispatch(func(m *model.Testers) { m.Keep(t) }) },
				OnRevoke: func(t betaport.Tester) { p.dispatch(func(m *model.Testers) { m.Revoke(t) }) },
				OnRenew:  func(t betaport.Tester) { p.dispatch(func(m *model.Testers) { m.Renew(t) }) },
			}
		},
		Key: model.TesterID,
	}
}

func (p *TestersPage) renderInvite(m *model.Testers) app.UI {
	var result app.UI
	switch {
	case m.InviteErr != nil:
		result = app.Div().ID("invite-error").Class("state state-error").Attr("role", "alert").Body(
			app.P().Text(problemText(m.InviteErr)),
			app.If(m.Restore != "", button().ID("restore-offer").Type("button").Text("Restore them and make a new link").OnClick(p.onRestoreOffer)),
		)
	case m.Invited != nil:
		copyText := "Copy link"
		if m.Copied {
			copyText = "Copied"
		}
		result = app.Div().ID("invite-result").Class("state").Attr("role", "status").Body(
			app.P().ID("invite-note").Text(m.LinkNote+" Send this personal link to "+m.Invited.Email+". "+model.LinkNote(m.Invited)),
			app.Input().ID("invite-url").ReadOnly(true).Value(m.Invited.InviteURL).Aria("label", "Invite link"),
			button().ID("copy-invite").Type("button").Text(copyText).OnClick(p.onCopy),
		)
	}
	return app.Form().ID("invite-form").Class("invite").OnSubmit(p.onInvite).Body(
		app.H2().Text("Invite a tester"),
		app.Label().For("invite-email").Text("E-mail"),
		typedValue(app.Input().ID("invite-email").Type("email").Required(true), m.Email).OnInput(p.typedEmail),
		app.Label().For("invite-name").Text("Name"),
		typedValue(app.Input().ID("invite-name").Type("text"), m.Name).OnInput(p.typedName),
		app.Div().Class("invite-choices").Body(
			app.Div().Body(
				app.Label().For("invite-days").Text("Link works for"),
				app.Select().ID("invite-days").OnChange(p.choseDays).Body(
					app.Range(model.InviteExpiryChoices).Slice(func(i int) app.UI {
						days := model.InviteExpiryChoices[i]
						return app.Option().Value(days).Text(daysChoiceText(days)).Selected(days == m.ExpiresInDays)
					}),
				),
			),
			app.If(p.manyChannels(), app.Div().Body(
				app.Label().For("invite-channel").Text("Channel"),
				app.Select().ID("invite-channel").OnChange(p.onInviteChannel).Body(p.channelOptions(m.InviteChannel, nil)...),
			)),
		),
		button().ID("invite").Type("submit").Class("primary").Aria("disabled", m.Inviting).Text("Invite"),
		result,
	)
}
