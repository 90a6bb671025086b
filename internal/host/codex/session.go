package codex

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
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

// The session transcript is read as a stream: what the judgement needs
// is its turn_context lines, which are small, while the lines around them
// can be as large as a session makes them (an attached image is stored
// inline, base64, in one line). So the work is bounded, not the file.
const (
	// maxContextLine is the longest turn_context line the hook reads;
	// a real one is well under it (a few KiB with the user's
	// instructions).
	maxContextLine = 1 << 20
	// maxContexts is how many turn_context lines the hook reads, one a
	// turn (and one after each compaction): more than a session holds.
	maxContexts = 100_000
	// readChunk is the read buffer, and how many bytes are read between
	// two looks at the context.
	readChunk = 64 << 10
)

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
// Whether a sandbox's writable folders hold the transcript is judged on
// its path as named and as resolved (see transcriptPaths). Reading stops when ctx
// ends, however large the file.
//
// A session that already runs without a sandbox could rewrite its own
// transcript; the command line still shows a sandbox given there, and the
// README says what is left.
func readSession(ctx context.Context, env host.Env, transcript, turn, cwd, model string) (session, error) {
	var s session
	if transcript == "" {
		return ephemeral(env, model)
	}
	if !filepath.IsAbs(transcript) {
		return s, host.Bad("/transcript_path", "transcript_path %q is not an absolute path", transcript)
	}
	f, err := openTranscript(transcript)
	if err != nil {
		return s, &document.Error{Source: transcript, Msg: "the session transcript cannot be read, so the sandbox and approval the child gets cannot be known: " + document.OneLine(document.Reason(err))}
	}
	defer f.Close()
	at, err := resolveTranscript(f, transcript)
	if err != nil {
		return s, err
	}
	s, err = fromTranscript(ctx, transcript, f, turn, cwd, at)
	if err != nil {
		return s, err
	}
	if env.CommandLine != nil || runtime.GOOS == "linux" {
		if args, ok := parentArgs(env); ok {
			s.widen(fromCommandLine(args))
		}
	}
	// A transcript given by hand (--transcript) is not the session's own.
	if env.Transcript != "" {
		return s, nil
	}
	root, err := at.heldBy(s, cwd)
	if err != nil {
		return s, err
	}
	if root != "" {
		return s, &document.Error{Source: transcript, Msg: fmt.Sprintf("the session can rewrite its own transcript (it lies under %s, which the session's workspace-write sandbox lets it write), so the sandbox it records cannot be trusted: keep CODEX_HOME out of the workspace and the writable roots", root)}
	}
	return s, nil
}

// openTranscript opens a transcript, which must be a regular file: a
// FIFO would hold the open past any deadline, a device never end.
func openTranscript(name string) (*os.File, error) {
	info, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, errors.New("it is not a regular file")
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	if info, err = f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = errors.New("it is not a regular file")
		}
		return nil, err
	}
	return f, nil
}

// transcriptPaths are where a transcript lies, for telling whether a
// sandbox's writable folders hold it: the path it is named by and the one it
// resolves to (symlinks followed, the file's own included). Both are
// judged, since a session that can write a link on the way or the
// folder the file really lies in can change what the hook reads.
type transcriptPaths struct {
	named, resolved string
	// roots caches each writable root's forms: as written (cleaned)
	// and resolved, when it exists.
	roots map[string][]string
}

// resolveTranscript resolves the path of the opened transcript f: a path that
// cannot be resolved, or that no longer leads to the file opened, cannot
// be judged.
func resolveTranscript(f *os.File, name string) (*transcriptPaths, error) {
	fail := func(why string) (*transcriptPaths, error) {
		return nil, &document.Error{Source: name, Msg: "the session transcript's path cannot be resolved, so whether the session can rewrite it cannot be known: " + document.OneLine(why)}
	}
	resolved, err := filepath.EvalSymlinks(name)
	if err != nil {
		return fail(document.Reason(err))
	}
	opened, err := f.Stat()
	if err != nil {
		return fail(document.Reason(err))
	}
	if now, err := os.Stat(resolved); err != nil || !os.SameFile(opened, now) {
		return fail("it changed while it was opened")
	}
	return &transcriptPaths{named: filepath.Clean(name), resolved: resolved, roots: map[string][]string{}}, nil
}

