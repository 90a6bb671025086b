# METADATA
# title: Paths must stay inside the workspace
# description: >-
#   Every path must be provably inside the workspace root of every policy
#   that applies; the root itself is inside, a sibling that only shares its
#   prefix is not, and the filesystem root, /, never is (not even under a
#   workspace root of /). A path is judged as written, with nothing
#   stripped, expanded or decoded, and anything a shell, Windows or a URL decoder could
#   read differently is an escape: whitespace and control characters,
#   non-ASCII (look-alikes of . and /), ~, $, backticks, %, glob characters,
#   backslashes, drive letters, URL schemes, a leading //, every . or ..
#   segment (even one that would normalize back inside), a segment ending in
#   a dot, Windows device names, and a relative path starting with - or @. Relative paths are
#   read against the plan's own workspace root. A child whose role has a
#   profile that sets workspace_root must also stay inside that root (its
#   relative paths are still read against the plan's own root). With
#   --resolve-paths, a path must also resolve on the real filesystem
#   (symlinks followed) to a place inside every resolved root; a path that
#   cannot be resolved is an escape.
# custom:
#   id: paths.escape
#   severity: critical
package spawngate.checks.paths_escape

import data.spawngate.lib

# A child without a profile: each path outside a policy's root.
deny contains lib.finding(i, sprintf("/paths/%d", [j]), message, sources) if {
	some path in escaping # the children that hold it, not every child
	some [i, j] in lib.path_places[path]
	lib.unprofiled[i]
	[message, sources] := judgement(path, roots)
}

# A child with a profile: each path outside a policy's root or the
# profile's.
deny contains lib.finding(i, sprintf("/paths/%d", [j]), message, sources) if {
	some i, role in lib.profiled
	paths := lib.children[i].paths
	is_array(paths)
	some j, path in paths
	[role, path] in escaping_in_profile
	[message, sources] := judgement(path, roots_in_profile[role])
}

# The requested paths not provably inside, each judged once: every
# requested path but those provably inside every root.
escaping := lib.requested_paths - inside

# The requested paths provably inside every root: plain, and naming a path
# that starts with every root's prefix (lib.root_prefixes: "/repo/ws/" and
# "/repo/ws/docs/" start with "/repo/ws/", "/repo/ws-evil/" does not),
# which is to say with common_prefix; never the filesystem root, whatever
# the root; with --resolve-paths, resolving inside every root too. It
# reads the plain paths and their names from lib.path_names rather than
# call plain(path) and named(path): it runs once per distinct path, and in
# OPA a call costs more than the work in it (a plan of distinct children
# spent most of its evaluation here).
inside := as_written if {
	not input.resolution
} else := {path |
	some path in as_written
	resolves_inside(path)
}

as_written := {path |
	some path, name in lib.path_names # no root is looked at when no path is asked for
	roots_sound
	name != "/"
	startswith(name, common_prefix)
}

# A path is contained when it is plain and the path it names starts with
# every root's prefix, and is not the filesystem root. This is the rule
# as_written follows, written plainly; test_as_written_is_contained holds
# the two equal.
contained(path) if {
	roots_sound
	plain(path)
	name := named(path)
	name != "/"
	every prefix in lib.root_prefixes {
		startswith(name, prefix)
	}
	resolves_inside(path)
}

# What the name of a path inside every root starts with: the longest of
# the roots' prefixes, when each of the others is a prefix of it. A name
# that starts with every prefix has them all as prefixes of itself, so
# they nest and it starts with the longest; a name that starts with the
# longest starts with each prefix of it. When the roots do not nest, no
# name is inside them all, and this is undefined. (Among prefixes that
# nest, the longest is also the greatest, as max compares strings.)
common_prefix := longest if {
	longest := max({prefix | some prefix in lib.root_prefixes})
	every prefix in lib.root_prefixes {
		startswith(longest, prefix)
	}
}

# Whether paths can be judged against the roots at all: some policy
# applies, each has a root, and none breaks the rules a path follows.
# (Decided once per evaluation, not once per path.)
roots_sound if {
	count(lib.policies) > 0
	count(lib.root_prefixes) == count(lib.policies)
	count(crooked_roots) == 0
}

# The workspace roots that break the rules a path follows, by policy. The
# schema refuses them already; this holds even if it did not, because a
# relative path read against /repo/ws/nul would otherwise pass where the
# absolute path it names, /repo/ws/nul/x, is refused.
crooked_roots := {source |
	some source, policy in lib.policies
	not plain(policy.workspace_root)
}

