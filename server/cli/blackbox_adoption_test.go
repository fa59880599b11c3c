package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/server/cli"
)

type bb20Row struct {
	Hour    string `json:"hour"`
	Version string `json:"version"`
	Checks  int64  `json:"checks"`
}

// bb20Updates is the extension's Chrome id and update URL.
func bb20Updates(t *testing.T, e *bb20Env, c *http.Client, ext string) (chromeID, updateURL string) {
	t.Helper()
	resp, b := e.do(t, c, "GET", "/api/extensions/"+ext+"/updates", "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("updates of %s: %d %s", ext, resp.StatusCode, b)
	}
	var up struct {
		ChromeID  string `json:"chromeId"`
		UpdateURL string `json:"updateUrl"`
	}
	json.Unmarshal(b, &up)
	return up.ChromeID, up.UpdateURL
}

// bb20Check is one Chromium update check reporting version v (none when v
// is nil); it returns the status.
func bb20Check(t *testing.T, updateURL, chromeID string, v *string, hdr map[string]string) int {
	t.Helper()
	x := "id=" + chromeID
	if v != nil {
		x += "&v=" + url.QueryEscape(*v)
	}
	x += "&uc"
	resp, _ := bb20Do(t, http.DefaultClient, "GET", updateURL+"?prodversion=131.0&x="+urlQuery(x), nil, hdr)
	return resp.StatusCode
}

func bb20Ptr(s string) *string { return &s }

