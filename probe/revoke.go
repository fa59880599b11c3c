package main

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// A tester revoked while their event stream is open: does it stay open?
func init() {
	extra["revokestream"] = func(args []string) {
		w := setup()
		req, _ := http.NewRequest("GET", base+"/api/extensions/1/events", nil)
		req.Header.Set("Accept", "text/event-stream")
		hc := &http.Client{Jar: w.tester.hc.Jar}
		r, err := hc.Do(req)
		if err != nil || r.StatusCode != 200 {
			fatalf("stream: %v %v", err, r)
		}
		lines := make(chan string, 100)
		go func() {
			sc := bufio.NewScanner(r.Body)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		time.Sleep(time.Second)
		w.admin.must("DELETE", fmt.Sprintf("/api/extensions/1/testers/%d", w.testerID), nil, 204)
		t0 := time.Now()
		s, _ := w.tester.req("GET", "/api/builds", nil, nil)
		fmt.Printf("revoked tester's API call: %d %s\n", s.Status, parseProblem(s).Type)
		res := submit(w.key, validZip(fmt.Sprintf("6.%d.0", time.Now().Unix()%60000)))
		fmt.Printf("published after the revoke: %d\n", res.status())
		timeout := time.After(90 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					fmt.Printf("the server closed the revoked tester's stream after %v\n", time.Since(t0).Round(100*time.Millisecond))
					signOutStream(w)
					return
				}
				if strings.HasPrefix(l, "data:") {
					fmt.Printf("+%v revoked tester's stream got: %s\n", time.Since(t0).Round(100*time.Millisecond), l)
				}
			case <-timeout:
				fmt.Println("after 90 s the revoked tester's stream is still open")
				signOutStream(w)
				return
			}
		}
	}
}

// An admin who signs out while a stream is open.
func signOutStream(w *world) {
	pw := demoPasswords()
	a := signIn("admin@acme.test", pw["admin@acme.test"])
	req, _ := http.NewRequest("GET", base+"/api/extensions/1/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	r, err := (&http.Client{Jar: a.hc.Jar}).Do(req)
	if err != nil || r.StatusCode != 200 {
		fatalf("stream: %v", err)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(r.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	time.Sleep(time.Second)
	a.must("DELETE", "/api/session", nil, 204)
	s, _ := a.req("GET", "/api/session", nil, nil)
	fmt.Printf("signed-out admin's session: %d\n", s.Status)
	t0 := time.Now()
	time.Sleep(1500 * time.Millisecond)
	res := submit(w.key, validZip(fmt.Sprintf("6.%d.1", time.Now().Unix()%60000)))
	fmt.Printf("published after the sign-out: %d\n", res.status())
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				fmt.Printf("the server closed the signed-out admin's stream after %v\n", time.Since(t0).Round(100*time.Millisecond))
				return
			}
			if strings.HasPrefix(l, "data:") {
				fmt.Printf("+%v signed-out admin's stream got: %s\n", time.Since(t0).Round(100*time.Millisecond), l)
			}
		case <-timeout:
			fmt.Println("after 20 s the signed-out admin's stream is still open")
			return
		}
	}
}
