package flows_test

// Black-box flows of the bundles page (model.Bundles, model.BundleRow,
// model.Rollback, model.Live), the page-by-page view (model.Classic) and
// a tester's builds page (model.Builds), against the real service. The
// helpers here (prefixed bbtb) are shared with testers_bb_test.go.

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/demo"
)

// ---- a browser whose wire the test sees ----

// bbtbWire is a person's browser connection: it sends each request to the
// service, records it, and can hold the answer of a chosen request (the
// service has answered; the page has not got it yet) or answer a request in
// the service's place (a proxy in front of it).
type bbtbWire struct {
	next *http.Client

	mu       sync.Mutex
	inflight int
	sent     []*url.URL
	methods  []string
	holds    []*bbtbHold
	fakes    []*bbtbFake
}

type bbtbHold struct {
	match    func(*http.Request) bool
	taken    bool
	answered chan struct{}
	release  chan struct{}
	once     sync.Once
	// done is closed once the page is through with the held answer: its
	// body closed, or the request given up.
	done     chan struct{}
	doneOnce sync.Once
}

func (h *bbtbHold) finish() { h.doneOnce.Do(func() { close(h.done) }) }

type bbtbBody struct {
	io.ReadCloser
	h *bbtbHold
}

func (b *bbtbBody) Close() error {
	err := b.ReadCloser.Close()
	b.h.finish()
	return err
}

// Release lets the held answer reach the page.
func (h *bbtbHold) Release() { h.once.Do(func() { close(h.release) }) }

type bbtbFake struct {
	match   func(*http.Request) bool
	taken   bool
	status  int
	problem api.Problem
}

func (w *bbtbWire) Do(req *http.Request) (*http.Response, error) {
	w.mu.Lock()
	w.sent = append(w.sent, req.URL)
	w.methods = append(w.methods, req.Method)
	w.inflight++
	var h *bbtbHold
	for _, x := range w.holds {
		if !x.taken && x.match(req) {
			x.taken, h = true, x
			break
		}
	}
	var f *bbtbFake
	for _, x := range w.fakes {
		if !x.taken && x.match(req) {
			x.taken, f = true, x
			break
		}
	}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.inflight--
		w.mu.Unlock()
	}()
	if f != nil {
		b, _ := json.Marshal(f.problem)
		return &http.Response{
			StatusCode: f.status, Status: http.StatusText(f.status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header:  http.Header{"Content-Type": {api.ProblemContentType}},
			Body:    io.NopCloser(bytes.NewReader(b)),
			Request: req, ContentLength: int64(len(b)),
		}, nil
	}
	resp, err := w.next.Do(req)
	if h != nil {
		close(h.answered)
		select {
		case <-h.release:
		case <-req.Context().Done():
			if resp != nil {
				resp.Body.Close()
			}
			h.finish()
			return nil, req.Context().Err()
		}
		if err != nil || resp == nil {
			h.finish()
			return resp, err
		}
		resp.Body = &bbtbBody{ReadCloser: resp.Body, h: h}
	}
	return resp, err
}

// hold holds the answer of the next request that matches.
func (w *bbtbWire) hold(t *testing.T, match func(*http.Request) bool) *bbtbHold {
	h := &bbtbHold{match: match, answered: make(chan struct{}), release: make(chan struct{}), done: make(chan struct{})}
	w.mu.Lock()
	w.holds = append(w.holds, h)
	w.mu.Unlock()
	t.Cleanup(h.Release)
	return h
}

// fake answers the next request that matches with a problem, in the
// service's place.
func (w *bbtbWire) fake(match func(*http.Request) bool, status int, p api.Problem) {
	w.mu.Lock()
	w.fakes = append(w.fakes, &bbtbFake{match: match, status: status, problem: p})
	w.mu.Unlock()
}

// idle reports whether no request is on its way (answers given to the
// page, whether or not it has read them yet).
func (w *bbtbWire) idle() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.inflight == 0
}

// count is how many requests matched so far.
func (w *bbtbWire) count(match func(method string, u *url.URL) bool) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for i, u := range w.sent {
		if match(w.methods[i], u) {
			n++
		}
	}
	return n
}

func (w *bbtbWire) log() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var s []string
	for i, u := range w.sent {
		s = append(s, w.methods[i]+" "+u.RequestURI())
	}
	return strings.Join(s, "\n")
}

// bbtbWait blocks until the held request has been answered by the service.
func bbtbWait(t *testing.T, h *bbtbHold, what string) {
	t.Helper()
	select {
	case <-h.answered:
	case <-time.After(10 * time.Second):
		t.Fatalf("the request held for %s was never sent", what)
	}
}

// bbtbNever checks, once the page is through with the held answer h, that
// bad does not come to hold while the UI goroutine runs what the answer
// dispatched (many turns of it: the answer's own dispatch is at most a
// few steps behind the body's close).
func bbtbNever(t *testing.T, p *page, h *bbtbHold, what string, bad func() bool) {
	t.Helper()
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the page never finished with the held answer (%s)", what)
	}
	for i := 0; i < 200; i++ {
		var b bool
		p.Do(func() { b = bad() })
		if b {
			t.Errorf("%s", what)
			return
		}
		if i%20 == 19 {
			runtime.Gosched()
		}
	}
}

func bbtbIs(method, path string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.Method == method && r.URL.Path == path }
}

// bbtbBrowser is a person's browser (a cookie jar of its own) with its wire.
func bbtbBrowser(t *testing.T, m *cli.Main) (*client.Client, *bbtbWire) {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	w := &bbtbWire{next: &http.Client{Jar: jar}}
	c := client.New(m.URL())
	c.HTTP = w
	return c, w
}

// bbtbAdmin is a browser signed in as email.
func bbtbAdmin(t *testing.T, m *cli.Main, email, password string) (*client.Client, *bbtbWire) {
	t.Helper()
	c, w := bbtbBrowser(t, m)
	if _, err := c.SignIn(context.Background(), email, password); err != nil {
		t.Fatalf("signing in as %s: %v", email, err)
	}
	return c, w
}

// bbtbSecondAdmin adds a second admin to the demo's Acme team and returns
// their browser, signed in.
func bbtbSecondAdmin(t *testing.T, m *cli.Main, d *demo.Result) (*client.Client, *bbtbWire) {
	t.Helper()
	pw := credential.NewPassword()
	u := &betaport.User{TeamID: d.Teams[0].ID, Email: "second.admin@acme.test"}
	if err := m.Store.CreateUser(context.Background(), u, credential.HashPassword(pw)); err != nil {
		t.Fatalf("adding a second admin: %v", err)
	}
	return bbtbAdmin(t, m, u.Email, pw)
}

// bbtbOpenLink opens a tester's personal link in c's browser and reports
// whether it signed them in as a tester.
func bbtbOpenLink(t *testing.T, m *cli.Main, c *client.Client, w *bbtbWire, link string) bool {
	t.Helper()
	if strings.HasPrefix(link, "/") {
		link = m.URL() + link
	}
	resp, err := w.next.Get(link)
	if err != nil {
		t.Fatalf("opening %s: %v", link, err)
	}
	resp.Body.Close()
	who, err := c.Session(context.Background())
	return err == nil && who.Kind == api.KindTester
}

// ---- publishing as a pipeline ----

