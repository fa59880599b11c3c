package http_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/model"
	"github.com/betaport/betaport/server/metrics"
	"github.com/betaport/betaport/server/screenshot"
)

// testerUpdateURL is the update URL tester t's installed copy names (the
// manifest's update_url of their own CRX).
func (e *env) testerUpdateURL(t *testing.T, ext *betaport.Extension, tester *betaport.Tester) string {
	t.Helper()
	u, err := e.App.Publish.TesterUpdateURL(context.Background(), ext, tester)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u, e.URL)
}

// versionField adds the version a copy runs to a report's form.
func versionForm(t *testing.T, text, version string, files ...reportFile) rawBody {
	t.Helper()
	f := reportForm(t, text, 0, files...)
	// The form's closing boundary ends it: the version goes before it.
	boundary := strings.TrimPrefix(f.contentType, "multipart/form-data; boundary=")
	end := "--" + boundary + "--\r\n"
	body := strings.TrimSuffix(string(f.data), end) +
		"--" + boundary + "\r\nContent-Disposition: form-data; name=\"version\"\r\n\r\n" + version + "\r\n" + end
	return rawBody{contentType: f.contentType, data: []byte(body)}
}

// TestFeedbackFromTheExtension: the extension reports with its tester's
// update URL: from its own chrome-extension:// origin (which gets its CORS
// header, on refusals too) or from no browser at all, on the build of the
// version it says it runs. Another origin, the shared URL, a revoked
// tester's URL and a made-up token are refused, and keep nothing.
func TestFeedbackFromTheExtension(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := metrics.New("test")
	e.App.Metrics = m // before any request of this env's
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	b1 := e.publish(t, p.ext, "1.0.0")
	b2 := e.publish(t, p.ext, "1.0.1")
	upd := e.updates(t, p.ext, admin)
	ada, _ := e.testerOf(t, p.ext, betaport.TesterActive)
	own := "chrome-extension://" + upd.ChromeID
	url := e.testerUpdateURL(t, p.ext, ada) + "/feedback"
	list := func() []betaport.Feedback {
		t.Helper()
		_, body := e.do(t, "GET", api.FeedbackPath(p.ext.ID)+"?limit=50", admin)
		var page api.Page[betaport.Feedback]
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		return page.Data
	}

	// The preflight of a request with headers of its own.
	resp, body := e.send(t, "OPTIONS", url, http.Header{"Origin": {own}, "Access-Control-Request-Method": {"POST"}}, nil)
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != own ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Fatalf("preflight = %d %v %s", resp.StatusCode, resp.Header, body)
	}

	// From the extension, on the build it runs (an older one).
	resp, body = e.send(t, "POST", url, http.Header{"Origin": {own}}, versionForm(t, "The popup is blank.", b1.Version, pngShot(t, 8, 6)))
	var got betaport.Feedback
	if resp.StatusCode != 201 || json.Unmarshal(body, &got) != nil || resp.Header.Get("Access-Control-Allow-Origin") != own {
		t.Fatalf("report from the extension = %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if got.Source != betaport.FeedbackFromExtension || got.BundleNumber != b1.Number || got.Version != b1.Version ||
		got.TesterID != ada.ID || len(got.Screenshots) != 1 {
		t.Fatalf("report = %+v", got)
	}
	// Without a version, on the build the tester gets; from a script, no
	// Origin at all.
	resp, body = e.send(t, "POST", url, nil, reportForm(t, "From a script.", 0))
	if resp.StatusCode != 201 || json.Unmarshal(body, &got) != nil || got.BundleNumber != b2.Number || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("report without a version = %d %s", resp.StatusCode, body)
	}
	// A version none of their builds has (a copy loaded by hand): kept as
	// said, with no build.
	resp, body = e.send(t, "POST", url, http.Header{"Origin": {own}}, versionForm(t, "Local build.", "9.9.9"))
	if resp.StatusCode != 201 || json.Unmarshal(body, &got) != nil || got.BundleNumber != 0 || got.Version != "9.9.9" {
		t.Fatalf("report on an unknown version = %d %s", resp.StatusCode, body)
	}
	// A refusal the extension can read: its origin is allowed.
	resp, body = e.send(t, "POST", url, http.Header{"Origin": {own}}, versionForm(t, "x", "1.0.0<script>"))
	if pr := wantProblem(t, resp, body, 400, api.ProblemBadRequest); pr.Param != "version" || resp.Header.Get("Access-Control-Allow-Origin") != own {
		t.Fatalf("a bad version = %d %v %s", resp.StatusCode, resp.Header, body)
	}
	before, blobs := len(list()), len(e.keys(t, "feedback/"))

	// Refused, keeping nothing: a web page that learned the URL, another
	// extension, the shared URL, a made-up token.
	for _, c := range []struct {
		what, url, origin string
		status            int
	}{
		{"a web page", url, "https://evil.example", 403},
		{"another extension", url, "chrome-extension://" + strings.Repeat("a", 32), 403},
		{"the page's own origin", url, e.URL, 403},
		{"the shared update URL", strings.TrimPrefix(upd.UpdateURL, e.URL) + "/feedback", "", 403},
		{"a made-up token", api.UpdatePrefix + fmt.Sprint(p.ext.ID) + "/t_madeup/feedback", "", 404},
	} {
		h := http.Header{}
		if c.origin != "" {
			h.Set("Origin", c.origin)
		}
		resp, body := e.send(t, "POST", c.url, h, reportForm(t, "Should not be kept", 0, pngShot(t, 4, 4)))
		if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != api.ProblemContentType {
			t.Errorf("%s: %d %s", c.what, resp.StatusCode, body)
		}
		if acao := resp.Header.Get("Access-Control-Allow-Origin"); acao != "" {
			t.Errorf("%s: Access-Control-Allow-Origin %q", c.what, acao)
		}
		resp, _ = e.send(t, "OPTIONS", c.url, h, nil)
		if resp.StatusCode == 204 {
			t.Errorf("%s: preflight allowed", c.what)
		}
	}
	// A revoked tester's copy still knows its URL: refused.
	if resp, body := e.do(t, "DELETE", api.TesterPath(p.ext.ID, ada.ID), admin); resp.StatusCode != 200 && resp.StatusCode != 204 {
		t.Fatalf("revoke = %d %s", resp.StatusCode, body)
	}
	resp, body = e.send(t, "POST", url, http.Header{"Origin": {own}}, reportForm(t, "After the revoke", 0, pngShot(t, 4, 4)))
	if pr := wantProblem(t, resp, body, 403, api.ProblemForbidden); !strings.Contains(pr.Detail, "revoked") {
		t.Fatalf("a revoked tester's report = %s", body)
	}
	if after, afterBlobs := len(list()), len(e.keys(t, "feedback/")); after != before || afterBlobs != blobs {
		t.Fatalf("refused reports kept something: %d → %d reports, %d → %d screenshots", before, after, blobs, afterBlobs)
	}
	// Counted: 3 kept; refused, 5 from elsewhere or a URL no tester may
	// use, 1 made-up token, 1 bad version.
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{
		`betaport_feedback_reports_total{outcome="received",source="extension"} 3`,
		`betaport_feedback_reports_total{outcome="forbidden",source="extension"} 5`,
		`betaport_feedback_reports_total{outcome="not-found",source="extension"} 1`,
		`betaport_feedback_reports_total{outcome="bad-request",source="extension"} 1`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestDeletedReportTakesItsScreenshots: an admin deletes a report; its
// screenshots' bytes go with it, the other report's stay, the trail says
// who, and the deleted report answers 404.
func TestDeletedReportTakesItsScreenshots(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	e.publish(t, p.ext, "1.0.0")
	ada, _ := e.testerOf(t, p.ext, betaport.TesterActive)
	s := e.cookie(t, betaport.Session{TesterID: ada.ID})
	send := func(text string, shots ...reportFile) betaport.Feedback {
		resp, body := e.send(t, "POST", api.FeedbackPath(p.ext.ID), s, reportForm(t, text, 0, shots...))
		var f betaport.Feedback
		if resp.StatusCode != 201 || json.Unmarshal(body, &f) != nil {
			t.Fatalf("report = %d %s", resp.StatusCode, body)
		}
		return f
	}
	gone := send("Two screenshots", pngShot(t, 4, 4), pngShot(t, 5, 5))
	kept := send("One screenshot", pngShot(t, 6, 6))
	if n := len(e.keys(t, "feedback/")); n != 3 {
		t.Fatalf("%d screenshots stored, want 3", n)
	}
	if resp, body := e.do(t, "DELETE", api.FeedbackReportPath(p.ext.ID, gone.ID), s); resp.StatusCode != 403 {
		t.Fatalf("a tester deleting = %d %s", resp.StatusCode, body)
	}
	if resp, body := e.do(t, "DELETE", api.FeedbackReportPath(p.ext.ID, gone.ID), admin); resp.StatusCode != 204 {
		t.Fatalf("DELETE = %d %s", resp.StatusCode, body)
	}
	keys := e.keys(t, "feedback/")
	if len(keys) != 1 {
		t.Fatalf("after the delete: %v", keys)
	}
	if resp, body := e.do(t, "GET", api.FeedbackScreenshotPath(p.ext.ID, kept.ID, 1), admin); resp.StatusCode != 200 || len(body) == 0 {
		t.Fatalf("the other report's screenshot = %d", resp.StatusCode)
	}
	for _, path := range []string{api.FeedbackReportPath(p.ext.ID, gone.ID), api.FeedbackScreenshotPath(p.ext.ID, gone.ID, 1)} {
		resp, body := e.do(t, "GET", path, admin)
		wantProblem(t, resp, body, 404, api.ProblemNotFound)
	}
	resp, body := e.do(t, "DELETE", api.FeedbackReportPath(p.ext.ID, gone.ID), admin)
	wantProblem(t, resp, body, 404, api.ProblemNotFound)
	_, body = e.do(t, "GET", api.ExtensionPath(p.ext.ID)+"/audit", admin)
	if !strings.Contains(string(body), betaport.AuditFeedbackDeleted) {
		t.Fatalf("the trail does not say the report was deleted: %s", body)
	}
}

// TestFeedbackWebhooksCarryLinks: feedback.created and feedback.resolved
// reach a webhook with the report's text and links to it and its
// screenshots, never their bytes; seen sends nothing.
func TestFeedbackWebhooksCarryLinks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	b := e.publish(t, p.ext, "1.0.0")
	e.startWebhooks(t)
	rc := newReceiver(t, 0)
	if resp, body := e.send(t, "POST", api.WebhooksPath(p.ext.ID), admin, api.NewWebhook{URL: rc.URL + "/hook"}); resp.StatusCode != 201 {
		t.Fatalf("webhook = %d %s", resp.StatusCode, body)
	}
	ada, _ := e.testerOf(t, p.ext, betaport.TesterActive)
	shot := pngShot(t, 4, 4)
	resp, body := e.send(t, "POST", api.FeedbackPath(p.ext.ID), e.cookie(t, betaport.Session{TesterID: ada.ID}),
		reportForm(t, "Crash on start", 0, shot))
	var f betaport.Feedback
	if resp.StatusCode != 201 || json.Unmarshal(body, &f) != nil {
		t.Fatalf("report = %d %s", resp.StatusCode, body)
	}
	for _, st := range []string{betaport.FeedbackSeen, betaport.FeedbackResolved} {
		if resp, body := e.send(t, "POST", api.FeedbackReportPath(p.ext.ID, f.ID)+"/status", admin, api.FeedbackStatus{Status: st}); resp.StatusCode != 200 {
			t.Fatalf("%s = %d %s", st, resp.StatusCode, body)
		}
	}
	got := rc.waitUntil(t, "two feedback events", func(got []received) bool { return delivered(got) == 2 })
	for i, want := range []struct{ typ, status string }{
		{betaport.EventFeedbackCreated, betaport.FeedbackNew}, {betaport.EventFeedbackResolved, betaport.FeedbackResolved},
	} {
		ev := got[i].event
		if ev.Type != want.typ || got[i].header.Get("Betaport-Event") != want.typ || ev.Feedback == nil {
			t.Fatalf("event %d = %s", i, got[i].body)
		}
		fb := ev.Feedback
		if fb.ID != f.ID || fb.Status != want.status || fb.Text != "Crash on start" || fb.Tester != ada.Email ||
			fb.BundleNumber != b.Number || fb.Version != b.Version || fb.APIPath != api.FeedbackReportPath(p.ext.ID, f.ID) ||
			fb.PagePath != api.FeedbackPagePath(p.ext.ID, f.ID) ||
			len(fb.ScreenshotPaths) != 1 || fb.ScreenshotPaths[0] != api.FeedbackScreenshotPath(p.ext.ID, f.ID, 1) {
			t.Fatalf("event %d's report = %s", i, got[i].body)
		}
		if len(got[i].body) > 4<<10 || strings.Contains(string(got[i].body), "PNG") {
			t.Fatalf("event %d carries more than links: %d bytes", i, len(got[i].body))
		}
	}
	// Each link works for the admin.
	if resp, _ := e.do(t, "GET", got[0].event.Feedback.ScreenshotPaths[0], admin); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("the event's screenshot link = %d", resp.StatusCode)
	}
}

