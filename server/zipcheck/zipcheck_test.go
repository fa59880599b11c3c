package zipcheck

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/betaport/betaport/server/crx"
)

const (
	mv3 = `{"manifest_version": 3, "name": "Demo", "version": "1.0.0"}`
	mv2 = `{"manifest_version": 2, "name": "Old demo", "version": "0.9"}`
)

// entry is one zip entry for makeZip. With raw set, fh is written with
// CreateRaw and body as the already-compressed data, so tests can declare
// sizes, flags and methods that archive/zip would never write.
type entry struct {
	name   string
	body   string
	method uint16
	raw    *zip.FileHeader
}

func file(name, body string) entry { return entry{name: name, body: body, method: zip.Deflate} }
func stored(name, body string) entry {
	return entry{name: name, body: body, method: zip.Store}
}
func dir(name string) entry { return entry{name: name} }

func makeZip(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		var w io.Writer
		var err error
		if e.raw != nil {
			fh := *e.raw
			fh.Name = e.name
			w, err = zw.CreateRaw(&fh)
		} else {
			w, err = zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: e.method})
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func deflate(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, flate.BestCompression)
	fw.Write(b)
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func check(t testing.TB, data []byte, lim Limits) *Result {
	t.Helper()
	res, err := Check(bytes.NewReader(data), int64(len(data)), lim)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	for _, p := range res.Problems {
		if p.Message == "" || !strings.HasSuffix(p.Message, ".") {
			t.Errorf("problem %s at %q: message %q is not a sentence", p.Code, p.Path, p.Message)
		}
	}
	return res
}

// found lists problems as "code path", sorted, for comparison.
func found(res *Result) []string {
	var out []string
	for _, p := range res.Problems {
		out = append(out, p.Code+" "+p.Path)
	}
	slices.Sort(out)
	return out
}

func TestCheckValid(t *testing.T) {
	tests := []struct {
		name    string
		zip     []byte
		files   int
		prefix  string
		mv      int
		extName string
		version string
	}{
		{"mv3", makeZip(t, file("manifest.json", mv3), file("background.js", "x()"), dir("icons/"), stored("icons/a.png", "png")),
			3, "", 3, "Demo", "1.0.0"},
		{"mv2", makeZip(t, stored("manifest.json", mv2), file("popup.html", "<p>")),
			2, "", 2, "Old demo", "0.9"},
		{"byte order mark", makeZip(t, file("manifest.json", "\ufeff"+mv3)),
			1, "", 3, "Demo", "1.0.0"},
		{"top folder", makeZip(t, dir("ext/"), file("ext/manifest.json", mv3), dir("ext/js/"), file("ext/js/a.js", "a")),
			2, "ext/", 3, "Demo", "1.0.0"},
		{"top folder without its entry", makeZip(t, file("ext/manifest.json", mv3), file("ext/js/a.js", "a")),
			2, "ext/", 3, "Demo", "1.0.0"},
		{"root manifest beside folders", makeZip(t, file("a/x.js", "x"), file("manifest.json", mv3)),
			2, "", 3, "Demo", "1.0.0"},
		{"tiny compressible files", makeZip(t, file("manifest.json", mv3), file("pad.txt", strings.Repeat(" ", 100_000))),
			2, "", 3, "Demo", "1.0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := check(t, tt.zip, DefaultLimits())
			if !res.OK() {
				t.Fatalf("problems: %v", res.Problems)
			}
			m := res.Manifest
			if res.FileCount != tt.files || res.Prefix != tt.prefix || m.ManifestVersion != tt.mv || m.Name != tt.extName || m.Version != tt.version {
				t.Errorf("got files=%d prefix=%q mv=%d name=%q version=%q", res.FileCount, res.Prefix, m.ManifestVersion, m.Name, m.Version)
			}
			if !json.Valid(m.Raw) || bytes.HasPrefix(m.Raw, bom) {
				t.Errorf("Raw = %q", m.Raw)
			}
		})
	}
}

