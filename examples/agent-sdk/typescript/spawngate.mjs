// @ts-check
// spawngate for Claude Agent SDK programs (@anthropic-ai/claude-agent-sdk).
//
// A program defines its sub-agents in code (options.agents), and the SDK
// hands them to the `claude` binary over stdin: no hook that reads agent
// files can see them. The program's own PreToolUse callback can, because
// the program holds the definitions. This file is that callback: it sends
// spawngate the hook input exactly as the SDK gave it, plus the program's
// definitions in "spawngate_program", and turns spawngate's answer into
// the SDK's.
//
//   import { spawngateHooks } from "./spawngate.mjs";
//   query({ prompt, options: { cwd, agents,
//     hooks: spawngateHooks({ agents, cwd, policy: "/etc/spawngate/sdk.yaml" }) } });
//
// It never answers "allow": a pass returns {} (no opinion), so the
// program's permission rules and canUseTool still apply. Every other
// outcome, including spawngate missing, failing, crashing or taking too
// long, is a deny: a gate that cannot judge must not let a child through.
//
// Plain ESM with JSDoc types, so it runs on Node 18.14+ (the SDK's floor)
// with no build step and can be copied as one file; `// @ts-check` lets a
// TypeScript program type-check it against the SDK's own types. It imports
// nothing from the SDK at run time.

import { spawn } from "node:child_process";
import path from "node:path";

/**
 * @typedef {import("@anthropic-ai/claude-agent-sdk").AgentDefinition} AgentDefinition
 * @typedef {import("@anthropic-ai/claude-agent-sdk").HookCallback} HookCallback
 * @typedef {import("@anthropic-ai/claude-agent-sdk").HookCallbackMatcher} HookCallbackMatcher
 * @typedef {import("@anthropic-ai/claude-agent-sdk").HookEvent} HookEvent
 * @typedef {import("@anthropic-ai/claude-agent-sdk").HookJSONOutput} HookJSONOutput
 * @typedef {import("@anthropic-ai/claude-agent-sdk").SettingSource} SettingSource
 */

/**
 * What spawngateHooks needs. Give either `policy` (spawngate runs as a
 * command) or `server` (spawngate serve answers over HTTP).
 *
 * @typedef {object} SpawngateOptions
 * @property {Record<string, AgentDefinition>} [agents] the very object
 *   given to query() as options.agents; the definitions spawngate judges
 * @property {string} [cwd] options.cwd; relative is resolved as the SDK
 *   does; when left out, process.cwd() now, which is the SDK's default
 * @property {SettingSource[]} [settingSources] options.settingSources, when
 *   the program sets it: which agent folders the client reads
 * @property {string[]} [additionalDirectories] options.additionalDirectories
 * @property {string} [policy] the operator policy, for `spawngate hook
 *   claude-code --policy`; keep it where the session cannot write it
 * @property {string} [bin] the spawngate command ("spawngate" on PATH)
 * @property {string} [server] the base URL of `spawngate serve`, such as
 *   "http://127.0.0.1:8321"; the callback posts to /v1/hooks/claude-code
 * @property {string} [token] a bearer token for the server
 *   (its --auth-token-file)
 * @property {number} [timeoutMs] how long spawngate may take (default
 *   20000): passed as --timeout; the callback waits a little longer for
 *   the answer, then denies
 */

/** The tools through which Claude Code starts a sub-agent. */
export const SPAWN_TOOLS = "Agent|Task|Skill|Workflow";

/** The longest answer read from spawngate; more is not an answer. */
const MAX_ANSWER_BYTES = 1 << 20;

/**
 * The value for query()'s options.hooks: every spawn is judged by
 * spawngate before it starts.
 *
 * PreToolUse covers the Agent (formerly Task), Skill and Workflow tools;
 * UserPromptExpansion covers a prompt "/name" that expands a skill which
 * forks a sub-agent with no tool call at all. Both matchers set
 * onFailure: "block": should the callback ever throw, the SDK's default
 * ("continue") would let the spawn go ahead. Their SDK timeout is longer
 * than the callback's own, so spawngate's reason, not the SDK's, is what
 * the model reads; a timeout in the SDK denies too.
 *
 * To keep hooks of your own, concatenate the lists:
 * `{ ...gate, PreToolUse: [...gate.PreToolUse, mine] }`.
 *
 * Throws (when the program starts, never in the callback) if neither
 * policy nor server is given, or the agents cannot be written as JSON.
 *
 * @param {SpawngateOptions} options
 * @returns {Partial<Record<HookEvent, HookCallbackMatcher[]>>}
 */
