package http_test

// Second-look black-box tests of issue 28's webhook refusals: without
// --webhooks-allow-private a webhook at a loopback, private or link-local
// address (however spelt) or at localhost is refused when it is made, with
// a field error naming the setting, and nothing is stored; public names
// are taken without being resolved; a delivery the service refuses at dial
// time fails at once instead of being retried for a day, while errors a
// retry can fix are still retried. Helpers are prefixed bb2.

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/storetest"
	"github.com/betaport/betaport/server/webhook"
)

// bb2Private are loopback, private and link-local hosts, spelt as a
// person (or an attacker) might.
var bb2Private = []string{
	"http://127.0.0.1/hook",
	"http://127.0.0.1:8080/hook",
	"HTTP://127.0.0.1/hook",
	"http://127.255.255.254/hook",
	"http://[::1]/hook",
	"http://[::1]:9000/hook",
	"http://[0:0:0:0:0:0:0:1]/hook",
	"http://[::ffff:127.0.0.1]/hook",
	"http://[::ffff:7f00:1]/hook",
	"http://[::ffff:10.0.0.1]/hook",
	"http://localhost/hook",
	"http://localhost:3000/hook",
	"http://LOCALHOST/hook",
	"http://LOCALHOST./hook",
	"http://localhost./hook",
	"https://LocalHost:8443/hook",
	"http://10.0.0.1/hook",
	"http://10.255.255.255/hook",
	"http://172.16.5.4/hook",
	"http://172.31.255.1/hook",
	"http://192.168.1.1/hook",
	"http://[fd00::1]/hook",
	"http://[fc00::1]/hook",
	"http://169.254.169.254/latest/meta-data/",
	"http://[fe80::1]/hook",
	"http://[fe80::1%25eth0]/hook",
	"http://[fe80::1%25eth0]:8080/hook",
	"http://0.0.0.0/hook",
	"http://[::]/hook",
}

// bb2PrivateOddIPv4 are IPv4 literals in the forms browsers, curl and
// inet_aton take (WHATWG URL: 127.1, hex, a single number, octal) that
// all mean a loopback or private address.
var bb2PrivateOddIPv4 = []string{
	"http://127.1/hook",
	"http://0x7f000001/hook",
	"http://0x7f.0.0.1/hook",
	"http://2130706433/hook",
	"http://0177.0.0.1/hook",
	"http://10.1/hook",
}

// bb2Public are public hosts: taken when made (creation does not resolve;
// none of these is ever delivered to here).
var bb2Public = []string{
	"https://hooks.example.com/betaport",
	"https://localhost.example.com/hook",
	"https://my-localhost-relay.example.net/hook",
	"https://127.0.0.1.example.com/hook",
	"https://hooks.example.com:8443/a?b=c",
	"https://8.8.8.8/hook",
	"https://[2606:4700:4700::1111]/hook",
	"https://172.32.0.1/hook",
	"https://192.169.0.1/hook",
}

func bb2Hooked(t *testing.T, e *env) (*betaport.Extension, http.Header) {
	t.Helper()
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "BB2 Hooked")
	return ext, e.adminOf(t, team)
}

// bb2WantRefused checks, without stopping the test, that the answer to a
// POST of u is a 400 problem on the url field that names the setting
// (named: a refusal for being private rather than malformed).
func bb2WantRefused(t *testing.T, u string, resp *http.Response, body []byte, named bool) {
	t.Helper()
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != api.ProblemContentType {
		t.Errorf("%s: made with %d %q %.200s; want 400 %s", u, resp.StatusCode, resp.Header.Get("Content-Type"), body, api.ProblemContentType)
		return
	}
	var p api.Problem
	if err := json.Unmarshal(body, &p); err != nil {
		t.Errorf("%s: problem %s: %v", u, body, err)
		return
	}
	if p.Param != "url" || p.Status != http.StatusBadRequest || p.Detail == "" {
		t.Errorf("%s: refused with %+v; want a problem on the url field that says why", u, p)
	}
	if named && !strings.Contains(p.Detail, "--webhooks-allow-private") {
		t.Errorf("%s: refused with %q, which does not name --webhooks-allow-private", u, p.Detail)
	}
}

