package zipcheck

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"testing"

	"github.com/betaport/betaport/server/zipcheck/ziptest"
)

// localSays is e with its local header changed by edit: the central
// directory still says what e says.
func localSays(e ziptest.Entry, edit func(h *ziptest.Header)) ziptest.Entry {
	h := e.Central
	if h.Flags&ziptest.FlagDescriptor != 0 {
		h.CRC32, h.CompressedSize, h.UncompressedSize = 0, 0, 0
	}
	edit(&h)
	e.Local = &h
	return e
}

// layoutCases are zips that archive/zip reads as a valid extension, and
// that say something else to an extractor reading local headers.
func layoutCases() []struct {
	name string
	zip  []byte
	want []string
} {
	manifest := ziptest.Deflated("manifest.json", mv3)
	good := ziptest.Deflated("aaaaaaaaaa.js", "console.log('good')")
	java := ziptest.JavaFile("aaaaaaaaaa.js", "console.log('good')")
	evil := ziptest.Stored("../../evil.js", "alert('pwned')")
	hidden := append(ziptest.LocalHeader(evil.Central), evil.Data...)
	at := func(n uint32) *uint32 { return &n }
	crxHeader := append([]byte("Cr24\x03\x00\x00\x00\x04\x00\x00\x00"), "abcd"...)

	return []struct {
		name string
		zip  []byte
		want []string
	}{
		{"local name climbs out", ziptest.Zip(manifest, localSays(good, func(h *ziptest.Header) { h.Name = "../../evil.js" })),
			[]string{"header_mismatch aaaaaaaaaa.js"}},
		{"local name of the same length", ziptest.Zip(manifest, localSays(good, func(h *ziptest.Header) { h.Name = "bbbbbbbbbb.js" })),
			[]string{"header_mismatch aaaaaaaaaa.js"}},
		{"manifest named otherwise locally", ziptest.Zip(localSays(manifest, func(h *ziptest.Header) { h.Name = "manifest.jsoN" }), good),
			[]string{"header_mismatch manifest.json"}},
		{"local method", ziptest.Zip(manifest, localSays(good, func(h *ziptest.Header) { h.Method = ziptest.Store })),
			[]string{"header_mismatch aaaaaaaaaa.js"}},
		{"local CRC", ziptest.Zip(manifest, localSays(good, func(h *ziptest.Header) { h.CRC32++ })),
			[]string{"header_mismatch aaaaaaaaaa.js"}},
		{"local compressed size", ziptest.Zip(manifest, localSays(good, func(h *ziptest.Header) { h.CompressedSize-- })),
			[]string{"header_mismatch aaaaaaaaaa.js"}},
		{"local size", ziptest.Zip(manifest, localSays(good, func(h *ziptest.Header) { h.UncompressedSize += 100 })),
			[]string{"header_mismatch aaaaaaaaaa.js"}},
		{"encrypted locally", ziptest.Zip(manifest, localSays(good, func(h *ziptest.Header) { h.Flags |= 1 })),
			[]string{"header_mismatch aaaaaaaaaa.js"}},
		{"local sizes beside a descriptor", ziptest.Zip(manifest, localSays(java, func(h *ziptest.Header) { h.UncompressedSize = 5 })),
			[]string{"header_mismatch aaaaaaaaaa.js"}},
		{"descriptor CRC", ziptest.Zip(manifest, func() ziptest.Entry {
			e := java
			h := e.Central
			h.CRC32 ^= 1
			e.Descriptor = ziptest.Descriptor(h)
			return e
		}()), []string{"header_mismatch aaaaaaaaaa.js"}},
		{"descriptor sizes", ziptest.Zip(manifest, func() ziptest.Entry {
			e := java
			h := e.Central
			h.UncompressedSize++
			e.Descriptor = ziptest.Descriptor(h)
			return e
		}()), []string{"header_mismatch aaaaaaaaaa.js"}},
		{"no descriptor where one is announced", ziptest.Zip(manifest, func() ziptest.Entry {
			e := java
			e.Descriptor = nil
			return e
		}()), []string{"header_mismatch aaaaaaaaaa.js"}},
		{"directory points at no local header", ziptest.Zip(manifest, func() ziptest.Entry {
			e := good
			e.Offset = at(3)
			return e
		}()), []string{"header_mismatch aaaaaaaaaa.js"}},
		{"entry hidden between two entries", ziptest.Zip(func() ziptest.Entry {
			e := manifest
			e.After = hidden
			return e
		}(), good), []string{"zip_layout aaaaaaaaaa.js"}},
		{"entry hidden before the directory", ziptest.Zip(manifest, func() ziptest.Entry {
			e := good
			e.After = hidden
			return e
		}()), []string{"zip_layout "}},
		{"entry hidden at the start", ziptest.Archive{Entries: []ziptest.Entry{manifest, good}, Leading: hidden}.Bytes(),
			[]string{"zip_layout "}},
		{"a CRX uploaded as a zip", ziptest.Archive{Entries: []ziptest.Entry{manifest, good}, Leading: crxHeader}.Bytes(),
			[]string{"zip_layout "}},
		{"entry inside another", func() []byte {
			inner := ziptest.Stored("b.js", "console.log('b')")
			outer := ziptest.Stored("a.bin", string(append(ziptest.LocalHeader(inner.Central), inner.Data...)))
			inner.CentralOnly = true
			inner.Offset = at(uint32(len(ziptest.LocalHeader(manifest.Central)) + len(manifest.Data) + len(ziptest.LocalHeader(outer.Central))))
			return ziptest.Zip(manifest, outer, inner)
		}(), []string{"zip_layout b.js"}},
	}
}

