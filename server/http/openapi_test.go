package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/betaport/betaport/app/api"
	bphttp "github.com/betaport/betaport/server/http"
)

// The OpenAPI document is kept true by tests, not by hand: this one walks
// the router's routes and the document's operations, which must be the
// same; every API test validates the requests and answers it makes
// against the document (checkContract, in roundTrip).

var contract struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error
}

func loadContract(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	contract.once.Do(func() {
		for _, ct := range []string{api.ZipContentType, api.CRXContentType, "application/xml", "text/event-stream", "image/png", "image/jpeg"} {
			openapi3filter.RegisterBodyDecoder(ct, openapi3filter.FileBodyDecoder)
		}
		loader := openapi3.NewLoader()
		contract.doc, contract.err = loader.LoadFromData(bphttp.OpenAPI())
		if contract.err == nil {
			contract.err = contract.doc.Validate(context.Background())
		}
		if contract.err == nil {
			// The document's server is "/": relative to wherever it is
			// served. The tests' servers are on other ports each time, so
			// routes are matched by path alone.
			contract.doc.Servers = nil
			// Requests and answers are checked against a view of the
			// document that says 3.0: for 3.1 kin-openapi compiles a
			// JSON Schema 2020 validator anew for every value it checks,
			// a tenth of this package's CPU under -race. Its built-in
			// validator reads the keywords the document uses the same way
			// (TestContractKeywordsReadTheSameIn30 keeps it so), and
			// libopenapi-validator checks the document as 3.1
			// (TestIndependentValidatorFindsNoDifference).
			view := *contract.doc
			view.OpenAPI = "3.0.3"
			contract.router, contract.err = legacy.NewRouter(&view)
		}
	})
	if contract.err != nil {
		t.Fatalf("the OpenAPI document: %v", contract.err)
	}
	return contract.doc, contract.router
}

func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	doc, _ := loadContract(t)
	described := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			described[method+" "+path] = true
		}
	}
	routes := e.App.Routes()
	for _, rt := range routes {
		if !described[rt.Pattern] {
			t.Errorf("route %q is not in the OpenAPI document", rt.Pattern)
		}
		delete(described, rt.Pattern)
	}
	for op := range described {
		t.Errorf("the OpenAPI document describes %q, which is not a route", op)
	}
	t.Logf("the document describes %d operations", len(routes))

	// Every problem type the API answers with is listed.
	var listed []string
	for _, v := range doc.Components.Schemas["Problem"].Value.Properties["type"].Value.Enum {
		listed = append(listed, v.(string))
	}
	sources, _ := filepath.Glob(filepath.Join("..", "..", "app", "api", "*.go"))
	for _, f := range sources {
		b, _ := os.ReadFile(f)
		for _, typ := range regexp.MustCompile(`"(/problems/[a-z-]+)"`).FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(listed, typ[1]) {
				t.Errorf("problem type %s is not listed in the document", typ[1])
			}
		}
	}
	// It is served.
	resp, body := e.do(t, "GET", "/api/openapi.json", nil)
	if resp.StatusCode != 200 || !bytes.Equal(body, bphttp.OpenAPI()) {
		t.Fatalf("/api/openapi.json = %d (%d bytes)", resp.StatusCode, len(body))
	}
}

// contractPaths are the paths the document describes: the API, and the
// links browsers and Chromium's updater follow.
var contractPaths = regexp.MustCompile(`^/(api/|t/|update/|uploads/|cli/|healthz$|readyz$)`)

// checkContract validates one request the tests made, and its answer,
// against the document: a request the service accepted must be one the
// document describes; every answer must be (a problem for an error).
func checkContract(t testing.TB, req *http.Request, reqBody []byte, resp *http.Response, body []byte) {
	t.Helper()
	_, router := loadContract(t)
	for _, e := range contractErrors(router, req, reqBody, resp.StatusCode, resp.Header, body) {
		t.Error(e)
	}
}

func contractErrors(router routers.Router, req *http.Request, reqBody []byte, status int, header http.Header, body []byte) []string {
	if req.Method == http.MethodHead || !contractPaths.MatchString(req.URL.Path) {
		return nil
	}
	probe := req.Clone(context.Background())
	probe.Body = io.NopCloser(bytes.NewReader(reqBody))
	route, params, err := router.FindRoute(probe)
	if err != nil {
		return nil // a path or method no route has, on purpose: its 404 or 405 is checked by the test
	}
	var errs []string
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true}
	in := &openapi3filter.RequestValidationInput{Request: probe, PathParams: params, Route: route, Options: opts}
	if status < 300 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			errs = append(errs, fmt.Sprintf("%s %s was accepted but breaks the OpenAPI document: %v", req.Method, req.URL.Path, short(err)))
		}
	}
	errs = append(errs, undocumentedHeaders(route, req, status, header)...)
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header,
		Body: io.NopCloser(bytes.NewReader(body)), Options: opts}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		errs = append(errs, fmt.Sprintf("the answer %d to %s %s breaks the OpenAPI document: %v", status, req.Method, req.URL.Path, short(err)))
	}
	return errs
}

// meaningfulHeaders are the answer headers a client acts on: each one an
// answer carries must be documented for its operation and status (issue
// 28 found them sent but undocumented).
var meaningfulHeaders = []string{"ETag", "Retry-After", "Set-Cookie", "X-Request-Id", "Content-Range", "Allow", "Location", "Accept-Ranges"}

