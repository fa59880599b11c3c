package crx

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"encoding/binary"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// assemble builds a CRX3 by hand with the given signed_header_data, signed
// by every key in signers.
func assemble(t *testing.T, shd, zipBytes []byte, signers ...*rsa.PrivateKey) []byte {
	t.Helper()
	h := newSignedHash(shd)
	h.Write(zipBytes)
	digest := h.Sum(nil)
	var hdr []byte
	for _, k := range signers {
		sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, digest)
		if err != nil {
			t.Fatal(err)
		}
		var p []byte
		p = protowire.AppendTag(p, 1, protowire.BytesType)
		p = protowire.AppendBytes(p, PublicKeyDER(&k.PublicKey))
		p = protowire.AppendTag(p, 2, protowire.BytesType)
		p = protowire.AppendBytes(p, sig)
		hdr = protowire.AppendTag(hdr, 2, protowire.BytesType)
		hdr = protowire.AppendBytes(hdr, p)
	}
	hdr = protowire.AppendTag(hdr, 10000, protowire.BytesType)
	hdr = protowire.AppendBytes(hdr, shd)
	out := []byte("Cr24")
	out = binary.LittleEndian.AppendUint32(out, 3)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(hdr)))
	out = append(out, hdr...)
	return append(out, zipBytes...)
}

func TestReadHeaderRules(t *testing.T) {
	a := key(t)
	b, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	z := makeZip(t, map[string]string{"manifest.json": "{}"})
	shdA := signedHeaderData(PublicKeyDER(&a.PublicKey))

	// Validly signed by b, but claiming a's ID: must be refused.
	foreign := assemble(t, shdA, z, b)
	if _, err := Read(bytes.NewReader(foreign), int64(len(foreign))); err == nil ||
		!strings.Contains(err.Error(), "matches no proof") {
		t.Fatalf("crx_id of a foreign key: err = %v", err)
	}
	// Signed by both (e.g. an extra publisher proof): ID belongs to a.
	both := assemble(t, shdA, z, b, a)
	f, err := Read(bytes.NewReader(both), int64(len(both)))
	if err != nil {
		t.Fatal(err)
	}
	if f.ExtensionID != ExtensionID(PublicKeyDER(&a.PublicKey)) || !bytes.Equal(f.PublicKey, PublicKeyDER(&a.PublicKey)) {
		t.Fatalf("ID attributed to the wrong key: %s", f.ExtensionID)
	}
	// No proofs at all.
	none := assemble(t, shdA, z)
	if _, err := Read(bytes.NewReader(none), int64(len(none))); err == nil {
		t.Fatal("Read accepted a CRX without proofs")
	}
	// crx_id of the wrong length.
	short := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), make([]byte, 8))
	sh := assemble(t, short, z, a)
	if _, err := Read(bytes.NewReader(sh), int64(len(sh))); err == nil {
		t.Fatal("Read accepted an 8-byte crx_id")
	}
	// Header size larger than the file.
	bad := bytes.Clone(both)
	binary.LittleEndian.PutUint32(bad[8:12], uint32(len(bad)))
	if _, err := Read(bytes.NewReader(bad), int64(len(bad))); err == nil {
		t.Fatal("Read accepted an oversized header length")
	}
}
