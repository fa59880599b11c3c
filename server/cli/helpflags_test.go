package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// commandChildVar makes the test binary the betaport command, run with the
// JSON list of arguments it holds (TestMain).
const commandChildVar = "BETAPORT_CLI_TEST_COMMAND"

// commandProcess runs betaport with args as a process of its own, as a
// person or a CI job does, and returns its exit code and streams.
func commandProcess(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	b, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), commandChildVar+"="+string(b))
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

// TestHelpAndMistypedFlags: -h and --help of every command exit 0 with its
// usage (README: "betaport COMMAND -h … exits 0"); a mistyped flag is one
// line naming it, exit 2; a flag where a group's subcommand goes says so.
func TestHelpAndMistypedFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string // in the usage printed
	}{
		{[]string{"submit", "-h"}, "--base-url"},
		{[]string{"submit", "--help"}, "--notes-file"},
		{[]string{"signing-key", "-h"}, "signing-key generate | rewrap"},
		{[]string{"signing-key", "--help"}, "signing-key generate | rewrap"},
		{[]string{"signing-key", "generate", "-h"}, "Usage: betaport signing-key generate"},
		{[]string{"signing-key", "rewrap", "-h"}, "-data directory"},
		{[]string{"team", "-h"}, "team create"},
		{[]string{"key", "list", "--help"}, "-extension"},
	} {
		code, out, errOut := commandProcess(t, c.args...)
		if code != 0 || !strings.Contains(out+errOut, c.want) {
			t.Errorf("betaport %s: exit %d, want 0 with %q in its usage:\n%s%s", strings.Join(c.args, " "), code, c.want, out, errOut)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"submit", "--bogus"}, `betaport submit: flag provided but not defined: -bogus ("betaport submit -h" lists its flags)`},
		{[]string{"team", "--bogus-flag"}, `betaport team: "--bogus-flag" is a flag; name the team command first`},
		{[]string{"signing-key", "--rewrap"}, `betaport signing-key: "--rewrap" is a flag`},
		{[]string{"team", "create", "--nmae", "Acme"}, `flag provided but not defined: -nmae`},
	} {
		code, out, errOut := commandProcess(t, c.args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != 2 || out != "" || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("betaport %s: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and one line: %s", strings.Join(c.args, " "), code, out, errOut, c.want)
		}
	}
}

// TestKeyringWithoutIDIsNotEchoed: a signing keyring pasted without its
// "id:" is refused, through the flag or the environment, and the refusal
// repeats none of the key.
func TestKeyringWithoutIDIsNotEchoed(t *testing.T) {
	t.Parallel()
	_, entry, _ := commandProcess(t, "signing-key", "generate")
	_, key, ok := strings.Cut(strings.TrimSpace(entry), ":")
	if !ok {
		t.Fatalf("signing-key generate printed %q", entry)
	}
	code, _, errOut := commandProcess(t, "key", "list", "--data", t.TempDir(), "--extension", "1", "--signing-keyring", key)
	if code != 2 || !strings.Contains(errOut, "id:base64") {
		t.Fatalf("exit %d: %s; want 2 and what a keyring entry looks like", code, errOut)
	}
	for i := 0; i+6 <= len(key); i++ {
		if strings.Contains(errOut, key[i:i+6]) {
			t.Fatalf("the refusal repeats part of the key (%q): %s", key[i:i+6], errOut)
		}
	}
}

// TestMistypedDataFolderMakesNothing: a command that works on what is
// stored (key list, key create, key revoke, bundle rollback, backup,
// signing-key rewrap) given a data folder that does not exist refuses it,
// and makes nothing there.
func TestMistypedDataFolderMakesNothing(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	typo := filepath.Join(base, "dta")
	for _, args := range [][]string{
		{"key", "list", "--data", typo, "--extension", "1"},
		{"key", "create", "--data", typo, "--extension", "1", "--label", "CI", "--out", filepath.Join(base, "key.json")},
		{"key", "revoke", "--data", typo, "--extension", "1", "--key", "1"},
		{"bundle", "rollback", "--data", typo, "--extension", "1", "--to", "1"},
		{"backup", "--data", typo, "--out", filepath.Join(base, "backup.tar")},
		{"signing-key", "rewrap", "--data", typo},
		{"key", "list", "--db", "sqlite://" + filepath.Join(base, "nope.db"), "--data", base, "--extension", "1"},
	} {
		code, _, errOut := commandProcess(t, args...)
		if code == 0 || !strings.Contains(errOut, "does not exist") || !strings.Contains(errOut, "nothing was made") {
			t.Errorf("betaport %s: exit %d, %s", strings.Join(args, " "), code, errOut)
		}
		if entries, _ := os.ReadDir(base); len(entries) != 0 {
			t.Fatalf("betaport %s made %v", strings.Join(args, " "), entries)
		}
	}
}