func undocumentedHeaders(route *routers.Route, req *http.Request, status int, header http.Header) []string {
	resp := route.Operation.Responses.Status(status)
	if resp == nil {
		resp = route.Operation.Responses.Default()
	}
	if resp == nil || resp.Value == nil {
		return nil // the status itself is checked by ValidateResponse
	}
	var errs []string
	for _, h := range meaningfulHeaders {
		if header.Get(h) == "" {
			continue
		}
		documented := false
		for name := range resp.Value.Headers {
			documented = documented || strings.EqualFold(name, h)
		}
		if !documented {
			errs = append(errs, fmt.Sprintf("the answer %d to %s %s sends %s, which the OpenAPI document does not describe", status, req.Method, route.Path, h))
		}
	}
	return errs
}

// The check itself: answers and requests that break the document are
// caught, so that a test passing says something.
func TestContractCheckCatchesBreaks(t *testing.T) {
	t.Parallel()
	_, router := loadContract(t)
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	get, _ := http.NewRequest("GET", "http://127.0.0.1/api/extensions/7", nil)
	for name, c := range map[string]struct {
		status int
		body   string
	}{
		"an id that is a string":      {200, `{"id": "seven", "teamId": 1, "name": "E", "createdAt": "2026-11-25T00:00:00Z"}`},
		"a required field missing":    {200, `{"id": 7, "teamId": 1, "createdAt": "2026-11-25T00:00:00Z"}`},
		"an error that is no problem": {404, `{"error": "not found"}`},
	} {
		if errs := contractErrors(router, get, nil, c.status, jsonHeader, []byte(c.body)); len(errs) == 0 {
			t.Errorf("%s: not caught", name)
		}
	}
	if errs := contractErrors(router, get, nil, 200, jsonHeader, []byte(`{"id": 7, "teamId": 1, "name": "E", "createdAt": "2026-11-25T00:00:00Z"}`)); len(errs) != 0 {
		t.Errorf("a good answer: %v", errs)
	}
	post, _ := http.NewRequest("POST", "http://127.0.0.1/api/extensions/7/keys", strings.NewReader(`{"name": "CI"}`))
	post.Header.Set("Content-Type", "application/json")
	if errs := contractErrors(router, post, []byte(`{"name": "CI"}`), 201, jsonHeader, []byte(`{}`)); len(errs) < 2 {
		t.Errorf("a request without its label, accepted, and an empty answer: %v", errs)
	}
}

func short(err error) string {
	s := err.Error()
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return strings.ReplaceAll(s, "\n", " ")
}

// TestContractKeywordsReadTheSameIn30: the contract check reads the
// document's schemas with kin-openapi's OpenAPI 3.0 validator (see
// loadContract). That is exact only while every schema keyword means the
// same in 3.0 and in 3.1 (JSON Schema 2020-12): this walks every schema of
// the document and refuses any other keyword, and a type given as a list.
func TestContractKeywordsReadTheSameIn30(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(bphttp.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	same := map[string]bool{"$ref": true, "type": true, "properties": true, "required": true, "additionalProperties": true,
		"items": true, "enum": true, "format": true, "pattern": true, "minimum": true, "maximum": true,
		"minLength": true, "maxLength": true, "minItems": true, "maxItems": true, "oneOf": true, "allOf": true, "anyOf": true,
		"default": true, "description": true, "title": true}
	var schemas int
	var schema func(where string, s any)
	schema = func(where string, s any) {
		m, ok := s.(map[string]any)
		if !ok {
			t.Errorf("%s: a schema that is not an object: %v", where, s)
			return
		}
		schemas++
		for k, v := range m {
			if !same[k] {
				t.Errorf("%s: keyword %q, which the 3.0 validator the contract check uses may read otherwise than 3.1: check it there, then add it here", where, k)
			}
			switch k {
			case "type":
				if _, ok := v.(string); !ok {
					t.Errorf("%s: type %v is not one name (a 3.1 list the 3.0 validator does not read)", where, v)
				}
			case "properties":
				for name, p := range v.(map[string]any) {
					schema(where+"."+name, p)
				}
			case "items", "additionalProperties":
				if _, isBool := v.(bool); !isBool {
					schema(where+"."+k, v)
				}
			case "oneOf", "allOf", "anyOf":
				for i, p := range v.([]any) {
					schema(fmt.Sprintf("%s.%s[%d]", where, k, i), p)
				}
			}
		}
	}
	var walk func(where string, x any)
	walk = func(where string, x any) {
		switch x := x.(type) {
		case map[string]any:
			for k, v := range x {
				switch {
				case k == "schema":
					schema(where, v)
				case k == "schemas" && where == "components":
					for name, s := range v.(map[string]any) {
						schema("#/components/schemas/"+name, s)
					}
				default:
					walk(strings.TrimPrefix(where+"/"+k, "/"), v)
				}
			}
		case []any:
			for i, v := range x {
				walk(fmt.Sprintf("%s[%d]", where, i), v)
			}
		}
	}
	walk("", doc)
	if schemas < 100 {
		t.Fatalf("found %d schemas in the document: the walk is not reading it", schemas)
	}
}
