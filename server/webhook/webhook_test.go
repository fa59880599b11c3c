package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/sqlite"
	"github.com/betaport/betaport/server/storetest"
	"github.com/betaport/betaport/server/webhook"
)

func TestBackoff(t *testing.T) {
	for attempts, want := range map[int]time.Duration{1: 10 * time.Second, 2: 20 * time.Second, 3: 40 * time.Second, 9: 2560 * time.Second, 10: time.Hour, 60: time.Hour} {
		if got := webhook.Backoff(10*time.Second, attempts); got != want {
			t.Errorf("Backoff(10s, %d) = %s, want %s", attempts, got, want)
		}
	}
}

// Unless allowed, a webhook on a loopback address is refused when the
// worker dials it, and the delivery says why and fails at once (no attempt
// could succeed); allowed, the next event is delivered.
func TestPrivateAddressesRefused(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var hits atomic.Int64
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer rc.Close()
	ext := storetest.MustExtension(t, s, storetest.MustTeam(t, s, betaport.PlanProfessional), "E")
	hook := storetest.MustWebhook(t, s, ext.ID, rc.URL)
	if _, err := s.PingWebhook(ctx, ext.ID, hook.ID); err != nil {
		t.Fatal(err)
	}

	refused := &webhook.Worker{Store: s, RetryMin: time.Millisecond, Poll: 10 * time.Millisecond}
	refused.Start()
	defer refused.Close()
	for {
		ds, err := s.FindDeliveries(ctx, hook.ID, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if ds[0].Attempts > 0 && ds[0].LastError != "" {
			// Refused by the service's own setting, it is not retried:
			// the next attempt would be refused the same way.
			if !strings.Contains(ds[0].LastError, "loopback") || !strings.Contains(ds[0].LastError, "--webhooks-allow-private") ||
				!strings.Contains(ds[0].LastError, "not retried") || ds[0].State != betaport.DeliveryFailed || ds[0].Attempts != 1 {
				t.Fatalf("refused delivery = %+v; want failed after its one attempt, saying why and that it is not retried", ds[0])
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	refused.Close()
	if hits.Load() != 0 {
		t.Fatalf("the receiver on loopback was reached %d times", hits.Load())
	}

	// A service that allows private addresses delivers the next event.
	if _, err := s.PingWebhook(ctx, ext.ID, hook.ID); err != nil {
		t.Fatal(err)
	}
	allowed := &webhook.Worker{Store: s, AllowPrivate: true, RetryMin: time.Millisecond, Poll: 10 * time.Millisecond}
	allowed.Start()
	defer allowed.Close()
	for {
		ds, _ := s.FindDeliveries(ctx, hook.ID, 0, 1)
		if ds[0].State == betaport.DeliveryDelivered {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if hits.Load() != 1 {
		t.Fatalf("receiver reached %d times", hits.Load())
	}
}

// Refusal refuses, when a webhook is made, the hosts the worker would
// refuse to dial, by whatever spelling; names (other than localhost) are
// left to the dial-time check, as they resolve anew at each delivery.
func TestRefusal(t *testing.T) {
	for _, u := range []string{
		"http://127.0.0.1:9000/hook", "http://[::1]/hook", "http://[::ffff:127.0.0.1]:80/hook", "http://0.0.0.0/hook",
		"https://10.0.0.1/hook", "http://192.168.1.1/hook", "http://100.64.0.1/hook", "http://169.254.169.254/latest/meta-data/",
		"http://[fe80::1]/hook", "http://[fc00::1]/hook", "http://localhost:8080/hook", "http://LOCALHOST./hook", "http://api.localhost/hook",
		// What inet_aton, browsers and curl read as 127.0.0.1 or 10.0.0.1.
		"http://127.1/hook", "http://0x7f000001/hook", "http://0x7f.0.0.1/hook", "http://2130706433/hook", "http://0177.0.0.1/hook", "http://10.1/hook",
		// IPv6 addresses that carry a private IPv4 one (NAT64, 6to4,
		// IPv4-compatible), Teredo, site-local, and "this network".
		"http://[64:ff9b::a00:1]/hook", "http://[64:ff9b::127.0.0.1]:8080/hook", "http://[2002:a00:1::1]/hook", "http://[2002:7f00:1::]/hook",
		"http://[::a00:1]/hook", "http://[::127.0.0.1]/hook", "http://[2001::1]/hook", "http://[fec0::1]/hook", "http://0.1.2.3/hook", "http://0.0.0.1:9/hook",
		// The deprecated 6to4 relay anycast, and names only a local network
		// answers (the third probe of issue 29).
		"http://192.88.99.1/hook", "http://[2002:c058:6301::1]/hook", "http://127.0.0.1.nip.io.local/hook", "http://printer.local./hook",
		"http://nas.home.arpa/hook", "http://ci.internal:8080/hook",
	} {
		err := webhook.Refusal(u)
		var be *betaport.Error
		if !errors.As(err, &be) || be.Code != betaport.EINVALID || be.Param != "url" || !strings.Contains(be.Message, "--webhooks-allow-private") {
			t.Errorf("Refusal(%s) = %v; want a url field error naming --webhooks-allow-private", u, err)
		}
	}
	for _, u := range []string{"https://hooks.example.com/betaport", "https://8.8.8.8/hook", "http://[2001:4860:4860::8888]/hook", "http://localhost.example.com/hook",
		"http://1.2.3.4.example.com/hook", "http://0x.example/hook", "http://8.8.8.8.nip.example/hook", "http://134744072/hook",
		"http://[64:ff9b::808:808]/hook", "http://[2002:808:808::1]/hook", "http://local.example.com/hook", "http://internal.example.com/hook",
		"http://localinternal.com/hook"} {
		if err := webhook.Refusal(u); err != nil {
			t.Errorf("Refusal(%s) = %v; want none", u, err)
		}
	}
}

// waitFor polls cond until it holds, for at most a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("waiting for %s", what)
		}
	}
}

// A redirect is an answer, never followed: the address it names is not
// connected to (so it cannot lead the worker past the address check of
// each connection), and the event is not delivered by it.
func TestRedirectsAreNotFollowed(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var followed atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { followed.Add(1) }))
	defer target.Close()
	ext := storetest.MustExtension(t, s, storetest.MustTeam(t, s, betaport.PlanProfessional), "E")
	var hooks []*betaport.Webhook
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/elsewhere", status)
		}))
		defer redirecting.Close()
		hook := storetest.MustWebhook(t, s, ext.ID, redirecting.URL+"/hook")
		if _, err := s.PingWebhook(ctx, ext.ID, hook.ID); err != nil {
			t.Fatal(err)
		}
		hooks = append(hooks, hook)
	}
	// Allowed to reach private addresses, so only the client's own rule
	// keeps it from following.
	w := &webhook.Worker{Store: s, AllowPrivate: true, RetryMin: time.Hour, Poll: 10 * time.Millisecond}
	w.Start()
	defer w.Close()
	for _, hook := range hooks {
		var d *betaport.WebhookDelivery
		waitFor(t, "the redirect's answer to be recorded", func() bool {
			ds, err := s.FindDeliveries(ctx, hook.ID, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			d = ds[0]
			return d.LastStatus != 0 || d.LastError != ""
		})
		if d.State != betaport.DeliveryPending || d.LastStatus < 300 || d.LastStatus > 399 || !strings.Contains(d.LastError, "only a 2xx answer delivers") {
			t.Errorf("webhook %s: delivery %+v; want a 3xx recorded as not delivered", hook.URL, d)
		}
	}
	if n := followed.Load(); n != 0 {
		t.Fatalf("the redirects' target was requested %d times", n)
	}
}

