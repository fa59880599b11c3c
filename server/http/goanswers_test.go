package http_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	bphttp "github.com/betaport/betaport/server/http"
)

// rawExchange sends raw on a new connection to addr (the rest of it from a
// goroutine: the server may answer before reading it all) and reads the
// one answer.
func rawExchange(t *testing.T, addr string, raw []byte) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	go c.Write(raw)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%.80q: no answer: %v", raw, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// wantRawProblem checks an answer read off the wire is a problem of
// status, with its request id, that closes the connection.
func wantRawProblem(t *testing.T, what string, resp *http.Response, body []byte, status int, typ, detail string) {
	t.Helper()
	var p api.Problem
	err := json.Unmarshal(body, &p)
	switch {
	case resp.StatusCode != status || resp.Header.Get("Content-Type") != api.ProblemContentType || err != nil:
		t.Errorf("%s: %d %s %q, want a %d problem", what, resp.StatusCode, resp.Header.Get("Content-Type"), body, status)
	case p.Status != status || p.Type != typ || p.Title != http.StatusText(status) || !strings.Contains(p.Detail, detail):
		t.Errorf("%s: problem %+v, want %d %s saying %q", what, p, status, typ, detail)
	case resp.Header.Get(bphttp.RequestIDHeader) == "" || p.Instance != bphttp.RequestInstance(resp.Header.Get(bphttp.RequestIDHeader)):
		t.Errorf("%s: request id %q, instance %q", what, resp.Header.Get(bphttp.RequestIDHeader), p.Instance)
	case !resp.Close || resp.Header.Get("X-Content-Type-Options") != "nosniff":
		t.Errorf("%s: headers %v: want Connection: close and nosniff", what, resp.Header)
	}
}

// TestNetHTTPAnswersAreProblems: the answers net/http writes itself, before
// any handler (issue 29: a 2 MB header got a plain-text 431, a control
// character in the Cookie a plain-text 400), are problems too, through a
// real server's connections (raw TCP: Go's client will not send these).
func TestNetHTTPAnswersAreProblems(t *testing.T) {
	t.Parallel()
	e := newServingEnv(t, bphttp.Timeouts{})
	addr := strings.TrimPrefix(e.URL, "http://")
	get := func(headers string) []byte {
		return []byte("GET /api/extensions HTTP/1.1\r\nHost: " + addr + "\r\n" + headers + "\r\n")
	}
	clientHello := []byte{0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03}
	clientHello = append(clientHello, bytes.Repeat([]byte{0x42}, 160)...)
	bad := api.ProblemBadRequest
	for _, c := range []struct {
		name   string
		raw    []byte
		status int
		typ    string
		detail string
	}{
		{"a 2 MB cookie", get("Cookie: a=" + strings.Repeat("b", 2<<20) + "\r\n"), 431, api.ProblemTooLarge, "1024 KiB"},
		{"a 2 MB URL", []byte("GET /api/" + strings.Repeat("x", 2<<20) + " HTTP/1.1\r\nHost: x\r\n\r\n"), 431, api.ProblemTooLarge, "KiB"},
		{"a control character in the Cookie", get("Cookie: " + api.SessionCookie + "=a\x01b\r\n"), 400, bad, "control character"},
		{"a NUL in a header", get("X-Note: a\x00b\r\n"), 400, bad, "control character"},
		{"a space in a header's name", get("Bad Header: x\r\n"), 400, bad, "header's name"},
		{"no Host", []byte("GET /api/extensions HTTP/1.1\r\n\r\n"), 400, bad, "no Host header"},
		{"a malformed Host", []byte("GET /api/extensions HTTP/1.1\r\nHost: a b\r\n\r\n"), 400, bad, "Host header"},
		{"two Hosts", []byte("GET /api/extensions HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), 400, bad, "two Host headers"},
		{"a malformed request line", []byte("GARBAGE\r\n\r\n"), 400, bad, "could not be read"},
		{"a header line without a colon", get("NoColonHere\r\n"), 400, bad, "could not be read"},
		{"a bad Content-Length", []byte("POST /api/session HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n"), 400, bad, "could not be read"},
		{"TLS to the plain port", clientHello, 400, bad, "TLS"},
		{"a malformed escape in the path", []byte("GET /api/%zz HTTP/1.1\r\nHost: x\r\n\r\n"), 400, bad, "could not be read"},
		{"two Content-Lengths", []byte("POST /api/session HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"), 400, bad, "could not be read"},
		{"HTTP/2's preface without TLS", []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 400, bad, "HTTP/2"},
		{"GET *", []byte("GET * HTTP/1.1\r\nHost: x\r\n\r\n"), 400, bad, "names nothing"},
		{"HTTP/2.0 as text", []byte("GET /api/extensions HTTP/2.0\r\nHost: x\r\n\r\n"), 505, bad, "HTTP/1.1"},
		{"HTTP/0.9", []byte("GET /api/extensions HTTP/0.9\r\nHost: x\r\n\r\n"), 505, bad, "HTTP/1.1"},
		{"an unknown transfer coding", []byte("POST /api/session HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"), 501, bad, "Transfer-Encoding"},
		{"an Expect other than 100-continue", get("Expect: the-unexpected\r\n"), 417, bad, "100-continue"},
	} {
		resp, body := rawExchange(t, addr, c.raw)
		wantRawProblem(t, c.name, resp, body, c.status, c.typ, c.detail)
	}

	// On one connection: a request our handlers answer (an error too,
	// kept as it is), then one net/http refuses. The answers are each
	// their own.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Minute))
	r := bufio.NewReader(conn)
	for _, want := range []int{200, 401, 404} {
		path := map[int]string{200: api.PathHealth, 401: "/api/extensions", 404: "/api/no-such-thing"}[want]
		io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want || resp.Close {
			t.Fatalf("GET %s on a kept-alive connection = %d (close %v) %s", path, resp.StatusCode, resp.Close, body)
		}
	}
	io.WriteString(conn, "GET /api/extensions HTTP/1.1\r\nHost: "+addr+"\r\nCookie: a=\x7f\r\n\r\n")
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	wantRawProblem(t, "a control character after three requests", resp, body, 400, bad, "control character")

	// What handlers send passes through untouched: a bundle's bytes
	// (sendfile on file storage), and OPTIONS *, which net/http answers
	// itself with a 200.
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	bundle := e.publish(t, p.ext, "1.0.0")
	zip, err := e.Blobs.ReadAll(context.Background(), bundle.BlobKey)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", e.URL+api.ExtensionPath(p.ext.ID)+"/bundles/1/download", nil)
	req.Header = admin
	resp, err = http.DefaultClient.Do(req) // on S3, through the redirect to the bucket
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, zip) {
		t.Errorf("the download = %d, %d bytes; want the bundle's %d", resp.StatusCode, len(got), len(zip))
	}
	resp, body = rawExchange(t, addr, []byte("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"))
	if resp.StatusCode != 200 {
		t.Errorf("OPTIONS * = %d %s", resp.StatusCode, body)
	}
}
