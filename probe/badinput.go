package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

type bcase struct {
	name   string
	who    string // anon, admin, admin2, tester, xorigin
	method string
	path   string
	hdr    map[string]string
	body   []byte
	want   int  // 0: any 4xx
	mayOK  bool // a 2xx is not a failure (noted only)
}

type finding struct {
	c   bcase
	got int
	why string
}

func badInputs(w *world) {
	before := storeState()
	cases := buildCases(w)
	var findings []finding
	counts := map[int]int{}
	prev := before
	logf, _ := os.Create("badinput-cases.log")
	defer logf.Close()
	for i, c := range cases {
		if c.method == "PUT" && strings.HasPrefix(c.name, "put") && !w.freshPut {
			// the PUT cases get an upload URL of their own, the latest
			time.Sleep(300 * time.Millisecond)
			mid := storeState()
			d := diffState(before, mid)
			fmt.Printf("store diff after the non-PUT cases: %d\n", len(d))
			for _, l := range d {
				fmt.Println("  ", l)
			}
			u := askURL(w.anon, w.key)
			pu, _ := url.Parse(u.URL)
			before = storeState()
			w.freshPut = true
			w.oldQuery = w.uploadQuery
			w.uploadQuery = pu.RawQuery
			w.putPath = pu.Path
			prev = before
		}
		if w.freshPut && strings.HasPrefix(c.name, "put") {
			c.path = fixPut(c.path, w)
		}
		cl := w.client(c.who)
		var r *resp
		var err error
		r, err = cl.req(c.method, c.path, c.hdr, c.body)
		if err != nil {
			findings = append(findings, finding{c, -1, "transport: " + err.Error()})
			continue
		}
		counts[r.Status]++
		fmt.Fprintf(logf, "%d\t%s\t%s\t%s %s\t%s\n", r.Status, c.name, c.who, c.method, trunc([]byte(c.path)), parseProblem(r).Type)
		var why []string
		switch {
		case r.Status/100 == 2 || r.Status/100 == 3:
			if !c.mayOK {
				why = append(why, "accepted a bad request")
			}
		default:
			if pe := problemErr(r); pe != "" {
				why = append(why, pe)
			}
			if c.want != 0 && r.Status != c.want {
				why = append(why, fmt.Sprintf("want %d", c.want))
			}
			if r.Status/100 != 4 && c.want == 0 {
				why = append(why, "not a 4xx")
			}
		}
		if os.Getenv("PROBE_PERCASE") != "" && c.method != "GET" && c.method != "HEAD" && r.Status >= 400 {
			time.Sleep(30 * time.Millisecond)
			now := storeState()
			if d := diffState(prev, now); len(d) > 0 {
				why = append(why, fmt.Sprintf("REFUSED BUT STORE CHANGED: %v", d))
			}
			prev = now
		} else if os.Getenv("PROBE_PERCASE") != "" && c.method != "GET" && c.method != "HEAD" {
			prev = storeState()
		}
		if len(why) > 0 {
			findings = append(findings, finding{c, r.Status, strings.Join(why, "; ") + " | " + trunc(r.Body)})
		}
		if i%25 == 24 {
			time.Sleep(50 * time.Millisecond) // low rate: a shared machine
		}
	}
	raw := rawCases()
	for _, rc := range raw {
		st, why := rawCheck(rc)
		counts[st]++
		fmt.Fprintf(logf, "%d\traw %s\n", st, rc.name)
		if why != "" {
			findings = append(findings, finding{bcase{name: rc.name, method: "RAW"}, st, why})
		}
	}
	time.Sleep(500 * time.Millisecond)
	after := storeState()
	fmt.Printf("bad inputs: %d HTTP cases + %d raw; statuses %v\n", len(cases), len(raw), counts)
	for _, f := range findings {
		fmt.Printf("FINDING [%s] %s %s %s -> %d: %s\n", f.c.name, f.c.who, f.c.method, f.c.path, f.got, f.why)
	}
	d := diffState(before, after)
	fmt.Printf("store diff after the PUT cases and raw requests: %d\n", len(d))
	for _, l := range d {
		fmt.Println("  ", l)
	}
}

