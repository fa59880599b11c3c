// Package keyring seals extensions' CRX signing keys at rest (and the
// other secrets the service must read back: testers' update tokens,
// webhook secrets) with key-encryption keys (KEKs) that live outside the
// database, so a database dump alone cannot sign an update or an event.
//
// A keyring is a list of named 256-bit AES keys, oldest first. The newest
// seals; every key opens what it sealed, so adding a key loses nothing, and
// `betaport signing-key rewrap` moves every row to the newest key before an
// old one is dropped. Its text form is one "id:base64" entry per line (or
// comma-separated, for an environment variable), and # comment lines:
//
//	k20261124-3f9a:q0hW…=
//	k20270301-77c1:Zx1e…=
//
// Sealed values are text, "bpk1:<key id>:<base64 nonce+ciphertext>", bound
// by AES-GCM's additional data to the row they belong to, so a sealed key
// cannot be moved to another extension.
package keyring

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

const sealedPrefix = "bpk1:"

// Keyring holds KEKs, oldest first.
type Keyring struct {
	keys []kek
}

type kek struct {
	id   string
	aead cipher.AEAD
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Parse reads a keyring's text form.
func Parse(text string) (*Keyring, error) {
	k := &Keyring{}
	seen := map[string]bool{}
	n := 0
	// A comment is a whole line, commas and all; entries are separated by
	// lines or commas.
	var entries []string
	for line := range strings.FieldsFuncSeq(text, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			entries = append(entries, strings.Split(line, ",")...)
		}
	}
	for _, entry := range entries {
		entry = strings.TrimSpace(entry)
		if entry == "" || strings.HasPrefix(entry, "#") {
			continue
		}
		n++
		id, b64, ok := strings.Cut(entry, ":")
		if !ok || !idPattern.MatchString(id) {
			// Named by its place, never by its text: an entry pasted
			// without its id is the key itself.
			return nil, fmt.Errorf("keyring entry %d is not id:base64 (an id of letters, digits, - and _, a colon, then the key)", n)
		}
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
		if err != nil || len(raw) != 32 {
			return nil, fmt.Errorf("keyring key %q is not 32 bytes of base64; make one with `betaport signing-key generate`", id)
		}
		if seen[id] {
			return nil, fmt.Errorf("keyring key id %q appears twice", id)
		}
		seen[id] = true
		block, _ := aes.NewCipher(raw)
		aead, _ := cipher.NewGCM(block)
		k.keys = append(k.keys, kek{id, aead})
	}
	if len(k.keys) == 0 {
		return nil, errors.New("the keyring holds no key; make one with `betaport signing-key generate`")
	}
	return k, nil
}

// Generate returns a new keyring entry, "id:base64", with a fresh random
// key named after today's date.
func Generate() string {
	raw := make([]byte, 32)
	rand.Read(raw)
	tag := make([]byte, 2)
	rand.Read(tag)
	return fmt.Sprintf("k%s-%s:%s", time.Now().UTC().Format("20060102"), hex.EncodeToString(tag), base64.StdEncoding.EncodeToString(raw))
}

// IDs lists the keys' ids, oldest first.
func (k *Keyring) IDs() []string {
	ids := make([]string, len(k.keys))
	for i, key := range k.keys {
		ids[i] = key.id
	}
	return ids
}

// Newest is the id of the key that seals.
func (k *Keyring) Newest() string { return k.keys[len(k.keys)-1].id }

// Seal encrypts plaintext with the newest key, bound to context (which
// row it is for).
func (k *Keyring) Seal(plaintext []byte, context string) []byte {
	key := k.keys[len(k.keys)-1]
	nonce := make([]byte, key.aead.NonceSize())
	rand.Read(nonce)
	ct := key.aead.Seal(nonce, nonce, plaintext, []byte(context))
	return []byte(sealedPrefix + key.id + ":" + base64.StdEncoding.EncodeToString(ct))
}

// ErrUnknownKey is returned by Open for a value sealed with a key the
// keyring does not hold.
var ErrUnknownKey = errors.New("sealed with a key the keyring does not hold")

// ErrWrongKey is returned by Open when the key of that id does not open the
// value: the keyring's key was changed, or the value was damaged or moved.
var ErrWrongKey = errors.New("the keyring's key of that id does not open it")

// Open decrypts a sealed value for context.
func (k *Keyring) Open(sealed []byte, context string) ([]byte, error) {
	id, ct, err := split(sealed)
	if err != nil {
		return nil, err
	}
	for _, key := range k.keys {
		if key.id != id {
			continue
		}
		n := key.aead.NonceSize()
		if len(ct) < n {
			return nil, fmt.Errorf("key %s: %w", id, ErrWrongKey)
		}
		pt, err := key.aead.Open(nil, ct[:n], ct[n:], []byte(context))
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", id, ErrWrongKey)
		}
		return pt, nil
	}
	return nil, fmt.Errorf("key %s: %w", id, ErrUnknownKey)
}

// KeyID returns the id of the key a value was sealed with, and false for a
// value that is not sealed (a plaintext key from before sealing).
func KeyID(value []byte) (string, bool) {
	id, _, err := split(value)
	return id, err == nil
}

// IsSealed reports whether value is a sealed value rather than plaintext.
func IsSealed(value []byte) bool { return bytes.HasPrefix(value, []byte(sealedPrefix)) }

func split(sealed []byte) (id string, ct []byte, err error) {
	rest, ok := bytes.CutPrefix(sealed, []byte(sealedPrefix))
	if !ok {
		return "", nil, errors.New("not a sealed value")
	}
	idb, b64, ok := bytes.Cut(rest, []byte(":"))
	if !ok {
		return "", nil, errors.New("sealed value without a key id")
	}
	ct, err = base64.StdEncoding.DecodeString(string(b64))
	if err != nil {
		return "", nil, errors.New("sealed value is not base64")
	}
	return string(idb), ct, nil
}
