package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// The remote commands that fetch files (a bundle's zip or CRX, a report's
// screenshot, a policy file), and the rest of what an admin reads or does
// besides the lists: installs, webhook deliveries, deleting a report, the
// update URL.

// numberFlag is an integer flag that takes only min to max: a bad value
// is a usage error when the flags are parsed, before any request.
type numberFlag struct {
	n        *int64
	min, max int64
	what     string
}

func newNumberFlag(fs *flag.FlagSet, name string, value, min, max int64, what, usage string) *int64 {
	n := value
	fs.Var(numberFlag{&n, min, max, what}, name, usage)
	return &n
}

func (f numberFlag) String() string {
	if f.n == nil || *f.n == 0 {
		return ""
	}
	return strconv.FormatInt(*f.n, 10)
}

func (f numberFlag) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < f.min || n > f.max {
		if f.max == math.MaxInt64 {
			return fmt.Errorf("give %s, %d or more", f.what, f.min)
		}
		return fmt.Errorf("give %s, %d to %d", f.what, f.min, f.max)
	}
	*f.n = n
	return nil
}

// choiceFlag is a string flag that takes only one of its choices.
type choiceFlag struct {
	s       *string
	choices []string
}

func (f choiceFlag) String() string {
	if f.s == nil {
		return ""
	}
	return *f.s
}

func (f choiceFlag) Set(s string) error {
	if !slices.Contains(f.choices, s) {
		last := len(f.choices) - 1
		return fmt.Errorf("give %s or %s", strings.Join(f.choices[:last], ", "), f.choices[last])
	}
	*f.s = s
	return nil
}

// downloadClient fetches files: no overall deadline (a big zip on a slow
// line takes as long as it takes; Ctrl-C stops it), but an answer must
// begin within two minutes. On S3 storage Betaport answers a download
// with a presigned URL of the storage's: the token is not sent there.
var downloadClient = &http.Client{
	Transport: func() http.RoundTripper {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = 2 * time.Minute
		return t
	}(),
	CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return fmt.Errorf("stopped after %d redirects", len(via))
		}
		if req.URL.Host != via[0].URL.Host {
			req.Header.Del("Authorization")
		}
		return nil
	},
}

// download saves the answer to GET path in file, or writes it to stdout
// for "-". A file is written beside its name and renamed into place once
// whole (and, with wantSHA256, checked), so a failed or refused download
// leaves what was there; a private one (it holds the update URL's secret)
// is readable by its owner only. It returns the bytes' count and SHA-256.
func (r *remote) download(ctx context.Context, path, file, wantSHA256 string, private bool) (int64, string, error) {
	var w io.Writer = r.stdout
	var tmp *os.File
	if file != "-" {
		var err error
		if tmp, err = os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*"); err != nil {
			return 0, "", exitError{ExitFailure, fmt.Sprintf("writing %s: %v", file, err)}
		}
		defer os.Remove(tmp.Name()) // gone once renamed
		defer tmp.Close()
		w = tmp
	}
	resp, err := r.send(ctx, downloadClient, "GET", path, nil, "*/*")
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), resp.Body)
	if err != nil {
		return n, "", exitError{ExitServer, fmt.Sprintf("the download stopped after %d bytes: %v; try again", n, err)}
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if wantSHA256 != "" && sum != wantSHA256 {
		return n, sum, exitError{ExitServer, fmt.Sprintf("the download's SHA-256 is %s, the bundle's %s: it was damaged on the way; try again", sum, wantSHA256)}
	}
	if tmp == nil {
		return n, sum, nil
	}
	mode := os.FileMode(0o644)
	if private {
		mode = 0o600
	}
	if err := tmp.Chmod(mode); err == nil {
		err = tmp.Close()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		return n, sum, exitError{ExitFailure, fmt.Sprintf("writing %s: %v", file, err)}
	}
	return n, sum, nil
}

// saved prints what a download wrote to a file, or says on stderr what it
// wrote to stdout (where the bytes are).
func (r *remote) saved(file string, n int64, sum string, about map[string]any) error {
	if file == "-" {
		fmt.Fprintf(r.stderr, "betaport: %d bytes written to stdout, SHA-256 %s\n", n, sum)
		return nil
	}
	about["file"], about["size"], about["sha256"] = file, n, sum
	return r.one(about)
}

// findBundle reads bundle number's record, or the current bundle's for 0.
func (r *remote) findBundle(ctx context.Context, number int64) (*betaport.Bundle, error) {
	if number == 0 {
		var b betaport.Bundle
		if err := r.call(ctx, "GET", api.CurrentBundlePath(r.extension), nil, &b); err != nil {
			return nil, err
		}
		return &b, nil
	}
	// The bundles list is paged by index, newest first: the page that
	// holds a number is found from the newest.
	for page := 0; ; page++ {
		var list []betaport.Bundle
		if err := r.call(ctx, "GET", fmt.Sprintf("%s?page=%d&limit=100", api.BundlesPath(r.extension), page), nil, &list); err != nil {
			return nil, err
		}
		for _, b := range list {
			if b.Number == number {
				return &b, nil
			}
		}
		if len(list) < 100 || list[len(list)-1].Number < number {
			return nil, exitError{ExitInvalid, fmt.Sprintf("the extension has no bundle %d", number)}
		}
	}
}

