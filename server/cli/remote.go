package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
)

// The remote commands: an admin's work on a running Betaport, through its
// API with an access token (--server and --token, or BETAPORT_SERVER and
// BETAPORT_TOKEN), from any machine. Their output is the API's JSON on
// stdout (one object per line for lists; a table on a terminal), messages
// on stderr, and submit's exit codes.

// remote is one command's connection to a server.
type remote struct {
	server    string
	token     string
	extension int64
	http      *http.Client
	stdout    io.Writer
	stderr    io.Writer
	// table prints lists as a table (stdout is a terminal, or --table).
	table bool
}

// remoteFlags registers the flags every remote command takes; ready
// checks them once parsed.
func remoteFlags(fs *flag.FlagSet, stdout, stderr io.Writer) (r *remote, ready func(ctx context.Context, needExtension bool) error) {
	r = &remote{stdout: stdout, stderr: stderr, http: &http.Client{Timeout: 2 * time.Minute}}
	fs.StringVar(&r.server, "server", env("BETAPORT_SERVER", ""), "the Betaport service's `URL`, e.g. https://betaport.example.com (env BETAPORT_SERVER)")
	fs.StringVar(&r.token, "token", "", "an access `token` made on the extension's settings page (env BETAPORT_TOKEN; prefer the environment: a flag shows in the process list)")
	fs.Int64Var(&r.extension, "extension", 0, "the extension's `ID` (without it: the one extension the token is for)")
	asTable := fs.Bool("table", false, "print lists as a table, as on a terminal")
	ready = func(ctx context.Context, needExtension bool) error {
		r.table = *asTable || isTerminal(stdout)
		if r.token == "" {
			r.token = os.Getenv("BETAPORT_TOKEN")
		}
		switch u, err := url.Parse(r.server); {
		case r.server == "":
			return usageError{"--server (or BETAPORT_SERVER) is required: the address of the Betaport service"}
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			return usageError{fmt.Sprintf("--server %q is not a service's address; give one like https://betaport.example.com", r.server)}
		}
		r.server = strings.TrimRight(r.server, "/")
		if r.token == "" {
			return usageError{"an access token is required: set BETAPORT_TOKEN (or --token) to one made on the extension's settings page"}
		}
		if needExtension && r.extension == 0 {
			return r.findExtension(ctx)
		}
		return nil
	}
	return r, ready
}

// findExtension takes the extension the token is for, from the token's
// own record (which any token may read, whatever its scopes).
func (r *remote) findExtension(ctx context.Context) error {
	var tok betaport.AccessToken
	if err := r.call(ctx, "GET", api.PathToken, nil, &tok); err != nil {
		return err
	}
	r.extension = tok.ExtensionID
	return nil
}

// call sends one request and decodes its JSON answer into out (when not
// nil). An error answer is an exitError with submit's codes.
func (r *remote) call(ctx context.Context, method, path string, in, out any) error {
	resp, err := r.send(ctx, r.http, method, path, in, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return exitError{ExitServer, fmt.Sprintf("the answer to %s %s is not what Betaport sends: %v; is --server a Betaport service?", method, path, err)}
	}
	return nil
}

// send sends one request with the token, by hc, and returns the
// answer when it succeeded (the caller closes its body). An error answer
// is an exitError with submit's codes.
func (r *remote) send(ctx context.Context, hc *http.Client, method, path string, in any, accept string) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.server+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", "betaport/"+versionNumber())
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, exitError{ExitServer, fmt.Sprintf("could not reach %s: %v", r.server, err)}
	}
	if resp.StatusCode < 400 {
		return resp, nil
	}
	defer resp.Body.Close()
	if resp.Request.URL.Host != req.URL.Host {
		// Betaport sent the client to its storage (S3), which refused.
		return nil, exitError{ExitServer, fmt.Sprintf("the storage Betaport sent the download to answered %d %s; try again",
			resp.StatusCode, http.StatusText(resp.StatusCode))}
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != api.ProblemContentType {
		// Betaport answers every error with a problem: this answer
		// is another server's (a proxy's, or --server is wrong).
		return nil, exitError{ExitServer, fmt.Sprintf("%s answered %s %s with %d %s, not as Betaport answers; check --server",
			r.server, method, path, resp.StatusCode, http.StatusText(resp.StatusCode))}
	}
	p := client.ReadProblem(resp)
	return nil, exitError{exitCodeFor(resp.StatusCode), fmt.Sprintf("%s (%d %s)", p.Detail, resp.StatusCode, http.StatusText(resp.StatusCode))}
}

