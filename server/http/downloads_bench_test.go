package http_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/blobstore"
	"github.com/betaport/betaport/server/credential"
	bphttp "github.com/betaport/betaport/server/http"
	"github.com/betaport/betaport/server/sqlite"
	"github.com/betaport/betaport/server/storetest"
	"github.com/betaport/betaport/server/testenv"
)

// countingListener counts the bytes a server writes to its connections.
type countingListener struct {
	net.Listener
	written *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.written}, nil
}

// countingConn counts the bytes written to (or, on a client's side, read
// from) a connection.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.n.Add(int64(n))
	return n, err
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// replica is one Betaport server on SQLite and the storage at blobURL,
// counting the bytes it writes, with a bundle of size bytes published and
// an admin to download it.
type replica struct {
	url, path string
	admin     http.Header
	written   atomic.Int64
}

func newReplica(b *testing.B, blobURL string, size int) *replica {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "betaport.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	blobs, err := blobstore.Open(ctx, blobURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { blobs.Close() })
	s := &bphttp.Server{Store: db, Blobs: blobs, Logger: testLogger(b), Secret: []byte(credential.NewToken()), SigningKeys: testKeyring}
	r := &replica{}
	ts := httptest.NewUnstartedServer(s.Handler())
	ts.Listener = countingListener{ts.Listener, &r.written}
	ts.Start()
	b.Cleanup(ts.Close)
	s.BaseURL = ts.URL
	s.Publish.BaseURL = s.BaseURL

	team := storetest.MustTeam(b, db, betaport.PlanProfessional)
	ext := storetest.MustExtension(b, db, team, "Tab Tamer")
	// Incompressible bytes: what a download costs does not depend on what
	// the zip holds, and nothing on the way may shrink it.
	data := make([]byte, size)
	rand.Read(data)
	sum := sha256.Sum256(data)
	bundle := &betaport.Bundle{ExtensionID: ext.ID, Name: ext.Name, Version: "1.0.0", ManifestVersion: 3,
		Size: int64(size), SHA256: hex.EncodeToString(sum[:]), FileCount: 1, Source: "test"}
	bundle.BlobKey = betaport.BundleKey(ext.ID, bundle.SHA256)
	if err := blobs.WriteAll(ctx, bundle.BlobKey, data, &blob.WriterOptions{ContentType: api.ZipContentType}); err != nil {
		b.Fatal(err)
	}
	if err := db.PublishBundle(ctx, bundle); err != nil {
		b.Fatal(err)
	}
	r.url, r.path = ts.URL, api.CurrentBundlePath(ext.ID)+"/download"
	r.admin = (&env{DB: db}).adminOf(b, team)
	return r
}

// BenchmarkDownloadBytesServed downloads one 4 MiB bundle zip, the way a
// tester's browser does (following the redirect on S3), from a replica on
// file storage and from one on S3, side by side in one run, and reports
// the bytes each replica wrote per download (headers included), the bytes
// the storage sent on S3, and S3/file for the replica.
func BenchmarkDownloadBytesServed(b *testing.B) {
	const size = 4 << 20
	dir, err := blobstore.FileURL(filepath.Join(b.TempDir(), "blobs"))
	if err != nil {
		b.Fatal(err)
	}
	files := newReplica(b, dir, size)
	s3 := newReplica(b, testenv.BucketURL(b), size)

	// The client counts what it reads from anyone but the replicas: the
	// storage.
	var fromStorage atomic.Int64
	replicas := map[string]bool{files.url[len("http://"):]: true, s3.url[len("http://"):]: true}
	dialer := &net.Dialer{}
	client := &http.Client{Transport: &http.Transport{
		DisableCompression: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil || replicas[addr] {
				return c, err
			}
			return countingConn{c, &fromStorage}, nil
		},
	}}
	download := func(r *replica) {
		req, _ := http.NewRequest("GET", r.url+r.path, nil)
		req.Header = r.admin.Clone()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || n != size {
			b.Fatalf("download = %d, %d bytes (%v)", resp.StatusCode, n, err)
		}
	}
	// One of each first, so both clients' connections are open and the
	// figures are per download, not per first download.
	download(files)
	download(s3)
	files.written.Store(0)
	s3.written.Store(0)
	fromStorage.Store(0)
	for b.Loop() {
		download(files)
		download(s3)
	}
	n := float64(b.N)
	b.ReportMetric(float64(files.written.Load())/n, "file-replica-B/download")
	b.ReportMetric(float64(s3.written.Load())/n, "s3-replica-B/download")
	b.ReportMetric(float64(fromStorage.Load())/n, "s3-storage-B/download")
	b.ReportMetric(float64(s3.written.Load())/float64(files.written.Load()), "s3/file-replica-bytes")
}
