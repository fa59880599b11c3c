package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/storetest"
	"github.com/betaport/betaport/server/webhook"
)

// respellings are other spellings of the number v (canonical digits), as
// they appear in a URL: a sign, leading zeros, spaces, a tab, a NUL, a
// fraction, an overflow and nothing at all. None of them is v.
func respellings(v string) []string {
	return []string{"+" + v, "%2B" + v, "0" + v, "00" + v, "-" + v, "%20" + v, v + "%20", "%09" + v, v + "%00",
		v + ".0", "9223372036854775808", "99999999999999999999", ""}
}

// idPattern is how the OpenAPI document spells an id in a path.
const idPattern = "^[1-9][0-9]*$"

// integerParams are the parameters of an operation the OpenAPI document
// says are integers, in the path or the query.
func integerParams(t *testing.T, doc *openapi3.T, pattern string) (path, query []*openapi3.Parameter) {
	t.Helper()
	method, tmpl, _ := strings.Cut(pattern, " ")
	item := doc.Paths.Find(tmpl)
	if item == nil || item.GetOperation(method) == nil {
		t.Fatalf("route %q is not in the OpenAPI document", pattern)
	}
	for _, ref := range append(item.Parameters, item.GetOperation(method).Parameters...) {
		p := ref.Value
		if p.Schema == nil || p.Schema.Value == nil || !p.Schema.Value.Type.Is("integer") {
			continue
		}
		switch p.In {
		case openapi3.ParameterInPath:
			path = append(path, p)
		case openapi3.ParameterInQuery:
			query = append(query, p)
		}
	}
	return path, query
}

