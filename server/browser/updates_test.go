package browser_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// Self-hosted updates as people meet them: an admin reads the Chrome ID and
// update URL on the settings page and rotates the token (after a
// confirmation); a tester installs the signed CRX, or takes the zip, from
// the builds page; bundle rows show the served version and the uploaded one.

var chromeIDPattern = regexp.MustCompile(`^[a-p]{32}$`)

// The settings page shows what the API answers; Cancel rotates nothing;
// Confirm rotates: the page shows the URL the API now answers, the old URL
// answers 404 to Chromium's update check while the new one answers the
// update XML, and the CRX served from then on carries the new URL.
func TestUpdatesSettingsShowAndRotate(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0] // Professional, 120 bundles
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/settings", m.URL(), ext.ID))
	waitJS(t, ctx, `document.querySelector("#update-url")?.value.startsWith("http") && !document.querySelector("#updates-facts").hidden`)
	if !evalJS[bool](t, ctx, `document.querySelector("#updates-loading").hidden && document.querySelector("#updates-error").hidden && document.querySelector("#rotate-confirm").hidden`) {
		t.Fatal("the loading, error or confirmation view is shown next to the update URL")
	}

	before := getUpdates(t, ctx, ext.ID)
	if !chromeIDPattern.MatchString(before.ChromeID) {
		t.Fatalf("the API's Chrome ID is %q, want 32 letters a-p", before.ChromeID)
	}
	if !strings.HasPrefix(before.UpdateURL, m.URL()+api.UpdatePrefix) {
		t.Fatalf("the API's update URL is %q, want it under %s%s", before.UpdateURL, m.URL(), api.UpdatePrefix)
	}
	if got := text(t, ctx, `#chrome-id`); got != before.ChromeID {
		t.Fatalf("the page shows Chrome ID %q, the API answers %q", got, before.ChromeID)
	}
	if got := shownUpdateURL(t, ctx); got != before.UpdateURL {
		t.Fatalf("the page shows update URL %q, the API answers %q", got, before.UpdateURL)
	}
	if !evalJS[bool](t, ctx, `document.querySelector("#update-url").readOnly`) {
		t.Fatal("the update URL field is editable")
	}
	// The extension record carries the same ID now that the key exists.
	if got := evalJS[string](t, ctx, fmt.Sprintf(`fetch(%q).then(r => r.json()).then(e => e.chromeId)`, api.ExtensionPath(ext.ID))); got != before.ChromeID {
		t.Fatalf("the extension's chromeId is %q, want %q", got, before.ChromeID)
	}
	// The URL works as Chromium's updater uses it: no cookie, an update
	// offered to version 0.0.0, and its codebase is a CRX.
	check := updateCheck(t, before.UpdateURL, before.ChromeID)
	if check.status != http.StatusOK || check.mediaType != "application/xml" || !strings.Contains(check.body, "appid='"+before.ChromeID+"'") {
		t.Fatalf("the update check answers %d %s:\n%s", check.status, check.mediaType, check.body)
	}
	if check.codebase == "" || !strings.HasPrefix(check.codebase, before.UpdateURL+"/crx/") {
		t.Fatalf("the update check offers codebase %q, want a CRX under %s", check.codebase, before.UpdateURL)
	}
	if raw := plainGet(t, check.codebase); !bytes.HasPrefix(raw, []byte("Cr24")) {
		t.Fatalf("the codebase serves %d bytes starting %q, want a CRX", len(raw), head(raw))
	}

	// A confirmation first, with the warning; Cancel changes nothing.
	do(t, ctx, chromedp.Click(chromedp.CSS(`#rotate-token`)))
	waitJS(t, ctx, `document.activeElement.id === "confirm-rotate"`)
	if !evalJS[bool](t, ctx, `!document.querySelector("#rotate-confirm").hidden && document.querySelector("#rotate-token").hidden`) {
		t.Fatal("the confirmation is not shown in place of the button")
	}
	warning := text(t, ctx, `#rotate-confirm-text`)
	for _, want := range []string{"Every copy installed", "stop getting updates", "install the new CRX", "builds page"} {
		if !strings.Contains(warning, want) {
			t.Fatalf("the confirmation says %q, want it to say %q", warning, want)
		}
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(`#cancel-rotate`)))
	waitJS(t, ctx, `document.querySelector("#rotate-confirm").hidden && document.activeElement.id === "rotate-token"`)
	if got := liveRegion(t, ctx); !strings.Contains(got, "not changed") {
		t.Fatalf("after Cancel the live region says %q", got)
	}
	if after := getUpdates(t, ctx, ext.ID); after.UpdateURL != before.UpdateURL {
		t.Fatalf("Cancel rotated the token: %q became %q", before.UpdateURL, after.UpdateURL)
	}
	if got := shownUpdateURL(t, ctx); got != before.UpdateURL {
		t.Fatalf("after Cancel the page shows %q, want %q", got, before.UpdateURL)
	}
	if check := updateCheck(t, before.UpdateURL, before.ChromeID); check.status != http.StatusOK {
		t.Fatalf("after Cancel the update URL answers %d", check.status)
	}

	// Confirm rotates.
	do(t, ctx, chromedp.Click(chromedp.CSS(`#rotate-token`)))
	waitJS(t, ctx, `document.activeElement.id === "confirm-rotate"`)
	do(t, ctx, chromedp.Click(chromedp.CSS(`#confirm-rotate`)))
	waitJS(t, ctx, `!document.querySelector("#rotate-done").hidden`)
	after := getUpdates(t, ctx, ext.ID)
	shown := shownUpdateURL(t, ctx)
	switch {
	case after.UpdateURL == before.UpdateURL:
		t.Fatalf("the API still answers the old update URL %q", after.UpdateURL)
	case shown != after.UpdateURL:
		t.Fatalf("the page shows %q, the API answers %q", shown, after.UpdateURL)
	case after.ChromeID != before.ChromeID:
		t.Fatalf("rotating changed the Chrome ID from %q to %q", before.ChromeID, after.ChromeID)
	case after.RotatedAt == nil:
		t.Fatal("the API gives no rotatedAt after a rotation")
	}
	if got := text(t, ctx, `#chrome-id`); got != before.ChromeID {
		t.Fatalf("after the rotation the page shows Chrome ID %q", got)
	}
	if got := liveRegion(t, ctx); !strings.Contains(got, after.UpdateURL) {
		t.Fatalf("the live region says %q, want the new URL announced", got)
	}
	if !evalJS[bool](t, ctx, `document.querySelector("#rotate-error").hidden && document.querySelector("#rotate-confirm").hidden && !document.querySelector("#rotate-token").hidden`) {
		t.Fatal("after the rotation the error or the confirmation is shown, or the button is not")
	}

	// The old URL is cut off; the new one answers.
	if old := updateCheck(t, before.UpdateURL, before.ChromeID); old.status != http.StatusNotFound {
		t.Fatalf("the old update URL answers %d, want 404:\n%s", old.status, old.body)
	}
	now := updateCheck(t, after.UpdateURL, after.ChromeID)
	if now.status != http.StatusOK || now.mediaType != "application/xml" || !strings.HasPrefix(now.codebase, after.UpdateURL+"/crx/") {
		t.Fatalf("the new update URL answers %d %s, codebase %q:\n%s", now.status, now.mediaType, now.codebase, now.body)
	}
	// A CRX downloaded now carries the new URL and the extension's key.
	raw := fetchBytes(t, ctx, api.BundleCRXPath(ext.ID, ext.CurrentBundle))
	mf := crxManifest(t, raw)
	if mf.UpdateURL != after.UpdateURL || mf.Key == "" {
		t.Fatalf("the CRX's manifest has update_url %q and key %q, want %q and a key", mf.UpdateURL, mf.Key, after.UpdateURL)
	}
}

