package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/client"
)

// flowServer answers the three calls and records them.
type flowServer struct {
	*httptest.Server
	mu    sync.Mutex
	calls []string
	puts  [][]byte
	// answers, by "METHOD /path", replace the default answer once.
	answers map[string]http.HandlerFunc
	// notes are the release notes call 1 must carry beside the key.
	notes string
}

const bundleJSON = `{"id":40,"extensionId":7,"number":12,"version":"1.4.0","current":true,"future":"kept"}`

func newFlowServer(t *testing.T) *flowServer {
	f := &flowServer{answers: map[string]http.HandlerFunc{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		key := r.Method + " " + r.URL.Path
		f.mu.Lock()
		f.calls = append(f.calls, key)
		h := f.answers[key]
		delete(f.answers, key)
		if r.Method == http.MethodPut {
			f.puts = append(f.puts, body)
		}
		f.mu.Unlock()
		if r.Method != http.MethodPut {
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s: Content-Type %q", key, ct)
			}
			var k map[string]string
			fields := 2
			if f.notes != "" && r.URL.Path == api.PathSubmitUpload {
				fields = 3 // the notes go with call 1 only
			}
			if err := json.Unmarshal(body, &k); err != nil || len(k) != fields || k["extensionId"] != "7" || k["apiKey"] != "k" ||
				(fields == 3 && k["releaseNotes"] != f.notes) {
				t.Errorf("%s: body %s; want the service object", key, body)
			}
		} else if ct := r.Header.Get("Content-Type"); ct != api.ZipContentType {
			t.Errorf("PUT Content-Type %q", ct)
		}
		if h != nil {
			h(w, r)
			return
		}
		switch key {
		case "POST " + api.PathSubmitUpload:
			json.NewEncoder(w).Encode(api.UploadURL{URL: f.URL + api.UploadPrefix + "1?sig=x", MaxSize: 1 << 20})
		case "POST " + api.PathSubmitSign:
			io.WriteString(w, bundleJSON)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *flowServer) sequence() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.calls, ", ")
}

var testKey = api.ServiceKey{ExtensionID: "7", APIKey: "k"}

