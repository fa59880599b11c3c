package http_test

// Black-box tests of access tokens (issue: "Access tokens"), written by a
// second pair of eyes from the issue text and openapi.json only: every
// check goes through real HTTP on the env harness (newEnv), and storage is
// read only to see that a refusal changed nothing. The helpers of this file
// are named bbt….

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/storetest"
)

// The scopes a token may carry (openapi.json, AccessToken.scopes).
var bbtScopes = []string{"read", "testers", "releases", "feedback", "settings"}

// bbtToken is an access token as the API sends it (openapi.json,
// AccessToken); Raw keeps every field sent.
type bbtToken struct {
	ID          int64      `json:"id"`
	ExtensionID int64      `json:"extensionId"`
	Name        string     `json:"name"`
	Scopes      []string   `json:"scopes"`
	CreatedAt   time.Time  `json:"createdAt"`
	CreatedBy   string     `json:"createdBy"`
	ExpiresAt   *time.Time `json:"expiresAt"`
	LastUsedAt  *time.Time `json:"lastUsedAt"`
	RevokedAt   *time.Time `json:"revokedAt"`
}

type bbtCreated struct {
	Token  bbtToken `json:"token"`
	Secret string   `json:"secret"`
}

// bbtWorld: team (Professional) with extensions ext and ext2 and an admin;
// another team with extOther and its admin.
type bbtWorld struct {
	e                   *env
	team, otherTeam     *betaport.Team
	ext, ext2, extOther *betaport.Extension
	admin, otherAdmin   http.Header
}

func newBBTWorld(t *testing.T) *bbtWorld {
	t.Helper()
	e := newEnv(t)
	w := &bbtWorld{e: e}
	w.team = storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	w.ext = storetest.MustExtension(t, e.DB, w.team, "Token Lab")
	w.ext2 = storetest.MustExtension(t, e.DB, w.team, "Token Lab Two")
	w.otherTeam = storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	w.extOther = storetest.MustExtension(t, e.DB, w.otherTeam, "Rival Lab")
	w.admin = e.adminOf(t, w.team)
	w.otherAdmin = e.adminOf(t, w.otherTeam)
	return w
}

func bbtBearer(secret string) http.Header {
	return http.Header{"Authorization": {"Bearer " + secret}}
}

// createRaw posts body to the extension's tokens as who.
func (w *bbtWorld) createRaw(t *testing.T, who http.Header, extID int64, body any) (*http.Response, []byte) {
	t.Helper()
	return w.e.send(t, "POST", api.TokensPath(extID), who, body)
}

// create makes a token as the admin, checks the 201 and returns it.
func (w *bbtWorld) create(t *testing.T, extID int64, name string, scopes []string, expiresAt string) bbtCreated {
	t.Helper()
	body := map[string]any{"name": name, "scopes": scopes}
	if expiresAt != "" {
		body["expiresAt"] = expiresAt
	}
	resp, b := w.createRaw(t, w.admin, extID, body)
	var c bbtCreated
	if resp.StatusCode != 201 || json.Unmarshal(b, &c) != nil || c.Token.ID == 0 || c.Secret == "" {
		t.Fatalf("create token %q %v: %d %s", name, scopes, resp.StatusCode, b)
	}
	if c.Token.Name != name || c.Token.ExtensionID != extID {
		t.Fatalf("create token %q: answered %s", name, b)
	}
	if loc := resp.Header.Get("Location"); loc != "" && !strings.HasSuffix(loc, api.TokenPath(extID, c.Token.ID)) {
		t.Errorf("create token: Location %q, want the token's path %s", loc, api.TokenPath(extID, c.Token.ID))
	}
	return c
}

// list reads every token of the extension as the admin, page by page
// (limit 2, to follow the cursors).
func (w *bbtWorld) list(t *testing.T, extID int64) ([]bbtToken, string) {
	t.Helper()
	return w.listAs(t, extID, w.admin)
}

func (w *bbtWorld) listAs(t *testing.T, extID int64, admin http.Header) ([]bbtToken, string) {
	t.Helper()
	var all []bbtToken
	var raw strings.Builder
	for cursor, pages := "", 0; ; pages++ {
		path := api.TokensPath(extID) + "?limit=2"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		resp, b := w.e.do(t, "GET", path, admin)
		var page api.Page[bbtToken]
		if resp.StatusCode != 200 || json.Unmarshal(b, &page) != nil || page.Data == nil {
			t.Fatalf("GET %s = %d %s", path, resp.StatusCode, b)
		}
		raw.Write(b)
		all = append(all, page.Data...)
		if page.NextCursor == "" {
			break
		}
		if pages > 100 {
			t.Fatal("the tokens list does not end")
		}
		cursor = page.NextCursor
	}
	return all, raw.String()
}

func bbtFind(list []bbtToken, id int64) *bbtToken {
	for i := range list {
		if list[i].ID == id {
			return &list[i]
		}
	}
	return nil
}

// audit reads the whole audit trail of ext as the admin, raw and parsed.
func (w *bbtWorld) audit(t *testing.T, extID int64) ([]betaport.AuditEvent, string) {
	t.Helper()
	var all []betaport.AuditEvent
	var raw strings.Builder
	for cursor := ""; ; {
		path := api.AuditPath(extID) + "?limit=100"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		resp, b := w.e.do(t, "GET", path, w.admin)
		var page api.Page[betaport.AuditEvent]
		if resp.StatusCode != 200 || json.Unmarshal(b, &page) != nil {
			t.Fatalf("GET %s = %d %s", path, resp.StatusCode, b)
		}
		raw.Write(b)
		all = append(all, page.Data...)
		if page.NextCursor == "" {
			return all, raw.String()
		}
		cursor = page.NextCursor
	}
}

// state is everything of ext a call could change, read from storage (and
// the tokens from the admin's list, without their last use).
func (w *bbtWorld) state(t *testing.T, ext *betaport.Extension) string {
	t.Helper()
	admin := w.admin
	if ext.TeamID == w.otherTeam.ID {
		admin = w.otherAdmin
	}
	return w.stateAs(t, ext, admin)
}

