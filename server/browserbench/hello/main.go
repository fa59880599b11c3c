// Command hello is the browser benchmark's floor: a go-app hello world (the
// go-app version Betaport pins, built the way Betaport's wasm is) served
// the way Betaport serves its app, with a row whose button opens a
// question, as Betaport's rows do. Whatever Betaport's figures are beyond
// this page's is Betaport's own doing; what this page needs, go-app and Go
// need (issue 30).
//
// Built twice by the benchmark (server/browserbench): for js/wasm, the app;
// for the machine, a server that serves it:
//
//	hello -addr 127.0.0.1:0 -dir DIR -wasm-exec $(go env GOROOT)/lib/wasm/wasm_exec.js
//
// (DIR/web/app.wasm is the app.)
//
// It prints "listening on http://ADDR" once it serves. The browser's
// build holds the page alone (main_wasm.go); the server's (server.go) is
// never in the wasm, as Betaport's server is not in its.
package main

import "github.com/maxence-charriere/go-app/v9/pkg/app"

// hello is the page: a heading and one row; the row's button appears once
// the app runs (a press before that would land on nothing), and opens a
// question.
type hello struct {
	app.Compo
	asking bool
}

func (h *hello) Render() app.UI {
	runsOn := "server"
	if app.IsClient {
		runsOn = "client"
	}
	return app.Main().ID("hello").DataSet("app", runsOn).Body(
		app.H1().Text("Hello, world"),
		app.Div().ID("hello-rows").Body(
			app.Div().Class("row").DataSet("hello", 1).Body(
				app.Span().Text("A row"),
				app.If(app.IsClient, app.Button().Type("button").Class("revoke").Text("Revoke").OnClick(h.ask)),
				app.If(h.asking, app.Div().Class("confirm-pop").Body(
					app.P().Text("Revoke?"),
					app.Button().Type("button").Class("confirm-revoke").Text("Yes, revoke"),
				)),
			),
		),
	)
}

func (h *hello) ask(ctx app.Context, e app.Event) { h.asking = !h.asking }
