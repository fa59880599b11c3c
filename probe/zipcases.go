package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/url"
	"strconv"
	"strings"
	"time"
)

type signResult struct {
	put, sign *resp
}

// submit runs the three calls with a key, waiting out 429s.
func submit(key map[string]string, z []byte) signResult {
	c := newClient()
	var r *resp
	for i := 0; i < 20; i++ {
		var err error
		r, err = c.req("POST", "/api/submit/upload", nil, mustJSON(key))
		if err != nil {
			fatalf("upload: %v", err)
		}
		if r.Status != 429 {
			break
		}
		waitRetry(r)
	}
	if r.Status != 200 {
		fatalf("upload = %d %s", r.Status, r.Body)
	}
	var u uploadURL
	json.Unmarshal(r.Body, &u)
	var res signResult
	res.put = putZip(u.URL, z)
	if res.put.Status != 200 {
		return res
	}
	for i := 0; i < 20; i++ {
		var err error
		res.sign, err = c.req("POST", "/api/submit/sign", nil, mustJSON(key))
		if err != nil {
			fatalf("sign: %v", err)
		}
		if res.sign.Status != 429 {
			break
		}
		waitRetry(res.sign)
	}
	return res
}

func waitRetry(r *resp) {
	s, _ := strconv.Atoi(r.Header.Get("Retry-After"))
	if s <= 0 {
		s = 1
	}
	time.Sleep(time.Duration(s)*time.Second + 100*time.Millisecond)
}

func (s signResult) status() int {
	if s.put.Status != 200 {
		return s.put.Status
	}
	return s.sign.Status
}

func (s signResult) last() *resp {
	if s.put.Status != 200 {
		return s.put
	}
	return s.sign
}

type zcase struct {
	name   string
	zip    []byte
	accept bool   // Chrome installs it: it must be published
	note   string // why
}

func mf(v string) string { return manifest(v, "") }

func unicodePathExtra(nameField, real string) []byte {
	// Info-ZIP Unicode Path Extra Field (0x7075): version 1, CRC-32 of the
	// header's name, then the UTF-8 name extractors such as unzip and 7-Zip use.
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint16(0x7075))
	binary.Write(&b, binary.LittleEndian, uint16(5+len(real)))
	b.WriteByte(1)
	binary.Write(&b, binary.LittleEndian, crc32.ChecksumIEEE([]byte(nameField)))
	b.WriteString(real)
	return b.Bytes()
}

