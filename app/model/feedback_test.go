package model_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
	"github.com/betaport/betaport/app/model/modeltest"
)

func pngBytes(t *testing.T) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// reportSvc fakes the feedback API: it keeps the reports sent (their form's
// parts) and answers with the problem refuse when set.
type reportSvc struct {
	mu     sync.Mutex
	sent   []map[string][]string
	refuse *api.Problem
	status []string // the statuses posted
	list   []betaport.Feedback
}

func (s *reportSvc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/feedback"):
		if s.refuse != nil {
			w.Header().Set("Content-Type", api.ProblemContentType)
			w.WriteHeader(s.refuse.Status)
			json.NewEncoder(w).Encode(s.refuse)
			return
		}
		_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		mr := multipart.NewReader(r.Body, params["boundary"])
		parts := map[string][]string{}
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(p)
			parts[p.FormName()] = append(parts[p.FormName()], p.Header.Get("Content-Type")+":"+string(b[:min(len(b), 8)]))
		}
		s.sent = append(s.sent, parts)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(betaport.Feedback{ID: int64(len(s.sent)), BundleNumber: 3, Version: "1.0.3", Status: "new"})
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/status"):
		var in api.FeedbackStatus
		json.NewDecoder(r.Body).Decode(&in)
		s.status = append(s.status, in.Status)
		f := s.list[0]
		f.Status = in.Status
		s.list[0] = f
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(f)
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/feedback"):
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(api.Page[betaport.Feedback]{Data: s.list, Revision: 1})
	case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/feedback/"):
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(s.list[0])
	default:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":7,"name":"Ext"}`)
	}
}

// The report form refuses before sending what the server would refuse (a
// GIF, a sixth screenshot, one over 5 MB, an empty report), saying why and
// sending nothing; a refusal from the server keeps what was typed and
// attached; a report kept empties the form and frees the previews; Send
// pressed twice sends one report.
func TestComposerSaysWhatIsRefusedBeforeSending(t *testing.T) {
	svc := &reportSvc{}
	loop := modeltest.NewLoop(t)
	env := loop.Env(modeltest.Client(svc), modeltest.NewClock())
	var released []string
	var c *model.Composer
	sent := 0
	loop.Do(func() {
		c = model.NewComposer(model.ComposerConfig{Env: env, Release: func(p string) { released = append(released, p) },
			Sent: func(*betaport.Feedback) { sent++ }})
		c.ExtensionID = 7
		c.Send()
		if c.Err == nil || c.Sending {
			t.Error("an empty report was sent")
		}
		c.Attach("anim.gif", 10, []byte("GIF89a\x01\x00\x01\x00"), "blob:gif")
		if c.Err == nil || len(c.Shots) != 0 || !strings.Contains(c.Err.Error(), "anim.gif") {
			t.Errorf("a GIF: %v, %d shots", c.Err, len(c.Shots))
		}
		big := append(pngBytes(t), make([]byte, model.ScreenshotMaxBytes)...)
		c.Attach("huge.png", 40<<20, big, "blob:huge")
		if c.Err == nil || !strings.Contains(c.Err.Error(), "40.0 MB") {
			t.Errorf("a 40 MB screenshot: %v", c.Err)
		}
		for i := range 5 {
			c.Attach("", 100, pngBytes(t), "blob:"+string(rune('a'+i)))
		}
		c.Attach("sixth.png", 100, pngBytes(t), "blob:sixth")
		if len(c.Shots) != 5 || c.Err == nil || c.Shots[0].Name != "Pasted screenshot 1" || c.Shots[0].Type != "image/png" {
			t.Errorf("five then a sixth: %d shots, %v", len(c.Shots), c.Err)
		}
		c.Remove(c.Shots[4].ID)
		if strings.Join(released, ",") != "blob:gif,blob:huge,blob:sixth,blob:e" {
			t.Errorf("released %v", released)
		}
		c.Text = "  It crashes.  "
		c.Bundle = 3
		svc.mu.Lock()
		svc.refuse = &api.Problem{Status: 429, Type: api.ProblemTooManyRequests, Detail: "Send this one in 30 seconds."}
		svc.mu.Unlock()
		c.Send()
	})
	loop.Wait("the refusal", func() bool { return !c.Sending })
	loop.Do(func() {
		if c.Err == nil || !strings.Contains(c.Err.Error(), "30 seconds") || c.Text != "  It crashes.  " || len(c.Shots) != 4 || sent != 0 {
			t.Errorf("after a refusal: %v, %q, %d shots", c.Err, c.Text, len(c.Shots))
		}
		svc.mu.Lock()
		svc.refuse = nil
		svc.mu.Unlock()
		c.Send()
		c.Send() // pressed twice
	})
	loop.Wait("the report kept", func() bool { return !c.Sending })
	loop.Do(func() {
		if c.Err != nil || c.Sent == nil || c.Text != "" || len(c.Shots) != 0 || sent != 1 || len(released) != 8 {
			t.Errorf("after the send: %v, sent %v, %q, %d shots, %d released", c.Err, c.Sent, c.Text, len(c.Shots), len(released))
		}
	})
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if len(svc.sent) != 1 {
		t.Fatalf("%d reports sent, want 1", len(svc.sent))
	}
	got := svc.sent[0]
	if strings.Join(got["text"], "") != ":It crash" || strings.Join(got["bundle"], "") != ":3" || len(got["screenshots"]) != 4 ||
		!strings.HasPrefix(got["screenshots"][0], "image/png:\x89PNG") {
		t.Fatalf("the form sent: %q", got)
	}
}

