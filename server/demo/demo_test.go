package demo_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/demo"
	"github.com/betaport/betaport/server/screenshot"
	"github.com/betaport/betaport/server/sqlite"
	"github.com/betaport/betaport/server/storetest"
)

func openStore(t *testing.T) *sqlite.DB {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "demo.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The bulk load gives every tester a distinct e-mail and a real name,
// oldest first, and a mix of statuses; the testers are found by search
// right after it.
func TestLoadTesters(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	team := storetest.MustTeam(t, s, betaport.PlanProfessional)
	e := storetest.MustExtension(t, s, team, "E")
	const n = 12_345 // enough to tidy the indexes after
	if err := demo.LoadTesters(ctx, s, e.ID, n); err != nil {
		t.Fatal(err)
	}
	list, err := s.FindTesters(ctx, betaport.TesterFilter{ExtensionID: e.ID, Limit: n + 1})
	if err != nil || len(list) != n {
		t.Fatalf("FindTesters = %d testers, %v; want %d", len(list), err, n)
	}
	emails, names, statuses := map[string]bool{}, map[string]bool{}, map[string]int{}
	for i, tt := range list {
		emails[tt.Email], names[tt.Name] = true, true
		statuses[tt.Status]++
		if len(strings.Fields(tt.Name)) < 2 || !strings.HasSuffix(tt.Email, "@example.com") {
			t.Fatalf("tester %+v has no real name or e-mail", tt)
		}
		if i > 0 && !tt.CreatedAt.Before(list[i-1].CreatedAt) {
			t.Fatalf("tester %d was created at %v, not before the next one (%v)", tt.ID, tt.CreatedAt, list[i-1].CreatedAt)
		}
	}
	if len(emails) != n || len(names) < 1000 {
		t.Errorf("%d distinct e-mails and %d names among %d testers", len(emails), len(names), n)
	}
	if statuses[betaport.TesterActive] == 0 || statuses[betaport.TesterInvited] == 0 || statuses[betaport.TesterRevoked] == 0 {
		t.Errorf("statuses: %v", statuses)
	}
	found, err := s.FindTesters(ctx, betaport.TesterFilter{ExtensionID: e.ID, Query: ".12345@", Limit: 10})
	if err != nil || len(found) != 1 || found[0].ID != list[0].ID {
		t.Errorf("the newest tester by search: %v, %v", found, err)
	}
}

// The small demo loads into an empty store.
func TestLoadSmall(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	blobs := memblob.OpenBucket(nil)
	defer blobs.Close()
	r, err := demo.Load(ctx, s, blobs, demo.Small)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := storetest.CountTesters(ctx, s, r.Extensions[0].ID); err != nil || n != 61 {
		t.Fatalf("the first extension has %d testers, %v; want 61", n, err)
	}
	grace, err := s.FindTesters(ctx, betaport.TesterFilter{ExtensionID: r.Extensions[0].ID, Query: "grace", Limit: 100})
	if err != nil || len(grace) == 0 || len(grace) >= 61 {
		t.Fatalf("grace finds %d testers, %v", len(grace), err)
	}
}

// The demo's reports are its testers', on its latest builds, newest on
// the current one; some carry a screenshot kept as the service keeps
// one, and some are seen or resolved, so the feedback page and the
// bundles' open counts show something on `make run`.
func TestLoadReports(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	blobs := memblob.OpenBucket(nil)
	defer blobs.Close()
	size := demo.Size{Extensions: []demo.ExtensionSize{{Name: "Tab Tamer", Bundles: 12, Testers: 40, Reports: 20}}}
	r, err := demo.Load(ctx, s, blobs, size)
	if err != nil {
		t.Fatal(err)
	}
	e := r.Extensions[0]
	list, err := s.FindFeedbackList(ctx, betaport.FeedbackFilter{ExtensionID: e.ID, Limit: 100})
	if err != nil || len(list) != 20 || r.Reports != 20 {
		t.Fatalf("%d reports (%d said), %v; want 20", len(list), r.Reports, err)
	}
	if list[0].BundleNumber != 12 || list[len(list)-1].BundleNumber != 8 {
		t.Errorf("the newest report is on build #%d, the oldest on #%d; want #12 (the current) and #8", list[0].BundleNumber, list[len(list)-1].BundleNumber)
	}
	statuses, shots := map[string]int{}, 0
	for _, f := range list {
		statuses[f.Status]++
		tester, err := s.FindTester(ctx, f.TesterID)
		if err != nil || tester.ExtensionID != e.ID || tester.Status != betaport.TesterActive {
			t.Errorf("report %d is by tester %d (%v, %v): want an active tester of the extension", f.ID, f.TesterID, tester, err)
		}
		b, err := s.FindBundle(ctx, e.ID, f.BundleNumber)
		if err != nil || b.Version != f.Version || f.Text == "" {
			t.Errorf("report %d: version %q on build #%d (%v), text %q", f.ID, f.Version, f.BundleNumber, err, f.Text)
		}
		for _, sc := range f.Screenshots {
			shots++
			data, err := blobs.ReadAll(ctx, sc.BlobKey)
			if err != nil || int64(len(data)) != sc.Size {
				t.Fatalf("screenshot of report %d: %d bytes, %v; want %d", f.ID, len(data), err, sc.Size)
			}
			img, err := screenshot.Take(sc.Type, bytes.NewReader(data))
			if err != nil || img.Width != sc.Width || img.Height != sc.Height {
				t.Errorf("screenshot of report %d does not decode as the service keeps one: %v", f.ID, err)
			}
		}
	}
	if shots != 5 || statuses[betaport.FeedbackNew] == 0 || statuses[betaport.FeedbackSeen] == 0 || statuses[betaport.FeedbackResolved] == 0 {
		t.Errorf("%d screenshots (want 5), statuses %v (want some of each)", shots, statuses)
	}
	open, err := s.OpenFeedbackCounts(ctx, e.ID, []int64{12})
	if err != nil || open[12] == 0 {
		t.Errorf("the current build's open reports: %v, %v", open, err)
	}
}