// A worker that died during an attempt (its process killed after it
// claimed the delivery, before it recorded an answer) leaves the delivery
// leased; once the lease runs out another worker (the restarted process,
// or a replica) sends it again, and the deliveries list shows, while that
// attempt is under way, that the one before was interrupted.
func TestInterruptedAttemptIsSentAgainAndSaysSo(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	release := make(chan struct{})
	var hits atomic.Int64
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		<-release
	}))
	defer rc.Close()
	defer close(release)
	ext := storetest.MustExtension(t, s, storetest.MustTeam(t, s, betaport.PlanProfessional), "E")
	hook := storetest.MustWebhook(t, s, ext.ID, rc.URL)
	if _, err := s.PingWebhook(ctx, ext.ID, hook.ID); err != nil {
		t.Fatal(err)
	}
	// The process that died claimed it as a worker does (a lease of a
	// minute), and never came back.
	dead, err := s.ClaimDeliveries(ctx, "crashed-host/0", betaport.Now(), time.Minute, 16)
	if err != nil || len(dead) != 1 {
		t.Fatalf("the dead worker's claim: %v, %v", dead, err)
	}

	// The new worker runs two minutes on, when the lease has run out.
	w := &webhook.Worker{Store: s, AllowPrivate: true, Poll: 10 * time.Millisecond,
		Now: func() time.Time { return time.Now().Add(2 * time.Minute) }}
	w.Start()
	defer w.Close()
	waitFor(t, "the second attempt to reach the receiver", func() bool { return hits.Load() == 1 })
	ds, err := s.FindDeliveries(ctx, hook.ID, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d := ds[0]; d.State != betaport.DeliveryPending || d.Attempts != 2 || d.LastError != betaport.DeliveryInterrupted || d.LastStatus != 0 {
		t.Fatalf("during attempt 2 the delivery shows %+v; want attempt 1 shown interrupted", d)
	}
	release <- struct{}{}
	waitFor(t, "the delivery to be delivered", func() bool {
		ds, err := s.FindDeliveries(ctx, hook.ID, 0, 1)
		return err == nil && ds[0].State == betaport.DeliveryDelivered && ds[0].Attempts == 2
	})
}
