package http_test

// Black-box tests of per-tester update URLs (issue 27): every CRX a tester
// gets names an update URL with a secret of their own; revoking a tester
// stops their updates and restoring resumes them; a new install link
// replaces only that tester's token; update checks are counted per tester
// and shown in the testers list; the update answer carries prodversionmin.
//
// Written from the issue and the wire contract (app/api, app/betaport)
// only, not from the implementation. The CRX3 verifier below is our own,
// from the CRX3 format, and does not use server/crx. Like every test built
// on newEnv they run on (SQLite, files) here and on (PostgreSQL, S3)
// through TestOnPostgresAndS3.

import (
	"archive/zip"
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/storetest"
)

// ------------------------------------------------------------ CRX3 verifier

// bbtuCRX is a CRX3 package read and verified by bbtuVerifyCRX.
type bbtuCRX struct {
	PublicKey   []byte // DER SubjectPublicKeyInfo of the key whose hash is the crx_id
	ExtensionID string // crx_id in Chromium's a–p letters
	Zip         []byte
	Entries     []bbtuEntry // in archive order, decompressed
	Manifest    map[string]any
	ManifestRaw []byte
}

type bbtuEntry struct {
	Name string
	Data []byte
}

// bbtuVerifyCRX checks data is a CRX3: magic, version, header; every
// sha256_with_rsa proof's signature verifies over the signed data and the
// zip, and one of their keys hashes to the signed crx_id.
func bbtuVerifyCRX(t *testing.T, what string, data []byte) *bbtuCRX {
	t.Helper()
	if len(data) < 12 || string(data[:4]) != "Cr24" {
		t.Fatalf("%s: not a CRX (no Cr24 magic; %d bytes, starts %q)", what, len(data), data[:min(len(data), 16)])
	}
	if v := binary.LittleEndian.Uint32(data[4:8]); v != 3 {
		t.Fatalf("%s: CRX version %d, want 3", what, v)
	}
	hlen := binary.LittleEndian.Uint32(data[8:12])
	if uint64(hlen) > uint64(len(data)-12) {
		t.Fatalf("%s: header length %d beyond the file's %d bytes", what, hlen, len(data))
	}
	header := data[12 : 12+hlen]
	archive := data[12+hlen:]

	type proof struct{ key, sig []byte }
	var proofs []proof
	var signedHeader []byte
	seenSigned := false
	for b := header; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("%s: header: bad tag: %v", what, protowire.ParseError(n))
		}
		b = b[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				t.Fatalf("%s: header field %d: %v", what, num, protowire.ParseError(n))
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			t.Fatalf("%s: header field %d: %v", what, num, protowire.ParseError(n))
		}
		b = b[n:]
		switch num {
		case 2: // sha256_with_rsa: AsymmetricKeyProof
			var p proof
			for pb := v; len(pb) > 0; {
				pn, pt, m := protowire.ConsumeTag(pb)
				if m < 0 {
					t.Fatalf("%s: key proof: %v", what, protowire.ParseError(m))
				}
				pb = pb[m:]
				if pt != protowire.BytesType {
					m = protowire.ConsumeFieldValue(pn, pt, pb)
					if m < 0 {
						t.Fatalf("%s: key proof: %v", what, protowire.ParseError(m))
					}
					pb = pb[m:]
					continue
				}
				pv, m := protowire.ConsumeBytes(pb)
				if m < 0 {
					t.Fatalf("%s: key proof: %v", what, protowire.ParseError(m))
				}
				pb = pb[m:]
				switch pn {
				case 1:
					p.key = pv
				case 2:
					p.sig = pv
				}
			}
			proofs = append(proofs, p)
		case 10000: // signed_header_data
			signedHeader, seenSigned = v, true
		}
	}
	if !seenSigned {
		t.Fatalf("%s: the header has no signed_header_data", what)
	}
	var crxID []byte
	for b := signedHeader; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("%s: signed data: %v", what, protowire.ParseError(n))
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				t.Fatalf("%s: crx_id: %v", what, protowire.ParseError(m))
			}
			crxID, b = v, b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			t.Fatalf("%s: signed data: %v", what, protowire.ParseError(m))
		}
		b = b[m:]
	}
	if len(crxID) != 16 {
		t.Fatalf("%s: crx_id is %d bytes, want 16", what, len(crxID))
	}
	if len(proofs) == 0 {
		t.Fatalf("%s: no sha256_with_rsa proof", what)
	}
	msg := sha256.New()
	msg.Write([]byte("CRX3 SignedData\x00"))
	binary.Write(msg, binary.LittleEndian, uint32(len(signedHeader)))
	msg.Write(signedHeader)
	msg.Write(archive)
	digest := msg.Sum(nil)
	out := &bbtuCRX{Zip: archive}
	for i, p := range proofs {
		pub, err := x509.ParsePKIXPublicKey(p.key)
		if err != nil {
			t.Fatalf("%s: proof %d: public key: %v", what, i, err)
		}
		rk, ok := pub.(*rsa.PublicKey)
		if !ok {
			t.Fatalf("%s: proof %d: a %T in an RSA proof", what, i, pub)
		}
		if err := rsa.VerifyPKCS1v15(rk, crypto.SHA256, digest, p.sig); err != nil {
			t.Fatalf("%s: proof %d: the signature does not verify: %v", what, i, err)
		}
		if sum := sha256.Sum256(p.key); bytes.Equal(sum[:16], crxID) {
			out.PublicKey = p.key
		}
	}
	if out.PublicKey == nil {
		t.Fatalf("%s: no proof's key hashes to the crx_id %x", what, crxID)
	}
	id := make([]byte, 32)
	for i, c := range crxID {
		id[2*i], id[2*i+1] = 'a'+c>>4, 'a'+c&15
	}
	out.ExtensionID = string(id)

	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		t.Fatalf("%s: the CRX's zip: %v", what, err)
	}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("%s: %s: %v", what, f.Name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %s: %v", what, f.Name, err)
		}
		out.Entries = append(out.Entries, bbtuEntry{f.Name, b})
		if f.Name == "manifest.json" {
			out.ManifestRaw = b
			if err := json.Unmarshal(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), &out.Manifest); err != nil {
				t.Fatalf("%s: manifest.json: %v", what, err)
			}
		}
	}
	if out.Manifest == nil {
		t.Fatalf("%s: no manifest.json", what)
	}
	if k, _ := out.Manifest["key"].(string); k != base64.StdEncoding.EncodeToString(out.PublicKey) {
		t.Errorf("%s: manifest key %.40q… is not the signing key", what, k)
	}
	return out
}

func (c *bbtuCRX) updateURL() string { s, _ := c.Manifest["update_url"].(string); return s }

// bbtuSameButManifest checks two CRXs of one bundle: same key and id, the
// same entries in the same order byte for byte but manifest.json, which is
// the last entry of both, and whose fields but update_url are the same.
func bbtuSameButManifest(t *testing.T, what string, a, b *bbtuCRX) {
	t.Helper()
	if !bytes.Equal(a.PublicKey, b.PublicKey) || a.ExtensionID != b.ExtensionID {
		t.Errorf("%s: signed with different keys (ids %s and %s)", what, a.ExtensionID, b.ExtensionID)
	}
	if len(a.Entries) != len(b.Entries) {
		t.Fatalf("%s: %d and %d entries", what, len(a.Entries), len(b.Entries))
	}
	for _, c := range []*bbtuCRX{a, b} {
		if last := c.Entries[len(c.Entries)-1].Name; last != "manifest.json" {
			t.Errorf("%s: the archive's last entry is %q, want manifest.json", what, last)
		}
	}
	for i := range a.Entries {
		ea, eb := a.Entries[i], b.Entries[i]
		if ea.Name != eb.Name {
			t.Errorf("%s: entry %d is %q in one and %q in the other", what, i, ea.Name, eb.Name)
			continue
		}
		if ea.Name != "manifest.json" && !bytes.Equal(ea.Data, eb.Data) {
			t.Errorf("%s: entry %s differs", what, ea.Name)
		}
	}
	ma, mb := map[string]any{}, map[string]any{}
	for k, v := range a.Manifest {
		ma[k] = v
	}
	for k, v := range b.Manifest {
		mb[k] = v
	}
	delete(ma, "update_url")
	delete(mb, "update_url")
	if !reflect.DeepEqual(ma, mb) {
		t.Errorf("%s: the manifests differ beyond update_url:\n%v\n%v", what, a.Manifest, b.Manifest)
	}
}

