package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os/exec"
	"strings"
	"time"
)

// clientFrom is a client whose connections come from a given loopback address.
func clientFrom(ip string) *client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: func(ctx context.Context, n, a string) (net.Conn, error) { return d.DialContext(ctx, n, a) }}
	jar, _ := cookiejar.New(nil)
	return &client{hc: &http.Client{Transport: tr, Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, origin: true}
}

func check(ok bool, item, what string, a ...any) {
	s := "HOLDS "
	if !ok {
		s = "FAILS "
	}
	fmt.Printf("%s item %s: %s\n", s, item, fmt.Sprintf(what, a...))
}

// item 5: a stranger's wrong passwords from elsewhere do not lock the admin out.
func item5(pw map[string]string) {
	email := "admin@acme.test"
	stranger := clientFrom("127.0.0.2")
	var st429, st401 int
	for i := 0; i < 60; i++ {
		r, _ := stranger.req("POST", "/api/session", nil, mustJSON(map[string]string{"email": email, "password": fmt.Sprintf("wrong-%d", i)}))
		if r.Status == 429 {
			st429++
		} else if r.Status == 401 {
			st401++
		}
	}
	real := clientFrom("127.0.0.3")
	r, _ := real.req("POST", "/api/session", nil, mustJSON(map[string]string{"email": email, "password": pw[email]}))
	check(r.Status == 200, "5", "after 60 wrong passwords from 127.0.0.2 (%d×401, %d×429), the admin's right password from 127.0.0.3 = %d", st401, st429, r.Status)
	// A stranger spreading guesses over many addresses.
	var spread429 int
	for i := 0; i < 40; i++ {
		c := clientFrom(fmt.Sprintf("127.0.1.%d", i+1))
		for j := 0; j < 5; j++ {
			r, _ := c.req("POST", "/api/session", nil, mustJSON(map[string]string{"email": email, "password": fmt.Sprintf("w%d-%d", i, j)}))
			if r.Status == 429 {
				spread429++
			}
		}
	}
	real2 := clientFrom("127.0.0.4")
	r, _ = real2.req("POST", "/api/session", nil, mustJSON(map[string]string{"email": email, "password": pw[email]}))
	check(r.Status == 200, "5", "after 200 wrong passwords spread over 40 addresses (%d×429), the admin's right password from a fifth address = %d %s", spread429, r.Status, trunc(r.Body))
	// X-Forwarded-For from an untrusted client must not move the count.
	xff := clientFrom("127.0.0.5")
	var xff429 int
	for i := 0; i < 30; i++ {
		r, _ := xff.req("POST", "/api/session", map[string]string{"X-Forwarded-For": fmt.Sprintf("10.0.0.%d", i)}, mustJSON(map[string]string{"email": "admin@hobby.test", "password": "x"}))
		if r.Status == 429 {
			xff429++
		}
	}
	check(xff429 > 0, "5 (beside)", "30 wrong passwords from one address with a new X-Forwarded-For each: %d×429 (the forwarded address is not believed)", xff429)
	// the stranger's own address still gets the admin in with the right password?
	r, _ = stranger.req("POST", "/api/session", nil, mustJSON(map[string]string{"email": email, "password": pw[email]}))
	fmt.Printf("   note: the right password from the stranger's own address = %d\n", r.Status)
}

