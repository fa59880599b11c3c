package zipcheck

import (
	"archive/zip"
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// A zip names each entry twice: in the local header just before its data,
// and in the central directory at the end. archive/zip, like Chrome and
// most extractors, reads the central directory and uses a local header
// only to find where the data starts; streaming extractors (Java's
// ZipInputStream, unzip reading a pipe, many scanners) read the local
// headers alone, one after the other. A zip whose two copies disagree is
// one archive to Check and another to them: behind a central
// "aaaaaaaaaa.js" a local header can say "../../evil.js", and a local header
// can hide between two entries where no central record points.
//
// So Check requires what both kinds of reader see to be the same archive:
//
//   - the file is the zip alone: its central directory ends where its end
//     record begins, and its offsets count from the file's first byte (no
//     CRX header or self-extractor in front);
//   - every entry's local header agrees with its central record: name,
//     method, encryption, CRC-32 and sizes, which, when the local header
//     defers them to a data descriptor, the descriptor after the data
//     holds;
//   - the entries tile the file up to the central directory: each local
//     header begins where the entry before it ends, so no byte lies
//     outside an entry and no entry lies inside another.
//
// The directory is read once more for the local header offsets archive/zip
// keeps to itself, right after archive/zip read it, while the read-ahead
// window still holds it; the local headers are read as every entry is
// inflated, from the same window.

// Zip record layouts (APPNOTE.TXT 4.3.7, 4.3.9, 4.3.12, 4.3.14-16).
const (
	localSig      = 0x04034b50
	localLen      = 30
	centralSig    = 0x02014b50
	centralLen    = 46
	endSig        = 0x06054b50
	endLen        = 22
	zip64EndSig   = 0x06064b50
	zip64EndLen   = 56
	zip64LocSig   = 0x07064b50
	zip64LocLen   = 20
	descriptorSig = 0x08074b50
	zip64ExtraID  = 0x0001

	flagEncrypted  = 0x1
	flagDescriptor = 0x8

	max16 = 0xffff
	max32 = 0xffffffff
)

var le = binary.LittleEndian

// record is what the central directory says of one entry.
type record struct {
	name          string
	method, flags uint16
	crc32         uint32
	csize, usize  uint64
	offset        int64 // of the entry's local header
}

// directory is the central directory: where it begins and its records, in
// the order of archive/zip's File list.
type directory struct {
	start   int64
	records []record
}

// readDirectory reads the central directory as archive/zip read it into
// files, and reports (as zip_layout) a file that is more than the zip. It
// returns nil when it reported a problem, or when reading failed (the
// caller's errReaderAt has the error).
func readDirectory(res *Result, r io.ReaderAt, size int64, files []*zip.File) *directory {
	endAt, end, ok := findEnd(r, size)
	if !ok {
		res.add(CodeZipLayout, "", "The zip's end record cannot be read again. Create the zip again with a standard zip tool.")
		return nil
	}
	records := uint64(le.Uint16(end[10:])) // archive/zip reads records until one is not: files holds them
	dirSize := uint64(le.Uint32(end[12:]))
	dirOffset := uint64(le.Uint32(end[16:]))
	// The condition archive/zip looks for zip64 fields under, so that both
	// read the same directory.
	if records == max16 || dirSize == max16 || dirSize == max32 || dirOffset == max32 {
		if at, rec, found := findZip64End(r, endAt); found {
			endAt = at
			dirSize, dirOffset = le.Uint64(rec[40:]), le.Uint64(rec[48:])
		}
	}
	if dirSize > uint64(size) || dirOffset > uint64(size) {
		res.add(CodeZipLayout, "", "The zip's end record places its directory outside the file. Create the zip again with a standard zip tool.")
		return nil
	}
	start := int64(dirOffset)
	switch before := endAt - int64(dirSize) - start; {
	case before > 0:
		res.add(CodeZipLayout, "", "The zip's end record does not match where its directory lies: the file has %d bytes before the zip begins (is it a .crx package, or a self-extracting archive?), or the record is damaged. Upload the extension's plain .zip, created again with a standard zip tool.", before)
		return nil
	case before < 0:
		res.add(CodeZipLayout, "", "The zip's end record does not match where its directory lies. Create the zip again with a standard zip tool.")
		return nil
	}
	dir := &directory{start: start, records: make([]record, 0, len(files))}
	br := bufio.NewReader(io.NewSectionReader(r, start, endAt-start))
	for _, f := range files {
		rec, err := readRecord(br)
		if err != nil || rec.name != f.Name || rec.method != f.Method || rec.flags != f.Flags || rec.crc32 != f.CRC32 ||
			rec.csize != f.CompressedSize64 || rec.usize != f.UncompressedSize64 {
			res.add(CodeZipLayout, "", "The zip's directory does not read the same twice. Create the zip again with a standard zip tool.")
			return nil
		}
		dir.records = append(dir.records, rec)
	}
	if _, err := br.Peek(1); !errors.Is(err, io.EOF) {
		res.add(CodeZipLayout, "", "The zip's directory holds more than its %d entries. Create the zip again with a standard zip tool.", len(files))
		return nil
	}
	return dir
}

// findEnd finds the end of central directory record as archive/zip does:
// the last signature in the file's final kilobyte, else in its final
// 65 KiB, whose comment fits in the file.
func findEnd(r io.ReaderAt, size int64) (at int64, rec []byte, ok bool) {
	for _, n := range []int64{1024, 65 * 1024} {
		n = min(n, size)
		buf := make([]byte, n)
		if _, err := r.ReadAt(buf, size-n); err != nil && !errors.Is(err, io.EOF) {
			return 0, nil, false
		}
		for i := len(buf) - endLen; i >= 0; i-- {
			if le.Uint32(buf[i:]) != endSig {
				continue
			}
			if i+endLen+int(le.Uint16(buf[i+20:])) > len(buf) {
				break // a truncated comment: not the record
			}
			return size - n + int64(i), buf[i : i+endLen], true
		}
		if n == size {
			break
		}
	}
	return 0, nil, false
}

// findZip64End reads the zip64 end record the locator before endAt points
// to, as archive/zip does; found is false when there is no locator.
func findZip64End(r io.ReaderAt, endAt int64) (at int64, rec []byte, found bool) {
	locAt := endAt - zip64LocLen
	if locAt < 0 {
		return 0, nil, false
	}
	loc := make([]byte, zip64LocLen)
	if _, err := r.ReadAt(loc, locAt); err != nil || le.Uint32(loc) != zip64LocSig || le.Uint32(loc[4:]) != 0 || le.Uint32(loc[16:]) != 1 {
		return 0, nil, false
	}
	at = int64(le.Uint64(loc[8:]))
	rec = make([]byte, zip64EndLen)
	if at < 0 {
		return 0, nil, false
	}
	if _, err := r.ReadAt(rec, at); err != nil || le.Uint32(rec) != zip64EndSig {
		return 0, nil, false
	}
	return at, rec, true
}

// readRecord reads one central directory record.
func readRecord(br *bufio.Reader) (record, error) {
	var rec record
	var h [centralLen]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return rec, err
	}
	if le.Uint32(h[:]) != centralSig {
		return rec, zip.ErrFormat
	}
	rec.flags, rec.method = le.Uint16(h[8:]), le.Uint16(h[10:])
	rec.crc32 = le.Uint32(h[16:])
	csize, usize := le.Uint32(h[20:]), le.Uint32(h[24:])
	n, m, k := int(le.Uint16(h[28:])), int(le.Uint16(h[30:])), int(le.Uint16(h[32:]))
	offset := le.Uint32(h[42:])
	rest := make([]byte, n+m+k)
	if _, err := io.ReadFull(br, rest); err != nil {
		return rec, err
	}
	rec.name = string(rest[:n])
	rec.csize, rec.usize, rec.offset = uint64(csize), uint64(usize), int64(offset)
	fields, ok := zip64Fields(rest[n:n+m], usize == max32, csize == max32, offset == max32)
	if !ok {
		return rec, zip.ErrFormat
	}
	if usize == max32 {
		rec.usize, fields = fields[0], fields[1:]
	}
	if csize == max32 {
		rec.csize, fields = fields[0], fields[1:]
	}
	if offset == max32 {
		rec.offset = int64(fields[0])
	}
	return rec, nil
}

