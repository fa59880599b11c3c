package fetch

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// A list's revalidation passes (one page after another, or in parallel),
// and what the cache asks of a list.

// batch is one revalidation: walk pages 0..size-1 in order, fetching those
// that need it, until size or a null key.
func (l *Infinite[P]) batch(ctx context.Context, gen uint64, f flags) error {
	dedupe := l.dedupe(f)
	all := f&flagAll != 0 || l.opts.RevalidateAll
	var pred func(page P, key string) bool
	firstPage := on(l.opts.RevalidateFirstPage)
	l.mu.Lock()
	if f&flagPred != 0 {
		pred, l.pred = l.pred, nil
		firstPage = firstPage && (l.predFirst || f&^(flagPred|flagForce) != 0)
		l.predFirst = false
	}
	l.settlePassingLocked() // a pass before this one was cut short
	l.unlockAndNotify()
	if l.opts.Parallel {
		return l.parallelBatch(ctx, gen, dedupe, all, firstPage, pred)
	}
	var fresh []page[P]
	for i := 0; ; i++ {
		l.mu.Lock()
		if l.gen != gen {
			l.mu.Unlock()
			return context.Canceled
		}
		key, ok := "", false
		if i == 0 {
			l.keyErr = nil // a getKey that panics again says so again
		}
		// The size is read live, so a SetSize during this pass extends it.
		if l.hasFirst && i < l.size {
			switch {
			case i == 0:
				key, ok = l.keyLocked(0, nil)
			case fresh[i-1].dropped:
				// Left dropped by this pass, so its successor is known.
				key, ok = l.pages[i].key, true
			default:
				key, ok = l.keyLocked(i, ptr(fresh[i-1].data))
			}
		}
		if !ok {
			l.finishLocked(fresh)
			return nil
		}
		if l.leaveDroppedLocked(i, key) {
			fresh = append(fresh, l.pages[i])
			l.mu.Unlock()
			continue
		}
		v, has := Get[P](l.cache, key)
		if !has && i < len(l.pages) && l.pages[i].real && !l.pages[i].dropped && l.pages[i].key == key {
			v, has = l.pages[i].data, true // evicted, but still shown
		}
		fetch := all || !has || (i == 0 && firstPage) || (pred != nil && pred(v, key))
		if fetch {
			l.markPassingLocked(key)
		}
		l.mu.Unlock()

		if fetch {
			maxAge := dedupe
			if !has {
				maxAge = anyAge
			}
			var err error
			v, err = l.fetchPage(ctx, key, maxAge)
			if ctx.Err() != nil {
				return context.Canceled
			}
			if err != nil {
				l.mu.Lock()
				if l.gen != gen {
					l.mu.Unlock()
					return context.Canceled
				}
				// Pages already shown stay; the error is shown beside them.
				l.err = err
				l.settlePassingLocked()
				l.changedLocked()
				l.unlockAndNotify()
				if l.opts.OnError != nil {
					l.opts.OnError(key, err)
				}
				return err
			}
		}
		l.mu.Lock()
		if l.gen != gen {
			l.mu.Unlock()
			return context.Canceled
		}
		// The cache is the truth: a Mutate that landed after the answer
		// wins, and the next key is computed from what is shown.
		if cv, ok := Get[P](l.cache, key); ok {
			v = cv
		}
		p := page[P]{key: key, data: v, real: true}
		fresh = append(fresh, p)
		if !l.opts.AllAtOnce {
			l.showPageLocked(i, p)
		}
		l.unlockAndNotify()
	}
}

// parallelBatch is batch for Parallel lists: every key is known up front,
// so the pages that need it are fetched at once.
func (l *Infinite[P]) parallelBatch(ctx context.Context, gen uint64, dedupe time.Duration, all, firstPage bool, pred func(P, string) bool) error {
	type job struct {
		key   string
		fetch bool
		has   bool
		v     P
		left  *page[P] // a dropped page this pass leaves dropped
	}
	l.mu.Lock()
	if l.gen != gen {
		l.mu.Unlock()
		return context.Canceled
	}
	var jobs []job
	for i := 0; l.hasFirst && i < l.size; i++ {
		key, ok := l.keyLocked(i, nil)
		if !ok {
			break
		}
		if l.leaveDroppedLocked(i, key) {
			jobs = append(jobs, job{key: key, left: ptr(l.pages[i])})
			continue
		}
		v, has := Get[P](l.cache, key)
		j := job{key: key, has: has, v: v,
			fetch: all || !has || (i == 0 && firstPage) || (pred != nil && has && pred(v, key))}
		if j.fetch {
			l.markPassingLocked(key)
		}
		jobs = append(jobs, j)
	}
	l.mu.Unlock()

	errs := make(chan struct {
		key string
		err error
	}, len(jobs))
	var wg sync.WaitGroup
	for i := range jobs {
		if !jobs[i].fetch {
			continue
		}
		wg.Add(1)
		go func(j *job) {
			defer wg.Done()
			maxAge := dedupe
			if !j.has {
				maxAge = anyAge
			}
			if _, err := l.fetchPage(ctx, j.key, maxAge); err != nil {
				errs <- struct {
					key string
					err error
				}{j.key, err}
			}
		}(&jobs[i])
	}
	wg.Wait()
	close(errs)
	if ctx.Err() != nil {
		return context.Canceled
	}
	l.mu.Lock()
	if l.gen != gen {
		l.mu.Unlock()
		return context.Canceled
	}
	if first, failed := <-errs; failed {
		l.settlePassingLocked()
		// The first error wins; pages already shown stay.
		l.err = first.err
		l.changedLocked()
		l.unlockAndNotify()
		if l.opts.OnError != nil {
			l.opts.OnError(first.key, first.err)
		}
		return first.err
	}
	fresh := make([]page[P], 0, len(jobs))
	for _, j := range jobs {
		if j.left != nil {
			fresh = append(fresh, *j.left)
			continue
		}
		v, ok := Get[P](l.cache, j.key) // the cache is the truth
		if !ok {
			v = j.v
		}
		fresh = append(fresh, page[P]{key: j.key, data: v, real: true})
	}
	l.pages = fresh
	l.finishLocked(fresh)
	return nil
}

