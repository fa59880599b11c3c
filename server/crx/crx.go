// Package crx builds, signs and verifies CRX3 browser-extension packages and
// implements the pieces of Chromium's extension auto-update protocol that
// Betaport needs (update manifests in gupdate XML, monotonically increasing
// served versions).
//
// # CRX3 layout
//
// A CRX3 file is:
//
//	"Cr24"                      magic, 4 bytes
//	uint32 little-endian        format version, always 3
//	uint32 little-endian        header size N
//	N bytes                     CrxFileHeader protobuf
//	rest of the file            the zip archive
//
// CrxFileHeader (Chromium's components/crx_file/crx3.proto) is encoded with
// protowire:
//
//	field 2     sha256_with_rsa     repeated AsymmetricKeyProof{
//	                                  1: public_key (DER SubjectPublicKeyInfo),
//	                                  2: signature }
//	field 10000 signed_header_data  bytes: SignedData{1: crx_id (16 bytes)}
//
// Each signature is RSA PKCS#1 v1.5 with SHA-256 over
//
//	"CRX3 SignedData\x00" || uint32le(len(signed_header_data)) ||
//	signed_header_data || zip bytes
//
// The crx_id is the first 16 bytes of SHA-256 of the extension's DER public
// key; the extension ID Chromium shows is those 16 bytes in hex with digits
// 0-f mapped to letters a-p.
//
// # Version rule
//
// Chromium only updates an extension when the offered version is strictly
// greater. [ServedVersion] keeps an uploaded manifest version when it is
// strictly greater than every version served before; otherwise it derives a
// version from the highest earlier served version: its first three parts are
// kept and the fourth part is set to the bundle number if that is greater
// than the old fourth part, else to the old fourth part + 1. If a part would
// exceed 65535 it is reset to 0 and the part to its left is incremented
// (carry). The uploaded text is then kept as version_name so testers still
// see it.
package crx

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// KeyBits is the RSA modulus size used for extension keys.
const KeyBits = 2048

const (
	magic          = "Cr24"
	formatVersion  = 3
	signedDataCtx  = "CRX3 SignedData\x00"
	fieldRSAProof  = 2
	fieldSignedHdr = 10000
	fieldPublicKey = 1
	fieldSignature = 2
	fieldCRXID     = 1
	// maxHeaderSize bounds the header we are willing to parse.
	maxHeaderSize = 1 << 20
)

// GenerateKey returns a new RSA-2048 private key for an extension.
func GenerateKey() (*rsa.PrivateKey, error) {
	return rsa.GenerateKey(rand.Reader, KeyBits)
}

// MarshalPrivateKey encodes key as a PKCS#8 "PRIVATE KEY" PEM block, the
// format Chromium's --pack-extension-key accepts.
func MarshalPrivateKey(key *rsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParsePrivateKey decodes a PEM-encoded PKCS#8 (or PKCS#1) RSA private key.
func ParsePrivateKey(data []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("crx: no PEM block in private key")
	}
	switch block.Type {
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("crx: parse PKCS#8 key: %w", err)
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("crx: private key is %T, want RSA", k)
		}
		return rk, nil
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("crx: parse PKCS#1 key: %w", err)
		}
		return k, nil
	default:
		return nil, fmt.Errorf("crx: unexpected PEM block %q", block.Type)
	}
}

// PublicKeyDER returns the DER SubjectPublicKeyInfo encoding of pub.
func PublicKeyDER(pub *rsa.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		// Cannot happen for a well-formed *rsa.PublicKey.
		panic("crx: marshal public key: " + err.Error())
	}
	return der
}

// CRXID returns the 16-byte crx_id of a DER public key: the first 16 bytes of
// its SHA-256.
func CRXID(pubDER []byte) []byte {
	sum := sha256.Sum256(pubDER)
	return sum[:16]
}

// ExtensionID returns Chromium's 32-letter extension ID for a DER public key.
func ExtensionID(pubDER []byte) string {
	return idFromCRXID(CRXID(pubDER))
}

func idFromCRXID(id []byte) string {
	h := []byte(hex.EncodeToString(id))
	for i, c := range h {
		if c >= 'a' {
			h[i] = c - 'a' + 10 + 'a'
		} else {
			h[i] = c - '0' + 'a'
		}
	}
	return string(h)
}

// signedHeaderData returns the serialized SignedData{crx_id}.
func signedHeaderData(pubDER []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, fieldCRXID, protowire.BytesType), CRXID(pubDER))
}

// newSignedHash returns a SHA-256 hash primed with the CRX3 signed-message
// prefix; the zip bytes are written to it afterwards.
func newSignedHash(shd []byte) hash.Hash {
	h := sha256.New()
	h.Write([]byte(signedDataCtx))
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(shd)))
	h.Write(n[:])
	h.Write(shd)
	return h
}

// Write writes a CRX3 file signed with key that embeds the zip archive of
// zipSize bytes read from zipReader. The archive is streamed twice (once to
// hash, once to copy), never held in memory.
func Write(w io.Writer, zipReader io.ReaderAt, zipSize int64, key *rsa.PrivateKey) error {
	_, err := WritePackage(w, zipReader, zipSize, zipSize, key)
	return err
}

func protowireBytes(b []byte, field protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, field, protowire.BytesType), v)
}
