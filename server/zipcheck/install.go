package zipcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Chrome validates an extension before it installs it, and refuses it whole
// when the manifest names a file that is not there (Chromium's manifest
// handlers' Validate methods, file_util::ValidateExtension, and the
// default locale handler). A bundle Betaport published despite that is one
// no tester can install, so CheckInstall applies the same rules to the
// zip's list of files, without unpacking it.
//
// What Chrome checks, and so CheckInstall:
//
//   - icons, and the default_icon of action, browser_action or
//     page_action: each file exists and is not empty;
//   - background.service_worker (manifest V3), background.scripts (V2;
//     those Chrome runs, .js and .mjs) and background.page (V2, when there
//     are no scripts);
//   - content_scripts[].js and [].css; options_ui.page, or options_page
//     when there is none; declarative_net_request.rule_resources[].path;
//   - default_locale needs _locales/<default_locale>/messages.json, and a
//     _locales folder needs default_locale; a folder of _locales named
//     after a locale Chrome knows needs its messages.json;
//   - a field it reads that has the wrong type is refused.
//
// Two more the product asks for, which Chrome only warns about: the
// devtools_page exists, and so does each web_accessible_resources entry
// that names one file (no * or ? wildcard). Their absence leaves the
// extension broken in a way testers would report as a bug.
//
// And what the file systems Chrome unpacks to impose: no file or folder
// name longer than 255 bytes (the limit of ext4, APFS and NTFS), no path
// longer than MaxPathLength. And the names Chrome refuses to load
// (file_util::CheckForIllegalFilenames, CheckForWindowsReservedFilenames):
// at the extension's root, a name starting with "_" other than _locales,
// _platform_specific and __MACOSX ("reserved for use by the system": a
// bundler's _app/ or a Python __pycache__/); anywhere, a name Windows
// reserves (CON, NUL, COM1…, with or without an extension).
//
// Paths resolve as Chrome resolves them: file fields (icons, scripts,
// rulesets) as paths, one leading "/" dropped; page fields (pages, the
// service worker) as URLs relative to the extension's root, so a query or
// fragment is dropped and %-escapes are decoded.

// Problem codes of CheckInstall.
const (
	CodeFileMissing   = "file_missing"
	CodeFileEmpty     = "file_empty"
	CodeManifestField = "manifest_field"
	CodeLocales       = "locales"
	CodePathTooLong   = "path_too_long"
	CodePathReserved  = "path_reserved"
)

const (
	// MaxNameLength is the longest file or folder name, in bytes, that
	// every file system a tester's Chrome unpacks to holds.
	MaxNameLength = 255
	// MaxPathLength is the longest path, in bytes, an extension's file
	// may have. macOS refuses paths longer than 1024 bytes, and Chrome
	// unpacks into the profile's Extensions/<id>/<version>_0 folder, which
	// takes up to about 200 of them.
	MaxPathLength = 800
)

// Tree is an extension's files as Chrome unpacks them: each entry's path
// relative to the extension's folder (a folder's with a trailing slash),
// and its size in bytes.
type Tree map[string]uint64

// file reports whether p is a file of the tree, and its size.
func (t Tree) file(p string) (size uint64, ok bool) {
	size, ok = t[p]
	return size, ok && !isDir(p)
}

// has reports whether p is in the tree, as a file or a folder (with an
// entry of its own, or implied by the paths under it).
func (t Tree) has(p string) bool {
	if _, ok := t[p]; ok {
		return true
	}
	if _, ok := t[p+"/"]; ok {
		return true
	}
	for name := range t {
		if strings.HasPrefix(name, p+"/") {
			return true
		}
	}
	return false
}

// CheckInstall reports what would stop Chrome installing an extension
// whose manifest.json holds manifest and whose files are tree. Paths in the
// problems are relative to the extension's folder, as tree's are. A nil or
// unreadable manifest skips the manifest's checks (Check reports it), and
// leaves those of the paths.
func CheckInstall(manifest []byte, tree Tree) []Problem {
	c := &installCheck{tree: tree, res: &Result{}}
	names := make([]string, 0, len(tree))
	for name := range tree {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		checkLength(c.res, name)
		checkReserved(c.res, name)
	}
	if manifest != nil {
		dec := json.NewDecoder(bytes.NewReader(StandardManifest(manifest)))
		dec.UseNumber()
		var m map[string]any
		if dec.Decode(&m) == nil && m != nil {
			c.manifest(m)
		}
	}
	return c.res.Problems
}