# The path a plain path names, with a slash appended: itself when absolute,
# else read against the plan's own root; a trailing slash counts for
# nothing. Under the root /repo/ws, "docs/" names "/repo/ws/docs/". (One
# expression: it runs once per distinct path, and in OPA a function call
# costs more than the work in it; the prefix by kind of path is built once.)
named(path) := concat("", [prefix_of[startswith(path, "/")], trim_suffix(path, "/"), "/"])

prefix_of := lib.path_prefix_of

# The path a plain path names, as a message shows it.
absolute(path) := {true: "/", false: trim_suffix(name, "/")}[name == "/"] if name := named(path)

# Whether a path lies inside a root by the same rule: the root itself or
# under root + "/".
within(path, root) if startswith(concat("", [trim_suffix(path, "/"), "/"]), concat("", [trim_suffix(root, "/"), "/"]))

# Without --resolve-paths there is nothing more to check. With it, the gate
# hands over every root resolved and every path resolved (symlinks followed
# on the longest existing prefix) or the reason it could not be.
resolves_inside(_) if not input.resolution

resolves_inside(path) if {
	every source, _ in lib.policies {
		input.resolution.roots[source]
	}
	resolved := input.resolution.paths[path].path
	every source, _ in lib.policies {
		within(resolved, input.resolution.roots[source])
	}
}

# The workspace root of every policy, by source.
roots := {source: policy.workspace_root | some source, policy in lib.policies}

# By profiled role: the roots of the policies, and the profile's when it
# sets one (else its root is the operator's, which is among them already).
roots_in_profile := {role: roots_for(role) | some role, _ in lib.profiles}

roots_for(role) := object.union(roots, {lib.profile_sources[role]: lib.profiles[role].workspace_root}) if {
	lib.profile_sets(role, "workspace_root")
} else := roots

# The paths of profiled roles that leave a policy's root or the profile's,
# each pair of role and path judged once.
escaping_in_profile := {[role, path] |
	some [role, path] in lib.profile_paths
	escapes_in_profile(role, path)
}

escapes_in_profile(_, path) if path in escaping

escapes_in_profile(role, path) if {
	lib.profile_sets(role, "workspace_root")
	not inside_profile_root(role, path)
}

# A path the policies' roots contain lies inside the profile's root by the
# same rule. (The operator policy's loader refuses a profile root outside
# the operator's own.) With --resolve-paths, the resolved path must lie
# inside the profile's root resolved, when the gate resolved it, else as
# written: a profile root that is or passes through a symlink then refuses
# the paths under it rather than guess.
inside_profile_root(role, path) if {
	root := lib.profiles[role].workspace_root
	plain(path)
	plain(root)
	startswith(named(path), prefix(root))
	resolves_inside_profile_root(role, path, root)
}

resolves_inside_profile_root(_, _, _) if not input.resolution

resolves_inside_profile_root(role, path, root) if {
	within(input.resolution.paths[path].path, object.get(input.resolution.roots, lib.profile_sources[role], root))
}

prefix(root) := concat("", [trim_suffix(root, "/"), "/"])

# The resolved roots a resolved path falls outside of (a profile's root as
# written when the gate did not resolve it).
resolved_refusing(path, r) := {source |
	some source, root in r
	not within(input.resolution.paths[path].path, object.get(input.resolution.roots, source, root))
}

resolved_roots(sources, r) := root_list([resolved_root(source, r) | some source in sort(sources)])

resolved_root(source, r) := sprintf("%q (%s, resolved)", [input.resolution.roots[source], lib.label(source)]) if {
	input.resolution.roots[source]
} else := sprintf("%q (%s, as written)", [r[source], lib.label(source)])

# A plain path is what the rules below leave: segments made of
# A-Z a-z 0-9 . _ - @, not ending in a dot, not naming a Windows device,
# separated by single slashes, one trailing slash allowed, at most 4096
# bytes, and a relative path not starting with '-' or '@' (lib.plain_path,
# which the facts of the paths follow). One match decides the common
# case; ambiguity() explains the others.
plain(path) if lib.plain_path(path)

plain_pattern := lib.plain_pattern

windows_device := lib.windows_device

