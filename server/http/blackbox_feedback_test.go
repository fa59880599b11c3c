package http_test

// Black-box tests of issue 32: testers' feedback with screenshots, from the
// builds page and from inside the extension.
//
// Written by a second pair of eyes from the issue, the OpenAPI document
// (tag "feedback") and the public types in app/api and app/betaport only,
// not from the implementation. Every request goes through the env's
// contract check. Like every test built on newEnv they run on (SQLite,
// files) here and on (PostgreSQL, S3) with BETAPORT_HTTP_BACKEND=postgres+s3.
//
// Every refused request is checked to answer a problem document whose
// detail says what to do, and to leave the storage as it was: the admin's
// reports, the blobs under "feedback/" and the audit trail, read before and
// after. Refusals are made by a tester of their own where the per-tester
// rate limit could otherwise answer in their place.

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	_ "golang.org/x/image/webp" // image.Decode reads what the server kept, whatever it is

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/demo"
	"github.com/betaport/betaport/server/metrics"
	"github.com/betaport/betaport/server/storetest"
)

// ------------------------------------------------------------ the world

// bbfbUA is the browser the testers use: Chrome on Linux.
const bbfbUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"

// bbfbWorld is one extension with its admin and the bundles published on
// its default channel, versions 1.0.0, 1.0.1… by number.
type bbfbWorld struct {
	e     *env
	team  *betaport.Team
	ext   *betaport.Extension
	admin http.Header
}

func newBBFBWorld(t *testing.T, versions ...string) *bbfbWorld {
	t.Helper()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Feedback Lab")
	w := &bbfbWorld{e: e, team: team, ext: ext, admin: e.adminOf(t, team)}
	for _, v := range versions {
		e.publish(t, ext, v)
	}
	return w
}

// bbfbTester is an active tester and their signed-in browser (Chrome on
// Linux).
type bbfbTester struct {
	*betaport.Tester
	session http.Header
}

func (w *bbfbWorld) tester(t *testing.T) *bbfbTester {
	t.Helper()
	tt, _ := w.e.testerOf(t, w.ext, betaport.TesterActive)
	h := w.e.cookie(t, betaport.Session{TesterID: tt.ID})
	h.Set("User-Agent", bbfbUA)
	return &bbfbTester{Tester: tt, session: h}
}

// updatePath is the path of the tester's own update URL (their copy's
// update_url).
func (w *bbfbWorld) updatePath(t *testing.T, tt *bbfbTester) string {
	t.Helper()
	u, err := w.e.App.Publish.TesterUpdateURL(context.Background(), w.ext, tt.Tester)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := strings.CutPrefix(u, w.e.URL)
	if !ok || !strings.HasPrefix(p, api.UpdatePrefix) {
		t.Fatalf("the tester's update URL %q is not one of this server's", u)
	}
	return p
}

// updates is what the admin's updates page shows: the Chrome ID and the
// shared update URL's path.
func (w *bbfbWorld) updates(t *testing.T) (chromeID, sharedPath string) {
	t.Helper()
	resp, body := w.e.do(t, "GET", api.UpdatesPath(w.ext.ID), w.admin)
	var u api.Updates
	if resp.StatusCode != 200 || json.Unmarshal(body, &u) != nil || len(u.ChromeID) != 32 || u.UpdateURL == "" {
		t.Fatalf("GET updates = %d %s", resp.StatusCode, body)
	}
	p, ok := strings.CutPrefix(u.UpdateURL, w.e.URL)
	if !ok {
		t.Fatalf("the shared update URL %q is not one of this server's", u.UpdateURL)
	}
	return u.ChromeID, p
}

// bbfbPublishOn stores zip and publishes it as ext's next bundle on
// channel, as the seed does; it returns the bundle's number.
func bbfbPublishOn(t *testing.T, e *env, ext *betaport.Extension, version string, zip []byte, files int, channel string) int64 {
	t.Helper()
	ctx := context.Background()
	sum := sha256.Sum256(zip)
	b := &betaport.Bundle{ExtensionID: ext.ID, Name: ext.Name, Version: version, ManifestVersion: 3,
		Size: int64(len(zip)), SHA256: hex.EncodeToString(sum[:]), FileCount: files, Source: "test",
		Placement: betaport.Placement{Channel: channel}}
	b.BlobKey = betaport.BundleKey(ext.ID, b.SHA256)
	if err := e.Blobs.WriteAll(ctx, b.BlobKey, zip, &blob.WriterOptions{ContentType: "application/zip"}); err != nil {
		t.Fatal(err)
	}
	if err := e.DB.PublishBundle(ctx, b); err != nil {
		t.Fatal(err)
	}
	if b.Number == 0 {
		t.Fatal("PublishBundle gave the bundle no number")
	}
	return b.Number
}

// ------------------------------------------------------------ forms

// bbfbPart is one part of a multipart form.
type bbfbPart struct {
	name, filename, ctype string
	data                  []byte
}

func bbfbText(s string) bbfbPart        { return bbfbPart{name: "text", data: []byte(s)} }
func bbfbField(name, v string) bbfbPart { return bbfbPart{name: name, data: []byte(v)} }

// bbfbShot is a screenshot part declared as ctype, named as a browser
// names a file of that type.
func bbfbShot(ctype string, data []byte) bbfbPart {
	ext := map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp", "image/gif": ".gif",
		"image/svg+xml": ".svg"}[ctype]
	if ext == "" {
		ext = ".bin"
	}
	return bbfbPart{name: "screenshots", filename: "screenshot" + ext, ctype: ctype, data: data}
}

func bbfbForm(parts ...bbfbPart) rawBody {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		disp := fmt.Sprintf("form-data; name=%q", p.name)
		if p.filename != "" {
			disp += fmt.Sprintf("; filename=%q", p.filename)
		}
		h.Set("Content-Disposition", disp)
		if p.ctype != "" {
			h.Set("Content-Type", p.ctype)
		}
		pw, _ := mw.CreatePart(h)
		pw.Write(p.data)
	}
	mw.Close()
	return rawBody{contentType: mw.FormDataContentType(), data: buf.Bytes()}
}

// post sends a report from the builds page as who.
func (w *bbfbWorld) post(t *testing.T, who http.Header, parts ...bbfbPart) (*http.Response, []byte) {
	t.Helper()
	return w.e.send(t, "POST", api.FeedbackPath(w.ext.ID), who, bbfbForm(parts...))
}

// kept checks a 201 with the report and its Location, and returns it.
func (w *bbfbWorld) kept(t *testing.T, what string, resp *http.Response, body []byte) betaport.Feedback {
	t.Helper()
	var f betaport.Feedback
	if resp.StatusCode != 201 || json.Unmarshal(body, &f) != nil || f.ID == 0 {
		t.Fatalf("%s: %d %s; want 201 with the report", what, resp.StatusCode, body)
	}
	if loc := resp.Header.Get("Location"); !strings.HasSuffix(loc, api.FeedbackReportPath(w.ext.ID, f.ID)) {
		t.Errorf("%s: Location %q, want the report's path %s", what, loc, api.FeedbackReportPath(w.ext.ID, f.ID))
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("%s: Content-Type %q, want JSON", what, resp.Header.Get("Content-Type"))
	}
	return f
}

func (w *bbfbWorld) mustPost(t *testing.T, who http.Header, parts ...bbfbPart) betaport.Feedback {
	t.Helper()
	resp, body := w.post(t, who, parts...)
	return w.kept(t, "a report from the builds page", resp, body)
}

// ------------------------------------------------------------ reading

// list reads one page of reports as who.
func (w *bbfbWorld) list(t *testing.T, who http.Header, query string) api.Page[betaport.Feedback] {
	t.Helper()
	path := api.FeedbackPath(w.ext.ID)
	if query != "" {
		path += "?" + query
	}
	resp, body := w.e.do(t, "GET", path, who)
	var page api.Page[betaport.Feedback]
	if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil || page.Data == nil {
		t.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
	}
	return page
}

// all reads every report who sees with query, page by page, and checks
// they come newest first.
func (w *bbfbWorld) all(t *testing.T, who http.Header, query string) []betaport.Feedback {
	t.Helper()
	q := "limit=100"
	if query != "" {
		q += "&" + query
	}
	var out []betaport.Feedback
	for cursor := ""; ; {
		qq := q
		if cursor != "" {
			qq += "&cursor=" + url.QueryEscape(cursor)
		}
		page := w.list(t, who, qq)
		out = append(out, page.Data...)
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
		if len(out) > 1000 {
			t.Fatal("the feedback list does not end")
		}
	}
	bbfbNewestFirst(t, query, out)
	return out
}

func bbfbNewestFirst(t *testing.T, what string, list []betaport.Feedback) {
	t.Helper()
	for i := 1; i < len(list); i++ {
		if list[i].ID >= list[i-1].ID || list[i].CreatedAt.After(list[i-1].CreatedAt) {
			t.Fatalf("%s: the list is not newest first: %v", what, bbfbIDs(list))
		}
	}
}

func bbfbIDs(list []betaport.Feedback) []int64 {
	var ids []int64
	for _, f := range list {
		ids = append(ids, f.ID)
	}
	return ids
}

// audit reads the whole audit trail.
func (w *bbfbWorld) audit(t *testing.T) []betaport.AuditEvent {
	t.Helper()
	var out []betaport.AuditEvent
	for cursor := ""; ; {
		path := api.ExtensionPath(w.ext.ID) + "/audit?limit=100"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		resp, body := w.e.do(t, "GET", path, w.admin)
		var page api.Page[betaport.AuditEvent]
		if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil {
			t.Fatalf("GET audit = %d %s", resp.StatusCode, body)
		}
		out = append(out, page.Data...)
		if cursor = page.NextCursor; cursor == "" || len(out) > 1000 {
			return out
		}
	}
}

// auditCount counts the audit trail's entries of action.
func (w *bbfbWorld) auditCount(t *testing.T, action string) int {
	t.Helper()
	n := 0
	for _, a := range w.audit(t) {
		if a.Action == action {
			n++
		}
	}
	return n
}

// blobs lists the stored screenshots.
func (w *bbfbWorld) blobs(t *testing.T) []string {
	t.Helper()
	keys := w.e.keys(t, "feedback/")
	slices.Sort(keys)
	return keys
}