func bbtbZip(t *testing.T, name, version string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	f, err := zw.Create("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, `{"manifest_version":3,"name":%q,"version":%q}`, name, version)
	g, err := zw.Create("background.js")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(g, "console.log(%q)\n", version)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// bbtbKey makes a named key through the keys API (what `betaport key
// create` writes) and returns the key file's service object.
func bbtbKey(t *testing.T, admin *client.Client, ext int64) api.ServiceKey {
	t.Helper()
	var created api.CreatedKey
	if err := admin.Do(context.Background(), http.MethodPost, api.KeysPath(ext), api.NewKey{Label: "CI pipeline"}, &created); err != nil {
		t.Fatalf("making a key: %v", err)
	}
	if created.KeyFile.Service.APIKey == "" {
		t.Fatalf("the new key's file holds no secret: %+v", created)
	}
	return created.KeyFile.Service
}

// bbtbPublish runs the pipeline's three-call submit flow (no browser, no
// cookie: the key authorises) and returns the published bundle.
func bbtbPublish(t *testing.T, m *cli.Main, key api.ServiceKey, version, notes string) betaport.Bundle {
	t.Helper()
	z := bbtbZip(t, "X", version)
	pipeline := client.New(m.URL())
	pipeline.HTTP = &http.Client{}
	sub, err := pipeline.Submit(context.Background(), client.Submission{
		Key: key, ReleaseNotes: notes,
		Zip: &client.ReaderZip{R: bytes.NewReader(z), Size: int64(len(z)), HTTP: &http.Client{}},
	})
	if err != nil {
		t.Fatalf("the pipeline's submit of %s: %v", version, err)
	}
	return sub.Bundle
}

// ---- the extension's event stream, as the browser follows it ----

// bbtbFollow reads extension ext's event stream in hc's browser and hands
// the data of each "bundles" event to on (on the stream's goroutine). It
// returns once the stream is connected; the stream ends with the test, or
// when stop is called.
func bbtbFollow(t *testing.T, m *cli.Main, hc *http.Client, ext int64, on func(data string)) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	connected, done := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(done)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.URL()+api.EventsPath(ext), nil)
		if err != nil {
			connected <- err
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			connected <- err
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			connected <- fmt.Errorf("the event stream answered %d", resp.StatusCode)
			return
		}
		connected <- nil
		sc := bufio.NewScanner(resp.Body)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				event = ""
			case strings.HasPrefix(line, "event:"):
				event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:") && event == "bundles":
				on(strings.TrimSpace(strings.TrimPrefix(line, "data:")))
			}
		}
		// The server ended the stream (the page's access ended): as the
		// browser's EventSource does, the app hears of it (app/ui's
		// "error" listener) as news it could not read.
		if ctx.Err() == nil {
			on("")
		}
	}()
	select {
	case err := <-connected:
		if err != nil {
			cancel()
			t.Fatalf("following extension %d's events: %v", ext, err)
		}
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatalf("extension %d's event stream did not connect", ext)
	}
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// ---- reading the pages ----

func bbtbItems[T any](r fetch.Rows[T]) []T {
	var out []T
	for i := 0; i < r.Len(); i++ {
		if x, ok := r.At(i); ok {
			out = append(out, x)
		}
	}
	return out
}

func bbtbNumbers(bs []betaport.Bundle) []int64 {
	var n []int64
	for _, b := range bs {
		n = append(n, b.Number)
	}
	return n
}

func bbtbFind(bs []betaport.Bundle, number int64) (betaport.Bundle, bool) {
	for _, b := range bs {
		if b.Number == number {
			return b, true
		}
	}
	return betaport.Bundle{}, false
}

// bbtbRevision is what the service stores as the extension's current and
// last bundle.
func bbtbRevision(t *testing.T, m *cli.Main, ext int64) (current, last int64) {
	t.Helper()
	current, last, err := m.Store.BundleRevision(context.Background(), ext)
	if err != nil {
		t.Fatal(err)
	}
	return current, last
}

func bbtbAudit(t *testing.T, m *cli.Main, ext int64, action string) int {
	t.Helper()
	evs, err := m.Store.FindAuditEvents(context.Background(), ext, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Action == action {
			n++
		}
	}
	return n
}

func isRollbackPost(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/rollback")
}

func countRollbackPosts(w *bbtbWire) int {
	return w.count(func(method string, u *url.URL) bool {
		return method == http.MethodPost && strings.HasSuffix(u.Path, "/rollback")
	})
}

// bbtbBundlesPage is an open bundles page and what its effects did.
type bbtbBundlesPage struct {
	*page
	B         *model.Bundles
	Focused   []int64 // FocusRollback's numbers
	SignedOut []error
	Titles    []string
}

func bbtbOpenBundles(t *testing.T, c *client.Client, ext int64) *bbtbBundlesPage {
	t.Helper()
	bp := &bbtbBundlesPage{page: openPage(t, c)}
	bp.Do(func() {
		bp.B = model.NewBundles(model.BundlesConfig{
			Env:           bp.Env,
			Cache:         fetch.NewCache(fetch.CacheOptions{}),
			Title:         func(s string) { bp.Titles = append(bp.Titles, s) },
			SignedOut:     func(err error) { bp.SignedOut = append(bp.SignedOut, err) },
			FocusRollback: func(n int64) { bp.Focused = append(bp.Focused, n) },
		})
		bp.B.Open(ext)
	})
	return bp
}

func (bp *bbtbBundlesPage) settled(what string, top int64) {
	bp.Wait(what, func() bool {
		return bp.B.Settled() && bp.B.Top() == top && bp.B.Record() != nil && !bp.B.List.IsValidating
	})
}

func (bp *bbtbBundlesPage) rows() []betaport.Bundle { return bbtbItems(bp.B.Rows()) }

// row is the row of bundle number as the page draws it.
func (bp *bbtbBundlesPage) row(t *testing.T, number int64, focus *[]model.RowControl) *model.BundleRow {
	t.Helper()
	b, ok := bbtbFind(bp.rows(), number)
	if !ok {
		t.Errorf("the page shows no bundle #%d (it shows %v)", number, bbtbNumbers(bp.rows()))
		return &model.BundleRow{} // offers nothing
	}
	r := &model.BundleRow{Rollback: bp.B.Rollback}
	if focus != nil {
		r.Focus = func(c model.RowControl) { *focus = append(*focus, c) }
	}
	r.Show(b)
	return r
}

// ---- the rollback question ----

