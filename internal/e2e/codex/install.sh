#!/usr/bin/env bash
# Installs the pinned Codex CLI that the end-to-end suite in this folder
# drives, into a cache outside the clone so later runs (and later CI runs on
# the same machine) reuse it, and prints the path of its native binary.
#
#   SPAWNGATE_E2E_CODEX_VERSION  the version to install (default below)
#   XDG_CACHE_HOME               where the cache lives (default ~/.cache)
#
# Use: export SPAWNGATE_E2E_CODEX="$(internal/e2e/codex/install.sh)"
set -euo pipefail

version="${SPAWNGATE_E2E_CODEX_VERSION:-0.171.0}"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/spawngate/e2e/codex-$version"

# The npm package is a node launcher; the real client is a native binary in
# a per-platform optional dependency. Running the binary directly keeps node
# out of the process tree the hooks see (/proc/$PPID is Codex itself).
find_bin() {
	local b
	for b in "$dir"/node_modules/@openai/codex-*/vendor/*/bin/codex \
		"$dir"/node_modules/@openai/codex/node_modules/@openai/codex-*/vendor/*/bin/codex; do
		if [ -x "$b" ]; then
			printf '%s\n' "$b"
			return 0
		fi
	done
	return 1
}

# A finished install is reused as it is; the version check also catches a
# folder left half-written by an interrupted run.
if bin="$(find_bin)" && "$bin" --version 2>/dev/null | grep -qF "$version"; then
	printf '%s\n' "$bin"
	exit 0
fi

mkdir -p "$dir"
# npm's own progress goes to stderr so that stdout is the path alone.
npm install --prefix "$dir" --no-audit --no-fund --no-save \
	"@openai/codex@$version" >&2

if ! bin="$(find_bin)"; then
	echo "install.sh: npm installed no native codex binary under $dir/node_modules" >&2
	exit 1
fi
if ! "$bin" --version 2>/dev/null | grep -qF "$version"; then
	echo "install.sh: $bin does not report version $version" >&2
	exit 1
fi
printf '%s\n' "$bin"
