package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/keyring"
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
	// CLIBinary is the betaport command offered at /cli/betaport; ""
	// means the running executable.
	CLIBinary string
	DB        string // metadata store URL; default: SQLite file in Data
	Blob      string // zip storage URL; default: file:// folder in Data
	BaseURL   string // public URL; default: derived from Addr
	Secret    string // server secret; default: generated once into Data
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
	// FeedbackRefill is how often a tester gets one more report after a
	// burst (0: the service's 30 s); tests that count refusals set it
	// long.
	FeedbackRefill time.Duration
	// WebhookAllowPrivate lets webhooks reach loopback, private and
	// link-local addresses (serve only; tests, one private network).
	WebhookAllowPrivate bool
	// InviteDays is how many days a new invite link works unused unless
	// the admin says otherwise (serve only).
	InviteDays int
	// LogFormat is text or json, LogLevel the least level logged (serve
	// only; used when Main's Logger is not set by its caller).
	LogFormat string
	LogLevel  slog.Level
	// TrustedProxies are the addresses whose X-Request-Id is kept as a
	// request's id (serve only; none: every id is the service's own).
	TrustedProxies []netip.Prefix
}

// DefaultAdoptionFlush is how often update-check counts are written: a
// replica that dies loses at most this long of them, and an open testers
// list shows a copy's check about this long after it (one transaction per
// flush, however many checks).
const DefaultAdoptionFlush = 10 * time.Second

// DefaultConfig returns the embedded defaults: one machine, SQLite and local
// files under ./data.
func DefaultConfig() Config {
	return Config{Addr: "127.0.0.1:8080", Data: "./data", AdoptionFlush: DefaultAdoptionFlush, WebhookRetryMin: 10 * time.Second,
		InviteDays: int(betaport.DefaultInviteExpiry.Hours() / 24),
		LogFormat:  "text", LogLevel: slog.LevelInfo}
}

// storageFlags registers the settings that choose storage.
func (c *Config) storageFlags(fs *flag.FlagSet) { c.register(fs, storageSettings) }

// serveFlags registers the settings only serve takes.
func (c *Config) serveFlags(fs *flag.FlagSet) { c.register(fs, serveSettings) }

// The configuration is read by one parser. Each setting is a flag and,
// for most, an environment variable that stands in for it when the flag is
// not given. The flags only collect what they are given: parse (usage.go)
// then reads every setting from its flag or else its variable, checks it,
// and reports every bad one at once, each line naming the flag, its
// variable, what is wrong and what a good value looks like (exit 2);
// nothing runs. A setting given by neither keeps the Config's value (the
// defaults).

// A setting is one value of the configuration.
type setting struct {
	flag  string
	env   string // "" when the flag has none
	usage string // -h's text; a `word` in it names the value
	// boolean: a switch, on when the flag is given alone.
	boolean bool
	// secret: a value never repeated back (it would end up in logs).
	secret bool
	// show is what a problem shows of a value (nil: the value itself);
	// "" shows nothing.
	show func(v string) string
	// set checks v and stores it in c. Its error says what is wrong with
	// the value and what a good one looks like, as "is …; give …".
	set func(c *Config, v string) error
	// def is -h's default: the Config's value as text ("" for none).
	def func(c *Config) string
}

