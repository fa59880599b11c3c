package cli_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	mathrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/publish"
	"github.com/betaport/betaport/server/storetest"
	"github.com/betaport/betaport/server/testenv"
)

// crashChildVar makes this test binary a `betaport serve` to be killed:
// its value is "DATA_DIR ADDR".
const crashChildVar = "BETAPORT_CRASH_CHILD"

func TestMain(m *testing.M) {
	if v := os.Getenv(commandChildVar); v != "" {
		// The betaport command itself (server/cmd/betaport's main), as a
		// process: its exit code and its two streams (commandProcess).
		var args []string
		json.Unmarshal([]byte(v), &args)
		os.Exit(cli.Run(context.Background(), args, os.Stdout, os.Stderr))
	}
	if v := os.Getenv(crashChildVar); v != "" {
		dir, addr, _ := strings.Cut(v, " ")
		os.Exit(cli.Run(context.Background(), []string{"serve", "--data", dir, "--addr", addr}, io.Discard, os.Stderr))
	}
	code := m.Run()
	testenv.Stop() // the PostgreSQL cluster and S3 gateway the tests shared
	atExitMu.Lock()
	for _, dir := range atExit {
		os.RemoveAll(dir)
	}
	atExitMu.Unlock()
	os.Exit(code)
}

// atExit lists the directories TestMain removes after the tests: those
// made once for many tests (see bb20Template).
var (
	atExitMu sync.Mutex
	atExit   []string
)

func cleanupAtExit(dir string) {
	atExitMu.Lock()
	defer atExitMu.Unlock()
	atExit = append(atExit, dir)
}

// child is a server process on a data dir.
type child struct {
	cmd *exec.Cmd
	url string
}

func startChild(t *testing.T, dir, tmp string) *child {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildVar+"="+dir+" "+addr, "TMPDIR="+tmp)
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, url: "http://" + addr}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(c.url + api.PathHealth); err == nil {
			resp.Body.Close()
			return c
		}
		if time.Now().After(deadline) {
			c.kill()
			t.Fatal("the server process did not start")
		}
	}
}

// kill ends the process at once, as a power cut would.
func (c *child) kill() {
	c.cmd.Process.Kill()
	c.cmd.Wait()
}

func postKey(url string, key []byte) (*http.Response, []byte, error) {
	resp, err := http.Post(url, "application/json", bytes.NewReader(key))
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// bigZip is an extension of n incompressible files of 256 KiB: large
// enough that its PUT and sign take a moment to interrupt.
func bigZip(t *testing.T, n int) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("manifest.json")
	io.WriteString(w, `{"manifest_version": 3, "name": "Crash", "version": "1.0"}`)
	chunk := make([]byte, 256<<10)
	for i := range n {
		rand.Read(chunk)
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("assets/%d.bin", i), Method: zip.Store})
		w.Write(chunk)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCrashesLeaveNothingAfterSweep kills a real server process during
