package crx

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzValidVersion: a version zipcheck accepts (its rule is this one) is one Chrome's rules
// accept, and it round-trips through its parts.
func FuzzValidVersion(f *testing.F) {
	for _, s := range []string{"1", "1.0.0", "65535.65535.65535.65535", "01", "1..2", "65536", "1.2.3.4.5", "-1", "1 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !ValidVersion(s) {
			return
		}
		if strings.Trim(s, "0.") == "" {
			t.Fatalf("%q accepted: all zero", s)
		}
		parts := bytes.Split([]byte(s), []byte("."))
		if len(parts) < 1 || len(parts) > 4 {
			t.Fatalf("%q accepted with %d parts", s, len(parts))
		}
		for _, p := range parts {
			if len(p) == 0 || len(p) > 5 || (len(p) > 1 && p[0] == '0') {
				t.Fatalf("%q accepted with part %q", s, p)
			}
		}
	})
}

func TestValidVersion(t *testing.T) {
	for _, v := range []string{"1", "1.2", "1.2.3.4", "0.0.1", "0.1.0.0", "65535.0", "65535.65535.65535.65535", "10.20.300"} {
		if !ValidVersion(v) {
			t.Errorf("ValidVersion(%q) = false", v)
		}
	}
	for _, v := range []string{"0", "0.0", "0.0.0.0", "", ".", "1.", ".1", "1..2", "01", "1.02", "00", "1.2.3.4.5", "65536", "99999", "123456",
		"-1", "+1", "1.a", " 1", "1 ", "1.2 ", "1,2", "1e3", "0x1", "１"} {
		if ValidVersion(v) {
			t.Errorf("ValidVersion(%q) = true", v)
		}
	}
}
