package http_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/crx"
	"github.com/betaport/betaport/server/keyring"
	"github.com/betaport/betaport/server/publish"
	"github.com/betaport/betaport/server/storetest"
)

// updates reads an extension's Chrome ID and update URL as its admin.
func (e *env) updates(t *testing.T, ext *betaport.Extension, admin http.Header) api.Updates {
	t.Helper()
	resp, body := e.do(t, "GET", api.UpdatesPath(ext.ID), admin)
	var u api.Updates
	if resp.StatusCode != 200 || json.Unmarshal(body, &u) != nil {
		t.Fatalf("GET updates = %d %s", resp.StatusCode, body)
	}
	if len(u.ChromeID) != 32 || strings.Trim(u.ChromeID, "abcdefghijklmnop") != "" {
		t.Fatalf("Chrome ID %q is not 32 letters a–p", u.ChromeID)
	}
	if !strings.HasPrefix(u.UpdateURL, e.URL+api.UpdatePrefix) {
		t.Fatalf("update URL %q is not on this server", u.UpdateURL)
	}
	return u
}

// gupdate is the part of Chromium's update response the updater reads.
type gupdate struct {
	Apps []struct {
		AppID       string `xml:"appid,attr"`
		Status      string `xml:"status,attr"`
		UpdateCheck *struct {
			Status   string `xml:"status,attr"`
			Codebase string `xml:"codebase,attr"`
			Version  string `xml:"version,attr"`
		} `xml:"updatecheck"`
	} `xml:"app"`
}

// checkUpdate asks updateURL what Chromium would, for an installed version
// of the extension with Chrome ID id.
func checkUpdate(t *testing.T, updateURL, id, installed string) (int, gupdate) {
	t.Helper()
	x := url.Values{"id": {id}, "v": {installed}, "installsource": {"notfromwebstore"}, "uc": {""}}
	q := url.Values{"os": {"linux"}, "prod": {"chromiumcrx"}, "acceptformat": {"crx3"}, "x": {x.Encode()}}
	resp, body := get(t, updateURL+"?"+q.Encode())
	var g gupdate
	if resp.StatusCode == 200 {
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/xml") {
			t.Fatalf("update check answered %s", ct)
		}
		if err := xml.Unmarshal(body, &g); err != nil {
			t.Fatalf("update check answered %s: %v", body, err)
		}
	} else if resp.Header.Get("Content-Type") != api.ProblemContentType {
		t.Fatalf("refused update check without a problem: %d %s", resp.StatusCode, body)
	}
	return resp.StatusCode, g
}

// get fetches a URL with no cookies, as Chromium's updater does.
func get(t *testing.T, rawURL string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// offered is the version and CRX URL an update check offers (both empty for
// no update).
func offered(t *testing.T, g gupdate, id string) (version, codebase string) {
	t.Helper()
	if len(g.Apps) != 1 || g.Apps[0].AppID != id || g.Apps[0].Status != "ok" || g.Apps[0].UpdateCheck == nil {
		t.Fatalf("update response %+v, want one ok app %s", g, id)
	}
	uc := g.Apps[0].UpdateCheck
	if uc.Status == "noupdate" {
		return "", ""
	}
	if uc.Status != "ok" || uc.Version == "" || uc.Codebase == "" {
		t.Fatalf("update check %+v", uc)
	}
	return uc.Version, uc.Codebase
}

// openCRX parses and verifies a CRX with the project's reader (which checks
// every RSA signature with crypto/rsa) and returns its manifest.
func openCRX(t *testing.T, data []byte) (*crx.File, map[string]any) {
	t.Helper()
	f, err := crx.Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("not a valid CRX3: %v", err)
	}
	zr, err := zip.NewReader(f.Zip, f.ZipSize)
	if err != nil {
		t.Fatalf("the CRX's zip: %v", err)
	}
	var manifest map[string]any
	for _, zf := range zr.File {
		if zf.Name == "manifest.json" {
			rc, _ := zf.Open()
			err = json.NewDecoder(rc).Decode(&manifest)
			rc.Close()
		}
	}
	if manifest == nil || err != nil {
		t.Fatalf("the CRX has no readable manifest.json: %v", err)
	}
	return f, manifest
}