// A tester's builds page offers the current build both ways, says how to
// install each, and the CRX link serves a signed CRX whose manifest
// carries the extension's update URL; the zip link serves the zip.
func TestUpdatesTesterGetsCRXAndZip(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0]
	ctx := newTab(t)
	openApp(t, ctx, m.URL()+d.TesterLink)
	waitLocation(t, ctx, m.URL()+"/builds")
	waitJS(t, ctx, `document.querySelector("#builds a.install") !== null`)

	row := `#builds [data-build] a`
	links := evalJS[[]struct{ Text, Href string }](t, ctx, `[...document.querySelectorAll(`+jsString(row)+`)].map(a => ({text: a.textContent, href: a.href}))`)
	want := []struct{ Text, Href string }{
		{"Install (.crx)", m.URL() + api.BundleCRXPath(ext.ID, ext.CurrentBundle)},
		{"Zip (load unpacked)", m.URL() + api.BundleDownloadPath(ext.ID, ext.CurrentBundle)},
	}
	if len(links) != 2 || links[0] != want[0] || links[1] != want[1] {
		t.Fatalf("the builds rows link to %+v, want only the current build's %+v", links, want)
	}

	// The instructions, folded until asked for.
	if evalJS[bool](t, ctx, `document.querySelector("details.install-help").open`) {
		t.Fatal("the instructions are unfolded at first")
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(`details.install-help summary`)))
	waitJS(t, ctx, `document.querySelector("details.install-help").open`)
	help := evalJS[string](t, ctx, `document.querySelector("details.install-help").innerText`)
	for _, s := range []string{"Chrome, Edge, Brave, Opera", "chrome://extensions", "edge://extensions", "Developer mode", "Drag the .crx", "policy", "Load unpacked", "does not update itself", "Firefox and Safari"} {
		if !strings.Contains(help, s) {
			t.Fatalf("the instructions do not say %q:\n%s", s, help)
		}
	}

	// The CRX, fetched by the page with the tester's session.
	got := evalJS[fetched](t, ctx, fetchJS(`document.querySelector("#builds a.install").href`))
	crx, _ := base64.StdEncoding.DecodeString(got.Body)
	if got.Status != http.StatusOK || !bytes.HasPrefix(crx, []byte("Cr24")) {
		t.Fatalf("the CRX link answers %d with %d bytes starting %q, want a CRX", got.Status, len(crx), head(crx))
	}
	if got.Type != api.CRXContentType {
		t.Fatalf("the CRX is served as %q, want %q", got.Type, api.CRXContentType)
	}
	if _, params, _ := mime.ParseMediaType(got.Disposition); !strings.HasSuffix(params["filename"], ".crx") {
		t.Fatalf("the CRX's Content-Disposition is %q, want a .crx file name", got.Disposition)
	}
	// Its manifest names the tester's own update URL (not the extension's
	// shared one its admin sees) and public key, and the served version.
	u := adminUpdates(t, m.URL(), d.Admins[0].Email, d.Admins[0].Password, ext.ID)
	mf := crxManifest(t, crx)
	cur, err := m.Store.FindBundle(context.Background(), ext.ID, ext.CurrentBundle)
	if err != nil {
		t.Fatal(err)
	}
	own := m.URL() + api.UpdatePrefix + strconv.FormatInt(ext.ID, 10) + "/"
	if !strings.HasPrefix(mf.UpdateURL, own) || mf.UpdateURL == u.UpdateURL || mf.Key == "" || mf.Version != cur.Version {
		t.Fatalf("the CRX's manifest: update_url %q, key %q, version %q; want the tester's own URL under %s (not the shared %q), a key, %q",
			mf.UpdateURL, mf.Key, mf.Version, own, u.UpdateURL, cur.Version)
	}

	// The zip link serves the bundle's zip.
	got = evalJS[fetched](t, ctx, fetchJS(`document.querySelector("#builds a.download").href`))
	zipBytes, _ := base64.StdEncoding.DecodeString(got.Body)
	if got.Status != http.StatusOK || !bytes.HasPrefix(zipBytes, []byte("PK")) || got.Type != api.ZipContentType {
		t.Fatalf("the zip link answers %d %s with %d bytes starting %q", got.Status, got.Type, len(zipBytes), head(zipBytes))
	}
}

