package cli_test

// Black-box tests of the remote CLI (issue: "A remote CLI") and the
// operator's token commands, by a second pair of eyes: written from the
// issue, "betaport help", "betaport COMMAND -h" and openapi.json only. Every
// remote command runs as a process of its own (this test binary made the
// betaport command, see commandChildVar) against a real service (cli.Main
// on 127.0.0.1, port 0), on SQLite and on PostgreSQL + S3. The helpers of
// this file are named bbr….

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/testenv"
)

var bbrScopes = []string{"read", "testers", "releases", "feedback", "settings"}

// bbrWorld is a running service with a Professional team, its extensions
// ext ("Tab Tamer") and ext2 ("Second"), the admin ada (signed in), and a
// submit key of ext, all made with the betaport command.
type bbrWorld struct {
	storage   []string // the storage flags of the operator's commands
	base      string
	ext, ext2 string
	keyFile   string
	admin     *http.Client
	work      string
	// all is a token of every scope of ext, made with "betaport token
	// create" on the storage.
	all string
}

// bbrCommand runs the betaport command as a process with args and the
// environment extra (the test process's BETAPORT_ variables left out), and
// returns its exit code and streams.
func bbrCommand(t *testing.T, extra []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	b, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BETAPORT_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(append(env, extra...), commandChildVar+"="+string(b))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), out.String(), errOut.String()
	} else if err != nil {
		t.Fatalf("betaport %v: %v", args, err)
	}
	return 0, out.String(), errOut.String()
}

// remote runs a remote command with BETAPORT_SERVER and BETAPORT_TOKEN set.
func (w *bbrWorld) remote(t *testing.T, token string, args ...string) (int, string, string) {
	t.Helper()
	return bbrCommand(t, []string{"BETAPORT_SERVER=" + w.base, "BETAPORT_TOKEN=" + token}, args...)
}

