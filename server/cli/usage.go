package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	bphttp "github.com/betaport/betaport/server/http"
)

// errHelpShown ends a command whose -h printed its help: exit 0.
var errHelpShown = errors.New("help shown")

// storageFlagNames are the flags every command that touches storage takes
// (Config.storageFlags); a command's help lists them once, after its own.
var storageFlagNames = map[string]bool{"data": true, "db": true, "blob": true, "signing-keyring": true, "secret": true}

// parse parses a command's flags. -h (or --help) prints the command's own
// flags, then the storage flags as one group, and ends the command with
// exit 0; a flag it does not know, or a bad value of a command's own flag,
// is one line that says which (exit 2). Then the configuration's settings
// are read from their flags or else the environment; every bad one is
// listed in one message (exit 2).
func parse(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(io.Discard) // the errors and the help are ours
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printFlags(stderr, fs)
			return errHelpShown
		}
		return usageError{err.Error() + ` ("betaport ` + fs.Name() + ` -h" lists its flags)`}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	// The configuration's settings, from their flags or the environment,
	// every bad one reported at once (config.go).
	return loadSettings(fs)
}

// printFlags writes a command's help: its own flags first, then the
// storage flags it shares with the other commands.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	own := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	storage := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		set := own
		if storageFlagNames[f.Name] {
			set = storage
		}
		set.Var(f.Value, f.Name, f.Usage)
	})
	fmt.Fprintf(w, "Usage: betaport %s [flags]\n\nFlags:\n", fs.Name())
	own.SetOutput(w)
	own.PrintDefaults()
	hasStorage := false
	storage.VisitAll(func(*flag.Flag) { hasStorage = true })
	if hasStorage {
		fmt.Fprint(w, "\nStorage flags (every command that touches storage takes them):\n")
		storage.SetOutput(w)
		storage.PrintDefaults()
	}
}

// groups are the commands that have subcommands.
var groups = map[string]bool{"team": true, "extension": true, "user": true, "key": true, "bundle": true, "signing-key": true,
	"channel": true, "rollout": true, "tester": true, "webhook": true, "audit": true, "feedback": true, "token": true, "update-url": true}

// groupUsage is the usage lines of a group's subcommands.
func groupUsage(group string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage:\n")
	remote := false
	for _, line := range strings.Split(usageOperator, "\n") {
		if strings.HasPrefix(line, "  betaport "+group+" ") {
			b.WriteString(line + "\n")
		}
	}
	for _, line := range strings.Split(remoteUsage(), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 3 || fields[0] != "betaport" || fields[1] != group {
			continue
		}
		if _, both := commands[group+" "+fields[2]]; both {
			remote = true // listed above; --server runs it remotely
			continue
		}
		b.WriteString(line + "\n")
	}
	if remote {
		fmt.Fprintf(&b, "\nWith --server URL (or BETAPORT_SERVER) and BETAPORT_TOKEN, these run on a remote\nservice, without --extension when the token sees one (\"betaport help\" lists the scopes).\n")
	}
	fmt.Fprintf(&b, "\nRun \"betaport %s SUBCOMMAND -h\" for a subcommand's flags.\n", group)
	return b.String()
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// version is what --version prints: the semantic version, the build id
// (the one /healthz and the pages carry) and the Go that built the binary.
func version() string {
	return fmt.Sprintf("betaport %s (build %s, %s %s/%s)\n", versionNumber(), bphttp.BuildID(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// Release is the semantic version make stamps into a build of a tagged
// commit (-X …/server/cli.Release=v1.2.3); empty otherwise.
var Release string

// versionNumber is the binary's semantic version: the one make stamped,
// else the module's from the build information (Go writes a pseudo-version
// such as v0.0.0-20261202143000-abcdef123456 from the checkout it built),
// else 0.0.0-dev.
func versionNumber() string {
	if Release != "" {
		return strings.TrimPrefix(Release, "v")
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return strings.TrimPrefix(info.Main.Version, "v")
	}
	return "0.0.0-dev"
}
