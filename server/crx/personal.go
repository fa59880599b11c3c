package crx

import (
	"archive/zip"
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
)

// Personal packages
//
// A tester's CRX differs from the extension's shared one only in its
// manifest (its update_url names the tester). The archive is written with
// manifest.json as its last entry (see RewriteManifest), so every byte
// before that entry is the same in every tester's package: the shared
// prefix. Since CRX3 signs
//
//	"CRX3 SignedData\x00" ‖ len ‖ signed header ‖ archive
//
// the SHA-256 state after the prefix is kept (Template.State) and a
// tester's package costs a hash of the tail (the manifest's entry, the
// central directory and its end record) and one RSA signature, whatever
// the archive's size. PKCS#1 v1.5 signatures are deterministic: a tester's
// package is the same bytes every time it is made, so it has a stable
// ETag and can be resumed with Range requests.

// A Template is what a packed CRX keeps for making its personal copies.
type Template struct {
	// HeaderSize is where the archive begins in the CRX file: every
	// package of the same key has a header of this size.
	HeaderSize int64
	// TailAt is where the archive's last entry (manifest.json) begins,
	// counted from the start of the CRX file: bytes [HeaderSize, TailAt)
	// are the shared prefix, [TailAt, end) the shared package's tail.
	TailAt int64
	// State is the SHA-256 state of the signed message up to TailAt
	// (hash.Hash's MarshalBinary).
	State []byte
}

// WritePackage writes a CRX3 file, as Write does, of an archive whose last
// entry begins at tailAt (RewriteManifest's answer), and returns the
// Template its personal copies are made from.
func WritePackage(w io.Writer, zipReader io.ReaderAt, zipSize, tailAt int64, key *rsa.PrivateKey) (Template, error) {
	if zipSize < 0 || tailAt < 0 || tailAt > zipSize {
		return Template{}, fmt.Errorf("crx: last entry at %d of a %d-byte archive", tailAt, zipSize)
	}
	pubDER := PublicKeyDER(&key.PublicKey)
	h := newSignedHash(signedHeaderData(pubDER))
	if err := hashSection(h, zipReader, 0, tailAt); err != nil {
		return Template{}, err
	}
	state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return Template{}, err
	}
	if err := hashSection(h, zipReader, tailAt, zipSize-tailAt); err != nil {
		return Template{}, err
	}
	hdr, err := header(key, pubDER, h.Sum(nil))
	if err != nil {
		return Template{}, err
	}
	if _, err := w.Write(hdr); err != nil {
		return Template{}, err
	}
	n, err := io.Copy(w, io.NewSectionReader(zipReader, 0, zipSize))
	if err != nil {
		return Template{}, fmt.Errorf("crx: copy zip: %w", err)
	}
	if n != zipSize {
		return Template{}, fmt.Errorf("crx: zip short read: %d of %d bytes", n, zipSize)
	}
	size := int64(len(hdr))
	return Template{HeaderSize: size, TailAt: size + tailAt, State: state}, nil
}

func hashSection(h hash.Hash, r io.ReaderAt, off, n int64) error {
	got, err := io.Copy(h, io.NewSectionReader(r, off, n))
	if err != nil {
		return fmt.Errorf("crx: hash zip: %w", err)
	}
	if got != n {
		return fmt.Errorf("crx: zip short read: %d of %d bytes", got, n)
	}
	return nil
}

// header returns the CRX3 file header (magic, version, size and the
// CrxFileHeader) signing digest, the SHA-256 of the signed message.
func header(key *rsa.PrivateKey, pubDER, digest []byte) ([]byte, error) {
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest)
	if err != nil {
		return nil, fmt.Errorf("crx: sign: %w", err)
	}
	var proof []byte
	proof = protowireBytes(proof, fieldPublicKey, pubDER)
	proof = protowireBytes(proof, fieldSignature, sig)
	var hdr []byte
	hdr = protowireBytes(hdr, fieldRSAProof, proof)
	hdr = protowireBytes(hdr, fieldSignedHdr, signedHeaderData(pubDER))
	out := make([]byte, 0, 12+len(hdr))
	out = append(out, magic...)
	out = binary.LittleEndian.AppendUint32(out, formatVersion)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(hdr)))
	return append(out, hdr...), nil
}

// A Personal is one tester's copy of a packed CRX: Header, then the shared
// prefix (the packed CRX's bytes [Template.HeaderSize, Template.TailAt)),
// then Tail.
type Personal struct {
	Header []byte
	Tail   []byte
}

// Size is the personal package's size in bytes.
func (p Personal) Size(t Template) int64 {
	return int64(len(p.Header)) + (t.TailAt - t.HeaderSize) + int64(len(p.Tail))
}

// MakePersonal makes the copy of a package, whose template is t and whose
// tail (its bytes from t.TailAt to the end) is tail, with manifest as its
// last entry, signed with key (the package's own).
func MakePersonal(t Template, tail, manifest []byte, key *rsa.PrivateKey) (Personal, error) {
	newTail, err := replaceLastEntry(tail, t.TailAt-t.HeaderSize, manifest)
	if err != nil {
		return Personal{}, err
	}
	h := sha256.New()
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(t.State); err != nil {
		return Personal{}, fmt.Errorf("crx: the template's hash state: %w", err)
	}
	h.Write(newTail)
	hdr, err := header(key, PublicKeyDER(&key.PublicKey), h.Sum(nil))
	if err != nil {
		return Personal{}, err
	}
	if int64(len(hdr)) != t.HeaderSize {
		return Personal{}, fmt.Errorf("crx: a %d-byte header for a template of %d: not the package's key", len(hdr), t.HeaderSize)
	}
	return Personal{Header: hdr, Tail: newTail}, nil
}