// ------------------------------------------------------------ the world

// bbtuWorld is one extension with a published bundle, its admin, and the
// extension's shared update URL.
type bbtuWorld struct {
	e      *env
	p      *pipeline
	team   *betaport.Team
	admin  http.Header
	upd    api.Updates
	prefix string // {base}/update/{ext}/: a token follows
}

type bbtuTester struct {
	id      int64
	email   string
	invite  string // the invite URL
	session http.Header
}

func newBBTUWorld(t *testing.T) *bbtuWorld {
	t.Helper()
	e := newEnv(t)
	e.App.Publish.Config.Burst = 1000
	w := &bbtuWorld{e: e, p: newPipeline(t, e, betaport.PlanProfessional)}
	w.team = mustTeam(t, e, w.p.ext)
	w.admin = e.adminOf(t, w.team)
	w.upd = bbtuUpdates(t, e, w.p.ext, w.admin)
	w.prefix = w.upd.UpdateURL[:strings.LastIndex(w.upd.UpdateURL, "/")+1]
	if !strings.HasPrefix(w.prefix, e.URL+api.UpdatePrefix) || strings.Count(strings.TrimPrefix(w.prefix, e.URL+api.UpdatePrefix), "/") != 1 {
		t.Fatalf("the shared update URL %s is not {base}/update/{ext}/{token}", w.upd.UpdateURL)
	}
	return w
}

func bbtuUpdates(t *testing.T, e *env, ext *betaport.Extension, admin http.Header) api.Updates {
	t.Helper()
	resp, body := e.do(t, "GET", api.UpdatesPath(ext.ID), admin)
	var u api.Updates
	if resp.StatusCode != 200 || json.Unmarshal(body, &u) != nil || u.UpdateURL == "" || len(u.ChromeID) != 32 {
		t.Fatalf("GET updates = %d %s", resp.StatusCode, body)
	}
	return u
}

// invite invites a tester through the API and opens their link as a
// browser does: they are then active, with a session.
func (w *bbtuWorld) invite(t *testing.T, name string) *bbtuTester {
	t.Helper()
	email := uniqueEmail("bbtu-" + strings.ToLower(name))
	resp, body := w.e.send(t, "POST", api.TestersPath(w.p.ext.ID), w.admin, api.Invite{Email: email, Name: name})
	var inv api.Invited
	if resp.StatusCode != 201 || json.Unmarshal(body, &inv) != nil || inv.InviteURL == "" || inv.ID == 0 {
		t.Fatalf("inviting %s = %d %s", email, resp.StatusCode, body)
	}
	tt := &bbtuTester{id: inv.ID, email: email, invite: inv.InviteURL}
	tt.session = bbtuOpenLink(t, w.e, inv.InviteURL)
	return tt
}

// bbtuOpenLink opens an invite link (GET /t/{token}) as a browser and
// returns the session cookie it sets.
func bbtuOpenLink(t *testing.T, e *env, link string) http.Header {
	t.Helper()
	resp, body := e.do(t, "GET", strings.TrimPrefix(link, e.URL), http.Header{"Accept": {"text/html"}})
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie && c.Value != "" && c.MaxAge >= 0 {
			return http.Header{"Cookie": {api.SessionCookie + "=" + c.Value}}
		}
	}
	t.Fatalf("the invite link %s set no session: %d %.300s", link, resp.StatusCode, body)
	return nil
}

func (w *bbtuWorld) publish(t *testing.T, version string) betaport.Bundle {
	t.Helper()
	return w.p.submitAny(t, validZip(t, version))
}

// bbtuFetch gets rawURL (a path on e, or absolute) as a browser does:
// following redirects (to the storage on S3), no compression.
func bbtuFetch(t *testing.T, e *env, method, rawURL string, h http.Header) (*http.Response, []byte) {
	t.Helper()
	if strings.HasPrefix(rawURL, "/") {
		rawURL = e.URL + rawURL
	}
	req, err := http.NewRequest(method, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if req.Header.Get("Accept-Encoding") == "" {
		req.Header.Set("Accept-Encoding", "identity")
	}
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	return resp, body
}

// crx downloads bundle number's CRX from the builds page as who.
func (w *bbtuWorld) crx(t *testing.T, what string, number int64, who http.Header) (*http.Response, []byte, *bbtuCRX) {
	t.Helper()
	resp, body := bbtuFetch(t, w.e, "GET", api.BundleCRXPath(w.p.ext.ID, number), who)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: CRX of bundle %d = %d %.300s", what, number, resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != api.CRXContentType {
		t.Fatalf("%s: CRX Content-Type %q, want %s", what, ct, api.CRXContentType)
	}
	c := bbtuVerifyCRX(t, what, body)
	if c.ExtensionID != w.upd.ChromeID {
		t.Errorf("%s: CRX id %s, want the extension's %s", what, c.ExtensionID, w.upd.ChromeID)
	}
	return resp, body, c
}

// testerURL downloads bundle number's CRX as a tester and returns the
// update URL it names, after checking it is {base}/update/{ext}/{token}
// with a token of its own.
func (w *bbtuWorld) testerURL(t *testing.T, tt *bbtuTester, number int64) (string, *bbtuCRX) {
	t.Helper()
	_, _, c := w.crx(t, "tester "+tt.email, number, tt.session)
	u := c.updateURL()
	token := strings.TrimPrefix(u, w.prefix)
	if !strings.HasPrefix(u, w.prefix) || u == w.upd.UpdateURL || strings.Contains(token, "/") {
		t.Fatalf("tester %s's CRX names update_url %q: want %s{their token}, not the shared %s", tt.email, u, w.prefix, w.upd.UpdateURL)
	}
	bbtuWantStrongToken(t, token)
	return u, c
}

var bbtuTokenChars = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// bbtuWantStrongToken: URL-safe and at least 128 bits whether hex (32
// characters) or base64 (22).
func bbtuWantStrongToken(t *testing.T, token string) {
	t.Helper()
	if !bbtuTokenChars.MatchString(token) {
		t.Fatalf("the token %q is not URL-safe", token)
	}
	hex := strings.Trim(strings.ToLower(token), "0123456789abcdef") == ""
	if len(token) < 22 || (hex && len(token) < 32) {
		t.Fatalf("the token %q is shorter than 128 bits", token)
	}
}

// bbtuGupdate is the part of an update answer the updater reads.
type bbtuGupdate struct {
	XMLName  xml.Name `xml:"gupdate"`
	Protocol string   `xml:"protocol,attr"`
	Apps     []struct {
		AppID       string `xml:"appid,attr"`
		Status      string `xml:"status,attr"`
		UpdateCheck *struct {
			Status         string  `xml:"status,attr"`
			Codebase       string  `xml:"codebase,attr"`
			Version        string  `xml:"version,attr"`
			ProdVersionMin *string `xml:"prodversionmin,attr"`
		} `xml:"updatecheck"`
	} `xml:"app"`
}

// bbtuXs is one x= entry as Chromium sends it.
func bbtuX(id, v string) string {
	return url.Values{"id": {id}, "v": {v}, "installsource": {"notfromwebstore"}, "uc": {""}}.Encode()
}

