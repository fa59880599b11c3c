// Package cli is the betaport command: serve, and the subcommands scripts
// and operators use. Output meant for scripts is JSON on stdout; messages for
// people go to stderr.
package cli

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/adoption"
	"github.com/betaport/betaport/server/blobstore"
	bphttp "github.com/betaport/betaport/server/http"
	"github.com/betaport/betaport/server/metrics"
	"github.com/betaport/betaport/server/postgres"
	"github.com/betaport/betaport/server/publish"
	"github.com/betaport/betaport/server/sqlite"
	"github.com/betaport/betaport/server/webhook"
)

// Main is a running Betaport service. Tests start it on port 0:
//
//	m := cli.NewMain()
//	m.Config.Addr, m.Config.Data = "127.0.0.1:0", t.TempDir()
//	err := m.Run(ctx)
//	defer m.Close()
type Main struct {
	Config Config
	Logger *slog.Logger

	Store  betaport.Store
	Blobs  *blob.Bucket
	Server *bphttp.Server
	// Publish runs the submit flow and the sweeper; Server serves it.
	Publish *publish.Service

	// Metrics is what the service records, when Config.MetricsAddr is set.
	Metrics *metrics.Metrics
	// Webhooks sends extensions' events to their webhooks.
	Webhooks *webhook.Worker

	ln         net.Listener
	metricsLn  net.Listener
	metricsSrv *http.Server
	done       chan error
	stopSweep  context.CancelFunc
	closeOnce  sync.Once
	closeErr   error
}

// NewMain returns a Main with the default configuration.
func NewMain() *Main {
	return &Main{Config: DefaultConfig(), Logger: slog.Default()}
}

// Storage is an open store and bucket.
type Storage struct {
	Store betaport.Store
	Blobs *blob.Bucket
}

// Close closes both.
func (s *Storage) Close() error {
	return errors.Join(s.Blobs.Close(), s.Store.Close())
}

// OpenStorage opens the store and bucket that c names: SQLite or
// PostgreSQL (--db sqlite:///… or postgres://…), local files or S3
// (--blob file:///… or s3://…).
func OpenStorage(ctx context.Context, c Config) (*Storage, error) {
	var store betaport.Store
	var err error
	if c.sharedDB() {
		// The secret is given by flag to every replica; commands other
		// than serve do not need it.
		store, err = postgres.Open(ctx, c.DB)
	} else {
		if _, err := c.secret(); err != nil {
			return nil, err
		}
		var path string
		if path, err = c.sqlitePath(); err != nil {
			return nil, err
		}
		store, err = sqlite.Open(ctx, path)
	}
	if err != nil {
		return nil, err
	}
	blobURL := c.Blob
	if blobURL == "" {
		if blobURL, err = blobstore.FileURL(filepath.Join(c.Data, "blobs")); err != nil {
			store.Close()
			return nil, err
		}
	}
	blobs, err := blobstore.Open(ctx, blobURL)
	if err != nil {
		store.Close()
		return nil, err
	}
	return &Storage{Store: store, Blobs: blobs}, nil
}

