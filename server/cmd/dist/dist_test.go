package main

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
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// root is the module's root, where make dist runs the command.
const root = "../../.."

// TestDistArchivesUnpackAndRun makes a release as make dist does, for all
// six platforms, and checks it the way the people who download it would:
// sha256sum -c passes on SHA256SUMS, each archive holds the README and a
// betaport built for its own system and processor (read from the
// executable's own headers, not from the archive's name), and this
// machine's archive, unpacked with tar, runs: --version names the release,
// lint passes a zip, and serve serves the pages and offers the very
// command that serves it.
func TestDistArchivesUnpackAndRun(t *testing.T) {
	for _, tool := range []string{"go", "tar", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the release is checked with %s: install it", tool)
		}
	}
	out := t.TempDir()
	// An archive a run before left behind goes; another file stays.
	mustWrite(t, filepath.Join(out, "betaport_0.9.0_linux_amd64.tar.gz"), []byte("old"))
	mustWrite(t, filepath.Join(out, "notes.txt"), []byte("mine"))

	const release = "v1.4.0-rc.1"
	names, err := Build(context.Background(), Options{Out: out, Release: release, Platforms: Platforms, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range Platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		ext := ".tar.gz"
		if goos == "windows" {
			ext = ".zip"
		}
		want = append(want, "betaport_1.4.0-rc.1_"+goos+"_"+goarch+ext)
	}
	if !slices.Equal(names, want) {
		t.Fatalf("archives %q, want %q", names, want)
	}
	entries, _ := os.ReadDir(out)
	var inOut []string
	for _, e := range entries {
		inOut = append(inOut, e.Name())
	}
	if wantOut := append(slices.Sorted(slices.Values(want)), "SHA256SUMS", "notes.txt"); !slices.Equal(inOut, slices.Sorted(slices.Values(wantOut))) {
		t.Fatalf("the folder holds %q, want the archives, SHA256SUMS and the file that was there", inOut)
	}

	// sha256sum -c, as the README tells a downloader to run it.
	check := exec.Command("sha256sum", "-c", "--strict", "SHA256SUMS")
	check.Dir = out
	checked, err := check.CombinedOutput()
	if err != nil {
		t.Fatalf("sha256sum -c: %v\n%s", err, checked)
	}
	for _, name := range want {
		if !strings.Contains(string(checked), name+": OK") {
			t.Errorf("sha256sum -c did not check %s:\n%s", name, checked)
		}
	}
	if n := strings.Count(strings.TrimSpace(string(mustRead(t, filepath.Join(out, "SHA256SUMS")))), "\n") + 1; n != len(want) {
		t.Errorf("SHA256SUMS has %d lines, want %d", n, len(want))
	}

	readme := mustRead(t, filepath.Join(root, "README.md"))
	for i, p := range Platforms {
		t.Run(p, func(t *testing.T) {
			goos, goarch, _ := strings.Cut(p, "/")
			files := unpack(t, filepath.Join(out, names[i]))
			exe := executableName(goos)
			if got := slices.Sorted(maps.Keys(files)); !slices.Equal(got, []string{"README.md", exe}) {
				t.Fatalf("the archive holds %q, want README.md and %s", got, exe)
			}
			if !bytes.Equal(files["README.md"].data, readme) {
				t.Error("the archive's README.md is not the checkout's")
			}
			if files[exe].mode&0o111 == 0 {
				t.Errorf("%s is not executable once unpacked (mode %v)", exe, files[exe].mode)
			}
			bin := files[exe].data
			if gotOS, gotArch := executableFormat(t, bin); gotOS != goos || gotArch != goarch {
				t.Errorf("the executable is built for %s/%s, want %s", gotOS, gotArch, p)
			}
			info, err := buildinfo.Read(bytes.NewReader(bin))
			if err != nil {
				t.Fatal(err)
			}
			settings := map[string]string{}
			for _, s := range info.Settings {
				settings[s.Key] = s.Value
			}
			if settings["GOOS"] != goos || settings["GOARCH"] != goarch || settings["CGO_ENABLED"] != "0" {
				t.Errorf("build settings GOOS=%s GOARCH=%s CGO_ENABLED=%s, want %s/%s without cgo (one build for every C library)",
					settings["GOOS"], settings["GOARCH"], settings["CGO_ENABLED"], goos, goarch)
			}
			// -trimpath leaves -ldflags out of the settings: the release
			// stamped is in the executable's strings.
			if !bytes.Contains(bin, []byte(release)) {
				t.Errorf("the release %s is not stamped in the executable", release)
			}
			if settings["vcs.revision"] == "" {
				t.Error("the build carries no commit (vcs.revision)")
			}
			if info.Path != "github.com/betaport/betaport/server/cmd/betaport" {
				t.Errorf("the archive holds %s, not the betaport command", info.Path)
			}
		})
	}

	// This machine's archive, unpacked as a user would and run.
	host := runtime.GOOS + "/" + runtime.GOARCH
	i := slices.Index(Platforms, host)
	if i < 0 || runtime.GOOS == "windows" {
		t.Fatalf("no archive is made for this machine (%s) to run", host)
	}
	dir := t.TempDir()
	untar := exec.Command("tar", "-xzf", filepath.Join(out, names[i]), "-C", dir)
	if msg, err := untar.CombinedOutput(); err != nil {
		t.Fatalf("tar -xzf: %v\n%s", err, msg)
	}
	betaport := filepath.Join(dir, "betaport")
	version := run(t, betaport, "--version")
	wantVersion := regexp.MustCompile(`^betaport 1\.4\.0-rc\.1 \(build [0-9a-f]{12}, go1\.\d+(\.\d+)? ` + regexp.QuoteMeta(host) + `\)\n$`)
	if !wantVersion.MatchString(version) {
		t.Errorf("--version printed %q, want the release, the build and %s", version, host)
	}
	zipPath := filepath.Join(t.TempDir(), "extension.zip")
	mustWrite(t, zipPath, extensionZip(t))
	var linted struct{ Name, Version string }
	if err := json.Unmarshal([]byte(run(t, betaport, "lint", zipPath)), &linted); err != nil || linted.Version != "2.1.0" || linted.Name != "Dist check" {
		t.Errorf("lint printed %+v (%v), want the manifest's name and version", linted, err)
	}

	// serve, on the data folder's defaults: the pages with the browser app
	// in them, and the command it offers is itself.
	serve := exec.Command(betaport, "serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0")
	stderr, _ := serve.StderrPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { serve.Process.Kill(); serve.Wait() }()
	url := servedURL(t, stderr)
	if body := get(t, url+"/healthz"); !strings.Contains(string(body), strings.Fields(version)[3][:12]) {
		t.Errorf("/healthz answered %q, not the build --version names", body)
	}
	if wasm := get(t, url+"/web/app.wasm"); !bytes.HasPrefix(wasm, []byte("\x00asm")) {
		t.Errorf("/web/app.wasm is not the browser app (%d bytes)", len(wasm))
	}
	self := sha256.Sum256(mustRead(t, betaport))
	if sum := get(t, url+"/cli/betaport.sha256"); !strings.HasPrefix(string(sum), hex.EncodeToString(self[:])) {
		t.Errorf("the service offers a command whose SHA-256 is %q, not its own %x", sum, self)
	}
}