// wantCRX checks a CRX of the extension: signed, with its ID, and a
// manifest carrying its key, its update URL and the served version.
func wantCRX(t *testing.T, data []byte, u api.Updates, version, versionName string) {
	t.Helper()
	f, m := openCRX(t, data)
	if f.ExtensionID != u.ChromeID {
		t.Errorf("CRX id %s, want the extension's %s", f.ExtensionID, u.ChromeID)
	}
	if m["key"] != base64.StdEncoding.EncodeToString(f.PublicKey) {
		t.Errorf("manifest key %v is not the signing key", m["key"])
	}
	if m["update_url"] != u.UpdateURL || m["version"] != version {
		t.Errorf("manifest update_url %v, version %v; want %s, %s", m["update_url"], m["version"], u.UpdateURL, version)
	}
	if got, _ := m["version_name"].(string); got != versionName {
		t.Errorf("manifest version_name %q, want %q", got, versionName)
	}
	if m["name"] != "Tab Tamer" || m["manifest_version"] != 3.0 {
		t.Errorf("the rest of the manifest changed: %v", m)
	}
}

// testerUpdates returns the update URL a tester's own copy of bundle b
// names, read from the CRX the tester downloads: under the service's
// update prefix, for the extension, and not the shared URL u.
func testerUpdates(t *testing.T, e *env, ext *betaport.Extension, b *betaport.Bundle, tester http.Header, u api.Updates) api.Updates {
	t.Helper()
	resp, body := e.fetchFile(t, "GET", api.BundleCRXPath(ext.ID, b.Number), tester)
	if resp.StatusCode != 200 {
		t.Fatalf("the tester's CRX: %d %s", resp.StatusCode, body)
	}
	_, m := openCRX(t, body)
	url, _ := m["update_url"].(string)
	prefix := u.UpdateURL[:strings.LastIndex(u.UpdateURL, "/")+1]
	if !strings.HasPrefix(url, prefix) || url == u.UpdateURL || len(url)-len(prefix) < 22 {
		t.Fatalf("the tester's CRX names the update URL %q: want one of their own under %s (the shared one is %s)", url, prefix, u.UpdateURL)
	}
	return api.Updates{ChromeID: u.ChromeID, UpdateURL: url}
}

