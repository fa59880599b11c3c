package cli_test

// Black-box tests of issue 20 (release notes, rollback, adoption, webhooks)
// by a second pair of eyes: written from the public contract only, driving
// the service through the betaport command and real HTTP. The helpers of all
// four files live here, named bb20….

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/notes"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/testenv"
)

// bb20Env is a running service with two teams:
//   - team A (Professional): extensions ext ("Tab Tamer") and ext2 ("Second"),
//     admin ada, a tester of ext, a key for each extension;
//   - team B (Professional): extension extB, admin bob.
type bb20Env struct {
	m                  *cli.Main
	base, data         string
	ext, ext2, extB    string
	keyExt, keyExt2    bb20Key
	keyExtB            bb20Key
	adaEmail, bobEmail string
	admin, bob, tester *http.Client
	anon               *http.Client
	work               string
}

type bb20Key struct {
	ExtensionID string `json:"extensionId"`
	APIKey      string `json:"apiKey"`
	path        string
}

// bb20Bundle is a bundle as the API sends it; Raw keeps the fields as sent,
// to tell an omitted field from an empty one.
type bb20Bundle struct {
	Number       int64  `json:"number"`
	Name         string `json:"name"`
	Version      string `json:"version"`
	VersionName  string `json:"versionName"`
	Size         int64  `json:"size"`
	SHA256       string `json:"sha256"`
	Current      bool   `json:"current"`
	ReleaseNotes string `json:"releaseNotes"`
	RollbackOf   int64  `json:"rollbackOf"`
	Raw          map[string]json.RawMessage
}

type bb20Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Param  string `json:"param"`
}

// bb20Set sets a field of the service's Config by name: the contract names
// WebhookRetryMin, WebhookAllowPrivate and AdoptionFlush.
func bb20Set(t *testing.T, m *cli.Main, field string, value any) {
	t.Helper()
	f := reflect.ValueOf(&m.Config).Elem().FieldByName(field)
	if !f.IsValid() {
		t.Fatalf("cli.Config has no field %s, which the contract names", field)
	}
	v := reflect.ValueOf(value)
	if !v.Type().ConvertibleTo(f.Type()) {
		t.Fatalf("cli.Config.%s is a %s, not a %T", field, f.Type(), value)
	}
	f.Set(v.Convert(f.Type()))
}

func bb20Run(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := run(t, args...)
	if code != 0 {
		t.Fatalf("betaport %v: exit %d: %s", args, code, errOut)
	}
	return out
}

func bb20ID(t *testing.T, out string) string {
	t.Helper()
	var v struct{ ID int64 }
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.ID == 0 {
		t.Fatalf("no id in %q (%v)", out, err)
	}
	return strconv.FormatInt(v.ID, 10)
}

