package webhook_test

import (
	"context"
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
// worker dials it, and the delivery says why; allowed, it is delivered.
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
			if !strings.Contains(ds[0].LastError, "loopback") || !strings.Contains(ds[0].LastError, "--webhooks-allow-private") || ds[0].State != betaport.DeliveryPending {
				t.Fatalf("refused delivery = %+v", ds[0])
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	refused.Close()
	if hits.Load() != 0 {
		t.Fatalf("the receiver on loopback was reached %d times", hits.Load())
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
