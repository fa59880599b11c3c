// Package modeltest runs app/model's pages as the browser app does, without
// a browser: a UI goroutine that runs what is dispatched in order (go-app's),
// goroutines for the async work, a clock the test moves, and an HTTP client
// that calls a handler in the same process (so tests also run under
// GOOS=js, where there are no sockets). Tests only: it is not linked into
// the app.
package modeltest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/client"
	"github.com/betaport/betaport/app/model"
)

// Loop is a UI goroutine: Dispatch queues, one goroutine runs in order.
type Loop struct {
	t     testing.TB
	queue chan func()
	async sync.WaitGroup
	ctx   context.Context
	// mu guards ended, and sends on queue against its close.
	mu    sync.Mutex
	ended bool
}

// NewLoop starts a UI goroutine that ends with the test; its Context ends
// then too, as a page's does when it goes.
func NewLoop(t testing.TB) *Loop {
	ctx, cancel := context.WithCancel(context.Background())
	l := &Loop{t: t, queue: make(chan func(), 10000), ctx: ctx}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for f := range l.queue {
			f()
		}
	}()
	t.Cleanup(func() {
		cancel()
		l.async.Wait()
		l.mu.Lock()
		l.ended = true
		close(l.queue)
		l.mu.Unlock()
		<-done
	})
	return l
}

// Env returns an Env on this loop, with c and clock.
func (l *Loop) Env(c *client.Client, clock model.Clock) model.Env {
	return model.Env{Client: c, Context: l.ctx, Dispatch: l.Dispatch, Async: l.Async, Clock: clock}
}

// Dispatch runs f on the UI goroutine; once the test has ended, f is
// dropped, as go-app drops what is dispatched to a component that is gone
// (a fetch object's goroutine may still tell its subscribers then).
func (l *Loop) Dispatch(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended {
		l.queue <- f
	}
}

// Async runs f on a goroutine of its own.
func (l *Loop) Async(f func()) {
	l.async.Add(1)
	go func() {
		defer l.async.Done()
		f()
	}()
}

// Do runs f on the UI goroutine and waits for it: how a test acts as the
// person and reads the page.
func (l *Loop) Do(f func()) {
	done := make(chan struct{})
	l.queue <- func() { f(); close(done) }
	<-done
}

// Wait reads cond on the UI goroutine until it holds, failing the test
// after 10 s with what (a condition, never a fixed sleep).
func (l *Loop) Wait(what string, cond func() bool) {
	l.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var ok bool
		l.Do(func() { ok = cond() })
		if ok {
			return
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("waited 10 s for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// Client returns a client that sends its requests to h in this process.
func Client(h http.Handler) *client.Client {
	c := client.New("http://betaport.test")
	c.HTTP = handlerDoer{h}
	return c
}

type handlerDoer struct{ h http.Handler }

func (d handlerDoer) Do(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	d.h.ServeHTTP(rec, req)
	if err := req.Context().Err(); err != nil {
		return nil, err // aborted while the handler ran, as fetch is
	}
	return rec.Result(), nil
}

// Clock is a clock the test moves: timers fire when Advance passes them.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer
}

type timer struct {
	at      time.Time
	f       func()
	stopped bool
}

// NewClock returns a clock at a fixed instant.
func NewClock() *Clock { return &Clock{now: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)} }

func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *Clock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

// Advance moves the clock by d and runs, in order of their time, the
// timers it passes (each on the caller's goroutine, as a timer's own).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*timer
	kept := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !t.at.After(c.now):
			t.stopped = true
			due = append(due, t)
		default:
			kept = append(kept, t)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		t.f()
	}
}
