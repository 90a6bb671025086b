"""spawngate for Claude Agent SDK programs in Python (claude-agent-sdk).

A program defines its sub-agents in code (``ClaudeAgentOptions(agents=...)``)
and the SDK hands them to the ``claude`` binary over stdin: no hook that
reads agent files can see them. The program's own hook callback can,
because the program holds the definitions. This module is that callback:
it sends spawngate the hook input exactly as the SDK gave it, plus the
program's definitions in ``"spawngate_program"``, and turns spawngate's
answer into the SDK's::

    from spawngate_hook import spawngate_hooks

    options = ClaudeAgentOptions(
        cwd=project, agents=agents,
        hooks=spawngate_hooks(agents, cwd=project, policy="/etc/spawngate/sdk.yaml"),
    )

It never answers "allow": a pass is ``{}`` (no opinion), so the program's
permission rules and ``can_use_tool`` still apply. Every other outcome,
including spawngate missing, failing, crashing or taking too long, is a
deny: a gate that cannot judge must not let a child through.

The callback never raises. The Python SDK (0.2.143) turns a raising
callback into an error answer, and its ``HookMatcher`` has no ``onFailure``
to send, so the client's default for a failed hook applies: "continue",
which starts the child.

Only the standard library is used, and nothing is imported from the SDK at
import time (``spawngate_hooks`` imports ``HookMatcher`` when called), so
this file can be copied beside a program and tested without the SDK.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import signal
import subprocess
import urllib.error
import urllib.request
from typing import Any, Awaitable, Callable, Mapping, Sequence

__all__ = [
    "SPAWN_TOOLS",
    "deny",
    "judge",
    "program_field",
    "read_answer",
    "spawngate_hook",
    "spawngate_hooks",
]

#: The tools through which Claude Code starts a sub-agent.
SPAWN_TOOLS = "Agent|Task|Skill|Workflow"

#: The longest answer read from spawngate; more is not an answer.
MAX_ANSWER_BYTES = 1 << 20

#: How long spawngate may take by default, in seconds (its --timeout).
DEFAULT_TIMEOUT = 20.0

HookCallback = Callable[[Any, "str | None", Any], Awaitable[dict]]


class CouldNotJudge(Exception):
    """spawngate gave no answer this module can read: the spawn is denied."""


def program_field(
    agents: Mapping[str, Any] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    setting_sources: Sequence[str] | None = None,
    add_dirs: Sequence[str | os.PathLike[str]] | None = None,
) -> dict[str, Any]:
    """The "spawngate_program" field: what the program gave the SDK.

    ``agents`` is ``ClaudeAgentOptions.agents`` as given: values that are
    ``AgentDefinition`` dataclasses are written as the SDK writes them into
    its initialize request (``asdict``, fields that are None left out);
    plain dicts are taken as they are. ``cwd`` is ``ClaudeAgentOptions.cwd``
    (the process's folder when None, as for the SDK); ``setting_sources``
    and ``add_dirs`` are those options, sent only when given.

    Raises TypeError or ValueError for definitions that cannot be sent.
    """
    defs: dict[str, Any] = {}
    for name, definition in (agents or {}).items():
        if dataclasses.is_dataclass(definition) and not isinstance(definition, type):
            definition = {k: v for k, v in dataclasses.asdict(definition).items() if v is not None}
        elif not isinstance(definition, Mapping):
            raise TypeError(f"agent {name!r} is neither an AgentDefinition nor a dict")
        defs[str(name)] = dict(definition)
    field: dict[str, Any] = {
        "agents": defs,
        "project": os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd()),
    }
    if setting_sources is not None:
        field["setting_sources"] = list(setting_sources)
    if add_dirs is not None:
        field["additional_directories"] = [os.fspath(d) for d in add_dirs]
    # A copy, checked now: a definition that cannot be written as JSON is
    # better found when the program starts than at its first spawn.
    return json.loads(json.dumps(field))


def deny(event: Any, reason: str) -> dict[str, Any]:
    """The SDK's deny in the form the event blocks on.

    PreToolUse reads ``permissionDecision``; every other event
    (UserPromptExpansion) the top-level ``decision``. The PreToolUse form
    on another event does not block.
    """
    if event == "PreToolUse":
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    return {"decision": "block", "reason": reason}


def read_answer(text: str) -> str | None:
    """spawngate's answer: None when it passes (nothing but white space),
    the reason when it refuses.

    Anything else (another JSON document, an "allow", not JSON) is not an
    answer this module knows: CouldNotJudge, and the spawn is denied.
    """
    if text.strip() == "":
        return None
    try:
        answer = json.loads(text)
    except ValueError:
        raise CouldNotJudge(f"its answer is not JSON: {_excerpt(text)}") from None
    if isinstance(answer, dict):
        specific = answer.get("hookSpecificOutput")
        if isinstance(specific, dict) and specific.get("permissionDecision") == "deny":
            return _non_empty(specific.get("permissionDecisionReason"))
        if answer.get("decision") == "block":
            return _non_empty(answer.get("reason"))
    raise CouldNotJudge(f"its answer is neither empty nor a refusal: {_excerpt(text)}")


class _Gate:
    """The program's definitions and the way to reach spawngate, checked once."""

    def __init__(
        self,
        agents: Mapping[str, Any] | None = None,
        *,
        policy: str | os.PathLike[str] | None = None,
        bin: str = "spawngate",
        server: str | None = None,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        cwd: str | os.PathLike[str] | None = None,
        setting_sources: Sequence[str] | None = None,
        add_dirs: Sequence[str | os.PathLike[str]] | None = None,
    ) -> None:
        if not server and policy is None:
            raise ValueError("spawngate: give policy (for the spawngate command) or server (for spawngate serve)")
        if not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout <= 0:
            raise ValueError("spawngate: timeout must be a positive number of seconds")
        self.program = program_field(agents, cwd, setting_sources, add_dirs)
        self.policy = os.fspath(policy) if policy is not None else None
        self.bin, self.server, self.token = bin, server, token
        # spawngate's own limit, and how long to wait for it: a little
        # longer, so that spawngate's "timed out" (exit 2, with a reason)
        # comes first whenever spawngate is alive to give it.
        self.limit_ms = math.ceil(timeout * 1000)
        self.wait = (self.limit_ms + min(5000, self.limit_ms)) / 1000
        # The SDK's own timeout for the matcher, longer still: its timeout
        # denies too, but without spawngate's reason.
        self.matcher_timeout = math.ceil(self.wait + 5)

    def judge(self, input_data: Any) -> dict[str, Any]:
        event = input_data.get("hook_event_name") if isinstance(input_data, Mapping) else None
        try:
            # The input as the SDK gave it; ours replaces any
            # spawngate_program already there (Claude Code never writes one).
            payload = {**(input_data or {}), "spawngate_program": self.program}
            body = json.dumps(payload).encode()
            text = self._ask_server(body) if self.server else self._ask_command(body)
            reason = read_answer(text)
        except Exception as err:  # noqa: BLE001 - every failure is a deny
            return deny(event, f"spawngate could not judge this sub-agent, so it is refused: {_describe(err)}")
        return {} if reason is None else deny(event, reason)

    def _ask_command(self, body: bytes) -> str:
        args = [self.bin, "hook", "claude-code", "--policy", str(self.policy), "--timeout", f"{self.limit_ms}ms"]
        try:
            done = subprocess.run(args, input=body, capture_output=True, timeout=self.wait, check=False)
        except subprocess.TimeoutExpired:
            raise CouldNotJudge(f"{self.bin} gave no answer within {self.wait:g} s") from None
        if len(done.stdout) > MAX_ANSWER_BYTES:
            raise CouldNotJudge(f"{self.bin} wrote more than {MAX_ANSWER_BYTES} bytes")
        stderr = _first_line(done.stderr.decode("utf-8", "replace"))
        if done.returncode == 0:
            return done.stdout.decode("utf-8", "replace")
        if done.returncode == 2:
            raise CouldNotJudge(stderr or f"{self.bin} exited 2")
        if done.returncode < 0:
            why = f"was killed by {_signal_name(-done.returncode)}"
        else:
            why = f"exited {done.returncode}"
        raise CouldNotJudge(f"{self.bin} {why}" + (f": {stderr}" if stderr else ""))

    def _ask_server(self, body: bytes) -> str:
        url = str(self.server).rstrip("/") + "/v1/hooks/claude-code"
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with _OPENER.open(request, timeout=self.wait) as response:
                status = response.status
                text = response.read(MAX_ANSWER_BYTES + 1)
        except urllib.error.HTTPError as err:
            raise CouldNotJudge(f"{url} answered HTTP {err.code}: {_excerpt(_read(err))}") from None
        except (urllib.error.URLError, OSError) as err:
            why = err.reason if isinstance(err, urllib.error.URLError) else err
            raise CouldNotJudge(f"{url}: {why}") from None
        if status != 200:
            raise CouldNotJudge(f"{url} answered HTTP {status}: {_excerpt(text.decode('utf-8', 'replace'))}")
        if len(text) > MAX_ANSWER_BYTES:
            raise CouldNotJudge(f"{url} answered more than {MAX_ANSWER_BYTES} bytes")
        return text.decode("utf-8", "replace")


def judge(input_data: Any, agents: Mapping[str, Any] | None = None, **options: Any) -> dict[str, Any]:
    """Judges one hook input: returns ``{}`` (pass) or the SDK's deny.

    ``agents`` is ``ClaudeAgentOptions.agents`` as given; ``options`` are
    those of :func:`spawngate_hook`. Never raises: an option that is
    wrong, too, is a deny. A program should prefer :func:`spawngate_hook`,
    which checks its options once, when the program starts.
    """
    event = input_data.get("hook_event_name") if isinstance(input_data, Mapping) else None
    try:
        gate = _Gate(agents, **options)
    except Exception as err:  # noqa: BLE001 - every failure is a deny
        return deny(event, f"spawngate could not judge this sub-agent, so it is refused: {_describe(err)}")
    return gate.judge(input_data)


def spawngate_hook(agents: Mapping[str, Any] | None = None, **options: Any) -> HookCallback:
    """A claude_agent_sdk HookCallback that asks spawngate about each spawn.

    ``agents`` is the very mapping given as ``ClaudeAgentOptions.agents``.
    Options: ``policy`` (the operator policy, for ``spawngate hook
    claude-code --policy``; keep it where the session cannot write it) or
    ``server`` (the base URL of ``spawngate serve``; the hook posts to
    /v1/hooks/claude-code) with an optional bearer ``token``; ``bin`` (the
    spawngate command, "spawngate" on PATH); ``timeout`` (seconds spawngate
    may take, default 20, its --timeout; the hook waits a little longer,
    then denies); ``cwd``, ``setting_sources`` and ``add_dirs``, the
    ClaudeAgentOptions of those names.

    Raises ValueError or TypeError now, when the program starts, if the
    options are wrong; the callback itself never raises.
    """
    gate = _Gate(agents, **options)

    async def hook(input_data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        try:
            # spawngate blocks for up to the timeout: run it off the event
            # loop, which carries the SDK's other messages meanwhile.
            return await _in_thread(gate.judge, input_data)
        except Exception as err:  # noqa: BLE001 - a raising callback lets the spawn through
            event = input_data.get("hook_event_name") if isinstance(input_data, Mapping) else None
            return deny(event, f"spawngate could not judge this sub-agent, so it is refused: {_describe(err)}")

    hook.matcher_timeout = gate.matcher_timeout  # type: ignore[attr-defined]
    return hook


def spawngate_hooks(agents: Mapping[str, Any] | None = None, **options: Any) -> dict[str, list[Any]]:
    """The value for ``ClaudeAgentOptions.hooks``: every spawn is judged.

    PreToolUse covers the Agent (formerly Task), Skill and Workflow tools;
    UserPromptExpansion covers a prompt "/name" that expands a skill which
    forks a sub-agent with no tool call (the Python SDK's HookEvent type
    does not list that event yet; the client takes it all the same). The
    matchers' SDK timeout is above the hook's own, so spawngate's reason,
    not the SDK's, is what the model reads.

    To keep hooks of your own, add your matchers to these lists.
    """
    from claude_agent_sdk import HookMatcher  # only here: the module imports nothing from the SDK

    hook = spawngate_hook(agents, **options)
    timeout = hook.matcher_timeout  # type: ignore[attr-defined]
    return {
        "PreToolUse": [HookMatcher(matcher=SPAWN_TOOLS, hooks=[hook], timeout=timeout)],
        "UserPromptExpansion": [HookMatcher(hooks=[hook], timeout=timeout)],
    }


async def _in_thread(fn: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """Runs fn in a worker thread under the SDK's event loop: anyio (which
    the SDK runs on, over asyncio or trio) when it is there, else asyncio."""
    try:
        import anyio.to_thread
    except ImportError:
        import asyncio

        return await asyncio.to_thread(fn, *args)
    return await anyio.to_thread.run_sync(fn, *args)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is not an answer: it is not followed, and fails as HTTPError."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def _read(err: urllib.error.HTTPError) -> str:
    try:
        return err.read(4096).decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - only for the message
        return ""


def _non_empty(reason: Any) -> str:
    return reason if isinstance(reason, str) and reason.strip() else "spawngate refused this sub-agent"


def _describe(err: BaseException) -> str:
    return str(err) or type(err).__name__


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _excerpt(text: str) -> str:
    line = _first_line(text)
    return (line[:200] + "...") if len(line) > 200 else (line or "(empty)")