// Opening a new report marks it seen (once); the arrow keys' moves stop
// at the first and the last screenshot; an address's query reads back as
// it was written.
func TestFeedbackViewerMarksNewReportsSeen(t *testing.T) {
	svc := &reportSvc{list: []betaport.Feedback{{ID: 5, ExtensionID: 7, Status: "new", TesterEmail: "ada@example.com",
		Screenshots: []betaport.Screenshot{{Number: 1}, {Number: 2}}}}}
	loop := modeltest.NewLoop(t)
	env := loop.Env(modeltest.Client(svc), modeltest.NewClock())
	var m *model.Feedback
	loop.Do(func() {
		m = model.NewFeedback(model.FeedbackConfig{Env: env, Session: &model.Session{}, Cache: fetch.NewCache(fetch.CacheOptions{})})
		m.Open(7, model.FeedbackQuery{}, 0)
	})
	loop.Wait("the list", func() bool { return m.Rows().Len() == 1 })
	loop.Do(func() { m.Open(7, model.FeedbackQuery{}, 5) })
	loop.Wait("seen", func() bool { return m.Report != nil && m.Report.Status == "seen" && !m.Moving })
	loop.Do(func() {
		m.PrevShot()
		if m.Shot != 0 {
			t.Errorf("← on the first: %d", m.Shot)
		}
		m.NextShot()
		m.NextShot()
		if m.Shot != 1 || m.ScreenshotPath(m.Shot) != "/api/extensions/7/feedback/5/screenshots/2" {
			t.Errorf("→ twice on two: %d %s", m.Shot, m.ScreenshotPath(m.Shot))
		}
		m.Open(7, model.FeedbackQuery{}, 0)
		m.Open(7, model.FeedbackQuery{}, 5) // opened again: seen already
	})
	loop.Wait("the report again", func() bool { return m.Report != nil })
	svc.mu.Lock()
	if strings.Join(svc.status, ",") != "seen" {
		t.Errorf("statuses posted: %v", svc.status)
	}
	svc.mu.Unlock()
	q := model.FeedbackQuery{Q: "crash", Status: "open", Bundle: 3, Tester: 9}
	if back := model.ParseFeedbackQuery(q.Values()); back != q {
		t.Fatalf("%+v read back as %+v", q, back)
	}
	if back := model.ParseFeedbackQuery(map[string][]string{"bundle": {"03"}, "tester": {"-1"}}); back != (model.FeedbackQuery{}) {
		t.Fatalf("numbers that do not read: %+v", back)
	}
}
