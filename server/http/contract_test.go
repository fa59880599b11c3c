package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	bphttp "github.com/betaport/betaport/server/http"
)

// postRaw sends body as it is, JSON-typed.
func (e *env) postRaw(t *testing.T, path, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", e.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return e.roundTrip(t, req)
}

// TestWrongMethodAnswers405: every API path answers a method it does not
// take with 405, an Allow header that lists the ones it does, as a
// problem; never with the app's "nothing lives here" page or a 404.
func TestWrongMethodAnswers405(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	params := regexp.MustCompile(`\{[^}]+\}`)
	allowed := map[string][]string{} // concrete path → methods
	for _, rt := range e.App.Routes() {
		method, pattern, _ := strings.Cut(rt.Pattern, " ")
		path := params.ReplaceAllString(pattern, "1")
		if !strings.HasPrefix(path, "/api/") && !strings.HasPrefix(path, api.UpdatePrefix) && !strings.HasPrefix(path, api.UploadPrefix) {
			continue
		}
		allowed[path] = append(allowed[path], method)
	}
	if len(allowed) < 15 {
		t.Fatalf("only %d API paths in the route table", len(allowed))
	}
	for path, methods := range allowed {
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			if slices.Contains(methods, m) || (m == "GET" && strings.HasPrefix(path, api.UploadPrefix)) {
				continue
			}
			if m != "GET" && strings.HasPrefix(path, api.UploadPrefix) {
				continue // upload URLs answer their own 405 (TestUploadPut)
			}
			req, _ := http.NewRequest(m, e.URL+path, nil)
			resp, body := e.roundTrip(t, req)
			p := wantProblem(t, resp, body, http.StatusMethodNotAllowed, api.ProblemMethodNotAllowed)
			allow := resp.Header.Get("Allow")
			for _, want := range methods {
				if !strings.Contains(allow, want) {
					t.Errorf("%s %s: Allow %q lacks %s", m, path, allow, want)
				}
			}
			if strings.Contains(allow, m) {
				t.Errorf("%s %s: Allow %q lists the refused method", m, path, allow)
			}
			if !strings.Contains(p.Detail, methods[0]) {
				t.Errorf("%s %s: detail %q does not say which method to use", m, path, p.Detail)
			}
		}
	}
	// The case a pipeline hits: GET on the POST-only call 1.
	resp, body := e.do(t, "GET", api.PathSubmitUpload, nil)
	wantProblem(t, resp, body, http.StatusMethodNotAllowed, api.ProblemMethodNotAllowed)
	if resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET %s: Allow %q, want POST", api.PathSubmitUpload, resp.Header.Get("Allow"))
	}
	// An API path that does not exist is a 404 problem, not a page.
	resp, body = e.do(t, "GET", "/api/no-such-thing", nil)
	wantProblem(t, resp, body, http.StatusNotFound, api.ProblemNotFound)
}

// TestKeyObjectIsStrict: the key object at calls 1 and 3 takes exactly
// extensionId and apiKey: unknown fields and trailing data are refused
// with a 400 that names them, and nothing is created.
func TestKeyObjectIsStrict(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	good, _ := json.Marshal(p.key)
	obj := strings.TrimSuffix(string(good), "}")
	tests := []struct {
		name, body, param, detail string
	}{
		{"unknown field", obj + `,"apikey":"x"}`, "apikey", `unknown field "apikey"`},
		{"extra field beside the key", obj + `,"plan":"professional"}`, "plan", `unknown field "plan"`},
		{"trailing object", string(good) + `{}`, "", "more after its JSON object"},
		{"trailing garbage", string(good) + `garbage`, "", "more after its JSON object"},
		{"two objects", string(good) + "\n" + string(good), "", "more after its JSON object"},
		{"whole key file", `{"service":` + string(good) + `,"name":"Tab Tamer"}`, "service", `"service"`},
		{"not an object", `["` + p.key.APIKey + `"]`, "", "must be a JSON object"},
		{"id of the wrong type", `{"extensionId":{"id":1},"apiKey":"k"}`, "extensionId", "extensionId is missing"},
	}
	for _, path := range []string{api.PathSubmitUpload, api.PathSubmitSign} {
		for _, tt := range tests {
			t.Run(path+"/"+tt.name, func(t *testing.T) {
				resp, body := e.postRaw(t, path, tt.body)
				pr := wantProblem(t, resp, body, http.StatusBadRequest, api.ProblemBadRequest)
				if pr.Param != tt.param || !strings.Contains(pr.Detail, tt.detail) {
					t.Errorf("problem param %q detail %q, want param %q and %q", pr.Param, pr.Detail, tt.param, tt.detail)
				}
			})
		}
	}
	if _, err := e.DB.LatestUpload(context.Background(), p.ext.ID); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Errorf("a refused call 1 created an upload (%v)", err)
	}
	// Whitespace after the object is not data.
	if resp, body := e.postRaw(t, api.PathSubmitUpload, string(good)+" \n"); resp.StatusCode != 200 {
		t.Fatalf("key with a trailing newline = %d %s", resp.StatusCode, body)
	}
}

