package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/demo"
	bphttp "github.com/betaport/betaport/server/http"
	"github.com/betaport/betaport/server/publish"
)

type command func(ctx context.Context, args []string, stdout, stderr io.Writer) error

var commands map[string]command

func init() {
	commands = map[string]command{
		"serve":            serve,
		"team create":      teamCreate,
		"extension create": extensionCreate,
		"user create":      userCreate,
		"key create":       keyCreate,
		"key list":         keyList,
		"key revoke":       keyRevoke,
		"token create":     tokenCreate,
		"token list":       tokenList,
		"token revoke":     tokenRevoke,
		"bundle rollback":  bundleRollback,
		"bundle promote":   bundlePromote,
		"channel list":     channelList,
		"channel create":   channelCreate,
		"channel move":     channelMove,
		"rollout start":    rolloutStart,
		"rollout advance":  rolloutChange(betaport.RolloutAdvance),
		"rollout halt":     rolloutChange(betaport.RolloutHalt),
		"rollout resume":   rolloutChange(betaport.RolloutResume),
		"rollout complete": rolloutChange(betaport.RolloutComplete),
		"submit":           submit,
		"lint":             lint,
		"completion":       completion,
		"seed":             seed,
		"backup":           backup,
		"restore":          restore,
		"signing-key generate": func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return signingKey(ctx, append([]string{"generate"}, args...), stdout, stderr)
		},
		"signing-key rewrap": func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return signingKey(ctx, append([]string{"rewrap"}, args...), stdout, stderr)
		},
	}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// withStorage opens the storage the flags name, runs fn and closes it.
// withExistingStorage is withStorage for the commands that work on what is
// stored already (keys, rollbacks, backups, rewraps): a data folder or
// SQLite file that does not exist is a typo, refused before anything is
// made in it.
func withExistingStorage(ctx context.Context, c Config, fn func(*Storage) error) error {
	if err := c.storedAlready(); err != nil {
		return err
	}
	return withStorage(ctx, c, fn)
}

// storedAlready refuses storage that does not exist yet: the SQLite file
// (the data folder's, by default), or with PostgreSQL the data folder its
// zips and secret default to.
func (c *Config) storedAlready() error {
	if c.sharedDB() {
		if c.Blob != "" {
			return nil
		}
		if _, err := os.Stat(c.Data); err != nil {
			return usageError{fmt.Sprintf("--data %s does not exist: give the data folder the service uses (nothing was made)", c.Data)}
		}
		return nil
	}
	path, err := c.sqlitePath()
	if err != nil {
		return usageError{err.Error()}
	}
	if _, err := os.Stat(path); err != nil {
		if c.DB == "" {
			return usageError{fmt.Sprintf("--data %s holds no Betaport database (%s does not exist): give the data folder the service uses, or make one with `betaport team create` or `betaport seed` (nothing was made)", c.Data, path)}
		}
		return usageError{fmt.Sprintf("--db %s: %s does not exist: give the database the service uses (nothing was made)", c.DB, path)}
	}
	return nil
}

