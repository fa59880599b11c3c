package http_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	bphttp "github.com/betaport/betaport/server/http"
	"github.com/betaport/betaport/server/storetest"
)

// newServingEnv is newEnv behind a real http.Server (Serve), whose
// connection timeouts httptest's server does not have.
func newServingEnv(t testing.TB, timeouts bphttp.Timeouts) *env {
	t.Helper()
	return newServingEnvLogged(t, timeouts, testLogger(t))
}

// newServingEnvLogged is newServingEnv with the server's log sent to logger.
func newServingEnvLogged(t testing.TB, timeouts bphttp.Timeouts, logger *slog.Logger) *env {
	t.Helper()
	e := newEnv(t)
	return serveOn(t, e, &bphttp.Server{Store: e.DB, Blobs: e.Blobs, Logger: logger, Secret: []byte(credential.NewToken()), SigningKeys: testKeyring, Timeouts: timeouts})
}

// serveOn serves s (on e's storage) behind a real http.Server on a port of
// its own, until the test ends.
func serveOn(t testing.TB, e *env, s *bphttp.Server) *env {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.BaseURL = "http://" + ln.Addr().String()
	go s.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return &env{Server: &httptest.Server{URL: s.BaseURL}, DB: e.DB, Blobs: e.Blobs, App: s, Dir: e.Dir, Backend: e.Backend}
}

// stall opens a connection that sends a request's headers and one byte of
// the body they promise, then nothing.
func stall(t *testing.T, addr, method, path string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", method, path, addr)
	return c
}

// TestStalledBodiesDoNotStallTheServer: many connections that promise a
// body and stop sending hold nothing up: /healthz answers and a pipeline
// submits while they hang, and each is then answered 408 and closed.
func TestStalledBodiesDoNotStallTheServer(t *testing.T) {
	// Not parallel: its deadlines are seconds, and it holds 1,500 connections.
	e := newServingEnv(t, bphttp.Timeouts{Body: 3 * time.Second})
	addr := strings.TrimPrefix(e.URL, "http://")
	const n = 1500
	conns := make([]net.Conn, 0, n)
	paths := []string{"/api/session", api.PathSubmitUpload, api.PathSubmitSign}
	for i := range n {
		conns = append(conns, stall(t, addr, "POST", paths[i%len(paths)]))
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})

	client := &http.Client{Timeout: 10 * time.Second}
	for range 5 {
		resp, err := client.Get(e.URL + api.PathHealth)
		if err != nil {
			t.Fatalf("/healthz with %d stalled connections: %v", n, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("/healthz = %d", resp.StatusCode)
		}
	}
	p := newPipeline(t, e, betaport.PlanProfessional)
	if b := p.submitAny(t, validZip(t, "1.0")); b.Number != 1 {
		t.Fatalf("submit while stalled: bundle %d", b.Number)
	}

	// Every stalled connection is answered and closed by the server.
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[string]int{}
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.SetReadDeadline(time.Now().Add(time.Minute))
			all, _ := io.ReadAll(c) // to EOF: the server closed it
			status, _, _ := strings.Cut(string(all), "\r\n")
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if statuses["HTTP/1.1 408 Request Timeout"] != n {
		t.Fatalf("stalled connections were answered %v, want %d × 408", statuses, n)
	}
}

