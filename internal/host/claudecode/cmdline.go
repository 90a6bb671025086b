package claudecode

import (
	"fmt"
	"slices"
	"strings"
)

// Claude Code reads its command line three ways, and the hook reads it as
// each does, for the part each decides (all read off the 2.1.332 client's
// own code, and tried on it):
//
//   - Its option parser (commander's API, its own code) decides --agents,
//     --add-dir, --plugin-dir, --input-format and --project-config-root.
//     An option that takes a value takes the next word whatever it is,
//     "--" and "-x" included; one whose value is optional takes it only
//     when it is not an option; a list takes words up to the next option.
//     "--opt=value", "-ovalue" and "-abc" (flags chained) are read; "--"
//     ends the options; a word after the options is the prompt. An option
//     it does not know ends the run with an error, so a session the hook
//     meets with one is a command line the hook cannot read.
//   - An eager scan, before the parser, decides --settings,
//     --managed-settings and --setting-sources (and --restricted's part in
//     the sources): it knows which options take values, but reads whole
//     words only, so "-pn --settings J" is read as --settings by it and as
//     a name by the parser. Where the two disagree the hook refuses.
//   - A plain search of the words before the first "--", values
//     included, decides --safe-mode and --bare.

// arity is how an option of Claude Code's takes its value.
type arity int

const (
	noValue  arity = iota // no value
	required              // the next word, whatever it is
	optional              // the next word when it is not an option
	variadic              // words up to the next option, at least one
)

// claudeOptions are the options of Claude Code 2.1.332's main command,
// long and short names alike, read off its parser; -h/--help and
// -v/--version end the process before any session starts, and are left
// out.
var claudeOptions = map[string]arity{
	"--debug":                              optional,
	"-d":                                   optional,
	"--debug-to-stderr":                    noValue,
	"-d2e":                                 noValue,
	"--debug-file":                         required,
	"--verbose":                            noValue,
	"--print":                              noValue,
	"-p":                                   noValue,
	"--bare":                               noValue,
	"--safe-mode":                          noValue,
	"--init":                               noValue,
	"--init-only":                          noValue,
	"--maintenance":                        noValue,
	"--output-format":                      required,
	"--json-schema":                        required,
	"--include-hook-events":                noValue,
	"--include-partial-messages":           noValue,
	"--forward-subagent-text":              noValue,
	"--session-mirror":                     noValue,
	"--await-claim":                        noValue,
	"--input-format":                       required,
	"--await-initialize":                   noValue,
	"--dangerously-skip-permissions":       noValue,
	"--allow-dangerously-skip-permissions": noValue,
	"--thinking":                           required,
	"--thinking-display":                   required,
	"--max-thinking-tokens":                required,
	"--max-turns":                          required,
	"--max-budget-usd":                     required,
	"--task-budget":                        required,
	"--replay-user-messages":               noValue,
	"--prompt-suggestions":                 optional,
	"--enable-auth-status":                 noValue,
	"--allowed-tools":                      variadic,
	"--allowedTools":                       variadic,
	"--tools":                              variadic,
	"--restricted":                         noValue,
	"--disallowed-tools":                   variadic,
	"--disallowedTools":                    variadic,
	"--mcp-config":                         variadic,
	"--permission-prompt-tool":             required,
	"--permission-prompts":                 required,
	"--system-prompt":                      required,
	"--system-prompt-file":                 required,
	"--append-system-prompt":               required,
	"--append-system-prompt-file":          required,
	"--system-prompt-snapshot":             required,
	"--append-subagent-system-prompt":      required,
	"--append-subagent-system-prompt-file": required,
	"--plan-mode-instructions":             required,
	"--exclude-dynamic-system-prompt-sections": noValue,
	"--permission-mode":                        required,
	"--inherit-permission-mode":                required,
	"--continue":                               noValue,
	"-c":                                       noValue,
	"--resume":                                 optional,
	"-r":                                       optional,
	"--fork-session":                           noValue,
	"--watch-artifact":                         required,
	"--watch-artifact-no-autoreact":            required,
	"--prefill":                                required,
	"--deep-link-origin":                       noValue,
	"--deep-link-repo":                         required,
	"--deep-link-last-fetch":                   required,
	"--prefill-b64":                            required,
	"--deep-link-cwd-b64":                      required,
	"--from-pr":                                optional,
	"--no-session-persistence":                 noValue,
	"--resume-session-at":                      required,
	"--resume-drops-turn":                      required,
	"--reply-on-resume":                        noValue,
	"--rewind-files":                           required,
	"--model":                                  required,
	"--include-unsupported-models":             noValue,
	"--effort":                                 required,
	"--fast-mode":                              required,
	"--agent":                                  required,
	"--betas":                                  variadic,
	"--fallback-model":                         required,
	"--workload":                               required,
	"--settings":                               required,
	"--client-data-url":                        required,
	"--allow-other-models":                     noValue,
	"--managed-settings":                       required,
	"--managed-settings-in-initialize":         noValue,
	"--host-auth-is-org-sign-in":               noValue,
	"--add-dir":                                variadic,
	"--project-config-root":                    required,
	"--ide":                                    noValue,
	"--desktop":                                noValue,
	"--strict-mcp-config":                      noValue,
	"--session-id":                             required,
	"--name":                                   required,
	"-n":                                       required,
	"--agents":                                 required,
	"--setting-sources":                        required,
	"--ignore-persisted-trust":                 noValue,
	"--plugin-dir":                             required,
	"--plugin-dir-no-mcp":                      required,
	"--plugin-url":                             required,
	"--disable-slash-commands":                 noValue,
	"--chrome":                                 noValue,
	"--no-chrome":                              noValue,
	"--file":                                   variadic,
	"--worktree":                               optional,
	"-w":                                       optional,
	"--tmux":                                   noValue,
	"--advisor":                                required,
	"--autocompact":                            required,
	"--enable-auto-mode":                       noValue,
	"--proactivity":                            required,
	"--agents-view-if-allowed":                 noValue,
	"--background":                             noValue,
	"--bg":                                     noValue,
	"--messaging-socket-path":                  required,
	"--brief":                                  noValue,
	"--ax-screen-reader":                       noValue,
	"--channels":                               variadic,
	"--dangerously-load-development-channels": variadic,
	"--agent-id":                           required,
	"--agent-name":                         required,
	"--team-name":                          required,
	"--agent-color":                        required,
	"--plan-mode-required":                 noValue,
	"--parent-session-id":                  required,
	"--lead-verify-key":                    required,
	"--teammate-mode":                      required,
	"--agent-type":                         required,
	"--sdk-url":                            required,
	"--runner-declares":                    required,
	"--hold-repository-while-parked":       noValue,
	"--session-began-as-copy":              required,
	"--initialize-fields":                  required,
	"--teleport":                           optional,
	"--cloud":                              optional,
	"--forward-home-settings":              required,
	"--remote":                             optional,
	"--attach-serve":                       required,
	"--environment":                        required,
	"--pool":                               required,
	"--correlation-id":                     required,
	"--metadata":                           required,
	"--ref":                                required,
	"--on-branch":                          required,
	"--remote-control":                     optional,
	"--rc":                                 optional,
	"--remote-control-session-name-prefix": required,
}

