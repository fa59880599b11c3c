package http_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// A zip whose manifest names the extension otherwise than the bundle
// before it is published, with a warning that says so (testers' browsers
// would show the new name); the same name again warns of nothing. A
// tester's builds name the extension as its admins did, on every build,
// whatever each manifest said (issue 28: one extension showed under two
// names).
func TestManifestNameChangeWarnsAndBuildsKeepTheExtensionName(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	named := func(name, version string) []byte {
		return makeZip(t, map[string]string{"manifest.json": fmt.Sprintf(`{"manifest_version": 3, "name": %q, "version": %q}`, name, version)})
	}
	signed := func(zip []byte) api.Signed {
		t.Helper()
		// Call 1, on file storage or S3 alike.
		resp, body := e.send(t, "POST", api.PathSubmitUpload, nil, p.key)
		var u api.UploadURL
		if resp.StatusCode != 200 || json.Unmarshal(body, &u) != nil {
			t.Fatalf("call 1 = %d %s", resp.StatusCode, body)
		}
		if resp, body := p.put(t, u.URL, api.ZipContentType, zip); resp.StatusCode != 200 {
			t.Fatalf("call 2 = %d %s", resp.StatusCode, body)
		}
		resp, body = p.sign(t)
		var s api.Signed
		if resp.StatusCode != 200 || json.Unmarshal(body, &s) != nil {
			t.Fatalf("call 3 = %d %s", resp.StatusCode, body)
		}
		return s
	}
	if s := signed(named("Tab Tamer", "1.0.0")); len(s.Warnings) != 0 {
		t.Errorf("the first bundle warns %q", s.Warnings)
	}
	s := signed(named("Extension", "1.0.1"))
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], `"Extension"`) || !strings.Contains(s.Warnings[0], `"Tab Tamer"`) {
		t.Errorf("a renamed manifest warns %q; want one warning naming both names", s.Warnings)
	}
	if s.Number != 2 || s.Name != "Extension" {
		t.Errorf("the renamed bundle is published as %+v", s.Bundle)
	}
	if s := signed(named("Extension", "1.0.2")); len(s.Warnings) != 0 {
		t.Errorf("the same name again warns %q", s.Warnings)
	}

	// A tester's builds: the extension's own name on each.
	tester, _ := e.testerOf(t, p.ext, betaport.TesterActive)
	cookie := e.cookie(t, betaport.Session{TesterID: tester.ID})
	resp, body := e.do(t, "GET", api.PathBuilds, cookie)
	var page api.Page[betaport.Bundle]
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &page) != nil || len(page.Data) != 3 {
		t.Fatalf("GET builds = %d %s", resp.StatusCode, body)
	}
	for _, b := range page.Data {
		if b.ExtensionName != p.ext.Name {
			t.Errorf("build #%d names the extension %q (manifest %q), want %q", b.Number, b.ExtensionName, b.Name, p.ext.Name)
		}
	}
}
