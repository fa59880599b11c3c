package http_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/storetest"
)

// pipeline is a customer's CI/CD for one extension.
type pipeline struct {
	e   *env
	ext *betaport.Extension
	key *api.ServiceKey
}

func newPipeline(t *testing.T, e *env, plan string) *pipeline {
	t.Helper()
	team := storetest.MustTeam(t, e.DB, plan)
	ext := storetest.MustExtension(t, e.DB, team, "Tab Tamer")
	return &pipeline{e: e, ext: ext, key: e.key(t, ext)}
}

// makeZip builds an extension zip from name → content.
func makeZip(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func validZip(t testing.TB, version string) []byte {
	return makeZip(t, map[string]string{
		"manifest.json": fmt.Sprintf(`{"manifest_version": 3, "name": "Tab Tamer", "version": %q}`, version),
		"background.js": "console.log(" + version + ")",
	})
}

// requestURL is call 1; it fails the test unless it answers 200.
func (p *pipeline) requestURL(t *testing.T) api.UploadURL {
	t.Helper()
	resp, body := p.e.send(t, "POST", api.PathSubmitUpload, nil, p.key)
	if resp.StatusCode != 200 {
		t.Fatalf("call 1 = %d %s", resp.StatusCode, body)
	}
	var u api.UploadURL
	if err := json.Unmarshal(body, &u); err != nil || !strings.HasPrefix(u.URL, p.e.URL+"/uploads/") || u.ExpiresAt.IsZero() {
		t.Fatalf("call 1 answered %s", body)
	}
	return u
}

// put is call 2.
func (p *pipeline) put(t *testing.T, rawURL, contentType string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("PUT", rawURL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// sign is call 3.
func (p *pipeline) sign(t *testing.T) (*http.Response, []byte) {
	t.Helper()
	return p.e.send(t, "POST", api.PathSubmitSign, nil, p.key)
}

// submit runs the three calls and returns the published bundle.
func (p *pipeline) submit(t *testing.T, zipBytes []byte) betaport.Bundle {
	t.Helper()
	u := p.requestURL(t)
	if resp, body := p.put(t, u.URL, api.ZipContentType, zipBytes); resp.StatusCode != 200 {
		t.Fatalf("call 2 = %d %s", resp.StatusCode, body)
	}
	resp, body := p.sign(t)
	if resp.StatusCode != 200 {
		t.Fatalf("call 3 = %d %s", resp.StatusCode, body)
	}
	var b betaport.Bundle
	json.Unmarshal(body, &b)
	return b
}

// served is what testers get: the current bundle's number and bytes.
type served struct {
	number int64
	bytes  string
}

func (p *pipeline) served(t *testing.T) served {
	t.Helper()
	ext, err := p.e.DB.FindExtension(context.Background(), p.ext.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ext.CurrentBundle == 0 {
		return served{}
	}
	b, err := p.e.DB.FindBundle(context.Background(), ext.ID, ext.CurrentBundle)
	if err != nil {
		t.Fatal(err)
	}
	data, err := p.e.Blobs.ReadAll(context.Background(), b.BlobKey)
	if err != nil {
		t.Fatal(err)
	}
	return served{ext.CurrentBundle, string(data)}
}

func (p *pipeline) wantUnchanged(t *testing.T, before served) {
	t.Helper()
	if after := p.served(t); after != before {
		t.Fatalf("what testers get changed: bundle %d → %d", before.number, after.number)
	}
}

// storedUploads lists the zips kept for uploads, and any temporary files.
func (e *env) storedUploads(t *testing.T) []string {
	t.Helper()
	var files []string
	filepath.WalkDir(filepath.Join(e.Dir, "blobs"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(path, "/bundles/") && !strings.HasSuffix(path, ".attrs") {
			files = append(files, strings.TrimPrefix(path, e.Dir))
		}
		return nil
	})
	return files
}

func TestSubmitHappyPath(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, &betaport.Team{ID: p.ext.TeamID})
	zipBytes := validZip(t, "1.2.3")

	b := p.submit(t, zipBytes)
	sum := sha256.Sum256(zipBytes)
	if b.Number != 1 || b.Version != "1.2.3" || b.Name != "Tab Tamer" || b.ManifestVersion != 3 ||
		b.SHA256 != hex.EncodeToString(sum[:]) || b.Size != int64(len(zipBytes)) || b.FileCount != 2 || !b.Current || b.Source != "upload" {
		t.Fatalf("published bundle = %+v", b)
	}
	// Testers now get it: the record, and the same bytes with the SHA-256 as ETag.
	resp, body := e.do(t, "GET", api.CurrentBundlePath(p.ext.ID), admin)
	var cur betaport.Bundle
	if json.Unmarshal(body, &cur); resp.StatusCode != 200 || cur.Number != 1 {
		t.Fatalf("current bundle = %d %s", resp.StatusCode, body)
	}
	resp, body = e.do(t, "GET", api.CurrentBundlePath(p.ext.ID)+"/download", admin)
	if resp.StatusCode != 200 || !bytes.Equal(body, zipBytes) || resp.Header.Get("ETag") != `"`+b.SHA256+`"` ||
		!strings.Contains(resp.Header.Get("Content-Disposition"), `filename="Tab-Tamer-1.2.3.zip"`) {
		t.Fatalf("download = %d, %d bytes, headers %v", resp.StatusCode, len(body), resp.Header)
	}
	// A resumed download gets the rest.
	resp, body = e.do(t, "GET", api.BundlesPath(p.ext.ID)+"/1/download", http.Header{"Cookie": admin["Cookie"], "Range": {"bytes=10-"}})
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, zipBytes[10:]) {
		t.Fatalf("range download = %d, %d bytes", resp.StatusCode, len(body))
	}

	b2 := p.submit(t, validZip(t, "1.2.4"))
	if b2.Number != 2 || p.served(t).number != 2 {
		t.Fatalf("second submit published %d, serving %d", b2.Number, p.served(t).number)
	}
	// The upload's own copy is gone once published bundles are stored.
	if n, _ := e.App.Publish.Sweep(context.Background()); n != 0 {
		t.Fatalf("sweep removed %d uploads after clean publishes", n)
	}
}

func TestSubmitNormalisesTopFolder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	b := p.submit(t, makeZip(t, map[string]string{
		"dist/manifest.json": `{"manifest_version": 2, "name": "Tab Tamer", "version": "2.0"}`,
		"dist/js/app.js":     "1",
	}))
	data := p.served(t).bytes
	zr, err := zip.NewReader(strings.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	sum := sha256.Sum256([]byte(data))
	if strings.Join(names, ",") != "manifest.json,js/app.js" && strings.Join(names, ",") != "js/app.js,manifest.json" {
		t.Fatalf("served zip has %v, want the top folder removed", names)
	}
	if b.SHA256 != hex.EncodeToString(sum[:]) || b.Size != int64(len(data)) || b.ManifestVersion != 2 {
		t.Fatalf("bundle %+v does not describe the served (normalised) bytes", b)
	}
}

// Calls 1 and 3 share their authentication; every row leaves testers'
// bundle as it was.
func TestSubmitKeyCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	p.submit(t, validZip(t, "1.0"))
	starter := newPipeline(t, e, betaport.PlanStarter)
	rotated := *p.key
	before := p.served(t)

	json := func(s string) func() (string, []byte) {
		return func() (string, []byte) { return "application/json", []byte(s) }
	}
	obj := func(v any) func() (string, []byte) {
		return func() (string, []byte) { b, _ := jsonMarshal(v); return "application/json", b }
	}
	tests := []struct {
		name   string
		body   func() (string, []byte)
		status int
		typ    string
		param  string
		detail string
	}{
		{"not JSON", json("extensionId=1"), 400, api.ProblemBadRequest, "", ""},
		{"empty", json(""), 400, api.ProblemBadRequest, "", ""},
		{"whole key file", obj(api.KeyFile{Service: *p.key}), 400, api.ProblemBadRequest, "service", `object under "service"`},
		{"no extensionId", obj(map[string]string{"apiKey": "x"}), 400, api.ProblemBadRequest, "extensionId", "extensionId"},
		{"no apiKey", obj(map[string]string{"extensionId": p.key.ExtensionID}), 400, api.ProblemBadRequest, "apiKey", "apiKey"},
		{"unknown extension", obj(api.ServiceKey{ExtensionID: "99999", APIKey: p.key.APIKey}), 401, api.ProblemInvalidKey, "", ""},
		{"wrong key", obj(api.ServiceKey{ExtensionID: p.key.ExtensionID, APIKey: "guess"}), 401, api.ProblemInvalidKey, "", ""},
		{"rotated key", obj(&rotated), 401, api.ProblemInvalidKey, "", ""},
		{"not Professional", obj(starter.key), 403, api.ProblemPlanRequired, "", "Professional plan"},
		{"wrong content type", func() (string, []byte) { b, _ := jsonMarshal(p.key); return "text/plain", b }, 415, api.ProblemUnsupportedMedia, "", ""},
		{"JSON in latin1", func() (string, []byte) { b, _ := jsonMarshal(p.key); return "application/json; charset=latin1", b }, 415, api.ProblemUnsupportedMedia, "", "UTF-8"},
		{"over 64 KiB", func() (string, []byte) {
			b, _ := jsonMarshal(map[string]string{"extensionId": p.key.ExtensionID, "apiKey": p.key.APIKey, "pad": strings.Repeat("x", 70<<10)})
			return "application/json", b
		}, 413, api.ProblemTooLarge, "", ""},
	}
	// Rotate p's key: the copy taken above is now the old one.
	p.key = &api.ServiceKey{ExtensionID: p.key.ExtensionID, APIKey: p.key.APIKey + "-rotated"}
	storetest.RevokeKeys(t, e.DB, p.ext.ID)
	storetest.MustKey(t, e.DB, p.ext.ID, "Rotated", p.key.APIKey)

	var unauthorized []string
	for _, path := range []string{api.PathSubmitUpload, api.PathSubmitSign} {
		for _, tt := range tests {
			t.Run(path+"/"+tt.name, func(t *testing.T) {
				ct, body := tt.body()
				req, _ := http.NewRequest("POST", e.URL+path, bytes.NewReader(body))
				req.Header.Set("Content-Type", ct)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				respBody, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				pr := wantProblem(t, resp, respBody, tt.status, tt.typ)
				if pr.Param != tt.param || !strings.Contains(pr.Detail, tt.detail) {
					t.Fatalf("problem %+v: want param %q and detail with %q", pr, tt.param, tt.detail)
				}
				if tt.status == 401 {
					unauthorized = append(unauthorized, withoutInstance(respBody))
				}
				p.wantUnchanged(t, before)
			})
		}
	}
	for _, u := range unauthorized[1:] {
		if u != unauthorized[0] {
			t.Fatalf("unknown extension, wrong key and rotated key answer differently:\n%s\n%s", unauthorized[0], u)
		}
	}
}

func TestSubmitRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.App.Publish.Config.Burst, e.App.Publish.Config.Every = 2, time.Hour
	p := newPipeline(t, e, betaport.PlanProfessional)
	other := newPipeline(t, e, betaport.PlanProfessional)
	p.requestURL(t)
	p.requestURL(t)
	resp, body := e.send(t, "POST", api.PathSubmitUpload, nil, p.key)
	pr := wantProblem(t, resp, body, 429, api.ProblemTooManyRequests)
	if resp.Header.Get("Retry-After") == "" || pr.RetryAfter < 1 {
		t.Fatalf("429 without Retry-After: %v %+v", resp.Header, pr)
	}
	// The limit is per key: another extension's pipeline is not slowed.
	other.requestURL(t)
}

