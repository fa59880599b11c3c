package zipcheck

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// verifyEntries reads every entry once, in the order of the directory (dir,
// read from r, as files were): its local header, which must agree with
// its central record (see layout.go), then its data, inflated, except the
// manifest's (already read), then its data descriptor if it has one. It
// reports each entry whose data does not match its headers (a CRC-32
// mismatch, data that inflates past or short of its declared size, a
// damaged deflate stream, a folder that holds data), then, if all were
// sound, bytes that belong to no entry. I/O errors surface through the caller's errReaderAt,
// which Check returns instead of the problems.
func verifyEntries(res *Result, files []*zip.File, dir *directory, r io.ReaderAt, size int64, manifestPath string) {
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	spans := make([]span, 0, len(files))
	for i, f := range files {
		rec := dir.records[i]
		l, ok := checkLocalHeader(res, r, rec)
		if !ok {
			continue
		}
		var damage error
		switch {
		case isDir(f.Name):
			if err := verifyFolder(f); err != nil {
				res.add(CodeEntryCorrupt, f.Name, "The folder entry carries data, and a folder holds none: tools that make the folder without reading it would keep those bytes hidden. Create the zip again with a standard zip tool.")
				continue
			}
		case f.Name != manifestPath:
			damage = verifyEntry(f, *buf)
		}
		end := l.dataAt + int64(rec.csize)
		if l.descriptor {
			// A descriptor that disagrees also fails archive/zip's CRC
			// check: it is the one problem to report.
			if end, ok = checkDescriptor(res, r, size, rec, l); !ok {
				continue
			}
		}
		if damage != nil {
			res.add(CodeEntryCorrupt, f.Name, "%s Create the zip again; if it happens again, check the disk or the tool that wrote it.", entryDamage(f, damage))
			continue
		}
		spans = append(spans, span{name: rec.name, start: rec.offset, end: end})
	}
	// Damaged entries are reported as such, not as the gaps and overlaps
	// they make.
	if len(res.Problems) == 0 {
		checkTiling(res, spans, dir.start)
	}
}

// verifyEntry reads f's inflated data to the end and checks its CRC-32.
// archive/zip checks sizes itself, stopping one byte past the declared
// size, but skips the CRC when the header records 0; here it is always
// compared, since the installing browser does.
func verifyEntry(f *zip.File, buf []byte) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	h := crc32.NewIEEE()
	if _, err := io.CopyBuffer(h, rc, buf); err != nil {
		return err
	}
	if h.Sum32() != f.CRC32 {
		return zip.ErrChecksum
	}
	return nil
}

// maxFolderData is the most compressed data a folder entry may carry: the
// deflate stream of nothing that tools which deflate folders write (2 bytes
// from java.util.zip), with room for other encoders' ways of saying it.
const maxFolderData = 64

var errFolderData = errors.New("folder entry with data")

// verifyFolder checks that folder entry f holds nothing: no data at all,
// or a deflate stream that inflates to nothing and ends where the entry's
// data ends, so no byte hides behind it.
func verifyFolder(f *zip.File) error {
	if f.CompressedSize64 == 0 {
		return nil
	}
	if f.Method != zip.Deflate || f.CompressedSize64 > maxFolderData {
		return errFolderData
	}
	raw, err := f.OpenRaw()
	if err != nil {
		return err
	}
	data, err := io.ReadAll(raw)
	if err != nil {
		return err
	}
	if uint64(len(data)) != f.CompressedSize64 {
		return io.ErrUnexpectedEOF
	}
	// A bytes.Reader is an io.ByteReader, so the inflater reads no byte
	// past the end of the stream: what is left was hidden behind it.
	br := bytes.NewReader(data)
	n, err := io.Copy(io.Discard, flate.NewReader(br))
	if err != nil {
		return err
	}
	if n != 0 || br.Len() != 0 {
		return errFolderData
	}
	return nil
}

// entryDamage says what was wrong with an entry's data, for a person.
func entryDamage(f *zip.File, err error) string {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, zip.ErrChecksum):
		return "The entry's data fails its CRC-32 check: it is damaged."
	case errors.Is(err, zip.ErrFormat):
		return fmt.Sprintf("The entry unpacks to more than the %s its header declares.", bytesText(int64(min(f.UncompressedSize64, 1<<62))))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("The entry unpacks to less than the %s its header declares.", bytesText(int64(min(f.UncompressedSize64, 1<<62))))
	case errors.As(err, &corrupt):
		return "The entry's compressed data is damaged."
	default:
		return "The entry's data cannot be read."
	}
}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// newFlateReader inflates with klauspost/compress, which is markedly faster
// than compress/flate and keeps sign close to the cost of `unzip -t`.
func newFlateReader(r io.Reader) io.ReadCloser { return flate.NewReader(r) }

// readAheadSize is the window readAhead fetches at once.
const readAheadSize = 1 << 20

// readAhead serves small reads from a window it fetches readAheadSize
// bytes at a time. archive/zip reads entry data in 4 KiB steps; against S3,
// each ReadAt is a ranged GET, so without the window verifying 100 MiB
// would take 25,600 requests instead of 100. It is not safe for concurrent
// use, and Check does not need it to be.
type readAhead struct {
	r    io.ReaderAt
	size int64
	buf  []byte
	off  int64 // offset of buf[0]
	n    int   // valid bytes in buf
}

func newReadAhead(r io.ReaderAt, size int64) *readAhead { return &readAhead{r: r, size: size} }

func (ra *readAhead) ReadAt(p []byte, off int64) (int, error) {
	if len(p) >= readAheadSize || off < 0 {
		return ra.r.ReadAt(p, off)
	}
	read := 0
	for len(p) > 0 {
		if off < ra.off || off >= ra.off+int64(ra.n) {
			if err := ra.fill(off); err != nil {
				return read, err
			}
		}
		n := copy(p, ra.buf[off-ra.off:ra.n])
		read += n
		p = p[n:]
		off += int64(n)
	}
	return read, nil
}

// fill loads the window starting at off.
func (ra *readAhead) fill(off int64) error {
	if off >= ra.size {
		return io.EOF
	}
	if ra.buf == nil {
		ra.buf = make([]byte, min(readAheadSize, ra.size))
	}
	want := int(min(int64(len(ra.buf)), ra.size-off))
	n, err := ra.r.ReadAt(ra.buf[:want], off)
	ra.off, ra.n = off, n
	if n < want {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		ra.n = 0
		return err
	}
	return nil
}

// StandardManifest returns manifest.json's bytes as standard JSON: without
// a byte order mark, and with // and /* */ comments (which Chromium accepts
// in manifests) turned into spaces, so that offsets, lines and columns stay
// those of the original. Comment markers inside strings are left alone. An
// unterminated /* comment is left as it is, for the JSON parser to report.
func StandardManifest(data []byte) []byte {
	data = bytes.TrimPrefix(data, bom)
	if !bytes.Contains(data, []byte("/")) {
		return data
	}
	out := bytes.Clone(data)
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for i < len(out) && out[i] != '\n' {
				out[i] = ' '
				i++
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			if end < 0 {
				return out
			}
			for j := i; j < i+2+end+2; j++ {
				if out[j] != '\n' {
					out[j] = ' '
				}
			}
			i += 2 + end + 1
		}
	}
	return out
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	offset = max(0, min(offset, int64(len(data))))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	if col == 0 {
		col = 1
	}
	return line, col
}
