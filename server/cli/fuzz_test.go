package cli

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadKeyFile: any file content is read or refused with a usage error
// that names the flag; a key it reads has both fields.
func FuzzReadKeyFile(f *testing.F) {
	for _, s := range []string{`{"service":{"extensionId":"1","apiKey":"k"}}`, `{"extensionId":"1","apiKey":"k"}`, `{"service":null}`, `{"service":{"extensionId":1}}`, "\xef\xbb\xbf{}", `[]`, ``} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "key.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		key, err := readKeyFile(path)
		if err != nil {
			if !strings.Contains(err.Error(), "--key") {
				t.Fatalf("error %q does not name --key", err)
			}
			return
		}
		if key.ExtensionID == "" || key.APIKey == "" {
			t.Fatalf("read a key with an empty field from %q: %+v", data, key)
		}
	})
}

// FuzzCheckBaseURL: an accepted base URL is http(s) with a host, without
// a trailing slash, query or fragment, and accepted again as it is.
func FuzzCheckBaseURL(f *testing.F) {
	for _, s := range []string{"https://beta.example.com/", "http://127.0.0.1:8080", "ftp://x", "https://", "https://x?y", "http://[::1]:1/", "https://x/a//"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		base, _, err := checkBaseURL(raw)
		if err != nil {
			return
		}
		u, perr := url.Parse(base)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(base, "/") {
			t.Fatalf("checkBaseURL(%q) = %q", raw, base)
		}
		if again, _, err := checkBaseURL(base); err != nil || again != base {
			t.Fatalf("checkBaseURL(%q) = %q, then %q, %v", raw, base, again, err)
		}
	})
}
