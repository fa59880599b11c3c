package http_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/keyring"
	"github.com/betaport/betaport/server/storetest"
	"github.com/betaport/betaport/server/webhook"
)

// receiver is a webhook endpoint: it keeps every request and answers 500
// to the first failFirst of them (and to all while failing is set).
type receiver struct {
	*httptest.Server
	mu        sync.Mutex
	got       []received
	failFirst int
	failing   bool
	arrived   chan struct{}
}

type received struct {
	header http.Header
	body   []byte
	status int
	event  betaport.WebhookEvent
}

func newReceiver(t *testing.T, failFirst int) *receiver {
	rc := &receiver{failFirst: failFirst, arrived: make(chan struct{}, 1000)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		status := http.StatusOK
		if len(rc.got) < rc.failFirst || rc.failing {
			status = http.StatusInternalServerError
		}
		var ev betaport.WebhookEvent
		json.Unmarshal(body, &ev)
		rc.got = append(rc.got, received{r.Header.Clone(), body, status, ev})
		rc.mu.Unlock()
		w.WriteHeader(status)
		io.WriteString(w, "answer "+strconv.Itoa(status))
		rc.arrived <- struct{}{}
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// waitUntil waits for the receiver's requests to satisfy ok (each time one
// arrives), for at most a minute on a busy machine.
func (rc *receiver) waitUntil(t *testing.T, what string, ok func([]received) bool) []received {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		if got := rc.requests(); ok(got) {
			return got
		}
		select {
		case <-rc.arrived:
		case <-deadline:
			t.Fatalf("waiting for %s; the receiver got %d requests", what, len(rc.requests()))
		}
	}
}

func delivered(got []received) (n int) {
	for _, r := range got {
		if r.status == http.StatusOK {
			n++
		}
	}
	return n
}

// verify checks a request's signature as a receiver would: HMAC-SHA256 of
// "<t>.<body>" with the secret.
func verify(t *testing.T, secret string, r received) {
	t.Helper()
	var ts, v1 string
	for _, part := range strings.Split(r.header.Get("Betaport-Signature"), ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			v1 = v
		}
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "." + string(r.body)))
	if want := hex.EncodeToString(m.Sum(nil)); ts == "" || !hmac.Equal([]byte(v1), []byte(want)) {
		t.Fatalf("Betaport-Signature %q does not verify (want v1=%s)", r.header.Get("Betaport-Signature"), want)
	}
	sec, _ := strconv.ParseInt(ts, 10, 64)
	if d := time.Since(time.Unix(sec, 0)); d < -time.Minute || d > 10*time.Minute {
		t.Fatalf("signature time %s is not now", ts)
	}
}

// startWebhooks runs the delivery worker on the env's store, as serve does
// beside the HTTP server, allowed to reach the test's loopback receivers.
func (e *env) startWebhooks(t *testing.T) {
	w := &webhook.Worker{Store: e.DB, Logger: testLogger(t), RetryMin: 20 * time.Millisecond, AllowPrivate: true, Poll: 50 * time.Millisecond,
		Keyring: testKeyring}
	w.Start()
	t.Cleanup(func() { w.Close() })
}

func (e *env) deliveries(t *testing.T, admin http.Header, extID, hookID int64) []betaport.WebhookDelivery {
	t.Helper()
	resp, body := e.do(t, "GET", api.WebhookDeliveriesPath(extID, hookID), admin)
	var page api.Page[betaport.WebhookDelivery]
	if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil {
		t.Fatalf("deliveries = %d %s", resp.StatusCode, body)
	}
	return page.Data
}

// A service that does not allow private addresses (serve without
// --webhooks-allow-private) refuses a webhook on one when it is made, with
// a field error that says why and what to do, and makes nothing; a public
// name is taken (where it points is checked at each delivery).
func TestWebhookOnPrivateAddressRefusedWhenMade(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.App.WebhookAllowPrivate = false
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Hooked")
	admin := e.adminOf(t, team)
	for _, u := range []string{"http://127.0.0.1:9000/hook", "http://[::1]:9000/hook", "http://localhost:9000/hook", "http://10.1.2.3/hook", "http://169.254.169.254/latest/meta-data/"} {
		resp, body := e.send(t, "POST", api.WebhooksPath(ext.ID), admin, api.NewWebhook{URL: u})
		p := wantProblem(t, resp, body, 400, api.ProblemInvalidWebhookURL)
		if p.Param != "url" || !strings.Contains(p.Detail, "public address") || !strings.Contains(p.Detail, "--webhooks-allow-private") {
			t.Errorf("%s: refused with %+v; want the url field, why, and the setting that allows it", u, p)
		}
	}
	if hooks, err := e.DB.FindWebhooks(context.Background(), ext.ID, 0, 10); err != nil || len(hooks) != 0 {
		t.Fatalf("after the refusals the extension has %d webhooks (%v), want none", len(hooks), err)
	}
	resp, body := e.send(t, "POST", api.WebhooksPath(ext.ID), admin, api.NewWebhook{URL: "https://hooks.example.com/betaport"})
	if resp.StatusCode != 201 {
		t.Fatalf("a webhook on a public name: %d %s", resp.StatusCode, body)
	}
}

