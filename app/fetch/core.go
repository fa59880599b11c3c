package fetch

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Config holds the options shared by Query and Infinite: SWR's
// configuration, under SWR's names. The zero value gives SWR's defaults:
// an unset (nil) switch is SWR's default, set one with Bool (e.g.
// RevalidateOnFocus: fetch.Bool(false)), and an interval set to Off is
// turned off.
type Config struct {
	// DedupingInterval (SWR dedupingInterval, default 2s): a revalidation
	// that is not forced reuses a value fetched less than this long ago
	// instead of asking again. Requests in flight are always shared. Off
	// asks every time.
	DedupingInterval time.Duration

	// RevalidateOnFocus (SWR revalidateOnFocus, default true): Focus, or
	// Cache.Focus, revalidates, at most once per FocusThrottleInterval (SWR
	// focusThrottleInterval, default 5s; Off: every focus).
	RevalidateOnFocus     *bool
	FocusThrottleInterval time.Duration

	// RevalidateOnReconnect (SWR revalidateOnReconnect, default true):
	// Reconnect, or Cache.Reconnect, revalidates.
	RevalidateOnReconnect *bool

	// RefreshInterval (SWR refreshInterval, default 0 = off) refetches this
	// long after the last revalidation ended.
	RefreshInterval time.Duration

	// RetryOnError (SWR shouldRetryOnError, default true): a failed
	// revalidation is retried after ErrorRetryInterval (SWR
	// errorRetryInterval, default 5s), doubling for each further failure
	// (capped at 256x), at most ErrorRetryCount times (SWR errorRetryCount;
	// 0 = no limit). Any other revalidation resets the backoff.
	RetryOnError       *bool
	ErrorRetryInterval time.Duration
	ErrorRetryCount    int

	// KeepPreviousData (SWR keepPreviousData): after a key change, keep
	// showing the old key's data until the new key's arrives. IsLoading
	// stays true meanwhile.
	KeepPreviousData bool
}

// Bool returns a pointer to v, for Config's switches.
func Bool(v bool) *bool { return &v }

// on reads a switch whose default is true.
func on(b *bool) bool { return b == nil || *b }

// Off, as an interval of Config, turns that interval off.
const Off time.Duration = -1

// Defaults of Config, as in SWR.
const (
	DefaultDedupingInterval      = 2 * time.Second
	DefaultFocusThrottleInterval = 5 * time.Second
	DefaultErrorRetryInterval    = 5 * time.Second
)

func (c Config) normalize() Config {
	if c.DedupingInterval == 0 {
		c.DedupingInterval = DefaultDedupingInterval
	} else if c.DedupingInterval < 0 {
		c.DedupingInterval = 0
	}
	if c.FocusThrottleInterval == 0 {
		c.FocusThrottleInterval = DefaultFocusThrottleInterval
	} else if c.FocusThrottleInterval < 0 {
		c.FocusThrottleInterval = 0
	}
	if c.ErrorRetryInterval <= 0 {
		c.ErrorRetryInterval = DefaultErrorRetryInterval
	}
	return c
}

// backoff is the delay before retry number attempt (1-based): SWR's
// exponential backoff without its random jitter, so tests can predict it.
func (c Config) backoff(attempt int) time.Duration {
	shift := attempt - 1
	if shift > 8 {
		shift = 8
	}
	return c.ErrorRetryInterval << shift
}

// flags say why a revalidation runs; pending flags are OR-ed together.
type flags uint8

const (
	// flagSoft: mount, focus, reconnect, size change seen from another
	// list. May reuse values inside the deduping interval.
	flagSoft flags = 1 << iota
	// flagForce: mutate, refresh, SetSize. Asks the fetcher even inside the
	// deduping interval (still joining requests in flight).
	flagForce
	// flagAll: Infinite only, revalidate every page (SWR mutate()).
	flagAll
	// flagRetry: an error retry; keeps counting attempts for the backoff.
	flagRetry
	// flagPred: Infinite only, revalidate the pages its predicate picks
	// (RevalidateFunc, MutateFunc).
	flagPred
)

// core is the machinery shared by Query and Infinite: the lock, the
// subscribers, and a runner that performs revalidations one after another.
//
// At most one runner goroutine is active per object. A trigger while it runs
// only records flags, and the runner loops until none are left, so bursts of
// events (focus storms, rapid SetSize) coalesce instead of piling up
// goroutines. A key change or Close bumps gen and cancels ctx: the runner of
// the old generation stops at its next check and never publishes again.
type core struct {
	cache *Cache
	cfg   Config

	mu         sync.Mutex
	closed     bool
	gen        uint64
	ctx        context.Context
	cancel     context.CancelFunc
	running    bool
	validating bool
	pending    flags
	// owed holds flagAll after a revalidation of every page failed: SWR
	// keeps its revalidate-all promise until a run of it succeeds, so the
	// retry (or whatever runs next) refetches every page again.
	owed      flags
	attempts  int
	retry     Timer
	refresh   Timer
	nextFocus time.Time
	subs      map[uint64]func()
	nextSub   uint64
	dirty     bool
	done      chan struct{} // closed by Close, to release Wait
	stopCtx   func() bool   // unregisters the constructor context's Close

	batch   func(ctx context.Context, gen uint64, f flags) error // one revalidation; called without mu
	publish func()                                               // rebuild the snapshot; called with mu
}

func (c *core) init(cache *Cache, cfg Config, batch func(context.Context, uint64, flags) error, publish func()) {
	c.cache = cache
	c.cfg = cfg.normalize()
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.subs = make(map[uint64]func())
	c.done = make(chan struct{})
	c.stopCtx = func() bool { return false }
	c.batch = batch
	c.publish = publish
}

