package api_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/api"
)

func TestParseKeyFile(t *testing.T) {
	tests := []struct {
		name, file string
		key        api.ServiceKey
		bare       bool
		reason     string // "" when the file is read
	}{
		{"as downloaded", `{"service": {"extensionId": "7", "apiKey": "bpk_x"}}` + "\n", api.ServiceKey{ExtensionID: "7", APIKey: "bpk_x"}, false, ""},
		{"id as a number", `{"service": {"extensionId": 7, "apiKey": "bpk_x"}}`, api.ServiceKey{ExtensionID: "7", APIKey: "bpk_x"}, false, ""},
		{"spaces trimmed", `{"service": {"extensionId": " 7 ", "apiKey": "bpk_x\n"}}`, api.ServiceKey{ExtensionID: "7", APIKey: "bpk_x"}, false, ""},
		{"other fields ignored", `{"label": "ci", "service": {"extensionId": "7", "apiKey": "bpk_x", "name": "Tab Tamer"}}`, api.ServiceKey{ExtensionID: "7", APIKey: "bpk_x"}, false, ""},
		{"bare object", `{"extensionId": "7", "apiKey": "bpk_x"}`, api.ServiceKey{ExtensionID: "7", APIKey: "bpk_x"}, true, ""},
		{"bare object without its key", `{"extensionId": "7"}`, api.ServiceKey{}, true, "apiKey is missing or empty"},
		{"not JSON", `extensionId=7`, api.ServiceKey{}, false, "not a JSON object"},
		{"cut short", `{"service": `, api.ServiceKey{}, false, "not a JSON object"},
		{"an array", `[]`, api.ServiceKey{}, false, "not a JSON object"},
		{"null", `null`, api.ServiceKey{}, false, "not a JSON object"},
		{"trailing data", `{"service": {"extensionId": "7", "apiKey": "k"}} {}`, api.ServiceKey{}, false, "not a JSON object"},
		{"byte order mark", "\xef\xbb\xbf{}", api.ServiceKey{}, false, "not a JSON object"},
		{"no service", `{"name": "key"}`, api.ServiceKey{}, false, `no "service" object`},
		{"service null", `{"service": null}`, api.ServiceKey{}, false, `"service" is not an object`},
		{"service a string", `{"service": "k"}`, api.ServiceKey{}, false, `"service" is not an object`},
		{"no apiKey", `{"service": {"extensionId": "7"}}`, api.ServiceKey{}, false, "service.apiKey is missing or empty"},
		{"empty id", `{"service": {"extensionId": "  ", "apiKey": "k"}}`, api.ServiceKey{}, false, "service.extensionId is missing or empty"},
		{"id an object", `{"service": {"extensionId": {"id": 7}, "apiKey": "k"}}`, api.ServiceKey{}, false, "service.extensionId is missing or empty"},
		{"field names are exact", `{"Service": {"extensionId": "7", "apiKey": "k"}}`, api.ServiceKey{}, false, `no "service" object`},
		{"too large", `{"service": {"extensionId": "7", "apiKey": "` + strings.Repeat("k", api.MaxKeyFileSize) + `"}}`, api.ServiceKey{}, false, "larger than 64 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, bare, err := api.ParseKeyFile([]byte(tt.file))
			if tt.reason == "" {
				if err != nil || key != tt.key || bare != tt.bare {
					t.Fatalf("= %+v, bare %v, %v; want %+v, bare %v", key, bare, err, tt.key, tt.bare)
				}
				return
			}
			var kerr *api.KeyFileError
			if !errors.As(err, &kerr) || !strings.Contains(kerr.Reason, tt.reason) || bare != tt.bare {
				t.Fatalf("= %+v, bare %v, %v; want a KeyFileError saying %q (bare %v)", key, bare, err, tt.reason, tt.bare)
			}
			if key != (api.ServiceKey{}) {
				t.Errorf("returned key %+v with the error", key)
			}
			// The text reads after a file's name and says what to do.
			msg := "key.json is " + err.Error()
			if !strings.HasPrefix(msg, "key.json is not a key file (") || !strings.Contains(msg, "settings page") || !strings.Contains(msg, api.KeyFileShape) {
				t.Errorf("message %q", msg)
			}
		})
	}
}

