package http_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// notUnicode are JSON string contents (as written between the quotes)
// whose text is not Unicode: encoding/json would decode each as U+FFFD.
var notUnicode = map[string]string{
	"a lone high surrogate":            `a\ud800b`,
	"a lone low surrogate":             `a\udc00b`,
	"a pair the wrong way round":       `\ude00\ud83d`,
	"a high surrogate before a letter": `\ud800\u0041`,
	"a high surrogate at the end":      `ab\uD800`,
	"a byte that is not UTF-8":         "a\xffb",
	"a surrogate encoded in UTF-8":     "a\xed\xa0\x80b",
}

// stringFields are the string properties of an operation's JSON body in
// the OpenAPI document (of each alternative of a oneOf).
func stringFields(op *openapi3.Operation) []string {
	if op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json") == nil {
		return nil
	}
	s := op.RequestBody.Value.Content.Get("application/json").Schema.Value
	alts := []*openapi3.Schema{s}
	for _, alt := range s.OneOf {
		alts = append(alts, alt.Value)
	}
	var fields []string
	for _, alt := range alts {
		for name, p := range alt.Properties {
			isText := p.Value.Type.Is("string")
			for _, o := range p.Value.OneOf {
				isText = isText || o.Value.Type.Is("string")
			}
			if isText && !slices.Contains(fields, name) {
				fields = append(fields, name)
			}
		}
	}
	return fields
}