// closeWith closes the object (with close, its Close) when ctx ends.
func (c *core) closeWith(ctx context.Context, close func()) {
	if ctx == nil || ctx.Done() == nil {
		return
	}
	stop := context.AfterFunc(ctx, close)
	c.mu.Lock()
	c.stopCtx = stop
	c.mu.Unlock()
}

// wait blocks until no revalidation runs or is pending, the object is
// closed, or ctx ends (its error is returned).
func (c *core) wait(ctx context.Context) error {
	ch := make(chan struct{}, 1)
	unsub := c.subscribe(func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	defer unsub()
	for {
		c.mu.Lock()
		busy := c.running && !c.closed
		c.mu.Unlock()
		if !busy {
			return nil
		}
		select {
		case <-ch:
		case <-c.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// subscribe registers fn; see Query.Subscribe.
func (c *core) subscribe(fn func()) (unsubscribe func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return func() {}
	}
	id := c.nextSub
	c.nextSub++
	c.subs[id] = fn
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.subs, id)
	}
}

// changed marks the state as changed: the snapshot is rebuilt now and the
// subscribers are told at the next unlockAndNotify.
func (c *core) changedLocked() {
	c.publish()
	c.dirty = true
}

// unlockAndNotify releases mu and then, if the state changed, calls the
// subscribers. Subscribers never run under a lock, so they may call back.
func (c *core) unlockAndNotify() {
	var fns []func()
	if c.dirty && !c.closed {
		c.dirty = false
		fns = make([]func(), 0, len(c.subs))
		for _, fn := range c.subs {
			fns = append(fns, fn)
		}
	}
	c.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

func (c *core) setValidatingLocked(v bool) {
	if c.validating != v {
		c.validating = v
		c.changedLocked()
	}
}

// triggerLocked asks for a revalidation.
func (c *core) triggerLocked(f flags) {
	if c.closed {
		return
	}
	c.pending |= f
	if c.running {
		return
	}
	c.running = true
	// Validating becomes true before the goroutine starts, so a caller that
	// triggered a revalidation and then waits for !IsValidating cannot see a
	// stale "idle".
	c.setValidatingLocked(true)
	gen, ctx := c.gen, c.ctx
	c.cache.spawn(func() { c.loop(gen, ctx) })
}

func (c *core) loop(gen uint64, ctx context.Context) {
	for {
		c.mu.Lock()
		if c.gen != gen {
			c.mu.Unlock()
			return
		}
		f := c.pending
		c.pending = 0
		if f != 0 {
			f |= c.owed
		}
		if f == 0 {
			c.running = false
			c.setValidatingLocked(false)
			c.unlockAndNotify()
			return
		}
		if f&flagRetry == 0 {
			c.attempts = 0
		}
		stopTimer(&c.retry)
		c.mu.Unlock()

		err := c.batch(ctx, gen, f)

		c.mu.Lock()
		if c.gen != gen {
			c.mu.Unlock()
			return
		}
		switch {
		case err == nil:
			c.owed = 0
		case !errors.Is(err, context.Canceled):
			c.owed |= f & flagAll
		}
		c.afterBatchLocked(err)
		c.unlockAndNotify()
	}
}

// afterBatchLocked schedules the error retry and the next refresh.
func (c *core) afterBatchLocked(err error) {
	gen := c.gen
	if err != nil && !errors.Is(err, context.Canceled) && on(c.cfg.RetryOnError) &&
		c.pending == 0 && (c.cfg.ErrorRetryCount == 0 || c.attempts < c.cfg.ErrorRetryCount) {
		c.attempts++
		c.retry = c.cache.clock.AfterFunc(c.cfg.backoff(c.attempts), func() {
			c.mu.Lock()
			if c.gen == gen {
				c.triggerLocked(flagRetry | flagSoft)
			}
			c.unlockAndNotify()
		})
	}
	if c.cfg.RefreshInterval > 0 {
		stopTimer(&c.refresh)
		c.refresh = c.cache.clock.AfterFunc(c.cfg.RefreshInterval, func() {
			c.mu.Lock()
			if c.gen == gen {
				c.triggerLocked(flagForce)
			}
			c.unlockAndNotify()
		})
	}
}

// resetLocked starts a new generation: the running revalidation, its
// requests (unless shared) and its timers are cancelled.
func (c *core) resetLocked() {
	c.gen++
	c.cancel()
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.running = false
	c.pending = 0
	c.owed = 0
	c.attempts = 0
	stopTimer(&c.retry)
	stopTimer(&c.refresh)
	c.setValidatingLocked(false)
}

// closeLocked ends the object for good.
func (c *core) closeLocked() bool {
	if c.closed {
		return false
	}
	c.resetLocked()
	c.closed = true
	c.subs = nil
	close(c.done)
	c.stopCtx()
	return true
}

func (c *core) onFocusLocked() {
	if c.closed || !on(c.cfg.RevalidateOnFocus) {
		return
	}
	now := c.cache.clock.Now()
	if now.Before(c.nextFocus) {
		return
	}
	c.nextFocus = now.Add(c.cfg.FocusThrottleInterval)
	c.triggerLocked(flagSoft)
}

func (c *core) onReconnectLocked() {
	if c.closed || !on(c.cfg.RevalidateOnReconnect) {
		return
	}
	c.triggerLocked(flagSoft)
}

// dedupe returns the deduping interval for a revalidation with flags f.
func (c *core) dedupe(f flags) time.Duration {
	if f&flagForce != 0 {
		return 0
	}
	return c.cfg.DedupingInterval
}

func stopTimer(t *Timer) {
	if *t != nil {
		(*t).Stop()
		*t = nil
	}
}
