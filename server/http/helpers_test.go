package http_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

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
	"TestSubmitRaces", "TestLargeZipStreams", "TestNotAZipAtPutListsProblems", "TestSlowUploads", "TestZipPutDuringSignIsRefused", "TestSlowReadersAreCutOff", "TestSignWithoutTheReceivedZipAnswers410",
}

// storageFreeTests serve only the embedded assets: running them again on
// other storage would test nothing new.
var storageFreeTests = []string{"TestWasmIsPrecompressed", "TestWasmExecIsGOROOTs", "TestServiceWorkerLeavesOtherRequestsAlone"}

// TestMain runs the tests, then stops what testenv started and removes
// the snapshots (see snapshot), as testenv.Main does but for these.
//
// Most tests run in parallel (each on its own storage and server). One of
// them, TestOnPostgresAndS3, holds a parallel slot all along while it only
// waits for its child process: unless -test.parallel is given, this
// process gets one slot more than the default (GOMAXPROCS) for it.
func TestMain(m *testing.M) {
	flag.Parse()
	if backend() == backendFiles && !testenv.Skipped() {
		set := false
		flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
		if !set {
			flag.Set("test.parallel", strconv.Itoa(runtime.GOMAXPROCS(0)+1))
		}
	}
	code := m.Run()
	removeSnapshots()
	testenv.Stop()
	os.Exit(code)
}

// testKeyring seals the signing keys of every test server.
var testKeyring = func() *keyring.Keyring {
	k, err := keyring.Parse(keyring.Generate())
	if err != nil {
		panic(err)
	}
	return k
}()

// publish stores a demo zip and publishes it as ext's next bundle, as the
// seed does.
func (e *env) publish(t *testing.T, ext *betaport.Extension, version string) *betaport.Bundle {
	t.Helper()
	zip, files, err := demo.Zip(ext.Name, version)
	if err != nil {
		t.Fatal(err)
	}
	return e.publishFiles(t, ext, version, zip, files)
}

// publishZip stores zip and publishes it as ext's next bundle.
func (e *env) publishZip(t testing.TB, ext *betaport.Extension, version string, zip []byte) *betaport.Bundle {
	t.Helper()
	return e.publishFiles(t, ext, version, zip, 2)
}

func (e *env) publishFiles(t testing.TB, ext *betaport.Extension, version string, zip []byte, files int) *betaport.Bundle {
	t.Helper()
	ctx := context.Background()
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