func (w *bbtWorld) stateAs(t *testing.T, ext *betaport.Extension, admin http.Header) string {
	t.Helper()
	ctx := context.Background()
	db := w.e.DB
	var b strings.Builder
	testers, err := db.FindTesters(ctx, betaport.TesterFilter{ExtensionID: ext.ID, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range testers {
		fmt.Fprintf(&b, "tester %d %s %s %s %s %v\n", x.ID, x.Email, x.Name, x.Status, x.Channel, x.InvitedAt)
	}
	keys, err := db.FindKeys(ctx, ext.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		fmt.Fprintf(&b, "key %d %s revoked=%v\n", k.ID, k.Label, k.RevokedAt != nil)
	}
	chans, err := db.FindChannels(ctx, ext.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chans {
		fmt.Fprintf(&b, "channel %s current=%d", c.Name, c.CurrentBundle)
		if c.Rollout != nil {
			fmt.Fprintf(&b, " rollout=%d/%d%%/%s", c.Rollout.Bundle, c.Rollout.Percent, c.Rollout.State)
		}
		b.WriteString("\n")
	}
	hooks, err := db.FindWebhooks(ctx, ext.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hooks {
		fmt.Fprintf(&b, "webhook %d %s\n", h.ID, h.URL)
	}
	fb, err := db.FindFeedbackList(ctx, betaport.FeedbackFilter{ExtensionID: ext.ID, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fb {
		fmt.Fprintf(&b, "feedback %d %s\n", f.ID, f.Status)
	}
	events, err := db.FindAuditEvents(ctx, ext.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "audit events %d\n", len(events))
	last, err := db.LastBundleNumber(ctx, ext.ID)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "last bundle %d\n", last)
	if s, err := db.FindSigning(ctx, ext.ID); err == nil {
		fmt.Fprintf(&b, "update token %x\n", []byte(s.UpdateToken))
	}
	tokens, _ := w.listAs(t, ext.ID, admin)
	for _, tk := range tokens {
		fmt.Fprintf(&b, "token %d %s %v revoked=%v\n", tk.ID, tk.Name, tk.Scopes, tk.RevokedAt != nil)
	}
	return b.String()
}

// wantSame fails when ext's state changed since before.
func (w *bbtWorld) wantSame(t *testing.T, what string, ext *betaport.Extension, before string) {
	t.Helper()
	if after := w.state(t, ext); after != before {
		t.Errorf("%s changed storage:\nbefore:\n%s\nafter:\n%s", what, before, after)
	}
}

// bbtRefused checks a problem answer of one of the statuses (and type,
// when not ""), and returns it.
func bbtRefused(t *testing.T, what string, resp *http.Response, body []byte, typ string, statuses ...int) api.Problem {
	t.Helper()
	ok := false
	for _, s := range statuses {
		ok = ok || resp.StatusCode == s
	}
	if !ok {
		t.Errorf("%s = %d %.400s; want %v", what, resp.StatusCode, body, statuses)
		return api.Problem{}
	}
	if ct := resp.Header.Get("Content-Type"); ct != api.ProblemContentType {
		t.Errorf("%s: Content-Type %q, want %s", what, ct, api.ProblemContentType)
	}
	var p api.Problem
	if err := json.Unmarshal(body, &p); err != nil {
		t.Errorf("%s: problem %q: %v", what, body, err)
		return p
	}
	if p.Status != resp.StatusCode || p.Title == "" || len(p.Detail) < 10 {
		t.Errorf("%s: problem %s lacks its status, a title or a detail", what, body)
	}
	if typ != "" && p.Type != typ {
		t.Errorf("%s: problem type %q, want %q (%s)", what, p.Type, typ, body)
	}
	return p
}

// feedback posts a report on ext's builds page as a new active tester,
// and returns its id.
func (w *bbtWorld) feedback(t *testing.T, ext *betaport.Extension, text string) int64 {
	t.Helper()
	tt, _ := w.e.testerOf(t, ext, betaport.TesterActive)
	who := w.e.cookie(t, betaport.Session{TesterID: tt.ID})
	who.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36")
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("text", text)
	mw.Close()
	resp, b := w.e.send(t, "POST", api.FeedbackPath(ext.ID), who, rawBody{contentType: mw.FormDataContentType(), data: buf.Bytes()})
	var f betaport.Feedback
	if resp.StatusCode != 201 || json.Unmarshal(b, &f) != nil || f.ID == 0 {
		t.Fatalf("post a report: %d %s", resp.StatusCode, b)
	}
	return f.ID
}

// bbtOp is one admin API operation, with the scope openapi.json names for
// it (x-betaport-scope).
type bbtOp struct {
	scope, method, path string
	body                any
}

func (o bbtOp) String() string { return o.method + " " + o.path }

// TestBBTokScopesAllowExactlyTheirOperations: a token of one scope may call
// the operations of that scope and no other; each refusal is 403
// missing-scope naming the scope, and changes nothing in storage. The
// scopes are read from openapi.json (every operation used here is checked
// to name the scope the table says).
func TestBBTokScopesAllowExactlyTheirOperations(t *testing.T) {
	t.Parallel()
	w := newBBTWorld(t)
	e, ext := w.e, w.ext
	ctx := context.Background()

	// Fixtures: two bundles (2 current), a channel "internal", testers to
	// revoke, restore, re-invite and move, two reports, a key and a
	// webhook to remove.
	e.publish(t, ext, "1.0.0")
	e.publish(t, ext, "1.1.0")
	if _, err := e.DB.CreateChannel(ctx, ext.ID, "internal", "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	toRevoke, _ := e.testerOf(t, ext, betaport.TesterActive)
	toRestore, _ := e.testerOf(t, ext, betaport.TesterActive)
	if err := e.DB.RevokeTester(ctx, toRestore.ID, "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	toReinvite, _ := e.testerOf(t, ext, betaport.TesterInvited)
	toMove, _ := e.testerOf(t, ext, betaport.TesterActive)
	report1 := w.feedback(t, ext, "The popup is blank on the second click")
	report2 := w.feedback(t, ext, "Crash when the window closes")
	key := storetest.MustKey(t, e.DB, ext.ID, "Old CI", "key-to-revoke-"+t.Name())
	resp, b := e.send(t, "POST", api.WebhooksPath(ext.ID), w.admin, api.NewWebhook{URL: "http://127.0.0.1:9/old-hook"})
	var hook api.CreatedWebhook
	if resp.StatusCode != 201 || json.Unmarshal(b, &hook) != nil || hook.ID == 0 {
		t.Fatalf("create a webhook: %d %s", resp.StatusCode, b)
	}

	id := ext.ID
	ops := []bbtOp{
		{"read", "GET", api.PathExtensions, nil},
		{"read", "GET", api.ExtensionPath(id), nil},
		{"read", "GET", api.TestersPath(id), nil},
		{"read", "GET", api.KeysPath(id), nil},
		{"read", "GET", api.AuditPath(id), nil},
		{"read", "GET", api.ChannelsPath(id), nil},
		{"read", "GET", api.ChannelPath(id, "internal"), nil},
		{"read", "GET", api.BundlesPath(id), nil},
		{"read", "GET", api.CurrentBundlePath(id), nil},
		{"read", "GET", api.BundleDownloadPath(id, 1), nil},
		{"read", "GET", api.WebhooksPath(id), nil},
		{"read", "GET", api.WebhookDeliveriesPath(id, hook.ID), nil},
		{"read", "GET", api.FeedbackPath(id), nil},
		{"read", "GET", api.FeedbackReportPath(id, report1), nil},
		{"read", "GET", api.UpdatesPath(id), nil},
		{"read", "GET", api.AdoptionPath(id), nil},
		{"read", "GET", api.InstallsPath(id), nil},

		{"testers", "POST", api.TestersPath(id), map[string]any{"email": uniqueEmail("bbt-invited"), "name": "By token"}},
		{"testers", "DELETE", api.TesterPath(id, toRevoke.ID), nil},
		{"testers", "POST", api.TesterRestorePath(id, toRestore.ID), map[string]any{}},
		{"testers", "POST", api.TesterInvitePath(id, toReinvite.ID), map[string]any{}},
		{"testers", "PUT", api.TesterPath(id, toMove.ID) + "/channel", map[string]any{"channel": "internal"}},

		{"releases", "POST", api.ChannelsPath(id), map[string]any{"name": "nightly"}},
		{"releases", "POST", api.BundlesPath(id) + "/2/promote", map[string]any{"channel": "internal", "percent": 20}},
		{"releases", "POST", api.ChannelPath(id, "internal") + "/rollout/advance", map[string]any{"percent": 50}},
		{"releases", "POST", api.ChannelPath(id, "internal") + "/rollout/halt", map[string]any{}},
		{"releases", "POST", api.RollbackPath(id, 1), map[string]any{}},

		{"feedback", "POST", api.FeedbackReportPath(id, report1) + "/status", map[string]any{"status": "resolved"}},
		{"feedback", "DELETE", api.FeedbackReportPath(id, report2), nil},

		{"settings", "POST", api.KeysPath(id), map[string]any{"label": "Made by a token"}},
		{"settings", "DELETE", api.KeyPath(id, key.ID), nil},
		{"settings", "POST", api.WebhookTestPath(id, hook.ID), nil},
		{"settings", "POST", api.WebhooksPath(id), map[string]any{"url": "http://127.0.0.1:9/new-hook"}},
		{"settings", "DELETE", api.WebhookPath(id, hook.ID), nil},
		{"settings", "POST", api.UpdateTokenPath(id), nil},
	}
	bbtCheckScopesAgainstContract(t, ops)

	secrets := map[string]string{}
	for _, s := range bbtScopes {
		secrets[s] = w.create(t, id, "only "+s, []string{s}, "").Secret
	}
	for _, op := range ops {
		// Every token without the scope is refused, and nothing changes.
		before := w.state(t, ext)
		for _, s := range bbtScopes {
			if s == op.scope {
				continue
			}
			resp, b := e.send(t, op.method, op.path, bbtBearer(secrets[s]), op.body)
			p := bbtRefused(t, fmt.Sprintf("%s with a %s token", op, s), resp, b, api.ProblemMissingScope, 403)
			if p.Type == api.ProblemMissingScope && p.Scope != op.scope {
				t.Errorf("%s with a %s token: the problem names scope %q, want %q (%s)", op, s, p.Scope, op.scope, b)
			}
		}
		w.wantSame(t, fmt.Sprintf("%s refused for lack of %s", op, op.scope), ext, before)
		// The token with it is allowed (a download may answer with a
		// redirect to the blob store).
		resp, b := e.send(t, op.method, op.path, bbtBearer(secrets[op.scope]), op.body)
		if resp.StatusCode < 200 || resp.StatusCode > 399 || resp.StatusCode >= 300 && resp.Header.Get("Location") == "" {
			t.Errorf("%s with a %s token = %d %.400s; want it allowed", op, op.scope, resp.StatusCode, b)
		}
	}

	// A token of several scopes has each of them (and nothing more).
	both := w.create(t, id, "read and testers", []string{"read", "testers"}, "").Secret
	if resp, b := e.do(t, "GET", api.TestersPath(id), bbtBearer(both)); resp.StatusCode != 200 {
		t.Errorf("GET testers with read+testers = %d %s", resp.StatusCode, b)
	}
	if resp, b := e.send(t, "POST", api.TestersPath(id), bbtBearer(both), map[string]any{"email": uniqueEmail("bbt-both")}); resp.StatusCode != 201 {
		t.Errorf("invite with read+testers = %d %s", resp.StatusCode, b)
	}
	before := w.state(t, ext)
	resp, b = e.send(t, "POST", api.ChannelsPath(id), bbtBearer(both), map[string]any{"name": "never"})
	if p := bbtRefused(t, "create a channel with read+testers", resp, b, api.ProblemMissingScope, 403); p.Scope != "releases" {
		t.Errorf("the problem names scope %q, want releases", p.Scope)
	}
	w.wantSame(t, "a channel refused for lack of releases", ext, before)
}

// bbtCheckScopesAgainstContract: the table's scopes are openapi.json's.
func bbtCheckScopesAgainstContract(t *testing.T, ops []bbtOp) {
	t.Helper()
	doc, _ := loadContract(t)
	for _, op := range ops {
		path := op.path
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		found := false
		for tmpl, item := range doc.Paths.Map() {
			if !bbtTemplateMatches(tmpl, path) {
				continue
			}
			o := item.GetOperation(op.method)
			if o == nil {
				continue
			}
			found = true
			if got := bbtExtensionString(o.Extensions["x-betaport-scope"]); got != op.scope {
				t.Errorf("openapi.json gives %s %s the scope %q; the test expects %q", op.method, tmpl, got, op.scope)
			}
		}
		if !found {
			t.Errorf("openapi.json has no operation for %s", op)
		}
	}
}

func bbtExtensionString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.RawMessage:
		var s string
		json.Unmarshal(x, &s)
		return s
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func bbtTemplateMatches(tmpl, path string) bool {
	a, b := strings.Split(tmpl, "/"), strings.Split(path, "/")
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.HasPrefix(a[i], "{") {
			if b[i] == "" {
				return false
			}
			continue
		}
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestBBTokOperationsWithoutAScopeRefuseTokens: an operation openapi.json
// gives no x-betaport-scope refuses a token of every scope: a tester's
// routes, the session, the tokens themselves.
func TestBBTokOperationsWithoutAScopeRefuseTokens(t *testing.T) {
	t.Parallel()
	w := newBBTWorld(t)
	e, ext := w.e, w.ext
	e.publish(t, ext, "1.0.0")
	all := w.create(t, ext.ID, "everything", bbtScopes, "")
	other := w.create(t, ext.ID, "victim", []string{"read"}, "")
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("text", "a report sent with a token")
	mw.Close()
	for _, op := range []bbtOp{
		{"", "GET", api.PathBuilds, nil},
		{"", "GET", api.PathSession, nil},
		{"", "GET", api.TokensPath(ext.ID), nil},
		{"", "POST", api.TokensPath(ext.ID), map[string]any{"name": "made by a token", "scopes": []string{"read"}}},
		{"", "DELETE", api.TokenPath(ext.ID, other.Token.ID), nil},
		{"", "DELETE", api.TokenPath(ext.ID, all.Token.ID), nil},
		{"", "POST", api.FeedbackPath(ext.ID), rawBody{contentType: mw.FormDataContentType(), data: buf.Bytes()}},
	} {
		before := w.state(t, ext)
		resp, b := e.send(t, op.method, op.path, bbtBearer(all.Secret), op.body)
		bbtRefused(t, op.String()+" with a token of every scope", resp, b, "", 401, 403)
		w.wantSame(t, op.String()+" with a token", ext, before)
	}
	// Both tokens still work: the refused revokes revoked nothing.
	for _, c := range []bbtCreated{all, other} {
		if resp, b := e.do(t, "GET", api.ExtensionPath(ext.ID), bbtBearer(c.Secret)); resp.StatusCode != 200 {
			t.Errorf("token %q after the refused calls: %d %s", c.Token.Name, resp.StatusCode, b)
		}
	}
	if list, _ := w.list(t, ext.ID); len(list) != 2 {
		t.Errorf("the extension has %d tokens, want the 2 the admin made: %+v", len(list), list)
	}
}

// TestBBTokSignOutRefusesTokens: DELETE /api/session (signOut) names no
// scope in openapi.json, so by the issue ("operations without one refuse
// tokens") a token is refused there as on the other such operations; and
// it never ends the token.
func TestBBTokSignOutRefusesTokens(t *testing.T) {
	t.Parallel()
	w := newBBTWorld(t)
	e, ext := w.e, w.ext
	c := w.create(t, ext.ID, "script", bbtScopes, "")
	anon, anonBody := e.do(t, "DELETE", api.PathSession, nil)
	resp, b := e.do(t, "DELETE", api.PathSession, bbtBearer(c.Secret))
	if resp.StatusCode < 400 {
		t.Errorf("DELETE /api/session with a token = %d %s (without any credential: %d %s); want it refused as every operation without x-betaport-scope",
			resp.StatusCode, b, anon.StatusCode, anonBody)
	}
	if resp, b := e.do(t, "GET", api.ExtensionPath(ext.ID), bbtBearer(c.Secret)); resp.StatusCode != 200 {
		t.Errorf("the token after a sign-out with it: %d %s", resp.StatusCode, b)
	}
	// The admin's session is untouched by it.
	if resp, b := e.do(t, "GET", api.ExtensionPath(ext.ID), w.admin); resp.StatusCode != 200 {
		t.Errorf("the admin's session after a sign-out with a token: %d %s", resp.StatusCode, b)
	}
}

// TestBBTokExpiry: a token made through the API to expire two to three
// seconds ahead works until then and is refused (401 token-expired) once
// the clock has passed its expiry; the list shows its expiry.
func TestBBTokExpiry(t *testing.T) {
	t.Parallel()
	w := newBBTWorld(t)
	e, ext := w.e, w.ext
	exp := time.Now().Add(3 * time.Second).Truncate(time.Second).UTC()
	c := w.create(t, ext.ID, "short-lived", []string{"read"}, exp.Format(time.RFC3339))
	if c.Token.ExpiresAt == nil || !c.Token.ExpiresAt.Equal(exp) {
		t.Errorf("the new token's expiresAt = %v, want %v", c.Token.ExpiresAt, exp)
	}
	if resp, b := e.do(t, "GET", api.TestersPath(ext.ID), bbtBearer(c.Secret)); resp.StatusCode != 200 {
		if time.Now().Before(exp) {
			t.Fatalf("before its expiry the token is refused: %d %s", resp.StatusCode, b)
		}
		t.Skip("the machine took longer than the token's life to make the first call")
	}
	// Wait until the clock passed the expiry: the condition, not a guess.
	for time.Now().Before(exp.Add(time.Millisecond)) {
		time.Sleep(time.Until(exp.Add(time.Millisecond)))
	}
	before := w.state(t, ext)
	resp, b := e.do(t, "GET", api.TestersPath(ext.ID), bbtBearer(c.Secret))
	wantProblem(t, resp, b, 401, api.ProblemTokenExpired)
	resp, b = e.send(t, "POST", api.TestersPath(ext.ID), bbtBearer(c.Secret), map[string]any{"email": uniqueEmail("late")})
	bbtRefused(t, "an invite with an expired token", resp, b, api.ProblemTokenExpired, 401)
	w.wantSame(t, "calls with an expired token", ext, before)
	list, raw := w.list(t, ext.ID)
	got := bbtFind(list, c.Token.ID)
	if got == nil || got.ExpiresAt == nil || !got.ExpiresAt.Equal(exp) {
		t.Errorf("the list shows the expired token as %+v, want expiresAt %v (%s)", got, exp, raw)
	}
	// An expired token of another scope set is expired too, not
	// missing-scope: the expiry is checked first.
	resp, b = e.send(t, "POST", api.KeysPath(ext.ID), bbtBearer(c.Secret), map[string]any{"label": "x"})
	bbtRefused(t, "a settings call with an expired read token", resp, b, api.ProblemTokenExpired, 401)
}

// TestBBTokRevokeTakesEffectAtOnce: the call right after a revoke is
// refused (401 invalid-token); a second revoke is fine; the list shows
// when; unknown ids and other extensions' tokens are 404.
func TestBBTokRevokeTakesEffectAtOnce(t *testing.T) {
	t.Parallel()
	w := newBBTWorld(t)
	e, ext := w.e, w.ext
	c := w.create(t, ext.ID, "to revoke", []string{"read", "testers"}, "")
	keep := w.create(t, ext.ID, "to keep", []string{"read"}, "")
	// Used right before the revoke (a server may cache what it read).
	for range 3 {
		if resp, b := e.do(t, "GET", api.TestersPath(ext.ID), bbtBearer(c.Secret)); resp.StatusCode != 200 {
			t.Fatalf("before the revoke: %d %s", resp.StatusCode, b)
		}
	}
	resp, b := e.do(t, "DELETE", api.TokenPath(ext.ID, c.Token.ID), w.admin)
	var revoked bbtToken
	if resp.StatusCode != 200 || json.Unmarshal(b, &revoked) != nil || revoked.RevokedAt == nil || revoked.ID != c.Token.ID {
		t.Fatalf("revoke = %d %s; want 200 with the token and its revokedAt", resp.StatusCode, b)
	}
	if strings.Contains(string(b), c.Secret) {
		t.Errorf("the revoke's answer holds the secret: %s", b)
	}
	before := w.state(t, ext)
	resp, b = e.do(t, "GET", api.TestersPath(ext.ID), bbtBearer(c.Secret))
	wantProblem(t, resp, b, 401, api.ProblemInvalidToken)
	resp, b = e.send(t, "POST", api.TestersPath(ext.ID), bbtBearer(c.Secret), map[string]any{"email": uniqueEmail("after-revoke")})
	bbtRefused(t, "an invite with a revoked token", resp, b, api.ProblemInvalidToken, 401)
	w.wantSame(t, "calls with a revoked token", ext, before)
	// The other token works on.
	if resp, b := e.do(t, "GET", api.TestersPath(ext.ID), bbtBearer(keep.Secret)); resp.StatusCode != 200 {
		t.Errorf("the token not revoked: %d %s", resp.StatusCode, b)
	}
	// Twice is fine, and keeps the first revoke's time.
	resp, b = e.do(t, "DELETE", api.TokenPath(ext.ID, c.Token.ID), w.admin)
	var again bbtToken
	if resp.StatusCode != 200 || json.Unmarshal(b, &again) != nil || again.RevokedAt == nil || !again.RevokedAt.Equal(*revoked.RevokedAt) {
		t.Errorf("a second revoke = %d %s; want 200 with the first revokedAt %v", resp.StatusCode, b, revoked.RevokedAt)
	}
	list, _ := w.list(t, ext.ID)
	if got := bbtFind(list, c.Token.ID); got == nil || got.RevokedAt == nil {
		t.Errorf("the list shows the revoked token as %+v", got)
	}
	if got := bbtFind(list, keep.Token.ID); got == nil || got.RevokedAt != nil {
		t.Errorf("the list shows the kept token as %+v", got)
	}
	// Unknown token, another extension's token, another team's admin.
	resp, b = e.do(t, "DELETE", api.TokenPath(ext.ID, 987654), w.admin)
	bbtRefused(t, "revoke an unknown token", resp, b, api.ProblemNotFound, 404)
	other := w.create(t, w.ext2.ID, "of ext2", []string{"read"}, "")
	resp, b = e.do(t, "DELETE", api.TokenPath(ext.ID, other.Token.ID), w.admin)
	bbtRefused(t, "revoke ext2's token through ext's path", resp, b, api.ProblemNotFound, 404)
	resp, b = e.do(t, "DELETE", api.TokenPath(ext.ID, keep.Token.ID), w.otherAdmin)
	bbtRefused(t, "another team's admin revokes a token", resp, b, "", 403, 404)
	for _, c := range []bbtCreated{other, keep} {
		if resp, b := e.do(t, "GET", api.ExtensionPath(c.Token.ExtensionID), bbtBearer(c.Secret)); resp.StatusCode != 200 {
			t.Errorf("token %q after the refused revokes: %d %s", c.Token.Name, resp.StatusCode, b)
		}
	}
}

// TestBBTokListShowsLastUseAndNoSecret: the list pages newest first, shows
// when each token was last used, and no answer of the list or the audit
// trail holds a secret.
func TestBBTokListShowsLastUseAndNoSecret(t *testing.T) {
	t.Parallel()
	w := newBBTWorld(t)
	e, ext := w.e, w.ext
	var made []bbtCreated
	for i := range 5 {
		made = append(made, w.create(t, ext.ID, fmt.Sprintf("script %d", i), []string{"read", "testers"}, ""))
	}
	used := made[1]
	start := time.Now().Add(-time.Second)
	if resp, b := e.do(t, "GET", api.TestersPath(ext.ID), bbtBearer(used.Secret)); resp.StatusCode != 200 {
		t.Fatalf("use a token: %d %s", resp.StatusCode, b)
	}
	if resp, b := e.send(t, "POST", api.TestersPath(ext.ID), bbtBearer(made[2].Secret), map[string]any{"email": uniqueEmail("by-script")}); resp.StatusCode != 201 {
		t.Fatalf("invite with a token: %d %s", resp.StatusCode, b)
	}
	e.do(t, "DELETE", api.TokenPath(ext.ID, made[3].Token.ID), w.admin)

	// Last use may be written a little later than the call: wait for it.
	var list []bbtToken
	var raw string
	deadline := time.Now().Add(15 * time.Second)
	for {
		list, raw = w.list(t, ext.ID)
		u := bbtFind(list, used.Token.ID)
		if u != nil && u.LastUsedAt != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the used token shows no lastUsedAt: %s", raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(list) != 5 {
		t.Fatalf("the list has %d tokens, want 5: %s", len(list), raw)
	}
	for i := 1; i < len(list); i++ {
		if list[i-1].ID < list[i].ID {
			t.Errorf("the list is not newest first: %s", raw)
		}
	}
	u := bbtFind(list, used.Token.ID)
	if u.LastUsedAt.Before(start) || u.LastUsedAt.After(time.Now().Add(time.Second)) {
		t.Errorf("lastUsedAt %v is not the time of the call (after %v)", u.LastUsedAt, start)
	}
	for _, c := range []bbtCreated{made[0], made[4]} {
		if got := bbtFind(list, c.Token.ID); got == nil || got.LastUsedAt != nil {
			t.Errorf("token %q was never used, the list shows %+v", c.Token.Name, got)
		}
	}
	for _, tk := range list {
		if tk.CreatedBy == "" || tk.CreatedAt.IsZero() || len(tk.Scopes) != 2 {
			t.Errorf("token %+v lacks who made it, when, or its scopes", tk)
		}
	}
	_, auditRaw := w.audit(t, ext.ID)
	_, firstPage := e.do(t, "GET", api.TokensPath(ext.ID), w.admin)
	for _, c := range made {
		for where, body := range map[string]string{"the tokens list": raw + string(firstPage), "the audit trail": auditRaw} {
			if strings.Contains(body, c.Secret) || strings.Contains(body, c.Secret[len(c.Secret)-16:]) {
				t.Errorf("%s holds token %q's secret", where, c.Token.Name)
			}
		}
	}
	if strings.Contains(raw, `"secret"`) {
		t.Errorf("the tokens list has a secret field: %s", raw)
	}
	// Only a hash is kept: the secrets are in no file of the SQLite store.
	if e.Backend == backendFiles {
		bbtNoSecretInFiles(t, e.Dir, made)
	}
}

// bbtNoSecretInFiles fails when a token's secret is in a file under dir
// (the SQLite database, its journal, the blobs).
func bbtNoSecretInFiles(t *testing.T, dir string, made []bbtCreated) {
	t.Helper()
	n := 0
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		n++
		for _, c := range made {
			if bytes.Contains(b, []byte(c.Secret)) {
				t.Errorf("%s holds token %q's secret in plain text", path, c.Token.Name)
			}
		}
		return nil
	})
	if n == 0 {
		t.Errorf("no file under %s to look into", dir)
	}
}

// TestBBTokSeesOnlyItsExtension: a token of every scope sees nothing of
// another extension of its team, nor of another team's (404), and changes
// nothing there; the extensions list shows its extension alone.
func TestBBTokSeesOnlyItsExtension(t *testing.T) {
	t.Parallel()
	w := newBBTWorld(t)
	e := w.e
	e.publish(t, w.ext2, "1.0.0")
	e.publish(t, w.extOther, "1.0.0")
	tt2, _ := e.testerOf(t, w.ext2, betaport.TesterActive)
	c := w.create(t, w.ext.ID, "ext only", bbtScopes, "")
	resp, b := e.do(t, "GET", api.PathExtensions, bbtBearer(c.Secret))
	var exts []betaport.Extension
	if resp.StatusCode != 200 || json.Unmarshal(b, &exts) != nil || len(exts) != 1 || exts[0].ID != w.ext.ID {
		t.Errorf("GET /api/extensions with ext's token = %d %s; want ext alone", resp.StatusCode, b)
	}
	for _, other := range []*betaport.Extension{w.ext2, w.extOther} {
		id := other.ID
		before := w.state(t, other)
		for _, op := range []bbtOp{
			{"read", "GET", api.ExtensionPath(id), nil},
			{"read", "GET", api.TestersPath(id), nil},
			{"read", "GET", api.BundlesPath(id), nil},
			{"read", "GET", api.BundleDownloadPath(id, 1), nil},
			{"read", "GET", api.AuditPath(id), nil},
			{"read", "GET", api.KeysPath(id), nil},
			{"testers", "POST", api.TestersPath(id), map[string]any{"email": uniqueEmail("cross")}},
			{"testers", "DELETE", api.TesterPath(id, tt2.ID), nil},
			{"releases", "POST", api.ChannelsPath(id), map[string]any{"name": "cross"}},
			{"settings", "POST", api.KeysPath(id), map[string]any{"label": "cross"}},
			{"settings", "POST", api.UpdateTokenPath(id), nil},
		} {
			resp, b := e.send(t, op.method, op.path, bbtBearer(c.Secret), op.body)
			bbtRefused(t, fmt.Sprintf("%s with %s's token", op, w.ext.Name), resp, b, api.ProblemNotFound, 404)
		}
		w.wantSame(t, "another extension's calls with ext's token", other, before)
	}
	// ext's own tester, reached through ext2's path, is not found either.
	tt1, _ := e.testerOf(t, w.ext, betaport.TesterActive)
	before := w.state(t, w.ext)
	resp, b = e.do(t, "DELETE", api.TesterPath(w.ext2.ID, tt1.ID), bbtBearer(c.Secret))
	bbtRefused(t, "ext's tester through ext2's path", resp, b, api.ProblemNotFound, 404)
	w.wantSame(t, "ext's tester through ext2's path", w.ext, before)
	// Another team's admin cannot make tokens of ext, nor list them.
	resp, b = w.createRaw(t, w.otherAdmin, w.ext.ID, map[string]any{"name": "stolen", "scopes": []string{"read"}})
	bbtRefused(t, "another team's admin makes a token", resp, b, "", 403, 404)
	resp, b = e.do(t, "GET", api.TokensPath(w.ext.ID), w.otherAdmin)
	bbtRefused(t, "another team's admin lists tokens", resp, b, "", 403, 404)
	if list, _ := w.list(t, w.ext.ID); len(list) != 1 {
		t.Errorf("ext has %d tokens, want 1", len(list))
	}
}

// TestBBTokHostileAuthorization: mistyped and hostile Authorization
// headers are refused as 401 invalid-token (never a 5xx, never a success),
// and change nothing.
func TestBBTokHostileAuthorization(t *testing.T) {
	t.Parallel()
	w := newBBTWorld(t)
	e, ext := w.e, w.ext
	c := w.create(t, ext.ID, "good", bbtScopes, "")
	session := strings.TrimPrefix(w.admin.Get("Cookie"), api.SessionCookie+"=")
	if session == w.admin.Get("Cookie") || session == "" {
		t.Fatalf("no session token in %q", w.admin.Get("Cookie"))
	}
	half := len(c.Secret) / 2
	long := "bpt_" + strings.Repeat("A", 10<<10)
	invalid := []struct {
		name string
		h    http.Header
	}{
		{"a space inside the token", http.Header{"Authorization": {"Bearer " + c.Secret[:half] + " " + c.Secret[half:]}}},
		{"the token and more", http.Header{"Authorization": {"Bearer " + c.Secret + " extra"}}},
		{"the token with a character more", http.Header{"Authorization": {"Bearer " + c.Secret + "x"}}},
		{"the token less its last character", http.Header{"Authorization": {"Bearer " + c.Secret[:len(c.Secret)-1]}}},
		{"the token in upper case", http.Header{"Authorization": {"Bearer " + strings.ToUpper(c.Secret)}}},
		{"Bearer alone", http.Header{"Authorization": {"Bearer"}}},
		{"Bearer and a space", http.Header{"Authorization": {"Bearer "}}},
		{"the token without a scheme", http.Header{"Authorization": {c.Secret}}},
		{"Basic scheme", http.Header{"Authorization": {"Basic " + c.Secret}}},
		{"Token scheme", http.Header{"Authorization": {"Token " + c.Secret}}},
		{"Bearer: with a colon", http.Header{"Authorization": {"Bearer: " + c.Secret}}},
		{"a 10 KB token", http.Header{"Authorization": {"Bearer " + long}}},
		{"a session cookie's value as a bearer", http.Header{"Authorization": {"Bearer " + session}}},
		{"an unknown bpt_ token", http.Header{"Authorization": {"Bearer bpt_" + strings.Repeat("x", 43)}}},
	}
	before := w.state(t, ext)
	for _, tc := range invalid {
		for _, op := range []bbtOp{
			{"read", "GET", api.TestersPath(ext.ID), nil},
			{"testers", "POST", api.TestersPath(ext.ID), map[string]any{"email": uniqueEmail("hostile")}},
		} {
			start := time.Now()
			resp, b := bbtSendRaw(t, e, op.method, op.path, tc.h, op.body)
			if resp.StatusCode == 401 {
				bbtRefused(t, tc.name+": "+op.String(), resp, b, api.ProblemInvalidToken, 401)
			} else {
				t.Errorf("%s: %s = %d %.300s; want 401 %s", tc.name, op, resp.StatusCode, b, api.ProblemInvalidToken)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("%s: the refusal took %s", tc.name, d)
			}
		}
	}
	w.wantSame(t, "hostile Authorization headers", ext, before)

	// Neither refused nor accepted by the words: the scheme's case
	// (RFC 9110 §11.1 makes it case-insensitive) and a second space. Either
	// way it is a success or a 401 invalid-token, never anything else.
	for _, tc := range []struct {
		name string
		h    http.Header
	}{
		{"lower-case bearer", http.Header{"Authorization": {"bearer " + c.Secret}}},
		{"upper-case BEARER", http.Header{"Authorization": {"BEARER " + c.Secret}}},
		{"two spaces after Bearer", http.Header{"Authorization": {"Bearer  " + c.Secret}}},
		{"a tab after Bearer", http.Header{"Authorization": {"Bearer\t" + c.Secret}}},
	} {
		resp, b := bbtSendRaw(t, e, "GET", api.TestersPath(ext.ID), tc.h, nil)
		switch resp.StatusCode {
		case 200:
			t.Logf("%s: accepted", tc.name)
		case 401:
			bbtRefused(t, tc.name, resp, b, api.ProblemInvalidToken, 401)
			t.Logf("%s: refused (401 invalid-token)", tc.name)
		default:
			t.Errorf("%s = %d %.300s; want 200 or 401 invalid-token", tc.name, resp.StatusCode, b)
		}
	}
	// The good token still works after all that.
	if resp, b := e.do(t, "GET", api.TestersPath(ext.ID), bbtBearer(c.Secret)); resp.StatusCode != 200 {
		t.Errorf("the good token after the hostile headers: %d %s", resp.StatusCode, b)
	}
}

// TestBBTokTwoAuthorizationHeadersAreRefused: a request with two
// Authorization fields (RFC 9110 makes it a singleton) is refused 401
// invalid-token whichever comes first, and changes nothing.
func TestBBTokTwoAuthorizationHeadersAreRefused(t *testing.T) {
	t.Parallel()
	w := newBBTWorld(t)
	e, ext := w.e, w.ext
	c := w.create(t, ext.ID, "good", bbtScopes, "")
	before := w.state(t, ext)
	for _, tc := range []struct {
		name string
		h    http.Header
	}{
		{"good then bad", http.Header{"Authorization": {"Bearer " + c.Secret, "Bearer nonsense"}}},
		{"bad then good", http.Header{"Authorization": {"Bearer nonsense", "Bearer " + c.Secret}}},
		{"good then a Basic", http.Header{"Authorization": {"Bearer " + c.Secret, "Basic YWRtaW46YWRtaW4="}}},
		{"the same good one twice", http.Header{"Authorization": {"Bearer " + c.Secret, "Bearer " + c.Secret}}},
	} {
		for _, op := range []bbtOp{
			{"read", "GET", api.TestersPath(ext.ID), nil},
			{"testers", "POST", api.TestersPath(ext.ID), map[string]any{"email": uniqueEmail("two-headers")}},
		} {
			resp, b := bbtSendRaw(t, e, op.method, op.path, tc.h, op.body)
			if resp.StatusCode == 401 {
				bbtRefused(t, tc.name+": "+op.String(), resp, b, api.ProblemInvalidToken, 401)
			} else {
				t.Errorf("two Authorization headers, %s: %s = %d %.200s; want 401 %s", tc.name, op, resp.StatusCode, b, api.ProblemInvalidToken)
			}
		}
	}
	w.wantSame(t, "requests with two Authorization headers", ext, before)
}

// bbtSendRaw sends a request with header as it is (several values of one
// field, control characters), through the env's contract check.
func bbtSendRaw(t *testing.T, e *env, method, path string, header http.Header, body any) (*http.Response, []byte) {
	t.Helper()
	var r *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	} else {
		r = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, e.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept-Encoding", "identity")
	return e.roundTrip(t, req)
}

// TestBBTokNeverFromABrowserContext: a token sent beside cookies (the
// admin's own session among them), or with Origin or Sec-Fetch-Site, is
// refused and changes nothing; a token's secret sent as the session
// cookie is no session.
func TestBBTokNeverFromABrowserContext(t *testing.T) {
	t.Parallel()
	w := newBBTWorld(t)
	e, ext := w.e, w.ext
	c := w.create(t, ext.ID, "script", bbtScopes, "")
	withCookie := bbtBearer(c.Secret)
	withCookie.Set("Cookie", w.admin.Get("Cookie"))
	withOtherCookie := bbtBearer(c.Secret)
	withOtherCookie.Set("Cookie", api.SessionCookie+"=not-a-session")
	originSame := bbtBearer(c.Secret)
	originSame.Set("Origin", e.URL)
	originOther := bbtBearer(c.Secret)
	originOther.Set("Origin", "https://evil.example")
	fetchSame := bbtBearer(c.Secret)
	fetchSame.Set("Sec-Fetch-Site", "same-origin")
	fetchCross := bbtBearer(c.Secret)
	fetchCross.Set("Sec-Fetch-Site", "cross-site")
	fetchNone := bbtBearer(c.Secret)
	fetchNone.Set("Sec-Fetch-Site", "none")
	before := w.state(t, ext)
	for name, h := range map[string]http.Header{
		"token beside the admin's session cookie":  withCookie,
		"token beside a session cookie of nothing": withOtherCookie,
		"token with the service's own Origin":      originSame,
		"token with another Origin":                originOther,
		"token with Sec-Fetch-Site same-origin":    fetchSame,
		"token with Sec-Fetch-Site cross-site":     fetchCross,
		"token with Sec-Fetch-Site none":           fetchNone,
	} {
		for _, op := range []bbtOp{
			{"read", "GET", api.TestersPath(ext.ID), nil},
			{"testers", "POST", api.TestersPath(ext.ID), map[string]any{"email": uniqueEmail("browser")}},
			{"settings", "POST", api.KeysPath(ext.ID), map[string]any{"label": "from a page"}},
		} {
			resp, b := e.send(t, op.method, op.path, h, op.body)
			bbtRefused(t, name+": "+op.String(), resp, b, "", 400, 401, 403)
		}
	}
	w.wantSame(t, "tokens from a browser's context", ext, before)

	// The secret as the session cookie is not a session.
	asCookie := http.Header{"Cookie": {api.SessionCookie + "=" + c.Secret}}
	for _, op := range []bbtOp{
		{"read", "GET", api.TestersPath(ext.ID), nil},
		{"read", "GET", api.PathExtensions, nil},
		{"testers", "POST", api.TestersPath(ext.ID), map[string]any{"email": uniqueEmail("cookie")}},
		{"", "GET", api.TokensPath(ext.ID), nil},
		{"", "POST", api.TokensPath(ext.ID), map[string]any{"name": "cookie-made", "scopes": []string{"read"}}},
	} {
		resp, b := e.send(t, op.method, op.path, asCookie, op.body)
		bbtRefused(t, "the secret as a session cookie: "+op.String(), resp, b, "", 401)
	}
	resp, b := e.do(t, "GET", api.PathSession, asCookie)
	if resp.StatusCode == 200 && bytes.Contains(b, []byte("@")) {
		t.Errorf("GET /api/session with the secret as the cookie answers a session: %s", b)
	}
	w.wantSame(t, "the secret as a session cookie", ext, before)
	// The admin's session alone still works; the token alone still works.
	if resp, b := e.do(t, "GET", api.TestersPath(ext.ID), w.admin); resp.StatusCode != 200 {
		t.Errorf("the admin's session: %d %s", resp.StatusCode, b)
	}
	if resp, b := e.do(t, "GET", api.TestersPath(ext.ID), bbtBearer(c.Secret)); resp.StatusCode != 200 {
		t.Errorf("the token alone: %d %s", resp.StatusCode, b)
	}
}

// TestBBTokTokensCannotManageTokens: a token of every scope can neither
// make, list nor revoke tokens (its own or another's), of its extension or
// any other; a tester's session cannot either.
func TestBBTokTokensCannotManageTokens(t *testing.T) {
	t.Parallel()
	w := newBBTWorld(t)
	e, ext := w.e, w.ext
	c := w.create(t, ext.ID, "all powers", bbtScopes, "")
	victim := w.create(t, ext.ID, "victim", []string{"read"}, "")
	other := w.create(t, w.ext2.ID, "ext2's", []string{"read"}, "")
	tt, _ := e.testerOf(t, ext, betaport.TesterActive)
	tester := e.cookie(t, betaport.Session{TesterID: tt.ID})
	before, before2 := w.state(t, ext), w.state(t, w.ext2)
	for _, who := range []struct {
		name string
		h    http.Header
	}{{"a token", bbtBearer(c.Secret)}, {"a tester", tester}} {
		for _, op := range []bbtOp{
			{"", "POST", api.TokensPath(ext.ID), map[string]any{"name": "child", "scopes": []string{"read"}}},
			{"", "POST", api.TokensPath(ext.ID), map[string]any{"name": "child", "scopes": bbtScopes, "expiresAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}},
			{"", "GET", api.TokensPath(ext.ID), nil},
			{"", "DELETE", api.TokenPath(ext.ID, victim.Token.ID), nil},
			{"", "DELETE", api.TokenPath(ext.ID, c.Token.ID), nil},
			{"", "POST", api.TokensPath(w.ext2.ID), map[string]any{"name": "child", "scopes": []string{"read"}}},
			{"", "DELETE", api.TokenPath(w.ext2.ID, other.Token.ID), nil},
		} {
			resp, b := e.send(t, op.method, op.path, who.h, op.body)
			bbtRefused(t, who.name+": "+op.String(), resp, b, "", 401, 403, 404)
			if bytes.Contains(b, []byte("bpt_")) {
				t.Errorf("%s: %s answered something like a secret: %s", who.name, op, b)
			}
		}
	}
	w.wantSame(t, "token calls by a token", ext, before)
	w.wantSame(t, "token calls by a token", w.ext2, before2)
	for _, x := range []bbtCreated{c, victim, other} {
		if resp, b := e.do(t, "GET", api.ExtensionPath(x.Token.ExtensionID), bbtBearer(x.Secret)); resp.StatusCode != 200 {
			t.Errorf("token %q after the refused calls: %d %s", x.Token.Name, resp.StatusCode, b)
		}
	}
}

// TestBBTokCreateRefusesBadInput: names, scopes and expiries that are not
// right are refused (400, a problem naming the field) and make nothing;
// those that are made keep what was asked.
func TestBBTokCreateRefusesBadInput(t *testing.T) {
	t.Parallel()
	w := newBBTWorld(t)
	e, ext := w.e, w.ext
	now := time.Now().UTC()
	bad := []struct {
		name string
		body any
	}{
		{"no name", map[string]any{"scopes": []string{"read"}}},
		{"an empty name", map[string]any{"name": "", "scopes": []string{"read"}}},
		{"a name of spaces", map[string]any{"name": "   ", "scopes": []string{"read"}}},
		{"a name of 1000 characters", map[string]any{"name": strings.Repeat("n", 1000), "scopes": []string{"read"}}},
		{"a name with a control character", map[string]any{"name": "night\x00ly", "scopes": []string{"read"}}},
		{"no scopes", map[string]any{"name": "x"}},
		{"empty scopes", map[string]any{"name": "x", "scopes": []string{}}},
		{"null scopes", map[string]any{"name": "x", "scopes": nil}},
		{"an unknown scope", map[string]any{"name": "x", "scopes": []string{"admin"}}},
		{"a known and an unknown scope", map[string]any{"name": "x", "scopes": []string{"read", "write"}}},
		{"a scope in upper case", map[string]any{"name": "x", "scopes": []string{"READ"}}},
		{"an empty scope", map[string]any{"name": "x", "scopes": []string{""}}},
		{"scopes as one string", map[string]any{"name": "x", "scopes": "read,testers"}},
		{"an expiry in the past", map[string]any{"name": "x", "scopes": []string{"read"}, "expiresAt": now.Add(-time.Hour).Format(time.RFC3339)}},
		{"an expiry now-ish in the past", map[string]any{"name": "x", "scopes": []string{"read"}, "expiresAt": now.Add(-2 * time.Second).Format(time.RFC3339)}},
		{"an expiry two years ahead", map[string]any{"name": "x", "scopes": []string{"read"}, "expiresAt": now.AddDate(2, 0, 0).Format(time.RFC3339)}},
		{"an expiry 367 days ahead", map[string]any{"name": "x", "scopes": []string{"read"}, "expiresAt": now.Add(367 * 24 * time.Hour).Format(time.RFC3339)}},
		{"an expiry in year 9999", map[string]any{"name": "x", "scopes": []string{"read"}, "expiresAt": "9999-12-31T23:59:59Z"}},
		{"an expiry as a date", map[string]any{"name": "x", "scopes": []string{"read"}, "expiresAt": now.AddDate(0, 0, 3).Format("2006-01-02")}},
		{"an expiry with a space", map[string]any{"name": "x", "scopes": []string{"read"}, "expiresAt": now.AddDate(0, 0, 3).Format("2006-01-02 15:04:05")}},
		{"an expiry in words", map[string]any{"name": "x", "scopes": []string{"read"}, "expiresAt": "tomorrow"}},
		{"an expiry as a number", map[string]any{"name": "x", "scopes": []string{"read"}, "expiresAt": now.Add(time.Hour).Unix()}},
		{"an unknown field", map[string]any{"name": "x", "scopes": []string{"read"}, "admin": true}},
		{"a secret of one's choosing", map[string]any{"name": "x", "scopes": []string{"read"}, "secret": "bpt_mine"}},
	}
	before := w.state(t, ext)
	for _, tc := range bad {
		resp, b := w.createRaw(t, w.admin, ext.ID, tc.body)
		bbtRefused(t, tc.name, resp, b, api.ProblemBadRequest, 400)
	}
	for _, raw := range []string{`{"name":"x","scopes":["read"]`, `[]`, `null`, `{"name":"x","scopes":["read"]}{}`} {
		resp, b := w.e.send(t, "POST", api.TokensPath(ext.ID), w.admin, rawBody{contentType: "application/json", data: []byte(raw)})
		bbtRefused(t, "the body "+raw, resp, b, api.ProblemBadRequest, 400)
	}
	w.wantSame(t, "refused token requests", ext, before)

	// Duplicate scopes: made with each scope once (or refused, making
	// nothing).
	resp, b := w.createRaw(t, w.admin, ext.ID, map[string]any{"name": "dup", "scopes": []string{"read", "read", "testers", "read"}})
	switch resp.StatusCode {
	case 201:
		var c bbtCreated
		json.Unmarshal(b, &c)
		got := append([]string(nil), c.Token.Scopes...)
		sort.Strings(got)
		if strings.Join(got, ",") != "read,testers" {
			t.Errorf("duplicate scopes made a token of scopes %v, want read and testers once each", c.Token.Scopes)
		}
		list, _ := w.list(t, ext.ID)
		if tk := bbtFind(list, c.Token.ID); tk == nil || len(tk.Scopes) != 2 {
			t.Errorf("the list shows the token of duplicate scopes as %+v", tk)
		}
	case 400:
		bbtRefused(t, "duplicate scopes", resp, b, api.ProblemBadRequest, 400)
	default:
		t.Errorf("duplicate scopes = %d %s; want 201 or 400", resp.StatusCode, b)
	}

	// What is fine: a year ahead at most, in other offsets and with
	// fractions; names in other scripts.
	good := []struct {
		name, expires string
		want          time.Time
	}{
		{"365 days", now.Add(365 * 24 * time.Hour).Truncate(time.Second).Format(time.RFC3339), now.Add(365 * 24 * time.Hour).Truncate(time.Second)},
		{"an offset", now.Add(48 * time.Hour).Truncate(time.Second).In(time.FixedZone("", 5*3600+1800)).Format(time.RFC3339), now.Add(48 * time.Hour).Truncate(time.Second)},
		{"fractions", now.Add(time.Hour).Truncate(time.Millisecond).Format(time.RFC3339Nano), now.Add(time.Hour).Truncate(time.Millisecond)},
		{"Nächtlicher Build ✓", "", time.Time{}},
	}
	for _, g := range good {
		c := w.create(t, ext.ID, g.name, []string{"read"}, g.expires)
		switch {
		case g.want.IsZero() && c.Token.ExpiresAt != nil:
			t.Errorf("%s: made with expiresAt %v, want none", g.name, c.Token.ExpiresAt)
		case !g.want.IsZero() && (c.Token.ExpiresAt == nil || !c.Token.ExpiresAt.Equal(g.want)):
			t.Errorf("%s: made with expiresAt %v, want %v", g.name, c.Token.ExpiresAt, g.want)
		}
		if resp, b := e.do(t, "GET", api.ExtensionPath(ext.ID), bbtBearer(c.Secret)); resp.StatusCode != 200 {
			t.Errorf("%s: the new token is refused: %d %s", g.name, resp.StatusCode, b)
		}
	}
	// Each secret is different, and looks as the contract says (bpt_…).
	seen := map[string]bool{}
	for i := range 5 {
		c := w.create(t, ext.ID, "same name", []string{"read"}, "")
		if seen[c.Secret] || !strings.HasPrefix(c.Secret, "bpt_") || len(c.Secret) < 30 {
			t.Errorf("secret %d %q is repeated or not bpt_ and long", i, c.Secret)
		}
		seen[c.Secret] = true
	}
}

// TestBBTokAuditNamesTheToken: what a token does is in the audit trail by
// the token's name (not the admin who made it, not its secret); making and
// revoking tokens is there by the admin, naming the token.
func TestBBTokAuditNamesTheToken(t *testing.T) {
	t.Parallel()
	w := newBBTWorld(t)
	e, ext := w.e, w.ext
	e.publish(t, ext, "1.0.0")
	e.publish(t, ext, "1.1.0")
	c := w.create(t, ext.ID, "Nightly release bot", bbtScopes, "")
	email := uniqueEmail("audited")
	resp, b := e.send(t, "POST", api.TestersPath(ext.ID), bbtBearer(c.Secret), map[string]any{"email": email})
	if resp.StatusCode != 201 {
		t.Fatalf("invite with a token: %d %s", resp.StatusCode, b)
	}
	resp, b = e.send(t, "POST", api.ChannelsPath(ext.ID), bbtBearer(c.Secret), map[string]any{"name": "canary"})
	if resp.StatusCode != 201 {
		t.Fatalf("create a channel with a token: %d %s", resp.StatusCode, b)
	}
	resp, b = e.send(t, "POST", api.RollbackPath(ext.ID, 1), bbtBearer(c.Secret), map[string]any{})
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		t.Fatalf("roll back with a token: %d %s", resp.StatusCode, b)
	}
	resp, b = e.send(t, "POST", api.KeysPath(ext.ID), bbtBearer(c.Secret), map[string]any{"label": "Key by bot"})
	var key api.CreatedKey
	if resp.StatusCode != 201 || json.Unmarshal(b, &key) != nil {
		t.Fatalf("make a key with a token: %d %s", resp.StatusCode, b)
	}
	if !strings.Contains(key.Key.CreatedBy, c.Token.Name) {
		t.Errorf("the key made by a token says createdBy %q, want the token's name %q", key.Key.CreatedBy, c.Token.Name)
	}
	e.do(t, "DELETE", api.TokenPath(ext.ID, c.Token.ID), w.admin)

	events, raw := w.audit(t, ext.ID)
	byToken := map[string]bool{}
	for _, ev := range events {
		switch ev.Action {
		case "tester.invited", "channel.created", "bundle.rollback", "key.created":
			byToken[ev.Action] = true
			if !strings.Contains(ev.Actor, c.Token.Name) {
				t.Errorf("audit event %s (%s) names actor %q, not the token %q", ev.Action, ev.Subject, ev.Actor, c.Token.Name)
			}
		case "token.created", "token.revoked":
			byToken[ev.Action] = true
			if !strings.Contains(ev.Subject, c.Token.Name) {
				t.Errorf("audit event %s has subject %q, want the token's name %q", ev.Action, ev.Subject, c.Token.Name)
			}
			if ev.Actor == "" || strings.Contains(ev.Actor, c.Token.Name) {
				t.Errorf("audit event %s names actor %q, want the admin", ev.Action, ev.Actor)
			}
		}
	}
	for _, a := range []string{"tester.invited", "channel.created", "bundle.rollback", "key.created", "token.created", "token.revoked"} {
		if !byToken[a] {
			t.Errorf("the audit trail has no %s event: %s", a, raw)
		}
	}
	if strings.Contains(raw, c.Secret) || strings.Contains(raw, c.Secret[4:20]) {
		t.Errorf("the audit trail holds the token's secret: %s", raw)
	}
	// The audit trail read with a token is the same, and holds no secret.
	reader := w.create(t, ext.ID, "auditor", []string{"read"}, "")
	resp, b = e.do(t, "GET", api.AuditPath(ext.ID)+"?limit=100", bbtBearer(reader.Secret))
	if resp.StatusCode != 200 || bytes.Contains(b, []byte(reader.Secret)) || bytes.Contains(b, []byte(c.Secret)) {
		t.Errorf("the audit trail read with a token = %d, or holds a secret: %s", resp.StatusCode, b)
	}
	if !strings.Contains(string(b), c.Token.Name) {
		t.Errorf("the audit trail read with a token does not name the token: %s", b)
	}
}
