package judge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"

	"github.com/spawngate/spawngate/internal/document"
)

// Fingerprint digests what a gate built with these options and policy
// file would be built from, as it is on disk now: the policy file, the
// bundle, and every .rego file of the folders of checks (Options.Checks,
// and those the policy's checks field names). A server watching for
// changes rebuilds its gate when the fingerprint changes. Nothing is
// validated; what cannot be read counts as missing, so that a file that
// appears or goes away changes it too.
func Fingerprint(opts Options, policyFile string) string {
	h := sha256.New()
	add := func(kind, name string, data []byte) {
		h.Write([]byte(kind + "\x00" + name + "\x00"))
		h.Write(data)
		h.Write([]byte{0})
	}
	readFile := func(name string) []byte {
		data, err := document.ReadFile(name, opts.Limits.MaxBytes)
		if err != nil {
			return []byte("\x00unreadable")
		}
		return data
	}
	// A tree is walked as the gate walks it (document.Walk: links followed,
	// bounded); one it cannot walk counts as such.
	addTree := func(kind, root string, only func(string) bool) {
		files, err := document.Walk{Recursive: true, Match: only}.Files(context.Background(), root)
		if err != nil {
			add(kind, root, []byte("\x00unwalkable"))
		}
		for _, f := range files {
			add(kind, f, readFile(f))
		}
	}
	rego := func(name string) bool { return filepath.Ext(name) == ".rego" }
	dirs := slices.Clone(opts.Checks)
	if policyFile != "" {
		data := readFile(policyFile)
		add("policy", policyFile, data)
		if syntax, err := document.SyntaxOf(policyFile); err == nil {
			if v, err := document.Decode(context.Background(), policyFile, data, syntax, opts.Limits); err == nil {
				if pol, ok := v.(map[string]any); ok {
					if more, err := policyCheckDirs(policyFile, policyFile, "", pol); err == nil {
						for _, d := range more {
							dirs = append(dirs, d.Dir)
						}
					}
				}
			}
		}
	}
	for _, d := range dirs {
		add("checks", d, nil)
		addTree("check", d, rego)
	}
	if opts.Bundle != "" {
		if info, err := os.Stat(opts.Bundle); err == nil && info.IsDir() {
			addTree("bundle", opts.Bundle, func(string) bool { return true })
		} else {
			add("bundle", opts.Bundle, readFile(opts.Bundle))
		}
	}
	if opts.BundleKey != nil {
		add("key", opts.BundleKey.File, readFile(opts.BundleKey.File))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