func zipCases() []zcase {
	var cs []zcase
	add := func(name string, accept bool, z []byte, note string) {
		cs = append(cs, zcase{name: name, zip: z, accept: accept, note: note})
	}
	v := "1.0.0"
	// ---- item 2 and beside: what real tools write ----
	add("java: deflated folder entries + descriptors", true, rzip(zjavaFolder("icons/"), zjava("manifest.json", mf(v)), zjava("icons/a.txt", "x"), zjavaFolder("js/"), zjava("js/b.js", "1")), "item 2")
	add("java: one top folder, deflated folders", true, rzip(zjavaFolder("ext/"), zjava("ext/manifest.json", mf(v)), zjavaFolder("ext/js/"), zjava("ext/js/b.js", "1")), "item 2")
	jd := zjava("manifest.json", mf(v))
	jd.descriptor = jd.descriptor[4:] // descriptor without its optional signature
	add("descriptor without signature", true, rzip(jd, zjava("a.js", "1")), "APPNOTE allows it")
	st := zstored("manifest.json", mf(v))
	st.central.flags |= 8
	st.descriptor = zdesc(st.central)
	add("stored entry with descriptor", true, rzip(st, zstored("a.js", "1")), "Go's archive/zip writes these for Create with Store")
	ef := zjava("empty.js", "")
	ef.data = []byte{0x03, 0x00}
	ef.central.csize = 2
	ef.descriptor = zdesc(ef.central)
	add("deflated empty file", true, rzip(zjava("manifest.json", mf(v)), ef), "")
	add("stored folder entries", true, rzip(zfolder("js/"), zstored("manifest.json", mf(v)), zstored("js/a.js", "1")), "")
	df := zdeflated("css/", "")
	df.attrs = (0o40755 << 16) | 0x10
	add("deflated folder, no descriptor", true, rzip(df, zstored("manifest.json", mf(v))), "")
	add("manifest with // comments (Chrome accepts)", true, rzip(zstored("manifest.json", "{\n// comment\n\"manifest_version\":3,\"name\":\"P\",\"version\":\"1.0\"}")), "Chrome's manifest parser allows comments")
	add("manifest with trailing comma", false, rzip(zstored("manifest.json", `{"manifest_version":3,"name":"P","version":"1.0",}`)), "Chrome refuses")
	add("empty folder only + manifest", true, rzip(zstored("manifest.json", mf(v)), zfolder("empty/")), "")
	// ---- item 3 and beside: local vs central ----
	e := zstored("aaaa.js", "alert(1)")
	l := e.central
	l.name = "../../evil.js"
	e.local = &l
	add("local ../../evil.js behind central aaaa.js", false, rzip(zstored("manifest.json", mf(v)), e), "item 3")
	e = zstored("b.js", `{"manifest_version":3,"name":"Evil","version":"9.9"}`)
	l = e.central
	l.name = "manifest.json"
	e.local = &l
	add("local manifest.json behind central b.js (a second manifest)", false, rzip(zstored("manifest.json", mf(v)), e), "sequential extractors overwrite the manifest")
	e = zstored("popup.js", "good()")
	l = e.central
	l.name = "POPUP.js"
	e.local = &l
	add("local name differs in case only", false, rzip(zstored("manifest.json", mf(v)), e), "")
	e = zstored("a.js", "1")
	e.central.extra = unicodePathExtra("a.js", "../../evil.js")
	add("central Unicode Path extra ../../evil.js", false, rzip(zstored("manifest.json", mf(v)), e), "unzip and 7-Zip use the 0x7075 name")
	e = zstored("a.js", "1")
	l = e.central
	l.extra = unicodePathExtra("a.js", "../../evil.js")
	e.local = &l
	add("local Unicode Path extra ../../evil.js", false, rzip(zstored("manifest.json", mf(v)), e), "")
	e = zstored("a.js", "1")
	e.central.extra = unicodePathExtra("a.js", "manifest.json")
	add("Unicode Path extra renames a.js to manifest.json", false, rzip(zstored("manifest.json", mf(v)), e), "")
	// hidden local header between entries
	hidden := zstored("../../evil.js", "alert(1)")
	var hb bytes.Buffer
	hb.Write(zarchive{entries: []zent{hidden}}.bytes())
	hl := hb.Bytes()
	hl = hl[:30+len("../../evil.js")+len("alert(1)")]
	e = zstored("a.js", "1")
	e.after = hl
	add("hidden local entry ../../evil.js between entries", false, rzip(zstored("manifest.json", mf(v)), e, zstored("c.js", "2")), "streaming extractors read it")
	add("junk before the first entry", false, zarchive{leading: []byte("MZ-not-a-zip-prefix"), entries: []zent{zstored("manifest.json", mf(v))}}.bytes(), "")
	m := zstored("manifest.json", mf(v))
	dup := zstored("a.js", "1")
	dup.offset = u32(0)
	dup.centralOnly = true
	dup.central = m.central
	dup.central.name = "a.js"
	add("two central entries share one local header", false, rzip(m, dup), "overlap")
	add("duplicate manifest.json", false, rzip(zstored("manifest.json", mf(v)), zstored("manifest.json", `{"manifest_version":3,"name":"Evil","version":"9.9"}`)), "")
	add("duplicate file name", false, rzip(zstored("manifest.json", mf(v)), zstored("a.js", "1"), zstored("a.js", "2")), "")
	add("case-insensitive duplicate", false, rzip(zstored("manifest.json", mf(v)), zstored("a.js", "1"), zstored("A.js", "2")), "collide on Windows/macOS")
	add("NFC/NFD duplicate", false, rzip(zstored("manifest.json", mf(v)), zstored("caf\u00e9.js", "1"), zstored("cafe\u0301.js", "2")), "collide on macOS")
	add("file and folder of one name", false, rzip(zstored("manifest.json", mf(v)), zstored("js", "1"), zstored("js/a.js", "2")), "")
	for _, n := range []string{"..\\..\\evil.js", "/evil.js", "C:/evil.js", "C:evil.js", "a\x00.js", "js/../../evil.js", "js/./a.js", "./a.js", "a//b.js", "\\\\server\\share\\x.js", "../", "..", "js/..", "con.js", "aux/a.js", "a.js ", "a.js.", "nul"} {
		add(fmt.Sprintf("name %q", n), false, rzip(zstored("manifest.json", mf(v)), zstored(n, "1")), "")
	}
	sym := zstored("link.js", "/etc/passwd")
	sym.attrs = 0o120777 << 16
	add("symlink entry", false, rzip(zstored("manifest.json", mf(v)), sym), "")
	fifo := zstored("fifo", "")
	fifo.attrs = 0o010644 << 16
	add("fifo entry", false, rzip(zstored("manifest.json", mf(v)), fifo), "")
	enc := zstored("a.js", "1")
	enc.central.flags |= 1
	add("encrypted flag", false, rzip(zstored("manifest.json", mf(v)), enc), "")
	bad := zstored("a.js", "1")
	bad.central.crc ^= 1
	add("CRC mismatch", false, rzip(zstored("manifest.json", mf(v)), bad), "")
	bad = zstored("a.js", "12")
	l = bad.central
	l.size, l.csize = 1, 1
	bad.local = &l
	add("local sizes disagree", false, rzip(zstored("manifest.json", mf(v)), bad), "")
	bad = zjava("a.js", "1")
	bad.descriptor = zdesc(zhdr{crc: 7, csize: bad.central.csize, size: 1})
	add("descriptor CRC disagrees", false, rzip(zjava("manifest.json", mf(v)), bad), "")
	bad = zstored("a.js", "1")
	bad.central.method = 99
	add("unknown method", false, rzip(zstored("manifest.json", mf(v)), bad), "")
	add("deflate method 9 (deflate64)", false, func() []byte {
		e := zdeflated("a.js", "1")
		e.central.method = 9
		return rzip(zstored("manifest.json", mf(v)), e)
	}(), "")
	// bombs
	zeros := bytes.Repeat([]byte{0}, 64<<20)
	bomb := zdeflated("big.bin", "")
	bomb.data = deflateBytes(zeros)
	bomb.central.csize = uint32(len(bomb.data))
	bomb.central.size = uint32(len(zeros))
	bomb.central.crc = crc32.ChecksumIEEE(zeros)
	add("64 MiB of zeros (ratio ~1000)", false, rzip(zstored("manifest.json", mf(v)), bomb), "ratio")
	lie := bomb
	lie.central.size = 100
	add("deflated entry that inflates past its stated size", false, rzip(zstored("manifest.json", mf(v)), lie), "")
	var many []zent
	many = append(many, zstored("manifest.json", mf(v)))
	for i := 0; i < 70000; i++ {
		if i > 65000 {
			break
		}
		many = append(many, zstored(fmt.Sprintf("f/%d", i), ""))
	}
	add("65,001 entries", false, rzip(many...), "entry count")
	// ---- manifests ----
	add("no manifest", false, rzip(zstored("a.js", "1")), "")
	add("manifest under two folders", false, rzip(zstored("a/b/manifest.json", mf(v))), "")
	add("two top folders", false, rzip(zstored("a/manifest.json", mf(v)), zstored("b/x.js", "1")), "")
	add("manifest is a folder", false, rzip(zfolder("manifest.json/"), zstored("manifest.json/x", "1")), "")
	for _, mv := range []string{"1", "4", `"3"`, "3.0", "null", "-3"} {
		add("manifest_version "+mv, false, rzip(zstored("manifest.json", `{"manifest_version":`+mv+`,"name":"P","version":"1.0"}`)), "")
	}
	for _, ver := range []string{"", "1.2.3.4.5", "1.99999", "-1", "1..2", "1.0a", " 1.0", "0.0.0.0", "1.0.0.65536", "01.0"} {
		add("version "+strconv.Quote(ver), false, rzip(zstored("manifest.json", `{"manifest_version":3,"name":"P","version":"`+ver+`"}`)), "Chrome refuses")
	}
	add("no name", false, rzip(zstored("manifest.json", `{"manifest_version":3,"version":"1.0"}`)), "")
	add("empty name", false, rzip(zstored("manifest.json", `{"manifest_version":3,"name":"","version":"1.0"}`)), "")
	add("manifest not JSON", false, rzip(zstored("manifest.json", `not json`)), "")
	add("manifest bad UTF-8", false, rzip(zstored("manifest.json", "{\"manifest_version\":3,\"name\":\"\xff\",\"version\":\"1.0\"}")), "")
	add("manifest is an array", false, rzip(zstored("manifest.json", `[]`)), "")
	add("manifest 20 MB", false, rzip(zstored("manifest.json", manifest(v, `,"description":"`+strings.Repeat("d", 20<<20)+`"`))), "")
	// ---- item 6 and beside: what Chrome refuses at install ----
	add("missing icon file", false, rzip(zstored("manifest.json", manifest(v, `,"icons":{"16":"icon16.png"}`))), "item 6")
	add("missing action icon", false, rzip(zstored("manifest.json", manifest(v, `,"action":{"default_icon":{"16":"a.png"}}`))), "")
	add("missing action icon (string form)", false, rzip(zstored("manifest.json", manifest(v, `,"action":{"default_icon":"a.png"}`))), "")
	add("missing background.service_worker", false, rzip(zstored("manifest.json", manifest(v, `,"background":{"service_worker":"sw.js"}`))), "item 6")
	add("missing content script js", false, rzip(zstored("manifest.json", manifest(v, `,"content_scripts":[{"matches":["<all_urls>"],"js":["cs.js"]}]`))), "")
	add("missing content script css", false, rzip(zstored("manifest.json", manifest(v, `,"content_scripts":[{"matches":["<all_urls>"],"css":["cs.css"]}]`))), "")
	add("missing options_page", false, rzip(zstored("manifest.json", manifest(v, `,"options_page":"opt.html"`))), "")
	add("missing options_ui.page", false, rzip(zstored("manifest.json", manifest(v, `,"options_ui":{"page":"opt.html"}`))), "")
	add("missing DNR ruleset", false, rzip(zstored("manifest.json", manifest(v, `,"declarative_net_request":{"rule_resources":[{"id":"r","enabled":true,"path":"rules.json"}]}`))), "")
	add("mv2 missing background.scripts", false, rzip(zstored("manifest.json", `{"manifest_version":2,"name":"P","version":"1.0","background":{"scripts":["bg.js"]}}`)), "")
	add("mv2 missing background.page", false, rzip(zstored("manifest.json", `{"manifest_version":2,"name":"P","version":"1.0","background":{"page":"bg.html"}}`)), "")
	add("icon path ../x.png", false, rzip(zstored("manifest.json", manifest(v, `,"icons":{"16":"../x.png"}`)), zstored("x.png", "p")), "")
	add("default_locale without _locales", false, rzip(zstored("manifest.json", manifest(v, `,"default_locale":"en"`))), "item 6")
	add("_locales without default_locale", false, rzip(zstored("manifest.json", mf(v)), zstored("_locales/en/messages.json", `{}`)), "")
	add("default_locale without its messages.json", false, rzip(zstored("manifest.json", manifest(v, `,"default_locale":"en"`)), zstored("_locales/fr/messages.json", `{}`)), "")
	add("reserved _ folder", false, rzip(zstored("manifest.json", mf(v)), zstored("_foo/a.js", "1")), "Chrome: names starting with _ are reserved")
	add("__MACOSX folder (Finder zip)", false, rzip(zstored("manifest.json", mf(v)), zstored("__MACOSX/._manifest.json", "x")), "Chrome refuses the reserved name")
	add("60,000-character entry name", false, rzip(zstored("manifest.json", mf(v)), zstored(strings.Repeat("n", 60000)+".js", "1")), "item 6")
	add("4,000-character path", false, rzip(zstored("manifest.json", mf(v)), zstored(strings.Repeat("d/", 2000)+"a.js", "1")), "item 6")
	add("256-byte name (multibyte)", false, rzip(zstored("manifest.json", mf(v)), zstored(strings.Repeat("é", 128)+".js", "1")), "")
	add("801-byte path", false, rzip(zstored("manifest.json", mf(v)), zstored(strings.Repeat("abcdefghi/", 80)+"a.js", "1")), "")
	// good ones beside: all present
	add("icons, sw, content script present", true, rzip(zstored("manifest.json", manifest(v, `,"icons":{"16":"i.png"},"background":{"service_worker":"sw.js"},"content_scripts":[{"matches":["<all_urls>"],"js":["cs.js"]}],"default_locale":"en"`)),
		zstored("i.png", "p"), zstored("sw.js", "1"), zstored("cs.js", "2"), zstored("_locales/en/messages.json", `{}`)), "")
	add("icon path with ./", true, rzip(zstored("manifest.json", manifest(v, `,"icons":{"16":"./i.png"}`)), zstored("i.png", "p")), "Chrome resolves ./")
	add("icon path with leading /", true, rzip(zstored("manifest.json", manifest(v, `,"icons":{"16":"/i.png"}`)), zstored("i.png", "p")), "Chrome resolves / against the root")
	return cs
}

