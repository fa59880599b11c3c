package ui

import "github.com/maxence-charriere/go-app/v9/pkg/app"

// What a person types before the app has booted is kept. The server's page
// is shown and usable at once, but go-app's first mount replaces it with
// elements of its own: a search typed into the prerendered field, and the
// focus, would be lost in the middle of a word. The prerendered fields are
// noted when the app starts and carried over to their successors (same id)
// as soon as the first mount has replaced them: a MutationObserver's
// callback runs as a microtask, before the browser runs another key event.

var (
	prerenderedFields []app.Value // the server page's fields that have an id
	prerenderedFocus  app.Value   // the last of them focused before the mount
	trackFocus        app.Func
	onReplaced        app.Func
	replaced          app.Value // the MutationObserver that waits for the mount
	carriedOver       bool
)

// notePrerenderedFields remembers the server page's fields (call it before
// the app mounts).
func notePrerenderedFields() {
	doc := app.Window().Get("document")
	fields := doc.Call("querySelectorAll", "input[id], textarea[id], select[id]")
	for i := 0; i < fields.Length(); i++ {
		prerenderedFields = append(prerenderedFields, fields.Index(i))
	}
	prerenderedFocus = doc.Get("activeElement")
	// The person may click into a field while the app loads.
	trackFocus = app.FuncOf(func(this app.Value, args []app.Value) any {
		prerenderedFocus = args[0].Get("target")
		return nil
	})
	doc.Call("addEventListener", "focusin", trackFocus)
	if len(prerenderedFields) == 0 {
		return
	}
	onReplaced = app.FuncOf(func(this app.Value, args []app.Value) any {
		if !prerenderedFields[0].Get("isConnected").Bool() {
			carryOverPrerenderedFields()
		}
		return nil
	})
	replaced = app.Window().Get("MutationObserver").New(onReplaced)
	replaced.Call("observe", doc.Get("body"), map[string]any{"childList": true})
}

// carryOverPrerenderedFields gives each field of the mounted app the value
// typed into its prerendered predecessor, telling the app as typing would
// (an input event), and moves the focus and the caret along. It does its
// work once, on the first mount.
func carryOverPrerenderedFields() {
	if carriedOver || !app.IsClient {
		return
	}
	carriedOver = true
	doc := app.Window().Get("document")
	doc.Call("removeEventListener", "focusin", trackFocus)
	trackFocus.Release()
	if replaced != nil {
		replaced.Call("disconnect")
		// onReplaced may be running this: it is released after it returns.
		release := onReplaced
		app.Window().Call("setTimeout", app.FuncOf(func(this app.Value, args []app.Value) any {
			release.Release()
			return nil
		}), 0)
	}
	for _, old := range prerenderedFields {
		now := doc.Call("getElementById", old.Get("id").String())
		if now.IsNull() || now.Equal(old) {
			continue // gone, or not replaced
		}
		// What the server rendered is what the app renders too, so a value
		// that differs was typed (or picked) by the person.
		if v := old.Get("value").String(); v != now.Get("value").String() {
			now.Set("value", v)
			event := "input"
			if now.Get("tagName").String() == "SELECT" {
				event = "change"
			}
			now.Call("dispatchEvent", app.Window().Get("Event").New(event, map[string]any{"bubbles": true}))
		}
		if old.Equal(prerenderedFocus) {
			now.Call("focus", map[string]any{"preventScroll": true})
			switch now.Get("type").String() {
			case "text", "search", "password", "tel", "url":
				now.Call("setSelectionRange", old.Get("selectionStart"), old.Get("selectionEnd"))
			}
		}
	}
	prerenderedFields, prerenderedFocus = nil, app.Null()
}

// keptPressesMade: makeKeptPresses has done its work (the first mount).
var keptPressesMade bool

// makeKeptPresses has web/boot.js make the presses it kept while the
// server's page showed (its buttons are disabled until the app takes
// over), once the app's first page is on screen: deferred past the first
// mount, when the buttons carry the app's handlers. Nothing a person
// pressed while the app loaded is lost.
func makeKeptPresses(ctx app.Context) {
	if keptPressesMade || !app.IsClient {
		return
	}
	keptPressesMade = true
	ctx.Defer(func(app.Context) {
		if app.Window().Get("betaportBooted").Truthy() {
			app.Window().Call("betaportBooted")
		}
	})
}
