package betaport

import (
	"crypto/sha256"
	"encoding/binary"
)

// RolloutBuckets is how finely a staged rollout divides a channel's
// testers: a rollout at N % reaches the testers whose bucket is below
// N × RolloutBuckets / 100.
const RolloutBuckets = 10_000

// RolloutBucket places a tester in one of RolloutBuckets buckets for one
// rollout. It is a pure function of the two ids (SHA-256 of both), so every
// check, on every replica, places the tester alike; and the rollout's id
// is in it, so a tester early in one rollout is not early in every one.
func RolloutBucket(rolloutID, testerID int64) int {
	var in [24]byte
	copy(in[:8], "rollout\x00")
	binary.BigEndian.PutUint64(in[8:], uint64(rolloutID))
	binary.BigEndian.PutUint64(in[16:], uint64(testerID))
	sum := sha256.Sum256(in[:])
	return int(binary.BigEndian.Uint64(sum[:8]) % RolloutBuckets)
}

// InRollout reports whether a rollout at percent (0–100) reaches the
// tester. Raising the percentage only adds testers: a tester reached at
// N % is reached at every higher percentage.
func InRollout(rolloutID, testerID int64, percent int) bool {
	return RolloutBucket(rolloutID, testerID) < min(max(percent, 0), 100)*RolloutBuckets/100
}
