package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Config is what every storage-touching command needs. Each field has a flag
// and a BETAPORT_* environment variable; the flag wins.
type Config struct {
	Addr string // listen address (serve only)
	NoUI bool   // serve the API without the browser app (serve only)
	// MetricsAddr is where Prometheus metrics are served (serve only;
	// "" for nowhere): a listener of their own, never the public one.
	MetricsAddr string
	Data        string // data directory
	DB          string // metadata store URL; default: SQLite file in Data
	Blob        string // zip storage URL; default: file:// folder in Data
	BaseURL     string // public URL; default: derived from Addr
	Secret      string // server secret; default: generated once into Data
	// SigningKeyring seals extensions' CRX signing keys (keyring text);
	// default: the data dir's signing-keyring file, made on first start.
	SigningKeyring string
	// AdoptionFlush is how often the update checks counted in memory are
	// written to the store (serve only; 0 means DefaultAdoptionFlush); they
	// are written on close too.
	AdoptionFlush time.Duration
	// WebhookRetryMin is the wait after a webhook delivery's first failed
	// attempt; it doubles each time, up to an hour (serve only).
	WebhookRetryMin time.Duration
	// WebhookAllowPrivate lets webhooks reach loopback, private and
	// link-local addresses (serve only; tests, one private network).
	WebhookAllowPrivate bool
}

// DefaultAdoptionFlush is how often update-check counts are written: a
// replica that dies loses at most this long of them.
const DefaultAdoptionFlush = time.Minute

// DefaultConfig returns the embedded defaults: one machine, SQLite and local
// files under ./data.
func DefaultConfig() Config {
	return Config{Addr: "127.0.0.1:8080", Data: "./data", AdoptionFlush: DefaultAdoptionFlush, WebhookRetryMin: 10 * time.Second}
}

// storageFlags registers the flags that choose storage.
func (c *Config) storageFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Data, "data", env("BETAPORT_DATA", c.Data), "data `directory` (env BETAPORT_DATA)")
	fs.StringVar(&c.DB, "db", env("BETAPORT_DB", c.DB), "metadata store `URL`: sqlite:///path/file.db or postgres://user:password@host:5432/db (env BETAPORT_DB; default: SQLite in the data dir)")
	fs.StringVar(&c.Blob, "blob", env("BETAPORT_BLOB", c.Blob), "zip storage `URL`: file:///path or s3://bucket?endpoint=URL&region=R (env BETAPORT_BLOB; default: a folder in the data dir; S3 credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)")
	fs.StringVar(&c.SigningKeyring, "signing-keyring", env("BETAPORT_SIGNING_KEYRING", c.SigningKeyring), "`keyring` that seals extensions' signing keys: id:base64 entries, newest last, comma-separated (env BETAPORT_SIGNING_KEYRING; default: the data dir's signing-keyring file; required with a postgres:// store)")
	fs.StringVar(&c.Secret, "secret", env("BETAPORT_SECRET", c.Secret), "server `secret` for signing, the same on every replica (env BETAPORT_SECRET; default: generated once into the data dir; required with a postgres:// store)")
}

// serveFlags registers the flags only serve takes.
func (c *Config) serveFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", env("BETAPORT_ADDR", c.Addr), "listen `address` (env BETAPORT_ADDR)")
	fs.StringVar(&c.BaseURL, "base-url", env("BETAPORT_BASE_URL", c.BaseURL), "public base `URL` (env BETAPORT_BASE_URL; default: http://ADDR)")
	fs.BoolVar(&c.NoUI, "no-ui", false, "serve the API without the browser app's pages (for a binary built without it)")
	fs.DurationVar(&c.AdoptionFlush, "adoption-flush", envDuration("BETAPORT_ADOPTION_FLUSH", c.AdoptionFlush), "how often the update checks counted in memory are written to the store, e.g. 30s (env BETAPORT_ADOPTION_FLUSH); they are written when the service stops too")
	fs.Func("webhook-retry-min", "wait after a webhook delivery's first failed attempt, doubling up to 1h (env BETAPORT_WEBHOOK_RETRY_MIN; default 10s)", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return errors.New("give a positive duration, like 10s or 1m")
		}
		c.WebhookRetryMin = d
		return nil
	})
	if d, err := time.ParseDuration(env("BETAPORT_WEBHOOK_RETRY_MIN", "")); err == nil && d > 0 {
		c.WebhookRetryMin = d
	}
	fs.BoolVar(&c.WebhookAllowPrivate, "webhooks-allow-private", env("BETAPORT_WEBHOOKS_ALLOW_PRIVATE", "") == "1",
		"let webhooks reach loopback, private and link-local addresses (env BETAPORT_WEBHOOKS_ALLOW_PRIVATE=1; default: refused)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", env("BETAPORT_METRICS_ADDR", c.MetricsAddr), "serve Prometheus metrics at http://`address`/metrics, e.g. 127.0.0.1:9090 (env BETAPORT_METRICS_ADDR; default: off)")
}

// envDuration is the duration in the environment variable name, fallback
// when unset, and -1 (refused when the service starts) when it is not one.
func envDuration(name string, fallback time.Duration) time.Duration {
	v, ok := os.LookupEnv(name)
	if !ok {
		return fallback
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return -1
	}
	return d
}

func env(name, fallback string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return fallback
}

// sqlitePath returns the SQLite file a sqlite:// URL (or the default) names.
func (c *Config) sqlitePath() (string, error) {
	if c.DB == "" {
		return filepath.Join(c.Data, "betaport.db"), nil
	}
	path, ok := strings.CutPrefix(c.DB, "sqlite://")
	if !ok || path == "" {
		return "", fmt.Errorf("--db %q: use sqlite:///path/to/file.db, or postgres://user:password@host:5432/dbname for a database several replicas share", c.DB)
	}
	return path, nil
}

// sharedDB reports whether the store is PostgreSQL: one database that
// several replicas may share.
func (c *Config) sharedDB() bool {
	return strings.HasPrefix(c.DB, "postgres://") || strings.HasPrefix(c.DB, "postgresql://")
}

// baseURL is the public URL links and upload URLs are built on.
func (c *Config) baseURL(ln net.Addr) string {
	switch {
	case c.BaseURL != "":
		return strings.TrimRight(c.BaseURL, "/")
	case ln != nil:
		return "http://" + ln.String()
	default:
		return "http://" + c.Addr
	}
}

// secret returns the configured secret or the one kept in the data dir,
// generating it on first use. Replicas must share one (--secret): on a
// shared (PostgreSQL) store it must be given.
func (c *Config) secret() ([]byte, error) {
	if c.Secret != "" {
		if len(c.Secret) < 32 {
			return nil, errors.New("--secret must be at least 32 characters; generate one with `openssl rand -hex 32`")
		}
		return []byte(c.Secret), nil
	}
	if c.sharedDB() {
		return nil, errors.New("--secret (or BETAPORT_SECRET) is required with a postgres:// store: every replica must sign with the same secret. " +
			"Generate one with `openssl rand -hex 32` and give it to every replica")
	}
	path := filepath.Join(c.Data, "secret")
	if b, err := os.ReadFile(path); err == nil {
		return []byte(strings.TrimSpace(string(b))), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(c.Data, 0o700); err != nil {
		return nil, err
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	s := hex.EncodeToString(raw)
	// O_EXCL: two processes starting at once agree on the first secret.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return c.secret()
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.WriteString(s + "\n"); err != nil {
		return nil, err
	}
	return []byte(s), nil
}
