// Tests for spawngate.mjs against stand-ins for spawngate: a shell script
// for the command and a Node HTTP server for `spawngate serve`, one per
// kind of answer. Run: node --test examples/agent-sdk/typescript/
//
// With SPAWNGATE_BIN set to a built spawngate, the last test also runs the
// real command on an SDK-shaped payload.

import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { spawngateHooks, spawngateCallback, readAnswer, SPAWN_TOOLS } from "./spawngate.mjs";

const dir = mkdtempSync(path.join(tmpdir(), "spawngate-glue-"));
test.after(() => rmSync(dir, { recursive: true, force: true }));

// Hook inputs as the real SDK (0.3.328) gave its callback, paths aside.
const payloadDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "payloads");
const payload = (name) => JSON.parse(readFileSync(path.join(payloadDir, name), "utf8"));
const input = payload("agent-sdkwriter.json");
const skill = payload("skill-forkw.json");
const expansion = payload("expansion-forkw.json");
const agents = {
  sdkreader: { description: "Reads files.", prompt: "SDK reader.", tools: ["Read", "Grep"], model: "sonnet" },
  sdkwriter: { description: "Writes files.", prompt: "SDK writer.", tools: ["Read", "Write"], model: "sonnet" },
};

const DENY_REASON = "spawngate refused this sub-agent: sdkwriter\n- tools.write /tools/1: tool \"Write\" writes";
const denyAnswer = JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: DENY_REASON } });