// TestSameVersionThreeTimesUpdates uploads one manifest version three times:
// each bundle is served with a strictly higher version, its CRX is valid and
// signed with the extension's key, and the update URL always offers the
// newest.
func TestSameVersionThreeTimesUpdates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	tester, _ := e.testerOf(t, p.ext, betaport.TesterActive)
	testerCookie := e.cookie(t, betaport.Session{TesterID: tester.ID})

	u := e.updates(t, p.ext, admin)
	if _, g := checkUpdate(t, u.UpdateURL, u.ChromeID, ""); g.Apps[0].UpdateCheck.Status != "noupdate" {
		t.Fatalf("before any bundle: %+v", g)
	}
	want := []struct{ version, name string }{{"1.0.0", ""}, {"1.0.0.2", "1.0.0"}, {"1.0.0.3", "1.0.0"}}
	installed := "" // what a tester's browser has
	for i, w := range want {
		b := p.submitAny(t, validZip(t, "1.0.0"))
		if b.Number != int64(i+1) || b.Version != w.version || b.VersionName != w.name {
			t.Fatalf("upload %d published %d %q (%q), want %q (%q)", i+1, b.Number, b.Version, b.VersionName, w.version, w.name)
		}
		if installed != "" && crx.CompareVersions(b.Version, installed) <= 0 {
			t.Fatalf("served %s after %s: not higher", b.Version, installed)
		}
		status, g := checkUpdate(t, u.UpdateURL, u.ChromeID, installed)
		version, codebase := offered(t, g, u.ChromeID)
		if status != 200 || version != w.version {
			t.Fatalf("update check after upload %d offers %q, want %s", i+1, version, w.version)
		}
		resp, data := get(t, codebase)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != api.CRXContentType {
			t.Fatalf("codebase %s = %d %s", codebase, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		wantCRX(t, data, u, w.version, w.name)
		// A tester gets the same package from the builds page, but theirs:
		// it names their own update URL, which offers the same bundle.
		mine := testerUpdates(t, e, p.ext, &b, testerCookie, u)
		_, g = checkUpdate(t, mine.UpdateURL, mine.ChromeID, installed)
		if version, _ := offered(t, g, u.ChromeID); version != w.version {
			t.Fatalf("the tester's URL offers %q after upload %d, want %s", version, i+1, w.version)
		}
		resp, fromPage := e.fetchFile(t, "GET", api.BundleCRXPath(p.ext.ID, b.Number), testerCookie)
		if resp.StatusCode != 200 {
			t.Fatalf("tester's CRX download = %d", resp.StatusCode)
		}
		wantCRX(t, fromPage, mine, w.version, w.name)
		if cd := resp.Header.Get("Content-Disposition"); cd != fmt.Sprintf(`attachment; filename="Tab-Tamer-%s.crx"`, w.version) {
			t.Errorf("CRX file name: %s", cd)
		}
		installed = version
	}
	// Up to date: nothing to fetch.
	if _, g := checkUpdate(t, u.UpdateURL, u.ChromeID, installed); g.Apps[0].UpdateCheck.Status != "noupdate" {
		t.Fatalf("an up-to-date copy was offered %+v", g.Apps[0].UpdateCheck)
	}
	// The bundle record shows both versions.
	resp, body := e.do(t, "GET", api.BundlesPath(p.ext.ID)+"?page=0", admin)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"version":"1.0.0.3","versionName":"1.0.0"`) {
		t.Fatalf("bundles page: %d %s", resp.StatusCode, body)
	}
}

// mustTeam returns the team of an extension.
func mustTeam(t *testing.T, e *env, ext *betaport.Extension) *betaport.Team {
	t.Helper()
	team, err := e.DB.FindTeam(context.Background(), ext.TeamID)
	if err != nil {
		t.Fatal(err)
	}
	return team
}

// TestServedVersionsOnlyGoUp: a lower upload is served above the highest
// served so far, a higher one as uploaded, and a manifest's own
// version_name is kept.
func TestServedVersionsOnlyGoUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	u := e.updates(t, p.ext, admin)
	steps := []struct {
		manifest      string
		version, name string
	}{
		{`"version": "2.0"`, "2.0", ""},
		{`"version": "1.5"`, "2.0.0.2", "1.5"},
		{`"version": "1.5", "version_name": "1.5 beta"`, "2.0.0.3", "1.5"},
		{`"version": "3.1"`, "3.1", ""},
	}
	for i, s := range steps {
		b := p.submitAny(t, makeZip(t, map[string]string{
			"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", ` + s.manifest + `}`,
		}))
		if b.Version != s.version || b.VersionName != s.name {
			t.Fatalf("step %d served %q (%q), want %q (%q)", i+1, b.Version, b.VersionName, s.version, s.name)
		}
		resp, data := e.fetchFile(t, "GET", api.BundleCRXPath(p.ext.ID, b.Number), admin)
		if resp.StatusCode != 200 {
			t.Fatalf("CRX = %d %s", resp.StatusCode, data)
		}
		wantName := s.name
		if strings.Contains(s.manifest, "version_name") {
			wantName = "1.5 beta"
		}
		wantCRX(t, data, u, s.version, wantName)
	}
}

// TestManifestWithBOMPacks: a manifest.json that starts with a byte order
// mark (which the builder and Chrome accept) is packed too.
func TestManifestWithBOMPacks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	b := p.submitAny(t, makeZip(t, map[string]string{
		"manifest.json": "\xef\xbb\xbf" + `{"manifest_version": 3, "name": "Tab Tamer", "version": "1.2"}`,
	}))
	resp, data := e.fetchFile(t, "GET", api.BundleCRXPath(p.ext.ID, b.Number), admin)
	if resp.StatusCode != 200 {
		t.Fatalf("CRX = %d %s", resp.StatusCode, data)
	}
	wantCRX(t, data, e.updates(t, p.ext, admin), "1.2", "")
}