// TestIDsHaveOneSpelling walks every route (as TestAccess does, so a new
// route cannot miss it) and spells each of its integer path parameters
// (the OpenAPI document's) otherwise: "+7", "07", " 7", "" … name no
// resource, so each gets the 404 problem of an id that does not exist,
// and nothing changes (issue 29: DELETE …/testers/03 revoked tester 3).
// Integer query parameters spelled otherwise get a 400 naming them.
func TestIDsHaveOneSpelling(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	doc, _ := loadContract(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	ext := p.ext
	admin := e.adminOf(t, mustTeam(t, e, ext))
	tester, _ := e.testerOf(t, ext, betaport.TesterActive)
	key := storetest.MustKey(t, e.DB, ext.ID, "To keep", "to-keep-secret")
	token := &betaport.AccessToken{ExtensionID: ext.ID, Name: "To keep", Scopes: []string{"read"}, CreatedBy: "admin@example.com"}
	if err := e.DB.CreateAccessToken(ctx, token, "to-keep-token-hash"); err != nil {
		t.Fatal(err)
	}
	hook := &betaport.Webhook{ExtensionID: ext.ID, URL: "https://hooks.example.com/a", Secret: "whsec_a", CreatedBy: "admin@example.com"}
	if err := e.DB.CreateWebhook(ctx, hook, webhook.Sealer(testKeyring)); err != nil {
		t.Fatal(err)
	}
	e.publish(t, ext, "1.0.0")
	e.publish(t, ext, "1.1.0") // bundle 1 can be rolled back to
	upload := p.askURL(t)
	uploadURL, _ := url.Parse(upload.URL)
	updateToken := func() string {
		u := e.updates(t, ext, admin).UpdateURL
		return u[strings.LastIndex(u, "/")+1:]
	}
	resp, body := e.send(t, "POST", api.ExtensionPath(ext.ID)+"/feedback", e.cookie(t, betaport.Session{TesterID: tester.ID}),
		reportForm(t, "A report", 0, pngShot(t, 4, 4)))
	var report betaport.Feedback
	if resp.StatusCode != 201 || json.Unmarshal(body, &report) != nil {
		t.Fatalf("a report = %d %s", resp.StatusCode, body)
	}
	before := idsState(t, e, ext, admin)

	// The value each parameter takes in a request that would succeed.
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	valid := map[string]func() string{
		"id":         func() string { return itoa(ext.ID) },
		"testerId":   func() string { return itoa(tester.ID) },
		"keyId":      func() string { return itoa(key.ID) },
		"webhookId":  func() string { return itoa(hook.ID) },
		"number":     func() string { return "1" },
		"upload":     func() string { return itoa(upload.UploadID) },
		"token":      updateToken, // the update URL's: the one route with a token and an integer
		"system":     func() string { return "linux" },
		"channel":    func() string { return "beta" },
		"feedbackId": func() string { return itoa(report.ID) },
		"action":     func() string { return "halt" },
		"tokenId":    func() string { return itoa(token.ID) },
	}
	bodies := map[string]func() any{
		"POST /api/extensions/{id}/testers":  func() any { return api.Invite{Email: uniqueEmail("respelled"), Name: "R"} },
		"POST /api/extensions/{id}/keys":     func() any { return api.NewKey{Label: "Respelled"} },
		"POST /api/extensions/{id}/webhooks": func() any { return api.NewWebhook{URL: "https://hooks.example.com/respelled"} },
		"POST /api/extensions/{id}/tokens":   func() any { return api.NewToken{Name: "Respelled", Scopes: []string{"read"}} },
	}
	param := regexp.MustCompile(`\{([^}]+)\}`)
	fill := func(tmpl, name, spelled string) string {
		return param.ReplaceAllStringFunc(tmpl, func(m string) string {
			n := m[1 : len(m)-1]
			if n == name {
				return spelled
			}
			v, ok := valid[n]
			if !ok {
				t.Fatalf("%s: no valid value for {%s}: give it one here", tmpl, n)
			}
			return v()
		})
	}
	send := func(pattern, path string) (*http.Response, []byte) {
		method, _, _ := strings.Cut(pattern, " ")
		if pattern == "PUT "+api.UploadPrefix+"{upload}" { // the upload URL: its signature, and a zip
			req, err := http.NewRequest(method, e.URL+path+"?"+uploadURL.RawQuery, bytes.NewReader(validZip(t, "2.0.0")))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", api.ZipContentType)
			return e.roundTrip(t, req)
		}
		var body any
		if b := bodies[pattern]; b != nil {
			body = b()
		}
		return e.send(t, method, path, admin, body)
	}

	pathCases, queryCases := 0, 0
	for _, rt := range e.App.Routes() {
		_, tmpl, _ := strings.Cut(rt.Pattern, " ")
		pathParams, queryParams := integerParams(t, doc, rt.Pattern)
		for _, pp := range pathParams {
			if !strings.Contains(tmpl, "{"+pp.Name+"}") {
				t.Errorf("%s: the document's path parameter %s is not in the route", rt.Pattern, pp.Name)
				continue
			}
			if pp.Schema.Value.Pattern != idPattern {
				t.Errorf("%s: the document does not give {%s} the one spelling of ids (pattern %q)", rt.Pattern, pp.Name, idPattern)
			}
			for _, spelled := range respellings(valid[pp.Name]()) {
				path := fill(tmpl, pp.Name, spelled)
				resp, body := send(rt.Pattern, path)
				pathCases++
				if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != api.ProblemContentType {
					t.Errorf("%s with {%s} = %q (%s): %d %s %.200s, want a 404 problem", rt.Pattern, pp.Name, spelled, path,
						resp.StatusCode, resp.Header.Get("Content-Type"), body)
				}
			}
		}
		if len(queryParams) == 0 || rt.Access == "key" {
			continue
		}
		for _, qp := range queryParams {
			if qp.Schema.Value.Pattern == "" {
				t.Errorf("%s: the document does not say how ?%s= is spelled (a pattern)", rt.Pattern, qp.Name)
			}
			v := "1"
			if d, ok := qp.Schema.Value.Default.(float64); ok {
				v = strconv.Itoa(int(d))
			}
			for _, spelled := range []string{"+" + v, "0" + v, "%20" + v, v + "%20", "-0", v + ".0"} {
				path := fill(tmpl, "", "") + "?" + qp.Name + "=" + spelled
				resp, body := send(rt.Pattern, path)
				queryCases++
				if resp.StatusCode != http.StatusBadRequest {
					t.Errorf("%s?%s=%s: %d %.200s, want 400", rt.Pattern, qp.Name, spelled, resp.StatusCode, body)
					continue
				}
				if pr := wantProblem(t, resp, body, http.StatusBadRequest, api.ProblemBadRequest); pr.Param != qp.Name {
					t.Errorf("%s?%s=%s: the problem names %q, want %q", rt.Pattern, qp.Name, spelled, pr.Param, qp.Name)
				}
			}
		}
	}
	if pathCases < 30*len(respellings("1")) || queryCases < 10 {
		t.Fatalf("walked only %d path and %d query cases: the document lost its integer parameters?", pathCases, queryCases)
	}

	// The extension id in calls 1 and 3, a key's or an admin's session's.
	for _, path := range []string{api.PathSubmitUpload, api.PathSubmitSign} {
		for _, spelled := range []string{"0" + p.key.ExtensionID, "+" + p.key.ExtensionID, " " + p.key.ExtensionID} {
			resp, body := e.send(t, "POST", path, nil, api.ServiceKey{ExtensionID: spelled, APIKey: p.key.APIKey})
			wantProblem(t, resp, body, http.StatusUnauthorized, api.ProblemInvalidKey)
			resp, body = e.send(t, "POST", path, admin, map[string]string{"extensionId": spelled})
			wantProblem(t, resp, body, http.StatusNotFound, api.ProblemNotFound)
		}
	}

	if after := idsState(t, e, ext, admin); after != before {
		t.Errorf("requests with respelled ids changed things:\n before %+v\n after  %+v", before, after)
	}
	if got := p.uploadState(t, upload.UploadID); got != betaport.UploadRequested {
		t.Errorf("the upload is %s, want it still requested", got)
	}
	if u, err := e.DB.LatestUpload(ctx, ext.ID); err != nil || u.ID != upload.UploadID {
		t.Errorf("a respelled call 1 issued another upload URL")
	}

	// The upload URL's expiry is signed as a time: another spelling of it
	// is not the URL that was signed (S3's presigned URLs are storage's).
	if e.Backend == backendFiles {
		q := uploadURL.Query()
		exp := q.Get("expires")
		for _, spelled := range []string{"+" + exp, "0" + exp, " " + exp} {
			q.Set("expires", spelled)
			u := *uploadURL
			u.RawQuery = q.Encode()
			resp, body := p.put(t, u.String(), api.ZipContentType, validZip(t, "2.0.0"))
			wantProblem(t, resp, body, http.StatusForbidden, api.ProblemBadSignature)
		}
		if got := p.uploadState(t, upload.UploadID); got != betaport.UploadRequested {
			t.Errorf("after PUTs with a respelled expiry the upload is %s", got)
		}
		if resp, body := p.put(t, upload.URL, api.ZipContentType, validZip(t, "2.0.0")); resp.StatusCode != 200 {
			t.Errorf("the URL as given = %d %s", resp.StatusCode, body)
		}
	}
}

// idsStateOf is what the requests of TestIDsHaveOneSpelling could change.
type idsStateOf struct {
	testers, keys, webhooks, bundles string
	current                          int64
	updateURL                        string
}

func idsState(t *testing.T, e *env, ext *betaport.Extension, admin http.Header) idsStateOf {
	t.Helper()
	get := func(path string) string {
		resp, body := e.do(t, "GET", path, admin)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
		}
		return string(body)
	}
	var cur betaport.Bundle
	json.Unmarshal([]byte(get(api.CurrentBundlePath(ext.ID))), &cur)
	base := api.ExtensionPath(ext.ID)
	return idsStateOf{
		testers:   get(base + "/testers?limit=100"),
		keys:      get(base + "/keys?limit=100"),
		webhooks:  get(base + "/webhooks?limit=100"),
		bundles:   get(base + "/bundles?limit=100"),
		current:   cur.Number,
		updateURL: e.updates(t, ext, admin).UpdateURL,
	}
}

