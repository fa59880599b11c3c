package storetest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/betaport"
)

// Reports: kept with their screenshots' records (keys made from the
// report's number), listed newest first and filtered, moved between
// statuses with an audit event, counted per bundle while open; their
// screenshots are live blobs.
func testFeedback(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "E")
	other := MustExtension(t, s, team, "Other")
	ts := []*betaport.Tester{
		{ExtensionID: e.ID, Email: "ada@example.com", Name: "Ada", Status: betaport.TesterActive},
		{ExtensionID: e.ID, Email: "bob@example.com", Name: "Bob", Status: betaport.TesterActive},
		{ExtensionID: other.ID, Email: "cy@example.com", Name: "Cy", Status: betaport.TesterActive},
	}
	if err := s.CreateTesters(ctx, ts); err != nil {
		t.Fatal(err)
	}
	ada, bob, cy := ts[0], ts[1], ts[2]
	report := func(tester *betaport.Tester, bundle int64, text string, shots int) *betaport.Feedback {
		t.Helper()
		f := &betaport.Feedback{ExtensionID: e.ID, TesterID: tester.ID, BundleNumber: bundle, Version: "1.0." + itoa(bundle),
			Text: text, Browser: "Chrome 131", OS: "Linux", Source: betaport.FeedbackFromBuildsPage}
		for n := range shots {
			f.Screenshots = append(f.Screenshots, betaport.Screenshot{Number: n + 1, Type: "image/png", Width: 10, Height: 10, Size: 100,
				BlobKey: betaport.FeedbackKey(e.ID, "r"+itoa(bundle)+text[:min(len(text), 3)], n+1, "image/png")})
		}
		if err := s.CreateFeedback(ctx, f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	first := report(ada, 1, "The popup is blank on small screens.", 2)
	if got, err := s.FindFeedback(ctx, e.ID, first.ID); err != nil || got.Status != betaport.FeedbackNew || len(got.Screenshots) != 2 ||
		got.Screenshots[1].Number != 2 || got.Screenshots[1].BlobKey != first.Screenshots[1].BlobKey || got.Text != first.Text {
		t.Fatalf("kept %+v, read back %+v (%v)", first, got, err)
	}
	report(bob, 1, "Crashes on start.", 0)
	report(ada, 2, "", 1)

	// Refused: another extension's tester, nothing to say, too many images.
	for name, f := range map[string]*betaport.Feedback{
		"another extension's tester": {ExtensionID: e.ID, TesterID: cy.ID, Text: "x", Source: betaport.FeedbackFromExtension},
		"nothing":                    {ExtensionID: e.ID, TesterID: ada.ID, Text: "  ", Source: betaport.FeedbackFromExtension},
		"six screenshots":            {ExtensionID: e.ID, TesterID: ada.ID, Text: "x", Source: betaport.FeedbackFromExtension, Screenshots: make([]betaport.Screenshot, 6)},
		"a screenshot not stored":    {ExtensionID: e.ID, TesterID: ada.ID, Text: "x", Source: betaport.FeedbackFromExtension, Screenshots: make([]betaport.Screenshot, 1)},
		"a control character":        {ExtensionID: e.ID, TesterID: ada.ID, Text: "a\x00b", Source: betaport.FeedbackFromExtension},
		"too long":                   {ExtensionID: e.ID, TesterID: ada.ID, Text: strings.Repeat("x", betaport.MaxFeedbackText+1), Source: betaport.FeedbackFromExtension},
	} {
		if err := s.CreateFeedback(ctx, f); err == nil {
			t.Errorf("%s: kept as #%d", name, f.ID)
		}
	}

	list := func(f betaport.FeedbackFilter) []int64 {
		t.Helper()
		f.ExtensionID = e.ID
		got, err := s.FindFeedbackList(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range got {
			ids = append(ids, r.ID)
		}
		return ids
	}
	all := list(betaport.FeedbackFilter{Limit: 10})
	if len(all) != 3 || all[0] < all[1] || all[1] < all[2] {
		t.Fatalf("every report: %v, want 3 newest first", all)
	}
	if got := list(betaport.FeedbackFilter{Limit: 2, BeforeID: all[0]}); len(got) != 2 || got[0] != all[1] {
		t.Fatalf("the page after #%d: %v", all[0], got)
	}
	if got := list(betaport.FeedbackFilter{Limit: 10, TesterID: bob.ID}); len(got) != 1 {
		t.Fatalf("Bob's: %v", got)
	}
	if got := list(betaport.FeedbackFilter{Limit: 10, BundleNumber: 1}); len(got) != 2 {
		t.Fatalf("on bundle 1: %v", got)
	}
	if got := list(betaport.FeedbackFilter{Limit: 10, Query: "POPUP"}); len(got) != 1 || got[0] != first.ID {
		t.Fatalf("searching popup: %v", got)
	}
	if got := list(betaport.FeedbackFilter{Limit: 10, Query: "bob@"}); len(got) != 1 {
		t.Fatalf("searching Bob's address: %v", got)
	}

	// Seen, then resolved: each once in the trail; the open counts follow.
	if counts, _ := s.OpenFeedbackCounts(ctx, e.ID, []int64{1, 2, 3}); counts[1] != 2 || counts[2] != 1 || counts[3] != 0 {
		t.Fatalf("open counts: %v", counts)
	}
	for _, status := range []string{betaport.FeedbackSeen, betaport.FeedbackSeen, betaport.FeedbackResolved} {
		got, err := s.SetFeedbackStatus(ctx, e.ID, first.ID, status, "admin@example.com")
		if err != nil || got.Status != status || len(got.Screenshots) != 2 || got.TesterEmail != "ada@example.com" {
			t.Fatalf("to %s: %+v, %v", status, got, err)
		}
	}
	if _, err := s.SetFeedbackStatus(ctx, other.ID, first.ID, betaport.FeedbackNew, "x"); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatalf("another extension's report: %v", err)
	}
	if _, err := s.SetFeedbackStatus(ctx, e.ID, first.ID, "done", "x"); betaport.ErrorCode(err) != betaport.EINVALID {
		t.Fatalf("an unknown status: %v", err)
	}
	if counts, _ := s.OpenFeedbackCounts(ctx, e.ID, []int64{1}); counts[1] != 1 {
		t.Fatalf("open counts after the resolve: %v", counts)
	}
	if got := list(betaport.FeedbackFilter{Limit: 10, Status: betaport.FeedbackOpen}); len(got) != 2 {
		t.Fatalf("open: %v", got)
	}
	if got := list(betaport.FeedbackFilter{Limit: 10, Status: betaport.FeedbackResolved}); len(got) != 1 || got[0] != first.ID {
		t.Fatalf("resolved: %v", got)
	}
	events, _ := s.FindAuditEvents(ctx, e.ID, 0, 10)
	var actions []string
	for _, ev := range events {
		actions = append(actions, ev.Action)
	}
	if strings.Join(actions, ",") != betaport.AuditFeedbackResolved+","+betaport.AuditFeedbackSeen {
		t.Fatalf("the trail: %v, want seen then resolved, once each", actions)
	}
	live, err := s.LiveBlobs(ctx)
	if err != nil || !live.Keys[first.Screenshots[0].BlobKey] {
		t.Fatalf("the screenshots are not live blobs (%v)", err)
	}
	rev, _ := s.Revision(ctx, e.ID)

	// Deleted: the report and its screenshots' records go, its blobs are
	// no longer live, the trail says who, the revision moves.
	deleted, err := s.DeleteFeedback(ctx, e.ID, first.ID, "admin@example.com")
	if err != nil || deleted.ID != first.ID || len(deleted.Screenshots) != len(first.Screenshots) {
		t.Fatalf("DeleteFeedback = %+v, %v", deleted, err)
	}
	if _, err := s.FindFeedback(ctx, e.ID, first.ID); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatalf("the deleted report is still found: %v", err)
	}
	if _, err := s.DeleteFeedback(ctx, e.ID, first.ID, "admin@example.com"); betaport.ErrorCode(err) != betaport.ENOTFOUND {
		t.Fatalf("deleting it again: %v", err)
	}
	if live, _ := s.LiveBlobs(ctx); live.Keys[first.Screenshots[0].BlobKey] {
		t.Fatal("a deleted report's screenshot is still live")
	}
	if after, _ := s.Revision(ctx, e.ID); after.Feedback <= rev.Feedback {
		t.Fatalf("the feedback revision stayed at %d after a delete", after.Feedback)
	}
	if events, _ := s.FindAuditEvents(ctx, e.ID, 0, 1); len(events) != 1 || events[0].Action != betaport.AuditFeedbackDeleted {
		t.Fatalf("the trail after the delete: %+v", events)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
