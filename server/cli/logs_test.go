package cli_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// serveProcess starts betaport serve (no UI) on a free port as a process
// with extra environment, and returns its URL and its log lines as they
// come (JSON objects: --log-format json).
func serveProcess(t *testing.T, env []string, args ...string) (url string, logs <-chan map[string]any) {
	t.Helper()
	b, _ := json.Marshal(append([]string{"serve", "--no-ui", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--log-format", "json"}, args...))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), commandChildVar+"="+string(b)), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan map[string]any, 1024)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line map[string]any
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				line = map[string]any{"not_json": sc.Text()}
			}
			lines <- line
		}
		close(lines)
	}()
	for deadline := time.After(60 * time.Second); ; {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("serve ended before it served")
			}
			if bad, ok := line["not_json"]; ok {
				t.Fatalf("with --log-format json, serve wrote a line that is not JSON: %v", bad)
			}
			if line["msg"] == "serving" {
				return line["url"].(string), lines
			}
		case <-deadline:
			t.Fatal("serve did not start in 60 s")
		}
	}
}

// logLine waits for the request log line with request id id.
func logLine(t *testing.T, logs <-chan map[string]any, id string) map[string]any {
	t.Helper()
	for deadline := time.After(20 * time.Second); ; {
		select {
		case line, ok := <-logs:
			if !ok {
				t.Fatal("serve ended")
			}
			if line["msg"] == "request" && line["request_id"] == id {
				return line
			}
		case <-deadline:
			t.Fatalf("no request line with request_id %s in 20 s", id)
		}
	}
}

// TestServeLogsJSONWithWarnings: serve --log-format json writes one JSON
// object per line; a failed sign-in and a refused submit are WARN lines
// with the request id the answer carries; an X-Request-Id is kept only
// from a proxy --trusted-proxies names.
func TestServeLogsJSONWithWarnings(t *testing.T) {
	t.Parallel()
	url, logs := serveProcess(t, []string{"BETAPORT_TRUSTED_PROXIES=127.0.0.1"})
	do := func(method, path, body string, header map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, c := range []struct {
		what, method, path, body string
		status                   int
	}{
		{"a failed sign-in", "POST", "/api/session", `{"email": "ada@example.com", "password": "typo"}`, http.StatusUnauthorized},
		{"a submit without a key", "POST", "/api/submit/upload", `{}`, http.StatusBadRequest},
	} {
		resp := do(c.method, c.path, c.body, nil)
		id := resp.Header.Get("X-Request-Id")
		line := logLine(t, logs, id)
		if resp.StatusCode != c.status || line["level"] != "WARN" || line["status"] != float64(c.status) {
			t.Errorf("%s: answered %d, logged %v; want %d and a WARN line", c.what, resp.StatusCode, line, c.status)
		}
	}
	// From 127.0.0.1, a trusted proxy: its id is the request's.
	if resp := do("GET", "/healthz", "", map[string]string{"X-Request-Id": "edge-7f3a"}); resp.Header.Get("X-Request-Id") != "edge-7f3a" {
		t.Errorf("a trusted proxy's X-Request-Id was replaced by %q", resp.Header.Get("X-Request-Id"))
	} else if line := logLine(t, logs, "edge-7f3a"); line["level"] != "INFO" {
		t.Errorf("a health check logged %v", line)
	}

	// Without --trusted-proxies, nobody chooses an id; a bad level is
	// refused before anything starts.
	url2, _ := serveProcess(t, nil)
	req, _ := http.NewRequest("GET", url2+"/healthz", nil)
	req.Header.Set("X-Request-Id", "chosen-by-a-client")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Request-Id"); got == "chosen-by-a-client" || got == "" {
		t.Errorf("with no trusted proxy, a client's X-Request-Id became the id: %q", got)
	}
	if code, _, errOut := commandProcess(t, "serve", "--no-ui", "--data", t.TempDir(), "--log-level", "loud"); code != 2 || !strings.Contains(errOut, "debug, info, warn or error") {
		t.Errorf("--log-level loud: exit %d, %s", code, errOut)
	}
}
