package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var (
	pidFile    = env("PROBE_PIDFILE", "/tmp/probe29/s1.pid")
	metricsURL = env("PROBE_METRICS", "http://127.0.0.1:18939/metrics")
)

func serverPID() int {
	b, _ := os.ReadFile(pidFile)
	p, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return p
}

type sample struct {
	fds, threads int
	rssMB        float64
	goroutines   int
	conns        int
}

func (s sample) String() string {
	return fmt.Sprintf("fds=%d goroutines=%d rss=%.0fMB threads=%d tcp-conns=%d", s.fds, s.goroutines, s.rssMB, s.threads, s.conns)
}

func take() sample {
	pid := serverPID()
	var s sample
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	s.fds = len(ents)
	socks := 0
	for _, e := range ents {
		l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
		if strings.HasPrefix(l, "socket:") {
			socks++
		}
	}
	s.conns = socks
	st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(st), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.Atoi(f[1])
			s.rssMB = float64(kb) / 1024
		}
		if len(f) >= 2 && f[0] == "Threads:" {
			s.threads, _ = strconv.Atoi(f[1])
		}
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	if r, err := hc.Get(metricsURL); err == nil {
		sc := bufio.NewScanner(r.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "go_goroutines ") {
				s.goroutines, _ = strconv.Atoi(strings.Fields(sc.Text())[1])
			}
		}
		r.Body.Close()
	} else {
		s.goroutines = -1
	}
	return s
}

type lat struct {
	n                  int
	fail               int
	p50, p95, p99, max time.Duration
}

func (l lat) String() string {
	return fmt.Sprintf("n=%d fail=%d p50=%v p95=%v p99=%v max=%v", l.n, l.fail, l.p50.Round(time.Microsecond*100), l.p95.Round(time.Microsecond*100), l.p99.Round(time.Microsecond*100), l.max.Round(time.Millisecond))
}

func percentiles(ds []time.Duration, fail int) lat {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	l := lat{n: len(ds), fail: fail}
	if len(ds) == 0 {
		return l
	}
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	l.p50, l.p95, l.p99, l.max = at(0.5), at(0.95), at(0.99), ds[len(ds)-1]
	return l
}

// healthz measures n sequential /healthz requests, each on a new connection.
func healthz(n int) lat {
	var ds []time.Duration
	fail := 0
	for i := 0; i < n; i++ {
		hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		t0 := time.Now()
		r, err := hc.Get(base + "/healthz")
		if err != nil {
			fail++
			continue
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		if r.StatusCode != 200 {
			fail++
			continue
		}
		ds = append(ds, time.Since(t0))
		time.Sleep(20 * time.Millisecond)
	}
	return percentiles(ds, fail)
}

func report(label string) sample {
	s := take()
	h := healthz(40)
	fmt.Printf("[%s] %s | /healthz %s\n", label, s, h)
	return s
}

// stalled opens n connections that send part of a request body and stop.
func stalled(n int, kind string, putURL string) {
	host := strings.TrimPrefix(base, "http://")
	var req string
	switch kind {
	case "json":
		req = "POST /api/session HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"email\":\"a"
	case "headers":
		req = "GET /healthz HTTP/1.1\r\nHost: " + host + "\r\nX-Slow: "
	case "zip":
		u := strings.TrimPrefix(putURL, base)
		req = "PUT " + u + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/zip\r\nContent-Length: 10000000\r\n\r\nPK\x03\x04"
	}
	idle := report("idle")
	var conns []net.Conn
	var closedAt sync.Map
	t0 := time.Now()
	var answered, closed atomic.Int64
	statuses := sync.Map{}
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", host, 5*time.Second)
		if err != nil {
			fmt.Printf("dial %d: %v\n", i, err)
			break
		}
		c.Write([]byte(req))
		conns = append(conns, c)
		go func(i int, c net.Conn) {
			br := bufio.NewReader(c)
			r, err := http.ReadResponse(br, nil)
			if err == nil {
				answered.Add(1)
				v, _ := statuses.LoadOrStore(r.StatusCode, new(atomic.Int64))
				v.(*atomic.Int64).Add(1)
				io.Copy(io.Discard, r.Body)
			}
			io.Copy(io.Discard, br)
			closed.Add(1)
			closedAt.Store(i, time.Since(t0))
		}(i, c)
	}
	fmt.Printf("opened %d stalled %s connections in %v\n", len(conns), kind, time.Since(t0).Round(time.Millisecond))
	during := report("during")
	deadline := time.Now().Add(120 * time.Second)
	for closed.Load() < int64(len(conns)) && time.Now().Before(deadline) {
		time.Sleep(time.Second)
	}
	var last time.Duration
	closedAt.Range(func(_, v any) bool { last = max(last, v.(time.Duration)); return true })
	st := map[int]int64{}
	statuses.Range(func(k, v any) bool { st[k.(int)] = v.(*atomic.Int64).Load(); return true })
	fmt.Printf("server closed %d/%d (answered %d, statuses %v); the last %v after the first opened\n", closed.Load(), len(conns), answered.Load(), st, last.Round(100*time.Millisecond))
	for _, c := range conns {
		c.Close()
	}
	time.Sleep(3 * time.Second)
	after := report("after")
	fmt.Printf("ratio during/idle p50 %.1f, fds over idle after: %d, goroutines over idle after: %d\n",
		float64(during.goroutines)/float64(max(1, idle.goroutines)), after.fds-idle.fds, after.goroutines-idle.goroutines)
}