var storageSettings = []*setting{
	{flag: "data", env: "BETAPORT_DATA", usage: "data `directory` (env BETAPORT_DATA)",
		set: func(c *Config, v string) error {
			if v == "" {
				return errors.New("is empty; give a directory, like ./data or /var/lib/betaport")
			}
			c.Data = v
			return nil
		},
		def: func(c *Config) string { return c.Data }},
	{flag: "db", env: "BETAPORT_DB", usage: "metadata store `URL`: sqlite:///path/file.db or postgres://user:password@host:5432/db (env BETAPORT_DB; default: SQLite in the data dir)",
		show: hideURLPassword,
		set:  func(c *Config, v string) error { c.DB = v; return checkDB(v) }},
	{flag: "blob", env: "BETAPORT_BLOB", usage: "zip storage `URL`: file:///path or s3://bucket?endpoint=URL&region=R (env BETAPORT_BLOB; default: a folder in the data dir; S3 credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)",
		show: hideURLPassword,
		set:  func(c *Config, v string) error { c.Blob = v; return checkBlob(v) }},
	{flag: "signing-keyring", env: "BETAPORT_SIGNING_KEYRING", secret: true, usage: "`keyring` that seals extensions' signing keys: id:base64 entries, newest last, comma-separated (env BETAPORT_SIGNING_KEYRING; default: the data dir's signing-keyring file; required with a postgres:// store)",
		set: func(c *Config, v string) error {
			c.SigningKeyring = v
			if v == "" {
				return nil // the data dir's file
			}
			if _, err := keyring.Parse(v); err != nil {
				return fmt.Errorf("is not a keyring (%v); give the id:base64 entries `betaport signing-key generate` prints, comma-separated", err)
			}
			return nil
		}},
	{flag: "secret", env: "BETAPORT_SECRET", secret: true, usage: "server `secret` for signing, the same on every replica (env BETAPORT_SECRET; default: generated once into the data dir; required with a postgres:// store)",
		set: func(c *Config, v string) error {
			c.Secret = v
			if v != "" && len(v) < minSecret {
				return fmt.Errorf("is %d characters; give at least %d, such as what `openssl rand -hex 32` prints", len(v), minSecret)
			}
			return nil
		}},
}

var serveSettings = []*setting{
	{flag: "addr", env: "BETAPORT_ADDR", usage: "listen `address` (env BETAPORT_ADDR)",
		set: func(c *Config, v string) error {
			if err := checkAddr(v, "127.0.0.1:8080, or 0.0.0.0:8080 for every interface"); err != nil {
				return err
			}
			c.Addr = v
			return nil
		},
		def: func(c *Config) string { return c.Addr }},
	{flag: "base-url", env: "BETAPORT_BASE_URL", usage: "public base `URL` (env BETAPORT_BASE_URL; default: http://ADDR)",
		set: func(c *Config, v string) error {
			c.BaseURL = v
			if v == "" {
				return nil // from --addr
			}
			if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return errors.New("is not an http:// or https:// URL; give the address people and pipelines reach the service at, like https://beta.example.com")
			}
			return nil
		}},
	{flag: "no-ui", boolean: true, usage: "serve the API without the browser app's pages (for a binary built without it)",
		set: func(c *Config, v string) (err error) { c.NoUI, err = parseSwitch(v); return err }},
	{flag: "adoption-flush", env: "BETAPORT_ADOPTION_FLUSH", usage: "how often the update checks counted in memory are written to the store, a `duration` such as 30s (env BETAPORT_ADOPTION_FLUSH); they are written when the service stops too",
		set: func(c *Config, v string) (err error) {
			c.AdoptionFlush, err = positiveDuration(v, "30s or 1m")
			return err
		},
		def: func(c *Config) string { return durationText(c.AdoptionFlush) }},
	{flag: "webhook-retry-min", env: "BETAPORT_WEBHOOK_RETRY_MIN", usage: "wait after a webhook delivery's first failed attempt, a `duration` doubling up to 1h (env BETAPORT_WEBHOOK_RETRY_MIN)",
		set: func(c *Config, v string) (err error) {
			c.WebhookRetryMin, err = positiveDuration(v, "10s or 1m")
			return err
		},
		def: func(c *Config) string { return durationText(c.WebhookRetryMin) }},
	{flag: "webhooks-allow-private", env: "BETAPORT_WEBHOOKS_ALLOW_PRIVATE", boolean: true, usage: "let webhooks reach addresses that are not public: loopback, private, link-local, reserved (env BETAPORT_WEBHOOKS_ALLOW_PRIVATE=1; default: refused)",
		set: func(c *Config, v string) (err error) { c.WebhookAllowPrivate, err = parseSwitch(v); return err }},
	{flag: "invite-days", env: "BETAPORT_INVITE_DAYS", usage: "how many `days` a new invite link works unused, 1 to 90, unless the admin gives another when inviting (env BETAPORT_INVITE_DAYS)",
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || time.Duration(n)*24*time.Hour > betaport.MaxInviteExpiry {
				return errors.New("is not a number of days from 1 to 90; give one like 14")
			}
			c.InviteDays = n
			return nil
		},
		def: func(c *Config) string { return strconv.Itoa(c.InviteDays) }},
	{flag: "log-format", env: "BETAPORT_LOG_FORMAT", usage: "log lines as `format` text (key=value) or json, one object per line (env BETAPORT_LOG_FORMAT)",
		set: func(c *Config, v string) error {
			if v != "text" && v != "json" {
				return errors.New("is not a log format; give text or json")
			}
			c.LogFormat = v
			return nil
		},
		def: func(c *Config) string { return c.LogFormat }},
	{flag: "log-level", env: "BETAPORT_LOG_LEVEL", usage: "the least `level` logged: debug, info, warn or error (env BETAPORT_LOG_LEVEL)",
		set: func(c *Config, v string) error {
			var l slog.Level
			if err := l.UnmarshalText([]byte(v)); err != nil {
				return errors.New("is not a log level; give debug, info, warn or error")
			}
			c.LogLevel = l
			return nil
		},
		def: func(c *Config) string { return strings.ToLower(c.LogLevel.String()) }},
	{flag: "trusted-proxies", env: "BETAPORT_TRUSTED_PROXIES", usage: "the proxies' `addresses` (IPs or CIDRs, comma-separated) whose X-Request-Id the service keeps as the request's id (env BETAPORT_TRUSTED_PROXIES; default: none, every id is the service's own)",
		set: func(c *Config, v string) error {
			c.TrustedProxies = nil
			for _, part := range strings.Split(v, ",") {
				part = strings.TrimSpace(part)
				if part == "" {
					continue
				}
				p, err := netip.ParsePrefix(part)
				if err != nil {
					a, aerr := netip.ParseAddr(part)
					if aerr != nil {
						return fmt.Errorf("has %q, which is neither an IP address nor a CIDR; give addresses like 10.0.0.7 or 10.0.0.0/8", part)
					}
					p = netip.PrefixFrom(a, a.BitLen())
				}
				c.TrustedProxies = append(c.TrustedProxies, p.Masked())
			}
			return nil
		}},
	{flag: "metrics-addr", env: "BETAPORT_METRICS_ADDR", usage: "serve Prometheus metrics at http://`address`/metrics, e.g. 127.0.0.1:9090 (env BETAPORT_METRICS_ADDR; default: off)",
		set: func(c *Config, v string) error {
			if v != "" {
				if err := checkAddr(v, "127.0.0.1:9090"); err != nil {
					return err
				}
			}
			c.MetricsAddr = v
			return nil
		}},
}

