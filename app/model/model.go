// Package model holds the browser app's pages in plain Go: each page's
// state, the transitions a person's actions cause, its API calls (through
// app/client) and its timers (on an injectable Clock). It imports neither
// go-app nor syscall/js, so `go test -race` runs every flow natively, and
// again under GOOS=js, without a browser. The go-app components in app/ui
// render a model's state and hand it the person's events; nothing else.
//
// A model's exported fields and methods belong to the UI goroutine: the
// page's Env says how work leaves it (Async) and comes back (Dispatch), as
// app/upload.Runner does.
package model

import (
	"context"
	"time"

	"github.com/betaport/betaport/app/client"
)

// RequestTimeout bounds a request a page sends on its own (a list's
// requests have their own deadline in app/fetch).
const RequestTimeout = 30 * time.Second

// Env connects a model to the page that shows it. In the browser, app/ui
// fills it from go-app's context; tests fill it from modeltest.
type Env struct {
	// Client makes the API calls.
	Client *client.Client
	// Context is the page's lifetime: its end aborts the model's requests
	// and drops their answers (nil: never ends).
	Context context.Context
	// Dispatch runs f on the UI goroutine, where the page is rendered
	// afterwards (go-app's ctx.Dispatch). Async runs f on a goroutine of
	// its own (go-app's ctx.Async).
	Dispatch func(f func())
	Async    func(f func())
	// Clock runs the model's timers (nil: the real clock).
	Clock Clock
}

func (e Env) context() context.Context {
	if e.Context == nil {
		return context.Background()
	}
	return e.Context
}

func (e Env) clock() Clock {
	if e.Clock == nil {
		return RealClock{}
	}
	return e.Clock
}

// Call runs do off the UI goroutine with a request context that ends with
// the page or after RequestTimeout, and hands its answer to then on the UI
// goroutine; once the page is gone the answer is dropped. The request's
// context is the page's, never an event's: go-app ends an event's context
// with the next event on the same element, which aborted requests a person
// had every reason to expect to finish (a sign-in after a typo, a revoke
// whose button left the DOM).
func Call[T any](e Env, do func(ctx context.Context, c *client.Client) (T, error), then func(T, error)) {
	page := e.context()
	e.Async(func() {
		ctx, cancel := context.WithTimeout(page, RequestTimeout)
		defer cancel()
		v, err := do(ctx, e.Client)
		if page.Err() != nil {
			return
		}
		e.Dispatch(func() {
			if page.Err() == nil {
				then(v, err)
			}
		})
	})
}

// Clock is time as a model sees it: now, and a function run later.
type Clock interface {
	Now() time.Time
	// AfterFunc runs f on its own goroutine after d; stop cancels it
	// (reporting whether it did), as time.AfterFunc's Stop.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// RealClock is the wall clock.
type RealClock struct{}

func (RealClock) Now() time.Time { return time.Now() }

func (RealClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}
