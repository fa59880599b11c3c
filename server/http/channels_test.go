package http_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	bphttp "github.com/betaport/betaport/server/http"
)

// TestRolloutChangedOnOneReplicaCheckedOnAnother: replica B answers the
// testers' update checks without pause while an admin on replica A
// advances, halts, resumes and completes a rollout. Every check B starts
// after A answered a step answers as that step says (or a later one): at
// N % the testers InRollout picks are offered the new bundle and no
// other; halted, no one is; complete, everyone. Checks B answered while a
// step was on its way are as the step before or the step (never another
// tester set). On both backends (PostgreSQL + S3 in the child run).
func TestRolloutChangedOnOneReplicaCheckedOnAnother(t *testing.T) {
	t.Parallel()
	w := newBBTLWorld(t)
	w.publish(t, "1.0.0")
	const n = 24
	testers := make([]*bbtlTester, n)
	for i := range testers {
		testers[i] = w.tester(t, fmt.Sprintf("T%d", i))
	}
	rb := &bphttp.Server{Store: w.e.DB, Blobs: w.e.Blobs, Logger: testLogger(t), Secret: w.e.App.Secret, SigningKeys: testKeyring}
	tsb := httptest.NewServer(rb.Handler())
	t.Cleanup(tsb.Close)
	rb.BaseURL = tsb.URL
	rb.Publish.BaseURL = tsb.URL
	onB := func(tt *bbtlTester) string { return tsb.URL + strings.TrimPrefix(tt.url, w.e.URL) }

	// The new bundle goes out to 10 % of beta from the submit flow.
	p := w.p
	resp, body := w.e.send(t, "POST", api.PathSubmitUpload, nil,
		map[string]any{"extensionId": p.key.ExtensionID, "apiKey": p.key.APIKey, "rollout": 10})
	var up api.UploadURL
	if resp.StatusCode != 200 || json.Unmarshal(body, &up) != nil {
		t.Fatalf("call 1 at 10 %% = %d %s", resp.StatusCode, body)
	}
	if resp, body := p.put(t, up.URL, api.ZipContentType, validZip(t, "2.0.0")); resp.StatusCode != 200 {
		t.Fatalf("call 2 = %d %s", resp.StatusCode, body)
	}
	resp, body = p.sign(t)
	var second betaport.Bundle
	if resp.StatusCode != 200 || json.Unmarshal(body, &second) != nil {
		t.Fatalf("call 3 = %d %s", resp.StatusCode, body)
	}
	rid := w.rolloutID(t)

	// offered is which testers a check on B offers the second bundle.
	offered := func() map[int]bool {
		got := map[int]bool{}
		for i, tt := range testers {
			st, g, body := bbtuCheck(t, w.e, onB(tt), bbtuX(w.upd.ChromeID, "1.0.0"))
			_, codebase, _ := bbtuOffer(t, "a check on B", st, g, body, w.upd.ChromeID)
			if strings.HasSuffix(codebase, fmt.Sprintf("/crx/%d", second.Number)) {
				got[i] = true
			} else if codebase != "" {
				t.Errorf("B offered %s %q, neither the first bundle nor the second", tt.email, codebase)
			}
		}
		return got
	}
	want := func(reach func(id int64) bool) map[int]bool {
		m := map[int]bool{}
		for i, tt := range testers {
			if reach(tt.id) {
				m[i] = true
			}
		}
		return m
	}
	at := func(percent int) map[int]bool {
		return want(func(id int64) bool { return betaport.InRollout(rid, id, percent) })
	}
	same := func(a, b map[int]bool) bool {
		if len(a) != len(b) {
			return false
		}
		for k := range a {
			if !b[k] {
				return false
			}
		}
		return true
	}

	steps := []struct {
		action  string
		percent int
		reach   map[int]bool
	}{
		{"start", 10, at(10)}, // done above
		{"advance", 30, at(30)},
		{"advance", 60, at(60)},
		{"halt", 0, map[int]bool{}},
		{"resume", 0, at(60)},
		{"complete", 0, want(func(int64) bool { return true })},
	}
	// B checks all along, in the background. Each check is recorded with
	// the steps A had answered when it started and when it ended: its
	// answer must be one of those steps', or of the step then on its way
	// (committed, its answer not yet read here).
	var answered atomic.Int64 // steps A has answered (the start is one)
	answered.Store(1)
	type record struct {
		tester        int
		offered       bool
		before, after int64
	}
	var stop atomic.Bool
	var records []record
	progress := make(chan struct{}, 1) // a check B answered
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			for i, tt := range testers {
				before := answered.Load()
				st, g, body := bbtuCheck(t, w.e, onB(tt), bbtuX(w.upd.ChromeID, "1.0.0"))
				_, codebase, _ := bbtuOffer(t, "a check on B", st, g, body, w.upd.ChromeID)
				records = append(records, record{i, strings.HasSuffix(codebase, fmt.Sprintf("/crx/%d", second.Number)), before, answered.Load()})
				select {
				case progress <- struct{}{}:
				default:
				}
			}
		}
	}()
	for k, s := range steps[1:] {
		// B has answered checks since the step before: the steps and the
		// checks overlap, however the machine schedules them.
		for range 3 {
			select {
			case <-progress:
			case <-time.After(30 * time.Second):
				t.Fatalf("B answered no check before %s %d", s.action, s.percent)
			}
		}
		var body any
		if s.action == "advance" {
			body = api.RolloutChange{Percent: s.percent}
		}
		resp, out := w.e.send(t, "POST", api.ChannelPath(w.id(), "beta")+"/rollout/"+s.action, w.admin, body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %d on A = %d %s", s.action, s.percent, resp.StatusCode, out)
		}
		answered.Store(int64(k + 2))
		// A check B starts now answers as this step says.
		if got := offered(); !same(got, s.reach) {
			t.Fatalf("after %s %d on A, B offered the second bundle to %v, want %v", s.action, s.percent, got, s.reach)
		}
	}
	stop.Store(true)
	wg.Wait()
	for _, r := range records {
		ok := false
		for k := r.before; k <= min(r.after+1, int64(len(steps))); k++ {
			ok = ok || steps[k-1].reach[r.tester] == r.offered
		}
		if !ok {
			t.Errorf("a check of tester %d on B, made between steps %d and %d, was offered the second bundle: %v", r.tester, r.before, r.after, r.offered)
		}
	}
	t.Logf("%d testers, rollout %d: B answered %d checks while A changed it", n, rid, len(records))
}