// minSecret is the shortest --secret taken.
const minSecret = 32

// register adds settings to fs as flags that collect their values.
func (c *Config) register(fs *flag.FlagSet, settings []*setting) {
	for _, s := range settings {
		fs.Var(&settingValue{s: s, c: c}, s.flag, s.usage)
	}
}

// settingValue is a setting's flag: it keeps what it is given, which
// loadSettings checks with the environment once every flag is parsed.
type settingValue struct {
	s     *setting
	c     *Config
	value string
	given bool
}

func (v *settingValue) Set(s string) error {
	v.value, v.given = s, true
	return nil
}

func (v *settingValue) IsBoolFlag() bool { return v.s != nil && v.s.boolean }

// String is -h's default: what the environment gives, or the Config's
// value; never a secret.
func (v *settingValue) String() string {
	if v.s == nil || v.s.secret {
		return ""
	}
	if e, ok := v.lookupEnv(); ok {
		return v.shown(e)
	}
	if v.s.def == nil {
		return ""
	}
	return v.s.def(v.c)
}

func (v *settingValue) lookupEnv() (string, bool) {
	if v.s.env == "" {
		return "", false
	}
	return os.LookupEnv(v.s.env)
}

func (v *settingValue) shown(s string) string {
	if v.s.secret {
		return ""
	}
	if v.s.show != nil {
		return v.s.show(s)
	}
	return s
}

// load stores the setting's value from its flag, else its environment
// variable; "" when it is good (or given by neither), else the problem.
func (v *settingValue) load() string {
	val, from := v.value, "--"+v.s.flag
	if !v.given {
		e, ok := v.lookupEnv()
		if !ok {
			return ""
		}
		val, from = e, v.s.env
	}
	err := v.s.set(v.c, val)
	if err == nil {
		return ""
	}
	name := "--" + v.s.flag
	if v.s.env != "" {
		name += " (" + v.s.env + ")"
	}
	switch shown := v.shown(val); {
	case v.s.secret:
		from += " (not shown)"
	case shown == "" && val != "":
		from += " (not shown: not a URL)"
	case v.given:
		from += " " + strconv.Quote(shown)
	default:
		from += "=" + strconv.Quote(shown)
	}
	return name + ": " + from + " " + err.Error()
}

