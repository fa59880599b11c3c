package cli_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/keyring"
	"github.com/betaport/betaport/server/storetest"
)

// startOn starts serve on a data dir and returns it, or the error it
// refused to start with.
func startOn(t *testing.T, dir string) (*cli.Main, error) {
	t.Helper()
	m := cli.NewMain()
	m.Config.Addr, m.Config.Data = "127.0.0.1:0", dir
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.Run(context.Background()); err != nil {
		return nil, err
	}
	t.Cleanup(func() { m.Close() }) // closing twice is fine
	return m, nil
}

// TestSigningKeyRotationLosesNothing walks a keyring's life on one
// machine: keys are sealed from the first sign; a new key is added and
// every stored key rewrapped to it; the old key is dropped; the extension
// keeps its identity throughout. A changed or missing keyring makes serve
// refuse to start, never mint new identities; keys stored in plain text
// before sealing are sealed at start.
func TestSigningKeyRotationLosesNothing(t *testing.T) {
	ctx := context.Background()
	dir, work := t.TempDir(), t.TempDir()
	m, err := startOn(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	ext := storetest.MustExtension(t, m.Store, storetest.MustTeam(t, m.Store, betaport.PlanProfessional), "Tab Tamer")
	keyPath := filepath.Join(work, "key.json")
	if code, _, errOut := run(t, "key", "create", "--label", "CI", "--data", dir, "--extension", strconv.FormatInt(ext.ID, 10), "--out", keyPath); code != 0 {
		t.Fatal(errOut)
	}
	submitVersion := func(m *cli.Main, version string) {
		t.Helper()
		zip := writeZip(t, work, version+".zip", map[string]string{"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "` + version + `"}`})
		if code, _, errOut := run(t, "submit", "--quiet", "--base-url", m.URL(), "--key", keyPath, zip); code != 0 {
			t.Fatalf("submit %s: %s", version, errOut)
		}
	}
	chromeID := func(m *cli.Main) string {
		t.Helper()
		e, err := m.Store.FindExtension(ctx, ext.ID)
		if err != nil || e.ChromeID == "" {
			t.Fatalf("extension: %v", err)
		}
		return e.ChromeID
	}
	sealedWith := func(m *cli.Main) string {
		t.Helper()
		keys, err := m.Store.SigningKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		id, ok := keyring.KeyID(keys[ext.ID])
		if !ok {
			t.Fatalf("the signing key is stored unsealed")
		}
		return id
	}

	submitVersion(m, "1.0")
	identity, first := chromeID(m), sealedWith(m)
	// A tester's update URL holds a token sealed with the same keyring.
	lin := &betaport.Tester{ExtensionID: ext.ID, Email: "lin@example.com", Name: "Lin"}
	if err := m.Store.InviteTester(ctx, lin, storetest.Link("invite-lin"), "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	linURL := func(m *cli.Main) string {
		t.Helper()
		e, err := m.Store.FindExtension(ctx, ext.ID)
		if err != nil {
			t.Fatal(err)
		}
		tt, err := m.Store.FindTester(ctx, lin.ID)
		if err != nil {
			t.Fatal(err)
		}
		u, err := m.Publish.TesterUpdateURL(ctx, e, tt)
		if err != nil {
			t.Fatalf("Lin's update URL: %v", err)
		}
		return u[strings.LastIndex(u, "/")+1:] // her token (each start has its own port)
	}
	linsURL := linURL(m)
	ring := filepath.Join(dir, "signing-keyring")
	if fi, err := os.Stat(ring); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("keyring file: %v %v", fi, err)
	}
	m.Close()

	// Add a key (newest last), restart: old keys still open.
	code, newEntry, errOut := run(t, "signing-key", "generate")
	if code != 0 || !strings.Contains(errOut, "rewrap") {
		t.Fatalf("generate: %d %s", code, errOut)
	}
	old, _ := os.ReadFile(ring)
	os.WriteFile(ring, append(old, []byte(newEntry)...), 0o600)
	if m, err = startOn(t, dir); err != nil {
		t.Fatal(err)
	}
	submitVersion(m, "1.1")
	if chromeID(m) != identity || sealedWith(m) != first {
		t.Fatalf("adding a key changed the identity or resealed on its own")
	}
	m.Close()

	// Rewrap moves every key to the newest; then the old key can go.
	if code, _, errOut := run(t, "signing-key", "rewrap", "--data", dir); code != 0 || !strings.Contains(errOut, "Rewrapped 1 of 1 signing keys, 1 of 1 testers' update tokens and 0 of 0 webhook secrets") {
		t.Fatalf("rewrap: %d %s", code, errOut)
	}
	os.WriteFile(ring, []byte(newEntry), 0o600)
	if m, err = startOn(t, dir); err != nil {
		t.Fatal(err)
	}
	if sealedWith(m) == first || chromeID(m) != identity {
		t.Fatal("rewrap did not move the key to the newest")
	}
	// With the old key gone, Lin's copy keeps its URL (her token opens).
	if got := linURL(m); got != linsURL {
		t.Fatalf("after the rotation Lin's update URL is %s, want %s", got, linsURL)
	}
	submitVersion(m, "1.2")
	m.Close()

	// A changed key, or none at all: serve refuses, saying what to do.
	os.WriteFile(ring, []byte(strings.SplitN(newEntry, ":", 2)[0]+":"+strings.SplitN(keyring.Generate(), ":", 2)[1]), 0o600)
	if _, err := startOn(t, dir); err == nil || !strings.Contains(err.Error(), "does not open") || !strings.Contains(err.Error(), "never update") {
		t.Fatalf("changed keyring: %v", err)
	}
	os.Remove(ring)
	if _, err := startOn(t, dir); err == nil || !strings.Contains(err.Error(), "missing") || !strings.Contains(err.Error(), "Restore") {
		t.Fatalf("missing keyring: %v", err)
	}
	if _, err := os.Stat(ring); err == nil {
		t.Fatal("serve made a new keyring over sealed keys")
	}

	// Keys from before sealing are sealed at start.
	os.WriteFile(ring, []byte(newEntry), 0o600)
	if m, err = startOn(t, dir); err != nil {
		t.Fatal(err)
	}
	keys, _ := m.Store.SigningKeys(ctx)
	k, _ := keyring.Parse(newEntry)
	pem, err := k.Open(keys[ext.ID], "extension_signing "+strconv.FormatInt(ext.ID, 10))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Store.ReplaceSigningKey(ctx, ext.ID, keys[ext.ID], pem); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if m, err = startOn(t, dir); err != nil {
		t.Fatal(err)
	}
	if sealedWith(m) != k.Newest() || chromeID(m) != identity {
		t.Fatal("a plaintext key was not sealed at start")
	}
	submitVersion(m, "1.3")
}
