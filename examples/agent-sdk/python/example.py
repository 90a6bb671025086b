"""An Agent SDK program whose sub-agents spawngate judges before they start.

    pip install claude-agent-sdk
    SPAWNGATE_POLICY=/etc/spawngate/sdk.yaml python example.py "Read README.md with sdkreader"
    SPAWNGATE_SERVER=http://127.0.0.1:8321 python example.py "..."     # spawngate serve instead

With the example policy (read-only tools), sdkreader may start and sdkwriter
never does: the model gets spawngate's reason as the Agent tool's error.
"""

import asyncio
import os
import sys

from claude_agent_sdk import AgentDefinition, AssistantMessage, ClaudeAgentOptions, ResultMessage, TextBlock, query

from spawngate_hook import spawngate_hooks

# One mapping for the SDK and for the gate: what spawngate judges is what
# the SDK hands the client.
AGENTS = {
    "sdkreader": AgentDefinition(
        description="Reads files and answers questions about them.",
        prompt="You read files. You never change them.",
        tools=["Read", "Grep", "Glob"],
        model="sonnet",
    ),
    "sdkwriter": AgentDefinition(
        description="Edits files.",
        prompt="You edit files as asked.",
        tools=["Read", "Edit", "Write"],
        model="sonnet",
    ),
}


async def main() -> None:
    cwd = os.environ.get("PROJECT_DIR", os.getcwd())
    options = ClaudeAgentOptions(
        cwd=cwd,
        agents=AGENTS,
        hooks=spawngate_hooks(
            AGENTS,
            cwd=cwd,
            policy=os.environ.get("SPAWNGATE_POLICY"),
            server=os.environ.get("SPAWNGATE_SERVER"),
            token=os.environ.get("SPAWNGATE_TOKEN"),
            bin=os.environ.get("SPAWNGATE_BIN", "spawngate"),
        ),
    )
    prompt = sys.argv[1] if len(sys.argv) > 1 else "Use the sdkreader agent to summarise README.md."
    async for message in query(prompt=prompt, options=options):
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, TextBlock):
                    print(block.text)
        elif isinstance(message, ResultMessage):
            print(f"[{message.subtype}]")


if __name__ == "__main__":
    asyncio.run(main())
