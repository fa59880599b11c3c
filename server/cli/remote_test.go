package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/storetest"
	"github.com/betaport/betaport/server/testenv"
)

// remoteWorld is a running service with an extension, two published
// bundles and a way to run the betaport command against it, as a process
// of its own, with an access token in its environment.
type remoteWorld struct {
	m     *cli.Main
	ext   *betaport.Extension
	token string // every scope
	dir   string
}

func newRemoteWorld(t *testing.T, configure func(m *cli.Main)) *remoteWorld {
	t.Helper()
	m := cli.NewMain()
	m.Config.Addr, m.Config.Data = "127.0.0.1:0", t.TempDir()
	m.Config.WebhookAllowPrivate = true // the receiver below is on 127.0.0.1
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if configure != nil {
		configure(m)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	w := &remoteWorld{m: m, dir: t.TempDir()}
	w.ext = storetest.MustExtension(t, m.Store, storetest.MustTeam(t, m.Store, betaport.PlanProfessional), "Tab Tamer")
	w.token = w.makeToken(t, "everything", betaport.AllScopes, nil)

	// Two builds, by the pipeline's own command.
	storetest.MustKey(t, m.Store, w.ext.ID, "CI", "remote-ci-secret")
	keyPath := filepath.Join(w.dir, "key.json")
	kf, _ := json.Marshal(api.KeyFile{Service: api.ServiceKey{ExtensionID: strconv.FormatInt(w.ext.ID, 10), APIKey: "remote-ci-secret"}})
	os.WriteFile(keyPath, kf, 0o600)
	for _, v := range []string{"1.0.0", "1.1.0"} {
		zip := writeZip(t, w.dir, v+".zip", map[string]string{"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "` + v + `"}`})
		if code, _, errOut := run(t, "submit", "--quiet", "--base-url", m.URL(), "--key", keyPath, "--notes", "Build "+v, zip); code != 0 {
			t.Fatalf("submit %s: exit %d: %s", v, code, errOut)
		}
	}
	return w
}

// makeToken keeps a token in the store, as the settings page makes one.
func (w *remoteWorld) makeToken(t *testing.T, name string, scopes []string, expires *time.Time) string {
	t.Helper()
	secret := credential.NewAccessToken()
	tok := &betaport.AccessToken{ExtensionID: w.ext.ID, Name: name, Scopes: scopes, CreatedBy: "ada@example.com", ExpiresAt: expires}
	if err := w.m.Store.CreateAccessToken(context.Background(), tok, credential.HashToken(secret)); err != nil {
		t.Fatal(err)
	}
	return secret
}

// betaport runs the command as a process, against the world's server with
// token (BETAPORT_SERVER and BETAPORT_TOKEN), and returns its exit code and
// streams.
func (w *remoteWorld) betaport(t *testing.T, token string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	b, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), commandChildVar+"="+string(b), "BETAPORT_SERVER="+w.m.URL(), "BETAPORT_TOKEN="+token)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), out.String(), errOut.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errOut.String()
}

// ok runs a command that must succeed and returns its stdout's JSON lines.
func (w *remoteWorld) ok(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	code, out, errOut := w.betaport(t, w.token, args...)
	if code != 0 {
		t.Fatalf("betaport %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("betaport %s: stdout line %q is not one JSON object: %v", strings.Join(args, " "), l, err)
		}
		lines = append(lines, v)
	}
	return lines
}

func field(v map[string]any, name string) string { return fmt.Sprint(v[name]) }

// Every remote command, run as a process against a real server, on
// SQLite and files, and on PostgreSQL and S3.
func TestRemoteCommands(t *testing.T) {
	t.Parallel()
	onBothBackends(t, walkRemoteCommands)
}

// onBothBackends runs walk against a remote world on SQLite and files, and
// one on PostgreSQL and S3 (with a signing keyring, as a replica has),
// side by side.
func onBothBackends(t *testing.T, walk func(t *testing.T, w *remoteWorld)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		walk(t, newRemoteWorld(t, nil))
	})
	t.Run("postgres+s3", func(t *testing.T) {
		t.Parallel()
		testenv.SkipIfAsked(t)
		db, blob := testenv.PostgresURL(t), testenv.BucketURL(t)
		code, ring, errOut := run(t, "signing-key", "generate")
		if code != 0 {
			t.Fatalf("signing-key generate: %s", errOut)
		}
		walk(t, newRemoteWorld(t, func(m *cli.Main) {
			m.Config.DB, m.Config.Blob = db, blob
			m.Config.Secret, m.Config.SigningKeyring = credential.NewToken(), strings.TrimSpace(strings.SplitN(ring, "\n", 2)[0])
		}))
	})
}