// TestStalledHeadersAreClosed: a connection that never finishes its
// headers is closed.
func TestStalledHeadersAreClosed(t *testing.T) {
	// Not parallel: its deadlines are seconds.
	e := newServingEnv(t, bphttp.Timeouts{Header: time.Second})
	c, err := net.Dial("tcp", strings.TrimPrefix(e.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
	c.SetReadDeadline(time.Now().Add(time.Minute))
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("the connection was not closed by the server: %v", err)
	}
}

// pacedReader yields data in chunks, one per interval: a slow connection.
type pacedReader struct {
	data     []byte
	chunk    int
	interval time.Duration
}

func (p *pacedReader) Read(b []byte) (int, error) {
	if len(p.data) == 0 {
		return 0, io.EOF
	}
	time.Sleep(p.interval)
	n := copy(b[:min(len(b), p.chunk)], p.data)
	p.data = p.data[n:]
	return n, nil
}

// putPaced PUTs body to url at the pace of r.
func putPaced(t *testing.T, url string, r *pacedReader) (*http.Response, []byte) {
	t.Helper()
	size := int64(len(r.data))
	req, err := http.NewRequest("PUT", url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", api.ZipContentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("PUT: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// TestSlowUploads: a zip PUT slower than the minimum rate is stopped with
// a 408 that says why, keeping nothing; one that is slow but keeps up
// succeeds however long it takes. (On S3 zips go straight to the bucket:
// this test is in fileOnlyTests.)
func TestSlowUploads(t *testing.T) {
	// Not parallel: its uploads keep a pace the server measures.
	e := newServingEnv(t, bphttp.Timeouts{UploadGrace: time.Second, UploadMinRate: 32 << 10})
	p := newPipeline(t, e, betaport.PlanProfessional)
	// Incompressible padding, so that the upload lasts seconds.
	padding := make([]byte, 160<<10)
	rand.Read(padding)
	big := makeZip(t, map[string]string{
		"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "1.0"}`,
		"padding.bin":   string(padding),
	})

	u := p.askURL(t)
	resp, body := putPaced(t, u.URL, &pacedReader{data: big, chunk: 1 << 10, interval: 100 * time.Millisecond}) // ~10 KiB/s
	pr := wantProblem(t, resp, body, http.StatusRequestTimeout, api.ProblemRequestTimeout)
	if !strings.Contains(pr.Detail, "32 KiB/s") {
		t.Errorf("detail %q does not say the rate", pr.Detail)
	}
	if got := e.storedUploads(t); len(got) != 0 {
		t.Errorf("a stopped upload left %q", got)
	}
	if state := p.uploadState(t, u.UploadID); state != "requested" {
		t.Errorf("upload is %s after a stopped PUT, want it still waiting", state)
	}

	// ~80 KiB/s for ~2 s: past the grace, but above the rate.
	resp, body = putPaced(t, u.URL, &pacedReader{data: big, chunk: 8 << 10, interval: 100 * time.Millisecond})
	if resp.StatusCode != 200 {
		t.Fatalf("slow but live PUT = %d %s", resp.StatusCode, body)
	}
	if resp, body := p.sign(t); resp.StatusCode != 200 {
		t.Fatalf("sign = %d %s", resp.StatusCode, body)
	}
}

// waitQuiet waits until this process has used less than a tenth of a core
// over window, for at most limit (then it goes on: the measure says how
// busy it still was).
func waitQuiet(b *testing.B, window, limit time.Duration) {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		before := cpu()
		time.Sleep(window) // the window the process's CPU time is read over
		if cpu()-before < window/10 {
			return
		}
	}
}

// healthzTimer returns a function that asks base's /healthz once, on one
// kept-alive connection, and returns how long the answer took.
func healthzTimer(b *testing.B, base string) func() time.Duration {
	client := &http.Client{Timeout: 10 * time.Second}
	return func() time.Duration {
		t0 := time.Now()
		resp, err := client.Get(base + api.PathHealth)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(t0)
	}
}

// BenchmarkHealthzWithStalledConnections measures /healthz latency with
// 1,500 connections holding stalled request bodies against the same server
// idle, side by side in one run, and reports stalled/idle.
func BenchmarkHealthzWithStalledConnections(b *testing.B) {
	e := newServingEnv(b, bphttp.Timeouts{Body: time.Hour})
	addr := strings.TrimPrefix(e.URL, "http://")
	healthz := healthzTimer(b, e.URL)
	var idle, stalled time.Duration
	for b.Loop() {
		idle += healthz()
	}
	var conns []net.Conn
	for range 1500 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(c, "POST /api/session HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", addr)
		conns = append(conns, c)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range b.N {
		stalled += healthz()
	}
	b.ReportMetric(float64(idle)/float64(b.N)/1e3, "idle-µs/healthz")
	b.ReportMetric(float64(stalled)/float64(b.N)/1e3, "stalled-µs/healthz")
	b.ReportMetric(float64(stalled)/float64(idle), "stalled/idle")
}

// requestsLogged counts the server's log lines of finished requests whose
// route is route: a request is logged when its handler has returned.
type requestsLogged struct {
	route string
	n     atomic.Int64
}

func (c *requestsLogged) Enabled(context.Context, slog.Level) bool { return true }
func (c *requestsLogged) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *requestsLogged) WithGroup(string) slog.Handler            { return c }
func (c *requestsLogged) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "request" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "route" && a.Value.String() == c.route {
			c.n.Add(1)
		}
		return true
	})
	return nil
}