// check asks updateURL as Chromium's updater does (no cookies) for the
// installed version v of the extension; it answers the status and, for a
// 200, the parsed answer. A refusal must be a problem document.
func bbtuCheck(t *testing.T, e *env, updateURL string, xs ...string) (int, bbtuGupdate, []byte) {
	t.Helper()
	q := url.Values{"os": {"linux"}, "arch": {"x64"}, "prod": {"chromiumcrx"}, "prodversion": {"126.0.6478.126"}, "acceptformat": {"crx3"}, "x": xs}
	resp, body := bbtuFetch(t, e, "GET", updateURL+"?"+q.Encode(), nil)
	var g bbtuGupdate
	switch {
	case resp.StatusCode == 200:
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/xml") && !strings.HasPrefix(ct, "text/xml") {
			t.Fatalf("update check answered Content-Type %q: %s", ct, body)
		}
		if err := xml.Unmarshal(body, &g); err != nil {
			t.Fatalf("update check answered %s: %v", body, err)
		}
		if g.Protocol != "2.0" {
			t.Errorf("update answer protocol %q, want 2.0: %s", g.Protocol, body)
		}
	case resp.Header.Get("Content-Type") != api.ProblemContentType:
		t.Fatalf("update check refused (%d) without a problem document (%q): %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	return resp.StatusCode, g, body
}

// bbtuOffer checks a 200 answer for one app, id, and returns what its
// updatecheck offers ("" for noupdate) and its prodversionmin (nil: none).
func bbtuOffer(t *testing.T, what string, status int, g bbtuGupdate, body []byte, id string) (version, codebase string, pvm *string) {
	t.Helper()
	if status != 200 {
		t.Fatalf("%s: update check = %d %s, want 200", what, status, body)
	}
	if len(g.Apps) != 1 || g.Apps[0].AppID != id || g.Apps[0].Status != "ok" || g.Apps[0].UpdateCheck == nil {
		t.Fatalf("%s: update answer %s, want one ok app %s with an updatecheck", what, body, id)
	}
	uc := g.Apps[0].UpdateCheck
	switch uc.Status {
	case "noupdate":
		if uc.Codebase != "" || uc.Version != "" {
			t.Errorf("%s: a noupdate names %q %q", what, uc.Codebase, uc.Version)
		}
		return "", "", nil
	case "ok":
		if uc.Version == "" || uc.Codebase == "" {
			t.Fatalf("%s: an ok updatecheck without version or codebase: %s", what, body)
		}
		return uc.Version, uc.Codebase, uc.ProdVersionMin
	}
	t.Fatalf("%s: updatecheck status %q: %s", what, uc.Status, body)
	return
}

// wantOffer checks updateURL offers version at updateURL/crx/number to a
// copy at installed.
func (w *bbtuWorld) wantOffer(t *testing.T, what, updateURL, installed, version string, number int64) string {
	t.Helper()
	st, g, body := bbtuCheck(t, w.e, updateURL, bbtuX(w.upd.ChromeID, installed))
	v, cb, _ := bbtuOffer(t, what, st, g, body, w.upd.ChromeID)
	want := updateURL + "/crx/" + strconv.FormatInt(number, 10)
	if v != version || cb != want {
		t.Fatalf("%s: offered %q at %q, want %s at %s", what, v, cb, version, want)
	}
	return cb
}

// wantNoUpdate checks updateURL answers noupdate to a copy at installed.
func (w *bbtuWorld) wantNoUpdate(t *testing.T, what, updateURL, installed string) {
	t.Helper()
	st, g, body := bbtuCheck(t, w.e, updateURL, bbtuX(w.upd.ChromeID, installed))
	if v, cb, _ := bbtuOffer(t, what, st, g, body, w.upd.ChromeID); v != "" {
		t.Fatalf("%s: offered %s at %s, want noupdate", what, v, cb)
	}
}

// want404 checks rawURL answers 404 with a problem document.
func bbtuWant404(t *testing.T, e *env, what, rawURL string) {
	t.Helper()
	resp, body := bbtuFetch(t, e, "GET", rawURL, nil)
	if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != api.ProblemContentType {
		t.Fatalf("%s: GET %s = %d %q %.200s, want 404 %s", what, rawURL, resp.StatusCode, resp.Header.Get("Content-Type"), body, api.ProblemContentType)
	}
	if len(body) > 0 && bytes.Contains(body, []byte("PK\x03\x04")) {
		t.Fatalf("%s: the refusal carries a zip", what)
	}
}

// testers reads the testers list as the admin: typed, and each tester's
// raw JSON fields.
func (w *bbtuWorld) testers(t *testing.T) (map[int64]betaport.Tester, map[int64]map[string]any) {
	t.Helper()
	resp, body := w.e.do(t, "GET", api.TestersPath(w.p.ext.ID)+"?limit=100", w.admin)
	var page api.Page[betaport.Tester]
	var raw struct {
		Data []map[string]any `json:"data"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil || json.Unmarshal(body, &raw) != nil || page.NextCursor != "" {
		t.Fatalf("testers = %d %s", resp.StatusCode, body)
	}
	typed, fields := map[int64]betaport.Tester{}, map[int64]map[string]any{}
	for i, tt := range page.Data {
		typed[tt.ID] = tt
		fields[tt.ID] = raw.Data[i]
	}
	return typed, fields
}

// wantChecked checks the list shows tester id at version, checked between
// from and to; wantUnchecked that it shows neither field.
func bbtuWantChecked(t *testing.T, list map[int64]betaport.Tester, id int64, version string, from, to time.Time) time.Time {
	t.Helper()
	tt, ok := list[id]
	if !ok {
		t.Fatalf("tester %d is not in the list", id)
	}
	if tt.InstalledVersion != version || tt.LastCheckAt == nil {
		t.Fatalf("tester %d (%s) shows installedVersion %q, lastCheckAt %v; want %q and a time", id, tt.Email, tt.InstalledVersion, tt.LastCheckAt, version)
	}
	// The store may keep whole seconds or microseconds: a little slack.
	if tt.LastCheckAt.Before(from.Add(-2*time.Second)) || tt.LastCheckAt.After(to.Add(2*time.Second)) {
		t.Fatalf("tester %d's lastCheckAt %v is not within the checks' %v – %v", id, tt.LastCheckAt, from, to)
	}
	return *tt.LastCheckAt
}

func bbtuWantUnchecked(t *testing.T, fields map[int64]map[string]any, id int64) {
	t.Helper()
	f, ok := fields[id]
	if !ok {
		t.Fatalf("tester %d is not in the list", id)
	}
	for _, k := range []string{"installedVersion", "lastCheckAt"} {
		if v, has := f[k]; has {
			t.Fatalf("tester %d never checked but the list shows %s: %v", id, k, v)
		}
	}
}

// ------------------------------------------------------------ the tests

// TestBBTUTesterCRXNamesOwnUpdateURL: each tester's CRX names an update
// URL with a token of their own (≥ 128 bits, not their invite token, not
// in the database in clear); the admin's CRX names the shared one. All
// verify as CRX3 with one key, and differ only in manifest.json, the
// archive's last entry.
func TestBBTUTesterCRXNamesOwnUpdateURL(t *testing.T) {
	t.Parallel()
	w := newBBTUWorld(t)
	b := w.publish(t, "1.2.3")
	ann, bob := w.invite(t, "Ann"), w.invite(t, "Bob")

	_, _, shared := w.crx(t, "admin", b.Number, w.admin)
	if shared.updateURL() != w.upd.UpdateURL {
		t.Fatalf("the admin's CRX names %q, want the shared %s", shared.updateURL(), w.upd.UpdateURL)
	}
	annURL, annCRX := w.testerURL(t, ann, b.Number)
	bobURL, bobCRX := w.testerURL(t, bob, b.Number)
	if annURL == bobURL {
		t.Fatalf("two testers' CRXs name the same update URL %s", annURL)
	}
	for _, tt := range []struct {
		tester *bbtuTester
		url    string
	}{{ann, annURL}, {bob, bobURL}} {
		token := strings.TrimPrefix(tt.url, w.prefix)
		inviteToken := tt.tester.invite[strings.LastIndex(tt.tester.invite, "/")+1:]
		if token == inviteToken || strings.Contains(tt.url, inviteToken) {
			t.Errorf("tester %s's update token is their invite token", tt.tester.email)
		}
		// Stored hashed: a dump of the database does not carry it.
		if w.e.Backend == backendFiles {
			files, _ := filepath.Glob(filepath.Join(w.e.Dir, "*.db*"))
			files2, _ := filepath.Glob(filepath.Join(w.e.Dir, "*", "*.db*"))
			for _, f := range append(files, files2...) {
				if data, _ := os.ReadFile(f); bytes.Contains(data, []byte(token)) {
					t.Errorf("the database file %s carries tester %s's update token in clear", f, tt.tester.email)
				}
			}
		}
	}
	bbtuSameButManifest(t, "Ann's and Bob's CRXs", annCRX, bobCRX)
	bbtuSameButManifest(t, "Ann's and the shared CRX", annCRX, shared)
	if annCRX.Manifest["version"] != "1.2.3" {
		t.Errorf("Ann's CRX has version %v", annCRX.Manifest["version"])
	}
	// The tester's copy is installable as it is: served as a CRX, named.
	resp, _, _ := w.crx(t, "Ann again", b.Number, ann.session)
	if cd := resp.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") || !strings.Contains(cd, ".crx") {
		t.Errorf("Ann's CRX Content-Disposition %q", cd)
	}
	// And the tester's update URL serves a CRX of theirs too.
	cb := w.wantOffer(t, "Ann's URL", annURL, "", "1.2.3", b.Number)
	resp, body := bbtuFetch(t, w.e, "GET", cb, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != api.CRXContentType {
		t.Fatalf("Ann's codebase = %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	fromUpdater := bbtuVerifyCRX(t, "Ann's CRX from her update URL", body)
	if fromUpdater.updateURL() != annURL {
		t.Errorf("the CRX at Ann's codebase names %q, want her %s", fromUpdater.updateURL(), annURL)
	}
	bbtuSameButManifest(t, "Ann's two CRXs", annCRX, fromUpdater)
}

// TestBBTUUpdateCheckWithTesterToken: a tester's URL offers the newest
// bundle under that URL, answers noupdate when up to date, and its CRX URL
// needs no cookie; the shared URL keeps answering for the admins' copies.
func TestBBTUUpdateCheckWithTesterToken(t *testing.T) {
	t.Parallel()
	w := newBBTUWorld(t)
	b1 := w.publish(t, "1.0.0")
	ann := w.invite(t, "Ann")
	annURL, _ := w.testerURL(t, ann, b1.Number)

	w.wantOffer(t, "fresh install", annURL, "", "1.0.0", b1.Number)
	w.wantOffer(t, "older copy", annURL, "0.9", "1.0.0", b1.Number)
	w.wantNoUpdate(t, "up to date", annURL, "1.0.0")
	w.wantNoUpdate(t, "newer than served", annURL, "7.0")

	b2 := w.publish(t, "1.1.0")
	cb := w.wantOffer(t, "after bundle 2", annURL, "1.0.0", "1.1.0", b2.Number)
	resp, body := bbtuFetch(t, w.e, "GET", cb, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != api.CRXContentType {
		t.Fatalf("GET %s = %d %q", cb, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	c := bbtuVerifyCRX(t, "bundle 2 from Ann's URL", body)
	if c.updateURL() != annURL || c.Manifest["version"] != "1.1.0" || c.ExtensionID != w.upd.ChromeID {
		t.Fatalf("bundle 2 from Ann's URL names %q at %v (id %s)", c.updateURL(), c.Manifest["version"], c.ExtensionID)
	}
	// The older bundle stays fetchable at its number.
	if resp, body := bbtuFetch(t, w.e, "GET", annURL+"/crx/1", nil); resp.StatusCode != 200 || bbtuVerifyCRX(t, "bundle 1", body).Manifest["version"] != "1.0.0" {
		t.Fatalf("GET %s/crx/1 = %d", annURL, resp.StatusCode)
	}
	bbtuWant404(t, w.e, "a bundle that does not exist", annURL+"/crx/99")
	// The shared URL: the admins' copies.
	w.wantOffer(t, "shared URL", w.upd.UpdateURL, "1.0.0", "1.1.0", b2.Number)
	w.wantNoUpdate(t, "shared URL, up to date", annURL, "1.1.0")
}

// TestBBTURevokeStopsUpdatesRestoreResumes: a revoked tester's URL answers
// noupdate though a newer bundle exists and their CRX URLs answer 404;
// other testers are untouched; restore resumes both with the same token;
// a second restore is refused and changes nothing.
func TestBBTURevokeStopsUpdatesRestoreResumes(t *testing.T) {
	t.Parallel()
	w := newBBTUWorld(t)
	b1 := w.publish(t, "1.0.0")
	ann, bob := w.invite(t, "Ann"), w.invite(t, "Bob")
	annURL, _ := w.testerURL(t, ann, b1.Number)
	bobURL, _ := w.testerURL(t, bob, b1.Number)
	oldCRX := w.wantOffer(t, "Ann before", annURL, "", "1.0.0", b1.Number)
	b2 := w.publish(t, "2.0.0")

	resp, body := w.e.do(t, "DELETE", api.TesterPath(w.p.ext.ID, ann.id), w.admin)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoke = %d %s", resp.StatusCode, body)
	}
	w.wantNoUpdate(t, "revoked Ann, newer bundle exists", annURL, "1.0.0")
	w.wantNoUpdate(t, "revoked Ann, fresh", annURL, "")
	bbtuWant404(t, w.e, "revoked Ann's old CRX URL", oldCRX)
	bbtuWant404(t, w.e, "revoked Ann's CRX of bundle 2", annURL+"/crx/"+strconv.FormatInt(b2.Number, 10))
	// Her session is over: the builds page gives her nothing.
	if resp, body := bbtuFetch(t, w.e, "GET", api.BundleCRXPath(w.p.ext.ID, b2.Number), ann.session); resp.StatusCode < 400 || bytes.HasPrefix(body, []byte("Cr24")) {
		t.Fatalf("a revoked tester's CRX download = %d (%d bytes)", resp.StatusCode, len(body))
	}
	// Bob and the admins are untouched.
	w.wantOffer(t, "Bob while Ann is revoked", bobURL, "1.0.0", "2.0.0", b2.Number)
	w.wantOffer(t, "shared while Ann is revoked", w.upd.UpdateURL, "1.0.0", "2.0.0", b2.Number)

	resp, body = w.e.do(t, "POST", api.TesterRestorePath(w.p.ext.ID, ann.id), w.admin)
	var restored api.Invited
	if resp.StatusCode != 200 || json.Unmarshal(body, &restored) != nil || restored.ID != ann.id {
		t.Fatalf("restore = %d %s", resp.StatusCode, body)
	}
	cb := w.wantOffer(t, "restored Ann", annURL, "1.0.0", "2.0.0", b2.Number)
	if resp, body := bbtuFetch(t, w.e, "GET", cb, nil); resp.StatusCode != 200 || bbtuVerifyCRX(t, "restored Ann's CRX", body).updateURL() != annURL {
		t.Fatalf("restored Ann's codebase = %d", resp.StatusCode)
	}
	if resp, _ := bbtuFetch(t, w.e, "GET", oldCRX, nil); resp.StatusCode != 200 {
		t.Fatalf("restored Ann's old CRX URL = %d", resp.StatusCode)
	}

	// Restore twice: refused, and it changes nothing.
	resp, body = w.e.do(t, "POST", api.TesterRestorePath(w.p.ext.ID, ann.id), w.admin)
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("a second restore = %d %s, want 409", resp.StatusCode, body)
	}
	w.wantOffer(t, "Ann after a second restore", annURL, "1.0.0", "2.0.0", b2.Number)

	// Through her new link she gets a CRX with the same token.
	ann.session = bbtuOpenLink(t, w.e, restored.InviteURL)
	if again, _ := w.testerURL(t, ann, b2.Number); again != annURL {
		t.Fatalf("after the restore Ann's CRX names %s, want her token kept: %s", again, annURL)
	}
	w.wantOffer(t, "Bob at the end", bobURL, "1.0.0", "2.0.0", b2.Number)
}

// TestBBTUNewInstallLinkReplacesOnlyThatToken: a new install link for one
// tester makes their old update URL and its CRX URLs answer 404; others'
// URLs and the shared one keep working; their next CRX names a new token.
func TestBBTUNewInstallLinkReplacesOnlyThatToken(t *testing.T) {
	t.Parallel()
	w := newBBTUWorld(t)
	b := w.publish(t, "1.0.0")
	ann, bob := w.invite(t, "Ann"), w.invite(t, "Bob")
	annURL, _ := w.testerURL(t, ann, b.Number)
	bobURL, _ := w.testerURL(t, bob, b.Number)
	oldCRX := w.wantOffer(t, "Ann before", annURL, "", "1.0.0", b.Number)

	resp, body := w.e.do(t, "POST", api.TesterInvitePath(w.p.ext.ID, ann.id), w.admin)
	var inv api.Invited
	if resp.StatusCode != 200 || json.Unmarshal(body, &inv) != nil || inv.InviteURL == "" || inv.InviteURL == ann.invite {
		t.Fatalf("new install link = %d %s", resp.StatusCode, body)
	}
	if st, _, body := bbtuCheck(t, w.e, annURL, bbtuX(w.upd.ChromeID, "0.1")); st != 404 {
		t.Fatalf("Ann's replaced update URL = %d %s, want 404", st, body)
	}
	bbtuWant404(t, w.e, "Ann's replaced CRX URL", oldCRX)
	w.wantOffer(t, "Bob's URL", bobURL, "0.1", "1.0.0", b.Number)
	w.wantOffer(t, "the shared URL", w.upd.UpdateURL, "0.1", "1.0.0", b.Number)

	// Her replaced URL's checks count for nobody.
	list, fields := w.testers(t)
	bbtuWantUnchecked(t, fields, ann.id)
	if list[bob.id].LastCheckAt == nil {
		t.Fatalf("Bob checked but the list shows no check")
	}

	ann.session = bbtuOpenLink(t, w.e, inv.InviteURL)
	newURL, _ := w.testerURL(t, ann, b.Number)
	if newURL == annURL || newURL == bobURL {
		t.Fatalf("after a new install link Ann's CRX names %s (old %s, Bob's %s)", newURL, annURL, bobURL)
	}
	w.wantOffer(t, "Ann's new URL", newURL, "0.1", "1.0.0", b.Number)
	if again, _ := w.testerURL(t, bob, b.Number); again != bobURL {
		t.Fatalf("Bob's CRX names %s after Ann's new link, was %s", again, bobURL)
	}
	// Her checks with the new URL count for her.
	before := time.Now()
	w.wantOffer(t, "Ann's new URL at 0.5", newURL, "0.5", "1.0.0", b.Number)
	list, _ = w.testers(t)
	bbtuWantChecked(t, list, ann.id, "0.5", before, time.Now())
}

// TestBBTUTokenAcrossExtensions: a tester's token under another extension's
// id, even one of the same team, answers 404, for checks and CRXs.
func TestBBTUTokenAcrossExtensions(t *testing.T) {
	t.Parallel()
	w := newBBTUWorld(t)
	b := w.publish(t, "1.0.0")
	ann := w.invite(t, "Ann")
	annURL, _ := w.testerURL(t, ann, b.Number)
	token := strings.TrimPrefix(annURL, w.prefix)

	sameTeam := storetest.MustExtension(t, w.e.DB, w.team, "Sibling")
	other := newPipeline(t, w.e, betaport.PlanProfessional)
	other.submitAny(t, validZip(t, "3.0"))
	otherAdmin := w.e.adminOf(t, mustTeam(t, w.e, other.ext))
	for _, o := range []struct {
		name  string
		ext   *betaport.Extension
		admin http.Header
	}{{"same team", sameTeam, w.admin}, {"other team", other.ext, otherAdmin}} {
		u := bbtuUpdates(t, w.e, o.ext, o.admin)
		crossed := u.UpdateURL[:strings.LastIndex(u.UpdateURL, "/")+1] + token
		if st, _, body := bbtuCheck(t, w.e, crossed, bbtuX(u.ChromeID, "0.1")); st != 404 {
			t.Fatalf("%s: Ann's token under extension %d = %d %s", o.name, o.ext.ID, st, body)
		}
		if st, _, body := bbtuCheck(t, w.e, crossed, bbtuX(w.upd.ChromeID, "0.1")); st != 404 {
			t.Fatalf("%s: Ann's token under extension %d asking for her extension = %d %s", o.name, o.ext.ID, st, body)
		}
		bbtuWant404(t, w.e, o.name+": Ann's token's CRX under another extension", crossed+"/crx/1")
	}
	// Her token still works where it belongs, and those checks counted
	// nowhere else.
	w.wantOffer(t, "Ann's own URL", annURL, "0.1", "1.0.0", b.Number)
}

// TestBBTUHostileTokens: truncated, extended, re-cased, slash-ended and
// empty tokens answer 404; odd queries never crash the service.
func TestBBTUHostileTokens(t *testing.T) {
	t.Parallel()
	w := newBBTUWorld(t)
	b := w.publish(t, "1.0.0")
	ann := w.invite(t, "Ann")
	annURL, _ := w.testerURL(t, ann, b.Number)
	token := strings.TrimPrefix(annURL, w.prefix)
	x := "?x=" + url.QueryEscape("id="+w.upd.ChromeID+"&v=0.1&uc")

	bad := map[string]string{
		"truncated":          w.prefix + token[:len(token)-1],
		"half":               w.prefix + token[:len(token)/2],
		"extended":           w.prefix + token + "A",
		"trailing slash":     annURL + "/",
		"empty":              w.prefix,
		"percent-encoded":    w.prefix + url.PathEscape(token) + "%00",
		"another token made": w.prefix + strings.Repeat("A", len(token)),
	}
	if up := strings.ToUpper(token); up != token {
		bad["upper-cased"] = w.prefix + up
	} else if low := strings.ToLower(token); low != token {
		bad["lower-cased"] = w.prefix + low
	}
	for name, u := range bad {
		t.Run(name, func(t *testing.T) {
			resp, body := bbtuFetch(t, w.e, "GET", u+x, nil)
			if resp.StatusCode != 404 {
				t.Fatalf("GET %s = %d %.300s, want 404", u+x, resp.StatusCode, body)
			}
			if name != "trailing slash" && name != "empty" {
				resp, body = bbtuFetch(t, w.e, "GET", u+"/crx/1", nil)
				if resp.StatusCode != 404 || bytes.HasPrefix(body, []byte("Cr24")) {
					t.Fatalf("GET %s/crx/1 = %d, want 404", u, resp.StatusCode)
				}
			}
		})
	}
	// The real token with odd CRX numbers and odd queries: refused or
	// answered, never a crash, never an update for another app.
	for _, path := range []string{"/crx/0", "/crx/-1", "/crx/abc", "/crx/1.5", "/crx/", "/crx/99999999999999999999"} {
		resp, body := bbtuFetch(t, w.e, "GET", annURL+path, nil)
		if resp.StatusCode != 404 && resp.StatusCode != 400 {
			t.Errorf("GET %s%s = %d %.200s, want 404 or 400", annURL, path, resp.StatusCode, body)
		}
	}
	for _, q := range []string{"", "?x=", "?x=garbage", "?x=" + url.QueryEscape("id=&v=&uc"), "?x=" + url.QueryEscape("id="+w.upd.ChromeID+"&v=not.a.version&uc"),
		"?x=%zz", "?x=" + url.QueryEscape("id="+w.upd.ChromeID+"&v="+strings.Repeat("9", 500)+"&uc")} {
		resp, body := bbtuFetch(t, w.e, "GET", annURL+q, nil)
		if resp.StatusCode >= 500 {
			t.Errorf("GET %s%s = %d %.200s", annURL, q, resp.StatusCode, body)
		}
		if resp.StatusCode == 200 && bytes.Contains(body, []byte("codebase=")) && !bytes.Contains(body, []byte(w.upd.ChromeID)) {
			t.Errorf("GET %s%s offered something for no app: %s", annURL, q, body)
		}
	}
	// After all that Ann's URL still works, and junk counted as no version.
	w.wantOffer(t, "Ann after the hostile requests", annURL, "0.1", "1.0.0", b.Number)
	list, _ := w.testers(t)
	if got := list[ann.id].InstalledVersion; got != "0.1" {
		t.Errorf("after hostile queries and a check at 0.1 the list shows installedVersion %q", got)
	}
}

// TestBBTUSeveralXEntries: a check naming several apps answers each; only
// this extension's entry is offered an update and counted for the tester.
func TestBBTUSeveralXEntries(t *testing.T) {
	t.Parallel()
	w := newBBTUWorld(t)
	b := w.publish(t, "1.0.0")
	ann := w.invite(t, "Ann")
	annURL, _ := w.testerURL(t, ann, b.Number)
	foreign := strings.Repeat("b", 32)

	before := time.Now()
	st, g, body := bbtuCheck(t, w.e, annURL, bbtuX(foreign, "9.9.9"), bbtuX(w.upd.ChromeID, "0.5"))
	if st != 200 || len(g.Apps) != 2 {
		t.Fatalf("a check for two apps = %d %s", st, body)
	}
	byID := map[string]int{}
	for i, a := range g.Apps {
		byID[a.AppID] = i
	}
	ours, okOurs := byID[w.upd.ChromeID]
	theirs, okTheirs := byID[foreign]
	if !okOurs || !okTheirs {
		t.Fatalf("the answer does not name both apps: %s", body)
	}
	if a := g.Apps[ours]; a.Status != "ok" || a.UpdateCheck == nil || a.UpdateCheck.Status != "ok" || a.UpdateCheck.Version != "1.0.0" ||
		a.UpdateCheck.Codebase != annURL+"/crx/"+strconv.FormatInt(b.Number, 10) {
		t.Fatalf("our app in a two-app check: %s", body)
	}
	if a := g.Apps[theirs]; a.Status == "ok" || (a.UpdateCheck != nil && a.UpdateCheck.Codebase != "") {
		t.Fatalf("an app that is not ours was answered ok: %s", body)
	}
	list, _ := w.testers(t)
	bbtuWantChecked(t, list, ann.id, "0.5", before, time.Now())

	// Our app twice, in one query: never an error, never two offers of
	// different bundles.
	st, g, body = bbtuCheck(t, w.e, annURL, bbtuX(w.upd.ChromeID, "0.6"), bbtuX(w.upd.ChromeID, "0.6"))
	if st != 200 {
		t.Fatalf("our app twice = %d %s", st, body)
	}
	for _, a := range g.Apps {
		if a.AppID == w.upd.ChromeID && a.UpdateCheck != nil && a.UpdateCheck.Status == "ok" && a.UpdateCheck.Version != "1.0.0" {
			t.Fatalf("our app twice: %s", body)
		}
	}
	list, _ = w.testers(t)
	if got := list[ann.id].InstalledVersion; got != "0.6" {
		t.Errorf("after a check naming us twice at 0.6 the list shows %q", got)
	}
	// Only another app: nothing counted for Ann's copy.
	st, _, body = bbtuCheck(t, w.e, annURL, bbtuX(foreign, "4.4.4"))
	if st != 200 && st != 404 {
		t.Fatalf("a check for another app only = %d %s", st, body)
	}
	list, _ = w.testers(t)
	if got := list[ann.id].InstalledVersion; got != "0.6" {
		t.Errorf("a check naming only another app changed Ann's installedVersion to %q", got)
	}
}

// TestBBTUTestersListShowsInstalledVersion: after checks with a tester's
// URL the list shows their last reported version and when; testers who
// never checked have neither field; checks with the shared URL count for
// nobody.
func TestBBTUTestersListShowsInstalledVersion(t *testing.T) {
	t.Parallel()
	w := newBBTUWorld(t)
	b1 := w.publish(t, "1.0.0")
	ann, bob, cat := w.invite(t, "Ann"), w.invite(t, "Bob"), w.invite(t, "Cat")
	annURL, _ := w.testerURL(t, ann, b1.Number)
	bobURL, _ := w.testerURL(t, bob, b1.Number)
	w.testerURL(t, cat, b1.Number) // Cat downloads but her copy never checks

	_, fields := w.testers(t)
	for _, id := range []int64{ann.id, bob.id, cat.id} {
		bbtuWantUnchecked(t, fields, id)
	}
	// Checks with the shared URL (the admins' copies) count for nobody.
	w.wantNoUpdate(t, "shared", w.upd.UpdateURL, "1.0.0")
	_, fields = w.testers(t)
	for _, id := range []int64{ann.id, bob.id, cat.id} {
		bbtuWantUnchecked(t, fields, id)
	}

	start := time.Now()
	w.wantNoUpdate(t, "Ann at 1.0.0", annURL, "1.0.0")
	w.wantNoUpdate(t, "Ann at 1.0.0 again", annURL, "1.0.0")
	w.wantOffer(t, "Bob at 0.9", bobURL, "0.9", "1.0.0", b1.Number)
	mid := time.Now()
	list, fields := w.testers(t)
	annAt := bbtuWantChecked(t, list, ann.id, "1.0.0", start, mid)
	bbtuWantChecked(t, list, bob.id, "0.9", start, mid)
	bbtuWantUnchecked(t, fields, cat.id)
	if list[ann.id].Status == betaport.TesterRevoked || list[cat.id].Email != cat.email {
		t.Fatalf("the list changed the testers: %+v", list)
	}

	// Bob updates: his next check reports the new version.
	b2 := w.publish(t, "1.1.0")
	for !time.Now().After(annAt) { // a later check is at a later instant
		time.Sleep(time.Millisecond)
	}
	w.wantOffer(t, "Bob at 1.0.0", bobURL, "1.0.0", "1.1.0", b2.Number)
	w.wantNoUpdate(t, "Bob at 1.1.0", bobURL, "1.1.0")
	end := time.Now()
	list, fields = w.testers(t)
	bobAt := bbtuWantChecked(t, list, bob.id, "1.1.0", mid, end)
	if list[ann.id].LastCheckAt == nil || !list[ann.id].LastCheckAt.Equal(annAt) || list[ann.id].InstalledVersion != "1.0.0" {
		t.Errorf("Ann did not check again but shows %q at %v (was 1.0.0 at %v)", list[ann.id].InstalledVersion, list[ann.id].LastCheckAt, annAt)
	}
	if bobAt.Before(annAt) {
		t.Errorf("Bob's last check %v is before Ann's earlier %v", bobAt, annAt)
	}
	bbtuWantUnchecked(t, fields, cat.id)

	// Reading the list again changes nothing.
	again, _ := w.testers(t)
	for _, id := range []int64{ann.id, bob.id} {
		if again[id].InstalledVersion != list[id].InstalledVersion || !again[id].LastCheckAt.Equal(*list[id].LastCheckAt) {
			t.Errorf("reading the list twice: tester %d went from %q %v to %q %v", id, list[id].InstalledVersion, list[id].LastCheckAt, again[id].InstalledVersion, again[id].LastCheckAt)
		}
	}
}

// TestBBTUConcurrentChecksCounted: many testers checking at once are each
// counted.
func TestBBTUConcurrentChecksCounted(t *testing.T) {
	t.Parallel()
	w := newBBTUWorld(t)
	b := w.publish(t, "2.0.0")
	const n = 6
	testers := make([]*bbtuTester, n)
	urls := make([]string, n)
	for i := range testers {
		testers[i] = w.invite(t, "T"+strconv.Itoa(i))
		urls[i], _ = w.testerURL(t, testers[i], b.Number)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i := range testers {
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				q := url.Values{"x": {bbtuX(w.upd.ChromeID, "1."+strconv.Itoa(i))}}
				resp, err := http.Get(urls[i] + "?" + q.Encode())
				if err != nil {
					t.Error(err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || !bytes.Contains(body, []byte("2.0.0")) {
					t.Errorf("tester %d's check = %d %s", i, resp.StatusCode, body)
				}
			}()
		}
	}
	wg.Wait()
	end := time.Now()
	list, _ := w.testers(t)
	for i, tt := range testers {
		bbtuWantChecked(t, list, tt.id, "1."+strconv.Itoa(i), start, end)
	}
}

// TestBBTULeakedCRXTracesToTester: the update URL inside a leaked CRX
// names exactly one tester: checking with it updates that tester's
// lastCheckAt and nobody else's.
func TestBBTULeakedCRXTracesToTester(t *testing.T) {
	t.Parallel()
	w := newBBTUWorld(t)
	b := w.publish(t, "1.0.0")
	testers := []*bbtuTester{w.invite(t, "Ann"), w.invite(t, "Bob"), w.invite(t, "Cat")}
	leaked := map[int64][]byte{}
	for _, tt := range testers {
		_, body, _ := w.crx(t, tt.email, b.Number, tt.session)
		leaked[tt.id] = body
	}
	// Bob's CRX turns up somewhere: read the URL out of the file itself.
	bob := testers[1]
	c := bbtuVerifyCRX(t, "the leaked CRX", leaked[bob.id])
	before := time.Now()
	w.wantNoUpdate(t, "the leaked copy checks in", c.updateURL(), "1.0.0")
	list, fields := w.testers(t)
	bbtuWantChecked(t, list, bob.id, "1.0.0", before, time.Now())
	for _, tt := range testers {
		if tt != bob {
			bbtuWantUnchecked(t, fields, tt.id)
		}
	}
	// The leak is stopped by revoking him: the leaked copy gets nothing
	// newer, the others do.
	if resp, body := w.e.do(t, "DELETE", api.TesterPath(w.p.ext.ID, bob.id), w.admin); resp.StatusCode != 204 {
		t.Fatalf("revoke = %d %s", resp.StatusCode, body)
	}
	b2 := w.publish(t, "1.1.0")
	w.wantNoUpdate(t, "the leaked copy after the revoke", c.updateURL(), "1.0.0")
	ann := bbtuVerifyCRX(t, "Ann's", leaked[testers[0].id]).updateURL()
	w.wantOffer(t, "Ann after Bob's revoke", ann, "1.0.0", "1.1.0", b2.Number)
}

// TestBBTUMinimumChromeVersion: a bundle whose manifest asks for Chrome
// 120 is offered with prodversionmin='120', on testers' and the shared
// URL; a bundle without it has no prodversionmin.
func TestBBTUMinimumChromeVersion(t *testing.T) {
	t.Parallel()
	w := newBBTUWorld(t)
	b1 := w.publish(t, "1.0.0")
	ann := w.invite(t, "Ann")
	annURL, _ := w.testerURL(t, ann, b1.Number)
	for _, u := range []string{annURL, w.upd.UpdateURL} {
		st, g, body := bbtuCheck(t, w.e, u, bbtuX(w.upd.ChromeID, "0.1"))
		if _, _, pvm := bbtuOffer(t, "without minimum_chrome_version", st, g, body, w.upd.ChromeID); pvm != nil {
			t.Errorf("a bundle without minimum_chrome_version is offered with prodversionmin %q: %s", *pvm, body)
		}
	}
	b2 := w.p.submitAny(t, makeZip(t, map[string]string{
		"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "1.1.0", "minimum_chrome_version": "120"}`,
		"background.js": "console.log(2)",
	}))
	for _, u := range []string{annURL, w.upd.UpdateURL} {
		st, g, body := bbtuCheck(t, w.e, u, bbtuX(w.upd.ChromeID, "1.0.0"))
		v, cb, pvm := bbtuOffer(t, "with minimum_chrome_version", st, g, body, w.upd.ChromeID)
		if v != "1.1.0" || cb != u+"/crx/"+strconv.FormatInt(b2.Number, 10) {
			t.Fatalf("offered %q at %q", v, cb)
		}
		if pvm == nil || *pvm != "120" {
			t.Fatalf("the updatecheck of a bundle needing Chrome 120 has prodversionmin %v, want '120': %s", pvm, body)
		}
	}
	// The tester's CRX keeps the manifest's minimum.
	_, c := w.testerURL(t, ann, b2.Number)
	if c.Manifest["minimum_chrome_version"] != "120" {
		t.Errorf("Ann's CRX manifest minimum_chrome_version = %v", c.Manifest["minimum_chrome_version"])
	}
}

