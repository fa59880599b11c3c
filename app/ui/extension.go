package ui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
)

// bundlesList is an extension's bundles, newest first (index-based pages):
// the list view of the model's list (model.Bundles).
func bundlesList() *pageList[[]betaport.Bundle, betaport.Bundle] {
	return &pageList[[]betaport.Bundle, betaport.Bundle]{listSpec: listSpec[[]betaport.Bundle, betaport.Bundle]{
		name: "bundles", section: "bundles", rowsID: "bundle-rows", label: "Bundles",
		grid: "bundles-grid", columns: bundleColumns,
		loading: "Loading bundles…", end: "That is every bundle.",
		pageSize: model.BundlesPageSize, items: model.BundlesOf,
		hasMore: fetch.IndexHasMore[betaport.Bundle](model.BundlesPageSize),
	}}
}

func bundlesKeys(id int64) fetch.GetKey[[]betaport.Bundle] { return model.BundlesKeys(id) }

// ExtensionPage shows one extension and its bundles, newest first, in an
// infinite list. Its state and transitions are a model.Bundles (the record,
// the list, rollbacks, live events); the page renders it, hands it the
// person's events and the event stream's, and does the effects it asks
// for (title, focus, scroll, sign-in).
type ExtensionPage struct {
	app.Compo

	m        *model.Bundles
	bundles  *pageList[[]betaport.Bundle, betaport.Bundle]
	stopLive func()
	tester   bool // a tester opened the admins' page
}

func (p *ExtensionPage) OnInit() { p.bundles = bundlesList() }

// OnNav opens the extension the address names: its record, the first page
// of its bundles and its event stream (nothing again for the same one).
func (p *ExtensionPage) OnNav(ctx app.Context) {
	if p.m == nil {
		p.m = model.NewBundles(model.BundlesConfig{
			Env: pageEnv(ctx), Cache: listCache(),
			Fallback: prerenderedPages[[]betaport.Bundle], MaxPages: keptPages(model.BundlesPageSize),
			Title:     func(t string) { setTitle(ctx, t) },
			SignedOut: func(err error) { signedOut(ctx, err) },
			Read:      func(e betaport.Extension) { rememberExtension(&e) },
			// The list is back: so is the person's place in it.
			Loaded:        func() { restoreScroll(ctx, ctx.Page().URL().Path) },
			FocusRollback: func(n int64) { focusOnceDrawn(ctx, p.m.Top(), rollbackButton(n)) },
		})
	}
	id, _ := model.ExtensionID(ctx.Page().URL().Path)
	list := p.m.Infinite()
	p.m.Open(id)
	if list != nil && p.m.Infinite() == list {
		return
	}
	if p.stopLive != nil {
		p.stopLive()
	}
	currentSession(ctx, func(s *api.Session) { p.tester = s != nil && s.Kind == api.KindTester })
	// A publish from anywhere shows at once (model.Live decides what is
	// read again).
	bundles := p.m.ChannelsEvent("bundles")
	p.stopLive = listenEvents(ctx, id, map[string]func(api.Revision, bool){
		"bundles":  func(rev api.Revision, known bool) { p.m.Event(rev, known); bundles(rev, known) },
		"channels": p.m.ChannelsEvent("channels"),
		"testers":  p.m.ChannelsEvent("testers"),
		"feedback": p.m.FeedbackEvent,
	})
}

// OnPreRender renders, on the server, the extension and the first page of
// its bundles that the server fetched for this visitor.
func (p *ExtensionPage) OnPreRender(ctx app.Context) {
	if s, ok := prerendered[api.Session](api.PathSession); ok && s.Kind == api.KindTester {
		p.tester = true // the admins-only page, on the server too
		return
	}
	id, _ := model.ExtensionID(ctx.Page().URL().Path)
	var ext *betaport.Extension
	if e, ok := prerendered[betaport.Extension](api.ExtensionPath(id)); ok {
		ext = &e
		setTitle(ctx, e.Name)
	}
	p.m = model.PrerenderedBundles(id, ext, prerenderedPages[[]betaport.Bundle](firstBundlesKey(id)))
}

