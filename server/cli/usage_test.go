package cli_test

import (
	"runtime"
	"strings"
	"testing"
)

// The command's manners: help is asked for and given (exit 0), a version,
// and a mistyped flag is one line that says which (exit 2).
func TestHelpVersionAndMistakes(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, errOut := run(t, args...)
		if code != 0 || !strings.HasPrefix(out, "betaport ") || !strings.Contains(out, runtime.Version()) || errOut != "" {
			t.Errorf("%v: exit %d, %q, %q; want the build and Go version", args, code, out, errOut)
		}
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		if code, out, _ := run(t, args...); code != 0 || !strings.Contains(out, "betaport key create") {
			t.Errorf("%v: exit %d, %q", args, code, out)
		}
	}
	for _, args := range [][]string{{"team", "--help"}, {"key", "-h"}, {"key", "help"}, {"extension", "--help"}, {"user", "-h"}} {
		code, out, _ := run(t, args...)
		if code != 0 || !strings.Contains(out, "betaport "+args[0]+" create") {
			t.Errorf("%v: exit %d, %q; want the group's subcommands", args, code, out)
		}
		if args[0] == "key" && (!strings.Contains(out, "key list") || !strings.Contains(out, "key revoke")) {
			t.Errorf("%v lists %q", args, out)
		}
	}
	if code, _, errOut := run(t, "key"); code != 2 || !strings.Contains(errOut, "key create") {
		t.Errorf("key alone: exit %d, %q", code, errOut)
	}

	// A create command's help shows its own flags first, then the storage
	// flags, once, as a group.
	for _, cmd := range [][]string{{"team", "create"}, {"extension", "create"}, {"user", "create"}, {"key", "create"}, {"key", "list"}, {"key", "revoke"}} {
		code, out, errOut := run(t, append(cmd, "-h")...)
		help := out + errOut
		ownFlag := map[string]string{"team": "-name", "extension": "-team", "user": "-email", "key": "-extension"}[cmd[0]]
		own, storage := strings.Index(help, ownFlag), strings.Index(help, "Storage flags")
		if code != 0 || own < 0 || storage < 0 || own > storage || strings.Count(help, "-signing-keyring") != 1 || strings.Index(help, "-db") < storage {
			t.Errorf("%v -h: exit %d:\n%s", cmd, code, help)
		}
	}

	// A flag that does not exist: exit 2, one line that names it.
	code, out, errOut := run(t, "key", "create", "--lable", "CI")
	if code != 2 || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "lable") {
		t.Errorf("a mistyped flag: exit %d, %q, %q; want exit 2 and one line naming it", code, out, errOut)
	}
	if code, _, errOut := run(t, "team", "create", "--seats", "many"); code != 2 || !strings.Contains(errOut, "seats") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("a bad value: exit %d, %q", code, errOut)
	}
	if code, _, errOut := run(t, "deploy"); code != 2 || !strings.Contains(errOut, `"deploy"`) {
		t.Errorf("an unknown command: exit %d, %q", code, errOut)
	}
}