func bb20MakeKey(t *testing.T, data, ext, dir string) bb20Key {
	t.Helper()
	path := filepath.Join(dir, "key-"+ext+".json")
	bb20Run(t, "key", "create", "--data", data, "--extension", ext, "--label", "CI "+ext, "--out", path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kf struct{ Service bb20Key }
	if err := json.Unmarshal(b, &kf); err != nil || kf.Service.APIKey == "" {
		t.Fatalf("key file %s: %v", b, err)
	}
	kf.Service.path = path
	return kf.Service
}

// bb20Template is the data bb20Start serves: the teams, extensions, users
// and keys, made with the betaport command once per run (the first open of
// a data dir migrates its database, a second or more under -race). Each
// test serves a copy of its own: the data dir, and the key files in its
// work dir.
var bb20Template struct {
	once                  sync.Once
	err                   error
	data, work            string
	ext, ext2, extB       string
	keyExt, keyExt2, keyB bb20Key
}

// bb20MakeTemplate makes bb20Template, once; TestMain removes its
// directories.
func bb20MakeTemplate(t *testing.T) {
	t.Helper()
	tp := &bb20Template
	tp.once.Do(func() {
		tp.err = errors.New("the test making it stopped")
		var err error
		if tp.data, err = os.MkdirTemp("", "betaport-bb20-data-"); err != nil {
			tp.err = err
			return
		}
		cleanupAtExit(tp.data)
		if tp.work, err = os.MkdirTemp("", "betaport-bb20-work-"); err != nil {
			tp.err = err
			return
		}
		cleanupAtExit(tp.work)
		teamA := bb20ID(t, bb20Run(t, "team", "create", "--data", tp.data, "--name", "Acme", "--plan", "professional", "--seats", "5"))
		teamB := bb20ID(t, bb20Run(t, "team", "create", "--data", tp.data, "--name", "Rival", "--plan", "professional", "--seats", "5"))
		tp.ext = bb20ID(t, bb20Run(t, "extension", "create", "--data", tp.data, "--team", teamA, "--name", "Tab Tamer"))
		tp.ext2 = bb20ID(t, bb20Run(t, "extension", "create", "--data", tp.data, "--team", teamA, "--name", "Second"))
		tp.extB = bb20ID(t, bb20Run(t, "extension", "create", "--data", tp.data, "--team", teamB, "--name", "Rival Tabs"))
		bb20Run(t, "user", "create", "--data", tp.data, "--email", "ada@example.com", "--team", teamA, "--password", bboPassword)
		bb20Run(t, "user", "create", "--data", tp.data, "--email", "bob@example.com", "--team", teamB, "--password", bboPassword)
		tp.keyExt = bb20MakeKey(t, tp.data, tp.ext, tp.work)
		tp.keyExt2 = bb20MakeKey(t, tp.data, tp.ext2, tp.work)
		tp.keyB = bb20MakeKey(t, tp.data, tp.extB, tp.work)
		tp.err = nil
	})
	if tp.err != nil {
		t.Fatalf("making the data every bb20 test starts from: %v", tp.err)
	}
}

// bb20Start serves a copy of bb20Template with configure applied to the
// Config, and signs the admins and a tester in. Each test has its own data
// dir, service (on a port of its own) and clients, and changes no process
// state (environment, package variables): the black-box tests run in
// parallel.
func bb20Start(t *testing.T, configure func(m *cli.Main)) *bb20Env {
	t.Helper()
	bb20MakeTemplate(t)
	tp := &bb20Template
	e := &bb20Env{data: t.TempDir(), work: t.TempDir(), adaEmail: "ada@example.com", bobEmail: "bob@example.com",
		ext: tp.ext, ext2: tp.ext2, extB: tp.extB, keyExt: tp.keyExt, keyExt2: tp.keyExt2, keyExtB: tp.keyB}
	for from, to := range map[string]string{tp.data: e.data, tp.work: e.work} {
		if err := testenv.CopyDir(from, to); err != nil {
			t.Fatalf("copying the data every bb20 test starts from: %v", err)
		}
	}
	for _, k := range []*bb20Key{&e.keyExt, &e.keyExt2, &e.keyExtB} {
		k.path = filepath.Join(e.work, filepath.Base(k.path))
	}

	e.m = cli.NewMain()
	e.m.Config.Addr, e.m.Config.Data = "127.0.0.1:0", e.data
	e.m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if configure != nil {
		configure(e.m)
	}
	if err := e.m.Run(context.Background()); err != nil {
		t.Fatalf("serve: %v", err)
	}
	t.Cleanup(func() { e.m.Close() })
	e.base = e.m.URL()
	e.anon = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	e.admin = bb20SignIn(t, e.base, e.adaEmail)
	e.bob = bb20SignIn(t, e.base, e.bobEmail)

	// A tester of ext, signed in through the invite link.
	resp, b := e.do(t, e.admin, "POST", "/api/extensions/"+e.ext+"/testers", `{"email":"tess@example.com","name":"Tess"}`, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("invite a tester: %d %s", resp.StatusCode, b)
	}
	var inv struct {
		InviteURL string `json:"inviteUrl"`
	}
	json.Unmarshal(b, &inv)
	jar, _ := cookiejar.New(nil)
	e.tester = &http.Client{Jar: jar}
	link := inv.InviteURL
	if strings.HasPrefix(link, "/") {
		link = e.base + link
	}
	r, err := e.tester.Get(link)
	if err != nil {
		t.Fatalf("tester link: %v", err)
	}
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	if resp, b := e.do(t, e.tester, "GET", "/api/builds", "", nil); resp.StatusCode != 200 {
		t.Fatalf("the tester is not signed in: /api/builds = %d %s", resp.StatusCode, b)
	}
	return e
}

func bb20SignIn(t *testing.T, base, email string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	body, _ := json.Marshal(map[string]string{"email": email, "password": bboPassword})
	resp, err := c.Post(base+"/api/session", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("sign in: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("sign in %s: %d %s", email, resp.StatusCode, b)
	}
	return c
}

// do sends a request; body "" sends none, a body starting with "{" or "["
// is sent as JSON. hdr adds headers.
func (e *bb20Env) do(t *testing.T, c *http.Client, method, path, body string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	return bb20Do(t, c, method, e.url(path), []byte(body), hdr)
}

func (e *bb20Env) url(path string) string {
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		return path
	}
	return e.base + path
}

func bb20Do(t *testing.T, c *http.Client, method, url string, body []byte, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	var r io.Reader
	if len(body) > 0 {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// bb20ProblemOf checks that an answer is a problem+json of the status and
// (when typ is not "") type, with a detail, and returns it.
func bb20ProblemOf(t *testing.T, what string, resp *http.Response, b []byte, statuses []int, typ string) bb20Problem {
	t.Helper()
	var p bb20Problem
	ok := false
	for _, s := range statuses {
		ok = ok || resp.StatusCode == s
	}
	if !ok {
		t.Errorf("%s = %d %.300s; want %v", what, resp.StatusCode, b, statuses)
		return p
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		t.Errorf("%s = %d with Content-Type %q, want application/problem+json", what, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Errorf("%s: problem %q: %v", what, b, err)
		return p
	}
	if typ != "" && p.Type != typ {
		t.Errorf("%s: problem type %q (%s), want %q", what, p.Type, b, typ)
	}
	if p.Status != resp.StatusCode || strings.TrimSpace(p.Detail) == "" || p.Title == "" {
		t.Errorf("%s: problem %s lacks a status, title or detail", what, b)
	}
	return p
}

func bb20DecodeBundle(t *testing.T, what string, b []byte) bb20Bundle {
	t.Helper()
	var bd bb20Bundle
	if err := json.Unmarshal(b, &bd); err != nil {
		t.Fatalf("%s: bundle %q: %v", what, b, err)
	}
	json.Unmarshal(b, &bd.Raw)
	return bd
}

// bb20Zip is a real extension zip: manifest.json (MV3) and a script that
// differs per version.
func bb20Zip(t *testing.T, version string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range []struct{ name, body string }{
		{"manifest.json", `{"manifest_version": 3, "name": "Tab Tamer", "version": "` + version + `"}`},
		{"bg.js", strings.Repeat("// build "+version+"\n", 300) + "console.log('" + version + "');\n"},
	} {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, f.body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// bb20UploadBody is call 1's body: the key fields and, when notes is not
// nil, "releaseNotes" as raw JSON text (so tests can send bytes
// encoding/json would never write).
func bb20UploadBody(k bb20Key, notesJSON []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"extensionId":%q,"apiKey":%q`, k.ExtensionID, k.APIKey)
	if notesJSON != nil {
		b.WriteString(`,"releaseNotes":`)
		b.Write(notesJSON)
	}
	b.WriteString("}")
	return b.Bytes()
}

func bb20JSONString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// bb20Upload runs calls 1 and 2: the upload URL (with notes when given) and
// the PUT of a zip of version.
func bb20Upload(t *testing.T, e *bb20Env, k bb20Key, version string, notesJSON []byte) {
	t.Helper()
	resp, b := bb20Do(t, http.DefaultClient, "POST", e.base+"/api/submit/upload", bb20UploadBody(k, notesJSON), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("upload URL for %s: %d %s", version, resp.StatusCode, b)
	}
	var u struct{ URL string }
	json.Unmarshal(b, &u)
	req, _ := http.NewRequest("PUT", e.url(u.URL), bytes.NewReader(bb20Zip(t, version)))
	req.Header.Set("Content-Type", "application/zip")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("PUT: %v", err)
	}
	pb, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode/100 != 2 {
		t.Fatalf("PUT %s: %d %s", version, r.StatusCode, pb)
	}
}

func bb20Sign(t *testing.T, e *bb20Env, k bb20Key) (*http.Response, []byte) {
	t.Helper()
	return bb20Do(t, http.DefaultClient, "POST", e.base+"/api/submit/sign", bb20UploadBody(k, nil), nil)
}

// bb20Publish runs the three calls and returns the published bundle.
func bb20Publish(t *testing.T, e *bb20Env, k bb20Key, version, notes string) bb20Bundle {
	t.Helper()
	var nj []byte
	if notes != "" {
		nj = bb20JSONString(notes)
	}
	bb20Upload(t, e, k, version, nj)
	resp, b := bb20Sign(t, e, k)
	if resp.StatusCode != 200 && resp.StatusCode != 201 {
		t.Fatalf("sign %s: %d %s", version, resp.StatusCode, b)
	}
	return bb20DecodeBundle(t, "sign "+version, b)
}

// bb20Bundles lists every bundle of ext, walking the index pages.
func bb20Bundles(t *testing.T, e *bb20Env, c *http.Client, ext string) []bb20Bundle {
	t.Helper()
	var all []bb20Bundle
	for page := 0; page < 100; page++ {
		resp, b := e.do(t, c, "GET", fmt.Sprintf("/api/extensions/%s/bundles?page=%d&limit=50", ext, page), "", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("bundles page %d: %d %s", page, resp.StatusCode, b)
		}
		var raws []json.RawMessage
		if err := json.Unmarshal(b, &raws); err != nil {
			t.Fatalf("bundles page %s: %v", b, err)
		}
		for _, r := range raws {
			all = append(all, bb20DecodeBundle(t, "bundles list", r))
		}
		if len(raws) < 50 {
			break
		}
	}
	return all
}

func bb20Current(t *testing.T, e *bb20Env, c *http.Client, ext string) bb20Bundle {
	t.Helper()
	resp, b := e.do(t, c, "GET", "/api/extensions/"+ext+"/bundles/current", "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("current bundle: %d %s", resp.StatusCode, b)
	}
	return bb20DecodeBundle(t, "current", b)
}

// bb20Builds is every bundle the client sees in /api/builds.
func bb20Builds(t *testing.T, e *bb20Env, c *http.Client) []bb20Bundle {
	t.Helper()
	var all []bb20Bundle
	cursor := ""
	for i := 0; i < 100; i++ {
		path := "/api/builds?limit=100"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		resp, b := e.do(t, c, "GET", path, "", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("builds: %d %s", resp.StatusCode, b)
		}
		var page struct {
			Data       []json.RawMessage `json:"data"`
			NextCursor string            `json:"nextCursor"`
		}
		json.Unmarshal(b, &page)
		for _, r := range page.Data {
			all = append(all, bb20DecodeBundle(t, "builds", r))
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	return all
}

func bb20Download(t *testing.T, e *bb20Env, c *http.Client, ext string, n int64) []byte {
	t.Helper()
	resp, b := e.do(t, c, "GET", fmt.Sprintf("/api/extensions/%s/bundles/%d/download", ext, n), "", nil)
	if resp.StatusCode != 200 || len(b) == 0 {
		t.Fatalf("download #%d: %d %.200s", n, resp.StatusCode, b)
	}
	return b
}

// bb20Eventually polls cond for up to 60 s (a deadline for a hung service,
// not a timed assertion).
func bb20Eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// --- release notes ---------------------------------------------------------

// Notes of exactly 10240 bytes (UTF-8, not characters) are accepted, one
// byte more is refused with the problem; a refused call 1 leaves the
// previous upload signable and the bundles unchanged.
func TestBB20ReleaseNotesLimit(t *testing.T) {
	t.Parallel()
	e := bb20Start(t, nil)

	// 10240 bytes of two-byte characters: 5120 runes.
	exact := strings.Repeat("é", 5120)
	if len(exact) != 10240 {
		t.Fatal(len(exact))
	}
	b1 := bb20Publish(t, e, e.keyExt, "1.0.0", exact)
	if b1.ReleaseNotes != exact {
		t.Fatalf("sign answered notes of %d bytes, want the 10240 sent", len(b1.ReleaseNotes))
	}
	// 10240 ASCII bytes with newlines, CR and tabs.
	ascii := strings.Repeat("- fix\r\n\tx\n", 1024)
	if len(ascii) != 10240 {
		t.Fatal(len(ascii))
	}
	b2 := bb20Publish(t, e, e.keyExt, "1.1.0", ascii)
	if b2.ReleaseNotes != ascii {
		t.Fatalf("sign answered notes %q…, want the 10240 ASCII bytes sent verbatim", b2.ReleaseNotes[:min(40, len(b2.ReleaseNotes))])
	}

	// The next upload is issued and received (no notes), not yet signed.
	bb20Upload(t, e, e.keyExt, "1.2.0", nil)
	before := bb20Bundles(t, e, e.admin, e.ext)

	refused := []struct {
		name  string
		notes []byte // raw JSON value
	}{
		{"10241 ASCII bytes", bb20JSONString(strings.Repeat("a", 10241))},
		{"5120 two-byte characters and one more byte", bb20JSONString(exact + "a")},
		{"5121 two-byte characters (5121 characters, 10242 bytes)", bb20JSONString(exact + "é")},
		{"10 KiB of escapes that decode to 10241 bytes", []byte(`"` + strings.Repeat(`\u0061`, 10241) + `"`)},
		{"a NUL", []byte(`"before\u0000after"`)},
		{"a bell", []byte(`"ding\u0007"`)},
		{"an escape sequence (ESC [2J)", []byte(`"\u001b[2Jcleared"`)},
		{"a form feed", []byte(`"page\fbreak"`)},
		{"a backspace", []byte(`"typo\b"`)},
		{"DEL", []byte(`"del\u007f"`)},
	}
	for _, r := range refused {
		resp, b := bb20Do(t, http.DefaultClient, "POST", e.base+"/api/submit/upload", bb20UploadBody(e.keyExt, r.notes), nil)
		p := bb20ProblemOf(t, "notes with "+r.name, resp, b, []int{400}, "/problems/invalid-release-notes")
		if resp.StatusCode == 400 && p.Param != "releaseNotes" {
			t.Errorf("notes with %s: param %q, want releaseNotes", r.name, p.Param)
		}
	}
	// A megabyte of notes: the notes problem, or the body limit's 413.
	resp, b := bb20Do(t, http.DefaultClient, "POST", e.base+"/api/submit/upload", bb20UploadBody(e.keyExt, bb20JSONString(strings.Repeat("x", 1<<20))), nil)
	bb20ProblemOf(t, "a megabyte of notes", resp, b, []int{400, 413}, "")

	// Not a string, an unknown field beside it, the notes under another name.
	for name, body := range map[string]string{
		"notes that are a number":  string(bb20UploadBody(e.keyExt, []byte(`5`))),
		"notes that are an object": string(bb20UploadBody(e.keyExt, []byte(`{"text":"x"}`))),
		"an unknown field":         `{"extensionId":"` + e.ext + `","apiKey":"` + e.keyExt.APIKey + `","releaseNotes":"x","track":"beta"}`,
		"notes named notes":        `{"extensionId":"` + e.ext + `","apiKey":"` + e.keyExt.APIKey + `","notes":"x"}`,
		"trailing data":            string(bb20UploadBody(e.keyExt, bb20JSONString("x"))) + `{"again":1}`,
	} {
		resp, b := bb20Do(t, http.DefaultClient, "POST", e.base+"/api/submit/upload", []byte(body), nil)
		if resp.StatusCode != 400 {
			t.Errorf("call 1 with %s = %d %.200s, want 400", name, resp.StatusCode, b)
		}
	}

	// Nothing changed: the same bundles, and the upload issued before the
	// refusals is still the one sign publishes.
	if after := bb20Bundles(t, e, e.admin, e.ext); len(after) != len(before) {
		t.Fatalf("refused calls changed the bundles: %d before, %d after", len(before), len(after))
	}
	resp, b = bb20Sign(t, e, e.keyExt)
	if resp.StatusCode != 200 && resp.StatusCode != 201 {
		t.Fatalf("sign after refused notes = %d %s; the previous upload should still be signable", resp.StatusCode, b)
	}
	b3 := bb20DecodeBundle(t, "sign 1.2.0", b)
	if b3.Number != 3 || !strings.HasPrefix(b3.Version, "1.2.0") && b3.VersionName != "1.2.0" {
		t.Errorf("sign after refused notes published #%d %s (%s), want #3 of 1.2.0", b3.Number, b3.Version, b3.VersionName)
	}
	if _, has := b3.Raw["releaseNotes"]; has {
		t.Errorf("a bundle uploaded without notes has releaseNotes %s; the contract omits it when empty", b3.Raw["releaseNotes"])
	}
	if _, has := b3.Raw["rollbackOf"]; has {
		t.Errorf("a bundle from an upload has rollbackOf %s; the contract omits it", b3.Raw["rollbackOf"])
	}
	// An empty string is no notes.
	b4 := bb20Publish(t, e, e.keyExt, "1.3.0", "")
	bb20Upload(t, e, e.keyExt, "1.4.0", []byte(`""`))
	resp, b = bb20Sign(t, e, e.keyExt)
	b5 := bb20DecodeBundle(t, "sign 1.4.0", b)
	if resp.StatusCode/100 != 2 || b5.ReleaseNotes != "" || b4.ReleaseNotes != "" {
		t.Errorf("empty notes: %d %s", resp.StatusCode, b)
	}
}

// Notes that are not valid UTF-8, or hold a C1 control character, are
// refused: encoding/json would quietly turn the bytes into U+FFFD. When the
// service takes them, the test publishes them to show what testers get.
func TestBB20ReleaseNotesInvalidUTF8(t *testing.T) {
	t.Parallel()
	e := bb20Start(t, nil)
	for i, c := range []struct {
		name  string
		notes []byte
	}{
		{"invalid UTF-8 (a lone 0xff byte)", []byte("\"fixed \xff things\"")},
		{"invalid UTF-8 (a cut two-byte sequence)", []byte("\"caf\xc3\"")},
		{"invalid UTF-8 (an overlong encoding of /)", []byte("\"a\xc0\xafb\"")},
		{"invalid UTF-8 (a UTF-16 surrogate encoded in UTF-8)", []byte("\"a\xed\xa0\x80b\"")},
		{"a C1 control character (U+009B, CSI)", []byte(`"csi\u009b2J"`)},
		{"a C1 control character (U+0085, NEL)", []byte(`"next\u0085line"`)},
	} {
		resp, b := bb20Do(t, http.DefaultClient, "POST", e.base+"/api/submit/upload", bb20UploadBody(e.keyExt, c.notes), nil)
		if resp.StatusCode == 200 {
			var u struct{ URL string }
			json.Unmarshal(b, &u)
			req, _ := http.NewRequest("PUT", e.url(u.URL), bytes.NewReader(bb20Zip(t, fmt.Sprintf("1.0.%d", i))))
			req.Header.Set("Content-Type", "application/zip")
			if r, err := http.DefaultClient.Do(req); err == nil {
				r.Body.Close()
			}
			_, sb := bb20Sign(t, e, e.keyExt)
			t.Errorf("notes with %s = 200, want 400 /problems/invalid-release-notes; published, they read %q", c.name, bb20DecodeBundle(t, "sign", sb).ReleaseNotes)
			continue
		}
		p := bb20ProblemOf(t, "notes with "+c.name, resp, b, []int{400}, "/problems/invalid-release-notes")
		if p.Param != "releaseNotes" {
			t.Errorf("notes with %s: param %q, want releaseNotes", c.name, p.Param)
		}
	}
}

// Notes with HTML are kept verbatim in every bundle JSON: sign's answer,
// the bundles list, the current bundle and a tester's builds; the session
// flow of call 1 takes notes too.
func TestBB20ReleaseNotesVisibleVerbatim(t *testing.T) {
	t.Parallel()
	e := bb20Start(t, nil)
	notes := "<script>alert('x')</script>\n\n- <b>bold</b> & \"quoted\" \\ back\n* [home](https://example.com/?a=1&b=2)\n1. <img src=x onerror=alert(1)>\tü 漢字 🙂\r\n"
	signed := bb20Publish(t, e, e.keyExt, "2.0.0", notes)
	if signed.ReleaseNotes != notes {
		t.Fatalf("sign answered notes %q, want %q", signed.ReleaseNotes, notes)
	}
	if _, has := signed.Raw["rollbackOf"]; has {
		t.Errorf("sign's bundle has rollbackOf %s", signed.Raw["rollbackOf"])
	}
	list := bb20Bundles(t, e, e.admin, e.ext)
	if len(list) != 1 || list[0].ReleaseNotes != notes {
		t.Errorf("bundles list: %+v, want the one bundle with the notes verbatim", list)
	}
	for who, c := range map[string]*http.Client{"admin": e.admin, "tester": e.tester} {
		if cur := bb20Current(t, e, c, e.ext); cur.ReleaseNotes != notes || cur.Number != signed.Number {
			t.Errorf("current bundle as %s: #%d notes %q, want #%d with the notes verbatim", who, cur.Number, cur.ReleaseNotes, signed.Number)
		}
	}
	found := false
	for _, bd := range bb20Builds(t, e, e.tester) {
		if bd.Number == signed.Number && bd.ReleaseNotes == notes {
			found = true
		}
	}
	if !found {
		t.Errorf("the tester's builds do not show bundle #%d with its notes", signed.Number)
	}

	// The admin's session publishes with notes: {"extensionId","releaseNotes"}.
	sessionNotes := "From the <upload> panel"
	resp, b := e.do(t, e.admin, "POST", "/api/submit/upload", `{"extensionId":"`+e.ext+`","releaseNotes":`+string(bb20JSONString(sessionNotes))+`}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("session call 1 with notes = %d %s", resp.StatusCode, b)
	}
	var u struct{ URL string }
	json.Unmarshal(b, &u)
	req, _ := http.NewRequest("PUT", e.url(u.URL), bytes.NewReader(bb20Zip(t, "2.1.0")))
	req.Header.Set("Content-Type", "application/zip")
	r, err := http.DefaultClient.Do(req)
	if err != nil || r.StatusCode/100 != 2 {
		t.Fatalf("PUT: %v %v", r, err)
	}
	r.Body.Close()
	resp, b = e.do(t, e.admin, "POST", "/api/submit/sign", `{"extensionId":"`+e.ext+`"}`, nil)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("session sign = %d %s", resp.StatusCode, b)
	}
	if got := bb20DecodeBundle(t, "session sign", b); got.ReleaseNotes != sessionNotes {
		t.Errorf("session-published notes %q, want %q", got.ReleaseNotes, sessionNotes)
	}
	// The session's refusal is the same problem.
	resp, b = e.do(t, e.admin, "POST", "/api/submit/upload", `{"extensionId":"`+e.ext+`","releaseNotes":"`+strings.Repeat("z", 10241)+`"}`, nil)
	bb20ProblemOf(t, "session call 1 with 10241 bytes of notes", resp, b, []int{400}, "/problems/invalid-release-notes")
	// A cross-site session call is refused before the notes matter.
	resp, b = e.do(t, e.admin, "POST", "/api/submit/upload", `{"extensionId":"`+e.ext+`","releaseNotes":"x"}`, map[string]string{"Sec-Fetch-Site": "cross-site"})
	if resp.StatusCode != 403 {
		t.Errorf("cross-site session call 1 = %d %s, want 403", resp.StatusCode, b)
	}
}

// betaport submit --notes / --notes-file: notes reach the bundle; both
// flags at once is a usage error; notes over 10 KiB are refused before any
// request is sent.
func TestBB20SubmitNotesFlags(t *testing.T) {
	t.Parallel()
	e := bb20Start(t, nil)
	zipPath := filepath.Join(e.work, "ext.zip")
	os.WriteFile(zipPath, bb20Zip(t, "3.0.0"), 0o644)
	code, _, errOut := run(t, "submit", "--quiet", "--base-url", e.base, "--key", e.keyExt.path, "--notes", "Fixed <the> bug", zipPath)
	if code != 0 {
		t.Fatalf("submit --notes: exit %d: %s", code, errOut)
	}
	if cur := bb20Current(t, e, e.admin, e.ext); cur.ReleaseNotes != "Fixed <the> bug" {
		t.Errorf("submit --notes published notes %q", cur.ReleaseNotes)
	}
	notesFile := filepath.Join(e.work, "NOTES.md")
	fileNotes := "# 3.0.1\n\n- one\n- two\n"
	os.WriteFile(notesFile, []byte(fileNotes), 0o644)
	os.WriteFile(zipPath, bb20Zip(t, "3.0.1"), 0o644)
	code, _, errOut = run(t, "submit", "--quiet", "--base-url", e.base, "--key", e.keyExt.path, "--notes-file", notesFile, zipPath)
	if code != 0 {
		t.Fatalf("submit --notes-file: exit %d: %s", code, errOut)
	}
	if cur := bb20Current(t, e, e.admin, e.ext); cur.ReleaseNotes != fileNotes {
		t.Errorf("submit --notes-file published notes %q, want %q", cur.ReleaseNotes, fileNotes)
	}

	// A service that records every request: the refusals below send none.
	var mu sync.Mutex
	var requests []string
	rec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.Method+" "+r.URL.Path)
		mu.Unlock()
		http.Error(w, "no", 500)
	}))
	defer rec.Close()
	big := filepath.Join(e.work, "BIG.md")
	os.WriteFile(big, bytes.Repeat([]byte("a"), 10241), 0o644)
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"--notes and --notes-file", []string{"--notes", "x", "--notes-file", notesFile}, cli.ExitUsage},
		{"--notes over 10 KiB", []string{"--notes", strings.Repeat("b", 10241)}, cli.ExitFailure},
		{"--notes-file over 10 KiB", []string{"--notes-file", big}, cli.ExitFailure},
		{"--notes-file that does not exist", []string{"--notes-file", filepath.Join(e.work, "missing.md")}, 0},
	}
	for _, c := range cases {
		args := append([]string{"submit", "--quiet", "--base-url", rec.URL, "--key", e.keyExt.path}, c.args...)
		args = append(args, zipPath)
		code, out, errOut := run(t, args...)
		if c.code != 0 && code != c.code || c.code == 0 && code == 0 {
			t.Errorf("submit with %s: exit %d (stdout %q, stderr %q), want %d", c.name, code, out, errOut, c.code)
		}
		if c.code == cli.ExitUsage && strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("submit with %s: stderr %q, want one line", c.name, errOut)
		}
		if strings.TrimSpace(errOut) == "" {
			t.Errorf("submit with %s: says nothing on stderr", c.name)
		}
		mu.Lock()
		if len(requests) != 0 {
			t.Errorf("submit with %s sent %v before refusing", c.name, requests)
		}
		requests = nil
		mu.Unlock()
	}
	// Notes the service refuses (a NUL, invalid UTF-8): a failure exit and
	// nothing published.
	before := len(bb20Bundles(t, e, e.admin, e.ext))
	for name, content := range map[string]string{"a NUL": "nul\x00inside", "invalid UTF-8": "bad \xff byte"} {
		f := filepath.Join(e.work, "refused.md")
		os.WriteFile(f, []byte(content), 0o644)
		os.WriteFile(zipPath, bb20Zip(t, "3.0.9"), 0o644)
		code, _, errOut := run(t, "submit", "--quiet", "--retries", "0", "--base-url", e.base, "--key", e.keyExt.path, "--notes-file", f, zipPath)
		if code == 0 || strings.TrimSpace(errOut) == "" {
			t.Errorf("submit --notes-file with %s: exit %d, stderr %q; want a failure that says why", name, code, errOut)
		}
		t.Logf("submit --notes-file with %s: exit %d, %s", name, code, strings.TrimSpace(errOut))
	}
	if after := len(bb20Bundles(t, e, e.admin, e.ext)); after != before {
		t.Errorf("refused notes published %d bundles", after-before)
	}
	// Exactly 10240 bytes of notes from a file are fine.
	exact := filepath.Join(e.work, "EXACT.md")
	os.WriteFile(exact, bytes.Repeat([]byte("c"), 10240), 0o644)
	os.WriteFile(zipPath, bb20Zip(t, "3.0.2"), 0o644)
	if code, _, errOut := run(t, "submit", "--quiet", "--base-url", e.base, "--key", e.keyExt.path, "--notes-file", exact, zipPath); code != 0 {
		t.Errorf("submit --notes-file of 10240 bytes: exit %d: %s", code, errOut)
	}
}

