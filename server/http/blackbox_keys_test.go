package http_test

// Black-box tests of issue 18, "Keys and testers the way teams work",
// written from the design, the wire package's documentation and the pages
// as a person meets them, not from the implementation: named keys and
// their audit trail, the keyless upload of a signed-in admin, testers
// restored and re-invited, a revoked tester told their access ended, and
// the command line's key commands and manners.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/storetest"
)

// bbkWorld is one Professional team with an extension and a signed-in
// admin whose e-mail is known (the audit trail names them).
type bbkWorld struct {
	e          *env
	team       *betaport.Team
	ext        *betaport.Extension
	admin      http.Header
	adminEmail string
}

func bbkNewWorld(t *testing.T) *bbkWorld {
	t.Helper()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Tab Tamer")
	email, admin := bbkSignIn(t, e, team)
	return &bbkWorld{e: e, team: team, ext: ext, admin: admin, adminEmail: email}
}

// bbkSignIn makes an admin of team and signs them in through the API, as
// the sign-in page does.
// bbkPasswordHash is the hash of bbkSignIn's admins' password, made once
// (an argon2id hash costs a good part of a second under -race); each admin
// still signs in with the password, through the API.
var bbkPasswordHash = sync.OnceValue(func() string { return credential.HashPassword("a long bbk password") })

func bbkSignIn(t *testing.T, e *env, team *betaport.Team) (string, http.Header) {
	t.Helper()
	email := uniqueEmail("bbk-admin")
	if err := e.DB.CreateUser(context.Background(), &betaport.User{TeamID: team.ID, Email: email}, bbkPasswordHash()); err != nil {
		t.Fatal(err)
	}
	resp, body := e.send(t, "POST", api.PathSession, nil, api.SignIn{Email: email, Password: "a long bbk password"})
	if resp.StatusCode != 200 {
		t.Fatalf("signing in as %s = %d %s", email, resp.StatusCode, body)
	}
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie && c.Value != "" {
			return email, http.Header{"Cookie": {c.Name + "=" + c.Value}}
		}
	}
	t.Fatalf("signing in set no session cookie: %v", resp.Header["Set-Cookie"])
	return "", nil
}

