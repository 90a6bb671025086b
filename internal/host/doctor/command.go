package doctor

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
)

// Command is a command hook that names spawngate, as a host's doctor
// found it, with the host's own words for what happens around it.
type Command struct {
	// Host is the host's name in commands (claude-code); Title is how
	// messages name it (Claude Code).
	Host, Title string
	// Words are the words the command runs, split as its shell would.
	Words []string
	// Project is the folder sessions start in, which a session can write.
	Project string
	// Owners are who may own the binary and what its gate is read from
	// (Options.OwnersFor).
	Owners host.Owners
	// LookedFor says where the host looks for a program given by name;
	// PolicyFrom the folder a relative --policy is read from; Policy an
	// example of where an operator policy belongs.
	LookedFor, PolicyFrom, Policy string
	// Directly is the fix for a command that does not run spawngate
	// directly.
	Directly string
	// Vars are the variables the host sets for a command it runs through
	// a shell, which CheckEntry expands (HOME, the project folder); Home
	// is what ~ is.
	Vars map[string]string
	Home string
	// TimeoutKey is the handler's key for how long the host waits
	// (timeout, timeoutSec); TimeoutUnit is what one unit of its value
	// is (time.Millisecond for Gemini CLI), a second when 0.
	TimeoutKey  string
	TimeoutUnit time.Duration
	// ReadHook is Options.ReadHook.
	ReadHook func(ctx context.Context, host string, args []string, dir string) (HookLine, error)
	// Machine is where the paths the command names lie (Options.Machine;
	// CheckEntry fills it in); the zero Machine is the real root.
	Machine Machine
}