func (w *world) client(who string) *client {
	switch who {
	case "admin":
		return w.admin
	case "admin2":
		return w.admin2
	case "tester":
		return w.tester
	case "xorigin":
		c := *w.admin
		c.origin = false
		return &c
	}
	return w.anon
}

var badIDs = []string{"0", "-1", "%2B1", "01", "%201", "1%20", "1.0", "1e0", "0x1", "abc", "99999999999999999999", "9223372036854775808", "%EF%BC%91", "1;x", "%00", "1%2F", "999999"}

func buildCases(w *world) []bcase {
	var cs []bcase
	add := func(c bcase) { cs = append(cs, c) }
	e := w.ext
	ids := map[string]string{"id": fmt.Sprint(e), "testerId": fmt.Sprint(w.testerID), "keyId": fmt.Sprint(w.keyID),
		"webhookId": fmt.Sprint(w.webhookID), "number": "1", "system": "linux", "token": w.updateToken, "upload": fmt.Sprint(w.uploadID)}
	type route struct {
		method, tmpl string
		body         []byte
	}
	routes := []route{
		{"GET", "/api/extensions/{id}", nil},
		{"GET", "/api/extensions/{id}/testers", nil},
		{"POST", "/api/extensions/{id}/testers", []byte(`{"email":"zz-never@example.com"}`)},
		{"DELETE", "/api/extensions/{id}/testers/{testerId}", nil},
		{"POST", "/api/extensions/{id}/testers/{testerId}/restore", []byte(`{}`)},
		{"POST", "/api/extensions/{id}/testers/{testerId}/invite", []byte(`{}`)},
		{"GET", "/api/extensions/{id}/keys", nil},
		{"POST", "/api/extensions/{id}/keys", []byte(`{"label":"never"}`)},
		{"DELETE", "/api/extensions/{id}/keys/{keyId}", nil},
		{"GET", "/api/extensions/{id}/audit", nil},
		{"GET", "/api/extensions/{id}/adoption", nil},
		{"GET", "/api/extensions/{id}/webhooks", nil},
		{"POST", "/api/extensions/{id}/webhooks", []byte(`{"url":"http://127.0.0.1:9/never"}`)},
		{"DELETE", "/api/extensions/{id}/webhooks/{webhookId}", nil},
		{"GET", "/api/extensions/{id}/webhooks/{webhookId}/deliveries", nil},
		{"POST", "/api/extensions/{id}/webhooks/{webhookId}/test", nil},
		{"GET", "/api/extensions/{id}/bundles", nil},
		{"GET", "/api/extensions/{id}/bundles/current", nil},
		{"GET", "/api/extensions/{id}/bundles/current/download", nil},
		{"GET", "/api/extensions/{id}/bundles/{number}/download", nil},
		{"GET", "/api/extensions/{id}/bundles/{number}/crx", nil},
		{"GET", "/api/extensions/{id}/updates", nil},
		{"POST", "/api/extensions/{id}/updates/token", nil},
		{"POST", "/api/extensions/{id}/bundles/{number}/rollback", nil},
		{"GET", "/api/extensions/{id}/policy/{system}", nil},
		{"GET", "/api/extensions/{id}/installs", nil},
		{"GET", "/api/extensions/{id}/events", nil},
		{"GET", "/update/{id}/{token}", nil},
		{"GET", "/update/{id}/{token}/crx/{number}", nil},
		{"PUT", "/uploads/{upload}", nil},
	}
	// 1. every id in every path, spelled wrong (admin's session).
	for _, rt := range routes {
		for _, p := range []string{"id", "testerId", "keyId", "webhookId", "number", "upload"} {
			if !strings.Contains(rt.tmpl, "{"+p+"}") {
				continue
			}
			for _, bad := range badIDs {
				path := rt.tmpl
				for k, v := range ids {
					if k == p {
						v = bad
					}
					path = strings.ReplaceAll(path, "{"+k+"}", v)
				}
				if rt.method == "PUT" {
					path += "?" + w.uploadQuery
				}
				h := map[string]string{}
				if rt.method == "PUT" {
					h["Content-Type"] = "application/zip"
				}
				c := bcase{name: "id " + p + "=" + bad, who: "admin", method: rt.method, path: path, body: rt.body, hdr: h}
				add(c)
			}
		}
	}
	// 2. no session, a tester's session, another team's admin, a cross-site
	// browser, on every admin route; and an unsupported method.
	for _, rt := range routes {
		if strings.HasPrefix(rt.tmpl, "/update/") || strings.HasPrefix(rt.tmpl, "/uploads/") {
			continue
		}
		path := rt.tmpl
		for k, v := range ids {
			path = strings.ReplaceAll(path, "{"+k+"}", v)
		}
		add(bcase{name: "no session", who: "anon", method: rt.method, path: path, body: rt.body, want: 401})
		add(bcase{name: "other team", who: "admin2", method: rt.method, path: path, body: rt.body})
		testerMay := rt.method == "GET" && (strings.Contains(path, "/bundles") || strings.HasSuffix(path, fmt.Sprint(e)) || strings.Contains(path, "/policy/") || strings.HasSuffix(path, "/installs"))
		add(bcase{name: "tester", who: "tester", method: rt.method, path: path, body: rt.body, mayOK: testerMay})
		if rt.method != "GET" {
			add(bcase{name: "cross-site", who: "xorigin", method: rt.method, path: path, body: rt.body,
				hdr: map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, want: 403})
		}
		add(bcase{name: "method PATCH", who: "admin", method: "PATCH", path: path, want: 405})
	}
	// 3. query parameters.
	lists := []string{"/api/extensions/%d/testers", "/api/extensions/%d/keys", "/api/extensions/%d/audit", "/api/extensions/%d/adoption",
		"/api/extensions/%d/webhooks", "/api/extensions/%d/webhooks/" + ids["webhookId"] + "/deliveries", "/api/extensions/%d/bundles", "/api/builds"}
	badLimits := []string{"0", "-1", "101", "05", "abc", "1.5", "1e1", "99999999999999999999", "%2B5", "%205", "1&limit=2", "501"}
	for _, l := range lists {
		p := l
		if strings.Contains(l, "%d") {
			p = fmt.Sprintf(l, e)
		}
		who := "admin"
		if l == "/api/builds" {
			who = "tester"
		}
		for _, lim := range badLimits {
			if lim == "101" && strings.Contains(p, "adoption") {
				continue // adoption takes up to 500
			}
			add(bcase{name: "limit=" + lim, who: who, method: "GET", path: p + "?limit=" + lim, want: 400})
		}
		if !strings.Contains(p, "/bundles") {
			for _, cur := range []string{"garbage", "%00", strings.Repeat("A", 5000), "255s.0WykKKYlfT89TfR-x", "255s.0WykKKYlfT89TfR", "..", "%FF%FE"} {
				add(bcase{name: "cursor", who: who, method: "GET", path: p + "?cursor=" + cur, want: 400})
			}
		} else {
			for _, pg := range []string{"-1", "01", "abc", "1.5", "99999999999999999999", "%2B1", "1e3"} {
				add(bcase{name: "page=" + pg, who: who, method: "GET", path: p + "?page=" + pg, want: 400})
			}
		}
	}
	tp := fmt.Sprintf("/api/extensions/%d/testers", e)
	add(bcase{name: "q too long", who: "admin", method: "GET", path: tp + "?q=" + strings.Repeat("a", 201), want: 400})
	add(bcase{name: "q bad utf8", who: "admin", method: "GET", path: tp + "?q=%FF%FE", want: 400})
	add(bcase{name: "q NUL", who: "admin", method: "GET", path: tp + "?q=a%00b", mayOK: true})
	for _, s := range []string{"bogus", "ACTIVE", "active,revoked", "%00"} {
		add(bcase{name: "status=" + s, who: "admin", method: "GET", path: tp + "?status=" + s, want: 400})
	}
	ap := fmt.Sprintf("/api/extensions/%d/adoption", e)
	for _, d := range []string{"0", "91", "abc", "07", "-1", "1.5"} {
		add(bcase{name: "days=" + d, who: "admin", method: "GET", path: ap + "?days=" + d, want: 400})
	}
	for _, c := range []string{"bogus", "Testers", ""} {
		add(bcase{name: "count=" + c, who: "admin", method: "GET", path: ap + "?count=" + c, want: 400, mayOK: c == ""})
	}
	for _, s := range []string{"bsd", "LINUX", "", "linux.json", "..%2Flinux"} {
		add(bcase{name: "policy " + s, who: "admin", method: "GET", path: fmt.Sprintf("/api/extensions/%d/policy/%s", e, s)})
	}
	// update checks with bad x and tokens.
	for _, x := range []string{"%ZZ", "id%3D" + strings.Repeat("a", 5000), "%00", "id%3Dabc%26v%3D1.2.3.4.5.6", "v%3D%FF"} {
		add(bcase{name: "update x", who: "anon", method: "GET", path: fmt.Sprintf("/update/%d/%s?x=%s", e, w.updateToken, x), mayOK: true})
	}
	for _, tok := range []string{"short", strings.Repeat("a", 5000), "%00", "..", w.updateToken + "x"} {
		add(bcase{name: "update token", who: "anon", method: "GET", path: fmt.Sprintf("/update/%d/%s", e, tok), want: 404})
		add(bcase{name: "update crx token", who: "anon", method: "GET", path: fmt.Sprintf("/update/%d/%s/crx/1", e, tok), want: 404})
	}
	for _, tok := range []string{"short", strings.Repeat("a", 5000), "%00", "%FF"} {
		add(bcase{name: "invite token", who: "anon", method: "GET", path: "/t/" + tok, mayOK: true})
	}
	// ranges.
	dl := fmt.Sprintf("/api/extensions/%d/bundles/current/download", e)
	for _, rg := range []string{"bytes=999999999-", "bytes=5-2", "bytes=abc", "bytes=" + strings.Repeat("0-0,", 500) + "0-0", "bytes=-0", "items=0-1"} {
		add(bcase{name: "range " + rg[:min(len(rg), 20)], who: "admin", method: "GET", path: dl, hdr: map[string]string{"Range": rg}, mayOK: true})
	}
	// 4. JSON bodies.
	type bodyRoute struct {
		path   string
		who    string
		good   map[string]any
		fields []string
	}
	brs := []bodyRoute{
		{"/api/session", "anon", map[string]any{"email": "admin@acme.test", "password": "wrong-but-long-enough"}, []string{"email", "password"}},
		{tp, "admin", map[string]any{"email": "new-bad@example.com", "name": "N"}, []string{"email", "name"}},
		{fmt.Sprintf("/api/extensions/%d/keys", e), "admin", map[string]any{"label": "L"}, []string{"label"}},
		{fmt.Sprintf("/api/extensions/%d/webhooks", e), "admin", map[string]any{"url": "http://127.0.0.1:9/h"}, []string{"url"}},
		{fmt.Sprintf("/api/extensions/%d/testers/%d/invite", e, w.testerID), "admin", map[string]any{}, nil},
		{fmt.Sprintf("/api/extensions/%d/testers/%d/restore", e, w.testerID), "admin", map[string]any{}, nil},
		{"/api/submit/upload", "anon", map[string]any{"extensionId": w.key["extensionId"], "apiKey": w.key["apiKey"]}, []string{"extensionId", "apiKey", "releaseNotes"}},
		{"/api/submit/sign", "anon", map[string]any{"extensionId": w.key["extensionId"], "apiKey": w.key["apiKey"]}, []string{"extensionId", "apiKey"}},
		{"/api/submit/upload", "admin", map[string]any{"extensionId": w.key["extensionId"]}, []string{"extensionId", "releaseNotes"}},
	}
	for _, br := range brs {
		good, _ := json.Marshal(br.good)
		// The invite and restore routes need a tester in the right state;
		// a good body there may still be refused: what we test is the bad.
		bodies := map[string][]byte{
			"empty":         {},
			"null":          []byte("null"),
			"array":         []byte("[]"),
			"string":        []byte(`"x"`),
			"number":        []byte("7"),
			"truncated":     good[:len(good)-1],
			"trailing":      append(append([]byte{}, good...), []byte(" {}")...),
			"trailing junk": append(append([]byte{}, good...), 'x'),
			"unknown field": []byte(strings.TrimSuffix(string(good), "}") + sep(br.good) + `"zzz":1}`),
			"bom":           append([]byte("\xef\xbb\xbf"), good...),
			"deep":          []byte(strings.Repeat("[", 100000) + strings.Repeat("]", 100000)),
			"huge":          []byte(`{"` + "a" + `":"` + strings.Repeat("x", 3<<20) + `"}`),
			"not utf8":      []byte("{\"x\":\"\xff\"}"),
		}
		for name, b := range bodies {
			add(bcase{name: "body " + name, who: br.who, method: "POST", path: br.path, body: b})
		}
		for _, ct := range []string{"\x00DEL", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1", "multipart/form-data"} {
			add(bcase{name: "content-type " + ct, who: br.who, method: "POST", path: br.path, body: good, hdr: map[string]string{"Content-Type": ct}, want: 415})
		}
		for _, f := range br.fields {
			for vname, v := range map[string]string{
				"surrogate": `"a\ud800b"`, "low surrogate": `"\udc00"`, "bad utf8": "\"a\xc3\x28\"", "number": `7`, "object": `{}`, "array": `["a"]`,
				"true": `true`, "huge": `"` + strings.Repeat("x", 20000) + `"`, "NUL": `"a\u0000b"`, "ctrl": `"a\u0007b"`,
			} {
				m := map[string]json.RawMessage{}
				for k, val := range br.good {
					b, _ := json.Marshal(val)
					m[k] = b
				}
				m[f] = json.RawMessage(v)
				var buf bytes.Buffer
				buf.WriteString("{")
				first := true
				for k, val := range m {
					if !first {
						buf.WriteString(",")
					}
					first = false
					fmt.Fprintf(&buf, "%q:%s", k, val)
				}
				buf.WriteString("}")
				c := bcase{name: "field " + f + " " + vname, who: br.who, method: "POST", path: br.path, body: buf.Bytes()}
				// A long name or label may be fine; a huge one is not.
				if vname == "number" && f == "extensionId" {
					c.mayOK = true
				}
				add(c)
			}
			// missing required field
			m := map[string]any{}
			for k, v := range br.good {
				if k != f {
					m[k] = v
				}
			}
			b, _ := json.Marshal(m)
			mc := bcase{name: "missing " + f, who: br.who, method: "POST", path: br.path, body: b}
			if f == "name" || f == "releaseNotes" {
				mc.mayOK = true
			}
			add(mc)
		}
		// duplicate key: refused or at least not a 500
		if len(br.fields) > 0 {
			f := br.fields[0]
			b := []byte(strings.TrimSuffix(string(good), "}") + sep(br.good) + fmt.Sprintf("%q:\"dup\"}", f))
			add(bcase{name: "duplicate " + f, who: br.who, method: "POST", path: br.path, body: b})
		}
	}
	// specific values.
	for _, em := range []string{"", "no-at", "a@", "@b", "a b@example.com", strings.Repeat("a", 300) + "@example.com", "a@example.com\n", "<a@example.com>", "a@[127.0.0.1]"} {
		add(bcase{name: "email " + strings.TrimSpace(em)[:min(len(strings.TrimSpace(em)), 12)], who: "admin", method: "POST", path: tp, body: mustJSON(map[string]any{"email": em})})
	}
	for _, d := range []string{"0", "91", "-1", "1.5", `"7"`, "null", "1e100", "99999999999999999999", "true"} {
		add(bcase{name: "expiresInDays " + d, who: "admin", method: "POST", path: tp, body: []byte(`{"email":"exp-bad@example.com","expiresInDays":` + d + `}`)})
		add(bcase{name: "newlink expiresInDays " + d, who: "admin", method: "POST", path: fmt.Sprintf("/api/extensions/%d/testers/%d/invite", e, w.invitedID), body: []byte(`{"expiresInDays":` + d + `}`)})
	}
	for _, l := range []string{"", " ", strings.Repeat("l", 1000), "a\nb", "\t"} {
		add(bcase{name: "label", who: "admin", method: "POST", path: fmt.Sprintf("/api/extensions/%d/keys", e), body: mustJSON(map[string]any{"label": l})})
	}
	wh := fmt.Sprintf("/api/extensions/%d/webhooks", e)
	for _, u := range []string{"", "ftp://127.0.0.1/x", "http://", "/relative", "http://user:pw@127.0.0.1/", "http://127.0.0.1/" + strings.Repeat("a", 2100), "javascript:alert(1)",
		"http://[::1", "http://127.0.0.1:99999/", "http://exa mple.com/", "file:///etc/passwd", "http://127.0.0.1/#frag\x00"} {
		add(bcase{name: "webhook url " + u[:min(len(u), 25)], who: "admin", method: "POST", path: wh, body: mustJSON(map[string]any{"url": u})})
	}
	for _, id := range []string{"01", "+1", "0", "-1", " 1", "1 ", "1.0", "", "abc", "99999999999999999999", "１"} {
		add(bcase{name: "extensionId " + id, who: "anon", method: "POST", path: "/api/submit/upload", body: mustJSON(map[string]any{"extensionId": id, "apiKey": w.key["apiKey"]})})
	}
	for _, n := range []string{"0", "-1", "1.5", "1e0", "99999999999999999999", "null"} {
		add(bcase{name: "extensionId num " + n, who: "anon", method: "POST", path: "/api/submit/sign", body: []byte(`{"extensionId":` + n + `,"apiKey":"` + w.key["apiKey"] + `"}`)})
	}
	for _, notes := range []string{strings.Repeat("n", 10241), "a\x01b", "a\rb", "\u2028\x1b[31m"} {
		add(bcase{name: "release notes", who: "anon", method: "POST", path: "/api/submit/upload", body: mustJSON(map[string]any{"extensionId": w.key["extensionId"], "apiKey": w.key["apiKey"], "releaseNotes": notes}), want: 400})
	}
	add(bcase{name: "wrong key", who: "anon", method: "POST", path: "/api/submit/upload", body: mustJSON(map[string]any{"extensionId": w.key["extensionId"], "apiKey": "nope"}), want: 401})
	add(bcase{name: "starter plan key", who: "anon", method: "POST", path: "/api/submit/upload", body: mustJSON(w.starterKey), want: 403})
	add(bcase{name: "key for another ext", who: "anon", method: "POST", path: "/api/submit/upload", body: mustJSON(map[string]any{"extensionId": fmt.Sprint(w.extOther), "apiKey": w.key["apiKey"]}), want: 401})
	add(bcase{name: "session submit other team", who: "admin2", method: "POST", path: "/api/submit/upload", body: mustJSON(map[string]any{"extensionId": w.key["extensionId"]})})
	add(bcase{name: "session submit tester", who: "tester", method: "POST", path: "/api/submit/upload", body: mustJSON(map[string]any{"extensionId": w.key["extensionId"]})})
	// 5. the upload PUT.
	up := "/uploads/" + ids["upload"]
	q, _ := url.ParseQuery(w.uploadQuery)
	tamper := func(k, v string) string {
		q2 := url.Values{}
		for kk, vv := range q {
			q2[kk] = vv
		}
		if v == "" {
			q2.Del(k)
		} else {
			q2.Set(k, v)
		}
		return q2.Encode()
	}
	zipCT := map[string]string{"Content-Type": "application/zip"}
	for k := range q {
		add(bcase{name: "put no " + k, who: "anon", method: "PUT", path: up + "?" + tamper(k, ""), hdr: zipCT, body: validZip("9.9.9")})
		add(bcase{name: "put bad " + k, who: "anon", method: "PUT", path: up + "?" + tamper(k, "AAAA"), hdr: zipCT, body: validZip("9.9.9")})
	}
	add(bcase{name: "put other upload id", who: "anon", method: "PUT", path: fmt.Sprintf("/uploads/%d?%s", w.uploadID-1, w.uploadQuery), hdr: zipCT, body: validZip("9.9.9")})
	for _, ct := range []string{"\x00DEL", "application/octet-stream", "application/zip; x=1", "APPLICATION/ZIP", "application/json"} {
		add(bcase{name: "put content-type " + ct, who: "anon", method: "PUT", path: up + "?" + w.uploadQuery, hdr: map[string]string{"Content-Type": ct}, body: validZip("9.9.9"), mayOK: ct == "APPLICATION/ZIP" || ct == "application/zip; x=1"})
	}
	for _, m := range []string{"POST", "GET", "DELETE"} {
		add(bcase{name: "put method " + m, who: "anon", method: m, path: up + "?" + w.uploadQuery, hdr: zipCT, body: validZip("9.9.9")})
	}
	add(bcase{name: "put too large", who: "anon", method: "PUT", path: up + "?" + w.uploadQuery, hdr: map[string]string{"Content-Type": "application/zip", "Content-Length": "999999999999"}, body: []byte("x")})
	// 6. sign-in bodies and pages.
	add(bcase{name: "sign-in unknown user", who: "anon", method: "POST", path: "/api/session", body: mustJSON(map[string]any{"email": "nobody@example.com", "password": "x"}), want: 401})
	add(bcase{name: "unknown api", who: "anon", method: "GET", path: "/api/nope", want: 404})
	add(bcase{name: "dot segment", who: "admin", method: "GET", path: "/api/extensions/./1", want: 404})
	add(bcase{name: "empty segment", who: "admin", method: "GET", path: "/api/extensions//1", want: 404})
	add(bcase{name: "encoded slash", who: "admin", method: "GET", path: "/api/extensions/1%2Fbundles", want: 404})
	add(bcase{name: "trailing slash", who: "admin", method: "GET", path: "/api/extensions/1/", want: 404})
	add(bcase{name: "DELETE healthz", who: "anon", method: "DELETE", path: "/healthz", want: 405})
	for _, p := range []string{"/api/extensions", "/api/submit/upload", "/api/session", "/api/extensions/1/bundles", "/uploads/1"} {
		add(bcase{name: "OPTIONS", who: "anon", method: "OPTIONS", path: p, mayOK: true})
		add(bcase{name: "TRACE", who: "anon", method: "TRACE", path: p, want: 405})
	}
	add(bcase{name: "HEAD no session", who: "anon", method: "HEAD", path: "/api/extensions/1/bundles", mayOK: false})
	add(bcase{name: "If-None-Match junk", who: "admin", method: "GET", path: "/api/extensions/1/bundles", hdr: map[string]string{"If-None-Match": strings.Repeat("\"x\",", 2000)}, mayOK: true})
	return cs
}

