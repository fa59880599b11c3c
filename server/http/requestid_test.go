package http_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	bphttp "github.com/betaport/betaport/server/http"
	"github.com/betaport/betaport/server/storetest"
)

// Every answer carries a request id; a problem names it as its instance,
// and the request's one log line has it with the route pattern (never an
// id from the path as the route), the status, the bytes and the duration:
// a person's error report finds its line.
func TestRequestIDInAnswersProblemsAndLogs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var logged bytes.Buffer
	s := &bphttp.Server{Store: e.DB, Blobs: e.Blobs, Logger: slog.New(slog.NewJSONHandler(&logged, nil)),
		Secret: []byte(credential.NewToken()), SigningKeys: testKeyring}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Tab Tamer")

	resp, err := http.Get(ts.URL + api.ExtensionPath(ext.ID)) // not signed in: a problem
	if err != nil {
		t.Fatal(err)
	}
	var p api.Problem
	json.NewDecoder(resp.Body).Decode(&p)
	resp.Body.Close()
	id := resp.Header.Get(bphttp.RequestIDHeader)
	if len(id) != 16 || p.Instance != bphttp.RequestInstance(id) {
		t.Fatalf("request id %q, problem instance %q", id, p.Instance)
	}
	second, _ := http.Get(ts.URL + api.PathHealth)
	second.Body.Close()
	if other := second.Header.Get(bphttp.RequestIDHeader); other == "" || other == id {
		t.Fatalf("the next request's id is %q", other)
	}

	var line struct {
		Msg, Method, Route, Path, RequestID string
		Status                              int
		Bytes                               int64
		Duration                            int64
	}
	for _, l := range strings.Split(logged.String(), "\n") {
		if strings.Contains(l, id) {
			json.Unmarshal([]byte(strings.ReplaceAll(l, `"request_id"`, `"requestid"`)), &line)
		}
	}
	if line.Msg != "request" || line.Route != "GET /api/extensions/{id}" || line.Status != 401 || line.Bytes == 0 || line.RequestID != id {
		t.Fatalf("log line of the request = %+v\n%s", line, logged.String())
	}
}

// /healthz says which build answers, and the Go that built it.
func TestHealthSaysTheBuild(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	resp, body := e.do(t, "GET", api.PathHealth, nil)
	var h api.Health
	if json.Unmarshal(body, &h); resp.StatusCode != 200 || h.Version != bphttp.BuildID() || h.Version == "" || h.Go != runtime.Version() {
		t.Fatalf("/healthz = %d %s", resp.StatusCode, body)
	}
}

// A service run without its browser app (serve --no-ui) answers the API,
// and its pages with a problem that says why, rather than pages whose app
// never starts.
func TestNoUIServesTheAPIAlone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := &bphttp.Server{Store: e.DB, Blobs: e.Blobs, Logger: testLogger(t), Secret: []byte(credential.NewToken()), SigningKeys: testKeyring, NoUI: true}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	resp, err := http.Get(ts.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	var p api.Problem
	json.NewDecoder(resp.Body).Decode(&p)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(p.Detail, "--no-ui") {
		t.Fatalf("a page without the app = %d %+v", resp.StatusCode, p)
	}
	if resp, err := http.Get(ts.URL + api.PathHealth); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the API without the app: %v %v", resp, err)
	}
}

// withoutInstance is a problem body without its instance: each answer
// names its own request, and two answers that must look alike differ only
// there.
func withoutInstance(body []byte) string {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return string(body)
	}
	delete(m, "instance")
	b, _ := json.Marshal(m)
	return string(b)
}