// checkLength reports a name longer than file systems hold.
func checkLength(res *Result, name string) {
	for seg := range strings.SplitSeq(strings.TrimSuffix(name, "/"), "/") {
		if len(seg) > MaxNameLength {
			res.add(CodePathTooLong, name, "A file or folder name in this path is %d bytes long; file systems hold names of at most %d bytes, so Chrome cannot unpack it. Shorten the name.", len(seg), MaxNameLength)
			return
		}
	}
	if len(name) > MaxPathLength {
		res.add(CodePathTooLong, name, "The path is %d bytes long; Chrome unpacks an extension several folders deep, where a path this long does not fit on every system (the limit here is %d bytes). Shorten it, or move the file closer to the top.", len(name), MaxPathLength)
	}
}

// rootUnderscoreNames are the names starting with "_" Chrome allows at an
// extension's root.
var rootUnderscoreNames = map[string]bool{"_locales": true, "_platform_specific": true, "__MACOSX": true}

// windowsReserved are the device names Windows reserves, whatever the
// extension after them (net::IsReservedNameOnWindows).
var windowsReserved = map[string]bool{"con": true, "prn": true, "aux": true, "nul": true, "clock$": true,
	"com1": true, "com2": true, "com3": true, "com4": true, "com5": true, "com6": true, "com7": true, "com8": true, "com9": true,
	"lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true, "lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true}

// checkReserved reports a name Chrome refuses to load: at the root, one
// starting with "_" it does not know; anywhere, a Windows device name.
func checkReserved(res *Result, name string) {
	segs := strings.Split(strings.TrimSuffix(name, "/"), "/")
	if root := segs[0]; strings.HasPrefix(root, "_") && !rootUnderscoreNames[root] {
		res.add(CodePathReserved, name, "Chrome refuses an extension with a file or folder named %s at its top: names starting with \"_\" are reserved for the browser (only _locales is yours). Rename it, or leave it out of the zip.", quoteShort(root))
		return
	}
	for _, seg := range segs {
		base, _, _ := strings.Cut(strings.ToLower(seg), ".")
		if windowsReserved[base] {
			res.add(CodePathReserved, name, "Chrome on Windows refuses an extension with a file or folder named %s: Windows reserves the name %s. Rename it.", quoteShort(seg), strings.ToUpper(base))
			return
		}
	}
}

type installCheck struct {
	tree Tree
	res  *Result
}

func (c *installCheck) manifest(m map[string]any) {
	mv, _ := m["manifest_version"].(json.Number)
	v3 := mv.String() == "3"

	c.iconSet(m, "icons")
	for _, key := range []string{"action", "browser_action", "page_action"} {
		if a, ok := c.object(m, key, key); ok {
			switch icon := a["default_icon"].(type) {
			case nil:
			case string:
				c.icon(key+".default_icon", icon)
			default:
				c.iconSet(a, key+".default_icon")
			}
		}
	}

	if bg, ok := c.object(m, "background", "background"); ok {
		switch {
		case v3:
			if sw, ok := c.str(bg, "service_worker", "background.service_worker"); ok {
				c.page("background.service_worker", sw)
			}
		default:
			scripts, _ := c.strings(bg, "scripts", "background.scripts")
			for i, s := range scripts {
				// Chrome ignores (with a warning) a background script it
				// would not run as JavaScript.
				if ext := strings.ToLower(path.Ext(s)); ext == ".js" || ext == ".mjs" {
					c.file(fmt.Sprintf("background.scripts[%d]", i), s)
				}
			}
			if p, ok := c.str(bg, "page", "background.page"); ok && len(scripts) == 0 {
				c.page("background.page", p)
			}
		}
	}

	if list, ok := c.list(m, "content_scripts", "content_scripts"); ok {
		for i, item := range list {
			field := fmt.Sprintf("content_scripts[%d]", i)
			cs, ok := item.(map[string]any)
			if !ok {
				c.wrongType(field, "an object")
				continue
			}
			for _, kind := range []string{"js", "css"} {
				files, _ := c.strings(cs, kind, field+"."+kind)
				for j, f := range files {
					c.file(fmt.Sprintf("%s.%s[%d]", field, kind, j), f)
				}
			}
		}
	}

	optionsUI, _ := c.object(m, "options_ui", "options_ui")
	if p, ok := c.str(optionsUI, "page", "options_ui.page"); ok {
		c.page("options_ui.page", p)
	} else if p, ok := c.str(m, "options_page", "options_page"); ok {
		if u, err := url.Parse(p); err == nil && u.Scheme != "" {
			c.res.add(CodeManifestField, ManifestName, "manifest.json's options_page is %s, a web address; Chrome wants a page inside the extension. Give the page's path in the zip.", quoteShort(p))
		} else {
			c.page("options_page", p)
		}
	}

	if p, ok := c.str(m, "devtools_page", "devtools_page"); ok {
		c.page("devtools_page", p)
	}

	if dnr, ok := c.object(m, "declarative_net_request", "declarative_net_request"); ok {
		rules, _ := c.list(dnr, "rule_resources", "declarative_net_request.rule_resources")
		for i, item := range rules {
			field := fmt.Sprintf("declarative_net_request.rule_resources[%d]", i)
			if r, ok := item.(map[string]any); ok {
				if p, ok := c.str(r, "path", field+".path"); ok {
					c.file(field+".path", p)
				}
			} else {
				c.wrongType(field, "an object")
			}
		}
	}

	c.webAccessible(m, v3)
	c.locales(m)
}

