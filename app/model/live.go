package model

import (
	"encoding/json"

	"github.com/betaport/betaport/app/api"
)

// Live is what an extension's event stream (server-sent events, one
// "bundles" event with a Revision whenever its bundles move: a publish from
// a pipeline, the CLI, another admin, another replica) makes a page do. The
// stream itself is the browser's (app/ui listens to it and hands each
// event to Event); Live decides whether the page reads again.
//
// The server sends the current revision first, on every (re)connect, and
// most of the time the page shows it already: reading every held page again
// for it would cost a request per page. So an event whose revision the page
// shows reads nothing; one that comes while the page's own reads are under
// way (it was just opened, or reached by Back) waits for them, is compared
// with what they bring when they land (Landed), and reads again only if it
// is past it, rather than reading twice.
//
// Its fields are set by the page that owns it; its methods are for the UI
// goroutine.
type Live struct {
	// Shows reports whether the page shows rev (nil: never).
	Shows func(rev api.Revision) bool
	// Settled reports whether the page's own reads have landed, or failed
	// (nil: always).
	Settled func() bool
	// ReadAgain reads what the page shows again.
	ReadAgain func()

	// awaited is the last event's revision that came while the page's own
	// reads were under way.
	awaited *api.Revision
}

// Event is one "bundles" event: rev, when known is true; an event whose
// revision could not be read is taken as news.
func (l *Live) Event(rev api.Revision, known bool) {
	if !known {
		l.readAgain()
		return
	}
	if l.Settled != nil && !l.Settled() {
		l.awaited = &rev
		return
	}
	if l.Shows != nil && l.Shows(rev) {
		return
	}
	l.readAgain()
}

// Landed is told after each new state of the page's reads: once they have
// all landed, an event that came meanwhile is compared with what they
// brought, and the page reads again only if the event is past it.
func (l *Live) Landed() {
	if l.awaited == nil || (l.Settled != nil && !l.Settled()) {
		return
	}
	rev := *l.awaited
	l.awaited = nil
	if l.Shows == nil || !l.Shows(rev) {
		l.readAgain()
	}
}

// Awaiting reports whether an event waits for the page's reads to land.
func (l *Live) Awaiting() bool { return l.awaited != nil }

// Reset forgets an event that waits (the page opened another extension).
func (l *Live) Reset() { l.awaited = nil }

func (l *Live) readAgain() {
	if l.ReadAgain != nil {
		l.ReadAgain()
	}
}

// ParseRevision reads the data of a "bundles" event; ok is false when it
// is not a revision.
func ParseRevision(data string) (rev api.Revision, ok bool) {
	return rev, json.Unmarshal([]byte(data), &rev) == nil
}
