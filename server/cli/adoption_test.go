package cli_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/storetest"
)

// adoptionServe starts serve on a new data dir with the given flush
// interval and returns it with an extension's update URL and Chrome ID.
func adoptionServe(t *testing.T, data string, flush time.Duration) (m *cli.Main, ext *betaport.Extension, updateURL, chromeID string) {
	t.Helper()
	m = cli.NewMain()
	m.Config.Addr, m.Config.Data = "127.0.0.1:0", data
	if flush > 0 {
		m.Config.AdoptionFlush = flush
	}
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	team := storetest.MustTeam(t, m.Store, betaport.PlanProfessional)
	ext = storetest.MustExtension(t, m.Store, team, "Counted")
	u, err := m.Publish.Updates(context.Background(), ext)
	if err != nil {
		t.Fatal(err)
	}
	return m, ext, u.UpdateURL, u.ChromeID
}

func updateCheck(t *testing.T, updateURL, chromeID, version string) {
	t.Helper()
	x := url.Values{"id": {chromeID}, "v": {version}, "uc": {""}}
	resp, err := http.Get(updateURL + "?x=" + url.QueryEscape(x.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("update check answered %d", resp.StatusCode)
	}
}

func storedChecks(t *testing.T, s betaport.Store, extensionID int64) int64 {
	t.Helper()
	counts, err := s.FindAdoption(context.Background(), betaport.AdoptionFilter{ExtensionID: extensionID, Since: time.Now().Add(-48 * time.Hour), Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range counts {
		n += c.Checks
	}
	return n
}

// The checks counted in memory are written when serve stops: a restart
// loses none of them, though the hourly flush never came.
func TestAdoptionWrittenOnClose(t *testing.T) {
	data := t.TempDir()
	m, ext, updateURL, chromeID := adoptionServe(t, data, time.Hour)
	for range 3 {
		updateCheck(t, updateURL, chromeID, "1.0.0")
	}
	if n := storedChecks(t, m.Store, ext.ID); n != 0 {
		t.Fatalf("%d checks stored before any flush", n)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := cli.OpenStorage(context.Background(), m.Config)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n := storedChecks(t, st.Store, ext.ID); n != 3 {
		t.Fatalf("%d checks stored after close, want 3", n)
	}
}

// Without a read or a close, the counts reach the store on their own,
// every --adoption-flush.
func TestAdoptionFlushedPeriodically(t *testing.T) {
	m, ext, updateURL, chromeID := adoptionServe(t, t.TempDir(), 20*time.Millisecond)
	updateCheck(t, updateURL, chromeID, "1.0.0")
	updateCheck(t, updateURL, chromeID, "")
	for storedChecks(t, m.Store, ext.ID) != 1 {
		time.Sleep(10 * time.Millisecond) // until the test's deadline
	}
}

// --adoption-flush takes a duration; anything else is a usage error.
func TestAdoptionFlushFlag(t *testing.T) {
	if code, _, errOut := run(t, "serve", "--data", t.TempDir(), "--adoption-flush", "often"); code != cli.ExitUsage {
		t.Fatalf("--adoption-flush often: exit %d, %s", code, errOut)
	}
}
