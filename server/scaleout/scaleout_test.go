package scaleout_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/keyring"
	"github.com/betaport/betaport/server/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// deployment is one database and one bucket shared by the replicas.
type deployment struct {
	db, blob, secret string
	keyring          string // the signing keyring every replica shares
	blobEndpoint     string
	// baseURL, when set, is every replica's public URL (a load balancer's,
	// never dialled by the tests); "" leaves each replica its own.
	baseURL string
}

func newDeployment(t *testing.T) *deployment {
	t.Helper()
	d := &deployment{db: testenv.PostgresURL(t), blob: testenv.BucketURL(t), secret: credential.NewToken() + credential.NewToken(), keyring: keyring.Generate()}
	u, _ := url.Parse(d.blob)
	d.blobEndpoint = u.Query().Get("endpoint")
	return d
}

// replica starts one `betaport serve` on a port of its own, as an operator
// would: the same --db, --blob and --secret as every other replica, and a
// data dir of its own that holds nothing shared.
func (d *deployment) replica(t *testing.T) *cli.Main {
	t.Helper()
	m := cli.NewMain()
	m.Config.Addr = "127.0.0.1:0"
	m.Config.Data = t.TempDir()
	m.Config.DB, m.Config.Blob, m.Config.Secret, m.Config.SigningKeyring = d.db, d.blob, d.secret, d.keyring
	m.Config.BaseURL = d.baseURL
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// betaport runs a command of the betaport CLI on the shared storage.
func (d *deployment) betaport(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append(args, "--db", d.db, "--blob", d.blob, "--data", t.TempDir(), "--signing-keyring", d.keyring)
	if code := cli.Run(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("betaport %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String()
}

// fixture is a Professional team with an extension, an admin and a key.
type fixture struct {
	ext      betaport.Extension
	email    string
	password string
	keyFile  string
	key      api.ServiceKey
}

func (d *deployment) fixture(t *testing.T) *fixture {
	t.Helper()
	var team betaport.Team
	json.Unmarshal([]byte(d.betaport(t, "team", "create", "--name", "Acme", "--plan", "professional")), &team)
	f := &fixture{email: "ada@example.com", password: "a long password", keyFile: filepath.Join(t.TempDir(), "key.json")}
	json.Unmarshal([]byte(d.betaport(t, "extension", "create", "--team", strconv.FormatInt(team.ID, 10), "--name", "Tab Tamer")), &f.ext)
	d.betaport(t, "user", "create", "--team", strconv.FormatInt(team.ID, 10), "--email", f.email, "--password", f.password)
	d.betaport(t, "key", "create", "--label", "CI", "--extension", strconv.FormatInt(f.ext.ID, 10), "--out", f.keyFile)
	var kf api.KeyFile
	b, _ := os.ReadFile(f.keyFile)
	if err := json.Unmarshal(b, &kf); err != nil || f.ext.ID == 0 {
		t.Fatalf("fixture: extension %+v, key file %s (%v)", f.ext, b, err)
	}
	f.key = kf.Service
	return f
}

// call makes one request to a replica; a non-nil body is sent as JSON.
func call(t *testing.T, method, rawURL string, header http.Header, body any) (*http.Response, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, rawURL, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// signIn signs the fixture's admin in on a replica and returns the cookie.
func (f *fixture) signIn(t *testing.T, m *cli.Main) http.Header {
	t.Helper()
	resp, body := call(t, "POST", m.URL()+"/api/session", nil, api.SignIn{Email: f.email, Password: f.password})
	if resp.StatusCode != 200 {
		t.Fatalf("sign-in on %s = %d %s", m.URL(), resp.StatusCode, body)
	}
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie {
			return http.Header{"Cookie": {c.Name + "=" + c.Value}}
		}
	}
	t.Fatal("sign-in set no session cookie")
	return nil
}

func validZip(t testing.TB, version string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("manifest.json")
	fmt.Fprintf(w, `{"manifest_version": 3, "name": "Tab Tamer", "version": %q}`, version)
	w, _ = zw.Create("background.js")
	fmt.Fprintf(w, "console.log(%q)", version)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func requestURL(t *testing.T, m *cli.Main, key api.ServiceKey) api.UploadURL {
	t.Helper()
	resp, body := call(t, "POST", m.URL()+api.PathSubmitUpload, nil, key)
	var u api.UploadURL
	if resp.StatusCode != 200 || json.Unmarshal(body, &u) != nil {
		t.Fatalf("call 1 on %s = %d %s", m.URL(), resp.StatusCode, body)
	}
	return u
}

func put(t *testing.T, rawURL string, zipBytes []byte) {
	t.Helper()
	req, _ := http.NewRequest("PUT", rawURL, bytes.NewReader(zipBytes))
	req.Header.Set("Content-Type", api.ZipContentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("PUT to storage = %d %s", resp.StatusCode, b)
	}
}

func sign(t *testing.T, m *cli.Main, key api.ServiceKey) (int, betaport.Bundle, []byte) {
	t.Helper()
	resp, body := call(t, "POST", m.URL()+api.PathSubmitSign, nil, key)
	var b betaport.Bundle
	json.Unmarshal(body, &b)
	return resp.StatusCode, b, body
}

// The submit flow spread over replicas: the URL comes from A, the zip goes
// straight to S3 (never through a replica), B signs, and A lists and serves
// the bundle. Then the betaport submit command does the same against B.
func TestSubmitAcrossReplicas(t *testing.T) {
	d := newDeployment(t)
	a, b := d.replica(t), d.replica(t)
	f := d.fixture(t)
	zipBytes := validZip(t, "1.0.0")
	sum := sha256.Sum256(zipBytes)

	u := requestURL(t, a, f.key)
	if !strings.HasPrefix(u.URL, d.blobEndpoint+"/") || strings.HasPrefix(u.URL, a.URL()) || strings.HasPrefix(u.URL, b.URL()) {
		t.Fatalf("call 1 answered %s, want a URL of the storage (%s)", u.URL, d.blobEndpoint)
	}
	put(t, u.URL, zipBytes)
	status, bundle, body := sign(t, b, f.key)
	if status != 200 || bundle.Number != 1 || bundle.SHA256 != hex.EncodeToString(sum[:]) || bundle.Size != int64(len(zipBytes)) {
		t.Fatalf("sign on B = %d %s", status, body)
	}

	admin := f.signIn(t, a)
	resp, body := call(t, "GET", a.URL()+api.BundlesPath(f.ext.ID), admin, nil)
	var list []betaport.Bundle
	if resp.StatusCode != 200 || json.Unmarshal(body, &list) != nil || len(list) != 1 || list[0].Number != 1 || list[0].SHA256 != bundle.SHA256 {
		t.Fatalf("A's bundle list = %d %s", resp.StatusCode, body)
	}
	// The download, as the upload, goes straight to the storage: A checks
	// access and redirects to a presigned URL, and serves no bytes itself.
	resp, body = call(t, "GET", a.URL()+api.CurrentBundlePath(f.ext.ID)+"/download", admin, nil)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || len(body) != 0 || !strings.HasPrefix(loc, d.blobEndpoint+"/") {
		t.Fatalf("download from A = %d, %d bytes, Location %q; want 302 to the storage (%s)", resp.StatusCode, len(body), loc, d.blobEndpoint)
	}
	resp, body = call(t, "GET", loc, nil, nil)
	if resp.StatusCode != 200 || !bytes.Equal(body, zipBytes) {
		t.Fatalf("download from the storage = %d, %d bytes, want the zip's %d", resp.StatusCode, len(body), len(zipBytes))
	}

	// The pipeline's own command, against B.
	zipPath := filepath.Join(t.TempDir(), "ext.zip")
	os.WriteFile(zipPath, validZip(t, "1.0.1"), 0o644)
	var out, errOut bytes.Buffer
	if code := cli.Run(context.Background(), []string{"submit", "--base-url", b.URL(), "--key", f.keyFile, "--quiet", zipPath}, &out, &errOut); code != 0 {
		t.Fatalf("betaport submit against B: exit %d: %s %s", code, out.String(), errOut.String())
	}
	resp, body = call(t, "GET", a.URL()+api.CurrentBundlePath(f.ext.ID), admin, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"version":"1.0.1"`) {
		t.Fatalf("A's current bundle after betaport submit = %d %s", resp.StatusCode, body)
	}
}

// Sessions live in the database: made on A, they work on B, and signing
// out on B ends them on A. Cursors are signed with the shared secret, so a
// page's cursor from A works on B.
func TestSessionsAcrossReplicas(t *testing.T) {
	d := newDeployment(t)
	a, b := d.replica(t), d.replica(t)
	f := d.fixture(t)
	admin := f.signIn(t, a)
	resp, body := call(t, "GET", b.URL()+"/api/session", admin, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), f.email) {
		t.Fatalf("GET /api/session on B with A's cookie = %d %s", resp.StatusCode, body)
	}

	// A tester invited on A signs in with the link on B and sees their
	// builds on A.
	var invite struct {
		betaport.Tester
		InviteURL string `json:"inviteUrl"`
	}
	for i := range 3 {
		resp, body = call(t, "POST", a.URL()+api.ExtensionPath(f.ext.ID)+"/testers", admin,
			map[string]string{"email": fmt.Sprintf("tester%d@example.com", i), "name": "T"})
		if resp.StatusCode != 201 || json.Unmarshal(body, &invite) != nil || invite.InviteURL == "" {
			t.Fatalf("invite on A = %d %s", resp.StatusCode, body)
		}
	}
	link, _ := url.Parse(invite.InviteURL)
	resp, _ = call(t, "GET", b.URL()+link.Path, nil, nil)
	var tester http.Header
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie {
			tester = http.Header{"Cookie": {c.Name + "=" + c.Value}}
		}
	}
	if tester == nil {
		t.Fatalf("the invite link on B = %d, set no session", resp.StatusCode)
	}
	if resp, body := call(t, "GET", a.URL()+"/api/builds", tester, nil); resp.StatusCode != 200 {
		t.Fatalf("the tester's builds on A = %d %s", resp.StatusCode, body)
	}

	resp, body = call(t, "GET", a.URL()+api.ExtensionPath(f.ext.ID)+"/testers?limit=2", admin, nil)
	var page api.Page[betaport.Tester]
	if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil || page.NextCursor == "" {
		t.Fatalf("testers page on A = %d %s", resp.StatusCode, body)
	}
	resp, body = call(t, "GET", b.URL()+api.ExtensionPath(f.ext.ID)+"/testers?limit=2&cursor="+url.QueryEscape(page.NextCursor), admin, nil)
	if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil || len(page.Data) != 1 {
		t.Fatalf("A's cursor on B = %d %s", resp.StatusCode, body)
	}

	if resp, body := call(t, "DELETE", b.URL()+"/api/session", http.Header{"Cookie": admin["Cookie"], "Origin": {b.URL()}}, nil); resp.StatusCode != 204 {
		t.Fatalf("sign-out on B = %d %s", resp.StatusCode, body)
	}
	if resp, _ := call(t, "GET", a.URL()+"/api/session", admin, nil); resp.StatusCode != 401 {
		t.Fatalf("after sign-out on B, A answers %d, want 401", resp.StatusCode)
	}
}

// Signs racing on A and B publish the upload exactly once: one bundle, one
// stored zip, every sign answered with it.
func TestRacingSignsPublishOnce(t *testing.T) {
	d := newDeployment(t)
	a, b := d.replica(t), d.replica(t)
	f := d.fixture(t)
	for round := range 3 {
		u := requestURL(t, []*cli.Main{a, b}[round%2], f.key)
		put(t, u.URL, validZip(t, fmt.Sprintf("1.0.%d", round)))
		var wg sync.WaitGroup
		answers := make(chan string, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, bundle, body := sign(t, []*cli.Main{a, b}[i%2], f.key)
				if status != 200 {
					t.Errorf("racing sign = %d %s", status, body)
				}
				answers <- fmt.Sprint(bundle.Number, " ", bundle.SHA256)
			}()
		}
		wg.Wait()
		close(answers)
		want := fmt.Sprint(round + 1)
		for got := range answers {
			if !strings.HasPrefix(got, want+" ") {
				t.Fatalf("round %d: a racing sign answered %q, want bundle %s", round, got, want)
			}
		}
	}
	admin := f.signIn(t, b)
	resp, body := call(t, "GET", b.URL()+api.BundlesPath(f.ext.ID), admin, nil)
	var list []betaport.Bundle
	if json.Unmarshal(body, &list); resp.StatusCode != 200 || len(list) != 3 {
		t.Fatalf("after 3 rounds of 8 racing signs: %d %s, want 3 bundles", resp.StatusCode, body)
	}
	var zips []string
	for _, k := range listKeys(t, a, "bundles/") {
		if strings.HasSuffix(k, ".zip") {
			zips = append(zips, k)
		}
	}
	if len(zips) != 3 {
		t.Fatalf("stored bundle zips: %v, want 3", zips)
	}
}

func listKeys(t *testing.T, m *cli.Main, prefix string) []string {
	t.Helper()
	var keys []string
	it := m.Blobs.List(nil)
	for {
		obj, err := it.Next(context.Background())
		if err == io.EOF {
			return keys
		} else if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(obj.Key, prefix) {
			keys = append(keys, obj.Key)
		}
	}
}

// Rate limits are per replica (README, "Scaling out"): each replica counts
// the calls and failed sign-ins it sees, so a client spread over N replicas
// gets at most N times one replica's allowance.
func TestRateLimitsArePerReplica(t *testing.T) {
	d := newDeployment(t)
	a, b := d.replica(t), d.replica(t)
	for _, m := range []*cli.Main{a, b} {
		m.Publish.Config.Burst, m.Publish.Config.Every = 2, time.Hour
	}
	f := d.fixture(t)
	requestURL(t, a, f.key)
	requestURL(t, a, f.key)
	if resp, body := call(t, "POST", a.URL()+api.PathSubmitUpload, nil, f.key); resp.StatusCode != 429 {
		t.Fatalf("third call on A = %d %s, want 429", resp.StatusCode, body)
	}
	requestURL(t, b, f.key)
	requestURL(t, b, f.key)
	if resp, _ := call(t, "POST", b.URL()+api.PathSubmitUpload, nil, f.key); resp.StatusCode != 429 {
		t.Fatalf("third call on B = %d, want 429", resp.StatusCode)
	}

	wrong := api.SignIn{Email: f.email, Password: "wrong password"}
	var last int
	for range 6 {
		resp, _ := call(t, "POST", a.URL()+"/api/session", nil, wrong)
		last = resp.StatusCode
	}
	if last != 429 {
		t.Fatalf("the 6th wrong sign-in on A = %d, want 429", last)
	}
	if resp, _ := call(t, "POST", b.URL()+"/api/session", nil, wrong); resp.StatusCode != 401 {
		t.Fatalf("a wrong sign-in on B after A slowed down = %d, want 401", resp.StatusCode)
	}
}

// Every replica of one build serves the same app version (the build id),
// so a browser moving between replicas is not told to update.
func TestReplicasServeOneVersion(t *testing.T) {
	d := newDeployment(t)
	a, b := d.replica(t), d.replica(t)
	cacheName := regexp.MustCompile(`const cacheName = "betaport-([^"]+)"`)
	var versions [2]string
	for i, m := range []*cli.Main{a, b} {
		resp, body := call(t, "GET", m.URL()+"/app-worker.js", nil, nil)
		match := cacheName.FindSubmatch(body)
		if resp.StatusCode != 200 || match == nil {
			t.Fatalf("GET /app-worker.js on %s = %d, no version in it", m.URL(), resp.StatusCode)
		}
		versions[i] = string(match[1])
	}
	if versions[0] != versions[1] {
		t.Fatalf("replica A serves version %s, B %s", versions[0], versions[1])
	}
}

// A replica on a shared database refuses to start without the shared
// secret, saying how to make one.
func TestServeNeedsTheSharedSecret(t *testing.T) {
	d := newDeployment(t)
	m := cli.NewMain()
	m.Config.Addr, m.Config.Data, m.Config.DB, m.Config.Blob = "127.0.0.1:0", t.TempDir(), d.db, d.blob
	err := m.Run(context.Background())
	if err == nil {
		m.Close()
		t.Fatal("serve on PostgreSQL without --secret started")
	}
	if !strings.Contains(err.Error(), "--secret") || !strings.Contains(err.Error(), "openssl rand") {
		t.Fatalf("error = %v", err)
	}
}

// A replica on a shared database refuses to start without the shared
// signing keyring, saying how to make one.
func TestServeNeedsTheSharedKeyring(t *testing.T) {
	d := newDeployment(t)
	m := cli.NewMain()
	m.Config.Addr, m.Config.Data, m.Config.DB, m.Config.Blob, m.Config.Secret = "127.0.0.1:0", t.TempDir(), d.db, d.blob, d.secret
	err := m.Run(context.Background())
	if err == nil {
		m.Close()
		t.Fatal("serve on PostgreSQL without --signing-keyring started")
	}
	if !strings.Contains(err.Error(), "--signing-keyring") || !strings.Contains(err.Error(), "signing-key generate") {
		t.Fatalf("error = %v", err)
	}
}

// countingProxy stands between the replicas and the storage and counts the
// bytes of object reads and writes that pass through it.
type countingProxy struct {
	*httptest.Server
	got, put atomic.Int64
}

func newCountingProxy(t *testing.T, target string) *countingProxy {
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u) // keeps the Host header the URL was signed for
	p := &countingProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case "PUT":
			r.Body = &countingBody{ReadCloser: r.Body, n: &p.put}
			rp.ServeHTTP(w, r)
		case "GET":
			rp.ServeHTTP(&countingWriter{ResponseWriter: w, n: &p.got}, r)
		default:
			rp.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(p.Close)
	return p
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countingBody) Read(b []byte) (int, error) {
	n, err := c.ReadCloser.Read(b)
	c.n.Add(int64(n))
	return n, err
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	c.n.Add(int64(len(b)))
	return c.ResponseWriter.Write(b)
}

// Sign validates the zip from its central directory and manifest with
// ranged reads, and its size and SHA-256 come from the storage (a checked
// server-side copy). Only the CRX needs every byte: of a 16 MiB zip, a
// replica reads it once, plus a few KiB.
func TestSignReadsTheZipOnce(t *testing.T) {
	d := newDeployment(t)
	proxy := newCountingProxy(t, d.blobEndpoint)
	bu, _ := url.Parse(d.blob)
	q := bu.Query()
	q.Set("endpoint", proxy.URL)
	bu.RawQuery = q.Encode()
	d.blob, d.blobEndpoint = bu.String(), proxy.URL
	a := d.replica(t)
	f := d.fixture(t)

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("manifest.json")
	io.WriteString(w, `{"manifest_version": 3, "name": "Big", "version": "1.0"}`)
	w, _ = zw.CreateHeader(&zip.FileHeader{Name: "assets/noise.bin", Method: zip.Store})
	io.CopyN(w, rand.NewChaCha8([32]byte{7}), 16<<20)
	zw.Close()
	zipBytes := buf.Bytes()
	sum := sha256.Sum256(zipBytes)

	u := requestURL(t, a, f.key)
	put(t, u.URL, zipBytes)
	if got := proxy.put.Load(); got < int64(len(zipBytes)) {
		t.Fatalf("the storage took %d bytes of the %d-byte zip", got, len(zipBytes))
	}
	before := proxy.got.Load()
	status, bundle, body := sign(t, a, f.key)
	if status != 200 || bundle.SHA256 != hex.EncodeToString(sum[:]) || bundle.Size != int64(len(zipBytes)) || bundle.FileCount != 2 {
		t.Fatalf("sign = %d %s", status, body)
	}
	read := proxy.got.Load() - before
	t.Logf("sign of a %d MiB zip read %d bytes of it", len(zipBytes)>>20, read)
	if read > int64(len(zipBytes))+256<<10 {
		t.Fatalf("sign read %d bytes of a %d-byte zip: it reads the zip more than once", read, len(zipBytes))
	}
}

// A browser watching replica A learns of a bundle published through
// replica B: the event stream of A follows the shared database.
func TestEventsAcrossReplicas(t *testing.T) {
	d := newDeployment(t)
	a, b := d.replica(t), d.replica(t)
	f := d.fixture(t)
	admin := f.signIn(t, a)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", a.URL()+api.ExtensionPath(f.ext.ID)+"/events", nil)
	req.Header = admin.Clone()
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("events from A: %v %v", resp, err)
	}
	defer resp.Body.Close()
	data := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		event := ""
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				event = name
			}
			// The bundles' events ("testers" events follow the testers).
			if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok && event == "bundles" {
				data <- v
			}
		}
		close(data)
	}()
	next := func() string {
		select {
		case v := <-data:
			return v
		case <-time.After(20 * time.Second):
			t.Fatal("no event from A")
			return ""
		}
	}
	if first := next(); !strings.Contains(first, `"lastBundle":0`) {
		t.Fatalf("first event %s", first)
	}
	put(t, requestURL(t, b, f.key).URL, validZip(t, "2.0.0"))
	if status, _, body := sign(t, b, f.key); status != 200 {
		t.Fatalf("sign on B = %d %s", status, body)
	}
	if ev := next(); !strings.Contains(ev, `"currentBundle":1`) {
		t.Fatalf("A's event after B published: %s", ev)
	}
}