// item 7: webhook address filter (server without --webhooks-allow-private).
func item7(admin *client, ext int) {
	refuse := []string{
		"http://[64:ff9b::7f00:1]/", "http://[64:ff9b::a00:1]/", "http://[2002:7f00:1::1]/", "http://[2002:a00:1::]/", "http://[2001::1]/", "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
		"http://[::a00:1]/", "http://0.0.0.0/", "http://0.1.2.3/", "http://[fec0::1]/",
		// beside
		"http://127.0.0.1/", "http://10.0.0.1/", "http://172.16.0.1/", "http://192.168.1.1/", "http://169.254.169.254/", "http://100.64.0.1/",
		"http://192.0.0.1/", "http://192.0.2.1/", "http://198.18.0.1/", "http://198.51.100.1/", "http://203.0.113.1/", "http://224.0.0.1/", "http://240.0.0.1/", "http://255.255.255.255/",
		"http://[::1]/", "http://[::]/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/", "http://[::ffff:0:a00:1]/", "http://[::127.0.0.1]/", "http://[fe80::1]/", "http://[fe80::1%25lo]/",
		"http://[fc00::1]/", "http://[fd00::1]/", "http://[ff02::1]/", "http://[100::1]/", "http://[2001:db8::1]/", "http://[2001:10::1]/", "http://[2001:20::1]/", "http://[64:ff9b:1::a00:1]/", "http://[3fff::1]/", "http://[5f00::1]/",
		"http://192.88.99.1/", "http://localhost/", "http://LOCALHOST/", "http://localhost./", "http://foo.localhost/", "http://127.1/", "http://0x7f000001/", "http://2130706433/", "http://017700000001/", "http://0/",
		"http://127.0.0.1.nip.io.local/", "http://[::ffff:169.254.169.254]/", "http://[64:ff9b::169.254.169.254]/", "http://[2002:c0a8:101::]/",
	}
	var holes []string
	for _, u := range refuse {
		r, _ := admin.req("POST", fmt.Sprintf("/api/extensions/%d/webhooks", ext), nil, mustJSON(map[string]string{"url": u}))
		if r.Status == 201 {
			holes = append(holes, u)
			var wh struct{ ID int }
			json.Unmarshal(r.Body, &wh)
			admin.req("DELETE", fmt.Sprintf("/api/extensions/%d/webhooks/%d", ext, wh.ID), nil, nil)
		} else if pe := problemErr(r); pe != "" || r.Status != 400 {
			holes = append(holes, fmt.Sprintf("%s (%d %s)", u, r.Status, pe))
		}
	}
	check(len(holes) == 0, "7", "%d non-public webhook URLs tried; accepted or answered badly: %v", len(refuse), holes)
	r, _ := admin.req("POST", fmt.Sprintf("/api/extensions/%d/webhooks", ext), nil, mustJSON(map[string]string{"url": "https://93.184.215.14/hook"}))
	check(r.Status == 201, "7", "a literal public address is accepted (%d)", r.Status)
	if r.Status == 201 {
		var wh struct{ ID int }
		json.Unmarshal(r.Body, &wh)
		admin.req("DELETE", fmt.Sprintf("/api/extensions/%d/webhooks/%d", ext, wh.ID), nil, nil)
	}
}

// item 8: invite links expire and work once.
func item8(admin *client, ext int) {
	tp := fmt.Sprintf("/api/extensions/%d/testers", ext)
	email := fmt.Sprintf("item8-%d@example.com", time.Now().UnixNano())
	r := admin.must("POST", tp, map[string]string{"email": email}, 201)
	var inv struct {
		ID              int
		InviteURL       string `json:"inviteUrl"`
		InviteExpiresAt time.Time
	}
	json.Unmarshal(r.Body, &inv)
	d := time.Until(inv.InviteExpiresAt)
	check(d > 14*24*time.Hour-time.Minute && d < 14*24*time.Hour+time.Minute, "8", "default expiry in %v", d.Round(time.Hour))
	link := inv.InviteURL[strings.Index(inv.InviteURL, "/t/"):]
	// HEAD does not use it up
	h, _ := newClient().req("HEAD", link, nil, nil)
	a := newClient()
	ra := a.must("GET", link, nil, 0)
	ra2 := a.must("GET", link, nil, 0)
	b := newClient()
	rb, _ := b.req("GET", link, map[string]string{"Accept": "text/html"}, nil)
	prog, _ := newClient().req("GET", link, map[string]string{"Accept": "application/json"}, nil)
	check(ra.Status == 303 && !strings.Contains(ra.Header.Get("Location"), "login"), "8", "first browser: %d → %s (HEAD before: %d)", ra.Status, ra.Header.Get("Location"), h.Status)
	check(ra2.Status/100 == 3 && !strings.Contains(ra2.Header.Get("Location"), "used"), "8", "same browser again: %d → %s", ra2.Status, ra2.Header.Get("Location"))
	check(rb.Status/100 == 3 && strings.Contains(rb.Header.Get("Location"), "/login?link=used"), "8", "second browser: %d → %s", rb.Status, rb.Header.Get("Location"))
	check(prog.Status == 410 && problemErr(prog) == "", "8", "a program: %d %s %s", prog.Status, parseProblem(prog).Type, problemErr(prog))
	s, _ := b.req("GET", "/api/session", nil, nil)
	check(s.Status == 401, "8", "second browser has no session: %d", s.Status)
	// bounds
	for _, v := range []string{"1", "90"} {
		r, _ := admin.req("POST", tp, nil, []byte(`{"email":"b`+v+fmt.Sprint(time.Now().UnixNano())+`@example.com","expiresInDays":`+v+`}`))
		var iv struct{ InviteExpiresAt time.Time }
		json.Unmarshal(r.Body, &iv)
		check(r.Status == 201, "8", "expiresInDays %s = %d, expires in %v", v, r.Status, time.Until(iv.InviteExpiresAt).Round(time.Hour))
	}
	for _, v := range []string{"0", "91", "-1", "1.5", `"7"`, "null"} {
		r, _ := admin.req("POST", tp, nil, []byte(`{"email":"c`+fmt.Sprint(time.Now().UnixNano())+`@example.com","expiresInDays":`+v+`}`))
		check(r.Status == 400 && problemErr(r) == "", "8", "expiresInDays %s refused: %d %s", v, r.Status, trunc([]byte(parseProblem(r).Detail)))
	}
	// A new link kills the old one
	email2 := fmt.Sprintf("item8b-%d@example.com", time.Now().UnixNano())
	r = admin.must("POST", tp, map[string]string{"email": email2}, 201)
	json.Unmarshal(r.Body, &inv)
	old := inv.InviteURL[strings.Index(inv.InviteURL, "/t/"):]
	r = admin.must("POST", fmt.Sprintf("%s/%d/invite", tp, inv.ID), map[string]any{}, 200)
	json.Unmarshal(r.Body, &inv)
	oldr, _ := newClient().req("GET", old, map[string]string{"Accept": "application/json"}, nil)
	check(oldr.Status == 410 || oldr.Status == 404, "8 (beside)", "the old link after New link: %d %s", oldr.Status, parseProblem(oldr).Type)
	// racing opens: 8 browsers at once, only one gets in
	email3 := fmt.Sprintf("item8c-%d@example.com", time.Now().UnixNano())
	r = admin.must("POST", tp, map[string]string{"email": email3}, 201)
	json.Unmarshal(r.Body, &inv)
	link3 := inv.InviteURL[strings.Index(inv.InviteURL, "/t/"):]
	res := make(chan bool, 8)
	for i := 0; i < 8; i++ {
		go func() {
			c := newClient()
			c.req("GET", link3, nil, nil)
			s, _ := c.req("GET", "/api/session", nil, nil)
			res <- s != nil && s.Status == 200
		}()
	}
	in := 0
	for i := 0; i < 8; i++ {
		if <-res {
			in++
		}
	}
	check(in == 1, "8 (beside)", "8 browsers racing on one link: %d signed in", in)
}