// rolloutID is the id of beta's rollout in progress.
func (w *bbtlWorld) rolloutID(t *testing.T) int64 {
	t.Helper()
	resp, body := w.e.do(t, "GET", api.ChannelPath(w.id(), "beta"), w.admin)
	var c betaport.Channel
	if resp.StatusCode != 200 || json.Unmarshal(body, &c) != nil || c.Rollout == nil {
		t.Fatalf("beta = %d %s, want a rollout in progress", resp.StatusCode, body)
	}
	return c.Rollout.ID
}

// TestKeyBoundToAChannel: a key made for one channel publishes there
// when call 1 names none, and is refused (403, nothing written) for
// another; a key for a channel that does not exist is not made.
func TestKeyBoundToAChannel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	if resp, body := e.send(t, "POST", api.ChannelsPath(p.ext.ID), admin, api.NewChannel{Name: "nightly"}); resp.StatusCode != 201 {
		t.Fatalf("making nightly = %d %s", resp.StatusCode, body)
	}
	resp, body := e.send(t, "POST", api.KeysPath(p.ext.ID), admin, api.NewKey{Label: "Nightly CI", Channel: "weekly"})
	wantProblem(t, resp, body, http.StatusNotFound, api.ProblemNotFound)
	resp, body = e.send(t, "POST", api.KeysPath(p.ext.ID), admin, api.NewKey{Label: "Nightly CI", Channel: "nightly"})
	var made api.CreatedKey
	if resp.StatusCode != 201 || json.Unmarshal(body, &made) != nil || made.Key.Channel != "nightly" {
		t.Fatalf("a key for nightly = %d %s", resp.StatusCode, body)
	}
	key := made.KeyFile.Service
	call1 := func(fields map[string]any) (*http.Response, []byte) {
		body := map[string]any{"extensionId": key.ExtensionID, "apiKey": key.APIKey}
		for k, v := range fields {
			body[k] = v
		}
		return e.send(t, "POST", api.PathSubmitUpload, nil, body)
	}
	resp, body = call1(map[string]any{"channel": "beta"})
	if pr := wantProblem(t, resp, body, http.StatusForbidden, api.ProblemForbidden); !strings.Contains(pr.Detail, "nightly only") {
		t.Fatalf("the key's refusal says %q", pr.Detail)
	}
	if u, _ := e.DB.LatestUpload(t.Context(), p.ext.ID); u != nil {
		t.Fatalf("a refused call 1 made upload %d", u.ID)
	}
	resp, body = call1(nil)
	var up api.UploadURL
	if resp.StatusCode != 200 || json.Unmarshal(body, &up) != nil {
		t.Fatalf("call 1 with the nightly key = %d %s", resp.StatusCode, body)
	}
	if resp, body := p.put(t, up.URL, api.ZipContentType, validZip(t, "1.0.0")); resp.StatusCode != 200 {
		t.Fatalf("call 2 = %d %s", resp.StatusCode, body)
	}
	resp, body = e.send(t, "POST", api.PathSubmitSign, nil, key)
	var b betaport.Bundle
	if resp.StatusCode != 200 || json.Unmarshal(body, &b) != nil {
		t.Fatalf("call 3 = %d %s", resp.StatusCode, body)
	}
	nightly, _ := e.DB.FindChannel(t.Context(), p.ext.ID, "nightly")
	beta, _ := e.DB.FindChannel(t.Context(), p.ext.ID, "beta")
	if nightly.CurrentBundle != b.Number || beta.CurrentBundle != 0 {
		t.Fatalf("the nightly key's bundle #%d: nightly serves %d, beta %d", b.Number, nightly.CurrentBundle, beta.CurrentBundle)
	}
}

