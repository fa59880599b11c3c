// Package policy writes the browser policy files that let a tester keep a
// self-hosted extension: Chrome (and Chromium) keep an extension from
// outside the Web Store across restarts on Windows and macOS only when a
// policy installs it. Each file sets ExtensionSettings for one extension:
// installed from the tester's own update URL (override_update_url keeps
// every later update on it), in the format each system reads: JSON in
// Linux's managed policy folders, a configuration profile (.mobileconfig)
// on macOS, a registry file (.reg) on Windows.
package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"
	"unicode/utf16"
)

// Extension is what a policy installs: an extension's Chrome ID and the
// update URL it installs and updates from.
type Extension struct {
	ChromeID  string
	UpdateURL string
	// Name names the profile on macOS ("Betaport: Tab Tamer").
	Name string
}

// setting is one extension's entry of the ExtensionSettings policy.
type setting struct {
	InstallationMode  string `json:"installation_mode"`
	UpdateURL         string `json:"update_url"`
	OverrideUpdateURL bool   `json:"override_update_url"`
}

// installationMode installs the extension and lets the person turn it
// off (force_installed would not).
const installationMode = "normal_installed"

func (e Extension) settings() map[string]setting {
	return map[string]setting{e.ChromeID: {InstallationMode: installationMode, UpdateURL: e.UpdateURL, OverrideUpdateURL: true}}
}

// Linux is the JSON file for /etc/opt/chrome/policies/managed (Chrome) or
// /etc/chromium/policies/managed (Chromium).
func Linux(e Extension) []byte {
	b, _ := json.MarshalIndent(map[string]any{"ExtensionSettings": e.settings()}, "", "  ")
	return append(b, '\n')
}

// Windows is a registry file (UTF-16LE with a byte order mark, as
// Registry Editor writes them) that sets Chrome's ExtensionSettings policy
// for the machine; the value is the policy's JSON on one line.
func Windows(e Extension) []byte {
	value, _ := json.Marshal(e.settings())
	escaped := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(string(value))
	text := "Windows Registry Editor Version 5.00\r\n\r\n" +
		`[HKEY_LOCAL_MACHINE\SOFTWARE\Policies\Google\Chrome]` + "\r\n" +
		`"ExtensionSettings"="` + escaped + "\"\r\n"
	var b bytes.Buffer
	b.Write([]byte{0xff, 0xfe})
	for _, u := range utf16.Encode([]rune(text)) {
		binary.Write(&b, binary.LittleEndian, u)
	}
	return b.Bytes()
}

// MacOS is a configuration profile that sets Chrome's ExtensionSettings.
// Its identifiers and UUIDs are derived from the extension and the URL,
// so installing a new download replaces the profile rather than adding a
// second one.
func MacOS(e Extension) []byte {
	id := "dev.betaport.policy." + e.ChromeID
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
	b.WriteString(`<plist version="1.0">` + "\n<dict>\n")
	key(&b, "PayloadContent")
	b.WriteString("<array>\n<dict>\n")
	str(&b, "PayloadType", "com.google.Chrome")
	integer(&b, "PayloadVersion", 1)
	str(&b, "PayloadIdentifier", id+".chrome")
	str(&b, "PayloadUUID", uuid(id+".chrome "+e.UpdateURL))
	str(&b, "PayloadDisplayName", "Google Chrome")
	key(&b, "ExtensionSettings")
	b.WriteString("<dict>\n")
	key(&b, e.ChromeID)
	b.WriteString("<dict>\n")
	str(&b, "installation_mode", installationMode)
	str(&b, "update_url", e.UpdateURL)
	key(&b, "override_update_url")
	b.WriteString("<true/>\n</dict>\n</dict>\n</dict>\n</array>\n")
	str(&b, "PayloadDisplayName", e.Name)
	str(&b, "PayloadIdentifier", id)
	str(&b, "PayloadType", "Configuration")
	str(&b, "PayloadUUID", uuid(id+" "+e.UpdateURL))
	integer(&b, "PayloadVersion", 1)
	str(&b, "PayloadScope", "System")
	b.WriteString("</dict>\n</plist>\n")
	return b.Bytes()
}

func key(b *bytes.Buffer, k string) {
	b.WriteString("<key>")
	xml.EscapeText(b, []byte(k))
	b.WriteString("</key>\n")
}

func str(b *bytes.Buffer, k, v string) {
	key(b, k)
	b.WriteString("<string>")
	xml.EscapeText(b, []byte(v))
	b.WriteString("</string>\n")
}

func integer(b *bytes.Buffer, k string, v int) {
	key(b, k)
	fmt.Fprintf(b, "<integer>%d</integer>\n", v)
}

// uuid is a name-based UUID (version 5 layout, SHA-256 truncated) of s.
func uuid(s string) string {
	h := sha256.Sum256([]byte(s))
	h[6] = h[6]&0x0f | 0x50
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%X-%X-%X-%X-%X", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}
