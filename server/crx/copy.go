package crx

import (
	"archive/zip"
	"fmt"
	"io"
	"strings"
)

// CopyEntry copies f into zw under name as raw bytes, without
// recompressing: the same method, compressed bytes and CRC-32. It is the
// one copy of an uploaded entry that both normalising a bundle and packing
// its CRX make.
//
// What it writes is the entry as archive/zip would have written it, with
// the CRC-32 and sizes in the local header (no data descriptor after the
// data, so each entry is whole once copied) and no zip64 field of the
// source's (the writer adds its own where sizes need one). A folder is
// written as a folder: stored, with no data. Some tools deflate folders
// like files (java.util.zip writes "js/" as the 2-byte deflate stream of
// nothing), and zip.Writer refuses any byte written to a folder; the
// folder holds nothing either way, which the upload's check has verified.
//
// It fails, wrapping [zip.ErrFormat], when f's data is shorter than its
// header says: the copy's headers would promise bytes that are missing.
func CopyEntry(zw *zip.Writer, f *zip.File, name string) error {
	fh := f.FileHeader // a copy: zw keeps the pointer
	fh.Name = name
	fh.Flags &^= flagDataDesc
	fh.Extra = withoutExtra(fh.Extra, zip64ExtraID)
	if strings.HasSuffix(name, "/") {
		fh.Method = zip.Store
		fh.CRC32, fh.CompressedSize64, fh.UncompressedSize64 = 0, 0, 0
		_, err := zw.CreateRaw(&fh)
		return err
	}
	raw, err := f.OpenRaw()
	if err != nil {
		return err
	}
	fw, err := zw.CreateRaw(&fh)
	if err != nil {
		return err
	}
	n, err := io.Copy(fw, raw)
	if err != nil {
		return err
	}
	if uint64(n) != f.CompressedSize64 {
		return fmt.Errorf("%w: entry data is %d bytes, its header says %d", zip.ErrFormat, n, f.CompressedSize64)
	}
	return nil
}

const zip64ExtraID = 0x0001

// withoutExtra returns extra without the fields of the given id. Malformed
// trailing bytes are kept as they are: they are not ours to fix.
func withoutExtra(extra []byte, id uint16) []byte {
	var out []byte
	for rest := extra; len(rest) > 0; {
		if len(rest) < 4 {
			return append(out, rest...)
		}
		tag := uint16(rest[0]) | uint16(rest[1])<<8
		n := 4 + (int(rest[2]) | int(rest[3])<<8)
		if n > len(rest) {
			return append(out, rest...)
		}
		if tag != id {
			out = append(out, rest[:n]...)
		}
		rest = rest[n:]
	}
	return out
}
