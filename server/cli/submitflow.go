package cli

// The submit command's flow: client.Submit, with the command's retries,
// timeouts, progress on stderr and exit codes around each call.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
)

// Timing of the submit flow.
const (
	uploadCallTimeout = time.Minute     // call 1: issue an upload URL
	signCallTimeout   = 2 * time.Minute // call 3: the server validates the zip
	putHeaderTimeout  = 2 * time.Minute // call 2: the answer, once every byte is sent
	putStallTimeout   = 2 * time.Minute // call 2: no byte taken for this long
	firstBackoff      = time.Second
	maxBackoff        = 30 * time.Second
	maxRetryAfter     = time.Minute // the most a Retry-After is waited
	// maxStartOvers bounds the new upload URLs after a spent one (each
	// sends the whole zip again): a 409/410 that persists is the server's.
	maxStartOvers = 2
)

// submitSleep waits between tries; tests replace it so they do not sleep.
var submitSleep = func(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// submitter runs the flow (client.Submit) with its retries, progress and
// messages.
type submitter struct {
	base    string
	key     api.ServiceKey
	retries int
	quiet   bool
	tty     bool
	stderr  io.Writer
	client  *client.Client // calls 1 and 3, each under its own timeout
	put     *http.Client   // call 2: no overall timeout, a stall watchdog
	sleep   func(context.Context, time.Duration) error
	now     func() time.Time
	// uploadHost is the upload URL's host, for messages (the URL is a
	// credential): set as the PUT starts.
	uploadHost string
	// notes are the release notes call 1 carries, channel and rollout
	// where the bundle goes.
	notes   string
	channel string
	rollout int
}

func newSubmitter(base string, key api.ServiceKey, o *submitOptions, stderr io.Writer) *submitter {
	// No cookie jar, and no redirects: the key is in the body and must reach
	// only --base-url; the upload URL gets nothing but the zip.
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	putTransport := http.DefaultTransport.(*http.Transport).Clone()
	putTransport.ResponseHeaderTimeout = putHeaderTimeout
	return &submitter{
		base:    base,
		key:     key,
		retries: o.retries,
		quiet:   o.quiet,
		tty:     isTerminal(stderr),
		stderr:  stderr,
		client:  &client.Client{BaseURL: base, HTTP: &http.Client{CheckRedirect: noRedirect}},
		put:     &http.Client{CheckRedirect: noRedirect, Transport: putTransport},
		sleep:   submitSleep,
		now:     time.Now,
	}
}

// say prints a line for people unless --quiet.
func (s *submitter) say(format string, a ...any) {
	if !s.quiet {
		fmt.Fprintf(s.stderr, format+"\n", a...)
	}
}

// retryable is a failure worth another try of the same call: a network
// failure, a 5xx, a 429.
type retryable struct {
	err   error
	after time.Duration // the server's Retry-After; 0 when it gave none
	hint  string        // what to do when the retries run out
}

func (r *retryable) Error() string { return r.err.Error() }

// startOver says the upload URL is spent (expired, superseded, refused) or
// the upload never arrived: request a new URL and upload again.
type startOver struct{ err error }

func (e *startOver) Error() string { return e.err.Error() }

// backoff is the wait before retry n (from 0): 1 s, 2 s, 4 s… up to 30 s.
func backoff(n int) time.Duration {
	if n >= 5 {
		return maxBackoff
	}
	return min(firstBackoff<<n, maxBackoff)
}

func attempts(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return strconv.Itoa(n) + " attempts"
}

// retry runs try until it succeeds, fails for good, or the retries run out.
func (s *submitter) retry(ctx context.Context, what string, try func(context.Context) error) error {
	for n := 0; ; n++ {
		err := try(ctx)
		var r *retryable
		if err == nil || !errors.As(err, &r) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if n >= s.retries {
			return exitError{ExitServer, fmt.Sprintf("%s failed (%s); the last time: %v. %s", what, attempts(n+1), r.err, r.hint)}
		}
		wait := backoff(n)
		if r.after > 0 {
			wait = min(r.after, maxRetryAfter)
		}
		s.say("%s failed: %v; retrying in %s (retry %d of %d)", what, r.err, wait, n+1, s.retries)
		if err := s.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// run requests an upload URL, PUTs the zip and signs, starting over with a
// new URL when the old one is spent. It returns the bundle record as sent
// and decoded.
func (s *submitter) run(ctx context.Context, z *zipFile) (json.RawMessage, *betaport.Bundle, error) {
	for n := 0; ; n++ {
		raw, b, err := s.once(ctx, z)
		var so *startOver
		if !errors.As(err, &so) {
			return raw, b, err
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if n >= min(s.retries, maxStartOvers) {
			return nil, nil, exitError{ExitServer, fmt.Sprintf("%v (%s, each with a new upload URL). Try again later; if it keeps happening, tell the service's operators.", so.err, attempts(n+1))}
		}
		wait := backoff(n)
		s.say("%v; starting over with a new upload URL in %s (%d of %d)", so.err, wait, n+1, min(s.retries, maxStartOvers))
		if err := s.sleep(ctx, wait); err != nil {
			return nil, nil, err
		}
	}
}

// once runs the three calls once, each retried on its own.
func (s *submitter) once(ctx context.Context, z *zipFile) (json.RawMessage, *betaport.Bundle, error) {
	out, err := s.client.Submit(ctx, client.Submission{
		Key:          s.key,
		ReleaseNotes: s.notes,
		Channel:      s.channel,
		Rollout:      s.rollout,
		Zip:          &diskZip{s, z},
		Step: func(step client.Step, up *api.UploadURL) error {
			if step != client.StepPut {
				return nil
			}
			if up.MaxSize > 0 && z.size > up.MaxSize {
				return usageError{fmt.Sprintf("%s is %s; the service takes zips of at most %s. Make the bundle smaller (leave out source maps, tests, unused assets).",
					z.name, formatBytes(z.size), formatBytes(up.MaxSize))}
			}
			s.uploadHost = "the upload URL"
			if u, err := url.Parse(up.URL); err == nil {
				s.uploadHost = u.Host
			}
			return nil
		},
		Try: s.try,
	})
	if err != nil {
		return nil, nil, err
	}
	for _, w := range out.Warnings {
		s.say("warning: %s", w)
	}
	return out.JSON, &out.Bundle, nil
}

// What each step does, for messages; and the time calls 1 and 3 may take.
var (
	stepDoing   = [...]string{client.StepUploadURL: "requesting an upload URL", client.StepPut: "uploading the zip", client.StepSign: "signing the upload"}
	stepTimeout = [...]time.Duration{client.StepUploadURL: uploadCallTimeout, client.StepSign: signCallTimeout}
)

// try runs one step's call with its retries. A signed upload signs again to
// the same bundle, so call 3 is retried like the others.
func (s *submitter) try(ctx context.Context, step client.Step, call func(context.Context) error) error {
	if step == client.StepPut {
		// No check of ExpiresAt against the local clock, which may be
		// skewed: the server refuses an expired URL before the bytes go
		// (Expect: 100-continue), and that refusal starts over.
		return s.retry(ctx, "uploading the zip to "+s.uploadHost, call) // diskZip.Put says what failed
	}
	return s.retry(ctx, stepDoing[step], func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, stepTimeout[step])
		defer cancel()
		return s.callError(step, call(ctx))
	})
}

// callError turns the error of call 1 or 3 into the error to retry, start
// over on, or exit with.
func (s *submitter) callError(step client.Step, err error) error {
	var answer *client.AnswerError
	var bad *client.BadAnswerError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &answer):
		return s.answerError(answer, stepDoing[step], false)
	// A configuration mistake exits 1 at once: retrying it, or a CI job
	// retrying the command (exit 5), cannot fix it.
	case errors.Is(err, client.ErrNoUploadURL):
		return exitError{ExitFailure, fmt.Sprintf("POST %s answered no usable upload URL. Check --base-url: it must be Betaport's address.", api.PathSubmitUpload)}
	case errors.As(err, &bad) && step == client.StepSign:
		return exitError{ExitServer, fmt.Sprintf("the answer to POST %s is not a bundle record; the zip may or may not be published. Check the extension's bundles page.", api.PathSubmitSign)}
	case errors.As(err, &bad):
		return exitError{ExitFailure, fmt.Sprintf("%v. Check --base-url: it must be Betaport's address.", bad)}
	case errors.Is(err, client.ErrReadingAnswer):
		return &retryable{err: err, hint: "Check the network, then run the command again."}
	}
	if msg := s.addressMistake(err); msg != "" {
		return exitError{ExitFailure, msg}
	}
	return &retryable{err: err, hint: "Check --base-url and the network, then run the command again."}
}

