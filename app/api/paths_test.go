package api_test

import (
	"testing"

	"github.com/betaport/betaport/app/api"
)

// TestParseID: an id has one spelling, the one the API writes.
func TestParseID(t *testing.T) {
	for _, s := range []string{"1", "7", "10", "9223372036854775807"} {
		if n, ok := api.ParseID(s); !ok || n <= 0 {
			t.Errorf("ParseID(%q) = %d, %v; want it read", s, n, ok)
		}
	}
	for _, s := range []string{"", "0", "00", "01", "+1", "-1", "-0", " 1", "1 ", "1\t", "1.0", "1e3", "0x1", "1_000",
		"9223372036854775808", "99999999999999999999", "١"} {
		if n, ok := api.ParseID(s); ok {
			t.Errorf("ParseID(%q) = %d, true; want it refused", s, n)
		}
	}
	if n, ok := api.ParseNumber("0"); !ok || n != 0 {
		t.Errorf(`ParseNumber("0") = %d, %v`, n, ok)
	}
	for _, s := range []string{"00", "+0", "-0", "05"} {
		if _, ok := api.ParseNumber(s); ok {
			t.Errorf("ParseNumber(%q) read", s)
		}
	}
}