// zip64Fields returns the 8-byte values of extra's first zip64 field, in
// their order (uncompressed size, compressed size, header offset), one for
// each that is needed; ok is false when a needed one is missing. Like
// archive/zip, it stops at the first malformed field.
func zip64Fields(extra []byte, needs ...bool) (fields []uint64, ok bool) {
	want := 0
	for _, n := range needs {
		if n {
			want++
		}
	}
	if want == 0 {
		return nil, true
	}
	for len(extra) >= 4 {
		tag, n := le.Uint16(extra), int(le.Uint16(extra[2:]))
		if len(extra) < 4+n {
			break
		}
		body := extra[4 : 4+n]
		extra = extra[4+n:]
		if tag != zip64ExtraID {
			continue
		}
		if len(body) < 8*want {
			return nil, false
		}
		for i := range want {
			fields = append(fields, le.Uint64(body[8*i:]))
		}
		return fields, true
	}
	return nil, false
}

// unicodePathID is Info-ZIP's Unicode Path extra field: a version, the
// CRC-32 of the header's name, and a UTF-8 name that extractors which know
// the field (Info-ZIP's unzip, 7-Zip) use instead of the header's.
const unicodePathID = 0x7075

// unicodePath returns the name an extra field's Unicode Path field gives
// the entry, if it has one. A field too short to hold a name gives "",
// which differs from every entry's name.
func unicodePath(extra []byte) (name string, found bool) {
	for len(extra) >= 4 {
		tag, n := le.Uint16(extra), int(le.Uint16(extra[2:]))
		if len(extra) < 4+n {
			return "", false
		}
		if tag == unicodePathID {
			if n < 5 {
				return "", true
			}
			return string(extra[4+5 : 4+n]), true
		}
		extra = extra[4+n:]
	}
	return "", false
}

