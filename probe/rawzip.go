package main

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
)

// A raw zip writer: every header field is what the probe says, so it can
// write what archive/zip refuses to.

type zhdr struct {
	name        string
	method      uint16
	flags       uint16
	crc         uint32
	csize, size uint32
	extra       []byte
}

type zent struct {
	central     zhdr
	local       *zhdr // nil: same as central (zeros if a descriptor follows)
	attrs       uint32
	data        []byte
	descriptor  []byte
	after       []byte
	offset      *uint32
	centralOnly bool
	madeBy      uint16 // 0: Unix (3<<8|20)
}

type zarchive struct {
	leading []byte
	entries []zent
	comment string
}

func (a zarchive) bytes() []byte {
	var out bytes.Buffer
	le := binary.LittleEndian
	out.Write(a.leading)
	base := out.Len()
	offs := make([]uint32, len(a.entries))
	for i, e := range a.entries {
		offs[i] = uint32(out.Len() - base)
		if e.offset != nil {
			offs[i] = *e.offset
		}
		if e.centralOnly {
			continue
		}
		l := e.central
		if e.local != nil {
			l = *e.local
		} else if l.flags&8 != 0 {
			l.crc, l.csize, l.size = 0, 0, 0
		}
		var b [30]byte
		le.PutUint32(b[0:], 0x04034b50)
		le.PutUint16(b[4:], 20)
		le.PutUint16(b[6:], l.flags)
		le.PutUint16(b[8:], l.method)
		le.PutUint16(b[12:], 0x21)
		le.PutUint32(b[14:], l.crc)
		le.PutUint32(b[18:], l.csize)
		le.PutUint32(b[22:], l.size)
		le.PutUint16(b[26:], uint16(len(l.name)))
		le.PutUint16(b[28:], uint16(len(l.extra)))
		out.Write(b[:])
		out.WriteString(l.name)
		out.Write(l.extra)
		out.Write(e.data)
		out.Write(e.descriptor)
		out.Write(e.after)
	}
	dir := out.Len() - base
	for i, e := range a.entries {
		h := e.central
		var b [46]byte
		le.PutUint32(b[0:], 0x02014b50)
		mb := e.madeBy
		if mb == 0 {
			mb = 3<<8 | 20
		}
		le.PutUint16(b[4:], mb)
		le.PutUint16(b[6:], 20)
		le.PutUint16(b[8:], h.flags)
		le.PutUint16(b[10:], h.method)
		le.PutUint16(b[14:], 0x21)
		le.PutUint32(b[16:], h.crc)
		le.PutUint32(b[20:], h.csize)
		le.PutUint32(b[24:], h.size)
		le.PutUint16(b[28:], uint16(len(h.name)))
		le.PutUint16(b[30:], uint16(len(h.extra)))
		le.PutUint32(b[38:], e.attrs)
		le.PutUint32(b[42:], offs[i])
		out.Write(b[:])
		out.WriteString(h.name)
		out.Write(h.extra)
	}
	dsize := out.Len() - base - dir
	var end [22]byte
	le.PutUint32(end[0:], 0x06054b50)
	le.PutUint16(end[8:], uint16(len(a.entries)))
	le.PutUint16(end[10:], uint16(len(a.entries)))
	le.PutUint32(end[12:], uint32(dsize))
	le.PutUint32(end[16:], uint32(dir))
	le.PutUint16(end[20:], uint16(len(a.comment)))
	out.Write(end[:])
	out.WriteString(a.comment)
	return out.Bytes()
}

func rzip(es ...zent) []byte { return zarchive{entries: es}.bytes() }

func zstored(name, body string) zent {
	return zent{central: zhdr{name: name, crc: crc32.ChecksumIEEE([]byte(body)), csize: uint32(len(body)), size: uint32(len(body))},
		attrs: 0o100644 << 16, data: []byte(body)}
}

func deflateBytes(b []byte) []byte {
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, flate.DefaultCompression)
	fw.Write(b)
	fw.Close()
	return buf.Bytes()
}

func zdeflated(name, body string) zent {
	d := deflateBytes([]byte(body))
	return zent{central: zhdr{name: name, method: 8, crc: crc32.ChecksumIEEE([]byte(body)), csize: uint32(len(d)), size: uint32(len(body))},
		attrs: 0o100644 << 16, data: d}
}

func zdesc(h zhdr) []byte {
	var b [16]byte
	le := binary.LittleEndian
	le.PutUint32(b[0:], 0x08074b50)
	le.PutUint32(b[4:], h.crc)
	le.PutUint32(b[8:], h.csize)
	le.PutUint32(b[12:], h.size)
	return b[:]
}

// zjava is a file as java.util.zip.ZipOutputStream writes it.
func zjava(name, body string) zent {
	e := zdeflated(name, body)
	e.central.flags |= 8
	e.descriptor = zdesc(e.central)
	e.attrs = 0
	e.madeBy = 20 // MS-DOS, as Java writes
	return e
}

// zjavaFolder is a folder as ZipOutputStream writes it: deflated.
func zjavaFolder(name string) zent {
	e := zjava(name, "")
	e.data = []byte{0x03, 0x00}
	e.central.csize = 2
	e.descriptor = zdesc(e.central)
	return e
}

func zfolder(name string) zent {
	return zent{central: zhdr{name: name}, attrs: (0o40755 << 16) | 0x10}
}

func u32(v uint32) *uint32 { return &v }