// The OpenAPI document names every operation of issue 20, and its problem
// types.
func TestBB20OpenAPINamesTheNewOperations(t *testing.T) {
	t.Parallel()
	e := bb20Start(t, nil)
	resp, b := e.do(t, e.anon, "GET", "/api/openapi.json", "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("/api/openapi.json = %d", resp.StatusCode)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	json.Unmarshal(b, &doc)
	ops := map[string]bool{}
	for p, item := range doc.Paths {
		for method := range item {
			ops[strings.ToUpper(method)+" "+regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(p, "{}")] = true
		}
	}
	for _, want := range []string{
		"POST /api/extensions/{}/bundles/{}/rollback",
		"GET /api/extensions/{}/adoption",
		"GET /api/extensions/{}/webhooks",
		"POST /api/extensions/{}/webhooks",
		"DELETE /api/extensions/{}/webhooks/{}",
		"GET /api/extensions/{}/webhooks/{}/deliveries",
		"POST /api/extensions/{}/webhooks/{}/test",
	} {
		if !ops[want] {
			t.Errorf("the OpenAPI document lacks %s", want)
		}
	}
	for _, typ := range []string{"/problems/invalid-release-notes", "/problems/already-current", "/problems/invalid-webhook-url"} {
		if !bytes.Contains(b, []byte(typ)) {
			t.Errorf("the OpenAPI document does not name the problem type %s", typ)
		}
	}
	if !bytes.Contains(b, []byte("releaseNotes")) || !bytes.Contains(b, []byte("rollbackOf")) {
		t.Errorf("the OpenAPI document's schemas lack releaseNotes or rollbackOf")
	}
}

// The notes reader (app/notes, plain Go) by its public API: links only to
// http and https, HTML as text, the list and paragraph rules, no panic and
// no blow-up on hostile notes.
func TestBB20NotesMarkdownSubset(t *testing.T) {
	t.Parallel()
	links := func(s string) []notes.Span {
		var out []notes.Span
		for _, b := range notes.Parse(s) {
			for _, it := range b.Items {
				for _, sp := range it {
					if sp.URL != "" {
						out = append(out, sp)
					}
				}
			}
		}
		return out
	}
	for _, bad := range []string{
		"[x](javascript:alert(1))", "[x](JavaScript:alert(1))", "[x]( javascript:alert(1))", "[x](java\tscript:alert(1))",
		"[x](data:text/html,<script>alert(1)</script>)", "[x](//evil.example/)", "[x](/relative)", "[x](ftp://a.example/)",
		"[x](http://)", "[x](https:///nohost)", "[x](vbscript:msgbox)", "[x](file:///etc/passwd)", "[x](https://a.example/",
		"[x]\n(https://a.example/)", "<a href=\"javascript:alert(1)\">x</a>", "[x](\x00javascript:alert(1))",
	} {
		if got := links(bad); len(got) != 0 {
			t.Errorf("notes %q made links %+v", bad, got)
		}
	}
	for _, good := range []struct{ notes, text, url string }{
		{"see [the docs](https://docs.example.com/a?b=1&c=2)", "the docs", "https://docs.example.com/a?b=1&c=2"},
		{"[home](http://example.com)", "home", "http://example.com"},
		{"- [a <b>](https://x.example/)", "a <b>", "https://x.example/"},
	} {
		got := links(good.notes)
		if len(got) != 1 || got[0].Text != good.text || got[0].URL != good.url {
			t.Errorf("notes %q: links %+v, want one %q → %q", good.notes, got, good.text, good.url)
		}
	}
	// Every link a random soup makes is a web URL.
	soup := []string{"[", "]", "(", ")", "https://", "http://", "javascript:", "a", " ", "\n", "- ", "1. ", "<", ">", "\"", "é", "\r", "*"}
	seed := uint64(20)
	for i := 0; i < 3000; i++ {
		var b strings.Builder
		for j := 0; j < 30; j++ {
			seed = seed*6364136223846793005 + 1442695040888963407
			b.WriteString(soup[(seed>>33)%uint64(len(soup))])
		}
		for _, sp := range links(b.String()) {
			if !notes.WebURL(sp.URL) || !(strings.HasPrefix(sp.URL, "http://") || strings.HasPrefix(sp.URL, "https://")) {
				t.Fatalf("notes %q made a link to %q", b.String(), sp.URL)
			}
		}
	}
	// HTML is text, as written.
	if bs := notes.Parse("<script>alert(1)</script>"); len(bs) != 1 || bs[0].Kind != notes.Paragraph || len(bs[0].Items) != 1 || bs[0].Items[0].String() != "<script>alert(1)</script>" {
		t.Errorf("HTML notes parsed as %+v", bs)
	}
	// Paragraphs and lists.
	type shape struct {
		kind  notes.Kind
		items int
		start int
	}
	for _, c := range []struct {
		notes string
		want  []shape
	}{
		{"one\n\ntwo", []shape{{notes.Paragraph, 1, 0}, {notes.Paragraph, 1, 0}}},
		{"one\r\n\r\ntwo", []shape{{notes.Paragraph, 1, 0}, {notes.Paragraph, 1, 0}}},
		{"one\ntwo", []shape{{notes.Paragraph, 1, 0}}},
		{"- a\n- b\n* c", []shape{{notes.Bullets, 3, 0}}},
		{"1. a\n2. b", []shape{{notes.Numbered, 2, 1}}},
		{"3. a\n4. b", []shape{{notes.Numbered, 2, 3}}},
		{"Intro\n\n- a\n- b\n\nOutro", []shape{{notes.Paragraph, 1, 0}, {notes.Bullets, 2, 0}, {notes.Paragraph, 1, 0}}},
		{"-a", []shape{{notes.Paragraph, 1, 0}}},
	} {
		bs := notes.Parse(c.notes)
		var got []shape
		for _, b := range bs {
			s := shape{b.Kind, len(b.Items), 0}
			if b.Kind == notes.Numbered {
				s.start = b.Start
			}
			got = append(got, s)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("Parse(%q) = %v, want %v", c.notes, got, c.want)
		}
	}
	// Hostile notes of the largest size cost about what plain notes cost
	// (a ratio measured side by side, not a time).
	plain := strings.Repeat("plain text ", 931)[:10240]
	cost := func(s string) time.Duration {
		best := time.Duration(1 << 62)
		for i := 0; i < 5; i++ {
			start := time.Now()
			notes.Parse(s)
			if d := time.Since(start); d < best {
				best = d
			}
		}
		return best
	}
	base := cost(plain)
	for name, s := range map[string]string{
		"[[[[…":     strings.Repeat("[", 10240),
		"[](((((…":  "[]" + strings.Repeat("(", 10238),
		"[a](…":     strings.Repeat("[a](", 2560),
		"]]]](((…":  strings.Repeat("]", 5120) + strings.Repeat("(", 5120),
		"- - - - …": strings.Repeat("- ", 5120),
		"newlines":  strings.Repeat("\n", 10240),
		"[x](http…": strings.Repeat("[x](https://a.example/", 465),
	} {
		if c := cost(s); c > 50*base+5*time.Millisecond {
			t.Errorf("parsing 10 KiB of %s costs %v, plain text %v", name, c, base)
		}
	}
}