// TestBBTURangeAndETag: a tester's CRX is the same bytes and ETag each
// time, and Range: bytes=100- gives exactly its bytes from 100 on.
func TestBBTURangeAndETag(t *testing.T) {
	t.Parallel()
	w := newBBTUWorld(t)
	b := w.publish(t, "1.0.0")
	ann, bob := w.invite(t, "Ann"), w.invite(t, "Bob")
	annURL, _ := w.testerURL(t, ann, b.Number)
	path := api.BundleCRXPath(w.p.ext.ID, b.Number)

	r1, full, _ := w.crx(t, "Ann 1", b.Number, ann.session)
	r2, again, _ := w.crx(t, "Ann 2", b.Number, ann.session)
	etag := r1.Header.Get("ETag")
	if !bytes.Equal(full, again) || etag == "" || r2.Header.Get("ETag") != etag {
		t.Fatalf("two downloads of Ann's CRX: same bytes %v, ETags %q and %q", bytes.Equal(full, again), etag, r2.Header.Get("ETag"))
	}
	if len(full) <= 100 {
		t.Fatalf("Ann's CRX is %d bytes", len(full))
	}
	_, _, bobC := w.crx(t, "Bob", b.Number, bob.session)
	rb, _ := bbtuFetch(t, w.e, "GET", path, bob.session)
	if rb.Header.Get("ETag") == etag {
		t.Errorf("Ann's and Bob's different CRXs share the ETag %s", etag)
	}
	_ = bobC

	// Revalidated with its ETag: nothing to send.
	inm := http.Header{"If-None-Match": {etag}}
	for k, v := range ann.session {
		inm[k] = v
	}
	if resp, body := bbtuFetch(t, w.e, "GET", path, inm); resp.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Errorf("If-None-Match Ann's ETag = %d, %d bytes, want 304", resp.StatusCode, len(body))
	}

	h := http.Header{"Range": {"bytes=100-"}}
	for k, v := range ann.session {
		h[k] = v
	}
	resp, part := bbtuFetch(t, w.e, "GET", path, h)
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(part, full[100:]) {
		t.Fatalf("Range bytes=100- = %d, %d bytes (same as the full download from 100: %v), want 206 with %d", resp.StatusCode, len(part), bytes.Equal(part, full[100:]), len(full)-100)
	}
	if cr := resp.Header.Get("Content-Range"); cr != fmt.Sprintf("bytes 100-%d/%d", len(full)-1, len(full)) {
		t.Errorf("Content-Range %q", cr)
	}
	// A range that matches the ETag is served in part; one that does not
	// is served whole.
	h.Set("If-Range", etag)
	if resp, part := bbtuFetch(t, w.e, "GET", path, h); resp.StatusCode != 206 || !bytes.Equal(part, full[100:]) {
		t.Errorf("Range with a matching If-Range = %d, %d bytes", resp.StatusCode, len(part))
	}
	h.Set("If-Range", `"not-the-etag"`)
	if resp, whole := bbtuFetch(t, w.e, "GET", path, h); resp.StatusCode != 200 || !bytes.Equal(whole, full) {
		t.Errorf("Range with a stale If-Range = %d, %d bytes, want the whole file", resp.StatusCode, len(whole))
	}

	// The same through her update URL, which Chromium resumes with ranges.
	cb := annURL + "/crx/" + strconv.FormatInt(b.Number, 10)
	ru, fromURL := bbtuFetch(t, w.e, "GET", cb, nil)
	if ru.StatusCode != 200 {
		t.Fatalf("GET %s = %d", cb, ru.StatusCode)
	}
	resp, part = bbtuFetch(t, w.e, "GET", cb, http.Header{"Range": {"bytes=100-"}})
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(part, fromURL[100:]) {
		t.Fatalf("Range bytes=100- on the update URL's CRX = %d, %d bytes", resp.StatusCode, len(part))
	}
	ru2, fromURL2 := bbtuFetch(t, w.e, "GET", cb, nil)
	if !bytes.Equal(fromURL, fromURL2) || ru.Header.Get("ETag") == "" || ru2.Header.Get("ETag") != ru.Header.Get("ETag") {
		t.Errorf("two downloads from Ann's update URL: same bytes %v, ETags %q and %q", bytes.Equal(fromURL, fromURL2), ru.Header.Get("ETag"), ru2.Header.Get("ETag"))
	}
}