// CheckCommand checks that a hook command runs spawngate hook HOST
// directly, with nothing set in its environment, by an absolute path to a
// statically linked executable the session cannot change, and that its
// own flags and policy load, from files the session cannot change either:
// add is called once a finding, with the finding's ID, problem and fix.
// It returns what the hook's flags set, and whether they were read (the
// host then checks its timeout).
func CheckCommand(ctx context.Context, c Command, add func(id, problem, fix string)) (HookLine, bool) {
	words := c.Words
	var assigned []string
	for len(words) > 0 && (assignment.MatchString(words[0]) || words[0] == "exec") {
		if words[0] != "exec" {
			name, _, _ := strings.Cut(words[0], "=")
			assigned = append(assigned, name)
		}
		words = words[1:]
	}
	if len(words) == 0 || !isSpawngate(words[0]) {
		runs := ""
		if len(words) > 0 {
			runs = fmt.Sprintf(" (it runs %q)", words[0])
		}
		add("hook.command", "the command names spawngate but does not run it directly"+runs+": doctor cannot tell whether it judges every spawn, or whether a refusal reaches "+c.Title, c.Directly)
		return HookLine{}, false
	}
	if len(assigned) > 0 {
		add("hook.command", fmt.Sprintf("the command sets %s for spawngate: a variable set there can change what runs (LD_PRELOAD loads a library into it, and a value may come from the session's environment or the project), and doctor cannot tell which are harmless", strings.Join(assigned, ", ")),
			"run spawngate with nothing before it: "+strings.Join(words, " "))
	}
	// program is named as the host sees it, onDisk is where it lies here.
	program := words[0]
	onDisk := c.Machine.OnDisk(program)
	const abs = "give spawngate's absolute path, on a path the user cannot change, such as /usr/local/bin/spawngate"
	info, err := os.Stat(onDisk)
	switch {
	case !filepath.IsAbs(program):
		add("hook.command", fmt.Sprintf("the command runs %q, which is looked for when the hook runs (%s): another spawngate earlier on PATH runs instead, and none at all lets every spawn through (exit 127)", program, c.LookedFor), abs)
	case errors.Is(err, fs.ErrNotExist):
		add("hook.command", fmt.Sprintf("%s does not exist: %s lets every spawn through when the hook cannot run (exit 127)", program, c.Title), "install spawngate there, or correct the path")
	case err != nil:
		add("hook.command", fmt.Sprintf("%s cannot be looked at (%s): if %s cannot run it either, it lets every spawn through", program, host.Cause(err), c.Title), "correct the path, or its folder's permissions")
	case info.IsDir():
		add("hook.command", fmt.Sprintf("%s is a folder: %s lets every spawn through when the hook cannot run", program, c.Title), "name the spawngate executable")
	case info.Mode().Perm()&0o111 == 0:
		add("hook.command", fmt.Sprintf("%s is not executable: %s lets every spawn through when the hook cannot run (exit 126)", program, c.Title), "make it executable: chmod 755 "+program)
	default:
		if interp := dynamicLoader(onDisk); interp != "" {
			add("hook.binary", fmt.Sprintf("%s is dynamically linked (its loader is %s): LD_PRELOAD in the environment the hook inherits from the session loads any library into it, which can answer for it", program, interp),
				"install a statically linked build: CGO_ENABLED=0 go build -o spawngate ./cmd/spawngate")
		}
	}
	if err == nil && filepath.IsAbs(program) {
		if err := c.Owners.Check(onDisk); err != nil {
			add("hook.writable", fmt.Sprintf("%s: the model can replace it with a program that lets every spawn through", c.Machine.ShownIn(document.OneLine(err.Error()))),
				"install spawngate where only root can write, owned by root and writable by root alone, such as /usr/local/bin/spawngate")
		}
	}
	if len(words) < 3 || words[1] != "hook" || words[2] != c.Host {
		sub := words[1:min(2, len(words))]
		if len(words) > 2 && words[1] == "hook" {
			sub = words[1:3]
		}
		add("hook.command", fmt.Sprintf("the command runs %q, not spawngate hook %s: it does not judge %s's spawns in %s's protocol", strings.Join(append([]string{"spawngate"}, sub...), " "), c.Host, c.Title, c.Title),
			"run spawngate hook "+c.Host+" --policy FILE")
		return HookLine{}, false
	}
	if c.ReadHook == nil {
		return HookLine{}, false
	}
	line, err := c.ReadHook(ctx, c.Host, words[3:], c.Project)
	if err != nil {
		add("hook.policy", fmt.Sprintf("the hook cannot start (%s): it exits 2 on every call, so every spawn would be refused", c.Machine.ShownIn(document.OneLine(err.Error()))),
			"correct the command line or the policy; the command run by hand shows the same error")
	}
	for _, f := range line.ByHand {
		add("hook.command", fmt.Sprintf("the command gives %s, which is for trying payloads by hand: the hook then judges what that flag names, not what %s runs, and holds nothing a session can change to the rules", f, c.Title),
			"remove "+f)
	}
	if p := line.Policy; p != "" && !filepath.IsAbs(p) {
		add("hook.policy", fmt.Sprintf("--policy %q is a relative path, read from %s: which policy judges depends on where the session runs, and a session can write a policy of its own there", p, c.PolicyFrom),
			"give the policy's absolute path, outside the project, where the user cannot edit it (such as "+c.Policy+")")
	}
	for _, f := range line.Files {
		if err := c.Owners.Check(c.Machine.OnDisk(f)); err != nil {
			add("hook.writable", fmt.Sprintf("%s: the model can widen what judges its spawns, and then spawn what it widened", c.Machine.ShownIn(document.OneLine(err.Error()))),
				"keep it where only root can write, owned by root and writable by root alone, such as "+c.Policy)
		}
	}
	return line, true
}

// dynamicLoader is the program interpreter an ELF executable names (it is
// dynamically linked), "" for a static one or a file that is not ELF.
func dynamicLoader(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, min(p.Filesz, 4096))
		n, _ := p.ReadAt(b, 0)
		if s := strings.TrimRight(string(b[:n]), "\x00"); s != "" {
			return s
		}
		return "a program interpreter"
	}
	return ""
}

func isSpawngate(program string) bool {
	base := filepath.Base(program)
	return base == "spawngate" || base == "spawngate.exe"
}

// assignment is a shell word that sets a variable for the command.
var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