// Roll back to an older bundle as a person does: ask, change one's mind,
// ask again, Yes — and Yes again (and Yes in another row) while the answer
// is on its way. One rollback is published, on top, current, serving the
// old bundle's bytes under a higher version; the focus follows the row.
func TestBBBundlesRollbackAskCancelAskYesTwice(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2 // Reader Mode Plus: bundles #1..#3, #3 current
	bp := bbtbOpenBundles(t, a, ext)
	bp.settled("the bundles page shows #3 on top", 3)

	var focus []model.RowControl
	var r2, r1, r3 *model.BundleRow
	var before2 betaport.Bundle
	bp.Do(func() {
		if got := bbtbNumbers(bp.rows()); fmt.Sprint(got) != "[3 2 1]" {
			t.Errorf("the page shows bundles %v, want [3 2 1]", got)
		}
		r3 = bp.row(t, 3, nil)
		r2 = bp.row(t, 2, &focus)
		r1 = bp.row(t, 1, nil)
		before2 = r2.Bundle
		if r3.OffersRollback() {
			t.Errorf("the current bundle's row (#3) offers to roll back to itself")
		}
		if !r2.OffersRollback() || !r1.OffersRollback() {
			t.Errorf("older rows do not offer a rollback: #2 %v, #1 %v", r2.OffersRollback(), r1.OffersRollback())
		}
		r2.Ask()
		bp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		if !r2.AsksRollback() {
			t.Errorf("after Roll back to #2 the row does not ask")
		}
		r2.Cancel()
		if r2.AsksRollback() {
			t.Errorf("after Cancel the question is still open")
		}
	})
	if n := countRollbackPosts(w); n != 0 {
		t.Fatalf("asking then cancelling sent %d rollbacks", n)
	}
	if cur, last := bbtbRevision(t, m, ext); cur != 3 || last != 3 {
		t.Fatalf("after Cancel the service serves #%d (last #%d), want #3 untouched", cur, last)
	}
	bp.Do(func() {
		if len(focus) < 2 || focus[0] != model.ConfirmRollback || focus[len(focus)-1] != model.RollbackButton {
			t.Errorf("focus went %v; want Yes when asked, then back to Roll back on Cancel", focus)
		}
	})

	held := w.hold(t, isRollbackPost)
	bp.Do(func() {
		r2.Ask()
		bp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		r2.Confirm()
		if r2.AsksRollback() {
			t.Errorf("after Yes the question is still open")
		}
		if !r2.RollingBack() {
			t.Errorf("after Yes the row does not say it is rolling back")
		}
		r2.Confirm()                         // Yes again, the answer on its way
		r2.Ask()                             // and Roll back again
		bp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		if r2.AsksRollback() {
			t.Errorf("while #2 is being served again, Roll back asks again")
		}
		r1.Ask()
		bp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		r1.Confirm()                         // Yes in another row
	})
	bbtbWait(t, held, "the rollback")
	held.Release()
	bp.Wait("the rollback shows on top", func() bool {
		return bp.B.Rollback.RollingBack == 0 && bp.B.Top() == 4 && bp.B.Settled()
	})

	if n := countRollbackPosts(w); n != 1 {
		t.Errorf("pressing Yes twice (and Yes in another row) sent %d rollbacks, want 1\n%s", n, w.log())
	}
	cur, last := bbtbRevision(t, m, ext)
	if cur != 4 || last != 4 {
		t.Fatalf("the service serves #%d (last #%d), want exactly one rollback, #4", cur, last)
	}
	stored, err := m.Store.FindBundle(context.Background(), ext, 4)
	if err != nil {
		t.Fatal(err)
	}
	if stored.RollbackOf != 2 || stored.SHA256 != before2.SHA256 {
		t.Errorf("#4 serves %s (a rollback of #%d), want #2's bytes %s", stored.SHA256, stored.RollbackOf, before2.SHA256)
	}
	if bbtbAudit(t, m, ext, betaport.AuditBundleRollback) != 1 {
		t.Errorf("the audit trail holds %d rollbacks, want 1", bbtbAudit(t, m, ext, betaport.AuditBundleRollback))
	}
	bp.Do(func() {
		rb := bp.B.Rollback
		if rb.Err != nil || rb.Done == nil || rb.Done.Number != 4 || rb.Of != 2 {
			t.Errorf("the page says: rolled back of #%d to %+v, error %v; want #2 served again as #4", rb.Of, rb.Done, rb.Err)
		}
		rows := bp.rows()
		if got := bbtbNumbers(rows); fmt.Sprint(got) != "[4 3 2 1]" {
			t.Errorf("after the rollback the page shows %v, want [4 3 2 1]", got)
		}
		for _, b := range rows {
			if b.Current != (b.Number == 4) {
				t.Errorf("bundle #%d shows current=%v after the rollback to #4", b.Number, b.Current)
			}
		}
		if c, ok := bp.B.Current(); !ok || c.Number != 4 || c.RollbackOf != 2 {
			t.Errorf("the page's current bundle is %+v (%v), want #4, a rollback of #2", c, ok)
		}
		if rec := bp.B.Record(); rec == nil || rec.CurrentBundle != 4 {
			t.Errorf("the header's record says current %+v, want #4", rec)
		}
		if !versionAbove(bp.rows()[0].Version, "1.0.3") {
			t.Errorf("the rollback is served as version %q: browsers with 1.0.3 would not install it", bp.rows()[0].Version)
		}
		if len(bp.Focused) == 0 || bp.Focused[len(bp.Focused)-1] != 2 {
			t.Errorf("after the rollback the focus went to %v, want back to Roll back to #2 in its moved row", bp.Focused)
		}
		r2.Show(bp.rows()[2]) // the row keeps #2, now one place down
		if !r2.OffersRollback() || r2.RollingBack() {
			t.Errorf("after the rollback #2's row offers %v, rolling back %v", r2.OffersRollback(), r2.RollingBack())
		}
	})
	// What testers get now is #2's zip.
	var current betaport.Bundle
	if err := a.Do(context.Background(), http.MethodGet, api.CurrentBundlePath(ext), nil, &current); err != nil || current.Number != 4 || current.SHA256 != before2.SHA256 {
		t.Errorf("testers get %+v (%v), want #4 with #2's bytes", current, err)
	}
}

// versionAbove compares dotted numeric versions.
func versionAbove(v, than string) bool {
	a, b := strings.Split(v, "."), strings.Split(than, ".")
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y int
		if i < len(a) {
			fmt.Sscan(a[i], &x)
		}
		if i < len(b) {
			fmt.Sscan(b[i], &y)
		}
		if x != y {
			return x > y
		}
	}
	return false
}

// A second admin's tab rolls back to #2 first; the first admin's page,
// still showing #3 as current, then says Yes to the same rollback. The
// service publishes one rollback, and the first page shows it — no
// second bundle, no error for what already happened.
func TestBBBundlesRollbackSecondAdminsTabFirst(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, wa := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	b, _ := bbtbSecondAdmin(t, m, d)
	const ext = 2
	pa := bbtbOpenBundles(t, a, ext)
	pb := bbtbOpenBundles(t, b, ext)
	pa.settled("the first admin's page", 3)
	pb.settled("the second admin's page", 3)

	var ra, rb *model.BundleRow
	pa.Do(func() { ra = pa.row(t, 2, nil) })
	pb.Do(func() {
		rb = pb.row(t, 2, nil)
		rb.Ask()
		pb.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		rb.Confirm()
	})
	pb.Wait("the second admin's rollback shows", func() bool {
		return pb.B.Rollback.RollingBack == 0 && pb.B.Top() == 4 && pb.B.Settled()
	})
	pa.Do(func() {
		if pa.B.Top() != 3 {
			t.Logf("the first page already shows #%d on top", pa.B.Top())
		}
		ra.Ask()
		pa.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		ra.Confirm()
	})
	pa.Wait("the first admin's Yes answered", func() bool {
		return pa.B.Rollback.RollingBack == 0 && pa.B.Settled() && (pa.B.Rollback.Done != nil || pa.B.Rollback.Err != nil)
	})
	if cur, last := bbtbRevision(t, m, ext); cur != 4 || last != 4 {
		t.Errorf("two admins rolling back to #2 left the service at current #%d, last #%d; want one rollback (#4)", cur, last)
	}
	if n := bbtbAudit(t, m, ext, betaport.AuditBundleRollback); n != 1 {
		t.Errorf("the audit trail holds %d rollbacks, want 1", n)
	}
	if n := countRollbackPosts(wa); n != 1 {
		t.Errorf("the first admin's page sent %d rollbacks, want 1", n)
	}
	pa.Wait("the first admin's page shows #4 on top", func() bool { return pa.B.Top() == 4 && pa.B.Settled() })
	pa.Do(func() {
		if err := pa.B.Rollback.Err; err != nil {
			t.Errorf("the first admin sees an error for a rollback that is done: %v", err)
		}
		if c, ok := pa.B.Current(); !ok || c.Number != 4 || c.RollbackOf != 2 {
			t.Errorf("the first admin's page shows current %+v, want #4 (the second admin's rollback of #2)", c)
		}
		if got := bbtbNumbers(pa.rows()); fmt.Sprint(got) != "[4 3 2 1]" {
			t.Errorf("the first admin's page shows %v, want [4 3 2 1] (one rollback)", got)
		}
	})
}

// The service refuses a rollback (the admin signed out in another tab of
// the same browser): the page is told the person is signed out, shows no
// rollback, and nothing changes for testers.
func TestBBBundlesRollbackRefusedSignedOutElsewhere(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, _ := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2
	bp := bbtbOpenBundles(t, a, ext)
	bp.settled("the bundles page", 3)
	if err := a.SignOut(context.Background()); err != nil { // the other tab
		t.Fatal(err)
	}
	var r *model.BundleRow
	bp.Do(func() {
		r = bp.row(t, 2, nil)
		r.Ask()
		bp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		r.Confirm()
	})
	// (Once told, the page leaves for the sign-in page: the row's own
	// state no longer shows, so it is not checked.)
	bp.Wait("the refused rollback answered", func() bool {
		return len(bp.SignedOut) > 0 || bp.B.Rollback.Err != nil || bp.B.Rollback.Done != nil
	})
	bp.Do(func() {
		if len(bp.SignedOut) == 0 || !client.IsUnauthorized(bp.SignedOut[0]) {
			t.Errorf("a rollback refused with 401 did not send the person to sign in (SignedOut told %v, Err %v)", bp.SignedOut, bp.B.Rollback.Err)
		}
		if bp.B.Rollback.Done != nil {
			t.Errorf("the page shows a rollback the service refused: %+v", bp.B.Rollback.Done)
		}
		if bp.B.Top() != 3 {
			t.Errorf("the page's top is #%d after a refused rollback, want #3", bp.B.Top())
		}
	})
	if cur, last := bbtbRevision(t, m, ext); cur != 3 || last != 3 {
		t.Errorf("a refused rollback changed the service: current #%d, last #%d", cur, last)
	}
}