// webAccessible checks the web_accessible_resources that name one file: a
// list of paths in manifest V2, of objects with "resources" in V3.
func (c *installCheck) webAccessible(m map[string]any, v3 bool) {
	list, ok := c.list(m, "web_accessible_resources", "web_accessible_resources")
	if !ok {
		return
	}
	literal := func(field, p string) {
		if !strings.ContainsAny(p, "*?") {
			c.file(field, p)
		}
	}
	for i, item := range list {
		field := fmt.Sprintf("web_accessible_resources[%d]", i)
		if !v3 {
			if p, ok := item.(string); ok {
				literal(field, p)
			} else {
				c.wrongType(field, "a string")
			}
			continue
		}
		entry, ok := item.(map[string]any)
		if !ok {
			c.wrongType(field, "an object")
			continue
		}
		resources, _ := c.strings(entry, "resources", field+".resources")
		for j, p := range resources {
			literal(fmt.Sprintf("%s.resources[%d]", field, j), p)
		}
	}
}

// chromeLocales are the locales of the Chrome Web Store's list: Chrome
// knows each, so a folder of _locales named after one must hold its
// messages.json. (Chrome knows more, and skips folders named otherwise;
// this list keeps a folder it would skip from being refused.)
var chromeLocales = func() map[string]bool {
	m := map[string]bool{}
	for l := range strings.FieldsSeq(`ar am bg bn ca cs da de el en en_AU en_GB en_US es es_419 et fa fi fil fr gu he hi hr hu id it ja kn ko lt lv ml mr ms nl no pl pt_BR pt_PT ro ru sk sl sr sv sw ta te th tr uk vi zh_CN zh_TW`) {
		m[strings.ToLower(l)] = true
	}
	return m
}()

// locales checks default_locale against the _locales folder: both or
// neither, and the default's messages.json.
func (c *installCheck) locales(m map[string]any) {
	const folder = "_locales"
	hasFolder := c.tree.has(folder)
	dl, hasDefault := m["default_locale"]
	if !hasDefault {
		if hasFolder {
			c.res.add(CodeLocales, folder+"/", "The zip has a _locales folder, but manifest.json has no default_locale, and Chrome refuses that. Add \"default_locale\" (such as \"en\"), or remove the _locales folder.")
		}
		return
	}
	name, ok := dl.(string)
	if !ok || name == "" || strings.ContainsAny(name, "/\\.") {
		c.res.add(CodeManifestField, ManifestName, "manifest.json's default_locale must be a locale's name, such as \"en\" or \"pt_BR\".")
		return
	}
	if !hasFolder {
		c.res.add(CodeLocales, ManifestName, "manifest.json's default_locale is %s, but the zip has no _locales folder, and Chrome refuses that. Add _locales/%s/messages.json, or remove default_locale.", quoteShort(name), name)
		return
	}
	if _, ok := c.tree.file(folder + "/" + name + "/messages.json"); !ok {
		c.res.add(CodeLocales, folder+"/"+name+"/messages.json", "manifest.json's default_locale is %s, but the zip has no _locales/%s/messages.json, and Chrome refuses that. Add the file (names are case-sensitive), or correct default_locale.", quoteShort(name), name)
	}
	var others []string
	for p := range c.tree {
		rest, ok := strings.CutPrefix(p, folder+"/")
		locale, _, inFolder := strings.Cut(rest, "/")
		if ok && inFolder && locale != name && chromeLocales[strings.ToLower(locale)] && !slices.Contains(others, locale) {
			others = append(others, locale)
		}
	}
	slices.Sort(others)
	for _, locale := range others {
		if _, ok := c.tree.file(folder + "/" + locale + "/messages.json"); !ok {
			c.res.add(CodeLocales, folder+"/"+locale+"/messages.json", "The zip has a _locales/%s folder without its messages.json, and Chrome refuses that. Add the file, or remove the folder.", locale)
		}
	}
}