// feedbackEvents reads the "feedback" events of an extension's stream.
func feedbackEvents(t *testing.T, e *env, extID int64, header http.Header) <-chan int64 {
	t.Helper()
	out := make(chan int64, 16)
	events := eventsNamed(t, e, api.EventsPath(extID), header, "feedback")
	go func() {
		defer close(out)
		for rev := range events {
			out <- rev["feedback"]
		}
	}()
	return out
}

// TestFeedbackEventsAndOpenCounts: the stream says when a report came and
// moved, to the admins and the tester; the admins' bundles list counts
// each bundle's open reports, which a tester's list does not show; the
// metrics count what came and what was refused.
func TestFeedbackEventsAndOpenCounts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := metrics.New("test")
	e.App.Metrics = m // before any request of this env's
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	b1 := e.publish(t, p.ext, "1.0.0")
	b2 := e.publish(t, p.ext, "1.0.1")
	ada, _ := e.testerOf(t, p.ext, betaport.TesterActive)
	s := e.cookie(t, betaport.Session{TesterID: ada.ID})
	adminEvents, testerEvents := feedbackEvents(t, e, p.ext.ID, admin), feedbackEvents(t, e, p.ext.ID, s)
	next := func(ch <-chan int64) int64 {
		select {
		case v := <-ch:
			return v
		case <-time.After(20 * time.Second):
			t.Fatal("no feedback event")
			return 0
		}
	}
	first := next(adminEvents)
	if next(testerEvents) != first {
		t.Fatal("the tester's stream starts elsewhere")
	}
	report := func(bundle int64) betaport.Feedback {
		resp, body := e.send(t, "POST", api.FeedbackPath(p.ext.ID), s, reportForm(t, "on "+fmt.Sprint(bundle), bundle))
		var f betaport.Feedback
		if resp.StatusCode != 201 || json.Unmarshal(body, &f) != nil {
			t.Fatalf("report = %d %s", resp.StatusCode, body)
		}
		return f
	}
	f1 := report(b1.Number)
	if v := next(adminEvents); v <= first {
		t.Fatalf("after a report the admins' revision is %d, was %d", v, first)
	}
	next(testerEvents)
	report(b1.Number)
	report(b2.Number)
	counts := func(who http.Header) map[int64]int64 {
		_, body := e.do(t, "GET", api.ExtensionPath(p.ext.ID)+"/bundles?page=0", who)
		var page []betaport.Bundle
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		c := map[int64]int64{}
		for _, b := range page {
			c[b.Number] = b.OpenFeedback
		}
		return c
	}
	if c := counts(admin); c[b1.Number] != 2 || c[b2.Number] != 1 {
		t.Fatalf("open counts = %v", c)
	}
	if c := counts(s); c[b1.Number] != 0 || c[b2.Number] != 0 {
		t.Fatalf("a tester sees open counts %v", c)
	}
	if resp, body := e.send(t, "POST", api.FeedbackReportPath(p.ext.ID, f1.ID)+"/status", admin, api.FeedbackStatus{Status: betaport.FeedbackResolved}); resp.StatusCode != 200 {
		t.Fatalf("resolve = %d %s", resp.StatusCode, body)
	}
	if c := counts(admin); c[b1.Number] != 1 || c[b2.Number] != 1 {
		t.Fatalf("after a resolve the open counts are %v", c)
	}
	// Refused: an empty report.
	resp, body := e.send(t, "POST", api.FeedbackPath(p.ext.ID), s, reportForm(t, "", 0))
	wantProblem(t, resp, body, 400, api.ProblemBadRequest)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	text, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`betaport_feedback_reports_total{outcome="received",source="builds_page"} 3`,
		`betaport_feedback_reports_total{outcome="bad-request",source="builds_page"} 1`,
		`betaport_feedback_reports_total{outcome="received",source="extension"} 0`,
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// The builds page's form says the server's limits before sending: they
// are the same numbers.
func TestReportFormLimitsAreTheServers(t *testing.T) {
	if model.ScreenshotMaxBytes != screenshot.MaxBytes {
		t.Fatalf("the form takes screenshots of up to %d bytes, the server %d", model.ScreenshotMaxBytes, screenshot.MaxBytes)
	}
	for _, typ := range []string{screenshot.PNG, screenshot.JPEG, "image/webp"} {
		if !strings.Contains(model.ScreenshotTypes, typ) {
			t.Errorf("the form's picker does not offer %s", typ)
		}
	}
}
