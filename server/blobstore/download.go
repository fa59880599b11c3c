package blobstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
)

// Downloads on S3 storage go straight from the storage, as uploads go
// straight to it: the server checks who asks, then redirects them to a
// presigned URL for that one object. The URL fixes the headers the storage
// answers with (response-content-type, response-content-disposition,
// response-cache-control are signed query parameters), so the file keeps
// the name and type the server gave it; ETag, Content-Length, ranges and
// conditional requests are the storage's own.
//
// Presigning is arithmetic on the replica (SigV4 with the configured
// credentials): it makes no request to the storage.

// Response is what the storage answers a presigned download with, in place
// of the object's stored headers. Empty fields keep the stored ones.
type Response struct {
	ContentType        string
	ContentDisposition string
	CacheControl       string
}

// PresignDownload returns a URL that lets its holder GET (method GET) or
// HEAD (method HEAD) the object at key until expiry, answered with resp's
// headers. A presigned URL binds its method, so a HEAD needs a URL of its
// own. b must be S3 storage (see Presigns).
func PresignDownload(ctx context.Context, b *blob.Bucket, method, key string, expiry time.Duration, resp Response) (string, error) {
	switch method {
	case http.MethodGet:
		return b.SignedURL(ctx, key, &blob.SignedURLOptions{
			Method: http.MethodGet,
			Expiry: expiry,
			BeforeSign: func(as func(any) bool) error {
				var in *s3.GetObjectInput
				if !as(&in) {
					return errors.New("blobstore: presigned downloads need S3 storage")
				}
				in.ResponseContentType = optional(resp.ContentType)
				in.ResponseContentDisposition = optional(resp.ContentDisposition)
				in.ResponseCacheControl = optional(resp.CacheControl)
				return nil
			},
		})
	case http.MethodHead:
		return presignHead(ctx, b, key, expiry, resp)
	default:
		return "", fmt.Errorf("blobstore: no presigned download for method %s", method)
	}
}

// errGotInput stops gocloud's signing once its GetObjectInput is read.
var errGotInput = errors.New("blobstore: input read")

// presignHead presigns a HeadObject, which gocloud does not offer. The
// bucket and the key (as gocloud escapes it) are read from the input
// gocloud would sign for a GET, so both URLs name the same object.
func presignHead(ctx context.Context, b *blob.Bucket, key string, expiry time.Duration, resp Response) (string, error) {
	var client *s3.Client
	if !b.As(&client) {
		return "", errors.New("blobstore: presigned downloads need S3 storage")
	}
	var bucket, escaped *string
	_, err := b.SignedURL(ctx, key, &blob.SignedURLOptions{
		Method: http.MethodGet,
		Expiry: expiry,
		BeforeSign: func(as func(any) bool) error {
			var in *s3.GetObjectInput
			if !as(&in) {
				return errors.New("blobstore: presigned downloads need S3 storage")
			}
			bucket, escaped = in.Bucket, in.Key
			return errGotInput
		},
	})
	if !errors.Is(err, errGotInput) {
		if err == nil {
			err = errors.New("blobstore: gocloud signed without asking for its input")
		}
		return "", err
	}
	p, err := s3.NewPresignClient(client, s3.WithPresignExpires(expiry)).PresignHeadObject(ctx, &s3.HeadObjectInput{
		Bucket:                     bucket,
		Key:                        escaped,
		ResponseContentType:        optional(resp.ContentType),
		ResponseContentDisposition: optional(resp.ContentDisposition),
		ResponseCacheControl:       optional(resp.CacheControl),
	})
	if err != nil {
		return "", err
	}
	return p.URL, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}
