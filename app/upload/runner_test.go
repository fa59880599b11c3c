package upload_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
	"github.com/betaport/betaport/app/model/modeltest"
	"github.com/betaport/betaport/app/upload"
)

// These run the runner as the panel does, natively: a UI goroutine that
// runs what is dispatched in order (modeltest.Loop, as the page models'
// tests do), goroutines for the async work, files in memory, and a fake
// service on loopback.

// memFile is a file in memory; its PUT goes through the client's.
type memFile struct {
	name, typ string
	data      []byte
	http      *http.Client
}

func (f *memFile) Name() string { return f.name }
func (f *memFile) Type() string { return f.typ }
func (f *memFile) Size() int64  { return int64(len(f.data)) }
func (f *memFile) Head(_ context.Context, n int) ([]byte, error) {
	return f.data[:min(n, len(f.data))], nil
}
func (f *memFile) Text(context.Context) ([]byte, error) { return f.data, nil }
func (f *memFile) Put(ctx context.Context, url string, progress func(sent, total int64)) error {
	z := &client.ReaderZip{R: bytes.NewReader(f.data), Size: f.Size(), HTTP: f.http}
	return z.Put(ctx, url, progress)
}

// service fakes the three calls; a PUT waits while hold is set.
type service struct {
	*httptest.Server
	mu    sync.Mutex
	calls []string
	hold  chan struct{} // closed to let held PUTs go on
	held  chan struct{} // told when a PUT is held
	sign  http.HandlerFunc
	// uploads are the bodies of call 1.
	uploads []string
}

func newService(t *testing.T) *service {
	s := &service{held: make(chan struct{}, 10)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.calls = append(s.calls, r.Method+" "+r.URL.Path)
		hold, sign := s.hold, s.sign
		s.mu.Unlock()
		switch {
		case r.URL.Path == api.PathSubmitLimits:
			io.WriteString(w, `{"maxSize": 1000}`)
		case r.URL.Path == api.PathSubmitUpload:
			body, _ := io.ReadAll(r.Body)
			s.set(func() { s.uploads = append(s.uploads, string(body)) })
			json.NewEncoder(w).Encode(api.UploadURL{URL: s.URL + api.UploadPrefix + "1", MaxSize: 1000})
		case r.Method == http.MethodPut:
			io.ReadAll(r.Body)
			if hold != nil {
				s.held <- struct{}{}
				select {
				case <-hold:
				case <-r.Context().Done():
					return
				}
			}
		case r.URL.Path == api.PathSubmitSign && sign != nil:
			sign(w, r)
		case r.URL.Path == api.PathSubmitSign:
			io.WriteString(w, `{"id": 3, "extensionId": 7, "number": 12, "version": "1.4.0"}`)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// set changes the service's answers between calls.
func (s *service) set(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

func (s *service) sequence() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.calls, ", ")
}

// harness is a runner on a UI loop against a service.
type harness struct {
	t         *testing.T
	ui        *modeltest.Loop
	svc       *service
	r         *upload.Runner
	mu        sync.Mutex
	focus     []upload.Focus
	published []betaport.Bundle
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, ui: modeltest.NewLoop(t), svc: newService(t)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h.ui.Do(func() {
		h.r = upload.New(upload.Config{
			Client:    &client.Client{BaseURL: h.svc.URL, HTTP: h.svc.Client()},
			Context:   ctx,
			Dispatch:  h.ui.Dispatch,
			Async:     h.ui.Async,
			Extension: func() (int64, string) { return 7, "Tab Tamer" },
			Focus: func(f upload.Focus) {
				h.mu.Lock()
				h.focus = append(h.focus, f)
				h.mu.Unlock()
			},
			Published: func(b betaport.Bundle) { h.published = append(h.published, b) },
		})
	})
	return h
}

func (h *harness) zip(name string, data []byte) *memFile {
	return &memFile{name: name, typ: "application/zip", data: data, http: h.svc.Client()}
}

func keyFile(id string) *memFile {
	return &memFile{name: "key.json", typ: "application/json", data: []byte(`{"service": {"extensionId": "` + id + `", "apiKey": "k"}}`)}
}

var goodZip = []byte("PK\x03\x04" + strings.Repeat("z", 200))

func (h *harness) take(files ...upload.File) { h.ui.Do(func() { h.r.Take(files) }) }

// wait waits until cond, read on the UI goroutine, holds.
func (h *harness) wait(what string, cond func(r *upload.Runner) bool) {
	h.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		var ok bool
		var state string
		h.ui.Do(func() {
			ok = cond(h.r)
			state = fmt.Sprintf("phase %d step %d notices %q announce %q problem %+v", h.r.Phase, h.r.Step, h.r.Notices, h.r.Announce, h.r.Problem)
		})
		if ok {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("waiting for %s: %s", what, state)
		}
	}
}

func (h *harness) focused() []upload.Focus {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]upload.Focus(nil), h.focus...)
}