// A rollback answered with a problem (the service in maintenance, say)
// shows why, puts the focus back on the row's Roll back, changes nothing,
// and the next Yes works.
func TestBBBundlesRollbackRefusedShowsWhyThenRetry(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2
	bp := bbtbOpenBundles(t, a, ext)
	bp.settled("the bundles page", 3)
	const why = "Betaport is being updated: try again in a minute."
	w.fake(isRollbackPost, http.StatusServiceUnavailable, api.Problem{
		Type: api.ProblemUnavailable, Title: "Unavailable", Status: http.StatusServiceUnavailable, Detail: why,
	})
	var r *model.BundleRow
	bp.Do(func() {
		r = bp.row(t, 2, nil)
		r.Ask()
		bp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		r.Confirm()
	})
	bp.Wait("the refusal shows", func() bool { return bp.B.Rollback.RollingBack == 0 && bp.B.Rollback.Err != nil })
	bp.Do(func() {
		rb := bp.B.Rollback
		if p, ok := api.AsProblem(rb.Err); !ok || p.Detail != why {
			t.Errorf("the page shows %v, want the service's reason %q", rb.Err, why)
		}
		if rb.Of != 2 || rb.Done != nil {
			t.Errorf("the refusal is told of #%d with a result %+v; want #2, nothing done", rb.Of, rb.Done)
		}
		if len(bp.Focused) == 0 || bp.Focused[len(bp.Focused)-1] != 2 {
			t.Errorf("after the refusal the focus went to %v, want Roll back to #2", bp.Focused)
		}
		if !r.OffersRollback() || r.RollingBack() || r.AsksRollback() {
			t.Errorf("after the refusal the row offers %v, rolling back %v, asking %v", r.OffersRollback(), r.RollingBack(), r.AsksRollback())
		}
		if got := bbtbNumbers(bp.rows()); fmt.Sprint(got) != "[3 2 1]" {
			t.Errorf("after a refused rollback the page shows %v, want [3 2 1]", got)
		}
	})
	if cur, last := bbtbRevision(t, m, ext); cur != 3 || last != 3 {
		t.Fatalf("a refused rollback changed the service: current #%d, last #%d", cur, last)
	}
	bp.Do(func() {
		r.Ask()
		bp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		r.Confirm()
	})
	bp.Wait("the second Yes rolls back", func() bool {
		return bp.B.Rollback.RollingBack == 0 && bp.B.Top() == 4 && bp.B.Settled()
	})
	bp.Do(func() {
		if bp.B.Rollback.Err != nil {
			t.Errorf("after a rollback that worked, the page still shows the old error %v", bp.B.Rollback.Err)
		}
	})
	if cur, _ := bbtbRevision(t, m, ext); cur != 4 {
		t.Errorf("the retried rollback left the service at #%d, want #4", cur)
	}
}

// Leaving the page while a rollback is on its way: the rollback the
// person asked for still happens (the service got it), and the gone page
// shows nothing of its answer.
func TestBBBundlesRollbackLeavePageBeforeAnswer(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2
	bp := bbtbOpenBundles(t, a, ext)
	bp.settled("the bundles page", 3)
	held := w.hold(t, isRollbackPost)
	bp.Do(func() {
		r := bp.row(t, 1, nil)
		r.Ask()
		bp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		r.Confirm()
	})
	bbtbWait(t, held, "the rollback")
	bp.Do(func() { bp.B.Close() })
	held.Release()
	bbtbNever(t, bp.page, held, "the bundles page closed before the rollback's answer took it (the rollback's result shows on a page the person left)", func() bool {
		return bp.B.Rollback.Done != nil || bp.B.Rollback.Err != nil
	})
	if cur, _ := bbtbRevision(t, m, ext); cur != 4 {
		t.Errorf("the service serves #%d; the rollback it answered should be #4", cur)
	}
	// A new visit shows it.
	bp2 := bbtbOpenBundles(t, a, ext)
	bp2.settled("the page opened again", 4)
	bp2.Do(func() {
		if c, ok := bp2.B.Current(); !ok || c.RollbackOf != 1 {
			t.Errorf("the page opened again shows current %+v, want #4, a rollback of #1", c)
		}
	})
	bp.Do(func() {
		if bp.B.Rollback.Done != nil || bp.B.Rollback.Err != nil {
			t.Errorf("the closed page took the answer: done %+v, err %v", bp.B.Rollback.Done, bp.B.Rollback.Err)
		}
	})
}

// ---- release notes ----

// Release notes a pipeline published with a bundle show on its row when
// opened, close with Escape, and close when the row is given another
// bundle; a bundle without notes shows none.
func TestBBBundlesReleaseNotesShownWithBundle(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, _ := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2
	notes := "Fixes the **crash** on start.\n\n- faster tabs\n- <b>not html</b>"
	key := bbtbKey(t, a, ext)
	pub := bbtbPublish(t, m, key, "1.2.3", notes)
	if pub.Number != 4 || pub.ReleaseNotes != notes {
		t.Fatalf("the pipeline published %+v, want #4 with the notes", pub)
	}
	bp := bbtbOpenBundles(t, a, ext)
	bp.settled("the bundles page", 4)
	var focus []model.RowControl
	bp.Do(func() {
		r4 := bp.row(t, 4, &focus)
		if r4.Bundle.ReleaseNotes != notes {
			t.Errorf("the row's bundle carries notes %q, want %q", r4.Bundle.ReleaseNotes, notes)
		}
		if r4.NotesShown() {
			t.Errorf("the notes show before Notes is pressed")
		}
		r4.ToggleNotes()
		if !r4.NotesShown() {
			t.Errorf("after Notes the notes do not show")
		}
		r4.Escape()
		if r4.NotesShown() || r4.NotesOpen {
			t.Errorf("after Escape the notes still show")
		}
		r4.ToggleNotes()
		r4.ToggleNotes()
		if r4.NotesShown() {
			t.Errorf("Notes pressed twice leaves the notes open")
		}
		r4.ToggleNotes()
		b3, _ := bbtbFind(bp.rows(), 3)
		r4.Show(b3) // the list's window moved: the row shows #3 now
		if r4.NotesShown() || r4.NotesOpen {
			t.Errorf("a row given another bundle keeps the last one's notes open")
		}
		r3 := bp.row(t, 3, nil)
		r3.ToggleNotes()
		if r3.NotesShown() {
			t.Errorf("a bundle without notes shows notes")
		}
	})
	// The service keeps what the pipeline sent.
	stored, err := m.Store.FindBundle(context.Background(), ext, 4)
	if err != nil || stored.ReleaseNotes != notes {
		t.Errorf("the service stored notes %q (%v), want %q", stored.ReleaseNotes, err, notes)
	}
}

// ---- live events ----

