// Command wasm is the browser app's entry point, built with GOOS=js
// GOARCH=wasm into web/app.wasm.
package main

import (
	"github.com/maxence-charriere/go-app/v9/pkg/app"

	"github.com/betaport/betaport/app/ui"
)

func main() {
	ui.Register()
	app.RunWhenOnBrowser()
}
