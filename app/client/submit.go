package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
)

// The submit flow, run once for every side that submits: the upload panel
// (a File of the page, its PUT by XMLHttpRequest for upload progress) and
// the command line (a file on disk, with its retries, progress bar and exit
// codes around each call).

// Step is one of the submit flow's three calls.
type Step int

const (
	StepUploadURL Step = 1 // POST /api/submit/upload: an upload URL
	StepPut       Step = 2 // PUT the zip to the upload URL
	StepSign      Step = 3 // POST /api/submit/sign: publish
)

// Putter makes call 2: it PUTs the whole zip, from its first byte, to a
// signed upload URL with Content-Type application/zip and nothing else (the
// URL authorises), calling progress with the bytes sent so far and the
// zip's size. A non-2xx answer comes back as an *api.Problem (an
// *AnswerError is one); a network failure as the error it was.
//
// ReaderZip is one over net/http (through a fetch.Doer); the browser app
// PUTs the page's File with XMLHttpRequest, whose upload progress fetch()
// does not report.
type Putter interface {
	Put(ctx context.Context, url string, progress func(sent, total int64)) error
}

// Submission is one run of the flow: request an upload URL, PUT the zip to
// it, sign.
type Submission struct {
	// Key authenticates calls 1 and 3: the key file's service object.
	Key api.ServiceKey
	// ReleaseNotes, when set, go with call 1 and are published with the
	// bundle (at most betaport.MaxReleaseNotes bytes: check them with
	// betaport.ValidateReleaseNotes before anything is sent).
	ReleaseNotes string
	// Channel, when set, is the channel the bundle is published to (the
	// extension's default channel otherwise); Rollout, when 1–99, the
	// percentage of the channel's testers a staged rollout starts at (all
	// of them otherwise).
	Channel string
	Rollout int
	// Zip is what call 2 PUTs.
	Zip Putter
	// Progress, when set, is told the bytes of the zip sent so far and its
	// size, as the PUT goes (on the goroutine the Putter calls it from).
	Progress func(sent, total int64)
	// Step, when set, is called as each step starts, with the upload URL
	// from StepPut on. An error it returns ends the flow with that error
	// (the command line refuses a zip over the URL's MaxSize there).
	Step func(step Step, up *api.UploadURL) error
	// Try runs each step's call; nil runs it once. A caller retries, bounds
	// a call's time or keeps a call from being cancelled in it: it is given
	// the flow's context and returns call's error, or its own.
	Try func(ctx context.Context, step Step, call func(context.Context) error) error
}

// Submitted is the bundle a submission published: the record, and the JSON
// the service sent for it (with any field this client does not know).
type Submitted struct {
	Bundle betaport.Bundle
	// Warnings are what the service says the submitter should know but
	// that did not stop the publish (api.Signed).
	Warnings []string
	JSON     json.RawMessage
}

