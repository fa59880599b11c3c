package main

import (
	"fmt"
	"time"
)

func init() {
	extra["signinrate"] = func(args []string) {
		pw := demoPasswords()
		email := "admin@hobby.test"
		c := clientFrom("127.0.2.1")
		t0 := time.Now()
		kinds := map[string]int{}
		n := 0
		for time.Since(t0) < 40*time.Second {
			r, _ := c.req("POST", "/api/session", nil, mustJSON(map[string]string{"email": email, "password": fmt.Sprintf("g%d", n)}))
			n++
			p := parseProblem(r)
			k := fmt.Sprintf("%d %s", r.Status, trunc([]byte(p.Detail))[:min(60, len(p.Detail))])
			kinds[k]++
			if r.Status == 429 {
				waitRetry(r)
			}
		}
		fmt.Printf("one address honouring Retry-After for 40 s: %d attempts\n", n)
		for k, v := range kinds {
			fmt.Printf("  %4d × %s\n", v, k)
		}
		// the account now: a fresh address, wrong then right
		f := clientFrom("127.0.2.2")
		r, _ := f.req("POST", "/api/session", nil, mustJSON(map[string]string{"email": email, "password": "nope"}))
		fmt.Printf("fresh address, wrong: %d %s\n", r.Status, trunc([]byte(parseProblem(r).Detail)))
		r, _ = f.req("POST", "/api/session", nil, mustJSON(map[string]string{"email": email, "password": pw[email]}))
		fmt.Printf("same fresh address, right: %d\n", r.Status)
	}
}
