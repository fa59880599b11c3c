// Command probe is a black-box probe of a running Betaport service: it
// speaks only HTTP to it (and reads its data folder and /proc from the
// outside). It never imports the service's packages.
package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

var (
	base    = env("PROBE_BASE", "http://127.0.0.1:18929")
	dataDir = env("PROBE_DATA", "/tmp/probe29/d1")
)

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// client is one browser or script: its own cookies, no redirects followed.
type client struct {
	hc     *http.Client
	origin bool // send same-origin headers on unsafe methods
}

func newClient() *client {
	jar, _ := cookiejar.New(nil)
	return &client{hc: &http.Client{Jar: jar, Timeout: 60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, origin: true}
}

type resp struct {
	Status int
	Header http.Header
	Body   []byte
	Dur    time.Duration
}

func (c *client) req(method, path string, hdr map[string]string, body []byte) (*resp, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	u := path
	if !strings.HasPrefix(u, "http") {
		u = base + path
	}
	rq, err := http.NewRequest(method, u, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		rq.Header.Set("Content-Type", "application/json")
	}
	if c.origin && method != "GET" && method != "HEAD" {
		rq.Header.Set("Origin", base)
		rq.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	for k, v := range hdr {
		if v == "\x00DEL" {
			rq.Header.Del(k)
			continue
		}
		rq.Header.Set(k, v)
	}
	t0 := time.Now()
	hr, err := c.hc.Do(rq)
	if err != nil {
		return nil, err
	}
	defer hr.Body.Close()
	b, err := io.ReadAll(hr.Body)
	return &resp{Status: hr.StatusCode, Header: hr.Header, Body: b, Dur: time.Since(t0)}, err
}

func (c *client) must(method, path string, body any, want int) *resp {
	var b []byte
	if body != nil {
		switch v := body.(type) {
		case []byte:
			b = v
		case string:
			b = []byte(v)
		default:
			b, _ = json.Marshal(v)
		}
	}
	r, err := c.req(method, path, nil, b)
	if err != nil {
		fatalf("%s %s: %v", method, path, err)
	}
	if want != 0 && r.Status != want {
		fatalf("%s %s = %d, want %d: %s", method, path, r.Status, want, trunc(r.Body))
	}
	return r
}

func trunc(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

func fatalf(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "FATAL "+f+"\n", a...)
	os.Exit(1)
}

type problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Instance string `json:"instance"`
	Problems []struct {
		Code, Path, Message string
	} `json:"problems"`
}

// problemErr says what is wrong with an error answer, or "".
func problemErr(r *resp) string {
	var bad []string
	if r.Status >= 500 && r.Status != 501 && r.Status != 505 && r.Status != 503 {
		bad = append(bad, fmt.Sprintf("status %d", r.Status))
	}
	ct := r.Header.Get("Content-Type")
	if ct != "application/problem+json" {
		bad = append(bad, "Content-Type "+strconv.Quote(ct))
	}
	var p problem
	if err := json.Unmarshal(r.Body, &p); err != nil {
		bad = append(bad, "body not JSON: "+trunc(r.Body))
	} else {
		if p.Status != r.Status {
			bad = append(bad, fmt.Sprintf("problem.status %d != %d", p.Status, r.Status))
		}
		if p.Type == "" || p.Title == "" {
			bad = append(bad, "no type/title")
		}
		if len(p.Detail) < 15 {
			bad = append(bad, "detail too short: "+strconv.Quote(p.Detail))
		}
		if id := r.Header.Get("X-Request-Id"); id == "" || p.Instance != "urn:betaport:request:"+id {
			bad = append(bad, "instance "+strconv.Quote(p.Instance)+" vs X-Request-Id "+strconv.Quote(id))
		}
	}
	return strings.Join(bad, "; ")
}

func parseProblem(r *resp) problem {
	var p problem
	json.Unmarshal(r.Body, &p)
	return p
}

// ---- the store, seen from outside ----

// storeState hashes every table (but sessions and internal ones) with the
// sqlite3 command, and lists the blobs.
func storeState() map[string]string {
	st := map[string]string{}
	db := filepath.Join(dataDir, "betaport.db")
	out, err := exec.Command("sqlite3", "-readonly", db, "select name from sqlite_master where type='table'").Output()
	if err != nil {
		fatalf("sqlite3: %v", err)
	}
	for _, t := range strings.Fields(string(out)) {
		if t == "sessions" || strings.HasPrefix(t, "testers_search") || t == "goose_db_version" || t == "sqlite_sequence" {
			continue
		}
		q := "select * from " + t + " order by rowid"
		if t == "testers" && os.Getenv("PROBE_LIGHT") != "" {
			q = "select count(*), max(id) from testers union all select * from (select * from testers order by id desc limit 500)"
		}
		o, err := exec.Command("sqlite3", "-readonly", db, q).Output()
		if err != nil {
			st["table "+t] = "error " + err.Error()
			continue
		}
		h := sha256.Sum256(o)
		st["table "+t] = fmt.Sprintf("%d lines %s", bytes.Count(o, []byte("\n")), hex.EncodeToString(h[:8]))
	}
	root := filepath.Join(dataDir, "blobs")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		fi, _ := d.Info()
		rel, _ := filepath.Rel(root, p)
		st["blob "+rel] = strconv.FormatInt(fi.Size(), 10)
		return nil
	})
	return st
}

