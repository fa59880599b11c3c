package http_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/blobstore"
	"github.com/betaport/betaport/server/credential"
	bphttp "github.com/betaport/betaport/server/http"
	"github.com/betaport/betaport/server/sqlite"
	"github.com/betaport/betaport/server/storetest"
)

// BenchmarkTesterCRXDownload downloads a bundle's CRX over HTTP from one
// replica on file storage, side by side in one run: the shared package as
// an admin gets it (stored once, sent as is) and a tester's own copy, for a
// 1 MiB and a 100 MiB bundle. It reports tester/shared.
//
// The tester's copy is made before the timed downloads (the first one
// makes it, as WarmTesterCopies does when a bundle is published: the tail
// rewritten and hashed from the kept state, one signature), so each timed
// download is what an updater's is: the kept header and tail, and the
// shared part read from storage. Making a copy is BenchmarkPersonal's
// (server/crx).
func BenchmarkTesterCRXDownload(b *testing.B) {
	for _, mib := range []int{1, 100} {
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			url, admin, tester := crxReplica(b, mib)
			client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
			download := func(who http.Header) time.Duration {
				start := time.Now()
				req, _ := http.NewRequest("GET", url, nil)
				req.Header = who.Clone()
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || n < int64(mib)<<20 {
					b.Fatalf("download = %d, %d bytes (%v)", resp.StatusCode, n, err)
				}
				return time.Since(start)
			}
			download(admin) // packs the shared CRX, opens the connection
			download(tester)
			var shared, own time.Duration
			for b.Loop() {
				shared += download(admin)
				own += download(tester)
			}
			b.ReportMetric(float64(own)/float64(shared), "tester/shared")
		})
	}
}

// crxReplica serves a published bundle of mib MiB (a manifest and
// incompressible stored files) and returns its CRX's URL with an admin's
// and a tester's session.
func crxReplica(b *testing.B, mib int) (url string, admin, tester http.Header) {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "betaport.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	blobURL, _ := blobstore.FileURL(filepath.Join(dir, "blobs"))
	blobs, err := blobstore.Open(ctx, blobURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { blobs.Close() })
	s := &bphttp.Server{Store: db, Blobs: blobs, Logger: testLogger(b), Secret: []byte(credential.NewToken()), SigningKeys: testKeyring}
	ts := httptest.NewServer(s.Handler())
	b.Cleanup(ts.Close)
	s.BaseURL = ts.URL
	s.Publish.BaseURL = s.BaseURL

	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.Create("manifest.json")
	io.WriteString(w, `{"manifest_version": 3, "name": "Tab Tamer", "version": "1.0.0"}`)
	for i := range mib {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("assets/%d.bin", i), Method: zip.Store})
		io.CopyN(w, rand.Reader, 1<<20)
	}
	zw.Close()
	data := zb.Bytes()
	sum := sha256.Sum256(data)
	team := storetest.MustTeam(b, db, betaport.PlanProfessional)
	ext := storetest.MustExtension(b, db, team, "Tab Tamer")
	bundle := &betaport.Bundle{ExtensionID: ext.ID, Name: ext.Name, Version: "1.0.0", ManifestVersion: 3,
		Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), FileCount: mib + 1, Source: "test"}
	bundle.BlobKey = betaport.BundleKey(ext.ID, bundle.SHA256)
	if err := blobs.WriteAll(ctx, bundle.BlobKey, data, &blob.WriterOptions{ContentType: api.ZipContentType}); err != nil {
		b.Fatal(err)
	}
	if err := db.PublishBundle(ctx, bundle); err != nil {
		b.Fatal(err)
	}
	tt := &betaport.Tester{ExtensionID: ext.ID, Email: "ada@example.com", Name: "Ada", Status: betaport.TesterActive}
	if err := db.CreateTesters(ctx, []*betaport.Tester{tt}); err != nil {
		b.Fatal(err)
	}
	e := &env{DB: db}
	return ts.URL + api.BundleCRXPath(ext.ID, bundle.Number), e.adminOf(b, team), e.cookie(b, betaport.Session{TesterID: tt.ID})
}
