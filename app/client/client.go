// Package client is the typed Go client of Betaport's HTTP API, used by the
// browser app (with the page's fetch as its HTTP client) and by the
// command line.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
)

// Client calls one Betaport service.
type Client struct {
	// BaseURL is the service's address, e.g. http://127.0.0.1:8080.
	BaseURL string
	// HTTP sends the requests (an *http.Client is one); nil means
	// http.DefaultClient, or in a browser app fetch.DefaultClient (see
	// there why a browser app passes its own).
	HTTP fetch.Doer
}

// New returns a client of the service at baseURL.
func New(baseURL string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/")}
}

// Extensions lists the extensions the caller may see.
func (c *Client) Extensions(ctx context.Context) ([]betaport.Extension, error) {
	var list []betaport.Extension
	err := c.Do(ctx, http.MethodGet, api.PathExtensions, nil, &list)
	return list, err
}

// Extension returns one extension.
func (c *Client) Extension(ctx context.Context, id int64) (*betaport.Extension, error) {
	var e betaport.Extension
	if err := c.Do(ctx, http.MethodGet, api.ExtensionPath(id), nil, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// Do sends a JSON request and decodes a JSON answer into out (when not nil).
// An error answer comes back as an *api.Problem.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	resp, err := c.send(ctx, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return ReadProblem(resp)
	}
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("reading the answer to %s %s: %w", method, path, err)
	}
	return nil
}

var errNoHTTP = errors.New("client: no HTTP client: set Client.HTTP")

// send sends a request to the service, with in (when not nil) as its JSON
// body, and returns the answer, whatever its status.
func (c *Client) send(ctx context.Context, method, path string, in any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = fetch.DefaultClient
	}
	if hc == nil {
		return nil, errNoHTTP
	}
	return hc.Do(req)
}

// ReadProblem turns an error response into an *api.Problem, whether or not
// the server (or a proxy in front of it) sent problem details.
func ReadProblem(resp *http.Response) *api.Problem {
	p := &api.Problem{}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if ct == api.ProblemContentType || ct == "application/json" {
		json.Unmarshal(b, p)
	}
	if p.Status == 0 {
		p.Status = resp.StatusCode
	}
	if p.Title == "" {
		p.Title = http.StatusText(resp.StatusCode)
	}
	if p.Detail == "" {
		p.Detail = fmt.Sprintf("The server answered %d %s.", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return p
}

// SignIn signs an admin in; the browser keeps the session cookie.
func (c *Client) SignIn(ctx context.Context, email, password string) (*api.Session, error) {
	var s api.Session
	if err := c.Do(ctx, http.MethodPost, api.PathSession, api.SignIn{Email: email, Password: password}, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Session says who is signed in; a 401 problem when nobody is.
func (c *Client) Session(ctx context.Context) (*api.Session, error) {
	var s api.Session
	if err := c.Do(ctx, http.MethodGet, api.PathSession, nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// SignOut ends the session.
func (c *Client) SignOut(ctx context.Context) error {
	return c.Do(ctx, http.MethodDelete, api.PathSession, nil, nil)
}

// Invite invites a tester and returns their one-time link.
func (c *Client) Invite(ctx context.Context, extensionID int64, in api.Invite) (*api.Invited, error) {
	var out api.Invited
	if err := c.Do(ctx, http.MethodPost, api.TestersPath(extensionID), in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Renew gives a tester a new invite link at path: api.TesterRestorePath
// (a revoked tester, restored) or api.TesterInvitePath (the old link stops
// working).
func (c *Client) Renew(ctx context.Context, path string) (*api.Invited, error) {
	var out api.Invited
	if err := c.Do(ctx, http.MethodPost, path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Revoke revokes a tester.
func (c *Client) Revoke(ctx context.Context, extensionID, testerID int64) error {
	return c.Do(ctx, http.MethodDelete, api.TesterPath(extensionID, testerID), nil, nil)
}

// Testers returns one page of an extension's testers.
func (c *Client) Testers(ctx context.Context, extensionID int64, query url.Values) (*api.Page[betaport.Tester], error) {
	var page api.Page[betaport.Tester]
	path := api.TestersPath(extensionID)
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	if err := c.Do(ctx, http.MethodGet, path, nil, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// IsUnauthorized reports whether err says the caller is not signed in.
func IsUnauthorized(err error) bool {
	p, ok := api.AsProblem(err)
	return ok && p.Status == http.StatusUnauthorized
}
