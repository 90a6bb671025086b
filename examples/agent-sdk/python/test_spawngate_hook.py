"""Tests for spawngate_hook.py against stand-ins for spawngate: a shell script
for the command and an http.server for ``spawngate serve``, one per kind of
answer. Standard library only:

    python3 -m unittest discover -s examples/agent-sdk/python -v

The hook inputs are the ones the real TypeScript SDK (0.3.328) gave its
callback (../payloads); the Python SDK's client sends the same. With
SPAWNGATE_BIN set to a built spawngate, the last tests also run the real
command on them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import http.server
import json
import os
import shutil
import socket
import stat
import sys
import tempfile
import threading
import time
import types
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import spawngate_hook  # noqa: E402
from spawngate_hook import SPAWN_TOOLS, judge, program_field, read_answer, spawngate_hook as make_hook  # noqa: E402

PAYLOADS = HERE.parent / "payloads"


def payload(name: str) -> dict:
    return json.loads((PAYLOADS / name).read_text())


READER = payload("agent-sdkreader.json")
WRITER = payload("agent-sdkwriter.json")
SKILL = payload("skill-forkw.json")
EXPANSION = payload("expansion-forkw.json")


@dataclasses.dataclass
class AgentDefinition:
    """The SDK's AgentDefinition (types.py, 0.2.143), for the conversion."""

    description: str
    prompt: str
    tools: list[str] | None = None
    disallowedTools: list[str] | None = None  # noqa: N815
    model: str | None = None
    skills: list[str] | None = None
    memory: str | None = None
    mcpServers: list | None = None  # noqa: N815
    initialPrompt: str | None = None  # noqa: N815
    maxTurns: int | None = None  # noqa: N815
    background: bool | None = None
    effort: str | int | None = None
    permissionMode: str | None = None  # noqa: N815


AGENTS = {
    "sdkreader": AgentDefinition(description="Reads files.", prompt="SDK reader.", tools=["Read", "Grep"], model="sonnet"),
    "sdkwriter": AgentDefinition(description="Writes files.", prompt="SDK writer.", tools=["Read", "Write"], model="sonnet"),
}
# What the SDK sends for AGENTS in its initialize request: asdict, None left out.
AGENTS_SENT = {
    "sdkreader": {"description": "Reads files.", "prompt": "SDK reader.", "tools": ["Read", "Grep"], "model": "sonnet"},
    "sdkwriter": {"description": "Writes files.", "prompt": "SDK writer.", "tools": ["Read", "Write"], "model": "sonnet"},
}
PROJECT = "/home/dev/repo"

DENY_REASON = 'spawngate refused this sub-agent: sdkwriter\n- tools.write /tools/1: tool "Write" writes'
DENY_ANSWER = json.dumps(
    {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": DENY_REASON}}
)


class Fakes(unittest.TestCase):
    """A folder of stand-ins for spawngate, made per test."""

    def setUp(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="spawngate-glue-"))
        self.addCleanup(shutil.rmtree, self.dir, True)

    def fake(self, name: str, body: str) -> str:
        path = self.dir / name
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
        return str(path)

    def assertDenied(self, out: dict, pattern: str) -> None:  # noqa: N802
        self.assertEqual(list(out), ["hookSpecificOutput"], out)
        specific = out["hookSpecificOutput"]
        self.assertEqual(specific["hookEventName"], "PreToolUse")
        self.assertEqual(specific["permissionDecision"], "deny")
        self.assertRegex(specific["permissionDecisionReason"], pattern)


