package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/url"
	"strings"
	"sync"
	"time"
)

func bigZip(version string, mb int, seed int64) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	fw, _ := w.CreateHeader(&zip.FileHeader{Name: "manifest.json", Method: zip.Store})
	fw.Write([]byte(manifest(version, "")))
	r := rand.New(rand.NewSource(seed))
	chunk := make([]byte, 1<<20)
	for i := 0; i < 4; i++ {
		fw, _ := w.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("data/%d.bin", i), Method: zip.Store})
		for j := 0; j < mb/4; j++ {
			r.Read(chunk)
			fw.Write(chunk)
		}
	}
	w.Close()
	return buf.Bytes()
}

func evilZip() []byte {
	return mkzip(file{"manifest.json", manifest("66.6.6", "")}, file{"../../evil.js", "alert('pwned')"})
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// item 1: a PUT during sign is refused, and what is published is what was checked.
func item1(w *world, trials int, mb int) {
	evil := evilZip()
	evilSum := sha(evil)
	delays := []time.Duration{20, 40, 60, 80, 100, 120, 140, 160, 180, 200}
	defects := 0
	counts := map[string]int{}
	for t := 0; t < trials; t++ {
		d := delays[t%len(delays)] * time.Millisecond
		good := bigZip(fmt.Sprintf("7.%d.0", t+1), mb, int64(t))
		goodSum := sha(good)
		u := askURL(w.anon, w.key)
		if r := putZip(u.URL, good); r.Status != 200 {
			fatalf("PUT good = %d %s", r.Status, r.Body)
		}
		var sign *resp
		var wg sync.WaitGroup
		wg.Add(1)
		t0 := time.Now()
		go func() {
			defer wg.Done()
			sign, _ = newClient().req("POST", "/api/submit/sign", nil, mustJSON(w.key))
		}()
		time.Sleep(d)
		put := putZip(u.URL, evil)
		putAt := time.Since(t0)
		wg.Wait()
		signDur := time.Since(t0)
		var b bundleRec
		json.Unmarshal(sign.Body, &b)
		cur := currentBundle(w.admin, w.ext)
		// download what testers get
		dlSum := sha(download(w.admin, fmt.Sprintf("/api/extensions/%d/bundles/current/download", w.ext)))
		verdict := "ok"
		switch {
		case sign.Status == 500 || put.Status == 500:
			verdict = "DEFECT 500"
		case sign.Status == 200 && b.SHA256 != goodSum && b.SHA256 != evilSum:
			verdict = "DEFECT published neither zip"
		case sign.Status == 200 && b.SHA256 == evilSum:
			verdict = "DEFECT published the evil zip"
		case sign.Status == 200 && dlSum != b.SHA256:
			verdict = "DEFECT download differs from the record"
		case sign.Status == 200 && put.Status == 200:
			verdict = "DEFECT PUT accepted while sign published"
		case sign.Status != 200 && sign.Status != 422:
			verdict = fmt.Sprintf("DEFECT sign %d", sign.Status)
		case sign.Status == 200 && put.Status != 409:
			verdict = fmt.Sprintf("note PUT %d (want 409)", put.Status)
		}
		if strings.HasPrefix(verdict, "DEFECT") {
			defects++
		}
		key := fmt.Sprintf("sign %d / PUT %d %s", sign.Status, put.Status, parseProblem(put).Type)
		counts[key]++
		fmt.Printf("trial %2d delay %v: PUT at %v → %d %s; sign %d after %v (published %s… current #%d %s…) download %s… — %s\n",
			t, d, putAt.Round(time.Millisecond), put.Status, parseProblem(put).Type, sign.Status, signDur.Round(time.Millisecond), b.SHA256[:min(8, len(b.SHA256))], cur.Number, cur.SHA256[:min(8, len(cur.SHA256))], dlSum[:8], verdict)
		// a replay after publish is refused too
		if sign.Status == 200 {
			rp := putZip(u.URL, evil)
			if rp.Status != 409 && rp.Status != 410 {
				fmt.Printf("   DEFECT replayed PUT after publish = %d\n", rp.Status)
				defects++
			}
			again, _ := newClient().req("POST", "/api/submit/sign", nil, mustJSON(w.key))
			var b2 bundleRec
			json.Unmarshal(again.Body, &b2)
			if again.Status != 200 || b2.Number != b.Number {
				fmt.Printf("   DEFECT a retried sign = %d #%d (want 200 #%d)\n", again.Status, b2.Number, b.Number)
				defects++
			}
		}
	}
	fmt.Printf("item 1: %d trials, outcomes %v, defects %d\n", trials, counts, defects)
}

// beside item 1: two signs at once publish once; a new URL asked during sign.
func signRaces(w *world, trials int) {
	defects := 0
	for t := 0; t < trials; t++ {
		time.Sleep(1500 * time.Millisecond) // the submit rate limit
		good := bigZip(fmt.Sprintf("8.%d.0", t+1), 8, int64(100+t))
		u := askURL(w.anon, w.key)
		putZip(u.URL, good)
		before := currentBundle(w.admin, w.ext)
		var wg sync.WaitGroup
		res := make([]*resp, 4)
		for i := range res {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				res[i], _ = newClient().req("POST", "/api/submit/sign", nil, mustJSON(w.key))
			}(i)
		}
		// on odd trials, a new upload URL asked in the middle
		nu := &resp{}
		if t%2 == 1 {
			time.Sleep(time.Duration(t%5) * 40 * time.Millisecond)
			nu, _ = newClient().req("POST", "/api/submit/upload", nil, mustJSON(w.key))
		}
		wg.Wait()
		nums := map[int]int{}
		var sts []int
		for _, r := range res {
			var b bundleRec
			json.Unmarshal(r.Body, &b)
			sts = append(sts, r.Status)
			if r.Status == 200 {
				nums[b.Number]++
			}
		}
		after := currentBundle(w.admin, w.ext)
		bad := len(nums) > 1 || after.Number > before.Number+1
		for _, s := range sts {
			if s >= 500 {
				bad = true
			}
		}
		if bad {
			defects++
		}
		fmt.Printf("race %d: 4 signs → %v bundles %v; new URL during sign → %d; current #%d → #%d %v\n", t, sts, nums, nu.Status, before.Number, after.Number, map[bool]string{true: "DEFECT", false: "ok"}[bad])
	}
	fmt.Printf("sign races: %d trials, defects %d\n", trials, defects)
}