// The same version published twice: the second is served under a derived,
// higher version, and the bundle rows (admin and tester) say which version
// was uploaded. The extension page offers the new bundle both ways.
func TestUpdatesRowsShowUploadedVersion(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[0] // the demo tester tests it; its bundles are 1.x
	key := setKey(t, m.Store, ext.ID)
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "key.json")
	writeFile(t, keyPath, keyFile(ext.ID, key))
	zipPath := filepath.Join(dir, "tab-tamer.zip")
	publish := func(body string) betaport.Bundle {
		writeFile(t, zipPath, extensionZip(t, map[string]string{
			"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "2.0.0"}`,
			"background.js": body,
		}))
		return submitAsPipeline(t, m.URL(), keyPath, zipPath)
	}
	first := publish("console.log('first')\n")
	second := publish("console.log('second')\n")
	if first.Version != "2.0.0" || first.VersionName != "" {
		t.Fatalf("the first 2.0.0 is served as %q (versionName %q), want 2.0.0 as uploaded", first.Version, first.VersionName)
	}
	if second.Version == "2.0.0" || !strings.HasPrefix(second.Version, "2.0.0.") || second.VersionName != "2.0.0" {
		t.Fatalf("the second 2.0.0 is served as %q (versionName %q), want a derived 2.0.0.N and versionName 2.0.0", second.Version, second.VersionName)
	}
	wantText := second.Version + " (uploaded as 2.0.0)"

	// The admin's bundle list.
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", m.URL(), ext.ID))
	sel := fmt.Sprintf(`#bundle-rows [data-bundle="%d"] .version`, second.Number)
	waitJS(t, ctx, `document.querySelector(`+jsString(sel)+`) !== null`)
	if got := evalJS[string](t, ctx, `document.querySelector(`+jsString(sel)+`).innerText.replace(/\s+/g, " ").trim()`); got != wantText {
		t.Fatalf("the row of bundle #%d shows %q, want %q", second.Number, got, wantText)
	}
	if got := evalJS[string](t, ctx, `document.querySelector(`+jsString(sel)+`).title`); got != wantText {
		t.Fatalf("the row's version title is %q, want %q", got, wantText)
	}
	firstSel := fmt.Sprintf(`#bundle-rows [data-bundle="%d"] .version`, first.Number)
	if got := evalJS[string](t, ctx, `document.querySelector(`+jsString(firstSel)+`).innerText.trim()`); got != "2.0.0" {
		t.Fatalf("the row of bundle #%d shows %q, want 2.0.0 alone", first.Number, got)
	}
	// The current bundle, both ways, with the instructions and the policy
	// files that keep it across restarts.
	links := evalJS[[]string](t, ctx, `[...document.querySelectorAll("#current-download a")].map(a => a.textContent + " " + a.href)`)
	policy := m.URL() + api.ExtensionPath(ext.ID) + "/policy/"
	wantLinks := []string{
		"Install (.crx) " + m.URL() + api.BundleCRXPath(ext.ID, second.Number),
		"Zip (load unpacked) " + m.URL() + api.BundleDownloadPath(ext.ID, second.Number),
		"Linux (.json) " + policy + "linux",
		"macOS (.mobileconfig) " + policy + "macos",
		"Windows (.reg) " + policy + "windows",
	}
	if strings.Join(links, "\n") != strings.Join(wantLinks, "\n") {
		t.Fatalf("the extension page offers %q, want %q", links, wantLinks)
	}
	if !evalJS[bool](t, ctx, `!document.querySelector("#current-download").hidden && document.querySelector("#current-download details.install-help") !== null`) {
		t.Fatal("the extension page hides the current bundle's links or has no instructions")
	}

	// The tester's builds.
	tester := newTab(t)
	openApp(t, tester, m.URL()+d.TesterLink)
	waitLocation(t, tester, m.URL()+"/builds")
	waitJS(t, tester, `document.querySelector("#builds [data-build] .version") !== null`)
	if got := evalJS[string](t, tester, `document.querySelector("#builds [data-build] .version").innerText.replace(/\s+/g, " ").trim()`); got != wantText {
		t.Fatalf("the tester's newest build shows %q, want %q", got, wantText)
	}
	if got := evalJS[string](t, tester, `document.querySelector("#builds a.install").href`); got != m.URL()+api.BundleCRXPath(ext.ID, second.Number) {
		t.Fatalf("the tester's install link is %q, want bundle #%d's CRX", got, second.Number)
	}
}

