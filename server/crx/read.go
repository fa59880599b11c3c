package crx

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// File is a parsed and verified CRX3 package.
type File struct {
	// ExtensionID is the 32-letter ID derived from the header's crx_id.
	ExtensionID string
	// PublicKey is the DER SubjectPublicKeyInfo whose hash is the crx_id.
	PublicKey []byte
	// ZipOffset and ZipSize locate the embedded zip archive in the file.
	ZipOffset, ZipSize int64
	// Zip reads the embedded zip archive.
	Zip *io.SectionReader
}

type proof struct{ pub, sig []byte }

// Read parses a CRX3 file of size bytes and verifies it: every
// sha256_with_rsa proof must carry a valid signature over the signed message,
// and signed_header_data's crx_id must be the ID of one of the proofs' keys.
func Read(r io.ReaderAt, size int64) (*File, error) {
	var pre [12]byte
	if size < int64(len(pre)) {
		return nil, errors.New("crx: file too short for CRX3 header")
	}
	if _, err := r.ReadAt(pre[:], 0); err != nil {
		return nil, fmt.Errorf("crx: read header: %w", err)
	}
	if string(pre[:4]) != magic {
		return nil, fmt.Errorf("crx: bad magic %q, want %q", pre[:4], magic)
	}
	if v := binary.LittleEndian.Uint32(pre[4:8]); v != formatVersion {
		return nil, fmt.Errorf("crx: unsupported CRX format version %d, want 3", v)
	}
	hdrLen := int64(binary.LittleEndian.Uint32(pre[8:12]))
	if hdrLen > maxHeaderSize {
		return nil, fmt.Errorf("crx: header size %d exceeds limit %d", hdrLen, maxHeaderSize)
	}
	if 12+hdrLen > size {
		return nil, fmt.Errorf("crx: header size %d exceeds file size %d", hdrLen, size)
	}
	hdr := make([]byte, hdrLen)
	if _, err := r.ReadAt(hdr, 12); err != nil {
		return nil, fmt.Errorf("crx: read header: %w", err)
	}
	proofs, shd, err := parseHeader(hdr)
	if err != nil {
		return nil, err
	}
	crxID, err := parseSignedData(shd)
	if err != nil {
		return nil, err
	}
	if len(proofs) == 0 {
		return nil, errors.New("crx: header has no sha256_with_rsa proofs")
	}

	zipOff := 12 + hdrLen
	zipSize := size - zipOff
	h := newSignedHash(shd)
	if n, err := io.Copy(h, io.NewSectionReader(r, zipOff, zipSize)); err != nil {
		return nil, fmt.Errorf("crx: hash archive: %w", err)
	} else if n != zipSize {
		return nil, fmt.Errorf("crx: archive short read: %d of %d bytes", n, zipSize)
	}
	digest := h.Sum(nil)

	var idKey []byte
	for i, p := range proofs {
		k, err := x509.ParsePKIXPublicKey(p.pub)
		if err != nil {
			return nil, fmt.Errorf("crx: proof %d: parse public key: %w", i, err)
		}
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, fmt.Errorf("crx: proof %d: public key is %T, want RSA", i, k)
		}
		if err := rsa.VerifyPKCS1v15(rk, crypto.SHA256, digest, p.sig); err != nil {
			return nil, fmt.Errorf("crx: proof %d: signature verification failed: %w", i, err)
		}
		if idKey == nil && bytes.Equal(CRXID(p.pub), crxID) {
			idKey = p.pub
		}
	}
	if idKey == nil {
		return nil, fmt.Errorf("crx: crx_id %x matches no proof's public key", crxID)
	}
	return &File{
		ExtensionID: idFromCRXID(crxID),
		PublicKey:   idKey,
		ZipOffset:   zipOff,
		ZipSize:     zipSize,
		Zip:         io.NewSectionReader(r, zipOff, zipSize),
	}, nil
}

// parseHeader decodes CrxFileHeader, returning the RSA proofs and
// signed_header_data. Unknown fields (e.g. sha256_with_ecdsa) are skipped.
func parseHeader(b []byte) (proofs []proof, shd []byte, err error) {
	seenSHD := false
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, nil, fmt.Errorf("crx: malformed header tag: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if (num == fieldRSAProof || num == fieldSignedHdr) && typ != protowire.BytesType {
			return nil, nil, fmt.Errorf("crx: header field %d has wire type %d, want bytes", num, typ)
		}
		switch num {
		case fieldRSAProof:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, nil, fmt.Errorf("crx: malformed sha256_with_rsa: %w", protowire.ParseError(n))
			}
			b = b[n:]
			p, err := parseProof(v)
			if err != nil {
				return nil, nil, err
			}
			proofs = append(proofs, p)
		case fieldSignedHdr:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, nil, fmt.Errorf("crx: malformed signed_header_data: %w", protowire.ParseError(n))
			}
			b = b[n:]
			shd, seenSHD = v, true
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return nil, nil, fmt.Errorf("crx: malformed header field %d: %w", num, protowire.ParseError(n))
			}
			b = b[n:]
		}
	}
	if !seenSHD {
		return nil, nil, errors.New("crx: header has no signed_header_data")
	}
	return proofs, shd, nil
}

func parseProof(b []byte) (proof, error) {
	var p proof
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return p, fmt.Errorf("crx: malformed key proof: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if (num == fieldPublicKey || num == fieldSignature) && typ != protowire.BytesType {
			return p, fmt.Errorf("crx: key proof field %d has wire type %d, want bytes", num, typ)
		}
		var v []byte
		if num == fieldPublicKey || num == fieldSignature {
			v, n = protowire.ConsumeBytes(b)
		} else {
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return p, fmt.Errorf("crx: malformed key proof field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
		switch num {
		case fieldPublicKey:
			p.pub = v
		case fieldSignature:
			p.sig = v
		}
	}
	if len(p.pub) == 0 || len(p.sig) == 0 {
		return p, errors.New("crx: key proof lacks public_key or signature")
	}
	return p, nil
}

func parseSignedData(b []byte) ([]byte, error) {
	var id []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, fmt.Errorf("crx: malformed signed_header_data: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if num == fieldCRXID {
			if typ != protowire.BytesType {
				return nil, fmt.Errorf("crx: crx_id has wire type %d, want bytes", typ)
			}
			id, n = protowire.ConsumeBytes(b)
		} else {
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return nil, fmt.Errorf("crx: malformed signed_header_data field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
	}
	if len(id) != 16 {
		return nil, fmt.Errorf("crx: crx_id is %d bytes, want 16", len(id))
	}
	return id, nil
}
