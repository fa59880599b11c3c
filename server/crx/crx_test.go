package crx

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	keyOnce sync.Once
	testKey *rsa.PrivateKey
	keyErr  error
)

func key(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	keyOnce.Do(func() { testKey, keyErr = GenerateKey() })
	if keyErr != nil {
		t.Fatal(keyErr)
	}
	return testKey
}

func makeZip(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"manifest.json", "background.js", "icons/", "icons/readme.txt"} {
		body, ok := files[name]
		if !ok {
			continue
		}
		fh := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
		if strings.HasSuffix(name, "/") {
			fh.Method = zip.Store
		}
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readZipFile(t testing.TB, zr *zip.Reader, name string) []byte {
	t.Helper()
	f, err := zr.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const updateURL = "https://beta.example.com/crx/update?t=tok&x=<1>"

// buildCRX runs the full pipeline: PrepareManifest, RewriteManifest, Write.
func buildCRX(t testing.TB, k *rsa.PrivateKey, version, versionName string) []byte {
	t.Helper()
	orig := makeZip(t, map[string]string{
		"manifest.json":    `{"manifest_version":3,"name":"Demo","version":"1.0.0","background":{"service_worker":"background.js"},"permissions":["storage"]}`,
		"background.js":    "console.log('hi')\n",
		"icons/":           "",
		"icons/readme.txt": strings.Repeat("icon ", 100),
	})
	zr, err := zip.NewReader(bytes.NewReader(orig), int64(len(orig)))
	if err != nil {
		t.Fatal(err)
	}
	pubDER := PublicKeyDER(&k.PublicKey)
	man, err := PrepareManifest(readZipFile(t, zr, "manifest.json"), pubDER, updateURL, version, versionName)
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	if _, err := RewriteManifest(&z, zr, man); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Write(&out, bytes.NewReader(z.Bytes()), int64(z.Len()), k); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestExtensionIDMapping(t *testing.T) {
	der := []byte("not really a key")
	sum := sha256.Sum256(der)
	h := hex.EncodeToString(sum[:16])
	want := strings.Map(func(r rune) rune {
		if r <= '9' {
			return 'a' + (r - '0')
		}
		return 'a' + 10 + (r - 'a')
	}, h)
	got := ExtensionID(der)
	if got != want || len(got) != 32 || strings.Trim(got, "abcdefghijklmnop") != "" {
		t.Fatalf("ExtensionID = %q, want %q", got, want)
	}
	if !bytes.Equal(CRXID(der), sum[:16]) {
		t.Fatal("CRXID mismatch")
	}
}

func TestKeyPEMRoundTrip(t *testing.T) {
	k := key(t)
	if k.N.BitLen() != 2048 {
		t.Fatalf("key is %d bits", k.N.BitLen())
	}
	p, err := MarshalPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(p, []byte("-----BEGIN PRIVATE KEY-----")) {
		t.Fatalf("not PKCS#8 PEM: %.40s", p)
	}
	k2, err := ParsePrivateKey(p)
	if err != nil {
		t.Fatal(err)
	}
	if !k.Equal(k2) {
		t.Fatal("parsed key differs")
	}
	if _, err := ParsePrivateKey([]byte("garbage")); err == nil {
		t.Fatal("ParsePrivateKey accepted garbage")
	}
}

func TestRoundTrip(t *testing.T) {
	k := key(t)
	crx := buildCRX(t, k, "1.0.0.7", "1.0.0")
	f, err := Read(bytes.NewReader(crx), int64(len(crx)))
	if err != nil {
		t.Fatal(err)
	}
	pubDER := PublicKeyDER(&k.PublicKey)
	if f.ExtensionID != ExtensionID(pubDER) {
		t.Fatalf("ExtensionID %s, want %s", f.ExtensionID, ExtensionID(pubDER))
	}
	if !bytes.Equal(f.PublicKey, pubDER) {
		t.Fatal("public key mismatch")
	}
	if f.ZipOffset+f.ZipSize != int64(len(crx)) || f.Zip.Size() != f.ZipSize {
		t.Fatalf("zip at %d+%d in %d bytes", f.ZipOffset, f.ZipSize, len(crx))
	}
	zr, err := zip.NewReader(f.Zip, f.ZipSize)
	if err != nil {
		t.Fatal(err)
	}
	var man map[string]any
	if err := json.Unmarshal(readZipFile(t, zr, "manifest.json"), &man); err != nil {
		t.Fatal(err)
	}
	if man["key"] != base64.StdEncoding.EncodeToString(pubDER) {
		t.Errorf("key = %v", man["key"])
	}
	if man["update_url"] != updateURL || man["version"] != "1.0.0.7" || man["version_name"] != "1.0.0" {
		t.Errorf("manifest = %v", man)
	}
	if man["name"] != "Demo" || man["manifest_version"] != float64(3) {
		t.Errorf("other fields lost: %v", man)
	}
	if got := string(readZipFile(t, zr, "background.js")); got != "console.log('hi')\n" {
		t.Errorf("background.js = %q", got)
	}
	if got := string(readZipFile(t, zr, "icons/readme.txt")); got != strings.Repeat("icon ", 100) {
		t.Errorf("icons/readme.txt = %q", got)
	}
}

func TestTampering(t *testing.T) {
	k := key(t)
	crx := buildCRX(t, k, "2.0", "")
	f, err := Read(bytes.NewReader(crx), int64(len(crx)))
	if err != nil {
		t.Fatal(err)
	}
	hdrLen := int(binary.LittleEndian.Uint32(crx[8:12]))
	sigOff := bytes.Index(crx, PublicKeyDER(&k.PublicKey)) + len(PublicKeyDER(&k.PublicKey)) + 3 // tag + 2-byte length
	cases := map[string]int{
		"magic":           1,
		"version":         4,
		"header size":     9,
		"header pubkey":   12 + 10,
		"signature":       sigOff + 100,
		"crx_id":          12 + hdrLen - 1,
		"zip first byte":  int(f.ZipOffset),
		"zip middle byte": int(f.ZipOffset + f.ZipSize/2),
		"zip last byte":   len(crx) - 1,
	}
	for name, off := range cases {
		t.Run(name, func(t *testing.T) {
			bad := bytes.Clone(crx)
			bad[off] ^= 0x01
			if _, err := Read(bytes.NewReader(bad), int64(len(bad))); err == nil {
				t.Fatalf("Read accepted CRX with byte %d flipped", off)
			} else {
				t.Log(err)
			}
		})
	}
	for _, n := range []int{0, 11, 12 + hdrLen - 1} {
		if _, err := Read(bytes.NewReader(crx[:n]), int64(n)); err == nil {
			t.Errorf("Read accepted CRX truncated to %d bytes", n)
		}
	}
	// A valid signature by another key that does not own the crx_id.
	other, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	crx2 := buildCRX(t, other, "2.0", "")
	f2, err := Read(bytes.NewReader(crx2), int64(len(crx2)))
	if err != nil {
		t.Fatal(err)
	}
	if f2.ExtensionID == f.ExtensionID {
		t.Fatal("two keys gave the same ID")
	}
}

// TestChromiumPackedCRX packs an unpacked extension with Chromium's own
// --pack-extension and checks that Read verifies it and attributes it to the
// same extension ID as a CRX built by Write with the same key.
func TestChromiumPackedCRX(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium not found (%v): install it with `apt-get install -y chromium`", err)
	}
	k := key(t)
	dir := t.TempDir()
	pemBytes, err := MarshalPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "key.pem")
	extDir := filepath.Join(dir, "ext")
	if err := os.WriteFile(keyPath, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(extDir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(extDir, "manifest.json"), []byte(`{"manifest_version":3,"name":"Betaport cross-check","version":"1.2.3","background":{"service_worker":"bg.js"}}`), 0o644)
	os.WriteFile(filepath.Join(extDir, "bg.js"), []byte("console.log('packed by chromium');\n"), 0o644)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--no-sandbox", "--headless", "--disable-gpu", "--no-message-box",
		"--user-data-dir="+filepath.Join(dir, "profile"),
		"--pack-extension="+extDir, "--pack-extension-key="+keyPath)
	out, runErr := cmd.CombinedOutput()
	crxPath := extDir + ".crx"
	data, err := os.ReadFile(crxPath)
	if err != nil {
		t.Fatalf("chromium did not write %s (run error %v): %v\noutput:\n%s", crxPath, runErr, err, out)
	}
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("Read rejected Chromium's CRX: %v", err)
	}
	own := buildCRX(t, k, "1.2.3", "")
	of, err := Read(bytes.NewReader(own), int64(len(own)))
	if err != nil {
		t.Fatal(err)
	}
	if f.ExtensionID != of.ExtensionID || f.ExtensionID != ExtensionID(PublicKeyDER(&k.PublicKey)) {
		t.Fatalf("Chromium CRX id %s, own CRX id %s", f.ExtensionID, of.ExtensionID)
	}
	if !bytes.Equal(f.PublicKey, of.PublicKey) {
		t.Fatal("Chromium's public key DER differs from PublicKeyDER")
	}
	zr, err := zip.NewReader(f.Zip, f.ZipSize)
	if err != nil {
		t.Fatalf("Chromium CRX zip: %v", err)
	}
	if got := string(readZipFile(t, zr, "bg.js")); got != "console.log('packed by chromium');\n" {
		t.Fatalf("bg.js = %q", got)
	}
	// Tampering with Chromium's CRX must also be detected.
	data[len(data)-30] ^= 0x01
	if _, err := Read(bytes.NewReader(data), int64(len(data))); err == nil {
		t.Fatal("Read accepted tampered Chromium CRX")
	}
}