func diffState(a, b map[string]string) []string {
	var d []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			d = append(d, "gone: "+k)
		} else if w != v {
			d = append(d, fmt.Sprintf("changed: %s: %s -> %s", k, v, w))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, "new: "+k)
		}
	}
	sort.Strings(d)
	return d
}

// ---- zips ----

type file struct {
	name string
	body string
}

func mkzip(files ...file) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, f := range files {
		fw, _ := w.Create(f.name)
		io.WriteString(fw, f.body)
	}
	w.Close()
	return buf.Bytes()
}

func manifest(version string, extra string) string {
	return `{"manifest_version":3,"name":"Probe","version":"` + version + `"` + extra + `}`
}

func validZip(version string) []byte {
	return mkzip(file{"manifest.json", manifest(version, "")}, file{"popup.js", "console.log(1)"})
}

// ---- setup shared by the probes ----

type world struct {
	admin, admin2, tester, anon *client
	ext, extStarter, extOther   int
	key, starterKey             map[string]string // service objects
	keyID, webhookID            int
	testerID, invitedID         int
	uploadID                    int
	uploadQuery, updateToken    string
	freshPut                    bool
	putPath, oldQuery           string
}

func signIn(email, password string) *client {
	c := newClient()
	c.must("POST", "/api/session", map[string]string{"email": email, "password": password}, 200)
	return c
}

func demoPasswords() map[string]string {
	b, err := os.ReadFile(filepath.Join(dataDir, "demo-sign-in.txt"))
	if err != nil {
		fatalf("demo sign-ins: %v", err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if i := strings.Index(l, ": "); i > 0 && strings.Contains(l, "@") && strings.Contains(l, " / ") {
			f := strings.Split(strings.TrimSpace(l[i+2:]), " / ")
			m[f[0]] = f[1]
		}
		if i := strings.Index(l, "/t/"); i > 0 {
			m["testerLink"] = strings.TrimSpace(l[i:])
		}
	}
	return m
}

func newKey(admin *client, ext int, label string) map[string]string {
	r := admin.must("POST", fmt.Sprintf("/api/extensions/%d/keys", ext), map[string]string{"label": label}, 201)
	var v struct {
		KeyFile struct {
			Service map[string]string `json:"service"`
		} `json:"keyFile"`
	}
	json.Unmarshal(r.Body, &v)
	return v.KeyFile.Service
}

// inviteAndOpen invites an e-mail and opens its link in a new browser.
func inviteAndOpen(admin *client, ext int, email string) *client {
	r := admin.must("POST", fmt.Sprintf("/api/extensions/%d/testers", ext), map[string]string{"email": email, "name": "P"}, 201)
	var v struct {
		InviteURL string `json:"inviteUrl"`
	}
	json.Unmarshal(r.Body, &v)
	c := newClient()
	u := v.InviteURL
	if i := strings.Index(u, "/t/"); i >= 0 {
		u = u[i:]
	}
	rr := c.must("GET", u, nil, 0)
	if rr.Status/100 != 3 {
		fatalf("open invite %s = %d", u, rr.Status)
	}
	return c
}

type uploadURL struct {
	URL      string `json:"url"`
	UploadID any    `json:"uploadId"`
	MaxSize  int64  `json:"maxSize"`
}

func askURL(c *client, key map[string]string) uploadURL {
	var r *resp
	for i := 0; i < 30; i++ {
		r = c.must("POST", "/api/submit/upload", key, 0)
		if r.Status != 429 {
			break
		}
		waitRetry(r)
	}
	if r.Status != 200 {
		fatalf("call 1 = %d %s", r.Status, r.Body)
	}
	var u uploadURL
	json.Unmarshal(r.Body, &u)
	return u
}

func putZip(u string, z []byte) *resp {
	c := newClient()
	r, err := c.req("PUT", u, map[string]string{"Content-Type": "application/zip"}, z)
	if err != nil {
		return &resp{Status: -1, Body: []byte(err.Error())}
	}
	return r
}

func writeFile(name string, b []byte) error { return os.WriteFile(name, b, 0o644) }