// claudeSubcommands are the names that, as the first word after the
// options, make Claude Code run another command than a session (when no
// -p/--print word makes every word a prompt).
var claudeSubcommands = []string{"agents", "attach", "auth", "auto-mode", "doctor", "gateway", "import", "install", "logs",
	"mcp", "plugin", "plugins", "purge", "respawn", "rm", "setup-token", "stop", "kill", "ultrareview", "update", "upgrade",
	"remote-control", "rc", "apply-project-settings", "sandbox", "edit-hook", "edit-permission-rules", "project",
	"workspace-trust", "worktree-hook", "import-conversations"}

// parsedArgs is a Claude Code command line as its option parser reads
// it: the value words of each option given, in order, the words that are
// not options, and the options it does not know.
type parsedArgs struct {
	values   map[string][][]string // by the name given, each use's value words
	operands []string
	unknown  []string
	// missing is an option given last with no value, which ends the run.
	missing string
}

func isOption(w string) bool { return len(w) > 1 && w[0] == '-' }

// parseCommander reads args (the program left out) as Claude Code's
// option parser does (its parseOptions).
func parseCommander(args []string) parsedArgs {
	p := parsedArgs{values: map[string][][]string{}}
	dest := &p.operands
	set := func(name string, words []string) {
		p.values[name] = append(p.values[name], words)
	}
	i := 0
	var pending string
	for pending != "" || i < len(args) {
		v := pending
		if v == "" {
			v = args[i]
			i++
		}
		pending = ""
		if v == "--" {
			if dest == &p.unknown {
				p.unknown = append(p.unknown, v)
			}
			break
		}
		if isOption(v) {
			if a, ok := claudeOptions[v]; ok {
				start := i
				switch a {
				case required, variadic:
					if i == len(args) {
						p.missing = v
						return p
					}
					i++
				case optional:
					if i < len(args) && !isOption(args[i]) {
						i++
					}
				}
				for a == variadic && i < len(args) && !isOption(args[i]) {
					i++
				}
				set(v, args[start:i])
				continue
			}
			long := v[1] == '-'
			at := 2
			if long {
				at = strings.IndexByte(v, '=')
			}
			if at > 0 {
				if a, ok := claudeOptions[v[:at]]; ok {
					switch {
					case a != noValue && long:
						set(v[:at], []string{v[at+1:]})
						continue
					case a != noValue:
						set(v[:at], []string{v[at:]})
						continue
					case !long:
						set(v[:at], nil)
						pending = "-" + v[at:]
						continue
					}
				}
			}
			dest = &p.unknown
		}
		*dest = append(*dest, v)
	}
	*dest = append(*dest, args[i:]...)
	return p
}

