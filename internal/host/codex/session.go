package codex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/plan"
)

// session is what a Codex child really gets from the session that spawns
// it: Codex applies the agent's definition and then the session's own
// sandbox and approval policy over it, so the definition's sandbox_mode
// (and its [sandbox_workspace_write]) does not hold.
type session struct {
	// sandbox is read-only, workspace-write or danger-full-access.
	sandbox string
	// network says whether commands may reach the network.
	network bool
	// roots are the folders beyond the working directory that a
	// workspace-write sandbox lets commands write (/tmp and $TMPDIR
	// included when not excluded).
	roots []string
	// approval is the session's approval policy (never, on-request,
	// on-failure, untrusted).
	approval string
	// model is the session's model, which a definition without one runs.
	model string
	// source says where the session's settings were read, for messages.
	source string
	// servers are the MCP servers of the session's configuration, which
	// every child inherits.
	servers []string
}

// sandboxRank orders sandboxes from the narrowest.
var sandboxRank = map[string]int{"read-only": 0, "workspace-write": 1, "danger-full-access": 2}

// widen makes s at least as wide as o: the wider sandbox, network when
// either has it, every writable root of both, the looser approval.
func (s *session) widen(o session) {
	if sandboxRank[o.sandbox] > sandboxRank[s.sandbox] || s.sandbox == "" {
		s.sandbox = o.sandbox
	}
	s.network = s.network || o.network
	for _, r := range o.roots {
		if !slices.Contains(s.roots, r) {
			s.roots = append(s.roots, r)
		}
	}
	if o.approval == "never" || s.approval == "" {
		s.approval = o.approval
	}
}

// bypasses tells whether the child runs with nothing to stop it: no
// sandbox and no approval asked (the session's yolo mode). Approval never
// in a read-only or workspace-write sandbox only means that what the
// sandbox forbids fails instead of asking.
func (s session) bypasses() bool {
	return s.sandbox == "danger-full-access" && s.approval == "never"
}

// maxTranscript bounds how much of a session transcript the hook reads.
const maxTranscript = 64 << 20

// readSession establishes the sandbox, approval and model the session
// gives its children at hook time, from what Codex recorded and what the
// session cannot rewrite:
//
//   - the session transcript (transcript_path): each turn begins with a
//     turn_context line carrying the turn's approval_policy,
//     sandbox_policy and model, written before the turn's tool calls.
//     The line of this turn (turn_id) must be there. It alone counts when
//     no turn of the file could have written the file (a sandbox that
//     keeps it out of reach, approval never: a session resumed narrower
//     is judged as it now is); otherwise every turn_context counts, the
//     widest winning, so that a session cannot make its sandbox look
//     narrower by adding a turn.
//   - the command line Codex was started with (its process is the hook's
//     parent), whose sandbox flags a session cannot change: a wider one
//     there wins over the transcript. A codex exec session without a
//     transcript (--ephemeral) is judged from it alone when it names a
//     sandbox that needs nothing else to be known.
//
// A session that already runs without a sandbox could rewrite its own
// transcript; the command line still shows a sandbox given there, and the
// README says what is left.
func readSession(env host.Env, transcript, turn, cwd, model string) (session, error) {
	var s session
	if transcript == "" {
		return ephemeral(env, model)
	}
	if !filepath.IsAbs(transcript) {
		return s, host.Bad("/transcript_path", "transcript_path %q is not an absolute path", transcript)
	}
	data, err := plan.ReadFile(transcript, maxTranscript)
	if err != nil {
		return s, &plan.Error{Source: transcript, Msg: "the session transcript cannot be read, so the sandbox and approval the child gets cannot be known: " + plan.OneLine(err.Error())}
	}
	s, err = fromTranscript(transcript, data, turn, cwd)
	if err != nil {
		return s, err
	}
	if env.CommandLine != nil || runtime.GOOS == "linux" {
		if args, ok := parentArgs(env); ok {
			s.widen(fromCommandLine(args))
		}
	}
	// A transcript given by hand (--transcript) is not the session's own.
	if root := writableTranscript(s, transcript, cwd); root != "" && env.Transcript == "" {
		return s, &plan.Error{Source: transcript, Msg: fmt.Sprintf("the session can rewrite its own transcript (it lies under %s, which the session's workspace-write sandbox lets it write), so the sandbox it records cannot be trusted: keep CODEX_HOME out of the workspace and the writable roots", root)}
	}
	return s, nil
}

// writableTranscript is the writable folder of a workspace-write session
// that holds its transcript, "" when none does: such a session could
// rewrite what the hook reads. (A danger-full-access session is judged as
// such already; a read-only one writes nothing.)
func writableTranscript(s session, transcript, cwd string) string {
	if s.sandbox != "workspace-write" {
		return ""
	}
	for _, r := range append([]string{cwd}, s.roots...) {
		if r == "" || !filepath.IsAbs(r) {
			continue
		}
		if rel, err := filepath.Rel(filepath.Clean(r), transcript); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return r
		}
	}
	return ""
}