// A pipeline publishes while the bundles page is still reading (its first
// page was answered before the publish, and is on its way): the event
// waits for the read, then the page reads again once, and shows the new
// bundle on top as current. An event the page already shows reads nothing.
func TestBBBundlesLivePublishArrivesWhileReading(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2
	key := bbtbKey(t, a, ext)
	firstPage := func(method string, u *url.URL) bool {
		return method == http.MethodGet && u.Path == api.BundlesPath(ext) && (u.Query().Get("page") == "0" || u.Query().Get("page") == "")
	}
	held := w.hold(t, func(r *http.Request) bool { return firstPage(r.Method, r.URL) })

	bp := &bbtbBundlesPage{page: openPage(t, a)}
	var events []api.Revision
	bp.Do(func() {
		bp.B = model.NewBundles(model.BundlesConfig{Env: bp.Env, Cache: fetch.NewCache(fetch.CacheOptions{})})
		bp.B.Open(ext)
	})
	bbtbFollow(t, m, w.next, ext, func(data string) {
		bp.Dispatch(func() {
			rev, ok := model.ParseRevision(data)
			events = append(events, rev)
			bp.B.Live.Event(rev, ok)
		})
	})
	bbtbWait(t, held, "the first page of bundles")
	pub := bbtbPublish(t, m, key, "1.2.3", "")
	bp.Wait("the publish's event arrives", func() bool {
		return len(events) > 0 && events[len(events)-1].LastBundle == pub.Number
	})
	bp.Do(func() {
		if !bp.B.Live.Awaiting() {
			t.Errorf("an event that came while the page reads does not wait for the read")
		}
		if bp.B.Top() == pub.Number {
			t.Errorf("the page shows #%d before its read landed", pub.Number)
		}
	})
	before := w.count(firstPage)
	held.Release()
	bp.Wait("the page shows the pipeline's bundle", func() bool {
		return bp.B.Top() == pub.Number && bp.B.Settled() && !bp.B.Live.Awaiting()
	})
	bp.Do(func() {
		if c, ok := bp.B.Current(); !ok || c.Number != pub.Number {
			t.Errorf("the page's current bundle is %+v, want #%d", c, pub.Number)
		}
		if rec := bp.B.Record(); rec == nil || rec.CurrentBundle != pub.Number {
			t.Errorf("the header says current %+v, want #%d", rec, pub.Number)
		}
		for _, b := range bp.rows() {
			if b.Current != (b.Number == pub.Number) {
				t.Errorf("bundle #%d shows current=%v", b.Number, b.Current)
			}
		}
	})
	if n := w.count(firstPage) - before; n != 1 {
		t.Errorf("after the held read landed the page read its first page %d more times, want once\n%s", n, w.log())
	}
	// The stream's reconnect sends the current revision again: the page
	// shows it, and reads nothing.
	w.mu.Lock()
	after := len(w.sent)
	w.mu.Unlock()
	bp.Do(func() { bp.B.Live.Event(api.Revision{CurrentBundle: pub.Number, LastBundle: pub.Number}, true) })
	bp.Do(func() {})
	bp.Do(func() {
		if bp.B.Live.Awaiting() {
			t.Errorf("an event the page shows waits for something")
		}
	})
	w.mu.Lock()
	extra := w.sent[after:]
	w.mu.Unlock()
	if len(extra) != 0 {
		t.Errorf("an event the page already shows made it send %v", extra)
	}
}

// The settled page follows a second publish through the real stream, and
// an event whose data cannot be read is taken as news (the page reads
// again rather than miss a publish).
func TestBBBundlesLiveFollowsPublishesWhileOpen(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2
	key := bbtbKey(t, a, ext)
	bp := bbtbOpenBundles(t, a, ext)
	bp.settled("the bundles page", 3)
	bbtbFollow(t, m, w.next, ext, func(data string) {
		bp.Dispatch(func() {
			rev, ok := model.ParseRevision(data)
			bp.B.Live.Event(rev, ok)
		})
	})
	p4 := bbtbPublish(t, m, key, "1.2.3", "first")
	bp.settled("the page shows #4", p4.Number)
	p5 := bbtbPublish(t, m, key, "1.2.4", "second")
	bp.settled("the page shows #5", p5.Number)
	bp.Do(func() {
		if got := bbtbNumbers(bp.rows()); fmt.Sprint(got) != "[5 4 3 2 1]" {
			t.Errorf("after two publishes the page shows %v, want [5 4 3 2 1]", got)
		}
	})
	// Another publish lands while the stream is gone (the browser's stream
	// broke); the browser hands the page an event it could not read.
	p6 := bbtbPublish(t, m, key, "1.2.5", "")
	bp.Do(func() { bp.B.Live.Event(api.Revision{}, false) })
	bp.settled("an unreadable event makes the page read again", p6.Number)
}

// ---- the page-by-page view ----

type bbtbClassicPage struct {
	*page
	C       *model.Classic
	Focused []int64
}

func bbtbOpenClassic(t *testing.T, c *client.Client) *bbtbClassicPage {
	t.Helper()
	cp := &bbtbClassicPage{page: openPage(t, c)}
	cp.Do(func() {
		cp.C = model.NewClassic(model.ClassicConfig{
			Env:           cp.Env,
			Cache:         fetch.NewCache(fetch.CacheOptions{}),
			FocusRollback: func(n int64) { cp.Focused = append(cp.Focused, n) },
		})
	})
	return cp
}

func classicAddr(ext int64, pageParam string) (string, url.Values) {
	q := url.Values{}
	if pageParam != "" {
		q.Set("page", pageParam)
	}
	return fmt.Sprintf("/extensions/%d/pages", ext), q
}

func numbersOf(s fetch.State[[]betaport.Bundle]) []int64 { return bbtbNumbers(s.Data) }

func wantRange(from, to int64) string {
	var n []int64
	for i := from; i >= to; i-- {
		n = append(n, i)
	}
	return fmt.Sprint(n)
}

// The page number comes from the address (a wrong one is page 0); Next
// shows the page read ahead without asking; Back and Forward show the
// pages already read at once; the last page says so; another extension
// opens anew.
func TestBBBundlesClassicAddressNextBackForward(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 1 // Tab Tamer: 120 bundles, 6 pages of 20

	for _, c := range []struct {
		q    url.Values
		want int
	}{
		{url.Values{}, 0}, {url.Values{"page": {"2"}}, 2}, {url.Values{"page": {"abc"}}, 0},
		{url.Values{"page": {"-3"}}, 0}, {url.Values{"page": {"1e3"}}, 0}, {url.Values{"page": {" 2"}}, 0},
	} {
		if got := model.ClassicPage(c.q); got != c.want {
			t.Errorf("the address ?%s names page %d, want %d", c.q.Encode(), got, c.want)
		}
	}

	pageReads := func(n int) func(string, *url.URL) bool {
		return func(method string, u *url.URL) bool {
			return method == http.MethodGet && u.Path == api.BundlesPath(ext) && u.Query().Get("page") == fmt.Sprint(n)
		}
	}
	cp := bbtbOpenClassic(t, a)
	cp.Do(func() { cp.C.Nav(classicAddr(ext, "2")) })
	cp.Wait("page 2 and the next one read", func() bool {
		return cp.C.Current.HasData && cp.C.Next.HasData && !cp.C.Current.IsValidating && !cp.C.Next.IsValidating
	})
	cp.Do(func() {
		if cp.C.ID != ext || cp.C.Page != 2 {
			t.Errorf("the view shows extension %d page %d, want %d page 2", cp.C.ID, cp.C.Page, ext)
		}
		if got := fmt.Sprint(numbersOf(cp.C.Current)); got != wantRange(80, 61) {
			t.Errorf("page 2 shows %s, want %s", got, wantRange(80, 61))
		}
		if got := fmt.Sprint(numbersOf(cp.C.Next)); got != wantRange(60, 41) {
			t.Errorf("the page read ahead is %s, want %s", got, wantRange(60, 41))
		}
		if !cp.C.HasNext() || cp.C.Last() {
			t.Errorf("page 2 of 6: HasNext %v, Last %v", cp.C.HasNext(), cp.C.Last())
		}
	})
	if n := w.count(pageReads(3)); n != 1 {
		t.Errorf("page 3 was read %d times ahead of Next, want 1", n)
	}

	// Next: the address becomes page 3, shown at once.
	cp.Do(func() { cp.C.Nav(classicAddr(ext, "3")) })
	cp.Do(func() { // the render after the dispatched update
		if cp.C.Page != 3 || cp.C.Current.IsLoading || fmt.Sprint(numbersOf(cp.C.Current)) != wantRange(60, 41) {
			t.Errorf("Next shows page %d with %v (loading %v); want page 3 (%s) at once", cp.C.Page, numbersOf(cp.C.Current), cp.C.Current.IsLoading, wantRange(60, 41))
		}
	})
	cp.Wait("page 4 read ahead", func() bool { return cp.C.Next.HasData && !cp.C.Next.IsValidating && !cp.C.Current.IsValidating })
	if n := w.count(pageReads(3)); n != 1 {
		t.Errorf("Next asked for page 3 again (%d reads in all), want the page read ahead shown", n)
	}
	// Back: page 2 at once, and nothing asked.
	sent := w.count(pageReads(2))
	cp.Do(func() { cp.C.Nav(classicAddr(ext, "2")) })
	cp.Do(func() { // the render after the dispatched update
		if cp.C.Page != 2 || cp.C.Current.IsLoading || fmt.Sprint(numbersOf(cp.C.Current)) != wantRange(80, 61) {
			t.Errorf("Back shows page %d with %v (loading %v); want page 2 (%s) at once", cp.C.Page, numbersOf(cp.C.Current), cp.C.Current.IsLoading, wantRange(80, 61))
		}
	})
	cp.Wait("back on page 2", func() bool { return !cp.C.Current.IsValidating && !cp.C.Next.IsValidating })
	if n := w.count(pageReads(2)) - sent; n != 0 {
		t.Errorf("Back asked for page 2 again (%d requests), want it shown from what was read", n)
	}
	// Forward: page 3 at once.
	cp.Do(func() { cp.C.Nav(classicAddr(ext, "3")) })
	cp.Do(func() { // the render after the dispatched update
		if cp.C.Page != 3 || cp.C.Current.IsLoading || fmt.Sprint(numbersOf(cp.C.Current)) != wantRange(60, 41) {
			t.Errorf("Forward shows page %d with %v (loading %v); want page 3 (%s) at once", cp.C.Page, numbersOf(cp.C.Current), cp.C.Current.IsLoading, wantRange(60, 41))
		}
	})
	// The last page.
	cp.Do(func() { cp.C.Nav(classicAddr(ext, "5")) })
	cp.Wait("the last page", func() bool {
		return cp.C.Current.HasData && !cp.C.Current.IsValidating && !cp.C.Next.IsValidating
	})
	cp.Do(func() {
		if got := fmt.Sprint(numbersOf(cp.C.Current)); got != wantRange(20, 1) {
			t.Errorf("page 5 shows %s, want %s", got, wantRange(20, 1))
		}
		if cp.C.HasNext() || !cp.C.Last() {
			t.Errorf("the last page: HasNext %v, Last %v; want no Next", cp.C.HasNext(), cp.C.Last())
		}
	})
	// A wrong page number in the address is page 0.
	cp.Do(func() { cp.C.Nav(classicAddr(ext, "oops")) })
	cp.Wait("page 0", func() bool { return cp.C.Current.HasData && !cp.C.Current.IsValidating })
	cp.Do(func() {
		if cp.C.Page != 0 || fmt.Sprint(numbersOf(cp.C.Current)) != wantRange(120, 101) {
			t.Errorf("?page=oops shows page %d %v, want page 0 (%s)", cp.C.Page, numbersOf(cp.C.Current), wantRange(120, 101))
		}
	})
	// Another extension opens anew.
	cp.Do(func() { cp.C.Nav(classicAddr(2, "")) })
	cp.Wait("the other extension", func() bool {
		return cp.C.ID == 2 && cp.C.Current.HasData && !cp.C.Current.IsValidating && !cp.C.Next.IsValidating
	})
	cp.Do(func() {
		if got := fmt.Sprint(numbersOf(cp.C.Current)); got != "[3 2 1]" {
			t.Errorf("Reader Mode Plus shows %s, want [3 2 1]", got)
		}
		if cp.C.HasNext() || !cp.C.Last() {
			t.Errorf("Reader Mode Plus's one page: HasNext %v, Last %v", cp.C.HasNext(), cp.C.Last())
		}
	})
}

