// Package adoption counts Chromium's update checks: how many installed
// copies of each extension report each version, per UTC hour. It is how an
// admin sees a build reach testers.
//
// A check costs a map increment: the counts are held in memory, in shards
// so that parallel checks rarely wait on one another, and a Counter's Flush
// adds them to the store (one upsert per extension, hour and version, which
// every replica adds to). The service flushes every 10 seconds (cli.DefaultAdoptionFlush), when
// it closes, and before the adoption API reads (Find), so an answer
// includes every check this replica counted. Nothing else of a check is
// kept: no address, no user agent.
package adoption

import (
	"context"
	"errors"
	"hash/maphash"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/betaport/betaport/app/betaport"
)

// Store is what counting writes and reads.
type Store interface {
	betaport.AdoptionStore
	// BundleVersions lists the versions an extension's bundles were
	// served with: a check reporting any other counts as "other".
	BundleVersions(ctx context.Context, extensionID int64) ([]string, error)
	// RecordTesterChecks keeps each tester's last check.
	RecordTesterChecks(ctx context.Context, checks []betaport.TesterCheck) error
}

// shards is how many locks the pending counts are spread over: enough that
// checks on a few cores seldom meet, few enough that a flush is cheap.
const shards = 32

// Counter counts update checks and flushes them to Store. Set Store before
// the first call; it is safe for concurrent use.
type Counter struct {
	Store Store
	// Now is the clock checks are counted by; nil means time.Now.
	Now func() time.Time

	seed    maphash.Seed
	once    sync.Once
	pending [shards]shard

	// flushing makes flushes take turns: a read that flushes must wait
	// for a flush under way, or it could answer without its counts.
	flushing sync.Mutex

	// served is each extension's served versions, copied on write: every
	// check reads it, a publish changes it.
	servedMu sync.Mutex
	served   atomic.Pointer[map[int64]servedVersions]
}

type shard struct {
	mu     sync.Mutex
	counts map[key]int64
	// testers is the last check of each day of each tester whose copy
	// checked with their own update URL since the last flush (a flush
	// may be late by a day boundary: each day keeps its own).
	testers map[testerDay]betaport.TesterCheck
	_       [40]byte // keep shards on cache lines of their own
}

// testerDay is a tester's UTC day (Unix seconds of its start).
type testerDay struct{ testerID, day int64 }

func dayOf(tc betaport.TesterCheck) testerDay {
	return testerDay{tc.TesterID, tc.At.Unix() / 86400 * 86400}
}

// key is one row of the counts.
type key struct {
	extensionID int64
	hour        int64 // Unix seconds of the hour's start
	version     string
}

// servedVersions is an extension's served versions as read when its
// current bundle was revision. Every publish (and rollback) makes a new
// bundle current, under a number never used before, so while the current
// number is unchanged, so is the list.
type servedVersions struct {
	revision int64
	versions map[string]bool
}

func (c *Counter) init() {
	c.once.Do(func() {
		c.seed = maphash.MakeSeed()
		for i := range c.pending {
			c.pending[i].counts = map[key]int64{}
			c.pending[i].testers = map[testerDay]betaport.TesterCheck{}
		}
		c.served.Store(&map[int64]servedVersions{})
	})
}

func (c *Counter) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Count counts one check of ext reporting version, at this hour. current
// is the version of ext's current bundle ("" before the first), which most
// checks report: it is known served without a look-up. A check with no
// version is not counted.
func (c *Counter) Count(ctx context.Context, ext *betaport.Extension, current, version string) error {
	if version == "" {
		return nil
	}
	c.init()
	v, err := c.resolve(ctx, ext, current, version)
	if err != nil {
		return err
	}
	c.add(key{extensionID: ext.ID, hour: c.now().Unix() / 3600 * 3600, version: v}, 1)
	return nil
}

// resolve is the version a check is counted under: the served version it
// reports, or "other". Only served versions become keys, so made-up
// queries cannot grow the counts without bound.
func (c *Counter) resolve(ctx context.Context, ext *betaport.Extension, current, version string) (string, error) {
	if version == current {
		return current, nil
	}
	if ext.CurrentBundle == 0 {
		return betaport.OtherVersion, nil // nothing was ever served
	}
	sv, ok := (*c.served.Load())[ext.ID]
	if !ok || sv.revision != ext.CurrentBundle {
		list, err := c.Store.BundleVersions(ctx, ext.ID)
		if err != nil {
			return "", err
		}
		sv = servedVersions{revision: ext.CurrentBundle, versions: make(map[string]bool, len(list))}
		for _, v := range list {
			sv.versions[v] = true
		}
		c.servedMu.Lock()
		old := *c.served.Load()
		// A racing check may have read a newer revision meanwhile.
		if prev, ok := old[ext.ID]; !ok || prev.revision <= sv.revision {
			next := make(map[int64]servedVersions, len(old)+1)
			maps.Copy(next, old)
			next[ext.ID] = sv
			c.served.Store(&next)
		}
		c.servedMu.Unlock()
	}
	if sv.versions[version] {
		return version, nil
	}
	return betaport.OtherVersion, nil
}