// fromTranscript reads the turn_context lines of a transcript: this
// turn's (required) when no turn could have rewritten the file, else the
// widest of them all (turn "" takes the last line's model, for a
// transcript given by hand, and the widest).
func fromTranscript(file string, data []byte, turn, cwd string) (session, error) {
	var widest, this session
	found, seen, writable := false, false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxTranscript)
	line := 0
	var last session
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || !bytes.Contains(b, []byte(`"turn_context"`)) {
			continue
		}
		var l struct {
			Type    string         `json:"type"`
			Payload map[string]any `json:"payload"`
		}
		if json.Unmarshal(b, &l) != nil || l.Type != "turn_context" {
			continue
		}
		t, err := turnContext(l.Payload)
		if err != nil {
			return widest, &plan.Error{Source: file, Line: line, Msg: "a turn_context line cannot be read, so the sandbox and approval the child gets cannot be known: " + err.Error()}
		}
		if id, _ := l.Payload["turn_id"].(string); id == turn && turn != "" {
			found = true
			this.widen(t)
			this.model = t.model
		}
		turnCwd, _ := l.Payload["cwd"].(string)
		if turnCwd == "" {
			turnCwd = cwd
		}
		writable = writable || couldRewrite(t, file, turnCwd)
		last = t
		seen = true
		widest.widen(t)
	}
	if err := sc.Err(); err != nil {
		return widest, &plan.Error{Source: file, Msg: "the session transcript cannot be read: " + plan.OneLine(err.Error())}
	}
	switch {
	case !seen:
		return widest, &plan.Error{Source: file, Msg: "the session transcript holds no turn_context line, so the sandbox and approval the child gets cannot be known"}
	case turn == "":
		widest.model = last.model
	case !found:
		return widest, &plan.Error{Source: file, Msg: fmt.Sprintf("the session transcript holds no turn_context for this turn (turn_id %q), so the sandbox and approval the child gets cannot be known", turn)}
	case !writable:
		this.source = file
		return this, nil
	default:
		widest.model = this.model
	}
	widest.source = file
	return widest, nil
}

// couldRewrite tells whether a turn of these settings, working in cwd,
// could have written the transcript: without a sandbox, with a writable
// root over it, or with an approval policy under which a command may be
// let out of the sandbox.
func couldRewrite(t session, transcript, cwd string) bool {
	return t.sandbox == "danger-full-access" || t.approval != "never" || writableTranscript(t, transcript, cwd) != ""
}

// ephemeral is the session of a codex exec run that keeps no transcript
// (--ephemeral): exec asks no approval, and the command line is the only
// record of its sandbox. It is judged when that line names a read-only
// sandbox or none at all; a workspace-write one takes its roots and
// network from configuration the hook does not read, and a sandbox left
// to configuration is not known.
func ephemeral(env host.Env, model string) (session, error) {
	fail := func(why string) (session, error) {
		return session{}, host.Bad("/transcript_path", "transcript_path is missing, so the sandbox and approval the child gets (the session's, whatever its definition says) cannot be known: %s", why)
	}
	args, ok := parentArgs(env)
	if !ok {
		return fail("the session is not a codex process the hook can read")
	}
	if sub := subcommand(args); sub != "exec" && sub != "e" {
		return fail("only a codex exec session may run without one")
	}
	s := fromCommandLine(args)
	switch s.sandbox {
	case "read-only", "danger-full-access":
	case "workspace-write":
		return fail("a workspace-write sandbox takes its writable roots and network from configuration: keep the transcript (drop --ephemeral) or run with -s read-only")
	default:
		return fail("the command line names no sandbox: keep the transcript (drop --ephemeral) or name one with -s")
	}
	s.approval, s.model, s.source = "never", model, "the codex exec command line"
	return s, nil
}

// valueOptions are Codex's options that take a value as the next word,
// which subcommand skips.
var valueOptions = []string{"-c", "--config", "-m", "--model", "-s", "--sandbox", "-a", "--ask-for-approval",
	"-C", "--cd", "-p", "--profile", "-i", "--image", "--add-dir", "--enable", "--disable", "--local-provider",
	"--color", "--output-schema", "-o", "--output-last-message"}

// subcommand is the first word of a Codex command line that is neither an
// option nor an option's value.
func subcommand(args []string) string {
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return ""
		case slices.Contains(valueOptions, a):
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}

