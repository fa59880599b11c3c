package ui

import (
	"encoding/json"

	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/api"
)

// liveUpdates listens to an extension's event stream (server-sent events)
// and calls changed, on the UI goroutine, whenever the extension's bundles
// moved past what the page shows: a publish from a pipeline, the CLI,
// another admin or another replica. The browser reconnects a dropped
// stream by itself, and the server sends the current revision first, so a
// reconnect catches up.
//
// shows tells whether the page already shows a revision. The first event
// (and every reconnect's) repeats what the page has read most of the time,
// and reading every held page again for it would cost a request per page;
// a page that cannot tell yet (its data is still on the way) says false.
// It returns the function that stops listening.
func liveUpdates(ctx app.Context, extensionID int64, shows func(api.Revision) bool, changed func(ctx app.Context)) (stop func()) {
	if !app.IsClient {
		return func() {}
	}
	es := app.Window().Get("EventSource").New(api.EventsPath(extensionID))
	onBundles := app.FuncOf(func(_ app.Value, args []app.Value) any {
		var rev api.Revision
		known := false
		if len(args) > 0 {
			known = json.Unmarshal([]byte(args[0].Get("data").String()), &rev) == nil
		}
		ctx.Dispatch(func(ctx app.Context) {
			if known && shows(rev) {
				return
			}
			changed(ctx)
		})
		return nil
	})
	es.Call("addEventListener", "bundles", onBundles)
	return func() {
		es.Call("close")
		onBundles.Release()
	}
}
