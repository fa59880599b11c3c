package cli_test

// Black-box tests of the operator features: metrics, request ids, /healthz,
// the OpenAPI document, backup and restore, and the version. They drive the
// service only as an operator and a client would: the betaport command
// (cli.Run, cli.Main) and HTTP.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/betaport/betaport/server/cli"
)

const bboPassword = "a long password"

// bboEnv is a data dir with a Professional team, an extension and an admin,
// all made with the betaport command.
type bboEnv struct {
	data     string
	extID    string
	email    string
	password string
}

func bboSetup(t *testing.T, data string) bboEnv {
	t.Helper()
	code, out, errOut := run(t, "team", "create", "--data", data, "--name", "Acme", "--plan", "professional", "--seats", "5")
	if code != 0 {
		t.Fatalf("team create: exit %d: %s", code, errOut)
	}
	var team struct{ ID int64 }
	if err := json.Unmarshal([]byte(out), &team); err != nil || team.ID == 0 {
		t.Fatalf("team create printed %q (%v)", out, err)
	}
	code, out, errOut = run(t, "extension", "create", "--data", data, "--team", strconv.FormatInt(team.ID, 10), "--name", "Tab Tamer")
	if code != 0 {
		t.Fatalf("extension create: exit %d: %s", code, errOut)
	}
	var ext struct{ ID int64 }
	if err := json.Unmarshal([]byte(out), &ext); err != nil || ext.ID == 0 {
		t.Fatalf("extension create printed %q (%v)", out, err)
	}
	email := "ada@example.com"
	code, out, errOut = run(t, "user", "create", "--data", data, "--email", email, "--team", strconv.FormatInt(team.ID, 10))
	if code != 0 {
		t.Fatalf("user create: exit %d: %s", code, errOut)
	}
	password := bboFindPassword(out + "\n" + errOut)
	if password == "" {
		t.Fatalf("user create printed no password: stdout %q, stderr %q", out, errOut)
	}
	return bboEnv{data: data, extID: strconv.FormatInt(ext.ID, 10), email: email, password: password}
}

// bboFindPassword finds the generated password in user create's output:
// a "password" field of its JSON, wherever it is.
func bboFindPassword(s string) string {
	dec := json.NewDecoder(strings.NewReader(s))
	for {
		var v any
		if err := dec.Decode(&v); err != nil {
			break
		}
		if p := bboPasswordIn(v); p != "" {
			return p
		}
	}
	if m := regexp.MustCompile(`(?i)password"?\s*[:=]\s*"?([^"\s,}]+)`).FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

func bboPasswordIn(v any) string {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && strings.Contains(strings.ToLower(k), "password") && s != "" {
				return s
			}
		}
		for _, x := range v {
			if p := bboPasswordIn(x); p != "" {
				return p
			}
		}
	case []any:
		for _, x := range v {
			if p := bboPasswordIn(x); p != "" {
				return p
			}
		}
	}
	return ""
}

