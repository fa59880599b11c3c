package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/storetest"
	"github.com/betaport/betaport/server/webhook"
)

// serve --metrics-addr serves Prometheus metrics on a listener of their
// own: after a submit and a list page, a scrape (read with Prometheus' own
// text parser) shows the counters moved, by route pattern, never by raw
// path. The public port has no /metrics.
func TestMetricsAfterASubmitAndAListPage(t *testing.T) {
	m := cli.NewMain()
	m.Config.Addr, m.Config.Data, m.Config.MetricsAddr = "127.0.0.1:0", t.TempDir(), "127.0.0.1:0"
	m.Config.WebhookAllowPrivate = true // the receivers below are on loopback
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	team := storetest.MustTeam(t, m.Store, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, m.Store, team, "Tab Tamer")
	if err := m.Store.CreateUser(ctx, &betaport.User{TeamID: team.ID, Email: "ada@example.com"}, credential.HashPassword("a long password")); err != nil {
		t.Fatal(err)
	}

	// Two webhooks: one receiver takes the event, the other fails (500).
	received := make(chan int, 10)
	for _, status := range []int{http.StatusNoContent, http.StatusInternalServerError} {
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			received <- status
		}))
		defer receiver.Close()
		if err := m.Store.CreateWebhook(ctx, &betaport.Webhook{ExtensionID: ext.ID, URL: receiver.URL, Secret: "whsec_test", CreatedBy: "ada@example.com"}, webhook.Sealer(m.Publish.SigningKeys)); err != nil {
			t.Fatal(err)
		}
	}

	// A submit, with the command line.
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "key.json")
	if code, _, errOut := run(t, "key", "create", "--label", "CI", "--data", m.Config.Data, "--extension", strconv.FormatInt(ext.ID, 10), "--out", keyPath); code != 0 {
		t.Fatalf("key create: %s", errOut)
	}
	zipPath := writeZip(t, dir, "good.zip", map[string]string{"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "1.0.0"}`})
	if code, _, errOut := run(t, "submit", "--quiet", "--base-url", m.URL(), "--key", keyPath, zipPath); code != 0 {
		t.Fatalf("submit: %s", errOut)
	}
	// A list page, signed in.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	body, _ := json.Marshal(api.SignIn{Email: "ada@example.com", Password: "a long password"})
	if resp, err := c.Post(m.URL()+api.PathSession, "application/json", bytes.NewReader(body)); err != nil || resp.StatusCode != 200 {
		t.Fatalf("sign in: %v %v", resp, err)
	}
	if resp, err := c.Get(m.URL() + api.BundlesPath(ext.ID) + "?page=0"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("bundles page: %v %v", resp, err)
	}
	if resp, err := http.Get(m.URL() + "/metrics"); err != nil || resp.StatusCode != 404 {
		t.Fatalf("the public port answers /metrics: %v %v", resp, err)
	}

	for range 2 {
		select {
		case <-received:
		case <-time.After(20 * time.Second):
			t.Fatal("the publish's webhook events never reached both receivers")
		}
	}
	scrape := func() map[string]*dto.MetricFamily {
		t.Helper()
		resp, err := http.Get(m.MetricsURL())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(resp.Body)
		if err != nil {
			t.Fatalf("the scrape does not parse: %v", err)
		}
		return families
	}
	families := scrape()
	value := func(name string, labels map[string]string) float64 {
		t.Helper()
		f := families[name]
		if f == nil {
			t.Fatalf("no metric %s", name)
		}
		var sum float64
	metrics:
		for _, mt := range f.Metric {
			for k, v := range labels {
				if !hasLabel(mt, k, v) {
					continue metrics
				}
			}
			switch {
			case mt.Counter != nil:
				sum += mt.Counter.GetValue()
			case mt.Gauge != nil:
				sum += mt.Gauge.GetValue()
			case mt.Histogram != nil:
				sum += float64(mt.Histogram.GetSampleCount())
			}
		}
		return sum
	}
	// The worker counts an attempt once the receiver has answered.
	for deadline := time.Now().Add(10 * time.Second); families["betaport_webhook_attempt_duration_seconds"].GetMetric()[0].GetHistogram().GetSampleCount() < 2 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		families = scrape()
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"betaport_webhook_attempts_total", map[string]string{"outcome": "delivered"}, 1},
		{"betaport_webhook_attempts_total", map[string]string{"outcome": "failed"}, 1},
		{"betaport_webhook_attempt_duration_seconds", nil, 2},
		{"betaport_http_requests_total", map[string]string{"route": "GET /api/extensions/{id}/bundles", "method": "GET", "class": "2xx"}, 1},
		{"betaport_http_requests_total", map[string]string{"route": "POST /api/session", "class": "2xx"}, 1},
		{"betaport_submit_calls_total", map[string]string{"step": "upload_url", "outcome": "ok"}, 1},
		{"betaport_submit_calls_total", map[string]string{"step": "put", "outcome": "ok"}, 1},
		{"betaport_submit_calls_total", map[string]string{"step": "sign", "outcome": "ok"}, 1},
		{"betaport_sign_duration_seconds", nil, 1},
		{"betaport_zip_size_bytes", nil, 1},
		{"betaport_upload_put_bytes_per_second", nil, 1},
		{"betaport_sessions_total", map[string]string{"event": "signed_in"}, 1},
		{"betaport_http_request_duration_seconds", map[string]string{"route": "GET /api/extensions/{id}/bundles"}, 1},
		{"betaport_build_info", nil, 1},
	} {
		if got := value(c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if families["go_goroutines"] == nil || families["go_sql_max_open_connections"] == nil {
		t.Error("the Go runtime's and the database pool's metrics are missing")
	}
	// Routes are patterns: no id of a path becomes a label value.
	rawPath := regexp.MustCompile(`/\d+(/|$)`)
	for _, mt := range families["betaport_http_requests_total"].Metric {
		for _, l := range mt.Label {
			if l.GetName() == "route" && rawPath.MatchString(l.GetValue()) {
				t.Errorf("route label %q is a raw path", l.GetValue())
			}
		}
	}
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue() == value
		}
	}
	return false
}
