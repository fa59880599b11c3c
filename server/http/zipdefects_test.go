package http_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/credential"
	"github.com/betaport/betaport/server/storetest"
	"github.com/betaport/betaport/server/zipcheck/ziptest"
)

// zipEntry is one entry of a hand-made zip: mode 0 is a plain file.
type zipEntry struct {
	name, body string
	mode       fs.FileMode
}

// rawZip writes entries stored (uncompressed), so tests can find and flip
// their bytes, with the Unix modes given.
func rawZip(t *testing.T, entries ...zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		fh := &zip.FileHeader{Name: e.name, Method: zip.Store}
		if e.mode != 0 {
			fh.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, e.body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const tamer = `{"manifest_version": 3, "name": "Tab Tamer", "version": "2.0"}`

// signRejected runs calls 1 to 3 with zipBytes, wants the 422 and returns
// its problems as "code path"; what testers get must not change.
func (p *pipeline) signRejected(t *testing.T, zipBytes []byte) []string {
	t.Helper()
	before := p.served(t)
	bundles, _ := storetest.CountBundles(context.Background(), p.e.DB, p.ext.ID)
	u := p.askURL(t)
	if resp, body := p.put(t, u.URL, api.ZipContentType, zipBytes); resp.StatusCode != 200 {
		t.Fatalf("PUT = %d %s", resp.StatusCode, body)
	}
	resp, body := p.sign(t)
	pr := wantProblem(t, resp, body, 422, api.ProblemInvalidZip)
	p.wantUnchanged(t, before)
	if n, _ := storetest.CountBundles(context.Background(), p.e.DB, p.ext.ID); n != bundles {
		t.Fatalf("%d bundles after a rejected sign, want %d", n, bundles)
	}
	var got []string
	for _, zp := range pr.Problems {
		got = append(got, zp.Code+" "+zp.Path)
	}
	slices.Sort(got)
	return got
}

// TestSignRefusesSymlinkEntries: a zip with a symlink pointing out of the
// folder, and a file under it, is not published; devices and FIFOs neither.
func TestSignRefusesSymlinkEntries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	p.submitAny(t, validZip(t, "1.0"))
	got := p.signRejected(t, rawZip(t,
		zipEntry{name: "manifest.json", body: tamer},
		zipEntry{name: "escape", body: "../../../../tmp/escaped", mode: fs.ModeSymlink | 0o777},
		zipEntry{name: "escape/pwned.js", body: "x"},
		zipEntry{name: "fifo", mode: fs.ModeNamedPipe | 0o644},
		zipEntry{name: "dev", mode: fs.ModeDevice | fs.ModeCharDevice | 0o644},
	))
	want := []string{"entry_not_regular dev", "entry_not_regular escape", "entry_not_regular fifo"}
	if !slices.Equal(got, want) {
		t.Fatalf("problems %q, want %q", got, want)
	}
}

// TestSignRefusesDamagedEntries: an entry with a flipped byte, or one
// that inflates past its declared size, is not published (nor packed).
func TestSignRefusesDamagedEntries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	p.submitAny(t, validZip(t, "1.0"))

	flipped := rawZip(t, zipEntry{name: "manifest.json", body: tamer}, zipEntry{name: "popup.js", body: "MARKER console.log(1)"})
	i := bytes.Index(flipped, []byte("MARKER"))
	flipped[i] ^= 1
	if got := p.signRejected(t, flipped); !slices.Equal(got, []string{"entry_corrupt popup.js"}) {
		t.Fatalf("flipped byte: problems %q", got)
	}

	// Declares 10 bytes, inflates to 64 MiB.
	var comp bytes.Buffer
	fw, _ := newDeflater(&comp)
	fw.Write(make([]byte, 64<<20))
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("manifest.json")
	io.WriteString(w, tamer)
	w, _ = zw.CreateRaw(&zip.FileHeader{Name: "bomb.bin", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(make([]byte, 10)),
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: 10})
	w.Write(comp.Bytes())
	zw.Close()
	if got := p.signRejected(t, buf.Bytes()); !slices.Equal(got, []string{"entry_corrupt bomb.bin"}) {
		t.Fatalf("bomb: problems %q", got)
	}
}