func TestCheckProblems(t *testing.T) {
	valid := makeZip(t, file("manifest.json", mv3), file("a.js", "a"))
	zeros := strings.Repeat("\x00", 4<<20)
	big := 2 << 20
	tests := []struct {
		name string
		zip  []byte
		lim  Limits
		want []string // "code path", any order
	}{
		// Whole zip.
		{"random bytes", []byte("this is not a zip, just some text that is long enough"), Limits{}, []string{"not_a_zip "}},
		{"empty", nil, Limits{}, []string{"not_a_zip "}},
		{"truncated half", valid[:len(valid)/2], Limits{}, []string{"not_a_zip "}},
		{"truncated end", valid[:len(valid)-1], Limits{}, []string{"not_a_zip "}},
		{"central directory cut", append(slices.Clone(valid[:len(valid)-40]), valid[len(valid)-22:]...), Limits{}, []string{"not_a_zip "}},
		{"too large", valid, Limits{MaxZipSize: 100}, []string{"too_large "}},
		{"too many entries", makeZip(t, file("manifest.json", mv3), file("a", ""), file("b", ""), dir("c/")), Limits{MaxEntries: 3},
			[]string{"too_many_entries "}},

		// Names.
		{"absolute", makeZip(t, file("manifest.json", mv3), file("/etc/passwd", "")), Limits{}, []string{"path_absolute /etc/passwd"}},
		{"drive slash", makeZip(t, file("manifest.json", mv3), file("C:/x.js", "")), Limits{}, []string{"path_absolute C:/x.js"}},
		{"drive backslash", makeZip(t, file("manifest.json", mv3), file(`C:\x.js`, "")), Limits{},
			[]string{`path_absolute C:\x.js`, `path_backslash C:\x.js`}},
		{"traversal", makeZip(t, file("manifest.json", mv3), file("../evil.js", "")), Limits{}, []string{"path_traversal ../evil.js"}},
		{"traversal inside", makeZip(t, file("manifest.json", mv3), file("a/../../evil.js", "")), Limits{}, []string{"path_traversal a/../../evil.js"}},
		{"traversal by backslash", makeZip(t, file("manifest.json", mv3), file(`a\..\..\evil.js`, "")), Limits{},
			[]string{`path_backslash a\..\..\evil.js`, `path_traversal a\..\..\evil.js`}},
		{"backslash", makeZip(t, file("manifest.json", mv3), file(`js\a.js`, "")), Limits{}, []string{`path_backslash js\a.js`}},
		{"empty segment", makeZip(t, file("manifest.json", mv3), file("a//b.js", "")), Limits{}, []string{"path_invalid a//b.js"}},
		{"empty folder segment", makeZip(t, file("manifest.json", mv3), dir("a//")), Limits{}, []string{"path_invalid a//"}},
		{"dot segment", makeZip(t, file("manifest.json", mv3), file("a/./b.js", "")), Limits{}, []string{"path_invalid a/./b.js"}},
		{"empty name", makeZip(t, file("manifest.json", mv3), file("", "")), Limits{}, []string{"path_invalid "}},
		{"nul", makeZip(t, file("manifest.json", mv3), file("a\x00.js", "")), Limits{}, []string{"path_invalid a\x00.js"}},
		{"newline", makeZip(t, file("manifest.json", mv3), file("a\n.js", "")), Limits{}, []string{"path_invalid a\n.js"}},
		{"not utf-8", makeZip(t, file("manifest.json", mv3), file("caf\xe9.js", "")), Limits{}, []string{"path_invalid caf\xe9.js"}},
		{"duplicate", makeZip(t, file("manifest.json", mv3), file("a.js", "1"), file("a.js", "2")), Limits{}, []string{"duplicate_entry a.js"}},
		{"file and folder", makeZip(t, file("manifest.json", mv3), file("a", "1"), dir("a/")), Limits{}, []string{"duplicate_entry a/"}},
		{"duplicate manifest", makeZip(t, file("manifest.json", mv3), file("manifest.json", mv2)), Limits{}, []string{"duplicate_entry manifest.json"}},

		// Entries.
		{"encrypted", makeZip(t, file("manifest.json", mv3),
			entry{name: "secret.js", body: "xxxxxxxxxxxxxxxx", raw: &zip.FileHeader{Method: zip.Deflate, Flags: 0x1, CompressedSize64: 16, UncompressedSize64: 4}}),
			Limits{}, []string{"encrypted_entry secret.js"}},
		{"encrypted manifest", makeZip(t,
			entry{name: "manifest.json", body: "xxxxxxxxxxxxxxxx", raw: &zip.FileHeader{Method: zip.Store, Flags: 0x1, CompressedSize64: 16, UncompressedSize64: 4}}),
			Limits{}, []string{"encrypted_entry manifest.json"}},
		{"bzip2", makeZip(t, file("manifest.json", mv3),
			entry{name: "a.js", body: "BZh9", raw: &zip.FileHeader{Method: 12, CompressedSize64: 4, UncompressedSize64: 4}}),
			Limits{}, []string{"unsupported_compression a.js"}},

		// Expansion, from real data: 4 MiB of zeros deflate about 1000 to 1.
		{"real zeros too large", makeZip(t, file("manifest.json", mv3), file("zeros.bin", zeros)), Limits{MaxTotalUncompressed: 1 << 20, MaxEntryRatio: 2000, MaxTotalRatio: 2000},
			[]string{"expansion_too_large "}},
		{"real zeros ratio", makeZip(t, file("manifest.json", mv3), file("zeros.bin", zeros)), Limits{},
			[]string{"expansion_ratio ", "expansion_ratio zeros.bin"}},
		{"small entries are not ratio checked", makeZip(t, file("manifest.json", mv3), file("a.bin", zeros[:big/2-1]), file("b.bin", zeros[:big/2-1])), Limits{},
			[]string{"expansion_ratio "}},
		// Expansion, from declared sizes: 5 GiB in 10 bytes.
		{"declared bomb", makeZip(t, file("manifest.json", mv3),
			entry{name: "bomb.bin", body: "0123456789", raw: &zip.FileHeader{Method: zip.Deflate, CompressedSize64: 10, UncompressedSize64: 5 << 30}}),
			Limits{}, []string{"expansion_ratio ", "expansion_ratio bomb.bin", "expansion_too_large "}},
		// Claiming more compressed bytes than the file holds does not help.
		{"lying compressed size", makeZip(t, file("manifest.json", mv3),
			entry{name: "bomb.bin", body: "0123456789", raw: &zip.FileHeader{Method: zip.Deflate, CompressedSize64: 1 << 40, UncompressedSize64: 500 << 20}}),
			Limits{}, []string{"expansion_ratio ", "expansion_ratio bomb.bin"}},

		// Manifest location.
		{"no manifest", makeZip(t, file("a.js", "")), Limits{}, []string{"manifest_missing "}},
		{"no entries", makeZip(t), Limits{}, []string{"manifest_missing "}},
		{"manifest two levels down", makeZip(t, file("a/b/manifest.json", mv3), file("a/b/x.js", "")), Limits{}, []string{"manifest_missing "}},
		{"sibling top folders", makeZip(t, file("ext/manifest.json", mv3), file("other/x.js", "")), Limits{}, []string{"manifest_missing "}},
		{"macOS junk folder", makeZip(t, file("ext/manifest.json", mv3), file("__MACOSX/ext/._manifest.json", "")), Limits{}, []string{"manifest_missing "}},
		{"top folder and root file", makeZip(t, file("ext/manifest.json", mv3), file("x.js", "")), Limits{}, []string{"manifest_missing "}},
		{"manifest is a folder", makeZip(t, dir("manifest.json/")), Limits{}, []string{"manifest_missing "}},

		// Manifest content.
		{"manifest too large", makeZip(t, stored("manifest.json", `{"name":"`+strings.Repeat("a", big)+`"}`)), Limits{}, []string{"manifest_too_large manifest.json"}},
		{"manifest checksum", corruptStored(t, "manifest.json", mv3), Limits{}, []string{"manifest_corrupt manifest.json"}},
		{"manifest not json", makeZip(t, file("manifest.json", "{nope")), Limits{}, []string{"manifest_invalid_json manifest.json"}},
		{"manifest trailing data", makeZip(t, file("manifest.json", mv3+"}")), Limits{}, []string{"manifest_invalid_json manifest.json"}},
		{"manifest array", makeZip(t, file("manifest.json", "[1]")), Limits{}, []string{"manifest_invalid_json manifest.json"}},
		{"manifest null", makeZip(t, file("manifest.json", "null")), Limits{}, []string{"manifest_invalid_json manifest.json"}},
		{"manifest empty", makeZip(t, file("manifest.json", "")), Limits{}, []string{"manifest_invalid_json manifest.json"}},
		{"manifest latin-1", makeZip(t, file("manifest.json", "{\"manifest_version\":3,\"name\":\"caf\xe9\",\"version\":\"1\"}")), Limits{}, []string{"manifest_invalid_json manifest.json"}},
		{"manifest_version missing", makeZip(t, file("manifest.json", `{"name":"a","version":"1"}`)), Limits{}, []string{"manifest_version manifest.json"}},
		{"manifest_version 4", makeZip(t, file("manifest.json", `{"manifest_version":4,"name":"a","version":"1"}`)), Limits{}, []string{"manifest_version manifest.json"}},
		{"manifest_version string", makeZip(t, file("manifest.json", `{"manifest_version":"3","name":"a","version":"1"}`)), Limits{}, []string{"manifest_version manifest.json"}},
		{"manifest_version 3.0", makeZip(t, file("manifest.json", `{"manifest_version":3.0,"name":"a","version":"1"}`)), Limits{}, []string{"manifest_version manifest.json"}},
		{"name missing", makeZip(t, file("manifest.json", `{"manifest_version":3,"version":"1"}`)), Limits{}, []string{"manifest_name manifest.json"}},
		{"name empty", makeZip(t, file("manifest.json", `{"manifest_version":3,"name":" ","version":"1"}`)), Limits{}, []string{"manifest_name manifest.json"}},
		{"name number", makeZip(t, file("manifest.json", `{"manifest_version":3,"name":7,"version":"1"}`)), Limits{}, []string{"manifest_name manifest.json"}},
		{"version missing", makeZip(t, file("manifest.json", `{"manifest_version":3,"name":"a"}`)), Limits{}, []string{"manifest_version_format manifest.json"}},
		{"version number", makeZip(t, file("manifest.json", `{"manifest_version":3,"name":"a","version":1}`)), Limits{}, []string{"manifest_version_format manifest.json"}},
		{"version bad", makeZip(t, file("manifest.json", `{"manifest_version":3,"name":"a","version":"1.0-beta"}`)), Limits{}, []string{"manifest_version_format manifest.json"}},
		{"version all zero", makeZip(t, file("manifest.json", `{"manifest_version":3,"name":"a","version":"0.0.0.0"}`)), Limits{}, []string{"manifest_version_format manifest.json"}},
		{"version zero", makeZip(t, file("manifest.json", `{"manifest_version":3,"name":"a","version":"0"}`)), Limits{}, []string{"manifest_version_format manifest.json"}},
		{"problems under top folder", makeZip(t, file("ext/manifest.json", `{"manifest_version":3,"name":"a","version":"01"}`)), Limits{},
			[]string{"manifest_version_format ext/manifest.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := check(t, tt.zip, tt.lim)
			slices.Sort(tt.want)
			if got := found(res); !slices.Equal(got, tt.want) {
				t.Errorf("problems:\n got %q\nwant %q\n%v", got, tt.want, res.Problems)
			}
			if res.OK() {
				t.Error("OK() with problems expected")
			}
		})
	}
}

