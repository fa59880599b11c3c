package model_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// bundleSvc fakes the API of extensions and their bundles, rollbacks and
// adoption counts, as the pages of bundles (bundles, page by page,
// adoption) read it: JSON with ETags (If-None-Match is answered 304), and
// problems. It logs every request, and holds those a test asks it to hold
// (after their answer is made: what they bring is the service's state when
// they came).
type bundleSvc struct {
	t  *testing.T
	mu sync.Mutex
	// exts and bundles (newest first) by extension id.
	exts    map[int64]*betaport.Extension
	bundles map[int64][]betaport.Bundle
	// refuse, when set, is the problem a rollback is answered with.
	refuse *api.Problem
	// status, by path prefix, answers every GET of those paths so.
	status map[string]int
	// counts are the adoption counts; countsPage how many a page holds,
	// endless a cursor on every page.
	counts     []betaport.AdoptionCount
	testers    []betaport.AdoptionCount // the counts of ?count=testers
	installs   betaport.Installs
	countsPage int
	endless    bool
	log        []string
	holds      []*svcHold
}

type svcHold struct {
	match   string
	gate    chan struct{}
	arrived chan struct{}
}

// newBundleSvc serves extension 7, "Tab Tamer", with n bundles, the last
// current.
func newBundleSvc(t *testing.T, n int) *bundleSvc {
	s := &bundleSvc{t: t, exts: map[int64]*betaport.Extension{}, bundles: map[int64][]betaport.Bundle{}, status: map[string]int{}, countsPage: 3}
	s.addExtension(7, "Tab Tamer", n)
	return s
}

var svcEpoch = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// addExtension adds extension id with n bundles, the last current.
func (s *bundleSvc) addExtension(id int64, name string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exts[id] = &betaport.Extension{ID: id, Name: name, CurrentBundle: int64(n)}
	for i := 1; i <= n; i++ {
		s.bundles[id] = append([]betaport.Bundle{{
			ID: id*1000 + int64(i), ExtensionID: id, Number: int64(i), Version: fmt.Sprintf("1.0.%d", i),
			Size: 1000, SHA256: "ab", CreatedAt: svcEpoch.Add(time.Duration(i) * time.Hour), Current: i == n,
		}}, s.bundles[id]...)
	}
}

// publish adds a bundle on top of extension 7 and makes it current, as a
// pipeline does; it returns the revision the event stream then sends.
func (s *bundleSvc) publish() (betaport.Bundle, api.Revision) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.publishLocked(7, 0)
}

func (s *bundleSvc) publishLocked(id, of int64) (betaport.Bundle, api.Revision) {
	list := s.bundles[id]
	n := int64(1)
	if len(list) > 0 {
		n = list[0].Number + 1
	}
	for i := range list {
		list[i].Current = false
	}
	b := betaport.Bundle{ID: id*1000 + n, ExtensionID: id, Number: n, Version: fmt.Sprintf("1.0.%d", n),
		Size: 1000, SHA256: "cd", CreatedAt: svcEpoch.Add(time.Duration(n) * time.Hour), Current: true, RollbackOf: of}
	s.bundles[id] = append([]betaport.Bundle{b}, list...)
	s.exts[id].CurrentBundle = n
	return b, api.Revision{CurrentBundle: n, LastBundle: n}
}

// revision is what extension 7's bundles are at.
func (s *bundleSvc) revision() api.Revision {
	s.mu.Lock()
	defer s.mu.Unlock()
	return api.Revision{CurrentBundle: s.exts[7].CurrentBundle, LastBundle: s.bundles[7][0].Number}
}

func (s *bundleSvc) set(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

// hold holds the requests whose "METHOD /path?query" contains match until
// the returned release; arrived is told each one held.
func (s *bundleSvc) hold(match string) (arrived <-chan struct{}, release func()) {
	h := &svcHold{match: match, gate: make(chan struct{}), arrived: make(chan struct{}, 100)}
	s.mu.Lock()
	s.holds = append(s.holds, h)
	s.mu.Unlock()
	var once sync.Once
	return h.arrived, func() {
		once.Do(func() {
			s.mu.Lock()
			for i, x := range s.holds {
				if x == h {
					s.holds = append(s.holds[:i], s.holds[i+1:]...)
					break
				}
			}
			s.mu.Unlock()
			close(h.gate)
		})
	}
}

// arrive waits until a held request has come.
func arrive(t *testing.T, arrived <-chan struct{}) {
	t.Helper()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("waited 10 s for a request that never came")
	}
}