/** Writes an executable stand-in for spawngate and returns its path. */
function fake(name, body) {
  const file = path.join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

/** Runs the PreToolUse callback spawngateHooks builds, as the SDK would. */
async function call(gate, hookInput = input, signal = new AbortController().signal) {
  const hooks = spawngateHooks({ agents, cwd: "/home/dev/repo", ...gate });
  const matcher = hookInput.hook_event_name === "PreToolUse" ? hooks.PreToolUse[0] : hooks.UserPromptExpansion[0];
  return matcher.hooks[0](hookInput, hookInput.tool_use_id, { signal });
}

/** Asserts a PreToolUse deny whose reason matches re. */
function assertDenied(out, re) {
  assert.equal(out.hookSpecificOutput?.hookEventName, "PreToolUse", JSON.stringify(out));
  assert.equal(out.hookSpecificOutput.permissionDecision, "deny");
  assert.match(out.hookSpecificOutput.permissionDecisionReason, re);
  assert.deepEqual(Object.keys(out), ["hookSpecificOutput"]);
}

test("the hooks cover every spawn tool and prompt expansion, and block when the callback fails", () => {
  const hooks = spawngateHooks({ agents, policy: "/etc/spawngate/sdk.yaml" });
  assert.deepEqual(Object.keys(hooks).sort(), ["PreToolUse", "UserPromptExpansion"]);
  assert.equal(hooks.PreToolUse[0].matcher, "Agent|Task|Skill|Workflow");
  assert.equal(SPAWN_TOOLS, "Agent|Task|Skill|Workflow");
  assert.equal(hooks.UserPromptExpansion[0].matcher, undefined);
  for (const m of [hooks.PreToolUse[0], hooks.UserPromptExpansion[0]]) {
    assert.equal(m.onFailure, "block");
    assert.equal(m.timeout, 30); // above the callback's own 25 s wait
  }
});

test("pass: exit 0 and no output is {} (no opinion, never allow), and spawngate gets the input plus the program's definitions", async () => {
  const bin = fake("pass", `printf '%s\\n' "$@" > "${dir}/pass.args"; cat > "${dir}/pass.stdin"`);
  const out = await call({ bin, policy: "/etc/spawngate/sdk.yaml", settingSources: ["project"], additionalDirectories: ["/srv/shared"] });
  assert.deepEqual(out, {});
  assert.deepEqual(readFileSync(path.join(dir, "pass.args"), "utf8").trim().split("\n"),
    ["hook", "claude-code", "--policy", "/etc/spawngate/sdk.yaml", "--timeout", "20000ms"]);
  const sent = JSON.parse(readFileSync(path.join(dir, "pass.stdin"), "utf8"));
  assert.deepEqual(sent, {
    ...input,
    spawngate_program: { agents, project: "/home/dev/repo", setting_sources: ["project"], additional_directories: ["/srv/shared"] },
  });
});

test("pass: the project is options.cwd resolved, else the program's folder; optional fields are left out", async () => {
  const bin = fake("pass2", `cat > "${dir}/pass2.stdin"`);
  const cb = spawngateCallback({ agents, bin, policy: "/p.yaml", cwd: "sub" });
  assert.deepEqual(await cb(input, input.tool_use_id, { signal: new AbortController().signal }), {});
  const sent = JSON.parse(readFileSync(path.join(dir, "pass2.stdin"), "utf8"));
  assert.deepEqual(sent.spawngate_program, { agents, project: path.resolve("sub") });
  const cb2 = spawngateCallback({ bin, policy: "/p.yaml" });
  await cb2(input, undefined, { signal: new AbortController().signal });
  assert.deepEqual(JSON.parse(readFileSync(path.join(dir, "pass2.stdin"), "utf8")).spawngate_program, { agents: {}, project: process.cwd() });
});

test("pass: a spawngate_program already in the input is replaced by the program's", async () => {
  const bin = fake("pass3", `cat > "${dir}/pass3.stdin"`);
  await call({ bin, policy: "/p.yaml" }, { ...input, spawngate_program: { agents: { sdkreader: { description: "x", prompt: "x" } } } });
  assert.deepEqual(JSON.parse(readFileSync(path.join(dir, "pass3.stdin"), "utf8")).spawngate_program.agents, agents);
});

test("deny: spawngate's refusal is the SDK's deny, with its reason", async () => {
  const bin = fake("deny", `cat >/dev/null; printf '%s\\n' '${denyAnswer}'`);
  const out = await call({ bin, policy: "/p.yaml" });
  assert.deepEqual(out, JSON.parse(denyAnswer));
});

test("deny on UserPromptExpansion: the top-level block, the form that event blocks on", async () => {
  const bin = fake("block", `cat >/dev/null; echo '{"decision":"block","reason":"no fork-writer"}'`);
  assert.deepEqual(await call({ bin, policy: "/p.yaml" }, expansion), { decision: "block", reason: "no fork-writer" });
});

test("exit 2 (could not judge) is a deny carrying spawngate's line", async () => {
  const bin = fake("exit2", `cat >/dev/null; echo 'spawngate: --policy /p.yaml: no such file' >&2; exit 2`);
  assertDenied(await call({ bin, policy: "/p.yaml" }), /^spawngate could not judge this sub-agent, so it is refused: spawngate: --policy \/p.yaml: no such file$/);
});

test("exit 2 on UserPromptExpansion is a block", async () => {
  const bin = fake("exit2b", `exit 2`);
  const out = await call({ bin, policy: "/p.yaml" }, expansion);
  assert.equal(out.decision, "block");
  assert.match(out.reason, /could not judge.*exited 2/);
});

test("a missing binary is a deny", async () => {
  assertDenied(await call({ bin: path.join(dir, "no-such-spawngate"), policy: "/p.yaml" }), /could not judge.*ENOENT/);
});

test("a file that is not executable is a deny", async () => {
  const file = path.join(dir, "not-exec");
  writeFileSync(file, "#!/bin/sh\nexit 0\n");
  chmodSync(file, 0o644);
  assertDenied(await call({ bin: file, policy: "/p.yaml" }), /could not judge.*EACCES/);
});

test("a timeout is a deny, and the process is killed", async () => {
  const bin = fake("slow", `echo $$ > "${dir}/slow.pid"; exec sleep 30`);
  const started = Date.now();
  const out = await call({ bin, policy: "/p.yaml", timeoutMs: 300 });
  assertDenied(out, /could not judge.*no answer within 600 ms/);
  assert.ok(Date.now() - started < 5000);
  const pid = Number(readFileSync(path.join(dir, "slow.pid"), "utf8"));
  await new Promise((r) => setTimeout(r, 100));
  assert.throws(() => process.kill(pid, 0), /ESRCH/);
});

test("the SDK cancelling the hook is a deny", async () => {
  const bin = fake("slow2", `exec sleep 30`);
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 100);
  assertDenied(await call({ bin, policy: "/p.yaml" }, input, ac.signal), /could not judge.*cancelled/);
});