// CountTester keeps the check of a tester of extensionID reporting version
// (their installed copy's), in memory until the next flush: a check is
// never a database write of its own. A check with no version is not kept.
func (c *Counter) CountTester(extensionID, testerID int64, version string) {
	if version == "" {
		return
	}
	c.init()
	c.addTester(betaport.TesterCheck{ExtensionID: extensionID, TesterID: testerID, Version: version, At: c.now().UTC()})
}

func (c *Counter) addTester(tc betaport.TesterCheck) {
	s := &c.pending[uint64(tc.TesterID)*0x9e3779b97f4a7c15>>59%shards]
	k := dayOf(tc)
	s.mu.Lock()
	if old, ok := s.testers[k]; !ok || !old.At.After(tc.At) {
		s.testers[k] = tc
	}
	s.mu.Unlock()
}

func (c *Counter) add(k key, n int64) {
	h := maphash.String(c.seed, k.version) ^ uint64(k.extensionID)*0x9e3779b97f4a7c15 ^ uint64(k.hour)
	s := &c.pending[h%shards]
	s.mu.Lock()
	s.counts[k] += n
	s.mu.Unlock()
}

// Flush adds the pending counts to the store. When the store refuses them
// they are pending again, for the next flush.
func (c *Counter) Flush(ctx context.Context) error {
	c.init()
	c.flushing.Lock()
	defer c.flushing.Unlock()
	var taken []map[key]int64
	var counts []betaport.AdoptionCount
	var testers []betaport.TesterCheck
	for i := range c.pending {
		s := &c.pending[i]
		// A shard's maps are taken only when they hold something: the ones
		// left in place are the shard's, written under its lock.
		var m map[key]int64
		var ts map[testerDay]betaport.TesterCheck
		s.mu.Lock()
		if len(s.counts) > 0 {
			m, s.counts = s.counts, map[key]int64{}
		}
		if len(s.testers) > 0 {
			ts, s.testers = s.testers, map[testerDay]betaport.TesterCheck{}
		}
		s.mu.Unlock()
		if len(m) > 0 {
			taken = append(taken, m)
		}
		for k, n := range m {
			counts = append(counts, betaport.AdoptionCount{ExtensionID: k.extensionID,
				Hour: time.Unix(k.hour, 0).UTC(), Version: k.version, Checks: n})
		}
		for _, tc := range ts {
			testers = append(testers, tc)
		}
	}
	var err error
	if len(counts) > 0 {
		if err = c.Store.AddAdoption(ctx, counts); err != nil {
			for _, m := range taken {
				for k, n := range m {
					c.add(k, n)
				}
			}
		}
	}
	if len(testers) > 0 {
		if terr := c.Store.RecordTesterChecks(ctx, testers); terr != nil {
			for _, tc := range testers {
				c.addTester(tc)
			}
			err = errors.Join(err, terr)
		}
	}
	return err
}

// Pending is how many checks are counted but not flushed yet.
func (c *Counter) Pending() int64 {
	c.init()
	var n int64
	for i := range c.pending {
		s := &c.pending[i]
		s.mu.Lock()
		for _, v := range s.counts {
			n += v
		}
		s.mu.Unlock()
	}
	return n
}

// Find flushes this replica's pending counts, then reads a page of the
// stored ones: what it answers includes every check counted before.
func (c *Counter) Find(ctx context.Context, f betaport.AdoptionFilter) ([]*betaport.AdoptionCount, error) {
	if err := c.Flush(ctx); err != nil {
		return nil, err
	}
	return c.Store.FindAdoption(ctx, f)
}

// Run flushes every interval until ctx ends, logging what fails (the
// counts stay pending and go with the next flush).
func (c *Counter) Run(ctx context.Context, every time.Duration, logger *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := c.Flush(ctx); err != nil && ctx.Err() == nil {
				logger.Warn("writing update-check counts", "err", err)
			}
		}
	}
}
