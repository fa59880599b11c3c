package browser_test

import (
	"archive/zip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/keyring"
	"github.com/betaport/betaport/server/testenv"
)

// TestLivePublishAcrossReplicas: two replicas share only PostgreSQL and
// S3. An admin's browser has the bundles page open on replica A; a
// pipeline publishes through replica B. The new bundle shows in A's open
// list and header within seconds, with no focus event or reload: the push
// reaches A through the shared database.
func TestLivePublishAcrossReplicas(t *testing.T) {
	t.Parallel()
	db, blob := testenv.PostgresURL(t), testenv.BucketURL(t)
	secret, ring := credential.NewToken()+credential.NewToken(), keyring.Generate()
	replica := func() *cli.Main {
		m := cli.NewMain()
		m.Config.Addr = "127.0.0.1:0"
		m.Config.Data = t.TempDir()
		m.Config.DB, m.Config.Blob, m.Config.Secret, m.Config.SigningKeyring = db, blob, secret, ring
		m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		if err := m.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return m
	}
	a, b := replica(), replica()
	run := func(args ...string) string {
		t.Helper()
		var out, errOut strings.Builder
		args = append(args, "--db", db, "--blob", blob, "--data", t.TempDir(), "--signing-keyring", ring)
		if code := cli.Run(context.Background(), args, &out, &errOut); code != 0 {
			t.Fatalf("betaport %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
		}
		return out.String()
	}
	var team betaport.Team
	var ext betaport.Extension
	if err := errors.Join(
		json.Unmarshal([]byte(run("team", "create", "--name", "Acme", "--plan", "professional")), &team),
		json.Unmarshal([]byte(run("extension", "create", "--team", strconv.FormatInt(team.ID, 10), "--name", "Tab Tamer")), &ext),
	); err != nil {
		t.Fatal(err)
	}
	const email, password = "ada@example.com", "a long password"
	run("user", "create", "--team", strconv.FormatInt(team.ID, 10), "--email", email, "--password", password)
	keyPath := filepath.Join(t.TempDir(), "key.json")
	run("key", "create", "--label", "CI", "--extension", strconv.FormatInt(ext.ID, 10), "--out", keyPath)

	ctx := newTab(t)
	signIn(t, ctx, a.URL(), email, password)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d", a.URL(), ext.ID))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!document.querySelector("#bundles .state-empty, #bundles [data-bundle]")`)); err != nil {
		t.Fatalf("the bundles page on replica A never showed its list: %v", err)
	}
	for i := range 3 {
		number := submitTo(t, b.URL(), keyPath, "Tab Tamer", fmt.Sprintf("1.0.%d", i))
		published := time.Now()
		shown := fmt.Sprintf(`!!document.querySelector('#bundle-rows [data-bundle="%d"]') && document.getElementById("current-bundle")?.textContent.includes("#%d")`, number, number)
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](shown, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			t.Fatalf("bundle #%d, published through replica B, never showed in the list and header open on replica A: %v", number, err)
		}
		t.Logf("bundle #%d published through B showed on A after %v", number, time.Since(published).Round(10*time.Millisecond))
	}
}

// submitTo publishes a zip of the manifest name and version with
// `betaport submit` against baseURL, as a pipeline does, and returns the
// bundle's number.
func submitTo(t *testing.T, baseURL, keyPath, name, version string) int64 {
	t.Helper()
	zipPath := filepath.Join(t.TempDir(), "bundle.zip")
	f, err := os.Create(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	w, _ := zw.Create("manifest.json")
	fmt.Fprintf(w, `{"manifest_version": 3, "name": %q, "version": %q}`, name, version)
	if err := errors.Join(zw.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	if code := cli.Run(context.Background(), []string{"submit", "--quiet", "--base-url", baseURL, "--key", keyPath, zipPath}, &stdout, &stderr); code != 0 {
		t.Fatalf("submit: %s", stderr.String())
	}
	var bundle struct{ Number int64 }
	if err := json.Unmarshal([]byte(stdout.String()), &bundle); err != nil {
		t.Fatal(err)
	}
	return bundle.Number
}
