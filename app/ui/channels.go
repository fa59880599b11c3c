package ui

import (
	"context"
	"fmt"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
)

// ChannelsPage shows an extension's channels: each one's current bundle,
// its testers and its rollout, with the rollout's controls; a form that
// makes a channel and one that promotes a published bundle to a channel,
// at once or as a staged rollout. Its state and steps are a model.Channels;
// the component renders it and hands it the person's events. It follows
// the extension's event stream: a change of the channels (here, in another
// tab, from the command line) or of the testers' copies reads them again.
type ChannelsPage struct {
	app.Compo

	id     int64
	m      *model.Channels
	tester bool
	ext    fetch.State[betaport.Extension]

	closeExtension func()
	stopLive       func()
	leave          context.CancelFunc
	ctx            app.Context
}

func (p *ChannelsPage) OnInit() { p.m = model.NewChannels(model.ChannelsConfig{}) }

func (p *ChannelsPage) OnNav(ctx app.Context) {
	setTitle(ctx, "Channels")
	p.ctx = ctx
	p.OnDismount() // the previous visit's
	p.id, _ = model.ExtensionID(ctx.Page().URL().Path)
	visit, leave := context.WithCancel(ctx)
	p.leave = leave
	env := pageEnv(ctx)
	env.Context = visit
	typed := p.m
	m := model.NewChannels(model.ChannelsConfig{
		Env: env, Cache: listCache(), ExtensionID: p.id,
		SignedOut: func(err error) bool { return signedOut(ctx, err) },
		ErrorText: problemText,
		Clear:     func(field string) { setField(ctx, field, "") },
	})
	// The fields keep what was typed in them (typedValue).
	m.NewName, m.PromoteBundle, m.PromoteChannel, m.PromotePercent = typed.NewName, typed.PromoteBundle, typed.PromoteChannel, typed.PromotePercent
	m.MoveEmail, m.MoveChannel = typed.MoveEmail, typed.MoveChannel
	p.m = m
	currentSession(ctx, func(s *api.Session) { p.tester = s != nil && s.Kind == api.KindTester })
	_, p.closeExtension = openExtension(ctx, p.id, func(s fetch.State[betaport.Extension]) {
		if signedOut(ctx, s.Err) {
			return
		}
		p.ext = s
	})
	// The channels change with a promote, a rollout's step, a publish
	// (a "bundles" event), a tester moved (a "channels" event), and their
	// counts with the testers' copies' checks (a "testers" event).
	seen := map[string]api.Revision{}
	follow := func(name string) func(api.Revision, bool) {
		return func(rev api.Revision, known bool) {
			last, ok := seen[name]
			seen[name] = rev
			if !known || (ok && last != rev) {
				m.ReadAgain()
			}
		}
	}
	p.stopLive = listenEvents(ctx, p.id, map[string]func(api.Revision, bool){
		"bundles": follow("bundles"), "channels": follow("channels"), "testers": follow("testers"),
	})
}

// OnDismount ends the visit: its requests and the event stream.
func (p *ChannelsPage) OnDismount() {
	if p.leave != nil {
		p.leave()
		p.leave = nil
	}
	if p.stopLive != nil {
		p.stopLive()
		p.stopLive = nil
	}
	if p.closeExtension != nil {
		p.closeExtension()
		p.closeExtension = nil
	}
	if p.m != nil {
		p.m.Close()
	}
}

func (p *ChannelsPage) Render() app.UI {
	if p.tester {
		return adminsOnlyPage()
	}
	m := p.m
	var body app.UI
	switch {
	case m.List.Err != nil && !m.List.HasData:
		body = statusView("error", problemText(m.List.Err))
	case !m.List.HasData:
		body = statusView("loading", "Loading the channels…")
	default:
		body = app.Div().Body(p.renderList(), p.renderPromote(), p.renderMove(), p.renderCreate())
	}
	return shell("extensions",
		extensionCrumbs(p.id),
		app.H1().Text("Channels"),
		extensionNav(p.id, "channels"),
		app.P().Class("muted").Text("Each tester is on one channel and gets its bundle. A bundle can go to a channel at once, or first to a share of its testers: a staged rollout, which you advance, halt or complete."),
		body,
		app.P().ID("channels-error").Class("state state-error").Attr("role", "alert").Hidden(m.Err == nil).Text(m.ErrText()),
		app.P().ID("channels-status").Class("state state-ok").Attr("role", "status").Aria("live", "polite").
			Hidden(m.Done == "").Text(m.Done),
	)
}

