// This file is long (about 740 lines) on purpose: Check's rules read as one
// list, each rule beside the problem code it reports; entries.go walks the
// entries they apply to.

// Package zipcheck checks an uploaded browser-extension zip and normalises it
// before Betaport serves it to testers.
//
// The zip lives in blob storage and may later be read from S3 with ranged
// reads, so nothing is unpacked to disk or held in memory: [Check] reads the
// zip through an [io.ReaderAt], and [Normalize] copies entries raw, without
// recompressing them.
//
// Check reports every problem it finds, not just the first, so that a person
// fixes their zip in one round trip. Each [Problem] has a stable Code for
// programs and a Message for people.
//
// Choices the product spec left open:
//
//   - A "." segment (a/./b) is refused as path_invalid rather than cleaned and
//     compared: no honest zip tool writes one, and refusing it means entry
//     names never need cleaning, so Normalize copies them verbatim.
//
//   - "a" and "a/" (a file and a folder of the same name) are duplicates. A
//     file "a" beside "a/b.js" is not caught: comparing every ancestor of
//     every name costs time quadratic in a name's depth, which an upload
//     controls.
//
//   - manifest_corrupt (not in the spec) reports a manifest that cannot be
//     decompressed, fails its checksum or holds more than its header
//     declares.
//
//   - Names are compared exactly; "A.js" and "a.js" are different entries.
//
//   - A name that is not UTF-8 is path_invalid: what it means depends on a
//     code page nobody recorded.
//
//   - The total expansion ratio, like the per-entry one, is only checked above
//     [RatioMinSize]: a 4 KiB file of spaces compresses 300 to 1 and harms
//     nobody; it is bytes, not ratios, that exhaust a disk.
//
//   - When the zip has more than MaxEntries entries, only whole-zip problems
//     are reported: checking every name of an oversized zip would let one
//     upload buy an unbounded amount of work and an unbounded problem list.
//
//   - A zip larger than MaxZipSize is refused without reading any of it.
//
//   - Only regular files and folders are accepted: a symlink, device or FIFO
//     entry (by the Unix mode in its external attributes) is
//     entry_not_regular, since unpacking it can write outside the folder.
//
//   - manifest.json may hold // and /* */ comments, as Chromium accepts;
//     trailing commas, which Chromium refuses, stay errors.
//
// Every entry is read once, streaming, after the cheap checks passed. Its
// local header must agree with its central record, and the entries must
// fill the zip up to the directory (layout.go says why). Its CRC-32 and
// declared sizes must match what it inflates to, and reading stops one
// byte past the declared size, so a lying entry costs no more than an
// honest one and the declared-size limits hold for what is really
// unpacked. The zip is read through a read-ahead window, so a storage that
// answers each read with a request (S3) sees a few large ranged reads.
// Memory used by [zip.NewReader] is proportional to the central directory,
// which MaxZipSize bounds.
package zipcheck

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/betaport/betaport/server/crx"
	"golang.org/x/text/unicode/norm"
)

// Problem codes. They are part of the API: programs switch on them, so a
// code is never renamed, only added.
const (
	CodeNotAZip                = "not_a_zip"
	CodeTooLarge               = "too_large"
	CodeTooManyEntries         = "too_many_entries"
	CodePathAbsolute           = "path_absolute"
	CodePathTraversal          = "path_traversal"
	CodePathBackslash          = "path_backslash"
	CodePathInvalid            = "path_invalid"
	CodeDuplicateEntry         = "duplicate_entry"
	CodeEncryptedEntry         = "encrypted_entry"
	CodeUnsupportedCompression = "unsupported_compression"
	CodeExpansionTooLarge      = "expansion_too_large"
	CodeExpansionRatio         = "expansion_ratio"
	CodeManifestMissing        = "manifest_missing"
	CodeManifestTooLarge       = "manifest_too_large"
	CodeManifestCorrupt        = "manifest_corrupt"
	CodeManifestInvalidJSON    = "manifest_invalid_json"
	CodeManifestVersion        = "manifest_version"
	CodeManifestName           = "manifest_name"
	CodeManifestVersionFormat  = "manifest_version_format"
	CodeEntryNotRegular        = "entry_not_regular"
	CodeEntryCorrupt           = "entry_corrupt"
	CodeHeaderMismatch         = "header_mismatch"
	CodeZipLayout              = "zip_layout"
)

