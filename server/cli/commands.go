package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/demo"
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
		"submit":           submit,
		"seed":             seed,
		"signing-key":      signingKey,
	}
}

// parse parses a command's flags; -h prints them and is not an error.
func parse(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return usageError{}
		}
		return usageError{} // flag already printed what is wrong
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// withStorage opens the storage the flags name, runs fn and closes it.
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
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := m.Run(ctx); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "Betaport is running at %s (Ctrl-C stops it)\n", m.URL())
	m.Logger.Info("serving", "addr", m.ln.Addr().String(), "url", m.URL())
	select {
	case <-ctx.Done():
	case err := <-m.done:
		m.done <- err // Close waits on it
	}
	m.Logger.Info("shutting down: finishing in-flight requests")
	return m.Close()
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
	c.storageFlags(fs)
	id := fs.Int64("extension", 0, "the extension's `ID` (required)")
	out := fs.String("out", "", "write the key file to this `file` (required); it holds a secret")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *id == 0 || *out == "" {
		return usageError{"--extension and --out are required"}
	}
	return withStorage(ctx, c, func(st *Storage) error {
		if _, err := st.Store.FindExtension(ctx, *id); err != nil {
			return err
		}
		key := credential.NewToken()
		kf := api.KeyFile{Service: api.ServiceKey{ExtensionID: strconv.FormatInt(*id, 10), APIKey: key}}
		b, err := json.MarshalIndent(kf, "", "  ")
		if err != nil {
			return err
		}
		// Write the file first: a key that was rotated but never saved
		// would lock every pipeline out.
		if err := os.WriteFile(*out, append(b, '\n'), 0o600); err != nil {
			return err
		}
		if err := st.Store.SetExtensionKey(ctx, *id, publish.HashKey(key)); err != nil {
			os.Remove(*out)
			return err
		}
		fmt.Fprintf(stderr, "Wrote %s. The previous key of extension %d no longer works; update pipelines that used it.\n", *out, *id)
		return nil
	})
}

func seed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	c.storageFlags(fs)
	ifEmpty := fs.Bool("if-empty", false, "do nothing (and succeed) when the data dir already has data")
	if err := parse(fs, args, stderr); err != nil {
		return err
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
		d, err := demo.Load(ctx, st.Store, st.Blobs, demo.Full)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "Demo data loaded: %d teams, %d extensions, %d bundles, %d testers.\n",
			len(d.Teams), len(d.Extensions), d.Bundles, d.Testers)
		// The demo's sign-ins are kept in the data dir so `make run` can
		// show them every time; it is demo data, not an operator's.
		signIns := d.SignIns(c.baseURL(nil))
		if err := os.WriteFile(filepath.Join(c.Data, "demo-sign-in.txt"), []byte(signIns), 0o600); err != nil {
			return err
		}
		fmt.Fprint(stderr, signIns)
		return printJSON(stdout, d)
	})
}