// A team with one seat submits as often as it likes: seats never limit it.
func TestOneSeatSubmitsTwentyTimes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	if team, _ := e.DB.FindTeam(context.Background(), p.ext.TeamID); team.Seats != 1 {
		t.Fatalf("team has %d seats, want 1", team.Seats)
	}
	for i := 1; i <= 20; i++ {
		if b := p.submit(t, validZip(t, fmt.Sprintf("1.0.%d", i))); b.Number != int64(i) {
			t.Fatalf("submit %d published bundle %d", i, b.Number)
		}
	}
}

func TestUploadPut(t *testing.T) {
	// Not parallel: a cut PUT must leave nothing for a second in a row, which a busy machine can delay.
	e := newEnv(t)
	e.App.Publish.Config.MaxUploadSize = 1 << 20
	clock := time.Now()
	e.App.Publish.Now = func() time.Time { return clock }
	p := newPipeline(t, e, betaport.PlanProfessional)
	zipBytes := validZip(t, "1.0")

	u := p.requestURL(t)
	parsed, _ := url.Parse(u.URL)
	q := parsed.Query()
	tamper := func(f func(q url.Values, path string) string) string {
		q2 := url.Values{}
		for k, v := range q {
			q2[k] = append([]string(nil), v...)
		}
		path := f(q2, parsed.Path)
		return e.URL + path + "?" + q2.Encode()
	}
	foreign := newEnv(t) // another server, another secret
	fp := newPipeline(t, foreign, betaport.PlanProfessional)
	fu := fp.requestURL(t)
	fparsed, _ := url.Parse(fu.URL)

	tests := []struct {
		name, method, url, contentType string
		body                           []byte
		status                         int
		typ                            string
	}{
		{"no signature", "PUT", e.URL + parsed.Path, api.ZipContentType, zipBytes, 403, api.ProblemBadSignature},
		{"tampered signature", "PUT", tamper(func(q url.Values, p string) string { q.Set("signature", flipFirst(q.Get("signature"))); return p }), api.ZipContentType, zipBytes, 403, api.ProblemBadSignature},
		{"tampered expiry", "PUT", tamper(func(q url.Values, p string) string { q.Set("expires", "9999999999"); return p }), api.ZipContentType, zipBytes, 403, api.ProblemBadSignature},
		{"another upload's path", "PUT", tamper(func(q url.Values, p string) string { return p + "0" }), api.ZipContentType, zipBytes, 403, api.ProblemBadSignature},
		{"another server's URL", "PUT", e.URL + fparsed.Path + "?" + fparsed.RawQuery, api.ZipContentType, zipBytes, 403, api.ProblemBadSignature},
		{"GET", "GET", u.URL, "", nil, 405, api.ProblemMethodNotAllowed},
		{"POST", "POST", u.URL, api.ZipContentType, zipBytes, 405, api.ProblemMethodNotAllowed},
		{"wrong content type", "PUT", u.URL, "application/octet-stream", zipBytes, 415, api.ProblemUnsupportedMedia},
		{"no content type", "PUT", u.URL, "", zipBytes, 415, api.ProblemUnsupportedMedia},
		{"not a zip", "PUT", u.URL, api.ZipContentType, []byte("%PDF-1.7 not a zip"), 422, api.ProblemNotAZip},
		{"empty", "PUT", u.URL, api.ZipContentType, nil, 422, api.ProblemNotAZip},
		{"over the size limit", "PUT", u.URL, api.ZipContentType, append([]byte("PK\x03\x04"), make([]byte, 1<<20)...), 413, api.ProblemTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, tt.url, bytes.NewReader(tt.body))
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			wantProblem(t, resp, body, tt.status, tt.typ)
			if got := e.storedUploads(t); len(got) != 0 {
				t.Fatalf("a refused PUT left %v behind", got)
			}
			if up, _ := e.DB.FindUpload(context.Background(), u.UploadID); up.State != betaport.UploadRequested {
				t.Fatalf("a refused PUT moved the upload to %s", up.State)
			}
		})
	}

	t.Run("over the size limit, streamed without a length", func(t *testing.T) {
		big := io.MultiReader(strings.NewReader("PK\x03\x04"), bytes.NewReader(make([]byte, 2<<20)))
		req, _ := http.NewRequest("PUT", u.URL, io.NopCloser(big)) // no ContentLength: chunked
		req.Header.Set("Content-Type", api.ZipContentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		wantProblem(t, resp, body, 413, api.ProblemTooLarge)
		if got := e.storedUploads(t); len(got) != 0 {
			t.Fatalf("an aborted PUT left %v behind", got)
		}
	})

	t.Run("client disconnects mid-body", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(e.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "PUT %s?%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/zip\r\nContent-Length: 500000\r\n\r\n", parsed.Path, parsed.RawQuery)
		conn.Write(append([]byte("PK\x03\x04"), make([]byte, 100_000)...))
		conn.Close()
		// The server notices the cut, aborts the write and keeps nothing;
		// wait for it to be done, then check. On a busy machine the server
		// may not have started the write yet when the client is gone:
		// "nothing stored" must hold for a second in a row.
		deadline := time.Now().Add(10 * time.Second)
		var emptySince time.Time
		for ; time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if len(e.storedUploads(t)) != 0 {
				emptySince = time.Time{}
				continue
			}
			if emptySince.IsZero() {
				emptySince = time.Now()
			} else if time.Since(emptySince) > time.Second {
				break
			}
		}
		if got := e.storedUploads(t); len(got) != 0 {
			t.Fatalf("a cut PUT left %v behind", got)
		}
		if up, _ := e.DB.FindUpload(context.Background(), u.UploadID); up.State != betaport.UploadRequested {
			t.Fatalf("after a cut PUT the upload is %s, want still requested", up.State)
		}
	})

	t.Run("a retried PUT replaces the earlier bytes", func(t *testing.T) {
		first, second := validZip(t, "1.0"), validZip(t, "2.0")
		for _, z := range [][]byte{first, second} {
			if resp, body := p.put(t, u.URL, api.ZipContentType, z); resp.StatusCode != 200 {
				t.Fatalf("PUT = %d %s", resp.StatusCode, body)
			}
		}
		up, _ := e.DB.FindUpload(context.Background(), u.UploadID)
		sum := sha256.Sum256(second)
		if up.State != betaport.UploadReceived || up.SHA256 != hex.EncodeToString(sum[:]) || up.Size != int64(len(second)) {
			t.Fatalf("upload after two PUTs = %+v, want the second zip", up)
		}
	})

	t.Run("PUT after publish", func(t *testing.T) {
		if resp, body := p.sign(t); resp.StatusCode != 200 {
			t.Fatalf("sign = %d %s", resp.StatusCode, body)
		}
		before := p.served(t)
		resp, body := p.put(t, u.URL, api.ZipContentType, validZip(t, "3.0"))
		wantProblem(t, resp, body, 409, api.ProblemAlreadyDone)
		p.wantUnchanged(t, before)
	})

	t.Run("expired URL", func(t *testing.T) {
		u2 := p.requestURL(t)
		clock = clock.Add(16 * time.Minute)
		defer func() { clock = clock.Add(-16 * time.Minute) }()
		resp, body := p.put(t, u2.URL, api.ZipContentType, zipBytes)
		wantProblem(t, resp, body, 403, api.ProblemURLExpired)
	})

	t.Run("PUT to a superseded upload", func(t *testing.T) {
		old := p.requestURL(t)
		p.requestURL(t)
		resp, body := p.put(t, old.URL, api.ZipContentType, zipBytes)
		wantProblem(t, resp, body, 409, api.ProblemAlreadyDone)
	})
}

