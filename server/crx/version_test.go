package crx

import (
	"net/url"
	"strings"
	"testing"
)

func TestCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"1", "1.0.0.0", 0},
		{"1.0", "1.0.0", 0},
		{"1.2", "1.10", -1},
		{"1.10", "1.9", 1},
		{"2", "1.65535.65535.65535", 1},
		{"1.0.0.1", "1.0.0", 1},
		{"0.0.0.0", "0", 0},
		{"65535", "65534.1", 1},
		{"1.0", "bogus", 1},
		{"1.2.3.4.5", "1", -1},
		{"65536", "0", -1},
		{"01", "1", -1},
		{"", "x", 0},
	} {
		if got := CompareVersions(c.a, c.b); got != c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := CompareVersions(c.b, c.a); got != -c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
	for _, v := range []string{"1", "1.2.3.4", "0", "65535.65535.65535.65535"} {
		if !ValidVersion(v) {
			t.Errorf("ValidVersion(%q) = false", v)
		}
	}
	for _, v := range []string{"", ".", "1.", "1..2", "-1", "1.2.3.4.5", "65536", "1.a", " 1", "+1", "00"} {
		if ValidVersion(v) {
			t.Errorf("ValidVersion(%q) = true", v)
		}
	}
}

func TestServedVersionRepeatedUpload(t *testing.T) {
	var served []string
	for bundle := int64(1); bundle <= 3; bundle++ {
		v, name := ServedVersion("1.0.0", served, bundle)
		if !ValidVersion(v) {
			t.Fatalf("bundle %d: invalid version %q", bundle, v)
		}
		for _, p := range served {
			if CompareVersions(v, p) <= 0 {
				t.Fatalf("bundle %d: %s not greater than earlier %s", bundle, v, p)
			}
		}
		if bundle == 1 && (v != "1.0.0" || name != "") {
			t.Fatalf("first upload served as %q/%q, want 1.0.0 unchanged", v, name)
		}
		if bundle > 1 && name != "1.0.0" {
			t.Fatalf("bundle %d: versionName %q, want uploaded text", bundle, name)
		}
		served = append(served, v)
	}
	if want := []string{"1.0.0", "1.0.0.2", "1.0.0.3"}; strings.Join(served, " ") != strings.Join(want, " ") {
		t.Fatalf("served %v, want %v", served, want)
	}
	// A genuinely higher upload is kept as is.
	if v, name := ServedVersion("1.0.1", served, 4); v != "1.0.1" || name != "" {
		t.Fatalf("higher upload served as %q/%q", v, name)
	}
	// Lower than a derived version: derive again.
	if v, name := ServedVersion("1.0.0.2", served, 4); v != "1.0.0.4" || name != "1.0.0.2" {
		t.Fatalf("got %q/%q", v, name)
	}
}

func TestServedVersionEdges(t *testing.T) {
	for _, c := range []struct {
		uploaded string
		prev     []string
		bundle   int64
		want     string
		wantName string
	}{
		{"1.0", nil, 1, "1.0", ""},
		{"1.0", []string{"garbage"}, 1, "1.0", ""},
		{"bad version", nil, 5, "0.0.0.5", "bad version"},
		{"1.0", []string{"1.0.0.9"}, 5, "1.0.0.10", "1.0"},        // bundle not greater: +1
		{"1.0", []string{"1.0.0.9"}, 70000, "1.0.0.10", "1.0"},    // bundle too big: +1
		{"1.0", []string{"1.0.0.65535"}, 7, "1.0.1.0", "1.0"},     // carry into third part
		{"1.0", []string{"1.2.65535.65535"}, 7, "1.3.0.0", "1.0"}, // double carry
		{"1", []string{"65535.65535.65535.65534"}, 0, "65535.65535.65535.65535", "1"},
		{"1", []string{"65535.65535.65535.65535"}, 9, "65535.65535.65535.65535", "1"}, // nothing greater exists
		{"3", []string{"2", "5.1", "4"}, 7, "5.1.0.7", "3"},                           // max of previous, not last
		{"5.1.0.1", []string{"5.1"}, 7, "5.1.0.1", ""},
	} {
		v, name := ServedVersion(c.uploaded, c.prev, c.bundle)
		if v != c.want || name != c.wantName {
			t.Errorf("ServedVersion(%q, %v, %d) = %q/%q, want %q/%q", c.uploaded, c.prev, c.bundle, v, name, c.want, c.wantName)
		}
		if !ValidVersion(v) {
			t.Errorf("invalid result %q", v)
		}
	}
}

func TestUpdateXML(t *testing.T) {
	got := string(UpdateXML("abcdefghijklmnopabcdefghijklmnop", "1.0.0.3", "https://beta.example.com/crx/x.crx?a=1&b='2'"))
	want := `<?xml version='1.0' encoding='UTF-8'?>
<gupdate xmlns='http://www.google.com/update2/response' protocol='2.0'>
  <app appid='abcdefghijklmnopabcdefghijklmnop' status='ok'>
    <updatecheck status='ok' codebase='https://beta.example.com/crx/x.crx?a=1&amp;b=&#39;2&#39;' version='1.0.0.3' />
  </app>
</gupdate>
`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	got = string(UpdateResponse(App{ID: "current"}, App{ID: "other", Status: AppUnknown}))
	want = `<?xml version='1.0' encoding='UTF-8'?>
<gupdate xmlns='http://www.google.com/update2/response' protocol='2.0'>
  <app appid='current' status='ok'>
    <updatecheck status='noupdate' />
  </app>
  <app appid='other' status='error-unknownApplication' />
</gupdate>
`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if s := string(UpdateXML(`<"&'>`, "1", "u")); !strings.Contains(s, `appid='&lt;&#34;&amp;&#39;&gt;'`) {
		t.Fatalf("not escaped: %s", s)
	}
}

func TestParseUpdateCheck(t *testing.T) {
	q := "os=linux&arch=x64&prod=chromiumcrx&prodversion=156.0.8078.79&acceptformat=crx3" +
		"&x=id%3Dabcdefghijklmnopabcdefghijklmnop%26v%3D1.0.0%26installsource%3Dnotfromwebstore%26uc" +
		"&x=" + url.QueryEscape("id=ponmlkjihgfedcbaponmlkjihgfedcba&v=2.3.4.5&uc") +
		"&x=" + url.QueryEscape("v=1&uc") // no id: skipped
	got := ParseUpdateCheck(q)
	want := []UpdateCheck{
		{"abcdefghijklmnopabcdefghijklmnop", "1.0.0"},
		{"ponmlkjihgfedcbaponmlkjihgfedcba", "2.3.4.5"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %v, want %v", i, got[i], want[i])
		}
	}
	if got := ParseUpdateCheck(""); len(got) != 0 {
		t.Errorf("empty query gave %v", got)
	}
}
