package publish_test

// Black-box tests of the publishing pipeline, through its public API only:
// a real SQLite store, a real file bucket and a keyring, driven the way the
// HTTP handlers, a pipeline and a hostile or clumsy client drive them.

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/blobstore"
	bphttp "github.com/betaport/betaport/server/http"
	"github.com/betaport/betaport/server/keyring"
	"github.com/betaport/betaport/server/publish"
	"github.com/betaport/betaport/server/sqlite"
	"github.com/betaport/betaport/server/storetest"
)

const (
	bbBaseURL = "https://betaport.example"
	bbTTL     = 10 * time.Minute
)

// bbClock is the service's clock, moved by tests instead of sleeping.
type bbClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *bbClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *bbClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// bbWorld is one service on its own store and bucket.
type bbWorld struct {
	t     testing.TB
	ctx   context.Context
	db    *sqlite.DB
	blobs *blob.Bucket
	svc   *publish.Service
	clock *bbClock
}

func newBBWorld(t testing.TB, cfg publish.Config) *bbWorld {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "betaport.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	blobURL, err := blobstore.FileURL(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := blobstore.Open(ctx, blobURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blobs.Close() })
	kr, err := keyring.Parse(keyring.Generate())
	if err != nil {
		t.Fatal(err)
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	if cfg.Burst == 0 {
		cfg.Burst = 1000
	}
	if cfg.UploadTTL == 0 {
		cfg.UploadTTL = bbTTL
	}
	clock := &bbClock{}
	svc := &publish.Service{
		Store:       db,
		Blobs:       blobs,
		Logger:      slog.New(slog.DiscardHandler),
		BaseURL:     bbBaseURL,
		Secret:      secret,
		SigningKeys: kr,
		Config:      cfg,
		Now:         clock.Now,
	}
	return &bbWorld{t: t, ctx: ctx, db: db, blobs: blobs, svc: svc, clock: clock}
}

// extension creates a team on plan, an extension of it and its submit key.
func (w *bbWorld) extension(plan string) (*betaport.Extension, api.ServiceKey) {
	w.t.Helper()
	return w.extensionOf(storetest.MustTeam(w.t, w.db, plan))
}

func (w *bbWorld) extensionOf(team *betaport.Team) (*betaport.Extension, api.ServiceKey) {
	w.t.Helper()
	ext := storetest.MustExtension(w.t, w.db, team, "ext-"+randHex(4))
	key := "bp_" + randHex(16)
	storetest.MustKey(w.t, w.db, ext.ID, "CI", key)
	return ext, api.ServiceKey{ExtensionID: strconv.FormatInt(ext.ID, 10), APIKey: key}
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// request is call 1 as its handler makes it.
func (w *bbWorld) request(key api.ServiceKey) *api.UploadURL {
	w.t.Helper()
	ext, _, err := w.svc.Authorize(w.ctx, key)
	if err != nil {
		w.t.Fatalf("Authorize: %v", err)
	}
	u, err := w.svc.RequestUpload(w.ctx, ext, "")
	if err != nil {
		w.t.Fatalf("RequestUpload: %v", err)
	}
	return u
}

// put is call 2 with the URL exactly as given out.
func (w *bbWorld) put(u *api.UploadURL, body []byte) error {
	w.t.Helper()
	return w.svc.Receive(w.ctx, putOf(w.t, u, body))
}

// sign is call 3 as its handler makes it.
func (w *bbWorld) sign(key api.ServiceKey) (*betaport.Bundle, error) {
	w.t.Helper()
	ext, _, err := w.svc.Authorize(w.ctx, key)
	if err != nil {
		w.t.Fatalf("Authorize: %v", err)
	}
	return w.svc.Sign(w.ctx, ext)
}

// submit runs the three calls and wants a bundle.
func (w *bbWorld) submit(key api.ServiceKey, zipBytes []byte) *betaport.Bundle {
	w.t.Helper()
	u := w.request(key)
	if err := w.put(u, zipBytes); err != nil {
		w.t.Fatalf("Receive: %v", err)
	}
	b, err := w.sign(key)
	if err != nil {
		w.t.Fatalf("Sign: %v", err)
	}
	return b
}

func (w *bbWorld) reload(ext *betaport.Extension) *betaport.Extension {
	w.t.Helper()
	e, err := w.db.FindExtension(w.ctx, ext.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	return e
}

func (w *bbWorld) bundles(ext *betaport.Extension) []*betaport.Bundle {
	w.t.Helper()
	bs, err := w.db.FindBundles(w.ctx, ext.ID, 1<<62, 100)
	if err != nil {
		w.t.Fatal(err)
	}
	return bs
}

// published checks what testers of ext get: current bundle number and how
// many bundles there are.
func (w *bbWorld) published(ext *betaport.Extension, current int64, count int) {
	w.t.Helper()
	if got := w.reload(ext).CurrentBundle; got != current {
		w.t.Errorf("extension's current bundle = %d, want %d", got, current)
	}
	if got := len(w.bundles(ext)); got != count {
		w.t.Errorf("FindBundles gives %d bundles, want %d", got, count)
	}
}

func (w *bbWorld) latest(ext *betaport.Extension) *betaport.Upload {
	w.t.Helper()
	u, err := w.db.LatestUpload(w.ctx, ext.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	return u
}

func (w *bbWorld) keys() map[string]bool {
	w.t.Helper()
	keys := map[string]bool{}
	it := w.blobs.List(nil)
	for {
		o, err := it.Next(w.ctx)
		if err == io.EOF {
			return keys
		}
		if err != nil {
			w.t.Fatal(err)
		}
		keys[o.Key] = true
	}
}

func (w *bbWorld) read(key string) []byte {
	w.t.Helper()
	b, err := w.blobs.ReadAll(w.ctx, key)
	if err != nil {
		w.t.Fatalf("reading blob %q: %v", key, err)
	}
	return b
}

// putOf is the PUT a client sends to u's URL.
func putOf(t testing.TB, u *api.UploadURL, body []byte) publish.Put {
	t.Helper()
	pu, err := url.Parse(u.URL)
	if err != nil {
		t.Fatal(err)
	}
	return publish.Put{
		UploadID:      strings.TrimPrefix(pu.Path, api.UploadPrefix),
		Path:          pu.Path,
		Query:         pu.Query(),
		ContentType:   api.ZipContentType,
		ContentLength: int64(len(body)),
		Body:          bytes.NewReader(body),
	}
}

// problemOf is the problem a client is answered for err, by package http's
// mapping, when err is one publish means a person to read (an *api.Problem
// or a *betaport.Error); not for any other error.
func problemOf(err error) (*api.Problem, bool) {
	var e *betaport.Error
	if _, ok := api.AsProblem(err); !ok && !errors.As(err, &e) {
		return nil, false
	}
	return bphttp.ProblemFor(err), true
}

// wantProblem fails unless err is a problem of that status (if not 0) and
// type (if not "").
func wantProblem(t *testing.T, err error, status int, typ string) *api.Problem {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want a %d %s problem", status, typ)
	}
	p, ok := problemOf(err)
	if !ok {
		t.Fatalf("got %T %v, want a %d %s problem", err, err, status, typ)
	}
	if (status != 0 && p.Status != status) || (typ != "" && p.Type != typ) {
		t.Fatalf("got problem %d %s (%s), want %d %s", p.Status, p.Type, p.Detail, status, typ)
	}
	if p.Detail == "" {
		t.Errorf("problem %d %s has no detail telling the person what to do", p.Status, p.Type)
	}
	return p
}

// statusOf is the HTTP status err stands for, by package http's mapping.
func statusOf(err error) int {
	if err == nil {
		return 200
	}
	return bphttp.ProblemFor(err).Status
}

func codes(p *api.Problem) []string {
	var cs []string
	for _, zp := range p.Problems {
		cs = append(cs, zp.Code)
	}
	return cs
}

type bbEntry struct {
	name    string
	body    string
	symlink bool
}

func mkZip(t testing.TB, entries ...bbEntry) []byte {
	t.Helper()
	return mkZipComment(t, "", entries...)
}

func mkZipComment(t testing.TB, comment string, entries ...bbEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if strings.HasSuffix(e.name, "/") {
			h.Method = zip.Store
		}
		if e.symlink {
			h.SetMode(0o777 | 1<<27) // os.ModeSymlink
		}
		f, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(f, e.body)
	}
	if comment != "" {
		if err := zw.SetComment(comment); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func manifest(name, version string) string {
	return `{"manifest_version": 3, "name": "` + name + `", "version": "` + version + `"}`
}

// goodZip is a valid extension of that version.
func goodZip(t testing.TB, version string) []byte {
	return mkZip(t,
		bbEntry{name: "manifest.json", body: manifest("Good", version)},
		bbEntry{name: "background.js", body: "console.log('v" + version + "');"},
	)
}

// zipOfSize is a valid zip of exactly n bytes (padded with its comment).
func zipOfSize(t *testing.T, n int) []byte {
	t.Helper()
	base := goodZip(t, "1.0.0")
	pad := n - len(base)
	if pad < 0 || pad > 65535 {
		t.Fatalf("cannot make a zip of %d bytes from one of %d", n, len(base))
	}
	z := mkZipComment(t, strings.Repeat("p", pad),
		bbEntry{name: "manifest.json", body: manifest("Good", "1.0.0")},
		bbEntry{name: "background.js", body: "console.log('v1.0.0');"},
	)
	if len(z) != n {
		t.Fatalf("zip is %d bytes, want %d", len(z), n)
	}
	return z
}

// files reads a zip's regular files by name.
func files(t *testing.T, z []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	m := map[string]string{}
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("reading %s: %v", f.Name, err)
		}
		m[f.Name] = string(b)
	}
	return m
}

func names(t *testing.T, z []byte) []string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	var ns []string
	for _, f := range zr.File {
		ns = append(ns, f.Name)
	}
	return ns
}

// crxZip is the zip a CRX3 package carries after its header.
func crxZip(t *testing.T, crx []byte) []byte {
	t.Helper()
	if len(crx) < 12 || string(crx[:4]) != "Cr24" {
		t.Fatalf("CRX does not start with Cr24: %q", crx[:min(len(crx), 16)])
	}
	if v := binary.LittleEndian.Uint32(crx[4:8]); v != 3 {
		t.Errorf("CRX version %d, want 3", v)
	}
	hl := int(binary.LittleEndian.Uint32(crx[8:12]))
	if 12+hl > len(crx) {
		t.Fatalf("CRX header length %d runs past its %d bytes", hl, len(crx))
	}
	return crx[12+hl:]
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// updateParts splits an update URL .../update/{id}/{token}.
func updateParts(t *testing.T, updateURL string) (id, token string) {
	t.Helper()
	if !strings.HasPrefix(updateURL, bbBaseURL+api.UpdatePrefix) {
		t.Fatalf("update URL %q is not under %s%s", updateURL, bbBaseURL, api.UpdatePrefix)
	}
	parts := strings.Split(strings.TrimPrefix(updateURL, bbBaseURL+api.UpdatePrefix), "/")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		t.Fatalf("update URL %q is not /update/{id}/{token}", updateURL)
	}
	return parts[0], parts[1]
}

type gupdate struct {
	Apps []struct {
		AppID       string `xml:"appid,attr"`
		UpdateCheck struct {
			Status   string `xml:"status,attr"`
			Codebase string `xml:"codebase,attr"`
			Version  string `xml:"version,attr"`
		} `xml:"updatecheck"`
	} `xml:"app"`
}

func parseGupdate(t *testing.T, b []byte) gupdate {
	t.Helper()
	var g gupdate
	if err := xml.Unmarshal(b, &g); err != nil {
		t.Fatalf("update check answer is not XML: %v\n%s", err, b)
	}
	if len(g.Apps) != 1 {
		t.Fatalf("update check answers %d apps, want 1:\n%s", len(g.Apps), b)
	}
	return g
}

func checkQuery(chromeID, version string) string {
	return "x=" + url.QueryEscape("id="+chromeID+"&v="+version+"&uc")
}

// ---------------------------------------------------------------- Authorize

func TestBlackBoxAuthorize(t *testing.T) {
	w := newBBWorld(t, publish.Config{})
	ext, key := w.extension(betaport.PlanProfessional)
	other, otherKey := w.extension(betaport.PlanProfessional)

	t.Run("key of the extension", func(t *testing.T) {
		got, _, err := w.svc.Authorize(w.ctx, key)
		if err != nil {
			t.Fatalf("Authorize with the right key: %v", err)
		}
		if got.ID != ext.ID {
			t.Fatalf("Authorize returned extension %d, want %d", got.ID, ext.ID)
		}
	})

	t.Run("every bad key gets one answer", func(t *testing.T) {
		cases := []struct {
			name string
			key  api.ServiceKey
		}{
			{"wrong key", api.ServiceKey{ExtensionID: key.ExtensionID, APIKey: key.APIKey + "x"}},
			{"another extension's key", api.ServiceKey{ExtensionID: key.ExtensionID, APIKey: otherKey.APIKey}},
			{"empty key", api.ServiceKey{ExtensionID: key.ExtensionID, APIKey: ""}},
			{"the key's hash", api.ServiceKey{ExtensionID: key.ExtensionID, APIKey: publish.HashKey(key.APIKey)}},
			{"unknown extension", api.ServiceKey{ExtensionID: "987654", APIKey: key.APIKey}},
			{"non-numeric id", api.ServiceKey{ExtensionID: "abc", APIKey: key.APIKey}},
			{"id with spaces", api.ServiceKey{ExtensionID: " " + key.ExtensionID, APIKey: key.APIKey}},
			{"negative id", api.ServiceKey{ExtensionID: "-1", APIKey: key.APIKey}},
			{"empty id", api.ServiceKey{ExtensionID: "", APIKey: key.APIKey}},
			{"huge id", api.ServiceKey{ExtensionID: "99999999999999999999999", APIKey: key.APIKey}},
		}
		var first *api.Problem
		for _, c := range cases {
			_, _, err := w.svc.Authorize(w.ctx, c.key)
			if err == nil {
				t.Errorf("%s: authorized", c.name)
				continue
			}
			p, ok := problemOf(err)
			if !ok {
				t.Errorf("%s: got %T %v, want a problem", c.name, err, err)
				continue
			}
			if p.Status != 401 || p.Type != api.ProblemInvalidKey {
				t.Errorf("%s: got %d %s, want 401 %s", c.name, p.Status, p.Type, api.ProblemInvalidKey)
			}
			if first == nil {
				first = p
				continue
			}
			if p.Status != first.Status || p.Type != first.Type || p.Title != first.Title ||
				p.Detail != first.Detail || p.Param != first.Param {
				t.Errorf("%s answers %+v, which tells it apart from %s's %+v", c.name, *p, cases[0].name, *first)
			}
		}
		if first != nil && first.Detail == "" {
			t.Error("the invalid-key problem has no detail")
		}
	})

	t.Run("starter plan", func(t *testing.T) {
		_, starterKey := w.extension(betaport.PlanStarter)
		_, _, err := w.svc.Authorize(w.ctx, starterKey)
		wantProblem(t, err, 403, api.ProblemPlanRequired)
	})

	t.Run("other extension unaffected", func(t *testing.T) {
		got, _, err := w.svc.Authorize(w.ctx, otherKey)
		if err != nil || got.ID != other.ID {
			t.Fatalf("Authorize(other) = %v, %v", got, err)
		}
	})
}

func TestBlackBoxAuthorizeBurst(t *testing.T) {
	w := newBBWorld(t, publish.Config{Burst: 3, Every: time.Hour})
	_, key := w.extension(betaport.PlanProfessional)
	other, otherKey := w.extension(betaport.PlanProfessional)
	for i := range 3 {
		if _, _, err := w.svc.Authorize(w.ctx, key); err != nil {
			t.Fatalf("call %d of a burst of 3: %v", i+1, err)
		}
	}
	_, _, err := w.svc.Authorize(w.ctx, key)
	p := wantProblem(t, err, 429, api.ProblemTooManyRequests)
	if p.RetryAfter <= 0 {
		t.Errorf("429 says retry after %d s, want > 0", p.RetryAfter)
	}
	// The limit is the key's: another extension's pipeline goes on.
	got, _, err := w.svc.Authorize(w.ctx, otherKey)
	if err != nil || got.ID != other.ID {
		t.Fatalf("another extension's key after the burst: %v, %v", got, err)
	}
}

func TestBlackBoxSeatsNeverLimit(t *testing.T) {
	w := newBBWorld(t, publish.Config{})
	team := &betaport.Team{Name: "one seat", Plan: betaport.PlanProfessional, Seats: 1}
	if err := w.db.CreateTeam(w.ctx, team); err != nil {
		t.Fatal(err)
	}
	ext, key := w.extensionOf(team)
	for i, v := range []string{"1.0.0", "1.0.1", "1.0.2"} {
		b := w.submit(key, goodZip(t, v))
		if b.Number != int64(i+1) || b.Version != v {
			t.Errorf("submission %d: bundle %d version %s, want %d version %s", i+1, b.Number, b.Version, i+1, v)
		}
	}
	w.published(ext, 3, 3)
}

// ---------------------------------------------------------------- DecodeKey

func TestBlackBoxDecodeKey(t *testing.T) {
	raw := func(t *testing.T, s string) map[string]json.RawMessage {
		t.Helper()
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}

	t.Run("service object", func(t *testing.T) {
		k, err := api.ServiceKeyOf(raw(t, `{"extensionId":"42","apiKey":"bp_k"}`))
		if err != nil {
			t.Fatal(err)
		}
		if k != (api.ServiceKey{ExtensionID: "42", APIKey: "bp_k"}) {
			t.Fatalf("decoded %+v", k)
		}
	})

	t.Run("id as a number", func(t *testing.T) {
		k, err := api.ServiceKeyOf(raw(t, `{"extensionId":42,"apiKey":"bp_k"}`))
		if err != nil {
			t.Fatalf("an id sent as a number: %v", err)
		}
		if k != (api.ServiceKey{ExtensionID: "42", APIKey: "bp_k"}) {
			t.Fatalf("decoded %+v", k)
		}
	})

	t.Run("whole key file", func(t *testing.T) {
		_, err := api.ServiceKeyOf(raw(t, `{"service":{"extensionId":"42","apiKey":"bp_k"}}`))
		p := wantProblem(t, err, 400, "")
		if !strings.Contains(p.Detail, "service") {
			t.Errorf("detail %q does not say to send the service object", p.Detail)
		}
	})

	t.Run("unknown field", func(t *testing.T) {
		_, err := api.ServiceKeyOf(raw(t, `{"extensionId":"42","apiKey":"bp_k","label":"ci"}`))
		wantProblem(t, err, 400, "")
	})

	for _, c := range []struct{ body, param string }{
		{`{"apiKey":"bp_k"}`, "extensionId"},
		{`{"extensionId":"42"}`, "apiKey"},
		{`{"extensionId":null,"apiKey":"bp_k"}`, "extensionId"},
		{`{"extensionId":"42","apiKey":null}`, "apiKey"},
	} {
		t.Run("missing "+c.param+" "+c.body, func(t *testing.T) {
			_, err := api.ServiceKeyOf(raw(t, c.body))
			p := wantProblem(t, err, 400, "")
			if p.Param != c.param {
				t.Errorf("param = %q, want %q", p.Param, c.param)
			}
		})
	}

	t.Run("empty object", func(t *testing.T) {
		_, err := api.ServiceKeyOf(raw(t, `{}`))
		wantProblem(t, err, 400, "")
	})

	for _, body := range []string{
		`{"extensionId":{"id":42},"apiKey":"bp_k"}`,
		`{"extensionId":true,"apiKey":"bp_k"}`,
		`{"extensionId":["42"],"apiKey":"bp_k"}`,
	} {
		t.Run("wrong type "+body, func(t *testing.T) {
			_, err := api.ServiceKeyOf(raw(t, body))
			wantProblem(t, err, 400, "")
		})
	}
}

// ---------------------------------------------------------------- RequestUpload

func TestBlackBoxRequestUpload(t *testing.T) {
	w := newBBWorld(t, publish.Config{MaxUploadSize: 5 << 20})

	t.Run("upload URL", func(t *testing.T) {
		_, key := w.extension(betaport.PlanProfessional)
		before := w.clock.Now()
		u := w.request(key)
		if !strings.HasPrefix(u.URL, bbBaseURL+api.UploadPrefix) {
			t.Errorf("URL %q is not under %s%s", u.URL, bbBaseURL, api.UploadPrefix)
		}
		if u.UploadID <= 0 {
			t.Errorf("UploadID = %d", u.UploadID)
		}
		pu, err := url.Parse(u.URL)
		if err != nil {
			t.Fatal(err)
		}
		if pu.Path != api.UploadPrefix+strconv.FormatInt(u.UploadID, 10) {
			t.Errorf("URL path %q does not name upload %d", pu.Path, u.UploadID)
		}
		if u.ExpiresAt.Before(before.Add(bbTTL-time.Minute)) || u.ExpiresAt.After(before.Add(bbTTL+time.Minute)) {
			t.Errorf("ExpiresAt %v, want about %v", u.ExpiresAt, before.Add(bbTTL))
		}
		if u.MaxSize != 5<<20 || w.svc.MaxUploadSize() != 5<<20 {
			t.Errorf("MaxSize %d, MaxUploadSize() %d, want %d", u.MaxSize, w.svc.MaxUploadSize(), 5<<20)
		}
	})

	t.Run("second request supersedes the first", func(t *testing.T) {
		ext, key := w.extension(betaport.PlanProfessional)
		u1 := w.request(key)
		u2 := w.request(key)
		if u1.UploadID == u2.UploadID || u1.URL == u2.URL {
			t.Fatalf("two requests got the same upload %d", u1.UploadID)
		}
		// The pipeline that asked first PUTs to its URL: whether or not the
		// PUT is taken, signing must not publish that zip.
		err := w.put(u1, goodZip(t, "1.0.0"))
		t.Logf("PUT to the superseded URL: %v", err)
		_, err = w.sign(key)
		wantProblem(t, err, 409, api.ProblemZipNotReceived)
		w.published(ext, 0, 0)

		if err := w.put(u2, goodZip(t, "2.0.0")); err != nil {
			t.Fatalf("PUT to the latest URL: %v", err)
		}
		b, err := w.sign(key)
		if err != nil {
			t.Fatal(err)
		}
		if b.Version != "2.0.0" || b.Number != 1 {
			t.Fatalf("published bundle %d version %s, want 1 version 2.0.0", b.Number, b.Version)
		}
		w.published(ext, 1, 1)
	})
}

// ---------------------------------------------------------------- Receive

func TestBlackBoxReceiveRefusals(t *testing.T) {
	w := newBBWorld(t, publish.Config{})

	// refused PUTs a valid zip to a fresh upload after tamper changed the
	// request, and wants it refused with nothing stored and the upload still
	// waiting for its zip, which the genuine PUT then delivers.
	refused := func(t *testing.T, tamper func(p *publish.Put), check func(t *testing.T, err error)) {
		t.Helper()
		ext, key := w.extension(betaport.PlanProfessional)
		u := w.request(key)
		before := w.latest(ext)
		keys := w.keys()
		z := goodZip(t, "1.0.0")
		p := putOf(t, u, z)
		tamper(&p)
		err := w.svc.Receive(w.ctx, p)
		check(t, err)
		after := w.latest(ext)
		if after.State != before.State || after.Size != before.Size || after.SHA256 != before.SHA256 {
			t.Errorf("upload went from %s (%d bytes) to %s (%d bytes %s)", before.State, before.Size, after.State, after.Size, after.SHA256)
		}
		if got := w.keys(); len(got) != len(keys) {
			t.Errorf("storage held %d objects, now %d: %v", len(keys), len(got), got)
		}
		w.published(ext, 0, 0)
		_, err = w.sign(key)
		wantProblem(t, err, 409, api.ProblemZipNotReceived)

		if err := w.put(u, z); err != nil {
			t.Fatalf("the genuine PUT after the refused one: %v", err)
		}
		if b, err := w.sign(key); err != nil || b.Number != 1 {
			t.Fatalf("sign after the genuine PUT: %v, %v", b, err)
		}
	}
	badSignature := func(t *testing.T, err error) {
		t.Helper()
		wantProblem(t, err, 403, api.ProblemBadSignature)
	}

	t.Run("tampered signature", func(t *testing.T) {
		refused(t, func(p *publish.Put) {
			s := []byte(p.Query.Get("signature"))
			if len(s) == 0 {
				t.Fatal("the URL has no signature parameter")
			}
			if s[0] == 'A' {
				s[0] = 'B'
			} else {
				s[0] = 'A'
			}
			p.Query.Set("signature", string(s))
		}, badSignature)
	})

	t.Run("no signature", func(t *testing.T) {
		refused(t, func(p *publish.Put) { p.Query.Del("signature") }, badSignature)
	})

	t.Run("tampered expiry", func(t *testing.T) {
		refused(t, func(p *publish.Put) {
			exp, err := strconv.ParseInt(p.Query.Get("expires"), 10, 64)
			if err != nil {
				t.Fatalf("expires %q: %v", p.Query.Get("expires"), err)
			}
			p.Query.Set("expires", strconv.FormatInt(exp+3600, 10))
		}, badSignature)
	})

	t.Run("another upload's id", func(t *testing.T) {
		victim, victimKey := w.extension(betaport.PlanProfessional)
		vu := w.request(victimKey)
		refused(t, func(p *publish.Put) {
			vp := putOf(t, vu, nil)
			p.UploadID, p.Path = vp.UploadID, vp.Path
		}, badSignature)
		if st := w.latest(victim).State; st != betaport.UploadRequested {
			t.Errorf("the other extension's upload is %s, want %s", st, betaport.UploadRequested)
		}
		w.published(victim, 0, 0)
	})

	for _, ct := range []string{"text/plain", "", "application/x-zip-compressed", "application/octet-stream"} {
		t.Run("content type "+ct, func(t *testing.T) {
			refused(t, func(p *publish.Put) { p.ContentType = ct }, func(t *testing.T, err error) {
				wantProblem(t, err, 415, api.ProblemUnsupportedMedia)
			})
		})
	}

	t.Run("not a zip", func(t *testing.T) {
		refused(t, func(p *publish.Put) {
			body := []byte("this is a README, not a zip\n")
			p.Body, p.ContentLength = bytes.NewReader(body), int64(len(body))
		}, func(t *testing.T, err error) {
			p := wantProblem(t, err, 422, "")
			if len(p.Problems) == 0 {
				t.Error("422 lists no problems")
			}
		})
	})

	t.Run("body fails mid-stream", func(t *testing.T) {
		errBroken := errors.New("connection reset by peer")
		refused(t, func(p *publish.Put) {
			z := goodZip(t, "1.0.0")
			p.Body = io.MultiReader(bytes.NewReader(z[:len(z)/2]), bbErrReader{errBroken})
		}, func(t *testing.T, err error) {
			if !errors.Is(err, publish.ErrIncomplete) {
				t.Errorf("got %v, want an error wrapping ErrIncomplete", err)
			}
		})
	})

	t.Run("body fails mid-stream, length unknown", func(t *testing.T) {
		refused(t, func(p *publish.Put) {
			z := goodZip(t, "1.0.0")
			p.ContentLength = -1
			p.Body = io.MultiReader(bytes.NewReader(z[:len(z)/2]), bbErrReader{io.ErrUnexpectedEOF})
		}, func(t *testing.T, err error) {
			if !errors.Is(err, publish.ErrIncomplete) {
				t.Errorf("got %v, want an error wrapping ErrIncomplete", err)
			}
		})
	})

	// What net/http's body gives when the client goes away 10 bytes short
	// of its Content-Length.
	t.Run("client gone before the last bytes", func(t *testing.T) {
		refused(t, func(p *publish.Put) {
			z := goodZip(t, "1.0.0")
			p.Body = io.MultiReader(bytes.NewReader(z[:len(z)-10]), bbErrReader{io.ErrUnexpectedEOF})
		}, func(t *testing.T, err error) {
			if !errors.Is(err, publish.ErrIncomplete) {
				t.Errorf("got %v, want an error wrapping ErrIncomplete", err)
			}
		})
	})
}

type bbErrReader struct{ err error }

func (r bbErrReader) Read([]byte) (int, error) { return 0, r.err }

func TestBlackBoxReceiveExpired(t *testing.T) {
	w := newBBWorld(t, publish.Config{})
	ext, key := w.extension(betaport.PlanProfessional)
	u := w.request(key)
	keys := w.keys()
	w.clock.Advance(bbTTL + time.Minute)
	err := w.put(u, goodZip(t, "1.0.0"))
	if p := wantProblem(t, err, 0, api.ProblemURLExpired); p.Status < 400 || p.Status > 499 {
		t.Errorf("expired URL answers status %d, want a 4xx", p.Status)
	}
	if st := w.latest(ext); st.State == betaport.UploadReceived || st.Size != 0 {
		t.Errorf("upload is %s with %d bytes after an expired PUT", st.State, st.Size)
	}
	if got := w.keys(); len(got) != len(keys) {
		t.Errorf("storage held %d objects, now %d", len(keys), len(got))
	}
	w.published(ext, 0, 0)
	_, err = w.sign(key)
	wantProblem(t, err, 410, api.ProblemUploadExpired)
	w.published(ext, 0, 0)
}

func TestBlackBoxReceiveSizeLimit(t *testing.T) {
	const max = 4096
	w := newBBWorld(t, publish.Config{MaxUploadSize: max})

	t.Run("exactly the limit", func(t *testing.T) {
		ext, key := w.extension(betaport.PlanProfessional)
		u := w.request(key)
		if u.MaxSize != max {
			t.Errorf("MaxSize = %d, want %d", u.MaxSize, max)
		}
		if err := w.put(u, zipOfSize(t, max)); err != nil {
			t.Fatalf("a zip of exactly MaxUploadSize bytes: %v", err)
		}
		if _, err := w.sign(key); err != nil {
			t.Fatal(err)
		}
		w.published(ext, 1, 1)
	})

	for _, declared := range []bool{true, false} {
		t.Run("one byte over, length declared "+strconv.FormatBool(declared), func(t *testing.T) {
			ext, key := w.extension(betaport.PlanProfessional)
			u := w.request(key)
			keys := w.keys()
			p := putOf(t, u, zipOfSize(t, max+1))
			if !declared {
				p.ContentLength = -1
			}
			err := w.svc.Receive(w.ctx, p)
			wantProblem(t, err, 413, api.ProblemTooLarge)
			if st := w.latest(ext).State; st != betaport.UploadRequested {
				t.Errorf("upload is %s, want %s", st, betaport.UploadRequested)
			}
			if got := w.keys(); len(got) != len(keys) {
				t.Errorf("storage held %d objects, now %d", len(keys), len(got))
			}
			_, err = w.sign(key)
			wantProblem(t, err, 409, api.ProblemZipNotReceived)
			w.published(ext, 0, 0)
		})
	}
}

func TestBlackBoxReceiveAfterPublish(t *testing.T) {
	w := newBBWorld(t, publish.Config{})
	ext, key := w.extension(betaport.PlanProfessional)
	u := w.request(key)
	if err := w.put(u, goodZip(t, "1.0.0")); err != nil {
		t.Fatal(err)
	}
	b, err := w.sign(key)
	if err != nil {
		t.Fatal(err)
	}
	stored := w.read(b.BlobKey)

	// The signed URL still has time left: a replay must not change anything.
	err = w.put(u, goodZip(t, "6.6.6"))
	wantProblem(t, err, 409, api.ProblemAlreadyDone)
	w.published(ext, 1, 1)
	again, err := w.sign(key)
	if err != nil {
		t.Fatal(err)
	}
	if again.Number != 1 || again.Version != "1.0.0" || again.SHA256 != b.SHA256 {
		t.Errorf("after the replayed PUT, sign answers bundle %d version %s", again.Number, again.Version)
	}
	if got := w.read(b.BlobKey); !bytes.Equal(got, stored) {
		t.Error("the published bundle's bytes changed after a replayed PUT")
	}
}

// ---------------------------------------------------------------- Sign

func TestBlackBoxSignWithoutZip(t *testing.T) {
	w := newBBWorld(t, publish.Config{})

	t.Run("nothing requested", func(t *testing.T) {
		ext, key := w.extension(betaport.PlanProfessional)
		_, err := w.sign(key)
		wantProblem(t, err, 409, api.ProblemNoUpload)
		w.published(ext, 0, 0)
	})

	t.Run("requested, no zip", func(t *testing.T) {
		ext, key := w.extension(betaport.PlanProfessional)
		w.request(key)
		_, err := w.sign(key)
		wantProblem(t, err, 409, api.ProblemZipNotReceived)
		w.published(ext, 0, 0)
	})

	t.Run("expired", func(t *testing.T) {
		w := newBBWorld(t, publish.Config{})
		ext, key := w.extension(betaport.PlanProfessional)
		w.request(key)
		w.clock.Advance(bbTTL + time.Minute)
		_, err := w.sign(key)
		wantProblem(t, err, 410, api.ProblemUploadExpired)
		w.published(ext, 0, 0)
	})
}

func TestBlackBoxSignInvalidZip(t *testing.T) {
	w := newBBWorld(t, publish.Config{})
	mf := bbEntry{name: "manifest.json", body: manifest("Bad", "1.0.0")}
	cases := []struct {
		name  string
		zip   []byte
		codes []string
	}{
		{"no manifest", mkZip(t, bbEntry{name: "background.js", body: "x"}), []string{"manifest_missing"}},
		{"zip slip", mkZip(t, mf, bbEntry{name: "../x", body: "pwned"}), []string{"path_traversal"}},
		{"deep zip slip", mkZip(t, mf, bbEntry{name: "js/../../x", body: "pwned"}), []string{"path_traversal"}},
		{"absolute path", mkZip(t, mf, bbEntry{name: "/etc/x", body: "pwned"}), []string{"path_absolute"}},
		{"symlink", mkZip(t, mf, bbEntry{name: "link", body: "/etc/passwd", symlink: true}), []string{"entry_not_regular"}},
		{"bad version", mkZip(t, bbEntry{name: "manifest.json", body: manifest("Bad", "1.0.0.0.0")}), []string{"manifest_version_format"}},
		{"version with letters", mkZip(t, bbEntry{name: "manifest.json", body: manifest("Bad", "v1.2")}), []string{"manifest_version_format"}},
		{"manifest_version 1", mkZip(t, bbEntry{name: "manifest.json", body: `{"manifest_version":1,"name":"Bad","version":"1.0"}`}), []string{"manifest_version"}},
		{"no name", mkZip(t, bbEntry{name: "manifest.json", body: `{"manifest_version":3,"version":"1.0"}`}), []string{"manifest_name"}},
		{"every problem listed", mkZip(t,
			bbEntry{name: "../x", body: "pwned"},
			bbEntry{name: "link", body: "/etc/passwd", symlink: true},
		), []string{"path_traversal", "entry_not_regular", "manifest_missing"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ext, key := w.extension(betaport.PlanProfessional)
			u := w.request(key)
			if err := w.put(u, c.zip); err != nil {
				t.Fatalf("PUT: %v (the zip's problems are sign's to report)", err)
			}
			_, err := w.sign(key)
			p := wantProblem(t, err, 422, api.ProblemInvalidZip)
			got := codes(p)
			for _, code := range c.codes {
				if !slices.Contains(got, code) {
					t.Errorf("problems %v lack %s", got, code)
				}
			}
			for _, zp := range p.Problems {
				if zp.Message == "" {
					t.Errorf("problem %s has no message", zp.Code)
				}
			}
			w.published(ext, 0, 0)
			if n, err := w.db.LastBundleNumber(w.ctx, ext.ID); err != nil || n != 0 {
				t.Errorf("LastBundleNumber = %d, %v; want 0", n, err)
			}
		})
	}

	t.Run("testers keep the current bundle", func(t *testing.T) {
		ext, key := w.extension(betaport.PlanProfessional)
		good := w.submit(key, goodZip(t, "1.0.0"))
		u := w.request(key)
		if err := w.put(u, mkZip(t, mf, bbEntry{name: "../x", body: "pwned"})); err != nil {
			t.Fatal(err)
		}
		_, err := w.sign(key)
		wantProblem(t, err, 422, api.ProblemInvalidZip)
		w.published(ext, good.Number, 1)
	})
}

func TestBlackBoxSignPublishes(t *testing.T) {
	w := newBBWorld(t, publish.Config{})
	ext, key := w.extension(betaport.PlanProfessional)
	z := mkZip(t,
		bbEntry{name: "manifest.json", body: manifest("Good", "1.2.3")},
		bbEntry{name: "js/", body: ""},
		bbEntry{name: "js/bg.js", body: "console.log('hi');"},
	)
	u := w.request(key)
	if err := w.put(u, z); err != nil {
		t.Fatal(err)
	}
	b, err := w.sign(key)
	if err != nil {
		t.Fatal(err)
	}
	if b.Number != 1 || b.ExtensionID != ext.ID {
		t.Errorf("bundle %d of extension %d, want 1 of %d", b.Number, b.ExtensionID, ext.ID)
	}
	if b.Name != "Good" || b.Version != "1.2.3" || b.ManifestVersion != 3 {
		t.Errorf("bundle says %q %q mv%d, want Good 1.2.3 mv3", b.Name, b.Version, b.ManifestVersion)
	}
	w.published(ext, 1, 1)
	if bs := w.bundles(ext); len(bs) == 1 && bs[0].Number != 1 {
		t.Errorf("FindBundles gives bundle %d, want 1", bs[0].Number)
	}
	if up := w.latest(ext); up.State != betaport.UploadPublished || up.BundleNumber != 1 {
		t.Errorf("upload is %s as bundle %d, want published as 1", up.State, up.BundleNumber)
	}

	stored := w.read(b.BlobKey)
	if int64(len(stored)) != b.Size || sha(stored) != b.SHA256 {
		t.Errorf("stored zip is %d bytes %s; the bundle says %d bytes %s", len(stored), sha(stored), b.Size, b.SHA256)
	}
	want := map[string]string{"manifest.json": manifest("Good", "1.2.3"), "js/bg.js": "console.log('hi');"}
	if got := files(t, stored); !mapsEqual(got, want) {
		t.Errorf("stored zip holds %v, want %v", got, want)
	}

	t.Run("retried sign", func(t *testing.T) {
		again, err := w.sign(key)
		if err != nil {
			t.Fatalf("retried sign: %v", err)
		}
		if again.ID != b.ID || again.Number != b.Number || again.SHA256 != b.SHA256 || again.BlobKey != b.BlobKey {
			t.Errorf("retried sign answers bundle %d (#%d %s), want %d (#%d %s)", again.ID, again.Number, again.SHA256, b.ID, b.Number, b.SHA256)
		}
		w.published(ext, 1, 1)
		if n, _ := w.db.LastBundleNumber(w.ctx, ext.ID); n != 1 {
			t.Errorf("LastBundleNumber = %d after a retried sign, want 1", n)
		}
	})

	t.Run("next upload is bundle 2", func(t *testing.T) {
		b2 := w.submit(key, goodZip(t, "1.2.4"))
		if b2.Number != 2 || b2.Version != "1.2.4" {
			t.Errorf("bundle %d version %s, want 2 version 1.2.4", b2.Number, b2.Version)
		}
		w.published(ext, 2, 2)
		if old, err := w.db.FindBundle(w.ctx, ext.ID, 1); err != nil || old.SHA256 != b.SHA256 {
			t.Errorf("bundle 1 after bundle 2: %v, %v", old, err)
		} else if got := w.read(old.BlobKey); sha(got) != b.SHA256 {
			t.Error("bundle 1's stored bytes changed when bundle 2 was published")
		}
	})
}

func TestBlackBoxSignConcurrent(t *testing.T) {
	w := newBBWorld(t, publish.Config{})
	ext, key := w.extension(betaport.PlanProfessional)
	u := w.request(key)
	if err := w.put(u, goodZip(t, "3.1.4")); err != nil {
		t.Fatal(err)
	}
	e, _, err := w.svc.Authorize(w.ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	got := make([]*betaport.Bundle, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got[i], errs[i] = w.svc.Sign(w.ctx, e)
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("sign %d: %v", i, errs[i])
			continue
		}
		if got[i].Number != 1 || got[i].Version != "3.1.4" {
			t.Errorf("sign %d answers bundle %d version %s, want 1 version 3.1.4", i, got[i].Number, got[i].Version)
		}
	}
	w.published(ext, 1, 1)
	if last, _ := w.db.LastBundleNumber(w.ctx, ext.ID); last != 1 {
		t.Errorf("LastBundleNumber = %d after concurrent signs of one upload, want 1", last)
	}
}

func TestBlackBoxSignNormalisesTopFolder(t *testing.T) {
	w := newBBWorld(t, publish.Config{})
	ext, key := w.extension(betaport.PlanProfessional)
	b := w.submit(key, mkZip(t,
		bbEntry{name: "my-ext/"},
		bbEntry{name: "my-ext/manifest.json", body: manifest("Folded", "2.0")},
		bbEntry{name: "my-ext/js/bg.js", body: "go();"},
	))
	w.published(ext, 1, 1)
	stored := w.read(b.BlobKey)
	want := map[string]string{"manifest.json": manifest("Folded", "2.0"), "js/bg.js": "go();"}
	if got := files(t, stored); !mapsEqual(got, want) {
		t.Errorf("bundle's zip holds %v, want %v", got, want)
	}
	for _, n := range names(t, stored) {
		if strings.HasPrefix(n, "my-ext") {
			t.Errorf("bundle's zip still has entry %q", n)
		}
	}
	if int64(len(stored)) != b.Size || sha(stored) != b.SHA256 {
		t.Errorf("bundle says %d bytes %s of the normalised zip; it is %d bytes %s", b.Size, b.SHA256, len(stored), sha(stored))
	}
	if b.Name != "Folded" || b.Version != "2.0" {
		t.Errorf("bundle %q %q", b.Name, b.Version)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// ---------------------------------------------------------------- CRX and updates

func TestBlackBoxCRXAndUpdates(t *testing.T) {
	w := newBBWorld(t, publish.Config{})
	ext, key := w.extension(betaport.PlanProfessional)
	other, otherKey := w.extension(betaport.PlanProfessional)
	b := w.submit(key, goodZip(t, "1.2.3"))
	w.submit(otherKey, goodZip(t, "9.9.9"))
	ext = w.reload(ext)

	up, err := w.svc.Updates(w.ctx, ext)
	if err != nil {
		t.Fatal(err)
	}
	if len(up.ChromeID) != 32 || strings.Trim(up.ChromeID, "abcdefghijklmnop") != "" {
		t.Errorf("Chrome ID %q is not 32 letters a-p", up.ChromeID)
	}
	id, token := updateParts(t, up.UpdateURL)
	otherUp, err := w.svc.Updates(w.ctx, w.reload(other))
	if err != nil {
		t.Fatal(err)
	}
	otherID, otherToken := updateParts(t, otherUp.UpdateURL)
	if otherUp.ChromeID == up.ChromeID || otherToken == token {
		t.Error("two extensions share a Chrome ID or an update token")
	}

	// crx builds b's CRX and checks it carries the bundle and updateURL.
	crx := func(t *testing.T, updateURL string) betaport.CRX {
		t.Helper()
		bb, err := w.db.FindBundle(w.ctx, ext.ID, b.Number)
		if err != nil {
			t.Fatal(err)
		}
		c, err := w.svc.CRX(w.ctx, w.reload(ext), bb)
		if err != nil {
			t.Fatalf("CRX: %v", err)
		}
		if c.BlobKey == "" {
			t.Fatal("CRX has no blob key")
		}
		data := w.read(c.BlobKey)
		if !bytes.HasPrefix(data, []byte("Cr24")) {
			t.Fatalf("CRX blob starts %q, want Cr24", data[:min(len(data), 8)])
		}
		if sha(data) != c.SHA256 {
			t.Errorf("CRX says SHA-256 %s, its blob is %s", c.SHA256, sha(data))
		}
		if c.Size != int64(len(data)) {
			t.Errorf("CRX says %d bytes, its blob is %d bytes", c.Size, len(data))
		}
		inner := files(t, crxZip(t, data))
		var m struct {
			Version   string `json:"version"`
			UpdateURL string `json:"update_url"`
		}
		if err := json.Unmarshal([]byte(inner["manifest.json"]), &m); err != nil {
			t.Fatalf("CRX's manifest.json: %v", err)
		}
		if m.Version != b.Version || m.UpdateURL != updateURL {
			t.Errorf("CRX's manifest has version %q update_url %q, want %q %q", m.Version, m.UpdateURL, b.Version, updateURL)
		}
		if inner["background.js"] != "console.log('v1.2.3');" {
			t.Errorf("CRX's background.js = %q", inner["background.js"])
		}
		return c
	}

	first := crx(t, up.UpdateURL)

	t.Run("update feed", func(t *testing.T) {
		got, err := w.svc.UpdateFeed(w.ctx, id, token)
		if err != nil {
			t.Fatalf("UpdateFeed with the update URL's token: %v", err)
		}
		if got.Extension.ID != ext.ID || got.Tester != nil {
			t.Errorf("UpdateFeed gives extension %d (tester %v), want %d and the shared feed", got.Extension.ID, got.Tester, ext.ID)
		}
		var firstErr error
		for _, c := range []struct{ name, id, token string }{
			{"wrong token", id, token[:len(token)-1] + "x"},
			{"empty token", id, ""},
			{"other extension's token", id, otherToken},
			{"token of another id", otherID, token},
			{"unknown extension", "987654", token},
			{"non-numeric id", "abc", token},
		} {
			_, err := w.svc.UpdateFeed(w.ctx, c.id, c.token)
			if s := statusOf(err); s != 404 {
				t.Errorf("%s: %v (status %d), want 404", c.name, err, s)
				continue
			}
			if firstErr == nil {
				firstErr = err
			} else if err.Error() != firstErr.Error() {
				t.Errorf("%s answers %q, unlike %q", c.name, err, firstErr)
			}
		}
	})

	t.Run("update check", func(t *testing.T) {
		ans, err := w.svc.UpdateCheck(w.ctx, &publish.Feed{Extension: w.reload(ext), Token: token}, checkQuery(up.ChromeID, "0.0.1"))
		if err != nil {
			t.Fatal(err)
		}
		g := parseGupdate(t, ans)
		app := g.Apps[0]
		if app.AppID != up.ChromeID {
			t.Errorf("app id %q, want %q", app.AppID, up.ChromeID)
		}
		if app.UpdateCheck.Version != b.Version {
			t.Errorf("offers version %q, want %q:\n%s", app.UpdateCheck.Version, b.Version, ans)
		}
		if !strings.HasPrefix(app.UpdateCheck.Codebase, up.UpdateURL+"/crx/") {
			t.Errorf("codebase %q is not under %s/crx/", app.UpdateCheck.Codebase, up.UpdateURL)
		}

		ans, err = w.svc.UpdateCheck(w.ctx, &publish.Feed{Extension: w.reload(ext), Token: token}, checkQuery(up.ChromeID, b.Version))
		if err != nil {
			t.Fatal(err)
		}
		g = parseGupdate(t, ans)
		if uc := g.Apps[0].UpdateCheck; uc.Codebase != "" || uc.Status != "noupdate" {
			t.Errorf("with %s installed, the check answers status %q codebase %q, want noupdate:\n%s", b.Version, uc.Status, uc.Codebase, ans)
		}

		// A newer copy installed (a developer's own build) is never
		// offered a downgrade.
		ans, err = w.svc.UpdateCheck(w.ctx, &publish.Feed{Extension: w.reload(ext), Token: token}, checkQuery(up.ChromeID, "9.0"))
		if err != nil {
			t.Fatal(err)
		}
		if uc := parseGupdate(t, ans).Apps[0].UpdateCheck; uc.Codebase != "" {
			t.Errorf("with 9.0 installed, the check offers %q at %s", uc.Version, uc.Codebase)
		}
	})

	t.Run("rotated token", func(t *testing.T) {
		rotated, err := w.svc.RotateUpdateToken(w.ctx, w.reload(ext))
		if err != nil {
			t.Fatal(err)
		}
		if rotated.ChromeID != up.ChromeID {
			t.Errorf("rotating the token changed the Chrome ID from %s to %s", up.ChromeID, rotated.ChromeID)
		}
		if rotated.RotatedAt == nil {
			t.Error("RotatedAt is nil after a rotation")
		}
		newID, newToken := updateParts(t, rotated.UpdateURL)
		if newToken == token || newID != id {
			t.Fatalf("rotated update URL %q, was %q", rotated.UpdateURL, up.UpdateURL)
		}
		if _, err := w.svc.UpdateFeed(w.ctx, id, token); statusOf(err) != 404 {
			t.Errorf("old token after rotation: %v, want 404", err)
		}
		if got, err := w.svc.UpdateFeed(w.ctx, newID, newToken); err != nil || got.Extension.ID != ext.ID {
			t.Errorf("new token: %v, %v", got, err)
		}
		if now, err := w.svc.Updates(w.ctx, w.reload(ext)); err != nil || now.UpdateURL != rotated.UpdateURL {
			t.Errorf("Updates after rotation: %+v, %v; want %s", now, err, rotated.UpdateURL)
		}

		rebuilt := crx(t, rotated.UpdateURL)
		if rebuilt.BlobKey == first.BlobKey {
			t.Errorf("CRX after rotation is still %s", first.BlobKey)
		}
		feed, err := w.svc.UpdateFeed(w.ctx, newID, newToken)
		if err != nil {
			t.Fatal(err)
		}
		ans, err := w.svc.UpdateCheck(w.ctx, feed, checkQuery(up.ChromeID, "0.0.1"))
		if err != nil {
			t.Fatal(err)
		}
		if cb := parseGupdate(t, ans).Apps[0].UpdateCheck.Codebase; !strings.HasPrefix(cb, rotated.UpdateURL+"/crx/") {
			t.Errorf("after rotation the codebase is %q, want under %s/crx/", cb, rotated.UpdateURL)
		}
		// The other extension is untouched.
		if got, err := w.svc.UpdateFeed(w.ctx, otherID, otherToken); err != nil || got.Extension.ID != other.ID {
			t.Errorf("other extension's feed after a rotation: %v, %v", got, err)
		}
	})
}

// ---------------------------------------------------------------- Sweep

func TestBlackBoxSweep(t *testing.T) {
	w := newBBWorld(t, publish.Config{})
	ext, key := w.extension(betaport.PlanProfessional)
	b := w.submit(key, goodZip(t, "1.0.0"))
	c, err := w.svc.CRX(w.ctx, w.reload(ext), b)
	if err != nil {
		t.Fatal(err)
	}
	zipBytes, crxBytes := w.read(b.BlobKey), w.read(c.BlobKey)

	// Another pipeline has PUT its zip and not signed yet: its upload is
	// live.
	pending, pendingKey := w.extension(betaport.PlanProfessional)
	if err := w.put(w.request(pendingKey), goodZip(t, "7.0.0")); err != nil {
		t.Fatal(err)
	}

	// A pipeline PUTs a zip, then asks again before signing: the first
	// upload is superseded, its bytes dead.
	u2 := w.request(key)
	beforePut := w.keys()
	if err := w.put(u2, goodZip(t, "2.0.0")); err != nil {
		t.Fatal(err)
	}
	before := w.keys()
	var superseded []string
	for k := range before {
		if !beforePut[k] {
			superseded = append(superseded, k)
		}
	}
	if len(superseded) == 0 {
		t.Fatal("a received PUT stored nothing")
	}
	u3 := w.request(key)

	n, err := w.svc.Sweep(w.ctx)
	if err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	if n <= 0 {
		t.Errorf("Sweep removed %d, want > 0 (a superseded upload's zip)", n)
	}
	after := w.keys()
	var removed []string
	for k := range before {
		if !after[k] {
			removed = append(removed, k)
		}
	}
	if len(removed) == 0 {
		t.Errorf("Sweep said %d but storage still holds all of %v", n, before)
	}
	for _, k := range superseded {
		if after[k] {
			t.Errorf("the superseded upload's %s survived the sweep", k)
		}
	}
	if got := w.read(b.BlobKey); !bytes.Equal(got, zipBytes) {
		t.Errorf("published bundle's zip %s did not survive the sweep", b.BlobKey)
	}
	if got := w.read(c.BlobKey); !bytes.Equal(got, crxBytes) {
		t.Errorf("published bundle's CRX %s did not survive the sweep", c.BlobKey)
	}
	w.published(ext, 1, 1)

	// The upload still waiting for its zip is not harmed.
	if err := w.put(u3, goodZip(t, "3.0.0")); err != nil {
		t.Fatalf("PUT to the pending upload after the sweep: %v", err)
	}
	b3, err := w.sign(key)
	if err != nil {
		t.Fatal(err)
	}
	if b3.Number != 2 || b3.Version != "3.0.0" {
		t.Errorf("bundle %d version %s, want 2 version 3.0.0", b3.Number, b3.Version)
	}
	w.published(ext, 2, 2)

	// The other pipeline signs what it PUT before the sweep.
	if bp, err := w.sign(pendingKey); err != nil || bp.Version != "7.0.0" {
		t.Errorf("sign of an upload received before the sweep: %v, %v", bp, err)
	}
	w.published(pending, 1, 1)

	// And again: what is published survives every sweep.
	if _, err := w.svc.Sweep(w.ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{b.BlobKey, c.BlobKey, b3.BlobKey} {
		if ok, err := w.blobs.Exists(w.ctx, k); err != nil || !ok {
			t.Errorf("published blob %s gone after a second sweep (%v)", k, err)
		}
	}
	if _, err := w.svc.CRX(w.ctx, w.reload(ext), b3); err != nil {
		t.Errorf("CRX of bundle 2 after the sweeps: %v", err)
	}
}
