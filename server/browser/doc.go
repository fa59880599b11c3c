// Package browser holds the browser tests: the real server on port 0, the
// built wasm app, and one headless Chromium that every test shares, driven
// by chromedp the way a person uses the app.
package browser
