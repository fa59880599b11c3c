package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/betaport/betaport/server/cli"
)

// betaport serve with bad values in its flags and its environment lists
// every one of them in one message and does not start: exit 2 (usage),
// nothing on stdout, no data dir made. Serve would not return while it
// serves; that it returns at all says it never started.
func TestServeRefusesEveryBadSettingAtOnce(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	t.Setenv("BETAPORT_WEBHOOK_RETRY_MIN", "soon") // ignored before: serve started with 10s
	t.Setenv("BETAPORT_WEBHOOKS_ALLOW_PRIVATE", "yes")
	t.Setenv("BETAPORT_BLOB", "/srv/blobs")
	code, out, errOut := run(t, "serve", "--no-ui", "--data", data,
		"--addr", "localhost", "--adoption-flush", "-5s", "--base-url", "beta.example.com", "--db", "mysql://db/betaport")
	if code != cli.ExitUsage || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant exit %d", code, out, errOut, cli.ExitUsage)
	}
	for _, want := range []string{
		"betaport serve: 7 settings are bad, so the service did not start",
		`--webhook-retry-min (BETAPORT_WEBHOOK_RETRY_MIN): BETAPORT_WEBHOOK_RETRY_MIN="soon" is not a duration; give a positive one, like 10s`,
		`--webhooks-allow-private (BETAPORT_WEBHOOKS_ALLOW_PRIVATE): BETAPORT_WEBHOOKS_ALLOW_PRIVATE="yes" is neither on nor off; give 1 (on) or 0 (off)`,
		`--blob (BETAPORT_BLOB): BETAPORT_BLOB="/srv/blobs" is not a file:// or s3:// URL; give file:///path/to/folder`,
		`--addr (BETAPORT_ADDR): --addr "localhost" is not host:port (missing port in address); give one like 127.0.0.1:8080`,
		`--adoption-flush (BETAPORT_ADOPTION_FLUSH): --adoption-flush "-5s" is not above zero; give a positive duration, like 30s`,
		`--base-url (BETAPORT_BASE_URL): --base-url "beta.example.com" is not an http:// or https:// URL; give the address people and pipelines reach the service at, like https://beta.example.com`,
		`--db (BETAPORT_DB): --db "mysql://db/betaport" is not a sqlite:// or postgres:// URL; give sqlite:///path/file.db`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not say %q:\n%s", want, errOut)
		}
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("the data dir was made (%v): serve went ahead", err)
	}

	// A bad BETAPORT_WEBHOOK_RETRY_MIN alone is refused too.
	t.Setenv("BETAPORT_WEBHOOKS_ALLOW_PRIVATE", "1")
	t.Setenv("BETAPORT_BLOB", "")
	t.Setenv("BETAPORT_WEBHOOK_RETRY_MIN", "0")
	code, out, errOut = run(t, "serve", "--no-ui", "--data", data, "--addr", "127.0.0.1:0")
	if code != cli.ExitUsage || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 ||
		!strings.Contains(errOut, `--webhook-retry-min (BETAPORT_WEBHOOK_RETRY_MIN): BETAPORT_WEBHOOK_RETRY_MIN="0" is not above zero`) {
		t.Fatalf("BETAPORT_WEBHOOK_RETRY_MIN=0: exit %d, %q, %q; want exit 2 and one line naming it", code, out, errOut)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("the data dir was made (%v): serve went ahead", err)
	}
}