// An IPv6 address that carries a private IPv4 one (NAT64, 6to4,
// IPv4-compatible), a Teredo or site-local address, or one of "this
// network" (0.0.0.0/8) is no public address either: refused when the
// webhook is made, on the url field, saying what it carries and what to
// do, and nothing is stored. A service that allows private receivers
// takes them.
func TestWebhookOnAddressCarryingPrivateOneRefusedWhenMade(t *testing.T) {
	t.Parallel()
	urls := map[string]string{
		"http://[64:ff9b::a00:1]/hook":    "10.0.0.1",
		"http://[64:ff9b::7f00:1]:80/":    "127.0.0.1",
		"https://[2002:a9fe:a9fe::1]/":    "169.254.169.254",
		"http://[::a00:1]/hook":           "10.0.0.1",
		"http://[::ffff:0:c0a8:101]/hook": "192.168.1.1",
		"http://[2001:0:4136:e378::1]/":   "Teredo",
		"http://[fec0::1]/hook":           "site-local",
		"http://0.1.2.3/hook":             "this network",
	}
	e := newEnv(t)
	e.App.WebhookAllowPrivate = false
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Hooked")
	admin := e.adminOf(t, team)
	for u, carried := range urls {
		resp, body := e.send(t, "POST", api.WebhooksPath(ext.ID), admin, api.NewWebhook{URL: u})
		p := wantProblem(t, resp, body, 400, api.ProblemInvalidWebhookURL)
		if p.Param != "url" || !strings.Contains(p.Detail, carried) || !strings.Contains(p.Detail, "public address") || !strings.Contains(p.Detail, "--webhooks-allow-private") {
			t.Errorf("%s: refused with %+v; want the url field, what it reaches (%s), and what to do", u, p, carried)
		}
	}
	if hooks, err := e.DB.FindWebhooks(context.Background(), ext.ID, 0, 10); err != nil || len(hooks) != 0 {
		t.Fatalf("after the refusals the extension has %d webhooks (%v), want none", len(hooks), err)
	}
	// Carrying a public address, they are public.
	for _, u := range []string{"https://[64:ff9b::808:808]/hook", "https://[2002:808:808::1]/hook"} {
		if resp, body := e.send(t, "POST", api.WebhooksPath(ext.ID), admin, api.NewWebhook{URL: u}); resp.StatusCode != 201 {
			t.Errorf("%s: %d %s, want 201", u, resp.StatusCode, body)
		}
	}

	allowing := newEnv(t) // --webhooks-allow-private
	team = storetest.MustTeam(t, allowing.DB, betaport.PlanProfessional)
	ext = storetest.MustExtension(t, allowing.DB, team, "Hooked")
	admin = allowing.adminOf(t, team)
	for u := range urls {
		if resp, body := allowing.send(t, "POST", api.WebhooksPath(ext.ID), admin, api.NewWebhook{URL: u}); resp.StatusCode != 201 {
			t.Errorf("allowing private receivers, %s: %d %s, want 201", u, resp.StatusCode, body)
		}
	}
}

