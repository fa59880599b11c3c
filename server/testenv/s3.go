package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob" // registers s3://
)

// VersityGW is the gateway version the tests are written against, and
// InstallVersityGW the command that installs it.
const (
	VersityGW        = "v1.8.0"
	InstallVersityGW = "go install github.com/versity/versitygw/cmd/versitygw@" + VersityGW
)

// gateway is a versitygw process serving buckets from a temp dir.
type gateway struct {
	dir      string
	endpoint string
	cmd      *exec.Cmd
	exited   chan struct{}
}

// versitygwBin finds versitygw: on PATH, else where go install puts it.
func versitygwBin() (string, error) {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	var dirs []string
	if v := os.Getenv("GOBIN"); v != "" {
		dirs = append(dirs, v)
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			gopath = strings.TrimSpace(string(out))
		}
	}
	for _, p := range filepath.SplitList(gopath) {
		dirs = append(dirs, filepath.Join(p, "bin"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	dirs = slices.Compact(dirs)
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("testenv: versitygw is not on PATH nor in %s. Install it with:\n\t%s\n"+
		"(make test does this), or set %s=1 to skip the PostgreSQL + S3 runs", strings.Join(dirs, ", "), InstallVersityGW, SkipVar)
}

func startGateway() (*gateway, error) {
	bin, err := versitygwBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "betaport-s3-")
	if err != nil {
		return nil, err
	}
	root, meta := filepath.Join(dir, "root"), filepath.Join(dir, "meta")
	for _, d := range []string{root, meta} {
		if err := os.Mkdir(d, 0o755); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	logPath := filepath.Join(dir, "versitygw.log")
	g := &gateway{dir: dir}
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		g.endpoint = "http://" + addr
		logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		// Object metadata (content type, checksums) goes to a sidecar
		// directory, so the temp dir's file system needs no xattrs.
		g.cmd = exec.Command(bin, "--access", AccessKey, "--secret", SecretKey, "--region", Region,
			"--port", addr, "--quiet", "posix", "--sidecar", meta, root)
		g.cmd.Stdout, g.cmd.Stderr = logf, logf
		g.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		err = g.cmd.Start()
		logf.Close()
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("testenv: starting %s: %w", bin, err)
		}
		g.exited = make(chan struct{})
		go func(cmd *exec.Cmd, exited chan struct{}) { cmd.Wait(); close(exited) }(g.cmd, g.exited)
		err = waitTCP(addr, g.exited, 30*time.Second)
		if err == nil {
			return g, nil
		}
		g.stopProcess()
		if attempt == 2 {
			msg := tail(logPath, 20)
			os.RemoveAll(dir)
			return nil, fmt.Errorf("testenv: versitygw did not start: %v\n%s", err, msg)
		}
	}
}

func (g *gateway) stopProcess() {
	g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.exited:
	case <-time.After(5 * time.Second):
		g.cmd.Process.Kill()
		<-g.exited
	}
}

func (g *gateway) stop() {
	g.stopProcess()
	os.RemoveAll(g.dir)
}

// createBucket creates bucket on the gateway at endpoint, with the AWS
// client Betaport itself uses.
func createBucket(ctx context.Context, endpoint, bucket string) error {
	b, err := blob.OpenBucket(ctx, BlobURL(endpoint, bucket))
	if err != nil {
		return err
	}
	defer b.Close()
	var client *s3.Client
	if !b.As(&client) {
		return fmt.Errorf("not an S3 bucket")
	}
	_, err = client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	return err
}