// Submit runs the three calls of the submit flow once. It returns the
// published bundle, or the error of the step that failed: an *api.Problem
// for an error answer (an *AnswerError, with the answer's status and
// header), a *BadAnswerError for a success answer that is not what the
// call answers, an error wrapping ErrReadingAnswer for an answer that broke
// off, the HTTP client's error for a request that got no answer, or what
// Step or Try returned.
func (c *Client) Submit(ctx context.Context, s Submission) (*Submitted, error) {
	try := s.Try
	if try == nil {
		try = func(ctx context.Context, _ Step, call func(context.Context) error) error { return call(ctx) }
	}
	start := func(step Step, up *api.UploadURL) error {
		if s.Step == nil {
			return nil
		}
		return s.Step(step, up)
	}
	progress := s.Progress
	if progress == nil {
		progress = func(int64, int64) {}
	}

	if err := start(StepUploadURL, nil); err != nil {
		return nil, err
	}
	var up *api.UploadURL
	err := try(ctx, StepUploadURL, func(ctx context.Context) (err error) {
		up, err = c.RequestRelease(ctx, s.Key, Release{Notes: s.ReleaseNotes, Channel: s.Channel, Rollout: s.Rollout})
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := start(StepPut, up); err != nil {
		return nil, err
	}
	err = try(ctx, StepPut, func(ctx context.Context) error {
		return s.Zip.Put(ctx, up.URL, progress)
	})
	if err != nil {
		return nil, err
	}
	if err := start(StepSign, up); err != nil {
		return nil, err
	}
	var out *Submitted
	err = try(ctx, StepSign, func(ctx context.Context) (err error) {
		out, err = c.Sign(ctx, s.Key)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RequestUpload is call 1: an upload URL for the zip, until when, and the
// largest zip it takes. Release notes, when not empty, go beside the key
// (without them the body is exactly the key object, as before).
func (c *Client) RequestUpload(ctx context.Context, key api.ServiceKey, releaseNotes string) (*api.UploadURL, error) {
	return c.RequestRelease(ctx, key, Release{Notes: releaseNotes})
}

// Release is what call 1 says about the build beside the key.
type Release struct {
	Notes   string
	Channel string
	Rollout int
}

// RequestRelease is call 1 with what it says about the build: release
// notes, and where the bundle goes. Fields left empty are not sent
// (without any, the body is exactly the key object, as before).
func (c *Client) RequestRelease(ctx context.Context, key api.ServiceKey, rel Release) (*api.UploadURL, error) {
	var body any = key
	if rel != (Release{}) {
		body = uploadRequest{key, rel.Notes, rel.Channel, rel.Rollout}
	}
	raw, err := c.postKey(ctx, api.PathSubmitUpload, body)
	if err != nil {
		return nil, err
	}
	var up api.UploadURL
	if err := json.Unmarshal(raw, &up); err != nil {
		return nil, &BadAnswerError{StepUploadURL, err}
	}
	if u, err := url.Parse(up.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &BadAnswerError{StepUploadURL, ErrNoUploadURL}
	}
	return &up, nil
}

// Sign is call 3: the service validates the zip PUT to the latest upload
// URL and publishes it. A sign repeated after it published answers the
// same bundle.
func (c *Client) Sign(ctx context.Context, key api.ServiceKey) (*Submitted, error) {
	raw, err := c.postKey(ctx, api.PathSubmitSign, key)
	if err != nil {
		return nil, err
	}
	var signed api.Signed
	if err := json.Unmarshal(raw, &signed); err != nil {
		return nil, &BadAnswerError{StepSign, err}
	}
	return &Submitted{Bundle: signed.Bundle, Warnings: signed.Warnings, JSON: raw}, nil
}

// uploadRequest is call 1's body with release notes: the key's fields and
// "releaseNotes" beside them.
type uploadRequest struct {
	api.ServiceKey
	ReleaseNotes string `json:"releaseNotes,omitempty"`
	Channel      string `json:"channel,omitempty"`
	Rollout      int    `json:"rollout,omitempty"`
}

// maxAnswer is the most read of an answer of the submit flow.
const maxAnswer = 1 << 20

// postKey sends the service key to path and returns the 2xx answer's body.
// Any other answer is an error, redirects included: a client that does not
// follow them (the command line's: the key must reach only its base URL)
// is told so.
func (c *Client) postKey(ctx context.Context, path string, key any) (json.RawMessage, error) {
	resp, err := c.send(ctx, http.MethodPost, path, key)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, readAnswerError(resp)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrReadingAnswer, err)
	}
	return raw, nil
}

// ErrReadingAnswer is wrapped by the error of an answer that broke off
// while it was read: the network failed, as for a request without answer.
var ErrReadingAnswer = errors.New("reading the answer")

// ErrNoUploadURL is the BadAnswerError of call 1 when its answer holds no
// http(s) URL.
var ErrNoUploadURL = errors.New("the answer holds no usable upload URL")

// AnswerError is an error answer to a call of the submit flow: the problem
// the service (or a proxy in front of it) sent, with the answer's status
// and header, which say when to try again (Retry-After) or where a redirect
// led (Location). errors.As finds its *api.Problem.
type AnswerError struct {
	Problem    *api.Problem
	StatusCode int
	Header     http.Header
}

func (e *AnswerError) Error() string { return e.Problem.Error() }
func (e *AnswerError) Unwrap() error { return e.Problem }

func readAnswerError(resp *http.Response) *AnswerError {
	return &AnswerError{Problem: ReadProblem(resp), StatusCode: resp.StatusCode, Header: resp.Header}
}

// BadAnswerError is a success answer that is not what the call answers:
// the base URL is not Betaport's, or a proxy answered in its place.
type BadAnswerError struct {
	Step Step
	Err  error // why: the JSON error, or ErrNoUploadURL
}

func (e *BadAnswerError) Error() string {
	what := "an upload URL"
	path := api.PathSubmitUpload
	if e.Step == StepSign {
		what, path = "a bundle record", api.PathSubmitSign
	}
	return fmt.Sprintf("the answer to POST %s is not %s (%v)", path, what, e.Err)
}

func (e *BadAnswerError) Unwrap() error { return e.Err }

// ReaderZip is a zip read from R, Size bytes from offset 0 again on every
// Put, and PUT through HTTP (nil means fetch.DefaultClient).
type ReaderZip struct {
	R    io.ReaderAt
	Size int64
	HTTP fetch.Doer
}

// Put PUTs the zip to url (see Putter). It sends Expect: 100-continue, so a
// service that refuses the URL (expired, too large) answers before the
// bytes go; progress is called on every read of the body, from the HTTP
// client's goroutine.
func (z *ReaderZip) Put(ctx context.Context, url string, progress func(sent, total int64)) error {
	hc := z.HTTP
	if hc == nil {
		hc = fetch.DefaultClient
	}
	if hc == nil {
		return errNoHTTP
	}
	body := &countingReader{r: io.NewSectionReader(z.R, 0, z.Size), total: z.Size, progress: progress}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, body)
	if err != nil {
		return err
	}
	req.ContentLength = z.Size
	req.Header.Set("Content-Type", api.ZipContentType)
	req.Header.Set("Expect", "100-continue")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return readAnswerError(resp)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
	return nil
}

// countingReader reports what the HTTP client has read of a body.
type countingReader struct {
	r        io.Reader
	sent     int64
	total    int64
	progress func(sent, total int64)
}

func (r *countingReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.sent += int64(n)
	if r.progress != nil {
		r.progress(r.sent, r.total)
	}
	return n, err
}
