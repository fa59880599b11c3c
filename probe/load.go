package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"sync"
	"time"
)

type opStats struct {
	mu    sync.Mutex
	lat   map[string][]time.Duration
	err   map[string]int
	r429  map[string]int
	codes map[string]map[int]int
}

func (s *opStats) add(op string, d time.Duration, status int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.codes[op] == nil {
		s.codes[op] = map[int]int{}
	}
	s.codes[op][status]++
	if status == 429 {
		s.r429[op]++
		return
	}
	s.lat[op] = append(s.lat[op], d)
	if !ok {
		s.err[op]++
	}
}

func loadTest(w *world, dur time.Duration, workers int) {
	st := &opStats{lat: map[string][]time.Duration{}, err: map[string]int{}, r429: map[string]int{}, codes: map[string]map[int]int{}}
	pw := demoPasswords()
	keys := []map[string]string{w.key}
	for i := 0; i < 3; i++ {
		keys = append(keys, newKey(w.admin, w.ext, fmt.Sprintf("load-%d", i)))
	}
	// a testers cursor to page with
	r := w.admin.must("GET", "/api/extensions/1/testers?limit=50", nil, 200)
	var tp struct{ NextCursor string }
	json.Unmarshal(r.Body, &tp)
	idle := report("load idle")
	stop := time.Now().Add(dur)
	var wg sync.WaitGroup
	var subN int
	var subMu sync.Mutex
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(i)))
			for time.Now().Before(stop) {
				x := rng.Intn(100)
				var op string
				t0 := time.Now()
				status, ok := 0, false
				do := func(c *client, m, p string, body any, want ...int) {
					var b []byte
					if body != nil {
						b = mustJSON(body)
					}
					rr, err := c.req(m, p, nil, b)
					if err != nil {
						status = -1
						return
					}
					status = rr.Status
					for _, wnt := range want {
						if rr.Status == wnt {
							ok = true
						}
					}
				}
				switch {
				case x < 20:
					op = "list bundles"
					do(w.admin, "GET", fmt.Sprintf("/api/extensions/1/bundles?page=%d&limit=20", rng.Intn(25)), nil, 200)
				case x < 32:
					op = "list testers"
					p := "/api/extensions/1/testers?limit=50"
					if rng.Intn(2) == 0 {
						p += "&cursor=" + tp.NextCursor
					}
					if rng.Intn(4) == 0 {
						p = "/api/extensions/1/testers?q=gold&limit=20"
					}
					do(w.admin, "GET", p, nil, 200)
				case x < 40:
					op = "list builds (tester)"
					do(w.tester, "GET", "/api/builds?limit=20", nil, 200)
				case x < 58:
					op = "download zip"
					do(w.admin, "GET", fmt.Sprintf("/api/extensions/1/bundles/%d/download", 400+rng.Intn(100)), nil, 200)
				case x < 66:
					op = "download crx"
					do(w.tester, "GET", fmt.Sprintf("/api/extensions/1/bundles/current/download"), nil, 200)
				case x < 76:
					op = "submit (3 calls)"
					subMu.Lock()
					subN++
					n := subN
					subMu.Unlock()
					k := keys[rng.Intn(len(keys))]
					c := newClient()
					rr, err := c.req("POST", "/api/submit/upload", nil, mustJSON(k))
					if err != nil || rr.Status != 200 {
						if rr != nil {
							status = rr.Status
						}
						break
					}
					var u uploadURL
					json.Unmarshal(rr.Body, &u)
					if p := putZip(u.URL, validZip(fmt.Sprintf("3.%d.%d", i, n))); p.Status != 200 {
						status = p.Status
						break
					}
					do(c, "POST", "/api/submit/sign", k, 200, 409) // 409: another worker's newer URL for this key
				case x < 84:
					op = "sign-in"
					do(newClient(), "POST", "/api/session", map[string]string{"email": "admin@hobby.test", "password": pw["admin@hobby.test"]}, 200)
				default:
					op = "extension + installs + audit"
					do(w.admin, "GET", "/api/extensions/1/installs", nil, 200)
					do(w.admin, "GET", "/api/extensions/1/audit?limit=20", nil, 200)
				}
				st.add(op, time.Since(t0), status, ok)
			}
		}(i)
	}
	time.Sleep(dur / 2)
	mid := report("load during")
	wg.Wait()
	after := report("load after")
	var ops []string
	for op := range st.codes {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	total, errs := 0, 0
	for _, op := range ops {
		l := percentiles(st.lat[op], st.err[op])
		total += l.n + st.r429[op]
		errs += st.err[op]
		fmt.Printf("  %-30s %s 429s=%d codes=%v\n", op, l, st.r429[op], st.codes[op])
	}
	fmt.Printf("load: %v with %d workers: %d requests-or-flows, %d errors (%.2f%%), %.0f/s\n", dur, workers, total, errs, 100*float64(errs)/float64(max(1, total)), float64(total)/dur.Seconds())
	_, _, _ = idle, mid, after
}
