package browser_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/demo"
	"github.com/betaport/betaport/server/testenv"
)

// startServiceOnS3 is startService with the bundles on S3: a new bucket on
// the test's versitygw (loopback, a port of its own), SQLite for the rest.
// The service's request log is returned too (every request, at Info), for
// tests that check which requests the service answered and how.
func startServiceOnS3(t *testing.T) (*cli.Main, *demo.Result, *requestLog) {
	t.Helper()
	ctx := context.Background()
	m := cli.NewMain()
	m.Config.Addr = "127.0.0.1:0"
	m.Config.Data = t.TempDir()
	m.Config.Blob = testenv.BucketURL(t)
	log := &requestLog{}
	m.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("closing the service: %v", err)
		}
	})
	d, err := demo.Load(ctx, m.Store, m.Blobs, demo.Small)
	if err != nil {
		t.Fatal(err)
	}
	return m, d, log
}

// requestLog keeps a service's log lines.
type requestLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *requestLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the log lines that contain every one of parts.
func (l *requestLog) lines(parts ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for line := range strings.Lines(l.b.String()) {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}
