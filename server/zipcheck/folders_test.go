package zipcheck

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/betaport/betaport/server/zipcheck/ziptest"
)

// javaZip is an extension zipped as java.util.zip.ZipOutputStream does by
// default (Gradle, Maven and Jenkins plugins use it): every entry deflated
// with a data descriptor, folders too, so "js/" carries the 2-byte deflate
// stream of nothing. top is "" or the one top folder ("ext/").
func javaZip(top string) []byte {
	var entries []ziptest.Entry
	if top != "" {
		entries = append(entries, ziptest.JavaFolder(top))
	}
	entries = append(entries,
		ziptest.JavaFile(top+"manifest.json", mv3),
		ziptest.JavaFolder(top+"js/"),
		ziptest.JavaFile(top+"js/a.js", strings.Repeat("console.log(1);\n", 50)),
		ziptest.JavaFolder(top+"js/empty/"),
	)
	return ziptest.Zip(entries...)
}

// TestJavaZipNormalizes: a zip whose folders are deflated passes Check and
// normalises, at the root and under a top folder; in the copy every folder
// is a folder as archive/zip writes one (stored, no data), and the files
// are what they were.
func TestJavaZipNormalizes(t *testing.T) {
	for _, top := range []string{"", "ext/"} {
		t.Run("top "+top, func(t *testing.T) {
			data := javaZip(top)
			res := check(t, data, DefaultLimits())
			if !res.OK() || res.Prefix != top || res.FileCount != 2 {
				t.Fatalf("Check: prefix %q, %d files, problems %v", res.Prefix, res.FileCount, res.Problems)
			}
			var out bytes.Buffer
			if err := Normalize(&out, bytes.NewReader(data), int64(len(data)), res.Prefix); err != nil {
				t.Fatalf("Normalize: %v", err)
			}
			again := check(t, out.Bytes(), DefaultLimits())
			if !again.OK() || again.Prefix != "" || again.FileCount != 2 {
				t.Fatalf("re-Check: prefix %q, %d files, %v", again.Prefix, again.FileCount, again.Problems)
			}
			got, files := contents(t, out.Bytes())
			if got["js/a.js"] != strings.Repeat("console.log(1);\n", 50) || got["manifest.json"] != mv3 {
				t.Errorf("normalised files %q", got)
			}
			var folders []string
			for _, f := range files {
				if isDir(f.Name) {
					folders = append(folders, f.Name)
					if f.Method != 0 || f.CompressedSize64 != 0 || f.UncompressedSize64 != 0 || f.CRC32 != 0 {
						t.Errorf("folder %s copied as method %d, %d→%d bytes, CRC %x; want stored and empty", f.Name, f.Method, f.CompressedSize64, f.UncompressedSize64, f.CRC32)
					}
				}
			}
			if !slices.Equal(folders, []string{"js/", "js/empty/"}) {
				t.Errorf("folders %q", folders)
			}
		})
	}
}

// TestCheckRefusesFoldersWithData: a folder entry holds nothing. One that
// carries bytes (stored, or deflated to something, or past its deflate
// stream's end) hides them from every extractor that makes folders without
// reading them, so it is refused, not copied.
func TestCheckRefusesFoldersWithData(t *testing.T) {
	stored := ziptest.Folder("js/")
	stored.Data = []byte("hidden")
	stored.Central.CompressedSize = 6

	inflates := ziptest.JavaFolder("js/")
	x := ziptest.Deflated("x", "payload")
	inflates.Data = x.Data
	inflates.Central.CompressedSize = x.Central.CompressedSize
	inflates.Descriptor = ziptest.Descriptor(inflates.Central)

	declares := ziptest.JavaFolder("js/")
	declares.Central.UncompressedSize = 7
	declares.Descriptor = ziptest.Descriptor(declares.Central)

	trailing := ziptest.JavaFolder("js/")
	trailing.Data = append(slices.Clone(trailing.Data), "hidden"...)
	trailing.Central.CompressedSize = uint32(len(trailing.Data))
	trailing.Descriptor = ziptest.Descriptor(trailing.Central)

	for name, folder := range map[string]ziptest.Entry{"stored data": stored, "inflates to data": inflates, "declares content": declares, "bytes past the stream": trailing} {
		t.Run(name, func(t *testing.T) {
			data := ziptest.Zip(ziptest.Deflated("manifest.json", mv3), folder, ziptest.Deflated("js/a.js", "a"))
			res := check(t, data, DefaultLimits())
			if got := found(res); !slices.Equal(got, []string{"entry_corrupt js/"}) {
				t.Fatalf("problems %q, want the folder reported", got)
			}
		})
	}
}