test("garbage on stdout is a deny", async () => {
  const bin = fake("garbage", `cat >/dev/null; echo 'panic: runtime error'`);
  assertDenied(await call({ bin, policy: "/p.yaml" }), /could not judge.*not JSON: panic: runtime error/);
});

test("an allow, or any JSON that is not a refusal, is a deny", async () => {
  for (const answer of [
    '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}',
    "{}",
    "[]",
    "null",
    '{"decision":"approve"}',
  ]) {
    const bin = fake("allow", `cat >/dev/null; echo '${answer}'`);
    assertDenied(await call({ bin, policy: "/p.yaml" }), /could not judge.*neither empty nor a refusal/);
  }
});

test("exit 1 is a deny (Claude Code would read it as a non-blocking error)", async () => {
  const bin = fake("exit1", `cat >/dev/null; echo 'boom' >&2; exit 1`);
  assertDenied(await call({ bin, policy: "/p.yaml" }), /could not judge.*exited 1: boom/);
});

test("a crash (killed by a signal) or any other exit code is a deny", async () => {
  const bin = fake("killed", `cat >/dev/null; kill -9 $$`);
  assertDenied(await call({ bin, policy: "/p.yaml" }), /could not judge.*killed by SIGKILL/);
  const bin3 = fake("exit3", `exit 3`);
  assertDenied(await call({ bin: bin3, policy: "/p.yaml" }), /could not judge.*exited 3/);
});

test("an answer larger than 1 MiB is a deny", async () => {
  const bin = fake("huge", `cat >/dev/null; head -c 2000000 /dev/zero | tr '\\0' ' '`);
  assertDenied(await call({ bin, policy: "/p.yaml" }), /more than 1048576 bytes/);
});

test("setup errors throw when the program starts, not in the callback", () => {
  assert.throws(() => spawngateHooks({ agents }), /give policy .* or server/);
  assert.throws(() => spawngateHooks({ agents: [], policy: "/p.yaml" }), /agents must be/);
  assert.throws(() => spawngateHooks({ agents, policy: "/p.yaml", timeoutMs: 0 }), /timeoutMs/);
  const cyclic = { a: {} };
  cyclic.a.self = cyclic;
  assert.throws(() => spawngateHooks({ agents: cyclic, policy: "/p.yaml" }), /circular/);
});

test("the callback never throws, whatever the input", async () => {
  const bin = fake("pass4", `cat >/dev/null`);
  const cb = spawngateCallback({ agents, bin, policy: "/p.yaml" });
  const big = { ...input, tool_input: { n: 10n } }; // BigInt cannot be written as JSON
  assertDenied(await cb(big, undefined, { signal: new AbortController().signal }), /could not judge.*BigInt/);
  assert.deepEqual(await cb(undefined, undefined, undefined), {}); // the stand-in passes anything
});

test("readAnswer", () => {
  assert.equal(readAnswer(""), null);
  assert.equal(readAnswer(" \n"), null);
  assert.equal(readAnswer(denyAnswer + "\n"), DENY_REASON);
  assert.equal(readAnswer('{"decision":"block"}'), "spawngate refused this sub-agent");
  assert.throws(() => readAnswer("x"), /not JSON/);
});

// --- spawngate serve -------------------------------------------------------

/** Starts a stand-in for spawngate serve on 127.0.0.1; handler(req, body, res). */
async function serve(t, handler) {
  const seen = [];
  const srv = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      handler(req, body, res);
    });
  });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  t.after(() => new Promise((r) => { srv.closeAllConnections(); srv.close(r); }));
  return { url: `http://127.0.0.1:${srv.address().port}`, seen };
}

test("server pass: 200 and an empty body is {}; the request is the input plus the program's definitions, with the token", async (t) => {
  const s = await serve(t, (_q, _b, res) => res.writeHead(200).end());
  const out = await call({ server: s.url + "/", token: "s3cret" });
  assert.deepEqual(out, {});
  assert.equal(s.seen.length, 1);
  assert.equal(s.seen[0].method, "POST");
  assert.equal(s.seen[0].url, "/v1/hooks/claude-code");
  assert.equal(s.seen[0].headers.authorization, "Bearer s3cret");
  assert.equal(s.seen[0].headers["content-type"], "application/json");
  assert.deepEqual(JSON.parse(s.seen[0].body), { ...input, spawngate_program: { agents, project: "/home/dev/repo" } });
});