// OnDismount stops the event stream and closes the model: its requests are
// cancelled.
func (p *ExtensionPage) OnDismount() {
	if p.stopLive != nil {
		p.stopLive()
		p.stopLive = nil
	}
	if p.m != nil {
		p.m.Close()
		p.m = nil
	}
}

// model is the page's model, or an empty one before there is any.
func (p *ExtensionPage) model() *model.Bundles {
	if p.m == nil {
		return model.PrerenderedBundles(0, nil, nil)
	}
	return p.m
}

func (p *ExtensionPage) Render() app.UI {
	if p.tester {
		return adminsOnlyPage()
	}
	m := p.model()
	p.bundles.follow(m.Infinite(), m.List)
	var body []app.UI
	switch e := m.Record(); {
	case m.Extension.Err != nil:
		body = []app.UI{
			app.H1().Text("Extension"), statusView("error", problemText(m.Extension.Err)),
			app.P().Body(app.A().ID("back-home").Href("/").Text("Go to your extensions")),
		}
	case e == nil:
		body = []app.UI{app.H1().Text("Extension"), statusView("loading", "Loading the extension…")}
	default:
		body = []app.UI{
			app.P().Class("crumbs").Body(app.A().Href("/").Text("Extensions"), app.Text(" / ")),
			app.H1().ID("extension-name").Text(e.Name),
			extensionNav(e.ID, "bundles"),
			// The facts and the upload panel side by side on a wide
			// screen, so the bundles list below starts on screen.
			app.Div().Class("ext-top").Body(
				app.Div().Class("ext-about").Body(
					app.Dl().Class("facts").Body(
						app.Dt().Text("Extension id"), app.Dd().Text(strconv.FormatInt(e.ID, 10)),
						app.Dt().Text("Current bundle"), app.Dd().ID("current-bundle").Text(currentNumber(*e)),
						app.Dt().Text("Current version"), app.Dd().ID("current-version").Text(currentVersion(m, *e)),
						// Once there is more than the default channel, or
						// a rollout on it: before, it would only say beta.
						app.If(len(m.Channels) > 1 || (len(m.Channels) == 1 && m.Channels[0].Rollout != nil),
							app.Dt().Text("Channels"), app.Dd().ID("channels-current").Body(
								app.A().Href(fmt.Sprintf("/extensions/%d/channels", e.ID)).Text(channelsSummary(m.Channels)),
							),
						),
					),
					// Always in the tree, shown once there is a bundle: the
					// first upload must not shift the nodes (and buttons)
					// below it.
					app.Div().ID("current-download").Hidden(e.CurrentBundle == 0).Body(downloadLink(*e)),
				),
				&UploadPanel{ExtensionID: e.ID, ExtensionName: e.Name, OnPublished: p.published, Channels: channelNames(p.m.Channels)},
			),
			p.renderBundles(m),
		}
	}
	return shell("extensions", body...)
}

// currentVersion is the version the current bundle is served as, when the
// list holds it (on its first page, most of the time).
func currentVersion(m *model.Bundles, e betaport.Extension) string {
	if e.CurrentBundle == 0 {
		return "None published yet"
	}
	if b, ok := m.Current(); ok {
		return versionText(b)
	}
	return "…"
}

// renderBundles is the bundles list, headed by how many are loaded once
// there are some, and by what the last rollback did.
func (p *ExtensionPage) renderBundles(m *model.Bundles) app.UI {
	loaded := m.Rows().Len()
	return &listView[[]betaport.Bundle, betaport.Bundle]{
		List: p.bundles,
		Header: app.Div().Body(
			app.H2().Body(app.Text("Bundles"), app.If(loaded > 0,
				app.Text(" "), app.Span().ID("bundles-total").Class("muted").Text(bundlesTotal(loaded, m.Total())))),
			rollbackViews(m.Rollback),
		),
		Empty: "No bundles yet. Submit a zip from your pipeline, or upload one here, and it appears on top.",
		Row: func(b betaport.Bundle) app.UI {
			return &bundleRow{Bundle: b, Rollback: m.Rollback, RollingBack: m.Rollback.RollingBack == b.Number, Channels: m.ChannelsText(b.Number)}
		},
		Key: model.BundleNumber,
	}
}

