package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// completion prints a completion script for a shell: the commands, their
// subcommands and each one's flags, read from the commands themselves (their
// -h), so the script cannot drift from them.
func completion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) != 1 || (args[0] != "bash" && args[0] != "zsh" && args[0] != "fish") {
		return usageError{`name the shell: betaport completion bash|zsh|fish (bash: source <(betaport completion bash); fish: betaport completion fish > ~/.config/fish/completions/betaport.fish)`}
	}
	words := completionWords(ctx)
	switch args[0] {
	case "fish":
		_, err := io.WriteString(stdout, fishCompletion(words))
		return err
	case "zsh":
		// zsh runs bash's completion functions through bashcompinit.
		_, err := io.WriteString(stdout, "autoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n"+bashCompletion(words))
		return err
	}
	_, err := io.WriteString(stdout, bashCompletion(words))
	return err
}

// commandWords are what a shell completes: the top-level words, each
// group's subcommands, and each command's flags (by its words).
type commandWords struct {
	top   []string
	subs  map[string][]string
	flags map[string][]string
}

var flagLine = regexp.MustCompile(`(?m)^\s+--?([a-z][a-z0-9-]*)`)

func completionWords(ctx context.Context) commandWords {
	w := commandWords{subs: map[string][]string{}, flags: map[string][]string{}}
	names := []string{"help"}
	for name := range commands {
		names = append(names, name)
	}
	for name := range remoteCommands {
		if _, both := commands[name]; !both {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		group, sub, grouped := strings.Cut(name, " ")
		if !slices.Contains(w.top, group) {
			w.top = append(w.top, group)
		}
		if grouped {
			w.subs[group] = append(w.subs[group], sub)
		}
		if name == "help" || name == "completion" {
			continue
		}
		// Each command's -h lists its flags (and, run remotely, the remote
		// ones: --server is given).
		var help bytes.Buffer
		Run(ctx, append(strings.Fields(name), "-h"), &help, &help)
		if _, remote := remoteCommands[name]; remote {
			if _, both := commands[name]; both {
				Run(ctx, append(strings.Fields(name), "--server", "http://127.0.0.1", "-h"), &help, &help)
			}
		}
		var flags []string
		for _, m := range flagLine.FindAllStringSubmatch(help.String(), -1) {
			if !slices.Contains(flags, m[1]) {
				flags = append(flags, m[1])
			}
		}
		w.flags[name] = flags
	}
	w.flags["completion"] = nil
	w.subs["completion"] = nil
	return w
}

func bashCompletion(w commandWords) string {
	var b strings.Builder
	b.WriteString("# betaport completion for bash: source <(betaport completion bash)\n_betaport() {\n")
	b.WriteString("  local cur=\"${COMP_WORDS[COMP_CWORD]}\"\n")
	b.WriteString("  local words=\"${COMP_WORDS[*]:1:COMP_CWORD-1}\"\n")
	b.WriteString("  case \"$words\" in\n")
	fmt.Fprintf(&b, "    \"\") COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", strings.Join(w.top, " "))
	b.WriteString("    \"completion\") COMPREPLY=($(compgen -W \"bash zsh fish\" -- \"$cur\")) ;;\n")
	for _, group := range w.top {
		if subs := w.subs[group]; len(subs) > 0 {
			fmt.Fprintf(&b, "    %q) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", group, strings.Join(subs, " "))
		}
	}
	var names []string
	for name := range w.flags {
		names = append(names, name)
	}
	// Longer names first: "bundle list"* before "bundle"*.
	slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) })
	for _, name := range names {
		flags := w.flags[name]
		if len(flags) == 0 {
			continue
		}
		fmt.Fprintf(&b, "    %q|%q*) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", name, name+" ", "--"+strings.Join(flags, " --"))
	}
	b.WriteString("  esac\n}\ncomplete -o default -F _betaport betaport\n")
	return b.String()
}

func fishCompletion(w commandWords) string {
	var b strings.Builder
	b.WriteString("# betaport completion for fish: betaport completion fish > ~/.config/fish/completions/betaport.fish\n")
	fmt.Fprintf(&b, "complete -c betaport -f -n '__fish_use_subcommand' -a '%s'\n", strings.Join(w.top, " "))
	b.WriteString("complete -c betaport -f -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n")
	for _, group := range w.top {
		if subs := w.subs[group]; len(subs) > 0 {
			fmt.Fprintf(&b, "complete -c betaport -f -n '__fish_seen_subcommand_from %s; and not __fish_seen_subcommand_from %s' -a '%s'\n",
				group, strings.Join(subs, " "), strings.Join(subs, " "))
		}
	}
	var names []string
	for name := range w.flags {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		cond := make([]string, 0, 2)
		for _, word := range strings.Fields(name) {
			cond = append(cond, "__fish_seen_subcommand_from "+word)
		}
		for _, f := range w.flags[name] {
			fmt.Fprintf(&b, "complete -c betaport -n '%s' -l %s\n", strings.Join(cond, "; and "), f)
		}
	}
	return b.String()
}
