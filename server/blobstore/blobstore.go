// Package blobstore opens Betaport's zip storage through gocloud.dev/blob,
// chosen by URL: file:// on one machine, s3:// (any S3-compatible storage)
// when several replicas share it.
package blobstore

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // registers file://
	_ "gocloud.dev/blob/s3blob"   // registers s3://
)

// Open opens the bucket at urlstr.
//
// An s3:// URL names the bucket as its host and takes gocloud's parameters
// (endpoint, region, use_path_style, …); credentials come from the standard
// AWS environment variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) or
// the other places the AWS SDK looks. With an endpoint (S3-compatible
// storage) addressing is path-style unless the URL says otherwise.
func Open(ctx context.Context, urlstr string) (*blob.Bucket, error) {
	urlstr, err := withDefaults(urlstr)
	if err != nil {
		return nil, fmt.Errorf("blobstore: %s: %w", redact(urlstr), err)
	}
	b, err := blob.OpenBucket(ctx, urlstr)
	if err != nil {
		return nil, fmt.Errorf("blobstore: open %s: %w", redact(urlstr), err)
	}
	return b, nil
}

// withDefaults fills in the S3 parameters Betaport relies on when the URL
// leaves them out.
func withDefaults(urlstr string) (string, error) {
	u, err := url.Parse(urlstr)
	if err != nil {
		return urlstr, err
	}
	if u.Scheme != "s3" {
		return urlstr, nil
	}
	if u.Host == "" {
		return urlstr, fmt.Errorf("name the bucket: s3://BUCKET?endpoint=…&region=…")
	}
	q := u.Query()
	if q.Get("endpoint") != "" && q.Get("use_path_style") == "" && q.Get("s3ForcePathStyle") == "" {
		// S3-compatible storage (versitygw, MinIO, …) is reached by path:
		// http://host/bucket/key, not http://bucket.host/key.
		q.Set("use_path_style", "true")
	}
	if q.Get("response_checksum_validation") == "" {
		// Check response checksums only when asked for: ranged reads (the
		// zip's central directory) carry none, and the SDK would log that
		// on every read.
		q.Set("response_checksum_validation", "when_required")
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
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

// UploadOrigin is the origin browsers send presigned PUTs to for an s3://
// URL with an endpoint (S3-compatible storage), or AWS's regional S3 host;
// "" for other storage.
func UploadOrigin(urlstr string) string {
	u, err := url.Parse(urlstr)
	if err != nil || u.Scheme != "s3" {
		return ""
	}
	q := u.Query()
	if ep := q.Get("endpoint"); ep != "" {
		if e, err := url.Parse(ep); err == nil && e.Scheme != "" && e.Host != "" {
			return e.Scheme + "://" + e.Host
		}
		return ""
	}
	if region := q.Get("region"); region != "" {
		return "https://" + u.Host + ".s3." + region + ".amazonaws.com"
	}
	return "https://*.amazonaws.com"
}