// corruptStored returns a zip whose stored entry name holds body with one
// byte changed, so that its checksum fails.
func corruptStored(t *testing.T, name, body string) []byte {
	data := makeZip(t, stored(name, body))
	i := bytes.Index(data, []byte(body))
	data[i+1] ^= 0x20
	return data
}

func TestCheckReportsEveryProblem(t *testing.T) {
	data := makeZip(t,
		file("manifest.json", `{"manifest_version":1,"name":"","version":"1..2"}`),
		file(`js\a.js`, ""),
		file("../up.js", ""),
		file("b.js", ""), file("b.js", ""),
		entry{name: "locked.js", body: "xxxx", raw: &zip.FileHeader{Method: zip.Store, Flags: 0x1, CompressedSize64: 4, UncompressedSize64: 4}},
		entry{name: "odd.js", body: "xxxx", raw: &zip.FileHeader{Method: 14, CompressedSize64: 4, UncompressedSize64: 4}},
		entry{name: "bomb.bin", body: "0123456789", raw: &zip.FileHeader{Method: zip.Deflate, CompressedSize64: 10, UncompressedSize64: 2 << 30}},
	)
	res := check(t, data, DefaultLimits())
	want := []string{
		"duplicate_entry b.js",
		"encrypted_entry locked.js",
		"expansion_ratio ",
		"expansion_ratio bomb.bin",
		"expansion_too_large ",
		"manifest_name manifest.json",
		"manifest_version manifest.json",
		"manifest_version_format manifest.json",
		`path_backslash js\a.js`,
		"path_traversal ../up.js",
		"unsupported_compression odd.js",
	}
	if got := found(res); !slices.Equal(got, want) {
		t.Errorf("problems:\n got %q\nwant %q", got, want)
	}
	// Problems are JSON for the API: stable keys, [] rather than null.
	b, _ := json.Marshal(res.Problems[0])
	if !bytes.HasPrefix(b, []byte(`{"code":`)) {
		t.Errorf("JSON %s", b)
	}
	b, _ = json.Marshal(check(t, makeZip(t, file("manifest.json", mv3)), Limits{}))
	if !bytes.Contains(b, []byte(`"problems":[]`)) || bytes.Contains(b, []byte(`"Raw"`)) {
		t.Errorf("JSON %s", b)
	}
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r     io.ReaderAt
	n     atomic.Int64 // bytes
	reads atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	c.reads.Add(1)
	return n, err
}