func TestSubmitRunsTheThreeCalls(t *testing.T) {
	f := newFlowServer(t)
	c := &client.Client{BaseURL: f.URL, HTTP: f.Client()}
	zip := bytes.Repeat([]byte("PK\x03\x04zip"), 10000)
	var steps []string
	var last, total int64
	out, err := c.Submit(context.Background(), client.Submission{
		Key: testKey,
		Zip: &client.ReaderZip{R: bytes.NewReader(zip), Size: int64(len(zip)), HTTP: f.Client()},
		Step: func(s client.Step, up *api.UploadURL) error {
			steps = append(steps, fmt.Sprintf("step %d (url %v)", s, up != nil))
			return nil
		},
		Progress: func(sent, size int64) { last, total = sent, size },
		Try: func(ctx context.Context, s client.Step, call func(context.Context) error) error {
			steps = append(steps, fmt.Sprintf("try %d", s))
			return call(ctx)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.sequence(), "POST /api/submit/upload, PUT /uploads/1, POST /api/submit/sign"; got != want {
		t.Fatalf("calls %s; want %s", got, want)
	}
	if got := strings.Join(steps, ", "); got != "step 1 (url false), try 1, step 2 (url true), try 2, step 3 (url true), try 3" {
		t.Errorf("steps %s", got)
	}
	if !bytes.Equal(f.puts[0], zip) || last != int64(len(zip)) || total != int64(len(zip)) {
		t.Errorf("PUT %d bytes, progress %d of %d; want the zip's %d", len(f.puts[0]), last, total, len(zip))
	}
	if out.Bundle.Number != 12 || string(out.JSON) != bundleJSON {
		t.Errorf("bundle %+v, JSON %s", out.Bundle, out.JSON)
	}
}

// Release notes go with call 1, beside the key fields; sign sends the key
// object alone.
func TestSubmitSendsReleaseNotes(t *testing.T) {
	f := newFlowServer(t)
	f.notes = "- faster\n- [docs](https://example.com) <b>"
	c := &client.Client{BaseURL: f.URL, HTTP: f.Client()}
	zip := []byte("PK\x03\x04zip")
	_, err := c.Submit(context.Background(), client.Submission{
		Key:          testKey,
		ReleaseNotes: f.notes,
		Zip:          &client.ReaderZip{R: bytes.NewReader(zip), Size: int64(len(zip)), HTTP: f.Client()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.sequence(), "POST /api/submit/upload, PUT /uploads/1, POST /api/submit/sign"; got != want {
		t.Fatalf("calls %s; want %s", got, want)
	}
}

func TestSubmitErrors(t *testing.T) {
	zip := []byte("PK\x05\x06" + strings.Repeat("\x00", 18))
	problem := func(status int, typ string, header ...string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i+1 < len(header); i += 2 {
				w.Header().Set(header[i], header[i+1])
			}
			w.Header().Set("Content-Type", api.ProblemContentType)
			w.WriteHeader(status)
			json.NewEncoder(w).Encode(api.Problem{Type: typ, Status: status, Detail: "Say what to do."})
		}
	}
	text := func(s string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, s) }
	}
	tests := []struct {
		name   string
		key    string
		answer http.HandlerFunc
		calls  string
		check  func(t *testing.T, err error)
	}{{
		name: "refused key", key: "POST " + api.PathSubmitUpload, answer: problem(401, api.ProblemInvalidKey),
		calls: "POST /api/submit/upload",
		check: func(t *testing.T, err error) {
			var ae *client.AnswerError
			p, ok := api.AsProblem(err)
			if !errors.As(err, &ae) || ae.StatusCode != 401 || !ok || p.Type != api.ProblemInvalidKey || err.Error() != "Say what to do." {
				t.Errorf("err %#v", err)
			}
		},
	}, {
		name: "too many calls", key: "POST " + api.PathSubmitSign, answer: problem(429, api.ProblemTooManyRequests, "Retry-After", "7"),
		calls: "POST /api/submit/upload, PUT /uploads/1, POST /api/submit/sign",
		check: func(t *testing.T, err error) {
			var ae *client.AnswerError
			if !errors.As(err, &ae) || ae.Header.Get("Retry-After") != "7" {
				t.Errorf("err %#v", err)
			}
		},
	}, {
		name: "redirect not followed", key: "POST " + api.PathSubmitUpload,
		answer: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusPermanentRedirect)
		},
		calls: "POST /api/submit/upload",
		check: func(t *testing.T, err error) {
			var ae *client.AnswerError
			if !errors.As(err, &ae) || ae.StatusCode != 308 || ae.Header.Get("Location") != "/elsewhere" {
				t.Errorf("err %#v", err)
			}
		},
	}, {
		name: "PUT refused", key: "PUT /uploads/1", answer: problem(403, api.ProblemURLExpired),
		calls: "POST /api/submit/upload, PUT /uploads/1",
		check: func(t *testing.T, err error) {
			if p, ok := api.AsProblem(err); !ok || p.Type != api.ProblemURLExpired {
				t.Errorf("err %#v", err)
			}
		},
	}, {
		name: "not an upload URL", key: "POST " + api.PathSubmitUpload, answer: text("<html>"),
		calls: "POST /api/submit/upload",
		check: func(t *testing.T, err error) {
			var bad *client.BadAnswerError
			if !errors.As(err, &bad) || bad.Step != client.StepUploadURL || !strings.Contains(err.Error(), "is not an upload URL") {
				t.Errorf("err %v", err)
			}
		},
	}, {
		name: "no usable URL", key: "POST " + api.PathSubmitUpload, answer: text(`{"url": "/uploads/1"}`),
		calls: "POST /api/submit/upload",
		check: func(t *testing.T, err error) {
			if !errors.Is(err, client.ErrNoUploadURL) {
				t.Errorf("err %v", err)
			}
		},
	}, {
		name: "not a bundle", key: "POST " + api.PathSubmitSign, answer: text("[]"),
		calls: "POST /api/submit/upload, PUT /uploads/1, POST /api/submit/sign",
		check: func(t *testing.T, err error) {
			var bad *client.BadAnswerError
			if !errors.As(err, &bad) || bad.Step != client.StepSign || !strings.Contains(err.Error(), "is not a bundle record") {
				t.Errorf("err %v", err)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFlowServer(t)
			f.answers[tt.key] = tt.answer
			hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			c := &client.Client{BaseURL: f.URL, HTTP: hc}
			out, err := c.Submit(context.Background(), client.Submission{
				Key: testKey,
				Zip: &client.ReaderZip{R: bytes.NewReader(zip), Size: int64(len(zip)), HTTP: hc},
			})
			if err == nil || out != nil {
				t.Fatalf("= %+v, nil", out)
			}
			tt.check(t, err)
			if got := f.sequence(); got != tt.calls {
				t.Errorf("calls %s; want %s", got, tt.calls)
			}
		})
	}
}

// A Step hook's error stops the flow before that step's call; a network
// failure comes back as the HTTP client's error.
func TestSubmitStopsWhereToldAndWithoutAnswer(t *testing.T) {
	f := newFlowServer(t)
	c := &client.Client{BaseURL: f.URL, HTTP: f.Client()}
	tooLarge := errors.New("too large")
	_, err := c.Submit(context.Background(), client.Submission{
		Key: testKey,
		Zip: &client.ReaderZip{R: strings.NewReader("PK\x03\x04"), Size: 4},
		Step: func(s client.Step, up *api.UploadURL) error {
			if s == client.StepPut && up.MaxSize < 1<<30 {
				return tooLarge
			}
			return nil
		},
	})
	if err != tooLarge || f.sequence() != "POST /api/submit/upload" {
		t.Errorf("err %v after %s", err, f.sequence())
	}

	f.Close()
	_, err = c.Submit(context.Background(), client.Submission{Key: testKey})
	var ae *client.AnswerError
	if err == nil || errors.As(err, &ae) || errors.Is(err, client.ErrReadingAnswer) {
		t.Errorf("closed server: %v", err)
	}
}