// mustRemote runs a remote command that must succeed.
func (w *bbrWorld) mustRemote(t *testing.T, token string, args ...string) string {
	t.Helper()
	code, out, errOut := w.remote(t, token, args...)
	if code != 0 {
		t.Fatalf("betaport %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// operator runs an operator's command on the world's storage.
func (w *bbrWorld) operator(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return bbrCommand(t, nil, append(args, w.storage...)...)
}

// bbrLines parses stdout as JSON objects, one a line.
func bbrLines(t *testing.T, what, stdout string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	if stdout == "" {
		return objs
	}
	if !strings.HasSuffix(stdout, "\n") {
		t.Errorf("%s: stdout does not end with a newline: %q", what, stdout)
	}
	for i, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || m == nil {
			t.Errorf("%s: line %d of stdout is not one JSON object: %q", what, i+1, line)
			continue
		}
		objs = append(objs, m)
	}
	return objs
}

// bbrOne parses stdout as exactly one JSON object (on one line).
func bbrOne(t *testing.T, what, stdout string) map[string]any {
	t.Helper()
	objs := bbrLines(t, what, stdout)
	if len(objs) != 1 {
		t.Fatalf("%s: want one JSON object on stdout, got %d: %s", what, len(objs), stdout)
	}
	return objs[0]
}

func bbrNum(m map[string]any, k string) int64 {
	f, _ := m[k].(float64)
	return int64(f)
}

func bbrStr(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func bbrID(m map[string]any) string { return strconv.FormatInt(bbrNum(m, "id"), 10) }

// bbrSetup makes the world with the betaport command and serves it: on a
// SQLite data folder, or on a PostgreSQL database and an S3 bucket.
func bbrSetup(t *testing.T, postgres bool) *bbrWorld {
	t.Helper()
	w := &bbrWorld{work: t.TempDir()}
	data := t.TempDir()
	m := cli.NewMain()
	m.Config.Addr, m.Config.Data = "127.0.0.1:0", data
	if postgres {
		db, blob := testenv.PostgresURL(t), testenv.BucketURL(t)
		code, out, errOut := run(t, "signing-key", "generate")
		if code != 0 {
			t.Fatalf("signing-key generate: %s", errOut)
		}
		ring := strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
		secret := "bbr-shared-secret-" + bboRandom(t) + bboRandom(t) + bboRandom(t)
		w.storage = []string{"--db", db, "--blob", blob, "--data", t.TempDir(), "--secret", secret, "--signing-keyring", ring}
		m.Config.DB, m.Config.Blob, m.Config.Secret, m.Config.SigningKeyring = db, blob, secret, ring
	} else {
		w.storage = []string{"--data", data}
	}
	op := func(args ...string) string {
		t.Helper()
		return bb20Run(t, append(args, w.storage...)...)
	}
	team := bb20ID(t, op("team", "create", "--name", "Acme", "--plan", "professional", "--seats", "5"))
	w.ext = bb20ID(t, op("extension", "create", "--team", team, "--name", "Tab Tamer"))
	w.ext2 = bb20ID(t, op("extension", "create", "--team", team, "--name", "Second"))
	op("user", "create", "--team", team, "--email", "ada@example.com", "--password", bboPassword)
	w.keyFile = filepath.Join(w.work, "key.json")
	op("key", "create", "--extension", w.ext, "--label", "CI", "--out", w.keyFile)

	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	bb20Set(t, m, "WebhookAllowPrivate", true)
	bb20Set(t, m, "WebhookRetryMin", 100*time.Millisecond)
	if err := m.Run(context.Background()); err != nil {
		t.Fatalf("serve: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	w.base = m.URL()
	if !strings.HasPrefix(w.base, "http://127.0.0.1:") {
		t.Fatalf("the service serves at %s, not on 127.0.0.1", w.base)
	}
	w.admin = bb20SignIn(t, w.base, "ada@example.com")
	// The first token, made by the operator on the storage while it
	// serves.
	w.all, _ = w.makeToken(t, w.ext, "everything", strings.Join(bbrScopes, ","))
	return w
}

// makeToken makes a token of ext with "betaport token create" on the
// storage and returns its secret and id.
func (w *bbrWorld) makeToken(t *testing.T, ext, name, scopes string, more ...string) (secret, id string) {
	t.Helper()
	code, out, errOut := w.operator(t, append([]string{"token", "create", "--extension", ext, "--name", name, "--scopes", scopes}, more...)...)
	var c struct {
		Token struct {
			ID     int64    `json:"id"`
			Name   string   `json:"name"`
			Scopes []string `json:"scopes"`
		} `json:"token"`
		Secret string `json:"secret"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &c) != nil || c.Secret == "" || c.Token.ID == 0 {
		t.Fatalf("token create %s %s: exit %d\nstdout: %s\nstderr: %s", name, scopes, code, out, errOut)
	}
	if c.Token.Name != name || strings.Join(c.Token.Scopes, ",") != scopes && len(c.Token.Scopes) != len(strings.Split(scopes, ",")) {
		t.Errorf("token create %s %s made %+v", name, scopes, c.Token)
	}
	if strings.Contains(errOut, c.Secret) {
		t.Errorf("token create prints the secret on stderr too: %s", errOut)
	}
	return c.Secret, strconv.FormatInt(c.Token.ID, 10)
}

// submit publishes version with "betaport submit" and the key.
func (w *bbrWorld) submit(t *testing.T, version string, more ...string) {
	t.Helper()
	zip := filepath.Join(w.work, "dist-"+version+".zip")
	if err := os.WriteFile(zip, bb20Zip(t, version), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"submit", "--base-url", w.base, "--key", w.keyFile, "--quiet"}, more...)
	code, out, errOut := bbrCommand(t, nil, append(args, zip)...)
	if code != 0 {
		t.Fatalf("submit %s: exit %d\nstdout: %s\nstderr: %s", version, code, out, errOut)
	}
}

// api calls the API as the signed-in admin; body "" sends none.
func (w *bbrWorld) api(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	resp, b := bb20Do(t, w.admin, method, w.base+path, []byte(body), nil)
	return resp.StatusCode, b
}

func (w *bbrWorld) mustAPI(t *testing.T, method, path, body string, want int) []byte {
	t.Helper()
	code, b := w.api(t, method, path, body)
	if code != want {
		t.Fatalf("%s %s = %d %s; want %d", method, path, code, b, want)
	}
	return b
}

// invite invites a tester as the admin and returns the tester's id and
// invite link.
func (w *bbrWorld) invite(t *testing.T, email string) (id, link string) {
	t.Helper()
	b := w.mustAPI(t, "POST", "/api/extensions/"+w.ext+"/testers", fmt.Sprintf(`{"email":%q}`, email), 201)
	var inv struct {
		ID        int64  `json:"id"`
		InviteURL string `json:"inviteUrl"`
	}
	json.Unmarshal(b, &inv)
	if strings.HasPrefix(inv.InviteURL, "/") {
		inv.InviteURL = w.base + inv.InviteURL
	}
	return strconv.FormatInt(inv.ID, 10), inv.InviteURL
}

// report signs a new tester in through their link and sends a report from
// the builds page; it returns the report's id.
func (w *bbrWorld) report(t *testing.T, email, text string, screenshots ...[]byte) string {
	t.Helper()
	_, link := w.invite(t, email)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	r, err := c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("text", text)
	for i, png := range screenshots {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="screenshots"; filename="shot%d.png"`, i+1))
		h.Set("Content-Type", "image/png")
		part, _ := mw.CreatePart(h)
		part.Write(png)
	}
	mw.Close()
	req, _ := http.NewRequest("POST", w.base+"/api/extensions/"+w.ext+"/feedback", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var f struct {
		ID int64 `json:"id"`
	}
	if resp.StatusCode != 201 || json.Unmarshal(b, &f) != nil || f.ID == 0 {
		t.Fatalf("send a report: %d %s", resp.StatusCode, b)
	}
	return strconv.FormatInt(f.ID, 10)
}

// state is what a command could change on ext, as the admin reads it
// through the API.
func (w *bbrWorld) state(t *testing.T) string {
	t.Helper()
	var s strings.Builder
	for _, path := range []string{"/testers?limit=100", "/channels", "/keys?limit=100", "/webhooks?limit=100",
		"/feedback?limit=100", "/bundles?limit=100", "/audit?limit=100"} {
		code, b := w.api(t, "GET", "/api/extensions/"+w.ext+path, "")
		if code != 200 {
			t.Fatalf("GET %s = %d %s", path, code, b)
		}
		fmt.Fprintf(&s, "%s: %s\n", path, bbrStripVolatile(b))
	}
	return s.String()
}

// bbrStripVolatile drops what moves without a change (a key's or token's
// last use, the testers revision) from a JSON answer.
var bbrVolatile = regexp.MustCompile(`"(lastUsedAt|revision|lastSeenAt)":("[^"]*"|[0-9]+),?`)

func bbrStripVolatile(b []byte) string { return bbrVolatile.ReplaceAllString(string(b), "") }

// receiver is a webhook receiver on 127.0.0.1 counting what it gets.
func bbrReceiver(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n.Add(1)
		rw.WriteHeader(204)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// bbrEventually waits until cond holds, up to a minute (a safety net on
// a busy machine, not a measure).
func bbrEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// ------------------------------------------------------------ the walk

// bbrWalk runs every remote command with the token of every scope, without
// --extension (the token sees one extension), and checks what each prints
// and does.
func bbrWalk(t *testing.T, w *bbrWorld) {
	tok := w.all
	// Three bundles, the first with release notes.
	w.submit(t, "1.0.0", "--notes", "First build: the **popup** opens faster.")
	w.submit(t, "1.1.0")
	w.submit(t, "1.2.0")

	ext := bbrOne(t, "extension list", w.mustRemote(t, tok, "extension", "list"))
	if bbrID(ext) != w.ext || bbrStr(ext, "name") != "Tab Tamer" {
		t.Errorf("extension list shows %v, want extension %s alone", ext, w.ext)
	}

	bundles := bbrLines(t, "bundle list", w.mustRemote(t, tok, "bundle", "list"))
	if len(bundles) != 3 || bbrNum(bundles[0], "number") != 3 || bbrNum(bundles[2], "number") != 1 {
		t.Errorf("bundle list = %v; want bundles 3, 2, 1", bundles)
	}
	if got := bbrLines(t, "bundle list --limit 2", w.mustRemote(t, tok, "bundle", "list", "--limit", "2")); len(got) != 2 || bbrNum(got[0], "number") != 3 {
		t.Errorf("bundle list --limit 2 = %v", got)
	}
	if got := bbrLines(t, "bundle list --limit 0", w.mustRemote(t, tok, "bundle", "list", "--limit", "0")); len(got) != 3 {
		t.Errorf("bundle list --limit 0 = %d bundles, want all 3", len(got))
	}
	cur := bbrOne(t, "bundle current", w.mustRemote(t, tok, "bundle", "current"))
	if bbrNum(cur, "number") != 3 || bbrStr(cur, "version") != "1.2.0" {
		t.Errorf("bundle current = %v, want bundle 3 (1.2.0)", cur)
	}
	notes := w.mustRemote(t, tok, "bundle", "notes", "--bundle", "1")
	if !strings.Contains(notes, "the **popup** opens faster") && !strings.Contains(notes, `the **popup** opens faster`) {
		t.Errorf("bundle notes --bundle 1 printed %q, want the notes", notes)
	}
	if code, out, errOut := w.remote(t, tok, "bundle", "notes", "--bundle", "99"); code != 4 || out != "" {
		t.Errorf("bundle notes of no bundle: exit %d, stdout %q, stderr %s; want 4", code, out, errOut)
	}

	// Testers: two by the command, 23 by the admin (past one page of the
	// API's 20, so the list follows its cursor).
	tess := bbrOne(t, "tester invite", w.mustRemote(t, tok, "tester", "invite", "--email", "tess@example.com", "--name", "Tess"))
	if bbrStr(tess, "email") != "tess@example.com" || bbrStr(tess, "name") != "Tess" || !strings.Contains(bbrStr(tess, "inviteUrl"), "/t/") {
		t.Errorf("tester invite printed %v, want the tester and their invite link", tess)
	}
	tom := bbrOne(t, "tester invite", w.mustRemote(t, tok, "tester", "invite", "--email", "tom@example.com", "--channel", "beta", "--days", "3"))
	exp, _ := time.Parse(time.RFC3339, bbrStr(tom, "inviteExpiresAt"))
	if d := time.Until(exp); d < 71*time.Hour || d > 73*time.Hour {
		t.Errorf("tester invite --days 3: the link ends %v from now", d)
	}
	for i := range 23 {
		w.invite(t, fmt.Sprintf("bulk%02d@example.com", i))
	}
	all := bbrLines(t, "tester list", w.mustRemote(t, tok, "tester", "list"))
	ids := map[int64]bool{}
	for _, x := range all {
		ids[bbrNum(x, "id")] = true
	}
	if len(all) != 25 || len(ids) != 25 {
		t.Errorf("tester list printed %d testers (%d distinct), want 25 across the pages", len(all), len(ids))
	}
	if got := bbrLines(t, "tester list --limit 21", w.mustRemote(t, tok, "tester", "list", "--limit", "21")); len(got) != 21 {
		t.Errorf("tester list --limit 21 printed %d testers", len(got))
	}
	if got := bbrLines(t, "tester list --search tess", w.mustRemote(t, tok, "tester", "list", "--search", "tess")); len(got) != 1 || bbrStr(got[0], "email") != "tess@example.com" {
		t.Errorf("tester list --search tess = %v", got)
	}
	link := bbrOne(t, "tester link", w.mustRemote(t, tok, "tester", "link", "--tester", "tess@example.com", "--days", "2"))
	if bbrStr(link, "inviteUrl") == "" || bbrStr(link, "inviteUrl") == bbrStr(tess, "inviteUrl") {
		t.Errorf("tester link printed %v, want a new link", link)
	}
	// By id, then by e-mail.
	code, out, errOut := w.remote(t, tok, "tester", "revoke", "--tester", bbrID(tom))
	if code != 0 {
		t.Fatalf("tester revoke by id: exit %d: %s", code, errOut)
	}
	bbrLines(t, "tester revoke", out)
	revoked := bbrLines(t, "tester list --status revoked", w.mustRemote(t, tok, "tester", "list", "--status", "revoked"))
	if len(revoked) != 1 || bbrStr(revoked[0], "email") != "tom@example.com" {
		t.Errorf("after tester revoke, tester list --status revoked = %v", revoked)
	}
	restored := bbrOne(t, "tester restore", w.mustRemote(t, tok, "tester", "restore", "--tester", "TOM@example.com", "--days", "5"))
	if bbrStr(restored, "status") == "revoked" || bbrStr(restored, "inviteUrl") == "" {
		t.Errorf("tester restore (e-mail in another case) printed %v", restored)
	}
	// Unknown testers: exit 4, nothing on stdout, nothing changed.
	before := w.state(t)
	for _, who := range []string{"nobody@example.com", "987654"} {
		for _, cmd := range [][]string{{"tester", "revoke"}, {"tester", "link"}, {"tester", "restore"}, {"channel", "move", "--to", "beta"}} {
			args := append(append([]string(nil), cmd...), "--tester", who)
			if code, out, errOut := w.remote(t, tok, args...); code != 4 || out != "" || errOut == "" {
				t.Errorf("betaport %s: exit %d, stdout %q, stderr %q; want 4 and a message", strings.Join(args, " "), code, out, errOut)
			}
		}
	}
	if after := w.state(t); after != before {
		t.Errorf("commands on unknown testers changed things:\n%s\n%s", before, after)
	}

	// Channels and releases.
	ch := bbrOne(t, "channel create", w.mustRemote(t, tok, "channel", "create", "--name", "internal"))
	if bbrStr(ch, "name") != "internal" {
		t.Errorf("channel create printed %v", ch)
	}
	chans := bbrLines(t, "channel list", w.mustRemote(t, tok, "channel", "list"))
	var names []string
	for _, c := range chans {
		names = append(names, bbrStr(c, "name"))
	}
	if sort.Strings(names); strings.Join(names, ",") != "beta,internal" {
		t.Errorf("channel list = %v", names)
	}
	moved := bbrOne(t, "channel move", w.mustRemote(t, tok, "channel", "move", "--tester", "tess@example.com", "--to", "internal"))
	if bbrStr(moved, "channel") != "internal" || bbrStr(moved, "email") != "tess@example.com" {
		t.Errorf("channel move printed %v", moved)
	}
	moved = bbrOne(t, "channel move by id", w.mustRemote(t, tok, "channel", "move", "--tester", bbrID(tom), "--to", "internal"))
	if bbrStr(moved, "channel") != "internal" {
		t.Errorf("channel move by id printed %v", moved)
	}
	rollout := func(what string, args ...string) map[string]any {
		t.Helper()
		c := bbrOne(t, what, w.mustRemote(t, tok, args...))
		r, _ := c["rollout"].(map[string]any)
		if r == nil {
			return map[string]any{"currentBundle": c["currentBundle"]}
		}
		return r
	}
	if r := rollout("bundle promote", "bundle", "promote", "--bundle", "3", "--channel", "internal", "--percent", "10"); bbrNum(r, "percent") != 10 || bbrStr(r, "state") != "active" {
		t.Errorf("bundle promote --percent 10 gave rollout %v", r)
	}
	if r := rollout("rollout advance", "rollout", "advance", "--channel", "internal", "--percent", "30"); bbrNum(r, "percent") != 30 {
		t.Errorf("rollout advance gave %v", r)
	}
	if r := rollout("rollout halt", "rollout", "halt", "--channel", "internal"); bbrStr(r, "state") != "halted" {
		t.Errorf("rollout halt gave %v", r)
	}
	if r := rollout("rollout resume", "rollout", "resume", "--channel", "internal"); bbrStr(r, "state") != "active" {
		t.Errorf("rollout resume gave %v", r)
	}
	if r := rollout("rollout complete", "rollout", "complete", "--channel", "internal"); bbrNum(r, "currentBundle") != 3 {
		t.Errorf("rollout complete gave %v, want bundle 3 current on internal", r)
	}
	// A lower percentage is refused (exit 4) and changes nothing.
	rb := bbrOne(t, "bundle rollback", w.mustRemote(t, tok, "bundle", "rollback", "--to", "1"))
	if bbrNum(rb, "rollbackOf") != 1 || bbrNum(rb, "number") != 4 {
		t.Errorf("bundle rollback --to 1 printed %v, want bundle 4, a rollback of 1", rb)
	}
	if r := rollout("rollout start", "rollout", "start", "--channel", "internal", "--bundle", "4", "--percent", "5"); bbrNum(r, "percent") != 5 || bbrNum(r, "bundle") != 4 {
		t.Errorf("rollout start gave %v", r)
	}
	before = w.state(t)
	if code, out, errOut := w.remote(t, tok, "rollout", "advance", "--channel", "internal", "--percent", "2"); code != 4 || out != "" {
		t.Errorf("rollout advance to a lower percentage: exit %d, stdout %q, stderr %s; want 4", code, out, errOut)
	}
	if after := w.state(t); after != before {
		t.Errorf("a refused rollout advance changed things:\n%s\n%s", before, after)
	}

	// Keys: the secret goes to the file, never to stdout or stderr.
	keyPath := filepath.Join(w.work, "remote-key.json")
	code, out, errOut = w.remote(t, tok, "key", "create", "--label", "Remote CI", "--out", keyPath)
	if code != 0 {
		t.Fatalf("key create: exit %d: %s", code, errOut)
	}
	kb, err := os.ReadFile(keyPath)
	var kf struct {
		Service struct {
			ExtensionID string `json:"extensionId"`
			APIKey      string `json:"apiKey"`
		} `json:"service"`
	}
	if err != nil || json.Unmarshal(kb, &kf) != nil || kf.Service.APIKey == "" || kf.Service.ExtensionID != w.ext {
		t.Fatalf("key create wrote %q (%v)", kb, err)
	}
	if strings.Contains(out, kf.Service.APIKey) || strings.Contains(errOut, kf.Service.APIKey) {
		t.Errorf("key create printed the key's secret:\nstdout: %s\nstderr: %s", out, errOut)
	}
	if fi, err := os.Stat(keyPath); err == nil && fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("the key file is readable by others: %v", fi.Mode())
	}
	newKey := bbrOne(t, "key create", out)
	if bbrStr(newKey, "label") != "Remote CI" {
		t.Errorf("key create printed %v", newKey)
	}
	// It does not overwrite a file.
	if code, out, _ := w.remote(t, tok, "key", "create", "--label", "Again", "--out", keyPath); code == 0 || out != "" {
		t.Errorf("key create onto an existing file: exit %d, stdout %q", code, out)
	}
	if again, _ := os.ReadFile(keyPath); !bytes.Equal(again, kb) {
		t.Errorf("key create overwrote the key file")
	}
	keys := bbrLines(t, "key list", w.mustRemote(t, tok, "key", "list"))
	if len(keys) < 2 || strings.Contains(fmt.Sprint(keys), kf.Service.APIKey) {
		t.Errorf("key list = %v", keys)
	}
	kr := bbrOne(t, "key revoke", w.mustRemote(t, tok, "key", "revoke", "--key", bbrID(newKey)))
	if bbrStr(kr, "revokedAt") == "" {
		t.Errorf("key revoke printed %v", kr)
	}

	// Webhooks, to a receiver on 127.0.0.1.
	recv, hits := bbrReceiver(t)
	hook := bbrOne(t, "webhook create", w.mustRemote(t, tok, "webhook", "create", "--url", recv.URL+"/hook"))
	if bbrStr(hook, "url") != recv.URL+"/hook" {
		t.Errorf("webhook create printed %v", hook)
	}
	if hooks := bbrLines(t, "webhook list", w.mustRemote(t, tok, "webhook", "list")); len(hooks) != 1 || bbrStr(hooks[0], "secret") != "" {
		t.Errorf("webhook list = %v, want the webhook without its secret", hooks)
	}
	n := hits.Load()
	code, out, errOut = w.remote(t, tok, "webhook", "test", "--webhook", bbrID(hook))
	if code != 0 {
		t.Errorf("webhook test: exit %d: %s", code, errOut)
	}
	bbrLines(t, "webhook test", out)
	bbrEventually(t, "the test event at the receiver", func() bool { return hits.Load() > n })
	code, out, errOut = w.remote(t, tok, "webhook", "delete", "--webhook", bbrID(hook))
	if code != 0 {
		t.Errorf("webhook delete: exit %d: %s", code, errOut)
	}
	bbrLines(t, "webhook delete", out)
	if hooks := bbrLines(t, "webhook list", w.mustRemote(t, tok, "webhook", "list")); len(hooks) != 0 {
		t.Errorf("webhook list after the delete = %v", hooks)
	}

	// Feedback: a tester's report, resolved and reopened.
	id := w.report(t, "reporter@example.com", "The popup is blank on the second click")
	fb := bbrLines(t, "feedback list", w.mustRemote(t, tok, "feedback", "list"))
	if len(fb) != 1 || bbrID(fb[0]) != id {
		t.Errorf("feedback list = %v, want report %s", fb, id)
	}
	if r := bbrOne(t, "feedback resolve", w.mustRemote(t, tok, "feedback", "resolve", "--report", id)); bbrStr(r, "status") != "resolved" {
		t.Errorf("feedback resolve printed %v", r)
	}
	if got := bbrLines(t, "feedback list --status open", w.mustRemote(t, tok, "feedback", "list", "--status", "open")); len(got) != 0 {
		t.Errorf("feedback list --status open after the resolve = %v", got)
	}
	if r := bbrOne(t, "feedback reopen", w.mustRemote(t, tok, "feedback", "reopen", "--report", id)); bbrStr(r, "status") == "resolved" || bbrStr(r, "status") == "" {
		t.Errorf("feedback reopen printed %v", r)
	}
	if got := bbrLines(t, "feedback list --status open --limit 1", w.mustRemote(t, tok, "feedback", "list", "--status", "open", "--limit", "1")); len(got) != 1 {
		t.Errorf("feedback list --status open after the reopen = %v", got)
	}

	// The audit trail names the token, newest first; --limit cuts it.
	events := bbrLines(t, "audit list", w.mustRemote(t, tok, "audit", "list"))
	if len(events) < 30 {
		t.Errorf("audit list printed %d events, want every one (over 30)", len(events))
	}
	byToken := 0
	for i, ev := range events {
		if i > 0 && bbrNum(ev, "id") >= bbrNum(events[i-1], "id") {
			t.Errorf("audit list is not newest first at %v", ev)
		}
		if strings.Contains(bbrStr(ev, "actor"), "everything") {
			byToken++
		}
	}
	if byToken < 10 {
		t.Errorf("only %d audit events name the token \"everything\": %v", byToken, events[:min(5, len(events))])
	}
	if got := bbrLines(t, "audit list --limit 5", w.mustRemote(t, tok, "audit", "list", "--limit", "5")); len(got) != 5 || bbrNum(got[0], "id") != bbrNum(events[0], "id") {
		t.Errorf("audit list --limit 5 = %v", got)
	}
	code, out, errOut = w.remote(t, tok, "adoption", "--days", "7")
	if code != 0 {
		t.Errorf("adoption: exit %d: %s", code, errOut)
	}
	bbrLines(t, "adoption", out)

	// --table prints a table; --extension names the token's own extension.
	code, out, errOut = w.remote(t, tok, "tester", "list", "--table", "--limit", "3")
	if code != 0 || json.Valid([]byte(strings.SplitN(out, "\n", 2)[0])) || !strings.Contains(strings.ToUpper(out), "EMAIL") || strings.Count(out, "\n") != 4 {
		t.Errorf("tester list --table: exit %d, stdout:\n%s\nstderr: %s; want a header and 3 rows", code, out, errOut)
	}
	if got := bbrLines(t, "--extension "+w.ext, w.mustRemote(t, tok, "channel", "list", "--extension", w.ext)); len(got) != 2 {
		t.Errorf("channel list --extension %s = %v", w.ext, got)
	}
	// The flags win over the environment.
	code, out, errOut = bbrCommand(t, []string{"BETAPORT_SERVER=http://127.0.0.1:1", "BETAPORT_TOKEN=bpt_wrong"},
		"bundle", "current", "--server", w.base, "--token", tok)
	if code != 0 || bbrNum(bbrOne(t, "bundle current with flags", out), "number") != 4 {
		t.Errorf("bundle current with --server and --token over the environment: exit %d, %s %s", code, out, errOut)
	}
}

// ------------------------------------------------------------ refusals

// bbrRefusals: a token lacking a command's scope, an expired and a revoked
// token (exit 3, nothing changed), another extension (refused), and a
// missing token (exit 2).
func bbrRefusals(t *testing.T, w *bbrWorld) {
	w.submit(t, "2.0.0")
	w.mustRemote(t, w.all, "tester", "invite", "--email", "kim@example.com")
	ro, _ := w.makeToken(t, w.ext, "read only", "read")
	before := w.state(t)
	for _, c := range []struct {
		scope string
		args  []string
	}{
		{"testers", []string{"tester", "invite", "--email", "new@example.com"}},
		{"testers", []string{"tester", "revoke", "--tester", "kim@example.com"}},
		{"releases", []string{"channel", "create", "--name", "nightly"}},
		{"releases", []string{"bundle", "rollback", "--to", "1"}},
		{"settings", []string{"key", "create", "--label", "x", "--out", filepath.Join(w.work, "never.json")}},
		{"settings", []string{"webhook", "create", "--url", "http://127.0.0.1:9/x"}},
	} {
		code, out, errOut := w.remote(t, ro, c.args...)
		if code != 3 || out != "" || !strings.Contains(errOut, c.scope) {
			t.Errorf("betaport %s with a read token: exit %d, stdout %q, stderr %q; want 3 and a message naming %q",
				strings.Join(c.args, " "), code, out, errOut, c.scope)
		}
	}
	if _, err := os.Stat(filepath.Join(w.work, "never.json")); err == nil {
		t.Errorf("a refused key create wrote its key file")
	}
	if after := w.state(t); after != before {
		t.Errorf("refused commands changed things:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// The read token reads.
	kim := false
	for _, x := range bbrLines(t, "tester list", w.mustRemote(t, ro, "tester", "list", "--search", "kim@")) {
		kim = kim || bbrStr(x, "email") == "kim@example.com"
	}
	if !kim {
		t.Errorf("tester list with the read token does not show kim@example.com")
	}

	// Revoked with the operator's command: refused on the very next call.
	rv, rvID := w.makeToken(t, w.ext, "to revoke", "read,testers")
	w.mustRemote(t, rv, "tester", "list")
	if code, out, errOut := w.operator(t, "token", "revoke", "--extension", w.ext, "--token", rvID); code != 0 {
		t.Fatalf("token revoke: exit %d %s %s", code, out, errOut)
	}
	for _, args := range [][]string{{"tester", "list"}, {"tester", "invite", "--email", "late@example.com"}, {"extension", "list"}} {
		if code, out, errOut := w.remote(t, rv, args...); code != 3 || out != "" || errOut == "" {
			t.Errorf("betaport %s with a revoked token: exit %d, stdout %q, stderr %q; want 3", strings.Join(args, " "), code, out, errOut)
		}
	}
	// Revoked by the admin through the API.
	rv2, rv2ID := w.makeToken(t, w.ext, "to revoke 2", "read")
	w.mustAPI(t, "DELETE", "/api/extensions/"+w.ext+"/tokens/"+rv2ID, "", 200)
	if code, out, _ := w.remote(t, rv2, "bundle", "list"); code != 3 || out != "" {
		t.Errorf("bundle list with a token the admin revoked: exit %d, stdout %q; want 3", code, out)
	}

	// Expired: made by the admin through the API, two to three seconds
	// ahead; refused once the clock passed it.
	exp := time.Now().Add(3 * time.Second).Truncate(time.Second).UTC()
	b := w.mustAPI(t, "POST", "/api/extensions/"+w.ext+"/tokens",
		fmt.Sprintf(`{"name":"short-lived","scopes":["read"],"expiresAt":%q}`, exp.Format(time.RFC3339)), 201)
	var created struct {
		Secret string `json:"secret"`
	}
	json.Unmarshal(b, &created)
	if code, _, errOut := w.remote(t, created.Secret, "bundle", "current"); code != 0 && time.Now().Before(exp) {
		t.Errorf("bundle current with a token not yet expired: exit %d %s", code, errOut)
	}
	for time.Now().Before(exp.Add(time.Millisecond)) {
		time.Sleep(time.Until(exp.Add(time.Millisecond)))
	}
	if code, out, errOut := w.remote(t, created.Secret, "bundle", "current"); code != 3 || out != "" || !strings.Contains(strings.ToLower(errOut), "expire") {
		t.Errorf("bundle current with an expired token: exit %d, stdout %q, stderr %q; want 3 and a message that it expired", code, out, errOut)
	}

	// Another extension's id: refused, and ext2 is untouched.
	for _, args := range [][]string{{"tester", "list", "--extension", w.ext2}, {"tester", "invite", "--extension", w.ext2, "--email", "cross@example.com"}} {
		if code, out, errOut := w.remote(t, w.all, args...); (code != 3 && code != 4) || out != "" {
			t.Errorf("betaport %s with ext's token: exit %d, stdout %q, stderr %q; want refused (3 or 4)", strings.Join(args, " "), code, out, errOut)
		}
	}
	if code, b := w.api(t, "GET", "/api/extensions/"+w.ext2+"/testers", ""); code != 200 || strings.Contains(string(b), "cross@example.com") {
		t.Errorf("ext2's testers after a refused invite: %d %s", code, b)
	}

	// No token, an empty one: usage (2), without a request.
	for _, extra := range [][]string{{"BETAPORT_SERVER=" + w.base}, {"BETAPORT_SERVER=" + w.base, "BETAPORT_TOKEN="}} {
		if code, out, errOut := bbrCommand(t, extra, "tester", "list"); code != 2 || out != "" || !strings.Contains(errOut, "BETAPORT_TOKEN") {
			t.Errorf("tester list with %v: exit %d, stdout %q, stderr %q; want 2 naming BETAPORT_TOKEN", extra, code, out, errOut)
		}
	}
	// A garbage token: 3.
	for _, tok := range []string{"bpt_" + strings.Repeat("x", 43), "not a token at all", strings.Repeat("A", 10<<10)} {
		if code, out, errOut := w.remote(t, tok, "tester", "list"); code != 3 || out != "" {
			t.Errorf("tester list with token %.20q…: exit %d, stdout %q, stderr %q; want 3", tok, code, out, errOut)
		}
	}
}

// TestBBRemoteWalkOnSQLite walks every remote command on a SQLite data
// folder (bbrWalk).
func TestBBRemoteWalkOnSQLite(t *testing.T) {
	t.Parallel()
	bbrWalk(t, bbrSetup(t, false))
}

// TestBBRemoteRefusalsOnSQLite: the refusals (bbrRefusals) on a SQLite
// data folder.
func TestBBRemoteRefusalsOnSQLite(t *testing.T) {
	t.Parallel()
	bbrRefusals(t, bbrSetup(t, false))
}

// TestBBRemoteWalkOnPostgreSQL walks every remote command on PostgreSQL
// and S3 (bbrWalk), the first token made with "betaport token create" and
// the storage flags. The cluster and the gateway testenv starts are
// stopped by TestMain, after every test that shares them.
func TestBBRemoteWalkOnPostgreSQL(t *testing.T) {
	t.Parallel()
	testenv.SkipIfAsked(t)
	bbrWalk(t, bbrSetup(t, true))
}

// TestBBRemoteRefusalsOnPostgreSQL: the refusals (bbrRefusals) on
// PostgreSQL and S3.
func TestBBRemoteRefusalsOnPostgreSQL(t *testing.T) {
	t.Parallel()
	testenv.SkipIfAsked(t)
	bbrRefusals(t, bbrSetup(t, true))
}

// ------------------------------------------------------------ each scope

// bbrHelpCommands reads the remote commands and their scopes from
// "betaport help".
func bbrHelpCommands(t *testing.T) map[string]string {
	t.Helper()
	code, out, errOut := bbrCommand(t, nil, "help")
	text := out + errOut
	if code != 0 {
		t.Fatalf("betaport help: exit %d\n%s", code, text)
	}
	_, after, ok := strings.Cut(text, "An admin's commands on a running service")
	if !ok {
		t.Fatalf("betaport help has no remote commands:\n%s", text)
	}
	cmds := map[string]string{}
	line := regexp.MustCompile(`(?m)^\s+betaport ([a-z-]+(?: [a-z]+)?)\s.*\[(read|testers|releases|feedback|settings)\]\s*$`)
	for _, m := range line.FindAllStringSubmatch(after, -1) {
		cmds[m[1]] = m[2]
	}
	if len(cmds) < 20 {
		t.Fatalf("read %d remote commands from betaport help:\n%s", len(cmds), after)
	}
	return cmds
}

// bbrScoped is a world with what every remote command acts on, and the
// commands of "betaport help" in an order where each finds what it needs.
type bbrScoped struct {
	*bbrWorld
	help   map[string]string // command: its scope
	walk   []bbrStep
	keyOut string
	hits   *atomic.Int64
}

type bbrStep struct {
	cmd  string
	args []string
}

func bbrScopedSetup(t *testing.T) *bbrScoped {
	t.Helper()
	w := bbrSetup(t, false)
	help := bbrHelpCommands(t)

	// What the commands act on.
	w.submit(t, "1.0.0", "--notes", "Notes of one")
	w.submit(t, "1.1.0")
	w.submit(t, "1.2.0")
	w.mustAPI(t, "POST", "/api/extensions/"+w.ext+"/channels", `{"name":"internal"}`, 201)
	w.invite(t, "move@example.com")
	w.invite(t, "link@example.com")
	w.invite(t, "revoke@example.com")
	restoreID, _ := w.invite(t, "restore@example.com")
	w.mustAPI(t, "DELETE", "/api/extensions/"+w.ext+"/testers/"+restoreID, "", 204)
	toReopen := w.report(t, "reporter1@example.com", "First report")
	toResolve := w.report(t, "reporter2@example.com", "Second report")
	var shot bytes.Buffer
	png.Encode(&shot, image.NewGray(image.Rect(0, 0, 32, 20)))
	toDelete := w.report(t, "reporter3@example.com", "Third report, with a screenshot", shot.Bytes())
	w.mustAPI(t, "POST", "/api/extensions/"+w.ext+"/feedback/"+toReopen+"/status", `{"status":"resolved"}`, 200)
	var key struct {
		Key struct {
			ID int64 `json:"id"`
		} `json:"key"`
	}
	json.Unmarshal(w.mustAPI(t, "POST", "/api/extensions/"+w.ext+"/keys", `{"label":"to revoke"}`, 201), &key)
	recv, hits := bbrReceiver(t)
	var hook struct {
		ID int64 `json:"id"`
	}
	json.Unmarshal(w.mustAPI(t, "POST", "/api/extensions/"+w.ext+"/webhooks", fmt.Sprintf(`{"url":%q}`, recv.URL+"/a"), 201), &hook)
	var hook2 struct {
		ID int64 `json:"id"`
	}
	json.Unmarshal(w.mustAPI(t, "POST", "/api/extensions/"+w.ext+"/webhooks", fmt.Sprintf(`{"url":%q}`, recv.URL+"/b"), 201), &hook2)
	keyOut := filepath.Join(w.work, "scoped-key.json")

	// In an order where each command finds what it needs.
	walk := []bbrStep{
		{"extension list", nil},
		{"adoption", []string{"--days", "3"}},
		{"audit list", []string{"--limit", "3"}},
		{"bundle list", []string{"--limit", "2"}},
		{"bundle current", nil},
		{"bundle notes", []string{"--bundle", "1"}},
		{"channel list", nil},
		{"key list", nil},
		{"tester list", []string{"--limit", "2"}},
		{"webhook list", nil},
		{"feedback list", []string{"--status", "new"}},
		{"channel create", []string{"--name", "canary"}},
		{"bundle promote", []string{"--bundle", "3", "--channel", "internal", "--percent", "10"}},
		{"rollout advance", []string{"--channel", "internal", "--percent", "20"}},
		{"rollout halt", []string{"--channel", "internal"}},
		{"rollout resume", []string{"--channel", "internal"}},
		{"rollout complete", []string{"--channel", "internal"}},
		{"bundle rollback", []string{"--to", "1"}},
		{"rollout start", []string{"--channel", "internal", "--bundle", "4", "--percent", "5"}},
		{"channel move", []string{"--tester", "move@example.com", "--to", "internal"}},
		{"tester invite", []string{"--email", "scoped@example.com"}},
		{"tester link", []string{"--tester", "link@example.com"}},
		{"tester revoke", []string{"--tester", "revoke@example.com"}},
		{"tester restore", []string{"--tester", "restore@example.com"}},
		{"feedback resolve", []string{"--report", toResolve}},
		{"feedback reopen", []string{"--report", toReopen}},
		{"feedback screenshot", []string{"--report", toDelete, "--out", filepath.Join(w.work, "scoped-shot.png")}},
		{"feedback delete", []string{"--report", toDelete}},
		{"bundle download", []string{"--bundle", "1", "--out", filepath.Join(w.work, "scoped-download.zip")}},
		{"installs", nil},
		{"policy", []string{"--system", "windows", "--out", filepath.Join(w.work, "scoped-policy.reg")}},
		{"update-url show", nil},
		{"update-url rotate", nil},
		{"key create", []string{"--label", "scoped", "--out", keyOut}},
		{"key revoke", []string{"--key", strconv.FormatInt(key.Key.ID, 10)}},
		{"webhook create", []string{"--url", recv.URL + "/c"}},
		{"webhook test", []string{"--webhook", strconv.FormatInt(hook.ID, 10)}},
		{"webhook delete", []string{"--webhook", strconv.FormatInt(hook2.ID, 10)}},
		{"webhook deliveries", []string{"--webhook", strconv.FormatInt(hook.ID, 10)}},
	}
	var walked []string
	for _, c := range walk {
		walked = append(walked, c.cmd)
	}
	var listed []string
	for c := range help {
		listed = append(listed, c)
	}
	sort.Strings(walked)
	sort.Strings(listed)
	if !slices.Equal(walked, listed) {
		t.Errorf("betaport help lists the remote commands\n%v\nthe test walks\n%v", listed, walked)
	}

	return &bbrScoped{bbrWorld: w, help: help, walk: walk, keyOut: keyOut, hits: hits}
}

// TestBBRemoteEachCommandRefusedWithoutItsScope: for every remote command
// in "betaport help", a token of every scope but the one in brackets is
// refused: exit 3, nothing on stdout, a message naming the scope, and
// nothing changed (no key file written, no webhook event).
func TestBBRemoteEachCommandRefusedWithoutItsScope(t *testing.T) {
	t.Parallel()
	w := bbrScopedSetup(t)
	allBut := map[string]string{}
	for _, s := range bbrScopes {
		var rest []string
		for _, r := range bbrScopes {
			if r != s {
				rest = append(rest, r)
			}
		}
		allBut[s], _ = w.makeToken(t, w.ext, "all but "+s, strings.Join(rest, ","))
	}
	before := w.state(t)
	for _, c := range w.walk {
		scope := w.help[c.cmd]
		args := append(strings.Fields(c.cmd), c.args...)
		code, out, errOut := w.remote(t, allBut[scope], args...)
		if code != 3 || out != "" || !strings.Contains(errOut, scope) {
			t.Errorf("betaport %s with a token of every scope but %s: exit %d, stdout %q, stderr %q; want 3 naming %s",
				strings.Join(args, " "), scope, code, out, errOut, scope)
		}
	}
	if after := w.state(t); after != before {
		t.Errorf("commands refused for lack of their scope changed things:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if n := w.hits.Load(); n != 0 {
		t.Errorf("commands refused for lack of their scope sent %d webhook events", n)
	}
	if _, err := os.Stat(w.keyOut); err == nil {
		t.Errorf("a refused key create wrote its key file")
	}
}

// TestBBRemoteEachCommandRunsWithItsScopeAlone: for every remote command
// in "betaport help", a token of the scope in brackets alone runs it
// without --extension (the token sees one extension): exit 0, JSON lines
// on stdout. When that fails, the same with --extension tells whether the
// omitted flag or the command itself needs more than its scope.
func TestBBRemoteEachCommandRunsWithItsScopeAlone(t *testing.T) {
	t.Parallel()
	w := bbrScopedSetup(t)
	only := map[string]string{}
	for _, s := range bbrScopes {
		only[s], _ = w.makeToken(t, w.ext, "only "+s, s)
	}
	for _, c := range w.walk {
		scope := w.help[c.cmd]
		args := append(strings.Fields(c.cmd), c.args...)
		code, out, errOut := w.remote(t, only[scope], args...)
		if code != 0 {
			t.Errorf("betaport %s with a token of %s alone, without --extension (the token sees one): exit %d, stdout %q, stderr %q; want 0 ([%s] in betaport help)",
				strings.Join(args, " "), scope, code, out, errOut, scope)
			withExt := append(append([]string(nil), args...), "--extension", w.ext)
			code, out, errOut = w.remote(t, only[scope], withExt...)
			if code != 0 {
				t.Errorf("betaport %s with a token of %s alone: exit %d, stdout %q, stderr %q; want 0 ([%s] in betaport help)",
					strings.Join(withExt, " "), scope, code, out, errOut, scope)
				continue
			}
		}
		if c.cmd == "bundle notes" {
			if !strings.Contains(out, "Notes of one") {
				t.Errorf("bundle notes printed %q", out)
			}
			if !json.Valid([]byte(strings.TrimSpace(out))) {
				t.Errorf("bundle notes printed %q: not JSON, though the remote commands' output is JSON on stdout", out)
			}
			continue
		}
		bbrLines(t, "betaport "+strings.Join(args, " "), out)
	}
	if w.hits.Load() == 0 {
		t.Errorf("webhook test sent nothing to the receiver")
	}
}

// ------------------------------------------------------------ servers

// TestBBRemoteWrongServer: an address that is not a service's is usage
// (2) before any request; one where nothing listens, https to plain HTTP
// and a name that does not resolve are 5; stdout stays empty.
func TestBBRemoteWrongServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { rw.WriteHeader(500) }))
	t.Cleanup(plain.Close)
	for _, c := range []struct {
		server string
		want   int
	}{
		{"notaurl", 2},
		{"ftp://127.0.0.1/", 2},
		{"127.0.0.1:8080", 2},
		{"http://", 2},
		{closed, 5},
		{"https://" + strings.TrimPrefix(plain.URL, "http://"), 5},
		{"http://no-such-host.invalid", 5},
		{plain.URL, 5},
	} {
		for _, args := range [][]string{{"tester", "list"}, {"tester", "invite", "--email", "a@example.com"}, {"bundle", "current", "--extension", "1"}} {
			start := time.Now()
			code, out, errOut := bbrCommand(t, []string{"BETAPORT_SERVER=" + c.server, "BETAPORT_TOKEN=bpt_" + strings.Repeat("x", 43)}, args...)
			if code != c.want || out != "" || errOut == "" {
				t.Errorf("betaport %s --server %s: exit %d, stdout %q, stderr %q; want %d and a message", strings.Join(args, " "), c.server, code, out, errOut, c.want)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("betaport %s --server %s took %s", strings.Join(args, " "), c.server, d)
			}
		}
	}
}

// TestBBRemoteAnotherServerIsNotARefusal: a --server that answers, but is
// not Betaport (a web server's 404 page, an HTML page for every path), is
// a failure of the service (5) or of the command (1), never "the request
// is refused" (4) nor a success.
func TestBBRemoteAnotherServerIsNotARefusal(t *testing.T) {
	t.Parallel()
	notFound := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html")
		rw.WriteHeader(404)
		io.WriteString(rw, "<html><body>Not Found</body></html>")
	}))
	t.Cleanup(notFound.Close)
	page := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html")
		io.WriteString(rw, "<html><body>It works!</body></html>")
	}))
	t.Cleanup(page.Close)
	for _, server := range []string{notFound.URL, page.URL} {
		for _, args := range [][]string{{"tester", "list"}, {"tester", "invite", "--email", "a@example.com"}, {"bundle", "current", "--extension", "1"}} {
			code, out, errOut := bbrCommand(t, []string{"BETAPORT_SERVER=" + server, "BETAPORT_TOKEN=bpt_" + strings.Repeat("x", 43)}, args...)
			if (code != 5 && code != 1) || out != "" {
				t.Errorf("betaport %s against a server that is not Betaport (%s): exit %d, stdout %q, stderr %q; want 5 (or 1)",
					strings.Join(args, " "), server, code, out, errOut)
			}
		}
	}
}

