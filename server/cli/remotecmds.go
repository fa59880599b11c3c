package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// remoteCommands are the admin's commands on a running service. Those
// that also exist for the operator (key, bundle rollback and promote,
// channel, rollout) run here when --server or BETAPORT_SERVER is given
// (remoteWanted); the others only here. Each one's scope is the one its
// API route needs (README, "The command line").
var remoteCommands = map[string]remoteSpec{
	"extension list":      {"", betaport.ScopeRead, extensionListCmd},
	"bundle list":         {"[--limit N]", betaport.ScopeRead, bundleListCmd},
	"bundle current":      {"", betaport.ScopeRead, bundleCurrentCmd},
	"bundle notes":        {"--bundle NUMBER", betaport.ScopeRead, bundleNotesCmd},
	"bundle download":     {"--out FILE [--bundle NUMBER] [--crx]", betaport.ScopeRead, bundleDownloadCmd},
	"bundle rollback":     {"--to NUMBER [--channel NAME]", betaport.ScopeReleases, bundleRollbackCmd},
	"bundle promote":      {"--bundle NUMBER --channel NAME [--percent P]", betaport.ScopeReleases, bundlePromoteCmd},
	"tester list":         {"[--search TEXT] [--status S] [--limit N]", betaport.ScopeRead, testerListCmd},
	"tester invite":       {"--email E [--name N] [--channel NAME] [--days D]", betaport.ScopeTesters, testerInviteCmd},
	"tester revoke":       {"--tester ID|EMAIL", betaport.ScopeTesters, testerRevokeCmd},
	"tester restore":      {"--tester ID|EMAIL [--days D]", betaport.ScopeTesters, testerRestoreCmd},
	"tester link":         {"--tester ID|EMAIL [--days D]", betaport.ScopeTesters, testerLinkCmd},
	"channel list":        {"", betaport.ScopeRead, channelListCmd},
	"channel create":      {"--name NAME", betaport.ScopeReleases, channelCreateCmd},
	"channel move":        {"--tester ID|EMAIL --to NAME", betaport.ScopeTesters, channelMoveCmd},
	"rollout start":       {"--channel NAME --bundle NUMBER --percent P", betaport.ScopeReleases, rolloutStartCmd},
	"rollout advance":     {"--channel NAME --percent P", betaport.ScopeReleases, rolloutCmd(betaport.RolloutAdvance)},
	"rollout halt":        {"--channel NAME", betaport.ScopeReleases, rolloutCmd(betaport.RolloutHalt)},
	"rollout resume":      {"--channel NAME", betaport.ScopeReleases, rolloutCmd(betaport.RolloutResume)},
	"rollout complete":    {"--channel NAME", betaport.ScopeReleases, rolloutCmd(betaport.RolloutComplete)},
	"key list":            {"", betaport.ScopeRead, keyListCmd},
	"key create":          {"--label L --out key.json [--channel NAME]", betaport.ScopeSettings, keyCreateCmd},
	"key revoke":          {"--key ID", betaport.ScopeSettings, keyRevokeCmd},
	"webhook list":        {"", betaport.ScopeRead, webhookListCmd},
	"webhook create":      {"--url URL", betaport.ScopeSettings, webhookCreateCmd},
	"webhook delete":      {"--webhook ID", betaport.ScopeSettings, webhookDeleteCmd},
	"webhook test":        {"--webhook ID", betaport.ScopeSettings, webhookTestCmd},
	"webhook deliveries":  {"--webhook ID [--limit N]", betaport.ScopeRead, webhookDeliveriesCmd},
	"adoption":            {"[--days D]", betaport.ScopeRead, adoptionCmd},
	"installs":            {"", betaport.ScopeRead, installsCmd},
	"policy":              {"--system linux|macos|windows --out FILE", betaport.ScopeRead, policyCmd},
	"update-url show":     {"", betaport.ScopeRead, updateURLShowCmd},
	"update-url rotate":   {"", betaport.ScopeSettings, updateURLRotateCmd},
	"audit list":          {"[--limit N]", betaport.ScopeRead, auditListCmd},
	"feedback list":       {"[--status S] [--limit N]", betaport.ScopeRead, feedbackListCmd},
	"feedback resolve":    {"--report ID", betaport.ScopeFeedback, feedbackStatusCmd(betaport.FeedbackResolved)},
	"feedback reopen":     {"--report ID", betaport.ScopeFeedback, feedbackStatusCmd(betaport.FeedbackSeen)},
	"feedback delete":     {"--report ID", betaport.ScopeFeedback, feedbackDeleteCmd},
	"feedback screenshot": {"--report ID --out FILE [--number N]", betaport.ScopeRead, feedbackScreenshotCmd},
}