// TestUpdateTokenRotation: after a rotation the old update URL and its CRX
// URLs answer nothing, the new one works, and CRXs carry the new URL. One
// extension's token opens nothing of another's.
func TestUpdateTokenRotation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	team := mustTeam(t, e, p.ext)
	admin := e.adminOf(t, team)
	p.submitAny(t, validZip(t, "1.0.0"))
	old := e.updates(t, p.ext, admin)
	_, g := checkUpdate(t, old.UpdateURL, old.ChromeID, "")
	_, oldCodebase := offered(t, g, old.ChromeID)

	other := storetest.MustExtension(t, e.DB, team, "Other")
	otherU := e.updates(t, other, admin)
	if otherU.ChromeID == old.ChromeID {
		t.Fatal("two extensions share a Chrome ID")
	}
	// Extension A's token under B's id, and B's under A's: refused.
	idOf := func(u api.Updates) string {
		return strings.Split(strings.TrimPrefix(u.UpdateURL, e.URL+api.UpdatePrefix), "/")[0]
	}
	tokenOf := func(u api.Updates) string {
		return strings.Split(strings.TrimPrefix(u.UpdateURL, e.URL+api.UpdatePrefix), "/")[1]
	}
	for _, crossed := range []string{
		e.URL + api.UpdatePrefix + idOf(otherU) + "/" + tokenOf(old),
		e.URL + api.UpdatePrefix + idOf(old) + "/" + tokenOf(otherU),
	} {
		if status, _ := checkUpdate(t, crossed, old.ChromeID, ""); status != 404 {
			t.Fatalf("crossed update URL %s answered %d", crossed, status)
		}
		if resp, _ := get(t, crossed+"/crx/1"); resp.StatusCode != 404 {
			t.Fatalf("crossed CRX URL answered %d", resp.StatusCode)
		}
	}
	// A valid feed does not speak for other extensions a browser has.
	x := func(id string) string { return url.QueryEscape("id=" + id + "&v=0.1&uc") }
	_, both := get(t, old.UpdateURL+"?x="+x(old.ChromeID)+"&x="+x(otherU.ChromeID))
	var g2 gupdate
	if xml.Unmarshal(both, &g2) != nil || len(g2.Apps) != 2 || g2.Apps[1].Status != crx.AppUnknown || g2.Apps[1].UpdateCheck != nil {
		t.Fatalf("a check for two extensions answered %s", both)
	}

	resp, body := e.do(t, "POST", api.UpdateTokenPath(p.ext.ID), admin)
	var rotated api.Updates
	if resp.StatusCode != 200 || json.Unmarshal(body, &rotated) != nil {
		t.Fatalf("rotate = %d %s", resp.StatusCode, body)
	}
	if rotated.UpdateURL == old.UpdateURL || rotated.ChromeID != old.ChromeID || rotated.RotatedAt == nil {
		t.Fatalf("rotation answered %+v (was %+v): want a new URL, the same ID", rotated, old)
	}
	if now := e.updates(t, p.ext, admin); now.UpdateURL != rotated.UpdateURL {
		t.Fatalf("after rotation the API answers %s, rotation said %s", now.UpdateURL, rotated.UpdateURL)
	}
	if status, _ := checkUpdate(t, old.UpdateURL, old.ChromeID, ""); status != 404 {
		t.Fatalf("the old update URL answered %d after rotation", status)
	}
	if resp, _ := get(t, oldCodebase); resp.StatusCode != 404 {
		t.Fatalf("the old CRX URL answered %d after rotation", resp.StatusCode)
	}
	_, g = checkUpdate(t, rotated.UpdateURL, rotated.ChromeID, "")
	version, codebase := offered(t, g, rotated.ChromeID)
	resp, data := get(t, codebase)
	if resp.StatusCode != 200 {
		t.Fatalf("new codebase = %d", resp.StatusCode)
	}
	// The current bundle's CRX was rebuilt for the new URL, and the one
	// with the old URL is gone.
	wantCRX(t, data, rotated, version, "")
	if _, crxs := storedBundles(t, e); len(crxs) != 1 {
		t.Fatalf("CRXs stored after the rebuild: %v, want only the new one", crxs)
	}
	// And the other extension was left alone.
	if status, _ := checkUpdate(t, otherU.UpdateURL, otherU.ChromeID, ""); status != 200 {
		t.Fatalf("rotating one extension's token broke another's: %d", status)
	}
}