// Run opens storage, listens and starts serving in the background.
func (m *Main) Run(ctx context.Context) error {
	switch {
	case m.Config.AdoptionFlush < 0:
		return errors.New("--adoption-flush (or BETAPORT_ADOPTION_FLUSH) must be a duration such as 30s or 1m")
	case m.Config.AdoptionFlush == 0:
		m.Config.AdoptionFlush = DefaultAdoptionFlush
	}
	secret, err := m.Config.secret()
	if err != nil {
		return err
	}
	st, err := OpenStorage(ctx, m.Config)
	if err != nil {
		return err
	}
	m.Store, m.Blobs = st.Store, st.Blobs
	keys, err := m.Config.signingKeyring(ctx, m.Store)
	if err != nil {
		st.Close()
		return err
	}
	if n, err := prepareSigningKeys(ctx, m.Store, keys); err != nil {
		st.Close()
		return err
	} else if n > 0 {
		m.Logger.Info("sealed signing keys stored in plain text", "count", n)
	}
	hooks, err := prepareWebhookSecrets(ctx, m.Store, keys)
	if err != nil {
		st.Close()
		return err
	}
	if hooks.Changed > 0 {
		m.Logger.Info("sealed webhook secrets stored in plain text", "count", hooks.Changed)
	}
	if len(hooks.Unopenable) > 0 {
		m.Logger.Warn("the signing keyring cannot open these webhooks' secrets: their events are not sent until serve is given the key they were sealed with, or the webhooks are added again",
			"webhooks", hooks.Unopenable)
	}
	m.ln, err = net.Listen("tcp", m.Config.Addr)
	if err != nil {
		st.Close()
		return fmt.Errorf("listen on %s: %w (is another server running? choose another with --addr)", m.Config.Addr, err)
	}
	if m.Config.MetricsAddr != "" {
		if err := m.serveMetrics(); err != nil {
			m.ln.Close()
			st.Close()
			return err
		}
	}
	baseURL := m.Config.baseURL(m.ln.Addr())
	m.Publish = &publish.Service{
		Store:   m.Store,
		Blobs:   m.Blobs,
		Logger:  m.Logger,
		BaseURL: baseURL,
		Secret:  secret,
		// Extensions' CRX signing keys are sealed with it at rest.
		SigningKeys: keys,
		Adoption:    &adoption.Counter{Store: m.Store},
		// A publish makes its testers' copies before their updaters ask.
		Config: publish.Config{WarmTesterCopies: true},
	}
	m.Server = &bphttp.Server{
		Store:   m.Store,
		Blobs:   m.Blobs,
		Logger:  m.Logger,
		BaseURL: baseURL,
		Secret:  secret,
		Publish: m.Publish,
		NoUI:    m.Config.NoUI,
		Metrics: m.Metrics,
		// Webhooks the worker would refuse to send to are refused when made.
		WebhookAllowPrivate: m.Config.WebhookAllowPrivate,
		InviteExpiry:        time.Duration(m.Config.InviteDays) * 24 * time.Hour,
		// Their X-Request-Id is kept as the request's id.
		TrustedProxies: m.Config.TrustedProxies,
		// The upload panel PUTs straight to S3: the page may connect there.
		UploadOrigin: blobstore.UploadOrigin(m.Config.Blob),
		// The command it runs as, offered to pipelines (GET /cli/betaport).
		CLIBinary:      m.Config.CLIBinary,
		FeedbackRefill: m.Config.FeedbackRefill,
	}
	if m.Server.CLIBinary == "" {
		m.Server.CLIBinary, _ = os.Executable()
	}
	m.Server.Handler() // build routes now, not on the first request
	m.done = make(chan error, 1)
	go func() { m.done <- m.Server.Serve(m.ln) }()
	sweepCtx, stopSweep := context.WithCancel(context.Background())
	m.stopSweep = stopSweep
	go m.sweep(sweepCtx)
	m.Webhooks = &webhook.Worker{Store: m.Store, Logger: m.Logger, Metrics: m.Metrics,
		RetryMin: m.Config.WebhookRetryMin, AllowPrivate: m.Config.WebhookAllowPrivate,
		// Webhook secrets are sealed with the signing keyring.
		Keyring: keys}
	m.Webhooks.Start()
	go m.Publish.Adoption.Run(sweepCtx, m.Config.AdoptionFlush, m.Logger)
	return nil
}

// serveMetrics serves the metrics on their own listener.
func (m *Main) serveMetrics() error {
	ln, err := net.Listen("tcp", m.Config.MetricsAddr)
	if err != nil {
		return fmt.Errorf("listen on %s for metrics: %w (choose another with --metrics-addr)", m.Config.MetricsAddr, err)
	}
	m.Metrics = metrics.New(bphttp.BuildID())
	if db, ok := m.Store.(interface{ SQL() *sql.DB }); ok {
		m.Metrics.WatchDB(db.SQL())
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Metrics.Handler())
	m.metricsLn, m.metricsSrv = ln, &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go m.metricsSrv.Serve(ln)
	m.Logger.Info("serving metrics", "url", m.MetricsURL())
	return nil
}

// MetricsURL is where the metrics are scraped ("" when they are off).
func (m *Main) MetricsURL() string {
	if m.metricsLn == nil {
		return ""
	}
	return "http://" + m.metricsLn.Addr().String() + "/metrics"
}

