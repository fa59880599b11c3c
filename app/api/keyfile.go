package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The key file and the key object of the submit flow have one reader each,
// here, for every side that reads them: ParseKeyFile for the file an admin
// downloads (the upload panel, the command line), ServiceKeyOf for the
// body of calls 1 and 3 (the server). Both take an extension id written as a
// number as well as a string, as the server always has.

// MaxKeyFileSize is far above any real key file: a larger file is not one.
const MaxKeyFileSize = 64 << 10

// KeyFileShape is what a key file looks like, for messages that say what to
// give instead.
const KeyFileShape = `{"service": {"extensionId": "…", "apiKey": "…"}}`

// KeyFileError says why a file is not a key file and what to do instead.
// Its text reads after the file's name: "key.json is " + err.Error().
type KeyFileError struct {
	// Reason is what is wrong, e.g. `service.apiKey is missing or empty`.
	Reason string
}

func (e *KeyFileError) Error() string {
	return "not a key file (" + e.Reason + "). Download the extension's key file on its settings page; it looks like " + KeyFileShape + "."
}

// ParseKeyFile reads a key file as downloaded from an extension's settings
// page, {"service": {"extensionId": …, "apiKey": …}}: one JSON object (any
// trailing data refused), exact field names, other fields ignored, values
// trimmed of spaces. The bare service object (what calls 1 and 3 send) is
// read too, and reported by bare: the upload panel takes it, the command
// line asks for the file as downloaded. A file that is not a key file gets
// a *KeyFileError.
func ParseKeyFile(b []byte) (key ServiceKey, bare bool, err error) {
	fail := func(reason string) (ServiceKey, bool, error) {
		return ServiceKey{}, bare, &KeyFileError{Reason: reason}
	}
	if len(b) > MaxKeyFileSize {
		return fail(fmt.Sprintf("it is larger than %d KiB", MaxKeyFileSize>>10))
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil || top == nil {
		return fail("not a JSON object")
	}
	obj, wrapped := top["service"]
	prefix := "service."
	if !wrapped {
		_, hasKey := top["apiKey"]
		_, hasID := top["extensionId"]
		if !hasKey && !hasID {
			return fail(`it has no "service" object`)
		}
		bare, obj, prefix = true, b, ""
	}
	var svc map[string]json.RawMessage
	if json.Unmarshal(obj, &svc) != nil || svc == nil {
		return fail(`"service" is not an object`)
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"extensionId", &key.ExtensionID}, {"apiKey", &key.APIKey}} {
		v, _ := keyText(svc[f.name])
		if *f.dst = strings.TrimSpace(v); *f.dst == "" {
			return fail(prefix + f.name + " is missing or empty")
		}
	}
	return key, bare, nil
}

// keyText is a key field's text: a JSON string's, or a number's digits.
func keyText(raw json.RawMessage) (string, bool) {
	if raw == nil {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String(), true
	}
	return "", false
}

// statusBadRequest is HTTP's 400, without importing net/http for it.
const statusBadRequest = 400

// ServiceKeyOf reads the key object of calls 1 and 3, as the server has
// decoded the body's one JSON object: extensionId and apiKey (a string, or
// a number) and nothing else. What it refuses is a *Problem to answer as it
// is: 400 bad-request, its Param naming the field at fault and its Detail
// saying what to send.
func ServiceKeyOf(raw map[string]json.RawMessage) (ServiceKey, error) {
	return serviceKeyOf(raw, true)
}

// SessionSubmitOf reads the body of calls 1 and 3 sent by an admin signed
// in to the browser, whose session authorises them: {"extensionId": …}
// and nothing else. What it refuses is a *Problem, as ServiceKeyOf's.
func SessionSubmitOf(raw map[string]json.RawMessage) (extensionID string, err error) {
	key, err := serviceKeyOf(raw, false)
	return key.ExtensionID, err
}

func serviceKeyOf(raw map[string]json.RawMessage, needKey bool) (ServiceKey, error) {
	var key ServiceKey
	if _, wrapped := raw["service"]; wrapped && raw["extensionId"] == nil {
		return key, badKey("service", `This is the whole key file. Send only the object under "service": {"extensionId": …, "apiKey": …}.`)
	}
	names := make([]string, 0, len(raw))
	for name := range raw {
		names = append(names, name)
	}
	slices.Sort(names) // the same field named every time
	for _, name := range names {
		if name != "extensionId" && name != "apiKey" {
			name = shorten(name, 64)
			return key, badKey(name, fmt.Sprintf("The key object has an unknown field %s. Send only the key file's service object: {\"extensionId\": …, \"apiKey\": …}.", strconv.Quote(name)))
		}
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"extensionId", &key.ExtensionID}, {"apiKey", &key.APIKey}} {
		if f.name == "apiKey" && !needKey {
			continue
		}
		if *f.dst, _ = keyText(raw[f.name]); *f.dst == "" {
			return ServiceKey{}, badKey(f.name, fmt.Sprintf("%s is missing. Send the key file's service object: {\"extensionId\": …, \"apiKey\": …}.", f.name))
		}
	}
	return key, nil
}

func badKey(param, detail string) *Problem {
	return &Problem{Type: ProblemBadRequest, Status: statusBadRequest, Param: param, Detail: detail}
}

// shorten cuts s to at most n bytes, on a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// The signatures a zip file starts with: a local file header, or the end of
// central directory record of an empty zip.
var zipSignatures = [][]byte{[]byte("PK\x03\x04"), []byte("PK\x05\x06")}

// ZipHeadSize is how many first bytes IsZipStart looks at.
const ZipHeadSize = 4

// IsZipStart reports whether head, a file's first bytes (at least
// ZipHeadSize of them), starts with a zip signature. A shorter head is no
// zip: every zip is longer.
func IsZipStart(head []byte) bool {
	if len(head) < ZipHeadSize {
		return false
	}
	for _, sig := range zipSignatures {
		if bytes.Equal(head[:ZipHeadSize], sig) {
			return true
		}
	}
	return false
}
