package http_test

// Black-box tests from the second probe of issue 29 (a tester working from
// outside the service: HTTP only). Each fails on a defect the probe found;
// helpers are prefixed p29.

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"net/http"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/storetest"
	"github.com/betaport/betaport/server/zipcheck/ziptest"
)

// p29UnicodePath is an Info-ZIP Unicode Path extra field (0x7075): version
// 1, the CRC-32 of the header's own name, then the name that Info-ZIP's
// unzip (and 7-Zip) extract the entry under instead of the header's name.
func p29UnicodePath(headerName, real string) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint16(0x7075))
	binary.Write(&b, binary.LittleEndian, uint16(5+len(real)))
	b.WriteByte(1)
	binary.Write(&b, binary.LittleEndian, crc32.ChecksumIEEE([]byte(headerName)))
	b.WriteString(real)
	return b.Bytes()
}

// A zip whose central directory names an entry a.js, but whose Unicode
// Path extra field names it manifest.json (or ../../evil.js), reads
// differently to unzip (which extracts a.js's bytes over manifest.json, or
// to evil.js) than to the check: the validated manifest is not the one a
// tester who unzips the download loads. It is published today; it must be
// refused like a local header that disagrees with the central directory.
func TestProbe29UnicodePathExtraFieldIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	p.submitAny(t, validZip(t, "1.0"))
	for _, real := range []string{"manifest.json", "../../evil.js"} {
		renamed := ziptest.Stored("a.js", `{"manifest_version": 3, "name": "Evil", "version": "9.9"}`)
		renamed.Central.Extra = p29UnicodePath("a.js", real)
		got := p.signRejected(t, ziptest.Zip(ziptest.Stored("manifest.json", tamer), renamed))
		if len(got) == 0 {
			t.Fatalf("Unicode Path %q: refused without a problem", real)
		}
	}
}

// Chrome refuses to load an extension with a file or folder at its root
// whose name starts with "_" (reserved for the system). Such zips are
// published today. (Chromium's file_util::CheckForIllegalFilenames allows
// _locales, _platform_specific and __MACOSX, the folder macOS's Finder
// adds to a zip; a Python __pycache__/ is refused.)
func TestProbe29ReservedRootNamesAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	p.submitAny(t, validZip(t, "1.0"))
	for _, name := range []string{"_foo/a.js", "__pycache__/a.pyc", "_bar.js"} {
		got := p.signRejected(t, makeZip(t, map[string]string{"manifest.json": tamer, name: "x"}))
		if len(got) == 0 {
			t.Fatalf("%s: refused without a problem", name)
		}
	}
}

// A zip holding a file "js" and a file "js/a.js" cannot be unpacked on any
// system (js cannot be a file and a folder), so Chrome cannot install it;
// it is published today.
func TestProbe29FileAndFolderOfOneNameIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	p.submitAny(t, validZip(t, "1.0"))
	got := p.signRejected(t, ziptest.Zip(ziptest.Stored("manifest.json", tamer), ziptest.Stored("js", "1"), ziptest.Stored("js/a.js", "2")))
	if len(got) == 0 {
		t.Fatal("refused without a problem")
	}
}

// A webhook URL whose port is out of range (99999) can never be reached;
// it is taken today (201) instead of refused on the url field.
func TestProbe29WebhookPortOutOfRangeIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "P29 Hooks")
	admin := e.adminOf(t, team)
	for _, u := range []string{"http://127.0.0.1:99999/hook", "https://hooks.example.com:65536/x"} {
		resp, body := e.send(t, "POST", api.WebhooksPath(ext.ID), admin, api.NewWebhook{URL: u})
		p := wantProblem(t, resp, body, http.StatusBadRequest, api.ProblemInvalidWebhookURL)
		if p.Param != "url" {
			t.Fatalf("%s: problem on %q, want url", u, p.Param)
		}
	}
}

// Without --webhooks-allow-private, the IPv6 documentation prefix
// 3fff::/20 (RFC 9637), like 2001:db8::/32, is not a public address.
func TestProbe29WebhookDocumentationPrefix3fffIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.App.WebhookAllowPrivate = false
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "P29 Doc")
	admin := e.adminOf(t, team)
	for _, u := range []string{"http://[2001:db8::1]/hook", "http://[3fff::1]/hook", "http://[3fff:fff::1]/hook"} {
		resp, body := e.send(t, "POST", api.WebhooksPath(ext.ID), admin, api.NewWebhook{URL: u})
		wantProblem(t, resp, body, http.StatusBadRequest, api.ProblemInvalidWebhookURL)
	}
}

// An invite with a misspelt field ("expiresInDay": 1) is taken with the
// default of 14 days: the admin meant a link that dies tomorrow and got one
// that works two weeks. The submit bodies refuse unknown fields; the
// invite must too, naming the field, and store no tester.
func TestProbe29InviteWithUnknownFieldIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "P29 Invite")
	admin := e.adminOf(t, team)
	resp, body := e.send(t, "POST", api.TestersPath(ext.ID), admin, map[string]any{"email": "typo@example.com", "expiresInDay": 1})
	wantProblem(t, resp, body, http.StatusBadRequest, api.ProblemBadRequest)
}

// p29WantStreamEnds reads s until the server ends it; it fails if the
// stream tells of bundle number lastBundle (published after access ended)
// or is still open after a while.
func p29WantStreamEnds(t *testing.T, what string, s *bbtlStream, lastBundle int64) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return
			}
			if ev.Name == "bundles" && ev.int(t, what, "lastBundle") >= lastBundle {
				t.Fatalf("%s: the open stream still tells of bundle #%d, published after access ended: %s", what, lastBundle, ev.Data)
			}
		case <-deadline:
			t.Fatalf("%s: the event stream is still open 10 s after access ended", what)
		}
	}
}

// A tester revoked, or an admin who signs out, while their event stream
// is open: their API calls are refused at once (401), but the stream
// stays open (over 90 s in the probe) and goes on telling them of each
// publish. Ending access must end the stream.
func TestProbe29EventStreamEndsWithAccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.App.EventPoll = 20 * time.Millisecond
	p := newPipeline(t, e, betaport.PlanProfessional)
	p.submitAny(t, validZip(t, "1.0"))
	team := mustTeam(t, e, p.ext)
	admin := e.adminOf(t, team)
	tester, _ := e.testerOf(t, p.ext, betaport.TesterActive)
	testerSession := e.cookie(t, betaport.Session{TesterID: tester.ID})
	testerStream := bbtlOpenStream(t, e.URL, p.ext.ID, testerSession)
	adminStream := bbtlOpenStream(t, e.URL, p.ext.ID, admin)
	testerStream.next(t, "the tester's first event")
	adminStream.next(t, "the admin's first event")

	if resp, body := e.do(t, "DELETE", api.TesterPath(p.ext.ID, tester.ID), admin); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoke = %d %s", resp.StatusCode, body)
	}
	if resp, body := e.do(t, "GET", api.PathBuilds, testerSession); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the revoked tester's builds = %d %s, want 401", resp.StatusCode, body)
	}
	if resp, body := e.do(t, "DELETE", api.PathSession, admin); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("sign-out = %d %s", resp.StatusCode, body)
	}
	b := p.submitAny(t, validZip(t, "2.0"))
	p29WantStreamEnds(t, "revoked tester", testerStream, b.Number)
	p29WantStreamEnds(t, "signed-out admin", adminStream, b.Number)
}
