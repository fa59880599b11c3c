package policy_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/betaport/betaport/server/policy"
)

var ext = policy.Extension{
	ChromeID:  "abcdefghijklmnopabcdefghijklmnop",
	UpdateURL: `https://beta.example/update/7/t_a&b<c>"d'\e`,
	Name:      `Betaport: Tab "Tamer" & <co>`,
}

// want is the ExtensionSettings policy every file must carry.
var want = map[string]any{ext.ChromeID: map[string]any{
	"installation_mode": "normal_installed", "update_url": ext.UpdateURL, "override_update_url": true,
}}

func TestLinuxIsThePolicyJSON(t *testing.T) {
	var got map[string]any
	if err := json.Unmarshal(policy.Linux(ext), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, map[string]any{"ExtensionSettings": want}) {
		t.Fatalf("the policy is %v", got)
	}
}

// The .reg file is what Registry Editor imports: UTF-16LE with a byte
// order mark, its header line, the machine's Chrome policy key, and
// ExtensionSettings as a string value holding the policy's JSON.
func TestWindowsIsARegistryFile(t *testing.T) {
	b := policy.Windows(ext)
	if len(b) < 2 || b[0] != 0xff || b[1] != 0xfe || len(b)%2 != 0 {
		t.Fatalf("not UTF-16LE with a BOM: % x", b[:min(len(b), 8)])
	}
	units := make([]uint16, (len(b)-2)/2)
	binary.Read(bytes.NewReader(b[2:]), binary.LittleEndian, units)
	text := string(utf16.Decode(units))
	lines := strings.Split(text, "\r\n")
	if lines[0] != "Windows Registry Editor Version 5.00" || lines[1] != "" ||
		lines[2] != `[HKEY_LOCAL_MACHINE\SOFTWARE\Policies\Google\Chrome]` {
		t.Fatalf("the file begins %q", lines[:3])
	}
	value, ok := strings.CutPrefix(lines[3], `"ExtensionSettings"="`)
	if !ok || !strings.HasSuffix(value, `"`) || lines[4] != "" || len(lines) != 5 {
		t.Fatalf("the value line is %q (of %d lines)", lines[3], len(lines))
	}
	// A .reg string escapes \ and " with a backslash; nothing else.
	var raw strings.Builder
	v := strings.TrimSuffix(value, `"`)
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' {
			i++
			if i == len(v) || (v[i] != '\\' && v[i] != '"') {
				t.Fatalf("a bad escape in %q", v)
			}
		} else if v[i] == '"' {
			t.Fatalf("an unescaped quote in %q", v)
		}
		raw.WriteByte(v[i])
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(raw.String()), &got); err != nil {
		t.Fatalf("the value is not the policy's JSON: %v (%q)", err, raw.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the policy is %v", got)
	}
}

// The profile parses as a property list: a Configuration payload holding
// one com.google.Chrome payload with the ExtensionSettings policy, and it
// is the same file every time (a new download replaces the profile).
func TestMacOSIsAConfigurationProfile(t *testing.T) {
	b := policy.MacOS(ext)
	root, err := parsePlist(b)
	if err != nil {
		t.Fatalf("not a property list: %v\n%s", err, b)
	}
	top, ok := root.(map[string]any)
	if !ok || top["PayloadType"] != "Configuration" || top["PayloadVersion"] != int64(1) || top["PayloadDisplayName"] != ext.Name {
		t.Fatalf("the profile is %v", root)
	}
	content, _ := top["PayloadContent"].([]any)
	if len(content) != 1 {
		t.Fatalf("PayloadContent is %v", top["PayloadContent"])
	}
	chrome, _ := content[0].(map[string]any)
	if chrome["PayloadType"] != "com.google.Chrome" || !reflect.DeepEqual(chrome["ExtensionSettings"], want) {
		t.Fatalf("the Chrome payload is %v", chrome)
	}
	for _, p := range []map[string]any{top, chrome} {
		if id, _ := p["PayloadUUID"].(string); len(id) != 36 || strings.Count(id, "-") != 4 {
			t.Errorf("PayloadUUID %q", p["PayloadUUID"])
		}
	}
	if top["PayloadUUID"] == chrome["PayloadUUID"] || top["PayloadIdentifier"] == chrome["PayloadIdentifier"] {
		t.Error("the profile and its payload share an identifier")
	}
	if !bytes.Equal(b, policy.MacOS(ext)) {
		t.Error("two downloads differ")
	}
	other := ext
	other.UpdateURL += "x"
	if bytes.Equal(b, policy.MacOS(other)) {
		t.Error("another tester's profile is the same")
	}
}

// parsePlist reads an XML property list of dicts, arrays, strings,
// integers and booleans.
func parsePlist(b []byte) (any, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local != "plist" {
				return nil, fmt.Errorf("root <%s>", se.Name.Local)
			}
			v, err := plistValue(d, nil)
			if err != nil {
				return nil, err
			}
			for {
				tok, err := d.Token()
				if err == io.EOF {
					return v, nil
				} else if err != nil {
					return nil, err
				}
				if _, ok := tok.(xml.StartElement); ok {
					return nil, fmt.Errorf("more than one value")
				}
			}
		}
	}
}

// plistValue reads the next value (its start element is read unless
// given).
func plistValue(d *xml.Decoder, start *xml.StartElement) (any, error) {
	if start == nil {
		for {
			tok, err := d.Token()
			if err != nil {
				return nil, err
			}
			if se, ok := tok.(xml.StartElement); ok {
				start = &se
				break
			}
			if _, ok := tok.(xml.EndElement); ok {
				return nil, errEnd
			}
		}
	}
	switch start.Name.Local {
	case "string", "key":
		var s string
		err := d.DecodeElement(&s, start)
		return s, err
	case "integer":
		var n int64
		err := d.DecodeElement(&n, start)
		return n, err
	case "true", "false":
		return start.Name.Local == "true", d.Skip()
	case "array":
		var a []any
		for {
			v, err := plistValue(d, nil)
			if err == errEnd {
				return a, nil
			} else if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
	case "dict":
		m := map[string]any{}
		for {
			k, err := plistValue(d, nil)
			if err == errEnd {
				return m, nil
			} else if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("a dict key is %v", k)
			}
			if _, dup := m[ks]; dup {
				return nil, fmt.Errorf("key %q twice", ks)
			}
			if m[ks], err = plistValue(d, nil); err != nil {
				return nil, err
			}
		}
	}
	return nil, fmt.Errorf("unknown element <%s>", start.Name.Local)
}

var errEnd = fmt.Errorf("end of container")
