package http

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
)

// Live lists: GET /api/extensions/{id}/events is a server-sent event
// stream that says when the extension's bundles changed ("bundles"), so
// every open bundles list and header follows a publish from any route — a
// pipeline, the CLI, another admin, another replica — without a focus or a
// reload; and when its testers changed ("testers": an invite, a revoke, an
// installed copy's checks written), so the testers list and the installs
// line follow who runs what.
//
// Replicas share only the database, so each one learns of changes by
// polling a cheap revision of the extensions that someone here watches:
// one query per watched extension per EventPoll, however many browsers
// watch it. A browser that reconnects (EventSource does it by itself) gets
// the current revision first, so nothing published while it was away is
// missed.

// DefaultEventPoll is how often a watched extension's revision is read.
const DefaultEventPoll = time.Second

// eventHeartbeat keeps idle streams (and proxies in between) open.
const eventHeartbeat = 15 * time.Second

// revision is what an event carries.
type revision = api.Revision

func (s *Server) revisionOf(ctx context.Context, extensionID int64) (revision, error) {
	return s.Store.Revision(ctx, extensionID)
}

// eventHub polls the revisions of watched extensions and tells watchers.
type eventHub struct {
	s       *Server
	mu      sync.Mutex
	watches map[int64]*watch
}

type watch struct {
	subs map[chan revision]struct{}
	stop context.CancelFunc
}

func (s *Server) events() *eventHub {
	s.eventsOnce.Do(func() { s.eventHub = &eventHub{s: s, watches: map[int64]*watch{}} })
	return s.eventHub
}

// subscribe returns a channel of extensionID's new revisions (the latest
// one wins when the reader is slow) and its cancel.
func (h *eventHub) subscribe(extensionID int64, first revision) (<-chan revision, func()) {
	ch := make(chan revision, 1)
	h.mu.Lock()
	w, ok := h.watches[extensionID]
	if !ok {
		ctx, stop := context.WithCancel(context.Background())
		w = &watch{subs: map[chan revision]struct{}{}, stop: stop}
		h.watches[extensionID] = w
		go h.poll(ctx, extensionID, first)
	}
	w.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(w.subs, ch)
		if len(w.subs) == 0 && h.watches[extensionID] == w {
			delete(h.watches, extensionID)
			w.stop()
		}
	}
}

func (h *eventHub) poll(ctx context.Context, extensionID int64, last revision) {
	every := h.s.EventPoll
	if every <= 0 {
		every = DefaultEventPoll
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rev, err := h.s.revisionOf(ctx, extensionID)
		if err != nil || rev == last {
			continue // a failed read is retried at the next tick
		}
		last = rev
		h.mu.Lock()
		if w := h.watches[extensionID]; w != nil {
			for ch := range w.subs {
				select {
				case <-ch: // drop the older revision nobody read yet
				default:
				}
				ch <- rev
			}
		}
		h.mu.Unlock()
	}
}

// handleEvents streams the extension's revisions: the current one at once,
// then each change. A request that does not accept text/event-stream gets
// the current revision as JSON.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request, who *subject, ext *betaport.Extension) {
	rev, err := s.revisionOf(r.Context(), ext.ID)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	// A tester's builds page follows the bundles; the testers' comings
	// and goings and their copies' checks are the admins' to see.
	admin := who.admin()
	if !admin {
		rev.Testers = 0
	}
	if !acceptsEventStream(r) {
		writeJSON(w, r, http.StatusOK, rev)
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // no proxy buffering
	w.WriteHeader(http.StatusOK)
	ch, cancel := s.events().subscribe(ext.ID, rev)
	defer cancel()
	// A "bundles" event when the bundles moved, a "testers" event when
	// the testers changed: a page follows the part it shows.
	var sent *revision
	send := func(rev revision) bool {
		if sent == nil || rev.CurrentBundle != sent.CurrentBundle || rev.LastBundle != sent.LastBundle {
			b, _ := json.Marshal(struct {
				CurrentBundle int64 `json:"currentBundle"`
				LastBundle    int64 `json:"lastBundle"`
			}{rev.CurrentBundle, rev.LastBundle})
			if _, err := fmt.Fprintf(w, "event: bundles\ndata: %s\n\n", b); err != nil {
				return false
			}
		}
		if admin && (sent == nil || rev.Testers != sent.Testers) {
			b, _ := json.Marshal(struct {
				Testers int64 `json:"testers"`
			}{rev.Testers})
			if _, err := fmt.Fprintf(w, "event: testers\ndata: %s\n\n", b); err != nil {
				return false
			}
		}
		// A "channels" event when a channel, a rollout or a tester's channel
		// changed: what a tester gets may have changed with it.
		if sent == nil || rev.Channels != sent.Channels {
			b, _ := json.Marshal(struct {
				Channels int64 `json:"channels"`
			}{rev.Channels})
			if _, err := fmt.Fprintf(w, "event: channels\ndata: %s\n\n", b); err != nil {
				return false
			}
		}
		// A "feedback" event when a report came, moved or went: the
		// admins' feedback list and the bundles' open counts follow it, and
		// a tester's list of their own reports.
		if sent == nil || rev.Feedback != sent.Feedback {
			b, _ := json.Marshal(struct {
				Feedback int64 `json:"feedback"`
			}{rev.Feedback})
			if _, err := fmt.Fprintf(w, "event: feedback\ndata: %s\n\n", b); err != nil {
				return false
			}
		}
		sent = &rev
		return rc.Flush() == nil
	}
	if !send(rev) {
		return
	}
	// A stream outlives no access: before each event and heartbeat the
	// request's session is read again, and a sign-out, a revoke or an
	// expired session (or a store that cannot say) ends the stream. The
	// page's EventSource then reconnects and is answered as it must be.
	allowed := func() bool {
		now, err := s.authenticate(r)
		return err == nil && who.stillTheSame(now)
	}
	beat := time.NewTicker(eventHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.shuttingDown():
			return
		case rev := <-ch:
			if !allowed() || !send(rev) {
				return
			}
		case <-beat.C:
			if !allowed() {
				return
			}
			if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

func acceptsEventStream(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part)); mt == "text/event-stream" {
			return true
		}
	}
	return false
}

// shuttingDown is closed when Shutdown starts, so streams end and let it
// finish instead of waiting for their clients.
func (s *Server) shuttingDown() <-chan struct{} {
	s.shutdownOnce.Do(func() { s.shutdown = make(chan struct{}) })
	return s.shutdown
}