// A rollback from the page-by-page view: the question, Yes twice, one
// rollback; the page is read again (its bundles moved one place down) and
// the focus goes back to the row's Roll back.
func TestBBBundlesClassicRollback(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 1
	cp := bbtbOpenClassic(t, a)
	cp.Do(func() { cp.C.Nav(classicAddr(ext, "1")) })
	cp.Wait("page 1", func() bool { return cp.C.Current.HasData && !cp.C.Current.IsValidating })
	var r *model.BundleRow
	cp.Do(func() {
		b, ok := bbtbFind(cp.C.Current.Data, 90)
		if !ok {
			t.Errorf("page 1 shows %v, no #90", numbersOf(cp.C.Current))
			return
		}
		r = &model.BundleRow{Rollback: cp.C.Rollback}
		r.Show(b)
		if !r.OffersRollback() {
			t.Errorf("#90's row offers no rollback")
			return
		}
		r.Ask()
		cp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		r.Confirm()
		r.Confirm()
	})
	cp.Wait("the rollback done and the page read again", func() bool {
		return cp.C.Rollback.RollingBack == 0 && (cp.C.Rollback.Done != nil || cp.C.Rollback.Err != nil) &&
			!cp.C.Current.IsValidating && len(cp.C.Current.Data) > 0 && cp.C.Current.Data[0].Number == 101
	})
	if n := countRollbackPosts(w); n != 1 {
		t.Errorf("Yes twice sent %d rollbacks", n)
	}
	if cur, last := bbtbRevision(t, m, ext); cur != 121 || last != 121 {
		t.Errorf("the service is at current #%d last #%d, want one rollback #121", cur, last)
	}
	cp.Do(func() {
		if cp.C.Rollback.Err != nil || cp.C.Rollback.Done == nil || cp.C.Rollback.Done.RollbackOf != 90 {
			t.Errorf("the view says %+v / %v, want #121, a rollback of #90", cp.C.Rollback.Done, cp.C.Rollback.Err)
		}
		if got := fmt.Sprint(numbersOf(cp.C.Current)); got != wantRange(101, 82) {
			t.Errorf("page 1 read again shows %s, want %s", got, wantRange(101, 82))
		}
		if len(cp.Focused) == 0 || cp.Focused[len(cp.Focused)-1] != 90 {
			t.Errorf("the focus went to %v, want Roll back to #90", cp.Focused)
		}
	})
}

// ---- a tester's builds page ----

type bbtbBuildsPage struct {
	*page
	B       *model.Builds
	Went    []string
	Listens []int64
	Session *model.Session
}

// bbtbOpenBuilds opens the builds page in c's browser; its event stream is
// the real one, followed in w's browser.
func bbtbOpenBuilds(t *testing.T, m *cli.Main, c *client.Client, w *bbtbWire) *bbtbBuildsPage {
	t.Helper()
	bp := &bbtbBuildsPage{page: openPage(t, c), Session: model.NewSession(nil)}
	bp.Do(func() {
		bp.B = model.NewBuilds(model.BuildsConfig{
			Env:      bp.Env,
			Session:  bp.Session,
			Cache:    fetch.NewCache(fetch.CacheOptions{}),
			Navigate: func(p string) { bp.Went = append(bp.Went, p) },
			Listen: func(ext int64, shows func(api.Revision) bool, changed func()) func() {
				bp.Listens = append(bp.Listens, ext)
				return bbtbFollow(t, m, w.next, ext, func(data string) {
					bp.Dispatch(func() {
						if rev, ok := model.ParseRevision(data); !ok || !shows(rev) {
							changed()
						}
					})
				})
			},
		})
		bp.B.Open()
	})
	return bp
}

func (bp *bbtbBuildsPage) rows() []betaport.Bundle { return bbtbItems(bp.B.Rows()) }

func (bp *bbtbBuildsPage) top() int64 {
	r := bp.rows()
	if len(r) == 0 {
		return 0
	}
	return r[0].Number
}

