package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

var betaportBin = env("PROBE_BIN", "/tmp/probe-betaport")

type server struct {
	dir, addr, metrics string
	cmd                *exec.Cmd
	log                *os.File
}

func (s *server) start() {
	s.log, _ = os.OpenFile(filepath.Join(filepath.Dir(s.dir), filepath.Base(s.dir)+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	s.cmd = exec.Command(betaportBin, "serve", "--data", s.dir, "--addr", s.addr, "--metrics-addr", s.metrics, "--webhooks-allow-private", "--webhook-retry-min", "2s")
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		fatalf("start: %v", err)
	}
	os.WriteFile(pidFile, []byte(strconv.Itoa(s.cmd.Process.Pid)), 0o644)
	for i := 0; i < 300; i++ {
		r, err := http.Get("http://" + s.addr + "/readyz")
		if err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	fatalf("server did not get ready")
}

func (s *server) kill9() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
	s.log.Close()
}

func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		s.kill9()
	}
}

func sqlRows(dir, q string) []string {
	out, err := exec.Command("sqlite3", "-readonly", filepath.Join(dir, "betaport.db"), q).Output()
	if err != nil {
		return []string{"ERR " + err.Error()}
	}
	s := strings.TrimSpace(string(out))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// consistency checks what a crash may have left, from outside.
func consistency(dir string, admin *client, ext int) []string {
	var bad []string
	// bundles: numbers 1..N without holes, each with its blobs
	rows := sqlRows(dir, fmt.Sprintf("select number, blob_key, crx_key, sha256, size, coalesce(upload_id,0) from bundles where extension_id=%d order by number", ext))
	up := map[string]int{}
	for i, r := range rows {
		f := strings.Split(r, "|")
		if n, _ := strconv.Atoi(f[0]); n != i+1 {
			bad = append(bad, fmt.Sprintf("bundle numbers have a hole at %d (%s)", i+1, f[0]))
			break
		}
		fi, err := os.Stat(filepath.Join(dir, "blobs", f[1]))
		if err != nil {
			bad = append(bad, "bundle "+f[0]+" zip blob missing: "+f[1])
		} else if strconv.FormatInt(fi.Size(), 10) != f[4] {
			bad = append(bad, "bundle "+f[0]+" zip blob size differs")
		}
		if f[2] != "" {
			if _, err := os.Stat(filepath.Join(dir, "blobs", f[2])); err != nil {
				bad = append(bad, "bundle "+f[0]+" crx blob missing: "+f[2])
			}
		}
		if f[5] != "0" {
			up[f[5]]++
			if up[f[5]] > 1 {
				bad = append(bad, "upload "+f[5]+" made two bundles")
			}
		}
	}
	// published uploads have their bundle
	for _, r := range sqlRows(dir, fmt.Sprintf("select id from uploads where extension_id=%d and state='published'", ext)) {
		if up[r] != 1 {
			bad = append(bad, "published upload "+r+" has no bundle")
		}
	}
	// the API agrees, and the last bundles download whole
	r, err := admin.req("GET", fmt.Sprintf("/api/extensions/%d/bundles?limit=3", ext), nil, nil)
	if err != nil || r.Status != 200 {
		bad = append(bad, fmt.Sprintf("bundles list: %v %v", err, r))
		return bad
	}
	var list []struct {
		Number  int
		SHA256  string
		Current bool
	}
	json.Unmarshal(r.Body, &list)
	if len(list) > 0 && len(rows) > 0 && list[0].Number != len(rows) {
		bad = append(bad, fmt.Sprintf("API's newest bundle #%d, store has %d", list[0].Number, len(rows)))
	}
	for _, b := range list {
		d, err := admin.req("GET", fmt.Sprintf("/api/extensions/%d/bundles/%d/download", ext, b.Number), nil, nil)
		if err != nil || d.Status != 200 || sha(d.Body) != b.SHA256 {
			bad = append(bad, fmt.Sprintf("bundle #%d download: %v status %d", b.Number, err, d.Status))
		}
		c, err := admin.req("GET", fmt.Sprintf("/api/extensions/%d/bundles/%d/crx", ext, b.Number), nil, nil)
		if err != nil || c.Status != 200 || len(c.Body) < 100 || string(c.Body[:4]) != "Cr24" {
			st := -1
			if c != nil {
				st = c.Status
			}
			bad = append(bad, fmt.Sprintf("bundle #%d crx: %v status %d", b.Number, err, st))
		}
	}
	cur := currentBundle(admin, ext)
	if len(list) > 0 && cur.Number == 0 {
		bad = append(bad, "no current bundle")
	}
	// testers and their audit lines agree
	nt := sqlRows(dir, fmt.Sprintf("select count(*) from testers where extension_id=%d and email like 'crash-%%'", ext))
	na := sqlRows(dir, fmt.Sprintf("select count(*) from audit_events where extension_id=%d and action='tester.invited' and subject like 'crash-%%'", ext))
	if len(nt) == 1 && len(na) == 1 && nt[0] != na[0] {
		bad = append(bad, fmt.Sprintf("testers %s but invite audit lines %s", nt[0], na[0]))
	}
	// webhook events: one per publish and rollback since the webhook was made
	nev := sqlRows(dir, "select count(*) from webhook_events where type in ('bundle.published','bundle.rolled_back')")
	nb := sqlRows(dir, fmt.Sprintf("select count(*) from bundles where extension_id=%d", ext))
	if len(nev) == 1 && len(nb) == 1 && nev[0] != nb[0] {
		bad = append(bad, fmt.Sprintf("webhook events %s for %s bundles (the webhook predates the first)", nev[0], nb[0]))
	}
	return bad
}

// orphans lists blob files no record names (uploads of live uploads aside).
func orphans(dir string) []string {
	named := map[string]bool{}
	for _, r := range sqlRows(dir, "select blob_key from bundles union select crx_key from bundles") {
		named[r] = true
	}
	var out []string
	root := filepath.Join(dir, "blobs")
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || strings.HasSuffix(p, ".attrs") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if !named[rel] && !strings.HasPrefix(rel, "uploads/") {
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

type crashWorld struct {
	srv   *server
	admin *client
	key   map[string]string
	ext   int
	email string
	pw    string
}

func newCrashWorld(dir string) *crashWorld {
	os.RemoveAll(dir)
	os.MkdirAll(dir, 0o755)
	run := func(args ...string) []byte {
		out, err := exec.Command(betaportBin, append(args, "--data", dir)...).Output()
		if err != nil {
			fatalf("%v: %v", args, err)
		}
		return out
	}
	run("team", "create", "--name", "Crash", "--plan", "professional", "--seats", "1")
	run("extension", "create", "--team", "1", "--name", "Crash Ext")
	cw := &crashWorld{ext: 1, email: "crash@admin.test", pw: "crash-password-123"}
	run("user", "create", "--email", cw.email, "--team", "1", "--password", cw.pw)
	cw.srv = &server{dir: dir, addr: strings.TrimPrefix(base, "http://"), metrics: strings.TrimSuffix(strings.TrimPrefix(metricsURL, "http://"), "/metrics")}
	cw.srv.start()
	cw.admin = signIn(cw.email, cw.pw)
	cw.key = newKey(cw.admin, 1, "crash")
	return cw
}

func (cw *crashWorld) restart() {
	cw.srv.start()
	cw.admin = signIn(cw.email, cw.pw)
}

func crashTrials(n int) {
	dir := "/tmp/probe29/crash"
	cw := newCrashWorld(dir)
	// a receiver for webhooks, on loopback
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	var hookMu sync.Mutex
	hookIDs := map[string]int{}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ev struct{ ID string }
		json.Unmarshal(b, &ev)
		hookMu.Lock()
		hookIDs[ev.ID]++
		hookMu.Unlock()
	}))
	cw.admin.must("POST", "/api/extensions/1/webhooks", map[string]string{"url": "http://" + ln.Addr().String() + "/hook"}, 201)
	res := submit(cw.key, validZip("1.0.0"))
	if res.status() != 200 {
		fatalf("first publish %d %s", res.status(), res.last().Body)
	}
	kinds := []string{"sign", "submit", "invite", "rollback", "key", "backup", "sign", "submit"}
	totalBad := 0
	rng := rand.New(rand.NewSource(29))
	for t := 0; t < n; t++ {
		kind := kinds[t%len(kinds)]
		var note string
		var pendingSign bool
		switch kind {
		case "sign", "submit":
			z := bigZip(fmt.Sprintf("2.%d.0", t), 24, int64(t))
			u := askURL(newClient(), cw.key)
			var putDone chan *resp
			if kind == "sign" {
				if r := putZip(u.URL, z); r.Status != 200 {
					fatalf("put %d", r.Status)
				}
				go newClient().req("POST", "/api/submit/sign", nil, mustJSON(cw.key))
				d := time.Duration(rng.Intn(400)) * time.Millisecond
				time.Sleep(d)
				note = fmt.Sprintf("kill %v into sign", d)
			} else {
				putDone = make(chan *resp, 1)
				go func() { putDone <- putZip(u.URL, z) }()
				d := time.Duration(rng.Intn(300)) * time.Millisecond
				time.Sleep(d)
				note = fmt.Sprintf("kill %v into the PUT", d)
			}
			cw.srv.kill9()
			pendingSign = true
		case "invite":
			var wg sync.WaitGroup
			for i := 0; i < 20; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					cw.admin.req("POST", "/api/extensions/1/testers", nil, mustJSON(map[string]string{"email": fmt.Sprintf("crash-%d-%d@example.com", t, i)}))
				}(i)
			}
			d := time.Duration(rng.Intn(60)) * time.Millisecond
			time.Sleep(d)
			cw.srv.kill9()
			wg.Wait()
			note = fmt.Sprintf("kill %v into 20 invites", d)
		case "rollback":
			go cw.admin.req("POST", "/api/extensions/1/bundles/1/rollback", nil, nil)
			d := time.Duration(rng.Intn(100)) * time.Millisecond
			time.Sleep(d)
			cw.srv.kill9()
			note = fmt.Sprintf("kill %v into a rollback", d)
		case "key":
			for i := 0; i < 5; i++ {
				go cw.admin.req("POST", "/api/extensions/1/keys", nil, mustJSON(map[string]string{"label": fmt.Sprintf("k%d-%d", t, i)}))
			}
			time.Sleep(time.Duration(rng.Intn(30)) * time.Millisecond)
			cw.srv.kill9()
			note = "kill during 5 key creations"
		case "backup":
			out := fmt.Sprintf("/tmp/probe29/crash-%d.backup", t)
			os.Remove(out)
			bk := exec.Command(betaportBin, "backup", "--data", dir, "--out", out)
			bk.Start()
			d := time.Duration(rng.Intn(300)) * time.Millisecond
			time.Sleep(d)
			cw.srv.kill9()
			bk.Process.Signal(syscall.SIGKILL)
			bk.Wait()
			// what the killed backup left
			fi, err := os.Stat(out)
			rdir := fmt.Sprintf("/tmp/probe29/crash-restore-%d", t)
			os.RemoveAll(rdir)
			if err == nil {
				rout, rerr := exec.Command(betaportBin, "restore", "--from", out, "--data", rdir).CombinedOutput()
				note = fmt.Sprintf("kill %v into a backup: the file left is %d bytes; restore: %v %s", d, fi.Size(), rerr, strings.TrimSpace(string(rout))[:min(100, len(strings.TrimSpace(string(rout))))])
				if rerr == nil {
					// a restore that succeeded must be whole
					if bad := sqlRows(rdir, "pragma integrity_check"); len(bad) != 1 || bad[0] != "ok" {
						note += " RESTORED DB NOT OK"
						totalBad++
					}
				}
			} else {
				note = fmt.Sprintf("kill %v into a backup: no file left", d)
			}
			os.RemoveAll(rdir)
			os.Remove(out)
		}
		cw.restart()
		if pendingSign {
			// the pipeline retries its sign: it must publish once
			s1, _ := newClient().req("POST", "/api/submit/sign", nil, mustJSON(cw.key))
			s2, _ := newClient().req("POST", "/api/submit/sign", nil, mustJSON(cw.key))
			var b1, b2 bundleRec
			json.Unmarshal(s1.Body, &b1)
			json.Unmarshal(s2.Body, &b2)
			note += fmt.Sprintf("; retried sign %d #%d %s, again %d #%d", s1.Status, b1.Number, parseProblem(s1).Type, s2.Status, b2.Number)
			if s1.Status >= 500 || s2.Status >= 500 || (s1.Status == 200 && (s2.Status != 200 || b1.Number != b2.Number)) {
				note += " DEFECT"
				totalBad++
			}
			if s1.Status == 409 || s1.Status == 410 {
				// the zip did not arrive whole: submit again from the start
				r := submit(cw.key, bigZip(fmt.Sprintf("2.%d.1", t), 2, int64(t)))
				note += fmt.Sprintf("; a new submit %d", r.status())
			}
		}
		bad := consistency(dir, cw.admin, 1)
		totalBad += len(bad)
		fmt.Printf("crash %2d %-8s %s → %s\n", t, kind, note, map[bool]string{true: "consistent", false: fmt.Sprint("DEFECTS ", bad)}[len(bad) == 0])
	}
	// webhooks: every event delivered (at least once) after the crashes
	time.Sleep(15 * time.Second)
	evs := sqlRows(dir, "select id from webhook_events")
	hookMu.Lock()
	missing := 0
	dups := 0
	for _, id := range evs {
		if hookIDs[id] == 0 {
			missing++
		}
		if hookIDs[id] > 1 {
			dups++
		}
	}
	hookMu.Unlock()
	fmt.Printf("webhooks: %d events, %d not delivered yet, %d delivered more than once\n", len(evs), missing, dups)
	o := orphans(dir)
	fmt.Printf("orphan blobs (no record names them; the sweeper removes them after an hour): %d %v\n", len(o), o[:min(5, len(o))])
	fmt.Printf("crash trials: %d, inconsistencies %d\n", n, totalBad)
	cw.srv.stop()
}