const (
	// ManifestName is the manifest's file name, at the root of a normalised
	// bundle.
	ManifestName = "manifest.json"
	// MaxManifestSize caps the bytes of manifest.json read into memory.
	MaxManifestSize = 1 << 20
	// RatioMinSize is the uncompressed size from which expansion ratios are
	// checked, for one entry and for the whole zip.
	RatioMinSize = 1 << 20
)

// Limits bound what Check accepts. A zero or negative field means the
// default, so that a forgotten field never turns a safety limit off.
type Limits struct {
	MaxZipSize           int64   // bytes of the zip itself
	MaxTotalUncompressed int64   // sum of declared uncompressed sizes
	MaxEntries           int     // entries, folders included
	MaxTotalRatio        float64 // total uncompressed / compressed bytes
	MaxEntryRatio        float64 // one entry's uncompressed / compressed bytes
}

// DefaultLimits returns the limits of the product spec.
func DefaultLimits() Limits {
	return Limits{
		MaxZipSize:           256 << 20,
		MaxTotalUncompressed: 1 << 30,
		MaxEntries:           10_000,
		MaxTotalRatio:        100,
		MaxEntryRatio:        200,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxZipSize <= 0 {
		l.MaxZipSize = d.MaxZipSize
	}
	if l.MaxTotalUncompressed <= 0 {
		l.MaxTotalUncompressed = d.MaxTotalUncompressed
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = d.MaxEntries
	}
	if l.MaxTotalRatio <= 0 {
		l.MaxTotalRatio = d.MaxTotalRatio
	}
	if l.MaxEntryRatio <= 0 {
		l.MaxEntryRatio = d.MaxEntryRatio
	}
	return l
}

// Problem is one thing wrong with a zip.
type Problem struct {
	Code    string `json:"code"`    // one of the Code constants
	Path    string `json:"path"`    // the entry at fault, "" for the whole zip
	Message string `json:"message"` // what to fix, for a person
}

// Manifest is what Check read from manifest.json. Fields that were missing
// or of the wrong type are left zero (and reported as problems).
type Manifest struct {
	Name            string `json:"name"`
	Version         string `json:"version"`
	ManifestVersion int    `json:"manifest_version"`
	// Raw is the manifest's JSON, without a byte order mark. It is kept out
	// of JSON output because it may be a megabyte.
	Raw json.RawMessage `json:"-"`
}

// Result is the outcome of Check.
type Result struct {
	Manifest  Manifest  `json:"manifest"`
	FileCount int       `json:"file_count"` // regular files; folder entries are not counted
	Prefix    string    `json:"prefix"`     // "" or "top/" when manifest.json is under a single top folder
	Problems  []Problem `json:"problems"`   // never nil, so JSON shows [] rather than null
}

// OK reports whether the zip passed every check.
func (r *Result) OK() bool { return r != nil && len(r.Problems) == 0 }

func (r *Result) add(code, path, format string, args ...any) {
	r.Problems = append(r.Problems, Problem{Code: code, Path: path, Message: fmt.Sprintf(format, args...)})
}

// errReaderAt remembers the first error of the underlying reader other than
// io.EOF. archive/zip reports a short read as a format error, so only this
// tells "the storage failed" from "the bytes are not a zip".
type errReaderAt struct {
	r   io.ReaderAt
	err error
}

func (e *errReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := e.r.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) && e.err == nil {
		e.err = err
	}
	return n, err
}