func TestSign(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clock := time.Now()
	e.App.Publish.Now = func() time.Time { return clock }
	p := newPipeline(t, e, betaport.PlanProfessional)

	resp, body := p.sign(t)
	wantProblem(t, resp, body, 409, api.ProblemNoUpload)

	first := p.submit(t, validZip(t, "1.0"))
	before := p.served(t)

	u := p.requestURL(t)
	resp, body = p.sign(t)
	pr := wantProblem(t, resp, body, 409, api.ProblemZipNotReceived)
	if !strings.Contains(pr.Detail, "has not arrived") {
		t.Fatalf("detail %q", pr.Detail)
	}

	bad := makeZip(t, map[string]string{
		"../evil.js":   "x",
		"src/index.js": "y",
	})
	if resp, body := p.put(t, u.URL, api.ZipContentType, bad); resp.StatusCode != 200 {
		t.Fatalf("PUT = %d %s", resp.StatusCode, body)
	}
	resp, body = p.sign(t)
	pr = wantProblem(t, resp, body, 422, api.ProblemInvalidZip)
	codes := map[string]string{}
	for _, zp := range pr.Problems {
		codes[zp.Code] = zp.Path
	}
	if codes["path_traversal"] != "../evil.js" || len(pr.Problems) < 2 {
		t.Fatalf("problems = %+v, want every problem, the traversal among them", pr.Problems)
	}
	if _, ok := codes["manifest_missing"]; !ok {
		t.Fatalf("problems = %+v, want manifest_missing too", pr.Problems)
	}
	p.wantUnchanged(t, before)
	if up, _ := e.DB.FindUpload(context.Background(), u.UploadID); up.State != betaport.UploadRejected {
		t.Fatalf("rejected upload is %s", up.State)
	}
	// A retried sign of a rejected upload says the same.
	resp, body2 := p.sign(t)
	if resp.StatusCode != 422 || withoutInstance(body2) != withoutInstance(body) {
		t.Fatalf("retried sign of a rejected upload = %d %s", resp.StatusCode, body2)
	}

	// A retried sign of a published upload answers the same bundle.
	second := p.submit(t, validZip(t, "1.1"))
	resp, body = p.sign(t)
	var again betaport.Bundle
	json.Unmarshal(body, &again)
	if resp.StatusCode != 200 || again.Number != second.Number || again.SHA256 != second.SHA256 {
		t.Fatalf("retried sign = %d %s, want bundle %d again", resp.StatusCode, body, second.Number)
	}
	if n, _ := storetest.CountBundles(context.Background(), e.DB, p.ext.ID); n != 2 || first.Number != 1 {
		t.Fatalf("%d bundles after a retried sign, want 2", n)
	}

	// An upload whose URL expired before its zip came is gone.
	p.requestURL(t)
	clock = clock.Add(16 * time.Minute)
	before = p.served(t)
	resp, body = p.sign(t)
	wantProblem(t, resp, body, 410, api.ProblemUploadExpired)
	p.wantUnchanged(t, before)
}