// TestAdoptionPerChannel: counting testers, the adoption list reads one
// channel's testers (those on it now); counting checks it cannot, and
// says so; an unknown channel is named as one.
func TestAdoptionPerChannel(t *testing.T) {
	t.Parallel()
	w := newBBTLWorld(t)
	w.publish(t, "1.0.0")
	ann, bob := w.tester(t, "Ann"), w.tester(t, "Bob")
	if resp, body := w.e.send(t, "POST", api.ChannelsPath(w.id()), w.admin, api.NewChannel{Name: "nightly"}); resp.StatusCode != 201 {
		t.Fatalf("making nightly = %d %s", resp.StatusCode, body)
	}
	path := api.TesterPath(w.id(), bob.id) + "/channel"
	if resp, body := w.e.send(t, "PUT", path, w.admin, api.ChannelChoice{Channel: "nightly"}); resp.StatusCode != 200 {
		t.Fatalf("moving Bob = %d %s", resp.StatusCode, body)
	}
	w.check(t, "Ann's copy", ann.url, "0.9.0")
	w.check(t, "Bob's copy", bob.url, "0.8.0")
	rows := func(query string) string {
		t.Helper()
		body := w.get(t, "adoption "+query, api.AdoptionPath(w.id())+"?"+query, w.admin)
		var page api.Page[betaport.AdoptionCount]
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range page.Data {
			got = append(got, fmt.Sprintf("%s %d", c.Version, c.Testers))
		}
		return strings.Join(got, ", ")
	}
	if got := rows("count=testers"); got != "0.8.0 1, 0.9.0 1" {
		t.Fatalf("every tester: %s", got)
	}
	if got := rows("count=testers&channel=nightly"); got != "0.8.0 1" {
		t.Fatalf("nightly's testers: %s, want Bob's 0.8.0 alone", got)
	}
	if got := rows("count=testers&channel=beta"); got != "0.9.0 1" {
		t.Fatalf("beta's testers: %s, want Ann's 0.9.0 alone", got)
	}
	resp, body := w.e.do(t, "GET", api.AdoptionPath(w.id())+"?channel=nightly", w.admin)
	if pr := wantProblem(t, resp, body, http.StatusBadRequest, api.ProblemBadRequest); pr.Param != "channel" {
		t.Fatalf("channel with count=checks: param %q", pr.Param)
	}
	resp, body = w.e.do(t, "GET", api.AdoptionPath(w.id())+"?count=testers&channel=weekly", w.admin)
	if pr := wantProblem(t, resp, body, http.StatusNotFound, api.ProblemNotFound); !strings.Contains(pr.Detail, "nightly") {
		t.Fatalf("an unknown channel: %q, want the channels named", pr.Detail)
	}
}

