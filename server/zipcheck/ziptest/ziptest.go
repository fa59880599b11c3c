// Package ziptest writes zip archives byte by byte for tests: every header
// field is what the test says, so a test can write what archive/zip refuses
// to (a local header that disagrees with the central directory, a folder
// with deflated data, bytes that belong to no entry, data before the zip).
package ziptest

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
)

// Signatures and flags of the zip format (APPNOTE.TXT).
const (
	localSig      = 0x04034b50
	centralSig    = 0x02014b50
	endSig        = 0x06054b50
	zip64EndSig   = 0x06064b50
	zip64LocSig   = 0x07064b50
	DescriptorSig = 0x08074b50

	// FlagDescriptor says the CRC-32 and sizes follow the data, in a data
	// descriptor, and the local header holds zeros.
	FlagDescriptor = 0x8
	// FlagUTF8 says the name is UTF-8.
	FlagUTF8 = 0x800

	Store   = 0
	Deflate = 8
)

// Header is what one header (local or central) says of an entry.
type Header struct {
	Name             string
	Method           uint16
	Flags            uint16
	CRC32            uint32
	CompressedSize   uint32
	UncompressedSize uint32
	Extra            []byte
}

// Entry is one entry: its central directory record, its local header
// (Local nil: the same as Central, except that an entry with a data
// descriptor has zero CRC and sizes there), its data as stored, and what
// follows the data.
type Entry struct {
	Central Header
	Local   *Header
	// ExternalAttrs is the central record's external attributes (a Unix
	// mode in the high 16 bits).
	ExternalAttrs uint32
	// Data is the entry's bytes as stored: compressed when Method is
	// Deflate.
	Data []byte
	// Descriptor is written right after Data: a data descriptor, or
	// anything else a test wants there.
	Descriptor []byte
	// After is written after Descriptor and belongs to no entry: a hidden
	// local header, padding.
	After []byte
	// Offset, when not nil, is the local header offset the central record
	// gives instead of the real one.
	Offset *uint32
	// CentralOnly writes the central record alone, nothing where the
	// entries are: with Offset, it points into bytes another entry wrote.
	CentralOnly bool
}

// Archive is a whole zip file.
type Archive struct {
	// Leading is written before the first entry (a CRX header, a
	// self-extractor); offsets stay relative to the first entry, as in a
	// CRX.
	Leading []byte
	Entries []Entry
	Comment string
	// Zip64End writes a zip64 end of central directory record and its
	// locator before the end record, whose fields then say 0xffff....
	Zip64End bool
}

// Bytes writes the archive.
func (a Archive) Bytes() []byte {
	var out bytes.Buffer
	out.Write(a.Leading)
	base := out.Len()
	offsets := make([]uint32, len(a.Entries))
	for i, e := range a.Entries {
		offsets[i] = uint32(out.Len() - base)
		if e.Offset != nil {
			offsets[i] = *e.Offset
		}
		if e.CentralOnly {
			continue
		}
		local := e.Central
		if e.Local != nil {
			local = *e.Local
		} else if local.Flags&FlagDescriptor != 0 {
			local.CRC32, local.CompressedSize, local.UncompressedSize = 0, 0, 0
		}
		writeLocal(&out, local)
		out.Write(e.Data)
		out.Write(e.Descriptor)
		out.Write(e.After)
	}
	dirStart := out.Len() - base
	for i, e := range a.Entries {
		writeCentral(&out, e.Central, e.ExternalAttrs, offsets[i])
	}
	dirSize := out.Len() - base - dirStart
	records := len(a.Entries)
	le := binary.LittleEndian
	if a.Zip64End {
		end64 := out.Len() - base
		var b [56]byte
		le.PutUint32(b[0:], zip64EndSig)
		le.PutUint64(b[4:], 56-12)
		le.PutUint16(b[12:], 45)
		le.PutUint16(b[14:], 45)
		le.PutUint64(b[24:], uint64(records))
		le.PutUint64(b[32:], uint64(records))
		le.PutUint64(b[40:], uint64(dirSize))
		le.PutUint64(b[48:], uint64(dirStart))
		out.Write(b[:])
		var loc [20]byte
		le.PutUint32(loc[0:], zip64LocSig)
		le.PutUint64(loc[8:], uint64(end64))
		le.PutUint32(loc[16:], 1)
		out.Write(loc[:])
	}
	var end [22]byte
	le.PutUint32(end[0:], endSig)
	if a.Zip64End {
		le.PutUint16(end[8:], 0xffff)
		le.PutUint16(end[10:], 0xffff)
		le.PutUint32(end[12:], 0xffffffff)
		le.PutUint32(end[16:], 0xffffffff)
	} else {
		le.PutUint16(end[8:], uint16(records))
		le.PutUint16(end[10:], uint16(records))
		le.PutUint32(end[12:], uint32(dirSize))
		le.PutUint32(end[16:], uint32(dirStart))
	}
	le.PutUint16(end[20:], uint16(len(a.Comment)))
	out.Write(end[:])
	out.WriteString(a.Comment)
	return out.Bytes()
}

