package http_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/demo"
	"github.com/betaport/betaport/server/keyring"
	"github.com/betaport/betaport/server/publish"
	"github.com/betaport/betaport/server/storetest"
	"github.com/betaport/betaport/server/testenv"
)

// The API tests run on both storage backends: (SQLite, files) in this
// process, and (PostgreSQL, S3) in a child run of this test binary that
// TestOnPostgresAndS3 starts, where newEnv opens a PostgreSQL database and
// an S3 bucket instead. A test written once with newEnv runs on both.
const (
	backendVar      = "BETAPORT_HTTP_BACKEND"
	backendFiles    = "sqlite+files"
	backendScaleOut = "postgres+s3"
)

func backend() string {
	if os.Getenv(backendVar) == backendScaleOut {
		return backendScaleOut
	}
	return backendFiles
}

// fileOnlyTests check what only file storage has (the server's own HMAC
// upload URLs, its PUT handler, files on disk), so they are not run on S3.
// The submit flow on S3 is covered by the TestSubmitOnAnyStorage tests,
// which run on both.
var fileOnlyTests = []string{
	"TestSubmitHappyPath", "TestSubmitNormalisesTopFolder", "TestSubmitKeyCalls", "TestSubmitRateLimit",
	"TestOneSeatSubmitsTwentyTimes", "TestUploadPut", "TestSign", "TestSweeperRemovesDeadUploads",
	"TestSubmitRaces", "TestLargeZipStreams", "TestNotAZipAtPutListsProblems", "TestSlowUploads",
}

// storageFreeTests serve only the embedded assets: running them again on
// other storage would test nothing new.
var storageFreeTests = []string{"TestWasmIsPrecompressed", "TestWasmExecIsGOROOTs", "TestServiceWorkerLeavesOtherRequestsAlone"}

func TestMain(m *testing.M) { testenv.Main(m) }

// testKeyring seals the signing keys of every test server.
var testKeyring = func() *keyring.Keyring {
	k, err := keyring.Parse(keyring.Generate())
	if err != nil {
		panic(err)
	}
	return k
}()

// TestOnPostgresAndS3 runs this package's tests again on PostgreSQL and S3
// (a throwaway cluster and versitygw, shared with the child), in a child
// process of this test binary. Skipped only when BETAPORT_SKIP_SCALEOUT=1.
func TestOnPostgresAndS3(t *testing.T) {
	if backend() == backendScaleOut {
		t.Skip("this is the run on PostgreSQL and S3")
	}
	testenv.SkipIfAsked(t)
	env := testenv.Environ(t)
	skip := "^(" + strings.Join(append(append(fileOnlyTests, storageFreeTests...), "TestOnPostgresAndS3"), "|") + ")$"
	args := []string{"-test.v", "-test.count=1", "-test.skip=" + skip, "-test.timeout=15m"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	start := time.Now()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), env...), backendVar+"="+backendScaleOut)
	out, err := cmd.CombinedOutput()
	passed := regexp.MustCompile(`(?m)^--- PASS: (\S+)`).FindAllStringSubmatch(string(out), -1)
	if err != nil {
		t.Fatalf("the API tests on PostgreSQL + S3 failed (%v); rerun them alone with\n\t%s=%s go test -run NAME ./server/http\n\n%s",
			err, backendVar, backendScaleOut, out)
	}
	if len(passed) == 0 {
		t.Fatalf("the run on PostgreSQL + S3 ran no test:\n%s", out)
	}
	names := make([]string, len(passed))
	for i, m := range passed {
		names[i] = m[1]
	}
	t.Logf("%d tests passed on PostgreSQL + S3 in %s: %s", len(names), time.Since(start).Round(time.Millisecond), strings.Join(names, " "))
}

// publish stores a demo zip and publishes it as ext's next bundle, as the
// seed does.
func (e *env) publish(t *testing.T, ext *betaport.Extension, version string) *betaport.Bundle {
	t.Helper()
	ctx := context.Background()
	zip, files, err := demo.Zip(ext.Name, version)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(zip)
	b := &betaport.Bundle{ExtensionID: ext.ID, Name: ext.Name, Version: version, ManifestVersion: 3,
		Size: int64(len(zip)), SHA256: hex.EncodeToString(sum[:]), FileCount: files, Source: "test"}
	b.BlobKey = betaport.BundleKey(ext.ID, b.SHA256)
	if err := e.Blobs.WriteAll(ctx, b.BlobKey, zip, &blob.WriterOptions{ContentType: "application/zip"}); err != nil {
		t.Fatal(err)
	}
	if err := e.DB.PublishBundle(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}

// key gives ext a submit key and returns it as a pipeline sends it.
func (e *env) key(t testing.TB, ext *betaport.Extension) *api.ServiceKey {
	t.Helper()
	k := &api.ServiceKey{ExtensionID: strconv.FormatInt(ext.ID, 10), APIKey: "key-" + strconv.FormatInt(ext.ID, 10) + "-" + t.Name()}
	storetest.MustKey(t, e.DB, ext.ID, "Test", k.APIKey)
	return k
}

func hashKey(k string) string { return publish.HashKey(k) }

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// testLogger sends the server's errors to the test's log (shown when it
// fails), and the rest nowhere.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelError}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
