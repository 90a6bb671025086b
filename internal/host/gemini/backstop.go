package gemini

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/doctor"
)

// The backstop is a policy file of Gemini CLI's own policy engine, in
// /etc/gemini-cli/policies (the admin tier, which no user, workspace,
// extension or default rule outranks: a rule's priority p counts as
// 5 + p/1000 there, 4.x at most below). The engine tries rules from the
// highest priority down and the first that matches decides; it matches
// argsPattern, a JavaScript regular expression, against the call's
// arguments written with sorted keys and each top-level "key":value
// wrapped in NUL characters (stable-stringify), so
// \x00"agent_name":"writer"\x00 matches that name and no other, and no
// prompt can forge it (JSON writes a NUL in a string as \u0000).
//
// It holds, for the agents Gemini CLI would load for the project and the
// user, one deny rule (priority 900) for each the hook's policy refuses,
// and one deny rule (priority 100) for every other name but those the
// policy lets through. It holds no allow rule: an admin-tier allow would
// outrank Plan Mode's refusals and the user's own deny rules, granting
// more than "not refused".
//
// It is static, names not definitions: its header keeps a digest of the
// definitions judged and of the policy's files, and doctor reports it
// stale when they change.

// backstopName is the backstop's file in the policies folder.
const backstopName = "spawngate.toml"

// Priorities of the backstop's rules, within the admin tier.
const (
	refusedPriority = 900
	unknownPriority = 100
)

// digestLine starts the header line that keeps the digest.
const digestLine = "# spawngate-digest: "

// backstop is what a backstop holds, before it is written.
type backstop struct {
	refused []refusal
	allowed []string // sorted
	digest  string
	// hook is the command line whose policy judged.
	hook string
}

// refusal is an agent the policy refuses, and why.
type refusal struct{ name, why string }

func (d *checkup) backstopPath() string {
	return filepath.Join(d.Options.Path(doctorPaths.policies), backstopName)
}

// WriteBackstop implements doctor.Backstopper.
func (Adapter) WriteBackstop(ctx context.Context, o doctor.Options, file string) (string, error) {
	d, err := newCheckup(o)
	if err != nil {
		return "", err
	}
	b, err := d.plan(ctx)
	if err != nil {
		return "", err
	}
	// The policies folder need not exist yet: made as the client wants
	// it, writable by its owner alone.
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return "", &doctor.Error{File: filepath.Dir(file), Msg: "cannot be made: " + host.Cause(err)}
	}
	if err := os.WriteFile(file, b.render(d), 0o644); err != nil {
		return "", &doctor.Error{File: file, Msg: "cannot be written: " + host.Cause(err)}
	}
	return fmt.Sprintf("wrote %s: %d agents refused by name, and every other name but the %d the policy lets through (install it as %s, owned by root, mode 644)",
		file, len(b.refused), len(b.allowed), d.backstopPath()), nil
}

// gateLine is the hook line of the first spawngate hook in system
// settings that runs, the policy the backstop is written from.
func (d *checkup) gateLine(ctx context.Context) (*gateHook, doctor.HookLine, error) {
	for _, h := range d.hooks {
		if h.doc.layer != systemLayer || d.Options.ReadHook == nil {
			continue
		}
		words, op, err := doctor.ShellWords(h.Command, d.command().Vars, d.home)
		if err != nil || op != "" || len(words) < 3 || words[1] != "hook" || words[2] != Name {
			continue
		}
		line, err := d.Options.ReadHook(ctx, Name, words[3:], d.project)
		if err != nil {
			return nil, line, fmt.Errorf("the hook in %s cannot start: %s", h.doc.Path, document.OneLine(err.Error()))
		}
		if line.Judge == nil {
			return nil, line, fmt.Errorf("the hook in %s builds no gate to judge with", h.doc.Path)
		}
		return h, line, nil
	}
	return nil, doctor.HookLine{}, fmt.Errorf("no spawngate hook gemini in %s to take the policy from: the backstop refuses what that hook's policy refuses", d.systemPath())
}

// plan judges every agent Gemini CLI would load for the project and the
// user, as an invoke_agent call of its name, under the system hook's
// policy.
func (d *checkup) plan(ctx context.Context) (*backstop, error) {
	h, line, err := d.gateLine(ctx)
	if err != nil {
		return nil, err
	}
	// The budget is the hook's: a definition that states none is judged
	// with what the hook grants it, not as a child without one.
	env := host.Env{Getenv: d.Options.Getenv, Home: d.home, Cwd: d.project, Root: d.Options.Root, Limits: document.DefaultLimits, Budget: line.Budget}
	catalog, err := load(ctx, env, d.project)
	if err != nil {
		return nil, err
	}
	s, err := readSettings(ctx, env, d.project)
	if err != nil {
		return nil, err
	}
	var names []string
	for name := range builtins {
		names = append(names, name)
	}
	for _, def := range catalog.Definitions() {
		if def.Name != "" && def.Err == nil && def.Skipped == "" && !slices.Contains(names, def.Name) {
			names = append(names, def.Name)
		}
	}
	slices.Sort(names)
	sum := sha256.New()
	b := &backstop{hook: h.Command}
	for _, name := range names {
		def, problem := resolve(catalog, name)
		if def == nil {
			continue // Gemini CLI does not find it: the default rule refuses it
		}
		t := translate(agent.Call{Host: Name, Type: name, Paths: []string{d.project}, Budget: env.Budget}, def, problem, s.override(name))
		child, _ := json.Marshal(t.Child)
		fmt.Fprintf(sum, "agent %s %s\n", name, child)
		refused, why, err := line.Judge(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("judging %s: %w", name, err)
		}
		if refused {
			b.refused = append(b.refused, refusal{name, why})
		} else {
			b.allowed = append(b.allowed, name)
		}
	}
	// The files are read where they lie (under --root) and digested by
	// the names the host sees, so that a staged installation and the
	// installed one have one digest.
	m := d.Options.Machine()
	for _, f := range line.Files {
		if err := digestFiles(sum, m, f); err != nil {
			return nil, err
		}
	}
	b.digest = "sha256:" + hex.EncodeToString(sum.Sum(nil))
	return b, nil
}

