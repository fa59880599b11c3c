package cli

import (
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/server/keyring"
)

// loadServe reads serve's configuration from args and the environment as
// `betaport serve` does.
func loadServe(args ...string) (Config, error) {
	c := DefaultConfig()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c.storageFlags(fs)
	c.serveFlags(fs)
	return c, parse(fs, args, io.Discard)
}

// clearSettingsEnv unsets every setting's environment variable for the
// test (and restores them after it).
func clearSettingsEnv(t *testing.T) {
	t.Helper()
	for _, s := range append(append([]*setting{}, storageSettings...), serveSettings...) {
		if s.env != "" {
			t.Setenv(s.env, "")
			os.Unsetenv(s.env)
		}
	}
}

// Good configurations parse as they always did: from flags, from the
// environment, a flag overriding its variable.
func TestConfigGoodValues(t *testing.T) {
	ring := keyring.Generate()
	secret := strings.Repeat("s", 64)
	def := DefaultConfig()
	with := func(f func(*Config)) Config { c := DefaultConfig(); f(&c); return c }
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want Config
	}{
		{"defaults", nil, nil, def},
		{"flags", nil, []string{
			"--addr", "0.0.0.0:9000", "--data", "/var/lib/betaport", "--db", "sqlite:///var/lib/betaport/b.db",
			"--blob", "file:///var/lib/betaport/blobs", "--base-url", "https://beta.example.com/", "--secret", secret,
			"--signing-keyring", ring, "--no-ui", "--metrics-addr", "127.0.0.1:9090", "--adoption-flush", "30s",
			"--webhook-retry-min", "250ms", "--webhooks-allow-private", "--invite-days", "3",
		}, Config{
			Addr: "0.0.0.0:9000", Data: "/var/lib/betaport", DB: "sqlite:///var/lib/betaport/b.db",
			Blob: "file:///var/lib/betaport/blobs", BaseURL: "https://beta.example.com/", Secret: secret,
			SigningKeyring: ring, NoUI: true, MetricsAddr: "127.0.0.1:9090", AdoptionFlush: 30 * time.Second,
			WebhookRetryMin: 250 * time.Millisecond, WebhookAllowPrivate: true, InviteDays: 3, LogFormat: "text", LogLevel: slog.LevelInfo,
		}},
		{"environment", map[string]string{
			"BETAPORT_ADDR": ":8080", "BETAPORT_DATA": "data2", "BETAPORT_DB": "postgres://betaport:pw@db.internal:5432/betaport?sslmode=require&pool_max_conns=8",
			"BETAPORT_BLOB": "s3://betaport-zips?endpoint=http://127.0.0.1:7070&region=us-east-1", "BETAPORT_BASE_URL": "http://beta.example.com:8080/bp",
			"BETAPORT_SECRET": secret, "BETAPORT_SIGNING_KEYRING": ring + "," + keyring.Generate(), "BETAPORT_METRICS_ADDR": "[::1]:9090",
			"BETAPORT_ADOPTION_FLUSH": "2m", "BETAPORT_WEBHOOK_RETRY_MIN": "2s", "BETAPORT_WEBHOOKS_ALLOW_PRIVATE": "1",
			"BETAPORT_INVITE_DAYS": "90",
		}, nil, Config{
			Addr: ":8080", Data: "data2", DB: "postgres://betaport:pw@db.internal:5432/betaport?sslmode=require&pool_max_conns=8",
			Blob: "s3://betaport-zips?endpoint=http://127.0.0.1:7070&region=us-east-1", BaseURL: "http://beta.example.com:8080/bp",
			Secret: secret, MetricsAddr: "[::1]:9090", AdoptionFlush: 2 * time.Minute, WebhookRetryMin: 2 * time.Second, WebhookAllowPrivate: true,
			InviteDays: 90, LogFormat: "text", LogLevel: slog.LevelInfo,
		}},
		{"a flag overrides its variable", map[string]string{
			"BETAPORT_ADDR": "bad", "BETAPORT_WEBHOOK_RETRY_MIN": "soon", "BETAPORT_WEBHOOKS_ALLOW_PRIVATE": "1", "BETAPORT_DATA": "from-env",
		}, []string{"--addr", "127.0.0.1:0", "--webhook-retry-min", "1s", "--webhooks-allow-private=false", "--data", "from-flag"},
			with(func(c *Config) { c.Addr, c.WebhookRetryMin, c.Data = "127.0.0.1:0", time.Second, "from-flag" })},
		{"switches off, and in other spellings", map[string]string{"BETAPORT_WEBHOOKS_ALLOW_PRIVATE": "0"}, []string{"--no-ui=true"},
			with(func(c *Config) { c.NoUI = true })},
		{"switch spelled true", map[string]string{"BETAPORT_WEBHOOKS_ALLOW_PRIVATE": "true"}, nil,
			with(func(c *Config) { c.WebhookAllowPrivate = true })},
		{"empty values that mean the default", map[string]string{
			"BETAPORT_DB": "", "BETAPORT_BLOB": "", "BETAPORT_BASE_URL": "", "BETAPORT_SECRET": "", "BETAPORT_SIGNING_KEYRING": "", "BETAPORT_METRICS_ADDR": "",
		}, nil, def},
		{"logs as JSON from warnings up, ids from two proxies", map[string]string{"BETAPORT_LOG_LEVEL": "debug"},
			[]string{"--log-format", "json", "--log-level", "WARN", "--trusted-proxies", "10.0.0.7, 192.168.0.0/16"},
			with(func(c *Config) {
				c.LogFormat, c.LogLevel = "json", slog.LevelWarn
				c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.7/32"), netip.MustParsePrefix("192.168.0.0/16")}
			})},
		{"other good forms", nil, []string{
			"--addr", "localhost:http", "--db", "sqlite://relative/b.db", "--db", "postgresql://localhost/betaport",
			"--blob", "s3://bucket", "--metrics-addr", "127.0.0.1:0", "--adoption-flush", "1h30m",
		}, with(func(c *Config) {
			c.Addr, c.DB, c.Blob, c.MetricsAddr, c.AdoptionFlush = "localhost:http", "postgresql://localhost/betaport", "s3://bucket", "127.0.0.1:0", 90*time.Minute
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearSettingsEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			got, err := loadServe(tt.args...)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tt.name == "environment" {
				// Two keyring entries: compare that it is the text given.
				if got.SigningKeyring != tt.env["BETAPORT_SIGNING_KEYRING"] {
					t.Errorf("SigningKeyring = %q", got.SigningKeyring)
				}
				got.SigningKeyring = ""
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// Each bad value is refused, naming its flag and variable, what is wrong
// and what a good value looks like; from a flag or the environment alike.
func TestConfigBadValues(t *testing.T) {
	tests := []struct {
		flag, env, value string
		says             string // what is wrong
		like             string // the good value it shows
	}{
		{"addr", "BETAPORT_ADDR", "localhost", "missing port", "127.0.0.1:8080"},
		{"addr", "BETAPORT_ADDR", "127.0.0.1:99999", "not a number from 0 to 65535", "127.0.0.1:8080"},
		{"addr", "BETAPORT_ADDR", "", "is empty", "127.0.0.1:8080"},
		{"metrics-addr", "BETAPORT_METRICS_ADDR", "9090", "missing port", "127.0.0.1:9090"},
		{"data", "BETAPORT_DATA", "", "is empty", "./data"},
		{"db", "BETAPORT_DB", "mysql://x", "not a sqlite:// or postgres:// URL", "sqlite:///path/file.db"},
		{"db", "BETAPORT_DB", "sqlite://", "names no file", "sqlite:///path/file.db"},
		{"db", "BETAPORT_DB", "/var/lib/b.db", "not a sqlite:// or postgres:// URL", "postgres://user:password@host:5432/db"},
		{"blob", "BETAPORT_BLOB", "/var/lib/blobs", "not a file:// or s3:// URL", "file:///path/to/folder"},
		{"blob", "BETAPORT_BLOB", "s3://?region=us-east-1", "names no bucket", "s3://BUCKET?region=R"},
		{"blob", "BETAPORT_BLOB", "s3://b?endpoint=s3.example.com", "endpoint that is not an http:// or https:// URL", "endpoint=https://"},
		{"base-url", "BETAPORT_BASE_URL", "beta.example.com", "not an http:// or https:// URL", "https://beta.example.com"},
		{"base-url", "BETAPORT_BASE_URL", "ftp://beta.example.com", "not an http:// or https:// URL", "https://beta.example.com"},
		{"secret", "BETAPORT_SECRET", "short", "is 5 characters", "openssl rand -hex 32"},
		{"signing-keyring", "BETAPORT_SIGNING_KEYRING", "k1:bm90IGEga2V5", "not a keyring", "betaport signing-key generate"},
		{"adoption-flush", "BETAPORT_ADOPTION_FLUSH", "often", "not a duration", "30s"},
		{"adoption-flush", "BETAPORT_ADOPTION_FLUSH", "0", "not above zero", "30s"},
		{"adoption-flush", "BETAPORT_ADOPTION_FLUSH", "-1m", "not above zero", "30s"},
		{"log-format", "BETAPORT_LOG_FORMAT", "xml", "not a log format", "text or json"},
		{"log-level", "BETAPORT_LOG_LEVEL", "loud", "not a log level", "debug, info, warn or error"},
		{"trusted-proxies", "BETAPORT_TRUSTED_PROXIES", "10.0.0.7,proxy.internal", `"proxy.internal"`, "10.0.0.0/8"},
		{"webhook-retry-min", "BETAPORT_WEBHOOK_RETRY_MIN", "soon", "not a duration", "10s"},
		{"webhook-retry-min", "BETAPORT_WEBHOOK_RETRY_MIN", "0s", "not above zero", "10s"},
		{"webhook-retry-min", "BETAPORT_WEBHOOK_RETRY_MIN", "", "not a duration", "10s"},
		{"webhooks-allow-private", "BETAPORT_WEBHOOKS_ALLOW_PRIVATE", "yes", "neither on nor off", "1 (on) or 0 (off)"},
		{"webhooks-allow-private", "BETAPORT_WEBHOOKS_ALLOW_PRIVATE", "", "neither on nor off", "1 (on) or 0 (off)"},
		{"invite-days", "BETAPORT_INVITE_DAYS", "0", "not a number of days from 1 to 90", "14"},
		{"invite-days", "BETAPORT_INVITE_DAYS", "91", "not a number of days from 1 to 90", "14"},
		{"invite-days", "BETAPORT_INVITE_DAYS", "2w", "not a number of days from 1 to 90", "14"},
	}
	for _, tt := range tests {
		for _, fromEnv := range []bool{false, true} {
			clearSettingsEnv(t)
			var err error
			if fromEnv {
				t.Setenv(tt.env, tt.value)
				_, err = loadServe()
			} else {
				_, err = loadServe("--" + tt.flag + "=" + tt.value)
			}
			var ue usageError
			if !errors.As(err, &ue) {
				t.Errorf("%s=%q (env %v): %v; want a usage error", tt.flag, tt.value, fromEnv, err)
				continue
			}
			for _, want := range []string{"--" + tt.flag + " (" + tt.env + ")", tt.says, tt.like} {
				if !strings.Contains(ue.msg, want) {
					t.Errorf("%s=%q (env %v): %q does not say %q", tt.flag, tt.value, fromEnv, ue.msg, want)
				}
			}
			if tt.flag == "secret" && strings.Contains(ue.msg, tt.value) {
				t.Errorf("the secret is repeated back: %q", ue.msg)
			}
		}
	}
	// --no-ui has no variable.
	clearSettingsEnv(t)
	if _, err := loadServe("--no-ui=maybe"); err == nil || !strings.Contains(err.Error(), `--no-ui "maybe" is neither on nor off`) {
		t.Errorf("--no-ui=maybe: %v", err)
	}
	// A password in a bad URL is not repeated back.
	if _, err := loadServe("--db", "mysql://u:hunter2@db/x"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("--db with a password: %v", err)
	}
}

// Every bad value, from flags and the environment, in one message.
func TestConfigEveryBadValueAtOnce(t *testing.T) {
	clearSettingsEnv(t)
	t.Setenv("BETAPORT_WEBHOOK_RETRY_MIN", "soon")
	t.Setenv("BETAPORT_WEBHOOKS_ALLOW_PRIVATE", "yes")
	t.Setenv("BETAPORT_DB", "mysql://x")
	t.Setenv("BETAPORT_ADDR", "bad") // overridden by a good flag: not reported
	_, err := loadServe("--addr", "127.0.0.1:0", "--adoption-flush", "0", "--blob", "ftp://x", "--metrics-addr", "nowhere")
	if err == nil {
		t.Fatal("accepted")
	}
	msg := err.Error()
	for _, want := range []string{"6 settings are bad", "did not start",
		`BETAPORT_WEBHOOK_RETRY_MIN="soon"`, `BETAPORT_WEBHOOKS_ALLOW_PRIVATE="yes"`, `BETAPORT_DB="mysql://x"`,
		`--adoption-flush "0"`, `--blob "ftp://x"`, `--metrics-addr "nowhere"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("does not say %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "--addr (") {
		t.Errorf("reports the overridden BETAPORT_ADDR:\n%s", msg)
	}
	if n := strings.Count(msg, "\n"); n != 6 {
		t.Errorf("%d lines after the first; want one per bad value:\n%s", n, msg)
	}
}
