package blobstore_test

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/server/blobstore"
	"github.com/betaport/betaport/server/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestPresignDownload: on S3 (versitygw) a presigned GET answers the
// object with the headers asked for, a presigned HEAD its headers alone,
// and neither URL works for the other method. File storage presigns
// nothing.
func TestPresignDownload(t *testing.T) {
	ctx := context.Background()
	dir, err := blobstore.FileURL(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := blobstore.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer files.Close()
	if blobstore.Presigns(files) {
		t.Fatal("file storage says it presigns")
	}
	if u, err := blobstore.PresignDownload(ctx, files, "GET", "a.zip", time.Minute, blobstore.Response{}); err == nil {
		t.Fatalf("file storage presigned %s", u)
	}

	s3, err := blobstore.Open(ctx, testenv.BucketURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if !blobstore.Presigns(s3) {
		t.Fatal("S3 storage says it does not presign")
	}
	const key, body = "bundles/1/a b.zip", "PK not really a zip"
	if err := s3.WriteAll(ctx, key, []byte(body), nil); err != nil {
		t.Fatal(err)
	}
	resp := blobstore.Response{ContentType: "application/zip", ContentDisposition: `attachment; filename="A-1.0.zip"`, CacheControl: "private, no-cache"}
	get, err := blobstore.PresignDownload(ctx, s3, "GET", key, time.Minute, resp)
	if err != nil {
		t.Fatal(err)
	}
	head, err := blobstore.PresignDownload(ctx, s3, "HEAD", key, time.Minute, resp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := blobstore.PresignDownload(ctx, s3, "PUT", key, time.Minute, resp); err == nil {
		t.Fatal("PresignDownload signed a PUT")
	}
	do := func(method, url string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, nil)
		r, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r, string(b)
	}
	for _, c := range []struct {
		method, url, body string
	}{{"GET", get, body}, {"HEAD", head, ""}} {
		r, got := do(c.method, c.url)
		if r.StatusCode != 200 || got != c.body || r.ContentLength != int64(len(body)) {
			t.Fatalf("%s = %d %q (length %d)", c.method, r.StatusCode, got, r.ContentLength)
		}
		if r.Header.Get("Content-Type") != resp.ContentType || r.Header.Get("Content-Disposition") != resp.ContentDisposition ||
			r.Header.Get("Cache-Control") != resp.CacheControl {
			t.Fatalf("%s answered headers %v, want %+v", c.method, r.Header, resp)
		}
	}
	// The URL binds its method.
	if r, _ := do("HEAD", get); r.StatusCode != http.StatusForbidden {
		t.Fatalf("HEAD with the GET URL = %d, want 403", r.StatusCode)
	}
	if r, got := do("GET", head); r.StatusCode != http.StatusForbidden || strings.Contains(got, body) {
		t.Fatalf("GET with the HEAD URL = %d %q, want 403", r.StatusCode, got)
	}
}