// heldBy is the writable folder of a workspace-write session (working in
// cwd) that holds the transcript, "" when none does: such a session could
// rewrite what the hook reads. (A danger-full-access session is judged as
// such already; a read-only one writes nothing.) Paths are compared a
// component at a time, each root as written and as resolved.
func (p *transcriptPaths) heldBy(s session, cwd string) (string, error) {
	if s.sandbox != "workspace-write" {
		return "", nil
	}
	for _, r := range append([]string{cwd}, s.roots...) {
		if r == "" || !filepath.IsAbs(r) {
			continue
		}
		forms, err := p.forms(r)
		if err != nil {
			return "", err
		}
		for _, f := range forms {
			if within(f, p.named) || within(f, p.resolved) {
				return r, nil
			}
		}
	}
	return "", nil
}

// forms is a writable root as written and, when it exists, as resolved.
// A root that does not exist holds no file; one that cannot be resolved
// otherwise (a loop, a folder the hook may not search) cannot be judged.
func (p *transcriptPaths) forms(root string) ([]string, error) {
	if f, ok := p.roots[root]; ok {
		return f, nil
	}
	forms := []string{filepath.Clean(root)}
	resolved, err := filepath.EvalSymlinks(root)
	switch {
	case err == nil:
		forms = append(forms, resolved)
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
	default:
		return nil, &document.Error{Source: p.named, Msg: fmt.Sprintf("the writable root %s cannot be resolved, so whether the session can rewrite its transcript cannot be known: %s", root, document.OneLine(document.Reason(err)))}
	}
	p.roots[root] = forms
	return forms, nil
}

// within tells whether path is root or lies under it, a component at a
// time (/work/ab is not under /work/a).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// fromTranscript reads the turn_context lines of a transcript: this
// turn's (required) when no turn could have rewritten the file, else the
// widest of them all (turn "" takes the last line's model, for a
// transcript given by hand, and the widest).
func fromTranscript(ctx context.Context, file string, r io.Reader, turn, cwd string, at *transcriptPaths) (session, error) {
	var widest, this, last session
	found, seen, writable := false, false, false
	err := eachTurnContext(ctx, file, r, func(line int, b []byte) error {
		var l struct {
			Type    string         `json:"type"`
			Payload map[string]any `json:"payload"`
		}
		if err := json.Unmarshal(b, &l); err != nil {
			return &document.Error{Source: file, Line: line, Msg: "a turn_context line cannot be read, so the sandbox and approval the child gets cannot be known: " + document.OneLine(err.Error())}
		}
		if l.Type != "turn_context" {
			return nil // a key written twice, the last another type
		}
		t, err := turnContext(l.Payload)
		if err != nil {
			return &document.Error{Source: file, Line: line, Msg: "a turn_context line cannot be read, so the sandbox and approval the child gets cannot be known: " + err.Error()}
		}
		if id, _ := l.Payload["turn_id"].(string); id == turn && turn != "" {
			found = true
			this.widen(t)
			this.model = t.model
		}
		if !writable {
			turnCwd, _ := l.Payload["cwd"].(string)
			if turnCwd == "" {
				turnCwd = cwd
			}
			if writable, err = couldRewrite(t, at, turnCwd); err != nil {
				return err
			}
		}
		last = t
		seen = true
		widest.widen(t)
		return nil
	})
	if err != nil {
		return widest, err
	}
	switch {
	case !seen:
		return widest, &document.Error{Source: file, Msg: "the session transcript holds no turn_context line, so the sandbox and approval the child gets cannot be known"}
	case turn == "":
		widest.model = last.model
	case !found:
		return widest, &document.Error{Source: file, Msg: fmt.Sprintf("the session transcript holds no turn_context for this turn (turn_id %q), so the sandbox and approval the child gets cannot be known", turn)}
	case !writable:
		this.source = file
		return this, nil
	default:
		widest.model = this.model
	}
	widest.source = file
	return widest, nil
}