func bbkWith(h http.Header, kv ...string) http.Header {
	h = h.Clone()
	if h == nil {
		h = http.Header{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// bbkRaw sends body as it is, with the content type given.
func bbkRaw(t *testing.T, e *env, method, path string, header http.Header, contentType, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept-Encoding", "identity")
	return e.roundTrip(t, req)
}

// bbkProblem is wantProblem that reports instead of stopping, for tables.
func bbkProblem(t *testing.T, what string, resp *http.Response, body []byte, status int, typ string) (api.Problem, bool) {
	t.Helper()
	var p api.Problem
	if resp.StatusCode != status {
		t.Errorf("%s: status %d, want %d; body %.300s", what, resp.StatusCode, status, body)
		return p, false
	}
	if ct := resp.Header.Get("Content-Type"); ct != api.ProblemContentType {
		t.Errorf("%s: Content-Type %q, want %q; body %.300s", what, ct, api.ProblemContentType, body)
		return p, false
	}
	if err := json.Unmarshal(body, &p); err != nil || p.Status != status || (typ != "" && p.Type != typ) || p.Title == "" || len(p.Detail) < 10 {
		t.Errorf("%s: problem %s, want status %d type %s with a title and a detail", what, body, status, typ)
		return p, false
	}
	return p, true
}

// bbkRefused checks a refusal: a 4xx problem (any of the statuses given),
// never a 5xx nor a success.
func bbkRefused(t *testing.T, what string, resp *http.Response, body []byte, statuses ...int) {
	t.Helper()
	if !slices.Contains(statuses, resp.StatusCode) {
		t.Errorf("%s: status %d, want one of %v; body %.300s", what, resp.StatusCode, statuses, body)
		return
	}
	if ct := resp.Header.Get("Content-Type"); ct != api.ProblemContentType {
		t.Errorf("%s: %d with Content-Type %q, want a problem; body %.300s", what, resp.StatusCode, ct, body)
	}
}

func (w *bbkWorld) createKey(t *testing.T, ext int64, label string) api.CreatedKey {
	t.Helper()
	resp, body := w.e.send(t, "POST", api.KeysPath(ext), w.admin, api.NewKey{Label: label})
	var ck api.CreatedKey
	if resp.StatusCode != 201 || json.Unmarshal(body, &ck) != nil || ck.Key.ID == 0 || ck.KeyFile.Service.APIKey == "" {
		t.Fatalf("creating key %q = %d %s", label, resp.StatusCode, body)
	}
	return ck
}

// bbkKeys reads every page of an extension's keys, limit at a time (0: the
// server's default), and checks what every page must be.
func bbkKeys(t *testing.T, e *env, ext int64, who http.Header, limit int) []betaport.Key {
	t.Helper()
	var all []betaport.Key
	cursor := ""
	for range 200 {
		q := url.Values{}
		if limit > 0 {
			q.Set("limit", strconv.Itoa(limit))
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		path := api.KeysPath(ext)
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
		resp, body := e.do(t, "GET", path, who)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
		}
		var raw struct {
			Data       json.RawMessage `json:"data"`
			NextCursor string          `json:"nextCursor"`
		}
		if err := json.Unmarshal(body, &raw); err != nil || !bytes.HasPrefix(bytes.TrimSpace(raw.Data), []byte("[")) {
			t.Fatalf("GET %s answered %s: want {\"data\": [...]}", path, body)
		}
		if lower := strings.ToLower(string(body)); strings.Contains(lower, "apikey") || strings.Contains(lower, "hash") || strings.Contains(lower, "secret") {
			t.Fatalf("the key list shows a secret or its hash: %s", body)
		}
		var page []betaport.Key
		json.Unmarshal(raw.Data, &page)
		if limit > 0 && len(page) > limit {
			t.Fatalf("GET %s answered %d keys", path, len(page))
		}
		all = append(all, page...)
		if raw.NextCursor == "" {
			return all
		}
		if raw.NextCursor == cursor {
			t.Fatalf("the keys list gives the same cursor again: %q", cursor)
		}
		cursor = raw.NextCursor
	}
	t.Fatal("the keys list never ended")
	return nil
}

func bbkKeyByID(keys []betaport.Key, id int64) (betaport.Key, bool) {
	for _, k := range keys {
		if k.ID == id {
			return k, true
		}
	}
	return betaport.Key{}, false
}

// bbkAudit reads every page of an extension's audit trail.
func bbkAudit(t *testing.T, e *env, ext int64, who http.Header, limit int) []betaport.AuditEvent {
	t.Helper()
	var all []betaport.AuditEvent
	cursor := ""
	for range 500 {
		q := url.Values{}
		if limit > 0 {
			q.Set("limit", strconv.Itoa(limit))
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		path := api.AuditPath(ext)
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
		resp, body := e.do(t, "GET", path, who)
		var page api.Page[betaport.AuditEvent]
		if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil || page.Data == nil {
			t.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
		}
		if limit > 0 && len(page.Data) > limit {
			t.Fatalf("GET %s answered %d events", path, len(page.Data))
		}
		all = append(all, page.Data...)
		if page.NextCursor == "" {
			return all
		}
		if page.NextCursor == cursor {
			t.Fatalf("the audit trail gives the same cursor again: %q", cursor)
		}
		cursor = page.NextCursor
	}
	t.Fatal("the audit trail never ended")
	return nil
}

func bbkAuditLines(events []betaport.AuditEvent) []string {
	lines := make([]string, len(events))
	for i, ev := range events {
		lines[i] = ev.Actor + " " + ev.Action + " " + ev.Subject
	}
	return lines
}

// bbkCall1 is call 1 of the submit flow with body as it is sent.
func bbkCall1(t *testing.T, e *env, header http.Header, body any) (*http.Response, []byte) {
	t.Helper()
	return e.send(t, "POST", api.PathSubmitUpload, header, body)
}

func bbkPut(t *testing.T, rawURL string, zip []byte) {
	t.Helper()
	req, err := http.NewRequest("PUT", rawURL, bytes.NewReader(zip))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", api.ZipContentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("call 2 (PUT) = %d %s", resp.StatusCode, b)
	}
}

// bbkUpload makes calls 1 and 2 with the key object or session body given.
func bbkUpload(t *testing.T, e *env, header http.Header, body any, zip []byte) api.UploadURL {
	t.Helper()
	resp, b := bbkCall1(t, e, header, body)
	var u api.UploadURL
	if resp.StatusCode != 200 || json.Unmarshal(b, &u) != nil || u.URL == "" {
		t.Fatalf("call 1 = %d %s", resp.StatusCode, b)
	}
	bbkPut(t, u.URL, zip)
	return u
}

// bbkCurrent is the number of the bundle testers get, as the API says.
func bbkCurrent(t *testing.T, e *env, ext int64, who http.Header) int64 {
	t.Helper()
	resp, body := e.do(t, "GET", api.CurrentBundlePath(ext), who)
	if resp.StatusCode == 404 {
		return 0
	}
	var b betaport.Bundle
	if resp.StatusCode != 200 || json.Unmarshal(body, &b) != nil {
		t.Fatalf("current bundle = %d %s", resp.StatusCode, body)
	}
	return b.Number
}

func bbkNoUploadIssued(t *testing.T, e *env, ext int64, what string) {
	t.Helper()
	if u, err := e.DB.LatestUpload(context.Background(), ext); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatalf("%s issued an upload URL: %+v %v", what, u, err)
	}
}

// TestBlackBoxKeysNamedKeys: keys made one after the other each work,
// carry their label, maker and times, and are revoked one at a time; a
// new key never touches the others; a retried revoke changes nothing.
func TestBlackBoxKeysNamedKeys(t *testing.T) {
	t.Parallel()
	w := bbkNewWorld(t)
	e := w.e

	if keys := bbkKeys(t, e, w.ext.ID, w.admin, 0); len(keys) != 0 {
		t.Fatalf("a new extension lists keys: %+v", keys)
	}

	before := time.Now().Add(-2 * time.Second)
	resp, body := e.send(t, "POST", api.KeysPath(w.ext.ID), w.admin, api.NewKey{Label: "GitHub Actions"})
	if resp.StatusCode != 201 {
		t.Fatalf("POST keys = %d %s", resp.StatusCode, body)
	}
	// The answer is the key and a key file: the key file, written as it is
	// answered, is one the command line and the upload panel read.
	var shape struct {
		Key     map[string]json.RawMessage `json:"key"`
		KeyFile json.RawMessage            `json:"keyFile"`
	}
	if err := json.Unmarshal(body, &shape); err != nil || shape.Key == nil || shape.KeyFile == nil {
		t.Fatalf("POST keys answered %s: want {\"key\": …, \"keyFile\": …}", body)
	}
	fileKey, bare, err := api.ParseKeyFile(shape.KeyFile)
	if err != nil || bare || fileKey.ExtensionID != strconv.FormatInt(w.ext.ID, 10) || len(fileKey.APIKey) < 20 {
		t.Fatalf("the keyFile answered, %s, is not a key file of extension %d: %+v bare=%v %v", shape.KeyFile, w.ext.ID, fileKey, bare, err)
	}
	if _, ok := shape.Key["apiKey"]; ok {
		t.Errorf("the key record carries its secret: %s", body)
	}
	var gha api.CreatedKey
	json.Unmarshal(body, &gha)
	after := time.Now().Add(2 * time.Second)
	k := gha.Key
	if k.Label != "GitHub Actions" || k.ExtensionID != w.ext.ID || k.CreatedBy != w.adminEmail ||
		k.CreatedAt.Before(before) || k.CreatedAt.After(after) || k.LastUsedAt != nil || k.RevokedAt != nil {
		t.Fatalf("the new key is %+v: want its label, extension %d, made by %s now, never used, not revoked", k, w.ext.ID, w.adminEmail)
	}
	if strings.Contains(string(body), hashKey(fileKey.APIKey)) {
		t.Fatal("the answer carries the stored hash of the key")
	}

	// It works, and its use is recorded.
	if resp, b := bbkCall1(t, e, nil, fileKey); resp.StatusCode != 200 {
		t.Fatalf("call 1 with the new key = %d %s", resp.StatusCode, b)
	}
	keys := bbkKeys(t, e, w.ext.ID, w.admin, 0)
	used, _ := bbkKeyByID(keys, k.ID)
	if used.LastUsedAt == nil || used.LastUsedAt.Before(before) || used.LastUsedAt.After(time.Now().Add(2*time.Second)) {
		t.Fatalf("after an upload the key lists as %+v: want when it was last used", used)
	}

	// A second key: the first is untouched and still works.
	laptop := w.createKey(t, w.ext.ID, "release laptop")
	if laptop.KeyFile.Service.APIKey == fileKey.APIKey || laptop.Key.ID == k.ID {
		t.Fatal("the second key has the first key's secret or id")
	}
	if resp, b := bbkCall1(t, e, nil, fileKey); resp.StatusCode != 200 {
		t.Fatalf("the first key after a second was made = %d %s", resp.StatusCode, b)
	}
	keys = bbkKeys(t, e, w.ext.ID, w.admin, 0)
	if len(keys) != 2 || keys[0].ID != laptop.Key.ID || keys[1].ID != k.ID {
		t.Fatalf("keys listed %+v: want the two, newest first", keys)
	}
	first := keys[1]
	if first.Label != k.Label || !first.CreatedAt.Equal(k.CreatedAt) || first.CreatedBy != k.CreatedBy || first.RevokedAt != nil {
		t.Fatalf("making a second key changed the first: %+v, was %+v", first, k)
	}
	if keys[0].LastUsedAt != nil {
		t.Fatalf("the unused key lists a last use: %+v", keys[0])
	}

	// A sign made with the second key counts as its use.
	zip := validZip(t, "1.0.0")
	bbkUpload(t, e, nil, fileKey, zip)
	resp, body = e.send(t, "POST", api.PathSubmitSign, nil, laptop.KeyFile.Service)
	if resp.StatusCode != 200 {
		t.Fatalf("sign with the second key = %d %s", resp.StatusCode, body)
	}
	keys = bbkKeys(t, e, w.ext.ID, w.admin, 0)
	if l, _ := bbkKeyByID(keys, laptop.Key.ID); l.LastUsedAt == nil {
		t.Errorf("a sign with %q left it listed as never used: %+v", l.Label, l)
	}

	// Revoke the first: it answers the revoked key, the key is refused at
	// once, the second still works.
	resp, body = e.do(t, "DELETE", api.KeyPath(w.ext.ID, k.ID), w.admin)
	var revoked betaport.Key
	if resp.StatusCode != 200 || json.Unmarshal(body, &revoked) != nil || revoked.ID != k.ID || revoked.RevokedAt == nil || revoked.Label != k.Label {
		t.Fatalf("DELETE key = %d %s: want 200 and the revoked key", resp.StatusCode, body)
	}
	if strings.Contains(string(body), fileKey.APIKey) {
		t.Fatal("the revoke answer shows the secret")
	}
	for _, path := range []string{api.PathSubmitUpload, api.PathSubmitSign} {
		resp, body = e.send(t, "POST", path, nil, fileKey)
		wantProblem(t, resp, body, 401, api.ProblemInvalidKey)
	}
	if resp, b := bbkCall1(t, e, nil, laptop.KeyFile.Service); resp.StatusCode != 200 {
		t.Fatalf("the second key after the first was revoked = %d %s", resp.StatusCode, b)
	}

	// Revoking again (a retried request) changes nothing.
	resp, body = e.do(t, "DELETE", api.KeyPath(w.ext.ID, k.ID), w.admin)
	switch resp.StatusCode {
	case 200:
		var again betaport.Key
		if json.Unmarshal(body, &again) != nil || again.RevokedAt == nil || !again.RevokedAt.Equal(*revoked.RevokedAt) {
			t.Errorf("revoking twice answered %s: want the key as revoked the first time (%v)", body, revoked.RevokedAt)
		}
	case 409:
		bbkProblem(t, "revoking twice", resp, body, 409, api.ProblemConflict)
	default:
		t.Errorf("revoking twice = %d %s: want 200 (nothing changed) or a conflict", resp.StatusCode, body)
	}
	keys = bbkKeys(t, e, w.ext.ID, w.admin, 0)
	if r, _ := bbkKeyByID(keys, k.ID); r.RevokedAt == nil || !r.RevokedAt.Equal(*revoked.RevokedAt) {
		t.Errorf("after revoking twice the key lists as %+v, want revoked at %v", r, revoked.RevokedAt)
	}
	if l, _ := bbkKeyByID(keys, laptop.Key.ID); l.RevokedAt != nil {
		t.Errorf("revoking one key revoked %+v", l)
	}
	n := 0
	for _, ev := range bbkAudit(t, e, w.ext.ID, w.admin, 0) {
		if ev.Action == betaport.AuditKeyRevoked && ev.Subject == k.Label {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the audit trail records %d revokes of %q, want 1", n, k.Label)
	}
	// A revoked key still refuses after all this.
	resp, body = bbkCall1(t, e, nil, fileKey)
	wantProblem(t, resp, body, 401, api.ProblemInvalidKey)
}

// TestBlackBoxKeysLabels: a label is required, at most MaxKeyLabel
// characters (not bytes), and is kept exactly as typed; clumsy and hostile
// bodies are refused with a problem and make no key.
func TestBlackBoxKeysLabels(t *testing.T) {
	t.Parallel()
	w := bbkNewWorld(t)
	e := w.e
	path := api.KeysPath(w.ext.ID)

	accepted := []string{
		"Déploiement 🚀 — 日本語のCI",
		strings.Repeat("k", betaport.MaxKeyLabel),
		strings.Repeat("日", betaport.MaxKeyLabel), // 300 bytes, 100 characters
		strings.Repeat("🚀", betaport.MaxKeyLabel), // 400 bytes
		`<script>alert("x")</script>`,
		`'; DROP TABLE keys; --`,
	}
	for _, label := range accepted {
		resp, body := e.send(t, "POST", path, w.admin, api.NewKey{Label: label})
		var ck api.CreatedKey
		if resp.StatusCode != 201 || json.Unmarshal(body, &ck) != nil {
			t.Errorf("label %q (%d characters) = %d %.300s, want 201", label, utf8.RuneCountInString(label), resp.StatusCode, body)
			continue
		}
		if ck.Key.Label != label {
			t.Errorf("label %q came back as %q", label, ck.Key.Label)
		}
	}
	listed := map[string]bool{}
	for _, k := range bbkKeys(t, e, w.ext.ID, w.admin, 0) {
		listed[k.Label] = true
	}
	for _, label := range accepted {
		if !listed[label] {
			t.Errorf("label %q is not listed as it was given; listed: %v", label, listed)
		}
	}
	made := len(listed)

	refused := []struct{ name, contentType, body string }{
		{"an empty label", "application/json", `{"label": ""}`},
		{"spaces", "application/json", `{"label": "   "}`},
		{"tabs and newlines", "application/json", `{"label": "\t\n "}`},
		{"no label", "application/json", `{}`},
		{"a null label", "application/json", `{"label": null}`},
		{"a number", "application/json", `{"label": 5}`},
		{"an object", "application/json", `{"label": {"name": "CI"}}`},
		{"one character too many", "application/json", `{"label": "` + strings.Repeat("k", betaport.MaxKeyLabel+1) + `"}`},
		{"101 wide characters", "application/json", `{"label": "` + strings.Repeat("日", betaport.MaxKeyLabel+1) + `"}`},
		{"a megabyte", "application/json", `{"label": "` + strings.Repeat("k", 1<<20) + `"}`},
		{"not JSON", "application/json", `label=CI`},
		{"an array", "application/json", `[{"label": "CI"}]`},
		{"truncated JSON", "application/json", `{"label": "CI"`},
		{"no body", "application/json", ``},
	}
	for _, r := range refused {
		resp, body := bbkRaw(t, e, "POST", path, w.admin, r.contentType, r.body)
		bbkRefused(t, r.name, resp, body, 400, 413, 415)
	}
	// A NUL is not something PostgreSQL keeps: refused, or kept whole.
	resp, body := bbkRaw(t, e, "POST", path, w.admin, "application/json", `{"label": "CI\u0000laptop"}`)
	if resp.StatusCode == 201 {
		made++
	} else {
		bbkRefused(t, "a label with a NUL", resp, body, 400)
	}
	if n := len(bbkKeys(t, e, w.ext.ID, w.admin, 0)); n != made {
		t.Fatalf("%d keys listed after the refused labels, want %d: a refused request made a key", n, made)
	}
	// A refused label says which field is wrong.
	resp, body = e.send(t, "POST", path, w.admin, api.NewKey{Label: strings.Repeat("k", betaport.MaxKeyLabel+1)})
	if p, ok := bbkProblem(t, "a long label", resp, body, 400, api.ProblemBadRequest); ok && p.Param != "label" {
		t.Errorf("a long label's problem names param %q, want label", p.Param)
	}
}

// TestBlackBoxKeysConcurrentCreation: many keys made at once all work and
// are all listed once, page by page, newest first.
func TestBlackBoxKeysConcurrentCreation(t *testing.T) {
	t.Parallel()
	w := bbkNewWorld(t)
	e := w.e
	const n = 16
	type result struct {
		status int
		body   []byte
		err    error
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, _ := json.Marshal(api.NewKey{Label: fmt.Sprintf("runner %02d", i)})
			req, _ := http.NewRequest("POST", e.URL+api.KeysPath(w.ext.ID), bytes.NewReader(b))
			req.Header = w.admin.Clone()
			req.Header.Set("Content-Type", "application/json")
			<-start
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				results[i] = result{err: err}
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			results[i] = result{status: resp.StatusCode, body: body}
		}()
	}
	close(start)
	wg.Wait()
	secrets := map[string]bool{}
	ids := map[int64]bool{}
	var created []api.CreatedKey
	for i, r := range results {
		var ck api.CreatedKey
		if r.err != nil || r.status != 201 || json.Unmarshal(r.body, &ck) != nil {
			t.Errorf("concurrent key %d = %d %s %v", i, r.status, r.body, r.err)
			continue
		}
		if secrets[ck.KeyFile.Service.APIKey] || ids[ck.Key.ID] {
			t.Errorf("two concurrent keys share a secret or an id: %+v", ck.Key)
		}
		secrets[ck.KeyFile.Service.APIKey], ids[ck.Key.ID] = true, true
		created = append(created, ck)
	}
	if t.Failed() {
		t.FailNow()
	}
	for _, ck := range created {
		if resp, b := bbkCall1(t, e, nil, ck.KeyFile.Service); resp.StatusCode != 200 {
			t.Errorf("key %q made concurrently = %d %s", ck.Key.Label, resp.StatusCode, b)
		}
	}
	for _, limit := range []int{0, 5, 1} {
		keys := bbkKeys(t, e, w.ext.ID, w.admin, limit)
		if len(keys) != n {
			t.Fatalf("limit %d: %d keys listed, want %d", limit, len(keys), n)
		}
		seen := map[int64]bool{}
		for i, k := range keys {
			if seen[k.ID] || !ids[k.ID] {
				t.Fatalf("limit %d: key %+v listed twice or not one made", limit, k)
			}
			seen[k.ID] = true
			if i > 0 && keys[i-1].ID < k.ID {
				t.Fatalf("limit %d: keys not newest first: %d before %d", limit, keys[i-1].ID, k.ID)
			}
		}
	}
	created0 := 0
	for _, ev := range bbkAudit(t, e, w.ext.ID, w.admin, 0) {
		if ev.Action == betaport.AuditKeyCreated {
			created0++
		}
	}
	if created0 != n {
		t.Errorf("the audit trail records %d keys made, want %d", created0, n)
	}
}

// TestBlackBoxKeysWhoMayTouchKeys: another extension's key id is not found
// through this one (and keeps working), another team's admin and the
// extension's own tester are refused, and odd key ids are problems.
func TestBlackBoxKeysWhoMayTouchKeys(t *testing.T) {
	t.Parallel()
	w := bbkNewWorld(t)
	e := w.e
	sibling := storetest.MustExtension(t, e.DB, w.team, "Sibling")
	otherTeam := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	foreign := storetest.MustExtension(t, e.DB, otherTeam, "Foreign")
	_, otherAdmin := bbkSignIn(t, e, otherTeam)

	mine := w.createKey(t, w.ext.ID, "mine")
	siblingKey := w.createKey(t, sibling.ID, "sibling's")
	foreignKey := storetest.MustKey(t, e.DB, foreign.ID, "foreign", "foreign-secret-"+t.Name())

	// Revoking another extension's key id through this extension.
	for _, id := range []int64{siblingKey.Key.ID, foreignKey.ID} {
		resp, body := e.do(t, "DELETE", api.KeyPath(w.ext.ID, id), w.admin)
		bbkProblem(t, fmt.Sprintf("DELETE another extension's key %d through %d", id, w.ext.ID), resp, body, 404, api.ProblemNotFound)
	}
	if resp, b := bbkCall1(t, e, nil, siblingKey.KeyFile.Service); resp.StatusCode != 200 {
		t.Errorf("the sibling's key after a revoke through another extension = %d %s", resp.StatusCode, b)
	}
	if resp, b := bbkCall1(t, e, nil, api.ServiceKey{ExtensionID: strconv.FormatInt(foreign.ID, 10), APIKey: "foreign-secret-" + t.Name()}); resp.StatusCode != 200 {
		t.Errorf("the other team's key after a revoke through our extension = %d %s", resp.StatusCode, b)
	}
	// A key works only for its own extension.
	resp, body := bbkCall1(t, e, nil, api.ServiceKey{ExtensionID: strconv.FormatInt(sibling.ID, 10), APIKey: mine.KeyFile.Service.APIKey})
	bbkProblem(t, "a key sent with another extension's id", resp, body, 401, api.ProblemInvalidKey)

	// Another team's admin: not found, nothing changed.
	for _, r := range []struct {
		method, path string
		body         any
	}{
		{"GET", api.KeysPath(w.ext.ID), nil},
		{"POST", api.KeysPath(w.ext.ID), api.NewKey{Label: "intruder"}},
		{"DELETE", api.KeyPath(w.ext.ID, mine.Key.ID), nil},
		{"GET", api.AuditPath(w.ext.ID), nil},
	} {
		resp, body := e.send(t, r.method, r.path, otherAdmin, r.body)
		bbkProblem(t, "another team's admin: "+r.method+" "+r.path, resp, body, 404, api.ProblemNotFound)
	}
	// The extension's own tester, signed in by their link: forbidden.
	tester, token := e.testerOf(t, w.ext, betaport.TesterInvited)
	testerSession := bbkOpenLink(t, e, e.URL+api.InvitePrefix+token)
	for _, r := range []struct {
		method, path string
		body         any
	}{
		{"GET", api.KeysPath(w.ext.ID), nil},
		{"POST", api.KeysPath(w.ext.ID), api.NewKey{Label: "tester's"}},
		{"DELETE", api.KeyPath(w.ext.ID, mine.Key.ID), nil},
		{"GET", api.AuditPath(w.ext.ID), nil},
		{"POST", api.TesterRestorePath(w.ext.ID, tester.ID), nil},
		{"POST", api.TesterInvitePath(w.ext.ID, tester.ID), nil},
	} {
		resp, body := e.send(t, r.method, r.path, testerSession, r.body)
		bbkProblem(t, "the extension's tester: "+r.method+" "+r.path, resp, body, 403, api.ProblemForbidden)
	}
	// No session at all.
	for _, path := range []string{api.KeysPath(w.ext.ID), api.AuditPath(w.ext.ID)} {
		resp, body := e.do(t, "GET", path, nil)
		bbkProblem(t, "no session: GET "+path, resp, body, 401, api.ProblemUnauthorized)
	}
	keys := bbkKeys(t, e, w.ext.ID, w.admin, 0)
	if len(keys) != 1 || keys[0].ID != mine.Key.ID || keys[0].RevokedAt != nil {
		t.Fatalf("after the refused calls the keys are %+v, want only %q, not revoked", keys, "mine")
	}
	if resp, b := bbkCall1(t, e, nil, mine.KeyFile.Service); resp.StatusCode != 200 {
		t.Fatalf("our key after the refused calls = %d %s", resp.StatusCode, b)
	}

	// Odd key ids and extension ids; bad pages.
	base := api.KeysPath(w.ext.ID)
	for _, p := range []string{base + "/abc", base + "/-1", base + "/0", base + "/99999999999", base + "/99999999999999999999999", base + "/1.5"} {
		resp, body := e.do(t, "DELETE", p, w.admin)
		bbkRefused(t, "DELETE "+p, resp, body, 400, 404)
	}
	for _, p := range []string{"/api/extensions/abc/keys", "/api/extensions/99999999/keys", "/api/extensions/-1/keys"} {
		resp, body := e.do(t, "GET", p, w.admin)
		bbkRefused(t, "GET "+p, resp, body, 400, 404)
		resp, body = e.send(t, "POST", p, w.admin, api.NewKey{Label: "lost"})
		bbkRefused(t, "POST "+p, resp, body, 400, 404)
	}
	for _, q := range []string{"limit=0", "limit=-1", "limit=lots", "cursor=not-a-cursor"} {
		resp, body := e.do(t, "GET", base+"?"+q, w.admin)
		bbkProblem(t, "keys ?"+q, resp, body, 400, api.ProblemBadRequest)
	}
	if resp, b := bbkCall1(t, e, nil, mine.KeyFile.Service); resp.StatusCode != 200 {
		t.Fatalf("our key after the odd ids = %d %s", resp.StatusCode, b)
	}
}

// TestBlackBoxKeysRevokedBetweenUploadAndSign: a key revoked after it
// requested an upload cannot sign that upload; nothing is published until
// a working key (or the admin) signs.
func TestBlackBoxKeysRevokedBetweenUploadAndSign(t *testing.T) {
	t.Parallel()
	w := bbkNewWorld(t)
	e := w.e
	ci := w.createKey(t, w.ext.ID, "CI")
	spare := w.createKey(t, w.ext.ID, "spare")
	bbkUpload(t, e, nil, ci.KeyFile.Service, validZip(t, "2.0.0"))
	if resp, body := e.do(t, "DELETE", api.KeyPath(w.ext.ID, ci.Key.ID), w.admin); resp.StatusCode != 200 {
		t.Fatalf("revoke = %d %s", resp.StatusCode, body)
	}
	resp, body := e.send(t, "POST", api.PathSubmitSign, nil, ci.KeyFile.Service)
	wantProblem(t, resp, body, 401, api.ProblemInvalidKey)
	if n := bbkCurrent(t, e, w.ext.ID, w.admin); n != 0 {
		t.Fatalf("a revoked key's sign published bundle #%d", n)
	}
	// The revoked key's refused sign is no use of it.
	keys := bbkKeys(t, e, w.ext.ID, w.admin, 0)
	if k, _ := bbkKeyByID(keys, ci.Key.ID); k.LastUsedAt != nil && k.RevokedAt != nil && k.LastUsedAt.After(*k.RevokedAt) {
		t.Errorf("a refused sign with the revoked key recorded a use after its revoke: %+v", k)
	}
	resp, body = e.send(t, "POST", api.PathSubmitSign, nil, spare.KeyFile.Service)
	var b betaport.Bundle
	if resp.StatusCode != 200 || json.Unmarshal(body, &b) != nil || b.Number != 1 || b.Version != "2.0.0" {
		t.Fatalf("sign with the other key = %d %s", resp.StatusCode, body)
	}
}

// TestBlackBoxKeysSessionSubmit: a signed-in admin publishes with
// {"extensionId": …} alone; the body is exactly that; the session of
// anybody else, and a request from another site, are refused; pipelines
// keep their keys.
func TestBlackBoxKeysSessionSubmit(t *testing.T) {
	t.Parallel()
	w := bbkNewWorld(t)
	e := w.e
	id := strconv.FormatInt(w.ext.ID, 10)
	own := map[string]string{"extensionId": id}
	sameOrigin := bbkWith(w.admin, "Sec-Fetch-Site", "same-origin", "Origin", e.URL)

	// Bodies that are not {"extensionId": …} alone.
	bodies := []struct{ name, body string }{
		{"an extra field", `{"extensionId": "` + id + `", "label": "x"}`},
		{"an extra team", `{"extensionId": "` + id + `", "teamId": 1}`},
		{"another spelling", `{"extensionID": "` + id + `"}`},
		{"both spellings", `{"extensionId": "` + id + `", "ExtensionId": "` + id + `"}`},
		{"an empty id", `{"extensionId": ""}`},
		{"a word", `{"extensionId": "tab-tamer"}`},
		{"a fraction", `{"extensionId": ` + id + `.5}`},
		{"a negative id", `{"extensionId": -` + id + `}`},
		{"a huge id", `{"extensionId": 99999999999999999999999}`},
		{"null", `{"extensionId": null}`},
		{"true", `{"extensionId": true}`},
		{"an object", `{"extensionId": {"id": ` + id + `}}`},
		{"an array", `[{"extensionId": "` + id + `"}]`},
		{"trailing data", `{"extensionId": "` + id + `"} {"extensionId": "` + id + `"}`},
		{"nothing", ``},
		{"not JSON", `extensionId=` + id},
	}
	for _, path := range []string{api.PathSubmitUpload, api.PathSubmitSign} {
		for _, b := range bodies {
			resp, body := bbkRaw(t, e, "POST", path, sameOrigin, "application/json", b.body)
			bbkRefused(t, path+" with "+b.name, resp, body, 400, 401, 404)
		}
	}
	bbkNoUploadIssued(t, e, w.ext.ID, "a refused session body")

	// Sessions that may not publish here, and no session.
	otherTeam := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	_, otherAdmin := bbkSignIn(t, e, otherTeam)
	_, token := e.testerOf(t, w.ext, betaport.TesterInvited)
	tester := bbkOpenLink(t, e, e.URL+api.InvitePrefix+token)
	for _, path := range []string{api.PathSubmitUpload, api.PathSubmitSign} {
		resp, body := e.send(t, "POST", path, bbkWith(otherAdmin, "Sec-Fetch-Site", "same-origin", "Origin", e.URL), own)
		bbkRefused(t, path+" as another team's admin", resp, body, 404, 403)
		resp, body = e.send(t, "POST", path, bbkWith(tester, "Sec-Fetch-Site", "same-origin", "Origin", e.URL), own)
		bbkProblem(t, path+" as the extension's tester", resp, body, 403, api.ProblemForbidden)
		resp, body = e.send(t, "POST", path, nil, own)
		bbkRefused(t, path+" with no session", resp, body, 400, 401)
	}
	bbkNoUploadIssued(t, e, w.ext.ID, "a session that may not publish")

	// Requests from another site riding the admin's cookie.
	evil := []struct {
		name    string
		headers []string
	}{
		{"cross-site", []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}},
		{"a sibling site", []string{"Sec-Fetch-Site", "same-site", "Origin", "http://evil.127.0.0.1.nip.io"}},
		{"a foreign Origin without Sec-Fetch-Site", []string{"Origin", "https://evil.example"}},
	}
	for _, path := range []string{api.PathSubmitUpload, api.PathSubmitSign} {
		for _, x := range evil {
			resp, body := e.send(t, "POST", path, bbkWith(w.admin, x.headers...), own)
			bbkProblem(t, path+" from "+x.name, resp, body, 403, api.ProblemForbidden)
			// A form can send text/plain without asking first.
			resp, body = bbkRaw(t, e, "POST", path, bbkWith(w.admin, x.headers...), "text/plain", `{"extensionId": "`+id+`"}`)
			bbkRefused(t, path+" from "+x.name+" as text/plain", resp, body, 403, 415)
		}
	}
	bbkNoUploadIssued(t, e, w.ext.ID, "a request from another site")

	// The admin's own page: upload, PUT, then a cross-site sign is refused
	// and publishes nothing; the page's own sign publishes.
	bbkUpload(t, e, sameOrigin, own, validZip(t, "3.0.0"))
	resp, body := e.send(t, "POST", api.PathSubmitSign, bbkWith(w.admin, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"), own)
	bbkProblem(t, "a cross-site sign of the admin's upload", resp, body, 403, api.ProblemForbidden)
	if n := bbkCurrent(t, e, w.ext.ID, w.admin); n != 0 {
		t.Fatalf("a cross-site sign published bundle #%d", n)
	}
	resp, body = e.send(t, "POST", api.PathSubmitSign, sameOrigin, own)
	var b betaport.Bundle
	if resp.StatusCode != 200 || json.Unmarshal(body, &b) != nil || b.Number != 1 || b.Version != "3.0.0" {
		t.Fatalf("the admin's sign = %d %s", resp.StatusCode, body)
	}
	if n := bbkCurrent(t, e, w.ext.ID, w.admin); n != 1 {
		t.Fatalf("after the admin's upload testers get #%d", n)
	}
	// The id may come as a number; a session publishes with no key, so
	// it is recorded as no key's use.
	ci := w.createKey(t, w.ext.ID, "CI")
	bbkUpload(t, e, sameOrigin, map[string]int64{"extensionId": w.ext.ID}, validZip(t, "3.0.1"))
	resp, body = e.send(t, "POST", api.PathSubmitSign, sameOrigin, map[string]int64{"extensionId": w.ext.ID})
	if resp.StatusCode != 200 || json.Unmarshal(body, &b) != nil || b.Number != 2 {
		t.Fatalf("the admin's sign with a numeric id = %d %s", resp.StatusCode, body)
	}
	if k, _ := bbkKeyByID(bbkKeys(t, e, w.ext.ID, w.admin, 0), ci.Key.ID); k.LastUsedAt != nil {
		t.Errorf("an admin's keyless upload is recorded as a use of key %q", k.Label)
	}
	// The pipeline's key still publishes, after and alongside the session.
	bbkUpload(t, e, nil, ci.KeyFile.Service, validZip(t, "3.0.2"))
	resp, body = e.send(t, "POST", api.PathSubmitSign, nil, ci.KeyFile.Service)
	if resp.StatusCode != 200 || json.Unmarshal(body, &b) != nil || b.Number != 3 {
		t.Fatalf("the pipeline's key after the admin's uploads = %d %s", resp.StatusCode, body)
	}
	// A key in the body works from the admin's browser too.
	bbkUpload(t, e, sameOrigin, ci.KeyFile.Service, validZip(t, "3.0.3"))
	resp, body = e.send(t, "POST", api.PathSubmitSign, sameOrigin, ci.KeyFile.Service)
	if resp.StatusCode != 200 || json.Unmarshal(body, &b) != nil || b.Number != 4 {
		t.Fatalf("a key from the admin's browser = %d %s", resp.StatusCode, body)
	}
}

// TestBlackBoxKeysCrossSiteWithTheCookie: another site's request riding an
// admin's cookie changes no key and no tester.
func TestBlackBoxKeysCrossSiteWithTheCookie(t *testing.T) {
	t.Parallel()
	w := bbkNewWorld(t)
	e := w.e
	ci := w.createKey(t, w.ext.ID, "CI")
	invited := bbkInvite(t, w, "grace@example.com", "Grace")
	gone := bbkInvite(t, w, "linus@example.com", "Linus")
	if resp, b := e.do(t, "DELETE", api.TesterPath(w.ext.ID, gone.ID), w.admin); resp.StatusCode != 204 {
		t.Fatalf("revoke = %d %s", resp.StatusCode, b)
	}
	auditBefore := len(bbkAudit(t, e, w.ext.ID, w.admin, 0))
	for _, site := range []string{"cross-site", "same-site"} {
		h := bbkWith(w.admin, "Sec-Fetch-Site", site, "Origin", "https://evil.example")
		for _, r := range []struct{ method, path, body string }{
			{"POST", api.KeysPath(w.ext.ID), `{"label": "evil"}`},
			{"DELETE", api.KeyPath(w.ext.ID, ci.Key.ID), ``},
			{"POST", api.TesterRestorePath(w.ext.ID, gone.ID), ``},
			{"POST", api.TesterInvitePath(w.ext.ID, invited.ID), ``},
			{"DELETE", api.TesterPath(w.ext.ID, invited.ID), ``},
		} {
			resp, body := bbkRaw(t, e, r.method, r.path, h, "text/plain", r.body)
			bbkRefused(t, site+" "+r.method+" "+r.path, resp, body, 403, 415)
		}
	}
	if n := len(bbkAudit(t, e, w.ext.ID, w.admin, 0)); n != auditBefore {
		t.Errorf("requests from another site changed keys or testers: the audit trail went from %d to %d events", auditBefore, n)
	}
	if resp, b := bbkCall1(t, e, nil, ci.KeyFile.Service); resp.StatusCode != 200 {
		t.Errorf("the key after requests from another site = %d %s", resp.StatusCode, b)
	}
}

func bbkInvite(t *testing.T, w *bbkWorld, email, name string) api.Invited {
	t.Helper()
	resp, body := w.e.send(t, "POST", api.TestersPath(w.ext.ID), w.admin, api.Invite{Email: email, Name: name})
	var inv api.Invited
	if resp.StatusCode != 201 || json.Unmarshal(body, &inv) != nil || inv.InviteURL == "" {
		t.Fatalf("invite %s = %d %s", email, resp.StatusCode, body)
	}
	return inv
}

// bbkOpenLink opens an invite link as a browser would and returns the
// session it set; it fails the test if it set none.
func bbkOpenLink(t *testing.T, e *env, link string) http.Header {
	t.Helper()
	h, resp := bbkTryLink(t, e, link)
	if h == nil {
		t.Fatalf("the link %s set no session (%d to %q)", link, resp.StatusCode, resp.Header.Get("Location"))
	}
	return h
}

// bbkTryLink opens an invite link as a browser would: the session it set
// (nil if none), and the answer.
func bbkTryLink(t *testing.T, e *env, link string) (http.Header, *http.Response) {
	t.Helper()
	resp, _ := e.do(t, "GET", strings.TrimPrefix(link, e.URL), http.Header{"Accept": {"text/html"}})
	for _, c := range resp.Cookies() {
		if c.Name == api.SessionCookie && c.Value != "" && c.MaxAge >= 0 {
			return http.Header{"Cookie": {api.SessionCookie + "=" + c.Value}}, resp
		}
	}
	return nil, resp
}

// bbkLinkIsCurrent reports whether link is still its tester's current
// link: it signs a browser in, or is refused only because it did once
// already (each link works once), not because it was replaced.
func bbkLinkIsCurrent(t *testing.T, e *env, link string) bool {
	t.Helper()
	h, resp := bbkTryLink(t, e, link)
	return h != nil || resp.Header.Get("Location") == "/login?link=used"
}

// bbkTester reads one of the extension's testers from the list (any status).
func bbkTester(t *testing.T, w *bbkWorld, id int64) betaport.Tester {
	t.Helper()
	resp, body := w.e.do(t, "GET", api.TestersPath(w.ext.ID)+"?limit=100", w.admin)
	var page api.Page[betaport.Tester]
	if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil {
		t.Fatalf("testers = %d %s", resp.StatusCode, body)
	}
	for _, tt := range page.Data {
		if tt.ID == id {
			return tt
		}
	}
	t.Fatalf("tester %d is not listed: %s", id, body)
	return betaport.Tester{}
}

// TestBlackBoxKeysTestersRestoreAndNewLinks: a new link replaces the old
// one; restore brings a revoked tester back as the same record with a new
// link; an invite of a revoked e-mail offers the restore; what is not
// revoked is not restored and what is revoked gets no new link.
func TestBlackBoxKeysTestersRestoreAndNewLinks(t *testing.T) {
	t.Parallel()
	w := bbkNewWorld(t)
	e := w.e
	ada := bbkInvite(t, w, "ada@example.com", "Ada Lovelace")
	if ada.Status != betaport.TesterInvited || ada.InvitedAt == nil {
		t.Fatalf("a new tester is %+v: want invited, with when", ada.Tester)
	}

	// A new link for an invited tester: the old one stops working.
	time.Sleep(20 * time.Millisecond)
	resp, body := e.do(t, "POST", api.TesterInvitePath(w.ext.ID, ada.ID), w.admin)
	var again api.Invited
	if resp.StatusCode != 200 || json.Unmarshal(body, &again) != nil || again.ID != ada.ID || again.InviteURL == "" || again.InviteURL == ada.InviteURL ||
		again.Email != ada.Email || again.Status != betaport.TesterInvited {
		t.Fatalf("a new link = %d %s", resp.StatusCode, body)
	}
	if again.InvitedAt == nil || !again.InvitedAt.After(*ada.InvitedAt) {
		t.Errorf("after a new link the invite is dated %v, was %v: its age must restart", again.InvitedAt, ada.InvitedAt)
	}
	if h, resp := bbkTryLink(t, e, ada.InviteURL); h != nil {
		t.Fatalf("the old link still signs in after a new one (%d)", resp.StatusCode)
	}
	adaSession := bbkOpenLink(t, e, again.InviteURL)
	if resp, b := e.do(t, "GET", api.PathBuilds, adaSession); resp.StatusCode != 200 {
		t.Fatalf("builds after the new link = %d %s", resp.StatusCode, b)
	}

	// Restore of a tester who is not revoked: a conflict, nothing changed.
	resp, body = e.do(t, "POST", api.TesterRestorePath(w.ext.ID, ada.ID), w.admin)
	bbkProblem(t, "restore of an active tester", resp, body, 409, api.ProblemConflict)
	grace := bbkInvite(t, w, "grace@example.com", "Grace Hopper")
	resp, body = e.do(t, "POST", api.TesterRestorePath(w.ext.ID, grace.ID), w.admin)
	bbkProblem(t, "restore of an invited tester", resp, body, 409, api.ProblemConflict)
	if resp, b := e.do(t, "GET", api.PathBuilds, adaSession); resp.StatusCode != 200 {
		t.Fatalf("a refused restore ended the tester's session: %d %s", resp.StatusCode, b)
	}
	if !bbkLinkIsCurrent(t, e, grace.InviteURL) {
		t.Fatal("a refused restore broke the invited tester's link")
	}

	// Invite an e-mail already active: a plain conflict, no restore.
	resp, body = e.send(t, "POST", api.TestersPath(w.ext.ID), w.admin, api.Invite{Email: "ada@example.com"})
	if p, ok := bbkProblem(t, "invite of an active tester's e-mail", resp, body, 409, api.ProblemConflict); ok && p.Restore != "" {
		t.Errorf("an active tester's invite offers a restore: %+v", p)
	}

	// Revoke Ada: her session and every link she had stop.
	if resp, b := e.do(t, "DELETE", api.TesterPath(w.ext.ID, ada.ID), w.admin); resp.StatusCode != 204 {
		t.Fatalf("revoke = %d %s", resp.StatusCode, b)
	}
	resp, body = e.do(t, "GET", api.PathBuilds, adaSession)
	bbkProblem(t, "a revoked tester's API call", resp, body, 401, api.ProblemAccessEnded)
	// A new link for a revoked tester is refused: that is a restore.
	resp, body = e.do(t, "POST", api.TesterInvitePath(w.ext.ID, ada.ID), w.admin)
	bbkRefused(t, "a new link for a revoked tester", resp, body, 409)
	if got := bbkTester(t, w, ada.ID); got.Status != betaport.TesterRevoked || got.RevokedBy != w.adminEmail {
		t.Fatalf("after the refused new link the tester is %+v: want revoked by %s", got, w.adminEmail)
	}

	// Inviting her e-mail again, spelled otherwise, offers the restore.
	resp, body = e.send(t, "POST", api.TestersPath(w.ext.ID), w.admin, api.Invite{Email: "  ADA@Example.COM ", Name: "Ada L."})
	offer, ok := bbkProblem(t, "invite of a revoked e-mail", resp, body, 409, api.ProblemTesterRevoked)
	if !ok {
		t.FailNow()
	}
	if offer.Restore != api.TesterRestorePath(w.ext.ID, ada.ID) {
		t.Fatalf("the offer restores at %q, want %q", offer.Restore, api.TesterRestorePath(w.ext.ID, ada.ID))
	}
	time.Sleep(20 * time.Millisecond)
	resp, body = e.do(t, "POST", offer.Restore, w.admin)
	var restored api.Invited
	if resp.StatusCode != 200 || json.Unmarshal(body, &restored) != nil || restored.ID != ada.ID || restored.Status != betaport.TesterInvited ||
		restored.Email != "ada@example.com" || restored.Name != "Ada Lovelace" || restored.InviteURL == "" || restored.RevokedBy != "" {
		t.Fatalf("restore = %d %s: want the same record, invited, a new link, no longer revoked", resp.StatusCode, body)
	}
	if restored.InvitedAt == nil || !restored.InvitedAt.After(*again.InvitedAt) {
		t.Errorf("a restored tester's invite is dated %v, the link before was %v", restored.InvitedAt, again.InvitedAt)
	}
	for _, old := range []string{ada.InviteURL, again.InviteURL} {
		if h, _ := bbkTryLink(t, e, old); h != nil {
			t.Errorf("the link %s of before the revoke signs in after the restore", old)
		}
	}
	if resp, _ := e.do(t, "GET", api.PathBuilds, adaSession); resp.StatusCode != 401 {
		t.Errorf("the session of before the revoke = %d after the restore", resp.StatusCode)
	}
	back := bbkOpenLink(t, e, restored.InviteURL)
	if resp, b := e.do(t, "GET", api.PathBuilds, back); resp.StatusCode != 200 {
		t.Fatalf("builds by the restored tester's new link = %d %s", resp.StatusCode, b)
	}
	// Restoring again: a conflict.
	resp, body = e.do(t, "POST", offer.Restore, w.admin)
	bbkProblem(t, "restore twice", resp, body, 409, api.ProblemConflict)

	// Through another extension, or ids that are not testers: not found.
	other := storetest.MustExtension(t, e.DB, w.team, "Other")
	for _, path := range []string{api.TesterRestorePath(other.ID, ada.ID), api.TesterInvitePath(other.ID, grace.ID),
		api.TesterRestorePath(w.ext.ID, 99999999), api.TesterInvitePath(w.ext.ID, 99999999)} {
		resp, body = e.do(t, "POST", path, w.admin)
		bbkProblem(t, "POST "+path, resp, body, 404, api.ProblemNotFound)
	}
	for _, path := range []string{api.TestersPath(w.ext.ID) + "/abc/restore", api.TestersPath(w.ext.ID) + "/-1/invite", api.TestersPath(w.ext.ID) + "/1.5/restore"} {
		resp, body = e.do(t, "POST", path, w.admin)
		bbkRefused(t, "POST "+path, resp, body, 400, 404)
	}
	if !bbkLinkIsCurrent(t, e, grace.InviteURL) {
		t.Fatal("a new link through another extension broke the tester's link")
	}
	// Another team's admin cannot restore nor re-invite.
	otherTeam := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	_, otherAdmin := bbkSignIn(t, e, otherTeam)
	resp, body = e.do(t, "POST", api.TesterInvitePath(w.ext.ID, grace.ID), otherAdmin)
	bbkProblem(t, "another team's admin: new link", resp, body, 404, api.ProblemNotFound)
	if !bbkLinkIsCurrent(t, e, grace.InviteURL) {
		t.Fatal("another team's admin broke the tester's link")
	}
}

// TestBlackBoxKeysAccessEnded: a revoked tester's calls are told their
// access ended and whom to ask; their old link and their pages lead to the
// page that says so, not to the admins' sign-in.
func TestBlackBoxKeysAccessEnded(t *testing.T) {
	t.Parallel()
	w := bbkNewWorld(t)
	e := w.e
	inv := bbkInvite(t, w, "lin@example.com", "Lin")
	session := bbkOpenLink(t, e, inv.InviteURL)
	if resp, b := e.do(t, "DELETE", api.TesterPath(w.ext.ID, inv.ID), w.admin); resp.StatusCode != 204 {
		t.Fatalf("revoke = %d %s", resp.StatusCode, b)
	}
	for _, path := range []string{api.PathBuilds, api.PathSession, api.CurrentBundlePath(w.ext.ID), api.BundlesPath(w.ext.ID) + "?page=0"} {
		resp, body := e.do(t, "GET", path, session)
		if p, ok := bbkProblem(t, "a revoked tester's GET "+path, resp, body, 401, api.ProblemAccessEnded); ok {
			if !strings.Contains(p.Detail, w.ext.Name) || !strings.Contains(p.Detail, w.team.Name) {
				t.Errorf("access ended says %q: want the extension (%s) and whom to ask (%s)", p.Detail, w.ext.Name, w.team.Name)
			}
		}
	}
	// The event stream and the downloads too, at once (a stream left open
	// would keep telling a revoked tester about new builds).
	e.publish(t, w.ext, "1.0.0")
	for _, path := range []string{api.EventsPath(w.ext.ID), "/api/extensions/" + strconv.FormatInt(w.ext.ID, 10) + "/bundles/current/download", api.BundleDownloadPath(w.ext.ID, 1)} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", e.URL+path, nil)
		req.Header = session.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			cancel()
			t.Errorf("a revoked tester's GET %s: %v", path, err)
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil {
			t.Errorf("a revoked tester's GET %s answered %d and kept streaming: %v", path, resp.StatusCode, err)
			continue
		}
		bbkProblem(t, "a revoked tester's GET "+path, resp, body, 401, api.ProblemAccessEnded)
	}
	// Pages, with the old session or the old link, end on the page that
	// says access ended and whom to ask, with no sign-in form.
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(e.URL)
	jar.SetCookies(u, []*http.Cookie{{Name: api.SessionCookie, Value: strings.TrimPrefix(session.Get("Cookie"), api.SessionCookie+"=")}})
	browser := &http.Client{Jar: jar}
	fresh := &http.Client{}
	freshJar, _ := cookiejar.New(nil)
	fresh.Jar = freshJar
	for _, c := range []struct {
		name   string
		client *http.Client
		path   string
	}{
		{"the builds page with the old session", browser, "/builds"},
		{"the home page with the old session", browser, "/"},
		{"the old invite link in a fresh browser", fresh, strings.TrimPrefix(inv.InviteURL, e.URL)},
	} {
		req, _ := http.NewRequest("GET", e.URL+c.path, nil)
		req.Header.Set("Accept", "text/html")
		resp, err := c.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Request.URL.Path != "/ended" {
			t.Errorf("%s ends at %s (%d), want /ended", c.name, resp.Request.URL, resp.StatusCode)
			continue
		}
		text := string(page)
		if !strings.Contains(strings.ToLower(text), "ended") || !strings.Contains(text, w.ext.Name) || !strings.Contains(text, w.team.Name) {
			t.Errorf("%s: the page does not say access to %s ended and to ask %s:\n%.1500s", c.name, w.ext.Name, w.team.Name, text)
		}
		if strings.Contains(text, `type="password"`) {
			t.Errorf("%s: the access-ended page shows a sign-in form", c.name)
		}
	}
}

// TestBlackBoxKeysAuditTrail: every change to keys and testers is recorded
// once, newest first, with who, what and when; refused changes are not;
// pages of any size give the same trail; one extension's trail shows none
// of another's.
func TestBlackBoxKeysAuditTrail(t *testing.T) {
	t.Parallel()
	w := bbkNewWorld(t)
	e := w.e
	other := storetest.MustExtension(t, e.DB, w.team, "Other")
	start := time.Now().Add(-2 * time.Second)

	ci := w.createKey(t, w.ext.ID, "GitHub Actions")
	w.createKey(t, w.ext.ID, "release laptop")
	otherKey := w.createKey(t, other.ID, "other's key")
	e.do(t, "DELETE", api.KeyPath(w.ext.ID, ci.Key.ID), w.admin)
	e.do(t, "DELETE", api.KeyPath(w.ext.ID, ci.Key.ID), w.admin)       // twice: one event
	e.do(t, "DELETE", api.KeyPath(w.ext.ID, otherKey.Key.ID), w.admin) // not ours: none
	e.send(t, "POST", api.KeysPath(w.ext.ID), w.admin, api.NewKey{})   // refused: none
	ada := bbkInvite(t, w, "ada@example.com", "Ada")
	e.do(t, "POST", api.TesterInvitePath(w.ext.ID, ada.ID), w.admin)
	e.do(t, "POST", api.TesterRestorePath(w.ext.ID, ada.ID), w.admin) // not revoked: none
	e.do(t, "DELETE", api.TesterPath(w.ext.ID, ada.ID), w.admin)
	e.do(t, "POST", api.TesterInvitePath(w.ext.ID, ada.ID), w.admin) // revoked: none
	e.send(t, "POST", api.TestersPath(w.ext.ID), w.admin, api.Invite{Email: "ada@example.com"})
	e.do(t, "POST", api.TesterRestorePath(w.ext.ID, ada.ID), w.admin)
	end := time.Now().Add(2 * time.Second)

	a := w.adminEmail
	want := []string{
		a + " " + betaport.AuditTesterRestored + " ada@example.com",
		a + " " + betaport.AuditTesterRevoked + " ada@example.com",
		a + " " + betaport.AuditInviteResent + " ada@example.com",
		a + " " + betaport.AuditTesterInvited + " ada@example.com",
		a + " " + betaport.AuditKeyRevoked + " GitHub Actions",
		a + " " + betaport.AuditKeyCreated + " release laptop",
		a + " " + betaport.AuditKeyCreated + " GitHub Actions",
	}
	all := bbkAudit(t, e, w.ext.ID, w.admin, 0)
	if got := bbkAuditLines(all); !slices.Equal(got, want) {
		t.Fatalf("the audit trail, newest first:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, ev := range all {
		if ev.ExtensionID != w.ext.ID || ev.ID == 0 || ev.CreatedAt.Before(start) || ev.CreatedAt.After(end) {
			t.Errorf("event %+v: want extension %d, an id and a time of now", ev, w.ext.ID)
		}
		if i > 0 && ev.CreatedAt.After(all[i-1].CreatedAt) {
			t.Errorf("event %q is newer than the one listed before it", bbkAuditLines(all[i:i+1]))
		}
	}
	for _, limit := range []int{1, 2, 3} {
		if got := bbkAuditLines(bbkAudit(t, e, w.ext.ID, w.admin, limit)); !slices.Equal(got, want) {
			t.Errorf("pages of %d give:\n%s", limit, strings.Join(got, "\n"))
		}
	}
	if got := bbkAuditLines(bbkAudit(t, e, other.ID, w.admin, 0)); !slices.Equal(got, []string{a + " " + betaport.AuditKeyCreated + " other's key"}) {
		t.Errorf("the other extension's trail: %q", got)
	}
	for _, q := range []string{"limit=0", "limit=-1", "limit=lots", "cursor=not-a-cursor"} {
		resp, body := e.do(t, "GET", api.AuditPath(w.ext.ID)+"?"+q, w.admin)
		bbkProblem(t, "audit ?"+q, resp, body, 400, api.ProblemBadRequest)
	}
	// A cursor of another extension's trail is not a way into this one.
	resp, body := e.do(t, "GET", api.AuditPath(w.ext.ID)+"?limit=1", w.admin)
	var page api.Page[betaport.AuditEvent]
	json.Unmarshal(body, &page)
	if resp.StatusCode == 200 && page.NextCursor != "" {
		resp, body = e.do(t, "GET", api.AuditPath(other.ID)+"?limit=10&cursor="+url.QueryEscape(page.NextCursor), w.admin)
		if resp.StatusCode == 200 && strings.Contains(string(body), "ada@example.com") {
			t.Errorf("a cursor of one extension's trail shows another's events: %s", body)
		}
	}
}

// bbkCLI runs the betaport command.
func bbkCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestBlackBoxKeysCommandLine: key create, list and revoke on the
// embedded storage, against a running service; what they write and print,
// the audit trail's actor, and their mistakes.
func TestBlackBoxKeysCommandLine(t *testing.T) {
	t.Parallel()
	if backend() == backendScaleOut {
		t.Skip("the command line runs on the embedded storage; run once")
	}
	data := t.TempDir()
	m := cli.NewMain()
	m.Config.Addr, m.Config.Data = "127.0.0.1:0", data
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })

	jsonOut := func(args ...string) map[string]any {
		t.Helper()
		code, out, errOut := bbkCLI(t, append(args, "--data", data)...)
		var v map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &v) != nil {
			t.Fatalf("betaport %s: exit %d, %q, %q", strings.Join(args, " "), code, out, errOut)
		}
		return v
	}
	team := jsonOut("team", "create", "--name", "Acme", "--plan", "professional")
	teamID := fmt.Sprint(team["id"])
	ext := jsonOut("extension", "create", "--team", teamID, "--name", "Tab Tamer")
	extID := fmt.Sprint(ext["id"])
	jsonOut("user", "create", "--email", "ops@example.com", "--team", teamID, "--password", "a long ops password")

	dir := t.TempDir()
	keyPath := filepath.Join(dir, "key.json")
	code, out, errOut := bbkCLI(t, "key", "create", "--extension", extID, "--label", "GitHub Actions", "--out", keyPath, "--data", data)
	if code != 0 {
		t.Fatalf("key create: exit %d, %q, %q", code, out, errOut)
	}
	raw, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	key, bare, err := api.ParseKeyFile(raw)
	if err != nil || bare || key.ExtensionID != extID || key.APIKey == "" {
		t.Fatalf("key create wrote %s: not a key file of extension %s (%v)", raw, extID, err)
	}
	if info, err := os.Stat(keyPath); err == nil && info.Mode().Perm()&0o077 != 0 {
		t.Errorf("key create wrote the secret readable by others: %v", info.Mode().Perm())
	}
	if strings.Contains(out, key.APIKey) || strings.Contains(errOut, key.APIKey) {
		t.Errorf("key create printed the secret (it is in the file): %q %q", out, errOut)
	}
	// A second key: the first keeps working.
	laptopPath := filepath.Join(dir, "laptop.json")
	if code, out, errOut := bbkCLI(t, "key", "create", "--extension", extID, "--label", "release laptop", "--out", laptopPath, "--data", data); code != 0 {
		t.Fatalf("second key create: exit %d, %q, %q", code, out, errOut)
	}
	raw2, _ := os.ReadFile(laptopPath)
	laptop, _, err := api.ParseKeyFile(raw2)
	if err != nil || laptop.APIKey == key.APIKey {
		t.Fatalf("the second key file %s: %v", raw2, err)
	}

	call1 := func(k api.ServiceKey) int {
		t.Helper()
		b, _ := json.Marshal(k)
		resp, err := http.Post(m.URL()+api.PathSubmitUpload, "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := call1(key); s != 200 {
		t.Fatalf("call 1 with the first key made by the command line = %d", s)
	}
	if s := call1(laptop); s != 200 {
		t.Fatalf("call 1 with the second key = %d", s)
	}

	list := func() []betaport.Key {
		t.Helper()
		code, out, errOut := bbkCLI(t, "key", "list", "--extension", extID, "--data", data)
		var keys []betaport.Key
		if code != 0 || json.Unmarshal([]byte(out), &keys) != nil {
			t.Fatalf("key list: exit %d, %q, %q; want a JSON array", code, out, errOut)
		}
		if strings.Contains(out, key.APIKey) || strings.Contains(out, laptop.APIKey) || strings.Contains(strings.ToLower(out), "hash") {
			t.Fatalf("key list prints secrets: %s", out)
		}
		return keys
	}
	keys := list()
	if len(keys) != 2 {
		t.Fatalf("key list: %+v, want the two keys", keys)
	}
	var gha betaport.Key
	for _, k := range keys {
		if k.CreatedBy != betaport.ActorCommandLine || k.RevokedAt != nil {
			t.Errorf("listed %+v: want made by %q, not revoked", k, betaport.ActorCommandLine)
		}
		if k.Label == "GitHub Actions" {
			gha = k
		}
	}
	if gha.ID == 0 || gha.LastUsedAt == nil {
		t.Fatalf("key list shows the used key as %+v: want its label and last use", gha)
	}

	code, out, errOut = bbkCLI(t, "key", "revoke", "--extension", extID, "--key", strconv.FormatInt(gha.ID, 10), "--data", data)
	if code != 0 {
		t.Fatalf("key revoke: exit %d, %q, %q", code, out, errOut)
	}
	if s := call1(key); s != 401 {
		t.Fatalf("call 1 with the revoked key = %d, want 401", s)
	}
	if s := call1(laptop); s != 200 {
		t.Fatalf("call 1 with the other key after the revoke = %d", s)
	}
	for _, k := range list() {
		if (k.ID == gha.ID) != (k.RevokedAt != nil) {
			t.Errorf("after the revoke key list shows %+v", k)
		}
	}

	// The audit trail, read by an admin, names the command line.
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	b, _ := json.Marshal(api.SignIn{Email: "ops@example.com", Password: "a long ops password"})
	resp, err := client.Post(m.URL()+api.PathSession, "application/json", bytes.NewReader(b))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("sign-in: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = client.Get(m.URL() + api.AuditPath(int64(ext["id"].(float64))))
	if err != nil {
		t.Fatal(err)
	}
	var audit api.Page[betaport.AuditEvent]
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || json.Unmarshal(body, &audit) != nil {
		t.Fatalf("audit = %d %s", resp.StatusCode, body)
	}
	cl := betaport.ActorCommandLine
	if got, want := bbkAuditLines(audit.Data), []string{cl + " key.revoked GitHub Actions", cl + " key.created release laptop", cl + " key.created GitHub Actions"}; !slices.Equal(got, want) {
		t.Errorf("the audit trail of the command line's changes: %q, want %q", got, want)
	}

	// Mistakes: a key of no extension, a revoke of a key of another
	// extension or of none, a missing label. Each fails, says why on
	// stderr, and changes nothing.
	other := jsonOut("extension", "create", "--team", teamID, "--name", "Other")
	otherID := fmt.Sprint(other["id"])
	nowhere := filepath.Join(dir, "nowhere.json")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"a key for no extension", []string{"key", "create", "--extension", "99999", "--label", "x", "--out", nowhere}},
		{"a key without a label", []string{"key", "create", "--extension", extID, "--out", nowhere}},
		{"a key with a blank label", []string{"key", "create", "--extension", extID, "--label", "  ", "--out", nowhere}},
		{"a key with a long label", []string{"key", "create", "--extension", extID, "--label", strings.Repeat("k", betaport.MaxKeyLabel+1), "--out", nowhere}},
		{"a revoke through another extension", []string{"key", "revoke", "--extension", otherID, "--key", strconv.FormatInt(keys[0].ID, 10)}},
		{"a revoke of no key", []string{"key", "revoke", "--extension", extID, "--key", "99999"}},
		{"a revoke without a key", []string{"key", "revoke", "--extension", extID}},
		{"a list of no extension", []string{"key", "list", "--extension", "99999"}},
	} {
		code, out, errOut := bbkCLI(t, append(c.args, "--data", data)...)
		if code == 0 || strings.TrimSpace(errOut) == "" || strings.Contains(errOut, "panic") || strings.Contains(errOut, "goroutine ") {
			t.Errorf("%s: exit %d, %q, %q; want a failure that says why", c.name, code, out, errOut)
		}
		if _, err := os.Stat(nowhere); err == nil {
			t.Errorf("%s wrote a key file", c.name)
			os.Remove(nowhere)
		}
	}
	if s := call1(laptop); s != 200 {
		t.Fatalf("the remaining key after the mistakes = %d", s)
	}
	if n := len(list()); n != 2 {
		t.Fatalf("after the mistakes key list shows %d keys, want 2", n)
	}
}