// TestManifestWithCommentsPacks: a manifest.json with // and /* */
// comments, which Chromium installs, is published, served with its bytes
// as uploaded, and packed as a CRX.
func TestManifestWithCommentsPacks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	manifest := "// Tab Tamer\n{\n  \"manifest_version\": 3, /* MV3 */\n  \"name\": \"Tab Tamer\",\n  \"version\": \"1.3\" // bump me\n}\n"
	b := p.submitAny(t, makeZip(t, map[string]string{"manifest.json": manifest, "background.js": "1"}))
	zr, err := zip.NewReader(bytes.NewReader([]byte(p.served(t).bytes)), int64(len(p.served(t).bytes)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name == "manifest.json" {
			rc, _ := f.Open()
			kept, _ := io.ReadAll(rc)
			if string(kept) != manifest {
				t.Errorf("served manifest %q, want the uploaded bytes", kept)
			}
		}
	}
	resp, data := e.fetchFile(t, "GET", api.BundleCRXPath(p.ext.ID, b.Number), admin)
	if resp.StatusCode != 200 {
		t.Fatalf("CRX = %d %s", resp.StatusCode, data)
	}
	wantCRX(t, data, e.updates(t, p.ext, admin), "1.3", "")
}

// newDeflater compresses a bomb's entry. BestSpeed: 64 MiB of zeros still
// shrink 800 times (81 KB), in a tenth of BestCompression's time under
// -race (1.3 s against 14 s).
func newDeflater(w io.Writer) (*flate.Writer, error) {
	return flate.NewWriter(w, flate.BestSpeed)
}

// TestSweepRemovesOrphans: on either storage, the sweeper removes blobs no
// record points to once they are older than the grace (bundle bytes of a
// sign that never committed, a file store's interrupted *.tmp write, an
// upload without a record), keeps young ones (a sign may be about to
// record them), and keeps every bundle, CRX and pending upload.
func TestSweepRemovesOrphans(t *testing.T) {
	// Not in parallel: with a grace of a nanosecond the sweep also removes
	// every CRX work folder in the temp dir, other tests' packings under
	// way among them (seen: a sign failed with its packed.zip gone).
	e := newEnv(t)
	ctx := context.Background()
	p := newPipeline(t, e, betaport.PlanProfessional)
	p.submitAny(t, validZip(t, "1.0"))
	pending := p.askURL(t)
	p.put(t, pending.URL, api.ZipContentType, validZip(t, "1.1"))

	orphans := []string{
		fmt.Sprintf("bundles/%d/upload-999.zip", p.ext.ID),
		fmt.Sprintf("bundles/%d/upload-998.zip.18ab3f.tmp", p.ext.ID),
		"uploads/999.zip",
		"uploads/999.1234abcd.checked.zip",
	}
	for _, k := range orphans {
		if err := e.Blobs.WriteAll(ctx, k, []byte("left by a crash"), nil); err != nil {
			t.Fatal(err)
		}
	}
	keys := func() []string {
		var out []string
		it := e.Blobs.List(nil)
		for {
			obj, err := it.Next(ctx)
			if err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			out = append(out, obj.Key)
		}
		slices.Sort(out)
		return out
	}
	all := keys()

	// Within the grace nothing unreferenced goes.
	if _, err := e.App.Publish.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if got := keys(); !slices.Equal(got, all) {
		t.Fatalf("a sweep within the grace removed %q", slicesDiff(all, got))
	}

	e.App.Publish.OrphanGrace = time.Nanosecond
	time.Sleep(10 * time.Millisecond) // let the blobs' times fall behind the grace
	if _, err := e.App.Publish.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	got := keys()
	if removed := slicesDiff(all, got); !slices.Equal(removed, sorted(orphans)) {
		t.Fatalf("the sweep removed %q, want exactly the orphans %q", removed, sorted(orphans))
	}
	if !slices.Contains(got, "uploads/"+strconv.FormatInt(pending.UploadID, 10)+".zip") {
		t.Errorf("the sweep removed a pending upload's zip")
	}
	if p.served(t).number != 1 {
		t.Fatal("the sweep touched the served bundle")
	}
	resp, body := p.sign(t)
	if resp.StatusCode != 200 {
		t.Fatalf("sign of the pending upload after the sweep = %d %s", resp.StatusCode, body)
	}
}