func withStorage(ctx context.Context, c Config, fn func(*Storage) error) error {
	st, err := OpenStorage(ctx, c)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st)
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	m := NewMain()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	m.Config.storageFlags(fs)
	m.Config.serveFlags(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	m.Logger = newLogger(stderr, m.Config.LogFormat, m.Config.LogLevel)
	if !bphttp.HasApp() && !m.Config.NoUI {
		return errors.New("this betaport was built without the browser app (a plain go build or go install embeds no app.wasm), so its pages could never start. " +
			"Build it with `make build` (bin/betaport has the app), or run `betaport serve --no-ui` to serve the API alone")
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := m.Run(ctx); err != nil {
		return err
	}
	if m.Config.LogFormat != "json" { // JSON lines only, then: the "serving" line has the URL
		fmt.Fprintf(stderr, "Betaport is running at %s (Ctrl-C stops it)\n", m.URL())
		printDemoSignIns(stderr, m.Config.Data, m.URL())
	}
	m.Logger.Info("serving", "addr", m.ln.Addr().String(), "url", m.URL())
	select {
	case <-ctx.Done():
	case err := <-m.done:
		m.done <- err // Close waits on it
	}
	m.Logger.Info("shutting down: finishing in-flight requests")
	return m.Close()
}

// newLogger is serve's logger: lines of format ("text" or "json") on w,
// from level up.
func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// demoSignIns is the file seed keeps the demo's sign-ins in, in the data
// folder: serve prints them, on the address it really serves.
const demoSignIns = "demo-sign-in.txt"

// seededAt finds the address the sign-ins were written with.
var seededAt = regexp.MustCompile(`^Open (\S+) and sign in:`)

// printDemoSignIns prints the demo's sign-ins kept in dataDir (if seed
// kept any), their address replaced by url: the one the service listens
// on or was given, whatever seed was told.
func printDemoSignIns(w io.Writer, dataDir, url string) {
	b, err := os.ReadFile(filepath.Join(dataDir, demoSignIns))
	if err != nil {
		return
	}
	text := string(b)
	if at := seededAt.FindStringSubmatch(text); at != nil {
		text = strings.ReplaceAll(text, at[1], url)
	}
	fmt.Fprint(w, text)
}

func teamCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("team create", flag.ContinueOnError)
	c.storageFlags(fs)
	var t betaport.Team
	fs.StringVar(&t.Name, "name", "", "the team's `name` (required)")
	fs.StringVar(&t.Plan, "plan", "", "`plan`: professional or starter (required)")
	fs.IntVar(&t.Seats, "seats", 1, "seat licenses (`N`)")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	return withStorage(ctx, c, func(st *Storage) error {
		if err := st.Store.CreateTeam(ctx, &t); err != nil {
			return err
		}
		return printJSON(stdout, t)
	})
}

func extensionCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("extension create", flag.ContinueOnError)
	c.storageFlags(fs)
	var e betaport.Extension
	fs.Int64Var(&e.TeamID, "team", 0, "the owning team's `ID` (required)")
	fs.StringVar(&e.Name, "name", "", "the extension's `name` (required)")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if e.TeamID == 0 {
		return usageError{"--team is required: the id printed by `betaport team create`"}
	}
	return withStorage(ctx, c, func(st *Storage) error {
		if err := st.Store.CreateExtension(ctx, &e); err != nil {
			return err
		}
		return printJSON(stdout, e)
	})
}

func userCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("user create", flag.ContinueOnError)
	c.storageFlags(fs)
	var u betaport.User
	fs.StringVar(&u.Email, "email", "", "the admin's e-mail `address` (required)")
	fs.Int64Var(&u.TeamID, "team", 0, "the team's `ID` (required)")
	password := fs.String("password", "", "the `password`; default: a generated one, printed once")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if u.Email == "" || u.TeamID == 0 {
		return usageError{"--email and --team are required"}
	}
	generated := *password == ""
	if generated {
		*password = credential.NewPassword()
	} else if len(*password) < 10 {
		return usageError{"--password must be at least 10 characters (or leave it out for a generated one)"}
	}
	return withStorage(ctx, c, func(st *Storage) error {
		if err := st.Store.CreateUser(ctx, &u, credential.HashPassword(*password)); err != nil {
			return err
		}
		out := struct {
			betaport.User
			Password string `json:"password,omitempty"`
		}{User: u}
		if generated {
			out.Password = *password
			fmt.Fprintln(stderr, "The password is printed once; keep it somewhere safe.")
		}
		return printJSON(stdout, out)
	})
}

func keyCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("key create", flag.ContinueOnError)
	id := fs.Int64("extension", 0, "the extension's `ID` (required)")
	label := fs.String("label", "", "where the key is used, e.g. \"GitHub Actions\" (`label`, required)")
	channel := fs.String("channel", "", "bind the key to this `CHANNEL`: it publishes there only")
	out := fs.String("out", "", "write the key file to this `file` (required); it holds a secret")
	c.storageFlags(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *id == 0 || *out == "" || strings.TrimSpace(*label) == "" {
		return usageError{"--extension, --label and --out are required"}
	}
	return withExistingStorage(ctx, c, func(st *Storage) error {
		secret := credential.NewToken()
		b, err := json.MarshalIndent(api.KeyFile{Service: api.ServiceKey{ExtensionID: strconv.FormatInt(*id, 10), APIKey: secret}}, "", "  ")
		if err != nil {
			return err
		}
		// Write the file first: a key recorded but never saved would be
		// a secret nobody has.
		if err := os.WriteFile(*out, append(b, '\n'), 0o600); err != nil {
			return err
		}
		k := &betaport.Key{ExtensionID: *id, Label: *label, CreatedBy: betaport.ActorCommandLine, Channel: *channel}
		if err := st.Store.CreateKey(ctx, k, publish.HashKey(secret)); err != nil {
			os.Remove(*out)
			return err
		}
		fmt.Fprintf(stderr, "Wrote %s, the key file of key %d (%s) of extension %d. The extension's other keys keep working.\n", *out, k.ID, k.Label, *id)
		return printJSON(stdout, k)
	})
}

