package fetch

import (
	"slices"
	"testing"
	"time"
)

func TestFakeClock(t *testing.T) {
	c := NewFakeClock(t0)
	var fired []string
	at := func(name string) func() {
		return func() { fired = append(fired, name+"@"+c.Now().Sub(t0).String()) }
	}
	c.AfterFunc(3*time.Second, at("c"))
	c.AfterFunc(time.Second, func() {
		at("a")()
		c.AfterFunc(time.Second, at("chained")) // due within the same Advance
	})
	stopped := c.AfterFunc(2*time.Second, at("stopped"))
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop should report true once")
	}
	if d, ok := c.Next(); !ok || d != time.Second {
		t.Fatalf("next = %v %v", d, ok)
	}
	c.Advance(5 * time.Second)
	if want := []string{"a@1s", "chained@2s", "c@3s"}; !slices.Equal(fired, want) {
		t.Fatalf("fired %q, want %q", fired, want)
	}
	if c.Now() != t0.Add(5*time.Second) || c.Pending() != 0 {
		t.Fatalf("now = %v, pending = %d", c.Now(), c.Pending())
	}
	if _, ok := c.Next(); ok {
		t.Fatal("nothing should be scheduled")
	}
}

func TestSystemClock(t *testing.T) {
	done := make(chan struct{})
	SystemClock.AfterFunc(0, func() { close(done) })
	select {
	case <-done:
	case <-time.After(testTimeout):
		t.Fatal("AfterFunc never ran")
	}
	if SystemClock.Now().IsZero() {
		t.Fatal("zero time")
	}
}