func sep(m map[string]any) string {
	if len(m) == 0 {
		return ""
	}
	return ","
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// ---- requests net/http refuses before a handler ----

type rawCase struct {
	name string
	req  string
	want int
}

func rawCases() []rawCase {
	host := strings.TrimPrefix(base, "http://")
	h := "Host: " + host + "\r\n"
	return []rawCase{
		{"2 MB header", "GET /healthz HTTP/1.1\r\n" + h + "X-Big: " + strings.Repeat("a", 2<<20) + "\r\n\r\n", 431},
		{"ctrl in cookie", "GET /api/session HTTP/1.1\r\n" + h + "Cookie: betaport_session=a\x01b\r\n\r\n", 400},
		{"no host", "GET /healthz HTTP/1.1\r\n\r\n", 400},
		{"bad host", "GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n", 400},
		{"two hosts", "GET /healthz HTTP/1.1\r\n" + h + h + "\r\n", 400},
		{"unknown TE", "POST /api/session HTTP/1.1\r\n" + h + "Transfer-Encoding: gzip\r\n\r\n", 501},
		{"HTTP/2.0 line", "GET /healthz HTTP/2.0\r\n" + h + "\r\n", 505},
		{"HTTP/3", "GET /healthz HTTP/3.0\r\n" + h + "\r\n", 505},
		{"Expect foo", "POST /api/session HTTP/1.1\r\n" + h + "Expect: foo\r\nContent-Length: 2\r\n\r\n{}", 417},
		{"bad request line", "GARBAGE\r\n\r\n", 400},
		{"header no colon", "GET /healthz HTTP/1.1\r\n" + h + "NoColon\r\n\r\n", 400},
		{"space before colon", "GET /healthz HTTP/1.1\r\n" + h + "X-A : b\r\n\r\n", 400},
		{"obs-fold", "GET /healthz HTTP/1.1\r\n" + h + "X-A: b\r\n c\r\n\r\n", 0},
		{"CL and TE", "POST /api/session HTTP/1.1\r\n" + h + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 0},
		{"two CLs", "POST /api/session HTTP/1.1\r\n" + h + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400},
		{"negative CL", "POST /api/session HTTP/1.1\r\n" + h + "Content-Length: -1\r\n\r\n", 400},
		{"bad CL", "POST /api/session HTTP/1.1\r\n" + h + "Content-Length: 1x\r\n\r\n", 400},
		{"bad chunk", "POST /api/session HTTP/1.1\r\n" + h + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
		{"ctrl in header", "GET /healthz HTTP/1.1\r\n" + h + "X-A: a\x7fb\r\n\r\n", 400},
		{"NUL in path", "GET /api/\x00 HTTP/1.1\r\n" + h + "\r\n", 400},
		{"absolute URI other host", "GET http://evil.example/healthz HTTP/1.1\r\n" + h + "\r\n", 0},
		{"CONNECT", "CONNECT 127.0.0.1:22 HTTP/1.1\r\n" + h + "\r\n", 0},
		{"OPTIONS *", "OPTIONS * HTTP/1.1\r\n" + h + "\r\n", 0},
		{"HTTP/0.9", "GET /healthz\r\n\r\n", 0},
		{"TLS hello", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 400},
		{"huge URL", "GET /api/extensions?" + strings.Repeat("a", 2<<20) + " HTTP/1.1\r\n" + h + "\r\n", 431},
	}
}

func rawCheck(rc rawCase) (int, string) {
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), 5*time.Second)
	if err != nil {
		return -1, err.Error()
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(15 * time.Second))
	go conn.Write([]byte(rc.req))
	br := bufio.NewReader(conn)
	hr, err := http.ReadResponse(br, nil)
	if err != nil {
		return -1, "no answer read: " + err.Error()
	}
	var body bytes.Buffer
	body.ReadFrom(hr.Body)
	r := &resp{Status: hr.StatusCode, Header: hr.Header, Body: body.Bytes()}
	var why []string
	if hr.StatusCode >= 400 {
		if pe := problemErr(r); pe != "" {
			why = append(why, pe)
		}
	}
	if hr.StatusCode == 500 {
		why = append(why, "500")
	}
	if rc.want != 0 && hr.StatusCode != rc.want {
		why = append(why, fmt.Sprintf("want %d", rc.want))
	}
	if len(why) == 0 {
		return hr.StatusCode, ""
	}
	return hr.StatusCode, strings.Join(why, "; ") + " | " + trunc(body.Bytes())
}

// fixPut points a PUT case at the fresh upload (its own id, or one before).
func fixPut(path string, w *world) string {
	i := strings.Index(path, "?")
	if i < 0 {
		return path
	}
	p, q := path[:i], path[i+1:]
	if p == fmt.Sprintf("/uploads/%d", w.uploadID) {
		p = w.putPath
	} else if p == fmt.Sprintf("/uploads/%d", w.uploadID-1) {
		var n int
		fmt.Sscan(strings.TrimPrefix(w.putPath, "/uploads/"), &n)
		p = fmt.Sprintf("/uploads/%d", n-1)
	}
	oq, _ := url.ParseQuery(w.oldQuery)
	nq, _ := url.ParseQuery(w.uploadQuery)
	qq, _ := url.ParseQuery(q)
	for k := range qq {
		if qq.Get(k) == oq.Get(k) {
			qq.Set(k, nq.Get(k))
		}
	}
	return p + "?" + qq.Encode()
}