test("server deny: 200 with the deny answer", async (t) => {
  const s = await serve(t, (_q, _b, res) => res.writeHead(200, { "Content-Type": "application/json" }).end(denyAnswer + "\n"));
  assert.deepEqual(await call({ server: s.url }), JSON.parse(denyAnswer));
});

test("server: every status but 200 is a deny", async (t) => {
  for (const [status, body] of [[204, ""], [302, ""], [401, "no token"], [500, "internal"], [503, "busy"]]) {
    const s = await serve(t, (_q, _b, res) => res.writeHead(status, status === 302 ? { Location: "http://127.0.0.1:1/" } : {}).end(body));
    assertDenied(await call({ server: s.url }), new RegExp(`could not judge.*answered HTTP ${status}`));
  }
});

test("server: garbage in a 200 is a deny", async (t) => {
  const s = await serve(t, (_q, _b, res) => res.writeHead(200).end("<html>proxy</html>"));
  assertDenied(await call({ server: s.url }), /not JSON/);
});

test("server: a refused connection is a deny", async () => {
  // A port nothing listens on: take one, then close it.
  const tmp = createServer();
  await new Promise((r) => tmp.listen(0, "127.0.0.1", r));
  const port = tmp.address().port;
  await new Promise((r) => tmp.close(r));
  assertDenied(await call({ server: `http://127.0.0.1:${port}` }), /could not judge.*ECONNREFUSED/);
});

test("server: no answer in time is a deny", async (t) => {
  const s = await serve(t, () => {}); // never answers
  assertDenied(await call({ server: s.url, timeoutMs: 200 }), /could not judge.*no answer within 400 ms/);
});

// --- the real spawngate, when one is built ----------------------------------

test("the real spawngate judges the program's definitions", { skip: !process.env.SPAWNGATE_BIN && "set SPAWNGATE_BIN to a built spawngate" }, async () => {
  const project = mkdtempSync(path.join(tmpdir(), "spawngate-project-"));
  const policyDir = mkdtempSync(path.join(tmpdir(), "spawngate-policy-"));
  try {
    mkdirSync(path.join(project, ".git"));
    mkdirSync(path.join(project, ".claude/skills/forkw"), { recursive: true });
    writeFileSync(path.join(project, ".claude/skills/forkw/SKILL.md"), "---\nname: forkw\ndescription: writes\ncontext: fork\nagent: sdkwriter\n---\nWrite.\n");
    const policy = path.join(policyDir, "policy.yaml");
    writeFileSync(policy, `allowed_tools: [Read, Grep, Glob]\nworkspace_root: ${project}\nbudget_cap_tokens: 200000\nallowed_models: [sonnet, haiku]\n`);
    const gate = { agents, cwd: project, settingSources: ["project"], bin: process.env.SPAWNGATE_BIN, policy };
    const cb = spawngateCallback(gate);
    const at = (type) => ({ ...input, cwd: project, tool_input: { ...input.tool_input, subagent_type: type } });
    const signal = new AbortController().signal;
    assert.deepEqual(await cb(at("sdkreader"), undefined, { signal }), {});
    assertDenied(await cb(at("sdkwriter"), undefined, { signal }), /sdkwriter[\s\S]*Write/);
    assertDenied(await cb(at("nosuch"), undefined, { signal }), /nosuch/);
    assertDenied(await cb({ ...skill, cwd: project }, undefined, { signal }), /sdkwriter[\s\S]*Write/);
    const blocked = await cb({ ...expansion, cwd: project }, undefined, { signal });
    assert.equal(blocked.decision, "block", JSON.stringify(blocked));
    assert.match(blocked.reason, /sdkwriter/);
  } finally {
    rmSync(project, { recursive: true, force: true });
    rmSync(policyDir, { recursive: true, force: true });
  }
});
