package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// Exit codes of betaport submit, beside ExitFailure and ExitUsage.
const (
	ExitAuth    = 3 // 401: the key is wrong or was revoked; 403: the team is not on the Professional plan
	ExitInvalid = 4 // the server rejected the zip: 422 (every problem is printed), 413, 415
	ExitServer  = 5 // network failure or 5xx after the retries; a 409/410 that persists
)

// exitError ends a command with its own exit code; msg is printed as the
// usage and other errors are.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

const submitUsage = `Usage: betaport submit --base-url URL --key key.json [--notes TEXT | --notes-file FILE] [--channel NAME] [--rollout P] [--retries N] [--quiet] FILE.zip

Publishes FILE.zip as the extension's new bundle with the three-call submit
flow: request an upload URL, PUT the zip to it, sign. Prints the bundle as
JSON on stdout. Release notes (at most 10 KiB; paragraphs, "- " lists and
[links](https://…)) are shown to testers with the bundle. --channel publishes
to one of the extension's channels (beta without it); --rollout P starts a
staged rollout to P % of the channel's testers (1–99; all of them without it).
FILE.zip may be - to read the zip from stdin. The key may also be given as
the key file's content in BETAPORT_KEY (a CI secret needs no file).
"betaport lint FILE.zip" runs sign's checks first, with no server.

Exit codes: 0 published; 1 other failure (release notes refused: nothing
was uploaded); 2 usage (flags, key file, zip);
3 key refused or plan not Professional; 4 zip rejected; 5 network or server
failure after the retries.

Flags:
`

// submitOptions are submit's flags and argument.
type submitOptions struct {
	baseURL string
	keyPath string
	retries int
	quiet   bool
	zipPath string
	// notes is --notes; notesPath --notes-file.
	notes, notesPath string
	// channel is --channel; rollout --rollout (0: not given).
	channel string
	rollout int
}

func parseSubmit(args []string, stderr io.Writer) (*submitOptions, error) {
	o := &submitOptions{}
	fs := flag.NewFlagSet("submit", flag.ContinueOnError)
	// The errors and the help are ours: a mistyped flag is one line, -h
	// the whole usage (exit 0).
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&o.baseURL, "base-url", env("BETAPORT_BASE_URL", ""), "the service's `URL`, e.g. https://betaport.example.com (env BETAPORT_BASE_URL)")
	fs.StringVar(&o.keyPath, "key", env("BETAPORT_KEY_FILE", ""), "the key `file` downloaded from the extension's settings page (env BETAPORT_KEY_FILE; or its content in BETAPORT_KEY)")
	fs.IntVar(&o.retries, "retries", 4, "retries of each call after a network failure, 5xx or 429 (`N`)")
	fs.BoolVar(&o.quiet, "quiet", false, "print nothing on stderr but errors")
	fs.StringVar(&o.notes, "notes", "", "release notes for testers, at most 10 KiB (`TEXT`)")
	fs.StringVar(&o.notesPath, "notes-file", "", "read the release notes from `FILE`")
	fs.StringVar(&o.channel, "channel", "", "publish to this `CHANNEL` (beta without it)")
	fs.IntVar(&o.rollout, "rollout", 0, "start a staged rollout to `P` % of the channel's testers (1–99)")
	// parse refuses arguments; submit takes one, before or after the flags.
	var files []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, submitUsage)
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			return nil, errHelpShown
		} else if err != nil {
			return nil, usageError{err.Error() + ` ("betaport submit -h" lists its flags)`}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			files = append(files, rest...)
			break
		}
		files = append(files, rest[0])
		args = rest[1:]
	}
	notes, notesFile := false, false
	fs.Visit(func(f *flag.Flag) {
		notes = notes || f.Name == "notes"
		notesFile = notesFile || f.Name == "notes-file"
	})
	switch {
	case notes && notesFile:
		return nil, usageError{"give the release notes once: --notes TEXT or --notes-file FILE, not both"}
	case o.baseURL == "":
		return nil, usageError{"--base-url is required: the service's address, e.g. https://betaport.example.com (or set BETAPORT_BASE_URL)"}
	case o.keyPath == "" && os.Getenv("BETAPORT_KEY") == "":
		return nil, usageError{"--key is required: the key file downloaded from the extension's settings page (or set BETAPORT_KEY_FILE to its path, or BETAPORT_KEY to its content)"}
	case o.retries < 0:
		return nil, usageError{"--retries must be 0 or more"}
	case o.channel != "" && betaport.ValidateChannelName(o.channel) != nil:
		return nil, usageError{fmt.Sprintf("--channel %q: %s", o.channel, betaport.ErrorMessage(betaport.ValidateChannelName(o.channel)))}
	case o.rollout < 0 || o.rollout > 100:
		return nil, usageError{"--rollout is the share of the channel's testers the bundle reaches first: a whole percentage from 1 to 100"}
	case len(files) == 0:
		return nil, usageError{"give the zip to submit: betaport submit --base-url URL --key key.json FILE.zip"}
	case len(files) > 1:
		return nil, usageError{fmt.Sprintf("submit takes one zip, not %d (%s); submit them one at a time", len(files), strings.Join(files, ", "))}
	}
	o.zipPath = files[0]
	return o, nil
}

// checkBaseURL returns the service's address without a trailing slash.
func checkBaseURL(raw string) (base string, plainHTTP bool, err error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", false, usageError{fmt.Sprintf("--base-url %q is not the service's address: give its http(s) URL, e.g. https://betaport.example.com", raw)}
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	plainHTTP = u.Scheme == "http" && host != "localhost" && (ip == nil || !ip.IsLoopback())
	return strings.TrimRight(u.String(), "/"), plainHTTP, nil
}

