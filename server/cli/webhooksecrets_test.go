package cli_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/keyring"
	"github.com/betaport/betaport/server/storetest"
	"github.com/betaport/betaport/server/webhook"
)

// startHooked starts serve on a data dir, allowed to send webhooks to the
// test's receivers on loopback.
func startHooked(t *testing.T, dir string) (*cli.Main, error) {
	t.Helper()
	m := cli.NewMain()
	m.Config.Addr, m.Config.Data, m.Config.WebhookAllowPrivate = "127.0.0.1:0", dir, true
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.Run(context.Background()); err != nil {
		return nil, err
	}
	t.Cleanup(func() { m.Close() })
	return m, nil
}

// signedRequest is one POST a webhook receiver got.
type signedRequest struct {
	signature string
	body      []byte
}

// verifies reports whether r is signed with secret, as a receiver checks.
func (r signedRequest) verifies(secret string) bool {
	var ts, v1 string
	for _, part := range strings.Split(r.signature, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			v1 = v
		}
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + string(r.body)))
	return ts != "" && hmac.Equal([]byte(v1), []byte(hex.EncodeToString(mac.Sum(nil))))
}

// A webhook's secret lives sealed in the database through the keyring's
// life: sealed when the webhook is made; a secret stored in plain text
// (from before sealing) is sealed at the next start; signing-key rewrap
// seals it again with a new key, after which the old key can go; a backup
// restored elsewhere still signs with it; and every event, throughout,
// verifies with the secret the admin was shown once. A keyring that goes
// missing while webhook secrets are sealed with it is not replaced by a
// new one.
func TestWebhookSecretsThroughRotationAndRestore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m, err := startHooked(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	team := storetest.MustTeam(t, m.Store, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, m.Store, team, "Tab Tamer")
	if err := m.Store.CreateUser(ctx, &betaport.User{TeamID: team.ID, Email: "ada@example.com"}, credential.HashPassword("a long password")); err != nil {
		t.Fatal(err)
	}
	got := make(chan signedRequest, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- signedRequest{r.Header.Get(webhook.HeaderSignature), body}
	}))
	defer receiver.Close()

	client := signedIn(t, m.URL())
	body, _ := json.Marshal(api.NewWebhook{URL: receiver.URL + "/hook"})
	resp, err := client.Post(m.URL()+api.WebhooksPath(ext.ID), "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var created api.CreatedWebhook
	json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || created.Secret == "" {
		t.Fatalf("adding the webhook: %d %+v", resp.StatusCode, created)
	}
	// stored is the webhook's secret column, which must be sealed (with
	// the key named, when one is) and not hold the secret.
	stored := func(m *cli.Main, key string) string {
		t.Helper()
		secrets, err := m.Store.WebhookSecrets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		v := secrets[created.ID]
		id, sealed := keyring.KeyID([]byte(v))
		if !sealed || strings.Contains(v, strings.TrimPrefix(created.Secret, api.WebhookSecretPrefix)) || key != "" && id != key {
			t.Fatalf("the webhook's secret is stored as %q; want it sealed (with key %q)", v, key)
		}
		return id
	}
	// pinged sends a test event through the service at base and checks
	// that it arrives signed with the secret the admin was shown.
	pinged := func(base string, client *http.Client) {
		t.Helper()
		resp, err := client.Post(base+api.WebhookTestPath(ext.ID, created.ID), "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("test event: %d", resp.StatusCode)
		}
		select {
		case r := <-got:
			if !r.verifies(created.Secret) {
				t.Fatalf("the event's signature %q does not verify with the secret the admin was shown", r.signature)
			}
		case <-time.After(time.Minute):
			t.Fatal("the test event never arrived")
		}
	}
	first := stored(m, "")
	pinged(m.URL(), client)

	// A secret stored in plain text, as before sealing, is sealed at start.
	secrets, _ := m.Store.WebhookSecrets(ctx)
	if err := m.Store.ReplaceWebhookSecret(ctx, created.ID, secrets[created.ID], created.Secret); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if m, err = startHooked(t, dir); err != nil {
		t.Fatal(err)
	}
	stored(m, first)
	pinged(m.URL(), signedIn(t, m.URL()))
	m.Close()

	// Rotation: a new key (newest last), then rewrap; then the old key goes.
	ring := filepath.Join(dir, "signing-keyring")
	_, newEntry, _ := run(t, "signing-key", "generate")
	old, _ := os.ReadFile(ring)
	os.WriteFile(ring, append(old, []byte(newEntry)...), 0o600)
	if code, _, errOut := run(t, "signing-key", "rewrap", "--data", dir); code != 0 || !strings.Contains(errOut, "1 of 1 webhook secrets") {
		t.Fatalf("rewrap: %d %s", code, errOut)
	}
	os.WriteFile(ring, []byte(newEntry), 0o600)
	if m, err = startHooked(t, dir); err != nil {
		t.Fatal(err)
	}
	if stored(m, "") == first {
		t.Fatal("rewrap left the webhook's secret sealed with the old key")
	}
	pinged(m.URL(), signedIn(t, m.URL()))

	// A backup, restored into a new data dir, signs with the same secret.
	backupFile := filepath.Join(t.TempDir(), "betaport.backup")
	if code, _, errOut := run(t, "backup", "--data", dir, "--out", backupFile); code != 0 {
		t.Fatalf("backup: %s", errOut)
	}
	m.Close()
	restored := filepath.Join(t.TempDir(), "restored")
	if code, _, errOut := run(t, "restore", "--from", backupFile, "--data", restored); code != 0 {
		t.Fatalf("restore: %s", errOut)
	}
	r, err := startHooked(t, restored)
	if err != nil {
		t.Fatal(err)
	}
	pinged(r.URL(), signedIn(t, r.URL()))
	r.Close()

	// The keyring lost while only webhook secrets are sealed with it (no
	// extension has signed yet): serve refuses, rather than make a new
	// keyring that cannot open them.
	os.Remove(filepath.Join(restored, "signing-keyring"))
	if _, err := startHooked(t, restored); err == nil || !strings.Contains(err.Error(), "missing") || !strings.Contains(err.Error(), "Restore") {
		t.Fatalf("a missing keyring over sealed webhook secrets: %v; want serve to refuse", err)
	}
	if _, err := os.Stat(filepath.Join(restored, "signing-keyring")); err == nil {
		t.Fatal("serve made a new keyring over sealed webhook secrets")
	}
}