func TestSweeperRemovesDeadUploads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clock := time.Now()
	e.App.Publish.Now = func() time.Time { return clock }
	p := newPipeline(t, e, betaport.PlanProfessional)

	rejected := p.requestURL(t)
	p.put(t, rejected.URL, api.ZipContentType, makeZip(t, map[string]string{"a.js": "1"}))
	p.sign(t)
	superseded := p.requestURL(t)
	p.put(t, superseded.URL, api.ZipContentType, validZip(t, "1.0"))
	p.submit(t, validZip(t, "1.1"))
	expired := p.requestURL(t)
	clock = clock.Add(time.Hour)

	// A published upload's zip is removed at publish: the bundle has its
	// own copy.
	if got := len(e.storedUploads(t)); got != 2 {
		t.Fatalf("before the sweep %d upload zips are stored, want 2 (rejected, superseded)", got)
	}
	n, err := e.App.Publish.Sweep(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("Sweep = %d, %v; want 2 zips removed (rejected, superseded; the expired upload has none)", n, err)
	}
	if up, _ := e.DB.FindUpload(context.Background(), expired.UploadID); up.State != betaport.UploadExpired {
		t.Fatalf("the expired upload is %s", up.State)
	}
	if got := e.storedUploads(t); len(got) != 0 {
		t.Fatalf("after the sweep %v remain, want none", got)
	}
	if p.served(t).number != 1 {
		t.Fatal("the sweep touched the published bundle")
	}
	if n, _ := e.App.Publish.Sweep(context.Background()); n != 0 {
		t.Fatalf("a second sweep found %d", n)
	}
}