var errStalled = errors.New("the upload stalled: the connection took no bytes for " + putStallTimeout.String())

// diskZip is call 2 for the command line: the client's PUT of the file on
// disk, under a stall watchdog, with the progress on stderr.
type diskZip struct {
	s *submitter
	z *zipFile
}

// Put PUTs the zip, from its first byte on every try (see client.ReaderZip).
func (d *diskZip) Put(ctx context.Context, uploadURL string, _ func(sent, total int64)) error {
	s, z := d.s, d.z
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var w io.Writer
	if !s.quiet {
		w = s.stderr
	}
	bar := newProgress(w, s.tty, z.size, s.now)
	stall := time.AfterFunc(putStallTimeout, func() { cancel(errStalled) })
	defer stall.Stop()
	var shown int64 // only the HTTP client's goroutine that reads the body touches it
	zip := &client.ReaderZip{R: z.f, Size: z.size, HTTP: s.put}
	err := zip.Put(ctx, uploadURL, func(sent, total int64) {
		if sent >= total {
			stall.Stop() // all sent: the header timeout takes over
		} else {
			stall.Reset(putStallTimeout)
		}
		bar.add(int(sent - shown))
		shown = sent
	})
	bar.finish(err == nil)
	var answer *client.AnswerError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &answer):
		return s.answerError(answer, "uploading the zip", true)
	case errors.Is(context.Cause(ctx), errStalled):
		err = errStalled
	}
	return &retryable{err: redactURL(err), hint: "Check the network, then run the command again."}
}