// TestJSONTextMustBeUnicode: every text field of every JSON body the API
// takes (the OpenAPI document's, so a new one cannot be missed) refuses
// text that is not Unicode with a 400 naming the field, and stores
// nothing; encoding/json alone would have stored U+FFFD in its place
// (issue 29: release notes "a\ud800b" were published as "a\uFFFDb").
func TestJSONTextMustBeUnicode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	doc, _ := loadContract(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	ext := api.ExtensionPath(p.ext.ID)
	state := func() string {
		var b strings.Builder
		for _, path := range []string{ext + "/testers?limit=100", ext + "/keys?limit=100", ext + "/webhooks?limit=100", ext + "/tokens?limit=100"} {
			_, body := e.do(t, "GET", path, admin)
			b.Write(body)
		}
		return b.String()
	}
	tester, _ := e.testerOf(t, p.ext, betaport.TesterActive)
	before := state()

	// Bodies each route takes, with every text field filled, and who
	// sends them.
	type sent struct {
		header http.Header
		body   map[string]string
	}
	id := p.key.ExtensionID
	bodies := map[string][]sent{
		"POST /api/session":                                      {{nil, map[string]string{"email": "nobody@example.com", "password": "a long password"}}},
		"POST /api/extensions/{id}/testers":                      {{admin, map[string]string{"email": "t@example.com", "name": "T", "channel": "beta"}}},
		"PUT /api/extensions/{id}/testers/{testerId}/channel":    {{admin, map[string]string{"channel": "beta"}}},
		"POST /api/extensions/{id}/bundles/{number}/rollback":    {{admin, map[string]string{"channel": "beta"}}},
		"POST /api/extensions/{id}/bundles/{number}/promote":     {{admin, map[string]string{"channel": "beta"}}},
		"POST /api/extensions/{id}/channels":                     {{admin, map[string]string{"name": "qa"}}},
		"POST /api/extensions/{id}/feedback/{feedbackId}/status": {{admin, map[string]string{"status": "seen"}}},
		"POST /api/extensions/{id}/keys":                         {{admin, map[string]string{"label": "CI", "channel": "beta"}}},
		"POST /api/extensions/{id}/webhooks":                     {{admin, map[string]string{"url": "https://hooks.example.com/x"}}},
		"POST /api/extensions/{id}/tokens":                       {{admin, map[string]string{"name": "CI", "expiresAt": "2027-01-01T00:00:00Z"}}},
		"POST /api/submit/upload": {
			{nil, map[string]string{"extensionId": id, "apiKey": p.key.APIKey, "releaseNotes": "Notes", "channel": "beta"}},
			{admin, map[string]string{"extensionId": id, "releaseNotes": "Notes", "channel": "beta"}},
		},
		"POST /api/submit/sign": {
			{nil, map[string]string{"extensionId": id, "apiKey": p.key.APIKey}},
			{admin, map[string]string{"extensionId": id}},
		},
	}
	// raw is body as JSON with field's text replaced by text, as written.
	raw := func(body map[string]string, field, text string) json.RawMessage {
		parts := []string{}
		for k, v := range body {
			q, _ := json.Marshal(v)
			if k == field {
				q = []byte(`"` + text + `"`)
			}
			parts = append(parts, `"`+k+`": `+string(q))
		}
		return json.RawMessage("{" + strings.Join(parts, ", ") + "}")
	}

	cases := 0
	for _, rt := range e.App.Routes() {
		method, tmpl, _ := strings.Cut(rt.Pattern, " ")
		fields := stringFields(doc.Paths.Find(tmpl).GetOperation(method))
		if len(fields) == 0 {
			continue
		}
		rows, ok := bodies[rt.Pattern]
		if !ok {
			t.Errorf("%s takes a JSON body with text (%v): give it a row here", rt.Pattern, fields)
			continue
		}
		path := strings.NewReplacer("{id}", id, "{testerId}", strconv.FormatInt(tester.ID, 10), "{number}", "1", "{feedbackId}", "1").Replace(tmpl)
		for _, field := range fields {
			tried := false
			for _, row := range rows {
				if _, ok := row.body[field]; !ok {
					continue
				}
				tried = true
				for name, text := range notUnicode {
					resp, body := e.send(t, method, path, row.header, raw(row.body, field, text))
					cases++
					if resp.StatusCode != http.StatusBadRequest {
						t.Errorf("%s with %s in %s: %d %.300s, want 400", rt.Pattern, name, field, resp.StatusCode, body)
						continue
					}
					typ := api.ProblemBadRequest
					if field == "releaseNotes" {
						typ = api.ProblemInvalidNotes
					}
					pr := wantProblem(t, resp, body, http.StatusBadRequest, typ)
					if pr.Param != field || !strings.Contains(pr.Detail, `"`+field+`"`) || !strings.Contains(pr.Detail, "not Unicode") {
						t.Errorf("%s with %s in %s: param %q, detail %q; want them to name the field", rt.Pattern, name, field, pr.Param, pr.Detail)
					}
				}
			}
			if !tried {
				t.Errorf("%s: no body here fills its text field %s", rt.Pattern, field)
			}
		}
	}
	if cases < 10*len(notUnicode) {
		t.Fatalf("only %d cases: the document lost its bodies' text fields?", cases)
	}

	// Nested and in a field's name: where the text is, is named.
	resp, body := e.send(t, "POST", api.PathSubmitUpload, nil,
		json.RawMessage(`{"service": {"extensionId": "`+id+`", "apiKey": "k\udfff"}}`))
	if pr := wantProblem(t, resp, body, http.StatusBadRequest, api.ProblemBadRequest); pr.Param != "service.apiKey" {
		t.Errorf("nested: param %q, want service.apiKey", pr.Param)
	}
	resp, body = e.send(t, "POST", ext+"/keys", admin, json.RawMessage(`{"label": "CI", "la\ud800bel": "x"}`))
	if pr := wantProblem(t, resp, body, http.StatusBadRequest, api.ProblemBadRequest); !strings.Contains(pr.Detail, "field's name") {
		t.Errorf("a field's name: %q", pr.Detail)
	}

	if after := state(); after != before {
		t.Errorf("refused bodies changed the testers, keys or webhooks")
	}
	if _, err := e.DB.LatestUpload(context.Background(), p.ext.ID); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Errorf("a refused call 1 issued an upload URL (%v)", err)
	}

	// Text that is Unicode is taken as it is: a whole pair, and an escaped
	// backslash before "ud800", which is no escape.
	resp, body = e.send(t, "POST", ext+"/testers", admin, json.RawMessage(`{"email": "pair@example.com", "name": "a\ud83d\ude00b"}`))
	var invited api.Invited
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(body, &invited) != nil || invited.Name != "a😀b" {
		t.Errorf("a name with a whole surrogate pair = %d %s", resp.StatusCode, body)
	}
	resp, body = e.send(t, "POST", ext+"/keys", admin, json.RawMessage(`{"label": "a\\ud800b"}`))
	if resp.StatusCode != http.StatusCreated || !strings.Contains(string(body), `"label":"a\\ud800b"`) {
		t.Errorf(`a label with an escaped backslash before "ud800" = %d %s`, resp.StatusCode, body)
	}
	resp, body = e.send(t, "POST", api.PathSubmitUpload, nil,
		json.RawMessage(`{"extensionId": "`+id+`", "apiKey": "`+p.key.APIKey+`", "releaseNotes": "\ud83d\ude80 Faster"}`))
	if resp.StatusCode != http.StatusOK {
		t.Errorf("release notes with a whole pair = %d %s", resp.StatusCode, body)
	}
}