// TestBBTUTesterGetsOnlyOwnCopy: there is no way for a tester to fetch
// another tester's copy: whatever they add to the request, a tester's
// download names their own URL; other routes for it do not exist; an
// admin gets the shared copy.
func TestBBTUTesterGetsOnlyOwnCopy(t *testing.T) {
	t.Parallel()
	w := newBBTUWorld(t)
	b := w.publish(t, "1.0.0")
	ann, bob := w.invite(t, "Ann"), w.invite(t, "Bob")
	annURL, _ := w.testerURL(t, ann, b.Number)
	bobURL, _ := w.testerURL(t, bob, b.Number)
	bobID := strconv.FormatInt(bob.id, 10)
	path := api.BundleCRXPath(w.p.ext.ID, b.Number)

	for _, q := range []string{"?tester=" + bobID, "?testerId=" + bobID, "?tester_id=" + bobID, "?as=" + bobID, "?email=" + url.QueryEscape(bob.email)} {
		resp, body := bbtuFetch(t, w.e, "GET", path+q, ann.session)
		if resp.StatusCode != 200 {
			continue // refused: fine
		}
		if c := bbtuVerifyCRX(t, "Ann with "+q, body); c.updateURL() != annURL {
			t.Fatalf("Ann asking %s got a CRX naming %s (hers is %s, Bob's %s)", q, c.updateURL(), annURL, bobURL)
		}
	}
	// Both sessions in one request: never a copy of the other's.
	both := http.Header{"Cookie": {ann.session.Get("Cookie") + "; " + bob.session.Get("Cookie")}}
	if resp, body := bbtuFetch(t, w.e, "GET", path, both); resp.StatusCode == 200 {
		if u := bbtuVerifyCRX(t, "two cookies", body).updateURL(); u != annURL && u != bobURL {
			t.Fatalf("two sessions got a CRX naming %s", u)
		}
	}
	for _, p := range []string{
		api.TesterPath(w.p.ext.ID, bob.id) + "/crx",
		api.TesterPath(w.p.ext.ID, bob.id) + "/bundles/1/crx",
		api.BundlesPath(w.p.ext.ID) + "/1/crx/" + bobID,
		api.BundlesPath(w.p.ext.ID) + "/1/testers/" + bobID + "/crx",
	} {
		for _, who := range []http.Header{ann.session, w.admin} {
			resp, body := bbtuFetch(t, w.e, "GET", p, who)
			if resp.StatusCode == 200 || bytes.HasPrefix(body, []byte("Cr24")) {
				t.Fatalf("GET %s = %d: a route to another tester's copy", p, resp.StatusCode)
			}
		}
	}
	// A tester cannot read the testers list (with everyone's activity).
	if resp, body := w.e.do(t, "GET", api.TestersPath(w.p.ext.ID), ann.session); resp.StatusCode < 400 {
		t.Fatalf("a tester read the testers list: %d %.200s", resp.StatusCode, body)
	}
	// The admin, with any query, gets the shared copy.
	for _, q := range []string{"", "?tester=" + bobID} {
		resp, body := bbtuFetch(t, w.e, "GET", path+q, w.admin)
		if resp.StatusCode != 200 {
			t.Fatalf("admin CRX%s = %d", q, resp.StatusCode)
		}
		if u := bbtuVerifyCRX(t, "admin"+q, body).updateURL(); u != w.upd.UpdateURL {
			t.Fatalf("the admin's CRX%s names %s, want the shared %s", q, u, w.upd.UpdateURL)
		}
	}
	// A tester of another extension gets nothing of this one.
	other := newPipeline(t, w.e, betaport.PlanProfessional)
	other.submitAny(t, validZip(t, "5.0"))
	stranger, _ := w.e.testerOf(t, other.ext, betaport.TesterActive)
	strangerSession := w.e.cookie(t, betaport.Session{TesterID: stranger.ID})
	if resp, body := bbtuFetch(t, w.e, "GET", path, strangerSession); resp.StatusCode < 400 || bytes.HasPrefix(body, []byte("Cr24")) {
		t.Fatalf("another extension's tester downloading this CRX = %d", resp.StatusCode)
	}
}

