package webhook

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/keyring"
)

// Webhook secrets are stored sealed with the service's keyring (the one
// that seals extensions' signing keys), bound to their webhook's row: a
// database dump alone cannot sign an event. They must sign, so they are
// sealed, not hashed; the worker opens each before it signs.

// SecretContext binds a sealed webhook secret to its webhook's row.
func SecretContext(webhookID int64) string {
	return "webhook_secret " + strconv.FormatInt(webhookID, 10)
}

var errNoKeyring = errors.New("no keyring is configured, so webhook secrets can be neither sealed nor opened")

// Sealer seals webhooks' secrets with k's newest key, for the store to
// keep (betaport.WebhookStore.CreateWebhook). Without a keyring it fails,
// rather than store a secret unsealed.
func Sealer(k *keyring.Keyring) betaport.SealFunc {
	return func(id int64, secret string) (string, error) {
		if k == nil {
			return "", errNoKeyring
		}
		return string(k.Seal([]byte(secret), SecretContext(id))), nil
	}
}

// OpenSecret returns the secret a webhook's stored one seals. A secret
// stored before secrets were sealed is plain text until serve seals it at
// start (ResealSecrets), and is returned as it is; a deleted webhook's
// (none) is an error.
func OpenSecret(k *keyring.Keyring, webhookID int64, stored string) (string, error) {
	if stored == "" {
		// Deleted since its delivery was claimed: nothing is signed with
		// an empty key.
		return "", errors.New("the webhook was deleted, and its secret with it")
	}
	if !keyring.IsSealed([]byte(stored)) {
		return stored, nil
	}
	if k == nil {
		return "", errNoKeyring
	}
	secret, err := k.Open([]byte(stored), SecretContext(webhookID))
	if err != nil {
		return "", err
	}
	return string(secret), nil
}

// Resealed is what ResealSecrets did.
type Resealed struct {
	// Changed of Total stored secrets were sealed (again).
	Changed, Total int
	// Unopenable lists the webhooks whose secrets the keyring cannot open
	// (at start; a rewrap stops at the first instead), by id.
	Unopenable []int64
}

// ResealSecrets seals the webhook secrets stored in plain text (from
// before sealing) with k's newest key, and lists those k cannot open: what
// serve does at start. With rewrap it also seals again, with the newest
// key, every secret sealed with an older one (betaport signing-key rewrap,
// before an old key is dropped), and stops at a secret it cannot open.
// A secret changed meanwhile (another replica sealed it, its webhook was
// deleted) is left as it is.
func ResealSecrets(ctx context.Context, store betaport.WebhookStore, k *keyring.Keyring, rewrap bool) (Resealed, error) {
	secrets, err := store.WebhookSecrets(ctx)
	if err != nil {
		return Resealed{}, err
	}
	r := Resealed{Total: len(secrets)}
	ids := make([]int64, 0, len(secrets))
	for id := range secrets {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		stored := secrets[id]
		sealed := keyring.IsSealed([]byte(stored))
		if kid, _ := keyring.KeyID([]byte(stored)); sealed && (!rewrap || kid == k.Newest()) {
			if _, err := k.Open([]byte(stored), SecretContext(id)); err != nil {
				if rewrap {
					return r, fmt.Errorf("webhook %d's secret: %w", id, err)
				}
				r.Unopenable = append(r.Unopenable, id)
			}
			continue
		}
		secret, err := OpenSecret(k, id, stored)
		if err != nil {
			return r, fmt.Errorf("webhook %d's secret: %w", id, err)
		}
		if err := store.ReplaceWebhookSecret(ctx, id, stored, string(k.Seal([]byte(secret), SecretContext(id)))); err != nil {
			return r, err
		}
		r.Changed++
	}
	return r, nil
}
