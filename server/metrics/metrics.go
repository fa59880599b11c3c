// Package metrics is Betaport's Prometheus metrics, made with
// client_golang on a registry of their own, served on a listener of their
// own (serve --metrics-addr) so the public port never exposes them.
//
// Labels are bounded: routes are the router's patterns ("GET
// /api/extensions/{id}"), never raw paths, and problems are their types.
package metrics

import (
	"database/sql"
	"net/http"
	"runtime"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The label values known in advance: each series exists, at 0, from the
// start, so a rate or an alert on it needs no first event.
const (
	WebhookDelivered = "delivered" // a 2xx answer
	WebhookFailed    = "failed"    // retried later
	WebhookGaveUp    = "gave_up"   // no attempt left

	LimiterSubmit   = "submit"
	LimiterSignIn   = "sign_in"
	LimiterFeedback = "feedback"

	SessionSignedIn     = "signed_in"
	SessionSignInFailed = "sign_in_failed"
	SessionSignedOut    = "signed_out"
	SessionTesterLink   = "tester_link"

	StepUploadURL = "upload_url"
	StepPut       = "put"
	StepSign      = "sign"
)

// Metrics are the service's instruments. A nil *Metrics records nothing,
// so code that records need not ask whether metrics are on.
type Metrics struct {
	registry *prometheus.Registry

	requests      *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	submits       *prometheus.CounterVec
	signDuration  prometheus.Histogram
	zipSize       prometheus.Histogram
	served        *prometheus.CounterVec
	updateChecks  prometheus.Counter
	putThroughput prometheus.Histogram
	blobErrors    prometheus.Counter
	sessions      *prometheus.CounterVec
	refusals      *prometheus.CounterVec
	webhooks      *prometheus.CounterVec
	webhookTime   prometheus.Histogram
	feedback      *prometheus.CounterVec
}

// New makes the instruments, with the build info of version.
func New(version string) *Metrics {
	m := &Metrics{registry: prometheus.NewRegistry()}
	f := func(c prometheus.Collector) { m.registry.MustRegister(c) }
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "betaport_http_requests_total",
		Help: "HTTP requests answered, by route pattern, method and status class (2xx…)."}, []string{"route", "method", "class"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "betaport_http_request_duration_seconds",
		Help: "Time to answer a request, by route pattern and method.", Buckets: prometheus.DefBuckets}, []string{"route", "method"})
	m.submits = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "betaport_submit_calls_total",
		Help: "Submit-flow calls by step (upload_url, put, sign) and outcome: ok, or the problem's short name (invalid_key, invalid_zip…)."}, []string{"step", "outcome"})
	m.signDuration = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "betaport_sign_duration_seconds",
		Help: "Time to validate, normalise, pack and publish a zip (call 3).", Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)})
	m.zipSize = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "betaport_zip_size_bytes",
		Help: "Size of the zips published.", Buckets: prometheus.ExponentialBuckets(4<<10, 4, 10)})
	m.served = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "betaport_served_bytes_total",
		Help: "Bytes served, by kind: zip, crx, wasm."}, []string{"kind"})
	m.updateChecks = prometheus.NewCounter(prometheus.CounterOpts{Name: "betaport_update_checks_total",
		Help: "Update checks answered to browsers."})
	m.putThroughput = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "betaport_upload_put_bytes_per_second",
		Help: "Throughput of the zip PUTs received (call 2 on file storage).", Buckets: prometheus.ExponentialBuckets(16<<10, 4, 10)})
	m.blobErrors = prometheus.NewCounter(prometheus.CounterOpts{Name: "betaport_blob_errors_total",
		Help: "Blob storage operations that failed."})
	m.sessions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "betaport_sessions_total",
		Help: "Session events: signed_in, sign_in_failed, signed_out, tester_link."}, []string{"event"})
	m.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "betaport_rate_limited_total",
		Help: "Requests refused by a rate limit, by limiter: submit, sign_in, feedback."}, []string{"limiter"})
	m.webhooks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "betaport_webhook_attempts_total",
		Help: "Webhook delivery attempts by outcome: delivered, failed (retried later), gave_up (no attempt left)."}, []string{"outcome"})
	m.webhookTime = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "betaport_webhook_attempt_duration_seconds",
		Help: "Time a receiver took to answer a webhook event (or to fail).", Buckets: prometheus.ExponentialBuckets(0.005, 2, 12)})
	m.feedback = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "betaport_feedback_reports_total",
		Help: "Testers' reports by source (builds_page, extension) and outcome: received, or the problem's short name (bad-request, too-large, too-many-requests…)."},
		[]string{"source", "outcome"})
	for _, src := range []string{FeedbackFromBuildsPage, FeedbackFromExtension} {
		m.feedback.WithLabelValues(src, "received")
	}
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "betaport_build_info",
		Help: "The build that runs: its id and the Go that built it (always 1)."}, []string{"version", "goversion"})
	build.WithLabelValues(version, runtime.Version()).Set(1)
	for _, o := range []string{WebhookDelivered, WebhookFailed, WebhookGaveUp} {
		m.webhooks.WithLabelValues(o)
	}
	for _, l := range []string{LimiterSubmit, LimiterSignIn, LimiterFeedback} {
		m.refusals.WithLabelValues(l)
	}
	for _, e := range []string{SessionSignedIn, SessionSignInFailed, SessionSignedOut, SessionTesterLink} {
		m.sessions.WithLabelValues(e)
	}
	for _, k := range []string{"zip", "crx", "wasm"} {
		m.served.WithLabelValues(k)
	}
	for _, step := range []string{StepUploadURL, StepPut, StepSign} {
		m.submits.WithLabelValues(step, "ok")
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.submits, m.signDuration, m.zipSize, m.served,
		m.updateChecks, m.putThroughput, m.blobErrors, m.sessions, m.refusals, m.webhooks, m.webhookTime, m.feedback, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		f(c)
	}
	return m
}

