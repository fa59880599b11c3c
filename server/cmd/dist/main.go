// Command dist cross-builds the betaport command for every platform it is
// offered on, packs each build into an archive with the README, and writes
// SHA256SUMS beside them, in the form `sha256sum -c` checks:
//
//	dist [-out DIR] [-release vX.Y.Z] [-platforms linux/amd64,darwin/arm64,…]
//
// It runs from the module's root after the browser app is built (make dist
// does both), so every archive serves the pages as make build's binary does.
// Archives are named betaport_VERSION_OS_ARCH: .zip for Windows, .tar.gz
// elsewhere. VERSION is -release if given, else the version Go stamps from
// the checkout (a pseudo-version such as 0.0.0-20261202172500-3a46b95c1e2f,
// +dirty when files were changed) — the one `betaport --version` prints.
// The archives' entries carry the commit's time, so two runs on one commit
// write the same bytes.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Platforms are the ones make dist builds: the three systems testers'
// pipelines and admins' machines run, on both processor families.
var Platforms = []string{
	"linux/amd64", "linux/arm64",
	"darwin/amd64", "darwin/arm64",
	"windows/amd64", "windows/arm64",
}

// ReleasePackage is the variable a release's tag is stamped into; the
// Makefile's build stamps the same one.
const ReleasePackage = "github.com/betaport/betaport/server/cli.Release"

// releasePattern is a tag's semantic version, v optional: what -release
// takes (it goes into the linker's flags and the archives' names).
var releasePattern = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

func main() {
	out := flag.String("out", "dist", "the `directory` to write the archives and SHA256SUMS into")
	release := flag.String("release", "", "the release's `version` (a tag such as v1.2.0); default: the version Go stamps from the checkout")
	platforms := flag.String("platforms", strings.Join(Platforms, ","), "comma-separated `os/arch` pairs to build")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: dist [-out DIR] [-release vX.Y.Z] [-platforms os/arch,…]  (from the module's root, after make wasm)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	// Ctrl-C stops the builds and still removes what they left in the
	// temporary folder (the builds are not written to -out yet).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	archives, err := Build(ctx, Options{
		Out: *out, Release: *release, Platforms: splitList(*platforms), Log: os.Stderr,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		var usage UsageError
		if errors.As(err, &usage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
	for _, a := range archives {
		fmt.Println(filepath.Join(*out, a))
	}
	fmt.Println(filepath.Join(*out, "SHA256SUMS"))
}

// splitList reads -platforms: comma-separated, blanks around names allowed.
func splitList(s string) []string {
	var list []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			list = append(list, p)
		}
	}
	return list
}

// UsageError is an option dist cannot take (a platform it does not build,
// a release that is not a version): exit 2, as for a flag it does not know.
type UsageError struct{ error }

func (e UsageError) Unwrap() error { return e.error }

// Options say what Build makes and where.
type Options struct {
	Out       string    // directory for the archives and SHA256SUMS
	Release   string    // stamped version, or "" for the checkout's
	Platforms []string  // os/arch pairs
	Root      string    // the module's root; "" for the working directory
	Log       io.Writer // progress, one line per archive; nil for none
}

// Build builds and packs every platform of o and writes SHA256SUMS. It
// returns the archives' names (in Out), in o.Platforms' order. Once every
// archive is built, those of an earlier run in Out are removed, so the
// folder holds one release and SHA256SUMS names every archive in it; a run
// that fails leaves the folder as it was.
func Build(ctx context.Context, o Options) ([]string, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	root := o.Root
	if root == "" {
		root = "."
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return nil, fmt.Errorf("run dist from the module's root (README.md: %w)", err)
	}
	if _, err := os.Stat(filepath.Join(root, "web", "app.wasm")); err != nil {
		return nil, errors.New("web/app.wasm is missing: build the browser app first (make dist does: make wasm)")
	}
	if len(o.Platforms) == 0 {
		return nil, UsageError{errors.New("no platform to build")}
	}
	for i, p := range o.Platforms {
		if !slices.Contains(Platforms, p) {
			return nil, UsageError{fmt.Errorf("platform %q is not one of %s", p, strings.Join(Platforms, ", "))}
		}
		if slices.Contains(o.Platforms[:i], p) {
			return nil, UsageError{fmt.Errorf("platform %s is given twice", p)}
		}
	}
	if o.Release != "" && !releasePattern.MatchString(o.Release) {
		return nil, UsageError{fmt.Errorf("release %q is not a version: give a tag such as v1.4.0 or v1.4.0-rc.1", o.Release)}
	}
	buildvcs, err := vcsStamp(ctx, root, o.Release, o.Log)
	if err != nil {
		return nil, err
	}
	// The folder is made (or found not to be one) before minutes of builds.
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "betaport-dist-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	// Every archive is built before the folder is touched: a failed run
	// leaves the last release as it was.
	var names []string
	archives := map[string][]byte{}
	sums := map[string]string{}
	for _, p := range o.Platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		exe := filepath.Join(work, goos+"_"+goarch, executableName(goos))
		if err := build(ctx, root, exe, goos, goarch, o.Release, buildvcs); err != nil {
			return nil, fmt.Errorf("building for %s: %w", p, err)
		}
		version, modTime, err := stamped(exe, o.Release)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("betaport_%s_%s_%s", version, goos, goarch)
		var archive []byte
		if goos == "windows" {
			name += ".zip"
			archive, err = zipArchive(exe, readme, modTime)
		} else {
			name += ".tar.gz"
			archive, err = tarArchive(exe, readme, modTime)
		}
		if err != nil {
			return nil, fmt.Errorf("packing %s: %w", name, err)
		}
		archives[name] = archive
		sum := sha256.Sum256(archive)
		sums[name] = hex.EncodeToString(sum[:])
		names = append(names, name)
		fmt.Fprintf(o.Log, "dist: %s (%.1f MB)\n", name, float64(len(archive))/1e6)
	}
	if err := removeOldArchives(o.Out); err != nil {
		return nil, err
	}
	for _, name := range names {
		if err := writeFile(filepath.Join(o.Out, name), archives[name]); err != nil {
			return nil, err
		}
	}
	var list bytes.Buffer
	for _, name := range slices.Sorted(maps.Keys(sums)) {
		fmt.Fprintf(&list, "%s  %s\n", sums[name], name)
	}
	return names, writeFile(filepath.Join(o.Out, "SHA256SUMS"), list.Bytes())
}