func keyList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("key list", flag.ContinueOnError)
	id := fs.Int64("extension", 0, "the extension's `ID` (required)")
	c.storageFlags(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *id == 0 {
		return usageError{"--extension is required"}
	}
	return withExistingStorage(ctx, c, func(st *Storage) error {
		all, err := everyPage(func(before int64) ([]*betaport.Key, error) { return st.Store.FindKeys(ctx, *id, before, 100) },
			func(k *betaport.Key) int64 { return k.ID })
		if err != nil {
			return err
		}
		return printJSON(stdout, all)
	})
}

func keyRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("key revoke", flag.ContinueOnError)
	id := fs.Int64("extension", 0, "the extension's `ID` (required)")
	keyID := fs.Int64("key", 0, "the key's `ID`, as key list shows it (required)")
	c.storageFlags(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *id == 0 || *keyID == 0 {
		return usageError{"--extension and --key are required"}
	}
	return withExistingStorage(ctx, c, func(st *Storage) error {
		k, err := st.Store.RevokeKey(ctx, *id, *keyID, betaport.ActorCommandLine)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "Key %d (%s) of extension %d is revoked: calls made with it are refused.\n", k.ID, k.Label, *id)
		return printJSON(stdout, k)
	})
}

// bundleRollback makes an older bundle current again, as the bundles
// list's Roll back button does. Its CRX is built by the service when first
// asked for: only the service knows its public update URL.
func bundleRollback(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("bundle rollback", flag.ContinueOnError)
	id := fs.Int64("extension", 0, "the extension's `ID` (required)")
	to := fs.Int64("to", 0, "the `NUMBER` of the bundle testers should get again (required)")
	channel := fs.String("channel", betaport.DefaultChannel, "the `CHANNEL` whose testers get it")
	c.storageFlags(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *id == 0 || *to == 0 {
		return usageError{"--extension and --to are required"}
	}
	return withExistingStorage(ctx, c, func(st *Storage) error {
		ext, err := st.Store.FindExtension(ctx, *id)
		if err != nil {
			return err
		}
		svc := &publish.Service{Store: st.Store, Blobs: st.Blobs}
		b, fresh, err := svc.Rollback(ctx, ext, *to, *channel, betaport.ActorCommandLine)
		if err != nil {
			return err
		}
		if fresh {
			fmt.Fprintf(stderr, "Bundle #%d serves bundle #%d's zip as version %s: testers get it now, and installed copies update to it.\n", b.Number, *to, b.Version)
		} else {
			fmt.Fprintf(stderr, "Bundle #%d already serves bundle #%d again: nothing new was published.\n", b.Number, *to)
		}
		return printJSON(stdout, b)
	})
}

func seed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	c.storageFlags(fs)
	ifEmpty := fs.Bool("if-empty", false, "do nothing (and succeed) when the data dir already has data")
	small := fs.Bool("small", false, "load a small demo (3 extensions, 123 bundles, 65 testers) instead of the full one (100,000 testers)")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	// The sign-ins are written into the data folder: it is made first, so
	// a folder that cannot be made fails the seed before it loads anything.
	if err := os.MkdirAll(c.Data, 0o700); err != nil {
		return fmt.Errorf("--data %s: %w (nothing was loaded)", c.Data, err)
	}
	return withStorage(ctx, c, func(st *Storage) error {
		empty, err := st.Store.Empty(ctx)
		if err != nil {
			return err
		}
		if !empty {
			if *ifEmpty {
				fmt.Fprintln(stderr, "The data dir already has data; not seeding it again.")
				return nil
			}
			return betaport.Errorf(betaport.ECONFLICT, "The data dir %s already has data; seed only fills an empty one.", c.Data)
		}
		fmt.Fprintln(stderr, "Loading demo data…")
		size := demo.Full
		if *small {
			size = demo.Small
		}
		d, err := demo.Load(ctx, st.Store, st.Blobs, size)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "Demo data loaded: %d teams, %d extensions, %d bundles, %d testers, %d feedback reports.\n",
			len(d.Teams), len(d.Extensions), d.Bundles, d.Testers, d.Reports)
		// The demo's sign-ins are kept in the data dir so `make run` can
		// show them every time; it is demo data, not an operator's.
		// Shown before anything else can fail: the passwords are made once.
		signIns := d.SignIns(c.baseURL(nil))
		fmt.Fprint(stderr, signIns)
		if err := os.WriteFile(filepath.Join(c.Data, demoSignIns), []byte(signIns), 0o600); err != nil {
			fmt.Fprintf(stderr, "The sign-ins above could not be kept in the data folder (%v): note them now.\n", err)
		}
		return printJSON(stdout, d)
	})
}

