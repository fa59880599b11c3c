package zipcheck

import (
	"archive/zip"
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// withMode is an entry whose external attributes carry a Unix file mode.
func withMode(name, body string, mode fs.FileMode) entry {
	fh := &zip.FileHeader{Name: name, Method: zip.Store, CRC32: crc32.ChecksumIEEE([]byte(body)),
		CompressedSize64: uint64(len(body)), UncompressedSize64: uint64(len(body))}
	fh.SetMode(mode)
	return entry{name: name, body: body, raw: fh}
}

func TestCheckRefusesEntriesThatAreNotFilesOrFolders(t *testing.T) {
	tests := []struct {
		name  string
		entry entry
	}{
		{"symlink out of the folder", withMode("escape", "../../../../tmp/escaped", fs.ModeSymlink|0o777)},
		{"fifo", withMode("pipe", "", fs.ModeNamedPipe|0o644)},
		{"character device", withMode("tty", "", fs.ModeDevice|fs.ModeCharDevice|0o644)},
		{"block device", withMode("disk", "", fs.ModeDevice|0o644)},
		{"socket", withMode("sock", "", fs.ModeSocket|0o644)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := makeZip(t, file("manifest.json", mv3), tt.entry, file("escape/x.js", "x"))
			got := found(check(t, data, DefaultLimits()))
			if !slices.Equal(got, []string{"entry_not_regular " + tt.entry.name}) {
				t.Errorf("problems %q, want entry_not_regular %s", got, tt.entry.name)
			}
		})
	}
	// Unix modes on ordinary entries are fine: executable files, folders.
	ok := makeZip(t, file("manifest.json", mv3), withMode("run.sh", "#!/bin/sh\n", 0o755), withMode("js/", "", fs.ModeDir|0o755))
	if res := check(t, ok, DefaultLimits()); !res.OK() {
		t.Errorf("regular Unix modes refused: %v", res.Problems)
	}
}

// flipByte returns data with the byte of the first occurrence of marker
// changed.
func flipByte(t *testing.T, data []byte, marker string) []byte {
	t.Helper()
	i := bytes.Index(data, []byte(marker))
	if i < 0 {
		t.Fatalf("marker %q not in zip", marker)
	}
	out := bytes.Clone(data)
	out[i] ^= 0x20
	return out
}

