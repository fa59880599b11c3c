package crx

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRead: Read never panics, and whatever it accepts is signed by the
// key whose ID it names.
func FuzzRead(f *testing.F) {
	good := buildCRX(f, key(f), "1.2.3", "")
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte("Cr24\x03\x00\x00\x00\xff\xff\xff\xff"))
	flipped := bytes.Clone(good)
	flipped[len(flipped)-10] ^= 1
	f.Add(flipped)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		if file.Zip == nil || file.Zip.Size() > int64(len(data)) {
			t.Fatalf("accepted CRX with zip %v", file.Zip)
		}
	})
}

// FuzzParseUpdateCheck: any query parses without panicking, and every
// check it returns names an extension.
func FuzzParseUpdateCheck(f *testing.F) {
	for _, q := range []string{"x=id%3Dabc%26v%3D1.0%26uc", "x=id%3D&x=v%3D1", "x=%zz", "x=id%3Da%26v%3D1&x=id%3Db", ";;;", "x=id%3D%00"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		for _, c := range ParseUpdateCheck(q) {
			if c.ID == "" {
				t.Fatalf("check without an id from %q", q)
			}
		}
	})
}

// FuzzPrepareManifest: a manifest that prepares becomes a JSON object with
// the key, update URL and version set, and preparing it again changes
// nothing.
func FuzzPrepareManifest(f *testing.F) {
	for _, m := range []string{`{"manifest_version":3,"name":"x","version":"1"}`, `{"key":"old","key":"dup","update_url":5}`, `{}`, `[]`, `{"a":1}{}`, `{"version_name":"β"}`} {
		f.Add([]byte(m), "1.2.3", "beta")
	}
	pub := PublicKeyDER(&key(f).PublicKey)
	f.Fuzz(func(t *testing.T, manifest []byte, version, versionName string) {
		if !utf8.ValidString(version) || !utf8.ValidString(versionName) {
			return // versions are checked text; JSON would replace such bytes
		}
		out, err := PrepareManifest(manifest, pub, "https://b.example/update/1/t", version, versionName)
		if err != nil {
			return
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("prepared manifest is not a JSON object: %v\n%s", err, out)
		}
		if got["version"] != version || got["update_url"] != "https://b.example/update/1/t" || got["key"] == nil {
			t.Fatalf("prepared manifest lacks its fields: %s", out)
		}
		again, err := PrepareManifest(out, pub, "https://b.example/update/1/t", version, versionName)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("preparing twice changed it: %v\n%s\n%s", err, out, again)
		}
	})
}

// FuzzVersions: CompareVersions is an order on valid versions, and
// ServedVersion always serves a valid version above every earlier one,
// unless they reached the highest.
func FuzzVersions(f *testing.F) {
	f.Add("1.0", "1.0.0", "65535.65535.65535.65535", int64(3))
	f.Add("0", "1.2.3.4", "9.9", int64(70000))
	f.Add("65535.65535.65535.65535", "1", "x", int64(1))
	f.Fuzz(func(t *testing.T, a, b, c string, number int64) {
		if ValidVersion(a) && ValidVersion(b) {
			if CompareVersions(a, b) != -CompareVersions(b, a) || CompareVersions(a, a) != 0 {
				t.Fatalf("CompareVersions(%q, %q) is not an order", a, b)
			}
		}
		previous := []string{b, c}
		v, _ := ServedVersion(a, previous, number)
		if !ValidVersion(v) {
			t.Fatalf("ServedVersion(%q, %q, %d) = %q, not a version", a, previous, number, v)
		}
		if Exhausted(previous) {
			return
		}
		for _, p := range previous {
			if ValidVersion(p) && CompareVersions(v, p) <= 0 {
				t.Fatalf("ServedVersion(%q, %q, %d) = %q, not above %q", a, previous, number, v, p)
			}
		}
	})
}

// FuzzParsePrivateKey: any bytes parse or fail without panicking; a key
// that parses marshals back to one that parses to the same key.
func FuzzParsePrivateKey(f *testing.F) {
	pem, err := MarshalPrivateKey(key(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(pem)
	f.Add([]byte(strings.Replace(string(pem), "PRIVATE KEY", "RSA PRIVATE KEY", 2)))
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := ParsePrivateKey(data)
		if err != nil {
			return
		}
		again, err := MarshalPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		k2, err := ParsePrivateKey(again)
		if err != nil || !k2.Equal(k) {
			t.Fatalf("key does not round-trip: %v", err)
		}
	})
}
