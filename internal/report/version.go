package report

import "runtime/debug"

// stamped is the version a build names with -ldflags "-X
// github.com/spawngate/spawngate/internal/report.stamped=v1.2.3": the
// container image's, built without the history go build stamps from.
var stamped string

// Version is spawngate's version: the one the build was stamped with,
// else the module version go build recorded from the checkout (its tag,
// or a pseudo-version naming the commit), else "(devel)". It is the same
// for every run of one binary.
func Version() string {
	if stamped != "" {
		return stamped
	}
	info, ok := debug.ReadBuildInfo()
	if ok && info.Main.Path == "github.com/spawngate/spawngate" && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}
