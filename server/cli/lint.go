package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/betaport/betaport/server/publish"
)

// lint runs on a zip every check sign runs, with no server: the same
// problems, printed as submit prints them, and the same exit code (4).
// What sign knows only from the extension's own state (a version ceiling
// reached) is not checked.
func lint(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lint", flag.ContinueOnError)
	maxSize := fs.Int64("max-size", 0, "the largest zip the service takes, in `bytes` (its default without it; a service's own is at GET /api/submit/limits)")
	files, err := parseWithFiles(fs, args, stderr, "lint")
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageError{"give one zip to check: betaport lint FILE.zip (or - to read it from stdin)"}
	}
	// The checks submit makes before any call, then sign's.
	z, err := openZip(files[0])
	if err != nil {
		return err
	}
	defer z.done()
	limits := publish.DefaultLimits()
	if *maxSize > 0 {
		limits.MaxZipSize = *maxSize
	}
	res, problems, err := publish.Lint(z.f, z.size, limits)
	if err != nil {
		return exitError{ExitFailure, fmt.Sprintf("reading %s: %v", files[0], err)}
	}
	if len(problems) > 0 {
		for _, zp := range problems {
			path := zp.Path
			if path == "" {
				path = "(zip)"
			}
			fmt.Fprintf(stderr, "%s: %s (%s)\n", path, zp.Message, zp.Code)
		}
		return exitError{ExitInvalid, fmt.Sprintf("%s would not be published: fix the %d problem(s) above, then run the command again.", z.name, len(problems))}
	}
	fmt.Fprintf(stderr, "betaport lint: %s passes every check sign runs (%s %s, %d files).\n", z.name, res.Manifest.Name, res.Manifest.Version, res.FileCount)
	return printJSON(stdout, map[string]any{
		"name": res.Manifest.Name, "version": res.Manifest.Version, "manifestVersion": res.Manifest.ManifestVersion,
		"fileCount": res.FileCount, "size": z.size,
	})
}

// openInput opens the zip a command was given: a file, or "-" for stdin,
// kept in a temporary file (its checks and its upload need its size and
// read it more than once). done closes it (and removes the copy).
func openInput(path string) (f *os.File, size int64, done func(), err error) {
	if path != "-" {
		f, err = os.Open(path)
		if err != nil {
			return nil, 0, nil, usageError{fmt.Sprintf("%s: cannot read the zip (%v). Give the path of the extension's .zip file, or - to read it from stdin.", path, errors.Unwrap(err))}
		}
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			f.Close()
			return nil, 0, nil, usageError{fmt.Sprintf("%s is not a file. Give the path of the extension's .zip file, or - to read it from stdin.", path)}
		}
		return f, fi.Size(), func() { f.Close() }, nil
	}
	tmp, err := os.CreateTemp("", "betaport-stdin-*.zip")
	if err != nil {
		return nil, 0, nil, err
	}
	done = func() { tmp.Close(); os.Remove(tmp.Name()) }
	size, err = io.Copy(tmp, os.Stdin)
	if err != nil {
		done()
		return nil, 0, nil, exitError{ExitFailure, fmt.Sprintf("reading the zip from stdin: %v", err)}
	}
	if size == 0 {
		done()
		return nil, 0, nil, usageError{"stdin held nothing: pipe the zip in, as in betaport lint - < dist.zip"}
	}
	return tmp, size, done, nil
}

// parseWithFiles parses flags that may come before or after the file
// arguments (as submit's do) and returns the files.
func parseWithFiles(fs *flag.FlagSet, args []string, stderr io.Writer, name string) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var files []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			printFlags(stderr, fs)
			return nil, errHelpShown
		} else if err != nil {
			return nil, usageError{err.Error() + ` ("betaport ` + name + ` -h" lists its flags)`}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return files, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(files, rest...), nil
		}
		files = append(files, rest[0])
		args = rest[1:]
	}
}