// openFiles is how many descriptors this process has open.
func openFiles(t testing.TB) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// TestSlowReadersAreCutOff: clients that start a download and then stop
// reading (or read a byte now and then) are cut off once they fall behind
// the minimum rate; their connections, goroutines and open files are let
// go, and a client that keeps up gets the whole file (issue 29: 1,500
// such readers stayed open for ever).
func TestSlowReadersAreCutOff(t *testing.T) {
	// Not parallel: it counts the process's open files.
	logged := &requestsLogged{route: "GET /api/extensions/{id}/bundles/{number}/download"}
	e := newServingEnvLogged(t, bphttp.Timeouts{WriteGrace: 500 * time.Millisecond, WriteMinRate: 256 << 10}, slog.New(logged))
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Tab Tamer")
	big := bigValidZip(t, "1.0.0", 8<<20)
	b := e.publishZip(t, ext, "1.0.0", big)
	admin := e.adminOf(t, team)
	addr := strings.TrimPrefix(e.URL, "http://")
	path := fmt.Sprintf("/api/extensions/%d/bundles/%d/download", ext.ID, b.Number)
	if e.downloadStatus() != http.StatusOK {
		t.Skip("on S3 the bucket sends downloads") // fileOnlyTests keeps it out of that run
	}
	idleFiles := openFiles(t)

	const n = 200
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.(*net.TCPConn).SetReadBuffer(4 << 10)
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nCookie: %s\r\n\r\n", path, addr, admin.Get("Cookie"))
		one := make([]byte, 1)
		if _, err := io.ReadFull(c, one); err != nil { // the answer has started
			t.Fatal(err)
		}
		conns[i] = c
	}
	// A reader that keeps up, beside them, gets every byte.
	resp, body := e.fetchFile(t, "GET", path, admin)
	if resp.StatusCode != 200 || !bytes.Equal(body, big) {
		t.Fatalf("a reader that keeps up got %d, %d of %d bytes", resp.StatusCode, len(body), len(big))
	}

	// The server lets go of every stalled reader: each request ends (and
	// is logged) though its client reads nothing more.
	deadline := time.Now().Add(30 * time.Second)
	for logged.n.Load() < n+1 {
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s, %d of %d stalled downloads still hold the server", n+1-logged.n.Load(), n)
		}
		time.Sleep(10 * time.Millisecond) // the interval of a wait on the server's log
	}
	for _, c := range conns {
		c.Close()
	}
	// Their descriptors and goroutines are let go (the test's own
	// connections are closed; the server's were closed by the server).
	for deadline := time.Now().Add(10 * time.Second); openFiles(t) > idleFiles+5 || serving() > 2; {
		if time.Now().After(deadline) {
			t.Fatalf("%d files open after the cut-off, %d before the readers came; %d connections served", openFiles(t), idleFiles, serving())
		}
		time.Sleep(10 * time.Millisecond) // the interval of a wait on the process's files
	}
}

// serving is how many connections this process's HTTP servers serve (a
// goroutine each).
func serving() int {
	var b strings.Builder
	pprof.Lookup("goroutine").WriteTo(&b, 2) // one stack per goroutine
	return strings.Count(b.String(), "net/http.(*conn).serve(")
}