// renderList is one block per channel. Every block has the same nodes
// (hidden where they do not apply): go-app matches children by position.
func (p *ChannelsPage) renderList() app.UI {
	m := p.m
	items := m.Items()
	blocks := make([]app.UI, 0, len(items))
	for _, c := range items {
		blocks = append(blocks, p.renderChannel(c))
	}
	return app.Div().ID("channels").Attr("role", "list").Body(blocks...)
}

func (p *ChannelsPage) renderChannel(c *betaport.Channel) app.UI {
	m := p.m
	r := c.Rollout
	current := "no bundle yet"
	if c.CurrentBundle != 0 {
		current = fmt.Sprintf("#%d", c.CurrentBundle)
	}
	busy := m.Busy == c.Name
	halted := r != nil && r.State == betaport.RolloutHalted
	rolloutText, bundle := "", int64(0)
	if r != nil {
		rolloutText, bundle = model.RolloutText(c), r.Bundle
	}
	act := func(action string) app.EventHandler {
		return func(ctx app.Context, e app.Event) {
			e.PreventDefault()
			m.ChangeRollout(c.Name, action)
		}
	}
	advanceID := model.ChannelsFieldAdvance + c.Name
	return app.Section().Class("channel").DataSet("channel", c.Name).Attr("role", "listitem").Aria("labelledby", "channel-"+c.Name).Body(
		app.H2().ID("channel-"+c.Name).Text(c.Name),
		app.P().Class("channel-facts").Body(
			app.Text("Current: "), app.Strong().Class("channel-current").Text(current),
			app.Text(fmt.Sprintf(" · %d testers", c.Testers)),
		),
		app.Div().Class("channel-rollout").Hidden(r == nil).Body(
			app.P().Body(
				app.Text(fmt.Sprintf("Rolling out #%d: ", bundle)),
				app.Strong().Class("rollout-text").Text(rolloutText),
			),
			app.Form().Class("invite rollout-advance").OnSubmit(act(betaport.RolloutAdvance)).Body(
				app.Label().For(advanceID).Text("Advance to (%)"),
				typedValue(app.Input().ID(advanceID).Class("advance-percent").Type("text").Attr("inputmode", "numeric").
					Placeholder("100"), m.Advance[c.Name]).OnInput(func(ctx app.Context, e app.Event) {
					m.SetAdvance(c.Name, ctx.JSSrc().Get("value").String())
				}),
				button().Type("submit").Class("primary advance").Aria("disabled", busy || halted).Text("Advance"),
			),
			app.Div().Class("rollout-buttons").Body(
				button().Class("halt").Hidden(halted).Aria("disabled", busy).OnClick(act(betaport.RolloutHalt)).Text("Halt"),
				button().Class("resume").Hidden(!halted).Aria("disabled", busy).OnClick(act(betaport.RolloutResume)).Text("Resume"),
				button().Class("complete").Aria("disabled", busy).OnClick(act(betaport.RolloutComplete)).Text("Complete: everyone gets it"),
			),
			app.P().Class("muted halt-note").Text(fmt.Sprintf(
				"Halting stops #%d reaching anyone new. Testers who have it keep it: a browser never goes back a version. To take it back from them, roll back on the bundles page: that reaches everyone on %s.",
				bundle, c.Name)),
		),
	)
}

