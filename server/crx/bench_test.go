package crx

import (
	"archive/zip"
	"bytes"
	"crypto/rsa"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
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
		if _, err := RewriteManifest(&packed, zr, m); err != nil {
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

// BenchmarkPersonal measures, side by side in one run, serving a tester's
// own copy of a packed CRX (its tail rewritten, hashed from the kept state
// and signed, then header, shared part read from the file, and tail
// written out) against serving the shared package as stored (read from
// the file and written out), for a 1 MiB and a 100 MiB bundle. It reports
// personal/shared, and the per-tester work alone (ms per copy: the tail's
// rewrite and hash, and the signature).
func BenchmarkPersonal(b *testing.B) {
	k, err := GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	for _, mib := range []int{1, 100} {
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			path, tp := benchPackage(b, k, mib)
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			fi, _ := f.Stat()
			size := fi.Size()
			tail := make([]byte, size-tp.TailAt)
			if _, err := f.ReadAt(tail, tp.TailAt); err != nil {
				b.Fatal(err)
			}
			shared, err := TailManifest(tail)
			if err != nil {
				b.Fatal(err)
			}
			manifest, err := SetUpdateURL(shared, "https://betaport.example/update/1/a-testers-own-token-of-43-characters")
			if err != nil {
				b.Fatal(err)
			}
			serveShared := func() {
				if _, err := io.Copy(io.Discard, io.NewSectionReader(f, 0, size)); err != nil {
					b.Fatal(err)
				}
			}
			var work time.Duration
			servePersonal := func() {
				start := time.Now()
				p, err := MakePersonal(tp, tail, manifest, k)
				if err != nil {
					b.Fatal(err)
				}
				work += time.Since(start)
				io.Discard.Write(p.Header)
				if _, err := io.Copy(io.Discard, io.NewSectionReader(f, tp.HeaderSize, tp.TailAt-tp.HeaderSize)); err != nil {
					b.Fatal(err)
				}
				io.Discard.Write(p.Tail)
			}
			var sharedT, personalT time.Duration
			for b.Loop() {
				start := time.Now()
				serveShared()
				sharedT += time.Since(start)
				start = time.Now()
				servePersonal()
				personalT += time.Since(start)
			}
			b.ReportMetric(float64(personalT)/float64(sharedT), "personal/shared")
			b.ReportMetric(float64(work)/float64(time.Millisecond)/float64(b.N), "ms-per-copy")
		})
	}
}

// benchPackage packs a bundle of mib MiB of incompressible files (stored)
// into a CRX file and returns its path and template.
func benchPackage(b *testing.B, k *rsa.PrivateKey, mib int) (string, Template) {
	b.Helper()
	dir := b.TempDir()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("manifest.json")
	io.WriteString(w, `{"manifest_version":3,"name":"Bench","version":"1.0"}`)
	rng := rand.NewChaCha8([32]byte{9})
	for i := range mib {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("assets/%d.bin", i), Method: zip.Store})
		io.CopyN(w, rng, 1<<20)
	}
	zw.Close()
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		b.Fatal(err)
	}
	m, err := PrepareManifest([]byte(`{"manifest_version":3,"name":"Bench","version":"1.0"}`), PublicKeyDER(&k.PublicKey), "https://betaport.example/update/1/shared", "1.0", "")
	if err != nil {
		b.Fatal(err)
	}
	var packed bytes.Buffer
	at, err := RewriteManifest(&packed, zr, m)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "bundle.crx")
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	tp, err := WritePackage(out, bytes.NewReader(packed.Bytes()), int64(packed.Len()), at, k)
	if err != nil {
		b.Fatal(err)
	}
	return path, tp
}