// Check validates the zip of size bytes read through r. A nil error with
// len(Problems) > 0 means the zip is invalid; an error means reading failed
// (I/O), not that the zip is bad. Problems come in a fixed order: size and
// expansion limits, then entries in central directory order, then the
// manifest, then what would stop Chrome installing it (CheckInstall), then
// what reading every entry found.
func Check(r io.ReaderAt, size int64, lim Limits) (*Result, error) {
	if size < 0 {
		return nil, fmt.Errorf("zipcheck: negative zip size %d", size)
	}
	lim = lim.withDefaults()
	res := &Result{Problems: []Problem{}}
	if size > lim.MaxZipSize {
		res.add(CodeTooLarge, "", "The zip is %s; the limit is %s. Remove files the extension does not need.",
			bytesText(size), bytesText(lim.MaxZipSize))
		return res, nil
	}

	// The section reader answers reads past size with io.EOF itself, so a
	// zip whose offsets point outside the file never reaches the storage,
	// where an out-of-range read could fail like an outage (S3 answers 416).
	er := &errReaderAt{r: io.NewSectionReader(r, 0, size)}
	ra := newReadAhead(er, size)
	zr, err := zip.NewReader(ra, size)
	// ErrInsecurePath (with GODEBUG=zipinsecurepath=0) comes with a usable
	// reader; the names are checked below, with better messages.
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		if er.err != nil {
			return nil, fmt.Errorf("zipcheck: reading zip: %w", er.err)
		}
		res.add(CodeNotAZip, "", "The file is not a zip archive, or it is damaged. Upload the extension as a .zip file.")
		return res, nil
	}

	for _, f := range zr.File {
		if !isDir(f.Name) {
			res.FileCount++
		}
	}
	checkExpansion(res, zr.File, size, lim)
	if len(zr.File) > lim.MaxEntries {
		res.add(CodeTooManyEntries, "", "The zip has %d entries; the limit is %d. Remove files the extension does not need.",
			len(zr.File), lim.MaxEntries)
		return res, nil
	}

	// Right after archive/zip read the directory, while the read-ahead
	// window still holds it.
	dir := readDirectory(res, ra, size, zr.File)
	checkEntries(res, zr.File, size, lim)
	if err := checkManifest(res, zr.File); err != nil {
		return nil, err
	}
	for _, p := range CheckInstall(res.Manifest.Raw, treeOf(zr.File, res.Prefix)) {
		p.Path = res.Prefix + p.Path
		res.Problems = append(res.Problems, p)
	}
	if len(res.Problems) == 0 && dir != nil {
		zr.RegisterDecompressor(zip.Deflate, newFlateReader)
		verifyEntries(res, zr.File, dir, ra, size, res.Prefix+ManifestName)
	}
	if er.err != nil {
		return nil, fmt.Errorf("zipcheck: reading zip: %w", er.err)
	}
	return res, nil
}

func isDir(name string) bool { return strings.HasSuffix(name, "/") }

// treeOf is the extension's files as Chrome would unpack them: the entries
// under prefix (the top folder, or ""), without it.
func treeOf(files []*zip.File, prefix string) Tree {
	tree := make(Tree, len(files))
	for _, f := range files {
		if rel, ok := strings.CutPrefix(f.Name, prefix); ok && rel != "" {
			tree[rel] = f.UncompressedSize64
		}
	}
	return tree
}

// checkExpansion applies the zip-bomb limits to the whole zip.
func checkExpansion(res *Result, files []*zip.File, size int64, lim Limits) {
	var total, packed uint64
	for _, f := range files {
		total = addSat(total, f.UncompressedSize64)
		packed = addSat(packed, f.CompressedSize64)
	}
	if total > uint64(lim.MaxTotalUncompressed) {
		res.add(CodeExpansionTooLarge, "", "The zip unpacks to %s; the limit is %s. Remove files the extension does not need.",
			bytesText(int64(min(total, 1<<62))), bytesText(lim.MaxTotalUncompressed))
	}
	// Overlapping entries (a non-recursive zip bomb) reuse the same bytes,
	// so their compressed sizes add up to more than the file: the file's
	// size is the real amount of compressed data.
	packed = min(packed, uint64(size))
	if total >= RatioMinSize {
		if r := ratio(total, packed); r > lim.MaxTotalRatio {
			res.add(CodeExpansionRatio, "", "The zip unpacks to %.0f times its size; the limit is %.0f. This looks like a zip bomb; upload the extension's real files.",
				r, lim.MaxTotalRatio)
		}
	}
}

