package postgres_test

import (
	"testing"

	"github.com/betaport/betaport/server/storetest"
)

// BenchmarkSearch measures tester search at a million testers against a
// plain page (see storetest.BenchSearch), on the test cluster.
func BenchmarkSearch(b *testing.B) {
	storetest.BenchSearch(b, MustOpenDB(b), 1_000_000)
}