// The demo tester's builds: their extension's only, newest first, the
// current one marked, pages of 50 with load more; a pipeline's publish
// with notes reaches the open page, on top, as the current build with its
// notes.
func TestBBBuildsTesterFollowsAPublishWithNotes(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, _ := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	tc, tw := bbtbBrowser(t, m)
	if !bbtbOpenLink(t, m, tc, tw, d.TesterLink) {
		t.Fatal("the demo tester's link did not sign them in")
	}
	bp := bbtbOpenBuilds(t, m, tc, tw)
	bp.Wait("the builds", func() bool { return bp.B.List.Data != nil && !bp.B.List.IsValidating })
	bp.Do(func() {
		rows := bp.rows()
		if len(rows) != model.BuildsPageSize {
			t.Errorf("the first page shows %d builds, want %d", len(rows), model.BuildsPageSize)
		}
		if len(rows) > 0 && (rows[0].Number != 120 || !rows[0].Current) {
			t.Errorf("the newest build is %+v, want #120, current", rows[0])
		}
		for i, b := range rows {
			if b.ExtensionID != 1 {
				t.Errorf("the tester of extension 1 sees a build of extension %d", b.ExtensionID)
			}
			if i > 0 && (b.Current || b.Number >= rows[i-1].Number) {
				t.Errorf("build %d (#%d, current %v) out of order or marked current", i, b.Number, b.Current)
			}
		}
		if !bp.B.List.HasMore {
			t.Errorf("120 builds in pages of 50: no load more")
		}
		bp.B.Infinite().SetSizeFunc(func(n int) int { return n + 1 })
	})
	bp.Wait("load more", func() bool { return len(bp.rows()) == 2*model.BuildsPageSize && !bp.B.List.IsValidating })
	bp.Wait("the page follows the tester's extension", func() bool { return len(bp.Listens) > 0 })
	bp.Do(func() {
		if bp.Listens[0] != 1 {
			t.Errorf("the page follows extension %v, want 1", bp.Listens)
		}
	})

	notes := "New: **pinned tabs** survive a restart."
	pub := bbtbPublish(t, m, bbtbKey(t, a, 1), "2.0.0", notes)
	bp.Wait("the pipeline's build shows on top", func() bool { return bp.top() == pub.Number && !bp.B.List.IsValidating })
	bp.Do(func() {
		rows := bp.rows()
		if !rows[0].Current || rows[1].Current {
			t.Errorf("after the publish: #%d current %v, #%d current %v", rows[0].Number, rows[0].Current, rows[1].Number, rows[1].Current)
		}
		cn := bp.B.CurrentNotes()
		if len(cn) != 1 || cn[0].Number != pub.Number || cn[0].ReleaseNotes != notes {
			t.Errorf("the current build's notes show as %+v, want #%d with %q", cn, pub.Number, notes)
		}
		if !bp.B.Shows(api.Revision{CurrentBundle: pub.Number, LastBundle: pub.Number}) {
			t.Errorf("the page says it does not show the revision it shows")
		}
		r := &model.BundleRow{} // a tester's row: no rollback
		r.Show(rows[0])
		if r.OffersRollback() {
			t.Errorf("a tester's build row offers a rollback")
		}
		r.ToggleNotes()
		if !r.NotesShown() {
			t.Errorf("the new build's notes do not show on its row")
		}
	})
}

// A tester whose access is revoked while their builds page is open: the
// next read (a publish's event) sends them to the access-ended page with
// the reason; once an admin restores them, their new link opens the
// builds again.
func TestBBBuildsRevokedTesterLeavesForEndedThenRestored(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	ctx := context.Background()
	a, _ := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	tc, tw := bbtbBrowser(t, m)
	if !bbtbOpenLink(t, m, tc, tw, d.TesterLink) {
		t.Fatal("the demo tester's link did not sign them in")
	}
	who, err := tc.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tester := who.Tester
	bp := bbtbOpenBuilds(t, m, tc, tw)
	bp.Wait("the builds", func() bool { return bp.B.List.Data != nil && !bp.B.List.IsValidating && len(bp.Listens) > 0 })

	if err := a.Revoke(ctx, tester.ExtensionID, tester.ID); err != nil {
		t.Fatal(err)
	}
	bbtbPublish(t, m, bbtbKey(t, a, tester.ExtensionID), "2.0.0", "")
	bp.Wait("the revoked tester is sent away", func() bool { return len(bp.Went) > 0 })
	bp.Do(func() {
		if bp.Went[0] != model.PathEnded {
			t.Errorf("the revoked tester went to %v, want %s", bp.Went, model.PathEnded)
		}
		if why := bp.Session.Ended(); !strings.Contains(why, d.Admins[0].Email) {
			t.Errorf("the reason the page keeps is %q, want whom to ask (%s)", why, d.Admins[0].Email)
		}
	})
	var ended api.Problem
	if err := tc.Do(ctx, http.MethodGet, api.PathBuilds, nil, nil); err == nil {
		t.Errorf("the revoked tester's browser still reads builds")
	} else if p, ok := api.AsProblem(err); !ok || p.Type != api.ProblemAccessEnded {
		t.Errorf("the revoked tester's read is refused with %v, want %s", err, api.ProblemAccessEnded)
	} else {
		ended = *p
	}
	_ = ended

	restored, err := a.Renew(ctx, api.TesterRestorePath(tester.ExtensionID, tester.ID))
	if err != nil {
		t.Fatal(err)
	}
	if !bbtbOpenLink(t, m, tc, tw, restored.InviteURL) {
		t.Fatal("the restored tester's new link does not sign them in")
	}
	bp2 := bbtbOpenBuilds(t, m, tc, tw)
	bp2.Wait("the builds again", func() bool { return bp2.B.List.Data != nil && !bp2.B.List.IsValidating })
	bp2.Do(func() {
		if bp2.top() != 121 || len(bp2.Went) != 0 {
			t.Errorf("the restored tester sees #%d on top and went %v; want #121 and to stay", bp2.top(), bp2.Went)
		}
	})
}

// The list's window moves while a row's question is open: the row now
// shows another bundle, and the Yes that follows rolls back nothing (the
// person never asked about that bundle). A Yes with no question open (a
// late click) does nothing either. Escape closes the question first, then
// the notes, with the focus on what opened each.
func TestBBBundlesRowQuestionFollowsItsBundle(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2
	bbtbPublish(t, m, bbtbKey(t, a, ext), "1.2.3", "notes of #4")
	bp := bbtbOpenBundles(t, a, ext)
	bp.settled("the bundles page", 4)
	var focus []model.RowControl
	bp.Do(func() {
		r := bp.row(t, 2, &focus)
		r.Ask()
		bp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		b1, _ := bbtbFind(bp.rows(), 1)
		r.Show(b1) // the window moved
		if r.AsksRollback() {
			t.Errorf("a row given #1 still asks about rolling back to #2")
		}
		r.Confirm()
	})
	bp.Do(func() {})
	bp.Do(func() {
		if r := bp.B.Rollback.RollingBack; r != 0 {
			t.Errorf("a Yes on a row that moved to another bundle started rolling back #%d", r)
		}
	})
	bp.Do(func() { bp.row(t, 3, nil).Confirm() }) // no question open
	bp.Do(func() {})
	if n := countRollbackPosts(w); n != 0 {
		t.Errorf("Yes without an open question (or on a moved row) sent %d rollbacks", n)
	}
	if cur, last := bbtbRevision(t, m, ext); cur != 4 || last != 4 {
		t.Errorf("the service moved to current #%d, last #%d", cur, last)
	}

	// Escape: the question first, then the notes.
	bp.Do(func() {
		focus = nil
		r := bp.row(t, 3, &focus)
		b4, _ := bbtbFind(bp.rows(), 4)
		r.Show(b4) // #4 has notes, and is current: no question
		r.ToggleNotes()
		r3 := bp.row(t, 3, &focus)
		r3.Bundle.ReleaseNotes = ""
		r3.ToggleNotes()
		r3.Ask()
		bp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		r3.Escape()
		if r3.AsksRollback() {
			t.Errorf("Escape leaves the question open")
		}
		if !r3.NotesOpen {
			t.Errorf("Escape with the question open closed the notes too")
		}
		if len(focus) == 0 || focus[len(focus)-1] != model.RollbackButton {
			t.Errorf("after Escape on the question the focus went %v, want Roll back", focus)
		}
		r3.Escape()
		if r3.NotesOpen {
			t.Errorf("a second Escape leaves the notes open")
		}
		if focus[len(focus)-1] != model.NotesToggle {
			t.Errorf("after Escape on the notes the focus went %v, want Notes", focus)
		}
		if !r.NotesShown() {
			t.Errorf("#4's notes do not show when opened")
		}
	})
}