// beside item 1: two PUTs racing to one URL, then sign: one whole zip is published.
func putRaces(w *world, trials int) {
	defects := 0
	for t := 0; t < trials; t++ {
		time.Sleep(1500 * time.Millisecond)
		a := bigZip(fmt.Sprintf("9.%d.1", t+1), 8, int64(200+t))
		b := bigZip(fmt.Sprintf("9.%d.2", t+1), 8, int64(300+t))
		u := askURL(w.anon, w.key)
		var wg sync.WaitGroup
		var ra, rb *resp
		wg.Add(2)
		go func() { defer wg.Done(); ra = putZip(u.URL, a) }()
		go func() { defer wg.Done(); rb = putZip(u.URL, b) }()
		wg.Wait()
		s, _ := newClient().req("POST", "/api/submit/sign", nil, mustJSON(w.key))
		var br bundleRec
		json.Unmarshal(s.Body, &br)
		dl := download(w.admin, fmt.Sprintf("/api/extensions/%d/bundles/current/download", w.ext))
		ok := s.Status == 200 && (br.SHA256 == sha(a) || br.SHA256 == sha(b)) && sha(dl) == br.SHA256
		if !ok {
			defects++
		}
		fmt.Printf("put race %d: PUTs %d/%d, sign %d, published %s — %v\n", t, ra.Status, rb.Status, s.Status, map[bool]string{true: "one whole zip", false: "DEFECT"}[ok], trunc(s.Body)[:min(120, len(s.Body))])
	}
	fmt.Printf("put races: %d trials, defects %d\n", trials, defects)
	_ = url.Values{}
}

// download follows a redirect to the storage (S3) once.
func download(c *client, path string) []byte {
	r := c.must("GET", path, nil, 0)
	if r.Status == 302 {
		r = newClient().must("GET", r.Header.Get("Location"), nil, 0)
	}
	if r.Status != 200 {
		fatalf("download %s = %d", path, r.Status)
	}
	return r.Body
}

func init() {
	extra["item1s3"] = func(args []string) {
		pw := demoPasswords()
		w := &world{anon: newClient(), ext: 1}
		for k, v := range pw {
			if strings.Contains(k, "@") {
				w.admin = signIn(k, v)
			}
		}
		w.key = newKey(w.admin, 1, fmt.Sprintf("s3-%d", time.Now().Unix()))
		u := askURL(w.anon, w.key)
		fmt.Printf("upload URL host: %s\n", mustURL(u.URL).Host)
		item1(w, 20, 24)
		putRaces(w, 4)
	}
}