// digestFiles adds a file, or every file under a folder, to the digest:
// root is named as the host sees it, m says where it lies.
func digestFiles(sum interface{ Write([]byte) (int, error) }, m doctor.Machine, root string) error {
	return filepath.WalkDir(m.OnDisk(root), func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, _, err := doctor.ReadConfig(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(sum, "file %s %x\n", m.Shown(p), sha256.Sum256(data))
		return nil
	})
}

// safeName is an agent name as Gemini CLI accepts one; the backstop
// writes only such names into its patterns.
var safeName = regexp.MustCompile(`^[a-z0-9_-]+$`)

// render writes the backstop's file.
func (b *backstop) render(d *checkup) []byte {
	var w bytes.Buffer
	fmt.Fprintf(&w, `# Gemini CLI policy rules written by spawngate doctor gemini --write-backstop.
# A backstop, not a gate: it is static. It names agents and does not read
# their definitions; spawngate's hook judges each spawn, and these rules
# refuse by name what the hook's policy refused when they were written, for
# a session the hook does not reach (hooksConfig.disabled in a trusted
# project, GEMINI_CLI_SYSTEM_SETTINGS_PATH; not --acp, under which the
# client applied no rule either). Write it again when an agent or the
# policy changes: spawngate doctor gemini reports it stale.
# Keep it in /etc/gemini-cli/policies, owned by root, mode 644.
#
# project: %s
# home: %s
# hook: %s
%s%s

`, d.project, d.home, oneLineComment(b.hook), digestLine, b.digest)
	for _, r := range b.refused {
		if !safeName.MatchString(r.name) {
			continue
		}
		fmt.Fprintf(&w, "[[rule]]\ntoolName = \"invoke_agent\"\nargsPattern = '\\x00\"agent_name\":\"%s\"\\x00'\ndecision = \"deny\"\npriority = %d\ndenyMessage = %s\n\n",
			r.name, refusedPriority, tomlString("spawngate refuses the agent "+r.name+": "+r.why))
	}
	fmt.Fprintf(&w, "# Every other name but those the policy let through.\n[[rule]]\ntoolName = \"invoke_agent\"\n")
	var known []string
	for _, n := range b.allowed {
		if safeName.MatchString(n) {
			known = append(known, n)
		}
	}
	if len(known) > 0 {
		fmt.Fprintf(&w, "argsPattern = '\\x00\"agent_name\":\"(?!(?:%s)\"\\x00)'\n", strings.Join(known, "|"))
	}
	fmt.Fprintf(&w, "decision = \"deny\"\npriority = %d\ndenyMessage = %s\n", unknownPriority,
		tomlString("spawngate's backstop knows no such agent: write it again with spawngate doctor gemini --write-backstop"))
	return w.Bytes()
}

// oneLineComment keeps a value on its comment line.
func oneLineComment(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }

// tomlString writes a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// checkBackstop reports a backstop that is missing, that Gemini CLI
// skips, that the session can change, or that no longer says what the
// policy says of the agents Gemini CLI would load.
func (d *checkup) checkBackstop(ctx context.Context, diag *doctor.Diagnosis) {
	path := d.backstopPath()
	const write = "write it with spawngate doctor gemini --write-backstop FILE, and install FILE there owned by root, mode 644"
	data, found, err := doctor.ReadConfig(path)
	switch {
	case err != nil:
		var de *doctor.Error
		errors.As(err, &de)
		d.Add(path, "backstop.invalid", "", document.OneLine(err.Error()), write)
		return
	case !found:
		d.Add(path, "backstop.missing", "", "there is no backstop: a session that turns the hook off (hooksConfig.disabled in a trusted project, GEMINI_CLI_SYSTEM_SETTINGS_PATH) starts every sub-agent, the ones the policy refuses too", write)
		return
	}
	if why := d.insecure(filepath.Dir(path)); why != "" {
		d.Add(path, "backstop.skipped", "", "the policies folder "+why+": Gemini CLI skips every policy in it (\"Security Warning: Skipping system policies\"), the backstop too",
			"keep /etc/gemini-cli/policies, and every folder above it, owned by root and writable by root alone")
		return
	}
	if why := d.insecure(path); why != "" {
		d.Add(path, "backstop.writable", "", why+": the model can rewrite the backstop to let every agent through",
			"chown root:root and chmod 644 it")
		return
	}
	b, err := d.plan(ctx)
	if err != nil {
		d.Add(path, "backstop.stale", "", "doctor cannot tell what the backstop should say ("+document.OneLine(err.Error())+")", "correct the hook; then "+write)
		return
	}
	if bytes.Equal(data, b.render(d)) {
		diag.Gates = append(diag.Gates, doctor.Place{File: path})
		return
	}
	if !bytes.Contains(data, []byte(digestLine+b.digest+"\n")) {
		d.Add(path, "backstop.stale", "", "the backstop was written for other agent definitions or another policy than Gemini CLI and the hook now have: it can let through an agent the policy now refuses", write)
		return
	}
	d.Add(path, "backstop.invalid", "", "the backstop is not as spawngate wrote it for these definitions and this policy (it was edited): doctor cannot tell what it refuses", write)
}