func TestRunnerPublishes(t *testing.T) {
	h := newHarness(t)
	h.take(h.zip("tab-tamer.zip", goodZip), keyFile("7"))
	h.wait("published", func(r *upload.Runner) bool { return r.Phase == upload.Done })
	h.ui.Do(func() {
		r := h.r
		if r.Bundle == nil || r.Bundle.Number != 12 || len(h.published) != 1 {
			t.Errorf("bundle %+v, published %v", r.Bundle, h.published)
		}
		if r.Sent != int64(len(goodZip)) || r.Total != int64(len(goodZip)) {
			t.Errorf("progress %d of %d", r.Sent, r.Total)
		}
		for n := client.StepUploadURL; n <= client.StepSign; n++ {
			if s := r.StepState(n); s != "done" {
				t.Errorf("step %d is %s", n, s)
			}
		}
		if r.Announce != "Published bundle #12, version 1.4.0. Testers get it now." {
			t.Errorf("announce %q", r.Announce)
		}
		if r.Zip != nil || r.Key == nil {
			t.Errorf("after publishing: zip %v, key %v; want the key kept for the next zip", r.Zip, r.Key)
		}
	})
	if got := fmt.Sprint(h.focused()); got != fmt.Sprint([]upload.Focus{upload.FocusCancel, upload.FocusSteps, upload.FocusResult}) {
		t.Errorf("focus moves %s", got)
	}
	if got, want := h.svc.sequence(), "POST /api/submit/upload, PUT /uploads/1, POST /api/submit/sign"; got != want {
		t.Errorf("calls %s; want %s", got, want)
	}
}

func TestRunnerOneFileAtATime(t *testing.T) {
	h := newHarness(t)
	h.take(h.zip("tab-tamer.zip", goodZip))
	h.wait("the zip", func(r *upload.Runner) bool { return r.Zip != nil })
	h.ui.Do(func() {
		if h.r.Phase != upload.Idle || !strings.Contains(h.r.Announce, "tab-tamer.zip is ready. Now drop this extension's key file") {
			t.Errorf("phase %d, announce %q", h.r.Phase, h.r.Announce)
		}
	})
	if got := h.svc.sequence(); got != "" {
		t.Fatalf("calls before the key: %s", got)
	}
	// The bare service object is taken too.
	h.take(&memFile{name: "key.json", data: []byte(`{"extensionId": 7, "apiKey": "k"}`)})
	h.wait("published", func(r *upload.Runner) bool { return r.Phase == upload.Done })

	// The key is kept: the next zip alone publishes again.
	h.take(h.zip("next.zip", goodZip))
	h.wait("published again", func(r *upload.Runner) bool { return r.Phase == upload.Done && r.Zip == nil && len(h.published) == 2 })
}