class CommandTest(Fakes):
    """spawngate as a command: each answer it can give, and each failure."""

    def run_glue(self, bin: str, hook_input: dict = WRITER, **options) -> dict:
        options.setdefault("policy", "/etc/spawngate/sdk.yaml")
        options.setdefault("cwd", PROJECT)
        return judge(hook_input, AGENTS, bin=bin, **options)

    def test_pass_is_no_opinion_and_spawngate_gets_the_input_and_the_definitions(self) -> None:
        bin = self.fake("pass", f'printf "%s\\n" "$@" > "{self.dir}/args"; cat > "{self.dir}/stdin"')
        out = self.run_glue(bin, READER, setting_sources=["project"], add_dirs=[Path("/srv/shared")])
        self.assertEqual(out, {})
        self.assertEqual(
            (self.dir / "args").read_text().split(),
            ["hook", "claude-code", "--policy", "/etc/spawngate/sdk.yaml", "--timeout", "20000ms"],
        )
        sent = json.loads((self.dir / "stdin").read_text())
        self.assertEqual(
            sent,
            {
                **READER,
                "spawngate_program": {
                    "agents": AGENTS_SENT,
                    "project": PROJECT,
                    "setting_sources": ["project"],
                    "additional_directories": ["/srv/shared"],
                },
            },
        )

    def test_pass_with_plain_dict_definitions_and_no_cwd(self) -> None:
        bin = self.fake("pass", f'cat > "{self.dir}/stdin"')
        self.assertEqual(judge(READER, AGENTS_SENT, bin=bin, policy="/p.yaml"), {})
        sent = json.loads((self.dir / "stdin").read_text())
        self.assertEqual(sent["spawngate_program"], {"agents": AGENTS_SENT, "project": os.getcwd()})

    def test_a_spawngate_program_in_the_input_is_replaced(self) -> None:
        bin = self.fake("pass", f'cat > "{self.dir}/stdin"')
        forged = {**READER, "spawngate_program": {"agents": {"sdkreader": {"description": "x", "prompt": "x"}}}}
        self.run_glue(bin, forged)
        self.assertEqual(json.loads((self.dir / "stdin").read_text())["spawngate_program"]["agents"], AGENTS_SENT)

    def test_deny_is_the_sdk_deny_with_spawngate_reason(self) -> None:
        bin = self.fake("deny", f"cat >/dev/null; printf '%s\\n' '{DENY_ANSWER}'")
        self.assertEqual(self.run_glue(bin), json.loads(DENY_ANSWER))

    def test_deny_on_a_skill_call(self) -> None:
        bin = self.fake("deny", f"cat >/dev/null; printf '%s\\n' '{DENY_ANSWER}'")
        self.assertEqual(self.run_glue(bin, SKILL), json.loads(DENY_ANSWER))

    def test_deny_on_prompt_expansion_is_the_top_level_block(self) -> None:
        bin = self.fake("block", """cat >/dev/null; echo '{"decision":"block","reason":"no fork-writer"}'""")
        self.assertEqual(self.run_glue(bin, EXPANSION), {"decision": "block", "reason": "no fork-writer"})

    def test_exit_2_is_a_deny_with_spawngate_line(self) -> None:
        bin = self.fake("exit2", "cat >/dev/null; echo 'spawngate: --policy /p.yaml: no such file' >&2; exit 2")
        self.assertDenied(
            self.run_glue(bin),
            r"^spawngate could not judge this sub-agent, so it is refused: spawngate: --policy /p.yaml: no such file$",
        )

    def test_exit_2_on_prompt_expansion_is_a_block(self) -> None:
        out = self.run_glue(self.fake("exit2", "exit 2"), EXPANSION)
        self.assertEqual(out["decision"], "block")
        self.assertRegex(out["reason"], r"could not judge.*exited 2")

    def test_missing_binary_is_a_deny(self) -> None:
        self.assertDenied(self.run_glue(str(self.dir / "no-such-spawngate")), r"could not judge.*No such file")

    def test_a_file_that_is_not_executable_is_a_deny(self) -> None:
        path = self.dir / "not-exec"
        path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
        self.assertDenied(self.run_glue(str(path)), r"could not judge.*Permission denied")

    def test_timeout_is_a_deny(self) -> None:
        bin = self.fake("slow", "exec sleep 30")
        started = time.monotonic()
        self.assertDenied(self.run_glue(bin, timeout=0.3), r"could not judge.*no answer within 0.6 s")
        self.assertLess(time.monotonic() - started, 5)

    def test_garbage_on_stdout_is_a_deny(self) -> None:
        bin = self.fake("garbage", "cat >/dev/null; echo 'panic: runtime error'")
        self.assertDenied(self.run_glue(bin), r"could not judge.*not JSON: panic: runtime error")

    def test_an_allow_or_any_json_that_is_not_a_refusal_is_a_deny(self) -> None:
        for answer in [
            '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}',
            "{}",
            "[]",
            "null",
            '{"decision":"approve"}',
        ]:
            with self.subTest(answer=answer):
                bin = self.fake("allow", f"cat >/dev/null; echo '{answer}'")
                self.assertDenied(self.run_glue(bin), r"could not judge.*neither empty nor a refusal")

    def test_exit_1_is_a_deny(self) -> None:
        bin = self.fake("exit1", "cat >/dev/null; echo boom >&2; exit 1")
        self.assertDenied(self.run_glue(bin), r"could not judge.*exited 1: boom")

    def test_a_crash_or_another_exit_code_is_a_deny(self) -> None:
        self.assertDenied(self.run_glue(self.fake("killed", "cat >/dev/null; kill -9 $$")), r"killed by SIGKILL")
        self.assertDenied(self.run_glue(self.fake("exit3", "exit 3")), r"exited 3")

    def test_an_answer_larger_than_1_mib_is_a_deny(self) -> None:
        bin = self.fake("huge", "cat >/dev/null; head -c 2000000 /dev/zero | tr '\\0' ' '")
        self.assertDenied(self.run_glue(bin), r"more than 1048576 bytes")

    def test_wrong_options_are_a_deny_from_judge(self) -> None:
        self.assertDenied(judge(READER, AGENTS), r"give policy .* or server")
        self.assertDenied(judge(READER, {"x": object()}, policy="/p.yaml"), r"neither an AgentDefinition nor a dict")
        self.assertDenied(judge(READER, {"x": {"tools": {1, 2}}}, policy="/p.yaml"), r"not JSON serializable")

    def test_read_answer(self) -> None:
        self.assertIsNone(read_answer(""))
        self.assertIsNone(read_answer(" \n"))
        self.assertEqual(read_answer(DENY_ANSWER + "\n"), DENY_REASON)
        self.assertEqual(read_answer('{"decision":"block"}'), "spawngate refused this sub-agent")

    def test_program_field(self) -> None:
        self.assertEqual(program_field(AGENTS, Path("/home/dev/repo/")), {"agents": AGENTS_SENT, "project": PROJECT})
        self.assertEqual(program_field(None, "rel")["project"], os.path.abspath("rel"))


