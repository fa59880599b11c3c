package model_test

import (
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/model"
)

// livePage is a page as Live sees it: what it shows, whether its reads
// have landed, and how often it read again.
type livePage struct {
	shows   api.Revision
	settled bool
	reads   int
	live    model.Live
}

func newLivePage(shows api.Revision, settled bool) *livePage {
	p := &livePage{shows: shows, settled: settled}
	p.live = model.Live{
		Shows:     func(rev api.Revision) bool { return rev == p.shows },
		Settled:   func() bool { return p.settled },
		ReadAgain: func() { p.reads++ },
	}
	return p
}

func TestLiveEvents(t *testing.T) {
	at := api.Revision{CurrentBundle: 5, LastBundle: 5}
	past := api.Revision{CurrentBundle: 6, LastBundle: 6}

	t.Run("shown: nothing read", func(t *testing.T) {
		p := newLivePage(at, true)
		p.live.Event(at, true)
		p.live.Event(at, true) // a reconnect repeats it
		if p.reads != 0 || p.live.Awaiting() {
			t.Errorf("read %d times, awaiting %v", p.reads, p.live.Awaiting())
		}
	})
	t.Run("past it: read once", func(t *testing.T) {
		p := newLivePage(at, true)
		p.live.Event(past, true)
		if p.reads != 1 {
			t.Errorf("read %d times, want once", p.reads)
		}
	})
	t.Run("unknown: read", func(t *testing.T) {
		p := newLivePage(at, false)
		p.live.Event(api.Revision{}, false)
		if p.reads != 1 {
			t.Errorf("an event that cannot be read: read %d times, want once", p.reads)
		}
	})
	t.Run("during the reads, what they bring", func(t *testing.T) {
		p := newLivePage(api.Revision{}, false)
		p.live.Event(at, true)
		if p.reads != 0 || !p.live.Awaiting() {
			t.Fatalf("during the reads: read %d times, awaiting %v", p.reads, p.live.Awaiting())
		}
		p.live.Landed() // one of them: the others are still on their way
		if p.reads != 0 || !p.live.Awaiting() {
			t.Fatalf("some reads landed: read %d times, awaiting %v", p.reads, p.live.Awaiting())
		}
		p.shows, p.settled = at, true
		p.live.Landed()
		p.live.Landed()
		if p.reads != 0 || p.live.Awaiting() {
			t.Errorf("the reads brought the event's revision: read %d times, awaiting %v", p.reads, p.live.Awaiting())
		}
	})
	t.Run("during the reads, past what they bring", func(t *testing.T) {
		p := newLivePage(api.Revision{}, false)
		p.live.Event(at, true)
		p.live.Event(past, true) // the last one counts
		p.shows, p.settled = at, true
		p.live.Landed()
		p.live.Landed()
		if p.reads != 1 || p.live.Awaiting() {
			t.Errorf("the reads brought less than the event: read %d times, want once (awaiting %v)", p.reads, p.live.Awaiting())
		}
	})
	t.Run("reset", func(t *testing.T) {
		p := newLivePage(api.Revision{}, false)
		p.live.Event(past, true)
		p.live.Reset() // another extension
		p.settled = true
		p.live.Landed()
		if p.reads != 0 {
			t.Errorf("an event of the extension before read %d times", p.reads)
		}
	})
	t.Run("a page that cannot tell", func(t *testing.T) {
		// Without Shows and Settled (a list that only reads again), every
		// event reads.
		reads := 0
		l := model.Live{ReadAgain: func() { reads++ }}
		l.Event(at, true)
		l.Event(at, true)
		if reads != 2 {
			t.Errorf("read %d times, want twice", reads)
		}
	})
}

func TestParseRevision(t *testing.T) {
	if rev, ok := model.ParseRevision(`{"currentBundle": 4, "lastBundle": 9}`); !ok || rev != (api.Revision{CurrentBundle: 4, LastBundle: 9}) {
		t.Errorf("got %+v, %v", rev, ok)
	}
	for _, data := range []string{"", "ping", `{"currentBundle": "x"}`} {
		if _, ok := model.ParseRevision(data); ok {
			t.Errorf("%q read as a revision", data)
		}
	}
}