func TestCheckInflatesEveryEntry(t *testing.T) {
	body := strings.Repeat("console.log('betaport');\n", 100)
	bomb := bytes.Repeat([]byte{0}, 64<<20)
	tests := []struct {
		name string
		zip  []byte
		want []string
	}{
		{"stored entry with a flipped byte", flipByte(t, makeZip(t, file("manifest.json", mv3), stored("a.js", "MARKER"+body)), "MARKER"),
			[]string{"entry_corrupt a.js"}},
		{"deflated entry with a flipped byte", func() []byte {
			comp := deflate(t, []byte(body))
			fh := &zip.FileHeader{Method: zip.Deflate, CRC32: crc32.ChecksumIEEE([]byte(body)) ^ 1,
				CompressedSize64: uint64(len(comp)), UncompressedSize64: uint64(len(body))}
			return makeZip(t, file("manifest.json", mv3), entry{name: "a.js", body: string(comp), raw: fh})
		}(), []string{"entry_corrupt a.js"}},
		{"declares 10 bytes, inflates to 64 MiB", func() []byte {
			comp := deflate(t, bomb)
			fh := &zip.FileHeader{Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(bomb[:10]),
				CompressedSize64: uint64(len(comp)), UncompressedSize64: 10}
			return makeZip(t, file("manifest.json", mv3), entry{name: "bomb.bin", body: string(comp), raw: fh})
		}(), []string{"entry_corrupt bomb.bin"}},
		{"inflates short of its declared size", func() []byte {
			comp := deflate(t, []byte(body))
			fh := &zip.FileHeader{Method: zip.Deflate, CRC32: crc32.ChecksumIEEE([]byte(body)),
				CompressedSize64: uint64(len(comp)), UncompressedSize64: uint64(len(body)) + 5}
			return makeZip(t, file("manifest.json", mv3), entry{name: "a.js", body: string(comp), raw: fh})
		}(), []string{"entry_corrupt a.js"}},
		{"a CRC of 0 is checked too", func() []byte {
			fh := &zip.FileHeader{Method: zip.Store, CRC32: 0, CompressedSize64: uint64(len(body)), UncompressedSize64: uint64(len(body))}
			return makeZip(t, file("manifest.json", mv3), entry{name: "a.js", body: body, raw: fh})
		}(), []string{"entry_corrupt a.js"}},
		{"damaged deflate stream", func() []byte {
			garbage := "\xff\xff\xff\xff\xff\xff"
			fh := &zip.FileHeader{Method: zip.Deflate, CRC32: 1, CompressedSize64: uint64(len(garbage)), UncompressedSize64: 100}
			return makeZip(t, file("manifest.json", mv3), entry{name: "a.js", body: garbage, raw: fh})
		}(), []string{"entry_corrupt a.js"}},
		{"every bad entry is reported", func() []byte {
			z := makeZip(t, file("manifest.json", mv3), stored("a.js", "AAAA"+body), stored("b.js", "BBBB"+body), stored("c.js", body))
			return flipByte(t, flipByte(t, z, "AAAA"), "BBBB")
		}(), []string{"entry_corrupt a.js", "entry_corrupt b.js"}},
		{"empty files and folders are fine", makeZip(t, file("manifest.json", mv3), stored("empty.txt", ""), dir("js/"), file("js/a.js", body)), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := check(t, tt.zip, DefaultLimits())
			if got := found(res); !slices.Equal(got, tt.want) {
				t.Errorf("problems %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCheckReadsManifestsWithComments(t *testing.T) {
	tests := []struct {
		name, manifest string
		ok             bool
	}{
		{"line comments", "// My extension\n{\n  \"manifest_version\": 3, // MV3\n  \"name\": \"Demo\",\n  \"version\": \"1.0\"\n}\n", true},
		{"block comments", "/* header\n   spans lines */{\"manifest_version\": /* three */ 3, \"name\": \"Demo\", \"version\": \"1.0\"}", true},
		{"comment markers inside strings are text", `{"manifest_version": 3, "name": "http://x /* not a comment */ // nor this", "version": "1.0"}`, true},
		{"escaped quote before a comment", `{"manifest_version": 3, "name": "say \"hi\"", "version": "1.0"} // end`, true},
		{"bom and comments", "\xef\xbb\xbf// c\n" + `{"manifest_version": 3, "name": "Demo", "version": "1.0"}`, true},
		{"unterminated block comment", `{"manifest_version": 3, "name": "Demo", "version": "1.0"} /* open`, false},
		{"trailing comma, which Chromium refuses", `{"manifest_version": 3, "name": "Demo", "version": "1.0",}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := check(t, makeZip(t, file("manifest.json", tt.manifest)), DefaultLimits())
			if res.OK() != tt.ok {
				t.Fatalf("OK = %v, want %v: %v", res.OK(), tt.ok, res.Problems)
			}
			if tt.ok && (res.Manifest.Name == "" || res.Manifest.Version != "1.0") {
				t.Errorf("manifest read as %+v", res.Manifest)
			}
		})
	}
}

func TestStandardManifestKeepsPositions(t *testing.T) {
	in := []byte("{ // a\n\"a\": /* b\n c */ 1,\n}")
	out := StandardManifest(in)
	if len(out) != len(in) || bytes.Count(out, []byte("\n")) != 3 {
		t.Fatalf("StandardManifest(%q) = %q: length or lines changed", in, out)
	}
	res := check(t, makeZip(t, file("manifest.json", string(in))), DefaultLimits())
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Message, "line 4") {
		t.Errorf("trailing comma on line 4 reported as %v", res.Problems)
	}
}

// TestVerifyReadsEachByteOnce checks the read-ahead window: verifying a
// zip of many small entries makes a few large reads, not one per entry.
func TestVerifyReadsEachByteOnce(t *testing.T) {
	entries := []entry{file("manifest.json", mv3)}
	for i := range 2000 {
		entries = append(entries, stored(fmt.Sprintf("js/%04d.js", i), strings.Repeat("y", 900)))
	}
	data := makeZip(t, entries...)
	cr := &countingReaderAt{r: bytes.NewReader(data)}
	res, err := Check(cr, int64(len(data)), DefaultLimits())
	if err != nil || !res.OK() {
		t.Fatalf("Check = %v, %v", res, err)
	}
	// The central directory is read twice: once to list the entries, once
	// more when the window passes over it.
	if n, reads := cr.n.Load(), cr.reads.Load(); n > int64(len(data))*11/10 || reads > 20 {
		t.Errorf("read %d bytes in %d reads of a %d-byte zip", n, reads, len(data))
	}
}

// BenchmarkCheckVersusUnzip measures, side by side in one run, Check of a
// 100 MiB zip (every entry inflated and its CRC checked) against `unzip -t`
// of the same file, which does the same work in C, and reports
// check/unzip-t. The goal is under 1.5.
func BenchmarkCheckVersusUnzip(b *testing.B) {
	unzip, err := exec.LookPath("unzip")
	if err != nil {
		b.Skip("unzip is missing: apt-get install -y unzip")
	}
	path := filepath.Join(b.TempDir(), "big.zip")
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	zw := zip.NewWriter(out)
	w, _ := zw.Create("manifest.json")
	io.WriteString(w, mv3)
	// Half text that compresses like scripts, half incompressible like
	// images, in 1 MiB files.
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 100 {
		w, _ := zw.Create(fmt.Sprintf("assets/%03d.bin", i))
		chunk := make([]byte, 1<<20)
		if i%2 == 0 {
			for j := range chunk {
				chunk[j] = byte(rng.Uint32())
			}
		} else {
			for j := 0; j < len(chunk); {
				j += copy(chunk[j:], fmt.Sprintf("export function f%d(x) { return x * %d; }\n", rng.IntN(1000), rng.IntN(100)))
			}
		}
		w.Write(chunk)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	size, _ := out.Seek(0, io.SeekEnd)
	b.SetBytes(size)
	var check, unzipT time.Duration
	for b.Loop() {
		t0 := time.Now()
		res, err := Check(out, size, DefaultLimits())
		check += time.Since(t0)
		if err != nil || !res.OK() {
			b.Fatalf("Check = %v, %v", res, err)
		}
		t0 = time.Now()
		if msg, err := exec.Command(unzip, "-tqq", path).CombinedOutput(); err != nil {
			b.Fatalf("unzip -t: %v %s", err, msg)
		}
		unzipT += time.Since(t0)
	}
	out.Close()
	b.ReportMetric(float64(check)/float64(unzipT), "check/unzip-t")
}
