package http_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// reportFile is one file of a report's form.
type reportFile struct {
	contentType, name string
	data              []byte
}

// reportForm is a report as the builds page sends it: multipart/form-data
// with text, the build (0: left out) and screenshots.
func reportForm(t testing.TB, text string, bundle int64, files ...reportFile) rawBody {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	if text != "" {
		mw.WriteField("text", text)
	}
	if bundle != 0 {
		mw.WriteField("bundle", fmt.Sprint(bundle))
	}
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="screenshots"; filename=%q`, f.name))
		h.Set("Content-Type", f.contentType)
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(f.data)
	}
	mw.Close()
	return rawBody{contentType: mw.FormDataContentType(), data: b.Bytes()}
}

// pngShot is a w×h PNG screenshot.
func pngShot(t testing.TB, w, h int) reportFile {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return reportFile{"image/png", "shot.png", b.Bytes()}
}

// TestFeedbackFromTheBuildsPage: a tester sends a report with text and
// screenshots; it is on the build they get, with their browser; the
// admin lists it, opens its screenshot (its own type, not sniffed,
// sandboxed) and resolves it; the tester sees their own reports only.
// Refused reports leave nothing: no record, no blob.
func TestFeedbackFromTheBuildsPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	b := e.publish(t, p.ext, "1.0.0")
	ada, _ := e.testerOf(t, p.ext, betaport.TesterActive)
	bob, _ := e.testerOf(t, p.ext, betaport.TesterActive)
	adaS, bobS := e.cookie(t, betaport.Session{TesterID: ada.ID}), e.cookie(t, betaport.Session{TesterID: bob.ID})
	adaS.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36")
	path := api.ExtensionPath(p.ext.ID) + "/feedback"
	blobs := func() int { return len(e.keys(t, "feedback/")) }

	resp, body := e.send(t, "POST", path, adaS, reportForm(t, "The popup is blank.", 0, pngShot(t, 40, 20)))
	var f betaport.Feedback
	if resp.StatusCode != 201 || json.Unmarshal(body, &f) != nil {
		t.Fatalf("a report = %d %s", resp.StatusCode, body)
	}
	if f.BundleNumber != b.Number || f.Version != "1.0.0" || f.Browser != "Chrome 131" || f.OS != "Linux" ||
		f.Status != betaport.FeedbackNew || len(f.Screenshots) != 1 || f.Screenshots[0].Width != 40 || f.Source != betaport.FeedbackFromBuildsPage {
		t.Fatalf("kept %+v", f)
	}
	if n := blobs(); n != 1 {
		t.Fatalf("%d screenshots stored, want 1", n)
	}

	// Refused, leaving nothing behind.
	svg := reportFile{"image/svg+xml", "x.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)}
	six := []reportFile{pngShot(t, 2, 2), pngShot(t, 2, 2), pngShot(t, 2, 2), pngShot(t, 2, 2), pngShot(t, 2, 2), pngShot(t, 2, 2)}
	for name, c := range map[string]struct {
		who    http.Header
		body   any
		status int
	}{
		"an svg after a good png":  {adaS, reportForm(t, "x", 0, pngShot(t, 4, 4), svg), 400},
		"six screenshots":          {adaS, reportForm(t, "x", 0, six...), 400},
		"a screenshot over 5 MB":   {adaS, reportForm(t, "x", 0, reportFile{"image/png", "big.png", append(pngShot(t, 2, 2).data, make([]byte, 5<<20)...)}), 400},
		"a field it does not take": {adaS, rawBody{"multipart/form-data; boundary=x", []byte("--x\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nhi\r\n--x--\r\n")}, 400},
		"nothing said":             {adaS, reportForm(t, "  ", 0), 400},
		"a build not theirs":       {adaS, reportForm(t, "x", 99), 404},
		"json":                     {adaS, map[string]string{"text": "x"}, 415},
		"an admin":                 {admin, reportForm(t, "x", 0), 403},
	} {
		resp, body := e.send(t, "POST", path, c.who, c.body)
		if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != api.ProblemContentType {
			t.Errorf("%s: %d %s, want a %d problem", name, resp.StatusCode, body, c.status)
		}
	}
	if n := blobs(); n != 1 {
		t.Fatalf("refused reports left %d screenshots stored, want the 1 kept", n)
	}
	e.send(t, "POST", path, bobS, reportForm(t, "Bob's report", 0))

	list := func(who http.Header, query string) []betaport.Feedback {
		t.Helper()
		resp, body := e.do(t, "GET", path+query, who)
		var page api.Page[betaport.Feedback]
		if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil {
			t.Fatalf("the list%s = %d %s", query, resp.StatusCode, body)
		}
		return page.Data
	}
	if got := list(admin, ""); len(got) != 2 || got[0].Text != "Bob's report" {
		t.Fatalf("the admin's list: %+v", got)
	}
	if got := list(adaS, "?tester="+fmt.Sprint(bob.ID)); len(got) != 1 || got[0].ID != f.ID {
		t.Fatalf("Ada's list (asking for Bob's): %+v, want her own alone", got)
	}
	if got := list(admin, "?q=POPUP"); len(got) != 1 || got[0].ID != f.ID {
		t.Fatalf("searching: %+v", got)
	}
	one := fmt.Sprintf("%s/%d", path, f.ID)
	if resp, _ := e.do(t, "GET", one, bobS); resp.StatusCode != 404 {
		t.Fatalf("Bob reading Ada's report: %d, want 404", resp.StatusCode)
	}

	// The screenshot: as kept, not sniffed, sandboxed; Bob may not.
	resp, body = e.do(t, "GET", one+"/screenshots/1", admin)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || resp.Header.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "sandbox") {
		t.Fatalf("the screenshot = %d %v", resp.StatusCode, resp.Header)
	}
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(body)); err != nil || cfg.Width != 40 {
		t.Fatalf("the screenshot reads as %+v (%v)", cfg, err)
	}
	for who, want := range map[string]struct {
		h      http.Header
		status int
	}{"Ada": {adaS, 200}, "Bob": {bobS, 404}} {
		if resp, _ := e.do(t, "GET", one+"/screenshots/1", want.h); resp.StatusCode != want.status {
			t.Errorf("%s reading Ada's screenshot: %d, want %d", who, resp.StatusCode, want.status)
		}
	}
	if resp, _ := e.do(t, "GET", one+"/screenshots/2", admin); resp.StatusCode != 404 {
		t.Fatalf("a second screenshot of a report with one: %d", resp.StatusCode)
	}

	// Resolved by the admin; a tester cannot.
	if resp, _ := e.send(t, "POST", one+"/status", adaS, api.FeedbackStatus{Status: "resolved"}); resp.StatusCode != 403 {
		t.Fatalf("a tester resolving: %d, want 403", resp.StatusCode)
	}
	resp, body = e.send(t, "POST", one+"/status", admin, api.FeedbackStatus{Status: "resolved"})
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"status":"resolved"`) {
		t.Fatalf("resolving = %d %s", resp.StatusCode, body)
	}
	if got := list(adaS, ""); got[0].Status != betaport.FeedbackResolved {
		t.Fatalf("Ada sees her report as %s", got[0].Status)
	}
	if got := list(admin, "?status=open"); len(got) != 1 || got[0].Text != "Bob's report" {
		t.Fatalf("the open reports: %+v", got)
	}
}