// slicesDiff lists what is in a but not in b.
func slicesDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// javaZip is an extension zipped as java.util.zip.ZipOutputStream does by
// default (Gradle, Maven and Jenkins pipelines use it): every entry
// deflated with a data descriptor, folders too, so "js/" is the 2-byte
// deflate stream of nothing. top is "" or one top folder ("ext/").
func javaZip(top, version string) []byte {
	var entries []ziptest.Entry
	if top != "" {
		entries = append(entries, ziptest.JavaFolder(top))
	}
	entries = append(entries,
		ziptest.JavaFile(top+"manifest.json", `{"manifest_version": 3, "name": "Tab Tamer", "version": "`+version+`", "background": {"service_worker": "js/background.js"}}`),
		ziptest.JavaFolder(top+"js/"),
		ziptest.JavaFile(top+"js/background.js", "console.log('"+version+"')"),
	)
	return ziptest.Zip(entries...)
}

// blobKeys lists every key in the env's storage, sorted.
func (e *env) blobKeys(t *testing.T) []string {
	t.Helper()
	var out []string
	it := e.Blobs.List(nil)
	for {
		obj, err := it.Next(context.Background())
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		out = append(out, obj.Key)
	}
	slices.Sort(out)
	return out
}

// TestSignPublishesJavaZips: a zip whose folders are deflated, at the root
// or under one top folder, is published, packed and served; nothing is
// left in storage that no record points to.
func TestSignPublishesJavaZips(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	admin := e.adminOf(t, mustTeam(t, e, p.ext))
	for i, top := range []string{"", "ext/"} {
		version := fmt.Sprintf("1.%d", i)
		b := p.submitAny(t, javaZip(top, version))
		resp, data := e.fetchFile(t, "GET", api.BundleCRXPath(p.ext.ID, b.Number), admin)
		if resp.StatusCode != 200 {
			t.Fatalf("CRX = %d %s", resp.StatusCode, data)
		}
		wantCRX(t, data, e.updates(t, p.ext, admin), version, "")
		f, _ := openCRX(t, data)
		zr, err := zip.NewReader(f.Zip, f.ZipSize)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, zf := range zr.File {
			names = append(names, zf.Name)
		}
		if want := []string{"js/", "js/background.js", "manifest.json"}; !slices.Equal(names, want) {
			t.Errorf("top %q: the CRX holds %q, want %q", top, names, want)
		}
	}
	wantNoOrphans(t, e, p.ext)
}

// wantNoOrphans fails unless every blob of ext under bundles/ is the zip
// or the CRX of one of its bundles.
func wantNoOrphans(t *testing.T, e *env, ext *betaport.Extension) {
	t.Helper()
	ctx := context.Background()
	referenced := map[string]bool{}
	last, err := e.DB.LastBundleNumber(ctx, ext.ID)
	if err != nil {
		t.Fatal(err)
	}
	for n := int64(1); n <= last; n++ {
		b, err := e.DB.FindBundle(ctx, ext.ID, n)
		if err != nil {
			t.Fatal(err)
		}
		referenced[b.BlobKey], referenced[b.CRX.BlobKey] = true, true
	}
	for _, k := range e.blobKeys(t) {
		if strings.HasPrefix(k, fmt.Sprintf("bundles/%d/", ext.ID)) && !referenced[k] {
			t.Errorf("%s is in storage, but no bundle points to it", k)
		}
	}
}