func TestRunnerRefusesFilesBeforeAnyCall(t *testing.T) {
	h := newHarness(t)
	h.ui.Do(h.r.LoadLimits)
	h.wait("the limit", func(r *upload.Runner) bool { return r.MaxSize == 1000 })
	tests := []struct {
		name  string
		files []upload.File
		want  []string
	}{
		{"another extension's key", []upload.File{keyFile("8")}, []string{"key.json is the key of extension #8, not of Tab Tamer (#7). Download this extension's key file on its settings page."}},
		{"not a key file", []upload.File{&memFile{name: "key.json", data: []byte(`{"service": `)}}, []string{"key.json is not a key file (not a JSON object)"}},
		{"no apiKey", []upload.File{&memFile{name: "key.json", data: []byte(`{"service": {"extensionId": "7"}}`)}}, []string{"key.json is not a key file (service.apiKey is missing or empty)"}},
		{"too large a key", []upload.File{&memFile{name: "k.json", data: make([]byte, api.MaxKeyFileSize+1)}}, []string{"k.json is too large to be a key file"}},
		{"not a zip", []upload.File{h.zip("bundle.zip", []byte("notes"))}, []string{"bundle.zip is not a zip file (it does not start with a zip signature)"}},
		{"empty", []upload.File{h.zip("empty.zip", nil)}, []string{"empty.zip is empty"}},
		{"over the limit", []upload.File{h.zip("big.zip", append([]byte("PK\x03\x04"), make([]byte, 1000)...))}, []string{"big.zip is 1004 B; Betaport takes zips up to 1000 B"}},
		{"two zips and two keys", []upload.File{h.zip("a.zip", goodZip), h.zip("b.zip", goodZip), keyFile("7"), keyFile("7")},
			[]string{"2 zips were dropped (a.zip, b.zip). Drop one zip at a time.", "2 key files were dropped (key.json, key.json)."}},
	}
	for _, tt := range tests {
		h.take(tt.files...)
		h.wait(tt.name, func(r *upload.Runner) bool {
			if len(r.Notices) != len(tt.want) {
				return false
			}
			for i, w := range tt.want {
				if !strings.Contains(r.Notices[i], w) {
					return false
				}
			}
			return strings.Contains(r.Announce, tt.want[0]) && r.Key == nil && r.Zip == nil
		})
	}
	if got := h.svc.sequence(); got != "GET "+api.PathSubmitLimits {
		t.Errorf("calls %s; want none of the flow", got)
	}
}

func TestRunnerCancelThenRetry(t *testing.T) {
	h := newHarness(t)
	hold := make(chan struct{})
	h.svc.set(func() { h.svc.hold = hold })
	h.take(h.zip("tab-tamer.zip", goodZip), keyFile("7"))
	<-h.svc.held
	h.wait("the PUT", func(r *upload.Runner) bool { return r.Step == client.StepPut && r.CanCancel() })

	// A second drop while it runs changes nothing.
	h.take(h.zip("other.zip", goodZip))
	h.ui.Do(func() {
		if h.r.Announce != "An upload is running. Cancel it before choosing other files." || h.r.Zip.Name() != "tab-tamer.zip" {
			t.Errorf("a drop while running: announce %q, zip %s", h.r.Announce, h.r.Zip.Name())
		}
	})

	h.ui.Do(h.r.Cancel)
	h.wait("cancelled", func(r *upload.Runner) bool { return r.Phase == upload.Cancelled })
	h.ui.Do(func() {
		if !h.r.CanRetry() || h.r.StepState(client.StepPut) != "cancelled" || h.r.Announce != "Upload cancelled. Nothing was published." {
			t.Errorf("can retry %v, step 2 %s, announce %q", h.r.CanRetry(), h.r.StepState(client.StepPut), h.r.Announce)
		}
	})
	if f := h.focused(); f[len(f)-1] != upload.FocusRetry {
		t.Errorf("focus %v; want the retry button last", f)
	}

	h.svc.set(func() { h.svc.hold = nil })
	h.ui.Do(h.r.Start)
	h.wait("published", func(r *upload.Runner) bool { return r.Phase == upload.Done })
	if got, want := h.svc.sequence(), "POST /api/submit/upload, PUT /uploads/1, POST /api/submit/upload, PUT /uploads/1, POST /api/submit/sign"; got != want {
		t.Errorf("calls %s; want %s", got, want)
	}
}