// eachTurnContext calls f with each turn_context line of the transcript
// r (named file) and its number, trimmed. A line of any other kind is
// read past in chunks and never held, however long; a turn_context line
// longer than maxContextLine, or more than maxContexts of them, cannot
// be judged. It gives up when ctx ends, with ctx's error.
func eachTurnContext(ctx context.Context, file string, r io.Reader, f func(line int, b []byte) error) error {
	br := bufio.NewReaderSize(r, readChunk)
	var (
		held     []byte // the line so far, while it is short enough to be one
		long     bool   // the line is longer than maxContextLine: not held
		kind     lineKind
		line     int
		contexts int
		unseen   int // bytes read since ctx was last looked at
	)
	for {
		piece, err := br.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull && err != io.EOF {
			return &document.Error{Source: file, Msg: "the session transcript cannot be read, so the sandbox and approval the child gets cannot be known: " + document.OneLine(document.Reason(err))}
		}
		if unseen += len(piece); unseen >= readChunk {
			unseen = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		ends := err == nil || (err == io.EOF && (len(piece) > 0 || len(held) > 0 || long))
		whole := ends && len(held) == 0 && !long // the line is this one piece
		kind.feed(piece)
		if long && kind.turnContext {
			return tooLong(file, line+1)
		}
		if !whole && !long {
			content := len(held) + len(piece)
			if ends && err == nil {
				content-- // the newline
			}
			if content > maxContextLine {
				long, held = true, held[:0]
			} else {
				if held == nil {
					held = make([]byte, 0, maxContextLine+1) // the newline
				}
				held = append(held, piece...)
			}
		}
		if ends {
			line++
			b := held
			if whole {
				b = piece
			}
			b = bytes.TrimSpace(b)
			switch {
			case !kind.turnContext:
			case long || len(b) > maxContextLine:
				return tooLong(file, line)
			case contexts == maxContexts:
				return &document.Error{Source: file, Line: line, Msg: fmt.Sprintf("the session transcript holds more than %d turn_context lines, more than the hook reads, so the sandbox and approval the child gets cannot be known", maxContexts)}
			default:
				contexts++
				if err := f(line, b); err != nil {
					return err
				}
			}
			held, long, kind = held[:0], false, lineKind{text: kind.text[:0]}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// tooLong is the error of a turn_context line longer than the hook reads.
func tooLong(file string, line int) error {
	return &document.Error{Source: file, Line: line, Msg: fmt.Sprintf("a turn_context line is longer than %d MiB, more than the hook reads, so the sandbox and approval the child gets cannot be known", maxContextLine>>20)}
}

// maxKept is the longest key or type value lineKind keeps: "type" and
// "turn_context" written with every character escaped (\u0074...) fit.
const maxKept = 128

// lineKind tells, from a line's bytes given in pieces of any size,
// whether encoding/json could read it as a turn_context line: whether a
// key of its top-level object that encoding/json would match to "type"
// (case-insensitively) has the string value "turn_context", escapes
// decoded. It errs only towards yes (a key written twice counts if any
// of its values is turn_context), and keeps no more than a key or value
// of maxKept bytes, so a line of another kind is judged without being
// held, however long.
type lineKind struct {
	// turnContext is the answer so far.
	turnContext bool

	depth   int  // nesting of objects and arrays
	object  bool // the top-level value is an object
	key     bool // a string at depth 1 now is a key
	typeKey bool // the last key at depth 1 matches "type"
	str     bool // inside a string
	escaped bool // the string's previous byte was a backslash
	keep    bool // the string is kept: a key at depth 1, or a type key's value
	text    []byte
	over    bool // the string kept is longer than maxKept
}

// feed reads the next piece of the line.
func (k *lineKind) feed(b []byte) {
	for len(b) > 0 {
		if k.str {
			b = k.inString(b)
			continue
		}
		c := b[0]
		b = b[1:]
		top := k.depth == 1 && k.object
		switch c {
		case '"':
			k.str = true
			k.keep = top && (k.key || k.typeKey)
			k.text, k.over = k.text[:0], false
		case '{', '[':
			k.depth++
			if k.depth == 1 {
				k.object, k.key, k.typeKey = c == '{', true, false
			}
		case '}', ']':
			if k.depth > 0 {
				k.depth--
			}
		case ',':
			if top {
				k.key, k.typeKey = true, false
			}
		case ':':
			if top {
				k.key = false
			}
		}
	}
}

// inString reads b inside a string and returns what follows its end,
// nil when it goes on. Bytes are found with bytes.IndexByte, each looked
// at once, so a long string costs little more than reading it.
func (k *lineKind) inString(b []byte) []byte {
	if !k.keep {
		return k.skipString(b)
	}
	pos, quote := 0, -1
	for pos < len(b) {
		if k.escaped {
			k.escaped = false
			k.add(b[pos : pos+1])
			pos++
			continue
		}
		if quote < pos {
			if quote = bytes.IndexByte(b[pos:], '"'); quote >= 0 {
				quote += pos
			} else {
				quote = len(b)
			}
		}
		seg := b[pos:quote]
		if i := bytes.IndexByte(seg, '\\'); i >= 0 {
			k.add(seg[:i+1])
			pos += i + 1
			k.escaped = true
			continue
		}
		k.add(seg)
		if quote == len(b) {
			return nil
		}
		k.str = false
		k.ended()
		return b[quote+1:]
	}
	return nil
}

// skipString reads b inside a string that is not kept: only its end
// matters, the first quote after an even run of backslashes, so only the
// quotes are looked for, each with bytes.IndexByte.
func (k *lineKind) skipString(b []byte) []byte {
	pos := 0
	for {
		q := bytes.IndexByte(b[pos:], '"')
		end := pos + q
		if q < 0 {
			end = len(b)
		}
		// The backslashes just before end, back to pos at most; when
		// they reach pos, the escape carried into pos counts as one more.
		n := 0
		for end-n > pos && b[end-n-1] == '\\' {
			n++
		}
		if end-n == pos && k.escaped {
			n++
		}
		k.escaped = n%2 == 1
		if q < 0 {
			return nil
		}
		if !k.escaped {
			k.str = false
			return b[end+1:]
		}
		k.escaped, pos = false, end+1 // an escaped quote
	}
}

// add keeps b, of a string being kept, up to maxKept bytes.
func (k *lineKind) add(b []byte) {
	switch {
	case !k.keep || k.over:
	case len(k.text)+len(b) > maxKept:
		k.over = true
	default:
		k.text = append(k.text, b...)
	}
}

// ended judges a kept string that has just ended.
func (k *lineKind) ended() {
	if !k.keep {
		return
	}
	s, ok := k.decoded()
	if k.key {
		k.typeKey = ok && bytes.EqualFold(s, []byte("type"))
		return
	}
	if ok && string(s) == "turn_context" {
		k.turnContext = true
	}
}

// decoded is the kept string, escapes decoded as encoding/json decodes
// them; false when it is too long to be "type" or "turn_context", or its
// escapes are not JSON's.
func (k *lineKind) decoded() ([]byte, bool) {
	if k.over {
		return nil, false
	}
	if bytes.IndexByte(k.text, '\\') < 0 {
		return k.text, true
	}
	var s string
	err := json.Unmarshal(append(append([]byte{'"'}, k.text...), '"'), &s)
	return []byte(s), err == nil
}

// couldRewrite tells whether a turn of these settings, working in cwd,
// could have written the transcript: without a sandbox, with a writable
// root over it, or with an approval policy under which a command may be
// let out of the sandbox.
func couldRewrite(t session, at *transcriptPaths, cwd string) (bool, error) {
	if t.sandbox == "danger-full-access" || t.approval != "never" {
		return true, nil
	}
	root, err := at.heldBy(t, cwd)
	return root != "", err
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

// overriddenKeys are the configuration keys whose values the hook reads
// from Codex's configuration files (which agents a name resolves to, the
// MCP servers every child inherits, which projects are trusted and so
// load their own), and whose -c override on the command line it does not
// read: a session started with one is not judged. A profile (--profile,
// $CODEX_HOME/NAME.config.toml) can set them all, and
// --ignore-user-config drops the user's layer the hook reads.
var overriddenKeys = []string{"agents", "mcp_servers", "projects", "profile", "profiles"}

// overrides says why the configuration Codex was started with is not the
// one the hook reads from its files, "" when it is: a -c of a key in
// overriddenKeys, --profile, or --ignore-user-config.
func overrides(args []string) string {
	if len(args) > 0 {
		args = args[1:]
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return ""
		}
		name, value, inline := strings.Cut(a, "=")
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.ContainsRune("cp", rune(a[1])) {
			name, value, inline = a[:2], strings.TrimPrefix(a[2:], "="), true // -cKEY=V, -pNAME
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
		case "-p", "--profile":
			return fmt.Sprintf("Codex was started with --profile %s, whose file can declare agent roles, MCP servers and trusted projects the hook does not read", next())
		case "--ignore-user-config":
			return "Codex was started with --ignore-user-config, which drops the user's configuration the hook reads agent roles and MCP servers from"
		case "-c", "--config":
			kv := next()
			key, _, _ := strings.Cut(kv, "=")
			first, _, _ := strings.Cut(strings.TrimSpace(key), ".")
			if slices.Contains(overriddenKeys, strings.Trim(first, `"'`)) {
				return fmt.Sprintf("Codex was started with -c %s, which overrides %s on the command line, where the hook does not read it", kv, first)
			}
		default:
			if slices.Contains(valueOptions, name) && !inline {
				i++
			}
		}
	}
	return ""
}
