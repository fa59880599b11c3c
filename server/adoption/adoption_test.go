package adoption_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/adoption"
)

// memStore keeps added counts in memory and counts version look-ups.
type memStore struct {
	mu       sync.Mutex
	testers  map[int64]betaport.TesterCheck
	written  []betaport.TesterCheck // every tester check written, in flush order
	rows     map[string]int64       // "ext hour version"
	versions map[int64][]string
	lookups  atomic.Int64
	fail     error
}

func newMemStore() *memStore {
	return &memStore{rows: map[string]int64{}, versions: map[int64][]string{}}
}

func (s *memStore) AddAdoption(_ context.Context, counts []betaport.AdoptionCount) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	for _, c := range counts {
		s.rows[fmt.Sprintf("%d %s %s", c.ExtensionID, c.Hour.Format("15h"), c.Version)] += c.Checks
	}
	return nil
}

func (s *memStore) FindAdoption(context.Context, betaport.AdoptionFilter) ([]*betaport.AdoptionCount, error) {
	return nil, nil
}

func (s *memStore) RecordTesterChecks(_ context.Context, checks []betaport.TesterCheck) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.testers == nil {
		s.testers = map[int64]betaport.TesterCheck{}
	}
	for _, c := range checks {
		s.testers[c.TesterID] = c
	}
	s.written = append(s.written, checks...)
	return nil
}

func (s *memStore) BundleVersions(_ context.Context, id int64) ([]string, error) {
	s.lookups.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.versions[id]), nil
}

func (s *memStore) dump() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.rows))
	for k, n := range s.rows {
		keys = append(keys, fmt.Sprintf("%s=%d", k, n))
	}
	slices.Sort(keys)
	return fmt.Sprint(keys)
}

var t0 = time.Date(2026, 11, 26, 13, 59, 59, 0, time.UTC)