// TestReadsLittle checks that Check reads each byte of a zip about once,
// and no more than its central directory and the read-ahead window when the
// cheap checks already failed.
func TestReadsLittle(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, 3<<20) // incompressible, so the zip is big
	for i := range noise {
		noise[i] = byte(rnd.Uint32())
	}
	longManifest := `{"manifest_version":3,"name":"` + fmt.Sprintf("%x", noise[:1<<20]) + `","version":"1"}`
	lieAbout := func(body []byte, method uint16, data []byte) entry {
		return entry{name: "manifest.json", body: string(data), raw: &zip.FileHeader{
			Method: method, CRC32: crc32.ChecksumIEEE(body), CompressedSize64: uint64(len(data)), UncompressedSize64: 100}}
	}
	tests := []struct {
		name string
		zip  []byte
		lim  Limits
		want string
		most int64 // bytes read, at most
	}{
		{"zip over the limit is not read", makeZip(t, stored("manifest.json", mv3), stored("noise", string(noise))), Limits{MaxZipSize: 1 << 20}, "too_large ", 0},
		{"other entries are read once", makeZip(t, stored("manifest.json", mv3), stored("noise", string(noise))), Limits{}, "", 3<<20 + 64<<10},
		{"large manifest is not read", makeZip(t, stored("manifest.json", longManifest)), Limits{}, "manifest_too_large manifest.json", 64 << 10},
		{"stored manifest longer than declared", makeZip(t, lieAbout([]byte(longManifest), zip.Store, []byte(longManifest))), Limits{}, "manifest_corrupt manifest.json", readAheadSize + 64<<10},
		{"deflated manifest longer than declared", makeZip(t, lieAbout([]byte(longManifest), zip.Deflate, deflate(t, []byte(longManifest)))), Limits{}, "manifest_corrupt manifest.json", readAheadSize + 64<<10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr := &countingReaderAt{r: bytes.NewReader(tt.zip)}
			res, err := Check(cr, int64(len(tt.zip)), tt.lim)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{tt.want}
			if tt.want == "" {
				want = nil
			}
			if got := found(res); !slices.Equal(got, want) {
				t.Errorf("problems %q, want %q", got, want)
			}
			if n := cr.n.Load(); n > tt.most {
				t.Errorf("read %d bytes of a %d-byte zip", n, len(tt.zip))
			}
		})
	}
}

