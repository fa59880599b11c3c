// Package blobstore opens Betaport's zip storage through gocloud.dev/blob,
// chosen by URL: file:// on one machine.
package blobstore

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // registers file://
)

// Open opens the bucket at urlstr.
func Open(ctx context.Context, urlstr string) (*blob.Bucket, error) {
	b, err := blob.OpenBucket(ctx, urlstr)
	if err != nil {
		return nil, fmt.Errorf("blobstore: open %s: %w", redact(urlstr), err)
	}
	return b, nil
}

// FileURL is the file:// URL of a local folder, created when missing.
// Temporary files are written beside their final place so that a finished
// write is a rename on one file system: bytes become visible whole or not at
// all.
func FileURL(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: "create_dir=1&no_tmp_dir=1"}
	return u.String(), nil
}

// Ping checks that the bucket answers.
func Ping(ctx context.Context, b *blob.Bucket) error {
	ok, err := b.IsAccessible(ctx)
	if err == nil && !ok {
		err = fmt.Errorf("blobstore: bucket is not accessible")
	}
	return err
}

// redact drops credentials that a URL may carry before it is logged.
func redact(urlstr string) string {
	u, err := url.Parse(urlstr)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	return u.Redacted()
}