// TestBlackBoxKeysCommandLineManners: version, help, and mistyped flags.
func TestBlackBoxKeysCommandLineManners(t *testing.T) {
	t.Parallel()
	if backend() == backendScaleOut {
		t.Skip("no storage involved; run once")
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, errOut := bbkCLI(t, args...)
		if code != 0 || !strings.Contains(out, "betaport") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("betaport %s: exit %d, %q, %q; want the build and Go version on stdout, exit 0", strings.Join(args, " "), code, out, errOut)
		}
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"team", "--help"}, []string{"team create"}},
		{[]string{"key", "-h"}, []string{"key create", "key list", "key revoke"}},
		{[]string{"key", "--help"}, []string{"key create", "key list", "key revoke"}},
		{[]string{"key", "create", "-h"}, []string{"-label", "-extension", "-out"}},
		{[]string{"key", "revoke", "--help"}, []string{"-key", "-extension"}},
	} {
		code, out, errOut := bbkCLI(t, c.args...)
		help := out + errOut
		if code != 0 {
			t.Errorf("betaport %s: exit %d, want 0; %q", strings.Join(c.args, " "), code, help)
		}
		for _, w := range c.want {
			if !strings.Contains(help, w) {
				t.Errorf("betaport %s does not mention %q:\n%s", strings.Join(c.args, " "), w, help)
			}
		}
	}
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"key", "create", "--lable", "CI"}, "lable"},
		{[]string{"key", "list", "--extenson", "1"}, "extenson"},
		{[]string{"key", "revoke", "--extension", "1", "--keyid", "3"}, "keyid"},
		{[]string{"team", "create", "--name", "A", "--plan", "professional", "--colour", "red"}, "colour"},
		{[]string{"--verbose", "version"}, "verbose"},
	} {
		code, out, errOut := bbkCLI(t, c.args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != 2 || out != "" || len(lines) != 1 || !strings.Contains(lines[0], c.flag) {
			t.Errorf("betaport %s: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %s", strings.Join(c.args, " "), code, out, errOut, c.flag)
		}
	}
}

