package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spawngate/spawngate/internal/document"
)

// RepoRoot is the repository the directory lies in (the closest directory
// at or above it that holds .git), or the directory itself outside one.
func RepoRoot(dir string) string {
	if root := repoRoot(dir); root != "" {
		return root
	}
	return dir
}

// repoRoot is the closest directory at or above dir that holds .git, or "".
func repoRoot(dir string) string {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// UpToRoot lists dir and each directory above it up to the repository
// root (dir alone outside a repository), closest first.
func UpToRoot(dir string) []string {
	root := repoRoot(dir)
	var dirs []string
	for d := dir; ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if root == "" || d == root || d == filepath.Dir(d) {
			return dirs
		}
	}
}

// Folder is one level of a host's precedence: the definitions found in
// one place (a folder, or a host's command line).
type Folder struct {
	// Dir names the place in messages.
	Dir  string
	Defs []*Definition
	// Walked are the folders read for it: Dir and each subfolder (none
	// when Dir does not exist).
	Walked []string
}

// Catalog is every definition a host can see, by level of precedence,
// highest first.
type Catalog struct {
	Folders []Folder
}

// Reader reads one definition file; a file that cannot be read is a
// definition with Err set.
type Reader func(ctx context.Context, file string, data []byte) *Definition

// Load reads every definition in each folder (files ending in suffix, in
// subfolders too when recursive). A folder that does not exist holds
// none; one that exists and cannot be read is an error, since the
// definition a spawn names might be in it.
func Load(ctx context.Context, dirs []string, suffix string, recursive bool, lim document.Limits, read Reader) (*Catalog, error) {
	c := &Catalog{}
	for _, dir := range dirs {
		f := Folder{Dir: dir}
		files, err := Files(ctx, dir, suffix, recursive, func(d string) { f.Walked = append(f.Walked, d) })
		if err != nil {
			return nil, err
		}
		for _, file := range files {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			f.Defs = append(f.Defs, ReadFile(ctx, file, lim, read))
		}
		c.Folders = append(c.Folders, f)
	}
	return c, nil
}

// ReadFile reads one definition file within the limits. Only a regular
// file is opened, after following links: a FIFO or a device named like a
// definition (a committed link to /proc/self/fd/1, say) could hold the gate
// past its deadline, and defines nothing a host would load either.
func ReadFile(ctx context.Context, file string, lim document.Limits, read Reader) *Definition {
	fail := func(msg string) *Definition {
		return &Definition{File: file, Lines: map[string]int{}, Err: &document.Error{Source: file, Msg: msg}}
	}
	info, err := os.Stat(file)
	if err != nil {
		return fail("cannot be read: " + document.Reason(err))
	}
	if !info.Mode().IsRegular() {
		return fail("is not a regular file (" + info.Mode().Type().String() + "): a definition must be a file")
	}
	data, err := document.ReadFile(file, lim.MaxBytes)
	if err != nil {
		var pe *document.Error
		if errors.As(err, &pe) {
			return &Definition{File: file, Lines: map[string]int{}, Err: pe}
		}
		return fail(document.OneLine(err.Error()))
	}
	return read(ctx, file, data)
}

// Files lists the files in dir whose names end in suffix, in path order,
// in subfolders too when recursive. Links are followed, to folders and to
// files, as the hosts follow them; a folder or file reached twice (two
// links to one place, or a loop) is listed once. A dir that does not exist
// holds none.
func Files(ctx context.Context, dir, suffix string, recursive bool, visit ...func(dir string)) ([]string, error) {
	w := document.Walk{Noun: "agents folder", Recursive: recursive, Optional: true, Match: func(name string) bool { return strings.HasSuffix(name, suffix) }}
	for _, v := range visit {
		w.Visit = v
	}
	return w.Files(ctx, dir)
}

// Definitions lists every file found, in folder order, then file order.
func (c *Catalog) Definitions() []*Definition {
	var out []*Definition
	for _, f := range c.Folders {
		out = append(out, f.Defs...)
	}
	return out
}

// Dirs names the places the catalog looked in, in order.
func (c *Catalog) Dirs() []string {
	out := make([]string, len(c.Folders))
	for i, f := range c.Folders {
		out[i] = f.Dir
	}
	return out
}

// Find finds the definition whose name is exactly name, in the highest
// level that defines it, or says why none can be judged: the name is
// defined twice in that level, its definition there does not parse, or a
// file in that level or a higher one does not parse and may define it
// (maybe, given the name a lenient reading found, tells whether it might).
// found is false, with no problem, when no level defines the name.
func (c *Catalog) Find(name string, maybe func(d *Definition) bool) (def *Definition, problem string, found bool) {
	for _, f := range c.Folders {
		var hits, unread []*Definition
		for _, d := range f.Defs {
			switch {
			case d.Skipped != "":
			case d.Name == name:
				hits = append(hits, d)
			case d.Err != nil && (d.Name == "" || maybe(d)):
				unread = append(unread, d)
			}
		}
		switch {
		case len(hits) > 1:
			return nil, fmt.Sprintf("agent type %q is defined twice in %s (%s and %s): the host would pick one by file order; keep one", name, f.Dir, hits[0].File, hits[1].File), true
		case len(hits) == 1 && hits[0].Err != nil:
			return nil, fmt.Sprintf("the definition of agent type %q in %s does not parse: %s", name, hits[0].File, hits[0].ParseProblem()), true
		case len(unread) > 0:
			// In the level that defines the type, or above it: the file may
			// define it too, and the host might pick that one.
			return nil, fmt.Sprintf("agent type %q may be defined by %s, which does not parse: %s", name, unread[0].File, unread[0].ParseProblem()), true
		case len(hits) == 1:
			return hits[0], "", true
		}
	}
	return nil, "", false
}

// Names lists the names the catalog's readable definitions go by, each
// once, sorted.
func (c *Catalog) Names() []string {
	var names []string
	for _, d := range c.Definitions() {
		if d.Name != "" && d.Skipped == "" && !slices.Contains(names, d.Name) {
			names = append(names, d.Name)
		}
	}
	slices.Sort(names)
	return names
}