func walkRemoteCommands(t *testing.T, w *remoteWorld) {
	ctx := context.Background()
	// The token's one extension is found without --extension.
	if exts := w.ok(t, "extension", "list"); len(exts) != 1 || field(exts[0], "name") != "Tab Tamer" {
		t.Fatalf("extension list = %v", exts)
	}
	if b := w.ok(t, "bundle", "list"); len(b) != 2 || field(b[0], "version") != "1.1.0" || field(b[1], "version") != "1.0.0" {
		t.Fatalf("bundle list = %v, want 1.1.0 then 1.0.0, one per line", b)
	}
	if b := w.ok(t, "bundle", "list", "--limit", "1"); len(b) != 1 {
		t.Fatalf("bundle list --limit 1 printed %d", len(b))
	}
	if b := w.ok(t, "bundle", "current"); field(b[0], "number") != "2" {
		t.Fatalf("bundle current = %v", b)
	}
	if notes := w.ok(t, "bundle", "notes", "--bundle", "1"); field(notes[0], "releaseNotes") != "Build 1.0.0" || field(notes[0], "number") != "1" {
		t.Fatalf("bundle notes = %v", notes)
	}

	// Testers: invited, listed to the end (past a page), searched, revoked
	// and restored by e-mail, a new link by id.
	for i := range 3 {
		inv := w.ok(t, "tester", "invite", "--email", fmt.Sprintf("t%d@example.com", i), "--name", fmt.Sprintf("T%d", i))
		if !strings.Contains(field(inv[0], "inviteUrl"), "/t/") {
			t.Fatalf("tester invite printed %v, want the invite link", inv)
		}
	}
	many := make([]*betaport.Tester, 150)
	for i := range many {
		many[i] = &betaport.Tester{ExtensionID: w.ext.ID, Email: fmt.Sprintf("bulk%03d@example.com", i), Name: "Bulk", Status: betaport.TesterInvited}
	}
	if err := w.m.Store.CreateTesters(ctx, many); err != nil {
		t.Fatal(err)
	}
	if all := w.ok(t, "tester", "list"); len(all) != 153 {
		t.Fatalf("tester list printed %d testers, want all 153 (two pages)", len(all))
	}
	if some := w.ok(t, "tester", "list", "--limit", "120"); len(some) != 120 {
		t.Fatalf("tester list --limit 120 printed %d", len(some))
	}
	if found := w.ok(t, "tester", "list", "--search", "t1@"); len(found) != 1 || field(found[0], "email") != "t1@example.com" {
		t.Fatalf("tester list --search = %v", found)
	}
	if code, _, errOut := w.betaport(t, w.token, "tester", "revoke", "--tester", "t1@example.com"); code != 0 {
		t.Fatalf("tester revoke: exit %d: %s", code, errOut)
	}
	if revoked := w.ok(t, "tester", "list", "--status", "revoked"); len(revoked) != 1 || field(revoked[0], "email") != "t1@example.com" {
		t.Fatalf("revoked testers = %v", revoked)
	}
	restored := w.ok(t, "tester", "restore", "--tester", "t1@example.com", "--days", "3")
	if !strings.Contains(field(restored[0], "inviteUrl"), "/t/") {
		t.Fatalf("tester restore printed %v", restored)
	}
	id := field(w.ok(t, "tester", "list", "--search", "t2@")[0], "id")
	if link := w.ok(t, "tester", "link", "--tester", id); !strings.Contains(field(link[0], "inviteUrl"), "/t/") {
		t.Fatalf("tester link printed %v", link)
	}
	if code, _, errOut := w.betaport(t, w.token, "tester", "revoke", "--tester", "nobody@example.com"); code != cli.ExitInvalid || !strings.Contains(errOut, "nobody@example.com") {
		t.Fatalf("revoking an unknown tester: exit %d, %q; want %d naming them", code, errOut, cli.ExitInvalid)
	}

	// Channels and a staged rollout, start to end.
	w.ok(t, "channel", "create", "--name", "staged")
	if ch := w.ok(t, "channel", "list"); len(ch) != 2 {
		t.Fatalf("channel list = %v, want beta and staged", ch)
	}
	if moved := w.ok(t, "channel", "move", "--tester", "t0@example.com", "--to", "staged"); field(moved[0], "channel") != "staged" {
		t.Fatalf("channel move printed %v", moved)
	}
	w.ok(t, "bundle", "promote", "--bundle", "1", "--channel", "staged")
	w.ok(t, "rollout", "start", "--channel", "staged", "--bundle", "2", "--percent", "30")
	for _, step := range [][]string{{"advance", "--percent", "60"}, {"halt"}, {"resume"}, {"complete"}} {
		w.ok(t, append([]string{"rollout", step[0], "--channel", "staged"}, step[1:]...)...)
	}
	if c, _ := w.m.Store.FindChannel(ctx, w.ext.ID, "staged"); c == nil || c.CurrentBundle != 2 || c.Rollout != nil {
		t.Fatalf("after the rollout's complete, staged is %+v", c)
	}

	// Keys: the key file is written, its secret never printed.
	keyPath := filepath.Join(w.dir, "new-key.json")
	code, out, errOut := w.betaport(t, w.token, "key", "create", "--label", "Nightly", "--out", keyPath)
	kb, _ := os.ReadFile(keyPath)
	var kf api.KeyFile
	if code != 0 || json.Unmarshal(kb, &kf) != nil || kf.Service.APIKey == "" || strings.Contains(out+errOut, kf.Service.APIKey) {
		t.Fatalf("key create: exit %d, stdout %q, file %q: want the file written and the secret nowhere else", code, out, kb)
	}
	keys := w.ok(t, "key", "list")
	if len(keys) != 2 {
		t.Fatalf("key list = %v", keys)
	}
	if r := w.ok(t, "key", "revoke", "--key", field(keys[0], "id")); field(r[0], "revokedAt") == "<nil>" {
		t.Fatalf("key revoke printed %v", r)
	}

	// Webhooks, to a receiver on loopback.
	got := make(chan string, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
	}))
	defer receiver.Close()
	hook := w.ok(t, "webhook", "create", "--url", receiver.URL+"/hook")
	hookID := field(hook[0], "id")
	if hooks := w.ok(t, "webhook", "list"); len(hooks) != 1 || field(hooks[0], "id") != hookID {
		t.Fatalf("webhook list = %v", hooks)
	}
	if code, _, errOut := w.betaport(t, w.token, "webhook", "test", "--webhook", hookID); code != 0 {
		t.Fatalf("webhook test: exit %d: %s", code, errOut)
	}
	select {
	case body := <-got:
		if !strings.Contains(body, `"type":"ping"`) {
			t.Errorf("the test event's body = %s", body)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("webhook test: no event arrived")
	}
	if code, _, errOut := w.betaport(t, w.token, "webhook", "delete", "--webhook", hookID); code != 0 {
		t.Fatalf("webhook delete: exit %d: %s", code, errOut)
	}

	// Reading what happened: adoption, the audit trail naming the token,
	// feedback (none yet).
	w.ok(t, "adoption", "--days", "3")
	audit := w.ok(t, "audit", "list", "--limit", "5")
	if len(audit) != 5 || !strings.Contains(field(audit[0], "actor"), `"everything"`) {
		t.Fatalf("audit list = %v, want 5 events, the newest by the token", audit)
	}
	if reports := w.ok(t, "feedback", "list"); len(reports) != 0 {
		t.Fatalf("feedback list = %v", reports)
	}

	// A rollback, as the releases scope allows.
	if rb := w.ok(t, "bundle", "rollback", "--to", "1"); field(rb[0], "rollbackOf") != "1" {
		t.Fatalf("bundle rollback printed %v", rb)
	}

	// Refusals, with submit's exit codes, and nothing changed.
	reader := w.makeToken(t, "reader", []string{"read"}, nil)
	code, _, errOut = w.betaport(t, reader, "tester", "invite", "--email", "late@example.com")
	if code != cli.ExitAuth || !strings.Contains(errOut, "testers") {
		t.Fatalf("invite with a read token: exit %d, %q; want %d naming the scope", code, errOut, cli.ExitAuth)
	}
	if ts, _ := w.m.Store.FindTesters(ctx, betaport.TesterFilter{ExtensionID: w.ext.ID, Query: "late@", Limit: 5}); len(ts) != 0 {
		t.Fatalf("a refused invite made %v", ts)
	}
	soon := betaport.Now().Add(time.Second)
	expiring := w.makeToken(t, "expiring", betaport.AllScopes, &soon)
	for time.Now().Before(soon) {
		time.Sleep(time.Until(soon) + time.Millisecond) // until the expiry passed: the condition itself
	}
	if code, _, errOut := w.betaport(t, expiring, "bundle", "list"); code != cli.ExitAuth || !strings.Contains(errOut, "expired") {
		t.Fatalf("an expired token: exit %d, %q", code, errOut)
	}
	toRevoke := w.makeToken(t, "to revoke", betaport.AllScopes, nil)
	list, _ := w.m.Store.FindAccessTokens(ctx, w.ext.ID, 0, 1)
	if _, err := w.m.Store.RevokeAccessToken(ctx, w.ext.ID, list[0].ID, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := w.betaport(t, toRevoke, "bundle", "list"); code != cli.ExitAuth || !strings.Contains(errOut, "revoked") {
		t.Fatalf("a revoked token: exit %d, %q", code, errOut)
	}
	if code, _, errOut := w.betaport(t, "", "bundle", "list"); code != cli.ExitUsage || !strings.Contains(errOut, "BETAPORT_TOKEN") {
		t.Fatalf("no token: exit %d, %q", code, errOut)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	if code, _, errOut := w.betaport(t, w.token, "bundle", "list", "--server", closed.URL); code != cli.ExitServer {
		t.Fatalf("an unreachable server: exit %d, %q", code, errOut)
	}
}

// The operator's first token, made with the data folder before anyone
// signs in: it works remotely at once, is listed without its secret, and
// stops when revoked there.
func TestOperatorTokenCommands(t *testing.T) {
	t.Parallel()
	w := newRemoteWorld(t, nil)
	data, id := w.m.Config.Data, strconv.FormatInt(w.ext.ID, 10)
	code, out, errOut := run(t, "token", "create", "--data", data, "--extension", id, "--name", "first script", "--scopes", "read,testers", "--days", "30")
	var created api.CreatedToken
	if code != 0 || json.Unmarshal([]byte(out), &created) != nil || !strings.HasPrefix(created.Secret, betaport.TokenPrefix) {
		t.Fatalf("token create: exit %d, %q, %q", code, out, errOut)
	}
	if created.Token.ExpiresAt == nil || created.Token.ExpiresAt.Before(time.Now().Add(29*24*time.Hour)) {
		t.Errorf("--days 30 made a token expiring %v", created.Token.ExpiresAt)
	}
	if code, _, errOut := w.betaport(t, created.Secret, "tester", "invite", "--email", "first@example.com"); code != 0 {
		t.Fatalf("inviting with the operator's token: exit %d: %s", code, errOut)
	}
	code, out, _ = run(t, "token", "list", "--data", data, "--extension", id)
	if code != 0 || !strings.Contains(out, "first script") || strings.Contains(out, created.Secret) {
		t.Fatalf("token list: exit %d, %q", code, out)
	}
	for _, bad := range [][]string{
		{"--scopes", "read,admin"}, {"--scopes", ""}, {"--days", "400", "--scopes", "read"},
	} {
		args := append([]string{"token", "create", "--data", data, "--extension", id, "--name", "bad"}, bad...)
		if code, _, errOut := run(t, args...); code == 0 {
			t.Errorf("token create %v: exit 0 (%s), want it refused", bad, errOut)
		}
	}
	if code, _, errOut := run(t, "token", "revoke", "--data", data, "--extension", id, "--token", strconv.FormatInt(created.Token.ID, 10)); code != 0 {
		t.Fatalf("token revoke: exit %d: %s", code, errOut)
	}
	if code, _, _ := w.betaport(t, created.Secret, "tester", "list"); code != cli.ExitAuth {
		t.Fatalf("the revoked token: exit %d, want %d", code, cli.ExitAuth)
	}
}

// README's command-line section lists every remote command with the scope
// the help gives it, so that the two cannot drift.
func TestReadmeListsEveryRemoteCommandWithItsScope(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, help, _ := run(t, "help")
	found := 0
	for _, line := range strings.Split(help, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "betaport" || !strings.HasPrefix(f[len(f)-1], "[") {
			continue
		}
		found++
		name, scope := f[1]+" "+f[2], f[len(f)-1]
		if strings.HasPrefix(f[2], "-") || strings.HasPrefix(f[2], "[") {
			name = f[1]
		}
		ok := false
		for _, rl := range strings.Split(string(readme), "\n") {
			// One line per command, or one for its variants
			// (rollout halt|resume|complete).
			mine := strings.HasPrefix(rl, "betaport "+name+" ") ||
				strings.HasPrefix(rl, "betaport "+f[1]+" ") && strings.Contains(strings.Fields(rl)[2], "|") && strings.Contains(rl, f[2])
			ok = ok || mine && strings.Contains(rl, "# "+scope)
		}
		if !ok {
			t.Errorf("README lists no %q with %s (the help: %q)", "betaport "+name, scope, strings.TrimSpace(line))
		}
	}
	if found < 25 {
		t.Fatalf("the help lists only %d remote commands", found)
	}
}