func addSat(a, b uint64) uint64 {
	if a+b < a {
		return ^uint64(0)
	}
	return a + b
}

// ratio is u/c, infinite when c is 0 (and u is not).
func ratio(u, c uint64) float64 {
	if c == 0 {
		if u == 0 {
			return 0
		}
		return float64(1 << 62)
	}
	return float64(u) / float64(c)
}

// checkEntries checks each entry on its own (name, encryption, method,
// ratio) and the names together (duplicates).
func checkEntries(res *Result, files []*zip.File, size int64, lim Limits) {
	// Keyed without the trailing slash, so a file and a folder of the same
	// name collide: no file system can hold both. A file that another
	// entry's path needs as a folder (js beside js/a.js) collides too.
	seen := make(map[string]bool, len(files))
	regular := make(map[string]bool, len(files))
	for _, f := range files {
		if !isDir(f.Name) && f.Mode().Type() == 0 { // a link is reported as such
			regular[f.Name] = true
		}
	}
	for _, f := range files {
		name := strings.TrimSuffix(f.Name, "/")
		for i := range len(name) {
			if name[i] == '/' && regular[name[:i]] {
				res.add(CodeDuplicateEntry, f.Name, "The entry is inside a folder named %s, which the zip also holds as a file; no file system can unpack both. Keep only one.", quoteShort(name[:i]))
				break
			}
		}
	}
	for _, f := range files {
		name := f.Name
		checkName(res, name)
		if name != "" {
			// Windows and macOS store names that differ only in case, or
			// in how an accented letter is written (é or e and ´), as one:
			// unpacked there, one entry would land on the other.
			key := strings.ToLower(norm.NFC.String(strings.TrimSuffix(name, "/")))
			if seen[key] {
				res.add(CodeDuplicateEntry, name, "Another entry has the same name (a file and a folder count as the same, and so do names that differ only in case or in how an accented letter is written, which Windows and macOS store as one). Keep only one.")
			}
			seen[key] = true
		}
		if other, found := unicodePath(f.Extra); found && other != name {
			res.add(CodeHeaderMismatch, name, "The zip's directory carries another name for the entry, %s, in a Unicode Path field (which Info-ZIP's unzip and 7-Zip extract it under): what they unpack is not what was checked. Create the zip again with a standard zip tool.", quoteShort(other))
		}
		if f.Flags&0x1 != 0 {
			res.add(CodeEncryptedEntry, name, "The entry is encrypted. Create the zip without a password.")
		}
		if t := f.Mode().Type() &^ fs.ModeDir; t != 0 {
			res.add(CodeEntryNotRegular, name, "The entry is a %s, not a file or a folder; unpacking it could write outside the extension's folder. Replace it with the file it stands for.",
				typeName(t))
		}
		if isDir(name) && (f.UncompressedSize64 != 0 || f.CRC32 != 0) {
			res.add(CodeEntryCorrupt, name, "The folder entry declares content (a size or checksum other than zero); a folder holds none. Create the zip again with a standard zip tool.")
		}
		if f.Method != zip.Store && f.Method != zip.Deflate {
			res.add(CodeUnsupportedCompression, name, "The entry uses compression method %d; only stored (0) and deflated (8) entries are supported. Create the zip with standard deflate compression.",
				f.Method)
		}
		if f.UncompressedSize64 >= RatioMinSize {
			if r := ratio(f.UncompressedSize64, min(f.CompressedSize64, uint64(size))); r > lim.MaxEntryRatio {
				res.add(CodeExpansionRatio, name, "The entry unpacks to %.0f times its compressed size; the limit is %.0f. This looks like a zip bomb; upload the extension's real files.",
					r, lim.MaxEntryRatio)
			}
		}
	}
}

