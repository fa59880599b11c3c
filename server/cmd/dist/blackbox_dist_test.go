//go:build unix

package main_test

// Black-box tests of server/cmd/dist (make dist), written from the README and
// the issue only: the command is built once per test and run as a process
// from the module's root, and what it leaves behind is read with the tools a
// release engineer and a user downloading it would use (sha256sum, tar,
// unzip) and with Go's readers of executables' headers.
//
// Cross-builds are expensive: only TestBlackBoxAllSixPlatforms builds every
// platform; the others build the host's (linux/amd64) and at most one or
// two more.

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const modulePath = "github.com/betaport/betaport"

// The six platforms, in the README's order.
var allPlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

// moduleRoot is the module's root, where the command runs.
var moduleRoot = sync.OnceValue(func() string {
	r, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		panic(err)
	}
	return r
})

// buildDist builds the command into a folder of the test's own.
func buildDist(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dist")
	cmd := exec.Command("go", "build", "-o", bin, "./server/cmd/dist")
	cmd.Dir = moduleRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./server/cmd/dist: %v\n%s", err, out)
	}
	return bin
}

type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s--- stderr:\n%s", r.code, r.stdout, r.stderr)
}

// runIn runs the dist command in dir with extra environment variables.
func runIn(t *testing.T, bin, dir string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("dist %q: %v", args, err)
		}
		r.code = ee.ExitCode()
	}
	t.Logf("dist %q (in %s): exit %d after %s", args, dir, r.code, time.Since(start).Round(time.Second))
	return r
}

func runDist(t *testing.T, bin string, args ...string) result {
	t.Helper()
	return runIn(t, bin, moduleRoot(), nil, args...)
}

func splitPlatform(p string) (goos, goarch string) {
	goos, goarch, _ = strings.Cut(p, "/")
	return
}

// archiveName is the README's name of a platform's archive.
func archiveName(version, platform string) string {
	goos, goarch := splitPlatform(platform)
	ext := ".tar.gz"
	if goos == "windows" {
		ext = ".zip"
	}
	return "betaport_" + version + "_" + goos + "_" + goarch + ext
}

var archiveLike = regexp.MustCompile(`^betaport_.+_(linux|darwin|windows)_(amd64|arm64)\.(tar\.gz|zip)$`)

func sha256File(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// buildID is the build id every build of this checkout carries: the first
// 12 hex digits of app.wasm's SHA-256 (the Makefile's BUILD_ID).
func buildID(t *testing.T) string {
	return sha256File(t, filepath.Join(moduleRoot(), "web", "app.wasm"))[:12]
}

var goVersion = sync.OnceValue(func() string {
	cmd := exec.Command("go", "env", "GOVERSION")
	cmd.Dir = moduleRoot()
	out, err := cmd.Output()
	if err != nil {
		panic(err)
	}
	return strings.TrimSpace(string(out))
})

// snapshot records every file, folder and link under dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	s := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			s[rel] = "link -> " + target
		case d.IsDir():
			s[rel] = "dir"
		default:
			info, _ := d.Info()
			s[rel] = fmt.Sprintf("file %v %s", info.Mode(), sha256File(t, p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func diffSnapshots(before, after map[string]string) []string {
	var d []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			d = append(d, "removed "+k)
		} else if w != v {
			d = append(d, "changed "+k+": "+v+" => "+w)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			d = append(d, "added "+k)
		}
	}
	sort.Strings(d)
	return d
}

// checkNothingWritten fails if tmp holds anything but an empty out folder.
func checkNothingWritten(t *testing.T, tmp string) {
	t.Helper()
	s := snapshot(t, tmp)
	delete(s, ".")
	if s["out"] == "dir" {
		delete(s, "out")
	}
	if len(s) > 0 {
		t.Errorf("a refused run wrote files: %v", s)
	}
}

var sumLine = regexp.MustCompile(`^([0-9a-f]{64}) [ *](.+)$`)

// checkRelease checks one successful run that should have made version's
// archives for plats in out: what it printed, SHA256SUMS (with the real
// sha256sum too), and every archive's contents. It returns the unpacked
// executables by platform.
func checkRelease(t *testing.T, r result, out, version string, plats []string) map[string]string {
	t.Helper()
	return checkReleaseOf(t, r, out, version, plats, moduleRoot())
}

// checkReleaseOf is checkRelease for a run in the module copy at root.
func checkReleaseOf(t *testing.T, r result, out, version string, plats []string, root string) map[string]string {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("dist failed: %s", r)
	}
	want := map[string]string{} // archive name -> platform
	for _, p := range plats {
		want[archiveName(version, p)] = p
	}

	// stdout: each archive's path, then SHA256SUMS's.
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != len(plats)+1 {
		t.Errorf("stdout has %d lines, want %d (each archive, then SHA256SUMS):\n%s", len(lines), len(plats)+1, r.stdout)
	}
	printed := map[string]bool{}
	for i, l := range lines {
		p := l
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		base := filepath.Base(p)
		if i == len(lines)-1 && base != "SHA256SUMS" {
			t.Errorf("stdout's last line is %q, want SHA256SUMS's path", l)
		}
		a, err := os.Stat(p)
		if err != nil {
			t.Errorf("stdout line %q is no file: %v", l, err)
			continue
		}
		b, err := os.Stat(filepath.Join(out, base))
		if err != nil || !os.SameFile(a, b) {
			t.Errorf("stdout line %q is not %s in %s", l, base, out)
		}
		if printed[base] {
			t.Errorf("stdout names %s twice", base)
		}
		printed[base] = true
	}
	for name := range want {
		if !printed[name] {
			t.Errorf("stdout does not name %s:\n%s", name, r.stdout)
		}
	}

	// The folder: the archives wanted, and no other archive.
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, e := range entries {
		if archiveLike.MatchString(e.Name()) {
			have = append(have, e.Name())
			if _, ok := want[e.Name()]; !ok {
				t.Errorf("%s holds an archive not of this run: %s", out, e.Name())
			}
		}
	}
	for name := range want {
		if !slices.Contains(have, name) {
			t.Errorf("%s has no %s (has %v)", out, name, have)
		}
	}

	// SHA256SUMS: one line per archive, as sha256sum -c reads it.
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatalf("no SHA256SUMS: %v", err)
	}
	if !bytes.HasSuffix(sums, []byte("\n")) {
		t.Errorf("SHA256SUMS does not end with a newline: %q", sums)
	}
	listed := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n") {
		m := sumLine.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("SHA256SUMS line %q is not \"SHA256  NAME\"", l)
			continue
		}
		name := m[2]
		if listed[name] {
			t.Errorf("SHA256SUMS lists %s twice", name)
		}
		listed[name] = true
		if _, ok := want[name]; !ok {
			t.Errorf("SHA256SUMS lists %q, not an archive of this run", name)
			continue
		}
		if got := sha256File(t, filepath.Join(out, name)); got != m[1] {
			t.Errorf("SHA256SUMS says %s of %s, the file's is %s", m[1], name, got)
		}
	}
	for name := range want {
		if !listed[name] {
			t.Errorf("SHA256SUMS does not list %s:\n%s", name, sums)
		}
	}
	check := exec.Command("sha256sum", "-c", "--strict", "SHA256SUMS")
	check.Dir = out
	if b, err := check.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c --strict SHA256SUMS in %s: %v\n%s", out, err, b)
	}

	if t.Failed() {
		t.Logf("the run's stderr:\n%s", r.stderr)
	}

	// Each archive: the command and the README, nothing else.
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	bins := map[string]string{}
	for name, p := range want {
		dest := filepath.Join(t.TempDir(), strings.ReplaceAll(p, "/", "_"))
		if err := os.MkdirAll(dest, 0o755); err != nil {
			t.Fatal(err)
		}
		files := unpackInGo(t, filepath.Join(out, name), dest)
		goos, _ := splitPlatform(p)
		exe := "betaport"
		if goos == "windows" {
			exe = "betaport.exe"
		}
		var names []string
		for n := range files {
			names = append(names, n)
		}
		sort.Strings(names)
		if !slices.Equal(names, []string{"README.md", exe}) && !slices.Equal(names, []string{exe, "README.md"}) {
			t.Errorf("%s holds %v, want %s and README.md", name, names, exe)
		}
		if f, ok := files["README.md"]; ok {
			if got, _ := os.ReadFile(filepath.Join(dest, "README.md")); !bytes.Equal(got, readme) {
				t.Errorf("%s's README.md is not the checkout's (%d bytes, want %d)", name, len(got), len(readme))
			}
			if goos != "windows" && f.Perm()&0o111 != 0 {
				t.Errorf("%s's README.md is executable: %v", name, f.Perm())
			}
		}
		if f, ok := files[exe]; ok {
			if goos != "windows" && f.Perm()&0o555 != 0o555 {
				t.Errorf("%s's %s has mode %v: not readable and executable by everyone", name, exe, f.Perm())
			}
			bin := filepath.Join(dest, exe)
			checkExecutable(t, bin, p, root)
			bins[p] = bin
		}
	}
	return bins
}

