package model_test

import (
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/model"
)

// The second click of a double-click on "Roll back to #N" comes a moment
// after the first: the question's Yes takes no press until ConfirmDelay
// after it showed. Roll back pressed again keeps the question (and its
// time) as it is; the Yes pressed after the delay rolls back.
func TestRollbackYesWaitsForTheDelay(t *testing.T) {
	svc := newBundleSvc(t, 45)
	p := openBundles(t, svc)
	row := p.row(43)
	p.do(func(m *model.Bundles) {
		row.Ask()
		p.clock.Advance(model.ConfirmDelay / 2)
		row.Ask() // the double-click's second click on Roll back
		row.Confirm()
		if !row.AsksRollback() || row.ConfirmReady() || m.Rollback.RollingBack != 0 {
			t.Errorf("Yes within the delay: asking %v, ready %v, rolling back #%d; want the question open, no rollback",
				row.AsksRollback(), row.ConfirmReady(), m.Rollback.RollingBack)
		}
		p.clock.Advance(model.ConfirmDelay / 2)
		if !row.ConfirmReady() {
			t.Error("the question's Yes takes no press once the delay since it showed has passed")
		}
		row.Confirm()
		if m.Rollback.RollingBack != 43 {
			t.Errorf("Yes after the delay: rolling back #%d, want #43", m.Rollback.RollingBack)
		}
	})
	p.wait("the rollback", func(m *model.Bundles) bool { return m.Rollback.Done != nil })
	if n := svc.count("POST "); n != 1 {
		t.Errorf("%d rollbacks sent, want 1:\n%s", n, svc.requests())
	}
}

// A tester's "Yes, revoke" takes no press within the delay; the page is
// rendered again when it does (the button then shows as pressable).
func TestTesterRevokeYesWaitsForTheDelay(t *testing.T) {
	svc := newTestersAPI()
	p := newTestersPage(t, svc, model.NewSession(adminSession))
	p.open("", "")
	ann, _ := p.row("ann@example.com")
	p.do(func() {
		p.m.Ask(ann)
		p.m.Revoke(ann)
		if !p.m.Asking(ann.ID) || p.m.ConfirmReady(ann.ID) {
			t.Errorf("Yes at once: asking %v, ready %v; want the question open, not yet ready", p.m.Asking(ann.ID), p.m.ConfirmReady(ann.ID))
		}
	})
	rendered := make(chan struct{})
	p.do(func() {
		p.clock.Advance(model.ConfirmDelay)
		// What the delay's end dispatched runs after this: a render.
		p.ui.Dispatch(func() { close(rendered) })
	})
	<-rendered
	p.do(func() {
		if !p.m.ConfirmReady(ann.ID) {
			t.Error("after the delay the Yes takes no press")
		}
		p.m.Revoke(ann)
	})
	p.wait("the revoke", func() bool { return svc.sent("DELETE "+api.TesterPath(7, ann.ID)) == 1 })
	p.statusIs("ann@example.com", "revoked")
}

// A key's "Yes, revoke" takes no press within the delay.
func TestKeyRevokeYesWaitsForTheDelay(t *testing.T) {
	h := newKeysHarness(t)
	laptop := h.api.key(1)
	h.do(func() {
		h.k.Ask(laptop)
		h.clock.Advance(model.ConfirmDelay - 1)
		h.k.Revoke(laptop)
		if !h.k.Asking(1) || h.k.ConfirmReady(1) {
			t.Errorf("Yes within the delay: asking %v, ready %v", h.k.Asking(1), h.k.ConfirmReady(1))
		}
	})
	h.settle()
	if calls := h.api.takeCalls(); len(calls) != 0 {
		t.Fatalf("a Yes within the delay sent %q", calls)
	}
	h.do(func() {
		h.clock.Advance(1)
		h.k.Revoke(laptop)
	})
	h.settle()
	if n := h.api.count("DELETE /api/extensions/7/keys/1"); n != 1 {
		t.Errorf("a Yes after the delay sent %d revokes, want 1", n)
	}
}

// A webhook's "Yes, delete" takes no press within the delay; once it does,
// the row says so (ConfirmReady, rendered by what the delay dispatched).
func TestWebhookDeleteYesWaitsForTheDelay(t *testing.T) {
	h := newHooksHarness(t, "https://a.example/hook", "https://b.example/hook")
	h.api.takeCalls()
	h.do(func() {
		h.w.AskDelete(2)
		h.w.AskDelete(2) // a double-click's second click on Delete
		h.clock.Advance(model.ConfirmDelay / 2)
		h.w.Delete(2)
	})
	h.settle()
	if hk := h.hook(2); !hk.Asking || hk.Deleting || hk.ConfirmReady {
		t.Errorf("Yes within the delay: asking %v, deleting %v, ready %v; want the question open and nothing sent", hk.Asking, hk.Deleting, hk.ConfirmReady)
	}
	h.do(func() { h.clock.Advance(model.ConfirmDelay / 2) })
	h.settle()
	if hk := h.hook(2); !hk.ConfirmReady {
		t.Error("after the delay the row does not show its Yes as pressable")
	}
	h.do(func() { h.w.Delete(2) })
	h.settle()
	if n := h.api.count("DELETE /api/extensions/7/webhooks/2"); n != 1 {
		t.Errorf("%d deletes sent, want 1", n)
	}
}