// A webhook's secret is not in the database: its column holds the secret
// sealed with the service's keyring (as signing keys are), so a dump alone
// cannot sign events. Deliveries are signed with the secret the admin was
// shown; a worker that cannot open it never sends the event unsigned, and
// says why.
func TestWebhookSecretSealedAtRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Hooked")
	admin := e.adminOf(t, team)
	rc := newReceiver(t, 0)
	resp, body := e.send(t, "POST", api.WebhooksPath(ext.ID), admin, api.NewWebhook{URL: rc.URL + "/hook"})
	var created api.CreatedWebhook
	if resp.StatusCode != 201 || json.Unmarshal(body, &created) != nil || created.Secret == "" {
		t.Fatalf("POST webhooks = %d %s", resp.StatusCode, body)
	}
	var stored string
	if err := e.DB.(interface{ SQL() *sql.DB }).SQL().QueryRowContext(ctx,
		"SELECT secret FROM webhooks WHERE id = "+strconv.FormatInt(created.ID, 10)).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored, strings.TrimPrefix(created.Secret, api.WebhookSecretPrefix)) || !keyring.IsSealed([]byte(stored)) {
		t.Fatalf("the database holds the webhook's secret as %q; want it sealed", stored)
	}

	// Without the keyring the event is not sent, and the list says why.
	if _, err := e.DB.PingWebhook(ctx, ext.ID, created.ID); err != nil {
		t.Fatal(err)
	}
	blind := &webhook.Worker{Store: e.DB, Logger: testLogger(t), AllowPrivate: true, RetryMin: time.Hour, Poll: 10 * time.Millisecond}
	blind.Start()
	var d betaport.WebhookDelivery
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(time.Minute); d.LastError == ""; <-tick.C {
		if time.Now().After(deadline) {
			t.Fatal("the worker without the keyring never recorded its attempt")
		}
		d = e.deliveries(t, admin, ext.ID, created.ID)[0]
	}
	blind.Close()
	if d.State != betaport.DeliveryPending || !strings.Contains(d.LastError, "secret cannot be opened") || len(rc.requests()) != 0 {
		t.Fatalf("without the keyring: delivery %+v, %d requests; want none sent, and why", d, len(rc.requests()))
	}
	// With it, deliveries verify with the secret the admin was shown.
	if _, err := e.DB.PingWebhook(ctx, ext.ID, created.ID); err != nil {
		t.Fatal(err)
	}
	w := &webhook.Worker{Store: e.DB, Logger: testLogger(t), AllowPrivate: true, Keyring: testKeyring,
		Now: func() time.Time { return time.Now().Add(2 * time.Hour) }} // past the first ping's retry
	w.Start()
	t.Cleanup(func() { w.Close() })
	for _, r := range rc.waitUntil(t, "both pings", func(got []received) bool { return delivered(got) == 2 }) {
		verify(t, created.Secret, r)
	}
}