// TestBBTUSharedURLUntilRotated: copies installed from the shared CRX keep
// working with the extension's token until it is rotated; rotating it
// leaves the testers' own URLs working.
func TestBBTUSharedURLUntilRotated(t *testing.T) {
	t.Parallel()
	w := newBBTUWorld(t)
	b1 := w.publish(t, "1.0.0")
	ann := w.invite(t, "Ann")
	annURL, _ := w.testerURL(t, ann, b1.Number)
	w.wantOffer(t, "shared", w.upd.UpdateURL, "0.1", "1.0.0", b1.Number)

	resp, body := w.e.do(t, "POST", api.UpdateTokenPath(w.p.ext.ID), w.admin)
	var rotated api.Updates
	if resp.StatusCode != 200 || json.Unmarshal(body, &rotated) != nil || rotated.UpdateURL == w.upd.UpdateURL {
		t.Fatalf("rotate = %d %s", resp.StatusCode, body)
	}
	if st, _, body := bbtuCheck(t, w.e, w.upd.UpdateURL, bbtuX(w.upd.ChromeID, "0.1")); st != 404 {
		t.Fatalf("the rotated shared URL = %d %s", st, body)
	}
	w.wantOffer(t, "the new shared URL", rotated.UpdateURL, "0.1", "1.0.0", b1.Number)
	w.wantOffer(t, "Ann's URL after the extension's rotation", annURL, "0.1", "1.0.0", b1.Number)
	if again, _ := w.testerURL(t, ann, b1.Number); again != annURL {
		t.Errorf("after the extension's rotation Ann's CRX names %s, was %s", again, annURL)
	}
	_, _, c := w.crx(t, "admin after rotation", b1.Number, w.admin)
	if c.updateURL() != rotated.UpdateURL {
		t.Errorf("the admin's CRX after rotation names %s, want %s", c.updateURL(), rotated.UpdateURL)
	}
}