// TestBlackBoxKeysBodyCannotSetWhatTheServerDecides: fields a client has
// no say in (the extension, the maker, a revoke, the secret) are ignored
// or refused, never taken.
func TestBlackBoxKeysBodyCannotSetWhatTheServerDecides(t *testing.T) {
	t.Parallel()
	w := bbkNewWorld(t)
	e := w.e
	other := storetest.MustExtension(t, e.DB, w.team, "Other")
	body := fmt.Sprintf(`{"label": "sneaky", "extensionId": %d, "createdBy": "ceo@example.com", "revokedAt": "2020-01-01T00:00:00Z",
		"id": 1, "apiKey": "chosen-secret-of-at-least-32-characters", "createdAt": "2001-01-01T00:00:00Z"}`, other.ID)
	resp, b := bbkRaw(t, e, "POST", api.KeysPath(w.ext.ID), w.admin, "application/json", body)
	if resp.StatusCode != 201 {
		bbkRefused(t, "a key body with fields the server decides", resp, b, 400)
		return
	}
	var ck api.CreatedKey
	json.Unmarshal(b, &ck)
	k := ck.Key
	if k.ExtensionID != w.ext.ID || ck.KeyFile.Service.ExtensionID != strconv.FormatInt(w.ext.ID, 10) || k.CreatedBy != w.adminEmail || k.RevokedAt != nil ||
		k.CreatedAt.Year() < 2025 || ck.KeyFile.Service.APIKey == "chosen-secret-of-at-least-32-characters" {
		t.Fatalf("the body set what the server decides: %s", b)
	}
	if resp, b := bbkCall1(t, e, nil, api.ServiceKey{ExtensionID: strconv.FormatInt(other.ID, 10), APIKey: ck.KeyFile.Service.APIKey}); resp.StatusCode != 401 {
		t.Fatalf("the key works for the extension its body named: %d %s", resp.StatusCode, b)
	}
	if resp, b := bbkCall1(t, e, nil, api.ServiceKey{ExtensionID: strconv.FormatInt(other.ID, 10), APIKey: "chosen-secret-of-at-least-32-characters"}); resp.StatusCode != 401 {
		t.Fatalf("a secret chosen in the body works: %d %s", resp.StatusCode, b)
	}
	if keys := bbkKeys(t, e, other.ID, w.admin, 0); len(keys) != 0 {
		t.Fatalf("the other extension got keys: %+v", keys)
	}
}

