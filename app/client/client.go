// Package client is the typed Go client of Betaport's HTTP API, used by the
// browser app (net/http runs on the browser's fetch there) and by the
// command line.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/betaport/betaport/app/api"
)

// Client calls one Betaport service.
type Client struct {
	// BaseURL is the service's address, e.g. http://127.0.0.1:8080.
	BaseURL string
	// HTTP is the client used; nil means http.DefaultClient.
	HTTP *http.Client
}

// New returns a client of the service at baseURL.
func New(baseURL string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/")}
}

// Extensions lists the extensions the caller may see.
func (c *Client) Extensions(ctx context.Context) ([]api.Extension, error) {
	var list []api.Extension
	err := c.Do(ctx, http.MethodGet, api.PathExtensions, nil, &list)
	return list, err
}

// Extension returns one extension.
func (c *Client) Extension(ctx context.Context, id int64) (*api.Extension, error) {
	var e api.Extension
	if err := c.Do(ctx, http.MethodGet, api.ExtensionPath(id), nil, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// Do sends a JSON request and decodes a JSON answer into out (when not nil).
// An error answer comes back as an *api.Problem.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
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