// TestHaltedRolloutKeepsWhatItGave: halted, a rollout reaches no one new,
// and the testers whose copy runs its bundle keep it: their current build
// (and download) is still that bundle, their update URL offers nothing
// older; a tester it reached whose copy never installed it gets the
// channel's current bundle again.
func TestHaltedRolloutKeepsWhatItGave(t *testing.T) {
	t.Parallel()
	w := newBBTLWorld(t)
	first := w.publish(t, "1.0.0")
	testers := make([]*bbtlTester, 8)
	for i := range testers {
		testers[i] = w.tester(t, fmt.Sprintf("H%d", i))
	}
	resp, body := w.e.send(t, "POST", api.PathSubmitUpload, nil,
		map[string]any{"extensionId": w.p.key.ExtensionID, "apiKey": w.p.key.APIKey, "rollout": 99})
	var up api.UploadURL
	if resp.StatusCode != 200 || json.Unmarshal(body, &up) != nil {
		t.Fatalf("call 1 at 99 %% = %d %s", resp.StatusCode, body)
	}
	if resp, body := w.p.put(t, up.URL, api.ZipContentType, validZip(t, "2.0.0")); resp.StatusCode != 200 {
		t.Fatalf("call 2 = %d %s", resp.StatusCode, body)
	}
	resp, body = w.p.sign(t)
	var second betaport.Bundle
	if resp.StatusCode != 200 || json.Unmarshal(body, &second) != nil {
		t.Fatalf("call 3 = %d %s", resp.StatusCode, body)
	}
	rid := w.rolloutID(t)
	var installed, reachedOnly *bbtlTester // reached: one installs it, one does not
	for _, tt := range testers {
		if !betaport.InRollout(rid, tt.id, 99) {
			continue
		}
		if installed == nil {
			installed = tt
		} else if reachedOnly == nil {
			reachedOnly = tt
		}
	}
	if installed == nil || reachedOnly == nil {
		t.Fatalf("rollout %d at 99 %% reached fewer than two of 8 testers", rid)
	}
	// The one copy updates: it reports the second bundle's version.
	w.check(t, "the installed copy, updated", installed.url, second.Version)
	w.check(t, "the other copy, not yet", reachedOnly.url, "1.0.0")
	w.get(t, "the testers list (writes the checks)", api.TestersPath(w.id()), w.admin)
	if resp, body := w.e.send(t, "POST", api.ChannelPath(w.id(), "beta")+"/rollout/halt", w.admin, nil); resp.StatusCode != 200 {
		t.Fatalf("halt = %d %s", resp.StatusCode, body)
	}
	currentOf := func(tt *bbtlTester) int64 {
		t.Helper()
		var b betaport.Bundle
		if err := json.Unmarshal(w.get(t, "current", api.BundlesPath(w.id())+"/current", tt.session), &b); err != nil {
			t.Fatal(err)
		}
		return b.Number
	}
	if got := currentOf(installed); got != second.Number {
		t.Fatalf("halted: the tester whose copy runs #%d is told #%d is their current build", second.Number, got)
	}
	if got := currentOf(reachedOnly); got != first.Number {
		t.Fatalf("halted: a tester whose copy never installed #%d is told #%d, want #%d", second.Number, got, first.Number)
	}
	st, g, body := bbtuCheck(t, w.e, installed.url, bbtuX(w.upd.ChromeID, second.Version))
	if v, _, _ := bbtuOffer(t, "the installed copy's check, halted", st, g, body, w.upd.ChromeID); v != "" {
		t.Fatalf("halted: the copy that runs %s was offered %s", second.Version, v)
	}
	st, g, body = bbtuCheck(t, w.e, reachedOnly.url, bbtuX(w.upd.ChromeID, "1.0.0"))
	if v, _, _ := bbtuOffer(t, "the other copy's check, halted", st, g, body, w.upd.ChromeID); v != "" {
		t.Fatalf("halted: a copy that never installed %s was offered %s", second.Version, v)
	}
}
