package http_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	bphttp "github.com/betaport/betaport/server/http"
	"github.com/betaport/betaport/server/storetest"
)

// panickyStore is a store whose tester list panics: a defect in a handler,
// as a nil map or an index out of range would be.
type panickyStore struct{ betaport.Store }

func (panickyStore) FindTesters(context.Context, betaport.TesterFilter) ([]*betaport.Tester, error) {
	panic("a defect")
}

// TestHandlerPanicIsAnswered: a handler that panics is answered with a
// 500 problem naming the request, logged with its stack under that id,
// and the service goes on answering.
func TestHandlerPanicIsAnswered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var log lockedBuffer
	s := &bphttp.Server{Store: panickyStore{e.DB}, Blobs: e.Blobs, Logger: slog.New(slog.NewTextHandler(&log, nil)),
		Secret: []byte(credential.NewToken()), SigningKeys: testKeyring}
	serveOn(t, e, s)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Tab Tamer")
	admin := e.adminOf(t, team)

	req, _ := http.NewRequest("GET", s.BaseURL+api.TestersPath(ext.ID), nil)
	req.Header.Set("Cookie", admin.Get("Cookie"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("a panicking handler gave no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var p api.Problem
	if resp.StatusCode != 500 || resp.Header.Get("Content-Type") != api.ProblemContentType || json.Unmarshal(body, &p) != nil ||
		p.Type != api.ProblemInternal || p.Instance != bphttp.RequestInstance(resp.Header.Get(bphttp.RequestIDHeader)) {
		t.Fatalf("a panicking handler answered %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if strings.Contains(string(body), "a defect") {
		t.Errorf("the answer shows the panic: %s", body)
	}
	id := resp.Header.Get(bphttp.RequestIDHeader)
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(log.String(), "status=500"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the request was never logged:\n%s", log.String())
		}
	}
	logged := log.String()
	if !strings.Contains(logged, `msg="handler panicked"`) || !strings.Contains(logged, "request_id="+id) || !strings.Contains(logged, "panic_test.go") {
		t.Errorf("the log does not hold the panic with its stack and request id %s:\n%s", id, logged)
	}
	// The service goes on.
	if resp, err := http.Get(s.BaseURL + api.PathHealth); err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the panic /healthz = %v, %v", resp, err)
	}
}
