package http_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/server/testenv"
)

// childBinaryVar names a test binary of this package to run on PostgreSQL
// and S3 instead of this one. make test gives one built without the race
// detector: what differs from the run on SQLite and files (the PostgreSQL
// store, the S3 blobs) is raced by server/postgres's, server/blobstore's
// and server/scaleout's tests, and the handlers by this run; the race
// detector made the second run cost twice the CPU (128 CPU-s against 65).
const childBinaryVar = "BETAPORT_HTTP_SCALEOUT_TEST_BINARY"

func childBinary() string {
	if p := os.Getenv(childBinaryVar); p != "" {
		return p
	}
	return os.Args[0]
}

// TestOnPostgresAndS3 runs this package's tests again on PostgreSQL and S3
// (a throwaway cluster and versitygw, shared with the child), in a child
// process of this test binary. Skipped only when BETAPORT_SKIP_SCALEOUT=1.
//
// The child's parallel tests run beside this process's. Each process runs
// its tests that are not parallel first, one at a time; those that measure
// time (an upload's pace, a URL's lifetime, a stalled connection's
// deadline) or memory are among them, and neither process's run alone
// beside the other's tests:
//
//   - Go runs a package's tests in the order of its files' names (then of
//     their functions), the parallel ones once the others are done: this
//     file's name makes this test the last of this process's tests that
//     are not parallel, so it starts the child when those are done;
//   - it then waits until the child's own such tests are done (the child's
//     first parallel test continues, "=== CONT", or the child ends) before
//     it lets this process's parallel tests start (t.Parallel), and waits
//     for the child to end.
func TestOnPostgresAndS3(t *testing.T) {
	if backend() == backendScaleOut {
		t.Skip("this is the run on PostgreSQL and S3")
	}
	testenv.SkipIfAsked(t)
	env := testenv.Environ(t)
	skip := "^(" + strings.Join(append(append(fileOnlyTests, storageFreeTests...), "TestOnPostgresAndS3"), "|") + ")$"
	// The child has the time this run has left (a minute less, so that it
	// is the child that reports a test that hangs), or 15 minutes.
	timeout := 15 * time.Minute
	if deadline, ok := t.Deadline(); ok {
		timeout = max(time.Until(deadline)-time.Minute, time.Minute)
	}
	args := []string{"-test.v", "-test.count=1", "-test.skip=" + skip, "-test.timeout=" + timeout.String()}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	start := time.Now()
	cmd := exec.Command(childBinary(), args...)
	cmd.Env = append(append(os.Environ(), env...), backendVar+"="+backendScaleOut)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		pw.Close()
		exited <- err
	}()
	// The child's output, read as it comes: its first top-level test that
	// continues after a pause says that its tests that run alone are done.
	var out bytes.Buffer
	aloneDone := make(chan struct{})
	var markAloneDone sync.Once
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer markAloneDone.Do(func() { close(aloneDone) })
		r := bufio.NewReader(pr)
		for {
			line, err := r.ReadString('\n')
			out.WriteString(line)
			if name, ok := strings.CutPrefix(line, "=== CONT "); ok && !strings.Contains(name, "/") {
				markAloneDone.Do(func() { close(aloneDone) })
			}
			if err != nil {
				return
			}
		}
	}()
	<-aloneDone
	t.Parallel()
	err := <-exited
	<-read
	passed := regexp.MustCompile(`(?m)^--- PASS: (\S+)`).FindAllStringSubmatch(out.String(), -1)
	if err != nil {
		t.Fatalf("the API tests on PostgreSQL + S3 failed (%v); rerun them alone with\n\t%s=%s go test -run NAME ./server/http\n\n%s",
			err, backendVar, backendScaleOut, out.String())
	}
	if len(passed) == 0 {
		t.Fatalf("the run on PostgreSQL + S3 ran no test:\n%s", out.String())
	}
	names := make([]string, len(passed))
	for i, m := range passed {
		names[i] = m[1]
	}
	t.Logf("%d tests passed on PostgreSQL + S3 in %s: %s", len(names), time.Since(start).Round(time.Millisecond), strings.Join(names, " "))
}