// sweep removes dead uploads' bytes and what crashes left, at start-up and
// then every minute until Close; and, hourly, webhook deliveries past
// their retention.
func (m *Main) sweep(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	var pruned time.Time
	for {
		if n, err := m.Publish.Sweep(ctx); err != nil && ctx.Err() == nil {
			m.Logger.Warn("sweeping storage", "err", err)
		} else if n > 0 {
			m.Logger.Info("swept storage", "removed", n)
		}
		if time.Since(pruned) >= time.Hour {
			pruned = time.Now()
			if n, err := m.Store.PruneDeliveries(ctx, betaport.Now().Add(-betaport.DeliveryRetention)); err != nil && ctx.Err() == nil {
				m.Logger.Warn("pruning webhook deliveries", "err", err)
			} else if n > 0 {
				m.Logger.Info("pruned webhook deliveries", "removed", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// URL is the address the service answers on.
func (m *Main) URL() string { return m.Server.BaseURL }

// Close finishes in-flight requests (up to 30 s), then closes storage.
// Closing twice is fine.
func (m *Main) Close() error {
	m.closeOnce.Do(func() { m.closeErr = m.close() })
	return m.closeErr
}

func (m *Main) close() error {
	var errs []error
	if m.stopSweep != nil {
		m.stopSweep()
	}
	if m.Webhooks != nil {
		errs = append(errs, m.Webhooks.Close()) // before the store it reads closes
	}
	if m.metricsSrv != nil {
		errs = append(errs, m.metricsSrv.Close())
	}
	if m.Server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		errs = append(errs, m.Server.Shutdown(ctx), <-m.done)
	}
	if m.Publish != nil && m.Store != nil {
		// The checks answered since the last flush, now that no request
		// can add more.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := m.Publish.Adoption.Flush(ctx); err != nil {
			errs = append(errs, fmt.Errorf("writing update-check counts: %w", err))
		}
	}
	if m.Blobs != nil {
		errs = append(errs, m.Blobs.Close())
	}
	if m.Store != nil {
		errs = append(errs, m.Store.Close())
	}
	return errors.Join(errs...)
}

// Run runs the betaport command with args (without the program name) and
// returns its exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	cmd, rest := args[0], args[1:]
	switch {
	case isHelp(cmd):
		fmt.Fprint(stdout, usage)
		return 0
	case cmd == "version" || cmd == "--version" || cmd == "-version":
		fmt.Fprint(stdout, version())
		return 0
	case groups[cmd] && (len(rest) == 0 || isHelp(rest[0])):
		if len(rest) == 0 {
			fmt.Fprintf(stderr, "betaport %s: which one?\n%s", cmd, groupUsage(cmd))
			return ExitUsage
		}
		fmt.Fprint(stdout, groupUsage(cmd))
		return 0
	case groups[cmd] && strings.HasPrefix(rest[0], "-"):
		// A flag where the subcommand goes: say so, not "unknown command".
		fmt.Fprintf(stderr, "betaport %s: %q is a flag; name the %s command first, then its flags (\"betaport %s -h\" lists them)\n",
			cmd, rest[0], cmd, cmd)
		return ExitUsage
	case groups[cmd]:
		cmd, rest = cmd+" "+rest[0], rest[1:]
	}
	run, ok := commands[cmd]
	if spec, remote := remoteCommands[cmd]; remote && (!ok || remoteWanted(rest)) {
		run, ok = spec.run(cmd), true
	}
	if !ok {
		fmt.Fprintf(stderr, "betaport: unknown command %q (\"betaport help\" lists them)\n", cmd)
		return ExitUsage
	}
	err := run(ctx, rest, stdout, stderr)
	if err == nil || errors.Is(err, errHelpShown) {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		fmt.Fprintf(stderr, "betaport %s: %s\n", cmd, ee.msg)
		return ee.code
	}
	var ue usageError
	if errors.As(err, &ue) {
		if ue.msg != "" {
			fmt.Fprintf(stderr, "betaport %s: %s\n", cmd, ue.msg)
		}
		return ExitUsage
	}
	fmt.Fprintf(stderr, "betaport %s: %s\n", cmd, message(err))
	return ExitFailure
}

// Exit codes.
const (
	ExitFailure = 1
	ExitUsage   = 2
)

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// message is what a person reads for err: a domain message as it is, any
// other error with its cause.
func message(err error) string {
	if betaport.ErrorCode(err) == betaport.EINTERNAL {
		return err.Error()
	}
	return betaport.ErrorMessage(err)
}

// usage is the whole help: the operator's commands, then the admin's
// remote ones (remoteUsage).
var usage = usageOperator + remoteUsage()

const usageOperator = `betaport builds and serves browser-extension bundles to beta testers.

Usage:
  betaport serve [--addr A] [--data D] [--db URL] [--blob URL] [--base-url URL] [--secret S]
  betaport team create --name N --plan professional|starter [--seats N]
  betaport extension create --team ID --name N
  betaport user create --email E --team ID [--password P]
  betaport key create --extension ID --label L --out key.json [--channel NAME]
  betaport key list --extension ID
  betaport key revoke --extension ID --key KEYID
  betaport token create --extension ID --name N --scopes read,testers,... [--days D]
  betaport token list --extension ID
  betaport token revoke --extension ID --token TOKENID
  betaport bundle rollback --extension ID --to NUMBER [--channel NAME]
  betaport bundle promote --extension ID --bundle NUMBER --channel NAME [--percent P]
  betaport channel list --extension ID
  betaport channel create --extension ID --name NAME
  betaport channel move --extension ID --tester EMAIL --to NAME
  betaport rollout start --extension ID --channel NAME --bundle NUMBER --percent P
  betaport rollout advance --extension ID --channel NAME --percent P
  betaport rollout halt|resume|complete --extension ID --channel NAME
  betaport submit --base-url URL --key key.json FILE.zip   (FILE.zip may be -: stdin; BETAPORT_KEY: the key file's content)
  betaport lint [--max-size BYTES] FILE.zip                 (every check sign runs, without a server)
  betaport completion bash|zsh|fish                         (a completion script for the shell)
  betaport seed
  betaport backup --out FILE         (while it serves: the database, secret, keyring and blobs)
  betaport restore --from FILE --data EMPTYDIR
  betaport signing-key generate | rewrap
  betaport --version                                        (the semantic version and the build)

Commands that touch storage take --data, --db and --blob (env BETAPORT_DATA,
BETAPORT_DB, BETAPORT_BLOB). Several replicas share --db postgres://… and
--blob s3://…, one --secret and one --signing-keyring (see README,
"Scaling out"). Extensions' CRX signing keys are sealed at rest with the
signing keyring (the data dir's signing-keyring file by default): back it
up apart from the database; signing-key rewrap moves every key to its
newest entry. API keys for pipelines are "betaport key", not these. Run
"betaport COMMAND -h" for a command's flags.
`