// Publishing cannot be called back: once the sign runs, Cancel does nothing.
func TestRunnerSignIsNotCancelled(t *testing.T) {
	h := newHarness(t)
	signing, release := make(chan struct{}), make(chan struct{})
	h.svc.set(func() {
		h.svc.sign = func(w http.ResponseWriter, r *http.Request) {
			close(signing)
			<-release
			io.WriteString(w, `{"number": 5, "version": "2.0"}`)
		}
	})
	h.take(h.zip("tab-tamer.zip", goodZip), keyFile("7"))
	<-signing
	h.wait("step 3", func(r *upload.Runner) bool { return r.Step == client.StepSign })
	h.ui.Do(func() {
		if h.r.CanCancel() {
			t.Error("can cancel while publishing")
		}
		h.r.Cancel()
	})
	close(release)
	h.wait("published", func(r *upload.Runner) bool { return r.Phase == upload.Done && r.Bundle.Number == 5 })
}

func TestRunnerShowsTheProblem(t *testing.T) {
	answer := func(status int, p api.Problem) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			p.Status = status
			w.Header().Set("Content-Type", api.ProblemContentType)
			w.WriteHeader(status)
			json.NewEncoder(w).Encode(p)
		}
	}
	h := newHarness(t)
	h.svc.set(func() {
		h.svc.sign = answer(422, api.Problem{Type: api.ProblemInvalidZip, Title: "Invalid zip", Detail: "The zip has 2 problems.",
			Problems: []betaport.ZipProblem{{Code: "manifest_missing"}, {Code: "path_traversal", Path: "../x"}}})
	})
	h.take(h.zip("broken.zip", goodZip), keyFile("7"))
	h.wait("failed", func(r *upload.Runner) bool { return r.Phase == upload.Failed })
	h.ui.Do(func() {
		r := h.r
		if r.Problem.Status != 422 || len(r.Problem.Problems) != 2 || r.StepState(client.StepSign) != "failed" {
			t.Errorf("problem %+v, step 3 %s", r.Problem, r.StepState(client.StepSign))
		}
		if r.Zip != nil || r.Key == nil || r.CanRetry() {
			t.Errorf("zip %v key %v: want the zip dropped (it would fail again), the key kept", r.Zip, r.Key)
		}
		if r.Announce != "broken.zip was not published: 2 problems to fix, listed below." {
			t.Errorf("announce %q", r.Announce)
		}
	})
	if f := h.focused(); f[len(f)-1] != upload.FocusDropZone {
		t.Errorf("focus %v; want the drop zone last", f)
	}

	// A refused key is forgotten; the new key starts the upload by itself.
	h.svc.set(func() {
		h.svc.sign = answer(401, api.Problem{Type: api.ProblemInvalidKey, Detail: "Download a new key file."})
	})
	h.take(h.zip("fixed.zip", goodZip))
	h.wait("failed", func(r *upload.Runner) bool { return r.Phase == upload.Failed && r.Key == nil && r.Zip != nil })
	h.svc.set(func() { h.svc.sign = nil })
	h.take(keyFile("7"))
	h.wait("published", func(r *upload.Runner) bool { return r.Phase == upload.Done })

	// No answer at all.
	h.svc.Close()
	h.take(h.zip("again.zip", goodZip))
	h.wait("failed", func(r *upload.Runner) bool {
		return r.Phase == upload.Failed && r.Step == client.StepUploadURL && r.Problem.Title == "The service cannot be reached" && r.CanRetry()
	})
}