// PUTs and during signs, many times, then sweeps: the data dir must hold
// exactly what the records point to, and every recorded blob.
func TestCrashesLeaveNothingAfterSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills server processes; not in -short runs")
	}
	ctx := context.Background()
	dir, tmp := t.TempDir(), t.TempDir()
	cfg := cli.Config{Data: dir}
	st, err := cli.OpenStorage(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ext := storetest.MustExtension(t, st.Store, storetest.MustTeam(t, st.Store, betaport.PlanProfessional), "Crash")
	st.Close()
	keyPath := filepath.Join(t.TempDir(), "key.json")
	if code, _, errOut := run(t, "key", "create", "--label", "CI", "--data", dir, "--extension", strconv.FormatInt(ext.ID, 10), "--out", keyPath); code != 0 {
		t.Fatalf("key create: %s", errOut)
	}
	var keyFile struct{ Service json.RawMessage }
	raw, _ := os.ReadFile(keyPath)
	json.Unmarshal(raw, &keyFile)

	zipBytes := bigZip(t, 24) // 6 MiB
	rng := mathrand.New(mathrand.NewPCG(1, 2))
	const trials = 12
	for trial := range trials {
		c := startChild(t, dir, tmp)
		resp, body, err := postKey(c.url+api.PathSubmitUpload, keyFile.Service)
		if err != nil || resp.StatusCode != 200 {
			c.kill()
			t.Fatalf("trial %d: call 1: %v %s", trial, err, body)
		}
		var u api.UploadURL
		json.Unmarshal(body, &u)
		if trial%2 == 0 {
			// Kill during the PUT, when part of the zip has arrived.
			pr, pw := io.Pipe()
			done := make(chan error, 1)
			go func() {
				req, _ := http.NewRequest("PUT", u.URL, pr)
				req.ContentLength = int64(len(zipBytes))
				req.Header.Set("Content-Type", api.ZipContentType)
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				done <- err
			}()
			cut := 1<<20 + rng.IntN(len(zipBytes)-2<<20)
			pw.Write(zipBytes[:cut])
			c.kill()
			pw.CloseWithError(io.ErrUnexpectedEOF)
			<-done
			continue
		}
		// Kill during the sign, at a random moment of it.
		req, _ := http.NewRequest("PUT", u.URL, bytes.NewReader(zipBytes))
		req.Header.Set("Content-Type", api.ZipContentType)
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
			c.kill()
			t.Fatalf("trial %d: PUT: %v", trial, err)
		}
		signed := make(chan struct{})
		go func() {
			postKey(c.url+api.PathSubmitSign, keyFile.Service)
			close(signed)
		}()
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		c.kill()
		<-signed
	}

	// What the crashes left, then the sweeper on the same storage, with no
	// grace: nothing else runs now.
	t.Setenv("TMPDIR", tmp)
	st, err = cli.OpenStorage(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := &publish.Service{Store: st.Store, Blobs: st.Blobs, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OrphanGrace: time.Nanosecond}
	before := blobFiles(t, dir)
	if _, err := s.Sweep(ctx); err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	after := blobFiles(t, dir)
	live, err := st.Store.LiveBlobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for k := range live.Keys {
		want = append(want, k)
	}
	for id := range live.PendingUploads {
		if slices.Contains(before, "uploads/"+strconv.FormatInt(id, 10)+".zip") {
			want = append(want, "uploads/"+strconv.FormatInt(id, 10)+".zip")
		}
	}
	slices.Sort(want)
	if !slices.Equal(after, want) {
		t.Errorf("after %d crashes and a sweep the data dir holds\n%q\nthe records point to\n%q\n(before the sweep: %q)", trials, after, want, before)
	}
	if work, _ := filepath.Glob(filepath.Join(tmp, "betaport-crx-*")); len(work) != 0 {
		t.Errorf("CRX work folders left: %q", work)
	}
	t.Logf("%d crashes left %d files; the sweep kept %d", trials, len(before), len(after))
}

// blobFiles lists the blob keys stored under a data dir, sorted.
func blobFiles(t *testing.T, dir string) []string {
	t.Helper()
	root := filepath.Join(dir, "blobs")
	var keys []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(path, ".attrs") {
			rel, _ := filepath.Rel(root, path)
			keys = append(keys, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(keys)
	return keys
}

// TestServeSweepsAtStartUp: a server starting on a data dir that a crash
// left an old orphan in removes it without waiting a sweep interval.
func TestServeSweepsAtStartUp(t *testing.T) {
	dir := t.TempDir()
	orphan := filepath.Join(dir, "blobs", "bundles", "1", "upload-7.zip.18ab3f.tmp")
	os.MkdirAll(filepath.Dir(orphan), 0o755)
	if err := os.WriteFile(orphan, []byte("half a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * publish.DefaultOrphanGrace)
	os.Chtimes(orphan, old, old)
	m := cli.NewMain()
	m.Config.Addr, m.Config.Data = "127.0.0.1:0", dir
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(orphan); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the start-up sweep did not remove an old orphan")
		}
	}
}