class HookTest(Fakes):
    """The async callback the SDK calls, and the matchers."""

    def test_the_callback_passes_and_denies_under_asyncio(self) -> None:
        bin = self.fake("pass", "cat >/dev/null")
        hook = make_hook(AGENTS, bin=bin, policy="/p.yaml", cwd=PROJECT)
        self.assertEqual(asyncio.run(hook(READER, READER["tool_use_id"], {"signal": None})), {})
        hook = make_hook(AGENTS, bin=self.fake("deny", f"cat >/dev/null; printf '%s\\n' '{DENY_ANSWER}'"), policy="/p.yaml")
        self.assertEqual(asyncio.run(hook(WRITER, None, {"signal": None})), json.loads(DENY_ANSWER))

    def test_the_callback_never_raises(self) -> None:
        hook = make_hook(AGENTS, bin=self.fake("pass", "cat >/dev/null"), policy="/p.yaml")
        self.assertDenied(asyncio.run(hook({**READER, "tool_input": {"x": {1}}}, None, {"signal": None})), r"not JSON serializable")
        out = asyncio.run(hook(["not", "a", "dict"], None, {"signal": None}))
        self.assertEqual(out["decision"], "block")

        def explode(_input):
            raise RuntimeError("boom")

        original = spawngate_hook._in_thread

        async def broken(fn, *args):
            return explode(*args)

        spawngate_hook._in_thread = broken
        try:
            self.assertDenied(asyncio.run(hook(READER, None, {"signal": None})), r"could not judge.*boom")
        finally:
            spawngate_hook._in_thread = original

    def test_wrong_options_raise_when_the_program_starts(self) -> None:
        with self.assertRaisesRegex(ValueError, "give policy"):
            make_hook(AGENTS)
        with self.assertRaisesRegex(ValueError, "timeout"):
            make_hook(AGENTS, policy="/p.yaml", timeout=0)
        with self.assertRaisesRegex(TypeError, "neither"):
            make_hook({"x": 1}, policy="/p.yaml")

    def test_spawngate_hooks_covers_every_spawn_tool_and_prompt_expansion(self) -> None:
        # A stand-in for the SDK's HookMatcher (types.py, 0.2.143).
        @dataclasses.dataclass
        class HookMatcher:
            matcher: str | None = None
            hooks: list = dataclasses.field(default_factory=list)
            timeout: float | None = None

        sdk = types.ModuleType("claude_agent_sdk")
        sdk.HookMatcher = HookMatcher
        sys.modules["claude_agent_sdk"] = sdk
        self.addCleanup(sys.modules.pop, "claude_agent_sdk", None)
        hooks = spawngate_hook.spawngate_hooks(AGENTS, policy="/p.yaml")
        self.assertEqual(sorted(hooks), ["PreToolUse", "UserPromptExpansion"])
        self.assertEqual(hooks["PreToolUse"][0].matcher, "Agent|Task|Skill|Workflow")
        self.assertEqual(SPAWN_TOOLS, "Agent|Task|Skill|Workflow")
        self.assertIsNone(hooks["UserPromptExpansion"][0].matcher)
        for matchers in hooks.values():
            self.assertEqual(matchers[0].timeout, 30)  # above the hook's own 25 s wait
            self.assertTrue(asyncio.iscoroutinefunction(matchers[0].hooks[0]))

    def test_the_module_imports_nothing_from_the_sdk(self) -> None:
        source = (HERE / "spawngate_hook.py").read_text()
        top_level = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
        self.assertFalse([line for line in top_level if "claude_agent_sdk" in line], top_level)


