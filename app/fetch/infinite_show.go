package fetch

// What a list shows: its pages from the cache, placeholders while a new
// first key loads, each page as it arrives, and the published snapshot.

// fillFromCacheLocked makes pages the longest chain of current pages, shown
// or cached, up to size.
func (l *Infinite[P]) fillFromCacheLocked() {
	if !l.hasFirst {
		return
	}
	if !l.currentLocked() {
		v, ok := Get[P](l.cache, l.firstKey)
		if !ok || l.size == 0 {
			return
		}
		l.pages = []page[P]{{key: l.firstKey, data: v, real: true}}
	}
	if len(l.pages) > l.size {
		l.pages = l.pages[:l.size]
	}
	for i := len(l.pages); i < l.size; i++ {
		if l.pages[i-1].dropped {
			return // its next key needs its data: the revalidation fetches it
		}
		key, ok := l.keyLocked(i, ptr(l.pages[i-1].data))
		if !ok {
			return
		}
		v, ok := Get[P](l.cache, key)
		if !ok {
			return
		}
		l.pages = append(l.pages, page[P]{key: key, data: v, real: true})
	}
}

// placeholdersLocked shows previous (with KeepPreviousData) or fallback
// pages when there is nothing current to show.
func (l *Infinite[P]) placeholdersLocked(previous []page[P]) {
	if l.currentLocked() {
		return
	}
	switch {
	case l.cfg.KeepPreviousData && len(previous) > 0:
		l.pages = previous
	case l.opts.FallbackData != nil:
		l.pages = make([]page[P], len(l.opts.FallbackData))
		for i, d := range l.opts.FallbackData {
			l.pages[i] = page[P]{data: d}
		}
	}
}

// breaksLocked checks the links from..to-1 of the chain and truncates it at
// the first page whose key getKey no longer gives. It reports a truncation.
func (l *Infinite[P]) breaksLocked(from, to int) bool {
	for i := max(from, 1); i < min(to, len(l.pages)); i++ {
		if l.pages[i-1].dropped {
			continue // the link was checked while that page was held
		}
		key, ok := l.keyLocked(i, ptr(l.pages[i-1].data))
		if !ok || key != l.pages[i].key {
			l.pages = l.pages[:i]
			return true
		}
	}
	return false
}

func (l *Infinite[P]) resizeLocked(n int) {
	l.size = n
	l.fillFromCacheLocked()
	l.changedLocked()
}

// showPageLocked shows page i of a revalidation as soon as it is known
// (progressive mode): it replaces the shown page i, or appends it, and
// keeps the shown pages after it only while they still chain on.
func (l *Infinite[P]) showPageLocked(i int, p page[P]) {
	if i == 0 && !l.currentLocked() {
		l.pages = nil // fallback or previous data: replaced, not merged
	}
	switch {
	case i < len(l.pages):
		// Replace what is shown at i, even under another key (page 0 came
		// back with a shifted cursor): the pages after it stay on screen
		// until this pass brings each up to date, so the list never drops
		// to one page and grows back. The pass's end trims what is left.
		l.pages[i] = p
	case i == len(l.pages):
		l.pages = append(l.pages, p)
	default:
		// The shown pages were cut short meanwhile (a page before i
		// changed); the pass that keyChanged scheduled will redo them.
		return
	}
	l.pages = l.pages[:min(len(l.pages), l.size)]
	l.changedLocked()
}

// markPassingLocked notes that the running AllAtOnce pass fetches key.
func (l *Infinite[P]) markPassingLocked(key string) {
	if !l.opts.AllAtOnce {
		return
	}
	if l.passing == nil {
		l.passing = map[string]bool{}
	}
	l.passing[key] = true
}

// settlePassingLocked ends the marks of a pass that will not show its
// pages together (it failed, or another replaced it): the shown pages it
// fetched become what their answers put in the cache.
func (l *Infinite[P]) settlePassingLocked() {
	if len(l.passing) == 0 {
		l.passing = nil
		return
	}
	for i := range l.pages {
		p := &l.pages[i]
		if !l.passing[p.key] || p.dropped {
			continue
		}
		if v, ok := Get[P](l.cache, p.key); ok && !l.equal(p.data, v) {
			p.data = v
			l.changedLocked()
		}
	}
	l.passing = nil
}

// showAllLocked shows the result of a complete revalidation.
func (l *Infinite[P]) showAllLocked(fresh []page[P]) {
	l.passing = nil
	if l.opts.AllAtOnce {
		l.pages = fresh
		// A page may have changed in the cache since it was walked past.
		for i := range l.pages {
			if v, ok := Get[P](l.cache, l.pages[i].key); ok {
				l.pages[i].data = v
			}
		}
		if l.breaksLocked(1, len(l.pages)) {
			l.pending |= flagSoft
		}
	} else if !l.currentLocked() {
		l.pages = nil
	}
	// Shown pages past the end of this pass belong to a longer chain or a
	// larger size than there is now.
	l.pages = l.pages[:min(len(l.pages), len(fresh), l.size)]
	l.loaded, l.err = true, nil
	l.changedLocked()
}

func (l *Infinite[P]) publishLocked() {
	l.version++
	l.trimLocked()
	cur := l.currentLocked()
	var data []P
	var dropped []bool
	var counts []int
	if len(l.pages) > 0 || (l.loaded && l.hasFirst) {
		data = make([]P, len(l.pages))
		for i, p := range l.pages {
			data[i] = p.data
			if p.dropped && dropped == nil {
				dropped = make([]bool, len(l.pages))
			}
			if p.dropped {
				dropped[i] = true
			}
		}
		if l.opts.Count != nil {
			counts = make([]int, len(l.pages))
			for i, p := range l.pages {
				counts[i] = p.count
				if !p.dropped {
					counts[i] = l.opts.Count(p.data)
				}
			}
		}
	}
	shown := 0 // pages of the current first key
	hasMore := l.hasFirst
	if cur {
		shown = len(l.pages)
		hasMore = l.hasMoreLocked(data)
	}
	err := l.err
	if err == nil {
		err = l.keyErr
	}
	l.snap.Store(&InfiniteState[P]{
		Key:           l.firstKey,
		Data:          data,
		Err:           err,
		IsValidating:  l.validating,
		IsLoading:     l.validating && l.hasFirst && l.size > 0 && !cur,
		Size:          l.size,
		HasMore:       hasMore,
		IsLoadingMore: l.validating && hasMore && shown < l.size,
		Dropped:       dropped,
		Counts:        counts,
		Version:       l.version,
	})
}
