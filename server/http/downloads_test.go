package http_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	bphttp "github.com/betaport/betaport/server/http"
	"github.com/betaport/betaport/server/storetest"
)

// Downloads of bundle files (zips and CRXs): on file storage the server
// sends the bytes; on S3 it answers 302 with a presigned URL and the
// storage sends them.

// isDownloadRoute reports whether a route pattern sends a bundle's file.
func isDownloadRoute(pattern string) bool {
	return strings.HasSuffix(pattern, "/download") || strings.HasSuffix(pattern, "/crx") || strings.HasSuffix(pattern, "/crx/{number}")
}

// downloadStatus is what a download answers someone allowed to have it:
// the file, or on S3 the redirect to it.
func (e *env) downloadStatus() int {
	if e.Backend == backendScaleOut {
		return http.StatusFound
	}
	return http.StatusOK
}

// fetchFile downloads a bundle file as a client that follows redirects
// does: on S3 it checks the server's redirect (302, no body, no-store, a
// URL elsewhere), then requests that URL with the same method and the
// request's Range and conditional headers, without the cookie, and returns
// the storage's answer.
func (e *env) fetchFile(t *testing.T, method, path string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	resp, body := e.do(t, method, path, header)
	if resp.StatusCode != http.StatusFound {
		// A tester's own CRX is made for the request: the server sends it
		// on S3 too (the shared package is redirected to, see
		// TestBlackBoxDownloadsEveryRoute).
		personal := resp.Header.Get("Content-Type") == api.CRXContentType
		if e.Backend == backendScaleOut && resp.StatusCode < 300 && !personal {
			t.Fatalf("%s %s on S3 = %d (%d bytes from the server), want a redirect to storage", method, path, resp.StatusCode, len(body))
		}
		return resp, body
	}
	loc := wantStorageRedirect(t, e, resp, body)
	req, err := http.NewRequest(method, loc, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"Range", "If-Range", "If-None-Match", "If-Match"} {
		if v := header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	req.Header.Set("Accept-Encoding", "identity")
	return e.roundTrip(t, req)
}

// wantStorageRedirect checks a download's redirect and returns its URL.
func wantStorageRedirect(t *testing.T, e *env, resp *http.Response, body []byte) string {
	t.Helper()
	if e.Backend != backendScaleOut {
		t.Fatalf("a download on %s answered a redirect to %s", e.Backend, resp.Header.Get("Location"))
	}
	loc := resp.Header.Get("Location")
	u, err := url.Parse(loc)
	if err != nil || !u.IsAbs() || strings.HasPrefix(loc, e.URL) {
		t.Fatalf("redirect to %q, want an absolute URL of the storage (%v)", loc, err)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("the redirect says Cache-Control %q, want no-store", cc)
	}
	if len(body) != 0 {
		t.Errorf("the redirect has a body: %q", body)
	}
	if exp := u.Query().Get("X-Amz-Expires"); exp != "300" {
		t.Errorf("the presigned URL lives %ss, want 300", exp)
	}
	return loc
}

// TestDownloadsOnAnyStorage: every way to download a bundle file gives
// its exact bytes with the file name and type the server sets, whole, in
// ranges, and revalidated, on either storage; on S3 through a presigned
// URL the server hands out only after the usual access checks.
func TestDownloadsOnAnyStorage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	team := mustTeam(t, e, p.ext)
	admin := e.adminOf(t, team)
	tester, _ := e.testerOf(t, p.ext, betaport.TesterActive)
	testerCookie := e.cookie(t, betaport.Session{TesterID: tester.ID})
	zipBytes := validZip(t, "1.2.3")
	b := p.submitAny(t, zipBytes)
	u := e.updates(t, p.ext, admin)
	_, g := checkUpdate(t, u.UpdateURL, u.ChromeID, "")
	_, codebase := offered(t, g, u.ChromeID)
	updaterPath := strings.TrimPrefix(codebase, e.URL)
	// The tester's own copy names their own update URL, which offers it.
	mine := testerUpdates(t, e, p.ext, &b, testerCookie, u)
	_, g = checkUpdate(t, mine.UpdateURL, mine.ChromeID, "")
	_, codebase = offered(t, g, mine.ChromeID)
	testerUpdaterPath := strings.TrimPrefix(codebase, e.URL)

	crxBytes := map[string][]byte{} // of each update URL
	for _, d := range []struct {
		name, path   string
		header       http.Header
		contentType  string
		fileName     string
		wantZipBytes bool
		crx          api.Updates // whose update URL a CRX names
	}{
		{"current zip, admin", api.CurrentBundlePath(p.ext.ID) + "/download", admin, api.ZipContentType, "Tab-Tamer-1.2.3.zip", true, api.Updates{}},
		{"numbered zip, tester", api.BundlesPath(p.ext.ID) + "/1/download", testerCookie, api.ZipContentType, "Tab-Tamer-1.2.3.zip", true, api.Updates{}},
		{"CRX, admin", api.BundleCRXPath(p.ext.ID, b.Number), admin, api.CRXContentType, "Tab-Tamer-1.2.3.crx", false, u},
		{"CRX, updater", updaterPath, http.Header{}, api.CRXContentType, "Tab-Tamer-1.2.3.crx", false, u},
		{"CRX, tester", api.BundleCRXPath(p.ext.ID, b.Number), testerCookie, api.CRXContentType, "Tab-Tamer-1.2.3.crx", false, mine},
		{"CRX, tester's updater", testerUpdaterPath, http.Header{}, api.CRXContentType, "Tab-Tamer-1.2.3.crx", false, mine},
	} {
		t.Run(d.name, func(t *testing.T) {
			resp, body := e.fetchFile(t, "GET", d.path, d.header)
			if resp.StatusCode != 200 {
				t.Fatalf("GET = %d %s", resp.StatusCode, body)
			}
			if d.wantZipBytes && !bytes.Equal(body, zipBytes) {
				t.Fatalf("got %d bytes that are not the bundle's %d", len(body), len(zipBytes))
			}
			if !d.wantZipBytes {
				wantCRX(t, body, d.crx, "1.2.3", "")
				if had := crxBytes[d.crx.UpdateURL]; had != nil && !bytes.Equal(body, had) {
					t.Fatal("the updater and the builds page got different CRXs")
				}
				crxBytes[d.crx.UpdateURL] = body
			}
			if ct := resp.Header.Get("Content-Type"); ct != d.contentType {
				t.Errorf("Content-Type %q, want %q", ct, d.contentType)
			}
			if cd := resp.Header.Get("Content-Disposition"); cd != `attachment; filename="`+d.fileName+`"` {
				t.Errorf("Content-Disposition %q, want the file named %s", cd, d.fileName)
			}
			if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
				t.Errorf("Content-Length %q for %d bytes", cl, len(body))
			}
			etag := resp.Header.Get("ETag")
			if e.Backend == backendFiles && d.wantZipBytes && etag != `"`+b.SHA256+`"` {
				t.Errorf("ETag %q, want the SHA-256", etag)
			}
			if etag == "" {
				t.Fatal("no ETag")
			}
			// A resumed download gets the rest.
			ranged := http.Header{"Range": {"bytes=10-"}}
			for k, v := range d.header {
				ranged[k] = v
			}
			resp, rest := e.fetchFile(t, "GET", d.path, ranged)
			if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(rest, body[10:]) ||
				resp.Header.Get("Content-Range") != fmt.Sprintf("bytes 10-%d/%d", len(body)-1, len(body)) {
				t.Fatalf("range download = %d, %d bytes, Content-Range %q", resp.StatusCode, len(rest), resp.Header.Get("Content-Range"))
			}
			// A copy the client has is still good.
			revalidate := http.Header{"If-None-Match": {etag}}
			for k, v := range d.header {
				revalidate[k] = v
			}
			if resp, body := e.fetchFile(t, "GET", d.path, revalidate); resp.StatusCode != http.StatusNotModified || len(body) != 0 {
				t.Fatalf("If-None-Match its ETag = %d, %d bytes", resp.StatusCode, len(body))
			}
			// HEAD says what a GET would send, without the bytes.
			resp, none := e.fetchFile(t, "HEAD", d.path, d.header)
			if resp.StatusCode != 200 || len(none) != 0 || resp.Header.Get("Content-Length") != strconv.Itoa(len(body)) ||
				resp.Header.Get("Content-Type") != d.contentType || resp.Header.Get("Content-Disposition") != `attachment; filename="`+d.fileName+`"` {
				t.Fatalf("HEAD = %d, %d bytes, headers %v", resp.StatusCode, len(none), resp.Header)
			}
		})
	}

	// Whoever may not have the file gets the problem they got before: no
	// redirect, so no URL to the bytes.
	otherTeam := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	otherExt := storetest.MustExtension(t, e.DB, otherTeam, "Other")
	otherTester, _ := e.testerOf(t, otherExt, betaport.TesterActive)
	revoked, _ := e.testerOf(t, p.ext, betaport.TesterActive)
	if err := e.DB.RevokeTester(context.Background(), revoked.ID, "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	// A session made after the revoke: the tester's status alone refuses it.
	revokedCookie := e.cookie(t, betaport.Session{TesterID: revoked.ID})
	refused := []struct {
		who    string
		header http.Header
		status int
		typ    string
	}{
		{"anonymous", http.Header{}, 401, api.ProblemUnauthorized},
		{"admin of another team", e.adminOf(t, otherTeam), 404, api.ProblemNotFound},
		{"tester of another extension", e.cookie(t, betaport.Session{TesterID: otherTester.ID}), 404, api.ProblemNotFound},
		{"revoked tester", revokedCookie, 401, api.ProblemAccessEnded},
	}
	for _, path := range []string{
		api.CurrentBundlePath(p.ext.ID) + "/download",
		api.BundlesPath(p.ext.ID) + "/1/download",
		api.BundleCRXPath(p.ext.ID, 1),
	} {
		for _, r := range refused {
			for _, method := range []string{"GET", "HEAD"} {
				resp, body := e.do(t, method, path, r.header)
				if loc := resp.Header.Get("Location"); loc != "" {
					t.Fatalf("%s %s as %s: redirected to %s", method, path, r.who, loc)
				}
				if method == "GET" {
					wantProblem(t, resp, body, r.status, r.typ)
				} else if resp.StatusCode != r.status {
					t.Fatalf("HEAD %s as %s = %d, want %d", path, r.who, resp.StatusCode, r.status)
				}
			}
		}
	}
	// A bundle that does not exist, and the updater's route with a wrong
	// token, are not found, with no URL either.
	for _, path := range []string{
		api.BundlesPath(p.ext.ID) + "/2/download",
		api.BundleCRXPath(p.ext.ID, 2),
		strings.Replace(updaterPath, strings.Split(strings.TrimPrefix(u.UpdateURL, e.URL+api.UpdatePrefix), "/")[1], "wrong-token", 1),
	} {
		resp, body := e.do(t, "GET", path, admin)
		if resp.Header.Get("Location") != "" {
			t.Fatalf("GET %s redirected to %s", path, resp.Header.Get("Location"))
		}
		wantProblem(t, resp, body, 404, api.ProblemNotFound)
	}
}

