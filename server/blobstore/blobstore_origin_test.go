package blobstore

import "testing"

func TestUploadOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"file:///var/lib/betaport/blobs":                                     "",
		"s3://zips?endpoint=http://127.0.0.1:9000&region=us-east-1":          "http://127.0.0.1:9000",
		"s3://zips?endpoint=https%3A%2F%2Fminio.example.com%3A9443&region=x": "https://minio.example.com:9443",
		"s3://zips?region=eu-west-1":                                         "https://zips.s3.eu-west-1.amazonaws.com",
	} {
		if got := UploadOrigin(in); got != want {
			t.Errorf("UploadOrigin(%q) = %q, want %q", in, got, want)
		}
	}
}
