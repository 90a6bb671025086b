package judge

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"runtime/debug"
	"sort"
	"sync"

	opaversion "github.com/open-policy-agent/opa/v1/version"

	"github.com/spawngate/spawngate/internal/report"
	"github.com/spawngate/spawngate/policy"
	"github.com/spawngate/spawngate/schemas"
)

// ChecksDigest is the SHA-256 of the embedded checks and schemas: the
// Rego modules that are evaluated and the JSON Schemas, each file by name
// and content, in name order. spawngate version prints it and the
// decision log records it, so an operator can tell which rules judged a
// decision.
func ChecksDigest() string {
	digestOnce.Do(func() {
		h := sha256.New()
		add := func(name string, data []byte) {
			h.Write([]byte(name))
			h.Write([]byte{0})
			h.Write(data)
			h.Write([]byte{0})
		}
		mods, err := policy.Modules()
		if err != nil {
			digest = "unknown"
			return
		}
		for _, m := range mods {
			add("policy/"+m.Name, []byte(m.Source))
		}
		names, _ := fs.Glob(schemas.FS, "*.schema.json")
		sort.Strings(names)
		for _, n := range names {
			data, _ := schemas.FS.ReadFile(n)
			add("schemas/"+n, data)
		}
		digest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	})
	return digest
}

var (
	digestOnce sync.Once
	digest     string
)

// Versions are the version of the spawngate module and of the OPA it
// evaluates with, as the build recorded them ("(devel)" for a build from a
// work tree). A build that records no dependencies (a test binary) takes
// OPA's version from OPA itself, so that it never reads "unknown".
func Versions() (spawngate, opa string) {
	spawngate, opa = report.Version(), "v"+opaversion.Version
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	for _, dep := range info.Deps {
		if dep.Path == "github.com/open-policy-agent/opa" {
			opa = dep.Version
		}
	}
	return
}
