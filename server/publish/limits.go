package publish

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// keyLimiter is a token bucket per extension key. It is per replica (see
// README).
type keyLimiter struct {
	mu      sync.Mutex
	limit   rate.Limit
	burst   int
	buckets map[int64]*rate.Limiter
}

func (s *Service) keyLimiter() *keyLimiter {
	s.limiterOnce.Do(func() {
		cfg := s.Config.withDefaults()
		s.limiter = &keyLimiter{limit: rate.Every(cfg.Every), burst: cfg.Burst, buckets: map[int64]*rate.Limiter{}}
	})
	return s.limiter
}

// take spends one call of key's bucket, or returns the seconds to wait.
func (l *keyLimiter) take(key int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		b = rate.NewLimiter(l.limit, l.burst)
		l.buckets[key] = b
	}
	now := time.Now()
	if b.AllowN(now, 1) {
		return 0
	}
	missing := 1 - b.TokensAt(now)
	return int(math.Ceil(missing / float64(l.limit)))
}

// keyedMutex is a mutex per key whose lock gives up when the context ends.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[int64]*keyedLock
}

type keyedLock struct {
	turn    chan struct{} // holds a token while the lock is free
	waiters int
}

func (k *keyedMutex) lock(ctx context.Context, key int64) (unlock func(), err error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[int64]*keyedLock{}
	}
	l, ok := k.locks[key]
	if !ok {
		l = &keyedLock{turn: make(chan struct{}, 1)}
		l.turn <- struct{}{}
		k.locks[key] = l
	}
	l.waiters++
	k.mu.Unlock()
	release := func() {
		k.mu.Lock()
		if l.waiters--; l.waiters == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
	select {
	case <-l.turn:
		return func() { l.turn <- struct{}{}; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}
