package scaleout_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// TestTesterUpdatesAcrossReplicas: a tester's own CRX is the same bytes
// (and ETag) from either replica, sent by the replica itself on S3; their
// update URL works on both; checks made on A and on B both reach the
// testers list read on either; a revoke made on A is answered on B at the
// next check.
func TestTesterUpdatesAcrossReplicas(t *testing.T) {
	d := newDeployment(t)
	// One public URL, as behind a load balancer (here A's address): every
	// replica packs the same update URL into a tester's CRX.
	a := d.replica(t)
	d.baseURL = a.URL()
	b := d.replica(t)
	f := d.fixture(t)
	put(t, requestURL(t, a, f.key).URL, validZip(t, "1.0.0"))
	if status, _, body := sign(t, a, f.key); status != 200 {
		t.Fatalf("sign = %d %s", status, body)
	}
	admin := f.signIn(t, a)
	resp, body := call(t, "POST", a.URL()+api.TestersPath(f.ext.ID), admin, api.Invite{Email: "lin@example.com", Name: "Lin"})
	var lin api.Invited
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(body, &lin) != nil {
		t.Fatalf("invite = %d %s", resp.StatusCode, body)
	}
	jar, _ := cookiejar.New(nil)
	tester := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	inviteURL := lin.InviteURL
	resp, err := tester.Get(inviteURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The link signed Lin in on A; the session is valid on B too.
	crxOf := func(m string) ([]byte, string) {
		t.Helper()
		u, _ := url.Parse(m + api.BundleCRXPath(f.ext.ID, 1))
		for _, c := range jar.Cookies(mustURL(t, inviteURL)) {
			jar.SetCookies(u, []*http.Cookie{c})
		}
		resp, err := tester.Get(u.String())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("Lin's CRX from %s = %d %s", m, resp.StatusCode, b)
		}
		return b, resp.Header.Get("ETag")
	}
	fromA, tagA := crxOf(a.URL())
	fromB, tagB := crxOf(b.URL())
	if !bytes.Equal(fromA, fromB) || tagA != tagB || tagA == "" {
		t.Fatalf("Lin's CRX differs between the replicas (ETags %s, %s)", tagA, tagB)
	}
	m := regexp.MustCompile(`"update_url": "([^"]+)"`).FindSubmatch(manifestOf(t, fromA))
	if m == nil {
		t.Fatalf("no update_url in Lin's CRX: %s", manifestOf(t, fromA))
	}
	own := string(m[1])
	token := own[strings.LastIndex(own, "/")+1:]
	feed := func(replica, version string) string {
		t.Helper()
		q := url.QueryEscape("id=" + f.ext.ChromeID + "&v=" + version + "&uc")
		resp, body := call(t, "GET", replica+api.UpdatePrefix+fmt.Sprint(f.ext.ID)+"/"+token+"?x="+q, nil, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("Lin's update check on %s = %d %s", replica, resp.StatusCode, body)
		}
		return string(body)
	}
	ext := readExtension(t, a, admin, f.ext.ID)
	f.ext.ChromeID = ext.ChromeID
	feed(a.URL(), "0.9.0")
	feed(b.URL(), "1.0.0")
	// Read on A, the list has B's later check (B wrote it: every read
	// writes its own replica's checks first; B's is written by B's read).
	call(t, "GET", b.URL()+api.TestersPath(f.ext.ID), f.signIn(t, b), nil)
	resp, body = call(t, "GET", a.URL()+api.TestersPath(f.ext.ID), admin, nil)
	var page struct{ Data []betaport.Tester }
	json.Unmarshal(body, &page)
	if len(page.Data) != 1 || page.Data[0].InstalledVersion != "1.0.0" || page.Data[0].LastCheckAt == nil {
		t.Fatalf("the testers list on A after checks on A and B: %s", body)
	}

	// Revoked on A, a newer build is not offered on B.
	put(t, requestURL(t, b, f.key).URL, validZip(t, "1.1.0"))
	if status, _, body := sign(t, b, f.key); status != 200 {
		t.Fatalf("sign = %d %s", status, body)
	}
	if got := feed(b.URL(), "1.0.0"); !strings.Contains(got, "status='ok' codebase=") {
		t.Fatalf("before the revoke B answers %s", got)
	}
	resp, body = call(t, "DELETE", a.URL()+api.TestersPath(f.ext.ID)+"/"+fmt.Sprint(lin.ID), admin, nil)
	if resp.StatusCode >= 300 {
		t.Fatalf("revoke on A = %d %s", resp.StatusCode, body)
	}
	if got := feed(b.URL(), "1.0.0"); !strings.Contains(got, "noupdate") {
		t.Fatalf("after the revoke on A, B answers %s", got)
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// manifestOf is the manifest.json inside a CRX.
func manifestOf(t *testing.T, crx []byte) []byte {
	t.Helper()
	i := bytes.Index(crx, []byte("PK\x03\x04"))
	if i < 0 {
		t.Fatal("no zip in the CRX")
	}
	zr, err := zip.NewReader(bytes.NewReader(crx[i:]), int64(len(crx)-i))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := zr.Open("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return b
}

func readExtension(t *testing.T, m interface{ URL() string }, admin http.Header, id int64) betaport.Extension {
	t.Helper()
	resp, body := call(t, "GET", m.URL()+api.ExtensionPath(id), admin, nil)
	var e betaport.Extension
	if resp.StatusCode != 200 || json.Unmarshal(body, &e) != nil || e.ChromeID == "" {
		t.Fatalf("extension %d = %d %s", id, resp.StatusCode, body)
	}
	return e
}
