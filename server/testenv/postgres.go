package testenv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"
)

// postgres is a throwaway cluster: its data directory, socket and log live
// in one temp dir, removed when it stops.
type postgres struct {
	dir    string
	port   int
	cmd    *exec.Cmd
	exited chan struct{}
}

const pgSuperuser = "betaport"

func (p *postgres) url(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User(pgSuperuser), Host: fmt.Sprintf("127.0.0.1:%d", p.port),
		Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// pgBin finds a PostgreSQL program: on PATH, else the newest
// /usr/lib/postgresql/*/bin (Debian's layout).
func pgBin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	sort.Slice(matches, func(i, j int) bool { return pgVersion(matches[i]) > pgVersion(matches[j]) })
	if len(matches) > 0 {
		return matches[0], nil
	}
	return "", fmt.Errorf("testenv: PostgreSQL's %s is not on PATH nor in /usr/lib/postgresql/*/bin. "+
		"Install PostgreSQL (sudo apt-get update && sudo apt-get install -y postgresql; make test does it when run as root), "+
		"or set %s=1 to skip the PostgreSQL + S3 runs", name, SkipVar)
}

func pgVersion(path string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return n
}

// pgCredential is who runs PostgreSQL: the postgres user when we are root
// (PostgreSQL refuses to run as root), else ourselves.
func pgCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("testenv: running as root, and PostgreSQL refuses to run as root; there is no postgres user to run it as "+
			"(create one with: useradd --system postgres), or run the tests as another user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func startPostgres() (*postgres, error) {
	initdb, err := pgBin("initdb")
	if err != nil {
		return nil, err
	}
	server := filepath.Join(filepath.Dir(initdb), "postgres")
	if _, err := os.Stat(server); err != nil {
		if server, err = pgBin("postgres"); err != nil {
			return nil, err
		}
	}
	cred, err := pgCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "betaport-pg-")
	if err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	p := &postgres{dir: dir}
	logPath := filepath.Join(dir, "postgres.log")
	run := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		return cmd
	}
	data := filepath.Join(dir, "data")
	init := run(initdb, "-D", data, "-U", pgSuperuser, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	if out, err := init.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("testenv: initdb: %v\n%s", err, out)
	}
	for attempt := 0; ; attempt++ {
		if p.port, err = freePort(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		// Durability is worth nothing here: the cluster is thrown away.
		p.cmd = run(server, "-D", data, "-p", strconv.Itoa(p.port),
			"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+dir,
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
			"-c", "max_connections=400", "-c", "shared_buffers=32MB", "-c", "max_parallel_workers_per_gather=0",
			"-c", "log_min_messages=warning")
		p.cmd.Stdout, p.cmd.Stderr = logf, logf
		// If this process dies without stopping it, the cluster stops too.
		p.cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
		err = p.cmd.Start()
		logf.Close()
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("testenv: starting postgres: %w", err)
		}
		p.exited = make(chan struct{})
		go func(cmd *exec.Cmd, exited chan struct{}) { cmd.Wait(); close(exited) }(p.cmd, p.exited)
		err = p.waitReady(30 * time.Second)
		if err == nil {
			return p, nil
		}
		p.kill()
		if attempt == 2 {
			msg := tail(logPath, 20)
			os.RemoveAll(dir)
			return nil, fmt.Errorf("testenv: postgres did not start: %v\n%s", err, msg)
		}
	}
}

// waitReady waits until the cluster answers a query.
func (p *postgres) waitReady(timeout time.Duration) error {
	db, err := sql.Open("pgx", p.url("postgres")+"&connect_timeout=2")
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-p.exited:
			return errors.New("postgres exited")
		default:
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *postgres) kill() {
	p.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// stop shuts the cluster down (fast shutdown) and removes its directory.
func (p *postgres) stop() {
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
	os.RemoveAll(p.dir)
}
