package http_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/routers"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"

	"github.com/betaport/betaport/app/betaport"
	bphttp "github.com/betaport/betaport/server/http"
)

// Every API test checks its answers against the document with
// kin-openapi, the library the document is also tested with. A client
// author reads the document with other tools, so this test puts a proxy
// built on an independent validator, libopenapi-validator, in front of
// the service, as an API gateway would, and tours every operation
// through it: the access walk (every route as every kind of person) and
// a whole submit. The proxy must find no answer that differs from the
// document, and no request the service accepted that the document does
// not describe (issue 28).

// validatingProxy forwards to the service and validates each exchange.
type validatingProxy struct {
	check  validator.Validator
	router routers.Router // kin-openapi's, only to name the operation
	proxy  *httputil.ReverseProxy

	mu       sync.Mutex
	answered map[string]bool // "METHOD /path/{template}" of each operation that answered
	findings []string
}

type originalRequest struct{}

func newValidatingProxy(t *testing.T, target string) *validatingProxy {
	t.Helper()
	doc, err := libopenapi.NewDocument(bphttp.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	check, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("libopenapi-validator cannot read the document: %v", errs)
	}
	if ok, errs := check.ValidateDocument(); !ok {
		t.Fatalf("libopenapi-validator finds the document itself invalid: %v", errs)
	}
	to, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	_, router := loadContract(t)
	p := &validatingProxy{check: check, router: router, answered: map[string]bool{}}
	p.proxy = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(to)
			r.Out.Host = r.In.Host // the links the service makes name the proxy
		},
		ModifyResponse: p.validate,
	}
	return p
}

// ServeHTTP keeps a copy of the request as the client sent it (the
// forwarded one's body is spent by the time the answer arrives).
func (p *validatingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	original := r.Clone(r.Context())
	original.Body = io.NopCloser(bytes.NewReader(body))
	r.Body = io.NopCloser(bytes.NewReader(body))
	p.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), originalRequest{}, original)))
}

func (p *validatingProxy) validate(resp *http.Response) error {
	req := resp.Request.Context().Value(originalRequest{}).(*http.Request)
	if !contractPaths.MatchString(req.URL.Path) || req.Method == http.MethodHead {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	checked := *resp
	checked.Body = io.NopCloser(bytes.NewReader(body))

	route, _, err := p.router.FindRoute(req)
	if err != nil {
		return nil // a path no operation has, on purpose: its test checks the 404
	}
	var ok bool
	var errs []*verrors.ValidationError
	if resp.StatusCode < 300 {
		// A request the service took must be one the document describes;
		// one it refused was refused on purpose.
		ok, errs = p.check.ValidateHttpRequestResponse(req, &checked)
	} else {
		ok, errs = p.check.ValidateHttpResponse(req, &checked)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answered[route.Method+" "+route.Path] = true
	if !ok {
		for _, e := range errs {
			p.findings = append(p.findings, fmt.Sprintf("%s %s → %d: %s", req.Method, req.URL.Path, resp.StatusCode, libopenapiFinding(e)))
		}
	}
	return nil
}

func libopenapiFinding(e *verrors.ValidationError) string {
	s := e.Message + ": " + e.Reason
	for _, f := range e.SchemaValidationErrors {
		s += fmt.Sprintf(" [%s at %s]", f.Reason, f.FieldPath)
	}
	return s
}

func TestIndependentValidatorFindsNoDifference(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newValidatingProxy(t, e.URL)
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	// Everything the tests send, and every link the service makes (upload
	// and update URLs), now goes through the proxy.
	e.URL = front.URL
	e.App.BaseURL = front.URL
	e.App.Publish.BaseURL = front.URL

	walkEveryRoute(t, e, asPeople)
	pipe := newPipeline(t, e, betaport.PlanProfessional)
	b := pipe.submitAny(t, validZip(t, "2.0.0"))
	if b.Version != "2.0.0" {
		t.Fatalf("the submit through the proxy published %+v", b)
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.findings) > 0 {
		t.Errorf("libopenapi-validator finds %d differences from the document:\n%s", len(p.findings), strings.Join(p.findings, "\n"))
	}
	doc, _ := loadContract(t)
	var missed []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if !p.answered[method+" "+path] {
				missed = append(missed, method+" "+path)
			}
		}
	}
	slices.Sort(missed)
	if len(missed) > 0 {
		t.Errorf("the tour never reached %d operations: %v", len(missed), missed)
	}
}

// The proxy itself: in front of a service that breaks the document, it
// says so, so that the tour finding nothing says something.
func TestValidatingProxyCatchesBreaks(t *testing.T) {
	t.Parallel()
	answers := map[string]struct {
		status int
		body   string
	}{
		"/api/extensions/1": {200, `{"id": "seven", "teamId": 1, "name": "E", "createdAt": "2026-11-25T00:00:00Z"}`},
		"/api/extensions/2": {200, `{"id": 7, "teamId": 1, "createdAt": "2026-11-25T00:00:00Z"}`},
		"/api/extensions/3": {404, `{"error": "not found"}`},
		"/api/extensions/4": {418, `{"type": "about:blank", "title": "Teapot", "status": 418}`},
		"/api/extensions/5": {200, `{"id": 5, "teamId": 1, "name": "E", "createdAt": "2026-11-25T00:00:00Z"}`},
	}
	breaking := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := answers[r.URL.Path]
		ct := "application/json"
		if a.status >= 400 {
			ct = "application/problem+json"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(breaking.Close)
	p := newValidatingProxy(t, breaking.URL)
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	for path := range answers {
		req, _ := http.NewRequest("GET", front.URL+path, nil)
		req.AddCookie(&http.Cookie{Name: "betaport_session", Value: "a session"})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for path := range answers {
		caught := slices.ContainsFunc(p.findings, func(f string) bool { return strings.Contains(f, path+" ") })
		if good := path == "/api/extensions/5"; caught == good {
			t.Errorf("%s: caught %v, want %v (findings: %v)", path, caught, !good, p.findings)
		}
	}
}
