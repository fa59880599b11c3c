package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/storetest"
	"github.com/betaport/betaport/server/zipcheck/ziptest"
)

// process runs the betaport command as a process with extra environment
// and stdin.
func process(t *testing.T, env []string, stdin []byte, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	b, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), commandChildVar+"="+string(b)), env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), out.String(), errOut.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errOut.String()
}

const mv3 = `{"manifest_version": 3, "name": "Lint", "version": "1.0.0"}`

// lintCorpus are zips a pipeline could send: good ones, and one for each
// kind of problem sign finds (paths, manifests, entries, the format).
func lintCorpus() map[string][]byte {
	good := ziptest.Zip(ziptest.Deflated("manifest.json", mv3), ziptest.Deflated("a.js", "a"))
	return map[string][]byte{
		"good":               good,
		"good in one folder": ziptest.Zip(ziptest.Folder("ext/"), ziptest.Deflated("ext/manifest.json", mv3), ziptest.Stored("ext/a.js", "a")),
		"not a zip":          []byte("this is not a zip, just some text that is long enough to look at"),
		"truncated":          good[:len(good)/2],
		"no manifest":        ziptest.Zip(ziptest.Stored("a.js", "a")),
		"manifest not JSON":  ziptest.Zip(ziptest.Stored("manifest.json", "{nope")),
		"manifest version 1": ziptest.Zip(ziptest.Stored("manifest.json", `{"manifest_version": 1, "name": "L", "version": "1"}`)),
		"no version":         ziptest.Zip(ziptest.Stored("manifest.json", `{"manifest_version": 3, "name": "L"}`)),
		"bad version":        ziptest.Zip(ziptest.Stored("manifest.json", `{"manifest_version": 3, "name": "L", "version": "1.0.0.0.0"}`)),
		"traversal":          ziptest.Zip(ziptest.Stored("manifest.json", mv3), ziptest.Stored("../evil.js", "x")),
		"absolute":           ziptest.Zip(ziptest.Stored("manifest.json", mv3), ziptest.Stored("/etc/passwd", "x")),
		"backslash":          ziptest.Zip(ziptest.Stored("manifest.json", mv3), ziptest.Stored(`js\a.js`, "x")),
		"duplicate":          ziptest.Zip(ziptest.Stored("manifest.json", mv3), ziptest.Stored("a.js", "1"), ziptest.Stored("a.js", "2")),
		"two manifests":      ziptest.Zip(ziptest.Stored("a/manifest.json", mv3), ziptest.Stored("b/manifest.json", mv3)),
		"many problems":      ziptest.Zip(ziptest.Stored("../x.js", "1"), ziptest.Stored("/y.js", "2"), ziptest.Stored(`z\w.js`, "3")),
	}
}

var problemLine = regexp.MustCompile(`(?m)^.*\([a-z_]+\)$`)

