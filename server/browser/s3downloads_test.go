package browser_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestTesterDownloadsBuildFromS3: with the bundles on S3, a tester clicks
// the zip link of their builds page. The service answers a redirect to the
// storage (another origin, where the link's download attribute no longer
// names the file) and sends no bytes; Chromium saves the storage's answer
// under the name its Content-Disposition gives, Tab-Tamer-<version>.zip,
// with exactly the bundle's bytes.
func TestTesterDownloadsBuildFromS3(t *testing.T) {
	t.Parallel()
	m, d, log := startServiceOnS3(t)
	ext := d.Extensions[0]
	cur, err := m.Store.FindBundle(context.Background(), ext.ID, ext.CurrentBundle)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Blobs.ReadAll(context.Background(), cur.BlobKey)
	if err != nil {
		t.Fatal(err)
	}

	ctx := newTab(t)
	downloads := allowDownloads(t, ctx)
	openApp(t, ctx, m.URL()+d.TesterLink)
	waitLocation(t, ctx, m.URL()+"/builds")
	waitJS(t, ctx, `document.querySelector("#builds a.download") !== null`)
	do(t, ctx, chromedp.Click(chromedp.CSS(`#builds a.download`)))

	name := fmt.Sprintf("Tab-Tamer-%s.zip", cur.Version)
	path := filepath.Join(downloads, name)
	var got []byte
	for deadline := time.Now().Add(20 * time.Second); ; {
		// Chromium writes to a .crdownload file and renames it when done.
		if got, err = os.ReadFile(path); err == nil && len(got) == len(want) {
			break
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(downloads)
			t.Fatalf("no %s of %d bytes downloaded (%v, %d bytes); the folder holds %v", name, len(want), err, len(got), entries)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s holds %d bytes that are not the bundle's", name, len(got))
	}
	if entries, _ := os.ReadDir(downloads); len(entries) != 1 {
		t.Fatalf("the download folder holds %v, want only %s", entries, name)
	}
	path2 := fmt.Sprintf("path=/api/extensions/%d/bundles/%d/download", ext.ID, ext.CurrentBundle)
	if lines := log.lines(`msg=request`, path2); len(lines) != 1 || !strings.Contains(lines[0], "status=302") || !strings.Contains(lines[0], "bytes=0") {
		t.Fatalf("the service answered the click\n%s\nwant one 302 with no bytes", strings.Join(lines, "\n"))
	}
}
