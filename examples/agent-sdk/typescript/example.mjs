// @ts-check
// An Agent SDK program whose sub-agents spawngate judges before they start.
//
//   npm install @anthropic-ai/claude-agent-sdk
//   SPAWNGATE_POLICY=/etc/spawngate/sdk.yaml node example.mjs "Read README.md with sdkreader"
//   SPAWNGATE_SERVER=http://127.0.0.1:8321 node example.mjs "..."     # spawngate serve instead
//
// With the example policy (read-only tools), sdkreader may start and
// sdkwriter never does: the model gets spawngate's reason as the Agent
// tool's error.

import { query } from "@anthropic-ai/claude-agent-sdk";
import { spawngateHooks } from "./spawngate.mjs";

// One object for the SDK and for the gate: what spawngate judges is what
// the SDK hands the client.
/** @type {Record<string, import("@anthropic-ai/claude-agent-sdk").AgentDefinition>} */
const agents = {
  sdkreader: {
    description: "Reads files and answers questions about them.",
    prompt: "You read files. You never change them.",
    tools: ["Read", "Grep", "Glob"],
    model: "sonnet",
  },
  sdkwriter: {
    description: "Edits files.",
    prompt: "You edit files as asked.",
    tools: ["Read", "Edit", "Write"],
    model: "sonnet",
  },
};

const cwd = process.env.PROJECT_DIR ?? process.cwd();

const hooks = spawngateHooks({
  agents,
  cwd,
  policy: process.env.SPAWNGATE_POLICY,
  server: process.env.SPAWNGATE_SERVER,
  token: process.env.SPAWNGATE_TOKEN,
  bin: process.env.SPAWNGATE_BIN ?? "spawngate",
});

for await (const message of query({
  prompt: process.argv[2] ?? "Use the sdkreader agent to summarise README.md.",
  options: {
    cwd,
    agents,
    hooks,
    // The claude binary the SDK ships is used unless this names another.
    pathToClaudeCodeExecutable: process.env.CLAUDE_CODE_PATH,
  },
})) {
  if (message.type === "assistant") {
    for (const block of message.message.content) {
      if (block.type === "text") console.log(block.text);
    }
  } else if (message.type === "result") {
    console.log(`[${message.subtype}]`);
  }
}
