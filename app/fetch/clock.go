package fetch

import (
	"sort"
	"sync"
	"time"
)

// Clock is the time seam of the package: every deadline (deduping window,
// focus throttle, retry backoff, refresh interval) is measured with Now and
// every delayed action is scheduled with AfterFunc. Production code uses
// SystemClock; tests pass a *FakeClock so they never sleep.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f, on a goroutine of the clock's choosing, once d has
	// passed. Stop cancels a call that has not started.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a scheduled call; *time.Timer satisfies it.
type Timer interface {
	Stop() bool
}

// SystemClock is the real clock (time.Now and time.AfterFunc).
var SystemClock Clock = systemClock{}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// FakeClock is a manually advanced Clock for deterministic tests. Time stands
// still until Advance is called; Advance runs every timer that falls due, in
// deadline order, synchronously on the caller's goroutine, with Now reporting
// each timer's own deadline while it runs.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers []*fakeTimer
}

type fakeTimer struct {
	clock *FakeClock
	at    time.Time
	seq   uint64 // ties on at fire in scheduling order
	f     func()
}

// NewFakeClock returns a FakeClock that reads start until advanced.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start}
}

// Now returns the fake current time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f to run when the clock has been advanced by d.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &fakeTimer{clock: c, at: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return t
}

// Stop removes the timer; it reports whether the timer was still pending.
func (t *fakeTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, o := range c.timers {
		if o == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return true
		}
	}
	return false
}

// Advance moves the clock forward by d, running due timers in order. Timers
// scheduled by those callbacks run too if they fall due within d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.now.Add(d)
	for {
		sort.Slice(c.timers, func(i, j int) bool {
			a, b := c.timers[i], c.timers[j]
			if !a.at.Equal(b.at) {
				return a.at.Before(b.at)
			}
			return a.seq < b.seq
		})
		if len(c.timers) == 0 || c.timers[0].at.After(target) {
			break
		}
		t := c.timers[0]
		c.timers = c.timers[1:]
		if t.at.After(c.now) {
			c.now = t.at
		}
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	c.now = target
	c.mu.Unlock()
}

// Pending returns the number of scheduled timers.
func (c *FakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// Next returns how far the clock must advance for the earliest timer to
// fire, and false when nothing is scheduled.
func (c *FakeClock) Next() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 {
		return 0, false
	}
	first := c.timers[0].at
	for _, t := range c.timers[1:] {
		if t.at.Before(first) {
			first = t.at
		}
	}
	return first.Sub(c.now), true
}