// TestSeedIntoAFolderNotMadeYet: seed with its database elsewhere and a
// data folder that does not exist yet makes the folder, keeps the demo's
// sign-ins in it and prints them: the passwords made once are never lost.
func TestSeedIntoAFolderNotMadeYet(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	data := filepath.Join(base, "not", "made")
	_, ring, _ := commandProcess(t, "signing-key", "generate")
	if err := os.Mkdir(filepath.Join(base, "blobs"), 0o700); err != nil {
		t.Fatal(err)
	}
	// Everything elsewhere, as with PostgreSQL and S3: nothing else makes
	// the data folder. The small demo: the full one is loaded by
	// TestServePrintsTheDemoSignInsOnItsAddress, as make run does.
	code, out, errOut := commandProcess(t, "seed", "--small", "--db", "sqlite://"+filepath.Join(base, "betaport.db"),
		"--blob", "file://"+filepath.Join(base, "blobs"), "--secret", "a-secret-of-the-replicas-0123456789",
		"--signing-keyring", strings.TrimSpace(ring), "--data", data)
	if code != 0 || !strings.Contains(errOut, "admin@acme.test / ") {
		t.Fatalf("seed: exit %d: %s", code, errOut)
	}
	var loaded struct{ Testers int }
	if err := json.Unmarshal([]byte(out), &loaded); err != nil || loaded.Testers == 0 || loaded.Testers >= 100_000 {
		t.Errorf("seed --small printed %q (%v): want the small demo's figures", out, err)
	}
	kept, err := os.ReadFile(filepath.Join(data, "demo-sign-in.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(kept)), "\n") {
		if !strings.Contains(errOut, line) {
			t.Errorf("the kept sign-ins say %q, which seed did not print", line)
		}
	}
}

// TestServePrintsTheDemoSignInsOnItsAddress: after seed (told nothing of
// the address), serve on another address prints the demo's sign-ins and
// the tester's link on the address it serves, which answers them.
func TestServePrintsTheDemoSignInsOnItsAddress(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	if code, _, errOut := commandProcess(t, "seed", "--data", data); code != 0 {
		t.Fatalf("seed: exit %d: %s", code, errOut)
	}
	b, _ := json.Marshal([]string{"serve", "--no-ui", "--data", data})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// Any free port: the address is the service's to say.
	cmd.Env = append(os.Environ(), commandChildVar+"="+string(b), "BETAPORT_ADDR=127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 1024) // what serve logs after is not read
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var printed []string
	deadline := time.After(60 * time.Second)
	for len(printed) == 0 || !strings.Contains(printed[len(printed)-1], "a tester of") {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("serve ended, having printed:\n%s", strings.Join(printed, "\n"))
			}
			printed = append(printed, line)
		case <-deadline:
			t.Fatalf("serve printed no tester's link in 60 s, only:\n%s", strings.Join(printed, "\n"))
		}
	}
	text := strings.Join(printed, "\n")
	running := regexp.MustCompile(`Betaport is running at (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(text)
	if running == nil {
		t.Fatalf("serve printed:\n%s", text)
	}
	want := running[1]
	if !strings.Contains(text, "Open "+want+" and sign in:") || strings.Contains(text, ":8080") {
		t.Fatalf("serve at %s printed:\n%s", want, text)
	}
	link := printed[len(printed)-1][strings.Index(printed[len(printed)-1], want):]
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/builds" {
		t.Fatalf("the tester's printed link %s answers %d → %s, want the builds page", link, resp.StatusCode, resp.Header.Get("Location"))
	}
}