// TestBundlesWithoutCRXGetOne: a bundle published before CRXs existed (as
// the demo seed publishes) gets its CRX when first asked for.
func TestBundlesWithoutCRXGetOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanStarter)
	ext := storetest.MustExtension(t, e.DB, team, "Tab Tamer")
	e.publish(t, ext, "1.4.2")
	admin := e.adminOf(t, team)
	u := e.updates(t, ext, admin)
	_, g := checkUpdate(t, u.UpdateURL, u.ChromeID, "1.4.1")
	version, codebase := offered(t, g, u.ChromeID)
	resp, data := get(t, codebase)
	if resp.StatusCode != 200 || version != "1.4.2" {
		t.Fatalf("codebase = %d, version %s", resp.StatusCode, version)
	}
	f, m := openCRX(t, data)
	if f.ExtensionID != u.ChromeID || m["version"] != "1.4.2" || m["update_url"] != u.UpdateURL {
		t.Fatalf("lazily built CRX: id %s, manifest %v", f.ExtensionID, m)
	}
	// Asked again, the same stored package answers.
	if _, again := get(t, codebase); !bytes.Equal(again, data) {
		t.Fatal("the CRX was built again with other bytes")
	}
}

// TestSigningKeyNeverShown runs everything that touches the signing key and
// the update token and checks that no response carries the private key and
// no log line carries either.
func TestSigningKeyNeverShown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var logs lockedBuffer
	e.App.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	var responses bytes.Buffer
	keep := func(_ *http.Response, body []byte) { responses.Write(body) }

	p.submitAny(t, validZip(t, "1.0.0"))
	keep(e.do(t, "GET", api.UpdatesPath(p.ext.ID), admin))
	keep(e.do(t, "GET", api.ExtensionPath(p.ext.ID), admin))
	keep(e.do(t, "GET", api.CurrentBundlePath(p.ext.ID), admin))
	keep(e.do(t, "GET", api.BundleCRXPath(p.ext.ID, 1), admin))
	u := e.updates(t, p.ext, admin)
	keep(get(t, u.UpdateURL+"?x="+url.QueryEscape("id="+u.ChromeID+"&v=0&uc")))
	keep(get(t, u.UpdateURL+"/crx/1"))
	keep(e.do(t, "POST", api.UpdateTokenPath(p.ext.ID), admin))
	keep(get(t, u.UpdateURL)) // the replaced URL, logged as a 404
	p.submitAny(t, validZip(t, "1.0.0"))

	sg, err := e.DB.FindSigning(context.Background(), p.ext.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The row holds the key sealed, never its PEM.
	if !keyring.IsSealed(sg.PrivateKey) || bytes.Contains(sg.PrivateKey, []byte("PRIVATE KEY")) {
		t.Fatalf("the signing key is stored unsealed: %.40q…", sg.PrivateKey)
	}
	pem, err := testKeyring.Open(sg.PrivateKey, publish.SigningContext(p.ext.ID))
	if err != nil {
		t.Fatal(err)
	}
	// The PEM's base64 body, in lines as stored, and as one string.
	secretLines := strings.Split(strings.TrimSpace(string(pem)), "\n")
	secretBody := strings.Join(secretLines[1:len(secretLines)-1], "")
	// A dump of the database (here, its files) does not carry it either.
	if e.Backend == backendFiles {
		files, _ := filepath.Glob(filepath.Join(e.Dir, "betaport.db*"))
		for _, f := range files {
			if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(secretBody[:40])) || bytes.Contains(b, []byte("PRIVATE KEY")) {
				t.Fatalf("the database file %s carries the private key", f)
			}
		}
	}
	for _, needle := range append([]string{secretBody[:40], secretBody[200:260]}, secretLines[3]) {
		if bytes.Contains(responses.Bytes(), []byte(needle)) {
			t.Fatalf("a response carries the private key (%q)", needle)
		}
		if strings.Contains(logs.String(), needle) {
			t.Fatalf("the log carries the private key (%q)", needle)
		}
	}
	if !strings.Contains(logs.String(), "update token rotated") {
		t.Fatalf("the log did not record the rotation:\n%s", logs.String())
	}
	for _, token := range []string{strings.TrimPrefix(u.UpdateURL, e.URL+api.UpdatePrefix), sg.UpdateToken} {
		token = token[strings.LastIndex(token, "/")+1:]
		if strings.Contains(logs.String(), token) {
			t.Fatalf("the log carries an update token:\n%s", logs.String())
		}
	}
	if s := fmt.Sprintf("%v %+v %#v %s", sg, sg, *sg, sg); strings.Contains(s, secretLines[3]) || strings.Contains(s, sg.UpdateToken) {
		t.Fatalf("a formatted Signing shows its secrets: %s", s)
	}
}

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