// An admin adds a webhook and gets its secret once; every publish reaches
// it signed, in order, through a receiver that fails a few times first;
// a test event pings it; deleting it stops what is pending.
func TestWebhooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Hooked")
	admin := e.adminOf(t, team)
	e.startWebhooks(t)
	rc := newReceiver(t, 3)

	// Bad URLs are refused, naming the field; nothing is made.
	for _, bad := range []string{"", "not a url", "/hook", "ftp://example.com/hook", "https://user:pass@example.com/hook",
		"https://example.com/" + strings.Repeat("a", 2048), "javascript:alert(1)"} {
		resp, body := e.send(t, "POST", api.WebhooksPath(ext.ID), admin, api.NewWebhook{URL: bad})
		if p := wantProblem(t, resp, body, 400, api.ProblemInvalidWebhookURL); p.Param != "url" {
			t.Fatalf("%q: param = %q", bad, p.Param)
		}
	}
	resp, body := e.send(t, "POST", api.WebhooksPath(ext.ID), admin, api.NewWebhook{URL: rc.URL + "/hook"})
	var created api.CreatedWebhook
	if resp.StatusCode != 201 || json.Unmarshal(body, &created) != nil || !strings.HasPrefix(created.Secret, "whsec_") ||
		len(created.Secret) < 30 || created.URL != rc.URL+"/hook" || created.CreatedBy == "" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("POST webhooks = %d %s", resp.StatusCode, body)
	}
	resp, body = e.do(t, "GET", api.WebhooksPath(ext.ID), admin)
	if resp.StatusCode != 200 || strings.Contains(string(body), created.Secret) || strings.Contains(string(body), "secret") ||
		!strings.Contains(string(body), `"id":`+strconv.FormatInt(created.ID, 10)) {
		t.Fatalf("GET webhooks = %d %s", resp.StatusCode, body)
	}

	// Three publishes; the receiver fails the first three requests. The
	// first event is retried until it gets through, and the others wait
	// behind it: the receiver sees the bundles in order.
	for i := 1; i <= 3; i++ {
		e.publish(t, ext, "1.0."+strconv.Itoa(i))
	}
	got := rc.waitUntil(t, "three delivered events", func(got []received) bool { return delivered(got) == 3 })
	last := int64(0)
	for _, r := range got {
		verify(t, created.Secret, r)
		if r.header.Get("Content-Type") != "application/json" || r.header.Get("Betaport-Event") != "bundle.published" ||
			r.header.Get("Betaport-Delivery") == "" || r.event.Bundle == nil {
			t.Fatalf("request headers %v body %s", r.header, r.body)
		}
		if n := r.event.Bundle.Number; n < last {
			t.Fatalf("bundle %d arrived after bundle %d", n, last)
		} else {
			last = n
		}
	}
	if len(got) != 6 || got[0].event.Bundle.Number != 1 || got[3].event.Bundle.Number != 1 || got[3].status != 200 {
		t.Fatalf("requests: %d, want 3 failed attempts of bundle 1, then bundles 1, 2, 3", len(got))
	}
	ev := got[5].event
	if ev.Type != "bundle.published" || ev.Extension.ID != strconv.FormatInt(ext.ID, 10) || ev.Extension.Name != "Hooked" ||
		ev.Bundle.Version != "1.0.3" || ev.Bundle.SHA256 == "" || ev.ID == "" ||
		ev.Bundle.DownloadPath != api.BundleDownloadPath(ext.ID, 3) || got[5].header.Get("Betaport-Delivery") == got[4].header.Get("Betaport-Delivery") {
		t.Fatalf("event = %s", got[5].body)
	}
	// The deliveries list says how it went, newest first.
	ds := e.deliveries(t, admin, ext.ID, created.ID)
	if len(ds) != 3 || ds[2].Attempts != 4 || ds[2].State != "delivered" || ds[2].LastStatus != 200 || ds[2].Response != "answer 200" ||
		ds[2].DeliveredAt == nil || ds[0].Attempts != 1 || ds[2].EventID != got[0].event.ID || ds[2].Type != "bundle.published" {
		t.Fatalf("deliveries = %+v", ds)
	}
	if id := got[0].header.Get("Betaport-Delivery"); id != strconv.FormatInt(ds[2].ID, 10) {
		t.Fatalf("Betaport-Delivery %s, want %d", id, ds[2].ID)
	}

	// A test event pings this webhook.
	resp, body = e.send(t, "POST", api.WebhookTestPath(ext.ID, created.ID), admin, nil)
	var ping betaport.WebhookDelivery
	// Pending, or delivered already: the worker is woken by the ping and
	// may answer the receiver before this answer is written.
	if resp.StatusCode != 202 || json.Unmarshal(body, &ping) != nil || ping.Type != "ping" || (ping.State != "pending" && ping.State != "delivered") {
		t.Fatalf("POST test = %d %s", resp.StatusCode, body)
	}
	got = rc.waitUntil(t, "the ping", func(got []received) bool { return delivered(got) == 4 })
	if p := got[len(got)-1]; p.event.Type != "ping" || p.event.Bundle != nil || strings.Contains(string(p.body), `"bundle"`) ||
		p.header.Get("Betaport-Event") != "ping" || p.event.ID != ping.EventID {
		t.Fatalf("ping = %s %v", p.body, p.header)
	} else {
		verify(t, created.Secret, p)
	}

	// A second webhook; the first one's receiver now fails, and is
	// deleted with an event pending: that event fails, and later ones
	// reach only the second webhook.
	rc2 := newReceiver(t, 0)
	resp, body = e.send(t, "POST", api.WebhooksPath(ext.ID), admin, api.NewWebhook{URL: rc2.URL})
	var second api.CreatedWebhook
	if resp.StatusCode != 201 || json.Unmarshal(body, &second) != nil || second.Secret == created.Secret {
		t.Fatalf("second webhook = %d %s", resp.StatusCode, body)
	}
	rc.mu.Lock()
	rc.failing = true
	rc.mu.Unlock()
	e.publish(t, ext, "1.0.4")
	rc.waitUntil(t, "a failed attempt of bundle 4", func(got []received) bool {
		return got[len(got)-1].event.Bundle != nil && got[len(got)-1].event.Bundle.Number == 4
	})
	resp, body = e.do(t, "DELETE", api.WebhookPath(ext.ID, created.ID), admin)
	if resp.StatusCode != 204 {
		t.Fatalf("DELETE = %d %s", resp.StatusCode, body)
	}
	pending, err := e.DB.FindDeliveries(context.Background(), created.ID, 0, 1)
	if err != nil || pending[0].State != "failed" || !strings.Contains(pending[0].LastError, "deleted") {
		t.Fatalf("the deleted webhook's pending delivery = %+v, %v", pending, err)
	}
	e.publish(t, ext, "1.0.5")
	got2 := rc2.waitUntil(t, "bundle 5 at the second webhook", func(got []received) bool {
		return len(got) > 0 && got[len(got)-1].event.Bundle.Number == 5
	})
	verify(t, second.Secret, got2[len(got2)-1])
	for _, r := range rc.requests() {
		if r.event.Bundle != nil && r.event.Bundle.Number == 5 {
			t.Fatalf("the deleted webhook got bundle 5")
		}
	}
	if after, _ := e.DB.FindDeliveries(context.Background(), created.ID, 0, 1); after[0].State != "failed" {
		t.Fatalf("the deleted webhook's delivery became %+v", after[0])
	}
	// A rollback reaches the webhooks as bundle.rolled_back.
	resp, body = e.send(t, "POST", api.BundlesPath(ext.ID)+"/1/rollback", admin, struct{}{})
	if resp.StatusCode != 201 {
		t.Fatalf("rollback = %d %s", resp.StatusCode, body)
	}
	got2 = rc2.waitUntil(t, "the rollback at the second webhook", func(got []received) bool {
		return got[len(got)-1].event.Type == "bundle.rolled_back"
	})
	if r := got2[len(got2)-1]; r.header.Get("Betaport-Event") != "bundle.rolled_back" || r.event.Bundle.RollbackOf != 1 || r.event.Bundle.Number != 6 {
		t.Fatalf("rollback event = %s", r.body)
	}

	resp, body = e.do(t, "DELETE", api.WebhookPath(ext.ID, created.ID), admin)
	wantProblem(t, resp, body, 404, api.ProblemNotFound)
	resp, body = e.send(t, "POST", api.WebhookTestPath(ext.ID, created.ID), admin, nil)
	wantProblem(t, resp, body, 404, api.ProblemNotFound)
}