// TestCheckRefusesLocalHeadersThatDisagree: a zip whose local headers say
// other than its central directory, or that holds bytes no entry accounts
// for, is refused, each problem at the entry it concerns.
func TestCheckRefusesLocalHeadersThatDisagree(t *testing.T) {
	for _, c := range layoutCases() {
		t.Run(c.name, func(t *testing.T) {
			if _, err := zip.NewReader(bytes.NewReader(c.zip), int64(len(c.zip))); err != nil {
				t.Fatalf("precondition: archive/zip cannot read the zip: %v", err)
			}
			res := check(t, c.zip, DefaultLimits())
			if got := found(res); !slices.Equal(got, c.want) {
				t.Fatalf("problems %q, want %q", got, c.want)
			}
		})
	}
}

// TestCheckAcceptsHonestLayouts: what real zip tools write passes: data
// descriptors with and without their signature, zip64 end records, a
// comment, folders stored or deflated.
func TestCheckAcceptsHonestLayouts(t *testing.T) {
	manifest := ziptest.JavaFile("manifest.json", mv3)
	noSig := ziptest.JavaFile("b.js", "b")
	noSig.Descriptor = noSig.Descriptor[4:]
	// A zip64 field in the local header (Info-ZIP's zip writing to a
	// pipe) makes the descriptor's sizes 8 bytes.
	wide := ziptest.JavaFile("c.js", "c")
	wide.Local = &ziptest.Header{Name: "c.js", Method: ziptest.Deflate, Flags: ziptest.FlagDescriptor, Extra: []byte{1, 0, 16, 0, 15: 0, 19: 0}}
	wide.Descriptor = binary.LittleEndian.AppendUint32(nil, ziptest.DescriptorSig)
	wide.Descriptor = binary.LittleEndian.AppendUint32(wide.Descriptor, wide.Central.CRC32)
	wide.Descriptor = binary.LittleEndian.AppendUint64(wide.Descriptor, uint64(wide.Central.CompressedSize))
	wide.Descriptor = binary.LittleEndian.AppendUint64(wide.Descriptor, uint64(wide.Central.UncompressedSize))
	localSizes := ziptest.JavaFile("d.js", "d")
	localSizes.Local = &localSizes.Central // sizes in both places, as some tools write
	cases := map[string][]byte{
		"java":           ziptest.Zip(manifest, ziptest.JavaFolder("js/"), ziptest.JavaFile("js/a.js", "a"), noSig, wide, localSizes),
		"stored":         ziptest.Zip(ziptest.Stored("manifest.json", mv3), ziptest.Folder("js/"), ziptest.Stored("js/a.js", "a")),
		"zip64 end":      ziptest.Archive{Entries: []ziptest.Entry{manifest, ziptest.Deflated("a.js", "a")}, Zip64End: true}.Bytes(),
		"comment":        ziptest.Archive{Entries: []ziptest.Entry{manifest}, Comment: "built by CI"}.Bytes(),
		"archive/zip":    makeZip(t, file("manifest.json", mv3), dir("js/"), stored("js/a.js", "a"), file("js/b.js", "b")),
		"one top folder": ziptest.Zip(ziptest.JavaFolder("ext/"), ziptest.JavaFile("ext/manifest.json", mv3)),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			if res := check(t, data, DefaultLimits()); !res.OK() {
				t.Fatalf("problems %v", res.Problems)
			}
			if err := agreesWhenStreamed(data); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// streamed is an entry as an extractor that reads local headers alone sees
// it.
type streamed struct {
	name         string
	method       uint16
	crc          uint32
	csize, usize uint64
	data         []byte // as stored
}

// readStreaming reads data as a streaming extractor does: local header
// after local header from the first byte, each entry's end found from its
// header's sizes or, with a data descriptor, by inflating it (stored
// entries: by looking for a descriptor that fits), until the bytes are no
// longer a local header. It returns the entries and where they ended.
func readStreaming(data []byte) ([]streamed, int, error) {
	le := binary.LittleEndian
	var out []streamed
	pos := 0
	for pos+30 <= len(data) && le.Uint32(data[pos:]) == 0x04034b50 {
		h := data[pos:]
		flags, method := le.Uint16(h[6:]), le.Uint16(h[8:])
		e := streamed{method: method, crc: le.Uint32(h[14:]), csize: uint64(le.Uint32(h[18:])), usize: uint64(le.Uint32(h[22:]))}
		n, m := int(le.Uint16(h[26:])), int(le.Uint16(h[28:]))
		if pos+30+n+m > len(data) {
			return out, pos, errors.New("local header runs past the end")
		}
		e.name = string(h[30 : 30+n])
		at := pos + 30 + n + m
		if flags&0x8 == 0 {
			if uint64(len(data)-at) < e.csize {
				return out, pos, fmt.Errorf("%s: data runs past the end", e.name)
			}
			e.data = data[at : at+int(e.csize)]
			out = append(out, e)
			pos = at + int(e.csize)
			continue
		}
		var size int
		switch method {
		case 8:
			br := bytes.NewReader(data[at:])
			if _, err := io.Copy(io.Discard, flate.NewReader(br)); err != nil {
				return out, pos, fmt.Errorf("%s: %v", e.name, err)
			}
			size = len(data) - at - br.Len()
		case 0:
			size = -1
			for i := at; i+16 <= len(data); i++ {
				if le.Uint32(data[i:]) == 0x08074b50 && int(le.Uint32(data[i+8:])) == i-at && le.Uint32(data[i+4:]) == crc32.ChecksumIEEE(data[at:i]) {
					size = i - at
					break
				}
			}
			if size < 0 {
				return out, pos, fmt.Errorf("%s: no descriptor found", e.name)
			}
		default:
			return out, pos, fmt.Errorf("%s: method %d with a descriptor", e.name, method)
		}
		e.data = data[at : at+size]
		d := data[at+size:]
		skip := 0
		if len(d) >= 4 && le.Uint32(d) == 0x08074b50 {
			skip = 4
		}
		if len(d) < skip+12 {
			return out, pos, fmt.Errorf("%s: descriptor cut", e.name)
		}
		e.crc, e.csize, e.usize = le.Uint32(d[skip:]), uint64(le.Uint32(d[skip+4:])), uint64(le.Uint32(d[skip+8:]))
		end := at + size + skip + 12
		if extra := h[30+n : 30+n+m]; len(extra) >= 4 && le.Uint16(extra) == 1 { // a zip64 field: 8-byte sizes
			if len(d) < skip+20 {
				return out, pos, fmt.Errorf("%s: descriptor cut", e.name)
			}
			e.csize, e.usize = le.Uint64(d[skip+4:]), le.Uint64(d[skip+12:])
			end = at + size + skip + 20
		}
		out = append(out, e)
		pos = end
	}
	return out, pos, nil
}

// readCentral lists a zip's entries as archive/zip reads them.
func readCentral(data []byte) ([]streamed, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	type placed struct {
		at int64
		e  streamed
	}
	var all []placed
	for _, f := range zr.File {
		raw, err := f.OpenRaw()
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(raw)
		if err != nil {
			return nil, err
		}
		at, err := f.DataOffset()
		if err != nil {
			return nil, err
		}
		all = append(all, placed{at, streamed{f.Name, f.Method, f.CRC32, f.CompressedSize64, f.UncompressedSize64, b}})
	}
	slices.SortStableFunc(all, func(a, b placed) int { return int(a.at - b.at) })
	out := make([]streamed, len(all))
	for i, p := range all {
		out[i] = p.e
	}
	return out, nil
}

// agreesWhenStreamed is the property Check promises of a zip it passes: a
// streaming extractor reads the same entries, in the order of their data,
// with the same bytes, as archive/zip reads from the central directory,
// and finds the directory right after them.
func agreesWhenStreamed(data []byte) error {
	central, err := readCentral(data)
	if err != nil {
		return fmt.Errorf("archive/zip: %v", err)
	}
	stream, end, err := readStreaming(data)
	if err != nil {
		return fmt.Errorf("streaming: %v", err)
	}
	if len(stream) != len(central) {
		return fmt.Errorf("streaming finds %d entries, the directory lists %d", len(stream), len(central))
	}
	for i := range stream {
		s, c := stream[i], central[i]
		if s.name != c.name || s.method != c.method || s.crc != c.crc || s.csize != c.csize || s.usize != c.usize || !bytes.Equal(s.data, c.data) {
			return fmt.Errorf("entry %d: streamed %q method %d crc %x %d/%d bytes; the directory says %q method %d crc %x %d/%d",
				i, s.name, s.method, s.crc, s.csize, s.usize, c.name, c.method, c.crc, c.csize, c.usize)
		}
	}
	if end+4 > len(data) || (binary.LittleEndian.Uint32(data[end:]) != 0x02014b50 && len(central) > 0) {
		return fmt.Errorf("after the entries, at byte %d, comes no directory", end)
	}
	return nil
}

// FuzzLocalHeaders mutates zips whose local headers agree with their
// central directory and zips whose do not: whatever Check passes, an
// extractor that reads local headers alone sees as Check did. Its seeds run
// with every go test; make fuzz runs it for longer.
func FuzzLocalHeaders(f *testing.F) {
	f.Add(ziptest.Zip(ziptest.JavaFile("manifest.json", mv3), ziptest.JavaFolder("js/"), ziptest.JavaFile("js/a.js", "a")))
	f.Add(ziptest.Zip(ziptest.Stored("manifest.json", mv3), ziptest.Deflated("a.js", "a")))
	f.Add(ziptest.Archive{Entries: []ziptest.Entry{ziptest.Deflated("manifest.json", mv3)}, Zip64End: true, Comment: "c"}.Bytes())
	f.Add(makeZip(f, file("manifest.json", mv3), dir("js/"), stored("js/a.js", "a")))
	for _, c := range layoutCases() {
		f.Add(c.zip)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Check(bytes.NewReader(data), int64(len(data)), DefaultLimits())
		if err != nil || res == nil {
			t.Fatalf("Check = %v, %v", res, err)
		}
		if !res.OK() {
			return
		}
		if err := agreesWhenStreamed(data); err != nil {
			t.Fatalf("Check passed a zip that streams otherwise: %v", err)
		}
	})
}