// turnContext reads one turn_context's settings.
func turnContext(p map[string]any) (session, error) {
	var s session
	s.approval, _ = p["approval_policy"].(string)
	s.model, _ = p["model"].(string)
	sp, ok := p["sandbox_policy"].(map[string]any)
	if !ok {
		return s, errors.New("it has no sandbox_policy")
	}
	s.sandbox, _ = sp["type"].(string)
	if _, known := sandboxRank[s.sandbox]; !known {
		// A sandbox the gate does not know (an external one, a new kind)
		// bounds nothing it can see.
		return s, fmt.Errorf("sandbox_policy type %s is not one the gate knows (read-only, workspace-write, danger-full-access)", host.Show(sp["type"]))
	}
	s.network = sp["network_access"] == true
	if s.sandbox == "workspace-write" {
		if roots, ok := sp["writable_roots"].([]any); ok {
			for _, r := range roots {
				if r, ok := r.(string); ok && r != "" && !slices.Contains(s.roots, r) {
					s.roots = append(s.roots, r)
				}
			}
		}
		if sp["exclude_slash_tmp"] != true {
			s.roots = append(s.roots, "/tmp")
		}
		if sp["exclude_tmpdir_env_var"] != true {
			// $TMPDIR of the session, which the hook cannot see: a root
			// the gate cannot place, refused as a path that is not
			// absolute.
			s.roots = append(s.roots, "$TMPDIR")
		}
	}
	return s, nil
}

// parentArgs reads the command line of the hook's parent, the Codex
// process that runs it.
func parentArgs(env host.Env) ([]string, bool) {
	read := env.CommandLine
	if read == nil {
		read = procArgs
	}
	args, err := read(os.Getppid())
	if err != nil || len(args) == 0 || (filepath.Base(args[0]) != "codex" && filepath.Base(args[0]) != "codex.exe") {
		return nil, false
	}
	return args, true
}

func procArgs(pid int) ([]string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), nil
}

// fromCommandLine reads the sandbox and approval Codex's own flags give:
// --sandbox/-s, --full-auto, --dangerously-bypass-approvals-and-sandbox
// (--yolo), --ask-for-approval/-a, --add-dir, and -c overrides of
// sandbox_mode, approval_policy and sandbox_workspace_write.
func fromCommandLine(args []string) session {
	var s session
	// -c sandbox_mode gives way to --sandbox and the flags that set one,
	// as in Codex.
	var configured string
	flagged := false
	if len(args) > 0 {
		args = args[1:]
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		// clap takes a short option's value attached: -sread-only,
		// -csandbox_mode=....
		if len(a) > 2 && (strings.HasPrefix(a, "-s") || strings.HasPrefix(a, "-c") || strings.HasPrefix(a, "-a")) && a[2] != '=' && !strings.HasPrefix(a, "--") {
			a = a[:2] + "\x00" + a[2:]
		}
		name, value, inline := strings.Cut(a, "\x00")
		if !inline {
			name, value, inline = strings.Cut(a, "=")
		}
		next := func() string {
			if inline {
				return value
			}
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch name {
		case "--":
			return s
		case "--sandbox", "-s":
			s.widen(session{sandbox: next()})
			flagged = true
		case "--full-auto":
			s.widen(session{sandbox: "workspace-write"})
			flagged = true
		case "--dangerously-bypass-approvals-and-sandbox", "--yolo":
			s.widen(session{sandbox: "danger-full-access", approval: "never"})
			flagged = true
		case "--ask-for-approval", "-a":
			s.widen(session{approval: next()})
		case "--add-dir":
			if d := next(); d != "" {
				s.roots = append(s.roots, d)
			}
		case "--config", "-c":
			key, raw, _ := strings.Cut(next(), "=")
			raw = strings.TrimSpace(raw)
			v := strings.Trim(raw, `"'`)
			switch strings.TrimSpace(key) {
			case "sandbox_mode":
				configured = v
			case "approval_policy":
				s.widen(session{approval: v})
			case "sandbox_workspace_write.network_access":
				s.network = s.network || v == "true"
			case "sandbox_workspace_write":
				// An inline table: network and roots the gate reads
				// roughly, any root it cannot place refused.
				if strings.Contains(raw, "network_access") && strings.Contains(strings.ReplaceAll(raw, " ", ""), "network_access=true") {
					s.network = true
				}
				if strings.Contains(raw, "writable_roots") {
					s.roots = append(s.roots, "$CODEX_WRITABLE_ROOTS")
				}
			case "sandbox_workspace_write.writable_roots":
				var roots []string
				if json.Unmarshal([]byte(raw), &roots) != nil {
					// A form the gate cannot read: a root it cannot place,
					// which the path rules refuse.
					roots = []string{"$CODEX_WRITABLE_ROOTS"}
				}
				s.roots = append(s.roots, roots...)
			}
		}
	}
	if !flagged && configured != "" {
		s.widen(session{sandbox: configured})
	}
	if _, known := sandboxRank[s.sandbox]; !known && s.sandbox != "" {
		s.sandbox = "danger-full-access" // a value the gate cannot read bounds nothing
	}
	return s
}
