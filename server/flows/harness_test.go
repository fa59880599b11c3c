package flows_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"os"
	"testing"

	"github.com/betaport/betaport/app/client"
	"github.com/betaport/betaport/app/model"
	"github.com/betaport/betaport/app/model/modeltest"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/demo"
	"github.com/betaport/betaport/server/demotest"
	"github.com/betaport/betaport/server/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Stop()
	demotest.Cleanup()
	os.Exit(code)
}

// service starts the real service on port 0 with a fresh data dir holding
// the small demo (built once per run, copied for each test): three
// extensions of Acme (Professional plan), bundles, testers, and admins
// whose passwords are in the result.
func service(t *testing.T) (*cli.Main, *demo.Result) {
	t.Helper()
	return serviceWith(t, nil)
}

// serviceWith is service, once configure (when not nil) has set what the
// test needs.
func serviceWith(t *testing.T, configure func(*cli.Main)) (*cli.Main, *demo.Result) {
	t.Helper()
	m := cli.NewMain()
	m.Config.Addr = "127.0.0.1:0"
	m.Config.Data = t.TempDir()
	d := demotest.Copy(t, m.Config.Data, 0)
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if configure != nil {
		configure(m)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("closing the service: %v", err)
		}
	})
	return m, d
}

// browserClient is a client of m with a cookie jar of its own: one
// person's browser.
func browserClient(t *testing.T, m *cli.Main) *client.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(m.URL())
	c.HTTP = &http.Client{Jar: jar}
	return c
}

// adminClient is a browser signed in as the demo's first admin (Acme).
func adminClient(t *testing.T, m *cli.Main, d *demo.Result) *client.Client {
	t.Helper()
	c := browserClient(t, m)
	if _, err := c.SignIn(context.Background(), d.Admins[0].Email, d.Admins[0].Password); err != nil {
		t.Fatalf("signing in as %s: %v", d.Admins[0].Email, err)
	}
	return c
}

// testerClient is a browser that opened the demo tester's personal link.
func testerClient(t *testing.T, m *cli.Main, d *demo.Result) *client.Client {
	t.Helper()
	c := browserClient(t, m)
	resp, err := c.HTTP.(*http.Client).Get(m.URL() + d.TesterLink)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		t.Fatalf("the tester link answered %d", resp.StatusCode)
	}
	return c
}

// page is one open page of the app: a UI goroutine, the person's browser
// (c), and a clock the test moves for the page's timers.
type page struct {
	*modeltest.Loop
	Env   model.Env
	Clock *modeltest.Clock
}

func openPage(t *testing.T, c *client.Client) *page {
	t.Helper()
	l := modeltest.NewLoop(t)
	clock := modeltest.NewClock()
	return &page{Loop: l, Env: l.Env(c, clock), Clock: clock}
}
