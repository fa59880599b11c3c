package browserbench

import "testing"

// The profile's summary groups wasm samples by Go package, whatever the
// module's URL, and leaves V8's own entries and the page's scripts apart.
func TestProfileGroup(t *testing.T) {
	for _, c := range []struct{ fn, url, want string }{
		{"github.com_betaport_betaport_app_ui.__TestersPage_.Render", "http://127.0.0.1:1/web/app.wasm", "wasm github.com_betaport_betaport_app_ui"},
		{"github.com_maxence_charriere_go_app_v9_pkg_app.__htmlElement_.mount", "wasm://wasm/0315cd8e", "wasm github.com_maxence_charriere_go_app_v9_pkg_app"},
		{"encoding_json.__decodeState_.value", "http://h/web/app.wasm", "wasm encoding_json"},
		{"sync.__Once_.doSlow", "http://h/web/app.wasm", "wasm sync"},
		{"runtime.park_m", "http://h/web/app.wasm", "wasm runtime"},
		{"sort.pdqsort_func", "http://h/web/app.wasm", "wasm sort"},
		{"$wasm-function[123]", "http://h/web/app.wasm", "wasm (unnamed)"},
		{"(program)", "", "(program)"},
		{"", "", "(anonymous JS)"},
		{"start", "http://h/app.js", "JS app.js"},
	} {
		if got := profileGroup(c.fn, c.url); got != c.want {
			t.Errorf("profileGroup(%q, %q) = %q, want %q", c.fn, c.url, got, c.want)
		}
	}
}
