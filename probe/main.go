package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
)

func setup() *world {
	pw := demoPasswords()
	w := &world{anon: newClient(), ext: 1, extOther: 4}
	w.admin = signIn("admin@acme.test", pw["admin@acme.test"])
	w.admin2 = signIn("admin@hobby.test", pw["admin@hobby.test"])
	w.key = newKey(w.admin, 1, "probe")
	w.starterKey = newKey(w.admin2, 4, "probe-starter")
	// a second key, to aim DELETE at
	r := w.admin.must("POST", "/api/extensions/1/keys", map[string]string{"label": "probe-target"}, 201)
	var k struct {
		Key struct{ ID int } `json:"key"`
	}
	json.Unmarshal(r.Body, &k)
	w.keyID = k.Key.ID
	r = w.admin.must("POST", "/api/extensions/1/webhooks", map[string]string{"url": "http://127.0.0.1:9/probe"}, 201)
	var wh struct {
		Webhook struct{ ID int } `json:"webhook"`
		ID      int              `json:"id"`
	}
	json.Unmarshal(r.Body, &wh)
	w.webhookID = wh.Webhook.ID
	if w.webhookID == 0 {
		w.webhookID = wh.ID
	}
	email := fmt.Sprintf("probe-tester-%d@example.com", os.Getpid())
	w.tester = inviteAndOpen(w.admin, 1, email)
	r = w.admin.must("GET", "/api/extensions/1/testers?q="+url.QueryEscape(email), nil, 200)
	var page struct {
		Data []struct{ ID int } `json:"data"`
	}
	json.Unmarshal(r.Body, &page)
	if len(page.Data) == 1 {
		w.testerID = page.Data[0].ID
	}
	r = w.admin.must("POST", "/api/extensions/1/testers", map[string]string{"email": fmt.Sprintf("probe-invited-%d@example.com", os.Getpid())}, 201)
	var inv struct {
		Tester struct{ ID int } `json:"tester"`
		ID     int              `json:"id"`
	}
	json.Unmarshal(r.Body, &inv)
	w.invitedID = inv.Tester.ID
	if w.invitedID == 0 {
		w.invitedID = inv.ID
	}
	r = w.admin.must("GET", "/api/extensions/1/updates", nil, 200)
	var up struct{ UpdateURL string }
	json.Unmarshal(r.Body, &up)
	w.updateToken = up.UpdateURL[strings.LastIndex(up.UpdateURL, "/")+1:]
	u := askURL(w.anon, w.key)
	pu, _ := url.Parse(u.URL)
	w.uploadQuery = pu.RawQuery
	fmt.Sscan(strings.TrimPrefix(pu.Path, "/uploads/"), &w.uploadID)
	fmt.Printf("setup: key %v keyID %d webhook %d tester %d invited %d upload %d token %s…\n", w.key["extensionId"], w.keyID, w.webhookID, w.testerID, w.invitedID, w.uploadID, w.updateToken[:6])
	if w.testerID == 0 || w.invitedID == 0 || w.webhookID == 0 || w.uploadID == 0 {
		fatalf("setup incomplete: %+v", w)
	}
	return w
}

func main() {
	if len(os.Args) < 2 {
		fatalf("usage: probe badinput|items|...")
	}
	switch os.Args[1] {
	case "badinput":
		badInputs(setup())
	case "items":
		w := setup()
		item8(w.admin, w.ext)
		item11(w)
		item14()
		item5(demoPasswords())
	case "item7":
		pw := demoPasswords()
		var email string
		for k := range pw {
			if strings.Contains(k, "@") {
				email = k
			}
		}
		item7(signIn(email, pw[email]), 1)
	case "item1":
		w := setup()
		if os.Getenv("PROBE_SKIP_ITEM1") == "" {
			item1(w, 20, 40)
		}
		signRaces(w, 10)
		putRaces(w, 6)
	case "crash":
		n := 24
		if len(os.Args) > 2 {
			fmt.Sscan(os.Args[2], &n)
		}
		crashTrials(n)
	case "load":
		loadTest(setup(), 60*time.Second, 12)
	case "stall":
		n, kind := 1500, "json"
		if len(os.Args) > 2 {
			kind = os.Args[2]
		}
		u := ""
		if kind == "zip" {
			w := setup()
			u = askURL(w.anon, w.key).URL
		}
		stalled(n, kind, u)
	case "slowread":
		w := setup()
		c := w.admin.hc.Jar.Cookies(mustURL(base))
		cookie := ""
		for _, k := range c {
			cookie += k.Name + "=" + k.Value + "; "
		}
		path := "/api/extensions/1/bundles/current/download"
		if len(os.Args) > 2 {
			path = os.Args[2]
		}
		n := 1500
		if v := os.Getenv("PROBE_N"); v != "" {
			fmt.Sscan(v, &n)
		}
		slowReaders(n, path, cookie)
	case "events":
		w := setup()
		c := w.admin.hc.Jar.Cookies(mustURL(base))
		cookie := ""
		for _, k := range c {
			cookie += k.Name + "=" + k.Value + "; "
		}
		n := 2000
		events(n, 1, cookie, func() {
			r := submit(w.key, validZip(fmt.Sprintf("5.%d.0", time.Now().Unix()%60000)))
			fmt.Printf("published during the streams: %d\n", r.status())
		})
	case "item9":
		item9()
	case "item13":
		item13()
	case "zips":
		f := ""
		if len(os.Args) > 2 {
			f = os.Args[2]
		}
		runZipCases(setup(), f)
	default:
		if f, ok := extra[os.Args[1]]; ok {
			f(os.Args[2:])
			return
		}
		fatalf("unknown %s", os.Args[1])
	}
}

var extra = map[string]func([]string){}

func mustURL(s string) *url.URL { u, _ := url.Parse(s); return u }
