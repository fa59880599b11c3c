package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/keyring"
	"github.com/betaport/betaport/server/webhook"
)

// A webhook's secret is stored sealed with the keyring, bound to its row:
// the database holds neither it nor anything it can be read from without
// the keyring. The delivery a worker claims carries the sealed secret, which
// opens to the one the admin was shown, so receivers verify as before. A
// rotation (a new key, then rewrap) seals every secret again with the new
// key, after which the old key can go; secrets stored in plain text before
// sealing are sealed; a seal that fails stores nothing; a deleted webhook
// keeps no secret.
func testWebhookSecretsSealed(t *testing.T, s betaport.Store, db *sql.DB) {
	ctx := context.Background()
	column := func(id int64) string {
		t.Helper()
		var v string
		if err := db.QueryRowContext(ctx, fmt.Sprintf(`SELECT secret FROM webhooks WHERE id = %d`, id)).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	oldEntry := keyring.Generate()
	oldRing, err := keyring.Parse(oldEntry)
	if err != nil {
		t.Fatal(err)
	}
	e := MustExtension(t, s, MustTeam(t, s, betaport.PlanProfessional), "Hooked")
	const shown = "whsec_the-one-the-admin-was-shown"
	hook := &betaport.Webhook{ExtensionID: e.ID, URL: "https://hooks.example.com/", Secret: shown, CreatedBy: "ada@example.com"}
	if err := s.CreateWebhook(ctx, hook, webhook.Sealer(oldRing)); err != nil {
		t.Fatal(err)
	}
	if hook.Secret != shown {
		t.Fatalf("CreateWebhook changed the secret to show to %q", hook.Secret)
	}
	stored := column(hook.ID)
	if strings.Contains(stored, shown) || strings.Contains(stored, strings.TrimPrefix(shown, "whsec_")) || !keyring.IsSealed([]byte(stored)) {
		t.Fatalf("the secret column holds %q; want it sealed, without the secret", stored)
	}
	if id, _ := keyring.KeyID([]byte(stored)); id != oldRing.Newest() {
		t.Fatalf("sealed with key %q, want the keyring's newest %q", id, oldRing.Newest())
	}

	// The delivery the worker claims opens to the secret shown, and its
	// signature verifies with it.
	verifies := func(ring *keyring.Keyring, d *betaport.WebhookDelivery) {
		t.Helper()
		secret, err := webhook.OpenSecret(ring, d.WebhookID, d.Secret)
		if err != nil {
			t.Fatalf("opening the claimed delivery's secret: %v", err)
		}
		at := time.Unix(1_800_000_000, 0)
		if secret != shown || webhook.Sign(secret, at, d.Body) != webhook.Sign(shown, at, d.Body) {
			t.Fatalf("the delivery is signed with %q, not the secret the admin was shown", secret)
		}
	}
	claimPing := func(ring *keyring.Keyring) {
		t.Helper()
		if _, err := s.PingWebhook(ctx, e.ID, hook.ID); err != nil {
			t.Fatal(err)
		}
		now := betaport.Now().Add(time.Second)
		list := claimAll(t, s, "worker", now)
		if len(list) != 1 || list[0].Secret == shown {
			t.Fatalf("claimed %+v; want one delivery with the sealed secret", list)
		}
		verifies(ring, list[0])
		record(t, s, betaport.DeliveryResult{DeliveryID: list[0].ID, Attempt: list[0].Attempts, Claimer: "worker", Status: 204, At: now, Delivered: true})
	}
	claimPing(oldRing)

	// Sealed for its own row: moved to another webhook, it does not open.
	other := &betaport.Webhook{ExtensionID: e.ID, URL: "https://other.example.com/", Secret: "whsec_other", CreatedBy: "ada@example.com"}
	if err := s.CreateWebhook(ctx, other, webhook.Sealer(oldRing)); err != nil {
		t.Fatal(err)
	}
	if _, err := webhook.OpenSecret(oldRing, other.ID, stored); err == nil {
		t.Fatal("a webhook's sealed secret opens for another webhook")
	}

	// A seal that fails (no keyring) stores nothing.
	before, _ := s.FindWebhooks(ctx, e.ID, 0, 100)
	refused := &betaport.Webhook{ExtensionID: e.ID, URL: "https://refused.example.com/", Secret: "whsec_refused", CreatedBy: "ada@example.com"}
	if err := s.CreateWebhook(ctx, refused, webhook.Sealer(nil)); err == nil {
		t.Fatal("a webhook was made without a keyring to seal its secret")
	}
	if after, _ := s.FindWebhooks(ctx, e.ID, 0, 100); len(after) != len(before) {
		t.Fatalf("a failed seal left a webhook: %d before, %d after", len(before), len(after))
	}

	// A secret stored in plain text (from before sealing) is sealed by the
	// start-up step; a seal moved meanwhile is left alone.
	if err := s.ReplaceWebhookSecret(ctx, other.ID, column(other.ID), "whsec_other"); err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceWebhookSecret(ctx, other.ID, "not what is stored", "whsec_changed"); err != nil || column(other.ID) != "whsec_other" {
		t.Fatalf("replacing a secret that changed meanwhile: %v, stored %q", err, column(other.ID))
	}
	res, err := webhook.ResealSecrets(ctx, s, oldRing, false)
	if err != nil || res.Changed != 1 || res.Total != 2 || len(res.Unopenable) != 0 {
		t.Fatalf("sealing plain-text secrets: %+v, %v; want 1 of 2 sealed", res, err)
	}
	if v := column(other.ID); !keyring.IsSealed([]byte(v)) || strings.Contains(v, "whsec_other") {
		t.Fatalf("the plain-text secret is stored as %q after sealing", v)
	}

	// Rotation: a new key is added (newest last); the next start seals
	// nothing again on its own; rewrap moves every secret to the new key.
	newEntry := keyring.Generate()
	both, err := keyring.Parse(oldEntry + "\n" + newEntry)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := webhook.ResealSecrets(ctx, s, both, false); err != nil || res.Changed != 0 {
		t.Fatalf("a start with a new key: %+v, %v; want nothing sealed again", res, err)
	}
	res, err = webhook.ResealSecrets(ctx, s, both, true)
	if err != nil || res.Changed != 2 || res.Total != 2 {
		t.Fatalf("rewrap: %+v, %v; want 2 of 2 sealed again", res, err)
	}
	newOnly, _ := keyring.Parse(newEntry)
	for _, id := range []int64{hook.ID, other.ID} {
		if kid, _ := keyring.KeyID([]byte(column(id))); kid != newOnly.Newest() {
			t.Fatalf("after rewrap webhook %d's secret is sealed with %q, want %q", id, kid, newOnly.Newest())
		}
	}
	// The old key dropped, deliveries still verify with the secret shown.
	claimPing(newOnly)
	// The old keyring no longer opens them: start-up names them.
	if res, err := webhook.ResealSecrets(ctx, s, oldRing, false); err != nil || len(res.Unopenable) != 2 {
		t.Fatalf("with a keyring that lacks their key: %+v, %v; want both named", res, err)
	}
	if _, err := webhook.ResealSecrets(ctx, s, oldRing, true); err == nil || !errors.Is(err, keyring.ErrUnknownKey) {
		t.Fatalf("rewrap with a keyring that lacks their key: %v; want it refused", err)
	}

	// A deleted webhook never signs again: its secret is not kept.
	if err := s.DeleteWebhook(ctx, e.ID, other.ID, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	if v := column(other.ID); v != "" {
		t.Fatalf("a deleted webhook's secret is kept: %q", v)
	}
	if secret, err := webhook.OpenSecret(newOnly, other.ID, column(other.ID)); err == nil {
		t.Fatalf("a deleted webhook's secret opens, to %q: an event would be signed with it", secret)
	}
	if secrets, err := s.WebhookSecrets(ctx); err != nil || len(secrets) != 1 || secrets[hook.ID] == "" {
		t.Fatalf("WebhookSecrets = %v, %v; want the live webhook's only", secrets, err)
	}
}