// bbtuOrderedZip builds a zip with entries in the order given.
func bbtuOrderedZip(t *testing.T, entries ...bbtuEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		method := zip.Deflate
		if strings.HasSuffix(e.Name, ".png") {
			method = zip.Store
		}
		f, err := zw.CreateHeader(&zip.FileHeader{Name: e.Name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		f.Write(e.Data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestBBTUManifestFirstInUpload: an upload whose manifest.json comes first,
// with folders, stored and deflated entries, and an update_url of its own,
// is packed for each tester with manifest.json last, every other entry
// unchanged, and the tester's update URL in place of the manifest's.
func TestBBTUManifestFirstInUpload(t *testing.T) {
	t.Parallel()
	w := newBBTUWorld(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10/16)
	icon := make([]byte, 3000)
	for i := range icon {
		icon[i] = byte(i * 7)
	}
	b := w.p.submitAny(t, bbtuOrderedZip(t,
		bbtuEntry{"manifest.json", []byte(`{"manifest_version": 3, "name": "Tab Tamer", "version": "4.0", "update_url": "https://elsewhere.example/update", "description": "caf\u00e9 \u2603", "default_locale": "en"}`)},
		bbtuEntry{"js/", nil},
		bbtuEntry{"js/app.js", big},
		bbtuEntry{"icons/icon.png", icon},
		bbtuEntry{"_locales/en/messages.json", []byte(`{"x":{"message":"manifest.json"}}`)},
		bbtuEntry{"empty.txt", nil},
	))
	ann, bob := w.invite(t, "Ann"), w.invite(t, "Bob")
	annURL, annC := w.testerURL(t, ann, b.Number)
	bobURL, bobC := w.testerURL(t, bob, b.Number)
	_, _, shared := w.crx(t, "admin", b.Number, w.admin)
	if annURL == bobURL || shared.updateURL() != w.upd.UpdateURL {
		t.Fatalf("update URLs: Ann %s, Bob %s, shared %s (want %s)", annURL, bobURL, shared.updateURL(), w.upd.UpdateURL)
	}
	bbtuSameButManifest(t, "Ann's and Bob's", annC, bobC)
	bbtuSameButManifest(t, "Ann's and the shared", annC, shared)
	got := map[string][]byte{}
	for _, e := range annC.Entries {
		got[e.Name] = e.Data
	}
	if !bytes.Equal(got["js/app.js"], big) || !bytes.Equal(got["icons/icon.png"], icon) {
		t.Errorf("the tester's CRX changed the extension's files")
	}
	if annC.Manifest["description"] != "caf\u00e9 \u2603" {
		t.Errorf("the manifest's description became %q", annC.Manifest["description"])
	}
	w.wantOffer(t, "Ann", annURL, "3.0", "4.0", b.Number)
}

// TestBBTUSeededBundleWithoutCRX: a bundle published before CRXs were
// built (as the demo seed publishes) is packed for a tester when first
// asked for, with their URL, and verifies.
func TestBBTUSeededBundleWithoutCRX(t *testing.T) {
	t.Parallel()
	w := newBBTUWorld(t)
	b := w.e.publish(t, w.p.ext, "1.4.2")
	ann, bob := w.invite(t, "Ann"), w.invite(t, "Bob")
	annURL, annC := w.testerURL(t, ann, b.Number)
	bobURL, bobC := w.testerURL(t, bob, b.Number)
	if annURL == bobURL || annC.Manifest["version"] != "1.4.2" {
		t.Fatalf("seeded bundle: Ann %s, Bob %s, version %v", annURL, bobURL, annC.Manifest["version"])
	}
	bbtuSameButManifest(t, "seeded bundle, Ann's and Bob's", annC, bobC)
	cb := w.wantOffer(t, "Ann, seeded bundle", annURL, "1.4.1", "1.4.2", b.Number)
	if resp, body := bbtuFetch(t, w.e, "GET", cb, nil); resp.StatusCode != 200 || bbtuVerifyCRX(t, "seeded, from the URL", body).updateURL() != annURL {
		t.Fatalf("GET %s = %d", cb, resp.StatusCode)
	}
	// A bundle that does not exist: not found, for a tester too.
	if resp, body := bbtuFetch(t, w.e, "GET", api.BundleCRXPath(w.p.ext.ID, 42), ann.session); resp.StatusCode != 404 || bytes.HasPrefix(body, []byte("Cr24")) {
		t.Fatalf("a tester's CRX of bundle 42 = %d", resp.StatusCode)
	}
}