// loadSettings reads every setting registered on fs from its flag or its
// environment variable, after fs is parsed, and returns every bad value
// at once as a usage error.
func loadSettings(fs *flag.FlagSet) error {
	var problems []string
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := f.Value.(*settingValue); ok {
			if p := v.load(); p != "" {
				problems = append(problems, p)
			}
		}
	})
	if len(problems) == 0 {
		return nil
	}
	what := "nothing was done"
	if fs.Name() == "serve" {
		what = "the service did not start"
	}
	if len(problems) == 1 {
		return usageError{problems[0] + " (" + what + ")"}
	}
	return usageError{fmt.Sprintf("%d settings are bad, so %s (a flag overrides its environment variable):\n  %s",
		len(problems), what, strings.Join(problems, "\n  "))}
}

// checkAddr checks a listen address; like names good ones.
func checkAddr(v, like string) error {
	if v == "" {
		return errors.New("is empty; give host:port, like " + like)
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		why := err.Error()
		var ae *net.AddrError
		if errors.As(err, &ae) {
			why = ae.Err
		}
		return fmt.Errorf("is not host:port (%s); give one like %s", why, like)
	}
	if strings.ContainsAny(host, " /") {
		return errors.New("is not host:port (the host is not a name or an IP address); give one like " + like)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("is not host:port (port %q is not a number from 0 to 65535); give one like %s", port, like)
	}
	return nil
}

// checkDB checks a metadata store URL ("" is the default, SQLite in the
// data dir).
func checkDB(v string) error {
	const good = "; give sqlite:///path/file.db, or postgres://user:password@host:5432/db for a database several replicas share"
	switch {
	case v == "":
		return nil
	case strings.HasPrefix(v, "postgres://") || strings.HasPrefix(v, "postgresql://"):
		if _, err := url.Parse(v); err != nil {
			return errors.New("is not a URL" + good)
		}
	case strings.HasPrefix(v, "sqlite://"):
		if v == "sqlite://" {
			return errors.New("names no file" + good)
		}
	default:
		return errors.New("is not a sqlite:// or postgres:// URL" + good)
	}
	return nil
}

// checkBlob checks a zip storage URL ("" is the default, a folder in the
// data dir).
func checkBlob(v string) error {
	const good = "; give file:///path/to/folder, or s3://BUCKET?region=R (and endpoint=https://… for S3-compatible storage)"
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	switch {
	case err != nil:
		return errors.New("is not a URL" + good)
	case u.Scheme == "file":
		if u.Path == "" {
			return errors.New("names no folder" + good)
		}
	case u.Scheme == "s3":
		if u.Host == "" {
			return errors.New("names no bucket" + good)
		}
		if ep := u.Query().Get("endpoint"); ep != "" {
			if e, err := url.Parse(ep); err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
				return errors.New("has an endpoint that is not an http:// or https:// URL" + good)
			}
		}
	default:
		return errors.New("is not a file:// or s3:// URL" + good)
	}
	return nil
}

// positiveDuration parses a duration above zero; like names good ones.
func positiveDuration(v, like string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return 0, errors.New("is not a duration; give a positive one, like " + like)
	case d <= 0:
		return 0, errors.New("is not above zero; give a positive duration, like " + like)
	}
	return d, nil
}

// parseSwitch parses an on/off setting, given as a flag (--flag alone is
// on) or in the environment.
func parseSwitch(v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, errors.New("is neither on nor off; give 1 (on) or 0 (off)")
	}
	return b, nil
}

// durationText is a duration as -h shows it: 10s, not 10.000s.
func durationText(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

// hideURLPassword is what a problem shows of a URL: without a password; "" for
// what is not a URL (it might hold one).
func hideURLPassword(v string) string {
	u, err := url.Parse(v)
	if err != nil {
		return ""
	}
	return u.Redacted()
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
		if len(c.Secret) < minSecret {
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
