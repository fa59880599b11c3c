package betaport_test

import (
	"math"
	"testing"

	"github.com/betaport/betaport/app/betaport"
)

// The bucket function's properties, over 10,000 testers: monotone in the
// percentage, near N % of the testers at each step, and independent
// between rollouts.
func TestRolloutBuckets(t *testing.T) {
	const testers = 10_000
	// A binomial count's standard deviation is at most √(n/4) = 50 here;
	// the tolerance is 4 of them (200 testers, 2 percentage points): a
	// fair hash falls outside once in 15,000 steps.
	const tolerance = 200
	rollouts := []int64{1, 2, 77, 1 << 40}
	for _, r := range rollouts {
		prev := make([]bool, testers+1)
		for _, percent := range []int{0, 1, 5, 10, 25, 50, 75, 90, 99, 100} {
			in := 0
			for id := int64(1); id <= testers; id++ {
				got := betaport.InRollout(r, id, percent)
				if prev[id] && !got {
					t.Fatalf("rollout %d: tester %d is reached below %d %% but not at it: raising the percentage took them out", r, id, percent)
				}
				prev[id] = got
				if got {
					in++
				}
			}
			want := testers * percent / 100
			if math.Abs(float64(in-want)) > tolerance {
				t.Errorf("rollout %d at %d %%: %d of %d testers reached, want %d ± %d", r, percent, in, testers, want, tolerance)
			}
			if (percent == 0 && in != 0) || (percent == 100 && in != testers) {
				t.Errorf("rollout %d at %d %%: %d of %d testers reached", r, percent, in, testers)
			}
		}
	}
	// Independent: at 50 % each, two rollouts share about a quarter of
	// the testers (not all of them, not none).
	for i, a := range rollouts {
		for _, b := range rollouts[i+1:] {
			both := 0
			for id := int64(1); id <= testers; id++ {
				if betaport.InRollout(a, id, 50) && betaport.InRollout(b, id, 50) {
					both++
				}
			}
			if math.Abs(float64(both-testers/4)) > tolerance {
				t.Errorf("rollouts %d and %d at 50 %% share %d of %d testers, want %d ± %d: the buckets are not independent", a, b, both, testers, testers/4, tolerance)
			}
		}
	}
	// Out-of-range percentages are clamped, never a panic or a surprise.
	if betaport.InRollout(1, 1, -5) || !betaport.InRollout(1, 1, 150) {
		t.Error("percentages below 0 reach someone, or above 100 miss someone")
	}
}