// Zip writes entries as a plain archive.
func Zip(entries ...Entry) []byte { return Archive{Entries: entries}.Bytes() }

func writeLocal(out *bytes.Buffer, h Header) {
	var b [30]byte
	le := binary.LittleEndian
	le.PutUint32(b[0:], localSig)
	le.PutUint16(b[4:], 20)
	le.PutUint16(b[6:], h.Flags)
	le.PutUint16(b[8:], h.Method)
	le.PutUint16(b[12:], 0x21) // 1 January 1980
	le.PutUint32(b[14:], h.CRC32)
	le.PutUint32(b[18:], h.CompressedSize)
	le.PutUint32(b[22:], h.UncompressedSize)
	le.PutUint16(b[26:], uint16(len(h.Name)))
	le.PutUint16(b[28:], uint16(len(h.Extra)))
	out.Write(b[:])
	out.WriteString(h.Name)
	out.Write(h.Extra)
}

func writeCentral(out *bytes.Buffer, h Header, attrs, offset uint32) {
	var b [46]byte
	le := binary.LittleEndian
	le.PutUint32(b[0:], centralSig)
	le.PutUint16(b[4:], 3<<8|20) // made by Unix, version 2.0
	le.PutUint16(b[6:], 20)
	le.PutUint16(b[8:], h.Flags)
	le.PutUint16(b[10:], h.Method)
	le.PutUint16(b[14:], 0x21)
	le.PutUint32(b[16:], h.CRC32)
	le.PutUint32(b[20:], h.CompressedSize)
	le.PutUint32(b[24:], h.UncompressedSize)
	le.PutUint16(b[28:], uint16(len(h.Name)))
	le.PutUint16(b[30:], uint16(len(h.Extra)))
	le.PutUint32(b[38:], attrs)
	le.PutUint32(b[42:], offset)
	out.Write(b[:])
	out.WriteString(h.Name)
	out.Write(h.Extra)
}

// Stored is a file stored as it is.
func Stored(name, body string) Entry {
	return Entry{
		Central: Header{Name: name, Method: Store, CRC32: crc32.ChecksumIEEE([]byte(body)),
			CompressedSize: uint32(len(body)), UncompressedSize: uint32(len(body))},
		ExternalAttrs: 0o100644 << 16,
		Data:          []byte(body),
	}
}

// Deflated is a file deflated, its sizes in the local header.
func Deflated(name, body string) Entry {
	data := deflate([]byte(body))
	return Entry{
		Central: Header{Name: name, Method: Deflate, CRC32: crc32.ChecksumIEEE([]byte(body)),
			CompressedSize: uint32(len(data)), UncompressedSize: uint32(len(body))},
		ExternalAttrs: 0o100644 << 16,
		Data:          data,
	}
}

// Folder is a folder entry as most tools write it: stored, no data.
func Folder(name string) Entry {
	return Entry{Central: Header{Name: name, Method: Store}, ExternalAttrs: (0o40755 << 16) | 0x10}
}

// JavaFile is a file as java.util.zip.ZipOutputStream writes it by
// default: deflated, with zeros in the local header and the CRC-32 and
// sizes in a data descriptor after the data.
func JavaFile(name, body string) Entry {
	e := Deflated(name, body)
	e.Central.Flags |= FlagDescriptor
	e.Descriptor = Descriptor(e.Central)
	e.ExternalAttrs = 0
	return e
}

// JavaFolder is a folder as ZipOutputStream writes it by default:
// deflated like a file, so its data is the 2-byte deflate stream of
// nothing, with a data descriptor.
func JavaFolder(name string) Entry {
	e := JavaFile(name, "")
	// java.util.zip.Deflater's whole output for no input: one final
	// fixed-Huffman block holding only its end code.
	e.Data = []byte{0x03, 0x00}
	e.Central.CompressedSize = 2
	e.Descriptor = Descriptor(e.Central)
	return e
}

// Descriptor is the data descriptor (with its signature) of h.
func Descriptor(h Header) []byte {
	var b [16]byte
	le := binary.LittleEndian
	le.PutUint32(b[0:], DescriptorSig)
	le.PutUint32(b[4:], h.CRC32)
	le.PutUint32(b[8:], h.CompressedSize)
	le.PutUint32(b[12:], h.UncompressedSize)
	return b[:]
}

// LocalHeader is the local header h would have, with its name and extra
// field: bytes to hide where no entry accounts for them.
func LocalHeader(h Header) []byte {
	var out bytes.Buffer
	writeLocal(&out, h)
	return out.Bytes()
}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, flate.BestCompression)
	fw.Write(b)
	fw.Close()
	return buf.Bytes()
}
