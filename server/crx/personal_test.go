package crx

import (
	"archive/zip"
	"bytes"
	"crypto/rsa"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
)

// pack packs the archive orig as publish does, its manifest naming
// updateURL, and returns the CRX with its template.
func pack(t *testing.T, k *rsa.PrivateKey, orig []byte, url string) ([]byte, Template) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(orig), int64(len(orig)))
	if err != nil {
		t.Fatal(err)
	}
	man, err := PrepareManifest(readZipFile(t, zr, "manifest.json"), PublicKeyDER(&k.PublicKey), url, "1.2.3", "")
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	at, err := RewriteManifest(&z, zr, man)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	tp, err := WritePackage(&out, bytes.NewReader(z.Bytes()), int64(z.Len()), at, k)
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), tp
}

// A tester's copy, made from the shared package's template and tail, is
// byte for byte the package packed from scratch with the tester's URL: it
// verifies, its manifest names the tester, and every other entry is the
// shared package's.
func TestPersonalIsThePackagePackedForTheTester(t *testing.T) {
	k := key(t)
	orig := zipOf(t, map[string]string{
		"background.js":    "console.log('hi')\n",
		"manifest.json":    `{"manifest_version":3,"name":"Demo","version":"1.0.0"}`,
		"icons/":           "",
		"icons/readme.txt": strings.Repeat("icon ", 1000),
		"z-after.js":       "// after the manifest in the upload\n",
	})
	shared, tp := pack(t, k, orig, "https://b.example/update/1/SHARED")
	want, _ := pack(t, k, orig, "https://b.example/update/1/TESTER-TOKEN-OF-ADA")

	man, err := TailManifest(shared[tp.TailAt:])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(man), "SHARED") {
		t.Fatalf("the shared package's last entry is not its manifest: %q", man)
	}
	personal, err := PrepareManifest(man, PublicKeyDER(&k.PublicKey), "https://b.example/update/1/TESTER-TOKEN-OF-ADA", "1.2.3", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := MakePersonal(tp, shared[tp.TailAt:], personal, k)
	if err != nil {
		t.Fatal(err)
	}
	got := append(append(append([]byte{}, p.Header...), shared[tp.HeaderSize:tp.TailAt]...), p.Tail...)
	if p.Size(tp) != int64(len(got)) {
		t.Errorf("Size = %d, the copy has %d bytes", p.Size(tp), len(got))
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the personal copy (%d bytes) differs from the package packed for the tester (%d bytes)", len(got), len(want))
	}
	f, err := Read(bytes.NewReader(got), int64(len(got)))
	if err != nil {
		t.Fatalf("the personal copy does not verify: %v", err)
	}
	zr, err := zip.NewReader(f.Zip, f.ZipSize)
	if err != nil {
		t.Fatal(err)
	}
	if m := readZipFile(t, zr, "manifest.json"); !strings.Contains(string(m), "TESTER-TOKEN-OF-ADA") {
		t.Errorf("the copy's manifest is %q", m)
	}
	if last := zr.File[len(zr.File)-1].Name; last != "manifest.json" {
		t.Errorf("the copy's last entry is %q", last)
	}
	if js := readZipFile(t, zr, "icons/readme.txt"); string(js) != strings.Repeat("icon ", 1000) {
		t.Errorf("icons/readme.txt changed")
	}

	// Made twice, the copy is the same bytes (a stable ETag, resumable).
	again, err := MakePersonal(tp, shared[tp.TailAt:], personal, k)
	if err != nil || !bytes.Equal(again.Header, p.Header) || !bytes.Equal(again.Tail, p.Tail) {
		t.Errorf("a second copy differs (%v)", err)
	}
}

// A tail that is not what RewriteManifest wrote is refused, not patched.
func TestPersonalRefusesOtherTails(t *testing.T) {
	k := key(t)
	orig := zipOf(t, map[string]string{"manifest.json": `{"manifest_version":3,"name":"D","version":"1"}`, "a.js": "a"})
	shared, tp := pack(t, k, orig, "https://b.example/u")
	tail := shared[tp.TailAt:]
	for name, bad := range map[string][]byte{
		"empty":           nil,
		"cut short":       tail[:len(tail)-1],
		"the whole zip":   shared[tp.HeaderSize:],
		"not a local one": append([]byte("PK\x05\x06"), tail[4:]...),
	} {
		if _, err := MakePersonal(tp, bad, []byte("{}"), k); err == nil {
			t.Errorf("%s: made a copy", name)
		}
	}
}

// zipOf zips files in the order of their names, deflated (folders stored).
func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fh := &zip.FileHeader{Name: name, Method: zip.Deflate}
		if strings.HasSuffix(name, "/") {
			fh.Method = zip.Store
		}
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, files[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