var errDisk = errors.New("disk on fire")

// failingReaderAt fails every read at the offsets fail selects.
type failingReaderAt struct {
	r     io.ReaderAt
	fail  func(off int64) bool
	fails atomic.Int64
}

func (f *failingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if f.fail(off) {
		f.fails.Add(1)
		return 0, errDisk
	}
	return f.r.ReadAt(p, off)
}

func TestCheckIOError(t *testing.T) {
	// The padding makes the zip longer than the 1 KiB archive/zip reads
	// first to find the end record, so only the manifest lives at offset 0.
	pad := strings.Repeat("0123456789abcdef", 256)
	data := makeZip(t, stored("manifest.json", mv3), stored("pad", pad))
	tests := []struct {
		name string
		fail func(off int64) bool
	}{
		{"every read", func(int64) bool { return true }},
		{"central directory", func(off int64) bool { return off > 0 }},
		{"manifest only", func(off int64) bool { return off == 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr := &failingReaderAt{r: bytes.NewReader(data), fail: tt.fail}
			res, err := Check(fr, int64(len(data)), DefaultLimits())
			if !errors.Is(err, errDisk) || res != nil {
				t.Fatalf("Check = %v, %v; want the I/O error", res, err)
			}
			if fr.fails.Load() == 0 {
				t.Fatal("the failing read never happened")
			}
			var out bytes.Buffer
			if err := Normalize(&out, fr, int64(len(data)), ""); !errors.Is(err, errDisk) || errors.Is(err, zip.ErrFormat) {
				t.Errorf("Normalize = %v; want the I/O error alone", err)
			}
		})
	}
	if _, err := Check(bytes.NewReader(data), -1, DefaultLimits()); err == nil {
		t.Error("negative size accepted")
	}
}