// Without the setting, every spelling of a private address is refused and
// nothing is stored; public names and public addresses are taken.
func TestBB2WebhookPrivateSpellingsRefusedWhenMade(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.App.WebhookAllowPrivate = false
	ext, admin := bb2Hooked(t, e)
	for _, u := range bb2Private {
		resp, body := e.send(t, "POST", api.WebhooksPath(ext.ID), admin, api.NewWebhook{URL: u})
		bb2WantRefused(t, u, resp, body, true)
	}
	// With credentials: refused whatever the reason (never taken).
	for _, u := range []string{"http://user:pass@127.0.0.1/hook", "http://hooks.example.com@10.0.0.1/hook", "http://admin@localhost/hook", "http://:@[::1]/hook"} {
		resp, body := e.send(t, "POST", api.WebhooksPath(ext.ID), admin, api.NewWebhook{URL: u})
		bb2WantRefused(t, u, resp, body, false)
	}
	// Pasted with spaces around it: still refused.
	resp, body := e.send(t, "POST", api.WebhooksPath(ext.ID), admin, api.NewWebhook{URL: "  http://127.0.0.1:9/hook \n"})
	bb2WantRefused(t, "(spaces) http://127.0.0.1:9/hook", resp, body, false)
	if hooks, err := e.DB.FindWebhooks(context.Background(), ext.ID, 0, 100); err != nil || len(hooks) != 0 {
		var urls []string
		for _, h := range hooks {
			urls = append(urls, h.URL)
		}
		t.Errorf("after the refusals the extension has webhooks %q (%v), want none", urls, err)
	}
	for _, u := range bb2Public {
		resp, body := e.send(t, "POST", api.WebhooksPath(ext.ID), admin, api.NewWebhook{URL: u})
		if resp.StatusCode != http.StatusCreated {
			t.Errorf("a webhook on the public %s: %d %.200s, want 201", u, resp.StatusCode, body)
		}
	}
}

// The unusual IPv4 spellings (127.1, 0x7f000001, 2130706433, 0177.0.0.1)
// are IP literals to browsers, curl and the C resolver: they mean
// loopback or private addresses, and are refused as such.
func TestBB2WebhookOddIPv4SpellingsRefusedWhenMade(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.App.WebhookAllowPrivate = false
	ext, admin := bb2Hooked(t, e)
	for _, u := range bb2PrivateOddIPv4 {
		resp, body := e.send(t, "POST", api.WebhooksPath(ext.ID), admin, api.NewWebhook{URL: u})
		bb2WantRefused(t, u, resp, body, true)
		if webhook.Refusal(u) == nil {
			t.Errorf("webhook.Refusal(%q) = nil, want a refusal", u)
		}
	}
}

// webhook.Refusal agrees with the API: a field error for private hosts,
// nil for public ones.
func TestBB2WebhookRefusalFunction(t *testing.T) {
	t.Parallel()
	for _, u := range bb2Private {
		err := webhook.Refusal(u)
		if err == nil {
			t.Errorf("Refusal(%q) = nil, want a refusal", u)
		} else if !strings.Contains(err.Error(), "--webhooks-allow-private") {
			t.Errorf("Refusal(%q) = %q, which does not name --webhooks-allow-private", u, err)
		}
	}
	for _, u := range bb2Public {
		if err := webhook.Refusal(u); err != nil {
			t.Errorf("Refusal(%q) = %v, want nil (a public host)", u, err)
		}
	}
}

// With the setting (newEnv's default) private addresses are taken, and
// nothing is asked.
func TestBB2WebhookPrivateTakenWithTheSetting(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ext, admin := bb2Hooked(t, e)
	for _, u := range []string{"http://127.0.0.1:9/hook", "http://localhost:9/hook", "http://[::1]:9/hook", "http://10.0.0.1/hook"} {
		resp, body := e.send(t, "POST", api.WebhooksPath(ext.ID), admin, api.NewWebhook{URL: u})
		if resp.StatusCode != http.StatusCreated {
			t.Errorf("with --webhooks-allow-private, %s: %d %.200s, want 201", u, resp.StatusCode, body)
		}
	}
}

