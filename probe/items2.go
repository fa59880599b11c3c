package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"
)

// item 9: a backup taken with uploads under way, restored: sign answers clearly.
func item9() {
	dir := "/tmp/probe29/bk"
	cw := newCrashWorld(dir)
	if r := submit(cw.key, validZip("1.0.0")); r.status() != 200 {
		fatalf("publish %d", r.status())
	}
	key2 := newKey(cw.admin, 1, "second")
	// ext 1, key 1: the zip arrived, not signed. A second extension: URL only.
	u := askURL(newClient(), cw.key)
	if r := putZip(u.URL, bigZip("2.0.0", 4, 1)); r.Status != 200 {
		fatalf("put %d", r.Status)
	}
	exec.Command(betaportBin, "extension", "create", "--data", dir, "--team", "1", "--name", "Second").Run()
	key3 := newKey(cw.admin, 2, "e2")
	u3 := askURL(newClient(), key3)
	out := "/tmp/probe29/item9.backup"
	os.Remove(out)
	if b, err := exec.Command(betaportBin, "backup", "--data", dir, "--out", out).CombinedOutput(); err != nil {
		fatalf("backup: %v %s", err, b)
	}
	cw.srv.stop()
	rdir := "/tmp/probe29/bk-restored"
	os.RemoveAll(rdir)
	if b, err := exec.Command(betaportBin, "restore", "--from", out, "--data", rdir).CombinedOutput(); err != nil {
		fatalf("restore: %v %s", err, b)
	}
	rs := &server{dir: rdir, addr: cw.srv.addr, metrics: cw.srv.metrics}
	rs.start()
	defer rs.stop()
	s, _ := newClient().req("POST", "/api/submit/sign", nil, mustJSON(cw.key))
	check(s.Status == 410 && problemErr(s) == "", "9", "sign of an upload whose zip arrived after... (received at backup time, zip not in it): %d %s — %s", s.Status, parseProblem(s).Type, trunc([]byte(parseProblem(s).Detail)))
	s3, _ := newClient().req("POST", "/api/submit/sign", nil, mustJSON(key3))
	check(s3.Status/100 == 4 && s3.Status != 500 && problemErr(s3) == "", "9", "sign of an upload only requested at backup time: %d %s — %s", s3.Status, parseProblem(s3).Type, trunc([]byte(parseProblem(s3).Detail)))
	// the old URLs on the restored service
	p := putZip(u3.URL, validZip("1.1.0"))
	fmt.Printf("   PUT to a URL issued before the backup, on the restored service: %d %s\n", p.Status, parseProblem(p).Type)
	if p.Status == 200 {
		s3, _ = newClient().req("POST", "/api/submit/sign", nil, mustJSON(key3))
		fmt.Printf("   then sign: %d %s\n", s3.Status, parseProblem(s3).Type)
	}
	p = putZip(u.URL, validZip("2.0.1"))
	fmt.Printf("   PUT again to the received upload's URL on the restored service: %d %s %s\n", p.Status, parseProblem(p).Type, trunc([]byte(parseProblem(p).Detail)))
	s, _ = newClient().req("POST", "/api/submit/sign", nil, mustJSON(cw.key))
	fmt.Printf("   then sign: %d %s\n", s.Status, parseProblem(s).Type)
	// a fresh submit works
	r := submit(key2, validZip("3.0.0"))
	check(r.status() == 200, "9", "a new submit on the restored service: %d", r.status())
	admin := signIn(cw.email, cw.pw)
	bad := consistency(rdir, admin, 1)
	check(len(bad) == 0, "9", "restored store consistent: %v", bad)
}

// item 13: a delivery cut short by a crash is recorded as interrupted.
func item13() {
	dir := "/tmp/probe29/wh"
	cw := newCrashWorld(dir)
	var mode atomic.Int32 // 0 hang, 1 answer 200
	var hits atomic.Int32
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		hits.Add(1)
		switch mode.Load() {
		case 0:
			time.Sleep(9 * time.Second) // just under the 10 s limit: the crash comes first
		case 1:
			time.Sleep(4 * time.Second) // long enough to read the list during the attempt
		}
		w.WriteHeader(200)
	}))
	r := cw.admin.must("POST", "/api/extensions/1/webhooks", map[string]string{"url": "http://" + ln.Addr().String() + "/hook"}, 201)
	var wh struct{ ID int }
	json.Unmarshal(r.Body, &wh)
	if res := submit(cw.key, validZip("1.0.0")); res.status() != 200 {
		fatalf("publish %d", res.status())
	}
	for hits.Load() == 0 {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	cw.srv.kill9()
	mode.Store(1)
	cw.restart()
	seen := map[string]bool{}
	t0 := time.Now()
	var last string
	for time.Since(t0) < 100*time.Second {
		d := cw.admin.must("GET", fmt.Sprintf("/api/extensions/1/webhooks/%d/deliveries", wh.ID), nil, 200)
		last = string(d.Body)
		var page struct {
			Data []map[string]any `json:"data"`
		}
		json.Unmarshal(d.Body, &page)
		for _, dl := range page.Data {
			k := fmt.Sprintf("state=%v attempts=%v status=%v error=%v", dl["state"], dl["attempts"], dl["lastStatus"], dl["lastError"])
			if !seen[k] {
				seen[k] = true
				fmt.Printf("   +%v %s\n", time.Since(t0).Round(time.Second), k)
			}
		}
		if strings.Contains(last, `"delivered"`) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	check(strings.Contains(strings.ToLower(fmt.Sprint(seen)), "interrupt"), "13", "a delivery cut by kill -9 shows as interrupted; last answer %s", trunc([]byte(last)))
	// and with SIGTERM in the middle of an attempt
	mode.Store(0)
	h0 := hits.Load()
	cw.admin.must("POST", fmt.Sprintf("/api/extensions/1/webhooks/%d/test", wh.ID), nil, 202)
	for hits.Load() == h0 {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	t1 := time.Now()
	cw.srv.stop()
	fmt.Printf("   SIGTERM during an attempt: the service stopped in %v\n", time.Since(t1).Round(time.Millisecond))
	mode.Store(1)
	cw.restart()
	sawInt := false
	for i := 0; i < 40; i++ {
		d := cw.admin.must("GET", fmt.Sprintf("/api/extensions/1/webhooks/%d/deliveries?limit=1", wh.ID), nil, 200)
		if strings.Contains(strings.ToLower(string(d.Body)), "interrupt") {
			sawInt = true
			fmt.Printf("   after SIGTERM: %s\n", trunc(d.Body))
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	check(sawInt, "13", "a delivery cut by SIGTERM shows as interrupted")
	cw.srv.stop()
}