// TestBlackBoxKeysConcurrentRevokeAndRestore: a revoke clicked twice at
// once is recorded once; a restore clicked twice at once gives one link
// that works, not two of which one is dead.
func TestBlackBoxKeysConcurrentRevokeAndRestore(t *testing.T) {
	t.Parallel()
	w := bbkNewWorld(t)
	e := w.e
	const n = 8
	fire := func(method, path string) ([]int, [][]byte) {
		statuses := make([]int, n)
		bodies := make([][]byte, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest(method, e.URL+path, nil)
				req.Header = w.admin.Clone()
				<-start
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return
				}
				bodies[i], _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				statuses[i] = resp.StatusCode
			}()
		}
		close(start)
		wg.Wait()
		return statuses, bodies
	}

	ci := w.createKey(t, w.ext.ID, "CI")
	statuses, bodies := fire("DELETE", api.KeyPath(w.ext.ID, ci.Key.ID))
	for i, s := range statuses {
		if s != 200 && s != 409 {
			t.Errorf("concurrent revoke %d = %d %s", i, s, bodies[i])
		}
	}
	revokes := 0
	for _, ev := range bbkAudit(t, e, w.ext.ID, w.admin, 0) {
		if ev.Action == betaport.AuditKeyRevoked {
			revokes++
		}
	}
	if revokes != 1 {
		t.Errorf("%d revokes clicked at once are recorded as %d revokes, want 1", n, revokes)
	}

	ada := bbkInvite(t, w, "ada@example.com", "Ada")
	if resp, b := e.do(t, "DELETE", api.TesterPath(w.ext.ID, ada.ID), w.admin); resp.StatusCode != 204 {
		t.Fatalf("revoke = %d %s", resp.StatusCode, b)
	}
	var links []string
	statuses, bodies = fire("POST", api.TesterRestorePath(w.ext.ID, ada.ID))
	for i, s := range statuses {
		switch s {
		case 200:
			var inv api.Invited
			json.Unmarshal(bodies[i], &inv)
			links = append(links, inv.InviteURL)
		case 409:
		default:
			t.Errorf("concurrent restore %d = %d %s", i, s, bodies[i])
		}
	}
	working := 0
	for _, l := range links {
		if h, _ := bbkTryLink(t, e, l); h != nil {
			working++
		}
	}
	if len(links) != 1 || working != 1 {
		t.Errorf("%d restores at once answered %d links of which %d work: want one restore, with a link that works", n, len(links), working)
	}
	restores := 0
	for _, ev := range bbkAudit(t, e, w.ext.ID, w.admin, 0) {
		if ev.Action == betaport.AuditTesterRestored {
			restores++
		}
	}
	if restores != 1 {
		t.Errorf("%d restores at once are recorded as %d, want 1", n, restores)
	}
}

