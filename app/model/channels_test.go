package model_test

import (
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/fetch"
	"github.com/betaport/betaport/app/model"
	"github.com/betaport/betaport/app/model/modeltest"
)

// A bundle's row names the channels whose current bundle it is, and a
// rollout of it with its reach; a bundle no channel serves says nothing.
func TestBundleChannelsText(t *testing.T) {
	channels := []*betaport.Channel{
		{Name: "beta", CurrentBundle: 7, Testers: 48, Rollout: &betaport.Rollout{Bundle: 8, Percent: 25, State: betaport.RolloutActive, Reached: 12, Installed: 3}},
		{Name: "internal", CurrentBundle: 8, Testers: 5},
		{Name: "nightly", CurrentBundle: 9, Testers: 2, Rollout: &betaport.Rollout{Bundle: 10, Percent: 50, State: betaport.RolloutHalted, Reached: 1}},
	}
	for number, want := range map[int64]string{
		7:  "beta",
		8:  "beta · 25 % · 12 of 48 testers on it, 3 running it; internal",
		9:  "nightly",
		10: "nightly · halted at 50 % · 1 of 2 testers on it, 0 running it",
		6:  "",
	} {
		if got := model.BundleChannelsText(number, channels); got != want {
			t.Errorf("bundle #%d: %q, want %q", number, got, want)
		}
	}
}

// Enter pressed again on the advance field the last advance emptied does
// nothing: that advance was made; it sends nothing and says no error.
func TestAdvanceTwiceMakesOneChange(t *testing.T) {
	var mu sync.Mutex
	var advances int
	svc := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			mu.Lock()
			advances++
			mu.Unlock()
		}
		io.WriteString(w, `{"name":"beta","currentBundle":1,"createdAt":"2026-11-27T09:00:00Z","testers":4,
			"rollout":{"id":1,"channel":"beta","bundle":2,"previous":1,"percent":80,"state":"active"}}`)
	})
	loop := modeltest.NewLoop(t)
	env := loop.Env(modeltest.Client(svc), modeltest.NewClock())
	var m *model.Channels
	loop.Do(func() {
		m = model.NewChannels(model.ChannelsConfig{Env: env, Cache: fetch.NewCache(fetch.CacheOptions{}), ExtensionID: 7})
		m.SetAdvance("beta", "80")
		m.ChangeRollout("beta", betaport.RolloutAdvance)
	})
	loop.Wait("the advance", func() bool { return m.Busy == "" && m.Done != "" })
	loop.Do(func() {
		m.ChangeRollout("beta", betaport.RolloutAdvance) // Enter again, the field emptied
		if m.Err != nil || m.Busy != "" {
			t.Errorf("Enter again: error %v, busy %q", m.Err, m.Busy)
		}
		m.SetAdvance("beta", "") // typed, then cleared: now it is a mistake
		m.ChangeRollout("beta", betaport.RolloutAdvance)
		if m.Err == nil {
			t.Error("an empty percentage typed anew says nothing")
		}
	})
	mu.Lock()
	defer mu.Unlock()
	if advances != 1 {
		t.Fatalf("%d advances sent, want 1", advances)
	}
}