// TestFailedSignLeavesNoBlob: a sign that fails after the zip was checked
// (here its CRX cannot be signed: the extension's stored key is not a key)
// answers the failure, and leaves storage as it was but for the upload's
// own zip, however often it is retried.
func TestFailedSignLeavesNoBlob(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	if _, err := e.DB.CreateSigning(context.Background(), &betaport.Signing{ExtensionID: p.ext.ID,
		PrivateKey: []byte("not a key"), UpdateToken: credential.NewToken()}, strings.Repeat("a", 32)); err != nil {
		t.Fatal(err)
	}
	before := e.blobKeys(t)
	u := p.askURL(t)
	if resp, body := p.put(t, u.URL, api.ZipContentType, validZip(t, "1.0")); resp.StatusCode != 200 {
		t.Fatalf("PUT = %d %s", resp.StatusCode, body)
	}
	for range 3 {
		resp, body := p.sign(t)
		wantProblem(t, resp, body, 500, api.ProblemInternal)
	}
	want := sorted(append(slices.Clone(before), fmt.Sprintf("uploads/%d.zip", u.UploadID)))
	if got := e.blobKeys(t); !slices.Equal(got, want) {
		t.Fatalf("after failed signs storage holds %q, want %q", got, want)
	}
}

// TestSignRefusesLocalHeadersThatDisagree: a zip that says one thing in its
// central directory and another to extractors that read local headers (a
// local "../../evil.js" behind a central "aaaaaaaaaa.js", an entry hidden
// where no central record points, between entries or in front of them) is
// refused with the problem named, and nothing changes for testers.
func TestSignRefusesLocalHeadersThatDisagree(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	p.submitAny(t, validZip(t, "1.0"))

	manifest := ziptest.Deflated("manifest.json", tamer)
	good := ziptest.Deflated("aaaaaaaaaa.js", "console.log('good')")
	evil := good.Central
	evil.Name = "../../evil.js"
	renamed := good
	renamed.Local = &evil
	if got := p.signRejected(t, ziptest.Zip(manifest, renamed)); !slices.Equal(got, []string{"header_mismatch aaaaaaaaaa.js"}) {
		t.Fatalf("local name: problems %q", got)
	}

	hiding := manifest
	evilEntry := ziptest.Stored("../../evil.js", "alert('pwned')")
	hiding.After = append(ziptest.LocalHeader(evilEntry.Central), evilEntry.Data...)
	if got := p.signRejected(t, ziptest.Zip(hiding, good)); !slices.Equal(got, []string{"zip_layout aaaaaaaaaa.js"}) {
		t.Fatalf("hidden entry: problems %q", got)
	}

	// In front of the zip: the offsets still count from the first entry,
	// as archive/zip allows (a CRX or a self-extractor is read so).
	inFront := ziptest.Archive{Leading: hiding.After, Entries: []ziptest.Entry{manifest, good}}.Bytes()
	if got := p.signRejected(t, inFront); !slices.Equal(got, []string{"zip_layout "}) {
		t.Fatalf("entry in front: problems %q", got)
	}
}

// TestSignRefusesWhatChromeCannotInstall: a zip whose manifest names an
// icon and a service worker it lacks, sets default_locale without
// _locales, and holds a 60,000-character file name and a 4,000-character
// path is refused with each of the five problems listed, at the entry or
// the manifest field it concerns; testers keep their bundle.
func TestSignRefusesWhatChromeCannotInstall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPipeline(t, e, betaport.PlanProfessional)
	p.submitAny(t, validZip(t, "1.0"))

	long := strings.Repeat("n", 60_000) + ".js"
	deep := strings.Repeat("dir/", 1000) + "a.js"
	got := p.signRejected(t, makeZip(t, map[string]string{
		"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "2.0", "default_locale": "en",
			"icons": {"128": "icons/128.png"}, "background": {"service_worker": "background.js"}}`,
		long: "x",
		deep: "y",
	}))
	want := sorted([]string{"file_missing icons/128.png", "file_missing background.js", "locales manifest.json",
		"path_too_long " + long, "path_too_long " + deep})
	if !slices.Equal(got, want) {
		t.Fatalf("problems %.300q, want %.300q", got, want)
	}

	// The same extension, complete, is published.
	p.submitAny(t, makeZip(t, map[string]string{
		"manifest.json": `{"manifest_version": 3, "name": "Tab Tamer", "version": "2.0", "default_locale": "en",
			"icons": {"128": "icons/128.png"}, "background": {"service_worker": "background.js"}}`,
		"icons/128.png":             "\x89PNG",
		"background.js":             "x",
		"_locales/en/messages.json": "{}",
	}))
}