// TestPageIDsHaveOneSpelling: the browser pages read an extension's id as
// the API does: /extensions/07 and the like are pages that say there is
// nothing there, never extension 7's page nor an "Extension #0".
func TestPageIDsHaveOneSpelling(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Tab Tamer")
	admin := http.Header{"Accept": {"text/html"}, "Cookie": e.adminOf(t, team)["Cookie"]}
	id := strconv.FormatInt(ext.ID, 10)
	for _, page := range []string{"", "/testers", "/pages", "/adoption", "/settings", "/channels", "/feedback", "/feedback/7"} {
		if resp, body := e.do(t, "GET", "/extensions/"+id+page, admin); resp.StatusCode != http.StatusOK || strings.Contains(string(body), `id="not-found"`) {
			t.Fatalf("/extensions/%s%s answers %d, or says there is no page there", id, page, resp.StatusCode)
		}
		for _, spelled := range []string{"0" + id, "00" + id, "0"} {
			_, body := e.do(t, "GET", "/extensions/"+spelled+page, admin)
			if s := string(body); !strings.Contains(s, `id="not-found"`) || strings.Contains(s, "Tab Tamer") || strings.Contains(s, "Extension #") {
				t.Errorf("/extensions/%s%s is not the page that says nothing is there", spelled, page)
			}
		}
	}
}