type bundleRec struct {
	Number  int    `json:"number"`
	SHA256  string `json:"sha256"`
	Version string `json:"version"`
}

func currentBundle(c *client, ext int) bundleRec {
	r := c.must("GET", fmt.Sprintf("/api/extensions/%d/bundles/current", ext), nil, 0)
	var b bundleRec
	json.Unmarshal(r.Body, &b)
	return b
}

func runZipCases(w *world, filter string) {
	for _, zc := range zipCases() {
		if filter != "" && !strings.Contains(zc.name, filter) {
			continue
		}
		before := currentBundle(w.admin, w.ext)
		res := submit(w.key, zc.zip)
		after := currentBundle(w.admin, w.ext)
		st := res.status()
		last := res.last()
		var verdict string
		switch {
		case st == 500 || st < 0:
			verdict = "DEFECT (500)"
		case zc.accept && st != 200:
			verdict = "DEFECT (refused what Chrome installs)"
		case !zc.accept && st == 200:
			verdict = "DEFECT (published)"
		case st != 200 && before != after:
			verdict = "DEFECT (testers' bundle changed)"
		case st != 200 && problemErr(last) != "":
			verdict = "DEFECT (" + problemErr(last) + ")"
		case st == 422 && len(parseProblem(last).Problems) == 0 && parseProblem(last).Type == "/problems/invalid-zip":
			verdict = "DEFECT (422 without problems)"
		default:
			verdict = "ok"
		}
		if st == 200 {
			var b bundleRec
			json.Unmarshal(res.sign.Body, &b)
			sum := sha256.Sum256(zc.zip)
			if b.SHA256 != hex.EncodeToString(sum[:]) {
				verdict += fmt.Sprintf(" (published sha %s… != uploaded %s…)", b.SHA256[:min(8, len(b.SHA256))], hex.EncodeToString(sum[:4]))
			}
		}
		p := parseProblem(last)
		var codes []string
		for _, pp := range p.Problems {
			codes = append(codes, pp.Code+":"+trunc([]byte(pp.Path))[:min(40, len(pp.Path))])
		}
		fmt.Printf("%-60s -> %d %s %v  %s  [%s]\n", trunc([]byte(zc.name)), st, p.Type, codes, verdict, zc.note)
		if verdict != "ok" && st != 200 {
			fmt.Printf("      detail: %s\n", trunc([]byte(p.Detail)))
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = url.Values{}
}

func init() {
	extra["writezips"] = func(args []string) {
		for i, zc := range zipCases() {
			if len(args) > 1 && !strings.Contains(zc.name, args[1]) {
				continue
			}
			name := fmt.Sprintf("%s/%02d.zip", args[0], i)
			if err := writeFile(name, zc.zip); err != nil {
				fatalf("%v", err)
			}
			fmt.Println(name, zc.name)
		}
	}
}