// hasZip64Field reports whether extra has a zip64 field.
func hasZip64Field(extra []byte) bool {
	for len(extra) >= 4 {
		tag, n := le.Uint16(extra), int(le.Uint16(extra[2:]))
		if len(extra) < 4+n {
			return false
		}
		if tag == zip64ExtraID {
			return true
		}
		extra = extra[4+n:]
	}
	return false
}

// span is the bytes an entry takes: from its local header to the end of
// its data, or of its data descriptor.
type span struct {
	name       string
	start, end int64
}

// local is what an entry's local header says that matters after it.
type local struct {
	dataAt     int64 // where the entry's data begins
	descriptor bool  // the CRC-32 and sizes follow the data
	zip64      bool  // the header has a zip64 field: a descriptor's sizes are 8 bytes
}

// checkLocalHeader reads the local header of the entry rec records and
// reports where the two disagree; ok is false when it reported a problem.
func checkLocalHeader(res *Result, r io.ReaderAt, rec record) (l local, ok bool) {
	mismatch := func(format string, args ...any) (local, bool) {
		res.add(CodeHeaderMismatch, rec.name, format+" Extractors that read local headers would unpack something other than what was checked. Create the zip again with a standard zip tool.", args...)
		return l, false
	}
	var h [localLen]byte
	if _, err := r.ReadAt(h[:], rec.offset); err != nil {
		return mismatch("The zip's directory says the entry begins at byte %d, past the end of the zip.", rec.offset)
	}
	if le.Uint32(h[:]) != localSig {
		return mismatch("There is no local header at byte %d, where the zip's directory says the entry begins.", rec.offset)
	}
	flags, method := le.Uint16(h[6:]), le.Uint16(h[8:])
	crc, csize32, usize32 := le.Uint32(h[14:]), le.Uint32(h[18:]), le.Uint32(h[22:])
	n, m := int(le.Uint16(h[26:])), int(le.Uint16(h[28:]))
	nameExtra := make([]byte, n+m)
	if _, err := r.ReadAt(nameExtra, rec.offset+localLen); err != nil {
		return mismatch("The entry's local header runs past the end of the zip.")
	}
	if name := string(nameExtra[:n]); name != rec.name {
		return mismatch("The entry's local header names it %s.", quoteShort(name))
	}
	if other, found := unicodePath(nameExtra[n:]); found && other != rec.name {
		return mismatch("The entry's local header carries another name for it, %s, in a Unicode Path field (which Info-ZIP's unzip and 7-Zip extract it under).", quoteShort(other))
	}
	if method != rec.method {
		return mismatch("The entry's local header says compression method %d; the zip's directory says %d.", method, rec.method)
	}
	if flags&flagEncrypted != rec.flags&flagEncrypted {
		return mismatch("The entry's local header and the zip's directory disagree on whether it is encrypted.")
	}
	csize, usize := uint64(csize32), uint64(usize32)
	if csize32 == max32 || usize32 == max32 {
		fields, found := zip64Fields(nameExtra[n:], usize32 == max32, csize32 == max32)
		if !found {
			return mismatch("The entry's local header lacks the zip64 sizes it announces.")
		}
		if usize32 == max32 {
			usize, fields = fields[0], fields[1:]
		}
		if csize32 == max32 {
			csize = fields[0]
		}
	}
	l.descriptor = flags&flagDescriptor != 0
	l.zip64 = hasZip64Field(nameExtra[n:])
	// With a data descriptor the local header may hold zeros instead.
	agrees := func(local, central uint64) bool { return local == central || (l.descriptor && local == 0) }
	switch {
	case !agrees(uint64(crc), uint64(rec.crc32)):
		return mismatch("The entry's local header says CRC-32 %08x; the zip's directory says %08x.", crc, rec.crc32)
	case !agrees(csize, rec.csize):
		return mismatch("The entry's local header says %d compressed bytes; the zip's directory says %d.", csize, rec.csize)
	case !agrees(usize, rec.usize):
		return mismatch("The entry's local header says %d bytes unpacked; the zip's directory says %d.", usize, rec.usize)
	}
	l.dataAt = rec.offset + localLen + int64(n+m)
	return l, true
}