// bundleDownloadCmd saves a bundle's zip, checked against the SHA-256
// Betaport recorded when it was signed, or its CRX.
func bundleDownloadCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	number := newNumberFlag(fs, "bundle", 0, 1, math.MaxInt64, "a bundle's number", "the bundle's `NUMBER` (the current one without it)")
	crx := fs.Bool("crx", false, "the signed CRX package, as testers' browsers install it, instead of the zip (it holds the update URL's secret: written for its owner only)")
	out := fs.String("out", "", "the `file` to write, - for stdout (required; a file is replaced only once the download is whole and checked)")
	return func(ctx context.Context, r *remote) error {
		b, err := r.findBundle(ctx, *number)
		if err != nil {
			return err
		}
		// By number, even for the current one: a publish meanwhile does
		// not swap the bytes under the record just read.
		path, want := api.BundleDownloadPath(r.extension, b.Number), b.SHA256
		if *crx {
			path, want = api.BundleCRXPath(r.extension, b.Number), ""
		}
		n, sum, err := r.download(ctx, path, *out, want, *crx)
		if err != nil {
			return err
		}
		return r.saved(*out, n, sum, map[string]any{"number": b.Number, "version": b.Version})
	}
}

func installsCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	return func(ctx context.Context, r *remote) error {
		var out json.RawMessage
		if err := r.call(ctx, "GET", api.InstallsPath(r.extension), nil, &out); err != nil {
			return err
		}
		return r.one(out)
	}
}

func webhookDeliveriesCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	id := fs.Int64("webhook", 0, "the webhook's `ID`, as webhook list shows it (required)")
	limit := fs.Int("limit", 0, "print at most `N` deliveries, newest first (0: all)")
	return func(ctx context.Context, r *remote) error {
		return r.cursorList(ctx, api.WebhookDeliveriesPath(r.extension, *id), nil, *limit,
			[]string{"id", "type", "state", "attempts", "lastStatus", "lastError", "createdAt"})
	}
}

func feedbackDeleteCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	id := fs.Int64("report", 0, "the report's `ID`, as feedback list shows it (required)")
	return func(ctx context.Context, r *remote) error {
		if err := r.call(ctx, "DELETE", api.FeedbackReportPath(r.extension, *id), nil, nil); err != nil {
			return err
		}
		fmt.Fprintf(r.stderr, "betaport: report %d deleted, with its screenshots\n", *id)
		return nil
	}
}

func feedbackScreenshotCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	id := fs.Int64("report", 0, "the report's `ID`, as feedback list shows it (required)")
	number := newNumberFlag(fs, "number", 1, 1, betaport.MaxFeedbackScreenshots, "a screenshot's place in its report",
		fmt.Sprintf("which of the report's screenshots, `N` from 1 (up to %d)", betaport.MaxFeedbackScreenshots))
	out := fs.String("out", "", "the `file` to write, - for stdout (required; a file is replaced only once the download is whole)")
	return func(ctx context.Context, r *remote) error {
		n, sum, err := r.download(ctx, api.FeedbackScreenshotPath(r.extension, *id, int(*number)), *out, "", false)
		if err != nil {
			return err
		}
		return r.saved(*out, n, sum, map[string]any{"report": *id, "number": *number})
	}
}

func policyCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	var system string
	fs.Var(choiceFlag{&system, []string{"linux", "macos", "windows"}}, "system", "the testers' `SYSTEM`: linux, macos or windows (required)")
	out := fs.String("out", "", "the policy `file` to write, - for stdout (required; it holds the update URL's secret: written for its owner only)")
	return func(ctx context.Context, r *remote) error {
		n, sum, err := r.download(ctx, api.ExtensionPath(r.extension)+"/policy/"+url.PathEscape(system), *out, "", true)
		if err != nil {
			return err
		}
		return r.saved(*out, n, sum, map[string]any{"system": system})
	}
}

func updateURLShowCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	return func(ctx context.Context, r *remote) error {
		var out json.RawMessage
		if err := r.call(ctx, "GET", api.UpdatesPath(r.extension), nil, &out); err != nil {
			return err
		}
		return r.one(out)
	}
}

// updateURLRotateCmd replaces the shared update URL's token: copies
// installed from a CRX or policy file made before stop updating.
func updateURLRotateCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	return func(ctx context.Context, r *remote) error {
		var out json.RawMessage
		if err := r.call(ctx, "POST", api.UpdateTokenPath(r.extension), nil, &out); err != nil {
			return err
		}
		fmt.Fprintln(r.stderr, "betaport: the update URL is replaced; copies installed from earlier CRX and policy files no longer update")
		return r.one(out)
	}
}