// TestInsecurePathGODEBUG checks that archive/zip's own refusal of such
// names (opt-in today, maybe default one day) does not turn them into
// not_a_zip: the reader is still usable and our checks say more.
func TestInsecurePathGODEBUG(t *testing.T) {
	t.Setenv("GODEBUG", "zipinsecurepath=0")
	data := makeZip(t, file("manifest.json", mv3), file("../x.js", ""))
	if _, err := zip.NewReader(bytes.NewReader(data), int64(len(data))); !errors.Is(err, zip.ErrInsecurePath) {
		t.Fatalf("precondition: zip.NewReader = %v, want ErrInsecurePath", err)
	}
	res := check(t, data, DefaultLimits())
	if got, want := found(res), []string{"path_traversal ../x.js"}; !slices.Equal(got, want) {
		t.Errorf("problems %q, want %q", got, want)
	}
	var out bytes.Buffer
	if err := Normalize(&out, bytes.NewReader(data), int64(len(data)), ""); err != nil {
		t.Errorf("Normalize: %v", err)
	}
}

// contents maps entry names to their uncompressed bytes.
func contents(t *testing.T, data []byte) (map[string]string, []*zip.File) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		m[f.Name] = string(b)
	}
	return m, zr.File
}

func TestNormalize(t *testing.T) {
	entries := []entry{
		dir("ext/"),
		file("ext/manifest.json", mv3),
		dir("ext/js/"),
		file("ext/js/a.js", strings.Repeat("console.log(1);\n", 100)),
		stored("ext/icon.png", "\x89PNG"),
		// Written with a data descriptor, as streaming zip tools do.
		entry{name: "ext/dd.txt", body: string(deflate(t, []byte("descriptor"))), raw: &zip.FileHeader{
			Method: zip.Deflate, Flags: 0x8, CRC32: crc32.ChecksumIEEE([]byte("descriptor")),
			CompressedSize64: uint64(len(deflate(t, []byte("descriptor")))), UncompressedSize64: 10}},
	}
	data := makeZip(t, entries...)
	res := check(t, data, DefaultLimits())
	if !res.OK() || res.Prefix != "ext/" || res.FileCount != 4 {
		t.Fatalf("Check: prefix %q, %d files, %v", res.Prefix, res.FileCount, res.Problems)
	}
	var out bytes.Buffer
	if err := Normalize(&out, bytes.NewReader(data), int64(len(data)), res.Prefix); err != nil {
		t.Fatal(err)
	}

	again := check(t, out.Bytes(), DefaultLimits())
	if !again.OK() || again.Prefix != "" || again.FileCount != res.FileCount || again.Manifest.Name != "Demo" {
		t.Fatalf("re-Check: prefix %q, %d files, %v", again.Prefix, again.FileCount, again.Problems)
	}
	before, srcFiles := contents(t, data)
	after, outFiles := contents(t, out.Bytes())
	want := map[string]string{}
	for name, body := range before {
		if name != "ext/" {
			want[strings.TrimPrefix(name, "ext/")] = body
		}
	}
	if fmt.Sprint(after) != fmt.Sprint(want) {
		t.Errorf("normalised contents\n got %q\nwant %q", after, want)
	}
	// Copied raw: same method, same compressed bytes, same checksum; the
	// sizes move from a data descriptor into the local header.
	for i, f := range outFiles {
		src := srcFiles[i+1] // the "ext/" entry was dropped
		if f.Method != src.Method || f.CompressedSize64 != src.CompressedSize64 || f.CRC32 != src.CRC32 || f.Flags != src.Flags&^0x8 {
			t.Errorf("%s: method %d size %d crc %x flags %x; source %d %d %x %x",
				f.Name, f.Method, f.CompressedSize64, f.CRC32, f.Flags, src.Method, src.CompressedSize64, src.CRC32, src.Flags)
		}
	}

	// Without a prefix the zip is copied as it is.
	out.Reset()
	if err := Normalize(&out, bytes.NewReader(data), int64(len(data)), ""); err != nil {
		t.Fatal(err)
	}
	if same, _ := contents(t, out.Bytes()); fmt.Sprint(same) != fmt.Sprint(before) {
		t.Errorf("copy changed the contents: %q", same)
	}
}

