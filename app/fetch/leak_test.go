package fetch

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// TestNoGoroutineLeak opens lists and queries with requests in flight,
// timers scheduled and subscribers attached, closes them, and checks that
// the process is back to its goroutine count.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	clock := NewFakeClock(t0)
	c := NewCache(CacheOptions{Clock: clock})
	f := newFake[ints]()
	fq := newFake[string]()
	var lists []*Infinite[ints]
	var queries []*Query[string]
	for i := range 10 {
		l := NewInfinite(context.Background(), c, searchKeys(string(rune('a'+i))), f.fetch, InfiniteOptions[ints]{
			Config: Config{RefreshInterval: time.Minute},
		})
		l.Subscribe(func() {})
		l.SetSize(3)
		lists = append(lists, l)
		queries = append(queries, New(context.Background(), c, "/q", fq.fetch, Options[string]{}))
	}
	// Answer some, leave the rest in flight.
	for range 5 {
		f.next(t).ok(ints{1})
	}
	fq.next(t).fail(errBoom) // schedules retries
	for _, l := range lists {
		l.Close()
	}
	for _, q := range queries {
		q.Close()
	}
	quiesce(t, c)
	if clock.Pending() != 0 {
		t.Fatalf("%d timers left", clock.Pending())
	}
	deadline := time.Now().Add(testTimeout)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		runtime.Gosched()
	}
}