// WatchDB adds the database pool's statistics (open, in use, waits…).
func (m *Metrics) WatchDB(db *sql.DB) {
	if m != nil && db != nil {
		m.registry.MustRegister(collectors.NewDBStatsCollector(db, "betaport"))
	}
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// Request records one answered request.
func (m *Metrics) Request(route, method string, status int, seconds float64) {
	if m == nil {
		return
	}
	if route == "" {
		route = "unmatched"
	}
	// A client chooses the method: any other than HTTP's own is "other",
	// or each made-up one would be a new series.
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
	default:
		method = "other"
	}
	m.requests.WithLabelValues(route, method, statusClass(status)).Inc()
	m.latency.WithLabelValues(route, method).Observe(seconds)
}

func statusClass(status int) string {
	switch {
	case status < 200:
		return "1xx"
	case status < 300:
		return "2xx"
	case status < 400:
		return "3xx"
	case status < 500:
		return "4xx"
	}
	return "5xx"
}

// Submit records a submit-flow call: outcome is "ok" or a problem type,
// recorded as a short word ("/problems/invalid-key" is invalid_key).
func (m *Metrics) Submit(step, outcome string) {
	if m != nil {
		m.submits.WithLabelValues(step, outcomeWord(outcome)).Inc()
	}
}

// outcomeWord is a problem type's last path segment in snake case.
func outcomeWord(outcome string) string {
	outcome = outcome[strings.LastIndex(outcome, "/")+1:]
	return strings.ReplaceAll(outcome, "-", "_")
}

// Signed records a published zip: how long sign took and its size.
func (m *Metrics) Signed(seconds float64, size int64) {
	if m != nil {
		m.signDuration.Observe(seconds)
		m.zipSize.Observe(float64(size))
	}
}

// Served records bytes served of a kind (zip, crx, wasm).
func (m *Metrics) Served(kind string, n int64) {
	if m != nil && n > 0 {
		m.served.WithLabelValues(kind).Add(float64(n))
	}
}

// UpdateCheck records an update check answered.
func (m *Metrics) UpdateCheck() {
	if m != nil {
		m.updateChecks.Inc()
	}
}

// Put records a zip PUT received: its size and how long it took.
func (m *Metrics) Put(size int64, seconds float64) {
	if m != nil && seconds > 0 {
		m.putThroughput.Observe(float64(size) / seconds)
	}
}

// BlobError records a blob storage operation that failed.
func (m *Metrics) BlobError() {
	if m != nil {
		m.blobErrors.Inc()
	}
}

// Session records a session event.
func (m *Metrics) Session(event string) {
	if m != nil {
		m.sessions.WithLabelValues(event).Inc()
	}
}

// RateLimited records a request a limiter refused.
func (m *Metrics) RateLimited(limiter string) {
	if m != nil {
		m.refusals.WithLabelValues(limiter).Inc()
	}
}

// WebhookAttempt records one webhook delivery attempt: its outcome
// (delivered, failed, gave_up) and how long the receiver took.
func (m *Metrics) WebhookAttempt(outcome string, seconds float64) {
	if m != nil {
		m.webhooks.WithLabelValues(outcome).Inc()
		m.webhookTime.Observe(seconds)
	}
}

// Sources of testers' reports, as the feedback metric names them.
const (
	FeedbackFromBuildsPage = "builds_page"
	FeedbackFromExtension  = "extension"
)

// Feedback counts a tester's report from source: received, or refused with
// the problem's short name.
func (m *Metrics) Feedback(source, outcome string) {
	if m == nil {
		return
	}
	m.feedback.WithLabelValues(source, outcome).Inc()
}