// TestDistNamesACheckoutsBuild makes this machine's archive with no
// release: it is named by the version Go stamps from the checkout, the one
// its --version prints, so two builds of two commits never share a name.
func TestDistNamesACheckoutsBuild(t *testing.T) {
	host := runtime.GOOS + "/" + runtime.GOARCH
	out := t.TempDir()
	names, err := Build(context.Background(), Options{Out: out, Platforms: []string{host}, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	files := unpack(t, filepath.Join(out, names[0]))
	exe := filepath.Join(t.TempDir(), "betaport")
	if err := os.WriteFile(exe, files["betaport"].data, 0o755); err != nil {
		t.Fatal(err)
	}
	version := strings.Fields(run(t, exe, "--version"))[1]
	if want := "betaport_" + version + "_" + strings.ReplaceAll(host, "/", "_") + ".tar.gz"; names[0] != want {
		t.Errorf("archive %s, want %s (the version --version prints)", names[0], want)
	}
	if version == "0.0.0-dev" {
		t.Errorf("a checkout's build is named 0.0.0-dev, not by its commit")
	}
	// Made twice from one checkout, an archive is the same bytes.
	first := mustRead(t, filepath.Join(out, names[0]))
	again, err := Build(context.Background(), Options{Out: out, Platforms: []string{host}, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if again[0] != names[0] {
		t.Fatalf("second run named %s, first %s", again[0], names[0])
	}
	if !bytes.Equal(mustRead(t, filepath.Join(out, again[0])), first) {
		t.Error("two runs on one checkout wrote different archives")
	}
}

// TestDistRefuses checks what dist says before building anything.
func TestDistRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"unknown platform", Options{Platforms: []string{"plan9/386"}, Root: root}, `platform "plan9/386" is not one of linux/amd64`},
		{"not the module's root", Options{Platforms: Platforms, Root: t.TempDir()}, "run dist from the module's root"},
		{"no platform", Options{Root: root}, "no platform"},
		{"a platform twice", Options{Platforms: []string{"linux/amd64", "darwin/arm64", "linux/amd64"}, Root: root}, "platform linux/amd64 is given twice"},
		{"a release that is not a version", Options{Platforms: Platforms, Release: "v1.4 -X main.x=y", Root: root}, "give a tag such as v1.4.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The last release in the folder stays as it was.
			tc.o.Out = t.TempDir()
			last := filepath.Join(tc.o.Out, "betaport_1.0.0_linux_amd64.tar.gz")
			mustWrite(t, last, []byte("the last release"))
			_, err := Build(context.Background(), tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one saying %q", err, tc.want)
			}
			if entries, _ := os.ReadDir(tc.o.Out); len(entries) != 1 || string(mustRead(t, last)) != "the last release" {
				t.Errorf("a refused run changed the folder: %d files", len(entries))
			}
		})
	}
}