// Two pipelines race on one extension: every publish takes its own number.
// (Signs racing on one upload: TestSubmitOnAnyStorageRaces, on every
// storage.)
func TestSubmitRaces(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.App.Publish.Config.Burst = 1000
	p := newPipeline(t, e, betaport.PlanProfessional)
	p.submit(t, validZip(t, "1.0"))
	var wg sync.WaitGroup

	// Two pipelines, each running the whole flow 10 times.
	published := make(chan int64, 20)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				up := p.requestURL(t)
				p.put(t, up.URL, api.ZipContentType, validZip(t, fmt.Sprintf("%d.%d", w+2, i)))
				resp, body := p.sign(t)
				switch resp.StatusCode {
				case 200:
					var b betaport.Bundle
					json.Unmarshal(body, &b)
					published <- b.Number
				case 409:
					// The other pipeline asked for a newer URL in between:
					// ours was superseded, as the contract says.
				default:
					t.Errorf("racing pipeline: sign = %d %s", resp.StatusCode, body)
				}
			}
		}()
	}
	wg.Wait()
	close(published)
	// Sign finalises the extension's latest upload, whoever asked for it,
	// so both pipelines may be answered the same bundle; what must hold is
	// that each published bundle exists once, numbered without gaps.
	seen := map[int64]bool{}
	for n := range published {
		seen[n] = true
	}
	count, _ := storetest.CountBundles(context.Background(), e.DB, p.ext.ID)
	if count < 2 || int64(len(seen)) != count-1 {
		t.Fatalf("%d bundles, %d distinct answered by the racing signs (plus bundle 1 from before)", count, len(seen))
	}
	for n := int64(1); n <= count; n++ {
		if _, err := e.DB.FindBundle(context.Background(), p.ext.ID, n); err != nil {
			t.Fatalf("bundle numbers have a gap at %d: %v", n, err)
		}
	}
}