// bb2Outcome waits until hook's only delivery has been attempted (or is no
// longer pending), polling the store: a condition, not a fixed sleep.
func bb2Outcome(t *testing.T, e *env, hookID int64) *betaport.WebhookDelivery {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ds, err := e.DB.FindDeliveries(context.Background(), hookID, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		// An attempt counts when it is claimed, before its outcome is
		// written: wait for the outcome (an error, a status, or a state).
		if len(ds) == 1 && (ds[0].Attempts > 0 && (ds[0].LastError != "" || ds[0].LastStatus != 0) || ds[0].State != betaport.DeliveryPending) {
			return ds[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook %d's delivery was never attempted: %+v", hookID, ds)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A webhook at a private address stored while the service allowed them
// (or before it refused them): without the setting, the worker refuses to
// dial it, and its event fails after one attempt, is never sent, and is
// not attempted again, even hours later.
func TestBB2WebhookRefusedAtDialFailsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.App.WebhookAllowPrivate = false
	ext, _ := bb2Hooked(t, e)
	rc := newReceiver(t, 0)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(rc.URL, "http://"))
	urls := []string{rc.URL + "/old", "http://localhost:" + port + "/old", "http://[::ffff:127.0.0.1]:" + port + "/old"}
	hooks := map[int64]string{}
	for _, u := range urls {
		hooks[storetest.MustWebhook(t, e.DB, ext.ID, u).ID] = u
	}
	e.publish(t, ext, "1.0.0")

	w := &webhook.Worker{Store: e.DB, Logger: testLogger(t), RetryMin: 20 * time.Millisecond, AllowPrivate: false, Poll: 20 * time.Millisecond}
	w.Start()
	for id := range hooks {
		bb2Outcome(t, e, id)
	}
	w.Close()
	for id, u := range hooks {
		dl := bb2Outcome(t, e, id)
		if dl.State != betaport.DeliveryFailed || dl.Attempts != 1 || dl.NextAttemptAt != nil || dl.LastError == "" {
			t.Errorf("%s: the refused delivery is %s after %d attempts (next %v, error %q, status %d); want failed after 1, no retry, and why",
				u, dl.State, dl.Attempts, dl.NextAttemptAt, dl.LastError, dl.LastStatus)
		}
	}
	// Hours later (within the day's retry window) nothing is attempted again.
	later := &webhook.Worker{Store: e.DB, Logger: testLogger(t), AllowPrivate: false,
		Now: func() time.Time { return time.Now().Add(3 * time.Hour) }}
	later.Start()
	if _, err := later.RunOnce(context.Background()); err != nil {
		t.Fatalf("RunOnce later: %v", err)
	}
	later.Close() // waits for attempts under way
	for id, u := range hooks {
		ds, _ := e.DB.FindDeliveries(context.Background(), id, 0, 10)
		if len(ds) != 1 || ds[0].Attempts != 1 || ds[0].State != betaport.DeliveryFailed {
			t.Errorf("%s: hours later its delivery is %+v, want failed after its one attempt", u, ds)
		}
	}
	if got := rc.requests(); len(got) != 0 {
		t.Errorf("the private receiver was called %d times", len(got))
	}
}

// Errors a retry can fix are still retried: a receiver that answers 500,
// and one that is down (its port closed), leave the event pending with a
// next attempt planned.
func TestBB2WebhookFixableErrorsStillRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ext, _ := bb2Hooked(t, e)
	failing := newReceiver(t, 1000)
	down := newReceiver(t, 0)
	downURL := down.URL + "/down"
	down.Close()
	failingID := storetest.MustWebhook(t, e.DB, ext.ID, failing.URL+"/fails").ID
	downID := storetest.MustWebhook(t, e.DB, ext.ID, downURL).ID
	e.publish(t, ext, "1.0.0")
	w := &webhook.Worker{Store: e.DB, Logger: testLogger(t), RetryMin: time.Hour, AllowPrivate: true}
	w.Start()
	defer w.Close()
	for _, c := range []struct {
		what string
		id   int64
	}{{"a 500", failingID}, {"a receiver that is down", downID}} {
		dl := bb2Outcome(t, e, c.id)
		if dl.State != betaport.DeliveryPending || dl.Attempts != 1 || dl.NextAttemptAt == nil {
			t.Errorf("after %s the delivery is %s after %d attempts (next %v, error %q); want pending, retried later",
				c.what, dl.State, dl.Attempts, dl.NextAttemptAt, dl.LastError)
		}
	}
}