func TestNormalizeRefuses(t *testing.T) {
	data := makeZip(t, file("ext/manifest.json", mv3), file("other/a.js", ""))
	for _, prefix := range []string{"ext", "ext/js/", "/", "../", `a\b/`, "other/"} {
		if err := Normalize(io.Discard, bytes.NewReader(data), int64(len(data)), prefix); err == nil {
			t.Errorf("prefix %q accepted", prefix)
		}
	}
	if err := Normalize(io.Discard, bytes.NewReader([]byte("no zip")), 6, ""); !errors.Is(err, zip.ErrFormat) {
		t.Errorf("not a zip: %v, want zip.ErrFormat", err)
	}
	// An entry whose data runs past the end fails Check as damaged, and
	// Normalize, given it anyway, as a damaged zip, not as I/O.
	short := makeZip(t, file("manifest.json", mv3),
		entry{name: "long.bin", body: "abc", raw: &zip.FileHeader{Method: zip.Store, CompressedSize64: 1000, UncompressedSize64: 1000}})
	if got := found(check(t, short, DefaultLimits())); !slices.Equal(got, []string{"entry_corrupt long.bin"}) {
		t.Fatalf("Check: %q, want the entry reported as corrupt", got)
	}
	if err := Normalize(io.Discard, bytes.NewReader(short), int64(len(short)), ""); !errors.Is(err, zip.ErrFormat) {
		t.Errorf("short entry: %v, want zip.ErrFormat", err)
	}
}

