package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spawngate/spawngate/internal/agent"
	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/host"
	"github.com/spawngate/spawngate/internal/host/hosttest"
)

// turnLine is one turn_context line of a transcript.
func turnLine(turn, sandbox, approval, model string, extra map[string]any) string {
	sp := map[string]any{"type": sandbox}
	for k, v := range extra {
		sp[k] = v
	}
	b, _ := json.Marshal(map[string]any{"timestamp": "2026-12-03T00:00:00Z", "type": "turn_context", "payload": map[string]any{
		"turn_id": turn, "approval_policy": approval, "sandbox_policy": sp, "model": model, "cwd": "/w",
	}})
	return string(b)
}

// writeTranscript writes a session transcript of lines and returns its
// path.
func writeTranscript(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	text := `{"type":"session_meta","payload":{"id":"s"}}` + "\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sessionEnv is a hook's environment in a session of this sandbox and
// approval on model main-model, its definitions in dir.
func sessionEnv(t *testing.T, dir, sandbox, approval string) host.Env {
	t.Helper()
	return host.Env{AgentsDirs: []string{dir}, Limits: document.DefaultLimits,
		Transcript:  writeTranscript(t, turnLine("t1", sandbox, approval, "main-model", map[string]any{"exclude_slash_tmp": true, "exclude_tmpdir_env_var": true})),
		CommandLine: func(int) ([]string, error) { return []string{"codex", "app-server"}, nil }}
}

// TestReadSession: the sandbox, approval and model the session gives its
// children, from the transcript's turn_context lines (this turn's must be
// there; the widest of all wins) and the command line Codex started with
// (wider wins).
func TestReadSession(t *testing.T) {
	noTmp := map[string]any{"exclude_slash_tmp": true, "exclude_tmpdir_env_var": true}
	plain := func(args ...string) host.Env {
		return host.Env{Limits: document.DefaultLimits, CommandLine: func(int) ([]string, error) { return append([]string{"/usr/bin/codex"}, args...), nil }}
	}
	for _, tc := range []struct {
		name  string
		lines []string
		turn  string
		env   host.Env
		want  string // sandbox approval network model roots, or the error
	}{
		{"this turn's", []string{turnLine("t1", "read-only", "on-request", "m1", nil)}, "t1", plain("exec"), "read-only on-request false m1 []"},
		{"the widest of every turn", []string{turnLine("t0", "danger-full-access", "never", "m0", nil), turnLine("t1", "read-only", "on-request", "m1", nil)}, "t1", plain(), "danger-full-access never false m1 []"},
		{"a narrower turn added after cannot narrow", []string{turnLine("t1", "workspace-write", "on-request", "m1", noTmp), turnLine("t2", "read-only", "untrusted", "m2", nil)}, "t2", plain(), "workspace-write on-request false m2 []"},
		// A session resumed narrower, whose turns could none write the
		// transcript (approval never, the file out of every sandbox's
		// reach), is judged as this turn is.
		{"resumed narrower: this turn's", []string{turnLine("t1", "workspace-write", "never", "m1", map[string]any{"network_access": true, "writable_roots": []any{"/srv"}, "exclude_slash_tmp": true, "exclude_tmpdir_env_var": true}), turnLine("t2", "read-only", "never", "m2", nil)}, "t2", plain(), "read-only never false m2 []"},
		{"resumed narrower after a turn that could ask out: the widest", []string{turnLine("t1", "workspace-write", "untrusted", "m1", noTmp), turnLine("t2", "read-only", "never", "m2", nil)}, "t2", plain(), "workspace-write never false m2 []"},
		{"resumed narrower after a turn that could write the file: the widest", []string{turnLine("t1", "workspace-write", "never", "m1", map[string]any{"exclude_tmpdir_env_var": true}), turnLine("t2", "read-only", "never", "m2", nil)}, "t2", plain(), "the session can rewrite its own transcript (it lies under /tmp,"},
		{"resumed narrower after full access: the widest", []string{turnLine("t1", "danger-full-access", "never", "m1", nil), turnLine("t2", "read-only", "never", "m2", nil)}, "t2", plain(), "danger-full-access never false m2 []"},
		{"this turn's line twice: the wider", []string{turnLine("t2", "workspace-write", "never", "m1", noTmp), turnLine("t2", "read-only", "never", "m2", nil)}, "t2", plain(), "workspace-write never false m2 []"},
		{"network and roots", []string{turnLine("t1", "workspace-write", "on-request", "m", map[string]any{"network_access": true, "writable_roots": []any{"/srv", "/data"}, "exclude_slash_tmp": true, "exclude_tmpdir_env_var": true})}, "t1", plain(), "workspace-write on-request true m [/srv /data]"},
		// The transcripts of these tests lie in /tmp, as a real one lies
		// in CODEX_HOME: a session that may write there could rewrite it.
		{"a writable root holding the transcript", []string{turnLine("t1", "workspace-write", "on-request", "m", map[string]any{"writable_roots": []any{"/"}, "exclude_slash_tmp": true, "exclude_tmpdir_env_var": true})}, "t1", plain(), "the session can rewrite its own transcript (it lies under /,"},
		{"/tmp unless excluded", []string{turnLine("t1", "workspace-write", "on-request", "m", nil)}, "t1", plain(), "the session can rewrite its own transcript (it lies under /tmp,"},
		{"attached short options", []string{turnLine("t1", "read-only", "on-request", "m", nil)}, "t1", plain("-sdanger-full-access"), "danger-full-access on-request false m []"},
		{"an attached -c", []string{turnLine("t1", "read-only", "on-request", "m", nil)}, "t1", plain(`-csandbox_mode="danger-full-access"`), "danger-full-access on-request false m []"},
		{"an inline table of sandbox_workspace_write", []string{turnLine("t1", "read-only", "on-request", "m", nil)}, "t1", plain("-s", "workspace-write", "-c", `sandbox_workspace_write={writable_roots=["/"], network_access=true}`), "workspace-write on-request true m [$CODEX_WRITABLE_ROOTS]"},
		{"the command line is wider", []string{turnLine("t1", "read-only", "on-request", "m", nil)}, "t1", plain("exec", "--dangerously-bypass-approvals-and-sandbox"), "danger-full-access never false m []"},
		{"-s and -c on the command line", []string{turnLine("t1", "read-only", "on-request", "m", nil)}, "t1", plain("-s", "workspace-write", "-c", `sandbox_workspace_write.writable_roots=["/etc"]`, "-c", "sandbox_workspace_write.network_access=true"), "workspace-write on-request true m [/etc]"},
		{"--sandbox wins over -c sandbox_mode, as in Codex", []string{turnLine("t1", "read-only", "on-request", "m", nil)}, "t1", plain("-s", "read-only", "-c", `sandbox_mode="workspace-write"`), "read-only on-request false m []"},
		{"-c sandbox_mode alone", []string{turnLine("t1", "read-only", "on-request", "m", nil)}, "t1", plain("-c", `sandbox_mode="workspace-write"`), "workspace-write on-request false m []"},
		{"a parent that is not codex is not read", []string{turnLine("t1", "read-only", "on-request", "m", nil)}, "t1", host.Env{Limits: document.DefaultLimits, CommandLine: func(int) ([]string, error) { return []string{"/bin/sh", "--yolo"}, nil }}, "read-only on-request false m []"},
		{"a transcript by hand: its last turn", []string{turnLine("t1", "read-only", "on-request", "m1", nil), turnLine("t2", "read-only", "on-request", "m2", nil)}, "", plain(), "read-only on-request false m2 []"},
		{"no turn_context for this turn", []string{turnLine("t1", "read-only", "on-request", "m", nil)}, "t9", plain(), `holds no turn_context for this turn (turn_id "t9")`},
		{"no turn_context at all", nil, "t1", plain(), "holds no turn_context line"},
		{"a sandbox the gate does not know", []string{turnLine("t1", "external-sandbox", "on-request", "m", nil)}, "t1", plain(), `:2: a turn_context line cannot be read, so the sandbox and approval the child gets cannot be known: sandbox_policy type "external-sandbox" is not one the gate knows`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeTranscript(t, tc.lines...)
			s, err := readSession(context.Background(), tc.env, path, tc.turn, "/w", "")
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				b, _ := json.Marshal(s.roots)
				got = strings.Join([]string{s.sandbox, s.approval, map[bool]string{true: "true", false: "false"}[s.network], s.model, strings.NewReplacer(`"`, "", ",", " ").Replace(string(b))}, " ")
				if s.roots == nil {
					got = strings.TrimSuffix(got, "null") + "[]"
				}
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	for _, tc := range []struct{ transcript, want string }{
		{"", "/transcript_path: transcript_path is missing, so the sandbox and approval the child gets (the session's, whatever its definition says) cannot be known: the session is not a codex process the hook can read"},
		{"rel.jsonl", `/transcript_path: transcript_path "rel.jsonl" is not an absolute path`},
		{"/nonexistent/rollout.jsonl", "the session transcript cannot be read"},
	} {
		if _, err := readSession(context.Background(), host.Env{Limits: document.DefaultLimits, CommandLine: func(int) ([]string, error) { return nil, os.ErrNotExist }}, tc.transcript, "t1", "/w", ""); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.transcript, err, tc.want)
		}
	}
}

// TestEphemeralSession: a codex exec session without a transcript is
// judged from its command line when that names a sandbox needing nothing
// else; otherwise the spawn is refused with what to change.
func TestEphemeralSession(t *testing.T) {
	cmd := func(args ...string) host.Env {
		return host.Env{Limits: document.DefaultLimits, CommandLine: func(int) ([]string, error) { return append([]string{"/usr/bin/codex"}, args...), nil }}
	}
	for _, tc := range []struct {
		name string
		env  host.Env
		want string // sandbox approval network model source, or the error
	}{
		{"exec -s read-only", cmd("exec", "--ephemeral", "-s", "read-only", "do it"), "read-only never false sm the codex exec command line"},
		{"options before exec, their values skipped", cmd("-m", "exec", "-c", "x=1", "e", "--ephemeral", "--sandbox=read-only"), "read-only never false sm"},
		{"exec --yolo", cmd("exec", "--ephemeral", "--yolo"), "danger-full-access never false sm"},
		{"the widest flag wins", cmd("exec", "-s", "read-only", "--ephemeral", "--dangerously-bypass-approvals-and-sandbox"), "danger-full-access never"},
		{"workspace-write", cmd("exec", "--ephemeral", "-s", "workspace-write"), "a workspace-write sandbox takes its writable roots and network from configuration"},
		{"--full-auto", cmd("exec", "--ephemeral", "--full-auto"), "a workspace-write sandbox takes its writable roots"},
		{"no sandbox named", cmd("exec", "--ephemeral", "go"), "the command line names no sandbox"},
		{"not exec", cmd("-s", "read-only"), "only a codex exec session may run without one"},
		{"exec after --", cmd("--", "exec", "-s", "read-only"), "only a codex exec session may run without one"},
		{"a prompt word exec", cmd("-s", "read-only", "review", "exec"), "only a codex exec session may run without one"},
		{"a parent that is not codex", host.Env{Limits: document.DefaultLimits, CommandLine: func(int) ([]string, error) { return []string{"/bin/sh", "exec", "-s", "read-only"}, nil }}, "not a codex process the hook can read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := readSession(context.Background(), tc.env, "", "t1", "/w", "sm")
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = fmt.Sprintf("%s %s %t %s %s", s.sandbox, s.approval, s.network, s.model, s.source)
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestSessionSandboxJudged: the child is judged with the session's
// sandbox, whatever its definition's sandbox_mode, on the definition's
// model else the call's else the session's; it bypasses only without a
// sandbox and without approval.
func TestSessionSandboxJudged(t *testing.T) {
	dir, _ := callerCatalog(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, sandbox, approval, input, want string
	}{
		{"a reader in a workspace-write session", "workspace-write", "on-request", `{"agent_type": "ro"}`, `"permission_mode":"default","sandbox_mode":"workspace-write"|"model":"gpt-5.1-codex"|"tools":["sandbox:workspace-write"]`},
		{"a writer in a read-only session", "read-only", "on-request", `{"agent_type": "lead"}`, `"sandbox_mode":"read-only"|"tools":["sandbox:read-only","mcp__github"]`},
		{"exec's approval never in a read-only sandbox is no bypass", "read-only", "never", `{"agent_type": "ro"}`, `"permission_mode":"default"`},
		{"no sandbox and no approval is", "danger-full-access", "never", `{"agent_type": "ro"}`, `"permission_mode":"bypassPermissions"`},
		{"the definition's model over the call's", "read-only", "on-request", `{"agent_type": "ro", "model": "o3"}`, `"model":"gpt-5.1-codex"`},
		{"fork_context", "read-only", "on-request", `{"agent_type": "ro", "message": "m", "fork_context": true}`, `"brief_unreadable":"the child is handed the parent's conversation (fork_context), which the brief checks cannot read"`},
		{"a padded type is trimmed, as Codex trims it", "read-only", "on-request", `{"agent_type": " ro "}`, `"role":"ro"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := Adapter{}.Spawn(ctx, codexPayload(tc.input), sessionEnv(t, dir, tc.sandbox, tc.approval))
			if err != nil {
				t.Fatal(err)
			}
			got := hosttest.Canonical(t, sp.Children[0].Child)
			for _, w := range strings.Split(tc.want, "|") {
				if !strings.Contains(got, w) {
					t.Errorf("child %s\nlacks %s", got, w)
				}
			}
		})
	}
	// A definition without a model runs the session's.
	sp, err := Adapter{}.Spawn(ctx, codexPayload(`{"agent_type": "nomodel"}`), sessionEnv(t, writeDefs(t, map[string]string{"nomodel.toml": "name = \"nomodel\"\ndescription = \"d\"\ndeveloper_instructions = \"w\"\nsandbox_mode = \"read-only\"\n"}), "read-only", "on-request"))
	if err != nil || sp.Children[0].Child["model"] != "main-model" {
		t.Fatalf("the session's model: %v %v", sp, err)
	}
	// v2: a call without fork_turns hands every turn over; "none" hands
	// none.
	p := codexPayload(`{"agent_type": "ro", "message": "m"}`)
	p["tool_name"] = "collaborationspawn_agent"
	sp, _ = Adapter{}.Spawn(ctx, p, sessionEnv(t, dir, "read-only", "on-request"))
	if u, _ := sp.Children[0].Child["brief_unreadable"].(string); !strings.Contains(u, "fork_turns") {
		t.Errorf("v2 without fork_turns: %v", sp.Children[0].Child)
	}
	for _, none := range []any{"none", " None ", json.Number("0")} {
		p["tool_input"].(map[string]any)["fork_turns"] = none
		sp, _ = Adapter{}.Spawn(ctx, p, sessionEnv(t, dir, "read-only", "on-request"))
		if _, set := sp.Children[0].Child["brief_unreadable"]; set {
			t.Errorf("v2 with fork_turns %q: %v", none, sp.Children[0].Child)
		}
	}
	// null is absent to Codex: every turn.
	p["tool_input"].(map[string]any)["fork_turns"] = nil
	sp, _ = Adapter{}.Spawn(ctx, p, sessionEnv(t, dir, "read-only", "on-request"))
	if u, _ := sp.Children[0].Child["brief_unreadable"].(string); !strings.Contains(u, "fork_turns") {
		t.Errorf("v2 with fork_turns null: %v", sp.Children[0].Child)
	}
}

func writeDefs(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "defs")
	hosttest.WriteTree(t, dir, files)
	return dir
}

// TestSessionRoots: the writable roots of a workspace-write session are
// paths of the child; those --add-dir leaves in a read-only session are
// not (Codex writes nowhere there).
func TestSessionRoots(t *testing.T) {
	_, c := callerCatalog(t)
	def, _ := resolve(c, nil, "ro")
	for _, tc := range []struct {
		sandbox, want string
	}{
		{"workspace-write", `["/w","/outside"]`},
		{"read-only", `["/w"]`},
		{"danger-full-access", `["/w"]`},
	} {
		se := &session{sandbox: tc.sandbox, roots: []string{"/outside", "/tmp", "$TMPDIR"}}
		tr := translate(call{Call: agent.Call{Host: Name, Type: "ro", Paths: []string{"/w"}}, Session: se}, def, "")
		if got := hosttest.Canonical(t, tr.Child["paths"]); got != tc.want {
			t.Errorf("%s: paths %s, want %s", tc.sandbox, got, tc.want)
		}
	}
}

// TestReadLayers: a session takes definitions and MCP servers from the
// layers Codex loads: a trusted project's .codex and CODEX_HOME, never an
// untrusted project's.
func TestReadLayers(t *testing.T) {
	base := hosttest.OutsideRepo(t)
	j := filepath.Join
	home := j(base, "home")
	repo := j(base, "repo")
	other := j(base, "other")
	hosttest.WriteTree(t, base, map[string]string{
		"repo/.git/":                "",
		"repo/.codex/config.toml":   "[mcp_servers.proj]\ncommand = \"p\"\n\n[agents.both]\nconfig_file = \"roles/both.toml\"\n",
		"repo/.codex/agents/r.toml": codexAgent("r", ""),
		"other/.git/":               "",
		"other/.codex/config.toml":  "[mcp_servers.evil]\ncommand = \"e\"\n\n[agents.evil]\nconfig_file = \"/evil.toml\"\n",
		"home/.codex/config.toml": "[mcp_servers.user]\ncommand = \"u\"\n\n[agents]\nmax_threads = 4\n\n[agents.both]\nconfig_file = \"/user/both.toml\"\n\n" +
			"[agents.mine]\ndescription = \"d\"\nconfig_file = \"/abs/mine.toml\"\n\n[agents.plain]\ndescription = \"no file\"\n\n[projects.\"" + repo + "\"]\ntrust_level = \"trusted\"\n",
		"home/.codex/agents/u.toml": codexAgent("u", ""),
	})
	env := host.Env{Home: home, Root: j(base, "root"), Limits: document.DefaultLimits, Getenv: func(string) string { return "" }}
	l, err := readLayers(env, repo)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{j(repo, ".codex", "agents"), j(home, ".codex", "agents")}; !slices.Equal(l.agents, want) {
		t.Errorf("agents %q, want %q", l.agents, want)
	}
	if want := []string{"proj", "user"}; !slices.Equal(l.servers, want) {
		t.Errorf("servers %q, want %q", l.servers, want)
	}
	// Roles declared in config.toml: the project's over the user's, a
	// relative config_file from the declaring file's folder, a
	// declaration without a file passed over.
	projCfg, userCfg := j(repo, ".codex", "config.toml"), j(home, ".codex", "config.toml")
	if want := map[string]role{
		"both":  {file: j(repo, ".codex", "roles", "both.toml"), decl: projCfg + " [agents.both]", rank: 0},
		"mine":  {file: "/abs/mine.toml", decl: userCfg + " [agents.mine]", rank: 1},
		"plain": {decl: userCfg + " [agents.plain]", rank: 1},
	}; !maps.Equal(l.roles, want) {
		t.Errorf("roles %+v, want %+v", l.roles, want)
	}
	l, err = readLayers(env, other)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{j(home, ".codex", "agents")}; !slices.Equal(l.agents, want) || !slices.Equal(l.servers, []string{"user"}) || l.roles["evil"] != (role{}) || l.roles["both"].file != "/user/both.toml" || l.roles["both"].rank != 0 {
		t.Errorf("an untrusted project: agents %q servers %q roles %+v", l.agents, l.servers, l.roles)
	}
	// The session's servers are tools of every child.
	se := &session{sandbox: "read-only", servers: l.servers}
	_, c := callerCatalog(t)
	def, _ := resolve(c, nil, "github")
	tr := translate(call{Call: agent.Call{Host: Name, Type: "github", Paths: []string{"/w"}}, Session: se}, def, "")
	if got := hosttest.Canonical(t, tr.Child["tools"]); got != `["sandbox:read-only","mcp__user","mcp__github"]` {
		t.Errorf("tools %s", got)
	}
}
