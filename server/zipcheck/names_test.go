package zipcheck

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"testing"

	"github.com/betaport/betaport/server/zipcheck/ziptest"
)

// unicodePathField is an Info-ZIP Unicode Path extra field naming an entry
// whose header names it headerName.
func unicodePathField(headerName, name string) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint16(unicodePathID))
	binary.Write(&b, binary.LittleEndian, uint16(5+len(name)))
	b.WriteByte(1)
	binary.Write(&b, binary.LittleEndian, crc32.ChecksumIEEE([]byte(headerName)))
	b.WriteString(name)
	return b.Bytes()
}

// TestCheckNamesOnlyOneReading: an entry has one name to every extractor
// (issue 29's second probe): no Unicode Path field naming it otherwise, in
// the directory or the local header; and no file that another entry's
// path needs as a folder.
func TestCheckNamesOnlyOneReading(t *testing.T) {
	const mv3 = `{"manifest_version": 3, "name": "Demo", "version": "1.0"}`
	manifest := ziptest.Stored("manifest.json", mv3)
	inCentral := func(name string) ziptest.Entry {
		e := ziptest.Stored("a.js", "x")
		e.Central.Extra = unicodePathField("a.js", name)
		local := e.Central
		local.Extra = nil
		e.Local = &local
		return e
	}
	inLocal := func(name string) ziptest.Entry {
		e := ziptest.Stored("a.js", "x")
		local := e.Central
		local.Extra = unicodePathField("a.js", name)
		e.Local = &local
		return e
	}
	for _, tt := range []struct {
		name string
		zip  []byte
		want []string
	}{
		{"Unicode Path over the manifest", ziptest.Zip(manifest, inCentral("manifest.json")), []string{"header_mismatch a.js"}},
		{"Unicode Path climbing out", ziptest.Zip(manifest, inCentral("../../evil.js")), []string{"header_mismatch a.js"}},
		{"Unicode Path in the local header", ziptest.Zip(manifest, inLocal("../../evil.js")), []string{"header_mismatch a.js"}},
		{"Unicode Path that agrees", ziptest.Zip(manifest, inCentral("a.js")), nil},
		{"a file where a folder must be", ziptest.Zip(manifest, ziptest.Stored("js", "1"), ziptest.Stored("js/a.js", "2")), []string{"duplicate_entry js/a.js"}},
		{"deeper", ziptest.Zip(manifest, ziptest.Stored("lib/js", "1"), ziptest.Stored("lib/js/x/a.js", "2")), []string{"duplicate_entry lib/js/x/a.js"}},
		{"a folder and its files", ziptest.Zip(manifest, ziptest.Folder("js/"), ziptest.Stored("js/a.js", "2")), nil},
		{"names that share a start", ziptest.Zip(manifest, ziptest.Stored("js", "1"), ziptest.Stored("jsx/a.js", "2")), nil},
		{"names that differ only in case", ziptest.Zip(manifest, ziptest.Stored("a.js", "1"), ziptest.Stored("A.js", "2")), []string{"duplicate_entry A.js"}},
		{"folders that differ only in case", ziptest.Zip(manifest, ziptest.Stored("Lib/a.js", "1"), ziptest.Stored("lib/a.js", "2")), []string{"duplicate_entry lib/a.js"}},
		{"two spellings of é", ziptest.Zip(manifest, ziptest.Stored("caf\u00e9.js", "1"), ziptest.Stored("cafe\u0301.js", "2")), []string{"duplicate_entry cafe\u0301.js"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := found(check(t, tt.zip, DefaultLimits())); !slices.Equal(got, tt.want) {
				t.Fatalf("problems %q, want %q", got, tt.want)
			}
		})
	}
}
