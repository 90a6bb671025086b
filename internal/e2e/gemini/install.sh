#!/usr/bin/env bash
# Installs the pinned Gemini CLI that the end-to-end suite in this folder
# drives, into a cache outside the clone so later runs (and later CI runs on
# the same machine) reuse it, and prints the path of its bundle.
#
#   SPAWNGATE_E2E_GEMINI_VERSION  the version to install (default below)
#   XDG_CACHE_HOME                where the cache lives (default ~/.cache)
#
# Use: export SPAWNGATE_E2E_GEMINI="$(internal/e2e/gemini/install.sh)"
#
# What it prints is bundle/gemini.js, not the npm .bin link: the suite runs
# it as `node BUNDLE`, with the node on PATH, exactly as the research ran
# it. The .bin launcher would do the same through a shebang, but naming the
# script keeps the process the hooks see (and which node runs it) plain.
set -euo pipefail

version="${SPAWNGATE_E2E_GEMINI_VERSION:-0.61.0}"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/spawngate/e2e/gemini-cli-$version"
bundle="$dir/node_modules/@google/gemini-cli/bundle/gemini.js"

# A finished install is one whose package says the version, with its bundle,
# and npm's record of a finished install (node_modules/.package-lock.json,
# written last): the check also catches a folder left half-written by an
# interrupted run.
finished() {
	[ -f "$bundle" ] && [ -f "$dir/node_modules/.package-lock.json" ] &&
		node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' \
			"$dir/node_modules/@google/gemini-cli/package.json" "$version" 2>/dev/null
}

if finished; then
	printf '%s\n' "$bundle"
	exit 0
fi

mkdir -p "$dir"
# npm's own progress goes to stderr so that stdout is the path alone.
npm install --prefix "$dir" --no-audit --no-fund --no-save \
	"@google/gemini-cli@$version" >&2

if ! finished; then
	echo "install.sh: npm installed no @google/gemini-cli $version bundle at $bundle" >&2
	exit 1
fi
printf '%s\n' "$bundle"