// redactURL drops the signed URL from a transport error: its signature is a
// credential until it expires, and CI logs are widely read.
func redactURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			return fmt.Errorf("%s %s://%s%s: %w", ue.Op, u.Scheme, u.Host, u.Path, ue.Err)
		}
		return ue.Err
	}
	return err
}

// answerError turns an error answer into the error to retry, start over on,
// or exit with.
func (s *submitter) answerError(answer *client.AnswerError, what string, put bool) error {
	code := answer.StatusCode
	loc := answer.Header.Get("Location")
	p := answer.Problem
	detail := strings.TrimSuffix(p.Detail, ".")
	if p.Type == "" && !put { // not Betaport's own problem (a proxy's?): say what it usually means
		switch code {
		case http.StatusUnauthorized:
			detail += ". The key was refused (wrong or revoked): create a key on the extension's settings page and use its key file"
		case http.StatusForbidden:
			detail += ". The key was refused, or the extension's team is not on the Professional plan"
		}
	}
	msg := fmt.Sprintf("%s: the service answered %d %s: %s.", what, code, p.Title, detail)
	if p.Type == "" && detail == strings.TrimSuffix(fmt.Sprintf("The server answered %d %s.", code, http.StatusText(code)), ".") {
		msg = fmt.Sprintf("%s: the server answered %d %s.", what, code, p.Title) // nothing more to say
	}
	notBetaport := p.Type == "" && !put && (code == http.StatusNotImplemented || code == http.StatusHTTPVersionNotSupported)
	switch {
	case notBetaport:
		// A server that does not take the call at all (python's
		// http.server answers POST with 501): retrying cannot help.
		return exitError{ExitFailure, msg + " Check --base-url: it must be Betaport's address."}
	case code == http.StatusTooManyRequests:
		return &retryable{err: fmt.Errorf("%d %s", code, p.Title), after: retryAfter(answer.Header, p, s.now()),
			hint: "Too many submit calls for this key: wait a minute, then run the command again."}
	case code >= 500:
		return &retryable{err: fmt.Errorf("%d %s", code, p.Title), after: retryAfter(answer.Header, p, s.now()),
			hint: "The service is having trouble; try again later. " + p.Detail}
	case put && code == http.StatusBadRequest:
		// The upload broke off (S3 answers a slow body with 400 RequestTimeout).
		return &retryable{err: fmt.Errorf("%d %s", code, p.Title), hint: p.Detail}
	case code == http.StatusConflict || code == http.StatusGone || (put && code == http.StatusForbidden):
		return &startOver{fmt.Errorf("%s: %d %s: %s", what, code, p.Title, detail)}
	case !put && (code == http.StatusUnauthorized || code == http.StatusForbidden):
		return exitError{ExitAuth, msg}
	case code == http.StatusUnprocessableEntity || code == http.StatusRequestEntityTooLarge || code == http.StatusUnsupportedMediaType:
		for _, zp := range p.Problems {
			path := zp.Path
			if path == "" {
				path = "(zip)"
			}
			fmt.Fprintf(s.stderr, "%s: %s (%s)\n", path, zp.Message, zp.Code)
		}
		if code == http.StatusUnprocessableEntity && len(p.Problems) > 0 {
			// The service's detail speaks of its API ("listed in
			// problems", "sign again"); say it in the command's terms.
			msg = fmt.Sprintf("%s: the zip was not published: fix the %d problem(s) above, then run the command again.", what, len(p.Problems))
		}
		return exitError{ExitInvalid, msg}
	case code/100 == 3:
		if put {
			return exitError{ExitServer, fmt.Sprintf("%s: the upload URL redirected (%d); Betaport does not send the zip through redirects.", what, code)}
		}
		return exitError{ExitFailure, fmt.Sprintf("%s: %s redirected (%d) to %s; give the final address as --base-url (the key is not sent through redirects).", what, s.base, code, loc)}
	case code == http.StatusNotFound && !put:
		return exitError{ExitFailure, msg + " Check --base-url: it must be Betaport's address."}
	}
	if put {
		return exitError{ExitServer, msg}
	}
	return exitError{ExitFailure, msg}
}

