package metrics_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/betaport/betaport/server/metrics"
)

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

// TestKnownLabelsStartAtZero: a fresh service already exposes every label
// value known in advance, at 0 (a rate or an alert on "gave_up" works
// before the first one), and a submit's outcome is a short word, not a
// problem URL.
func TestKnownLabelsStartAtZero(t *testing.T) {
	m := metrics.New("test")
	text := scrape(t, m)
	for _, series := range []string{
		`betaport_webhook_attempts_total{outcome="delivered"} 0`,
		`betaport_webhook_attempts_total{outcome="failed"} 0`,
		`betaport_webhook_attempts_total{outcome="gave_up"} 0`,
		`betaport_rate_limited_total{limiter="submit"} 0`,
		`betaport_rate_limited_total{limiter="sign_in"} 0`,
		`betaport_sessions_total{event="sign_in_failed"} 0`,
		`betaport_sessions_total{event="tester_link"} 0`,
		`betaport_served_bytes_total{kind="crx"} 0`,
		`betaport_submit_calls_total{outcome="ok",step="sign"} 0`,
	} {
		if !strings.Contains(text, series+"\n") {
			t.Errorf("a fresh scrape lacks %s", series)
		}
	}
	m.Submit(metrics.StepSign, "/problems/invalid-zip")
	if text := scrape(t, m); !strings.Contains(text, `betaport_submit_calls_total{outcome="invalid_zip",step="sign"} 1`) || strings.Contains(text, `outcome="/problems`) {
		t.Errorf("a refused sign is not counted under a short word:\n%s", grep(text, "betaport_submit_calls_total"))
	}
}

func grep(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