class _Handler(http.server.BaseHTTPRequestHandler):
    """Answers with the server's `reply` (status, headers, body) and records each request."""

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.seen.append({"path": self.path, "headers": dict(self.headers), "body": body})
        status, headers, answer = self.server.reply
        if status is None:
            time.sleep(3)  # no answer in time
            return
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args) -> None:
        pass


class ServerTest(unittest.TestCase):
    """spawngate serve: 200 and an empty body passes; every other answer denies."""

    def setUp(self) -> None:
        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.srv.daemon_threads = True
        self.srv.block_on_close = False
        self.srv.seen = []
        self.srv.reply = (200, {}, b"")
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.addCleanup(self.srv.server_close)
        self.addCleanup(self.srv.shutdown)
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}"

    def run_glue(self, hook_input: dict = WRITER, **options) -> dict:
        options.setdefault("server", self.url)
        return judge(hook_input, AGENTS, cwd=PROJECT, **options)

    def test_pass_and_the_request(self) -> None:
        self.assertEqual(self.run_glue(READER, server=self.url + "/", token="s3cret"), {})
        [req] = self.srv.seen
        self.assertEqual(req["path"], "/v1/hooks/claude-code")
        self.assertEqual(req["headers"]["Authorization"], "Bearer s3cret")
        self.assertEqual(req["headers"]["Content-Type"], "application/json")
        self.assertEqual(json.loads(req["body"]), {**READER, "spawngate_program": {"agents": AGENTS_SENT, "project": PROJECT}})

    def test_deny(self) -> None:
        self.srv.reply = (200, {"Content-Type": "application/json"}, DENY_ANSWER.encode() + b"\n")
        self.assertEqual(self.run_glue(), json.loads(DENY_ANSWER))

    def test_every_status_but_200_is_a_deny(self) -> None:
        for status in (204, 302, 401, 500, 503):
            with self.subTest(status=status):
                headers = {"Location": "http://127.0.0.1:1/"} if status == 302 else {}
                self.srv.reply = (status, headers, b"")
                CommandTest.assertDenied(self, self.run_glue(), rf"could not judge.*answered HTTP {status}")

    def test_garbage_in_a_200_is_a_deny(self) -> None:
        self.srv.reply = (200, {}, b"<html>proxy</html>")
        CommandTest.assertDenied(self, self.run_glue(), r"not JSON")

    def test_a_refused_connection_is_a_deny(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        CommandTest.assertDenied(self, self.run_glue(server=f"http://127.0.0.1:{port}"), r"could not judge.*refused")

    def test_no_answer_in_time_is_a_deny(self) -> None:
        self.srv.reply = (None, {}, b"")
        CommandTest.assertDenied(self, self.run_glue(timeout=0.2), r"could not judge.*timed out")


@unittest.skipUnless(os.environ.get("SPAWNGATE_BIN"), "set SPAWNGATE_BIN to a built spawngate")
class RealSpawngateTest(Fakes):
    """The real command on the recorded payloads."""

    def test_the_program_definitions_are_judged(self) -> None:
        project = self.dir / "repo"
        (project / ".git").mkdir(parents=True)
        (project / ".claude/skills/forkw").mkdir(parents=True)
        (project / ".claude/skills/forkw/SKILL.md").write_text(
            "---\nname: forkw\ndescription: writes\ncontext: fork\nagent: sdkwriter\n---\nWrite.\n"
        )
        policy_dir = Path(tempfile.mkdtemp(prefix="spawngate-policy-"))
        self.addCleanup(shutil.rmtree, policy_dir, True)
        policy = policy_dir / "policy.yaml"
        policy.write_text(
            f"allowed_tools: [Read, Grep, Glob]\nworkspace_root: {project}\nbudget_cap_tokens: 200000\nallowed_models: [sonnet, haiku]\n"
        )
        options = {"bin": os.environ["SPAWNGATE_BIN"], "policy": str(policy), "cwd": project}

        def at(p: dict) -> dict:
            return {**p, "cwd": str(project)}

        self.assertEqual(judge(at(READER), AGENTS, **options), {})
        self.assertDenied(judge(at(WRITER), AGENTS, **options), r"sdkwriter[\s\S]*Write")
        self.assertDenied(judge(at(SKILL), AGENTS, **options), r"sdkwriter[\s\S]*Write")
        out = judge(at(EXPANSION), AGENTS, **options)
        self.assertEqual(out["decision"], "block", out)
        self.assertRegex(out["reason"], r"sdkwriter")
        unknown = {**at(READER), "tool_input": {**READER["tool_input"], "subagent_type": "nosuch"}}
        self.assertDenied(judge(unknown, AGENTS, **options), r"nosuch")


if __name__ == "__main__":
    unittest.main()