func TestCountAndFlush(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	st.versions[1] = []string{"1.0.0", "1.1.0"}
	now := t0
	c := &adoption.Counter{Store: st, Now: func() time.Time { return now }}
	ext := &betaport.Extension{ID: 1, CurrentBundle: 2}
	count := func(version string) {
		t.Helper()
		if err := c.Count(ctx, ext, "1.1.0", version); err != nil {
			t.Fatal(err)
		}
	}
	count("1.1.0")
	count("1.1.0")
	count("1.0.0")
	count("0.1.0")             // never served
	count("")                  // no version: not counted
	now = now.Add(time.Second) // the next hour
	count("1.1.0")
	if c.Pending() != 5 {
		t.Fatalf("pending = %d, want 5", c.Pending())
	}
	if st.dump() != "[]" {
		t.Fatalf("stored before a flush: %s", st.dump())
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	want := "[1 13h 1.0.0=1 1 13h 1.1.0=2 1 13h other=1 1 14h 1.1.0=1]"
	if got := st.dump(); got != want || c.Pending() != 0 {
		t.Fatalf("after a flush: %s (pending %d), want %s", got, c.Pending(), want)
	}
	// Only checks of versions other than the current one looked the
	// served versions up, once for this current bundle.
	if n := st.lookups.Load(); n != 1 {
		t.Fatalf("%d look-ups of the served versions, want 1", n)
	}
	// A new current bundle (a publish, a rollback) reads them again: what
	// was "other" may be served now.
	st.versions[1] = append(st.versions[1], "0.1.0", "1.2.0")
	ext.CurrentBundle = 3
	count("0.1.0")
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := st.dump(); got != "[1 13h 1.0.0=1 1 13h 1.1.0=2 1 13h other=1 1 14h 0.1.0=1 1 14h 1.1.0=1]" {
		t.Fatalf("after a publish: %s", got)
	}
	// An extension with no bundle has served nothing: no look-up.
	if err := c.Count(ctx, &betaport.Extension{ID: 2}, "", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if n := st.lookups.Load(); n != 2 {
		t.Fatalf("%d look-ups, want 2", n)
	}
}

// A flush the store refuses keeps its counts pending for the next one.
func TestFailedFlushKeepsCounts(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	c := &adoption.Counter{Store: st, Now: func() time.Time { return t0 }}
	ext := &betaport.Extension{ID: 1, CurrentBundle: 1}
	for range 3 {
		c.Count(ctx, ext, "1.0.0", "1.0.0")
	}
	st.fail = errors.New("database gone")
	if err := c.Flush(ctx); err == nil {
		t.Fatal("a refused flush reported no error")
	}
	c.Count(ctx, ext, "1.0.0", "1.0.0")
	if c.Pending() != 4 {
		t.Fatalf("pending after a refused flush = %d, want 4", c.Pending())
	}
	st.fail = nil
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := st.dump(); got != "[1 13h 1.0.0=4]" {
		t.Fatalf("stored %s", got)
	}
}

// Checks counted from many goroutines while others flush are each stored
// exactly once.
func TestConcurrentCountsAndFlushes(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	st.versions[1] = []string{"1.0.0", "2.0.0"}
	c := &adoption.Counter{Store: st, Now: func() time.Time { return t0 }}
	const goroutines, each = 8, 500
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ext := &betaport.Extension{ID: 1, CurrentBundle: 2}
			for i := range each {
				v := []string{"2.0.0", "1.0.0", "junk"}[(g+i)%3]
				if err := c.Count(ctx, ext, "2.0.0", v); err != nil {
					t.Error(err)
				}
				if i%100 == 0 {
					if err := c.Flush(ctx); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var total int64
	st.mu.Lock()
	for _, n := range st.rows {
		total += n
	}
	st.mu.Unlock()
	if total != goroutines*each || len(st.rows) != 3 {
		t.Fatalf("stored %d checks in %d rows, want %d in 3: %s", total, len(st.rows), goroutines*each, st.dump())
	}
}

// Checks and testers' checks counted while flushes run are each written
// once, the latest check of each tester kept (run under -race: a flush
// reads only the maps it took from the shards).
func TestCountWhileFlushing(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	st.versions[1] = []string{"1.0.0"}
	c := &adoption.Counter{Store: st}
	ext := &betaport.Extension{ID: 1, CurrentBundle: 1}
	stop := make(chan struct{})
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		for {
			select {
			case <-stop:
				return
			default:
				if err := c.Flush(ctx); err != nil {
					t.Error(err)
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 500 {
				if err := c.Count(ctx, ext, "1.0.0", "1.0.0"); err != nil {
					t.Error(err)
				}
				c.CountTester(ext.ID, int64(g*1000+i%50), "1.0.0")
			}
		})
	}
	wg.Wait()
	close(stop)
	<-flushed
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, n := range st.rows {
		total += n
	}
	if total != 2000 || len(st.testers) != 200 {
		t.Fatalf("%d checks and %d testers written, want 2000 and 200", total, len(st.testers))
	}
}

// TestTesterChecksKeepEachDay: a tester's copy checks before and after
// midnight UTC, and the flush comes after both: the last check of each day
// is written (adoption counts the tester on both days), with the tester's
// extension.
func TestTesterChecksKeepEachDay(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	now := time.Date(2026, 11, 26, 23, 50, 0, 0, time.UTC)
	c := &adoption.Counter{Store: st, Now: func() time.Time { return now }}
	c.CountTester(7, 42, "1.0.0")
	now = now.Add(5 * time.Minute)
	c.CountTester(7, 42, "1.0.1") // the same day, later: this one is the day's
	now = now.Add(10 * time.Minute)
	c.CountTester(7, 42, "1.0.2") // 00:05 the next day
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, w := range st.written {
		if w.ExtensionID != 7 || w.TesterID != 42 {
			t.Errorf("written %+v, want extension 7's tester 42", w)
		}
		got[w.At.Format("Jan 2")] = w.Version
	}
	if want := map[string]string{"Nov 26": "1.0.1", "Nov 27": "1.0.2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("written by day %v, want %v", got, want)
	}
}