// TestBBRemoteUsage: usage mistakes of the remote commands are exit 2,
// one message on stderr, nothing on stdout, and no request (the server
// sees none).
func TestBBRemoteUsage(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		rw.WriteHeader(500)
	}))
	t.Cleanup(srv.Close)
	env := []string{"BETAPORT_SERVER=" + srv.URL, "BETAPORT_TOKEN=bpt_" + strings.Repeat("x", 43)}
	for _, args := range [][]string{
		{"tester", "list", "--limit", "x"},
		{"tester", "list", "--limit", "-1"},
		{"bundle", "list", "--limit", "-5"},
		{"tester", "revoke"},
		{"tester", "invite"},
		{"bundle", "notes"},
		{"rollout", "advance", "--channel", "beta"},
		{"webhook", "create"},
		{"key", "create", "--label", "x"},
		{"tester", "list", "--bogus"},
		{"tester", "frobnicate"},
	} {
		// Without --extension (the CLI would ask the service which one),
		// and with it.
		for _, a := range [][]string{args, append(append([]string(nil), args...), "--extension", "1")} {
			n := requests.Load()
			code, out, errOut := bbrCommand(t, env, a...)
			if code != 2 || out != "" || strings.TrimSpace(errOut) == "" {
				t.Errorf("betaport %s: exit %d, stdout %q, stderr %q; want 2 with a message", strings.Join(a, " "), code, out, errOut)
			}
			if m := requests.Load(); m != n {
				t.Errorf("betaport %s, a usage mistake, sent %d requests before saying so", strings.Join(a, " "), m-n)
			}
		}
	}
	// -h of each remote command names --server and --token, exit 0.
	for _, args := range [][]string{{"tester", "list", "-h"}, {"audit", "list", "--help"}, {"adoption", "-h"}, {"webhook", "test", "-h"}} {
		code, out, errOut := bbrCommand(t, env, args...)
		if code != 0 || !strings.Contains(out+errOut, "-server") || !strings.Contains(out+errOut, "-token") {
			t.Errorf("betaport %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
}

// ------------------------------------------------------------ operator

// TestBBRemoteOperatorTokenCommands: "betaport token create|list|revoke"
// on the data folder: the secret is printed once (on stdout, as JSON), the
// list shows no secret, a revoke ends the token at once; mistakes make
// nothing.
func TestBBRemoteOperatorTokenCommands(t *testing.T) {
	t.Parallel()
	w := bbrSetup(t, false)
	listTokens := func(ext string) (string, []map[string]any) {
		t.Helper()
		code, out, errOut := w.operator(t, "token", "list", "--extension", ext)
		if code != 0 {
			t.Fatalf("token list: exit %d %s", code, errOut)
		}
		var list []map[string]any
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			// One object a line is fine too.
			list = bbrLines(t, "token list", out)
		}
		return out, list
	}
	secret, id := w.makeToken(t, w.ext, "nightly", "read,testers", "--days", "30")
	raw, list := listTokens(w.ext)
	if strings.Contains(raw, secret) || strings.Contains(raw, `"secret"`) {
		t.Errorf("token list shows a secret: %s", raw)
	}
	var found map[string]any
	for _, tk := range list {
		if bbrID(tk) == id {
			found = tk
		}
	}
	if found == nil || bbrStr(found, "name") != "nightly" || bbrStr(found, "expiresAt") == "" {
		t.Fatalf("token list = %s; want nightly with its expiry", raw)
	}
	if exp, err := time.Parse(time.RFC3339, bbrStr(found, "expiresAt")); err != nil || time.Until(exp) < 29*24*time.Hour || time.Until(exp) > 31*24*time.Hour {
		t.Errorf("--days 30 made a token ending at %s", bbrStr(found, "expiresAt"))
	}
	// Its secret works remotely, with its scopes only.
	w.mustRemote(t, secret, "tester", "invite", "--email", "by-nightly@example.com")
	if code, _, _ := w.remote(t, secret, "channel", "create", "--name", "x"); code != 3 {
		t.Errorf("channel create with a read,testers token: exit %d, want 3", code)
	}
	// The admin's list shows the operator's tokens, and their last use.
	code, b := w.api(t, "GET", "/api/extensions/"+w.ext+"/tokens", "")
	if code != 200 || !strings.Contains(string(b), `"nightly"`) || strings.Contains(string(b), secret) {
		t.Errorf("the admin's token list = %d %s", code, b)
	}
	bbrEventually(t, "the token's last use in the list", func() bool {
		_, list := listTokens(w.ext)
		for _, tk := range list {
			if bbrID(tk) == id && bbrStr(tk, "lastUsedAt") != "" {
				return true
			}
		}
		return false
	})
	// ext2's list is its own.
	if _, l2 := listTokens(w.ext2); len(l2) != 0 {
		t.Errorf("ext2's token list = %v", l2)
	}

	before, _ := listTokens(w.ext)
	for _, args := range [][]string{
		{"token", "create", "--extension", w.ext, "--name", "x", "--scopes", "admin"},
		{"token", "create", "--extension", w.ext, "--name", "x", "--scopes", "read,write"},
		{"token", "create", "--extension", w.ext, "--name", "x", "--scopes", ""},
		{"token", "create", "--extension", w.ext, "--name", "", "--scopes", "read"},
		{"token", "create", "--extension", w.ext, "--name", strings.Repeat("n", 1000), "--scopes", "read"},
		{"token", "create", "--extension", w.ext, "--name", "x", "--scopes", "read", "--days", "0"},
		{"token", "create", "--extension", w.ext, "--name", "x", "--scopes", "read", "--days", "367"},
		{"token", "create", "--extension", w.ext, "--name", "x", "--scopes", "read", "--days", "-1"},
		{"token", "create", "--extension", w.ext, "--name", "x"},
		{"token", "create", "--extension", "999", "--name", "x", "--scopes", "read"},
		{"token", "create", "--name", "x", "--scopes", "read"},
		{"token", "revoke", "--extension", w.ext, "--token", "999"},
		{"token", "revoke", "--extension", w.ext2, "--token", id},
		{"token", "revoke", "--extension", w.ext},
	} {
		code, out, errOut := w.operator(t, args...)
		if (code != 1 && code != 2) || out != "" || errOut == "" {
			t.Errorf("betaport %s: exit %d, stdout %q, stderr %q; want 1 or 2 with a message", strings.Join(args, " "), code, out, errOut)
		}
	}
	if after, _ := listTokens(w.ext); bbrStripVolatile([]byte(after)) != bbrStripVolatile([]byte(before)) {
		t.Errorf("refused token commands changed the list:\n%s\n%s", before, after)
	}
	w.mustRemote(t, secret, "tester", "list")

	// A data folder that does not exist is refused, and not made.
	missing := filepath.Join(t.TempDir(), "no-such-data")
	for _, args := range [][]string{
		{"token", "create", "--data", missing, "--extension", "1", "--name", "x", "--scopes", "read"},
		{"token", "list", "--data", missing, "--extension", "1"},
		{"token", "revoke", "--data", missing, "--extension", "1", "--token", "1"},
	} {
		code, out, _ := bbrCommand(t, nil, args...)
		if code == 0 || out != "" {
			t.Errorf("betaport %s: exit %d, stdout %q; want refused", strings.Join(args, " "), code, out)
		}
		if _, err := os.Stat(missing); err == nil {
			t.Fatalf("betaport %s made the data folder", strings.Join(args, " "))
		}
	}

	// Revoke: at once, twice is fine, and the list shows when.
	if code, out, errOut := w.operator(t, "token", "revoke", "--extension", w.ext, "--token", id); code != 0 {
		t.Fatalf("token revoke: exit %d %s %s", code, out, errOut)
	}
	if code, out, _ := w.remote(t, secret, "tester", "list"); code != 3 || out != "" {
		t.Errorf("tester list with the revoked token: exit %d, stdout %q; want 3", code, out)
	}
	if code, _, errOut := w.operator(t, "token", "revoke", "--extension", w.ext, "--token", id); code != 0 {
		t.Errorf("a second token revoke: exit %d %s", code, errOut)
	}
	_, list = listTokens(w.ext)
	for _, tk := range list {
		if bbrID(tk) == id && bbrStr(tk, "revokedAt") == "" {
			t.Errorf("the revoked token is listed without revokedAt: %v", tk)
		}
	}
	// The audit trail has the operator's token events, naming the token.
	code, b = w.api(t, "GET", "/api/extensions/"+w.ext+"/audit?limit=100", "")
	if code != 200 || !strings.Contains(string(b), `"token.created"`) || !strings.Contains(string(b), `"token.revoked"`) || strings.Contains(string(b), secret) {
		t.Errorf("the audit trail after the operator's token commands: %d %s", code, b)
	}
}