// typeName names a non-regular file mode for a person.
func typeName(t fs.FileMode) string {
	switch {
	case t&fs.ModeSymlink != 0:
		return "symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeCharDevice != 0:
		return "character device"
	case t&fs.ModeDevice != 0:
		return "device"
	default:
		return "special file"
	}
}

// checkName reports what is wrong with one entry name, each kind of problem
// at most once.
func checkName(res *Result, name string) {
	if name == "" {
		res.add(CodePathInvalid, name, "An entry has an empty name. Remove it from the zip.")
		return
	}
	invalid := func(why string) {
		res.add(CodePathInvalid, name, "The entry name %s. Rename or remove the file.", why)
	}
	if !utf8.ValidString(name) {
		invalid("is not UTF-8 text")
	} else if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		invalid("contains a control character (such as NUL or a line break)")
	}
	if strings.Contains(name, `\`) {
		res.add(CodePathBackslash, name, `The entry name contains a backslash; zip paths separate folders with "/". Create the zip with a tool that writes "/".`)
	}
	abs := name[0] == '/' || name[0] == '\\' || hasDrive(name)
	if abs {
		res.add(CodePathAbsolute, name, "The entry name is an absolute path. Zip the extension's folder so that names are relative to it.")
	}

	// ".." is looked for between backslashes too: an extractor on Windows
	// treats them as separators, which is the point of the trick.
	isSep := func(r rune) bool { return r == '/' || r == '\\' }
	traversal, dot := false, false
	for seg := range strings.FieldsFuncSeq(name, isSep) {
		switch seg {
		case "..":
			traversal = true
		case ".":
			dot = true
		}
	}
	if traversal {
		res.add(CodePathTraversal, name, `The entry name contains a ".." segment, which points outside the extension. Remove it.`)
	}
	if dot {
		invalid(`contains a "." segment`)
	}
	// Leading slashes are the absolute-path problem; one trailing slash
	// marks a folder. Anything else empty between slashes is an error.
	body := strings.TrimSuffix(name, "/")
	if abs {
		body = strings.TrimLeft(body, `/\`)
	}
	if body != "" && (strings.HasPrefix(body, "/") || strings.HasSuffix(body, "/") || strings.Contains(body, "//")) {
		invalid(`has an empty folder name ("//")`)
	}
}

// hasDrive reports a Windows drive prefix: C:\x, C:/x and the drive-relative
// C:x.
func hasDrive(name string) bool {
	return len(name) >= 2 && name[1] == ':' &&
		('a' <= name[0] && name[0] <= 'z' || 'A' <= name[0] && name[0] <= 'Z')
}

// findPrefix locates manifest.json: at the root, or in a single top folder
// that holds every entry. ok is false when it is in neither place.
func findPrefix(files []*zip.File) (prefix string, ok bool) {
	for _, f := range files {
		if f.Name == ManifestName {
			return "", true
		}
	}
	top := ""
	for _, f := range files {
		seg, _, found := strings.Cut(f.Name, "/")
		if !found || seg == "" || (top != "" && seg != top) {
			return "", false
		}
		top = seg
	}
	if top == "" {
		return "", false
	}
	for _, f := range files {
		if f.Name == top+"/"+ManifestName {
			return top + "/", true
		}
	}
	return "", false
}

// checkManifest finds, reads and validates manifest.json. The error is an
// I/O error only; everything else is a problem.
func checkManifest(res *Result, files []*zip.File) error {
	prefix, ok := findPrefix(files)
	if !ok {
		hint := ""
		for _, f := range files {
			if strings.HasSuffix(f.Name, "/"+ManifestName) {
				hint = fmt.Sprintf(" This zip has one at %q.", f.Name)
				break
			}
		}
		res.add(CodeManifestMissing, "", "manifest.json must be at the root of the zip, or in a single top folder that holds everything else.%s Zip the folder that contains manifest.json.", hint)
		return nil
	}
	res.Prefix = prefix
	path := prefix + ManifestName
	var mf *zip.File
	for _, f := range files {
		if f.Name == path {
			mf = f
			break
		}
	}
	if mf.Flags&0x1 != 0 || (mf.Method != zip.Store && mf.Method != zip.Deflate) {
		return nil // already reported, and unreadable
	}
	if mf.UncompressedSize64 > MaxManifestSize {
		res.add(CodeManifestTooLarge, path, "manifest.json is %s; the limit is %s.",
			bytesText(int64(min(mf.UncompressedSize64, 1<<62))), bytesText(MaxManifestSize))
		return nil
	}
	data, err := readLimited(mf, MaxManifestSize)
	switch {
	case errors.Is(err, errTooLarge):
		res.add(CodeManifestTooLarge, path, "manifest.json is larger than %s.", bytesText(MaxManifestSize))
		return nil
	case err != nil:
		// A damaged entry and a failed read look alike from here; the
		// caller's errReaderAt tells them apart, so report the damage and
		// let Check return the I/O error if there was one.
		res.add(CodeManifestCorrupt, path, "manifest.json cannot be read from the zip (%v). Create the zip again.", err)
		return nil
	}
	checkManifestJSON(res, path, data)
	return nil
}

var errTooLarge = errors.New("too large")

// readLimited reads the whole of f, failing with errTooLarge beyond max
// bytes. archive/zip already stops at the declared size, but the cap here
// must not depend on that.
func readLimited(f *zip.File, max int64) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, errTooLarge
	}
	return data, nil
}

var bom = []byte("\xef\xbb\xbf")

// checkManifestJSON validates the keys Betaport relies on, as Chrome would.
func checkManifestJSON(res *Result, path string, data []byte) {
	if !utf8.Valid(data) {
		res.add(CodeManifestInvalidJSON, path, "manifest.json is not UTF-8 text. Save it as UTF-8.")
		return
	}
	data = StandardManifest(data)
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		var typeErr *json.UnmarshalTypeError
		var syntaxErr *json.SyntaxError
		switch {
		case errors.As(err, &typeErr):
			res.add(CodeManifestInvalidJSON, path, "manifest.json must hold a JSON object ({...}).")
		case errors.As(err, &syntaxErr):
			line, col := position(data, syntaxErr.Offset)
			res.add(CodeManifestInvalidJSON, path, "manifest.json is not valid JSON at line %d, column %d: %s.", line, col, strings.TrimPrefix(syntaxErr.Error(), "json: "))
		default:
			res.add(CodeManifestInvalidJSON, path, "manifest.json is not valid JSON. Check it with a JSON validator.")
		}
		return
	}
	if fields == nil { // the literal null
		res.add(CodeManifestInvalidJSON, path, "manifest.json must hold a JSON object ({...}).")
		return
	}
	res.Manifest.Raw = json.RawMessage(data)

	switch v, ok := decodeField(fields, "manifest_version"); {
	case !ok:
		res.add(CodeManifestVersion, path, `manifest.json has no "manifest_version". Add "manifest_version": 3.`)
	default:
		n, isNum := v.(json.Number)
		i, err := n.Int64()
		if isNum && err == nil && i >= 0 && i <= 1<<31-1 {
			res.Manifest.ManifestVersion = int(i)
		}
		if !isNum || err != nil || (i != 2 && i != 3) {
			res.add(CodeManifestVersion, path, `"manifest_version" in manifest.json must be the number 2 or 3.`)
		}
	}

	switch v, ok := decodeField(fields, "name"); {
	case !ok:
		res.add(CodeManifestName, path, `manifest.json has no "name". Add the extension's name.`)
	default:
		s, isStr := v.(string)
		res.Manifest.Name = s
		if !isStr || strings.TrimSpace(s) == "" {
			res.add(CodeManifestName, path, `"name" in manifest.json must be a non-empty string.`)
		}
	}

	switch v, ok := decodeField(fields, "version"); {
	case !ok:
		res.add(CodeManifestVersionFormat, path, `manifest.json has no "version". Add one such as "1.0.0".`)
	default:
		s, isStr := v.(string)
		res.Manifest.Version = s
		if !isStr || !crx.ValidVersion(s) {
			res.add(CodeManifestVersionFormat, path, `"version" in manifest.json must be a string of 1 to 4 dot-separated numbers from 0 to 65535, without leading zeros and not all zero, such as "1.0.0".`)
		}
	}
}