export function spawngateHooks(options) {
  const callback = spawngateCallback(options);
  const { waitMs } = timeouts(options.timeoutMs);
  const timeout = Math.ceil((waitMs + 5000) / 1000);
  return {
    PreToolUse: [{ matcher: SPAWN_TOOLS, hooks: [callback], timeout, onFailure: "block" }],
    UserPromptExpansion: [{ hooks: [callback], timeout, onFailure: "block" }],
  };
}

/**
 * The hook callback alone, for a program that builds its own matchers
 * (give them onFailure: "block" and a timeout above the callback's).
 * It never throws and never allows: it returns {} or a deny.
 *
 * @param {SpawngateOptions} options
 * @returns {HookCallback}
 */
export function spawngateCallback(options) {
  const { agents = {}, cwd, settingSources, additionalDirectories, policy, bin = "spawngate", server, token } = options;
  if (!server && !policy) {
    throw new Error("spawngateHooks: give policy (for the spawngate command) or server (for spawngate serve)");
  }
  if (typeof agents !== "object" || agents === null || Array.isArray(agents)) {
    throw new Error("spawngateHooks: agents must be the object given as options.agents");
  }
  const { limitMs, waitMs } = timeouts(options.timeoutMs);

  // The definitions are copied now, as JSON: the SDK sent them to the
  // client when the query started, and a definition that cannot be
  // written as JSON is better found when the program starts than at
  // the first spawn.
  /** @type {Record<string, unknown>} */
  const program = { agents, project: path.resolve(cwd ?? process.cwd()) };
  if (settingSources !== undefined) program.setting_sources = settingSources;
  if (additionalDirectories !== undefined) program.additional_directories = additionalDirectories;
  const programJSON = JSON.parse(JSON.stringify(program));

  const ask = server
    ? (/** @type {string} */ body, /** @type {AbortSignal | undefined} */ signal) =>
        askServer(server, token, body, waitMs, signal)
    : (/** @type {string} */ body, /** @type {AbortSignal | undefined} */ signal) =>
        askCommand(bin, ["hook", "claude-code", "--policy", /** @type {string} */ (policy), "--timeout", `${limitMs}ms`], body, waitMs, signal);

  return async (input, _toolUseID, context) => {
    const event = /** @type {{hook_event_name?: unknown}} */ (input ?? {}).hook_event_name;
    try {
      // The input as the SDK gave it; ours replaces any spawngate_program
      // already there (Claude Code never writes one).
      const body = JSON.stringify({ ...input, spawngate_program: programJSON });
      const reason = readAnswer(await ask(body, context?.signal));
      return reason === null ? {} : deny(event, reason);
    } catch (err) {
      return deny(event, `spawngate could not judge this sub-agent, so it is refused: ${describe(err)}`);
    }
  };
}

/**
 * spawngate's own limit and how long the callback waits for it: a little
 * longer, so that spawngate's "timed out" (exit 2, with a reason) comes
 * first whenever spawngate is alive to give it.
 *
 * @param {number | undefined} timeoutMs
 */
function timeouts(timeoutMs = 20000) {
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new Error("spawngateHooks: timeoutMs must be a positive number of milliseconds");
  }
  const limitMs = Math.ceil(timeoutMs);
  return { limitMs, waitMs: limitMs + Math.min(5000, limitMs) };
}

/**
 * The SDK's deny in the form the event blocks on: PreToolUse reads
 * permissionDecision; every other event (UserPromptExpansion) the
 * top-level decision. A PreToolUse form on another event does not block.
 *
 * @param {unknown} event
 * @param {string} reason
 * @returns {HookJSONOutput}
 */
export function deny(event, reason) {
  if (event === "PreToolUse") {
    return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason } };
  }
  return { decision: "block", reason };
}

/**
 * spawngate's answer: null when it passes (nothing but white space),
 * the reason when it refuses. Anything else (another JSON document, an
 * "allow", not JSON) is not an answer this glue knows, so it throws and
 * the caller denies.
 *
 * @param {string} text
 * @returns {string | null}
 */
export function readAnswer(text) {
  if (text.trim() === "") return null;
  let answer;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new Error(`its answer is not JSON: ${excerpt(text)}`);
  }
  if (answer !== null && typeof answer === "object" && !Array.isArray(answer)) {
    const specific = answer.hookSpecificOutput;
    if (specific && typeof specific === "object" && specific.permissionDecision === "deny") {
      return nonEmpty(specific.permissionDecisionReason);
    }
    if (answer.decision === "block") return nonEmpty(answer.reason);
  }
  throw new Error(`its answer is neither empty nor a refusal: ${excerpt(text)}`);
}