// An extension has several named keys: each works until it is revoked,
// revoking one leaves the others, and its use is recorded.
func TestNamedKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "E")
	admin := e.adminOf(t, team)
	var created []api.CreatedKey
	for _, label := range []string{"GitHub Actions", "release laptop"} {
		resp, body := e.send(t, "POST", api.KeysPath(ext.ID), admin, api.NewKey{Label: label})
		var ck api.CreatedKey
		if json.Unmarshal(body, &ck); resp.StatusCode != 201 || ck.KeyFile.Service.APIKey == "" ||
			ck.KeyFile.Service.ExtensionID != fmt.Sprint(ext.ID) || ck.Key.Label != label || ck.Key.ID == 0 {
			t.Fatalf("create %q = %d %s", label, resp.StatusCode, body)
		}
		if resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("a key's secret may be cached: %v", resp.Header)
		}
		created = append(created, ck)
	}
	for _, ck := range created {
		if resp, body := e.send(t, "POST", api.PathSubmitUpload, nil, ck.KeyFile.Service); resp.StatusCode != 200 {
			t.Fatalf("key %q = %d %s", ck.Key.Label, resp.StatusCode, body)
		}
	}
	// A label is required and has a length.
	for _, bad := range []api.NewKey{{Label: " "}, {Label: strings.Repeat("k", betaport.MaxKeyLabel+1)}} {
		resp, body := e.send(t, "POST", api.KeysPath(ext.ID), admin, bad)
		wantProblem(t, resp, body, 400, api.ProblemBadRequest)
	}

	// The list: newest first, with who made each, and when it was used.
	resp, body := e.do(t, "GET", api.KeysPath(ext.ID), admin)
	var page api.Page[betaport.Key]
	if json.Unmarshal(body, &page); resp.StatusCode != 200 || len(page.Data) != 2 || page.Data[0].Label != "release laptop" {
		t.Fatalf("keys = %d %s", resp.StatusCode, body)
	}
	for _, k := range page.Data {
		if k.CreatedBy == "" || k.LastUsedAt == nil {
			t.Errorf("listed key %+v: want who made it and its last use", k)
		}
	}
	if strings.Contains(string(body), created[0].KeyFile.Service.APIKey) {
		t.Fatal("the key list shows a secret")
	}

	// Revoke the first: it is refused at once, the second still works.
	resp, body = e.do(t, "DELETE", api.KeyPath(ext.ID, created[0].Key.ID), admin)
	if resp.StatusCode != 200 {
		t.Fatalf("revoke = %d %s", resp.StatusCode, body)
	}
	resp, body = e.send(t, "POST", api.PathSubmitUpload, nil, created[0].KeyFile.Service)
	wantProblem(t, resp, body, 401, api.ProblemInvalidKey)
	if resp, body := e.send(t, "POST", api.PathSubmitUpload, nil, created[1].KeyFile.Service); resp.StatusCode != 200 {
		t.Fatalf("the other key after a revoke = %d %s", resp.StatusCode, body)
	}
	// Another extension's key id is not found through this extension.
	other := storetest.MustExtension(t, e.DB, team, "Other")
	resp, body = e.do(t, "DELETE", api.KeyPath(other.ID, created[1].Key.ID), admin)
	wantProblem(t, resp, body, 404, api.ProblemNotFound)
	// Only a hash is stored.
	if _, err := e.DB.FindKeyByHash(context.Background(), created[1].KeyFile.Service.APIKey); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatal("the key is stored as it is")
	}

	// The audit trail says who did it.
	resp, body = e.do(t, "GET", api.AuditPath(ext.ID)+"?limit=2", admin)
	var audit api.Page[betaport.AuditEvent]
	if json.Unmarshal(body, &audit); resp.StatusCode != 200 || len(audit.Data) != 2 || audit.NextCursor == "" ||
		audit.Data[0].Action != betaport.AuditKeyRevoked || audit.Data[0].Subject != "GitHub Actions" || !strings.HasPrefix(audit.Data[0].Actor, "admin") {
		t.Fatalf("audit = %d %s", resp.StatusCode, body)
	}
	resp, body = e.do(t, "GET", api.AuditPath(ext.ID)+"?limit=2&cursor="+audit.NextCursor, admin)
	if json.Unmarshal(body, &audit); resp.StatusCode != 200 || len(audit.Data) != 1 || audit.Data[0].Action != betaport.AuditKeyCreated {
		t.Fatalf("audit page 2 = %d %s", resp.StatusCode, body)
	}
}