// last is the value of the last use of an option (under any of its
// names), and whether it was given.
func (p parsedArgs) last(names ...string) (string, bool) {
	var val []string
	found := false
	for _, n := range names {
		if uses := p.values[n]; len(uses) > 0 {
			val, found = uses[len(uses)-1], true
		}
	}
	// Two names of one option used both: the later use wins, which the
	// order of names cannot tell; none of the options read here has two.
	if len(val) == 0 {
		return "", found
	}
	return val[0], found
}

// all is every value word of every use of an option, in order.
func (p parsedArgs) all(name string) []string {
	var out []string
	for _, u := range p.values[name] {
		out = append(out, u...)
	}
	return out
}

func (p parsedArgs) has(name string) bool { return len(p.values[name]) > 0 }

// eagerValue is the value of the last use of an option as Claude Code's
// eager scan reads it: whole words only ("--name value", "--name=value"),
// the values of the options it knows passed over, up to the first "--".
func eagerValue(args []string, name string) (string, bool) {
	value, found := "", false
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w == "--" {
			break
		}
		if v, ok := strings.CutPrefix(w, name+"="); ok {
			value, found = v, true
			continue
		}
		if w == name && i+1 < len(args) {
			value, found = args[i+1], true
			i++
			continue
		}
		switch claudeOptions[w] {
		case optional:
			if i+1 < len(args) && !isOption(args[i+1]) {
				i++
			}
		case required:
			i++
		case variadic:
			for i+1 < len(args) && !isOption(args[i+1]) {
				i++
			}
		}
	}
	return value, found
}

// eagerHas tells whether the eager scan sees a flag.
func eagerHas(args []string, name string) bool {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w == "--" {
			return false
		}
		if w == name {
			return true
		}
		switch claudeOptions[w] {
		case optional:
			if i+1 < len(args) && !isOption(args[i+1]) {
				i++
			}
		case required:
			i++
		case variadic:
			for i+1 < len(args) && !isOption(args[i+1]) {
				i++
			}
		}
	}
	return false
}

// plainHas tells whether a word is among those before the first "--",
// as Claude Code's plain search finds --safe-mode and --bare: a value
// counts too.
func plainHas(args []string, name string) bool {
	if i := slices.Index(args, "--"); i >= 0 {
		args = args[:i]
	}
	return slices.Contains(args, name)
}

// disagree says which option the parser and the eager scan read apart,
// "" when they agree on every option the scan decides.
func disagree(p parsedArgs, args []string) string {
	for _, name := range []string{"--settings", "--managed-settings", "--setting-sources"} {
		pv, pok := p.last(name)
		ev, eok := eagerValue(args, name)
		if pv != ev || pok != eok {
			return name
		}
	}
	if p.has("--restricted") != eagerHas(args, "--restricted") {
		return "--restricted"
	}
	return ""
}

// cannotRead says why a command line cannot be read with certainty, ""
// when it can: an option this version does not have, one with its value
// missing, a subcommand, or an option read apart by Claude Code's two
// readers.
func cannotRead(p parsedArgs, args []string) string {
	switch {
	case p.missing != "":
		return fmt.Sprintf("%s is given last with no value, which Claude Code refuses", p.missing)
	case len(p.unknown) > 0:
		return fmt.Sprintf("it holds %s, an option Claude Code 2.1.332 does not have (a newer client's, or a typo the client refuses)", p.unknown[0])
	case len(p.operands) > 0 && slices.Contains(claudeSubcommands, p.operands[0]) && !plainHas(args, "-p") && !plainHas(args, "--print"):
		return fmt.Sprintf("it runs the subcommand %s, not a session", p.operands[0])
	}
	if name := disagree(p, args); name != "" {
		return fmt.Sprintf("Claude Code reads %s one way before its option parser and another way in it (a short option chained with one that takes a value, such as -pn)", name)
	}
	return ""
}