// exitCodeFor is submit's exit code for an error status.
func exitCodeFor(status int) int {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ExitAuth
	case status >= 500:
		return ExitServer
	default:
		return ExitInvalid
	}
}

// cursorList follows a cursor-paged list to its end, or to limit items
// (0: all), printing each.
func (r *remote) cursorList(ctx context.Context, path string, query url.Values, limit int, columns []string) error {
	p := r.printer(columns)
	n := 0
	for cursor := ""; ; {
		q := url.Values{}
		for k, v := range query {
			q[k] = v
		}
		q.Set("limit", "100")
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var page api.Page[json.RawMessage]
		if err := r.call(ctx, "GET", path+"?"+q.Encode(), nil, &page); err != nil {
			return err
		}
		for _, item := range page.Data {
			if limit > 0 && n == limit {
				return p.flush()
			}
			if err := p.item(item); err != nil {
				return err
			}
			n++
		}
		if page.NextCursor == "" {
			return p.flush()
		}
		cursor = page.NextCursor
	}
}

// printer prints a list: JSON lines, or a table of columns.
type printer struct {
	r       *remote
	columns []string
	tw      *tabwriter.Writer
}

func (r *remote) printer(columns []string) *printer {
	p := &printer{r: r, columns: columns}
	if r.table {
		p.tw = tabwriter.NewWriter(r.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(p.tw, strings.ToUpper(strings.Join(columns, "\t")))
	}
	return p
}

func (p *printer) item(raw json.RawMessage) error {
	if p.tw == nil {
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil {
			return err
		}
		compact.WriteByte('\n')
		_, err := p.r.stdout.Write(compact.Bytes())
		return err
	}
	var fields map[string]any
	json.Unmarshal(raw, &fields)
	cells := make([]string, len(p.columns))
	for i, c := range p.columns {
		cells[i] = cell(fields[c])
	}
	_, err := fmt.Fprintln(p.tw, strings.Join(cells, "\t"))
	return err
}

func (p *printer) flush() error {
	if p.tw != nil {
		return p.tw.Flush()
	}
	return nil
}

// cell is one value in a table: one line, JSON's numbers as written.
func cell(v any) string {
	switch v := v.(type) {
	case nil:
		return "-"
	case string:
		v = strings.Join(strings.Fields(v), " ")
		if len(v) > 60 {
			v = v[:57] + "..."
		}
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = cell(e)
		}
		return strings.Join(parts, ",")
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// one prints a single answer: one line of JSON, or its fields on a
// terminal.
func (r *remote) one(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if !r.table {
		_, err = fmt.Fprintf(r.stdout, "%s\n", b)
		return err
	}
	var out bytes.Buffer
	json.Indent(&out, b, "", "  ")
	out.WriteByte('\n')
	_, err = r.stdout.Write(out.Bytes())
	return err
}

// findTester names a tester by id or e-mail, as --tester takes either.
func (r *remote) findTester(ctx context.Context, who string) (int64, error) {
	if id, err := strconv.ParseInt(who, 10, 64); err == nil && id > 0 {
		return id, nil
	}
	if !strings.Contains(who, "@") {
		return 0, usageError{fmt.Sprintf("--tester %q is neither a tester's id nor an e-mail address", who)}
	}
	var t betaport.Tester
	if err := r.call(ctx, "GET", api.TesterByEmailPath(r.extension)+"?"+url.Values{"email": {who}}.Encode(), nil, &t); err != nil {
		return 0, err
	}
	return t.ID, nil
}
