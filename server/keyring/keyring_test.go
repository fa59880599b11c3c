package keyring

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestSealOpenRotate(t *testing.T) {
	old := Generate()
	k1, err := Parse(old)
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("-----BEGIN PRIVATE KEY-----\nMII…\n-----END PRIVATE KEY-----\n")
	sealed := k1.Seal(secret, "extension 7")
	if bytes.Contains(sealed, []byte("PRIVATE KEY")) || !IsSealed(sealed) {
		t.Fatalf("sealed value shows the key: %s", sealed)
	}
	if id, ok := KeyID(sealed); !ok || id != k1.Newest() {
		t.Fatalf("KeyID = %q, %v", id, ok)
	}
	// A new key is added: the newest seals, the old still opens.
	k2, err := Parse(old + "\n" + Generate() + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := k2.Open(sealed, "extension 7"); err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("older key no longer opens: %v", err)
	}
	resealed := k2.Seal(secret, "extension 7")
	if id, _ := KeyID(resealed); id != k2.Newest() || id == k1.Newest() {
		t.Fatalf("resealed with %s, want the newest", id)
	}
	// Bound to its row.
	if _, err := k2.Open(sealed, "extension 8"); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("opened for another extension: %v", err)
	}
	// A keyring without the old key, or with a changed one under its id.
	if _, err := k1.Open(resealed, "extension 7"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("unknown key: %v", err)
	}
	id, _, _ := strings.Cut(old, ":")
	changed, _ := Parse(id + ":" + strings.SplitN(Generate(), ":", 2)[1])
	if _, err := changed.Open(sealed, "extension 7"); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("changed key: %v", err)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, text := range []string{"", "# only a comment", "nocolon", "bad id:AAAA", "k1:notbase64!", "k1:AAAA", Generate() + "," + Generate()[:strings.Index(Generate(), ":")] + ":x"} {
		if _, err := Parse(text); err == nil {
			t.Errorf("Parse(%q) accepted", text)
		}
	}
	e := Generate()
	if _, err := Parse(e + "," + e); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate id: %v", err)
	}
	k, err := Parse("# comment\n" + Generate() + ",\r\n" + Generate())
	if err != nil || len(k.IDs()) != 2 {
		t.Errorf("comments and separators: %v", err)
	}
	// A comment line is whole: a comma in it separates nothing.
	k, err = Parse("# seals signing keys, tokens, and secrets\n  # and, again\n" + Generate())
	if err != nil || len(k.IDs()) != 1 {
		t.Errorf("a comment with commas: %v", err)
	}
}

// TestParseNeverEchoesAKey: a key pasted without its "id:" (or with a
// broken id) is refused without repeating any of it: error messages reach
// logs and CI output.
func TestParseNeverEchoesAKey(t *testing.T) {
	first, second := Generate(), Generate()
	_, key, _ := strings.Cut(second, ":")
	for _, text := range []string{key, first + "," + key, "bad id:" + key, first + "\n" + key + ":" + key} {
		_, err := Parse(text)
		if err == nil {
			t.Fatalf("Parse accepted a key without its id")
		}
		for i := 0; i+6 <= len(key); i++ {
			if strings.Contains(err.Error(), key[i:i+6]) {
				t.Fatalf("the error repeats part of the key (%q): %v", key[i:i+6], err)
			}
		}
	}
	if _, err := Parse(first + "," + key); err == nil || !strings.Contains(err.Error(), "entry 2") {
		t.Errorf("the refusal does not say which entry: %v", err)
	}
}