// item 14: webhook secrets are not in the database in plain text.
func item14() {
	out, _ := exec.Command("sqlite3", "-readonly", dataDir+"/betaport.db", "select * from webhooks").Output()
	check(!strings.Contains(string(out), "whsec_"), "14", "webhooks table holds no whsec_ secret (%d bytes read)", len(out))
	all, _ := exec.Command("sh", "-c", "sqlite3 -readonly "+dataDir+"/betaport.db .dump | grep -c whsec_").Output()
	check(strings.TrimSpace(string(all)) == "0", "14", "whole dump lines with whsec_: %s", strings.TrimSpace(string(all)))
}

// item 11: lone surrogates in every text field.
func item11(w *world) {
	e := w.ext
	cases := []struct {
		path  string
		who   *client
		body  string
		field string
	}{
		{"/api/submit/upload", w.anon, `{"extensionId":"1","apiKey":"` + w.key["apiKey"] + `","releaseNotes":"fix \ud800 this"}`, "releaseNotes"},
		{fmt.Sprintf("/api/extensions/%d/testers", e), w.admin, `{"email":"s@example.com","name":"a\udc00b"}`, "name"},
		{fmt.Sprintf("/api/extensions/%d/testers", e), w.admin, `{"email":"s\ud800@example.com"}`, "email"},
		{fmt.Sprintf("/api/extensions/%d/keys", e), w.admin, `{"label":"\ud83d"}`, "label"},
		{fmt.Sprintf("/api/extensions/%d/webhooks", e), w.admin, `{"url":"http://127.0.0.1/\ud800"}`, "url"},
		{"/api/session", newClient(), `{"email":"admin@acme.test","password":"\ud800"}`, "password"},
	}
	for _, c := range cases {
		r, _ := c.who.req("POST", c.path, nil, []byte(c.body))
		p := parseProblem(r)
		named := strings.Contains(p.Detail, c.field) || strings.Contains(string(r.Body), `"param":"`+c.field+`"`)
		check(r.Status == 400 && named && problemErr(r) == "", "11", "%s %s: %d %q", c.path, c.field, r.Status, trunc([]byte(p.Detail)))
	}
}
