// Package testenv starts what the scale-out tests need: a throwaway
// PostgreSQL cluster (initdb + postgres in a temp dir) and a versitygw S3
// gateway (posix backend in a temp dir), both on 127.0.0.1 and a free port.
//
// Each is started at most once per test binary, on first use, and stopped
// when the binary ends: a package using testenv runs its tests through Main.
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
// Every test gets its own database (PostgresURL) and bucket (BucketURL), so
// tests never see each other's data.
//
// The (PostgreSQL, S3) runs are skipped only when BETAPORT_SKIP_SCALEOUT=1
// asks for it; CI never sets it. A missing initdb or versitygw fails the
// test with the command that installs it.
package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// SkipVar names the variable that skips the (PostgreSQL, S3) runs when set
// to 1. Only for machines that cannot run them; CI never sets it.
const SkipVar = "BETAPORT_SKIP_SCALEOUT"

// Variables through which a test binary hands its running servers to a
// child test binary it starts (see Environ), instead of the child starting
// its own.
const (
	envPostgres = "BETAPORT_TESTENV_POSTGRES" // admin URL of the cluster
	envS3       = "BETAPORT_TESTENV_S3"       // endpoint URL of the gateway
)

// S3 credentials of the test gateway. Betaport reads S3 credentials from the
// standard AWS variables, so testenv sets these in the test process.
const (
	AccessKey = "BETAPORTTESTKEY"
	SecretKey = "betaport-test-secret-key"
	Region    = "us-east-1"
)

// Skipped reports whether SkipVar asks to skip the (PostgreSQL, S3) runs.
func Skipped() bool { return os.Getenv(SkipVar) == "1" }

// SkipIfAsked skips t when SkipVar is set, saying so.
func SkipIfAsked(t testing.TB) {
	t.Helper()
	if Skipped() {
		t.Skipf("%s=1: skipping the PostgreSQL + S3 run", SkipVar)
	}
}

var (
	mu       sync.Mutex
	stoppers []func()

	pgOnce  sync.Once
	pg      *postgres
	pgAdmin *sql.DB
	pgErr   error
	// pgReady holds databases created ahead of the tests; pgFailed the
	// error that stopped creating them.
	pgReady  = make(chan string, 2)
	pgFailed = make(chan error, 1)

	s3Once sync.Once
	gw     *gateway
	s3Err  error
)

// Main runs the tests of m and stops the servers they started.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops every server this process started. Main calls it.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	for i := len(stoppers) - 1; i >= 0; i-- {
		stoppers[i]()
	}
	stoppers = nil
}

func atExit(f func()) {
	mu.Lock()
	defer mu.Unlock()
	stoppers = append(stoppers, f)
}

// PostgresURL returns the URL of a new, empty database on the test cluster,
// starting the cluster on first use.
func PostgresURL(t testing.TB) string {
	t.Helper()
	SkipIfAsked(t)
	if _, err := postgresAdmin(); err != nil {
		t.Fatal(err)
	}
	var name string
	select {
	case name = <-pgReady:
	case err := <-pgFailed:
		pgFailed <- err
		t.Fatalf("testenv: creating a database: %v", err)
	}
	u, _ := url.Parse(pgURL())
	u.Path = "/" + name
	return u.String()
}

// fillDatabases creates empty databases ahead of the tests that ask for
// them (a CREATE DATABASE takes a few hundred milliseconds), until stop.
func fillDatabases(admin *sql.DB, stop <-chan struct{}) {
	for {
		name := "t_" + randomHex(8)
		// template0: nobody is ever connected to it, so databases can be
		// created from it while other tests run.
		_, err := admin.Exec(`CREATE DATABASE ` + name + ` TEMPLATE template0`)
		if err != nil {
			select {
			case <-stop:
			case pgFailed <- err:
			}
			return
		}
		select {
		case <-stop:
			return
		case pgReady <- name:
		}
	}
}

// pgURL is the admin URL of the cluster this process uses.
func pgURL() string {
	if v := os.Getenv(envPostgres); v != "" {
		return v
	}
	return pg.url("postgres")
}

func postgresAdmin() (*sql.DB, error) {
	pgOnce.Do(func() {
		if os.Getenv(envPostgres) == "" {
			pg, pgErr = startPostgres()
			if pgErr != nil {
				return
			}
			atExit(pg.stop)
		}
		pgAdmin, pgErr = sql.Open("pgx", pgURL())
		if pgErr != nil {
			return
		}
		pgAdmin.SetMaxOpenConns(4)
		stop := make(chan struct{})
		var fillers sync.WaitGroup
		for range 2 {
			fillers.Go(func() { fillDatabases(pgAdmin, stop) })
		}
		atExit(func() { close(stop); fillers.Wait(); pgAdmin.Close() })
	})
	return pgAdmin, pgErr
}

// BucketURL returns the blob URL (s3://…) of a new, empty bucket on the
// test gateway, starting the gateway on first use.
func BucketURL(t testing.TB) string {
	t.Helper()
	SkipIfAsked(t)
	endpoint, err := gatewayEndpoint()
	if err != nil {
		t.Fatal(err)
	}
	bucket := "t-" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := createBucket(ctx, endpoint, bucket); err != nil {
		t.Fatalf("testenv: creating bucket %s: %v", bucket, err)
	}
	return BlobURL(endpoint, bucket)
}

// BlobURL is the s3:// URL Betaport takes for bucket on endpoint.
func BlobURL(endpoint, bucket string) string {
	q := url.Values{"endpoint": {endpoint}, "region": {Region}, "use_path_style": {"true"}}
	return "s3://" + bucket + "?" + q.Encode()
}

func gatewayEndpoint() (string, error) {
	s3Once.Do(func() {
		setAWSEnv()
		if os.Getenv(envS3) != "" {
			return
		}
		gw, s3Err = startGateway()
		if s3Err == nil {
			atExit(gw.stop)
		}
	})
	if s3Err != nil {
		return "", s3Err
	}
	if v := os.Getenv(envS3); v != "" {
		return v, nil
	}
	return gw.endpoint, nil
}

// setAWSEnv points the standard AWS variables at the test gateway, and
// clears those that would send requests elsewhere.
func setAWSEnv() {
	for _, v := range []string{"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"} {
		os.Unsetenv(v)
	}
	os.Setenv("AWS_ACCESS_KEY_ID", AccessKey)
	os.Setenv("AWS_SECRET_ACCESS_KEY", SecretKey)
	os.Setenv("AWS_REGION", Region)
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// Environ returns the variables a child test binary needs to use this
// process's cluster and gateway (starting them if needed). Pass it with the
// child's environment.
func Environ(t testing.TB) []string {
	t.Helper()
	SkipIfAsked(t)
	if _, err := postgresAdmin(); err != nil {
		t.Fatal(err)
	}
	endpoint, err := gatewayEndpoint()
	if err != nil {
		t.Fatal(err)
	}
	return []string{envPostgres + "=" + pgURL(), envS3 + "=" + endpoint,
		"AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey, "AWS_REGION=" + Region}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// freePort returns a loopback port nobody listens on right now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitTCP waits until addr accepts connections, the process ends (exited
// is closed) or the timeout passes.
func waitTCP(addr string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("the process exited")
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after %s", addr, timeout)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// tail returns the last lines of a log file, for error messages.
func tail(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
