package http_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/crx"
)

// withNotes is call 1's body: the key object and release notes.
func (p *pipeline) withNotes(notes any) map[string]any {
	return map[string]any{"extensionId": p.key.ExtensionID, "apiKey": p.key.APIKey, "releaseNotes": notes}
}

// TestReleaseNotes: notes sent with call 1 reach the published bundle in
// every list testers and admins read; notes that are too long or not text
// are refused before anything changes.
func TestReleaseNotes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	tester, _ := e.testerOf(t, p.ext, betaport.TesterActive)
	testerCookie := e.cookie(t, betaport.Session{TesterID: tester.ID})

	notes := "Fixes the popup on small screens.\n\n- <script>alert(1)</script>\n- [docs](https://example.com)\n" +
		strings.Repeat("é", (betaport.MaxReleaseNotes-100)/2)
	resp, body := e.send(t, "POST", api.PathSubmitUpload, nil, p.withNotes(notes))
	if resp.StatusCode != 200 {
		t.Fatalf("call 1 with notes = %d %s", resp.StatusCode, body)
	}
	var u api.UploadURL
	json.Unmarshal(body, &u)
	if resp, body := p.put(t, u.URL, api.ZipContentType, validZip(t, "1.0.0")); resp.StatusCode != 200 {
		t.Fatalf("call 2 = %d %s", resp.StatusCode, body)
	}
	before := p.served(t)

	// Refused notes leave the upload just received signable.
	for name, bad := range map[string]any{
		"10 KiB and one byte": strings.Repeat("a", betaport.MaxReleaseNotes+1),
		"a NUL":               "fine\x00then not",
		"an escape":           "colour \x1b[31m red",
		"a C1 control":        "next\u0085line",
		"a number":            42,
		"an object":           map[string]string{"text": "hi"},
	} {
		resp, body := e.send(t, "POST", api.PathSubmitUpload, nil, p.withNotes(bad))
		if prob := wantProblem(t, resp, body, http.StatusBadRequest, api.ProblemInvalidNotes); prob.Param != "releaseNotes" {
			t.Errorf("notes with %s: %+v", name, prob)
		}
	}
	// Bytes that are not UTF-8 are refused, not published as U+FFFD.
	raw := json.RawMessage(`{"extensionId": "` + p.key.ExtensionID + `", "apiKey": "` + p.key.APIKey + `", "releaseNotes": "caf` + "\xe9" + `"}`)
	resp, body = e.send(t, "POST", api.PathSubmitUpload, nil, raw)
	wantProblem(t, resp, body, http.StatusBadRequest, api.ProblemInvalidNotes)
	// Sign takes the key object only.
	resp, body = e.send(t, "POST", api.PathSubmitSign, nil, p.withNotes("late"))
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("sign with notes = %d %s, want 400", resp.StatusCode, body)
	}
	p.wantUnchanged(t, before)
	resp, body = p.sign(t)
	if resp.StatusCode != 200 {
		t.Fatalf("sign after refused notes = %d %s: the refused call 1 changed the upload", resp.StatusCode, body)
	}
	var b betaport.Bundle
	json.Unmarshal(body, &b)
	if b.ReleaseNotes != notes {
		t.Fatalf("the published bundle's notes are %.60q…, want what call 1 sent", b.ReleaseNotes)
	}
	for _, read := range []struct {
		path   string
		header http.Header
	}{
		{api.BundlesPath(p.ext.ID) + "?page=0", admin},
		{api.CurrentBundlePath(p.ext.ID), testerCookie},
		{"/api/builds", testerCookie},
	} {
		resp, body := e.do(t, "GET", read.path, read.header)
		want, _ := json.Marshal(notes)
		if resp.StatusCode != 200 || !bytes.Contains(body, want) {
			t.Errorf("GET %s = %d without the notes", read.path, resp.StatusCode)
		}
	}

	// Exactly 10 KiB is taken; a body that is only the key object has no
	// notes, and its bundle shows none.
	if resp, body := e.send(t, "POST", api.PathSubmitUpload, nil, p.withNotes(strings.Repeat("b", betaport.MaxReleaseNotes))); resp.StatusCode != 200 {
		t.Fatalf("call 1 with 10 KiB of notes = %d %s", resp.StatusCode, body)
	}
	plain := p.submitAny(t, validZip(t, "1.0.1"))
	if plain.ReleaseNotes != "" {
		t.Fatalf("a submit without notes published notes %q", plain.ReleaseNotes)
	}
	resp, body = e.do(t, "GET", api.CurrentBundlePath(p.ext.ID), admin)
	if resp.StatusCode != 200 || bytes.Contains(body, []byte("releaseNotes")) {
		t.Fatalf("a bundle without notes: %s", body)
	}
}