// getUpdates answers GET UpdatesPath as the tab's signed-in admin.
func getUpdates(t *testing.T, ctx context.Context, extID int64) api.Updates {
	t.Helper()
	raw := evalJS[string](t, ctx, fmt.Sprintf(`fetch(%q).then(async r => { if (!r.ok) throw new Error(r.status + " " + await r.text()); return r.text() })`, api.UpdatesPath(extID)))
	var u api.Updates
	if err := json.Unmarshal([]byte(raw), &u); err != nil {
		t.Fatalf("GET %s answered %q: %v", api.UpdatesPath(extID), raw, err)
	}
	return u
}

// adminUpdates answers GET UpdatesPath to an admin signed in with
// net/http: the tabs share one cookie jar, which a tester's tab is using.
func adminUpdates(t *testing.T, baseURL, email, password string, extID int64) api.Updates {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	body, _ := json.Marshal(api.SignIn{Email: email, Password: password})
	resp, err := hc.Post(baseURL+api.PathSession, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("signing in as %s: %d", email, resp.StatusCode)
	}
	resp, err = hc.Get(baseURL + api.UpdatesPath(extID))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var u api.Updates
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &u) != nil {
		t.Fatalf("GET %s as %s: %d %s", api.UpdatesPath(extID), email, resp.StatusCode, b)
	}
	return u
}

