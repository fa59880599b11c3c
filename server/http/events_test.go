package http_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// eventStream reads an event stream's "data:" lines as they come.
func eventStream(t *testing.T, e *env, path string, header http.Header) <-chan map[string]int64 {
	t.Helper()
	return eventsNamed(t, e, path, header, "bundles")
}

// eventsNamed reads the stream at path and hands over the data of each
// event called name ("testers" events are another test's, and so on).
func eventsNamed(t *testing.T, e *env, path string, header http.Header, name string) <-chan map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", e.URL+path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := make(chan map[string]int64, 16)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		event := ""
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				event = name
			}
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && event == name {
				var rev map[string]int64
				json.Unmarshal([]byte(data), &rev)
				out <- rev
			}
		}
	}()
	return out
}

func nextEvent(t *testing.T, events <-chan map[string]int64) map[string]int64 {
	t.Helper()
	select {
	case rev, ok := <-events:
		if !ok {
			t.Fatal("the event stream ended")
		}
		return rev
	case <-time.After(20 * time.Second):
		t.Fatal("no event")
		return nil
	}
}

// TestEventsFollowAPublish: an open event stream gets the current
// revision, then a new one when a pipeline publishes, from any route.
func TestEventsFollowAPublish(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.App.EventPoll = 50 * time.Millisecond
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	p.submitAny(t, validZip(t, "1.0"))
	path := api.ExtensionPath(p.ext.ID) + "/events"
	events := eventStream(t, e, path, admin)
	if rev := nextEvent(t, events); rev["currentBundle"] != 1 || rev["lastBundle"] != 1 {
		t.Fatalf("first event %v, want bundle 1", rev)
	}
	b := p.submitAny(t, validZip(t, "1.1"))
	if rev := nextEvent(t, events); rev["currentBundle"] != b.Number || rev["lastBundle"] != b.Number {
		t.Fatalf("after a publish the event says %v, want bundle %d", rev, b.Number)
	}
	// Without text/event-stream, the current revision as JSON.
	resp, body := e.do(t, "GET", path, admin)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"currentBundle":2`) {
		t.Fatalf("events as JSON = %d %s", resp.StatusCode, body)
	}
	// Strangers get nothing.
	if resp, _ := e.do(t, "GET", path, nil); resp.StatusCode != 401 {
		t.Fatalf("anonymous events = %d", resp.StatusCode)
	}
}
