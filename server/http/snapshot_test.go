package http_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/blobstore"
	"github.com/betaport/betaport/server/postgres"
	"github.com/betaport/betaport/server/sqlite"
	"github.com/betaport/betaport/server/testenv"
)

// A snapshot is storage (a database and its blobs) made once per test
// binary and given to each test that asks for it as a copy of its own, so
// that no test pays again for what every one of them starts from: the
// migrations of a new database (a second on SQLite under -race, most of
// what newEnv cost), and demo data (see bbpDemo).
//
// On (SQLite, files) the snapshot is a directory holding betaport.db and
// blobs/, copied file by file into the test's directory, where newEnv
// would have made them: the store's migrations then find nothing to do.
// On (PostgreSQL, S3) it is a database, each test's a new one made from it
// by CREATE DATABASE … TEMPLATE (nobody stays connected to it), and a
// bucket whose objects are copied into the test's new bucket.
//
// A copy is the same data as the original: the tests that use it read and
// change their copy only.
type snapshot struct {
	name string
	// fill loads the data into a new, empty store; nil leaves it empty
	// (migrated). What it returns is kept for the tests (result), which
	// must treat it as read-only.
	fill func(ctx context.Context, db betaport.Store, blobs *blob.Bucket) (any, error)

	once   sync.Once
	err    error
	result any

	dir      string   // (SQLite, files): betaport.db and blobs/
	database string   // (PostgreSQL, S3): the template database
	dbURL    *url.URL // (PostgreSQL, S3): its URL
	bucket   string   // (PostgreSQL, S3): the blob URL of the template bucket
}

// emptyStore is what newEnv starts every test from: a migrated database
// and no blobs.
var emptyStore = &snapshot{name: "empty"}

var (
	snapshotMu   sync.Mutex
	snapshotDirs []string // removed when the test binary ends
	pgAdmin      *sql.DB  // connected to the cluster's postgres database
)

// removeSnapshots deletes the snapshots' directories and closes the
// admin connection; TestMain calls it after the tests.
func removeSnapshots() {
	snapshotMu.Lock()
	defer snapshotMu.Unlock()
	for _, d := range snapshotDirs {
		os.RemoveAll(d)
	}
	snapshotDirs = nil
	if pgAdmin != nil {
		pgAdmin.Close()
		pgAdmin = nil
	}
}

// build makes the snapshot, once, on this run's backend. It runs in the
// context of the first test that asks for it; another test asking
// meanwhile waits for it.
func (s *snapshot) build(t testing.TB) error {
	s.once.Do(func() {
		s.err = errors.New("it was being made by a test that stopped") // until it is made
		err := s.make(t)
		if err != nil {
			err = fmt.Errorf("making the %s snapshot: %w", s.name, err)
		}
		s.err = err
	})
	return s.err
}

func (s *snapshot) make(t testing.TB) error {
	ctx := context.Background()
	var db betaport.Store
	var blobURL string
	switch backend() {
	case backendScaleOut:
		dbURL := testenv.PostgresURL(t)
		u, err := url.Parse(dbURL)
		if err != nil {
			return err
		}
		s.database, s.dbURL = strings.TrimPrefix(u.Path, "/"), u
		if db, err = postgres.Open(ctx, dbURL); err != nil {
			return err
		}
		if s.fill != nil {
			s.bucket = testenv.BucketURL(t)
			blobURL = s.bucket
		}
		if err := openAdmin(u); err != nil {
			db.Close()
			return err
		}
	default:
		dir, err := os.MkdirTemp("", "betaport-http-snapshot-")
		if err != nil {
			return err
		}
		snapshotMu.Lock()
		snapshotDirs = append(snapshotDirs, dir)
		snapshotMu.Unlock()
		s.dir = dir
		if db, err = sqlite.Open(ctx, filepath.Join(dir, "betaport.db")); err != nil {
			return err
		}
		if s.fill != nil {
			blobURL, _ = blobstore.FileURL(filepath.Join(dir, "blobs"))
		}
	}
	var err error
	if s.fill != nil {
		var blobs *blob.Bucket
		if blobs, err = blobstore.Open(ctx, blobURL); err == nil {
			s.result, err = s.fill(ctx, db, blobs)
			if cerr := blobs.Close(); err == nil {
				err = cerr
			}
		}
	}
	// Closed, so that the copies are whole (SQLite) and nobody is
	// connected to the template (PostgreSQL).
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

// openAdmin connects to the cluster's postgres database, as the user of
// the test databases (a superuser), once.
func openAdmin(u *url.URL) error {
	snapshotMu.Lock()
	defer snapshotMu.Unlock()
	if pgAdmin != nil {
		return nil
	}
	admin := *u
	admin.Path = "/postgres"
	db, err := sql.Open("pgx", admin.String())
	if err != nil {
		return err
	}
	pgAdmin = db
	return nil
}

// copyTo gives a test its copy of the snapshot: on (SQLite, files) the
// files under dir (betaport.db, blobs/), on (PostgreSQL, S3) the URLs of
// a new database and a new bucket holding the same.
func (s *snapshot) copyTo(t testing.TB, dir string) (dbURL, blobURL string) {
	t.Helper()
	if err := s.build(t); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if backend() == backendScaleOut {
		name := "t_" + strings.ToLower(rand.Text())
		if _, err := pgAdmin.ExecContext(ctx, `CREATE DATABASE `+name+` TEMPLATE `+s.database); err != nil {
			t.Fatalf("copying the %s snapshot: %v", s.name, err)
		}
		u := *s.dbURL
		u.Path = "/" + name
		blobURL = testenv.BucketURL(t)
		if s.bucket != "" {
			if err := copyBucket(ctx, s.bucket, blobURL); err != nil {
				t.Fatalf("copying the %s snapshot's blobs: %v", s.name, err)
			}
		}
		return u.String(), blobURL
	}
	err := testenv.CopyDir(s.dir, dir)
	if err != nil {
		t.Fatalf("copying the %s snapshot: %v", s.name, err)
	}
	return filepath.Join(dir, "betaport.db"), ""
}

// copyBucket copies every object of one bucket into another, with its
// content type and metadata.
func copyBucket(ctx context.Context, fromURL, toURL string) error {
	from, err := blobstore.Open(ctx, fromURL)
	if err != nil {
		return err
	}
	defer from.Close()
	to, err := blobstore.Open(ctx, toURL)
	if err != nil {
		return err
	}
	defer to.Close()
	it := from.List(nil)
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if obj.IsDir {
			continue
		}
		attrs, err := from.Attributes(ctx, obj.Key)
		if err != nil {
			return err
		}
		data, err := from.ReadAll(ctx, obj.Key)
		if err != nil {
			return err
		}
		opts := &blob.WriterOptions{ContentType: attrs.ContentType, Metadata: attrs.Metadata,
			CacheControl: attrs.CacheControl, ContentDisposition: attrs.ContentDisposition,
			ContentEncoding: attrs.ContentEncoding, ContentLanguage: attrs.ContentLanguage}
		if err := to.WriteAll(ctx, obj.Key, data, opts); err != nil {
			return err
		}
	}
}