// count is how many requests "METHOD /path?query" started with prefix.
func (s *bundleSvc) count(prefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.log {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

// countLine is how many requests were exactly "METHOD /path?query".
func (s *bundleSvc) countLine(line string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.log {
		if r == line {
			n++
		}
	}
	return n
}

// requests is the log, for failure messages.
func (s *bundleSvc) requests() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.log, "\n")
}

func (s *bundleSvc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	line := r.Method + " " + r.URL.RequestURI()
	s.mu.Lock()
	s.log = append(s.log, line)
	status, body := s.answer(r)
	var holds []*svcHold
	for _, h := range s.holds {
		if strings.Contains(line, h.match) {
			holds = append(holds, h)
		}
	}
	s.mu.Unlock()
	for _, h := range holds {
		h.arrived <- struct{}{}
		select {
		case <-h.gate:
		case <-r.Context().Done():
			return
		}
	}
	if status >= 400 {
		w.Header().Set("Content-Type", api.ProblemContentType)
		w.WriteHeader(status)
		w.Write(body)
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	if r.Method == http.MethodGet && r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// answer is the status and body for r, under s.mu.
func (s *bundleSvc) answer(r *http.Request) (int, []byte) {
	problem := func(status int, typ, detail string) (int, []byte) {
		b, _ := json.Marshal(api.NewProblem(status, typ, detail))
		return status, b
	}
	ok := func(v any) (int, []byte) {
		b, err := json.Marshal(v)
		if err != nil {
			s.t.Error(err)
		}
		return http.StatusOK, b
	}
	if r.Method == http.MethodGet {
		for prefix, status := range s.status {
			if strings.HasPrefix(r.URL.Path, prefix) {
				return problem(status, api.ProblemInternal, "The fake service was told to answer "+strconv.Itoa(status)+".")
			}
		}
	}
	rest, found := strings.CutPrefix(r.URL.Path, api.PathExtensions+"/")
	if !found {
		return problem(http.StatusNotFound, api.ProblemNotFound, "no such path")
	}
	idText, sub, _ := strings.Cut(rest, "/")
	id, _ := strconv.ParseInt(idText, 10, 64)
	ext := s.exts[id]
	if ext == nil {
		return problem(http.StatusNotFound, api.ProblemNotFound, "There is no extension "+idText+".")
	}
	q := r.URL.Query()
	switch {
	case sub == "" && r.Method == http.MethodGet:
		return ok(ext)
	case sub == "bundles" && r.Method == http.MethodGet:
		page, _ := strconv.Atoi(q.Get("page"))
		limit, _ := strconv.Atoi(q.Get("limit"))
		list := s.bundles[id]
		from, to := min(page*limit, len(list)), min((page+1)*limit, len(list))
		return ok(append([]betaport.Bundle{}, list[from:to]...))
	case sub == "bundles/current" && r.Method == http.MethodGet:
		for _, b := range s.bundles[id] {
			if b.Number == ext.CurrentBundle {
				return ok(b)
			}
		}
		return problem(http.StatusNotFound, api.ProblemNotFound, "No bundle is published yet.")
	case strings.HasPrefix(sub, "bundles/") && strings.HasSuffix(sub, "/rollback") && r.Method == http.MethodPost:
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(sub, "bundles/"), "/rollback"), 10, 64)
		if s.refuse != nil {
			b, _ := json.Marshal(s.refuse)
			return s.refuse.Status, b
		}
		if n == ext.CurrentBundle {
			return problem(http.StatusConflict, api.ProblemConflict, fmt.Sprintf("Bundle #%d is current already.", n))
		}
		b, _ := s.publishLocked(id, n)
		return ok(b)
	case sub == "installs" && r.Method == http.MethodGet:
		return ok(s.installs)
	case sub == "adoption" && r.Method == http.MethodGet:
		counts := s.counts
		if q.Get("count") == betaport.AdoptionByTesters {
			counts = s.testers
		}
		from, _ := strconv.Atoi(q.Get("cursor"))
		to := min(from+s.countsPage, len(counts))
		page := struct {
			Data       []betaport.AdoptionCount `json:"data"`
			NextCursor string                   `json:"nextCursor,omitempty"`
		}{Data: append([]betaport.AdoptionCount{}, counts[min(from, to):to]...)}
		if to < len(counts) || s.endless {
			page.NextCursor = strconv.Itoa(to)
		}
		return ok(page)
	}
	return problem(http.StatusNotFound, api.ProblemNotFound, "no such path: "+r.Method+" "+r.URL.Path)
}