// slowReaders opens n downloads and reads one byte every 5 s.
func slowReaders(n int, path string, cookie string) {
	host := strings.TrimPrefix(base, "http://")
	idle := report("idle")
	t0 := time.Now()
	var closed atomic.Int64
	var got atomic.Int64
	var closedAt sync.Map
	var conns []*net.TCPConn
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", host, 5*time.Second)
		if err != nil {
			fmt.Printf("dial %d: %v\n", i, err)
			break
		}
		tc := c.(*net.TCPConn)
		tc.SetReadBuffer(4096)
		conns = append(conns, tc)
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nCookie: %s\r\nAccept-Encoding: identity\r\n\r\n", path, host, cookie)
		go func(i int, c net.Conn) {
			b := make([]byte, 1)
			for {
				m, err := c.Read(b)
				got.Add(int64(m))
				if err != nil {
					break
				}
				time.Sleep(5 * time.Second)
			}
			closed.Add(1)
			closedAt.Store(i, time.Since(t0))
		}(i, c)
	}
	fmt.Printf("opened %d slow readers in %v\n", len(conns), time.Since(t0).Round(time.Millisecond))
	time.Sleep(3 * time.Second)
	during := report("during")
	// The client cannot see the close until it has read what its buffer
	// holds: watch the server's own sockets and open files instead.
	deadline := time.Now().Add(240 * time.Second)
	var cutAt time.Duration
	next := 10 * time.Second
	for time.Now().Before(deadline) {
		time.Sleep(2 * time.Second)
		s := take()
		if time.Since(t0) >= next {
			fmt.Printf("  +%v: %s\n", time.Since(t0).Round(time.Second), s)
			next += 10 * time.Second
		}
		if s.conns <= idle.conns+5 && s.fds <= idle.fds+10 {
			cutAt = time.Since(t0)
			break
		}
	}
	fmt.Printf("the server let go of the slow readers (sockets and files back to idle) after %v; %d bytes read by the clients in all\n", cutAt.Round(time.Second), got.Load())
	report("cut off, clients still open")
	for _, c := range conns {
		c.Close()
	}
	time.Sleep(3 * time.Second)
	after := report("after")
	_ = during
	fmt.Printf("fds over idle after: %d, goroutines over idle after: %d\n", after.fds-idle.fds, after.goroutines-idle.goroutines)
}

// events opens n event streams and publishes once.
func events(n int, ext int, cookie string, publish func()) {
	host := strings.TrimPrefix(base, "http://")
	idle := report("idle")
	var conns []net.Conn
	var gotEvent, refused, closed atomic.Int64
	statuses := sync.Map{}
	var mu sync.Mutex
	var evLat []time.Duration
	var pubAt atomic.Int64
	t0 := time.Now()
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", host, 5*time.Second)
		if err != nil {
			fmt.Printf("dial %d: %v\n", i, err)
			break
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "GET /api/extensions/%d/events HTTP/1.1\r\nHost: %s\r\nCookie: %s\r\nAccept: text/event-stream\r\n\r\n", ext, host, cookie)
		go func(c net.Conn) {
			br := bufio.NewReader(c)
			r, err := http.ReadResponse(br, nil)
			if err != nil {
				closed.Add(1)
				return
			}
			v, _ := statuses.LoadOrStore(r.StatusCode, new(atomic.Int64))
			v.(*atomic.Int64).Add(1)
			if r.StatusCode != 200 {
				refused.Add(1)
				io.Copy(io.Discard, r.Body)
				closed.Add(1)
				return
			}
			sc := bufio.NewScanner(r.Body)
			seen := false
			first := ""
			for sc.Scan() {
				l := sc.Text()
				if !strings.HasPrefix(l, "data:") || !strings.Contains(l, "lastBundle") {
					continue
				}
				if first == "" {
					first = l
					continue
				}
				if !seen && l != first && pubAt.Load() != 0 {
					seen = true
					gotEvent.Add(1)
					mu.Lock()
					evLat = append(evLat, time.Since(time.Unix(0, pubAt.Load())))
					mu.Unlock()
				}
			}
			closed.Add(1)
		}(c)
	}
	fmt.Printf("opened %d event streams in %v\n", len(conns), time.Since(t0).Round(time.Millisecond))
	time.Sleep(3 * time.Second)
	report("during")
	pubAt.Store(time.Now().UnixNano())
	publish()
	time.Sleep(10 * time.Second)
	mu.Lock()
	l := percentiles(evLat, 0)
	mu.Unlock()
	st := map[int]int64{}
	statuses.Range(func(k, v any) bool { st[k.(int)] = v.(*atomic.Int64).Load(); return true })
	fmt.Printf("statuses %v; %d of %d streams got the publish within 10 s (latency %s); %d closed by the server so far\n", st, gotEvent.Load(), len(conns), l, closed.Load())
	report("during, after publish")
	for _, c := range conns {
		c.Close()
	}
	time.Sleep(5 * time.Second)
	after := report("after close")
	fmt.Printf("fds over idle after: %d, goroutines over idle after: %d\n", after.fds-idle.fds, after.goroutines-idle.goroutines)
}

var _ = bytes.MinRead