// finishLocked ends a successful revalidation: it shows its pages, unlocks
// and reports the success.
func (l *Infinite[P]) finishLocked(fresh []page[P]) {
	l.showAllLocked(fresh)
	first, data := l.firstKey, l.snap.Load().Data
	l.unlockAndNotify()
	if l.opts.OnSuccess != nil {
		l.opts.OnSuccess(first, data)
	}
}

func (l *Infinite[P]) wants(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || !l.hasFirst || !l.validating {
		return false
	}
	if key == l.firstKey {
		return true
	}
	for _, p := range l.pages {
		if p.key == key && !p.dropped {
			return true
		}
	}
	return false
}

func (l *Infinite[P]) keyChanged(key string) {
	l.mu.Lock()
	switch {
	case l.closed || !l.hasFirst:
	case key == SizeKey(l.firstKey):
		// Another list with the same first key changed the size.
		if n, ok := Get[int](l.cache, key); ok && n != l.size {
			grew := n > l.size
			l.resizeLocked(n)
			if grew {
				l.triggerLocked(flagSoft)
			}
		}
	case l.passing[key]:
		// An AllAtOnce pass fetches it: shown with the rest of the pass.
	case l.currentLocked():
		// A shown page changed (Mutate, Cache.Set, another list or query).
		for i := range l.pages {
			if l.pages[i].key != key {
				continue
			}
			if l.pages[i].dropped {
				break // not held: fetched again when read
			}
			if v, ok := Get[P](l.cache, key); ok && !l.equal(l.pages[i].data, v) {
				l.pages[i].data = v
				// When the next page's key moved (a shifted cursor), the
				// pages after this one stay shown and a pass brings them
				// up to date; cutting them here would collapse the list.
				if i+1 < len(l.pages) {
					if next, ok := l.keyLocked(i+1, ptr(v)); !ok || next != l.pages[i+1].key {
						l.triggerLocked(flagSoft)
					}
				}
				l.changedLocked()
			}
			break
		}
	}
	l.unlockAndNotify()
}

func (l *Infinite[P]) event(ev event) {
	l.mu.Lock()
	switch {
	case !l.hasFirst:
		// A null first key is inert: no fetch, no IsValidating flash, no
		// OnSuccess.
	case ev.kind == eventFocus:
		l.onFocusLocked()
	case ev.kind == eventReconnect:
		l.onReconnectLocked()
	case ev.kind == eventRevalidate:
		if l.matchesLocked(ev.match) {
			l.triggerLocked(flagForce | flagAll)
		}
	}
	l.unlockAndNotify()
}

func (l *Infinite[P]) matchesLocked(match func(string) bool) bool {
	if !l.hasFirst {
		return false
	}
	if match(l.firstKey) {
		return true
	}
	for _, p := range l.pages {
		if p.real && match(p.key) {
			return true
		}
	}
	return false
}

// fetchPage fetches key through the cache (shared with any request for it
// in flight) and returns it as a page.
func (l *Infinite[P]) fetchPage(ctx context.Context, key string, maxAge time.Duration) (P, error) {
	res := l.cache.fetch(ctx, key, l.fetchAny, maxAge, l.equalAny)
	if res.err != nil {
		var zero P
		return zero, res.err
	}
	v, ok := res.value.(P)
	if !ok {
		return v, fmt.Errorf("fetch: the cache holds a %T under %q, not a page", res.value, key)
	}
	return v, nil
}

func (l *Infinite[P]) fetchAny(ctx context.Context, key, etag string) (any, string, int64, error) {
	r, err := l.fetcher(ctx, key, etag)
	return r.Data, r.ETag, r.Size, err
}

func (l *Infinite[P]) equalAny(a, b any) bool {
	x, ok1 := a.(P)
	y, ok2 := b.(P)
	return ok1 && ok2 && l.equal(x, y)
}