// state is everything a refused request must leave as it was: the
// admin's reports, the stored screenshots and the audit trail.
func (w *bbfbWorld) state(t *testing.T) string {
	t.Helper()
	var out strings.Builder
	for _, f := range w.all(t, w.admin, "") {
		fmt.Fprintf(&out, "report %d by %d on %d (%q) %s from %s, %d screenshots: %q\n",
			f.ID, f.TesterID, f.BundleNumber, f.Version, f.Status, f.Source, len(f.Screenshots), f.Text)
	}
	for _, k := range w.blobs(t) {
		fmt.Fprintf(&out, "blob %s\n", k)
	}
	for _, a := range w.audit(t) {
		fmt.Fprintf(&out, "audit %d %s %s %s\n", a.ID, a.Actor, a.Action, a.Subject)
	}
	return out.String()
}

func (w *bbfbWorld) wantSame(t *testing.T, what, before string) {
	t.Helper()
	if after := w.state(t); after != before {
		t.Errorf("%s changed what is stored:\nbefore:\n%s\nafter:\n%s", what, before, after)
	}
}

// bbfbRefused checks a refusal: one of statuses, as a problem document with
// a title and a detail that says something.
func bbfbRefused(t *testing.T, what string, resp *http.Response, body []byte, statuses ...int) api.Problem {
	t.Helper()
	if !slices.Contains(statuses, resp.StatusCode) {
		t.Fatalf("%s: %d %s; want one of %v", what, resp.StatusCode, body, statuses)
	}
	var p api.Problem
	if ct := resp.Header.Get("Content-Type"); ct != api.ProblemContentType || json.Unmarshal(body, &p) != nil {
		t.Fatalf("%s: %d %q %s; want a problem document", what, resp.StatusCode, ct, body)
	}
	if p.Status != resp.StatusCode || p.Type == "" || p.Title == "" || len(p.Detail) < 20 {
		t.Fatalf("%s: problem %s; want its status, a type, a title and a detail that says what to do", what, body)
	}
	return p
}

// ------------------------------------------------------------ images

func bbfbPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.NRGBA{uint8(x * 7), uint8(y * 13), 200, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// bbfbGrayPNG is a real, decodable, all-black PNG: tiny on the wire
// whatever its size in pixels.
func bbfbGrayPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func bbfbJPEG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 5), 90, uint8(y * 9), 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// bbfbWebP is a 1×1 lossless WebP.
var bbfbWebP = []byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00")

func bbfbGIF(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	img := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, color.White})
	if err := gif.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// bbfbChunk is one PNG chunk with its CRC.
func bbfbChunk(typ string, data []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	out = append(out, typ...)
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(append([]byte(typ), data...)))
}

// bbfbPNGHeaderBomb is a PNG whose IHDR says w×h gray pixels, followed by
// a few bytes of image data: a decoder that believes the header allocates
// w×h bytes before it reads them.
func bbfbPNGHeaderBomb(w, h uint32) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 0, 0, 0, 0) // 8-bit gray, deflate, filter 0, no interlace
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(make([]byte, 4096))
	zw.Close()
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, bbfbChunk("IHDR", ihdr)...)
	out = append(out, bbfbChunk("IDAT", z.Bytes())...)
	return append(out, bbfbChunk("IEND", nil)...)
}

// bbfbWithPNGChunk inserts a chunk right after a PNG's IHDR.
func bbfbWithPNGChunk(t *testing.T, p []byte, typ string, data []byte) []byte {
	t.Helper()
	const afterIHDR = 8 + 8 + 13 + 4
	if string(p[12:16]) != "IHDR" {
		t.Fatal("not a PNG starting with IHDR")
	}
	return slices.Concat(p[:afterIHDR], bbfbChunk(typ, data), p[afterIHDR:])
}

// bbfbJPEGSegment inserts a marker segment right after a JPEG's SOI.
func bbfbJPEGSegment(j []byte, marker byte, payload []byte) []byte {
	seg := []byte{0xFF, marker}
	seg = binary.BigEndian.AppendUint16(seg, uint16(len(payload)+2))
	seg = append(seg, payload...)
	return slices.Concat(j[:2], seg, j[2:])
}

// bbfbJPEGHeaderBomb is a small JPEG whose frame header (SOF0) says
// 65000×65000.
func bbfbJPEGHeaderBomb(t *testing.T) []byte {
	t.Helper()
	j := bbfbJPEG(t, 16, 16)
	i := bytes.Index(j, []byte{0xFF, 0xC0})
	if i < 0 {
		t.Fatal("the JPEG has no SOF0")
	}
	j = slices.Clone(j)
	binary.BigEndian.PutUint16(j[i+5:], 65000) // height
	binary.BigEndian.PutUint16(j[i+7:], 65000) // width
	return j
}

// bbfbWebPHeaderBomb is the 1×1 WebP with its VP8L header saying
// 16384×16384.
func bbfbWebPHeaderBomb() []byte {
	b := slices.Clone(bbfbWebP)
	// After "VP8L", its size and the 0x2f signature: 14 bits width-1, 14
	// bits height-1, 1 bit alpha, 3 bits version.
	binary.LittleEndian.PutUint32(b[21:], 16383|16383<<14|1<<28)
	return b
}

// bbfbNoisePNG is an uncompressed PNG of random pixels of about n bytes.
func bbfbNoisePNG(t *testing.T, n int) []byte {
	t.Helper()
	side := 1
	for side*side*4 < n {
		side++
	}
	img := image.NewNRGBA(image.Rect(0, 0, side, side))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(r.Uint32())
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// screenshot fetches screenshot n of report f as who, and checks how it
// is served: its own type (the one the report gives, and what its bytes
// are), never sniffed, sandboxed; it decodes to the report's size.
func (w *bbfbWorld) screenshot(t *testing.T, who http.Header, f betaport.Feedback, n int) []byte {
	t.Helper()
	resp, body := w.e.do(t, "GET", api.FeedbackScreenshotPath(w.ext.ID, f.ID, n), who)
	if resp.StatusCode != 200 {
		t.Fatalf("GET screenshot %d of report %d = %d %s", n, f.ID, resp.StatusCode, body)
	}
	sc := f.Screenshots[n-1]
	if ct := resp.Header.Get("Content-Type"); ct != sc.Type || (ct != "image/png" && ct != "image/jpeg") {
		t.Errorf("screenshot %d served as %q; the report says %q (PNG or JPEG)", n, ct, sc.Type)
	}
	if sniffed := http.DetectContentType(body); sniffed != sc.Type {
		t.Errorf("screenshot %d is %s by its bytes, served as %s", n, sniffed, sc.Type)
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("screenshot %d without X-Content-Type-Options: nosniff: %v", n, resp.Header)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "sandbox") {
		t.Errorf("screenshot %d: Content-Security-Policy %q, want a sandbox", n, csp)
	}
	// Only the extension's admins and its tester may see it: no shared
	// cache may keep it.
	if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "private") && !strings.Contains(cc, "no-store") {
		t.Errorf("screenshot %d: Cache-Control %q lets a shared cache keep it", n, cc)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(body))
	if err != nil || cfg.Width != sc.Width || cfg.Height != sc.Height || int64(len(body)) != sc.Size {
		t.Errorf("screenshot %d: %d bytes decode to %dx%d (%v); the report says %dx%d, %d bytes",
			n, len(body), cfg.Width, cfg.Height, err, sc.Width, sc.Height, sc.Size)
	}
	return body
}

// ------------------------------------------------------------ events

// bbfbFeedbackEvents reads the "feedback" events of an event stream.
func bbfbFeedbackEvents(t *testing.T, e *env, extID int64, header http.Header) <-chan int64 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", e.URL+api.EventsPath(extID), nil)
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		resp.Body.Close()
		t.Fatalf("events = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := make(chan int64, 64)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			if name, ok := strings.CutPrefix(line, "event: "); ok {
				event = name
			}
			if data, ok := strings.CutPrefix(line, "data: "); ok && event == "feedback" {
				var m map[string]int64
				if json.Unmarshal([]byte(data), &m) != nil {
					out <- -1
					continue
				}
				n, ok := m["feedback"]
				if !ok {
					n = -1
				}
				out <- n
			}
			if line == "" {
				event = ""
			}
		}
	}()
	return out
}

// bbfbAwait waits for a "feedback" event whose revision satisfies ok.
func bbfbAwait(t *testing.T, events <-chan int64, what string, ok func(int64) bool) int64 {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case n, open := <-events:
			if !open {
				t.Fatalf("%s: the event stream ended", what)
			}
			if n < 0 {
				t.Fatalf("%s: a feedback event without its revision", what)
			}
			if ok(n) {
				return n
			}
		case <-deadline:
			t.Fatalf("%s: no such feedback event in 20 s", what)
		}
	}
}

// ------------------------------------------------------------ metrics

// bbfbMetric reads a counter of m with exactly these labels (0 when
// absent).
func bbfbMetric(t *testing.T, m *metrics.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	line := regexp.MustCompile(`^` + regexp.QuoteMeta(name) + `\{([^}]*)\} (\S+)$`)
	pair := regexp.MustCompile(`(\w+)="([^"]*)"`)
	for _, l := range strings.Split(rec.Body.String(), "\n") {
		mm := line.FindStringSubmatch(l)
		if mm == nil {
			continue
		}
		got := map[string]string{}
		for _, p := range pair.FindAllStringSubmatch(mm[1], -1) {
			got[p[1]] = p[2]
		}
		if fmt.Sprint(got) == fmt.Sprint(labels) {
			v, _ := strconv.ParseFloat(mm[2], 64)
			return v
		}
	}
	return 0
}

// bbfbRefusedMetric sums a source's refused reports (every outcome but
// received).
func bbfbRefusedMetric(t *testing.T, m *metrics.Metrics, source string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	line := regexp.MustCompile(`^betaport_feedback_reports_total\{([^}]*)\} (\S+)$`)
	sum := 0.0
	for _, l := range strings.Split(rec.Body.String(), "\n") {
		mm := line.FindStringSubmatch(l)
		if mm == nil || !strings.Contains(mm[1], `source="`+source+`"`) || strings.Contains(mm[1], `outcome="received"`) {
			continue
		}
		v, _ := strconv.ParseFloat(mm[2], 64)
		sum += v
	}
	return sum
}

// ============================================================ the tests

