package http

import (
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/betaport/betaport/app/api"
)

// Timeouts bound how long a client may take to send a request, so that
// connections that stall (by accident or on purpose) are closed instead of
// holding a file descriptor and a goroutine each until the server runs out.
// A zero field means its default.
type Timeouts struct {
	// Header is the time to send the request line and headers (5 s).
	Header time.Duration
	// Idle is how long a kept-alive connection waits for its next
	// request (60 s).
	Idle time.Duration
	// Body is the time to send a small body: JSON calls, sign-in (10 s).
	Body time.Duration
	// UploadGrace and UploadMinRate bound a zip PUT: after the grace
	// (10 s), the bytes received must keep up with the minimum rate
	// (16 KiB/s), so a slow but live upload finishes however long it takes
	// and a stalled one is closed.
	UploadGrace   time.Duration
	UploadMinRate int64 // bytes per second
	// WriteGrace and WriteMinRate bound every answer, downloads above all:
	// each write to the client must be taken within the grace (10 s) plus
	// its size at the minimum rate (16 KiB/s). A client that reads slowly
	// but steadily gets the whole file; one that stops reading, or takes a
	// byte every few seconds, is cut off instead of holding a connection,
	// a goroutine and an open file for ever.
	WriteGrace   time.Duration
	WriteMinRate int64 // bytes per second
}

func (t Timeouts) withDefaults() Timeouts {
	if t.Header <= 0 {
		t.Header = 5 * time.Second
	}
	if t.Idle <= 0 {
		t.Idle = 60 * time.Second
	}
	if t.Body <= 0 {
		t.Body = 10 * time.Second
	}
	if t.UploadGrace <= 0 {
		t.UploadGrace = 10 * time.Second
	}
	if t.UploadMinRate <= 0 {
		t.UploadMinRate = 16 << 10
	}
	if t.WriteGrace <= 0 {
		t.WriteGrace = 10 * time.Second
	}
	if t.WriteMinRate <= 0 {
		t.WriteMinRate = 16 << 10
	}
	return t
}

// writeDeadlines gives each write of an answer a deadline: the grace plus
// the write's size at the minimum rate. net/http has no write deadline of
// its own here (a download may take long), so without one a client that
// stops reading holds its connection until the process ends (issue 29:
// 1,500 clients reading a byte every 5 s held 4,300 descriptors).
func (s *Server) writeDeadlines(next http.Handler) http.Handler {
	t := s.Timeouts.withDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), t: t}
		// The headers, and what net/http flushes after the handler, are
		// written with the deadline of the request's start and of its last
		// write: set one now, and one when the handler is done.
		dw.extend(0)
		next.ServeHTTP(dw, r)
		dw.extend(0)
	})
}

// deadlineWriter sets the connection's write deadline before each write.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	t  Timeouts
}

func (d *deadlineWriter) extend(n int) {
	d.rc.SetWriteDeadline(time.Now().Add(d.t.WriteGrace + time.Duration(float64(n)/float64(d.t.WriteMinRate)*float64(time.Second))))
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	d.extend(len(p))
	return d.ResponseWriter.Write(p)
}

// Flush sends what is buffered, within a grace of its own.
func (d *deadlineWriter) Flush() {
	d.extend(0)
	d.rc.Flush()
}

func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// bodyDeadlines sets a read deadline on every request body: a fixed one
// for small bodies, and for an upload one that moves as bytes arrive. The
// deadline is lifted when the body has been read, so a long handler (a sign
// of a large zip) is not cut off: net/http watches the connection after the
// body for the client going away, and a deadline there would cancel the
// request.
func (s *Server) bodyDeadlines(next http.Handler) http.Handler {
	t := s.Timeouts.withDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		start := time.Now()
		b := &deadlineBody{ReadCloser: r.Body, rc: rc}
		if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, api.UploadPrefix) {
			b.next = func(read int64) time.Time {
				return start.Add(t.UploadGrace + time.Duration(float64(read)/float64(t.UploadMinRate)*float64(time.Second)))
			}
		} else {
			b.next = func(int64) time.Time { return start.Add(t.Body) }
		}
		if rc.SetReadDeadline(b.next(0)) == nil {
			r.Body = b
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody moves the connection's read deadline as the body is read,
// and lifts it at the end of the body. A handler that stops reading early
// leaves the deadline in place, so net/http's draining of the unread rest
// is bounded by it too.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	next func(read int64) time.Time
	read int64
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	switch {
	case b.done:
	case errors.Is(err, io.EOF):
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	case err != nil:
		// A timeout or a broken connection: the deadline stays, so that
		// net/http's attempt to drain the rest of the body before it
		// answers fails at once instead of waiting on a stalled client,
		// and the connection is closed after the answer.
		b.done = true
	case n > 0:
		b.rc.SetReadDeadline(b.next(b.read))
	}
	return n, err
}

// isTimeout reports a body read that ran out of time.
func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