func shownUpdateURL(t *testing.T, ctx context.Context) string {
	t.Helper()
	return evalJS[string](t, ctx, `document.querySelector("#update-url").value`)
}

func liveRegion(t *testing.T, ctx context.Context) string {
	t.Helper()
	return evalJS[string](t, ctx, `document.querySelector("#settings-status").textContent`)
}

// checked is the answer to an update check.
type checked struct {
	status    int
	mediaType string
	body      string
	codebase  string // of the offered update, if any
}

var codebaseAttr = regexp.MustCompile(`codebase='([^']*)'`)

// updateCheck asks updateURL for an update of chromeID from version 0.0.0,
// as Chromium's extension updater does: a plain GET, no cookie.
func updateCheck(t *testing.T, updateURL, chromeID string) checked {
	t.Helper()
	resp, err := http.Get(updateURL + "?x=id%3D" + chromeID + "%26v%3D0.0.0%26uc")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	c := checked{status: resp.StatusCode, body: string(b)}
	c.mediaType, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if m := codebaseAttr.FindStringSubmatch(c.body); m != nil {
		c.codebase = strings.ReplaceAll(m[1], "&amp;", "&")
	}
	return c
}

// plainGet GETs url without a cookie and wants 200.
func plainGet(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return b
}

// fetched is a response fetched in the page, its body in base64.
type fetched struct {
	Status      int    `json:"status"`
	Type        string `json:"type"`
	Disposition string `json:"disposition"`
	Body        string `json:"body"`
}

// fetchJS fetches the URL the expression gives, with the page's cookies.
func fetchJS(hrefExpr string) string {
	return `fetch(` + hrefExpr + `).then(async r => {
  const b = new Uint8Array(await r.arrayBuffer());
  let s = "";
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return {status: r.status, type: r.headers.get("Content-Type") ?? "", disposition: r.headers.get("Content-Disposition") ?? "", body: btoa(s)};
})`
}

// fetchBytes fetches path in the page and wants 200.
func fetchBytes(t *testing.T, ctx context.Context, path string) []byte {
	t.Helper()
	got := evalJS[fetched](t, ctx, fetchJS(jsString(path)))
	b, _ := base64.StdEncoding.DecodeString(got.Body)
	if got.Status != http.StatusOK {
		t.Fatalf("GET %s in the page: %d %s", path, got.Status, b)
	}
	return b
}

type crxManifestFields struct {
	Key         string `json:"key"`
	UpdateURL   string `json:"update_url"`
	Version     string `json:"version"`
	VersionName string `json:"version_name"`
}

// crxManifest reads the manifest.json of a CRX3 package: "Cr24", version
// 3, the header's length and the header, then the zip.
func crxManifest(t *testing.T, crx []byte) crxManifestFields {
	t.Helper()
	if len(crx) < 12 || string(crx[:4]) != "Cr24" || binary.LittleEndian.Uint32(crx[4:8]) != 3 {
		t.Fatalf("not a CRX3: %d bytes starting %q", len(crx), head(crx))
	}
	start := 12 + int(binary.LittleEndian.Uint32(crx[8:12]))
	if start > len(crx) {
		t.Fatalf("the CRX's header (%d bytes) is longer than the file (%d)", start-12, len(crx))
	}
	zr, err := zip.NewReader(bytes.NewReader(crx[start:]), int64(len(crx)-start))
	if err != nil {
		t.Fatalf("the CRX's archive: %v", err)
	}
	f, err := zr.Open("manifest.json")
	if err != nil {
		t.Fatalf("the CRX has no manifest.json: %v", err)
	}
	defer f.Close()
	var mf crxManifestFields
	if err := json.NewDecoder(f).Decode(&mf); err != nil {
		t.Fatalf("the CRX's manifest.json: %v", err)
	}
	return mf
}

func head(b []byte) string { return string(b[:min(len(b), 8)]) }

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