func executableName(goos string) string {
	if goos == "windows" {
		return "betaport.exe"
	}
	return "betaport"
}

// build runs go build as make build does, for goos/goarch, with no cgo (the
// SQLite engine is pure Go, so one build runs on every machine of a
// platform, whatever its C library).
func build(ctx context.Context, root, exe, goos, goarch, release string, buildvcs bool) error {
	ldflags := "-s -w"
	if release != "" {
		ldflags += " -X " + ReleasePackage + "=" + release
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", fmt.Sprintf("-buildvcs=%t", buildvcs), "-ldflags", ldflags, "-o", exe, "./server/cmd/betaport")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return nil
}

// vcsStamp reports whether go build is to stamp the checkout's commit into
// the builds (their version, and the archives' names and times). It is
// asked for explicitly, as a machine's GOFLAGS may turn it off. Source with
// no .git is built unstamped (0.0.0-dev unless -release is given); a
// checkout git cannot read (not installed, or "dubious ownership") is
// refused without -release, rather than named as if it were no release.
func vcsStamp(ctx context.Context, root, release string, log io.Writer) (bool, error) {
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		fmt.Fprintln(log, "dist: not a git checkout, so the builds carry no commit: named 0.0.0-dev unless -release is given")
		return false, nil
	}
	cmd := exec.CommandContext(ctx, "git", "status", "--porcelain")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err == nil {
		return true, nil
	}
	why := strings.TrimSpace(fmt.Sprintf("%v: %s", err, out))
	if release != "" {
		fmt.Fprintf(log, "dist: git cannot read the checkout (%s): the builds carry the release, not the commit\n", why)
		return false, nil
	}
	abs, _ := filepath.Abs(root)
	return false, fmt.Errorf("git cannot read the checkout, so the builds would carry no version (%s): "+
		"fix git (for dubious ownership: git config --global --add safe.directory %s) or give -release", why, abs)
}

// stamped reads what the build says of itself: its version (the release,
// else the module version Go stamped from the checkout) and the commit's
// time, for the archives' entries.
func stamped(exe, release string) (version string, modTime time.Time, err error) {
	info, err := buildinfo.ReadFile(exe)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("reading the build's information: %w", err)
	}
	version = release
	if version == "" {
		version = info.Main.Version
	}
	version = strings.TrimPrefix(version, "v")
	if version == "" || version == "(devel)" {
		version = "0.0.0-dev"
	}
	// The zip format's earliest time; also a build outside a checkout's.
	modTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, s := range info.Settings {
		if s.Key == "vcs.time" {
			if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
				modTime = t.UTC()
			}
		}
	}
	return version, modTime, nil
}

// tarArchive packs the executable and README.md into a gzip'd tar, as
// `tar -xzf` unpacks it: the command, executable, at the top.
func tarArchive(exe string, readme []byte, modTime time.Time) ([]byte, error) {
	bin, err := os.ReadFile(exe)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	gz.ModTime = modTime
	tw := tar.NewWriter(gz)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{{filepath.Base(exe), 0o755, bin}, {"README.md", 0o644, readme}} {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: modTime, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// zipArchive packs the executable and README.md into a zip, which Windows
// opens without another tool.
func zipArchive(exe string, readme []byte, modTime time.Time) ([]byte, error) {
	bin, err := os.ReadFile(exe)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range []struct {
		name string
		mode os.FileMode
		data []byte
	}{{filepath.Base(exe), 0o755, bin}, {"README.md", 0o644, readme}} {
		hdr := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: modTime}
		hdr.SetMode(f.mode)
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// removeOldArchives removes what an earlier run wrote in dir: its archives
// and SHA256SUMS, and nothing else.
func removeOldArchives(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		n := e.Name()
		if n == "SHA256SUMS" || strings.HasPrefix(n, "betaport_") && (strings.HasSuffix(n, ".tar.gz") || strings.HasSuffix(n, ".zip")) {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeFile writes data to name through a temporary file, so an
// interrupted run never leaves a half-written archive under its final name.
func writeFile(name string, data []byte) error {
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}