// retryAfter is the wait a 429 (or 503) asks for: the Retry-After header in
// seconds or as a date, else the problem's retryAfter.
func retryAfter(h http.Header, p *api.Problem, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
			return time.Duration(secs) * time.Second
		}
		if t, err := http.ParseTime(v); err == nil && t.After(now) {
			return t.Sub(now)
		}
	}
	if p.RetryAfter > 0 {
		return time.Duration(p.RetryAfter) * time.Second
	}
	return 0
}

// addressMistake says what is wrong with --base-url when err shows it
// cannot be Betaport's address as written ("" when err may pass): https://
// to a server that speaks plain HTTP, a name that does not resolve, a
// certificate that does not hold.
func (s *submitter) addressMistake(err error) string {
	var record tls.RecordHeaderError
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	var hostname x509.HostnameError
	switch {
	case errors.Is(err, http.ErrSchemeMismatch) || errors.As(err, &record):
		return fmt.Sprintf("--base-url %s says https://, but the server answers plain HTTP: use http://, or put TLS in front of the service.", s.base)
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Sprintf("--base-url %s names the host %s, which does not exist (DNS): check the address.", s.base, dns.Name)
	case errors.As(err, &cert) || errors.As(err, &hostname):
		return fmt.Sprintf("--base-url %s: the server's TLS certificate is not valid for it (%v): check the address, or the certificate.", s.base, err)
	}
	return ""
}