// A 200 MiB zip streams through the PUT to storage: the server's heap grows
// by far less than the zip, which is never held whole in memory.
func TestLargeZipStreams(t *testing.T) {
	// Not parallel: it measures the heap, which other tests would grow.
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	u := p.requestURL(t)

	const entries, entrySize = 10, 20 << 20 // 200 MiB of incompressible data, stored
	pr, pw := io.Pipe()
	sum := sha256.New()
	go func() {
		zw := zip.NewWriter(io.MultiWriter(pw, sum))
		w, _ := zw.Create("manifest.json")
		io.WriteString(w, `{"manifest_version": 3, "name": "Big", "version": "1.0"}`)
		rng := rand.NewChaCha8([32]byte{1})
		for i := range entries {
			w, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("assets/%d.bin", i), Method: zip.Store})
			if err != nil {
				pw.CloseWithError(err)
				return
			}
			if _, err := io.CopyN(w, rng, entrySize); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(zw.Close())
	}()

	req, _ := http.NewRequest("PUT", u.URL, pr)
	req.Header.Set("Content-Type", api.ZipContentType)
	var resp *http.Response
	var err error
	growth := heapGrowth(func() { resp, err = http.DefaultClient.Do(req) })
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("PUT of 200 MiB = %d %s", resp.StatusCode, body)
	}
	const zipSize = entries * entrySize
	t.Logf("heap grew by %.1f MiB while a %d MiB zip streamed through", float64(growth)/(1<<20), zipSize>>20)
	if growth > zipSize/8 {
		t.Fatalf("the heap grew by %d MiB for a %d MiB zip: the upload is being held in memory", growth>>20, zipSize>>20)
	}
	// Sign checks the zip and packs, signs and stores its CRX.
	growth = heapGrowth(func() { resp, body = p.sign(t) })
	t.Logf("heap grew by %.1f MiB while the %d MiB zip was signed as a CRX", float64(growth)/(1<<20), zipSize>>20)
	if growth > zipSize/8 {
		t.Fatalf("the heap grew by %d MiB signing a %d MiB zip: the CRX is being built in memory", growth>>20, zipSize>>20)
	}
	var b betaport.Bundle
	json.Unmarshal(body, &b)
	if resp.StatusCode != 200 || b.SHA256 != hex.EncodeToString(sum.Sum(nil)) || b.Size < zipSize || b.FileCount != entries+1 {
		t.Fatalf("sign of the large zip = %d %s", resp.StatusCode, body)
	}
}

// flipFirst changes the first character of a signature (to another one, so
// the tampering never leaves it as it was).
func flipFirst(sig string) string {
	if sig[0] == 'A' {
		return "B" + sig[1:]
	}
	return "A" + sig[1:]
}