// TestBlackBoxKeysRevokedElsewhereIsNoRestore: a tester revoked from one
// extension is invited afresh to another; only the extension that revoked
// them offers the restore.
func TestBlackBoxKeysRevokedElsewhereIsNoRestore(t *testing.T) {
	t.Parallel()
	w := bbkNewWorld(t)
	e := w.e
	ada := bbkInvite(t, w, "ada@example.com", "Ada")
	if resp, b := e.do(t, "DELETE", api.TesterPath(w.ext.ID, ada.ID), w.admin); resp.StatusCode != 204 {
		t.Fatalf("revoke = %d %s", resp.StatusCode, b)
	}
	other := storetest.MustExtension(t, e.DB, w.team, "Other")
	resp, body := e.send(t, "POST", api.TestersPath(other.ID), w.admin, api.Invite{Email: "ada@example.com", Name: "Ada"})
	var inv api.Invited
	if resp.StatusCode != 201 || json.Unmarshal(body, &inv) != nil || inv.ExtensionID != other.ID {
		t.Fatalf("inviting to another extension a tester revoked from this one = %d %s", resp.StatusCode, body)
	}
	if h, _ := bbkTryLink(t, e, inv.InviteURL); h == nil {
		t.Fatal("the other extension's invite link signs nobody in")
	}
	resp, body = e.send(t, "POST", api.TestersPath(w.ext.ID), w.admin, api.Invite{Email: "ada@example.com"})
	bbkProblem(t, "the revoking extension's invite", resp, body, 409, api.ProblemTesterRevoked)
}