// decodeField decodes one top-level value, numbers as json.Number so that 3
// and 3.0 stay apart (Chrome wants an integer).
func decodeField(fields map[string]json.RawMessage, key string) (any, bool) {
	raw, ok := fields[key]
	if !ok {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, true // cannot happen: raw came out of a successful Unmarshal
	}
	return v, true
}

// bytesText writes n bytes for a person: "3.2 MiB".
func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	v, i := float64(n), -1
	for v >= unit && i < 5 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[i])
}

// errWriter remembers the first error of w, for the same reason as
// errReaderAt.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}

// Normalize writes the zip to w with prefix stripped from every entry name
// and the prefix folder's own entry dropped, so that manifest.json ends up
// at the root. Entries are copied raw: no decompression, no recompression,
// the same bytes and checksums, written as [crx.CopyEntry] writes them
// (folders stored and empty, sizes in the local headers). It is meant for a
// zip that passed Check, with that Result's Prefix; prefix "" copies every
// entry.
//
// Given a zip that did not pass Check, it fails where an entry's header or
// data is damaged; that error wraps [zip.ErrFormat], and any other error is
// I/O (or a wrong prefix).
func Normalize(w io.Writer, r io.ReaderAt, size int64, prefix string) error {
	if prefix != "" {
		top, rest, found := strings.Cut(prefix, "/")
		probe := &Result{}
		checkName(probe, prefix)
		if !found || top == "" || rest != "" || len(probe.Problems) > 0 {
			return fmt.Errorf("zipcheck: normalize: prefix %q is not one top folder followed by /", prefix)
		}
	}
	er := &errReaderAt{r: io.NewSectionReader(r, 0, size)}
	ew := &errWriter{w: w}
	zr, err := zip.NewReader(er, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		if er.err == nil && !errors.Is(err, zip.ErrFormat) {
			err = fmt.Errorf("%w: %v", zip.ErrFormat, err)
		}
		return fmt.Errorf("zipcheck: normalize: %w", err)
	}
	zw := zip.NewWriter(ew)
	if err := zw.SetComment(zr.Comment); err != nil {
		return fmt.Errorf("zipcheck: normalize: %w", err)
	}
	for _, f := range zr.File {
		name := f.Name
		if prefix != "" {
			if name == prefix {
				continue
			}
			rest, ok := strings.CutPrefix(name, prefix)
			if !ok {
				return fmt.Errorf("zipcheck: normalize: entry %q is outside %q", name, prefix)
			}
			name = rest
		}
		if err := crx.CopyEntry(zw, f, name); err != nil {
			// Neither side failed, so the entry is damaged (a header
			// pointing past the end reads as io.EOF): say so the one way.
			if er.err == nil && ew.err == nil && !errors.Is(err, zip.ErrFormat) {
				err = fmt.Errorf("%w: %v", zip.ErrFormat, err)
			}
			return fmt.Errorf("zipcheck: normalize: %s: %w", f.Name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("zipcheck: normalize: %w", err)
	}
	return nil
}