type unpacked struct {
	mode os.FileMode
	data []byte
}

// unpack reads an archive's files: a .zip or a .tar.gz, by its name.
func unpack(t *testing.T, path string) map[string]unpacked {
	t.Helper()
	files := map[string]unpacked{}
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			files[f.Name] = unpacked{f.Mode(), data}
		}
		return files
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = unpacked{os.FileMode(hdr.Mode), data}
	}
}

// executableFormat reads the system and processor an executable is for
// from its own headers: ELF, Mach-O or PE.
func executableFormat(t *testing.T, bin []byte) (goos, goarch string) {
	t.Helper()
	r := bytes.NewReader(bin)
	if f, err := elf.NewFile(r); err == nil {
		return "linux", map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64"}[f.Machine]
	}
	if f, err := macho.NewFile(r); err == nil {
		return "darwin", map[macho.Cpu]string{macho.CpuAmd64: "amd64", macho.CpuArm64: "arm64"}[f.Cpu]
	}
	if f, err := pe.NewFile(r); err == nil {
		return "windows", map[uint16]string{pe.IMAGE_FILE_MACHINE_AMD64: "amd64", pe.IMAGE_FILE_MACHINE_ARM64: "arm64"}[f.Machine]
	}
	t.Fatal("the executable is neither ELF, Mach-O nor PE")
	return "", ""
}

// servedURL reads serve's log until it says where it listens.
func servedURL(t *testing.T, stderr io.Reader) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case url := <-found:
		return url
	case <-time.After(2 * time.Minute):
		t.Fatal("serve did not say where it listens within 2 minutes")
		return ""
	}
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return body
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// extensionZip is a small extension that passes sign's checks.
func extensionZip(t *testing.T) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("manifest.json")
	fmt.Fprint(w, `{"manifest_version": 3, "name": "Dist check", "version": "2.1.0"}`)
	w, _ = zw.Create("background.js")
	fmt.Fprint(w, `chrome.runtime.onInstalled.addListener(() => {});`)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustWrite(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
