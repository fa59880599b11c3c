package http

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/betaport/betaport/app/api"
)

// Some answers net/http writes itself, before any handler of ours runs:
// to a request it cannot read (431 for headers over MaxHeaderBytes; 400
// for a malformed request line or header, a control character in a
// header's value, a missing, malformed or repeated Host; 501 for a
// transfer coding it does not know; 505 for an HTTP version other than
// 1.x), and 417 to an Expect header other than 100-continue. It writes
// them as plain text, straight to the connection: no handler option,
// middleware or limit reaches them.
//
// So the listener Serve takes is wrapped: each connection knows whether a
// handler of ours is answering its current request (set when the handler
// starts, cleared when the connection goes idle after the answer). An
// answer of 400 or more written while none is, is net/http's own, and is
// replaced by a problem with the same status, a request id and a log line.
// Nothing else is touched: a handler's bytes, and ReadFrom (sendfile) and
// CloseWrite (the graceful close after a 431), go to the connection as
// they are. Raising MaxHeaderBytes to check sizes in a handler instead
// would cover only the 431 and cost memory on every connection; the
// other answers cannot be reached from a handler at all.

// maxHeaderBytes bounds a request's line and headers (net/http's default,
// named so the 431's detail can say it).
const maxHeaderBytes = 1 << 20

// answerListener wraps the connections it accepts in answerConns.
type answerListener struct {
	net.Listener
	s *Server
}

func (l answerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &answerConn{Conn: c, s: l.s}, nil
}

// answerConn is a connection that replaces net/http's own error answers
// with problems.
type answerConn struct {
	net.Conn
	s *Server
	// ours: a handler of ours answers the connection's current request.
	ours atomic.Bool
	// replaced: net/http's answer was replaced; the rest of it is dropped
	// (it closes the connection after it).
	replaced atomic.Bool
}

type answerConnKey struct{}

// connContext lets the handler reach its connection (http.Server.ConnContext).
func connContext(ctx context.Context, c net.Conn) context.Context {
	if ac, ok := c.(*answerConn); ok {
		return context.WithValue(ctx, answerConnKey{}, ac)
	}
	return ctx
}

// connState clears ours once a request's answer is done
// (http.Server.ConnState).
func connState(c net.Conn, state http.ConnState) {
	if ac, ok := c.(*answerConn); ok && state == http.StateIdle {
		ac.ours.Store(false)
	}
}

// answering marks the connection as answered by our handler, next.
func answering(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ac, ok := r.Context().Value(answerConnKey{}).(*answerConn); ok {
			ac.ours.Store(true)
		}
		next.ServeHTTP(w, r)
	})
}

func (c *answerConn) Write(p []byte) (int, error) {
	if c.replaced.Load() {
		return len(p), nil
	}
	if c.ours.Load() {
		return c.Conn.Write(p)
	}
	status, reason, ok := statusLine(p)
	if !ok || status < 400 {
		return c.Conn.Write(p) // OPTIONS *, answered by net/http: not an error
	}
	c.replaced.Store(true)
	if _, err := c.Conn.Write(c.s.goProblem(status, reason)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// ReadFrom keeps sendfile for the files a handler serves.
func (c *answerConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok && c.ours.Load() && !c.replaced.Load() {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c}, r)
}

// CloseWrite keeps net/http's graceful close (after a 431, so that the
// client reads the answer before the connection is reset).
func (c *answerConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// statusLine reads the status and the text after it ("Bad Request:
// invalid header value") from the start of an answer.
func statusLine(p []byte) (status int, reason string, ok bool) {
	line, _, _ := bytes.Cut(p, []byte("\r\n"))
	rest, found := bytes.CutPrefix(line, []byte("HTTP/1."))
	if !found || len(rest) < 5 || rest[1] != ' ' {
		return 0, "", false
	}
	status, err := strconv.Atoi(string(rest[2:5]))
	if err != nil {
		return 0, "", false
	}
	return status, strings.TrimSpace(string(rest[5:])), true
}

// goProblem is the problem that replaces net/http's answer of status (its
// status line's text, reason, says why), as a whole HTTP/1.1 response that
// closes the connection, as net/http's did.
func (s *Server) goProblem(status int, reason string) []byte {
	id := newRequestID()
	p := problem(status, api.ProblemBadRequest, "")
	p.Title = http.StatusText(status)
	p.Instance = RequestInstance(id)
	_, why, _ := strings.Cut(reason, ": ")
	switch {
	case status == http.StatusRequestHeaderFieldsTooLarge:
		p.Type = api.ProblemTooLarge
		p.Detail = "The request's line and headers are larger than " + strconv.Itoa(maxHeaderBytes>>10) +
			" KiB, so it was not read. Send a shorter URL and fewer or smaller headers; a browser that sends this site's cookies may need them cleared."
	case status == http.StatusNotImplemented:
		p.Detail = "The request's Transfer-Encoding is one this service does not take. Send the body as it is, with Content-Length, or chunked."
	case status == http.StatusHTTPVersionNotSupported:
		p.Detail = "This service speaks HTTP/1.1 (and 1.0). Send the request as HTTP/1.1."
	case status == http.StatusExpectationFailed:
		p.Detail = "This service meets only Expect: 100-continue. Send the request without its other Expect header."
	case why == "missing required Host header":
		p.Detail = "The request has no Host header, which HTTP/1.1 requires. Send Host with this service's host name."
	case why == "malformed Host header" || why == "too many Host headers":
		p.Detail = "The request's Host header is not one host name (and port). Send exactly one Host header with this service's host name."
	case why == "invalid header name":
		p.Detail = "A header's name holds characters a header name cannot have (spaces, separators or control characters). Check the headers the client sends."
	case why == "invalid header value":
		p.Detail = "A header's value holds a control character (such as NUL or a line break); a cookie can too. Check the headers the client sends, or clear this site's cookies."
	case status == http.StatusBadRequest:
		// net/http says no more (textproto refuses the header first).
		p.Detail = "The request could not be read as HTTP/1.1: its request line or a header is malformed, such as a header whose value holds a control character " +
			"(a cookie can too), a header line without a colon, or two Host headers; a client speaking TLS to this plain HTTP port gets this answer too. " +
			"Check the URL and the headers the client sends, or clear this site's cookies."
	default:
		p.Detail = "The request could not be read. Check the URL and the headers the client sends."
	}
	body, _ := json.Marshal(p)
	body = append(body, '\n')
	h := http.Header{}
	h.Set("Content-Type", api.ProblemContentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	h.Set("Connection", "close")
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	h.Set(RequestIDHeader, id)
	setSecurityHeaders(h, contentSecurityPolicyFor(s.UploadOrigin))
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	h.Write(&b)
	b.WriteString("\r\n")
	b.Write(body)

	s.Metrics.Request("", "", status, 0)
	s.Logger.LogAttrs(context.Background(), slog.LevelWarn, "request not read",
		slog.Int("status", status),
		slog.String("reason", reason),
		slog.String("request_id", id),
	)
	return b.Bytes()
}