// checkDescriptor reads the data descriptor after the entry's data (which
// ends at at) and reports it unless it holds rec's CRC-32 and sizes. It is
// read as streaming extractors read one: after its signature if it begins
// with one, with 8-byte sizes if the local header has a zip64 field. It
// returns where the descriptor ends.
func checkDescriptor(res *Result, r io.ReaderAt, size int64, rec record, l local) (end int64, ok bool) {
	at := l.dataAt + int64(rec.csize)
	length := int64(12)
	if l.zip64 {
		length = 20
	}
	buf := make([]byte, max(0, min(4+length, size-at)))
	if _, err := r.ReadAt(buf, at); err != nil && !errors.Is(err, io.EOF) {
		return 0, false
	}
	b := buf
	if len(b) >= 4 && le.Uint32(b) == descriptorSig {
		b = b[4:]
	}
	if int64(len(b)) >= length {
		crc, csize, usize := le.Uint32(b), uint64(le.Uint32(b[4:])), uint64(le.Uint32(b[8:]))
		if l.zip64 {
			csize, usize = le.Uint64(b[4:]), le.Uint64(b[12:])
		}
		if crc == rec.crc32 && csize == rec.csize && usize == rec.usize {
			return at + int64(len(buf)-len(b)) + length, true
		}
	}
	res.add(CodeHeaderMismatch, rec.name, "The entry's data descriptor, after its data, does not hold the CRC-32 and sizes the zip's directory gives. Extractors that read local headers would unpack something other than what was checked. Create the zip again with a standard zip tool.")
	return 0, false
}

// checkTiling reports bytes before the central directory that belong to no
// entry, and entries that begin inside another.
func checkTiling(res *Result, spans []span, dirStart int64) {
	slices.SortStableFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	pos := int64(0)
	for _, sp := range spans {
		switch {
		case sp.start > pos:
			res.add(CodeZipLayout, sp.name, "%d bytes before this entry belong to no entry: extractors that read local headers could find there what the zip's directory does not list. Create the zip again with a standard zip tool.", sp.start-pos)
		case sp.start < pos:
			res.add(CodeZipLayout, sp.name, "The entry begins inside the entry before it. Create the zip again with a standard zip tool.")
		}
		pos = max(pos, sp.end)
	}
	if pos < dirStart {
		res.add(CodeZipLayout, "", "%d bytes between the last entry and the zip's directory belong to no entry: extractors that read local headers could find there what the directory does not list. Create the zip again with a standard zip tool.", dirStart-pos)
	}
	// An entry that runs into the directory was reported as damaged: its
	// data or its descriptor did not read as it should.
}

// quoteShort quotes a name for a message, cut to a readable length.
func quoteShort(name string) string {
	const most = 120
	if len(name) > most {
		return fmt.Sprintf("%q… (%d bytes)", name[:most], len(name))
	}
	return fmt.Sprintf("%q", name)
}