// iconSet checks an object of icon sizes to paths.
func (c *installCheck) iconSet(m map[string]any, field string) {
	key := field[strings.LastIndex(field, ".")+1:]
	set, ok := c.object(m, key, field)
	if !ok {
		return
	}
	sizes := make([]string, 0, len(set))
	for size := range set {
		sizes = append(sizes, size)
	}
	slices.SortFunc(sizes, func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	})
	for _, size := range sizes {
		p, ok := set[size].(string)
		if !ok {
			c.wrongType(field+"."+size, "a path")
			continue
		}
		c.icon(field+"."+size, p)
	}
}

// icon checks an icon's file: Chrome refuses an empty one too.
func (c *installCheck) icon(field, p string) {
	if rel, ok := c.file(field, p); ok {
		if size, _ := c.tree.file(rel); size == 0 {
			c.res.add(CodeFileEmpty, rel, "manifest.json's %s names %s, which is an empty file; Chrome refuses to install an extension with an empty icon. Add the image.", field, quoteShort(p))
		}
	}
}

// file checks that the file path p, of field, names a file of the tree,
// and returns its path there.
func (c *installCheck) file(field, p string) (string, bool) {
	rel, ok := resourcePath(p)
	return c.exists(field, p, rel, ok)
}

// page checks that the page URL p, of field, names a file of the tree.
func (c *installCheck) page(field, p string) {
	rel, ok := pagePath(p)
	c.exists(field, p, rel, ok)
}

func (c *installCheck) exists(field, p, rel string, ok bool) (string, bool) {
	if !ok {
		c.res.add(CodeFileMissing, ManifestName, "manifest.json's %s is %s, which names no file inside the extension; Chrome refuses to install it. Give the path of a file in the zip.", field, quoteShort(p))
		return "", false
	}
	if _, ok := c.tree.file(rel); !ok {
		c.res.add(CodeFileMissing, rel, "manifest.json's %s names %s, which the zip does not have; Chrome refuses to install an extension whose manifest names a missing file. Add the file, or correct the path (names are case-sensitive).", field, quoteShort(p))
		return "", false
	}
	return rel, true
}

// object returns m[key] when it is an object; a value of another type is
// reported. ok is false when there is none.
func (c *installCheck) object(m map[string]any, key, field string) (map[string]any, bool) {
	switch v := m[key].(type) {
	case nil:
		return nil, false
	case map[string]any:
		return v, true
	default:
		c.wrongType(field, "an object")
		return nil, false
	}
}

func (c *installCheck) list(m map[string]any, key, field string) ([]any, bool) {
	switch v := m[key].(type) {
	case nil:
		return nil, false
	case []any:
		return v, true
	default:
		c.wrongType(field, "a list")
		return nil, false
	}
}

func (c *installCheck) str(m map[string]any, key, field string) (string, bool) {
	switch v := m[key].(type) {
	case nil:
		return "", false
	case string:
		return v, true
	default:
		c.wrongType(field, "a string")
		return "", false
	}
}

// strings returns a list of strings; an item of another type is reported
// and left out.
func (c *installCheck) strings(m map[string]any, key, field string) ([]string, bool) {
	list, ok := c.list(m, key, field)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			c.wrongType(fmt.Sprintf("%s[%d]", field, i), "a string")
			continue
		}
		out = append(out, s)
	}
	return out, true
}

func (c *installCheck) wrongType(field, want string) {
	c.res.add(CodeManifestField, ManifestName, "manifest.json's %s must be %s; Chrome refuses to install the extension otherwise.", field, want)
}

// resourcePath is the file a manifest's file path names, as Chrome's
// Extension::GetResource resolves it: one leading "/" dropped, then "." and
// ".." segments resolved. ok is false when it names nothing inside the
// extension.
func resourcePath(p string) (string, bool) {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return "", false
	}
	clean := path.Clean(p)
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || strings.HasPrefix(clean, "/") {
		return "", false
	}
	return clean, true
}

// pagePath is the file a manifest's page names, as Chrome resolves it: a
// URL relative to the extension's root (Extension::GetResourceURL), whose
// path, without query or fragment, %-decoded and without leading slashes,
// is the file (file_util::ExtensionURLToRelativeFilePath). An escaped
// slash makes Chrome give up: ok is false.
func pagePath(p string) (string, bool) {
	u, err := url.Parse("chrome-extension://extension/" + strings.TrimPrefix(p, "/"))
	if err != nil || u.Host != "extension" {
		return "", false
	}
	if esc := strings.ToLower(u.EscapedPath()); strings.Contains(esc, "%2f") || strings.Contains(esc, "%5c") {
		return "", false
	}
	return resourcePath(strings.TrimLeft(u.Path, "/\\"))
}