// renderPromote is the form that puts a published bundle on a channel.
func (p *ChannelsPage) renderPromote() app.UI {
	m := p.m
	options := []app.UI{}
	for _, c := range m.Items() {
		options = append(options, app.Option().Value(c.Name).Selected(c.Name == m.PromoteChannel).Text(c.Name))
	}
	return app.Section().ID("promote-section").Class("settings-key").Aria("labelledby", "promote-title").Body(
		app.H2().ID("promote-title").Text("Promote a bundle"),
		app.P().Class("muted").Text("Puts a bundle already published on a channel: the same bytes and version, nothing uploaded again. Leave the share empty for everyone on the channel."),
		app.Form().ID("promote-form").Class("invite").OnSubmit(func(ctx app.Context, e app.Event) {
			e.PreventDefault()
			m.Promote()
		}).Body(
			app.Label().For("promote-bundle").Text("Bundle #"),
			typedValue(app.Input().ID("promote-bundle").Type("text").Attr("inputmode", "numeric").Required(true).Placeholder("12"),
				m.PromoteBundle).OnInput(func(ctx app.Context, e app.Event) { m.PromoteBundle = ctx.JSSrc().Get("value").String() }),
			app.Label().For("promote-channel").Text("to"),
			app.Select().ID("promote-channel").OnChange(func(ctx app.Context, e app.Event) {
				m.PromoteChannel = ctx.JSSrc().Get("value").String()
			}).Body(options...),
			app.Label().For("promote-percent").Text("for (% of its testers)"),
			typedValue(app.Input().ID("promote-percent").Type("text").Attr("inputmode", "numeric").Placeholder("all"),
				m.PromotePercent).OnInput(func(ctx app.Context, e app.Event) { m.PromotePercent = ctx.JSSrc().Get("value").String() }),
			button().ID("promote").Type("submit").Class("primary").Aria("disabled", m.Busy == "promote").Text("Promote"),
		),
	)
}

// renderMove is the form that puts a tester on another channel.
func (p *ChannelsPage) renderMove() app.UI {
	m := p.m
	options := []app.UI{}
	for _, c := range m.Items() {
		options = append(options, app.Option().Value(c.Name).Selected(c.Name == m.MoveChannel).Text(c.Name))
	}
	return app.Section().ID("move-section").Class("settings-key").Aria("labelledby", "move-title").Body(
		app.H2().ID("move-title").Text("Move a tester"),
		app.P().Class("muted").Text("A tester gets their channel's bundle at their next update check."),
		app.Form().ID("move-form").Class("invite").OnSubmit(func(ctx app.Context, e app.Event) {
			e.PreventDefault()
			m.Move()
		}).Body(
			app.Label().For("move-email").Text("E-mail"),
			typedValue(app.Input().ID("move-email").Type("email").Required(true).Placeholder("ada@example.com"),
				m.MoveEmail).OnInput(func(ctx app.Context, e app.Event) { m.MoveEmail = ctx.JSSrc().Get("value").String() }),
			app.Label().For("move-channel").Text("to"),
			app.Select().ID("move-channel").OnChange(func(ctx app.Context, e app.Event) {
				m.MoveChannel = ctx.JSSrc().Get("value").String()
			}).Body(options...),
			button().ID("move").Type("submit").Class("primary").Aria("disabled", m.Busy == "move").Text("Move"),
		),
	)
}

// renderCreate is the form that makes a channel.
func (p *ChannelsPage) renderCreate() app.UI {
	m := p.m
	return app.Section().ID("create-channel-section").Class("settings-key").Aria("labelledby", "create-channel-title").Body(
		app.H2().ID("create-channel-title").Text("New channel"),
		app.Form().ID("channel-form").Class("invite").OnSubmit(func(ctx app.Context, e app.Event) {
			e.PreventDefault()
			m.Create()
		}).Body(
			app.Label().For("channel-name").Text("Name"),
			typedValue(app.Input().ID("channel-name").Type("text").Required(true).MaxLength(betaport.MaxChannelName).
				Placeholder("internal"), m.NewName).OnInput(func(ctx app.Context, e app.Event) { m.NewName = ctx.JSSrc().Get("value").String() }),
			button().ID("create-channel").Type("submit").Class("primary").Aria("disabled", m.Busy == "create").Text("Make channel"),
		),
	)
}
