package fetch

// The reader's window of a list with MaxPages: which pages are held, and
// what a dropped page leaves behind.

// SetReading tells a list with MaxPages which page the reader is at: the
// MaxPages pages nearest it are held, those of them that were dropped are
// fetched again, and the farthest are dropped. Until it is called (or
// after SetReading(-1), or a new first key) the reader is at the last
// page, so loading more drops pages from the front. Reading never changes
// Size, and costs nothing while the held pages stay the same: a UI may
// call it on every scroll event.
func (l *Infinite[P]) SetReading(page int) {
	l.mu.Lock()
	if page < 0 {
		page = -1
	}
	if l.closed || page == l.reading {
		l.mu.Unlock()
		return
	}
	l.reading = page
	if l.opts.MaxPages > 0 && l.currentLocked() {
		lo, hi := l.windowLocked(len(l.pages))
		missing := false
		for i := lo; i < hi; i++ {
			missing = missing || l.pages[i].dropped
		}
		if l.trimLocked() {
			l.changedLocked()
		}
		if missing {
			l.triggerLocked(flagSoft)
		}
	}
	l.unlockAndNotify()
}

// windowLocked returns the pages [lo, hi) of n that MaxPages holds. While
// the reader is inside the held pages, away from their edges, they stay
// (a reader going back and forth over a page boundary costs nothing);
// else they are centred on the reader's page (one more after it, for an
// even bound, as readers go down), shifted to fit inside 0..n.
func (l *Infinite[P]) windowLocked(n int) (lo, hi int) {
	m := l.opts.MaxPages
	if m <= 0 || n <= m {
		return 0, n
	}
	r := l.reading
	if r < 0 || r >= n {
		r = n - 1
	}
	if lo := l.held; lo+m <= n && r > lo && r < lo+m-1 {
		return lo, lo + m
	}
	lo = min(max(r-(m-1)/2, 0), n-m)
	return lo, lo + m
}

// trimLocked drops the data of the pages outside the reader's window,
// from the list and from the cache, keeping their keys and counts. It
// reports whether it dropped any.
func (l *Infinite[P]) trimLocked() bool {
	if l.opts.MaxPages <= 0 || !l.currentLocked() {
		return false
	}
	n := len(l.pages)
	lo, hi := l.windowLocked(n)
	l.held = lo
	trimmed := false
	for i := range l.pages {
		p := &l.pages[i]
		if p.dropped || (i >= lo && i < hi) {
			continue
		}
		if i == n-1 {
			// HasMore needs the last page; remember its answer.
			data := make([]P, n)
			for j, q := range l.pages {
				data[j] = q.data
			}
			l.lastMore = l.hasMoreLocked(data)
		}
		if l.opts.Count != nil {
			p.count = l.opts.Count(p.data)
		}
		var zero P
		p.data, p.dropped = zero, true
		l.cache.Delete(p.key)
		trimmed = true
	}
	return trimmed
}

// leaveDroppedLocked reports whether a revalidation may pass page i, under
// key, without fetching it: it is dropped, outside the reader's window,
// under the same key, and the key after it is known (or not needed).
func (l *Infinite[P]) leaveDroppedLocked(i int, key string) bool {
	if l.opts.MaxPages <= 0 || !l.currentLocked() || i >= len(l.pages) {
		return false
	}
	p := l.pages[i]
	lo, hi := l.windowLocked(len(l.pages))
	return p.dropped && p.key == key && (i < lo || i >= hi) &&
		(i+1 < len(l.pages) || i+1 >= l.size)
}

// hasMoreLocked reports whether there is a page after the shown ones
// (current pages only); data is what publish shows.
func (l *Infinite[P]) hasMoreLocked(data []P) bool {
	if l.pages[len(l.pages)-1].dropped {
		return l.lastMore
	}
	if l.opts.HasMore != nil {
		return l.opts.HasMore(data)
	}
	return l.nextKeyLocked()
}

// nextKeyLocked reports whether getKey gives a key after the last shown
// page (current pages only).
func (l *Infinite[P]) nextKeyLocked() bool {
	last := l.pages[len(l.pages)-1]
	if last.dropped {
		return l.lastMore
	}
	_, more := l.keyLocked(len(l.pages), ptr(last.data))
	return more
}