func bboStart(t *testing.T, data, metricsAddr string) *cli.Main {
	t.Helper()
	m := cli.NewMain()
	m.Config.Addr, m.Config.Data, m.Config.MetricsAddr = "127.0.0.1:0", data, metricsAddr
	m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := m.Run(context.Background()); err != nil {
		t.Fatalf("serve: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func bboSignIn(t *testing.T, base string, env bboEnv) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	body, _ := json.Marshal(map[string]string{"email": env.email, "password": env.password})
	resp, err := c.Post(base+"/api/session", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("sign in: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("sign in at %s: %d %s", base, resp.StatusCode, b)
	}
	return c
}

func bboKey(t *testing.T, env bboEnv, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "key.json")
	if code, _, errOut := run(t, "key", "create", "--extension", env.extID, "--label", "CI", "--out", path, "--data", env.data); code != 0 {
		t.Fatalf("key create: exit %d: %s", code, errOut)
	}
	return path
}

func bboSubmit(t *testing.T, base, key, dir, version string) {
	t.Helper()
	zip := writeZip(t, dir, "v"+version+".zip", map[string]string{
		"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "` + version + `"}`,
		"bg.js":         strings.Repeat("// build "+version+"\n", 500),
	})
	if code, _, errOut := run(t, "submit", "--quiet", "--base-url", base, "--key", key, zip); code != 0 {
		t.Fatalf("submit %s: exit %d: %s", version, code, errOut)
	}
}

func bboDo(t *testing.T, c *http.Client, method, url string, body io.Reader, contentType string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func bboScrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("scrape %s = %d", url, resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the scrape does not parse: %v", err)
	}
	return families
}

// bboScrapeUntil scrapes until ok holds, for up to 3 s: a request's
// counters may move just after its answer reached the client.
func bboScrapeUntil(t *testing.T, url string, ok func(map[string]*dto.MetricFamily) bool) map[string]*dto.MetricFamily {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		f := bboScrape(t, url)
		if ok(f) || time.Now().After(deadline) {
			return f
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func bboLabel(m *dto.Metric, name string) (string, bool) {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue(), true
		}
	}
	return "", false
}

// bboSum adds up the samples of name whose labels include labels.
func bboSum(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	f := families[name]
	if f == nil {
		return 0
	}
	var sum float64
metrics:
	for _, m := range f.Metric {
		for k, v := range labels {
			if got, ok := bboLabel(m, k); !ok || got != v {
				continue metrics
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		case m.Untyped != nil:
			sum += m.Untyped.GetValue()
		}
	}
	return sum
}

func bboDistinct(families map[string]*dto.MetricFamily, name, label string) map[string]bool {
	seen := map[string]bool{}
	if f := families[name]; f != nil {
		for _, m := range f.Metric {
			if v, ok := bboLabel(m, label); ok {
				seen[v] = true
			}
		}
	}
	return seen
}

func bboRandom(t *testing.T) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// Metrics on their own listener: a submit, a refused submit call and a list
// page move the counters, by route pattern and problem type; the public
// port has no /metrics; hostile traffic (many ids, random paths, random
// methods) does not grow the label values.
func TestBlackBoxOpsMetrics(t *testing.T) {
	t.Parallel()
	env := bboSetup(t, t.TempDir())
	m := bboStart(t, env.data, "127.0.0.1:0")
	base := m.URL()
	murl := m.MetricsURL()
	if !strings.HasSuffix(murl, "/metrics") {
		t.Fatalf("MetricsURL = %q, want http://ADDR/metrics", murl)
	}
	if strings.TrimSuffix(murl, "/metrics") == strings.TrimSuffix(base, "/") {
		t.Fatalf("metrics are served on the public listener %s", base)
	}

	// The public port has no /metrics.
	resp, body := bboDo(t, http.DefaultClient, "GET", base+"/metrics", nil, "")
	if resp.StatusCode != 404 || bytes.Contains(body, []byte("betaport_build_info")) || bytes.Contains(body, []byte("go_goroutines")) {
		t.Fatalf("the public port answers /metrics: %d %.200s", resp.StatusCode, body)
	}

	work := t.TempDir()
	key := bboKey(t, env, work)
	bboSubmit(t, base, key, work, "1.0.0")

	// A refused call: a wrong key, on call 1 and on call 3.
	wrong := `{"extensionId": "` + env.extID + `", "apiKey": "not-the-key-` + bboRandom(t) + `"}`
	for _, path := range []string{"/api/submit/upload", "/api/submit/sign"} {
		resp, body := bboDo(t, http.DefaultClient, "POST", base+path, strings.NewReader(wrong), "application/json")
		var p struct{ Type string }
		json.Unmarshal(body, &p)
		if resp.StatusCode != 401 || p.Type != "/problems/invalid-key" {
			t.Fatalf("POST %s with a wrong key = %d %s, want 401 /problems/invalid-key", path, resp.StatusCode, body)
		}
	}

	c := bboSignIn(t, base, env)
	if resp, body := bboDo(t, c, "GET", base+"/api/extensions/"+env.extID+"/bundles?page=0", nil, ""); resp.StatusCode != 200 {
		t.Fatalf("bundles page = %d %s", resp.StatusCode, body)
	}

	wants := []struct {
		name   string
		labels map[string]string
	}{
		{"betaport_http_requests_total", map[string]string{"route": "GET /api/extensions/{id}/bundles", "method": "GET", "class": "2xx"}},
		{"betaport_http_requests_total", map[string]string{"route": "POST /api/session", "method": "POST", "class": "2xx"}},
		{"betaport_http_requests_total", map[string]string{"route": "POST /api/submit/upload", "method": "POST", "class": "4xx"}},
		{"betaport_submit_calls_total", map[string]string{"step": "upload_url", "outcome": "ok"}},
		{"betaport_submit_calls_total", map[string]string{"step": "put", "outcome": "ok"}},
		{"betaport_submit_calls_total", map[string]string{"step": "sign", "outcome": "ok"}},
		{"betaport_submit_calls_total", map[string]string{"step": "upload_url", "outcome": "invalid_key"}},
		{"betaport_submit_calls_total", map[string]string{"step": "sign", "outcome": "invalid_key"}},
	}
	before := bboScrapeUntil(t, murl, func(f map[string]*dto.MetricFamily) bool {
		for _, want := range wants {
			if bboSum(f, want.name, want.labels) < 1 {
				return false
			}
		}
		return true
	})
	for _, want := range wants {
		if got := bboSum(before, want.name, want.labels); got < 1 {
			t.Errorf("%s%v = %v, want at least 1", want.name, want.labels, got)
		}
	}
	// The wrong key counts once per refused call, not as ok.
	if got := bboSum(before, "betaport_submit_calls_total", map[string]string{"step": "upload_url", "outcome": "ok"}); got != 1 {
		t.Errorf("upload_url ok = %v after one submit and one refused call, want 1", got)
	}

	// The build that runs: one series, value 1, the Go that built it, the
	// version /healthz names.
	bi := before["betaport_build_info"]
	if bi == nil || len(bi.Metric) != 1 {
		t.Fatalf("betaport_build_info: %v", bi)
	}
	_, hb := bboDo(t, http.DefaultClient, "GET", base+"/healthz", nil, "")
	var health struct{ Version, Go string }
	json.Unmarshal(hb, &health)
	if v, _ := bboLabel(bi.Metric[0], "version"); v == "" || v != health.Version {
		t.Errorf("betaport_build_info version %q, /healthz version %q", v, health.Version)
	}
	if g, _ := bboLabel(bi.Metric[0], "goversion"); g != runtime.Version() {
		t.Errorf("betaport_build_info goversion %q, want %q", g, runtime.Version())
	}
	if got := bboSum(before, "betaport_build_info", nil); got != 1 {
		t.Errorf("betaport_build_info = %v, want 1", got)
	}

	// Hostile traffic: 50 extension ids, 50 random paths (API and not), 20
	// random methods.
	routesBefore := bboDistinct(before, "betaport_http_requests_total", "route")
	methodsBefore := bboDistinct(before, "betaport_http_requests_total", "method")
	bundles4xx := bboSum(before, "betaport_http_requests_total", map[string]string{"route": "GET /api/extensions/{id}/bundles", "class": "4xx"})
	var tokens []string
	anon := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i := 0; i < 50; i++ {
		bboDo(t, anon, "GET", fmt.Sprintf("%s/api/extensions/%d/bundles?page=0", base, 987650+i), nil, "")
	}
	for i := 0; i < 50; i++ {
		tok := "zz" + bboRandom(t)
		tokens = append(tokens, tok)
		paths := []string{"/" + tok, "/api/" + tok, "/api/extensions/" + tok + "/x", "/update/" + tok, "/web/" + tok}
		bboDo(t, anon, "GET", base+paths[i%len(paths)], nil, "")
	}
	for i := 0; i < 20; i++ {
		tok := "ZZ" + strings.ToUpper(bboRandom(t))
		tokens = append(tokens, tok)
		bboDo(t, anon, tok, base+"/api/session", nil, "")
	}
	total := bboSum(before, "betaport_http_requests_total", nil)
	after := bboScrapeUntil(t, murl, func(f map[string]*dto.MetricFamily) bool {
		return bboSum(f, "betaport_http_requests_total", nil) >= total+120
	})

	if got := bboSum(after, "betaport_http_requests_total", map[string]string{"route": "GET /api/extensions/{id}/bundles", "class": "4xx"}); got < bundles4xx+50 {
		t.Errorf("GET /api/extensions/{id}/bundles 4xx: %v before, %v after 50 refused requests", bundles4xx, got)
	}
	routesAfter := bboDistinct(after, "betaport_http_requests_total", "route")
	methodsAfter := bboDistinct(after, "betaport_http_requests_total", "method")
	if len(routesAfter) > len(routesBefore)+5 {
		t.Errorf("70 hostile requests added %d route label values (%d → %d): %v", len(routesAfter)-len(routesBefore), len(routesBefore), len(routesAfter), bboKeys(routesAfter))
	}
	if len(methodsAfter) > len(methodsBefore)+2 || len(methodsAfter) > 12 {
		t.Errorf("20 random methods added %d method label values: %v", len(methodsAfter)-len(methodsBefore), bboKeys(methodsAfter))
	}
	// No id or random text of a path or method is a label value anywhere.
	idInLabel := regexp.MustCompile(`98765\d`)
	for name, f := range after {
		leaked := map[string][]string{} // label name → values taken from requests
		for _, mt := range f.Metric {
			for _, l := range mt.Label {
				v := l.GetValue()
				if idInLabel.MatchString(v) {
					leaked[l.GetName()] = append(leaked[l.GetName()], v)
					continue
				}
				for _, tok := range tokens {
					if strings.Contains(strings.ToLower(v), strings.ToLower(tok)) {
						leaked[l.GetName()] = append(leaked[l.GetName()], v)
						break
					}
				}
			}
		}
		for label, values := range leaked {
			t.Errorf("%s: %d series whose %s is an id or random text a client sent, e.g. %q", name, len(values), label, values[0])
		}
	}
}

func bboKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Every answer carries an X-Request-Id, different for each request, and
// every problem+json body names it as its instance.
func TestBlackBoxOpsRequestIDs(t *testing.T) {
	t.Parallel()
	env := bboSetup(t, t.TempDir())
	m := bboStart(t, env.data, "")
	base := m.URL()
	admin := bboSignIn(t, base, env)
	anon := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	ext := "/api/extensions/" + env.extID

	cases := []struct {
		c           *http.Client
		method, url string
		body        string
		problem     bool // the answer must be a problem
	}{
		{anon, "GET", "/healthz", "", false},
		{anon, "GET", "/readyz", "", false},
		{anon, "GET", "/api/openapi.json", "", false},
		{admin, "GET", ext + "/bundles?page=0", "", false},
		{admin, "GET", ext + "/keys", "", false},
		{anon, "GET", ext + "/bundles?page=0", "", true},                                  // not signed in
		{admin, "GET", "/api/extensions/999999/bundles?page=0", "", true},                 // no such extension
		{admin, "GET", ext + "/bundles/77/download", "", true},                            // no such bundle
		{anon, "GET", "/api/no-such-route", "", true},                                     // no route
		{anon, "POST", "/api/submit/upload", "{not json", true},                           // malformed body
		{anon, "POST", "/api/submit/upload", `{"extensionId": "1", "apiKey": "x"}`, true}, // wrong key
		{anon, "POST", "/api/session", `{"email": "ada@example.com", "password": "wrong"}`, true},
		{anon, "PUT", "/uploads/not-an-upload", "PK\x03\x04", true},
		{anon, "DELETE", "/healthz", "", false},
		{anon, "GET", "/update/" + env.extID + "/not-the-token", "", false},
	}
	seen := map[string]string{}
	for _, tc := range cases {
		var body io.Reader
		ct := ""
		if tc.body != "" {
			body, ct = strings.NewReader(tc.body), "application/json"
			if tc.method == "PUT" {
				ct = "application/zip"
			}
		}
		resp, b := bboDo(t, tc.c, tc.method, base+tc.url, body, ct)
		what := tc.method + " " + tc.url
		id := resp.Header.Get("X-Request-Id")
		if strings.TrimSpace(id) == "" {
			t.Errorf("%s (%d): no X-Request-Id", what, resp.StatusCode)
			continue
		}
		if prev, dup := seen[id]; dup {
			t.Errorf("%s and %s share the request id %q", prev, what, id)
		}
		seen[id] = what
		isProblem := strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json")
		if tc.problem && (resp.StatusCode < 400 || !isProblem) {
			t.Errorf("%s = %d %s, want a problem+json error", what, resp.StatusCode, resp.Header.Get("Content-Type"))
			continue
		}
		if resp.StatusCode >= 400 && strings.HasPrefix(tc.url, "/api/") && !isProblem {
			t.Errorf("%s = %d with Content-Type %q: an API error that is not a problem", what, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if isProblem {
			var p struct{ Type, Instance string }
			if err := json.Unmarshal(b, &p); err != nil {
				t.Errorf("%s: problem body %q: %v", what, b, err)
				continue
			}
			if want := "urn:betaport:request:" + id; p.Instance != want {
				t.Errorf("%s (%d): instance %q, want %q (X-Request-Id %q)", what, resp.StatusCode, p.Instance, want, id)
			}
			if !strings.HasPrefix(p.Type, "/problems/") {
				t.Errorf("%s: problem type %q", what, p.Type)
			}
		}
	}
	// A client's own X-Request-Id, however odd, does not break the rule:
	// the problem names the id the answer carries.
	for _, sent := range []string{strings.Repeat("x", 2000), `a "quoted" id, with spaces`, "urn:betaport:request:forged"} {
		req, _ := http.NewRequest("GET", base+"/api/no-such-route", nil)
		req.Header.Set("X-Request-Id", sent)
		resp, err := anon.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		id := resp.Header.Get("X-Request-Id")
		var p struct{ Instance string }
		json.Unmarshal(b, &p)
		if id == "" || p.Instance != "urn:betaport:request:"+id {
			t.Errorf("with X-Request-Id %.40q sent: answered id %.60q, instance %.80q", sent, id, p.Instance)
		}
	}
	// The same request twice gets two ids.
	r1, _ := bboDo(t, anon, "GET", base+"/healthz", nil, "")
	r2, _ := bboDo(t, anon, "GET", base+"/healthz", nil, "")
	if a, b := r1.Header.Get("X-Request-Id"), r2.Header.Get("X-Request-Id"); a == "" || a == b {
		t.Errorf("two requests, ids %q and %q", a, b)
	}
}

// /healthz says which build runs, as betaport --version does.
func TestBlackBoxOpsHealthzAndVersion(t *testing.T) {
	t.Parallel()
	m := bboStart(t, t.TempDir(), "")
	resp, b := bboDo(t, http.DefaultClient, "GET", m.URL()+"/healthz", nil, "")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("/healthz = %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var h map[string]any
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatalf("/healthz %s: %v", b, err)
	}
	version, _ := h["version"].(string)
	goVersion, _ := h["go"].(string)
	if version == "" || goVersion != runtime.Version() || h["status"] == nil {
		t.Fatalf("/healthz = %s, want status, a version and go %q", b, runtime.Version())
	}

	var outs []string
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, errOut := run(t, args...)
		if code != 0 || errOut != "" || !strings.HasPrefix(out, "betaport ") || !strings.Contains(out, runtime.Version()) || !strings.Contains(out, version) {
			t.Errorf("betaport %v: exit %d, %q, %q; want betaport, the build id %q and %s", args, code, out, errOut, version, runtime.Version())
		}
		outs = append(outs, out)
	}
	if outs[0] != outs[1] {
		t.Errorf("--version %q and version %q differ", outs[0], outs[1])
	}
}

// GET /api/openapi.json is an OpenAPI 3.1 document naming every route the
// README describes, and the problem types it documents.
func TestBlackBoxOpsOpenAPI(t *testing.T) {
	t.Parallel()
	m := bboStart(t, t.TempDir(), "")
	resp, b := bboDo(t, http.DefaultClient, "GET", m.URL()+"/api/openapi.json", nil, "")
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
		t.Fatalf("/api/openapi.json = %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Info    struct{ Title, Version string }       `json:"info"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Info.Title == "" || doc.Info.Version == "" {
		t.Fatalf("openapi %q, info %+v", doc.OpenAPI, doc.Info)
	}
	param := regexp.MustCompile(`\{[^}]*\}`)
	ops := map[string]bool{}
	count := 0
	for p, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				ops[strings.ToUpper(method)+" "+param.ReplaceAllString(p, "{}")] = true
				count++
			}
		}
	}
	// Every route the README names.
	for _, want := range []string{
		"GET /healthz",
		"GET /readyz",
		"GET /api/openapi.json",
		"POST /api/session",
		"POST /api/submit/upload",
		"POST /api/submit/sign",
		"PUT /uploads/{}",
		"GET /api/extensions/{}/keys",
		"POST /api/extensions/{}/keys",
		"DELETE /api/extensions/{}/keys/{}",
		"GET /api/extensions/{}/audit",
		"GET /api/extensions/{}/adoption",
		"GET /api/extensions/{}/bundles",
		"GET /api/extensions/{}/bundles/{}/download",
		"GET /api/extensions/{}/bundles/{}/crx",
		"POST /api/extensions/{}/updates/token",
		"GET /api/extensions/{}/testers",
		"POST /api/extensions/{}/testers/{}/restore",
		"GET /update/{}/{}",
		"GET /update/{}/{}/crx/{}",
		"GET /api/extensions/{}/policy/{}",
	} {
		if !ops[want] {
			t.Errorf("the document lacks %s", want)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	said := regexp.MustCompile(`\((\d+) operations\)`).FindSubmatch(readme)
	if said == nil || string(said[1]) != strconv.Itoa(count) {
		t.Errorf("the document has %d operations; the README says %s", count, said)
	}
	for _, typ := range []string{"/problems/invalid-key", "/problems/not-found", "/problems/tester-revoked", "/problems/access-ended"} {
		if !bytes.Contains(b, []byte(typ)) {
			t.Errorf("the document does not name the problem type %s", typ)
		}
	}
}

// backup while serving, restore into an empty dir: the archive is 0600;
// restore refuses a non-empty dir and a file that is not a backup, leaving
// nothing a later restore trips on; the restored service serves the same
// zips, byte for byte, and the same keys still submit.
func TestBlackBoxOpsBackupRestore(t *testing.T) {
	t.Parallel()
	env := bboSetup(t, filepath.Join(t.TempDir(), "data"))
	a := bboStart(t, env.data, "")
	work := t.TempDir()
	key := bboKey(t, env, work)
	bboSubmit(t, a.URL(), key, work, "1.0.0")
	bboSubmit(t, a.URL(), key, work, "1.1.0")

	ca := bboSignIn(t, a.URL(), env)
	download := func(c *http.Client, base string, n int) []byte {
		t.Helper()
		resp, b := bboDo(t, c, "GET", fmt.Sprintf("%s/api/extensions/%s/bundles/%d/download", base, env.extID, n), nil, "")
		if resp.StatusCode != 200 || len(b) == 0 {
			t.Fatalf("download #%d from %s = %d %.200s", n, base, resp.StatusCode, b)
		}
		return b
	}
	orig := [][]byte{nil, download(ca, a.URL(), 1), download(ca, a.URL(), 2)}
	if bytes.Equal(orig[1], orig[2]) {
		t.Fatal("bundles 1 and 2 download the same bytes")
	}

	// The backup, while a serves.
	backupDir := t.TempDir()
	backup := filepath.Join(backupDir, "betaport.backup")
	if code, out, errOut := run(t, "backup", "--data", env.data, "--out", backup); code != 0 {
		t.Fatalf("backup: exit %d: %s %s", code, out, errOut)
	}
	fi, err := os.Stat(backup)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("the backup's mode is %v, want 0600", fi.Mode().Perm())
	}
	// a still serves after the backup.
	download(ca, a.URL(), 2)

	// A non-empty dir is refused, and left as it was.
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "keep.txt"), []byte("mine"), 0o644)
	if code, _, errOut := run(t, "restore", "--from", backup, "--data", full); code == 0 {
		t.Errorf("restore into a non-empty dir: exit 0 (%s)", errOut)
	} else if !strings.Contains(errOut, "not empty") {
		t.Errorf("restore into a non-empty dir: exit %d, %q; want it to say the dir is not empty", code, errOut)
	}
	if entries, _ := os.ReadDir(full); len(entries) != 1 {
		t.Errorf("a refused restore changed the non-empty dir: %v", entries)
	}
	// A missing file is refused.
	if code, _, _ := run(t, "restore", "--from", filepath.Join(backupDir, "missing"), "--data", filepath.Join(t.TempDir(), "x")); code == 0 {
		t.Error("restore from a missing file: exit 0")
	}

	// Files that are not backups: each refused, and a later restore into the
	// same dir works.
	whole, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("hello, not a tar\n"))
	zw.Close()
	var tgz bytes.Buffer
	zw = gzip.NewWriter(&tgz)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "notes.txt", Mode: 0o644, Size: 5})
	tw.Write([]byte("hello"))
	tw.Close()
	zw.Close()
	garbage := []struct {
		name   string
		bytes  []byte
		saysIt bool // must say "not a betaport backup"
	}{
		{"text", []byte("this is not a backup at all\n"), true},
		{"gzip of text", gz.Bytes(), true},
		{"tar.gz of another file", tgz.Bytes(), true},
		{"the backup cut in half", whole[:len(whole)/2], false},
		{"the backup without its last 64 bytes", whole[:len(whole)-64], false},
	}
	for _, g := range garbage {
		file := filepath.Join(t.TempDir(), "garbage")
		os.WriteFile(file, g.bytes, 0o600)
		dir := filepath.Join(t.TempDir(), "restored")
		code, out, errOut := run(t, "restore", "--from", file, "--data", dir)
		if code == 0 {
			t.Errorf("restore of %s: exit 0 (%s %s)", g.name, out, errOut)
			continue
		}
		t.Logf("restore of %s: exit %d, %q", g.name, code, strings.TrimSpace(errOut))
		if g.saysIt && !strings.Contains(errOut, "not a betaport backup") {
			t.Errorf("restore of %s: exit %d, stderr %q; want it to say not a betaport backup", g.name, code, errOut)
		}
		// What a refused restore leaves must not stop the next one.
		if code, _, errOut := run(t, "restore", "--from", backup, "--data", dir); code != 0 {
			entries, _ := os.ReadDir(dir)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("after a refused restore of %s, restoring the real backup into the same dir: exit %d, %q (the dir holds %v)", g.name, code, errOut, names)
		}
	}

	// The restore, into a dir that does not exist yet.
	restored := filepath.Join(t.TempDir(), "restored")
	if code, _, errOut := run(t, "restore", "--from", backup, "--data", restored); code != 0 {
		t.Fatalf("restore: exit %d: %s", code, errOut)
	}
	a.Close()
	b := bboStart(t, restored, "")
	cb := bboSignIn(t, b.URL(), env)
	for n := 1; n <= 2; n++ {
		if got := download(cb, b.URL(), n); !bytes.Equal(got, orig[n]) {
			t.Errorf("bundle #%d: the restored service serves %d bytes, the original %d, not the same", n, len(got), len(orig[n]))
		}
	}
	// The restored bundles list pages the same two bundles.
	resp, lb := bboDo(t, cb, "GET", b.URL()+"/api/extensions/"+env.extID+"/bundles?page=0", nil, "")
	if resp.StatusCode != 200 {
		t.Fatalf("restored bundles page = %d %s", resp.StatusCode, lb)
	}
	for _, n := range []string{`"number":1`, `"number":2`} {
		if !bytes.Contains(bytes.ReplaceAll(lb, []byte(" "), nil), []byte(n)) {
			t.Errorf("the restored list lacks %s: %s", n, lb)
		}
	}
	// The key made before the backup publishes to the restored service, as
	// bundle 3.
	bboSubmit(t, b.URL(), key, work, "1.2.0")
	download(cb, b.URL(), 3)
}
