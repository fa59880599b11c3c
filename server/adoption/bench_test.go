package adoption_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/adoption"
)

// oneLock is the plainest counter: one map under one mutex. It is what the
// Counter's shards are measured against.
type oneLock struct {
	mu     sync.Mutex
	counts map[oneKey]int64
}

type oneKey struct {
	extensionID, hour int64
	version           string
}

func (o *oneLock) count(version string, at time.Time) {
	k := oneKey{1, at.Unix() / 3600, version}
	o.mu.Lock()
	o.counts[k]++
	o.mu.Unlock()
}

// BenchmarkCountChecks measures, side by side in one run, counting update
// checks with every core counting at once: the Counter (served-version
// cache, sharded counts) against one map under one mutex doing the same
// increments (without the version check), and the Counter on one core. A
// check is what an update request adds to the feed's work; the ratio
// counter/onelock shows what the sharding buys under parallel load, and
// lookups/op that the served versions are read from the store once, not
// per check. A flush every round writes the counts to a store in memory.
func BenchmarkCountChecks(b *testing.B) {
	ctx := context.Background()
	st := newMemStore()
	st.versions[1] = []string{"1.0.0", "1.1.0", "1.2.0"}
	c := &adoption.Counter{Store: st}
	ol := &oneLock{counts: map[oneKey]int64{}}
	// Most installed copies run the current build; some lag; a few report
	// versions never served.
	versions := []string{"1.2.0", "1.2.0", "1.2.0", "1.2.0", "1.1.0", "1.2.0", "1.0.0", "9.9.9"}
	const perWorker = 2000
	workers := runtime.GOMAXPROCS(0)
	parallel := func(n int, fn func(worker, i int)) time.Duration {
		t0 := time.Now()
		var wg sync.WaitGroup
		for w := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perWorker {
					fn(w, i)
				}
			}()
		}
		wg.Wait()
		return time.Since(t0)
	}
	var counter, onelock, serial time.Duration
	for b.Loop() {
		counter += parallel(workers, func(w, i int) {
			ext := betaport.Extension{ID: 1, CurrentBundle: 3}
			if err := c.Count(ctx, &ext, "1.2.0", versions[(w+i)%len(versions)]); err != nil {
				b.Fatal(err)
			}
		})
		onelock += parallel(workers, func(w, i int) { ol.count(versions[(w+i)%len(versions)], time.Now()) })
		serial += parallel(1, func(w, i int) {
			ext := betaport.Extension{ID: 1, CurrentBundle: 3}
			c.Count(ctx, &ext, "1.2.0", versions[(w+i)%len(versions)])
		})
		if err := c.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
	checks := float64(b.N * workers * perWorker)
	b.ReportMetric(float64(counter.Nanoseconds())/checks, "counter-ns/check")
	b.ReportMetric(float64(onelock.Nanoseconds())/checks, "onelock-ns/check")
	b.ReportMetric(float64(serial.Nanoseconds())/float64(b.N*perWorker), "serial-ns/check")
	b.ReportMetric(float64(counter)/float64(onelock), "counter/onelock")
	b.ReportMetric(float64(st.lookups.Load())/float64(b.N), "lookups/op")
}
