package cli_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/storetest"
)

// TestSubmitConfigurationMistakesExit1: a CI job's submit with a --base-url
// that cannot be Betaport as written (https:// to a service that speaks
// plain HTTP, the address of another web server) exits 1 at once, with one
// line saying what is wrong, rather than 5 ("try again later") after its
// retries; a team on the Starter plan is told about pipelines, not about
// manual upload. Each through the command as a process.
func TestSubmitConfigurationMistakesExit1(t *testing.T) {
	t.Parallel()
	m := cli.NewMain()
	m.Config.Addr, m.Config.Data = "127.0.0.1:0", t.TempDir()
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	pro := storetest.MustExtension(t, m.Store, storetest.MustTeam(t, m.Store, betaport.PlanProfessional), "Tab Tamer")
	starter := storetest.MustExtension(t, m.Store, storetest.MustTeam(t, m.Store, betaport.PlanStarter), "Hobby")
	dir := t.TempDir()
	keyFor := func(id int64, name string) string {
		path := filepath.Join(dir, name)
		if code, _, errOut := run(t, "key", "create", "--label", "CI", "--data", m.Config.Data, "--extension", strconv.FormatInt(id, 10), "--out", path); code != 0 {
			t.Fatalf("key create: exit %d: %s", code, errOut)
		}
		return path
	}
	proKey, starterKey := keyFor(pro.ID, "pro.json"), keyFor(starter.ID, "starter.json")
	zip := writeZip(t, dir, "good.zip", map[string]string{"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "1.4.0"}`})
	// Another web server: every path answers a page.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<!doctype html><title>Welcome to nginx!</title>")
	}))
	t.Cleanup(other.Close)
	// A static file server, which takes no POST (python's http.server
	// answers 501): not a server having trouble, so never retried.
	static := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotImplemented)
		io.WriteString(w, "<p>Error code: 501</p><p>Message: Unsupported method ('POST').</p>")
	}))
	t.Cleanup(static.Close)

	for _, c := range []struct {
		what, baseURL, key string
		code               int
		want               string
	}{
		{"https:// to plain HTTP", strings.Replace(m.URL(), "http://", "https://", 1), proKey, cli.ExitFailure, "answers plain HTTP: use http://"},
		{"another web server", other.URL, proKey, cli.ExitFailure, "Check --base-url: it must be Betaport's address"},
		{"a static file server", static.URL, proKey, cli.ExitFailure, "Check --base-url: it must be Betaport's address"},
		{"the Starter plan", m.URL(), starterKey, cli.ExitAuth, "Submitting from a pipeline needs the Professional plan"},
	} {
		start := time.Now()
		code, out, errOut := commandProcess(t, "submit", "--base-url", c.baseURL, "--key", c.key, zip)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != c.code || out != "" || !strings.Contains(lines[len(lines)-1], c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr:\n%s\nwant exit %d ending with a line saying %q", c.what, code, out, errOut, c.code, c.want)
		}
		if strings.Contains(errOut, "retrying") || strings.Contains(errOut, "Manual upload") {
			t.Errorf("%s: the command retried a mistake, or spoke of manual upload:\n%s", c.what, errOut)
		}
		t.Logf("%s: exit %d in %v", c.what, code, time.Since(start).Round(time.Millisecond))
	}
}