// Webhooks are the extension's admins' alone: testers, other teams and
// pages of other sites are refused, and change nothing.
func TestWebhooksRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Hooked")
	admin := e.adminOf(t, team)
	otherAdmin := e.adminOf(t, storetest.MustTeam(t, e.DB, betaport.PlanProfessional))
	tt, _ := e.testerOf(t, ext, betaport.TesterActive)
	tester := e.cookie(t, betaport.Session{TesterID: tt.ID})
	hook := storetest.MustWebhook(t, e.DB, ext.ID, "https://hooks.example.com/")
	crossSite := e.adminOf(t, team)
	crossSite.Set("Sec-Fetch-Site", "cross-site")
	crossSite.Set("Origin", "https://evil.example")

	for _, c := range []struct {
		who    http.Header
		status int
		typ    string
	}{{tester, 403, api.ProblemForbidden}, {otherAdmin, 404, api.ProblemNotFound}, {crossSite, 403, api.ProblemForbidden}, {http.Header{}, 401, api.ProblemUnauthorized}} {
		resp, body := e.send(t, "POST", api.WebhooksPath(ext.ID), c.who, api.NewWebhook{URL: "https://attacker.example/"})
		wantProblem(t, resp, body, c.status, c.typ)
		resp, body = e.do(t, "DELETE", api.WebhookPath(ext.ID, hook.ID), c.who)
		wantProblem(t, resp, body, c.status, c.typ)
		resp, body = e.send(t, "POST", api.WebhookTestPath(ext.ID, hook.ID), c.who, nil)
		wantProblem(t, resp, body, c.status, c.typ)
		if c.status != 403 || c.who.Get("Sec-Fetch-Site") == "" {
			resp, body = e.do(t, "GET", api.WebhooksPath(ext.ID), c.who)
			wantProblem(t, resp, body, c.status, c.typ)
		}
	}
	list, _ := e.DB.FindWebhooks(context.Background(), ext.ID, 0, 10)
	if ds, _ := e.DB.FindDeliveries(context.Background(), hook.ID, 0, 10); len(list) != 1 || len(ds) != 0 {
		t.Fatalf("refused requests changed things: %d webhooks, %d deliveries", len(list), len(ds))
	}
	// Another extension's webhook id under this one is not found.
	other := storetest.MustExtension(t, e.DB, team, "Other")
	resp, body := e.do(t, "GET", api.WebhookDeliveriesPath(other.ID, hook.ID), admin)
	wantProblem(t, resp, body, 404, api.ProblemNotFound)
}
