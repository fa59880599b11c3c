package model_test

import (
	"testing"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/model"
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
