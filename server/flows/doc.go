// Package flows has no code of its own: its tests drive the browser app's
// page models (app/model) against the real service — SQLite, files, the
// HTTP API on loopback — as a person's clicks and keys would, without a
// browser. What needs a browser (input, focus, scrolling, layout, boot)
// is tested in server/browser.
package flows