// bb20Adoption walks every page of the adoption list with limit.
func bb20Adoption(t *testing.T, e *bb20Env, ext string, days, limit int) (rows []bb20Row, pages int) {
	t.Helper()
	cursor := ""
	for {
		path := fmt.Sprintf("/api/extensions/%s/adoption?days=%d&limit=%d", ext, days, limit)
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		resp, b := e.do(t, e.admin, "GET", path, "", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("adoption %s: %d %s", path, resp.StatusCode, b)
		}
		var page struct {
			Data       []bb20Row `json:"data"`
			NextCursor *string   `json:"nextCursor"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatalf("adoption %s: %v", b, err)
		}
		if page.Data == nil {
			t.Fatalf("adoption page without data: %s", b)
		}
		if len(page.Data) > limit {
			t.Fatalf("adoption page of %d rows with limit %d", len(page.Data), limit)
		}
		rows = append(rows, page.Data...)
		pages++
		if page.NextCursor == nil {
			return rows, pages
		}
		if *page.NextCursor == "" {
			t.Fatalf("nextCursor is present and empty: %s", b)
		}
		if pages > 1000 {
			t.Fatalf("adoption paging does not end: %d pages", pages)
		}
		cursor = *page.NextCursor
	}
}

// bb20Totals adds the checks per version over the hours.
func bb20Totals(t *testing.T, rows []bb20Row) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	seen := map[string]bool{}
	now := time.Now().UTC()
	for i, r := range rows {
		h, err := time.Parse(time.RFC3339, r.Hour)
		if err != nil || h.Minute() != 0 || h.Second() != 0 || h.Nanosecond() != 0 || !strings.HasSuffix(r.Hour, "Z") {
			t.Errorf("row %+v: hour is not a whole UTC hour in RFC 3339", r)
		}
		if h.After(now) || h.Before(now.Add(-3*time.Hour)) {
			t.Errorf("row %+v: hour is not the last hours (now %s)", r, now)
		}
		key := r.Hour + " " + r.Version
		if seen[key] {
			t.Errorf("row %+v appears twice", r)
		}
		seen[key] = true
		if i > 0 && rows[i-1].Hour < r.Hour {
			t.Errorf("rows out of order: %+v before %+v; newest hour first", rows[i-1], r)
		}
		if r.Checks <= 0 {
			t.Errorf("row %+v has no checks", r)
		}
		out[r.Version] += r.Checks
	}
	return out
}

// Update checks count per served version; unknown versions are "other",
// checks without v not at all; the list pages by cursor with no duplicate
// and no gap; bad parameters and other people are refused; nothing of the
// checker (user agent, address) is stored.
func TestBB20Adoption(t *testing.T) {
	t.Parallel()
	e := bb20Start(t, func(m *cli.Main) { bb20Set(t, m, "AdoptionFlush", time.Hour) })
	b1 := bb20Publish(t, e, e.keyExt, "1.0.0", "")
	b2 := bb20Publish(t, e, e.keyExt, "1.1.0", "")
	b3 := bb20Publish(t, e, e.keyExt, "1.2.0", "")
	bb20Publish(t, e, e.keyExt2, "5.0.0", "")
	chromeID, updateURL := bb20Updates(t, e, e.admin, e.ext)
	chromeID2, updateURL2 := bb20Updates(t, e, e.admin, e.ext2)

	agent := "bb20-agent-" + bboRandom(t)
	ip := "203.0.113.77"
	hdr := map[string]string{"User-Agent": agent, "X-Forwarded-For": ip, "X-Real-Ip": ip}
	checks := func(n int, v *string) {
		for i := 0; i < n; i++ {
			if s := bb20Check(t, updateURL, chromeID, v, hdr); s != 200 && s != 204 {
				t.Fatalf("update check v=%v = %d", v, s)
			}
		}
	}
	checks(3, &b1.Version)
	checks(2, &b2.Version)
	checks(1, &b3.Version)
	checks(2, bb20Ptr("9.9.9"))
	checks(1, bb20Ptr("<script>alert(1)</script>"))
	checks(1, bb20Ptr(strings.Repeat("7", 3000)))
	for i := 0; i < 30; i++ {
		checks(1, bb20Ptr(fmt.Sprintf("0.0.%d", 1000+i)))
	}
	checks(3, nil)                                      // no v: not counted
	bb20Check(t, updateURL, chromeID, bb20Ptr(""), hdr) // an empty v: not a served version
	// A wrong token is no check of this extension.
	wrong := updateURL[:strings.LastIndex(updateURL, "/")+1] + "not-the-token"
	for i := 0; i < 3; i++ {
		bb20Check(t, wrong, chromeID, &b1.Version, hdr)
	}
	// Another extension's checks stay its own.
	for i := 0; i < 4; i++ {
		bb20Check(t, updateURL2, chromeID2, bb20Ptr("5.0.0"), hdr)
	}

	all, _ := bb20Adoption(t, e, e.ext, 7, 500)
	tot := bb20Totals(t, all)
	t.Logf("adoption rows: %+v", all)
	want := map[string]int64{b1.Version: 3, b2.Version: 2, b3.Version: 1}
	for v, n := range want {
		if tot[v] != n {
			t.Errorf("version %s: %d checks, want %d (all: %v)", v, tot[v], n, tot)
		}
	}
	// 2 + 1 + 1 + 30 never-served versions, and the empty v at most.
	if tot["other"] != 34 && tot["other"] != 35 {
		t.Errorf(`"other": %d checks, want 34 (35 if an empty v counts); all: %v`, tot["other"], tot)
	}
	for v := range tot {
		if v != "other" && want[v] == 0 {
			t.Errorf("a version the extension never served has a row of its own: %.80q", v)
		}
	}
	if len(all) > 2*4 {
		t.Errorf("%d rows for 4 versions in at most two hours: %+v", len(all), all)
	}

	// limit=1 walks every row, one per page, same order, no gap, no dupe.
	one, pages := bb20Adoption(t, e, e.ext, 7, 1)
	if pages != len(all) || len(one) != len(all) {
		t.Errorf("limit=1: %d rows on %d pages; limit=500: %d rows", len(one), pages, len(all))
	}
	for i := range one {
		if i < len(all) && one[i] != all[i] {
			t.Errorf("row %d: %+v by ones, %+v in one page", i, one[i], all[i])
		}
	}
	two, _ := bb20Adoption(t, e, e.ext, 90, 2)
	if len(two) != len(all) {
		t.Errorf("limit=2 days=90: %d rows, want %d", len(two), len(all))
	}
	if rows, _ := bb20Adoption(t, e, e.ext2, 1, 100); len(rows) == 0 || bb20Totals(t, rows)["5.0.0"] != 4 || len(bb20Totals(t, rows)) != 1 {
		t.Errorf("ext2's adoption: %+v, want 4 checks of 5.0.0 only", rows)
	}

	// A rollback serves a new version: counted as itself.
	resp, b := e.rollback(t, e.admin, e.ext, 1, nil)
	if resp.StatusCode == 201 {
		rb := bb20DecodeBundle(t, "rollback", b)
		checks(2, &rb.Version)
		rows, _ := bb20Adoption(t, e, e.ext, 1, 100)
		if got := bb20Totals(t, rows)[rb.Version]; got != 2 {
			t.Errorf("the rollback's version %s: %d checks, want 2", rb.Version, got)
		}
	} else {
		t.Errorf("rollback = %d %s", resp.StatusCode, b)
	}

	// Bad parameters.
	for _, q := range []string{"days=0", "days=91", "days=-1", "days=abc", "days=1.5", "limit=0", "limit=501", "limit=-5", "limit=x",
		"cursor=garbage", "cursor=" + url.QueryEscape(strings.Repeat("A", 3000)), "cursor=%00", "days=99999999999999999999"} {
		resp, b := e.do(t, e.admin, "GET", "/api/extensions/"+e.ext+"/adoption?"+q, "", nil)
		bb20ProblemOf(t, "adoption?"+q, resp, b, []int{400}, "")
	}
	// The edges are fine.
	for _, q := range []string{"days=1", "days=90", "limit=1", "limit=500", ""} {
		if resp, b := e.do(t, e.admin, "GET", "/api/extensions/"+e.ext+"/adoption?"+q, "", nil); resp.StatusCode != 200 {
			t.Errorf("adoption?%s = %d %s", q, resp.StatusCode, b)
		}
	}
	// Other people.
	for _, c := range []struct {
		name     string
		c        *http.Client
		ext      string
		statuses []int
	}{
		{"a tester", e.tester, e.ext, []int{403}},
		{"no session", e.anon, e.ext, []int{401}},
		{"another team's admin", e.bob, e.ext, []int{403, 404}},
		{"a missing extension", e.admin, "999999", []int{403, 404}},
		{"another team's extension", e.admin, e.extB, []int{403, 404}},
	} {
		resp, b := e.do(t, c.c, "GET", "/api/extensions/"+c.ext+"/adoption", "", nil)
		bb20ProblemOf(t, "adoption as "+c.name, resp, b, c.statuses, "")
	}

	// Nothing of the checker is kept: not the user agent, not the address.
	e.m.Close()
	filepath.Walk(e.data, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(path)
		for _, secret := range []string{agent, ip} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds the update checker's %q", path, secret)
			}
		}
		return nil
	})
}

// Counts held in memory are written when the service closes: a restart on
// the same data answers them.
func TestBB20AdoptionSurvivesARestart(t *testing.T) {
	t.Parallel()
	e := bb20Start(t, func(m *cli.Main) { bb20Set(t, m, "AdoptionFlush", time.Hour) })
	b1 := bb20Publish(t, e, e.keyExt, "1.0.0", "")
	chromeID, updateURL := bb20Updates(t, e, e.admin, e.ext)
	for i := 0; i < 5; i++ {
		bb20Check(t, updateURL, chromeID, &b1.Version, nil)
	}
	bb20Check(t, updateURL, chromeID, bb20Ptr("3.3.3"), nil)
	if err := e.m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	m := cli.NewMain()
	m.Config.Addr, m.Config.Data = "127.0.0.1:0", e.data
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	bb20Set(t, m, "AdoptionFlush", time.Hour)
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	e.m, e.base = m, m.URL()
	e.admin = bb20SignIn(t, e.base, e.adaEmail)
	rows, _ := bb20Adoption(t, e, e.ext, 1, 100)
	tot := bb20Totals(t, rows)
	if tot[b1.Version] != 5 || tot["other"] != 1 {
		t.Errorf("after a restart: %v, want 5 of %s and 1 other", tot, b1.Version)
	}
}

// Checks arriving from many clients at once, while flushes run (every
// 20 ms, and on every API read), are each counted exactly once.
func TestBB20AdoptionConcurrentChecks(t *testing.T) {
	t.Parallel()
	e := bb20Start(t, func(m *cli.Main) { bb20Set(t, m, "AdoptionFlush", 20*time.Millisecond) })
	b1 := bb20Publish(t, e, e.keyExt, "1.0.0", "")
	b2 := bb20Publish(t, e, e.keyExt, "1.1.0", "")
	chromeID, updateURL := bb20Updates(t, e, e.admin, e.ext)
	const workers, each = 16, 25
	var wg sync.WaitGroup
	stop := make(chan struct{})
	readerDone := make(chan struct{})
	go func() { // an admin reading the list all along: each read flushes
		defer close(readerDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			req, _ := http.NewRequest("GET", e.base+"/api/extensions/"+e.ext+"/adoption?days=1", nil)
			if resp, err := e.admin.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			client := &http.Client{}
			for i := 0; i < each; i++ {
				v := b1.Version
				if (w+i)%2 == 1 {
					v = b2.Version
				}
				x := urlQuery("id=" + chromeID + "&v=" + v + "&uc")
				if resp, err := client.Get(updateURL + "?x=" + x); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	<-readerDone
	rows, _ := bb20Adoption(t, e, e.ext, 1, 500)
	tot := bb20Totals(t, rows)
	if tot[b1.Version]+tot[b2.Version] != workers*each || tot[b1.Version] != workers*each/2 || len(tot) != 2 {
		t.Errorf("after %d concurrent checks (half of each version) the counts are %v", workers*each, tot)
	}
}

// A version counts as served only when this extension served it: another
// extension's version is "other" here. An extension without checks answers
// an empty page, not null.
func TestBB20AdoptionVersionsAreTheExtensionsOwn(t *testing.T) {
	t.Parallel()
	e := bb20Start(t, nil)
	b1 := bb20Publish(t, e, e.keyExt, "1.0.0", "")
	b5 := bb20Publish(t, e, e.keyExt2, "5.0.0", "")
	resp, b := e.do(t, e.admin, "GET", "/api/extensions/"+e.ext2+"/adoption", "", nil)
	if resp.StatusCode != 200 || !strings.Contains(strings.ReplaceAll(string(b), " ", ""), `"data":[]`) || strings.Contains(string(b), "nextCursor") {
		t.Errorf("adoption without checks = %d %s, want {\"data\":[]}", resp.StatusCode, b)
	}
	id1, u1 := bb20Updates(t, e, e.admin, e.ext)
	id2, u2 := bb20Updates(t, e, e.admin, e.ext2)
	bb20Check(t, u1, id1, &b5.Version, nil)
	bb20Check(t, u2, id2, &b1.Version, nil)
	bb20Check(t, u2, id2, &b5.Version, nil)
	// The token of one extension with the other's Chrome id.
	bb20Check(t, u1, id2, &b1.Version, nil)
	rows1, _ := bb20Adoption(t, e, e.ext, 1, 100)
	rows2, _ := bb20Adoption(t, e, e.ext2, 1, 100)
	t1, t2 := bb20Totals(t, rows1), bb20Totals(t, rows2)
	if t1["other"] != 1 || t1[b5.Version] != 0 {
		t.Errorf("ext: %v; want ext2's version 5.0.0 counted as other", t1)
	}
	if t1[b1.Version] > 1 {
		t.Errorf("ext: %v", t1)
	}
	if t2["other"] != 1 || t2[b5.Version] != 1 || t2[b1.Version] != 0 {
		t.Errorf("ext2: %v; want one 5.0.0 and ext's 1.0.0 as other", t2)
	}
}

// Paging by ones while new versions are being counted never repeats a row.
func TestBB20AdoptionPagingWhileCounting(t *testing.T) {
	t.Parallel()
	e := bb20Start(t, nil)
	var versions []string
	for i := 0; i < 8; i++ {
		versions = append(versions, bb20Publish(t, e, e.keyExt, fmt.Sprintf("1.%d.0", i), "").Version)
	}
	chromeID, updateURL := bb20Updates(t, e, e.admin, e.ext)
	for _, v := range versions[:4] {
		bb20Check(t, updateURL, chromeID, &v, nil)
	}
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page < 4 { // a new version is counted between pages
			v := versions[4+page]
			bb20Check(t, updateURL, chromeID, &v, nil)
		}
		path := "/api/extensions/" + e.ext + "/adoption?limit=1"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		resp, b := e.do(t, e.admin, "GET", path, "", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("adoption page %d: %d %s", page, resp.StatusCode, b)
		}
		var p struct {
			Data       []bb20Row `json:"data"`
			NextCursor string    `json:"nextCursor"`
		}
		json.Unmarshal(b, &p)
		for _, r := range p.Data {
			k := r.Hour + " " + r.Version
			if seen[k] {
				t.Errorf("row %s on two pages", k)
			}
			seen[k] = true
		}
		if p.NextCursor == "" || page > 50 {
			break
		}
		cursor = p.NextCursor
	}
	if len(seen) < 4 {
		t.Errorf("paging saw %d rows, want at least the 4 counted before it began", len(seen))
	}
	// A 10 MB body on a POST of the rollback is not a 5xx either.
	resp, b := e.do(t, e.admin, "POST", "/api/extensions/"+e.ext+"/bundles/1/rollback", `{"x":"`+strings.Repeat("a", 10<<20)+`"}`, nil)
	if resp.StatusCode >= 500 {
		t.Errorf("rollback with a 10 MB body = %d %.200s", resp.StatusCode, b)
	}
}
