package claudecode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
)

// session is what the hook learns of the Claude Code session beside the
// payload: where it started, and what its command line adds to the
// definitions it resolves.
type session struct {
	// project is the folder the session started in (CLAUDE_PROJECT_DIR):
	// Claude Code finds agents and skills from there, whatever the shell's
	// current directory (the payload's cwd) has become since.
	project string
	// agents are the definitions given with --agents, as JSON text or a
	// file, in the order given; nil when none.
	agents []agentsFlag
	// addDirs are the folders given with --add-dir, whose .claude/agents
	// the session also loads.
	addDirs []string
	// sources are the --setting-sources given (user, project, local), nil
	// when the flag is absent (every source).
	sources []string
	// read says whether the command line was read; with --agents-dir it
	// need not be.
	read bool
	// safe says the session runs in safe mode (--safe-mode,
	// --restricted), where Claude Code loads no custom agents.
	safe bool
	// bare says the session runs bare (--bare, CLAUDE_CODE_SIMPLE): it
	// loads --agents, and no definition of the project's or the user's.
	bare bool
	// program, when set, says how the session takes agent definitions
	// from the program that drives it (the Agent SDK's initialize
	// request), which the hook cannot read.
	program string
	// programDefs are those definitions, when the program itself hands
	// them to the hook (ProgramField): then the hook reads them at their
	// place in the client's precedence, and program is "".
	programDefs map[string]any
	// started is when the session's process started, zero when not known.
	started time.Time
}

// agentsFlag is one --agents value: JSON, or the name of a file of JSON.
type agentsFlag struct {
	value string
}

// ProgramField is the payload's field through which a program that drives
// Claude Code (an Agent SDK program, from its own PreToolUse callback)
// hands the hook what it gave the client: {"agents": the program's agents
// option as given, "project": the session's folder (its cwd option),
// absolute, "setting_sources" and "additional_directories": those
// options, when it gives them}. Only the program sets it: Claude Code never writes such a
// field into a hook's payload, and a model cannot make it. A payload
// that has it is judged as the program's session: its definitions stand
// at their place in the client's precedence (below the managed ones,
// above the project's), and no command line is read.
const ProgramField = "spawngate_program"

// programSession reads ProgramField: the session a program describes.
func programSession(raw any, cwd string) (session, error) {
	var s session
	obj, ok := raw.(map[string]any)
	if !ok {
		return s, host.Bad("/"+ProgramField, "%s is not an object: give {\"agents\": {...}, \"project\": \"/abs/dir\"}", ProgramField)
	}
	for k := range obj {
		switch k {
		case "agents", "project", "setting_sources", "additional_directories":
		default:
			return s, host.Bad("/"+ProgramField+"/"+k, "%s has no field %q: it holds agents, project, setting_sources and additional_directories", ProgramField, k)
		}
	}
	strs := func(key string) ([]string, error) {
		v, given := obj[key]
		if !given {
			return nil, nil
		}
		list, ok := v.([]any)
		if !ok {
			return nil, host.Bad("/"+ProgramField+"/"+key, "%s is not a list of strings", key)
		}
		out := []string{}
		for _, e := range list {
			str, ok := e.(string)
			if !ok {
				return nil, host.Bad("/"+ProgramField+"/"+key, "%s is not a list of strings", key)
			}
			out = append(out, str)
		}
		return out, nil
	}
	var err error
	if s.sources, err = strs("setting_sources"); err != nil {
		return s, err
	}
	if s.addDirs, err = strs("additional_directories"); err != nil {
		return s, err
	}
	defs, ok := obj["agents"].(map[string]any)
	if _, given := obj["agents"]; given && !ok {
		return s, host.Bad("/"+ProgramField+"/agents", "the program's agents are not an object of definitions by name")
	}
	if defs == nil {
		defs = map[string]any{}
	}
	s.project = cwd
	if v, given := obj["project"]; given {
		dir, ok := v.(string)
		if !ok || !filepath.IsAbs(dir) {
			return s, host.Bad("/"+ProgramField+"/project", "the program's project is not an absolute path: give the session's folder, the cwd option")
		}
		s.project = filepath.Clean(dir)
	}
	if s.project == "" {
		return s, host.Bad("/cwd", "the payload names no cwd, and the program no project: the folder the session works in is not known")
	}
	s.programDefs, s.read = defs, true
	return s, nil
}