// remoteSpec is a remote command: its flags for the usage, the scope its
// token needs, and its setup (flags registered, then run once parsed).
type remoteSpec struct {
	flags string
	scope string
	setup func(fs *flag.FlagSet) func(ctx context.Context, r *remote) error
}

// run parses the command's flags and runs it against the server. Flags
// its usage gives outside brackets are required, and checked (with a
// --limit that is not negative) before any request.
func (spec remoteSpec) run(name string) command {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		r, ready := remoteFlags(fs, stdout, stderr)
		do := spec.setup(fs)
		if err := parse(fs, args, stderr); err != nil {
			return err
		}
		if err := spec.checkFlags(fs); err != nil {
			return err
		}
		if err := ready(ctx, name != "extension list"); err != nil {
			return err
		}
		return do(ctx, r)
	}
}

// checkFlags refuses a required flag left out or empty, and a negative
// --limit.
func (spec remoteSpec) checkFlags(fs *flag.FlagSet) error {
	var missing []string
	depth := 0
	for _, word := range strings.Fields(spec.flags) {
		if depth == 0 && strings.HasPrefix(word, "--") {
			if f := fs.Lookup(word[2:]); f != nil && (f.Value.String() == "" || f.Value.String() == "0") {
				missing = append(missing, word[2:])
			}
		}
		depth += strings.Count(word, "[") - strings.Count(word, "]")
	}
	if len(missing) > 0 {
		return required(missing...)
	}
	if f := fs.Lookup("limit"); f != nil && strings.HasPrefix(f.Value.String(), "-") {
		return usageError{"--limit is a number of items, 1 or more (0 or none: all of them)"}
	}
	return nil
}

// remoteWanted reports whether a command that exists for both the
// operator and the admin should run remotely: --server is given, or
// BETAPORT_SERVER is set and no storage flag names a data folder.
func remoteWanted(args []string) bool {
	storage := false
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			continue
		}
		if name == "server" {
			return true
		}
		storage = storage || storageFlagNames[name]
	}
	return os.Getenv("BETAPORT_SERVER") != "" && !storage
}

// required is a usage error naming the flags a command needs.
func required(flags ...string) error {
	return usageError{"--" + strings.Join(flags, " and --") + " required"}
}

func extensionListCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	return func(ctx context.Context, r *remote) error {
		var list []json.RawMessage
		if err := r.call(ctx, "GET", api.PathExtensions, nil, &list); err != nil {
			return err
		}
		p := r.printer([]string{"id", "name", "chromeId", "currentBundle"})
		for _, e := range list {
			if err := p.item(e); err != nil {
				return err
			}
		}
		return p.flush()
	}
}

func bundleListCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	limit := fs.Int("limit", 0, "print at most `N` bundles, newest first (0: all)")
	return func(ctx context.Context, r *remote) error {
		p := r.printer([]string{"number", "version", "createdAt", "current", "channels", "releaseNotes"})
		n := 0
		for page := 0; ; page++ {
			var list []json.RawMessage
			if err := r.call(ctx, "GET", fmt.Sprintf("%s?page=%d&limit=100", api.BundlesPath(r.extension), page), nil, &list); err != nil {
				return err
			}
			for _, b := range list {
				if *limit > 0 && n == *limit {
					return p.flush()
				}
				if err := p.item(b); err != nil {
					return err
				}
				n++
			}
			if len(list) < 100 {
				return p.flush()
			}
		}
	}
}

func bundleCurrentCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	return func(ctx context.Context, r *remote) error {
		var b json.RawMessage
		if err := r.call(ctx, "GET", api.CurrentBundlePath(r.extension), nil, &b); err != nil {
			return err
		}
		return r.one(b)
	}
}

// bundleNotes prints a bundle's release notes as text, as testers read
// them.
func bundleNotesCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	number := fs.Int64("bundle", 0, "the bundle's `NUMBER` (required)")
	return func(ctx context.Context, r *remote) error {
		if *number <= 0 {
			return required("bundle")
		}
		b, err := r.findBundle(ctx, *number)
		if err != nil {
			return err
		}
		if r.table {
			// A person reads the notes as testers do.
			_, err := fmt.Fprintln(r.stdout, b.ReleaseNotes)
			return err
		}
		return r.one(map[string]any{"number": b.Number, "version": b.Version, "releaseNotes": b.ReleaseNotes})
	}
}

func bundleRollbackCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	to := fs.Int64("to", 0, "the `NUMBER` of the bundle whose code testers get again, as a new bundle (required)")
	channel := fs.String("channel", "", "the `CHANNEL` to roll back (beta without it)")
	return func(ctx context.Context, r *remote) error {
		if *to <= 0 {
			return required("to")
		}
		var b json.RawMessage
		if err := r.call(ctx, "POST", api.RollbackPath(r.extension, *to), api.ChannelChoice{Channel: *channel}, &b); err != nil {
			return err
		}
		return r.one(b)
	}
}

func bundlePromoteCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	number := fs.Int64("bundle", 0, "the bundle's `NUMBER` (required)")
	channel := fs.String("channel", "", "the `CHANNEL` it goes to (required)")
	percent := fs.Int("percent", 0, "a staged rollout to `P` % of the channel's testers (1–99; all without it)")
	return func(ctx context.Context, r *remote) error {
		if *number <= 0 || *channel == "" {
			return required("bundle", "channel")
		}
		return r.promote(ctx, *number, *channel, *percent)
	}
}

func (r *remote) promote(ctx context.Context, number int64, channel string, percent int) error {
	var out json.RawMessage
	path := fmt.Sprintf("%s/%d/promote", api.BundlesPath(r.extension), number)
	if err := r.call(ctx, "POST", path, api.Promotion{Channel: channel, Percent: percent}, &out); err != nil {
		return err
	}
	return r.one(out)
}

func testerListCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	search := fs.String("search", "", "only testers whose e-mail or name holds `TEXT`")
	status := fs.String("status", "", "only testers of status `S`: invited, active, revoked")
	limit := fs.Int("limit", 0, "print at most `N` testers (0: all)")
	return func(ctx context.Context, r *remote) error {
		q := url.Values{}
		if *search != "" {
			q.Set("q", *search)
		}
		if *status != "" {
			q.Set("status", *status)
		}
		return r.cursorList(ctx, api.TestersPath(r.extension), q, *limit,
			[]string{"id", "email", "name", "status", "channel", "installedVersion", "lastCheckAt"})
	}
}

func testerInviteCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	email := fs.String("email", "", "the tester's e-mail `address` (required)")
	name := fs.String("name", "", "the tester's `NAME`")
	channel := fs.String("channel", "", "the `CHANNEL` the tester joins (the default one without it)")
	days := fs.Int("days", 0, "how many `D`ays the invite link works unused (the service's default without it)")
	return func(ctx context.Context, r *remote) error {
		if *email == "" {
			return required("email")
		}
		var out json.RawMessage
		in := api.Invite{Email: *email, Name: *name, Channel: *channel, ExpiresInDays: daysGiven(*days)}
		if err := r.call(ctx, "POST", api.TestersPath(r.extension), in, &out); err != nil {
			return err
		}
		return r.one(out)
	}
}

// testerChange is a command that names a tester and posts to one of their
// paths.
func testerChange(fs *flag.FlagSet, method string, path func(ext, tester int64) string, withDays bool) func(ctx context.Context, r *remote) error {
	who := fs.String("tester", "", "the tester's `ID or e-mail` (required)")
	var days *int
	if withDays {
		days = fs.Int("days", 0, "how many `D`ays the new link works unused (the service's default without it)")
	}
	return func(ctx context.Context, r *remote) error {
		if *who == "" {
			return required("tester")
		}
		id, err := r.findTester(ctx, *who)
		if err != nil {
			return err
		}
		var in any
		if days != nil && *days != 0 {
			in = api.NewLink{ExpiresInDays: daysGiven(*days)}
		}
		if method == "DELETE" {
			if err := r.call(ctx, method, path(r.extension, id), nil, nil); err != nil {
				return err
			}
			fmt.Fprintf(r.stderr, "betaport: tester %s revoked\n", *who)
			return nil
		}
		var out json.RawMessage
		if err := r.call(ctx, method, path(r.extension, id), in, &out); err != nil {
			return err
		}
		return r.one(out)
	}
}

func testerRevokeCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	return testerChange(fs, "DELETE", api.TesterPath, false)
}

func testerRestoreCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	return testerChange(fs, "POST", api.TesterRestorePath, true)
}

func testerLinkCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	return testerChange(fs, "POST", api.TesterInvitePath, true)
}

func channelListCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	return func(ctx context.Context, r *remote) error {
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := r.call(ctx, "GET", api.ChannelsPath(r.extension), nil, &list); err != nil {
			return err
		}
		p := r.printer([]string{"name", "currentBundle", "testers", "rollout"})
		for _, c := range list.Items {
			if err := p.item(c); err != nil {
				return err
			}
		}
		return p.flush()
	}
}

func channelCreateCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	name := fs.String("name", "", "the channel's `NAME` (required)")
	return func(ctx context.Context, r *remote) error {
		if *name == "" {
			return required("name")
		}
		var out json.RawMessage
		if err := r.call(ctx, "POST", api.ChannelsPath(r.extension), api.NewChannel{Name: *name}, &out); err != nil {
			return err
		}
		return r.one(out)
	}
}

func channelMoveCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	who := fs.String("tester", "", "the tester's `ID or e-mail` (required)")
	to := fs.String("to", "", "the `CHANNEL` the tester moves to (required)")
	return func(ctx context.Context, r *remote) error {
		if *who == "" || *to == "" {
			return required("tester", "to")
		}
		id, err := r.findTester(ctx, *who)
		if err != nil {
			return err
		}
		var out json.RawMessage
		if err := r.call(ctx, "PUT", api.TesterPath(r.extension, id)+"/channel", api.ChannelChoice{Channel: *to}, &out); err != nil {
			return err
		}
		return r.one(out)
	}
}

func rolloutStartCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	channel := fs.String("channel", "", "the `CHANNEL` (required)")
	number := fs.Int64("bundle", 0, "the bundle's `NUMBER` (required)")
	percent := fs.Int("percent", 0, "the share of the channel's testers who get it first, `P` % (1–99, required)")
	return func(ctx context.Context, r *remote) error {
		if *channel == "" || *number <= 0 || *percent == 0 {
			return required("channel", "bundle", "percent")
		}
		return r.promote(ctx, *number, *channel, *percent)
	}
}

func rolloutCmd(action string) func(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	return func(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
		channel := fs.String("channel", "", "the `CHANNEL` (required)")
		var percent *int
		if action == betaport.RolloutAdvance {
			percent = fs.Int("percent", 0, "the share it grows to, `P` % (100 completes it; required)")
		}
		return func(ctx context.Context, r *remote) error {
			if *channel == "" || (percent != nil && *percent == 0) {
				if percent != nil {
					return required("channel", "percent")
				}
				return required("channel")
			}
			var in any
			if percent != nil {
				in = api.RolloutChange{Percent: *percent}
			}
			var out json.RawMessage
			if err := r.call(ctx, "POST", api.ChannelPath(r.extension, url.PathEscape(*channel))+"/rollout/"+action, in, &out); err != nil {
				return err
			}
			return r.one(out)
		}
	}
}

func keyListCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	return func(ctx context.Context, r *remote) error {
		return r.cursorList(ctx, api.KeysPath(r.extension), nil, 0, []string{"id", "label", "channel", "createdBy", "lastUsedAt", "revokedAt"})
	}
}

// keyCreateCmd makes a key and writes its key file, never to stdout: the
// secret stays out of a pipeline's logs.
func keyCreateCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	label := fs.String("label", "", "where the key is used, e.g. `\"GitHub Actions\"` (required)")
	out := fs.String("out", "", "the key `file` to write (required; not overwritten)")
	channel := fs.String("channel", "", "bind the key to one `CHANNEL`: it publishes there only")
	return func(ctx context.Context, r *remote) error {
		if *label == "" || *out == "" {
			return required("label", "out")
		}
		f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return exitError{ExitFailure, fmt.Sprintf("writing the key file: %v (an existing file is never overwritten)", err)}
		}
		var created api.CreatedKey
		err = r.call(ctx, "POST", api.KeysPath(r.extension), api.NewKey{Label: *label, Channel: *channel}, &created)
		if err == nil {
			err = json.NewEncoder(f).Encode(created.KeyFile)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(*out)
			return err
		}
		return r.one(created.Key)
	}
}

func keyRevokeCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	id := fs.Int64("key", 0, "the key's `ID`, as key list shows it (required)")
	return func(ctx context.Context, r *remote) error {
		if *id <= 0 {
			return required("key")
		}
		var out json.RawMessage
		if err := r.call(ctx, "DELETE", api.KeyPath(r.extension, *id), nil, &out); err != nil {
			return err
		}
		return r.one(out)
	}
}

func webhookListCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	return func(ctx context.Context, r *remote) error {
		return r.cursorList(ctx, api.WebhooksPath(r.extension), nil, 0, []string{"id", "url", "createdBy", "createdAt"})
	}
}

func webhookCreateCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	u := fs.String("url", "", "the `URL` Betaport posts events to (required)")
	return func(ctx context.Context, r *remote) error {
		if *u == "" {
			return required("url")
		}
		var out json.RawMessage
		if err := r.call(ctx, "POST", api.WebhooksPath(r.extension), api.NewWebhook{URL: *u}, &out); err != nil {
			return err
		}
		fmt.Fprintln(r.stderr, "betaport: the answer holds the webhook's signing secret, shown this once")
		return r.one(out)
	}
}

func webhookByID(fs *flag.FlagSet, method string, path func(ext, id int64) string, done string) func(ctx context.Context, r *remote) error {
	id := fs.Int64("webhook", 0, "the webhook's `ID`, as webhook list shows it (required)")
	return func(ctx context.Context, r *remote) error {
		if *id <= 0 {
			return required("webhook")
		}
		if err := r.call(ctx, method, path(r.extension, *id), nil, nil); err != nil {
			return err
		}
		fmt.Fprintf(r.stderr, "betaport: webhook %d %s\n", *id, done)
		return nil
	}
}

func webhookDeleteCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	return webhookByID(fs, "DELETE", api.WebhookPath, "deleted")
}

func webhookTestCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	return webhookByID(fs, "POST", api.WebhookTestPath, "sent a test event (its deliveries show how it went)")
}

func adoptionCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	days := fs.Int("days", api.AdoptionDefaultDays, fmt.Sprintf("the last `D` days (1–%d)", api.AdoptionMaxDays))
	return func(ctx context.Context, r *remote) error {
		q := url.Values{"days": {strconv.Itoa(*days)}}
		return r.cursorList(ctx, api.AdoptionPath(r.extension), q, 0, []string{"hour", "version", "checks", "testers"})
	}
}

func auditListCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	limit := fs.Int("limit", 0, "print at most `N` events, newest first (0: all)")
	return func(ctx context.Context, r *remote) error {
		return r.cursorList(ctx, api.AuditPath(r.extension), nil, *limit, []string{"createdAt", "actor", "action", "subject"})
	}
}

func feedbackListCmd(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	status := fs.String("status", "", "only reports of status `S`: new, seen, resolved, open")
	limit := fs.Int("limit", 0, "print at most `N` reports, newest first (0: all)")
	return func(ctx context.Context, r *remote) error {
		q := url.Values{}
		if *status != "" {
			q.Set("status", *status)
		}
		return r.cursorList(ctx, api.FeedbackPath(r.extension), q, *limit, []string{"id", "status", "bundleNumber", "testerEmail", "text"})
	}
}

func feedbackStatusCmd(status string) func(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
	return func(fs *flag.FlagSet) func(ctx context.Context, r *remote) error {
		id := fs.Int64("report", 0, "the report's `ID`, as feedback list shows it (required)")
		return func(ctx context.Context, r *remote) error {
			if *id <= 0 {
				return required("report")
			}
			var out json.RawMessage
			if err := r.call(ctx, "POST", api.FeedbackReportPath(r.extension, *id)+"/status", api.FeedbackStatus{Status: status}, &out); err != nil {
				return err
			}
			return r.one(out)
		}
	}
}

// daysGiven is a number of days a flag gave; 0 is not given.
func daysGiven(n int) api.Days { return api.Days{N: n, Given: n != 0} }

// remoteUsage lists the remote commands for the help, with the scope each
// needs.
func remoteUsage() string {
	names := make([]string, 0, len(remoteCommands))
	for name := range remoteCommands {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString(`
An admin's commands on a running service, from anywhere, with an access
token made on the extension's settings page: --server URL (or
BETAPORT_SERVER) and BETAPORT_TOKEN (or --token). --extension ID is needed
only when the token sees more than one. Output is JSON on stdout, one object
per line for lists (a table on a terminal, or with --table); exit codes as
submit's: 3 the token is refused or lacks the scope, 4 the request is
refused, 5 the service cannot be reached or failed. The key, bundle
rollback and promote, channel and rollout commands run here when --server
or BETAPORT_SERVER is given, and on the data folder otherwise.

`)
	for _, name := range names {
		spec := remoteCommands[name]
		line := "  betaport " + name
		if spec.flags != "" {
			line += " " + spec.flags
		}
		fmt.Fprintf(&b, "%-72s [%s]\n", line, spec.scope)
	}
	return b.String()
}