// TailManifest returns the manifest a package's tail holds (its last
// entry, stored as RewriteManifest writes it).
func TailManifest(tail []byte) ([]byte, error) {
	e, err := parseTail(tail)
	if err != nil {
		return nil, err
	}
	return tail[e.dataAt:e.dataEnd], nil
}

// Zip record layouts (APPNOTE.TXT 4.3.7, 4.3.12, 4.3.16).
const (
	localSig      = 0x04034b50
	localLen      = 30
	centralSig    = 0x02014b50
	centralLen    = 46
	endSig        = 0x06054b50
	endLen        = 22
	flagDataDesc  = 0x8
	maxUint32Zip  = 0xffffffff
	maxUint16Zip  = 0xffff
	centralOffset = 42 // of the local header's offset in a central record
)

var errTail = errors.New("crx: the package's tail is not a manifest entry followed by the central directory")

// lastEntry is the manifest's local entry at the start of a tail.
type lastEntry struct {
	dataAt, dataEnd int // the manifest's bytes in the tail
	central         int // where the central directory begins in the tail
	record          int // the manifest's central record
	end             int // the end of central directory record
}

// parseTail finds a tail's parts: a stored entry without a data
// descriptor, then the central directory (holding its record) and an end
// record without comment or zip64 fields, as RewriteManifest writes them.
func parseTail(tail []byte) (lastEntry, error) {
	var e lastEntry
	le := binary.LittleEndian
	if len(tail) < localLen+centralLen+endLen || le.Uint32(tail) != localSig {
		return e, errTail
	}
	flags, method := le.Uint16(tail[6:]), le.Uint16(tail[8:])
	size, usize := le.Uint32(tail[18:]), le.Uint32(tail[22:])
	if flags&flagDataDesc != 0 || method != zip.Store || size != usize || size == maxUint32Zip {
		return e, errTail
	}
	e.dataAt = localLen + int(le.Uint16(tail[26:])) + int(le.Uint16(tail[28:]))
	e.dataEnd = e.dataAt + int(size)
	e.end = len(tail) - endLen
	if e.dataEnd > e.end || le.Uint32(tail[e.end:]) != endSig || le.Uint16(tail[e.end+20:]) != 0 {
		return e, errTail
	}
	count, cdSize := le.Uint16(tail[e.end+10:]), le.Uint32(tail[e.end+12:])
	if count == maxUint16Zip || cdSize == maxUint32Zip || le.Uint32(tail[e.end+16:]) == maxUint32Zip {
		return e, errors.New("crx: a zip64 archive has no personal copies")
	}
	e.central = e.end - int(cdSize)
	if e.central != e.dataEnd {
		return e, errTail
	}
	// The manifest's record is the central directory's last.
	e.record = -1
	for at, n := e.central, 0; n < int(count); n++ {
		if at+centralLen > e.end || le.Uint32(tail[at:]) != centralSig {
			return e, errTail
		}
		e.record = at
		at += centralLen + int(le.Uint16(tail[at+28:])) + int(le.Uint16(tail[at+30:])) + int(le.Uint16(tail[at+32:]))
		if n == int(count)-1 && at != e.end {
			return e, errTail
		}
	}
	if e.record < 0 {
		return e, errTail
	}
	return e, nil
}

// replaceLastEntry returns a tail whose last entry holds data instead,
// given where the tail begins in its archive: the local header's CRC and
// sizes, the central record's, and the central directory's offset follow.
func replaceLastEntry(tail []byte, tailAt int64, data []byte) ([]byte, error) {
	e, err := parseTail(tail)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	if int64(le.Uint32(tail[e.record+centralOffset:])) != tailAt {
		return nil, errTail
	}
	cdOffset := tailAt + int64(e.dataAt+len(data))
	if len(data) >= maxUint32Zip || cdOffset >= maxUint32Zip {
		return nil, errors.New("crx: a zip64 archive has no personal copies")
	}
	crc, n := crc32.ChecksumIEEE(data), uint32(len(data))
	var b bytes.Buffer
	b.Grow(len(tail) - (e.dataEnd - e.dataAt) + len(data))
	local := bytes.Clone(tail[:e.dataAt])
	le.PutUint32(local[14:], crc)
	le.PutUint32(local[18:], n)
	le.PutUint32(local[22:], n)
	b.Write(local)
	b.Write(data)
	central := bytes.Clone(tail[e.central:])
	r := e.record - e.central
	le.PutUint32(central[r+16:], crc)
	le.PutUint32(central[r+20:], n)
	le.PutUint32(central[r+24:], n)
	le.PutUint32(central[len(central)-endLen+16:], uint32(cdOffset))
	b.Write(central)
	return b.Bytes(), nil
}