// readSession finds the session's project folder and reads the command
// line Claude Code was started with (the process CLAUDE_PID names, which
// Claude Code sets in every hook's environment). Without either the hook
// cannot know which definitions the session runs, and says so; with
// dirs given (--agents-dir, for trying payloads by hand) they are not
// needed.
func readSession(env host.Env, cwd string, dirsGiven bool) (session, error) {
	var s session
	getenv := env.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	s.project = getenv("CLAUDE_PROJECT_DIR")
	pid := getenv("CLAUDE_PID")
	if dirsGiven {
		if s.project == "" {
			s.project = cwd
		}
		if pid == "" {
			return s, nil
		}
	}
	switch {
	case s.project == "":
		return s, &document.Error{Source: "hook environment", Msg: "CLAUDE_PROJECT_DIR is not set, so the folder the session started in (where Claude Code finds its agents) is not known: run spawngate hook claude-code as Claude Code's command hook, which sets it"}
	case !filepath.IsAbs(s.project):
		return s, &document.Error{Source: "hook environment", Msg: fmt.Sprintf("CLAUDE_PROJECT_DIR %q is not an absolute path", s.project)}
	case pid == "":
		return s, &document.Error{Source: "hook environment", Msg: "CLAUDE_PID is not set, so the command line Claude Code was started with (where --agents and --add-dir add definitions) cannot be read: run spawngate hook claude-code as Claude Code's command hook, which sets it"}
	}
	n, err := strconv.Atoi(pid)
	if err != nil || n <= 0 {
		return s, &document.Error{Source: "hook environment", Msg: fmt.Sprintf("CLAUDE_PID %q is not a process id", pid)}
	}
	read := env.CommandLine
	if read == nil {
		read = commandLine
		// CLAUDE_PID must be the session that asks: Claude Code itself
		// (an ancestor of a command hook), or, for a hook that runs
		// elsewhere (spawngate serve), a process that started in
		// CLAUDE_PROJECT_DIR. A stale or borrowed pid (an outer session's,
		// a wrapper's) would have another command line judged, without
		// the --agents of the session that runs the child.
		if err := sessionProcess(n, s.project); err != nil {
			return s, &document.Error{Source: "hook environment", Msg: fmt.Sprintf("CLAUDE_PID %d %s, so its command line is not the session's: run the hook as Claude Code's command hook, or give an HTTP hook the pid of the client itself", n, err.Error())}
		}
		s.started = processStart(n)
	}
	args, err := read(n)
	if err != nil {
		return s, &document.Error{Source: "hook environment", Msg: fmt.Sprintf("the command line of Claude Code (CLAUDE_PID %d) cannot be read: %s; without it the definitions given with --agents cannot be seen", n, document.OneLine(err.Error()))}
	}
	s.read = true
	return s, s.parse(args)
}

// commandLine reads a process's arguments from /proc. Elsewhere the hook
// cannot see them, and says so.
func commandLine(pid int) ([]string, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("reading another process's arguments is supported on Linux only (this is %s)", runtime.GOOS)
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return nil, errors.New(document.Reason(err))
	}
	if len(b) == 0 {
		return nil, errors.New("it is empty (the process has ended?)")
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), nil
}

// parse reads the flags of Claude Code's command line that change which
// definitions a session resolves, each as the part of Claude Code that
// decides it reads it (cmdline.go): --agents, --add-dir,
// --setting-sources, --safe-mode and --restricted, and those that bring
// definitions the hook cannot read. A command line it cannot read with
// certainty is an error.
func (s *session) parse(args []string) error {
	if len(args) > 0 {
		args = args[1:] // the program
	}
	fail := func(msg string) error {
		return &document.Error{Source: "Claude Code's command line", Msg: msg}
	}
	p := parseCommander(args)
	if why := cannotRead(p, args); why != "" {
		return fail("it cannot be read as Claude Code reads it: " + why + "; so which definitions the session runs cannot be known")
	}
	if v, ok := p.last("--agents"); ok {
		s.agents = []agentsFlag{{v}}
	}
	s.addDirs = p.all("--add-dir")
	s.safe = plainHas(args, "--safe-mode") || p.has("--restricted")
	// --bare is found by the plain search or the parser, either one.
	s.bare = plainHas(args, "--bare") || p.has("--bare")
	if v, ok := eagerValue(args, "--setting-sources"); ok {
		s.sources = []string{}
		for _, src := range strings.Split(v, ",") {
			if src = strings.TrimSpace(src); src != "" {
				s.sources = append(s.sources, src)
			}
		}
	}
	if p.has("--project-config-root") {
		// Claude Code then reads the project's settings and agents from
		// another folder than the one the session started in, which the
		// hook has not been taught to follow.
		return fail("Claude Code was started with --project-config-root, which moves where it finds the project's agents: the hook cannot know which definitions it runs; start it without the flag")
	}
	if v, _ := p.last("--input-format"); v == "stream-json" {
		s.program = "--input-format stream-json, as the Agent SDK drives Claude Code"
	}
	for _, name := range []string{"--sdk-url", "--await-initialize", "--initialize-fields"} {
		if p.has(name) {
			s.program = name + ", as the Agent SDK drives Claude Code"
		}
	}
	return nil
}

