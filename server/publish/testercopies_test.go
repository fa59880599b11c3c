package publish_test

import (
	"fmt"
	"testing"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/publish"
	"github.com/betaport/betaport/server/storetest"
)

// TestWarmTesterCopies: after a publish, WarmTesterCopies makes the copies
// of the testers whose copies were packed before (they have an update
// token), not of a revoked tester nor of one who never installed; a
// download then gets the copy made, not a new one (no signature on the
// way); a new install link (a new token) gets a new copy, with its new URL.
func TestWarmTesterCopies(t *testing.T) {
	w := newBBWorld(t, publish.Config{})
	ext, key := w.extension(betaport.PlanProfessional)
	w.submit(key, goodZip(t, "1.0.0"))
	ext = w.reload(ext)
	var ts []*betaport.Tester
	for i, status := range []string{betaport.TesterActive, betaport.TesterActive, betaport.TesterActive} {
		ts = append(ts, &betaport.Tester{ExtensionID: ext.ID, Email: fmt.Sprintf("t%d@example.com", i), Name: "T", Status: status})
	}
	if err := w.db.CreateTesters(w.ctx, ts); err != nil {
		t.Fatal(err)
	}
	installed, revoked := ts[0], ts[1] // ts[2] never installed
	for _, tt := range []*betaport.Tester{installed, revoked} {
		if _, err := w.svc.TesterUpdateURL(w.ctx, ext, tt); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.db.RevokeTester(w.ctx, revoked.ID, "admin@example.com"); err != nil {
		t.Fatal(err)
	}

	w.submit(key, goodZip(t, "1.0.1"))
	ext = w.reload(ext)
	b, err := w.db.FindBundle(w.ctx, ext.ID, ext.CurrentBundle)
	if err != nil {
		t.Fatal(err)
	}
	made, err := w.svc.WarmTesterCopies(w.ctx, ext, b)
	if err != nil || made != 1 {
		t.Fatalf("WarmTesterCopies made %d copies (%v), want 1: the installed tester's", made, err)
	}
	find := func(tt *betaport.Tester) *betaport.Tester {
		t.Helper()
		got, err := w.db.FindTester(w.ctx, tt.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	first, err := w.svc.TesterCRX(w.ctx, ext, b, find(installed))
	if err != nil {
		t.Fatal(err)
	}
	again, err := w.svc.TesterCRX(w.ctx, ext, b, find(installed))
	if err != nil || again != first {
		t.Fatalf("a second download made a copy of its own (%v): the one made at publish is not kept", err)
	}
	if _, err := w.svc.TesterCRX(w.ctx, ext, b, find(revoked)); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatalf("the revoked tester's copy: %v, want not found", err)
	}

	// A new link drops the token: the next copy names a new one.
	if _, err := w.db.ResendInvite(w.ctx, installed.ID, storetest.Link("invite-2"), "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	renewed, err := w.svc.TesterCRX(w.ctx, ext, b, find(installed))
	if err != nil {
		t.Fatal(err)
	}
	if renewed == first || renewed.ETag == first.ETag {
		t.Fatalf("after a new link the tester got the copy of the old token (ETag %s)", renewed.ETag)
	}
}