// bundlesTotal says how many bundles are loaded, of how many: bundles are
// numbered from 1, so the top one's number is how many there are, and a
// publish arriving on top moves it ("100 of 121 loaded", then "100 of
// 122 loaded") while the loaded rows stay as many.
func bundlesTotal(loaded int, top int64) string {
	if top > int64(loaded) {
		return fmt.Sprintf("(%d of %d loaded)", loaded, top)
	}
	return fmt.Sprintf("(%d loaded)", loaded)
}

// published shows a bundle the upload panel just published, without a
// reload (model.Bundles.Published).
func (p *ExtensionPage) published(b betaport.Bundle, current bool) {
	if p.m != nil {
		p.m.Published(b, current)
	}
}

// rollbackButton selects the "Roll back to #N" button of bundle n's row.
// focusOnceDrawn focuses selector once the bundles list's rows show top
// first. go-app reuses a row's elements for whichever bundle comes to its
// place, so a focus given before a new bundle's row is drawn on top stays
// with the place and lands on the next row's button when the rows move
// down (seen on a busy machine). It waits a frame at a time, up to a
// second, then focuses what is there.
func focusOnceDrawn(ctx app.Context, top int64, selector string) {
	want := strconv.FormatInt(top, 10)
	var try func(tries int)
	try = func(tries int) {
		ctx.After(16*time.Millisecond, func(ctx app.Context) {
			first := app.Window().Get("document").Call("querySelector", "#bundle-rows [data-bundle]")
			if tries < 60 && (!first.Truthy() || first.Get("dataset").Get("bundle").String() != want) {
				try(tries + 1)
				return
			}
			focusFirst(ctx, selector)
		})
	}
	first := app.Window().Get("document").Call("querySelector", "#bundle-rows [data-bundle]")
	if first.Truthy() && first.Get("dataset").Get("bundle").String() == want {
		focusFirst(ctx, selector)
		return
	}
	try(0)
}

func rollbackButton(n int64) string {
	return `[data-bundle="` + strconv.FormatInt(n, 10) + `"] .rollback`
}

// rollbackViews are the status of the last rollback and why it failed,
// always in the tree (screen readers hear what lands in them).
func rollbackViews(r *model.Rollback) app.UI {
	status, errText := "", ""
	switch {
	case r.RollingBack != 0:
		status = fmt.Sprintf("Rolling back to #%d…", r.RollingBack)
	case r.Done != nil:
		status = fmt.Sprintf("Rolled back: bundle #%d serves the code of #%d again, as version %s. Testers get it now.", r.Done.Number, r.Of, r.Done.Version)
	}
	if r.Err != nil {
		errText = fmt.Sprintf("Rolling back to #%d failed: %s", r.Of, problemText(r.Err))
	}
	return app.Div().Body(
		app.P().ID("rollback-status").Class("rollback-status").Attr("role", "status").Text(status),
		app.P().ID("rollback-error").Class("rollback-error state-error").Attr("role", "alert").Text(errText),
	)
}

// channelNames are the names of channels, in their order.
func channelNames(list []*betaport.Channel) []string {
	names := make([]string, len(list))
	for i, c := range list {
		names[i] = c.Name
	}
	return names
}

// channelsSummary is each channel's current bundle, and a rollout's:
// "beta #120 · internal #118, rolling out #121 at 25 %".
func channelsSummary(list []*betaport.Channel) string {
	if len(list) == 0 {
		return "…"
	}
	parts := make([]string, len(list))
	for i, c := range list {
		current := "none yet"
		if c.CurrentBundle != 0 {
			current = fmt.Sprintf("#%d", c.CurrentBundle)
		}
		parts[i] = c.Name + " " + current
		if r := c.Rollout; r != nil {
			state := "rolling out"
			if r.State == betaport.RolloutHalted {
				state = "halted"
			}
			parts[i] += fmt.Sprintf(", %s #%d at %d %%", state, r.Bundle, r.Percent)
		}
	}
	return strings.Join(parts, " · ")
}
