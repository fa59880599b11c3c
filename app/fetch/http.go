package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/betaport/betaport/app/api"
)

var errNoClient = errors.New("fetch: no HTTP client: set HTTPOptions.Client or DefaultClient")

// Doer sends one HTTP request: *http.Client is one.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// HTTPOptions configure HTTPFetcher and JSONFetcher.
type HTTPOptions struct {
	// Client sends the requests; nil means DefaultClient.
	Client Doer
	// BaseURL is what keys are resolved against, as a browser resolves a
	// link: a key "/api/x?page=0" keeps BaseURL's scheme and host. It must
	// be absolute (net/http has no page to be relative to); in the browser
	// pass the page's origin. Empty means keys are absolute URLs.
	BaseURL string
	// Header is added to every request (e.g. Authorization).
	Header http.Header
	// MaxBodyBytes caps a response body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
}

// DefaultMaxBodyBytes is the default cap on a response body.
const DefaultMaxBodyBytes = 16 << 20

// HTTPFetcher GETs the key, resolved against BaseURL, and answers the raw
// body. It sends If-None-Match with the cached value's ETag and turns 304
// into ErrNotModified; any other non-2xx answer is an *api.Problem (see
// problem).
func HTTPFetcher(opts HTTPOptions) Fetcher[[]byte] {
	return func(ctx context.Context, key, etag string) (Result[[]byte], error) {
		body, newETag, err := opts.get(ctx, key, etag)
		if err != nil {
			return Result[[]byte]{ETag: newETag}, err
		}
		return Result[[]byte]{Data: body, ETag: newETag, Size: int64(len(body))}, nil
	}
}

// JSONFetcher is HTTPFetcher decoding the body as JSON into T.
func JSONFetcher[T any](opts HTTPOptions) Fetcher[T] {
	raw := HTTPFetcher(opts)
	return func(ctx context.Context, key, etag string) (Result[T], error) {
		r, err := raw(ctx, key, etag)
		if err != nil {
			return Result[T]{ETag: r.ETag}, err
		}
		var v T
		if err := json.Unmarshal(r.Data, &v); err != nil {
			return Result[T]{}, fmt.Errorf("fetch: decoding %s: %w", key, err)
		}
		return Result[T]{Data: v, ETag: r.ETag, Size: r.Size}, nil
	}
}

func (o HTTPOptions) get(ctx context.Context, key, etag string) (body []byte, newETag string, err error) {
	u, err := o.resolve(key)
	if err != nil {
		return nil, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", err
	}
	for k, vs := range o.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("Accept", "application/json, "+api.ProblemContentType)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	client := o.Client
	if client == nil {
		client = DefaultClient
	}
	if client == nil {
		return nil, "", errNoClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()

	limit := o.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, "", err
	}
	if int64(len(body)) > limit {
		return nil, "", fmt.Errorf("fetch: %s: body larger than %d bytes", u, limit)
	}
	newETag = resp.Header.Get("ETag")
	switch {
	case resp.StatusCode == http.StatusNotModified:
		return nil, newETag, ErrNotModified
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, "", problem(resp, body, u)
	}
	return body, newETag, nil
}

func (o HTTPOptions) resolve(key string) (string, error) {
	if o.BaseURL == "" {
		return key, nil
	}
	base, err := url.Parse(o.BaseURL)
	if err != nil {
		return "", fmt.Errorf("fetch: base URL: %w", err)
	}
	ref, err := url.Parse(key)
	if err != nil {
		return "", fmt.Errorf("fetch: key %q: %w", key, err)
	}
	return base.ResolveReference(ref).String(), nil
}

// problem is the error of a non-2xx answer: an *api.Problem, as every
// error of the API is. When the body is RFC 9457 problem details
// (Content-Type application/problem+json) its fields are decoded, so the UI
// can show Detail, or Title; otherwise, or when they are malformed, the
// answer's status still makes a usable problem. Status is always the
// answer's, Title is at least the status text (Error then reads "404 Not
// Found"), and Instance is the request's URL when the server named no
// occurrence.
func problem(resp *http.Response, body []byte, u string) *api.Problem {
	p := &api.Problem{}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err == nil && mt == api.ProblemContentType {
		_ = json.Unmarshal(body, p)
	}
	p.Status = resp.StatusCode
	if p.Title == "" {
		p.Title = http.StatusText(resp.StatusCode)
	}
	if p.Instance == "" {
		p.Instance = u
	}
	return p
}