// BenchmarkHealthzWithSlowReaders measures /healthz latency with 1,500
// clients that started a download and read no more, against the same
// server idle, side by side in one run (stalled/idle; issue 29's goal is
// at most 1.2), on the default write timeouts. Then it waits for the
// server to cut them off and reports how long that took and how many
// more files and connections the process holds than when idle (0 each:
// everything is let go).
func BenchmarkHealthzWithSlowReaders(b *testing.B) {
	const readers = 1500
	logged := &requestsLogged{route: "GET /api/extensions/{id}/bundles/{number}/download"}
	e := newServingEnvLogged(b, bphttp.Timeouts{}, slog.New(logged))
	if e.downloadStatus() != http.StatusOK {
		b.Skip("on S3 the bucket sends downloads")
	}
	team := storetest.MustTeam(b, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(b, e.DB, team, "Tab Tamer")
	bundle := e.publishZip(b, ext, "1.0.0", bigValidZip(b, "1.0.0", 4<<20))
	admin := e.adminOf(b, team)
	addr := strings.TrimPrefix(e.URL, "http://")
	path := fmt.Sprintf("/api/extensions/%d/bundles/%d/download", ext.ID, bundle.Number)
	healthz := healthzTimer(b, e.URL)
	healthz() // the client's connection, kept alive, is part of idle
	idleFiles, idleServing := openFiles(b), serving()

	var idle, slow time.Duration
	for b.Loop() {
		idle += healthz()
	}
	conns := make([]net.Conn, readers)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		c.(*net.TCPConn).SetReadBuffer(4 << 10)
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nCookie: %s\r\n\r\n", path, addr, admin.Get("Cookie"))
		if _, err := io.ReadFull(c, make([]byte, 1)); err != nil { // the answer has started
			b.Fatal(err)
		}
		conns[i] = c
	}
	cutStart := time.Now()
	// While they arrive, the server fills each one's socket buffers (the
	// kernel takes a few MB per connection before a write blocks): that is
	// the cost of their coming, reported as arriving/idle. Then they hold
	// still, which is the cost of their staying: slow/idle, the issue's
	// measure, once the process is quiet again (under a tenth of a core
	// for 200 ms), before the first of them is cut off.
	var arriving time.Duration
	for range b.N {
		arriving += healthz()
	}
	waitQuiet(b, 200*time.Millisecond, 5*time.Second)
	for range b.N {
		slow += healthz()
	}
	if logged.n.Load() > 0 {
		b.Fatalf("%d readers were cut off before the measure ended: it measured fewer than %d", logged.n.Load(), readers)
	}
	b.ReportMetric(float64(idle)/float64(b.N)/1e3, "idle-µs/healthz")
	b.ReportMetric(float64(arriving)/float64(idle), "arriving/idle")
	b.ReportMetric(float64(slow)/float64(b.N)/1e3, "slow-µs/healthz")
	b.ReportMetric(float64(slow)/float64(idle), "slow/idle")

	// The cut-off: every download ends on the server (and is logged)
	// though its client reads nothing more; then the clients close their
	// ends, and the process is back to what it held idle.
	for logged.n.Load() < readers {
		if time.Since(cutStart) > 2*time.Minute {
			b.Fatalf("after 2 minutes, %d of %d slow readers still hold the server", readers-logged.n.Load(), readers)
		}
		time.Sleep(10 * time.Millisecond) // the interval of a wait on the server's log
	}
	b.ReportMetric(time.Since(cutStart).Seconds(), "s-to-cut-off")
	for _, c := range conns {
		c.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for (openFiles(b) > idleFiles || serving() > idleServing) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // the interval of a wait on the process's files
	}
	b.ReportMetric(float64(openFiles(b)-idleFiles), "files-over-idle")
	b.ReportMetric(float64(serving()-idleServing), "conns-over-idle")
}
