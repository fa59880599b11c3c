package crx

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkPack measures, side by side in one run, packing a 16 MiB bundle
// as a signed CRX (manifest rewrite, copy of every entry, SHA-256 and one
// RSA signature) against one SHA-256 pass over the same zip, the least any
// sign already spends on it, and reports pack/sha256.
func BenchmarkPack(b *testing.B) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("manifest.json")
	io.WriteString(w, `{"manifest_version":3,"name":"Bench","version":"1.0"}`)
	rng := rand.NewChaCha8([32]byte{7})
	for i := range 16 {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("assets/%d.bin", i), Method: zip.Store})
		io.CopyN(w, rng, 1<<20)
	}
	zw.Close()
	data := buf.Bytes()
	k, err := GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	pub := PublicKeyDER(&k.PublicKey)
	var packed, out bytes.Buffer
	var pack, hash time.Duration
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		t0 := time.Now()
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			b.Fatal(err)
		}
		m, err := PrepareManifest([]byte(`{"manifest_version":3,"name":"Bench","version":"1.0"}`), pub, "https://beta.example.com/update/1/t", "1.0.0.2", "1.0")
		if err != nil {
			b.Fatal(err)
		}
		packed.Reset()
		out.Reset()
		if err := RewriteManifest(&packed, zr, m); err != nil {
			b.Fatal(err)
		}
		if err := Write(&out, bytes.NewReader(packed.Bytes()), int64(packed.Len()), k); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		sha256.Sum256(data)
		pack, hash = pack+t1.Sub(t0), hash+time.Since(t1)
	}
	b.ReportMetric(float64(pack)/float64(hash), "pack/sha256")
}