// TestReleaseNotesUnderSession: the upload panel's keyless call 1 takes
// notes too.
func TestReleaseNotesUnderSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	body := map[string]any{"extensionId": p.key.ExtensionID, "releaseNotes": "From the panel"}
	resp, data := e.send(t, "POST", api.PathSubmitUpload, admin, body)
	if resp.StatusCode != 200 {
		t.Fatalf("keyless call 1 with notes = %d %s", resp.StatusCode, data)
	}
	var u api.UploadURL
	json.Unmarshal(data, &u)
	p.put(t, u.URL, api.ZipContentType, validZip(t, "2.0.0"))
	resp, data = e.send(t, "POST", api.PathSubmitSign, admin, map[string]any{"extensionId": p.key.ExtensionID})
	var b betaport.Bundle
	json.Unmarshal(data, &b)
	if resp.StatusCode != 200 || b.ReleaseNotes != "From the panel" {
		t.Fatalf("keyless sign = %d %s", resp.StatusCode, data)
	}
}

// TestRollback: an admin makes bundle 1 current again after bundle 2. The
// rollback is bundle 3: bundle 1's bytes under a version above 2's, its
// CRX holds bundle 1's code, the update feed offers it to a copy on bundle
// 2, and repeating or racing the request publishes nothing more.
func TestRollback(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	first := p.submitAny(t, validZip(t, "1.0.0"))
	second := p.submitAny(t, validZip(t, "1.1.0"))
	u := e.updates(t, p.ext, admin)

	path := api.RollbackPath(p.ext.ID, first.Number)
	// Racing requests (a double click, two admins): one rollback.
	const n = 6
	var wg sync.WaitGroup
	statuses := make(chan int, n)
	bodies := make(chan []byte, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, body := e.do(t, "POST", path, e.cookie(t, betaport.Session{UserID: adminID(t, e, admin)}))
			statuses <- resp.StatusCode
			bodies <- body
		}()
	}
	wg.Wait()
	close(statuses)
	close(bodies)
	created := 0
	for s := range statuses {
		switch s {
		case 201:
			created++
		case 200:
		default:
			t.Errorf("a racing rollback answered %d", s)
		}
	}
	if created != 1 {
		t.Fatalf("%d of %d racing rollbacks created a bundle, want 1", created, n)
	}
	var rb betaport.Bundle
	for body := range bodies {
		var b betaport.Bundle
		json.Unmarshal(body, &b)
		if rb.Number != 0 && b.Number != rb.Number {
			t.Fatalf("racing rollbacks answered bundles %d and %d", rb.Number, b.Number)
		}
		rb = b
	}
	if rb.Number != 3 || rb.RollbackOf != first.Number || !rb.Current || rb.SHA256 != first.SHA256 || rb.Size != first.Size {
		t.Fatalf("rollback = %+v, want bundle 3, current, with bundle 1's zip", rb)
	}
	if crx.CompareVersions(rb.Version, second.Version) <= 0 || rb.VersionName != "1.0.0" {
		t.Fatalf("rollback served as %s (%s) after %s: Chrome would not install it", rb.Version, rb.VersionName, second.Version)
	}
	_, oldZip := e.do(t, "GET", api.BundlesPath(p.ext.ID)+"/1/download", admin)
	_, newZip := e.fetchFile(t, "GET", api.BundlesPath(p.ext.ID)+"/3/download", admin)
	_, firstZip := e.fetchFile(t, "GET", api.BundlesPath(p.ext.ID)+"/1/download", admin)
	if !bytes.Equal(newZip, firstZip) || len(newZip) == 0 {
		t.Fatalf("the rollback's zip differs from bundle 1's (%d and %d bytes; %d)", len(newZip), len(firstZip), len(oldZip))
	}
	if keys := e.storedBundleZips(t); keys != 2 {
		t.Errorf("%d bundle zips stored after a rollback of one of 2, want 2: the rollback reuses bundle 1's", keys)
	}
	// The feed offers it to a browser on bundle 2, with bundle 1's code.
	_, g := checkUpdate(t, u.UpdateURL, u.ChromeID, second.Version)
	version, codebase := offered(t, g, u.ChromeID)
	if version != rb.Version {
		t.Fatalf("the update feed offers %q after the rollback, want %s", version, rb.Version)
	}
	_, data := get(t, codebase)
	wantCRX(t, data, u, rb.Version, "1.0.0")
	if code := crxFile(t, data, "background.js"); code != "console.log(1.0.0)" {
		t.Fatalf("the rollback's CRX holds background.js %q, want bundle 1's", code)
	}

	// Again: the same bundle, 200.
	resp, body := e.do(t, "POST", path, admin)
	var again betaport.Bundle
	json.Unmarshal(body, &again)
	if resp.StatusCode != 200 || again.Number != rb.Number {
		t.Fatalf("a repeated rollback = %d %s, want 200 with bundle %d", resp.StatusCode, body, rb.Number)
	}
	// To the current bundle, a missing one, a bad number: refused, nothing new.
	for _, c := range []struct {
		path   string
		status int
		typ    string
	}{
		{api.RollbackPath(p.ext.ID, rb.Number), 409, api.ProblemAlreadyCurrent},
		{api.RollbackPath(p.ext.ID, 99), 404, api.ProblemNotFound},
		{api.BundlesPath(p.ext.ID) + "/0/rollback", 404, api.ProblemNotFound},
		{api.BundlesPath(p.ext.ID) + "/x1/rollback", 404, api.ProblemNotFound},
		// One address per bundle: "01" and "+1" are not bundle 1.
		{api.BundlesPath(p.ext.ID) + "/01/rollback", 404, api.ProblemNotFound},
		{api.BundlesPath(p.ext.ID) + "/+1/rollback", 404, api.ProblemNotFound},
	} {
		resp, body := e.do(t, "POST", c.path, admin)
		wantProblem(t, resp, body, c.status, c.typ)
	}
	// Another extension's bundle number is not this extension's.
	other := newPipeline(t, e, betaport.PlanProfessional)
	other.submitAny(t, validZip(t, "5.0.0"))
	other.submitAny(t, validZip(t, "5.0.1"))
	resp, body = e.do(t, "POST", api.RollbackPath(other.ext.ID, 1), admin)
	wantProblem(t, resp, body, http.StatusNotFound, api.ProblemNotFound)
	if last, _ := e.DB.LastBundleNumber(t.Context(), p.ext.ID); last != 3 {
		t.Fatalf("refused rollbacks published: last bundle %d", last)
	}
	// The audit trail says who.
	resp, body = e.do(t, "GET", api.ExtensionPath(p.ext.ID)+"/audit", admin)
	if !bytes.Contains(body, []byte(betaport.AuditBundleRollback)) || bytes.Count(body, []byte(betaport.AuditBundleRollback)) != 1 {
		t.Fatalf("audit trail after one rollback: %s", body)
	}
}

// adminID is the user id behind an admin's session header.
func adminID(t *testing.T, e *env, admin http.Header) int64 {
	t.Helper()
	resp, body := e.do(t, "GET", "/api/session", admin)
	var s struct {
		User struct {
			ID int64 `json:"id"`
		} `json:"user"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &s) != nil || s.User.ID == 0 {
		t.Fatalf("GET /api/session = %d %s", resp.StatusCode, body)
	}
	return s.User.ID
}

// storedBundleZips counts the zips stored for bundles, on either storage.
func (e *env) storedBundleZips(t *testing.T) int {
	t.Helper()
	n := 0
	it := e.Blobs.List(&blob.ListOptions{Prefix: "bundles/"})
	for {
		obj, err := it.Next(t.Context())
		if err == io.EOF {
			return n
		} else if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(obj.Key, ".zip") {
			n++
		}
	}
}

// crxFile reads one file of a CRX's zip.
func crxFile(t *testing.T, data []byte, name string) string {
	t.Helper()
	f, _ := openCRX(t, data)
	zr, err := zip.NewReader(f.Zip, f.ZipSize)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := zr.Open(name)
	if err != nil {
		t.Fatalf("the CRX has no %s: %v", name, err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return string(b)
}
