package ui

import (
	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/model"
)

// listenBundles listens to an extension's event stream (server-sent
// events) and hands each "bundles" event to event on the UI goroutine (the
// component of ctx renders afterwards): its revision, and whether it could
// be read. What a page does with it is model.Live's to decide. The browser
// reconnects a dropped stream by itself, and the server sends the current
// revision first, so a reconnect catches up. It returns the function that
// stops listening.
func listenBundles(ctx app.Context, extensionID int64, event func(rev api.Revision, known bool)) (stop func()) {
	return listenEvents(ctx, extensionID, map[string]func(api.Revision, bool){"bundles": event})
}

// listenEvents is listenBundles for the events named in on ("bundles",
// "testers": a testers event's revision has Testers only), on one stream:
// a page opens one connection, whatever it follows.
func listenEvents(ctx app.Context, extensionID int64, on map[string]func(rev api.Revision, known bool)) (stop func()) {
	if !app.IsClient {
		return func() {}
	}
	es := app.Window().Get("EventSource").New(api.EventsPath(extensionID))
	var funcs []app.Func
	for name, event := range on {
		f := app.FuncOf(func(_ app.Value, args []app.Value) any {
			var rev api.Revision
			known := false
			if len(args) > 0 {
				rev, known = model.ParseRevision(args[0].Get("data").String())
			}
			ctx.Dispatch(func(app.Context) { event(rev, known) })
			return nil
		})
		es.Call("addEventListener", name, f)
		funcs = append(funcs, f)
	}
	// The stream dropped: the server ends it when the page's access ends
	// (a revoke, a sign-out elsewhere), and a reconnect is then refused for
	// good. Each follower takes it as news it could not read and reads
	// again, which tells the page what happened (its access ended, or the
	// service is back with what it missed).
	dropped := app.FuncOf(func(app.Value, []app.Value) any {
		ctx.Dispatch(func(app.Context) {
			for _, event := range on {
				event(api.Revision{}, false)
			}
		})
		return nil
	})
	es.Call("addEventListener", "error", dropped)
	funcs = append(funcs, dropped)
	return func() {
		es.Call("close")
		for _, f := range funcs {
			f.Release()
		}
	}
}

// liveUpdates is listenBundles for a page that reads again whenever an
// event brings a revision it does not show (shows), without reads of its
// own to wait for: changed runs then. more are the page's followers of
// other events, on the same stream: each stream holds one of the few
// connections a browser opens to a host, shared by all its tabs.
func liveUpdates(ctx app.Context, extensionID int64, shows func(api.Revision) bool, changed func(ctx app.Context), more map[string]func(api.Revision, bool)) (stop func()) {
	live := &model.Live{Shows: shows, ReadAgain: func() { changed(ctx) }}
	// What a tester gets follows their channel: a rollout's step, a
	// promote or a move to another channel is a "channels" event, read
	// again once it differs from the one at connect (a dropped stream is
	// the "bundles" follower's to read again).
	var channels *int64
	on := map[string]func(api.Revision, bool){
		"bundles": live.Event,
		"channels": func(rev api.Revision, known bool) {
			if !known {
				return
			}
			if channels != nil && *channels != rev.Channels {
				changed(ctx)
			}
			channels = &rev.Channels
		},
	}
	for name, f := range more {
		on[name] = f
	}
	return listenEvents(ctx, extensionID, on)
}