// heapGrowth runs f and returns how far the heap grew above where it
// started, sampled every 10 ms.
func heapGrowth(f func()) int64 {
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	peak := base.HeapAlloc
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapAlloc)
			}
		}
	}()
	f()
	close(stop)
	<-sampled
	return int64(peak) - int64(base.HeapAlloc)
}

// TestRefusedKeyCallsLeaveLastUsed: a call 1 or 3 the service refuses
// (release notes it cannot keep, a sign with nothing uploaded) leaves the
// key's "last used" as it was, as a refused request leaves everything; a
// call that succeeds records it.
func TestRefusedKeyCallsLeaveLastUsed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "E")
	admin := e.adminOf(t, team)
	resp, body := e.send(t, "POST", api.KeysPath(ext.ID), admin, api.NewKey{Label: "ci"})
	var ck api.CreatedKey
	if json.Unmarshal(body, &ck); resp.StatusCode != 201 {
		t.Fatalf("create key = %d %s", resp.StatusCode, body)
	}
	lastUsed := func() *time.Time {
		t.Helper()
		resp, body := e.do(t, "GET", api.KeysPath(ext.ID), admin)
		var page api.Page[betaport.Key]
		if json.Unmarshal(body, &page); resp.StatusCode != 200 || len(page.Data) != 1 {
			t.Fatalf("keys = %d %s", resp.StatusCode, body)
		}
		return page.Data[0].LastUsedAt
	}
	svc := ck.KeyFile.Service
	badNotes := map[string]any{"extensionId": svc.ExtensionID, "apiKey": svc.APIKey, "releaseNotes": "a\u0007b"}
	resp, body = e.send(t, "POST", api.PathSubmitUpload, nil, badNotes)
	wantProblem(t, resp, body, 400, api.ProblemInvalidNotes)
	resp, body = e.send(t, "POST", api.PathSubmitSign, nil, svc)
	if resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Fatalf("sign with nothing uploaded = %d %s, want a refusal", resp.StatusCode, body)
	}
	if at := lastUsed(); at != nil {
		t.Fatalf("two refused calls recorded the key as used at %v", at)
	}
	if resp, body := e.send(t, "POST", api.PathSubmitUpload, nil, svc); resp.StatusCode != 200 {
		t.Fatalf("call 1 = %d %s", resp.StatusCode, body)
	}
	if lastUsed() == nil {
		t.Fatal("a call 1 that succeeded did not record the key as used")
	}
}

// TestQueryOnceAndBodiesInUTF8: an API query that gives a parameter
// twice (which one was meant?) or text that is not UTF-8 is refused with a
// 400 naming it, before anything else is looked at; the same list with one
// value, UTF-8 text included, answers.
func TestQueryOnceAndBodiesInUTF8(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "E")
	admin := e.adminOf(t, team)
	testers := fmt.Sprintf("/api/extensions/%d/testers", ext.ID)
	for _, c := range []struct{ query, param string }{
		{"?limit=1&limit=2", "limit"},
		{"?q=ann&status=active&q=bob", "q"},
		{"?q=%FF%FE", "q"},
		{"?status=active;limit=2", "status"},
	} {
		resp, body := e.do(t, "GET", testers+c.query, admin)
		wantProblem(t, resp, body, 400, api.ProblemBadRequest)
		var p api.Problem
		if json.Unmarshal(body, &p); p.Param != c.param {
			t.Errorf("GET %s names %q, want %q: %s", c.query, p.Param, c.param, body)
		}
	}
	for _, path := range []string{fmt.Sprintf("/api/extensions/%d/bundles?limit=1&limit=1", ext.ID), "/api/builds?limit=5&limit=6"} {
		resp, body := e.do(t, "GET", path, admin)
		wantProblem(t, resp, body, 400, api.ProblemBadRequest)
	}
	// Signed out, the query is refused first: it says what to fix.
	resp, body := e.do(t, "GET", testers+"?limit=1&limit=2", nil)
	wantProblem(t, resp, body, 400, api.ProblemBadRequest)
	// JSON is UTF-8, and may say so.
	for ct, want := range map[string]int{"application/json; charset=UTF-8": 201, "application/json;charset=utf-8": 201, "application/json; charset=iso-8859-1": 415} {
		header := admin.Clone()
		header.Set("Content-Type", ct) // send's own JSON Content-Type, declared otherwise
		resp, body := e.send(t, "POST", api.KeysPath(ext.ID), header, api.NewKey{Label: "ci " + ct})
		if resp.StatusCode != want {
			t.Errorf("a new key sent as %s = %d %s, want %d", ct, resp.StatusCode, body, want)
		}
	}
	for _, query := range []string{"?limit=2", "?q=caf%C3%A9", ""} {
		if resp, body := e.do(t, "GET", testers+query, admin); resp.StatusCode != 200 {
			t.Errorf("GET %s = %d %s", query, resp.StatusCode, body)
		}
	}
}