// betaport lint finds what sign finds, on every zip of the corpus: the same
// problem lines and the same exit code, from a file and from stdin, with
// no server; submit then publishes exactly the zips lint passed.
func TestLintAgreesWithSign(t *testing.T) {
	t.Parallel()
	w := newRemoteWorld(t, nil)
	storetest.MustKey(t, w.m.Store, w.ext.ID, "lint", "lint-secret")
	keyFile, _ := json.Marshal(api.KeyFile{Service: api.ServiceKey{ExtensionID: strconv.FormatInt(w.ext.ID, 10), APIKey: "lint-secret"}})
	corpus := lintCorpus()
	names := make([]string, 0, len(corpus))
	for name := range corpus {
		names = append(names, name)
	}
	slices.Sort(names)
	published := 0
	for _, name := range names {
		zip := corpus[name]
		path := filepath.Join(w.dir, strings.ReplaceAll(name, " ", "-")+".zip")
		os.WriteFile(path, zip, 0o600)
		lintCode, lintOut, lintErr := process(t, nil, nil, "lint", path)
		stdinCode, _, stdinErr := process(t, nil, zip, "lint", "-")
		// The key as a CI secret's content, the zip on stdin.
		signCode, signOut, signErr := process(t, []string{"BETAPORT_KEY=" + string(keyFile), "BETAPORT_KEY_FILE="},
			zip, "submit", "--quiet", "--retries", "0", "--base-url", w.m.URL(), "-")
		lintProblems, signProblems := problemLine.FindAllString(lintErr, -1), problemLine.FindAllString(signErr, -1)
		slices.Sort(lintProblems)
		slices.Sort(signProblems)
		switch {
		case lintCode != stdinCode || !slices.Equal(problemLine.FindAllString(stdinErr, -1), problemLine.FindAllString(lintErr, -1)):
			t.Errorf("%s: lint of the file (exit %d) and of stdin (exit %d) disagree:\n%s\n%s", name, lintCode, stdinCode, lintErr, stdinErr)
		case lintCode == 0 && signCode != 0:
			t.Errorf("%s: lint passed it, sign refused it (exit %d): %s", name, signCode, signErr)
		case lintCode == 0:
			var b betaport.Bundle
			if json.Unmarshal([]byte(signOut), &b) != nil || b.Number == 0 {
				t.Errorf("%s: submit printed %q", name, signOut)
			}
			var summary map[string]any
			if json.Unmarshal([]byte(lintOut), &summary) != nil || summary["version"] != "1.0.0" {
				t.Errorf("%s: lint printed %q", name, lintOut)
			}
			published++
		case lintCode != signCode:
			t.Errorf("%s: lint exit %d, sign exit %d\nlint: %s\nsign: %s", name, lintCode, signCode, lintErr, signErr)
		case !slices.Equal(lintProblems, signProblems) && !(name == "not a zip" || name == "truncated"):
			t.Errorf("%s: lint found\n%s\nsign found\n%s", name, strings.Join(lintProblems, "\n"), strings.Join(signProblems, "\n"))
		case len(lintProblems) == 0 && name != "not a zip" && name != "truncated":
			t.Errorf("%s: lint refused it (exit %d) without a problem line: %s", name, lintCode, lintErr)
		}
		if lintCode != 0 && lintCode != cli.ExitInvalid && lintCode != cli.ExitUsage {
			t.Errorf("%s: lint exit %d, want %d for a zip sign refuses", name, lintCode, cli.ExitInvalid)
		}
	}
	if published != 2 {
		t.Fatalf("%d zips published, want the 2 good ones", published)
	}
	// Lint takes one zip; an empty stdin is said.
	if code, _, errOut := process(t, nil, nil, "lint", "-"); code != cli.ExitUsage || !strings.Contains(errOut, "stdin") {
		t.Errorf("lint of an empty stdin: exit %d, %q", code, errOut)
	}
	if code, _, _ := process(t, nil, nil, "lint"); code != cli.ExitUsage {
		t.Errorf("lint without a zip: exit %d", code)
	}
}

// --version prints a semantic version and the build; completion scripts
// complete the commands and their flags (bash's is run).
func TestVersionAndCompletion(t *testing.T) {
	t.Parallel()
	code, out, _ := run(t, "--version")
	if code != 0 || !regexp.MustCompile(`^betaport \d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)? \(build [0-9a-z]+, go`).MatchString(out) {
		t.Fatalf("--version: exit %d, %q", code, out)
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		code, out, errOut := run(t, "completion", shell)
		if code != 0 || !strings.Contains(out, "tester") || !strings.Contains(out, "submit") {
			t.Errorf("completion %s: exit %d, %q", shell, code, errOut)
		}
	}
	if code, _, _ := run(t, "completion", "powershell"); code != cli.ExitUsage {
		t.Errorf("completion powershell: exit %d, want %d", code, cli.ExitUsage)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is needed to run the bash completion")
	}
	_, script, _ := run(t, "completion", "bash")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "c.bash"), []byte(script), 0o600)
	probe := `source c.bash
t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMPREPLY=(); _betaport; echo "${COMPREPLY[*]}"; }
t betaport tes
t betaport tester in
t betaport tester invite --em
t betaport submit --ba
t betaport lint --max`
	cmd := exec.Command("bash", "-c", probe)
	cmd.Dir = dir
	got, err := cmd.CombinedOutput()
	want := "tester\ninvite\n--email\n--base-url\n--max-size\n"
	if err != nil || string(got) != want {
		t.Fatalf("bash completion answered %q (%v), want %q", got, err, want)
	}
}