func TestLimitsDefaults(t *testing.T) {
	if got := (Limits{}).withDefaults(); got != DefaultLimits() {
		t.Errorf("zero Limits = %+v", got)
	}
	if got := (Limits{MaxEntries: -1, MaxTotalRatio: 5}).withDefaults(); got.MaxEntries != 10_000 || got.MaxTotalRatio != 5 {
		t.Errorf("got %+v", got)
	}
}

func validSeeds(t testing.TB) [][]byte {
	return [][]byte{
		makeZip(t, file("manifest.json", mv3), file("a.js", "a")),
		makeZip(t, stored("manifest.json", mv2)),
		makeZip(t, dir("ext/"), file("ext/manifest.json", mv3), stored("ext/b.js", "b")),
	}
}

// FuzzCheck checks that Check never panics, never fails on a reader that
// cannot fail, and that a zip it passes is really fine: Normalize copies it
// (or finds a damaged entry Check did not read), and the copy passes too.
func FuzzCheck(f *testing.F) {
	for _, s := range validSeeds(f) {
		f.Add(s)
	}
	for _, s := range hostileSeeds(f) {
		f.Add(s)
	}
	for _, c := range layoutCases() {
		f.Add(c.zip)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Check(bytes.NewReader(data), int64(len(data)), DefaultLimits())
		if err != nil || res == nil {
			t.Fatalf("Check = %v, %v", res, err)
		}
		if !res.OK() {
			for _, p := range res.Problems {
				if p.Code == "" || p.Message == "" {
					t.Fatalf("empty problem %+v", p)
				}
			}
			return
		}
		m := res.Manifest
		if (m.ManifestVersion != 2 && m.ManifestVersion != 3) || strings.TrimSpace(m.Name) == "" || !crx.ValidVersion(m.Version) || !json.Valid(m.Raw) {
			t.Fatalf("no problems, but manifest %+v", m)
		}
		var out bytes.Buffer
		if err := Normalize(&out, bytes.NewReader(data), int64(len(data)), res.Prefix); err != nil {
			if !errors.Is(err, zip.ErrFormat) {
				t.Fatalf("Normalize: %v", err)
			}
			return
		}
		again, err := Check(bytes.NewReader(out.Bytes()), int64(out.Len()), DefaultLimits())
		if err != nil || !again.OK() || again.Prefix != "" || again.FileCount != res.FileCount ||
			again.Manifest.Name != m.Name || again.Manifest.Version != m.Version {
			t.Fatalf("normalised copy: %v, %+v (first check %+v)", err, again, res)
		}
	})
}

func BenchmarkCheck(b *testing.B) {
	entries := []entry{file("manifest.json", mv3)}
	for i := range 5000 {
		entries = append(entries, file(fmt.Sprintf("js/module%04d.js", i), fmt.Sprintf("export const n = %d;\n", i)))
	}
	data := makeZip(b, entries...)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := Check(bytes.NewReader(data), int64(len(data)), DefaultLimits())
		if err != nil || !res.OK() || res.FileCount != 5001 {
			b.Fatalf("Check = %v, %v", res, err)
		}
	}
}