// readKey reads the key: the file --key (or BETAPORT_KEY_FILE) names, else
// the key file's content in BETAPORT_KEY (a CI secret, with no file to
// write).
func readKey(path string) (api.ServiceKey, error) {
	if path != "" {
		return readKeyFile(path)
	}
	key, bare, err := api.ParseKeyFile([]byte(os.Getenv("BETAPORT_KEY")))
	switch {
	case bare:
		return api.ServiceKey{}, usageError{fmt.Sprintf(`BETAPORT_KEY holds the bare {"extensionId", "apiKey"} object; give it the whole key file as downloaded, %s.`, api.KeyFileShape)}
	case err != nil:
		return api.ServiceKey{}, usageError{fmt.Sprintf("BETAPORT_KEY is not a key file: it is %v. Give it the content of the key file downloaded from the extension's settings page.", err)}
	}
	return key, nil
}

// readKeyFile reads the key file as downloaded: {"service": {...}} (see
// api.ParseKeyFile). Only the service object is ever sent.
func readKeyFile(path string) (api.ServiceKey, error) {
	fail := func(format string, a ...any) (api.ServiceKey, error) {
		return api.ServiceKey{}, usageError{fmt.Sprintf("--key %s: ", path) + fmt.Sprintf(format, a...)}
	}
	f, err := os.Open(path)
	if err != nil {
		return fail("cannot read it (%v). Pass the key file downloaded from the extension's settings page.", errors.Unwrap(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, api.MaxKeyFileSize+1))
	if err != nil {
		return fail("cannot read it (%v).", err)
	}
	key, bare, err := api.ParseKeyFile(b)
	switch {
	case bare:
		return fail(`this holds the bare {"extensionId", "apiKey"} object; --key takes the whole key file as downloaded, %s (submit sends only the "service" object).`, api.KeyFileShape)
	case err != nil:
		return fail("this is %v", err)
	}
	return key, nil
}

// releaseNotes are --notes, or the content of --notes-file, checked
// against the service's rule (at most 10 KiB of UTF-8 text) before anything
// is sent: an error here is a plain failure (exit 1).
func releaseNotes(o *submitOptions) (string, error) {
	notes := o.notes
	if o.notesPath != "" {
		f, err := os.Open(o.notesPath)
		if err != nil {
			return "", fmt.Errorf("--notes-file %s: cannot read it (%v)", o.notesPath, errors.Unwrap(err))
		}
		defer f.Close()
		// One byte more than the limit is enough to know it is over.
		b, err := io.ReadAll(io.LimitReader(f, betaport.MaxReleaseNotes+1))
		if err != nil {
			return "", fmt.Errorf("--notes-file %s: cannot read it (%v)", o.notesPath, err)
		}
		if len(b) > betaport.MaxReleaseNotes {
			return "", fmt.Errorf("--notes-file %s is over %d bytes (10 KiB), the most release notes may be; nothing was uploaded. Shorten them, or link to a longer changelog.", o.notesPath, betaport.MaxReleaseNotes)
		}
		notes = string(b)
	}
	if err := betaport.ValidateReleaseNotes(notes); err != nil {
		return "", fmt.Errorf("%s Nothing was uploaded.", betaport.ErrorMessage(err))
	}
	return notes, nil
}

// zipFile is the open zip, streamed (never held whole) on each PUT.
type zipFile struct {
	f    *os.File
	name string
	size int64
	done func() // closes it (and removes stdin's copy)
}

// openZip opens path ("-": stdin) and checks it starts with a zip
// signature.
func openZip(path string) (*zipFile, error) {
	f, size, done, err := openInput(path)
	if err != nil {
		return nil, err
	}
	name := path
	if path == "-" {
		name = "the zip on stdin"
	}
	head := make([]byte, api.ZipHeadSize)
	n, _ := f.ReadAt(head, 0)
	if !api.IsZipStart(head[:n]) {
		done()
		return nil, usageError{fmt.Sprintf("%s is not a zip file (it does not start with a zip signature). Submit the extension's .zip, e.g. made with `zip -r ../extension.zip .` in its folder.", name)}
	}
	return &zipFile{f: f, name: name, size: size, done: done}, nil
}

// submit is `betaport submit`: the three-call submit flow for pipelines.
func submit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseSubmit(args, stderr)
	if err != nil {
		return err
	}
	base, plainHTTP, err := checkBaseURL(o.baseURL)
	if err != nil {
		return err
	}
	key, err := readKey(o.keyPath)
	if err != nil {
		return err
	}
	notes, err := releaseNotes(o)
	if err != nil {
		return err
	}
	z, err := openZip(o.zipPath)
	if err != nil {
		return err
	}
	defer z.done()
	s := newSubmitter(base, key, o, stderr)
	s.notes, s.channel, s.rollout = notes, o.channel, o.rollout
	if plainHTTP {
		s.say("warning: --base-url uses http://, so the API key travels unencrypted; use https://.")
	}
	raw, b, err := s.run(ctx, z)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if json.Indent(&out, raw, "", "  ") != nil {
		return printJSON(stdout, b)
	}
	out.WriteByte('\n')
	if _, err := stdout.Write(out.Bytes()); err != nil {
		return err
	}
	if b.VersionName != "" {
		// The served version had to go above an earlier bundle's.
		s.say("Published bundle #%d (version %s, uploaded as %s) of extension %d.", b.Number, b.Version, b.VersionName, b.ExtensionID)
	} else {
		s.say("Published bundle #%d (version %s) of extension %d.", b.Number, b.Version, b.ExtensionID)
	}
	return nil
}