# Why a path cannot be judged as plain text: the reason of the first row
# whose pattern matches, in this order. A path no row matches is made only
# of A-Z a-z 0-9 . _ - @ segments separated by single slashes.
ambiguities := [
	[`^$`, "is empty (it would mean the current directory)"],
	[`[\x00-\x20\x7f]`, "contains whitespace or a control character (a path is judged as written, never trimmed)"],
	[`[\x{2024}\x{2025}\x{2026}\x{FE52}\x{FF0E}\x{3002}\x{FF61}\x{2215}\x{2044}\x{FF0F}\x{29F8}\x{2571}\x{1735}\x{2AFB}\x{2216}\x{29F5}\x{29F9}\x{FE68}\x{FF3C}]`, "contains a Unicode look-alike of '.', '/' or '\\'"],
	[`[^\x00-\x7f]`, "contains a non-ASCII character"],
	[`~`, "contains '~' (home directory expansion)"],
	["[$`]", "contains '$' or '`' (variable or command expansion)"],
	[`%`, "contains '%' (percent-encoding such as %2e or %2f, or %VAR% expansion)"],
	[`[*?\[\]{}]`, "contains a glob character (* ? [ ] { })"],
	[`\\`, "contains a backslash (a Windows separator or an escape)"],
	[`^[A-Za-z]:`, "starts with a drive letter"],
	[`^[A-Za-z][A-Za-z0-9+.-]*:`, "starts with a URL scheme"],
	[`^//`, "starts with // (a network path on Windows and some POSIX systems)"],
	[`(^|/)\.\.(/|$)`, "has a '..' segment (refused even when it would normalize back inside: with symlinks, lexical normalization is unsafe)"],
	[`(^|/)\.+(/|$)`, "has a segment made only of dots (write the path in normalized form)"],
	[`[^/.]\.+(/|$)`, "has a segment ending in '.' (Windows drops trailing dots, so \"a.\" names \"a\")"],
	[windows_device, "names a Windows device (CON, PRN, AUX, NUL, COM1-9, LPT1-9)"],
	[`//`, "has an empty segment (//)"],
	[`^-`, "starts with '-' (a tool could read it as an option)"],
	[`^@`, "starts with '@' (many tools read @file as a file of arguments)"],
]

ambiguity(path) := "is longer than 4096 bytes" if {
	count(path) > 4096
} else := reasons[0] if {
	reasons := [reason | some [pattern, reason] in ambiguities; regex.match(pattern, path)]
	count(reasons) > 0
} else := sprintf("contains %q, which is outside A-Z a-z 0-9 . _ - @ and /", [regex.find_n(`[^A-Za-z0-9._@/-]`, path, 1)[0]]) if {
	regex.match(`[^A-Za-z0-9._@/-]`, path)
}

# The sources whose root (in r, by source) a plain path falls outside of.
refusing(path, r) := {source |
	some source, root in r
	not startswith(named(path), prefix(root))
}

# "the workspace root "/r" (operator policy)", or both roots, named.
roots_named(sources, r) := root_list([sprintf("%q (%s)", [r[source], lib.label(source)]) | some source in sort(sources)])

root_list(named) := sprintf("the workspace root %s", [named[0]]) if {
	count(named) == 1
} else := sprintf("the workspace roots %s", [concat(" and ", named)])

# A relative path, shown with the absolute path it was read as.
shown(path) := lib.show(path) if {
	startswith(path, "/")
} else := sprintf("%s (read as %q)", [lib.show(path), absolute(path)]) if {
	absolute(path)
} else := lib.show(path)

# Why a path is refused, and by which sources: r holds the roots that
# apply, by source. A path refused for what a root says names the sources
# of those roots; a path refused for what it is, or that cannot be
# resolved, names none.
judgement(path, r) := [sprintf("path %s %s", [lib.show(path), reason]), set()] if {
	not plain(path) # one match, where ambiguity() tries every row
	reason := ambiguity(path)
} else := [sprintf("path %s cannot be judged: %s is not a plain path", [lib.show(path), roots_named(crooked, r)]), crooked] if {
	crooked := {source | some source, root in r; not plain(root)}
	count(crooked) > 0
} else := [sprintf("path %s only shares a prefix with %s; it is outside", [shown(path), roots_named(sources, r)]), sources] if {
	sources := refusing(path, r)
	count(sources) > 0
	every source in sources {
		startswith(absolute(path), r[source])
	}
} else := [sprintf("path %s is outside %s", [shown(path), roots_named(sources, r)]), sources] if {
	sources := refusing(path, r)
	count(sources) > 0
} else := [sprintf("path %s names the filesystem root, which no child is given, whatever the workspace root", [shown(path)]), set()] if {
	absolute(path) == "/"
} else := [sprintf("path %s cannot be resolved on this machine: %s", [shown(path), input.resolution.paths[path].error]), set()] if {
	input.resolution.paths[path].error
} else := [sprintf("path %s resolves to %q, outside %s", [shown(path), input.resolution.paths[path].path, resolved_roots(sources, r)]), sources] if {
	sources := resolved_refusing(path, r)
	count(sources) > 0
} else := [sprintf("path %s cannot be judged: no policy applies", [lib.show(path)]), set()] if {
	count(lib.policies) == 0
} else := [sprintf("path %s was not resolved", [lib.show(path)]), set()]