// TestDetailsNeverShowGoTypes: a body of the wrong JSON shape is explained
// in JSON's words on every JSON call, not Go's.
func TestDetailsNeverShowGoTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bodies := []string{`[]`, `"text"`, `42`, `true`, `{"email": 5, "password": []}`, `{"apiKey": {}}`, `{`, ``, `{"a":1}}`}
	goish := regexp.MustCompile(`map\[|json\.|\[\]|Go value|Go struct|struct \{|interface|\*api\.|api\.[A-Z]|unmarshal`)
	for _, path := range []string{"/api/session", api.PathSubmitUpload, api.PathSubmitSign} {
		for _, b := range bodies {
			resp, body := e.postRaw(t, path, b)
			if resp.StatusCode < 400 || resp.Header.Get("Content-Type") != api.ProblemContentType {
				t.Errorf("POST %s %q = %d %s", path, b, resp.StatusCode, body)
				continue
			}
			var p api.Problem
			json.Unmarshal(body, &p)
			if goish.MatchString(p.Detail) || p.Detail == "" {
				t.Errorf("POST %s %q: detail %q", path, b, p.Detail)
			}
		}
	}
}

// TestNotAZipAtPutListsProblems: the PUT's 422 for a body that is not a
// zip carries the same problems list as sign's 422. (On S3 the PUT goes to
// the bucket, and sign answers not_a_zip in its list.)
func TestNotAZipAtPutListsProblems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	u := p.askURL(t)
	resp, body := p.put(t, u.URL, api.ZipContentType, []byte("%PDF-1.7 not a zip at all"))
	pr := wantProblem(t, resp, body, http.StatusUnprocessableEntity, api.ProblemNotAZip)
	if len(pr.Problems) != 1 || pr.Problems[0].Code != "not_a_zip" || pr.Problems[0].Message == "" {
		t.Fatalf("problems %+v, want one not_a_zip", pr.Problems)
	}
}

// TestSignRefusedAtVersionCeiling: once 65535.65535.65535.65535 was
// served, a sign is refused with a 422 that says why and what to do, and
// testers keep what they had.
func TestSignRefusedAtVersionCeiling(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	top := p.submitAny(t, validZip(t, "65535.65535.65535.65535"))
	if top.Version != "65535.65535.65535.65535" {
		t.Fatalf("served %q", top.Version)
	}
	for _, v := range []string{"1.0", "65535.65535.65535.65535"} {
		got := p.signRejected(t, validZip(t, v))
		if !slices.Equal(got, []string{betaport.ZipProblemVersionExhausted + " manifest.json"}) {
			t.Fatalf("version %s: problems %q", v, got)
		}
	}
	resp, body := p.sign(t)
	pr := wantProblem(t, resp, body, http.StatusUnprocessableEntity, api.ProblemInvalidZip)
	if msg := pr.Problems[0].Message; !strings.Contains(msg, "65535.65535.65535.65535") || !strings.Contains(msg, "new extension") {
		t.Errorf("message %q does not say why and what to do", msg)
	}
}

// TestAbortedRequestIsNotAServerError: an error caused by the client
// leaving (its request's context canceled) is logged as 499 at info
// level, never as an internal error.
func TestAbortedRequestIsNotAServerError(t *testing.T) {
	t.Parallel()
	var logged bytes.Buffer
	s := &bphttp.Server{Logger: slog.New(slog.NewTextHandler(&logged, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequestWithContext(ctx, "POST", "/api/session", nil)
	rec := httptest.NewRecorder()
	s.Error(rec, req, fmt.Errorf("finding the user: %w", context.Canceled))
	if rec.Code != bphttp.StatusClientClosedRequest || strings.Contains(logged.String(), "level=ERROR") {
		t.Errorf("aborted request answered %d, logged %q", rec.Code, logged.String())
	}
	// The same error while the client still waits is ours.
	s.Error(rec, httptest.NewRequest("POST", "/api/session", nil), context.Canceled)
	if !strings.Contains(logged.String(), "level=ERROR") {
		t.Errorf("a cancellation the client did not cause was not logged as an error")
	}
}
