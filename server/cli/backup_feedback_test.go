package cli_test

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/storetest"
)

// TestBackupKeepsFeedbackScreenshots: a backup holds the testers' reports
// and their screenshots (blobs the records name), and the restored
// service serves each screenshot byte for byte; a report deleted there
// takes its screenshot's blob with it.
func TestBackupKeepsFeedbackScreenshots(t *testing.T) {
	ctx := context.Background()
	dataA := t.TempDir()
	a := startServing(t, dataA)
	team := storetest.MustTeam(t, a.Store, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, a.Store, team, "Tab Tamer")
	if err := a.Store.CreateUser(ctx, &betaport.User{TeamID: team.ID, Email: "ada@example.com"}, credential.HashPassword("a long password")); err != nil {
		t.Fatal(err)
	}
	testers := []*betaport.Tester{{ExtensionID: ext.ID, Email: "bo@example.com", Name: "Bo", Status: betaport.TesterActive}}
	if err := a.Store.CreateTesters(ctx, testers); err != nil {
		t.Fatal(err)
	}
	// A report as the service keeps one: its screenshots stored first.
	shots := [][]byte{[]byte("\x89PNG\r\n\x1a\n first screenshot"), []byte("\xff\xd8\xff second screenshot")}
	f := &betaport.Feedback{ExtensionID: ext.ID, TesterID: testers[0].ID, Text: "It crashed.", Source: betaport.FeedbackFromBuildsPage}
	for i, data := range shots {
		typ := []string{"image/png", "image/jpeg"}[i]
		key := betaport.FeedbackKey(ext.ID, "backuptest", i+1, typ)
		if err := a.Blobs.WriteAll(ctx, key, data, nil); err != nil {
			t.Fatal(err)
		}
		f.Screenshots = append(f.Screenshots, betaport.Screenshot{Number: i + 1, Type: typ, Width: 1, Height: 1, Size: int64(len(data)), BlobKey: key})
	}
	if err := a.Store.CreateFeedback(ctx, f); err != nil {
		t.Fatal(err)
	}

	backupFile := filepath.Join(t.TempDir(), "betaport.backup")
	if code, _, errOut := run(t, "backup", "--data", dataA, "--out", backupFile); code != 0 {
		t.Fatalf("backup: exit %d: %s", code, errOut)
	}
	dataB := filepath.Join(t.TempDir(), "restored")
	if code, _, errOut := run(t, "restore", "--from", backupFile, "--data", dataB); code != 0 {
		t.Fatalf("restore: exit %d: %s", code, errOut)
	}
	b := startServing(t, dataB)
	clientB := signedIn(t, b.URL())
	for i, want := range shots {
		if got := get(t, clientB, b.URL()+api.FeedbackScreenshotPath(ext.ID, f.ID, i+1)); !bytes.Equal(got, want) {
			t.Fatalf("screenshot %d on the restored service: %q, want %q", i+1, got, want)
		}
	}
	// Deleted there, the report takes its screenshots.
	req, _ := http.NewRequest("DELETE", b.URL()+api.FeedbackReportPath(ext.ID, f.ID), nil)
	if resp, err := clientB.Do(req); err != nil || resp.StatusCode != 204 {
		t.Fatalf("DELETE on the restored service: %v %v", resp, err)
	}
	for _, sc := range f.Screenshots {
		if ok, err := b.Blobs.Exists(ctx, sc.BlobKey); err != nil || ok {
			t.Fatalf("screenshot %s after the delete: exists %v (%v)", sc.BlobKey, ok, err)
		}
		if ok, _ := a.Blobs.Exists(ctx, sc.BlobKey); !ok {
			t.Fatalf("the delete on the restored service took %s from the original", sc.BlobKey)
		}
	}
}