func TestRunnerCloseEndsTheUpload(t *testing.T) {
	h := newHarness(t)
	h.svc.set(func() { h.svc.hold = make(chan struct{}) })
	h.take(h.zip("tab-tamer.zip", goodZip), keyFile("7"))
	<-h.svc.held
	h.ui.Do(h.r.Close)
	h.wait("ended", func(r *upload.Runner) bool { return r.Phase == upload.Cancelled && r.Key == nil && r.Zip == nil })
}

// Release notes over 10 KiB keep the upload from starting (nothing is
// sent; the focus goes to the notes); shortened, they go with call 1 and
// are cleared once their bundle is published.
func TestRunnerReleaseNotes(t *testing.T) {
	h := newHarness(t)
	h.ui.Do(func() { h.r.Notes = strings.Repeat("€", betaport.MaxReleaseNotes/3) + "ab" }) // 10 KiB and one byte
	h.take(h.zip("tab-tamer.zip", goodZip), keyFile("7"))
	h.wait("refused", func(r *upload.Runner) bool {
		return len(r.Notices) == 1 && strings.Contains(r.Notices[0], "Nothing was uploaded. The release notes are 10241 bytes, 1 over the limit of 10240")
	})
	h.ui.Do(func() {
		if h.r.Phase != upload.Idle || h.r.Zip == nil || !h.r.CanRetry() {
			t.Errorf("phase %d, zip %v: want idle with the zip kept", h.r.Phase, h.r.Zip)
		}
	})
	if got := h.svc.sequence(); got != "" {
		t.Fatalf("calls with notes over the limit: %s", got)
	}
	if f := h.focused(); len(f) != 1 || f[0] != upload.FocusNotes {
		t.Errorf("focus moves %v; want the notes", f)
	}
	notes := "- faster\n- [docs](https://example.com)"
	h.ui.Do(func() {
		h.r.SetNotes(notes)
		if h.r.Notices != nil {
			t.Errorf("notices %q after the notes were shortened; want none", h.r.Notices)
		}
		h.r.Start()
	})
	h.wait("published", func(r *upload.Runner) bool { return r.Phase == upload.Done })
	h.ui.Do(func() {
		if h.r.Notes != "" {
			t.Errorf("notes after publishing %q; want them cleared", h.r.Notes)
		}
	})
	var body map[string]string
	json.Unmarshal([]byte(h.svc.uploads[0]), &body)
	if body["releaseNotes"] != notes || body["extensionId"] != "7" {
		t.Errorf("call 1 sent %s", h.svc.uploads[0])
	}
}

// Several drops, each refused: the outcome names the zip it is about
// (issue 28: the panel said "Zip: None yet" and an error of no file).
func TestRunnerNamesTheZipOfTheOutcome(t *testing.T) {
	h := newHarness(t)
	h.svc.set(func() {
		h.svc.sign = func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", api.ProblemContentType)
			w.WriteHeader(422)
			json.NewEncoder(w).Encode(api.Problem{Type: api.ProblemInvalidZip, Status: 422, Title: "Unprocessable Entity",
				Detail: "The zip was not published: 1 problem(s) to fix, listed in problems.", Problems: []betaport.ZipProblem{{Code: "manifest_missing", Message: "No manifest.json."}}})
		}
	})
	h.take(h.zip("first.zip", goodZip), keyFile("7"))
	h.wait("the first refused", func(r *upload.Runner) bool { return r.Phase == upload.Failed })
	h.take(h.zip("second.zip", goodZip))
	h.wait("the second refused", func(r *upload.Runner) bool {
		return r.Phase == upload.Failed && r.SentZip != nil && r.SentZip.Name() == "second.zip"
	})
	h.ui.Do(func() {
		r := h.r
		if got := r.FailureTitle(); got != "second.zip was not published: 1 problem to fix, listed below." {
			t.Errorf("the outcome's title is %q", got)
		}
		if got := r.FailureDetail(); got != "" {
			t.Errorf("the outcome repeats the service's pointer to its problems field: %q", got)
		}
	})
}
