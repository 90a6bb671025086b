#!/usr/bin/env bash
# Installs the pinned Claude Agent SDK (TypeScript) that the SDK scenarios
# of the end-to-end suite in this folder drive, into a cache outside the
# clone, and prints the folder that holds its node_modules. The SDK ships
# the claude binary it drives as an optional dependency.
#
#   SPAWNGATE_E2E_SDK_VERSION  the version to install (default below)
#   XDG_CACHE_HOME             where the cache lives (default ~/.cache)
#
# Use: export SPAWNGATE_E2E_SDK="$(internal/e2e/claudecode/install-sdk.sh)"
set -euo pipefail

version="${SPAWNGATE_E2E_SDK_VERSION:-0.3.328}"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/spawngate/e2e/claude-agent-sdk-$version"
pkg="$dir/node_modules/@anthropic-ai/claude-agent-sdk/package.json"

installed() {
	[ -f "$pkg" ] && node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' "$pkg" "$version"
}

# A finished install is reused as it is; the version check also catches a
# folder left half-written by an interrupted run.
if installed; then
	printf '%s\n' "$dir"
	exit 0
fi

mkdir -p "$dir"
# npm's own progress goes to stderr so that stdout is the path alone.
npm install --prefix "$dir" --no-audit --no-fund --no-save \
	"@anthropic-ai/claude-agent-sdk@$version" >&2

if ! installed; then
	echo "install-sdk.sh: npm installed no @anthropic-ai/claude-agent-sdk@$version under $dir" >&2
	exit 1
fi
printf '%s\n' "$dir"