func TestPrepareManifest(t *testing.T) {
	in := []byte(`{"name":"x","version":"0.1","key":"old","nested":{"a":[1,2.50,"s"]},"big":12345678901234567890}`)
	out, err := PrepareManifest(in, []byte{1, 2, 3}, "https://u/?a=1&b=2", "0.1.0.5", "")
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{`"key": "AQID"`, `"version": "0.1.0.5"`, `"big": 12345678901234567890`, `"nested": {"a":[1,2.50,"s"]}`} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %s in\n%s", want, s)
		}
	}
	if strings.Contains(s, "version_name") {
		t.Errorf("version_name set although empty:\n%s", s)
	}
	if i, j, k := strings.Index(s, `"name"`), strings.Index(s, `"version"`), strings.Index(s, `"update_url"`); !(i < j && j < k) {
		t.Errorf("key order not kept:\n%s", s)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	if m["update_url"] != "https://u/?a=1&b=2" {
		t.Errorf("update_url = %v", m["update_url"])
	}
	out, err = PrepareManifest(in, nil, "u", "1", "1.0 beta")
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(out, &m)
	if m["version_name"] != "1.0 beta" {
		t.Errorf("version_name = %v", m["version_name"])
	}
	for _, bad := range []string{``, `[]`, `{"a":}`, `{} {}`} {
		if _, err := PrepareManifest([]byte(bad), nil, "u", "1", ""); err == nil {
			t.Errorf("PrepareManifest accepted %q", bad)
		}
	}
}

func TestRewriteManifestNoManifest(t *testing.T) {
	z := makeZip(t, map[string]string{"background.js": "x"})
	zr, _ := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	if _, err := RewriteManifest(io.Discard, zr, []byte("{}")); err == nil {
		t.Fatal("RewriteManifest accepted a zip without manifest.json")
	}
}
