package blobstore

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob"
)

// On S3 a client PUTs a zip straight to the storage with a presigned URL;
// no replica sees the bytes. What the server checks on its own PUT (content
// type, size, SHA-256) it establishes here instead, from the storage:
//
//   - PresignPut binds the content type into the URL's signature, so a PUT
//     with another Content-Type (or none) is refused by the storage.
//   - Stat reads the size and content type of what arrived, without
//     reading the bytes.
//   - CopyChecked copies what arrived (exactly the version Stat saw) to a
//     key only the server writes, and has the storage compute the copy's
//     SHA-256 (CopyObject with x-amz-checksum-algorithm SHA256). The copy
//     is what gets validated and published: a later PUT to the presigned
//     URL, which stays valid until it expires, cannot change it.

// Presigns reports whether b is S3 storage, which takes uploads straight
// from clients and serves downloads straight to them, through presigned
// URLs (PresignPut, PresignDownload). It is the one test of that: file
// storage has the server receive and send the bytes itself.
func Presigns(b *blob.Bucket) bool {
	var c *s3.Client
	return b != nil && b.As(&c)
}

// PresignPut returns a URL that lets its holder PUT one object at key until
// expiry, with exactly the given Content-Type: the content type is a signed
// header, so the storage refuses a PUT that sends another one.
//
// gocloud's s3blob refuses SignedURLOptions.ContentType for PUT with the AWS
// SDK v2 (aws-sdk-go-v2#1475); its BeforeSign hook sets it on the
// PutObjectInput instead, which the presigner then signs.
func PresignPut(ctx context.Context, b *blob.Bucket, key, contentType string, expiry time.Duration) (string, error) {
	return b.SignedURL(ctx, key, &blob.SignedURLOptions{
		Method: "PUT",
		Expiry: expiry,
		BeforeSign: func(as func(any) bool) error {
			var in *s3.PutObjectInput
			if !as(&in) {
				return errors.New("blobstore: presigned PUT needs S3 storage")
			}
			in.ContentType = aws.String(contentType)
			return nil
		},
	})
}

// Object is what the storage says of a stored object.
type Object struct {
	Size        int64
	ContentType string
	ETag        string // the storage's version tag, for conditional copies
	SHA256      string // hex; set by CopyChecked
}

// Stat returns an object's size, content type and ETag without reading it.
// A missing object is an error with gcerrors.NotFound.
func Stat(ctx context.Context, b *blob.Bucket, key string) (*Object, error) {
	a, err := b.Attributes(ctx, key)
	if err != nil {
		return nil, err
	}
	return &Object{Size: a.Size, ContentType: a.ContentType, ETag: a.ETag}, nil
}

// CopyChecked copies src to dst inside the storage, only if src still has
// the given ETag (else an error with gcerrors.FailedPrecondition), and
// returns the copy's size, content type and SHA-256 as the storage computed
// them. The bytes never leave the storage.
func CopyChecked(ctx context.Context, b *blob.Bucket, src, dst, etag string) (*Object, error) {
	var client *s3.Client
	if !b.As(&client) {
		return nil, errors.New("blobstore: CopyChecked needs S3 storage")
	}
	var bucket, key string
	err := b.Copy(ctx, dst, src, &blob.CopyOptions{BeforeCopy: func(as func(any) bool) error {
		var in *s3.CopyObjectInput
		if !as(&in) {
			return errors.New("blobstore: CopyChecked needs S3 storage")
		}
		in.ChecksumAlgorithm = types.ChecksumAlgorithmSha256
		if etag != "" {
			in.CopySourceIfMatch = aws.String(etag)
		}
		bucket, key = aws.ToString(in.Bucket), aws.ToString(in.Key)
		return nil
	}})
	if err != nil {
		return nil, err
	}
	head, err := client.HeadObject(ctx, &s3.HeadObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled,
	})
	if err != nil {
		return nil, fmt.Errorf("blobstore: reading the checksum of %s: %w", dst, err)
	}
	sum, err := base64.StdEncoding.DecodeString(aws.ToString(head.ChecksumSHA256))
	if err != nil || len(sum) != 32 {
		return nil, fmt.Errorf("blobstore: the storage computed no SHA-256 for %s (checksum %q, type %s); it must support CopyObject with x-amz-checksum-algorithm SHA256",
			dst, aws.ToString(head.ChecksumSHA256), head.ChecksumType)
	}
	return &Object{
		Size:        aws.ToInt64(head.ContentLength),
		ContentType: aws.ToString(head.ContentType),
		ETag:        aws.ToString(head.ETag),
		SHA256:      hex.EncodeToString(sum),
	}, nil
}