// loads tells whether the session loads definitions from a source of
// settings (user, project).
func (s *session) loads(source string) bool {
	if s.sources == nil {
		return true
	}
	for _, src := range s.sources {
		if src == source {
			return true
		}
	}
	return false
}

// sessionProcess checks that pid can be the Claude Code process of a
// session started in project: it is this process or one of its
// ancestors, or its working directory is project. Elsewhere than on
// Linux the check is commandLine's refusal.
func sessionProcess(pid int, project string) error {
	if runtime.GOOS != "linux" {
		return nil
	}
	for p, i := os.Getpid(), 0; p > 1 && i < 64; i++ {
		if p == pid {
			return nil
		}
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "stat"))
		if err != nil {
			break
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		rest := string(b)
		if j := strings.LastIndexByte(rest, ')'); j >= 0 {
			rest = rest[j+1:]
		}
		f := strings.Fields(rest)
		if len(f) < 2 {
			break
		}
		if p, err = strconv.Atoi(f[1]); err != nil {
			break
		}
	}
	cwd, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "cwd"))
	switch {
	case err != nil:
		return fmt.Errorf("is not an ancestor of this hook, and its working directory cannot be read (%s)", document.Reason(err))
	case cwd != project:
		return fmt.Errorf("is not an ancestor of this hook, and it works in %s, not in CLAUDE_PROJECT_DIR", cwd)
	}
	return nil
}

// processStart is when a process started, zero when it cannot be read:
// /proc/PID/stat's starttime (clock ticks after boot; Linux's tick is
// 1/100 s on every architecture Go runs it on) after the boot, taken as
// now less /proc/uptime, which is to the hundredth of a second where
// /proc/stat's btime is to the second.
func processStart(pid int) time.Time {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return time.Time{}
	}
	rest := string(b)
	if j := strings.LastIndexByte(rest, ')'); j >= 0 {
		rest = rest[j+1:]
	}
	f := strings.Fields(rest)
	// After "(comm)" the fields run from stat's third, state; starttime
	// is the 22nd.
	if len(f) < 20 {
		return time.Time{}
	}
	ticks, err := strconv.ParseInt(f[19], 10, 64)
	if err != nil {
		return time.Time{}
	}
	now := time.Now()
	up, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return time.Time{}
	}
	fields := strings.Fields(string(up))
	if len(fields) == 0 {
		return time.Time{}
	}
	secs, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return time.Time{}
	}
	boot := now.Add(-time.Duration(secs * float64(time.Second)))
	return boot.Add(time.Duration(ticks) * 10 * time.Millisecond)
}

// staleSlack is how much later than the session's start a definition may
// have changed and still be taken as the one the session loaded: the
// start is known to a few hundredths of a second, and a file written just
// before the session started must not count.
const staleSlack = 200 * time.Millisecond

// changedSince says what of the places a spawn's definitions come from
// changed after the session started ("" when nothing did): Claude Code
// loads its agents' definitions once and keeps them, so a definition
// rewritten, or a folder where one was added, removed or renamed, since
// then is not the one that runs.
func changedSince(started time.Time, paths ...string) string {
	if started.IsZero() {
		return ""
	}
	for _, p := range paths {
		for _, stat := range []func(string) (os.FileInfo, error){os.Lstat, os.Stat} {
			if info, err := stat(p); err == nil && changed(info).After(started.Add(staleSlack)) {
				return fmt.Sprintf("%s changed at %s, after the session started (%s)", p, changed(info).UTC().Format(time.RFC3339), started.UTC().Format(time.RFC3339))
			}
		}
	}
	return ""
}
