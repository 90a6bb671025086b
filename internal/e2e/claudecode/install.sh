#!/usr/bin/env bash
# Installs the pinned Claude Code client that the end-to-end suite in this
# folder drives, into a cache outside the clone so later runs (and later CI
# runs on the same machine) reuse it, and prints the path of its binary.
#
#   SPAWNGATE_E2E_CLAUDE_VERSION  the version to install (default below)
#   XDG_CACHE_HOME                where the cache lives (default ~/.cache)
#
# Use: export SPAWNGATE_E2E_CLAUDE="$(internal/e2e/claudecode/install.sh)"
set -euo pipefail

version="${SPAWNGATE_E2E_CLAUDE_VERSION:-2.1.332}"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/spawngate/e2e/claude-code-$version"
bin="$dir/node_modules/@anthropic-ai/claude-code/bin/claude.exe"

# A finished install is reused as it is; the version check also catches a
# folder left half-written by an interrupted run.
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -qF "$version"; then
	printf '%s\n' "$bin"
	exit 0
fi

mkdir -p "$dir"
# npm's own progress goes to stderr so that stdout is the path alone.
npm install --prefix "$dir" --no-audit --no-fund --no-save \
	"@anthropic-ai/claude-code@$version" >&2

if [ ! -x "$bin" ]; then
	echo "install.sh: npm installed no executable at $bin" >&2
	exit 1
fi
if ! "$bin" --version 2>/dev/null | grep -qF "$version"; then
	echo "install.sh: $bin does not report version $version" >&2
	exit 1
fi
printf '%s\n' "$bin"
