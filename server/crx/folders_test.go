package crx

import (
	"archive/zip"
	"bytes"
	"testing"

	"github.com/betaport/betaport/server/zipcheck/ziptest"
)

// TestRewriteManifestCopiesDeflatedFolders: a folder that its zip tool
// deflated (java.util.zip writes "js/" as the 2-byte deflate stream of
// nothing) is packed as a folder, stored and empty, beside the files it
// held, and the manifest goes last.
func TestRewriteManifestCopiesDeflatedFolders(t *testing.T) {
	src := ziptest.Zip(
		ziptest.JavaFile("manifest.json", `{"manifest_version":3,"name":"Demo","version":"1.0"}`),
		ziptest.JavaFolder("js/"),
		ziptest.JavaFile("js/a.js", "console.log(1)"),
	)
	zr, err := zip.NewReader(bytes.NewReader(src), int64(len(src)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := RewriteManifest(&out, zr, []byte(`{"name":"new"}`)); err != nil {
		t.Fatalf("RewriteManifest: %v", err)
	}
	packed, err := zip.NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range packed.File {
		names = append(names, f.Name)
		if f.Name == "js/" && (f.Method != zip.Store || f.CompressedSize64 != 0 || f.CRC32 != 0) {
			t.Errorf("js/ packed as method %d with %d bytes, CRC %x", f.Method, f.CompressedSize64, f.CRC32)
		}
	}
	if got := string(readZipFile(t, packed, "js/a.js")); got != "console.log(1)" {
		t.Errorf("js/a.js = %q", got)
	}
	if len(names) != 3 || names[0] != "js/" || names[2] != "manifest.json" {
		t.Errorf("entries %q", names)
	}
}
