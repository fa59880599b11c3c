package zipcheck

import (
	"archive/zip"
	"bytes"
	"hash/crc32"
	"io"
	"io/fs"
	"testing"
)

// hostileSeeds are zips with each kind of damage the validator must
// report, for FuzzCheck to start from.
func hostileSeeds(f *testing.F) [][]byte {
	body := "console.log('betaport');"
	flipped := makeZip(f, file("manifest.json", mv3), stored("a.js", "MARK"+body))
	flipped[bytes.Index(flipped, []byte("MARK"))] ^= 1
	comp := deflate(f, make([]byte, 1<<20))
	bomb := makeZip(f, file("manifest.json", mv3), entry{name: "bomb.bin", body: string(comp),
		raw: &zip.FileHeader{Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(make([]byte, 10)), CompressedSize64: uint64(len(comp)), UncompressedSize64: 10}})
	link := &zip.FileHeader{Name: "escape", Method: zip.Store, CRC32: crc32.ChecksumIEEE([]byte("../../x")), CompressedSize64: 7, UncompressedSize64: 7}
	link.SetMode(fs.ModeSymlink | 0o777)
	return [][]byte{
		makeZip(f, file("manifest.json", mv3), file("a.js", body), dir("js/")),
		makeZip(f, file("ext/manifest.json", mv2), file("ext/a.js", body)),
		makeZip(f, file("manifest.json", "\xef\xbb\xbf// c\n"+mv3)),
		makeZip(f, file("manifest.json", "/* c */{\"manifest_version\": 3, \"name\": \"x\", \"version\": \"65535.65535.65535.65535\"}")),
		makeZip(f, file("manifest.json", mv3), entry{name: "escape", body: "../../x", raw: link}),
		makeZip(f, file("manifest.json", mv3), file("../evil.js", ""), file(`a\b`, "")),
		flipped, bomb, nil, []byte("PK\x03\x04"),
	}
}

// FuzzStandardManifest: removing comments keeps every byte offset and line
// break, and leaves comment-free JSON as it was.
func FuzzStandardManifest(f *testing.F) {
	for _, s := range []string{mv3, "// a\n" + mv3, `{"a": "/* x */"} /* y */`, `{"a": "\"//"}`, "/* open", "\xef\xbb\xbf{}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out := StandardManifest(data)
		in := bytes.TrimPrefix(data, bom)
		if len(out) != len(in) {
			t.Fatalf("length %d → %d", len(in), len(out))
		}
		for i := range in {
			if (in[i] == '\n') != (out[i] == '\n') {
				t.Fatalf("line break moved at %d", i)
			}
		}
		if !bytes.Contains(in, []byte("/")) && !bytes.Equal(in, out) {
			t.Fatalf("changed JSON without comments")
		}
		_, _ = io.Discard.Write(out)
	})
}