// TestBlackBoxKeysListsAreNeverStale: where the keys list or the audit
// trail answers with an ETag, a revalidation after any change a person
// would see (a key made, used, revoked; a tester invited) is not a 304.
func TestBlackBoxKeysListsAreNeverStale(t *testing.T) {
	t.Parallel()
	w := bbkNewWorld(t)
	e := w.e
	ci := w.createKey(t, w.ext.ID, "CI")
	type list struct{ name, path string }
	lists := []list{{"keys", api.KeysPath(w.ext.ID)}, {"audit", api.AuditPath(w.ext.ID)}}
	tags := map[string]string{}
	snapshot := func() {
		for _, l := range lists {
			resp, body := e.do(t, "GET", l.path, w.admin)
			if resp.StatusCode != 200 {
				t.Fatalf("GET %s = %d %s", l.path, resp.StatusCode, body)
			}
			tags[l.name] = resp.Header.Get("ETag")
		}
	}
	stale := func(change string, changed ...string) {
		t.Helper()
		for _, l := range lists {
			if tags[l.name] == "" || !slices.Contains(changed, l.name) {
				continue
			}
			resp, body := e.do(t, "GET", l.path, bbkWith(w.admin, "If-None-Match", tags[l.name]))
			if resp.StatusCode == http.StatusNotModified {
				t.Errorf("after %s the %s list answers 304 Not Modified to its old ETag %s: the page keeps showing what was before", change, l.name, tags[l.name])
			} else if resp.StatusCode != 200 {
				t.Errorf("after %s GET %s = %d %s", change, l.path, resp.StatusCode, body)
			}
		}
	}
	snapshot()
	if tags["keys"] == "" && tags["audit"] == "" {
		t.Log("neither list answers an ETag: no revalidation can be stale")
	}
	if tags["keys"] != "" {
		resp, _ := e.do(t, "GET", api.KeysPath(w.ext.ID), bbkWith(w.admin, "If-None-Match", tags["keys"]))
		if resp.StatusCode != http.StatusNotModified {
			t.Logf("the keys list has an ETag but does not answer 304 to it (%d)", resp.StatusCode)
		}
	}
	if resp, b := bbkCall1(t, e, nil, ci.KeyFile.Service); resp.StatusCode != 200 {
		t.Fatalf("call 1 = %d %s", resp.StatusCode, b)
	}
	stale("a use of the key", "keys")
	snapshot()
	w.createKey(t, w.ext.ID, "laptop")
	stale("a new key", "keys", "audit")
	snapshot()
	if resp, b := e.do(t, "DELETE", api.KeyPath(w.ext.ID, ci.Key.ID), w.admin); resp.StatusCode != 200 {
		t.Fatalf("revoke = %d %s", resp.StatusCode, b)
	}
	stale("a revoke", "keys", "audit")
	snapshot()
	bbkInvite(t, w, "ada@example.com", "Ada")
	stale("an invite", "audit")
}
