// Package fakemodel is the scripted model every real-client suite under
// internal/e2e points its client at, in place of the provider's API.
//
// A suite cannot tell from the client's output alone whether a sub-agent
// really started; the model can, because every agent that runs asks it for
// turns. So the suites start a Server on 127.0.0.1, hand the client its URL
// as the provider's base URL, and read the recorded requests afterwards: a
// request whose system prompt carries the marker written into a
// definition proves that definition ran.
//
// What every suite shares lives here once:
//
//   - the server: 127.0.0.1:0 only, every request recorded whole, shut down
//     when the test ends;
//   - the script: a Script per agent answers its requests with a Turn (a
//     text, tool calls, or both); Scripts picks the main agent's, a
//     sub-agent's by the marker its system prompt carries, and answers the
//     client's side requests (titles, summaries, classifiers: anything
//     offered no tools) harmlessly;
//   - the host-neutral Request a suite asserts on: model, system prompt,
//     offered tools, the tool results the history holds.
//
// What differs per wire API is one small codec each, chosen by the suite:
// AnthropicMessages (Claude Code, the Agent SDK), OpenAIResponses (Codex),
// OpenAIChat (GitHub Copilot CLI) and GeminiAPI (Gemini CLI). A codec
// knows which paths are model turns, reads a request into a Request and
// writes a Turn back in its API's shape, streamed or not. A base-URL path prefix is kept (a suite may serve
// parallel runs under /s/NAME/...), because a codec matches a path's end.
//
// What one client alone does stays in its suite and comes in through Host:
// how it marks a sub-agent's request beyond the markers (Claude Code's
// cc_is_subagent line, Codex's x-openai-subagent header), and whatever it
// reads from Request.Header or Request.JSON (Codex's turn metadata, Claude
// Code's deferred tools).
package fakemodel