// TestFeedbackIsPaced: a tester's reports come at most ten in a burst;
// the next is refused with when to send it, and kept nothing.
func TestFeedbackIsPaced(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	e.publish(t, p.ext, "1.0.0")
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	ada, _ := e.testerOf(t, p.ext, betaport.TesterActive)
	s := e.cookie(t, betaport.Session{TesterID: ada.ID})
	path := api.ExtensionPath(p.ext.ID) + "/feedback"
	for i := range 10 {
		if resp, body := e.send(t, "POST", path, s, reportForm(t, fmt.Sprintf("report %d", i), 0)); resp.StatusCode != 201 {
			t.Fatalf("report %d = %d %s", i, resp.StatusCode, body)
		}
	}
	resp, body := e.send(t, "POST", path, s, reportForm(t, "one too many", 0, pngShot(t, 4, 4)))
	if pr := wantProblem(t, resp, body, http.StatusTooManyRequests, api.ProblemTooManyRequests); resp.Header.Get("Retry-After") == "" || pr.Detail == "" {
		t.Fatalf("the eleventh report: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	resp, body = e.do(t, "GET", path+"?limit=20", admin)
	var page api.Page[betaport.Feedback]
	if json.Unmarshal(body, &page) != nil || len(page.Data) != 10 {
		t.Fatalf("after the refusal the list holds %s", body)
	}
	if n := len(e.keys(t, "feedback/")); n != 0 {
		t.Fatalf("the refused report stored %d screenshots", n)
	}
}
