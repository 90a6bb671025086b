#!/usr/bin/env bash
# Installs the pinned GitHub Copilot CLI that the end-to-end suite in this
# folder drives, into a cache outside the clone so later runs (and later CI
# runs on the same machine) reuse it, and prints the path of its binary.
#
#   SPAWNGATE_E2E_COPILOT_VERSION  the version to install (default below)
#   XDG_CACHE_HOME                 where the cache lives (default ~/.cache)
#
# Use: export SPAWNGATE_E2E_COPILOT="$(internal/e2e/copilot/install.sh)"
set -euo pipefail

version="${SPAWNGATE_E2E_COPILOT_VERSION:-1.0.102}"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/spawngate/e2e/copilot-$version"

# The npm package is a node loader; the real client is a native binary in a
# per-platform optional dependency (@github/copilot-linux-x64 and its
# siblings). Running that binary directly keeps node out of the process
# tree the hooks see; the node loader is the fallback where no native
# binary came with the install.
find_bin() {
	local b
	for b in "$dir"/node_modules/@github/copilot-*/copilot \
		"$dir"/node_modules/@github/copilot/node_modules/@github/copilot-*/copilot \
		"$dir"/node_modules/.bin/copilot; do
		if [ -x "$b" ] && "$b" --version 2>/dev/null | grep -qF "$version"; then
			printf '%s\n' "$b"
			return 0
		fi
	done
	return 1
}

# A finished install is reused as it is; the version check also catches a
# folder left half-written by an interrupted run.
if bin="$(find_bin)"; then
	printf '%s\n' "$bin"
	exit 0
fi

mkdir -p "$dir"
# npm's own progress goes to stderr so that stdout is the path alone.
npm install --prefix "$dir" --no-audit --no-fund --no-save \
	"@github/copilot@$version" >&2

if ! bin="$(find_bin)"; then
	echo "install.sh: npm installed no copilot binary under $dir/node_modules that reports version $version" >&2
	exit 1
fi
printf '%s\n' "$bin"