// unpackInGo unpacks an archive into dest, checking that each entry is a
// plain file at the top level, and returns the entries' modes.
func unpackInGo(t *testing.T, archive, dest string) map[string]fs.FileMode {
	t.Helper()
	files := map[string]fs.FileMode{}
	add := func(name string, mode fs.FileMode, r io.Reader) {
		clean := path.Clean(name)
		if clean != name && "./"+clean != name {
			t.Errorf("%s: entry %q is not a clean name", filepath.Base(archive), name)
		}
		if strings.ContainsAny(clean, `/\`) || clean == ".." || clean == "." {
			t.Errorf("%s: entry %q is not at the archive's top level", filepath.Base(archive), name)
			return
		}
		if _, dup := files[clean]; dup {
			t.Errorf("%s: entry %q twice", filepath.Base(archive), name)
		}
		files[clean] = mode
		f, err := os.Create(filepath.Join(dest, clean))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := io.Copy(f, r); err != nil {
			t.Errorf("%s: reading %s: %v", filepath.Base(archive), name, err)
		}
		os.Chmod(f.Name(), mode.Perm())
	}
	if strings.HasSuffix(archive, ".zip") {
		zr, err := zip.OpenReader(archive)
		if err != nil {
			t.Fatalf("%s is no zip: %v", archive, err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.FileInfo().IsDir() {
				t.Errorf("%s: a folder entry %q", filepath.Base(archive), f.Name)
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatalf("%s: %s: %v", archive, f.Name, err)
			}
			add(f.Name, f.Mode(), rc)
			rc.Close()
		}
		if b, err := exec.Command("unzip", "-tq", archive).CombinedOutput(); err != nil {
			t.Errorf("unzip -t %s: %v\n%s", archive, err, b)
		}
		return files
	}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s is not gzipped: %v", archive, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		if h.Typeflag == tar.TypeDir && path.Clean(h.Name) == "." {
			continue
		}
		if h.Typeflag != tar.TypeReg {
			t.Errorf("%s: entry %q of type %q, not a plain file", filepath.Base(archive), h.Name, h.Typeflag)
			continue
		}
		if h.Mode&^0o777 != 0 {
			t.Errorf("%s: entry %q has mode %o (setuid, setgid or sticky)", filepath.Base(archive), h.Name, h.Mode)
		}
		add(h.Name, fs.FileMode(h.Mode).Perm(), tr)
	}
	if b, err := exec.Command("tar", "-tzf", archive).CombinedOutput(); err != nil {
		t.Errorf("tar -tzf %s: %v\n%s", archive, err, b)
	}
	return files
}

// checkExecutable reads an executable's own headers: its format, system and
// processor, that it is the betaport command, built without cgo, and that
// it carries no path of the machine that built it.
func checkExecutable(t *testing.T, bin, platform, root string) {
	t.Helper()
	goos, goarch := splitPlatform(platform)
	name := platform + " " + filepath.Base(bin)
	switch goos {
	case "linux":
		f, err := elf.Open(bin)
		if err != nil {
			t.Errorf("%s is no ELF executable: %v", name, err)
			return
		}
		defer f.Close()
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
		if f.Machine != want || f.Class != elf.ELFCLASS64 {
			t.Errorf("%s: ELF machine %v class %v, want %v 64-bit", name, f.Machine, f.Class, want)
		}
		if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
			t.Errorf("%s: ELF type %v is not an executable", name, f.Type)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s asks for a dynamic loader (PT_INTERP): it depends on the machine's C library", name)
			}
		}
		if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
			t.Errorf("%s links C libraries %v", name, libs)
		}
	case "darwin":
		f, err := macho.Open(bin)
		if err != nil {
			t.Errorf("%s is no Mach-O executable: %v", name, err)
			return
		}
		defer f.Close()
		want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[goarch]
		if f.Cpu != want || f.Type != macho.TypeExec {
			t.Errorf("%s: Mach-O cpu %v type %v, want %v executable", name, f.Cpu, f.Type, want)
		}
	case "windows":
		f, err := pe.Open(bin)
		if err != nil {
			t.Errorf("%s is no PE executable: %v", name, err)
			return
		}
		defer f.Close()
		want := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[goarch]
		if f.Machine != want {
			t.Errorf("%s: PE machine %#x, want %#x", name, f.Machine, want)
		}
		if f.Characteristics&pe.IMAGE_FILE_EXECUTABLE_IMAGE == 0 {
			t.Errorf("%s: PE image is not executable (characteristics %#x)", name, f.Characteristics)
		}
		if oh, ok := f.OptionalHeader.(*pe.OptionalHeader64); !ok {
			t.Errorf("%s: not a PE32+ image", name)
		} else if oh.Subsystem != pe.IMAGE_SUBSYSTEM_WINDOWS_CUI {
			t.Errorf("%s: PE subsystem %d, want the console's (%d): it is a command", name, oh.Subsystem, pe.IMAGE_SUBSYSTEM_WINDOWS_CUI)
		}
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Errorf("%s carries no Go build information: %v", name, err)
		return
	}
	if bi.Path != modulePath+"/server/cmd/betaport" {
		t.Errorf("%s is %s, not the betaport command", name, bi.Path)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if settings["GOOS"] != goos || settings["GOARCH"] != goarch {
		t.Errorf("%s was built for %s/%s", name, settings["GOOS"], settings["GOARCH"])
	}
	if settings["CGO_ENABLED"] != "0" {
		t.Errorf("%s was built with CGO_ENABLED=%q, want 0 (README: without cgo)", name, settings["CGO_ENABLED"])
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(root+"/")) {
		t.Errorf("%s holds the builder's path %s (not built with -trimpath as make build is: another checkout builds other bytes)", name, root)
	}
}

// versionLine is what --version prints for a build of this checkout.
func versionLine(t *testing.T, version, platform string) string {
	return fmt.Sprintf("betaport %s (build %s, %s %s)\n", version, buildID(t), goVersion(), platform)
}

func runBinary(t *testing.T, dir, bin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s %q: %v", bin, args, err)
		}
		r.code = ee.ExitCode()
	}
	return r
}

func checkVersionOutput(t *testing.T, bin, version string) {
	t.Helper()
	r := runBinary(t, filepath.Dir(bin), bin, "--version")
	if want := versionLine(t, version, runtime.GOOS+"/"+runtime.GOARCH); r.code != 0 || r.stdout != want {
		t.Errorf("%s --version: %s\nwant stdout %q", bin, r, want)
	}
}

// checkoutVersion is the version Go stamps from this checkout: a
// pseudo-version of HEAD, +dirty with uncommitted changes.
func checkoutVersion(t *testing.T) string {
	t.Helper()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = moduleRoot()
		out, err := cmd.Output()
		if err != nil {
			t.Skipf("git %v: %v (no checkout to take a version from)", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	if tags := git("tag", "--list", "v*"); tags != "" {
		t.Skipf("the checkout has tags (%s): its pseudo-version is not 0.0.0-…", strings.Fields(tags)[0])
	}
	hashTime := strings.SplitN(git("-c", "log.showsignature=false", "log", "-1", "--format=%H:%ct"), ":", 2)
	secs, err := strconv.ParseInt(hashTime[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	v := "0.0.0-" + time.Unix(secs, 0).UTC().Format("20060102150405") + "-" + hashTime[0][:12]
	if git("status", "--porcelain") != "" {
		v += "+dirty"
	}
	return v
}

// TestBlackBoxAllSixPlatforms is make dist as a release runs it, and what a
// user downloading one archive does with it: every platform's archive, its
// checksum, its executable's headers; then the linux/amd64 one checked with
// sha256sum -c --ignore-missing as the README says, unpacked with tar, and
// run (--version, lint, serve, which offers itself at /cli/betaport).
func TestBlackBoxAllSixPlatforms(t *testing.T) {
	bin := buildDist(t)
	out := filepath.Join(t.TempDir(), "dist")
	r := runDist(t, bin, "-out", out, "-release", "v1.4.0")
	if strings.TrimSpace(r.stderr) == "" {
		t.Errorf("no progress on stderr")
	}
	bins := checkRelease(t, r, out, "1.4.0", allPlatforms)

	// The README's listing, exactly.
	var names []string
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"SHA256SUMS",
		"betaport_1.4.0_darwin_amd64.tar.gz", "betaport_1.4.0_darwin_arm64.tar.gz",
		"betaport_1.4.0_linux_amd64.tar.gz", "betaport_1.4.0_linux_arm64.tar.gz",
		"betaport_1.4.0_windows_amd64.zip", "betaport_1.4.0_windows_arm64.zip"}
	if !slices.Equal(names, want) {
		t.Errorf("%s holds %v, want %v", out, names, want)
	}
	if t.Failed() {
		return
	}

	// A tampered archive fails the check, and names the archive.
	tampered := t.TempDir()
	for _, n := range want {
		b, _ := os.ReadFile(filepath.Join(out, n))
		if n == "betaport_1.4.0_darwin_arm64.tar.gz" {
			b[len(b)/2] ^= 0x01
		}
		os.WriteFile(filepath.Join(tampered, n), b, 0o644)
	}
	c := exec.Command("sha256sum", "-c", "SHA256SUMS")
	c.Dir = tampered
	b, err := c.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "betaport_1.4.0_darwin_arm64.tar.gz: FAILED") {
		t.Errorf("sha256sum -c passed a tampered archive (err %v):\n%s", err, b)
	}

	// The user's way: SHA256SUMS and one archive in a folder of downloads,
	// checked, unpacked with tar and run.
	downloads := t.TempDir()
	for _, n := range []string{"SHA256SUMS", "betaport_1.4.0_linux_amd64.tar.gz"} {
		b, _ := os.ReadFile(filepath.Join(out, n))
		os.WriteFile(filepath.Join(downloads, n), b, 0o644)
	}
	c = exec.Command("sh", "-c", "sha256sum -c --ignore-missing SHA256SUMS && tar -xzf betaport_1.4.0_linux_amd64.tar.gz && ./betaport --version")
	c.Dir = downloads
	b, err = c.CombinedOutput()
	if wantLine := versionLine(t, "1.4.0", "linux/amd64"); err != nil || !strings.HasSuffix(string(b), wantLine) ||
		!strings.Contains(string(b), "betaport_1.4.0_linux_amd64.tar.gz: OK") {
		t.Errorf("the README's check, unpack and run: %v\n%s\nwant it to end with %q", err, b, wantLine)
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("running the archive's command needs linux/amd64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	exe := filepath.Join(downloads, "betaport")
	if got, _ := os.ReadFile(exe); sha256File(t, bins["linux/amd64"]) != fmt.Sprintf("%x", sha256.Sum256(got)) {
		t.Errorf("tar unpacked another betaport than Go's reader did")
	}
	checkVersionOutput(t, exe, "1.4.0")
	checkLint(t, exe)
	checkServe(t, exe, "1.4.0")
}

// checkLint runs betaport lint on a good and a bad extension zip, with no
// server.
func checkLint(t *testing.T, exe string) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, manifest string) string {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.Create("manifest.json")
		io.WriteString(w, manifest)
		w, _ = zw.Create("bg.js")
		io.WriteString(w, "console.log('hi')\n")
		zw.Close()
		p := filepath.Join(dir, name)
		os.WriteFile(p, buf.Bytes(), 0o644)
		return p
	}
	good := write("good.zip", `{"manifest_version": 3, "name": "X", "version": "1.0.0"}`)
	r := runBinary(t, dir, exe, "lint", good)
	var v any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &v) != nil {
		t.Errorf("betaport lint good.zip: want exit 0 and JSON on stdout: %s", r)
	}
	bad := write("bad.zip", `{"manifest_version": 3, "name": "X"`)
	if r := runBinary(t, dir, exe, "lint", bad); r.code == 0 {
		t.Errorf("betaport lint of a broken manifest passed: %s", r)
	}
}

// checkServe starts the unpacked command's service and reads it: the pages,
// the browser app, its health, and the command it offers for download,
// which is itself, and runs once downloaded.
func checkServe(t *testing.T, exe, version string) {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cmd := exec.Command(exe, "serve", "--data", data, "--addr", "127.0.0.1:0")
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	urls := make(chan string, 1)
	var logMu sync.Mutex
	var log strings.Builder
	go func() {
		defer close(done)
		urlRE := regexp.MustCompile(`url=(http://127\.0\.0\.1:[0-9]+)`)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		sent := false
		for sc.Scan() {
			logMu.Lock()
			log.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if m := urlRE.FindStringSubmatch(sc.Text()); m != nil && !sent {
				urls <- m[1]
				sent = true
			}
		}
		io.Copy(io.Discard, stderr)
		cmd.Wait()
	}()
	var base string
	select {
	case base = <-urls:
	case <-done:
		t.Fatalf("betaport serve ended before it served:\n%s", log.String())
	case <-time.After(2 * time.Minute):
		logMu.Lock()
		defer logMu.Unlock()
		t.Fatalf("betaport serve logged no url= line in 2 minutes:\n%s", log.String())
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: time.Minute}
	get := func(p string) (*http.Response, []byte) {
		t.Helper()
		resp, err := client.Get(base + p)
		if err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
		return resp, b
	}

	resp, body := get("/healthz")
	var health struct{ Status, Version string }
	if resp.StatusCode != 200 || json.Unmarshal(body, &health) != nil || health.Version != buildID(t) {
		t.Errorf("GET /healthz: %d %s; want 200 and version %s", resp.StatusCode, body, buildID(t))
	}
	resp, body = get("/")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("GET /: %d %s, want a page", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	wasm, _ := os.ReadFile(filepath.Join(moduleRoot(), "web", "app.wasm"))
	if resp, body = get("/web/app.wasm"); resp.StatusCode != 200 || !bytes.Equal(body, wasm) {
		t.Errorf("GET /web/app.wasm: %d, %d bytes; want 200 and the checkout's app.wasm (%d bytes)", resp.StatusCode, len(body), len(wasm))
	}

	self, _ := os.ReadFile(exe)
	selfSum := fmt.Sprintf("%x", sha256.Sum256(self))
	resp, body = get("/cli/betaport")
	if resp.StatusCode != 200 || !bytes.Equal(body, self) {
		t.Errorf("GET /cli/betaport: %d, %d bytes; want 200 and the running executable (%d bytes)", resp.StatusCode, len(body), len(self))
	}
	if p := resp.Header.Get("X-Betaport-Platform"); p != "linux/amd64" {
		t.Errorf("GET /cli/betaport: X-Betaport-Platform %q, want linux/amd64", p)
	}
	resp, sumBody := get("/cli/betaport.sha256")
	if resp.StatusCode != 200 || string(sumBody) != selfSum+"  betaport\n" {
		t.Errorf("GET /cli/betaport.sha256: %d %q, want %q", resp.StatusCode, sumBody, selfSum+"  betaport\n")
	}

	// A pipeline's download: checked with sha256sum -c, then run.
	dl := t.TempDir()
	os.WriteFile(filepath.Join(dl, "betaport"), body, 0o755)
	os.WriteFile(filepath.Join(dl, "betaport.sha256"), sumBody, 0o644)
	c := exec.Command("sha256sum", "-c", "betaport.sha256")
	c.Dir = dl
	if b, err := c.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c betaport.sha256 of the download: %v\n%s", err, b)
	}
	checkVersionOutput(t, filepath.Join(dl, "betaport"), version)
}

// TestBlackBoxVersionFromCheckout: with no release (make dist on a commit
// without a tag passes an empty -release), the archives are named by the version
// Go stamps from the checkout, the one --version prints; leaving -release
// out is the same, byte for byte.
func TestBlackBoxVersionFromCheckout(t *testing.T) {
	bin := buildDist(t)
	// runStable runs dist and returns the version of the checkout it ran
	// on; the test is skipped if the checkout changed meanwhile (someone
	// committed or edited files while it ran).
	runStable := func(args ...string) (result, string) {
		t.Helper()
		before, v := checkoutFingerprint(t), checkoutVersion(t)
		r := runDist(t, bin, args...)
		if after := checkoutFingerprint(t); after != before {
			t.Skipf("the checkout changed while dist ran (%s => %s): the version it stamped cannot be known", before, after)
		}
		return r, v
	}
	outEmpty := filepath.Join(t.TempDir(), "dist")
	r, version := runStable("-out", outEmpty, "-release", "", "-platforms", "linux/amd64")
	t.Logf("the checkout's version: %s", version)
	bins := checkRelease(t, r, outEmpty, version, []string{"linux/amd64"})
	if b := bins["linux/amd64"]; b != "" && runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		checkVersionOutput(t, b, version)
	}
	outNone := filepath.Join(t.TempDir(), "dist")
	r, version2 := runStable("-out", outNone, "-platforms", "linux/amd64")
	checkRelease(t, r, outNone, version2, []string{"linux/amd64"})
	if version2 != version {
		t.Skipf("the checkout changed between the runs (%s, then %s)", version, version2)
	}
	if d := diffSnapshots(snapshot(t, outEmpty), snapshot(t, outNone)); len(d) > 0 {
		t.Errorf("-release '' and no -release made other files: %v", d)
	}
}

// checkoutFingerprint is what a build of the command depends on in the
// checkout: its commit, and its uncommitted changes.
func checkoutFingerprint(t *testing.T) string {
	t.Helper()
	h := sha256.New()
	for _, args := range [][]string{{"rev-parse", "HEAD"}, {"status", "--porcelain"}, {"diff", "HEAD"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = moduleRoot()
		out, err := cmd.Output()
		if err != nil {
			t.Skipf("git %v: %v", args, err)
		}
		h.Write(out)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// TestBlackBoxReproducible: two runs on one commit, into two folders, write
// the same bytes (a .tar.gz and a .zip).
func TestBlackBoxReproducible(t *testing.T) {
	bin := buildDist(t)
	plats := []string{"linux/amd64", "windows/arm64"}
	before := checkoutFingerprint(t)
	a := filepath.Join(t.TempDir(), "first")
	checkRelease(t, runDist(t, bin, "-out", a, "-release", "v2.0.0", "-platforms", strings.Join(plats, ",")), a, "2.0.0", plats)
	b := filepath.Join(t.TempDir(), "second", "dist")
	checkRelease(t, runDist(t, bin, "-out", b, "-release", "v2.0.0", "-platforms", strings.Join(plats, ",")), b, "2.0.0", plats)
	if after := checkoutFingerprint(t); after != before {
		t.Skipf("the checkout changed between the runs (%s => %s): they need not write the same bytes", before, after)
	}
	if d := diffSnapshots(snapshot(t, a), snapshot(t, b)); len(d) > 0 {
		t.Errorf("two runs wrote different bytes: %v", d)
	}
}

// TestBlackBoxRerunReplaces: a run into a folder replaces the archives and
// SHA256SUMS a run before left there, and nothing else.
func TestBlackBoxRerunReplaces(t *testing.T) {
	bin := buildDist(t)
	out := filepath.Join(t.TempDir(), "dist")
	checkRelease(t, runDist(t, bin, "-out", out, "-release", "v1.0.0", "-platforms", "linux/amd64,windows/amd64"),
		out, "1.0.0", []string{"linux/amd64", "windows/amd64"})
	// What a person keeps beside a release.
	os.WriteFile(filepath.Join(out, "RELEASE-NOTES.md"), []byte("# 1.0.0\n"), 0o644)
	os.WriteFile(filepath.Join(out, "betaport_1.0.0_notes.md"), []byte("notes\n"), 0o644)
	os.WriteFile(filepath.Join(out, "SHA256SUMS.asc"), []byte("-----BEGIN PGP SIGNATURE-----\n"), 0o644)
	os.MkdirAll(filepath.Join(out, "keep"), 0o755)
	os.WriteFile(filepath.Join(out, "keep", "inner.txt"), []byte("inner\n"), 0o600)
	before := snapshot(t, out)

	r := runDist(t, bin, "-out", out, "-release", "v1.0.1", "-platforms", "linux/amd64")
	checkRelease(t, r, out, "1.0.1", []string{"linux/amd64"})
	after := snapshot(t, out)
	for _, k := range []string{"RELEASE-NOTES.md", "betaport_1.0.0_notes.md", "SHA256SUMS.asc", "keep", filepath.Join("keep", "inner.txt")} {
		if after[k] != before[k] {
			t.Errorf("the run changed %s, not its own: %q => %q", k, before[k], after[k])
		}
	}
	for _, old := range []string{"betaport_1.0.0_linux_amd64.tar.gz", "betaport_1.0.0_windows_amd64.zip"} {
		if _, ok := after[old]; ok {
			t.Errorf("the run before's %s is still there (README: a run replaces the archives a run before left)", old)
		}
	}
	if t.Failed() {
		t.Logf("folder after the second run: %v", after)
	}
}

// TestBlackBoxFailedRunKeepsPrevious: a run that fails (its builds cannot
// run, or it is refused) leaves the release a run before made as it was.
func TestBlackBoxFailedRunKeepsPrevious(t *testing.T) {
	bin := buildDist(t)
	out := filepath.Join(t.TempDir(), "dist")
	checkRelease(t, runDist(t, bin, "-out", out, "-release", "v1.0.0", "-platforms", "linux/amd64"), out, "1.0.0", []string{"linux/amd64"})
	before := snapshot(t, out)

	// go build refuses to run without its cache.
	tmpdir := t.TempDir()
	r := runIn(t, bin, moduleRoot(), []string{"GOCACHE=off", "TMPDIR=" + tmpdir}, "-out", out, "-release", "v1.0.1", "-platforms", "linux/amd64,windows/amd64")
	if s := snapshot(t, tmpdir); len(s) > 1 {
		t.Errorf("a failed run left files in TMPDIR: %v", s)
	}
	if r.code != 1 || strings.TrimSpace(r.stderr) == "" {
		t.Errorf("a run whose build fails: want exit 1 and a message: %s", r)
	}
	if strings.Contains(r.stdout, "SHA256SUMS") {
		t.Errorf("a failed run printed SHA256SUMS's path: %q", r.stdout)
	}
	if d := diffSnapshots(before, snapshot(t, out)); len(d) > 0 {
		t.Errorf("a failed run changed the release before: %v", d)
	}

	r = runDist(t, bin, "-out", out, "-release", "v1.0.1", "-platforms", "linux/amd64,plan9/386")
	if r.code == 0 {
		t.Errorf("plan9/386 was accepted: %s", r)
	}
	if d := diffSnapshots(before, snapshot(t, out)); len(d) > 0 {
		t.Errorf("a refused run changed the release before: %v", d)
	}
}

// TestBlackBoxBadPlatforms: a platform that is not one of the six, or not a
// platform at all, is a usage error (exit 2) naming it, before anything is
// built or written.
func TestBlackBoxBadPlatforms(t *testing.T) {
	bin := buildDist(t)
	var notUsage []string // refused, but not as a usage error
	defer func() {
		if len(notUsage) > 0 {
			t.Errorf("bad -platforms values are refused with another exit code than 2 (a usage error, as serve's bad values are):\n%s", strings.Join(notUsage, "\n"))
		}
	}()
	for _, tc := range []struct{ platforms, mention string }{
		{"plan9/386", "plan9/386"},
		{"linux/386", "linux/386"},
		{"linux/amd64,freebsd/amd64", "freebsd/amd64"},
		{"js/wasm", "js/wasm"},
		{"linux", "linux"},
		{"amd64", "amd64"},
		{"linux-amd64", "linux-amd64"},
		{"linux_amd64", "linux_amd64"},
		{"linux/amd64/v3", "linux/amd64/v3"},
		{"linux/amd64;touch pwned", "pwned"},
		{"../../etc/amd64", "etc"},
		{"linux/../windows/amd64", "linux/../windows/amd64"},
		{"windows/amd64 linux/amd64", "windows/amd64 linux/amd64"},
	} {
		t.Run(tc.platforms, func(t *testing.T) {
			tmp := t.TempDir()
			r := runDist(t, bin, "-out", filepath.Join(tmp, "out"), "-release", "v1.0.0", "-platforms", tc.platforms)
			if r.code == 0 {
				t.Errorf("-platforms %q was accepted: %s", tc.platforms, r)
			} else if r.code != 2 {
				notUsage = append(notUsage, fmt.Sprintf("  -platforms %q: exit %d", tc.platforms, r.code))
			}
			if !strings.Contains(r.stderr, tc.mention) {
				t.Errorf("-platforms %q: the message does not name %q: %q", tc.platforms, tc.mention, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("-platforms %q: stdout %q, want nothing", tc.platforms, r.stdout)
			}
			checkNothingWritten(t, tmp)
			if _, err := os.Stat(filepath.Join(moduleRoot(), "pwned")); err == nil {
				t.Errorf("-platforms %q ran a shell command: %s exists", tc.platforms, filepath.Join(moduleRoot(), "pwned"))
			}
		})
	}
}

// TestBlackBoxClumsyPlatformLists: a duplicate, a blank, spaces or capitals
// in -platforms are either refused (exit 2, nothing written) or read as the
// platform meant: one archive, listed once.
func TestBlackBoxClumsyPlatformLists(t *testing.T) {
	bin := buildDist(t)
	var notUsage []string // refused, but not as a usage error
	defer func() {
		if len(notUsage) > 0 {
			t.Errorf("clumsy -platforms values are refused with another exit code than 2 (a usage error, as serve's bad values are):\n%s", strings.Join(notUsage, "\n"))
		}
	}()
	for _, list := range []string{"linux/amd64,linux/amd64", "linux/amd64,,", " linux/amd64 ", "Linux/AMD64"} {
		t.Run(list, func(t *testing.T) {
			tmp := t.TempDir()
			out := filepath.Join(tmp, "out")
			r := runDist(t, bin, "-out", out, "-release", "v1.0.0", "-platforms", list)
			switch r.code {
			case 1, 2:
				if r.code != 2 {
					notUsage = append(notUsage, fmt.Sprintf("  -platforms %q: exit %d", list, r.code))
				}
				if strings.TrimSpace(r.stderr) == "" || r.stdout != "" {
					t.Errorf("-platforms %q refused without a message, or printed on stdout: %s", list, r)
				}
				checkNothingWritten(t, tmp)
			case 0:
				checkRelease(t, r, out, "1.0.0", []string{"linux/amd64"})
				entries, _ := os.ReadDir(out)
				if len(entries) != 2 {
					t.Errorf("-platforms %q wrote %d files, want 2: %v", list, len(entries), entries)
				}
			default:
				t.Errorf("-platforms %q: want exit 0 (read as linux/amd64) or 2 (refused): %s", list, r)
			}
			t.Logf("-platforms %q: exit %d %s", list, r.code, strings.TrimSpace(r.stderr))
		})
	}
}

// TestBlackBoxBadRelease: a -release that is no version (spaces, quotes,
// slashes, a newline, linker flags) is a usage error before anything is
// built or written: nothing lands outside -out, nothing in it either, and
// no flag reaches the linker.
func TestBlackBoxBadRelease(t *testing.T) {
	bin := buildDist(t)
	var notUsage []string // refused, but not as a usage error
	defer func() {
		if len(notUsage) > 0 {
			t.Errorf("bad -release values are refused with another exit code than 2 (a usage error, as serve's bad values are):\n%s", strings.Join(notUsage, "\n"))
		}
	}()
	for _, rel := range []string{
		"v1 -X foo=bar",
		"v1.0.0 -X " + modulePath + "/server/http.Version=evil",
		"v1.0.0'",
		`v1.0.0"`,
		"v1.0.0 ",
		"v1/../../evil",
		"v1.0.0/x",
		"v1.0.0\nv2.0.0",
		"v1.0.0;touch pwned",
		"v1.0.0$(touch pwned)",
		"-X=main.x=1",
		"v1.0.0\\..\\evil",
	} {
		t.Run(strconv.Quote(rel), func(t *testing.T) {
			tmp := t.TempDir()
			out := filepath.Join(tmp, "out")
			r := runDist(t, bin, "-out", out, "-release", rel, "-platforms", "linux/amd64")
			if r.code == 0 {
				t.Errorf("-release %q was accepted: %s", rel, r)
			} else if r.code != 2 {
				notUsage = append(notUsage, fmt.Sprintf("  -release %q: exit %d", rel, r.code))
			}
			if strings.TrimSpace(r.stderr) == "" || r.stdout != "" {
				t.Errorf("-release %q: want a message on stderr, nothing on stdout: %s", rel, r)
			}
			checkNothingWritten(t, tmp)
			if _, err := os.Stat(filepath.Join(moduleRoot(), "pwned")); err == nil {
				t.Errorf("-release %q ran a shell command", rel)
			}
			if r.code == 0 {
				// Accepted: at least no flag may have reached the linker.
				for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
					if strings.HasSuffix(l, ".tar.gz") {
						dest := t.TempDir()
						unpackInGo(t, l, dest)
						v := runBinary(t, dest, filepath.Join(dest, "betaport"), "--version")
						t.Errorf("-release %q was accepted; the build says: %s", rel, v.stdout)
					}
				}
			}
		})
	}
}

// TestBlackBoxReleaseVariants: a prerelease tag (which make dist passes as
// it passes any v… tag) names the archives and --version; a version without
// its v is either refused or read as the version it is.
func TestBlackBoxReleaseVariants(t *testing.T) {
	bin := buildDist(t)
	t.Run("prerelease", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "dist")
		bins := checkRelease(t, runDist(t, bin, "-out", out, "-release", "v1.4.0-rc.1", "-platforms", "linux/amd64"), out, "1.4.0-rc.1", []string{"linux/amd64"})
		if b := bins["linux/amd64"]; b != "" && runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
			checkVersionOutput(t, b, "1.4.0-rc.1")
		}
	})
	t.Run("no v", func(t *testing.T) {
		tmp := t.TempDir()
		out := filepath.Join(tmp, "out")
		r := runDist(t, bin, "-out", out, "-release", "1.4.0", "-platforms", "linux/amd64")
		switch r.code {
		case 2:
			if strings.TrimSpace(r.stderr) == "" {
				t.Errorf("-release 1.4.0 refused with no message")
			}
			checkNothingWritten(t, tmp)
		case 0:
			bins := checkRelease(t, r, out, "1.4.0", []string{"linux/amd64"})
			if b := bins["linux/amd64"]; b != "" && runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
				checkVersionOutput(t, b, "1.4.0")
			}
		default:
			t.Errorf("-release 1.4.0: want exit 0 or 2: %s", r)
		}
		t.Logf("-release 1.4.0: exit %d %s", r.code, strings.TrimSpace(r.stderr))
	})
}

// TestBlackBoxUsageErrors: extra arguments and unknown flags are usage
// errors (exit 2) that write nothing; -h lists the flags.
func TestBlackBoxUsageErrors(t *testing.T) {
	bin := buildDist(t)
	for _, tc := range []struct {
		name string
		args func(out string) []string
	}{
		{"extra argument", func(out string) []string { return []string{"-out", out, "-platforms", "linux/amd64", "linux/arm64"} }},
		{"unknown flag", func(out string) []string { return []string{"-out", out, "-platform", "linux/amd64"} }},
		{"argument after --", func(out string) []string {
			return []string{"-out", out, "-platforms", "linux/amd64", "--release=v1.0.0", "--", "x"}
		}},
		{"flag without value", func(out string) []string { return []string{"-out", out, "-platforms", "linux/amd64", "-release"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			r := runDist(t, bin, tc.args(filepath.Join(tmp, "out"))...)
			if r.code != 2 || strings.TrimSpace(r.stderr) == "" || r.stdout != "" {
				t.Errorf("want exit 2, a message on stderr, nothing on stdout: %s", r)
			}
			checkNothingWritten(t, tmp)
		})
	}
	t.Run("-h", func(t *testing.T) {
		r := runDist(t, bin, "-h")
		if r.code != 0 && r.code != 2 {
			t.Errorf("-h: want exit 0 or 2: %s", r)
		}
		for _, f := range []string{"-out", "-release", "-platforms"} {
			if !strings.Contains(r.stderr+r.stdout, f) {
				t.Errorf("-h does not mention %s: %s", f, r)
			}
		}
	})
}

// TestBlackBoxOutNotAFolder: -out naming a file, or a folder under a file,
// fails with a message and leaves the file as it was.
func TestBlackBoxOutNotAFolder(t *testing.T) {
	bin := buildDist(t)
	tmp := t.TempDir()
	file := filepath.Join(tmp, "dist")
	os.WriteFile(file, []byte("not a folder\n"), 0o644)
	for _, out := range []string{file, filepath.Join(file, "sub")} {
		r := runDist(t, bin, "-out", out, "-release", "v1.0.0", "-platforms", "linux/amd64")
		if (r.code != 1 && r.code != 2) || strings.TrimSpace(r.stderr) == "" || strings.Contains(r.stdout, "SHA256SUMS") {
			t.Errorf("-out %s (a file): want exit 1 and a message: %s", out, r)
		}
		if !strings.Contains(r.stderr, "dist") {
			t.Errorf("-out %s: the message does not name the folder: %q", out, r.stderr)
		}
		if r.code != 1 {
			t.Logf("-out %s: exit %d (a failure, not a usage error, would be 1)", out, r.code)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "not a folder\n" {
		t.Errorf("the file -out named was changed: %q", b)
	}
	if s := snapshot(t, tmp); len(s) != 2 {
		t.Errorf("the runs wrote beside the file: %v", s)
	}
}

// TestBlackBoxRelativeNestedOut: a relative -out is read from the module's
// root (where make runs it), folders that do not exist yet are made, and a
// folder's name is taken as it is (spaces, quotes, $).
func TestBlackBoxRelativeNestedOut(t *testing.T) {
	bin := buildDist(t)
	tmp := t.TempDir()
	abs := filepath.Join(tmp, "a", "b", "c")
	rel, err := filepath.Rel(moduleRoot(), abs)
	if err != nil {
		t.Fatal(err)
	}
	r := runDist(t, bin, "-out", rel, "-release", "v1.0.0", "-platforms", "linux/amd64")
	checkRelease(t, r, abs, "1.0.0", []string{"linux/amd64"})
	entries, _ := os.ReadDir(abs)
	if len(entries) != 2 {
		t.Errorf("%s holds %d files, want the archive and SHA256SUMS: %v", abs, len(entries), entries)
	}

	// A folder whose name has spaces, quotes and non-ASCII letters.
	odd := filepath.Join(tmp, "my release's \"dist\" été $HOME")
	r = runDist(t, bin, "-out", odd, "-release", "v1.0.0", "-platforms", "linux/amd64")
	checkRelease(t, r, odd, "1.0.0", []string{"linux/amd64"})
	if _, err := os.Stat(filepath.Join(tmp, "my release's \"dist\" été "+os.Getenv("HOME"))); err == nil && os.Getenv("HOME") != "" {
		t.Errorf("$HOME in -out was expanded")
	}
}

// TestBlackBoxWrongDirectory: run from a folder that is not the module's
// root, the command fails with a message and writes nothing (or, if it
// finds the module itself, makes a correct release).
func TestBlackBoxWrongDirectory(t *testing.T) {
	bin := buildDist(t)
	t.Run("empty folder", func(t *testing.T) {
		tmp := t.TempDir()
		elsewhere := t.TempDir()
		r := runIn(t, bin, elsewhere, nil, "-out", filepath.Join(tmp, "out"), "-release", "v1.0.0", "-platforms", "linux/amd64")
		if r.code == 0 {
			checkRelease(t, r, filepath.Join(tmp, "out"), "1.0.0", []string{"linux/amd64"})
			return
		}
		if r.code != 1 || strings.TrimSpace(r.stderr) == "" || r.stdout != "" {
			t.Errorf("from an empty folder: want exit 1 and a message: %s", r)
		}
		checkNothingWritten(t, tmp)
		if s := snapshot(t, elsewhere); len(s) != 1 {
			t.Errorf("the run wrote into the folder it ran in: %v", s)
		}
		t.Logf("from an empty folder: %s", strings.TrimSpace(r.stderr))
	})
	t.Run("module subfolder", func(t *testing.T) {
		tmp := t.TempDir()
		sub := filepath.Join(moduleRoot(), "server")
		before := snapshot(t, filepath.Join(sub, "cmd"))
		r := runIn(t, bin, sub, nil, "-out", filepath.Join(tmp, "out"), "-release", "v1.0.0", "-platforms", "linux/amd64")
		if r.code == 0 {
			checkRelease(t, r, filepath.Join(tmp, "out"), "1.0.0", []string{"linux/amd64"})
		} else {
			if r.code != 1 || strings.TrimSpace(r.stderr) == "" || r.stdout != "" {
				t.Errorf("from server/: want exit 1 and a message (or a correct release): %s", r)
			}
			checkNothingWritten(t, tmp)
		}
		if d := diffSnapshots(before, snapshot(t, filepath.Join(sub, "cmd"))); len(d) > 0 {
			t.Errorf("the run from server/ changed the checkout: %v", d)
		}
		t.Logf("from server/: exit %d %s", r.code, strings.TrimSpace(r.stderr))
	})
}

// TestBlackBoxLinksInOut: a SHA256SUMS or an archive name in -out that is a
// symbolic link to a file elsewhere is replaced, not written through: the
// run changes nothing outside -out.
func TestBlackBoxLinksInOut(t *testing.T) {
	bin := buildDist(t)
	tmp := t.TempDir()
	out := filepath.Join(tmp, "dist")
	elsewhere := filepath.Join(tmp, "elsewhere")
	os.MkdirAll(out, 0o755)
	os.MkdirAll(elsewhere, 0o755)
	os.WriteFile(filepath.Join(elsewhere, "sums"), []byte("precious sums\n"), 0o644)
	os.WriteFile(filepath.Join(elsewhere, "archive"), []byte("precious archive\n"), 0o644)
	os.Symlink(filepath.Join(elsewhere, "sums"), filepath.Join(out, "SHA256SUMS"))
	os.Symlink(filepath.Join(elsewhere, "archive"), filepath.Join(out, "betaport_1.0.0_linux_amd64.tar.gz"))
	before := snapshot(t, elsewhere)

	r := runDist(t, bin, "-out", out, "-release", "v1.0.0", "-platforms", "linux/amd64")
	if d := diffSnapshots(before, snapshot(t, elsewhere)); len(d) > 0 {
		t.Errorf("the run wrote through links in -out, outside it: %v", d)
	}
	if r.code == 0 {
		checkRelease(t, r, out, "1.0.0", []string{"linux/amd64"})
		for _, n := range []string{"SHA256SUMS", "betaport_1.0.0_linux_amd64.tar.gz"} {
			if fi, err := os.Lstat(filepath.Join(out, n)); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("%s is not a plain file after the run: %v %v", n, fi, err)
			}
		}
	} else {
		t.Logf("links in -out: %s", r)
	}
}

// failingGit is a folder with a git that always fails, as git does in a
// checkout it will not read (another user's, in a container: "detected
// dubious ownership"), to put first in PATH.
func failingGit(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\necho \"fatal: detected dubious ownership in repository at '$PWD'\" >&2\nexit 128\n"
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBlackBoxBrokenGit: in a checkout whose git cannot be read, a run with
// -release still makes that release; one without fails rather than naming
// the archives by a version that is not the checkout's (README: the version
// Go stamps from the checkout): a CI job whose git refuses the checkout
// would otherwise publish a tagged commit's archives as 0.0.0-dev (the
// Makefile's RELEASE comes from git too).
func TestBlackBoxBrokenGit(t *testing.T) {
	bin := buildDist(t)
	env := []string{"PATH=" + failingGit(t) + string(os.PathListSeparator) + os.Getenv("PATH")}
	out := filepath.Join(t.TempDir(), "dist")
	r := runIn(t, bin, moduleRoot(), env, "-out", out, "-release", "v1.0.0", "-platforms", "linux/amd64")
	bins := checkRelease(t, r, out, "1.0.0", []string{"linux/amd64"})
	if b := bins["linux/amd64"]; b != "" && runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		checkVersionOutput(t, b, "1.0.0")
	}

	tmp := t.TempDir()
	r = runIn(t, bin, moduleRoot(), env, "-out", filepath.Join(tmp, "out"), "-release", "", "-platforms", "linux/amd64")
	if r.code != 1 || strings.TrimSpace(r.stderr) == "" {
		t.Errorf("no -release, in a checkout git cannot read: want exit 1 and a message, not archives named by another version: %s", r)
	}
	if r.code != 0 {
		checkNothingWritten(t, tmp)
	}
}

// TestBlackBoxSourceWithoutGit: a copy of the sources with no .git (an
// export, a source archive) builds a release given -release; without one it
// still builds, under some version.
func TestBlackBoxSourceWithoutGit(t *testing.T) {
	bin := buildDist(t)
	src := filepath.Join(t.TempDir(), "betaport-src")
	// The sources, without .git and the build outputs.
	err := filepath.WalkDir(moduleRoot(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(moduleRoot(), p)
		if d.IsDir() && (rel == ".git" || rel == ".cache" || rel == "bin" || rel == "dist" || rel == "data" || rel == "node_modules") {
			return filepath.SkipDir
		}
		dst := filepath.Join(src, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, _ := d.Info()
			return os.WriteFile(dst, b, info.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "dist")
	r := runIn(t, bin, src, nil, "-out", out, "-release", "v1.2.3", "-platforms", "linux/amd64")
	bins := checkReleaseOf(t, r, out, "1.2.3", []string{"linux/amd64"}, src)
	if b := bins["linux/amd64"]; b != "" && runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		checkVersionOutput(t, b, "1.2.3")
	}

	out = filepath.Join(t.TempDir(), "dist")
	r = runIn(t, bin, src, nil, "-out", out, "-platforms", "linux/amd64")
	if r.code != 0 {
		t.Fatalf("no -release, no .git: %s", r)
	}
	names, _ := filepath.Glob(filepath.Join(out, "betaport_*_linux_amd64.tar.gz"))
	if len(names) != 1 {
		t.Fatalf("no -release, no .git: archives %v", names)
	}
	version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(names[0]), "betaport_"), "_linux_amd64.tar.gz")
	t.Logf("no -release, no .git: version %s", version)
	bins = checkReleaseOf(t, r, out, version, []string{"linux/amd64"}, src)
	if b := bins["linux/amd64"]; b != "" && runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		checkVersionOutput(t, b, version)
	}
}

// TestBlackBoxInterrupted: a run stopped by Ctrl-C (SIGINT to its process
// group) while it builds leaves the release a run before made as it was,
// and nothing in TMPDIR.
func TestBlackBoxInterrupted(t *testing.T) {
	bin := buildDist(t)
	out := filepath.Join(t.TempDir(), "dist")
	checkRelease(t, runDist(t, bin, "-out", out, "-release", "v1.0.0", "-platforms", "linux/amd64"), out, "1.0.0", []string{"linux/amd64"})
	before := snapshot(t, out)

	tmpdir := t.TempDir()
	cmd := exec.Command(bin, "-out", out, "-release", "v1.0.1", "-platforms", "linux/amd64,windows/amd64,darwin/arm64,linux/arm64")
	cmd.Dir = moduleRoot()
	cmd.Env = append(os.Environ(), "TMPDIR="+tmpdir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	defer func() {
		// Whatever happened, no process of the run outlives the test.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}()
	var log []string
	deadline := time.After(10 * time.Minute)
	// The first archive built: the run is half way.
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the run ended before it built its first archive:\n%s", strings.Join(log, "\n"))
			}
			log = append(log, l)
			if strings.Contains(l, "betaport_1.0.1_") {
				break wait
			}
		case <-deadline:
			t.Fatalf("no archive built in 10 minutes:\n%s", strings.Join(log, "\n"))
		}
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	for l := range lines {
		log = append(log, l)
	}
	select {
	case err = <-exited:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the run did not stop in 2 minutes after SIGINT")
	}
	t.Logf("after SIGINT: %v; stderr:\n%s\nstdout:\n%s", err, strings.Join(log, "\n"), stdout.String())
	if err == nil {
		t.Skipf("the run finished before SIGINT reached it")
	}
	if d := diffSnapshots(before, snapshot(t, out)); len(d) > 0 {
		t.Errorf("an interrupted run changed the release before: %v", d)
	}
	if s := snapshot(t, tmpdir); len(s) > 1 {
		var names []string
		for k := range s {
			if k != "." {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		if len(names) > 8 {
			names = names[:8]
		}
		t.Errorf("an interrupted run left %d files and folders in TMPDIR: %v…", len(s)-1, names)
	}
}