// The operator's token commands: an access token made with the data
// folder, for the first script before anyone signs in (admins make theirs
// on the settings page). A token never makes a token, so these have no
// remote form.

func tokenCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("token create", flag.ContinueOnError)
	id := fs.Int64("extension", 0, "the extension's `ID` (required)")
	name := fs.String("name", "", "which script uses it, e.g. `\"nightly release\"` (required)")
	scopes := fs.String("scopes", "", "what it may do, comma-separated: `"+strings.Join(betaport.AllScopes, ",")+"` (required)")
	days := fs.Int("days", 0, "it stops working after `D` days (1–366; without it, when revoked)")
	c.storageFlags(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *id == 0 || strings.TrimSpace(*name) == "" || *scopes == "" {
		return usageError{"--extension, --name and --scopes are required"}
	}
	daysGiven := false
	fs.Visit(func(f *flag.Flag) { daysGiven = daysGiven || f.Name == "days" })
	if daysGiven && (*days < 1 || *days > 366) {
		return usageError{"--days is 1 to 366; leave it out for a token that lasts until it is revoked"}
	}
	tok := &betaport.AccessToken{ExtensionID: *id, Name: *name, Scopes: strings.Split(*scopes, ","), CreatedBy: betaport.ActorCommandLine}
	if *days > 0 {
		at := betaport.Now().Add(time.Duration(*days) * 24 * time.Hour)
		tok.ExpiresAt = &at
	}
	return withExistingStorage(ctx, c, func(st *Storage) error {
		secret := credential.NewAccessToken()
		if err := st.Store.CreateAccessToken(ctx, tok, credential.HashToken(secret)); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "Made token %d (%s) of extension %d. Its secret is printed this once: keep it as BETAPORT_TOKEN.\n", tok.ID, tok.Name, *id)
		return printJSON(stdout, api.CreatedToken{Token: *tok, Secret: secret})
	})
}

func tokenList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("token list", flag.ContinueOnError)
	id := fs.Int64("extension", 0, "the extension's `ID` (required)")
	c.storageFlags(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *id == 0 {
		return usageError{"--extension is required"}
	}
	return withExistingStorage(ctx, c, func(st *Storage) error {
		all, err := everyPage(func(before int64) ([]*betaport.AccessToken, error) {
			return st.Store.FindAccessTokens(ctx, *id, before, 100)
		}, func(t *betaport.AccessToken) int64 { return t.ID })
		if err != nil {
			return err
		}
		return printJSON(stdout, all)
	})
}

// everyPage reads a keyset-paged list to its end: find answers the page
// before an id (0: the first), id names an item's place.
func everyPage[T any](find func(before int64) ([]*T, error), id func(*T) int64) ([]*T, error) {
	all := []*T{}
	for before := int64(0); ; {
		page, err := find(before)
		if err != nil || len(page) == 0 {
			return all, err
		}
		all = append(all, page...)
		before = id(page[len(page)-1])
	}
}

func tokenRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("token revoke", flag.ContinueOnError)
	id := fs.Int64("extension", 0, "the extension's `ID` (required)")
	tokenID := fs.Int64("token", 0, "the token's `ID`, as token list shows it (required)")
	c.storageFlags(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *id == 0 || *tokenID == 0 {
		return usageError{"--extension and --token are required"}
	}
	return withExistingStorage(ctx, c, func(st *Storage) error {
		tok, err := st.Store.RevokeAccessToken(ctx, *id, *tokenID, betaport.ActorCommandLine)
		if err != nil {
			return err
		}
		return printJSON(stdout, tok)
	})
}
