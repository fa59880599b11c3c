package cli

import (
	"strings"
	"testing"
	"time"
)

// serve's webhook flags set the worker's configuration; a bad duration is
// refused, saying what to give.
func TestWebhookFlags(t *testing.T) {
	clearSettingsEnv(t)
	c, err := loadServe()
	if err != nil || c.WebhookRetryMin != 10*time.Second || c.WebhookAllowPrivate {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	c, err = loadServe("--webhook-retry-min", "250ms", "--webhooks-allow-private")
	if err != nil || c.WebhookRetryMin != 250*time.Millisecond || !c.WebhookAllowPrivate {
		t.Fatalf("set: %+v, %v", c, err)
	}
	for _, bad := range []string{"soon", "0s", "-1s"} {
		if _, err := loadServe("--webhook-retry-min", bad); err == nil || !strings.Contains(err.Error(), "positive") {
			t.Errorf("--webhook-retry-min %s: %v", bad, err)
		}
	}
	t.Setenv("BETAPORT_WEBHOOK_RETRY_MIN", "2s")
	t.Setenv("BETAPORT_WEBHOOKS_ALLOW_PRIVATE", "1")
	if c, err := loadServe(); err != nil || c.WebhookRetryMin != 2*time.Second || !c.WebhookAllowPrivate {
		t.Fatalf("from the environment: %+v, %v", c, err)
	}
	// A bad value in the environment is refused too (it was once ignored).
	t.Setenv("BETAPORT_WEBHOOK_RETRY_MIN", "soon")
	if _, err := loadServe(); err == nil || !strings.Contains(err.Error(), "BETAPORT_WEBHOOK_RETRY_MIN") {
		t.Errorf("BETAPORT_WEBHOOK_RETRY_MIN=soon: %v", err)
	}
}
