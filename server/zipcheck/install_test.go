package zipcheck

import (
	"slices"
	"strings"
	"testing"
)

// ext is an extension's zip: its manifest.json (manifest_version 3 unless
// it says otherwise) and other files; "" is an empty file, a name ending
// in "/" a folder.
func ext(t *testing.T, manifest string, files ...string) []byte {
	t.Helper()
	if !strings.Contains(manifest, "manifest_version") {
		manifest = `{"manifest_version": 3, "name": "Demo", "version": "1.0"` + strings.TrimPrefix(manifest, "{")
		manifest = strings.Replace(manifest, `"1.0""`, `"1.0", "`, 1)
	}
	entries := []entry{file("manifest.json", manifest)}
	for _, f := range files {
		switch {
		case strings.HasSuffix(f, "/"):
			entries = append(entries, dir(f))
		case strings.HasPrefix(f, "empty:"):
			entries = append(entries, file(strings.TrimPrefix(f, "empty:"), ""))
		default:
			entries = append(entries, file(f, "content of "+f))
		}
	}
	return makeZip(t, entries...)
}

const mv2Head = `{"manifest_version": 2, "name": "Demo", "version": "1.0", `

// TestCheckWhatChromeChecksAtInstall: a zip Chrome would refuse to install
// is refused, each problem at the file or field it concerns; what Chrome
// installs passes.
func TestCheckWhatChromeChecksAtInstall(t *testing.T) {
	long := strings.Repeat("n", 60_000)
	deep := strings.Repeat("folder/", 4000/7) + "a.js"
	tests := []struct {
		name string
		zip  []byte
		want []string // "code path", sorted; nil: passes
	}{
		// Icons.
		{"icon missing", ext(t, `{"icons": {"16": "icons/16.png", "128": "icons/128.png"}}`, "icons/16.png"),
			[]string{"file_missing icons/128.png"}},
		{"icon empty", ext(t, `{"icons": {"16": "icons/16.png"}}`, "empty:icons/16.png"), []string{"file_empty icons/16.png"}},
		{"icon with a leading slash", ext(t, `{"icons": {"16": "/icons/16.png"}}`, "icons/16.png"), nil},
		{"icon outside", ext(t, `{"icons": {"16": "../16.png"}}`), []string{"file_missing manifest.json"}},
		{"icon of another case", ext(t, `{"icons": {"16": "Icon.png"}}`, "icon.png"), []string{"file_missing Icon.png"}},
		{"icons not an object", ext(t, `{"icons": "icon.png"}`, "icon.png"), []string{"manifest_field manifest.json"}},
		{"action icon missing", ext(t, `{"action": {"default_icon": {"32": "a/32.png"}}}`), []string{"file_missing a/32.png"}},
		{"action icon as one path", ext(t, `{"action": {"default_icon": "a.png"}}`), []string{"file_missing a.png"}},
		{"browser_action icon", ext(t, mv2Head+`"browser_action": {"default_icon": "b.png"}}`), []string{"file_missing b.png"}},
		{"action icons present", ext(t, `{"action": {"default_icon": {"16": "a/16.png"}, "default_popup": "popup.html"}}`, "a/16.png"), nil},

		// Background.
		{"service worker missing", ext(t, `{"background": {"service_worker": "background.js"}}`), []string{"file_missing background.js"}},
		{"service worker with a query", ext(t, `{"background": {"service_worker": "sw.js?v=2#x"}}`, "sw.js"), nil},
		{"service worker %-escaped", ext(t, `{"background": {"service_worker": "my%20sw.js"}}`, "my sw.js"), nil},
		{"service worker behind an escaped slash", ext(t, `{"background": {"service_worker": "js%2Fsw.js"}}`, "js/sw.js"),
			[]string{"file_missing manifest.json"}},
		{"service worker not a string", ext(t, `{"background": {"service_worker": ["sw.js"]}}`, "sw.js"), []string{"manifest_field manifest.json"}},
		{"MV2 background script missing", ext(t, mv2Head+`"background": {"scripts": ["a.js", "b.js", "notes.txt"]}}`, "a.js"),
			[]string{"file_missing b.js"}},
		{"MV2 background page missing", ext(t, mv2Head+`"background": {"page": "bg.html"}}`), []string{"file_missing bg.html"}},
		{"MV2 page beside scripts is not used", ext(t, mv2Head+`"background": {"scripts": ["a.js"], "page": "bg.html"}}`, "a.js"), nil},
		{"MV3 ignores scripts", ext(t, `{"background": {"service_worker": "sw.js", "scripts": ["gone.js"]}}`, "sw.js"), nil},

		// Content scripts, pages, resources.
		{"content script files missing", ext(t, `{"content_scripts": [{"matches": ["<all_urls>"], "js": ["cs/a.js", "cs/b.js"], "css": ["cs/a.css"]}]}`, "cs/a.js"),
			[]string{"file_missing cs/a.css", "file_missing cs/b.js"}},
		{"content_scripts not a list", ext(t, `{"content_scripts": {"js": ["a.js"]}}`, "a.js"), []string{"manifest_field manifest.json"}},
		{"options page missing", ext(t, `{"options_page": "options.html"}`), []string{"file_missing options.html"}},
		{"options_ui page missing", ext(t, `{"options_ui": {"page": "opt/index.html"}}`), []string{"file_missing opt/index.html"}},
		{"options_ui wins over options_page", ext(t, `{"options_ui": {"page": "o.html"}, "options_page": "gone.html"}`, "o.html"), nil},
		{"options page on the web", ext(t, `{"options_page": "https://example.com/options"}`), []string{"manifest_field manifest.json"}},
		{"devtools page missing", ext(t, `{"devtools_page": "devtools.html"}`), []string{"file_missing devtools.html"}},
		{"web accessible file missing", ext(t, `{"web_accessible_resources": [{"resources": ["img/a.png", "img/*.png", "x?.js"], "matches": ["<all_urls>"]}]}`),
			[]string{"file_missing img/a.png"}},
		{"MV2 web accessible file missing", ext(t, mv2Head+`"web_accessible_resources": ["page.html", "fonts/*"]}`), []string{"file_missing page.html"}},
		{"ruleset missing", ext(t, `{"declarative_net_request": {"rule_resources": [{"id": "r", "enabled": true, "path": "rules.json"}]}}`),
			[]string{"file_missing rules.json"}},

		// Locales.
		{"default_locale without _locales", ext(t, `{"default_locale": "en"}`), []string{"locales manifest.json"}},
		{"_locales without default_locale", ext(t, `{}`, "_locales/en/messages.json"), []string{"locales _locales/"}},
		{"default locale's messages missing", ext(t, `{"default_locale": "en"}`, "_locales/de/messages.json"),
			[]string{"locales _locales/en/messages.json"}},
		{"default locale of another case", ext(t, `{"default_locale": "en"}`, "_locales/EN/messages.json"),
			[]string{"locales _locales/en/messages.json"}},
		{"a locale folder without messages", ext(t, `{"default_locale": "en"}`, "_locales/en/messages.json", "_locales/fr/", "_locales/pt_BR/readme.txt", "_locales/.svn/entries", "_locales/klingon/"),
			[]string{"locales _locales/fr/messages.json", "locales _locales/pt_BR/messages.json"}},
		{"locales complete", ext(t, `{"default_locale": "en", "name": "__MSG_name__"}`, "_locales/en/messages.json", "_locales/fr/messages.json"), nil},
		{"default_locale not a string", ext(t, `{"default_locale": 1}`, "_locales/en/messages.json"), []string{"manifest_field manifest.json"}},

		// Names and paths.
		{"60,000-byte name", ext(t, `{}`, long+".js"), []string{"path_too_long " + long + ".js"}},
		{"4,000-byte path", ext(t, `{}`, deep), []string{"path_too_long " + deep}},
		{"long folder name", ext(t, `{}`, strings.Repeat("f", 256)+"/"), []string{"path_too_long " + strings.Repeat("f", 256) + "/"}},
		{"names and paths at the limits", ext(t, `{}`, strings.Repeat(strings.Repeat("f", 255)+"/", 3)+strings.Repeat("g", MaxPathLength-3*256)), nil},

		// Names Chrome refuses to load (issue 29's second probe): "_" at
		// the root but for the three it allows, Windows device names
		// anywhere.
		{"underscore folder at the root", ext(t, `{}`, "_app/a.js"), []string{"path_reserved _app/a.js"}},
		{"underscore file at the root", ext(t, `{}`, "_bar.js"), []string{"path_reserved _bar.js"}},
		{"__pycache__ at the root", ext(t, `{}`, "__pycache__/x.pyc"), []string{"path_reserved __pycache__/x.pyc"}},
		{"_metadata at the root", ext(t, `{}`, "_metadata/verified_contents.json"), []string{"path_reserved _metadata/verified_contents.json"}},
		{"the underscore names Chrome allows", ext(t, `{"default_locale": "en"}`, "_locales/en/messages.json", "__MACOSX/._manifest.json", "_platform_specific/x.js"), nil},
		{"underscore below the root", ext(t, `{}`, "chunks/_plugin-helper.js"), nil},
		{"Windows device names", ext(t, `{}`, "con.txt", "js/NUL", "aux/x.js", "com1.json.js"),
			[]string{"path_reserved aux/x.js", "path_reserved com1.json.js", "path_reserved con.txt", "path_reserved js/NUL"}},
		{"names that only begin like a device", ext(t, `{}`, "console.js", "auxiliary/x.js", "com10.js"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := found(check(t, tt.zip, DefaultLimits()))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("problems %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCheckInstallUnderTopFolder: under one top folder, the manifest's
// paths are the folder's, and the problems name the zip's entries.
func TestCheckInstallUnderTopFolder(t *testing.T) {
	data := makeZip(t,
		file("ext/manifest.json", `{"manifest_version": 3, "name": "Demo", "version": "1.0", "default_locale": "en",
			"icons": {"48": "icon.png"}, "background": {"service_worker": "js/sw.js"}}`),
		file("ext/js/sw.js", "x"),
		file("ext/icon.png", ""),
	)
	res := check(t, data, DefaultLimits())
	want := []string{"file_empty ext/icon.png", "locales ext/manifest.json"}
	if got := found(res); !slices.Equal(got, want) {
		t.Fatalf("problems %q, want %q", got, want)
	}
	for _, p := range res.Problems {
		if !strings.Contains(p.Message, "manifest.json") {
			t.Errorf("%s: the message %q names no field", p.Code, p.Message)
		}
	}
}

// TestCheckInstallOnItsOwn: the checks need only a manifest and a list of
// files (as the upload panel or a linter has them before any upload), and
// give paths relative to the extension's folder. Without a manifest, only
// the paths are checked.
func TestCheckInstallOnItsOwn(t *testing.T) {
	tree := Tree{"icons/": 0, "icons/16.png": 300, "js/sw.js": 10, "_locales/en/messages.json": 40}
	manifest := []byte("// comments, as Chrome allows\n" + `{"manifest_version": 3, "name": "x", "version": "1", "default_locale": "en",
		"icons": {"16": "icons/16.png", "32": "icons/32.png"}, "background": {"service_worker": "js/sw.js"}}`)
	var got []string
	for _, p := range CheckInstall(manifest, tree) {
		got = append(got, p.Code+" "+p.Path)
	}
	if want := []string{"file_missing icons/32.png"}; !slices.Equal(got, want) {
		t.Errorf("problems %q, want %q", got, want)
	}
	tree[strings.Repeat("x", 300)] = 1
	if got := CheckInstall(nil, tree); len(got) != 1 || got[0].Code != CodePathTooLong {
		t.Errorf("without a manifest: %v, want the long name alone", got)
	}
	if got := CheckInstall([]byte("{not json"), Tree{}); len(got) != 0 {
		t.Errorf("unreadable manifest: %v, want nothing (Check reports it)", got)
	}
}
