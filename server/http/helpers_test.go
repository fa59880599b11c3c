package http_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"testing"

	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/server/betaport"
	"github.com/betaport/betaport/server/demo"
	bphttp "github.com/betaport/betaport/server/http"
)

// publish stores a demo zip and publishes it as ext's next bundle, as the
// seed does.
func (e *env) publish(t *testing.T, ext *betaport.Extension, version string) *betaport.Bundle {
	t.Helper()
	ctx := context.Background()
	zip, files, err := demo.Zip(ext.Name, version)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(zip)
	b := &betaport.Bundle{Bundle: api.Bundle{ExtensionID: ext.ID, Name: ext.Name, Version: version, ManifestVersion: 3,
		Size: int64(len(zip)), SHA256: hex.EncodeToString(sum[:]), FileCount: files, Source: "test"}}
	b.BlobKey = betaport.BundleKey(ext.ID, b.SHA256)
	if err := e.Blobs.WriteAll(ctx, b.BlobKey, zip, &blob.WriterOptions{ContentType: "application/zip"}); err != nil {
		t.Fatal(err)
	}
	if err := e.DB.PublishBundle(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}

// key gives ext a submit key and returns it as a pipeline sends it.
func (e *env) key(t *testing.T, ext *betaport.Extension) *api.ServiceKey {
	t.Helper()
	k := &api.ServiceKey{ExtensionID: strconv.FormatInt(ext.ID, 10), APIKey: "key-" + strconv.FormatInt(ext.ID, 10) + "-" + t.Name()}
	if err := e.DB.SetExtensionKey(context.Background(), ext.ID, bphttp.HashKey(k.APIKey)); err != nil {
		t.Fatal(err)
	}
	return k
}

func hashKey(k string) string { return bphttp.HashKey(k) }

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