// The person opens another extension while a rollback is on its way: the
// other extension's list shows none of the first one's bundles, and the
// rollback the service answered is there for the first extension.
func TestBBBundlesOtherExtensionWhileRollingBack(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	bp := bbtbOpenBundles(t, a, 2)
	bp.settled("Reader Mode Plus", 3)
	held := w.hold(t, isRollbackPost)
	bp.Do(func() {
		r := bp.row(t, 2, nil)
		r.Ask()
		bp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		r.Confirm()
	})
	bbtbWait(t, held, "the rollback")
	bp.Do(func() { bp.B.Open(1) })
	bp.settled("Tab Tamer", 120)
	held.Release()
	bbtbNever(t, bp.page, held, "Reader Mode Plus's rollback answer shows on Tab Tamer's page", func() bool {
		for _, b := range bp.rows() {
			if b.ExtensionID != 1 {
				return true
			}
		}
		return bp.B.Top() != 120
	})
	bp.Wait("settled", func() bool { return bp.B.Settled() && !bp.B.List.IsValidating })
	bp.Do(func() {
		if bp.B.ID != 1 || bp.B.Top() != 120 {
			t.Errorf("the page shows extension %d with #%d on top, want Tab Tamer (#120)", bp.B.ID, bp.B.Top())
		}
		for _, b := range bp.rows() {
			if b.ExtensionID != 1 {
				t.Errorf("Tab Tamer's list shows a bundle of extension %d (#%d)", b.ExtensionID, b.Number)
			}
		}
		if c, ok := bp.B.Current(); !ok || c.Number != 120 || c.ExtensionID != 1 {
			t.Errorf("Tab Tamer's current bundle shows as %+v", c)
		}
		if rec := bp.B.Record(); rec == nil || rec.ID != 1 || rec.CurrentBundle != 120 {
			t.Errorf("the header shows %+v, want Tab Tamer at #120", rec)
		}
	})
	if cur, _ := bbtbRevision(t, m, 2); cur != 4 {
		t.Errorf("Reader Mode Plus is at #%d; the rollback the service answered should be #4", cur)
	}
	if cur, last := bbtbRevision(t, m, 1); cur != 120 || last != 120 {
		t.Errorf("Tab Tamer moved to #%d (last #%d)", cur, last)
	}
}

// An admin uploads from the page (the upload panel's submit under the
// browser's session) while the page follows the stream: the panel's
// Published and the stream's event both tell of the same bundle, and the
// list shows it once, on top, current.
func TestBBBundlesUploadPanelAndEventShowOneBundle(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2
	bp := bbtbOpenBundles(t, a, ext)
	bp.settled("the bundles page", 3)
	bbtbFollow(t, m, w.next, ext, func(data string) {
		bp.Dispatch(func() {
			rev, ok := model.ParseRevision(data)
			bp.B.Live.Event(rev, ok)
		})
	})
	z := bbtbZip(t, "X", "1.2.3")
	sub, err := a.Submit(context.Background(), client.Submission{
		Key: api.ServiceKey{ExtensionID: fmt.Sprint(ext)},
		Zip: &client.ReaderZip{R: bytes.NewReader(z), Size: int64(len(z)), HTTP: w},
	})
	if err != nil {
		t.Fatalf("the upload panel's submit: %v", err)
	}
	bp.Do(func() { bp.B.Published(sub.Bundle, true) })
	bp.settled("the page shows the upload", sub.Bundle.Number)
	bp.Do(func() {
		if got := bbtbNumbers(bp.rows()); fmt.Sprint(got) != "[4 3 2 1]" {
			t.Errorf("after an upload the page shows %v, want [4 3 2 1]", got)
		}
		for _, b := range bp.rows() {
			if b.Current != (b.Number == 4) {
				t.Errorf("#%d shows current=%v", b.Number, b.Current)
			}
		}
		if rec := bp.B.Record(); rec == nil || rec.CurrentBundle != 4 {
			t.Errorf("the header shows current %+v, want #4", rec)
		}
	})
}

// Leaving the page-by-page view while its rollback is on its way: the
// service did it, and the gone view shows none of it.
func TestBBBundlesClassicLeaveWhileRollingBack(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	cp := bbtbOpenClassic(t, a)
	cp.Do(func() { cp.C.Nav(classicAddr(2, "")) })
	cp.Wait("page 0", func() bool { return cp.C.Current.HasData && !cp.C.Current.IsValidating })
	held := w.hold(t, isRollbackPost)
	cp.Do(func() {
		b, _ := bbtbFind(cp.C.Current.Data, 1)
		r := &model.BundleRow{Rollback: cp.C.Rollback}
		r.Show(b)
		r.Ask()
		cp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		r.Confirm()
	})
	bbtbWait(t, held, "the rollback")
	cp.Do(func() { cp.C.Close() })
	held.Release()
	bbtbNever(t, cp.page, held, "the page-by-page view closed before the rollback's answer took it (result or focus moved on a view the person left)", func() bool {
		return cp.C.Rollback.Done != nil || cp.C.Rollback.Err != nil || len(cp.Focused) != 0
	})
	if cur, _ := bbtbRevision(t, m, 2); cur != 4 {
		t.Errorf("the service is at #%d, want the rollback #4", cur)
	}
}

// A rollback answered while the list's own read is still on its way
// (that read was answered before the rollback): once both land, the list
// shows the rollback on top, current.
func TestBBBundlesRollbackWhileListReads(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, w := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	const ext = 2
	bp := bbtbOpenBundles(t, a, ext)
	bp.settled("the bundles page", 3)
	held := w.hold(t, func(r *http.Request) bool {
		return r.Method == http.MethodGet && r.URL.Path == api.BundlesPath(ext)
	})
	bp.Do(func() { bp.B.ReadAgain() }) // a read of the page (say, an event)
	bbtbWait(t, held, "the list's read")
	bp.Do(func() {
		r := bp.row(t, 2, nil)
		r.Ask()
		bp.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
		r.Confirm()
	})
	bp.Wait("the rollback answered", func() bool { return bp.B.Rollback.RollingBack == 0 })
	held.Release()
	bp.Wait("settled", func() bool { return bp.B.Settled() && !bp.B.List.IsValidating })
	bp.Do(func() {})
	bp.Wait("settled", func() bool { return bp.B.Settled() && !bp.B.List.IsValidating })
	bp.Do(func() {
		if got := bbtbNumbers(bp.rows()); fmt.Sprint(got) != "[4 3 2 1]" {
			t.Errorf("after a rollback during a read the page shows %v, want [4 3 2 1]", got)
		}
		if c, ok := bp.B.Current(); !ok || c.Number != 4 {
			t.Errorf("the page's current bundle is %+v, want #4", c)
		}
		if rec := bp.B.Record(); rec == nil || rec.CurrentBundle != 4 {
			t.Errorf("the header shows current %+v, want #4", rec)
		}
	})
}

// The builds page opened again (Back to it) reads nothing more and does
// not follow the extension twice.
func TestBBBuildsOpenAgainFollowsOnce(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	tc, tw := bbtbBrowser(t, m)
	if !bbtbOpenLink(t, m, tc, tw, d.TesterLink) {
		t.Fatal("the demo link does not sign in")
	}
	bp := bbtbOpenBuilds(t, m, tc, tw)
	bp.Wait("the builds", func() bool { return bp.B.List.Data != nil && !bp.B.List.IsValidating && len(bp.Listens) == 1 })
	reads := func(method string, u *url.URL) bool { return method == http.MethodGet && u.Path == api.PathBuilds }
	before := tw.count(reads)
	bp.Do(func() { bp.B.Open() })
	bp.Do(func() {})
	bp.Wait("settled", func() bool { return !bp.B.List.IsValidating })
	bp.Do(func() {
		if len(bp.Listens) != 1 {
			t.Errorf("opened again, the page follows the extension %d times", len(bp.Listens))
		}
		if bp.top() != 120 {
			t.Errorf("opened again, the page shows #%d on top", bp.top())
		}
	})
	if n := tw.count(reads) - before; n > 1 {
		t.Errorf("opened again, the page read its builds %d more times", n)
	}
}

// An address past the last page (a stale link): the view shows an empty
// page that says it is the last, with no Next.
func TestBBBundlesClassicPastTheLastPage(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	a, _ := bbtbAdmin(t, m, d.Admins[0].Email, d.Admins[0].Password)
	cp := bbtbOpenClassic(t, a)
	cp.Do(func() { cp.C.Nav(classicAddr(2, "7")) })
	cp.Wait("page 7", func() bool {
		return !cp.C.Current.IsLoading && !cp.C.Current.IsValidating && !cp.C.Next.IsValidating && (cp.C.Current.HasData || cp.C.Current.Err != nil)
	})
	cp.Do(func() {
		if cp.C.Page != 7 || len(cp.C.Current.Data) != 0 {
			t.Errorf("page 7 of a one-page list shows page %d with %v", cp.C.Page, numbersOf(cp.C.Current))
		}
		if cp.C.HasNext() || !cp.C.Last() {
			t.Errorf("past the last page: HasNext %v, Last %v; want no Next", cp.C.HasNext(), cp.C.Last())
		}
	})
}
