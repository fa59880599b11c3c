package crx

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strconv"
	"strings"
)

// PrepareManifest returns manifest (a JSON object) with "key" set to the
// base64 DER public key, "update_url", "version" and, when versionName is not
// empty, "version_name" set. All other fields are kept, in their original
// order; new fields are appended.
func PrepareManifest(manifest []byte, pubDER []byte, updateURL, version, versionName string) ([]byte, error) {
	return editManifest(manifest, func(set func(k, v string)) {
		set("key", base64.StdEncoding.EncodeToString(pubDER))
		set("update_url", updateURL)
		set("version", version)
		if versionName != "" {
			set("version_name", versionName)
		}
	})
}

// SetUpdateURL returns a manifest PrepareManifest wrote with its
// update_url replaced: a tester's copy names their own.
func SetUpdateURL(manifest []byte, updateURL string) ([]byte, error) {
	return editManifest(manifest, func(set func(k, v string)) { set("update_url", updateURL) })
}

// editManifest returns manifest (a JSON object) with the string fields
// edit sets; all other fields are kept, in their original order, and new
// fields are appended.
func editManifest(manifest []byte, edit func(set func(k, v string))) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(manifest))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("crx: parse manifest: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("crx: manifest is not a JSON object")
	}
	type kv struct {
		k string
		v json.RawMessage
	}
	var fields []kv
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("crx: parse manifest: %w", err)
		}
		k := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("crx: parse manifest field %q: %w", k, err)
		}
		fields = append(fields, kv{k, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("crx: parse manifest: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("crx: trailing data after manifest object")
	}
	set := func(k, v string) {
		raw, _ := json.Marshal(v)
		for i := range fields {
			if fields[i].k == k {
				fields[i].v = raw
				return
			}
		}
		fields = append(fields, kv{k, raw})
	}
	edit(set)
	// Drop duplicate keys (the last occurrence wins in JSON.parse, but
	// setters above only update the first), keeping the first position.
	seen := map[string]bool{}
	fields = slices.DeleteFunc(fields, func(f kv) bool {
		d := seen[f.k]
		seen[f.k] = true
		return d
	})
	var buf bytes.Buffer
	buf.WriteString("{\n")
	for i, f := range fields {
		kb, _ := json.Marshal(f.k)
		buf.WriteString("  ")
		buf.Write(kb)
		buf.WriteString(": ")
		var vb bytes.Buffer
		if err := json.Compact(&vb, f.v); err != nil {
			return nil, err
		}
		buf.Write(vb.Bytes())
		if i < len(fields)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("}\n")
	return buf.Bytes(), nil
}

// RewriteManifest writes a zip archive to w that copies every entry of zr
// raw (without recompressing) except manifest.json, which is replaced by
// newManifest, stored, as the archive's last entry. It returns where that
// entry begins: the bytes before it are the same whatever the manifest
// (see MakePersonal).
func RewriteManifest(w io.Writer, zr *zip.Reader, newManifest []byte) (lastEntryAt int64, err error) {
	cw := &countingWriter{w: w}
	zw := zip.NewWriter(cw)
	var manifest *zip.File
	for _, f := range zr.File {
		if f.Name == "manifest.json" {
			if manifest != nil {
				return 0, errors.New("crx: duplicate manifest.json in archive")
			}
			manifest = f
			continue
		}
		// CopyEntry writes sizes and CRC in the local header, not in a
		// data descriptor written once the next entry begins: each entry
		// is whole once copied, so where the last one begins is known
		// (Flush below).
		if err := CopyEntry(zw, f, f.Name); err != nil {
			return 0, fmt.Errorf("crx: copy %s: %w", f.Name, err)
		}
	}
	if manifest == nil {
		return 0, errors.New("crx: archive has no manifest.json")
	}
	if err := zw.Flush(); err != nil {
		return 0, err
	}
	lastEntryAt = cw.n
	// Stored with its CRC and sizes in the local header (no data
	// descriptor): a personal copy rewrites them in place.
	hdr := zip.FileHeader{Name: manifest.Name, Method: zip.Store, Modified: manifest.Modified,
		CRC32: crc32.ChecksumIEEE(newManifest), CompressedSize64: uint64(len(newManifest)), UncompressedSize64: uint64(len(newManifest))}
	hdr.SetMode(0o644)
	fw, err := zw.CreateRaw(&hdr)
	if err != nil {
		return 0, err
	}
	if _, err := fw.Write(newManifest); err != nil {
		return 0, err
	}
	return lastEntryAt, zw.Close()
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Version parts are 0..65535, at most four of them.
const maxPart = 65535

// parseVersion parses a Chrome extension version: 1-4 dot-separated decimal
// integers 0-65535 without leading zeros (except "0"), not all zero ("0"
// and "0.0.0.0" are invalid, Chrome's manifest reference says, and the
// Chrome Web Store refuses them). Missing parts are 0.
func parseVersion(s string) ([4]int, error) {
	var v [4]int
	parts := strings.Split(s, ".")
	if s == "" || len(parts) > 4 {
		return v, fmt.Errorf("crx: invalid version %q", s)
	}
	for i, p := range parts {
		if p == "" || len(p) > 5 || (len(p) > 1 && p[0] == '0') || strings.TrimLeft(p, "0123456789") != "" {
			return v, fmt.Errorf("crx: invalid version %q", s)
		}
		n, err := strconv.Atoi(p)
		if err != nil || n > maxPart {
			return v, fmt.Errorf("crx: invalid version %q", s)
		}
		v[i] = n
	}
	if v == [4]int{} {
		return v, fmt.Errorf("crx: invalid version %q: all zero", s)
	}
	return v, nil
}

// ValidVersion reports whether s is a valid Chrome extension version.
func ValidVersion(s string) bool {
	_, err := parseVersion(s)
	return err == nil
}

// CompareVersions compares Chrome versions numerically part by part (missing
// parts are 0) and returns -1, 0 or +1. Invalid versions sort before every
// valid version and compare equal to each other.
func CompareVersions(a, b string) int {
	va, ea := parseVersion(a)
	vb, eb := parseVersion(b)
	switch {
	case ea != nil && eb != nil:
		return 0
	case ea != nil:
		return -1
	case eb != nil:
		return 1
	}
	for i := range va {
		if c := va[i] - vb[i]; c != 0 {
			if c < 0 {
				return -1
			}
			return 1
		}
	}
	return 0
}

// ServedVersion chooses the manifest version to serve for a new bundle whose
// uploaded manifest says uploaded, given every version served before for the
// extension (invalid entries are ignored) and the bundle's number.
//
// If uploaded is valid and strictly greater than every previous version, it
// is served unchanged and versionName is "". Otherwise, with M the highest
// previous version (as four parts a.b.c.d), the served version is
// a.b.c.bundleNumber when 0 <= bundleNumber <= 65535 and bundleNumber > d,
// else a.b.c.(d+1); a part that would exceed 65535 becomes 0 and carries into
// the part to its left. versionName is then the uploaded text, so testers
// still see it. If there is no valid previous version and uploaded is
// invalid, "0.0.0.1" (or the bundle number as fourth part) is used. The
// result is always a valid version strictly greater than every previous one,
// except when the highest previous version is 65535.65535.65535.65535, where
// no greater version exists and that maximum is returned.
func ServedVersion(uploaded string, previous []string, bundleNumber int64) (version, versionName string) {
	var maxV [4]int
	have := false
	for _, p := range previous {
		v, err := parseVersion(p)
		if err != nil {
			continue
		}
		if !have || cmpParts(v, maxV) > 0 {
			maxV, have = v, true
		}
	}
	up, err := parseVersion(uploaded)
	if err == nil && (!have || cmpParts(up, maxV) > 0) {
		return uploaded, ""
	}
	next := maxV
	if bundleNumber > int64(maxV[3]) && bundleNumber <= maxPart {
		next[3] = int(bundleNumber)
	} else {
		i := 3
		for ; i >= 0; i-- {
			if next[i] < maxPart {
				next[i]++
				break
			}
			next[i] = 0
		}
		if i < 0 { // all parts were 65535: nothing greater exists
			next = maxV
		}
	}
	return fmt.Sprintf("%d.%d.%d.%d", next[0], next[1], next[2], next[3]), uploaded
}

// Exhausted reports whether previous holds 65535.65535.65535.65535, the
// highest version Chrome accepts: after it no bundle can be served as an
// update, since installed copies never take a version that is not higher.
func Exhausted(previous []string) bool {
	for _, p := range previous {
		if v, err := parseVersion(p); err == nil && v == [4]int{maxPart, maxPart, maxPart, maxPart} {
			return true
		}
	}
	return false
}

func cmpParts(a, b [4]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