// TestDownloadURLExpires: on S3 a download's presigned URL stops working
// when it expires; asking the server again gives a new one that works.
func TestDownloadURLExpires(t *testing.T) {
	// Not parallel: it sets how long the package's download URLs live.
	e := newEnv(t)
	if e.Backend != backendScaleOut {
		t.Skip("file storage sends the bytes itself: there is no URL to expire (this runs on S3, in TestOnPostgresAndS3)")
	}
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	zipBytes := validZip(t, "2.0")
	p.submitAny(t, zipBytes)
	path := api.CurrentBundlePath(p.ext.ID) + "/download"

	t.Cleanup(bphttp.SetDownloadURLExpiry(time.Second))
	resp, _ := e.do(t, "GET", path, admin)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("download = %d, want a redirect", resp.StatusCode)
	}
	loc, _ := url.Parse(resp.Header.Get("Location"))
	signed, err := time.Parse("20060102T150405Z", loc.Query().Get("X-Amz-Date"))
	if err != nil || loc.Query().Get("X-Amz-Expires") != "1" {
		t.Fatalf("presigned URL %s: date %v, expires %q", loc, err, loc.Query().Get("X-Amz-Expires"))
	}
	// The storage's clock is this machine's; a second past the expiry (the
	// date is to the second) the URL is refused.
	time.Sleep(time.Until(signed.Add(2*time.Second + 100*time.Millisecond)))
	expired, body := get(t, loc.String())
	if expired.StatusCode != http.StatusForbidden || bytes.Contains(body, zipBytes[:30]) {
		t.Fatalf("an expired download URL answered %d %s", expired.StatusCode, body)
	}
	t.Logf("the expired URL answered %d %.200s", expired.StatusCode, body)

	bphttp.SetDownloadURLExpiry(5 * time.Minute)
	if resp, body := e.fetchFile(t, "GET", path, admin); resp.StatusCode != 200 || !bytes.Equal(body, zipBytes) {
		t.Fatalf("asking again = %d, %d bytes", resp.StatusCode, len(body))
	}
}