// FuzzParseKeyFile: any content is read as a key with both fields, or
// refused with a KeyFileError; a key file written from what was read reads
// back the same.
func FuzzParseKeyFile(f *testing.F) {
	for _, s := range []string{`{"service":{"extensionId":"1","apiKey":"k"}}`, `{"extensionId":"1","apiKey":"k"}`, `{"service":null}`, `{"service":{"extensionId":1}}`, "\xef\xbb\xbf{}", `[]`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		key, _, err := api.ParseKeyFile(data)
		if err != nil {
			var kerr *api.KeyFileError
			if !errors.As(err, &kerr) {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		if key.ExtensionID == "" || key.APIKey == "" {
			t.Fatalf("read a key with an empty field from %q: %+v", data, key)
		}
		b, _ := json.Marshal(api.KeyFile{Service: key})
		again, bare, err := api.ParseKeyFile(b)
		if err != nil || again != key || bare {
			t.Fatalf("%s read back as %+v, %v, %v", b, again, bare, err)
		}
	})
}

func TestServiceKeyOf(t *testing.T) {
	decode := func(body string) map[string]json.RawMessage {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &raw); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return raw
	}
	good := `{"extensionId":"7","apiKey":"bpk_x"}`
	for _, body := range []string{good, `{"extensionId":7,"apiKey":"bpk_x"}`} {
		key, err := api.ServiceKeyOf(decode(body))
		if err != nil || key != (api.ServiceKey{ExtensionID: "7", APIKey: "bpk_x"}) {
			t.Errorf("%q = %+v, %v", body, key, err)
		}
	}
	obj := strings.TrimSuffix(good, "}")
	tests := []struct {
		name, body, param, detail string
	}{
		{"unknown field", obj + `,"apikey":"x"}`, "apikey", `unknown field "apikey"`},
		{"extra field beside the key", obj + `,"plan":"professional"}`, "plan", `unknown field "plan"`},
		{"unknown field name cut", obj + `,"` + strings.Repeat("é", 40) + `":1}`, strings.Repeat("é", 32) + "…", "unknown field"},
		{"whole key file", `{"service":` + good + `,"name":"Tab Tamer"}`, "service", `object under "service"`},
		{"id of the wrong type", `{"extensionId":{"id":1},"apiKey":"k"}`, "extensionId", "extensionId is missing"},
		{"no extensionId", `{"apiKey":"k"}`, "extensionId", "extensionId is missing"},
		{"empty apiKey", `{"extensionId":"7","apiKey":""}`, "apiKey", "apiKey is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, err := api.ServiceKeyOf(decode(tt.body))
			p, ok := api.AsProblem(err)
			if !ok || p.Status != 400 || p.Type != api.ProblemBadRequest || p.Param != tt.param || !strings.Contains(p.Detail, tt.detail) {
				t.Fatalf("= %+v, %#v; want a 400 problem with param %q saying %q", key, err, tt.param, tt.detail)
			}
			if key != (api.ServiceKey{}) {
				t.Errorf("returned key %+v with the problem", key)
			}
		})
	}
}

func TestIsZipStart(t *testing.T) {
	for head, want := range map[string]bool{
		"PK\x03\x04":         true,
		"PK\x05\x06":         true,
		"PK\x03\x04rest":     true,
		"PK\x03":             false,
		"":                   false,
		"<html>":             false,
		"PK\x07\x08":         false,
		"pk\x03\x04":         false,
		"\x00PK\x03\x04":     false,
		"PK\x05\x06\x00\x00": true,
	} {
		if got := api.IsZipStart([]byte(head)); got != want {
			t.Errorf("IsZipStart(%q) = %v, want %v", head, got, want)
		}
	}
	if api.ZipHeadSize != 4 {
		t.Errorf("ZipHeadSize = %d", api.ZipHeadSize)
	}
}
