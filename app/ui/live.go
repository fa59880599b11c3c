package ui

import (
	"github.com/maxence-charriere/go-app/v9/pkg/app"
)

// liveUpdates listens to an extension's event stream (server-sent events)
// and calls changed, on the UI goroutine, whenever the extension's bundles
// changed: a publish from a pipeline, the CLI, another admin or another
// replica. The browser reconnects a dropped stream by itself, and the
// server sends the current revision first, so a reconnect catches up. It
// returns the function that stops listening.
func liveUpdates(ctx app.Context, path string, changed func(ctx app.Context)) (stop func()) {
	if !app.IsClient {
		return func() {}
	}
	es := app.Window().Get("EventSource").New(path)
	onBundles := app.FuncOf(func(app.Value, []app.Value) any {
		ctx.Dispatch(changed)
		return nil
	})
	es.Call("addEventListener", "bundles", onBundles)
	return func() {
		es.Call("close")
		onBundles.Release()
	}
}