// From the builds page: text and screenshots of each accepted type, on the
// build the tester gets, with their browser and system; the report reads
// back the same to its tester and the admin; each screenshot is served
// with its own type, nosniff and a sandbox, and is stored once. An old
// build by number, a version, text at the limit and text that looks like
// HTML are kept as given.
func TestBlackBoxFeedbackFromBuildsPage(t *testing.T) {
	t.Parallel()
	w := newBBFBWorld(t, "1.0.0", "1.0.1", "1.0.2")
	ada := w.tester(t)

	text := "The popup is blank after install.\n\tSteps: open it, click «Sync»."
	f := w.mustPost(t, ada.session, bbfbText(text),
		bbfbShot("image/png", bbfbPNG(t, 40, 30)), bbfbShot("image/jpeg", bbfbJPEG(t, 32, 24)), bbfbShot("image/webp", bbfbWebP))
	if f.ExtensionID != w.ext.ID || f.TesterID != ada.ID || f.BundleNumber != 3 || f.Version != "1.0.2" || f.Text != text ||
		f.Source != betaport.FeedbackFromBuildsPage || f.Status != betaport.FeedbackNew || f.CreatedAt.IsZero() {
		t.Fatalf("the report as kept: %+v; want tester %d's, on bundle 3 (1.0.2), new, from the builds page, the text as sent", f, ada.ID)
	}
	if !strings.Contains(f.Browser, "Chrome") || !strings.Contains(f.OS, "Linux") {
		t.Errorf("browser %q and OS %q; the request was from Chrome on Linux (%s)", f.Browser, f.OS, bbfbUA)
	}
	sizes := [][2]int{{40, 30}, {32, 24}, {1, 1}}
	if len(f.Screenshots) != 3 {
		t.Fatalf("the report has %d screenshots, want 3: %+v", len(f.Screenshots), f.Screenshots)
	}
	for i, sc := range f.Screenshots {
		if sc.Number != i+1 || sc.Width != sizes[i][0] || sc.Height != sizes[i][1] || sc.Size <= 0 {
			t.Errorf("screenshot %d: %+v, want number %d, %dx%d", i+1, sc, i+1, sizes[i][0], sizes[i][1])
		}
	}
	if keys := w.blobs(t); len(keys) != 3 {
		t.Errorf("stored under feedback/: %q; want the 3 screenshots", keys)
	}
	// The tester and the admin read the same report and screenshots.
	for who, h := range map[string]http.Header{"the tester": ada.session, "the admin": w.admin} {
		resp, body := w.e.do(t, "GET", api.FeedbackReportPath(w.ext.ID, f.ID), h)
		var got betaport.Feedback
		if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil || got.ID != f.ID || got.Text != text ||
			got.BundleNumber != 3 || len(got.Screenshots) != 3 || got.Status != betaport.FeedbackNew {
			t.Errorf("%s reads the report: %d %s", who, resp.StatusCode, body)
		}
		for n := 1; n <= 3; n++ {
			w.screenshot(t, h, f, n)
		}
	}
	resp, body := w.e.do(t, "GET", api.FeedbackScreenshotPath(w.ext.ID, f.ID, 4), w.admin)
	bbfbRefused(t, "screenshot 4 of a report of 3", resp, body, 404)

	// On an old build of theirs, by number; by the version their copy
	// runs; by a version no build has.
	if old := w.mustPost(t, ada.session, bbfbText("Still broken on the first build"), bbfbField("bundle", "1")); old.BundleNumber != 1 || old.Version != "1.0.0" {
		t.Errorf("a report on bundle 1: kept on %d (%q), want 1 (1.0.0)", old.BundleNumber, old.Version)
	}
	if byVersion := w.mustPost(t, ada.session, bbfbText("My copy runs 1.0.1"), bbfbField("version", "1.0.1")); byVersion.BundleNumber != 2 || byVersion.Version != "1.0.1" {
		t.Errorf("a report from version 1.0.1: kept on %d (%q), want 2 (1.0.1)", byVersion.BundleNumber, byVersion.Version)
	}
	if unknown := w.mustPost(t, ada.session, bbfbText("Built it myself"), bbfbField("version", "9.9.9")); unknown.BundleNumber != 0 || unknown.Version != "9.9.9" {
		t.Errorf("a report from version 9.9.9, which no build has: kept on %d (%q), want no number and 9.9.9", unknown.BundleNumber, unknown.Version)
	}

	// Text at the limit, in bytes, ASCII and not.
	for _, s := range []string{strings.Repeat("a", betaport.MaxFeedbackText), strings.Repeat("é", betaport.MaxFeedbackText/2)} {
		if got := w.mustPost(t, ada.session, bbfbText(s)); got.Text != s {
			t.Errorf("a report of exactly %d bytes came back as %d bytes", len(s), len(got.Text))
		}
	}

	// Text that looks like HTML is plain text: it comes back as it was
	// sent, in JSON, never as a page.
	html := `<script>alert(document.cookie)</script><img src=x onerror="alert(1)"> & </textarea><b>bold</b>`
	resp, body = w.post(t, ada.session, bbfbText(html))
	hf := w.kept(t, "a report with HTML in it", resp, body)
	if hf.Text != html || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("a report with HTML: text %q (nosniff %q), want it as sent", hf.Text, resp.Header.Get("X-Content-Type-Options"))
	}
	for _, who := range []http.Header{w.admin, ada.session} {
		resp, body := w.e.do(t, "GET", api.FeedbackReportPath(w.ext.ID, hf.ID), who)
		var got betaport.Feedback
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			json.Unmarshal(body, &got) != nil || got.Text != html {
			t.Errorf("reading the report with HTML: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}

	// The tester's list is theirs, newest first, with the statuses.
	mine := w.all(t, ada.session, "")
	if len(mine) != 7 || mine[0].ID != hf.ID || mine[len(mine)-1].ID != f.ID {
		t.Errorf("the tester's list: %v; want their 7 reports, newest first", bbfbIDs(mine))
	}
}

// Hostile and broken images are refused, whatever else the report holds,
// with a problem that says what is accepted, and nothing is kept: no
// report, no blob, no audit entry. Headers claiming huge sizes are refused
// quickly, without decoding; the service keeps working after them.
func TestBlackBoxFeedbackHostileImages(t *testing.T) {
	t.Parallel()
	w := newBBFBWorld(t, "1.0.0")
	ada := w.tester(t)
	w.mustPost(t, ada.session, bbfbText("a report that is there before"), bbfbShot("image/png", bbfbPNG(t, 8, 8)))

	good := bbfbPNG(t, 20, 10)
	pngB, jpgB := bbfbPNG(t, 16, 16), bbfbJPEG(t, 16, 16)
	svg := []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload="alert(1)"><script>fetch('/api/extensions').then(r=>r.text()).then(alert)</script></svg>`)
	type imgCase struct {
		name  string
		shots []bbfbPart
		kind  string // "type": the detail names what to attach; "limit": it states the limit
	}
	cases := []imgCase{
		{"an SVG with a script, declared image/svg+xml", []bbfbPart{bbfbShot("image/svg+xml", svg)}, "type"},
		{"an SVG with a script, declared image/png", []bbfbPart{{name: "screenshots", filename: "shot.png", ctype: "image/png", data: svg}}, "type"},
		{"PNG bytes declared image/jpeg", []bbfbPart{bbfbShot("image/jpeg", pngB)}, "type"},
		{"JPEG bytes declared image/png", []bbfbPart{bbfbShot("image/png", jpgB)}, "type"},
		{"HTML declared image/png", []bbfbPart{bbfbShot("image/png", []byte("<!doctype html><html><script>alert(1)</script></html>"))}, "type"},
		{"a GIF", []bbfbPart{bbfbShot("image/gif", bbfbGIF(t))}, "type"},
		{"a GIF declared image/png", []bbfbPart{bbfbShot("image/png", bbfbGIF(t))}, "type"},
		{"an empty file", []bbfbPart{bbfbShot("image/png", nil)}, "type"},
		{"a truncated PNG", []bbfbPart{bbfbShot("image/png", pngB[:len(pngB)/2])}, "type"},
		{"a truncated JPEG", []bbfbPart{bbfbShot("image/jpeg", jpgB[:len(jpgB)/2])}, "type"},
		{"a WebP cut after its header", []bbfbPart{bbfbShot("image/webp", bbfbWebP[:25])}, "type"},
		{"a good screenshot, then a GIF", []bbfbPart{bbfbShot("image/png", good), bbfbShot("image/gif", bbfbGIF(t))}, "type"},
		{"two good screenshots, then an SVG", []bbfbPart{bbfbShot("image/png", good), bbfbShot("image/jpeg", jpgB), bbfbShot("image/svg+xml", svg)}, "type"},
		{"a PNG whose header says 100000×100000", []bbfbPart{bbfbShot("image/png", bbfbPNGHeaderBomb(100000, 100000))}, "limit"},
		{"a good screenshot, then a PNG whose header says 100000×100000", []bbfbPart{bbfbShot("image/png", good), bbfbShot("image/png", bbfbPNGHeaderBomb(100000, 100000))}, "limit"},
		{"a PNG whose header says 20000×1 (over 8192 a side)", []bbfbPart{bbfbShot("image/png", bbfbPNGHeaderBomb(20000, 1))}, "limit"},
		{"a JPEG whose header says 65000×65000", []bbfbPart{bbfbShot("image/jpeg", bbfbJPEGHeaderBomb(t))}, "limit"},
		{"a WebP whose header says 16384×16384", []bbfbPart{bbfbShot("image/webp", bbfbWebPHeaderBomb())}, "limit"},
		{"a real PNG of 4001×4001 (16,008,001 pixels)", []bbfbPart{bbfbShot("image/png", bbfbGrayPNG(t, 4001, 4001))}, "limit"},
		{"a real PNG of 4100×4100 (16,810,000 pixels, over 16 Mi too)", []bbfbPart{bbfbShot("image/png", bbfbGrayPNG(t, 4100, 4100))}, "limit"},
		{"a real PNG of 8193×2", []bbfbPart{bbfbShot("image/png", bbfbGrayPNG(t, 8193, 2))}, "limit"},
		{"a PNG of 5.5 MB", []bbfbPart{bbfbShot("image/png", bbfbNoisePNG(t, 5_500_000))}, "limit"},
		{"a PNG of 5.1 MB (over 5 MB, under 5 MiB)", []bbfbPart{bbfbShot("image/png", bbfbNoisePNG(t, 5_100_000))}, "limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			who := w.tester(t) // each their own, so that no rate limit answers in the check's place
			before := w.state(t)
			start := time.Now()
			resp, body := w.post(t, who.session, append([]bbfbPart{bbfbText("see the screenshot: " + c.name)}, c.shots...)...)
			took := time.Since(start)
			p := bbfbRefused(t, c.name, resp, body, 400, 413, 415, 422)
			t.Logf("%d %s in %v: %s", resp.StatusCode, p.Type, took.Round(time.Millisecond), p.Detail)
			switch c.kind {
			case "type":
				if !strings.Contains(p.Detail, "PNG") || !strings.Contains(p.Detail, "JPEG") {
					t.Errorf("%s: the detail %q does not say what to attach instead (a PNG, JPEG or WebP image)", c.name, p.Detail)
				}
			case "limit":
				if !regexp.MustCompile(`[0-9]`).MatchString(p.Detail) {
					t.Errorf("%s: the detail %q does not state the limit", c.name, p.Detail)
				}
			}
			if strings.Contains(c.name, "header says") && took > 5*time.Second {
				t.Errorf("%s: refused after %v; a header alone must be refused without decoding", c.name, took)
			}
			w.wantSame(t, c.name, before)
		})
	}

	// The service still takes a good report, and serves it.
	f := w.mustPost(t, w.tester(t).session, bbfbText("after all that"), bbfbShot("image/png", good))
	w.screenshot(t, w.admin, f, 1)
	// The largest image the limits allow (4000×4000: 16 million pixels)
	// is taken.
	big := w.mustPost(t, w.tester(t).session, bbfbShot("image/png", bbfbGrayPNG(t, 4000, 4000)))
	if len(big.Screenshots) != 1 || big.Screenshots[0].Width != 4000 || big.Screenshots[0].Height != 4000 {
		t.Errorf("a 4000×4000 PNG (16 million pixels, the limit) was kept as %+v", big.Screenshots)
	}
}

// What a screenshot carries besides its pixels is not kept: a PNG text
// chunk, a JPEG's EXIF and comment, and whatever follows a PNG's end (a
// polyglot with HTML and a zip) are in neither the stored nor the served
// bytes.
func TestBlackBoxFeedbackMetadataStripped(t *testing.T) {
	t.Parallel()
	w := newBBFBWorld(t, "1.0.0")
	ada := w.tester(t)
	const gps = "GPSLatitude=51.50740N;GPSLongitude=0.12780W;bbfb-where-i-live"

	withText := bbfbWithPNGChunk(t, bbfbPNG(t, 24, 12), "tEXt", []byte("Comment\x00"+gps))
	withEXIF := bbfbJPEG(t, 24, 12)
	withEXIF = bbfbJPEGSegment(withEXIF, 0xFE, []byte("comment "+gps))                                    // COM
	withEXIF = bbfbJPEGSegment(withEXIF, 0xE1, []byte("Exif\x00\x00II*\x00\x08\x00\x00\x00\x00\x00"+gps)) // APP1
	for name, img := range map[string][]byte{"PNG": withText, "JPEG": withEXIF} {
		if _, _, err := image.Decode(bytes.NewReader(img)); err != nil {
			t.Fatalf("the %s with metadata does not decode: %v", name, err)
		}
	}
	f := w.mustPost(t, ada.session, bbfbText("where am I"), bbfbShot("image/png", withText), bbfbShot("image/jpeg", withEXIF))
	if len(f.Screenshots) != 2 {
		t.Fatalf("the report has %d screenshots, want 2", len(f.Screenshots))
	}
	for n := 1; n <= 2; n++ {
		if served := w.screenshot(t, w.admin, f, n); bytes.Contains(served, []byte("bbfb-where-i-live")) || bytes.Contains(served, []byte("GPSLatitude")) {
			t.Errorf("screenshot %d is served with its metadata", n)
		}
	}
	for _, k := range w.blobs(t) {
		b, err := w.e.Blobs.ReadAll(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("bbfb-where-i-live")) {
			t.Errorf("the stored %s keeps the metadata", k)
		}
	}

	// A PNG followed by HTML and a zip: refused, or kept without them.
	polyglot := slices.Concat(bbfbPNG(t, 10, 10), []byte("<html><body><script>alert(document.domain)</script></body></html>"),
		[]byte("PK\x03\x04\x14\x00\x00\x00\x00\x00evil.js"))
	before := w.state(t)
	resp, body := w.post(t, w.tester(t).session, bbfbText("polyglot"), bbfbShot("image/png", polyglot))
	if resp.StatusCode == 201 {
		t.Log("the polyglot was kept (its image, encoded again)")
		pf := w.kept(t, "a polyglot", resp, body)
		served := w.screenshot(t, w.admin, pf, 1)
		if bytes.Contains(served, []byte("<script")) || bytes.Contains(served, []byte("<html")) || bytes.Contains(served, []byte("PK\x03\x04")) {
			t.Errorf("the polyglot is served with what followed its image: %q", served[max(0, len(served)-120):])
		}
		for _, k := range w.blobs(t) {
			b, _ := w.e.Blobs.ReadAll(context.Background(), k)
			if bytes.Contains(b, []byte("<script")) || bytes.Contains(b, []byte("PK\x03\x04")) {
				t.Errorf("the stored %s keeps what followed the polyglot's image", k)
			}
		}
	} else {
		p := bbfbRefused(t, "a polyglot", resp, body, 400, 415, 422)
		t.Logf("the polyglot was refused: %d %s", resp.StatusCode, p.Detail)
		w.wantSame(t, "a refused polyglot", before)
	}
}

// Text that is not plain text, too long, or no report at all, a body that
// is not a form, too many screenshots or too many bytes: each refused with
// a problem that says what to do, and nothing kept.
func TestBlackBoxFeedbackHostileText(t *testing.T) {
	t.Parallel()
	w := newBBFBWorld(t, "1.0.0")
	w.mustPost(t, w.tester(t).session, bbfbText("a report that is there before"))
	shot := bbfbPNG(t, 4, 4)
	six := []bbfbPart{bbfbText("six screenshots")}
	for range 6 {
		six = append(six, bbfbShot("image/png", shot))
	}
	six27 := []bbfbPart{bbfbText("six big screenshots")}
	noise := bbfbNoisePNG(t, 4608<<10) // 4.5 MiB, a real PNG
	for range 6 {
		six27 = append(six27, bbfbShot("image/png", noise))
	}
	form := func(parts ...bbfbPart) rawBody { return bbfbForm(parts...) }
	cases := []struct {
		name     string
		body     any
		statuses []int
		param    string // the field named, on a 400
		says     string // a word the detail holds
	}{
		{"a bell (U+0007) in the text", form(bbfbText("ding\adong")), []int{400}, "text", ""},
		{"an escape sequence in the text", form(bbfbText("\x1b[31mred\x1b[0m")), []int{400}, "text", ""},
		{"a NUL in the text", form(bbfbText("before\x00after")), []int{400}, "text", ""},
		{"a DEL in the text", form(bbfbText("rub\x7fout")), []int{400}, "text", ""},
		{"text of 10 KiB + 1 byte", form(bbfbText(strings.Repeat("a", betaport.MaxFeedbackText+1))), []int{400, 413}, "text", "10"},
		{"text that is not UTF-8", form(bbfbText("caf\xe9 \xff\xfe")), []int{400}, "text", "UTF-8"},
		{"no text and no screenshot", form(), []int{400}, "", ""},
		{"only spaces", form(bbfbText(" \n\t  \n")), []int{400}, "", ""},
		{"six screenshots", form(six...), []int{400, 413}, "", "5"},
		{"a bundle that is not a number", form(bbfbText("x"), bbfbField("bundle", "latest")), []int{400, 404}, "", ""},
		{"a bundle with a leading zero", form(bbfbText("x"), bbfbField("bundle", "01")), []int{400, 404}, "", ""},
		{"a bundle no build has", form(bbfbText("x"), bbfbField("bundle", "99")), []int{404}, "", ""},
		{"a version of 65 characters", form(bbfbText("x"), bbfbField("version", strings.Repeat("1.", 32)+"1")), []int{400}, "version", ""},
		{"JSON", map[string]string{"text": "hello"}, []int{415}, "", ""},
		{"a URL-encoded form", rawBody{"application/x-www-form-urlencoded", []byte("text=hello")}, []int{415}, "", ""},
		{"plain text", rawBody{"text/plain", []byte("hello")}, []int{415}, "", ""},
		{"a multipart form without its boundary", rawBody{"multipart/form-data", form(bbfbText("hello")).data}, []int{400, 415}, "", ""},
		{"a body of 26 MiB in one screenshot", form(bbfbText("big"), bbfbShot("image/png", make([]byte, 26<<20))), []int{400, 413}, "", "MB"},
		{"a body of 27 MiB in six screenshots under 5 MB each", form(six27...), []int{400, 413}, "", ""},
		{"a body of 26 MiB of text", form(bbfbText(strings.Repeat("a", 26<<20))), []int{413}, "", ""},
		{"a part the form does not have", form(bbfbText("x"), bbfbField("attachment", "what is this")), []int{400}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			who := w.tester(t) // each their own, so that no rate limit answers in the check's place
			before := w.state(t)
			resp, body := w.e.send(t, "POST", api.FeedbackPath(w.ext.ID), who.session, c.body)
			p := bbfbRefused(t, c.name, resp, body, c.statuses...)
			t.Logf("%d %s: %s", resp.StatusCode, p.Type, p.Detail)
			if c.param != "" && resp.StatusCode == 400 && p.Param != c.param {
				t.Errorf("%s: the problem names field %q, want %q: %s", c.name, p.Param, c.param, body)
			}
			if c.says != "" && !strings.Contains(p.Detail, c.says) {
				t.Errorf("%s: the detail %q does not say %q", c.name, p.Detail, c.says)
			}
			w.wantSame(t, c.name, before)
		})
	}
}

// Who may do what: another extension's tester, a revoked tester, an admin
// of another team, a tester at another tester's report or screenshot, a
// tester at the admins' actions, an admin sending a report, a cross-site
// form, nobody signed in. Every one refused with a problem, and nothing
// changes.
func TestBlackBoxFeedbackAccess(t *testing.T) {
	t.Parallel()
	w := newBBFBWorld(t, "1.0.0")
	ada, bob := w.tester(t), w.tester(t)
	fa := w.mustPost(t, ada.session, bbfbText("Ada's report"), bbfbShot("image/png", bbfbPNG(t, 6, 6)))
	fb := w.mustPost(t, bob.session, bbfbText("Bob's report"), bbfbShot("image/png", bbfbPNG(t, 7, 7)))

	otherTeam := storetest.MustTeam(t, w.e.DB, betaport.PlanProfessional)
	otherExt := storetest.MustExtension(t, w.e.DB, otherTeam, "Other")
	w.e.publish(t, otherExt, "3.0.0")
	otherAdmin := w.e.adminOf(t, otherTeam)
	stranger := (&bbfbWorld{e: w.e, team: otherTeam, ext: otherExt, admin: otherAdmin}).tester(t)
	// A second extension of the same team: its tester is no tester of this one.
	sibling := storetest.MustExtension(t, w.e.DB, w.team, "Sibling")
	w.e.publish(t, sibling, "1.0.0")
	cousin := (&bbfbWorld{e: w.e, team: w.team, ext: sibling, admin: w.admin}).tester(t)

	report := api.FeedbackReportPath(w.ext.ID, fa.ID)
	shot := api.FeedbackScreenshotPath(w.ext.ID, fa.ID, 1)
	status := report + "/status"
	form := bbfbForm(bbfbText("let me in"), bbfbShot("image/png", bbfbPNG(t, 5, 5)))
	cases := []struct {
		name         string
		method, path string
		who          http.Header
		body         any
		statuses     []int
	}{
		{"another extension's tester sends a report", "POST", api.FeedbackPath(w.ext.ID), stranger.session, form, []int{403, 404}},
		{"another extension's tester lists the reports", "GET", api.FeedbackPath(w.ext.ID), stranger.session, nil, []int{403, 404}},
		{"another extension's tester reads a report", "GET", report, stranger.session, nil, []int{403, 404}},
		{"another extension's tester reads a screenshot", "GET", shot, stranger.session, nil, []int{403, 404}},
		{"a sibling extension's tester sends a report", "POST", api.FeedbackPath(w.ext.ID), cousin.session, form, []int{403, 404}},
		{"a sibling extension's tester reads a screenshot", "GET", shot, cousin.session, nil, []int{403, 404}},
		{"an admin of another team lists the reports", "GET", api.FeedbackPath(w.ext.ID), otherAdmin, nil, []int{404}},
		{"an admin of another team reads a report", "GET", report, otherAdmin, nil, []int{404}},
		{"an admin of another team reads a screenshot", "GET", shot, otherAdmin, nil, []int{404}},
		{"an admin of another team resolves a report", "POST", status, otherAdmin, api.FeedbackStatus{Status: "resolved"}, []int{404}},
		{"an admin of another team deletes a report", "DELETE", report, otherAdmin, nil, []int{404}},
		{"an admin of another team sends a report", "POST", api.FeedbackPath(w.ext.ID), otherAdmin, form, []int{403, 404}},
		{"a tester reads another tester's report", "GET", report, bob.session, nil, []int{404}},
		{"a tester reads another tester's screenshot", "GET", shot, bob.session, nil, []int{404}},
		{"a tester resolves a report", "POST", status, ada.session, api.FeedbackStatus{Status: "resolved"}, []int{403, 404}},
		{"a tester resolves another tester's report", "POST", status, bob.session, api.FeedbackStatus{Status: "resolved"}, []int{403, 404}},
		{"a tester deletes their report", "DELETE", report, ada.session, nil, []int{403, 404}},
		{"a tester deletes another tester's report", "DELETE", report, bob.session, nil, []int{403, 404}},
		{"an admin sends a report", "POST", api.FeedbackPath(w.ext.ID), w.admin, form, []int{403}},
		{"nobody signed in sends a report", "POST", api.FeedbackPath(w.ext.ID), nil, form, []int{401}},
		{"nobody signed in reads a screenshot", "GET", shot, nil, nil, []int{401}},
		{"a report of another extension by its id", "GET", api.FeedbackReportPath(otherExt.ID, fa.ID), otherAdmin, nil, []int{404}},
		{"a screenshot of another extension by its id", "GET", api.FeedbackScreenshotPath(otherExt.ID, fa.ID, 1), otherAdmin, nil, []int{404}},
		{"a report of another extension resolved by its id", "POST", api.FeedbackReportPath(otherExt.ID, fa.ID) + "/status", otherAdmin, api.FeedbackStatus{Status: "resolved"}, []int{404}},
		{"a report of another extension deleted by its id", "DELETE", api.FeedbackReportPath(otherExt.ID, fa.ID), otherAdmin, nil, []int{404}},
		{"a report of a sibling extension deleted by its id", "DELETE", api.FeedbackReportPath(sibling.ID, fa.ID), w.admin, nil, []int{404}},
		{"a report's id with a leading zero", "GET", api.FeedbackPath(w.ext.ID) + "/0" + strconv.FormatInt(fa.ID, 10), w.admin, nil, []int{404}},
		{"screenshot 0", "GET", api.FeedbackReportPath(w.ext.ID, fa.ID) + "/screenshots/0", w.admin, nil, []int{404}},
		{"screenshot 01", "GET", api.FeedbackReportPath(w.ext.ID, fa.ID) + "/screenshots/01", w.admin, nil, []int{404}},
		{"screenshot -1", "GET", api.FeedbackReportPath(w.ext.ID, fa.ID) + "/screenshots/-1", w.admin, nil, []int{404}},
		{"a screenshot path with a traversal", "GET", api.FeedbackReportPath(w.ext.ID, fa.ID) + "/screenshots/1%2F..%2F..%2F" + strconv.FormatInt(fb.ID, 10), w.admin, nil, []int{404}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := w.state(t)
			resp, body := w.e.send(t, c.method, c.path, c.who, c.body)
			bbfbRefused(t, c.name, resp, body, c.statuses...)
			if resp.StatusCode == 404 && (strings.Contains(string(body), "Ada's report") || strings.Contains(string(body), ada.Email)) {
				t.Errorf("%s: the refusal tells what it refuses: %s", c.name, body)
			}
			w.wantSame(t, c.name, before)
		})
	}

	// A cross-site page posting with the tester's cookie.
	before := w.state(t)
	h := ada.session.Clone()
	h.Set("Origin", "https://evil.example")
	h.Set("Sec-Fetch-Site", "cross-site")
	resp, body := w.post(t, h, bbfbText("forged"))
	bbfbRefused(t, "a cross-site form with the tester's cookie", resp, body, 403)
	w.wantSame(t, "a cross-site form", before)

	// A tester's list is theirs, whatever they ask for.
	for _, q := range []string{"", "status=open", "q=Bob"} {
		if got := w.all(t, bob.session, q); len(got) != 1 || got[0].ID != fb.ID {
			t.Errorf("Bob lists with %q: %v; want his report %d", q, bbfbIDs(got), fb.ID)
		}
	}
	for _, q := range []string{"tester=" + strconv.FormatInt(ada.ID, 10), "q=" + url.QueryEscape(ada.Email), "q=Ada", "bundle=1"} {
		for _, f := range w.all(t, bob.session, q) {
			if f.ID != fb.ID || f.TesterID != bob.ID {
				t.Errorf("Bob lists with %q and sees report %d of tester %d: %q", q, f.ID, f.TesterID, f.Text)
			}
		}
	}

	// A revoked tester sends nothing more and reads nothing.
	resp, body = w.e.do(t, "DELETE", api.TesterPath(w.ext.ID, ada.ID), w.admin)
	if resp.StatusCode != 204 {
		t.Fatalf("revoking Ada = %d %s", resp.StatusCode, body)
	}
	before = w.state(t)
	resp, body = w.post(t, ada.session, bbfbText("I was revoked"))
	bbfbRefused(t, "a revoked tester sends a report", resp, body, 401, 403, 404)
	resp, body = w.e.do(t, "GET", shot, ada.session)
	bbfbRefused(t, "a revoked tester reads their screenshot", resp, body, 401, 403, 404)
	w.wantSame(t, "a revoked tester's requests", before)
	// Her report stays for the admins.
	w.screenshot(t, w.admin, fa, 1)
}

// From inside the extension: the tester's own update URL + "/feedback",
// from the extension's origin (answered with CORS for it) or with no
// Origin, kept as the extension's report on the build of the version it
// runs. Another origin, the shared update URL, a revoked tester's URL, an
// unknown token or another extension's are refused, and nothing is kept.
func TestBlackBoxFeedbackFromExtension(t *testing.T) {
	t.Parallel()
	w := newBBFBWorld(t, "1.0.0", "1.0.1")
	chromeID, shared := w.updates(t)
	origin := "chrome-extension://" + chromeID
	ada := w.tester(t)
	adaURL := w.updatePath(t, ada) + "/feedback"
	fromExt := func(origin string) http.Header {
		h := http.Header{"User-Agent": {bbfbUA}}
		if origin != "" {
			h.Set("Origin", origin)
		}
		return h
	}

	// The preflight.
	pre := fromExt(origin)
	pre.Set("Access-Control-Request-Method", "POST")
	pre.Set("Access-Control-Request-Headers", "content-type")
	resp, body := w.e.do(t, "OPTIONS", adaURL, pre)
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != origin ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight from the extension = %d %v %s; want 204 allowing POST from %s", resp.StatusCode, resp.Header, body, origin)
	}
	evilPre := pre.Clone()
	evilPre.Set("Origin", "https://evil.example")
	resp, _ = w.e.do(t, "OPTIONS", adaURL, evilPre)
	if acao := resp.Header.Get("Access-Control-Allow-Origin"); acao == "https://evil.example" || acao == "*" {
		t.Errorf("preflight from https://evil.example is allowed: %d, Access-Control-Allow-Origin %q", resp.StatusCode, acao)
	}

	// As Chrome sends an extension's fetch: its origin, cross-site (no host
	// permission for the service) or "none" (with one).
	for _, site := range []string{"cross-site", "none"} {
		h := fromExt(origin)
		h.Set("Sec-Fetch-Site", site)
		h.Set("Sec-Fetch-Mode", "cors")
		resp, body := w.e.send(t, "POST", adaURL, h, bbfbForm(bbfbText("sent with Sec-Fetch-Site: "+site)))
		if g := w.kept(t, "a report from the extension with Sec-Fetch-Site: "+site, resp, body); g.Source != betaport.FeedbackFromExtension {
			t.Errorf("the report with Sec-Fetch-Site %s is from %q", site, g.Source)
		}
		if acao := resp.Header.Get("Access-Control-Allow-Origin"); acao != origin {
			t.Errorf("Sec-Fetch-Site %s: Access-Control-Allow-Origin %q", site, acao)
		}
	}

	// From the extension, on the version its copy runs.
	resp, body = w.e.send(t, "POST", adaURL, fromExt(origin),
		bbfbForm(bbfbText("Crashes when I open the options"), bbfbField("version", "1.0.0"), bbfbShot("image/png", bbfbPNG(t, 12, 9))))
	f := w.kept(t, "a report from the extension", resp, body)
	if acao := resp.Header.Get("Access-Control-Allow-Origin"); acao != origin {
		t.Errorf("a report from %s: Access-Control-Allow-Origin %q", origin, acao)
	}
	if f.TesterID != ada.ID || f.Source != betaport.FeedbackFromExtension || f.BundleNumber != 1 || f.Version != "1.0.0" ||
		f.Status != betaport.FeedbackNew || len(f.Screenshots) != 1 || !strings.Contains(f.Browser, "Chrome") {
		t.Errorf("the report from the extension: %+v; want Ada's, from the extension, on bundle 1 (1.0.0), with its screenshot", f)
	}
	w.screenshot(t, w.admin, f, 1)
	w.screenshot(t, ada.session, f, 1)
	// With no Origin (a background fetch that sends none) it works too, on
	// the build the tester gets.
	resp, body = w.e.send(t, "POST", adaURL, fromExt(""), bbfbForm(bbfbText("No origin here")))
	if g := w.kept(t, "a report with no Origin", resp, body); g.Source != betaport.FeedbackFromExtension || g.BundleNumber != 2 || g.TesterID != ada.ID {
		t.Errorf("the report with no Origin: %+v; want Ada's, from the extension, on bundle 2", g)
	}
	// The tester sees both on their builds page.
	if mine := w.all(t, ada.session, ""); len(mine) != 4 || mine[1].ID != f.ID {
		t.Errorf("Ada's reports: %v; want the 4 from her extension", bbfbIDs(mine))
	}

	// Refused, and nothing kept.
	bob := w.tester(t)
	bobURL := w.updatePath(t, bob) + "/feedback"
	gone := w.tester(t)
	goneURL := w.updatePath(t, gone) + "/feedback"
	if resp, body := w.e.do(t, "DELETE", api.TesterPath(w.ext.ID, gone.ID), w.admin); resp.StatusCode != 204 {
		t.Fatalf("revoking a tester = %d %s", resp.StatusCode, body)
	}
	otherExt := storetest.MustExtension(t, w.e.DB, w.team, "Other")
	w.e.publish(t, otherExt, "1.0.0")
	ow := &bbfbWorld{e: w.e, team: w.team, ext: otherExt, admin: w.admin}
	otherTester := ow.tester(t)
	otherURL := ow.updatePath(t, otherTester) + "/feedback"
	otherChromeID, _ := ow.updates(t)
	_, adaToken, _ := strings.Cut(strings.TrimPrefix(adaURL, api.UpdatePrefix), "/")
	adaToken = strings.TrimSuffix(adaToken, "/feedback")
	cases := []struct {
		name     string
		path     string
		origin   string
		statuses []int
	}{
		{"from a web page's origin", bobURL, "https://evil.example", []int{403}},
		{"from another extension's origin", bobURL, "chrome-extension://" + otherChromeID, []int{403}},
		{"from the origin null", bobURL, "null", []int{403}},
		{"from the extension's origin over http", bobURL, "http://" + chromeID, []int{403}},
		{"on the shared update URL", shared + "/feedback", origin, []int{403}},
		{"on the shared update URL with no Origin", shared + "/feedback", "", []int{403}},
		{"on a revoked tester's URL", goneURL, origin, []int{403}},
		{"on a revoked tester's URL with no Origin", goneURL, "", []int{403}},
		{"on a token nobody has", api.UpdatePrefix + strconv.FormatInt(w.ext.ID, 10) + "/tt_notatoken/feedback", origin, []int{403, 404}},
		{"on this extension's tester's token under another extension's id", api.UpdatePrefix + strconv.FormatInt(otherExt.ID, 10) + "/" + adaToken + "/feedback", "", []int{403, 404}},
		{"on another extension's tester's URL from this extension's origin", otherURL, origin, []int{403}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, otherBefore := w.state(t), ow.state(t)
			resp, body := w.e.send(t, "POST", c.path, fromExt(c.origin), bbfbForm(bbfbText("let me in: "+c.name), bbfbShot("image/png", bbfbPNG(t, 3, 3))))
			bbfbRefused(t, c.name, resp, body, c.statuses...)
			if acao := resp.Header.Get("Access-Control-Allow-Origin"); c.origin != "" && c.origin != origin && (acao == c.origin || acao == "*") {
				t.Errorf("%s: the refusal allows %s to read it (Access-Control-Allow-Origin %q)", c.name, c.origin, acao)
			}
			w.wantSame(t, c.name, before)
			ow.wantSame(t, c.name+" (the other extension)", otherBefore)
		})
	}
	// A revoked tester's preflight grants nothing either.
	resp, _ = w.e.do(t, "OPTIONS", goneURL, pre)
	if resp.StatusCode < 300 {
		t.Errorf("preflight on a revoked tester's URL = %d; want it refused", resp.StatusCode)
	}
	// The extension's own refusals are readable by it (CORS on errors),
	// and say what to do.
	resp, body = w.e.send(t, "POST", bobURL, fromExt(origin), bbfbForm())
	bbfbRefused(t, "an empty report from the extension", resp, body, 400)
	if resp.Header.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("the extension cannot read why its report was refused: Access-Control-Allow-Origin %q", resp.Header.Get("Access-Control-Allow-Origin"))
	}
}

// An admin moves a report new → seen → resolved (and back); each change is
// one audit entry, the same status again none; the tester sees the status.
// A bad status is refused. Deleting a report deletes its screenshots'
// blobs (and only its own), is audited, and leaves it gone.
func TestBlackBoxFeedbackStatusAuditAndDelete(t *testing.T) {
	t.Parallel()
	w := newBBFBWorld(t, "1.0.0")
	ada := w.tester(t)
	f := w.mustPost(t, ada.session, bbfbText("two screenshots"), bbfbShot("image/png", bbfbPNG(t, 9, 9)), bbfbShot("image/jpeg", bbfbJPEG(t, 9, 9)))
	keep := w.mustPost(t, ada.session, bbfbText("the other one"), bbfbShot("image/png", bbfbPNG(t, 11, 11)))
	keepShot := w.screenshot(t, w.admin, keep, 1)
	if n := len(w.blobs(t)); n != 3 {
		t.Fatalf("%d blobs stored for 3 screenshots", n)
	}

	move := func(status string) betaport.Feedback {
		t.Helper()
		resp, body := w.e.send(t, "POST", api.FeedbackReportPath(w.ext.ID, f.ID)+"/status", w.admin, api.FeedbackStatus{Status: status})
		var got betaport.Feedback
		if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil || got.Status != status || got.ID != f.ID {
			t.Fatalf("moving the report to %s = %d %s", status, resp.StatusCode, body)
		}
		return got
	}
	counts := func() [3]int {
		return [3]int{w.auditCount(t, betaport.AuditFeedbackNew), w.auditCount(t, betaport.AuditFeedbackSeen), w.auditCount(t, betaport.AuditFeedbackResolved)}
	}
	testerSees := func(want string) {
		t.Helper()
		resp, body := w.e.do(t, "GET", api.FeedbackReportPath(w.ext.ID, f.ID), ada.session)
		var got betaport.Feedback
		if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil || got.Status != want {
			t.Errorf("the tester reads their report: %d %s; want status %s", resp.StatusCode, body, want)
		}
	}
	if c := counts(); c != [3]int{0, 0, 0} {
		t.Fatalf("audit before any move: %v", c)
	}
	move("seen")
	move("seen")
	if c := counts(); c != [3]int{0, 1, 0} {
		t.Errorf("after seen twice the audit has %v (new, seen, resolved); want one feedback.seen", c)
	}
	testerSees("seen")
	resolved := move("resolved")
	move("resolved")
	if c := counts(); c != [3]int{0, 1, 1} {
		t.Errorf("after resolved twice the audit has %v; want one feedback.resolved more", c)
	}
	if !resolved.UpdatedAt.After(f.CreatedAt) && !resolved.UpdatedAt.Equal(f.CreatedAt) {
		t.Errorf("the resolved report was updated at %v, before it was made (%v)", resolved.UpdatedAt, f.CreatedAt)
	}
	testerSees("resolved")
	for _, a := range w.audit(t) {
		if a.Action == betaport.AuditFeedbackResolved && a.Actor == "" {
			t.Errorf("the audit entry %+v does not say who", a)
		}
	}
	// Reopened.
	move("new")
	move("new")
	if c := counts(); c != [3]int{1, 1, 1} {
		t.Errorf("after new twice the audit has %v; want one feedback.new", c)
	}

	// Bad statuses.
	for _, body := range []any{api.FeedbackStatus{Status: "open"}, api.FeedbackStatus{Status: "done"}, api.FeedbackStatus{Status: ""},
		map[string]any{"status": "resolved", "extra": 1}, map[string]any{"status": 3}, rawBody{"text/plain", []byte("resolved")}} {
		before := w.state(t)
		resp, b := w.e.send(t, "POST", api.FeedbackReportPath(w.ext.ID, f.ID)+"/status", w.admin, body)
		bbfbRefused(t, fmt.Sprintf("moving the report with %v", body), resp, b, 400, 415)
		w.wantSame(t, fmt.Sprintf("a bad status %v", body), before)
	}
	resp, body := w.e.send(t, "POST", api.FeedbackReportPath(w.ext.ID, 999999)+"/status", w.admin, api.FeedbackStatus{Status: "seen"})
	bbfbRefused(t, "moving a report there is not", resp, body, 404)

	// Deleted, with its screenshots' blobs and nothing else.
	resp, body = w.e.do(t, "DELETE", api.FeedbackReportPath(w.ext.ID, f.ID), w.admin)
	if resp.StatusCode != 204 || len(body) != 0 {
		t.Fatalf("DELETE the report = %d %s", resp.StatusCode, body)
	}
	if keys := w.blobs(t); len(keys) != 1 {
		t.Errorf("after deleting the report with 2 screenshots, stored: %q; want only the other report's one", keys)
	}
	if got := w.screenshot(t, w.admin, keep, 1); !bytes.Equal(got, keepShot) {
		t.Error("deleting one report changed another's screenshot")
	}
	if n := w.auditCount(t, betaport.AuditFeedbackDeleted); n != 1 {
		t.Errorf("%d feedback.deleted audit entries, want 1", n)
	}
	for _, who := range []http.Header{w.admin, ada.session} {
		resp, body = w.e.do(t, "GET", api.FeedbackReportPath(w.ext.ID, f.ID), who)
		bbfbRefused(t, "reading a deleted report", resp, body, 404)
		resp, body = w.e.do(t, "GET", api.FeedbackScreenshotPath(w.ext.ID, f.ID, 1), who)
		bbfbRefused(t, "reading a deleted report's screenshot", resp, body, 404)
	}
	if got := w.all(t, w.admin, ""); len(got) != 1 || got[0].ID != keep.ID {
		t.Errorf("after the delete the admin lists %v, want only %d", bbfbIDs(got), keep.ID)
	}
	before := w.state(t)
	resp, body = w.e.do(t, "DELETE", api.FeedbackReportPath(w.ext.ID, f.ID), w.admin)
	bbfbRefused(t, "deleting it again", resp, body, 404)
	resp, body = w.e.send(t, "POST", api.FeedbackReportPath(w.ext.ID, f.ID)+"/status", w.admin, api.FeedbackStatus{Status: "seen"})
	bbfbRefused(t, "moving a deleted report", resp, body, 404)
	w.wantSame(t, "requests on a deleted report", before)
}

// The admin's list: newest first in pages of 2 to the end with no report
// twice or missed; filtered by status (open is new and seen), build and
// tester, searched in the text and the tester's e-mail. A retried report is
// kept, not lost. Bad filters are refused.
func TestBlackBoxFeedbackListPagesAndFilters(t *testing.T) {
	t.Parallel()
	w := newBBFBWorld(t, "1.0.0", "1.0.1")
	ada, bob, cy := w.tester(t), w.tester(t), w.tester(t)
	var made []betaport.Feedback
	post := func(who *bbfbTester, text, bundle string) betaport.Feedback {
		parts := []bbfbPart{bbfbText(text)}
		if bundle != "" {
			parts = append(parts, bbfbField("bundle", bundle))
		}
		f := w.mustPost(t, who.session, parts...)
		made = append(made, f)
		return f
	}
	a1 := post(ada, "toolbar icon is blurry", "1")
	b1 := post(bob, "sync loses tabs", "")
	post(cy, "options page is slow", "1")
	a2 := post(ada, "toolbar icon still blurry", "")
	b2 := post(bob, "dark mode ignored", "")
	// A clumsy retry: the same report twice. Nothing is lost.
	r1 := post(cy, "popup closes when I type", "")
	r2 := post(cy, "popup closes when I type", "")
	for _, f := range []betaport.Feedback{r1, r2} {
		if resp, body := w.e.do(t, "GET", api.FeedbackReportPath(w.ext.ID, f.ID), w.admin); resp.StatusCode != 200 {
			t.Errorf("the retried report %d is not there: %d %s", f.ID, resp.StatusCode, body)
		}
	}
	var ids []int64
	for _, f := range slices.Backward(made) {
		ids = append(ids, f.ID)
	}
	ids = slices.Compact(ids) // a service that keeps one of a retried pair answers its id twice

	// Pages of 2, to the end.
	var paged []betaport.Feedback
	cursor, pages := "", 0
	for {
		q := "limit=2"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		page := w.list(t, w.admin, q)
		pages++
		if len(page.Data) > 2 || (len(page.Data) < 2 && page.NextCursor != "") || pages > 10 {
			t.Fatalf("page %d has %d reports, next cursor %q", pages, len(page.Data), page.NextCursor)
		}
		paged = append(paged, page.Data...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	bbfbNewestFirst(t, "pages of 2", paged)
	if got := bbfbIDs(paged); !slices.Equal(got, ids) {
		t.Errorf("pages of 2 list %v; want every report once, newest first: %v", got, ids)
	}
	if pages != (len(ids)+1)/2 {
		t.Errorf("%d reports came in %d pages of 2", len(ids), pages)
	}
	if first := w.list(t, w.admin, "limit=2"); first.Data[0].TesterEmail != cy.Email {
		t.Errorf("the admin's list does not say whose the report is: %+v", first.Data[0])
	}

	// Filters.
	w.e.send(t, "POST", api.FeedbackReportPath(w.ext.ID, a1.ID)+"/status", w.admin, api.FeedbackStatus{Status: "resolved"})
	w.e.send(t, "POST", api.FeedbackReportPath(w.ext.ID, b1.ID)+"/status", w.admin, api.FeedbackStatus{Status: "seen"})
	without := func(drop ...int64) []int64 {
		return slices.DeleteFunc(slices.Clone(ids), func(id int64) bool { return slices.Contains(drop, id) })
	}
	idsOf := func(fs ...betaport.Feedback) []int64 {
		var out []int64
		for _, f := range slices.Backward(fs) {
			out = append(out, f.ID)
		}
		return out
	}
	for q, want := range map[string][]int64{
		"status=resolved": {a1.ID},
		"status=seen":     {b1.ID},
		"status=new":      without(a1.ID, b1.ID),
		"status=open":     without(a1.ID),
		"bundle=1":        {made[2].ID, a1.ID},
		"bundle=2":        without(a1.ID, made[2].ID),
		"tester=" + strconv.FormatInt(ada.ID, 10): idsOf(a1, a2),
		"tester=" + strconv.FormatInt(bob.ID, 10): idsOf(b1, b2),
		"q=blurry":                        idsOf(a1, a2),
		"q=BLURRY":                        idsOf(a1, a2),
		"q=" + url.QueryEscape(bob.Email): idsOf(b1, b2),
		"q=nothing-says-this":             nil,
		"status=open&tester=" + strconv.FormatInt(ada.ID, 10): {a2.ID},
	} {
		if got := bbfbIDs(w.all(t, w.admin, q)); !slices.Equal(got, want) {
			t.Errorf("the admin lists with %s: %v, want %v", q, got, want)
		}
	}
	for _, q := range []string{"status=closed", "bundle=abc", "bundle=0", "tester=x", "limit=0", "limit=101", "limit=01", "cursor=not-a-cursor"} {
		resp, body := w.e.do(t, "GET", api.FeedbackPath(w.ext.ID)+"?"+q, w.admin)
		bbfbRefused(t, "the list with "+q, resp, body, 400)
	}
}

// The bundles list shows each bundle's open reports to admins (omitted at
// 0), following new, resolved and deleted reports; testers never see it.
func TestBlackBoxFeedbackBundlesCountOpen(t *testing.T) {
	t.Parallel()
	w := newBBFBWorld(t, "1.0.0", "1.0.1", "1.0.2")
	ada := w.tester(t)
	f1 := w.mustPost(t, ada.session, bbfbText("one"), bbfbField("bundle", "1"))
	w.mustPost(t, ada.session, bbfbText("two"), bbfbField("bundle", "1"))
	f3 := w.mustPost(t, ada.session, bbfbText("three"))
	open := func(who http.Header) (map[int64]int64, string) {
		t.Helper()
		resp, body := w.e.do(t, "GET", api.BundlesPath(w.ext.ID)+"?page=0", who)
		var list []betaport.Bundle
		if resp.StatusCode != 200 || json.Unmarshal(body, &list) != nil || len(list) != 3 {
			t.Fatalf("GET bundles = %d %s", resp.StatusCode, body)
		}
		out := map[int64]int64{}
		for _, b := range list {
			out[b.Number] = b.OpenFeedback
		}
		return out, string(body)
	}
	want := func(what string, w3, w2, w1 int64) {
		t.Helper()
		got, body := open(w.admin)
		if got[3] != w3 || got[2] != w2 || got[1] != w1 {
			t.Errorf("%s: open reports by bundle %v; want 3:%d 2:%d 1:%d", what, got, w3, w2, w1)
		}
		if zeros := strings.Count(body, `"openFeedback":0`); zeros != 0 {
			t.Errorf("%s: the bundles list says openFeedback 0 instead of leaving it out: %s", what, body)
		}
		if _, body := open(ada.session); strings.Contains(body, "openFeedback") {
			t.Errorf("%s: a tester's bundles list shows openFeedback: %s", what, body)
		}
	}
	want("two on 1, one on 3", 1, 0, 2)
	w.e.send(t, "POST", api.FeedbackReportPath(w.ext.ID, f1.ID)+"/status", w.admin, api.FeedbackStatus{Status: "seen"})
	want("seen is still open", 1, 0, 2)
	w.e.send(t, "POST", api.FeedbackReportPath(w.ext.ID, f1.ID)+"/status", w.admin, api.FeedbackStatus{Status: "resolved"})
	want("one on 1 resolved", 1, 0, 1)
	w.e.do(t, "DELETE", api.FeedbackReportPath(w.ext.ID, f3.ID), w.admin)
	want("the one on 3 deleted", 0, 0, 1)
}

// Reports are on the tester's channel's builds: a build only on another
// channel is not theirs (404, nothing kept); a version only another
// channel has is kept with no number; a tester on the other channel
// reports on its build.
func TestBlackBoxFeedbackChannels(t *testing.T) {
	t.Parallel()
	w := newBBFBWorld(t, "1.0.0")
	if resp, body := w.e.send(t, "POST", api.ChannelsPath(w.ext.ID), w.admin, api.NewChannel{Name: "nightly"}); resp.StatusCode != 201 {
		t.Fatalf("making channel nightly = %d %s", resp.StatusCode, body)
	}
	zip, files, err := demo.Zip(w.ext.Name, "2.0.0")
	if err != nil {
		t.Fatal(err)
	}
	nightlyBundle := bbfbPublishOn(t, w.e, w.ext, "2.0.0", zip, files, "nightly")
	beta, night := w.tester(t), w.tester(t)
	if resp, body := w.e.send(t, "PUT", api.TesterPath(w.ext.ID, night.ID)+"/channel", w.admin, api.ChannelChoice{Channel: "nightly"}); resp.StatusCode != 200 {
		t.Fatalf("moving a tester to nightly = %d %s", resp.StatusCode, body)
	}
	n := strconv.FormatInt(nightlyBundle, 10)

	before := w.state(t)
	resp, body := w.post(t, beta.session, bbfbText("on nightly's build"), bbfbField("bundle", n))
	bbfbRefused(t, "a beta tester names a build only nightly has", resp, body, 404)
	resp, body = w.post(t, night.session, bbfbText("on beta's build"), bbfbField("bundle", "1"))
	bbfbRefused(t, "a nightly tester names a build only beta has", resp, body, 404)
	w.wantSame(t, "reports on builds of another channel", before)

	if f := w.mustPost(t, beta.session, bbfbText("my copy says 2.0.0"), bbfbField("version", "2.0.0")); f.BundleNumber != 0 || f.Version != "2.0.0" {
		t.Errorf("a beta tester's report from version 2.0.0 (only on nightly): on %d (%q), want no number, 2.0.0", f.BundleNumber, f.Version)
	}
	if f := w.mustPost(t, beta.session, bbfbText("the build I get")); f.BundleNumber != 1 || f.Version != "1.0.0" {
		t.Errorf("a beta tester's report on the build they get: on %d (%q), want 1 (1.0.0)", f.BundleNumber, f.Version)
	}
	if f := w.mustPost(t, night.session, bbfbText("the build I get")); f.BundleNumber != nightlyBundle || f.Version != "2.0.0" {
		t.Errorf("a nightly tester's report on the build they get: on %d (%q), want %d (2.0.0)", f.BundleNumber, f.Version, nightlyBundle)
	}
	if f := w.mustPost(t, night.session, bbfbText("by number"), bbfbField("bundle", n)); f.BundleNumber != nightlyBundle {
		t.Errorf("a nightly tester's report on nightly's build by number: on %d, want %d", f.BundleNumber, nightlyBundle)
	}
}

// The event stream tells admins and testers of every report made, moved or
// deleted, the current revision first; a refused report tells nothing.
func TestBlackBoxFeedbackEvents(t *testing.T) {
	t.Parallel()
	w := newBBFBWorld(t, "1.0.0")
	w.e.App.EventPoll = 50 * time.Millisecond
	ada := w.tester(t)
	w.mustPost(t, ada.session, bbfbText("before the stream"))
	admin := bbfbFeedbackEvents(t, w.e, w.ext.ID, w.admin)
	tester := bbfbFeedbackEvents(t, w.e, w.ext.ID, ada.session)
	first := bbfbAwait(t, admin, "the admin's first event", func(int64) bool { return true })
	tfirst := bbfbAwait(t, tester, "the tester's first event", func(int64) bool { return true })
	if first <= 0 || tfirst != first {
		t.Fatalf("first feedback events: admin %d, tester %d; want the same current revision, after a report", first, tfirst)
	}
	// The JSON revision says the same.
	h := w.admin.Clone()
	h.Set("Accept", "application/json")
	resp, body := w.e.do(t, "GET", api.EventsPath(w.ext.ID), h)
	var rev betaport.Revision
	if resp.StatusCode != 200 || json.Unmarshal(body, &rev) != nil || rev.Feedback != first {
		t.Errorf("the revision as JSON = %d %s; want feedback %d", resp.StatusCode, body, first)
	}

	step := func(what string, last int64, do func()) int64 {
		t.Helper()
		do()
		n := bbfbAwait(t, admin, what+" (admin)", func(n int64) bool { return n > last })
		bbfbAwait(t, tester, what+" (tester)", func(m int64) bool { return m >= n })
		return n
	}
	var f betaport.Feedback
	last := step("a report made", first, func() { f = w.mustPost(t, ada.session, bbfbText("while watching")) })
	last = step("a report seen", last, func() {
		w.e.send(t, "POST", api.FeedbackReportPath(w.ext.ID, f.ID)+"/status", w.admin, api.FeedbackStatus{Status: "seen"})
	})
	last = step("a report resolved", last, func() {
		w.e.send(t, "POST", api.FeedbackReportPath(w.ext.ID, f.ID)+"/status", w.admin, api.FeedbackStatus{Status: "resolved"})
	})
	// A refused report and a move to the same status change nothing: the
	// next event is the delete's, one step on.
	w.post(t, ada.session)
	w.e.send(t, "POST", api.FeedbackReportPath(w.ext.ID, f.ID)+"/status", w.admin, api.FeedbackStatus{Status: "resolved"})
	resp, body = w.e.do(t, "DELETE", api.FeedbackReportPath(w.ext.ID, f.ID), w.admin)
	if resp.StatusCode != 204 {
		t.Fatalf("DELETE = %d %s", resp.StatusCode, body)
	}
	if n := bbfbAwait(t, admin, "a report deleted", func(n int64) bool { return n > last }); n != last+1 {
		t.Errorf("after a refused report, a move to the same status and a delete, the revision went from %d to %d; want one step (the delete)", last, n)
	}
}

// Webhooks: feedback.created when a report is made and feedback.resolved
// when it is resolved (not when seen, not twice), with links to the report
// and its screenshots and never their bytes.
func TestBlackBoxFeedbackWebhooks(t *testing.T) {
	t.Parallel()
	w := newBBFBWorld(t, "1.0.0", "1.0.1")
	rc := newReceiver(t, 0)
	resp, body := w.e.send(t, "POST", api.WebhooksPath(w.ext.ID), w.admin, api.NewWebhook{URL: rc.URL + "/hook"})
	var hook api.CreatedWebhook
	if resp.StatusCode != 201 || json.Unmarshal(body, &hook) != nil {
		t.Fatalf("POST webhooks = %d %s", resp.StatusCode, body)
	}
	w.e.startWebhooks(t)
	ada := w.tester(t)
	shot := bbfbPNG(t, 30, 20)
	f := w.mustPost(t, ada.session, bbfbText("the <b>badge</b> is wrong"), bbfbField("bundle", "1"),
		bbfbShot("image/png", shot), bbfbShot("image/jpeg", bbfbJPEG(t, 10, 10)))
	got := rc.waitUntil(t, "feedback.created", func(got []received) bool { return delivered(got) >= 1 })
	r := got[0]
	verify(t, hook.Secret, r)
	ev := r.event
	if ev.Type != betaport.EventFeedbackCreated || ev.Feedback == nil {
		t.Fatalf("the first event is %s: %s", ev.Type, r.body)
	}
	want := betaport.EventFeedback{ID: f.ID, Status: "new", Tester: ada.Email, BundleNumber: 1, Version: "1.0.0",
		Text: "the <b>badge</b> is wrong", Source: betaport.FeedbackFromBuildsPage, Browser: f.Browser, OS: f.OS,
		PagePath: api.FeedbackPagePath(w.ext.ID, f.ID), APIPath: api.FeedbackReportPath(w.ext.ID, f.ID),
		ScreenshotPaths: []string{api.FeedbackScreenshotPath(w.ext.ID, f.ID, 1), api.FeedbackScreenshotPath(w.ext.ID, f.ID, 2)}}
	if fmt.Sprint(*ev.Feedback) != fmt.Sprint(want) {
		t.Errorf("feedback.created carries %+v\nwant %+v", *ev.Feedback, want)
	}
	if ev.Extension.ID != strconv.FormatInt(w.ext.ID, 10) {
		t.Errorf("feedback.created names extension %q, want %d", ev.Extension.ID, w.ext.ID)
	}
	if len(r.body) > 4096 || bytes.Contains(r.body, []byte("PNG")) || bytes.Contains(r.body, []byte("iVBORw0KGgo")) || bytes.Contains(r.body, []byte("/9j/")) {
		t.Errorf("feedback.created (%d bytes) carries image bytes: %s", len(r.body), r.body)
	}

	// Seen: no event. Resolved twice: one. Then another report, so that a
	// stray event would have arrived before it.
	for _, s := range []string{"seen", "resolved", "resolved"} {
		if resp, body := w.e.send(t, "POST", api.FeedbackReportPath(w.ext.ID, f.ID)+"/status", w.admin, api.FeedbackStatus{Status: s}); resp.StatusCode != 200 {
			t.Fatalf("moving to %s = %d %s", s, resp.StatusCode, body)
		}
	}
	g := w.mustPost(t, ada.session, bbfbText("another"))
	got = rc.waitUntil(t, "feedback.resolved and the next feedback.created", func(got []received) bool { return delivered(got) >= 3 })
	var types []string
	for _, r := range got {
		types = append(types, r.event.Type)
	}
	if !slices.Equal(types, []string{betaport.EventFeedbackCreated, betaport.EventFeedbackResolved, betaport.EventFeedbackCreated}) {
		t.Fatalf("events %v; want created, resolved (once, none for seen), created", types)
	}
	if res := got[1].event.Feedback; res == nil || res.ID != f.ID || res.Status != "resolved" || res.APIPath != want.APIPath {
		t.Errorf("feedback.resolved carries %s", got[1].body)
	}
	if nxt := got[2].event.Feedback; nxt == nil || nxt.ID != g.ID || len(nxt.ScreenshotPaths) != 0 || nxt.BundleNumber != 2 {
		t.Errorf("the second feedback.created carries %s", got[2].body)
	}
}

// Per tester: ten reports in a burst, then the eleventh is refused with 429
// and Retry-After, from the builds page and from the extension alike, and
// nothing is kept; another tester is not held back. The metrics count the
// reports received and refused.
func TestBlackBoxFeedbackRateLimitAndMetrics(t *testing.T) {
	t.Parallel()
	w := newBBFBWorld(t, "1.0.0")
	m := metrics.New("test")
	w.e.App.Metrics = m
	ada, bob := w.tester(t), w.tester(t)
	adaURL := w.updatePath(t, ada) + "/feedback"
	for i := range 10 {
		w.mustPost(t, ada.session, bbfbText("report "+strconv.Itoa(i)))
	}
	before := w.state(t)
	resp, body := w.post(t, ada.session, bbfbText("one too many"))
	p := bbfbRefused(t, "the eleventh report in a burst", resp, body, 429)
	ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil || ra < 1 || ra > 30 || p.Type != api.ProblemTooManyRequests {
		t.Errorf("429: Retry-After %q, type %s; want 1–30 seconds and %s", resp.Header.Get("Retry-After"), p.Type, api.ProblemTooManyRequests)
	}
	resp, body = w.e.send(t, "POST", adaURL, http.Header{"User-Agent": {bbfbUA}}, bbfbForm(bbfbText("through the other door")))
	bbfbRefused(t, "the same tester's next report from the extension", resp, body, 429)
	w.wantSame(t, "reports over the rate limit", before)
	w.mustPost(t, bob.session, bbfbText("Bob is not held back"))
	resp, body = w.e.send(t, "POST", w.updatePath(t, bob)+"/feedback", http.Header{"User-Agent": {bbfbUA}}, bbfbForm(bbfbText("nor from his extension")))
	w.kept(t, "Bob's report from the extension", resp, body)

	// A refused report of another kind.
	carl := w.tester(t)
	resp, body = w.post(t, carl.session, bbfbText("gif"), bbfbShot("image/gif", bbfbGIF(t)))
	bbfbRefused(t, "a GIF", resp, body, 400, 415, 422)

	if got := bbfbMetric(t, m, "betaport_feedback_reports_total", map[string]string{"source": "builds_page", "outcome": "received"}); got != 11 {
		t.Errorf("reports received from the builds page: %v, want 11", got)
	}
	if got := bbfbMetric(t, m, "betaport_feedback_reports_total", map[string]string{"source": "extension", "outcome": "received"}); got != 1 {
		t.Errorf("reports received from the extension: %v, want 1", got)
	}
	if got := bbfbRefusedMetric(t, m, "builds_page"); got != 2 {
		t.Errorf("reports refused from the builds page: %v, want 2 (the 429 and the GIF)", got)
	}
	if got := bbfbRefusedMetric(t, m, "extension"); got != 1 {
		t.Errorf("reports refused from the extension: %v, want 1 (the 429)", got)
	}
	if got := bbfbMetric(t, m, "betaport_rate_limited_total", map[string]string{"limiter": "feedback"}); got != 2 {
		t.Errorf("feedback rate limit refusals: %v, want 2", got)
	}
}