/**
 * Runs spawngate with body on stdin. Resolves with its stdout when it
 * exits 0; rejects on anything else (exit 2 carries its reason on stderr).
 *
 * @param {string} bin
 * @param {string[]} args
 * @param {string} body
 * @param {number} waitMs
 * @param {AbortSignal | undefined} signal
 * @returns {Promise<string>}
 */
function askCommand(bin, args, body, waitMs, signal) {
  return new Promise((resolve, reject) => {
    /** @type {import("node:child_process").ChildProcessWithoutNullStreams} */
    let child;
    try {
      child = spawn(bin, args, { stdio: ["pipe", "pipe", "pipe"], windowsHide: true });
    } catch (err) {
      reject(err);
      return;
    }
    let settled = false;
    /** @param {() => void} settle */
    const finish = (settle) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      settle();
    };
    const timer = setTimeout(
      () => finish(() => reject(new Error(`${bin} gave no answer within ${waitMs} ms`))),
      waitMs,
    );
    const onAbort = () => finish(() => reject(new Error("the SDK cancelled the hook")));
    if (signal?.aborted) onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });

    const out = collect(child.stdout, () => finish(() => reject(new Error(`${bin} wrote more than ${MAX_ANSWER_BYTES} bytes`))));
    const errOut = collect(child.stderr, () => {});
    // A spawngate that exits before reading its input makes the write
    // fail (EPIPE); its exit code, not the pipe, says what happened.
    child.stdin.on("error", () => {});
    child.stdin.end(body);

    child.on("error", (err) => finish(() => reject(err))); // not found, not executable
    child.on("close", (code, sig) => {
      finish(() => {
        if (code === 0) {
          resolve(out());
        } else if (code === 2) {
          reject(new Error(firstLine(errOut()) || `${bin} exited 2`));
        } else {
          const why = sig ? `was killed by ${sig}` : `exited ${code}`;
          const line = firstLine(errOut());
          reject(new Error(`${bin} ${why}${line ? `: ${line}` : ""}`));
        }
      });
    });
  });
}

/**
 * Posts body to spawngate serve. Resolves with the body of a 200 answer;
 * rejects on every other status, a network error or no answer in time.
 *
 * @param {string} server
 * @param {string | undefined} token
 * @param {string} body
 * @param {number} waitMs
 * @param {AbortSignal | undefined} signal
 * @returns {Promise<string>}
 */
async function askServer(server, token, body, waitMs, signal) {
  const url = `${server.replace(/\/+$/, "")}/v1/hooks/claude-code`;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error(`${url} gave no answer within ${waitMs} ms`)), waitMs);
  const onAbort = () => abort.abort(new Error("the SDK cancelled the hook"));
  if (signal?.aborted) onAbort();
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    /** @type {Record<string, string>} */
    const headers = { "Content-Type": "application/json" };
    if (token) headers.Authorization = `Bearer ${token}`;
    // A redirect is not an answer: it is returned, not followed, and
    // fails the status check below.
    const res = await fetch(url, { method: "POST", headers, body, signal: abort.signal, redirect: "manual" });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${url} answered HTTP ${res.status}: ${excerpt(text)}`);
    if (text.length > MAX_ANSWER_BYTES) throw new Error(`${url} answered more than ${MAX_ANSWER_BYTES} bytes`);
    return text;
  } catch (err) {
    // fetch rejects with the abort's reason, or a bare "fetch failed"
    // whose cause (ECONNREFUSED, ...) is the useful part.
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : "";
    throw new Error(`${describe(err)}${cause}`);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * Gathers a stream up to MAX_ANSWER_BYTES; past that calls tooMuch.
 *
 * @param {import("node:stream").Readable} stream
 * @param {() => void} tooMuch
 * @returns {() => string}
 */
function collect(stream, tooMuch) {
  /** @type {Buffer[]} */
  const chunks = [];
  let size = 0;
  stream.on("data", (/** @type {Buffer} */ chunk) => {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) tooMuch();
    else chunks.push(chunk);
  });
  stream.on("error", () => {});
  return () => Buffer.concat(chunks).toString("utf8");
}

/** @param {unknown} reason */
function nonEmpty(reason) {
  return typeof reason === "string" && reason.trim() !== "" ? reason : "spawngate refused this sub-agent";
}

/** @param {unknown} err */
function describe(err) {
  return err instanceof Error ? err.message : String(err);
}

/** @param {string} text */
function firstLine(text) {
  return text.split("\n").map((l) => l.trim()).find((l) => l !== "") ?? "";
}

/** @param {string} text */
function excerpt(text) {
  const line = firstLine(text);
  return line.length > 200 ? `${line.slice(0, 200)}...` : line || "(empty)";
}
