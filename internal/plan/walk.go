package plan

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MaxWalk bounds the entries one folder walk looks at, so that a folder
// tree of links cannot hold the gate.
const MaxWalk = 100_000

// Walk says what a folder walk looks for.
type Walk struct {
	// Noun names the folder in errors: "agents folder", "folder of plans".
	Noun string
	// Match tells whether a file's name is one to list.
	Match func(name string) bool
	// Recursive walks subfolders too.
	Recursive bool
	// SkipHidden passes over subfolders whose names start with a dot
	// (.git, .github): what they hold is not the walk's.
	SkipHidden bool
}

// Files lists the files under dir that w matches, in path order. Links
// are followed, to folders and to files; a folder or file reached twice
// (two links to one place, or a loop) is listed once, and a dangling link
// whose name matches is listed, for its reading to fail. A dir that does
// not exist holds none.
func (w Walk) Files(ctx context.Context, dir string) ([]string, error) {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, &Error{Source: dir, Msg: w.Noun + " cannot be read: " + Reason(err)}
	case !info.IsDir():
		return nil, &Error{Source: dir, Msg: w.Noun + " is not a directory"}
	}
	var files []string
	var seen []os.FileInfo
	visited := func(fi os.FileInfo) bool {
		for _, s := range seen {
			if os.SameFile(s, fi) {
				return true
			}
		}
		seen = append(seen, fi)
		return false
	}
	visited(info)
	walked := 0
	var walk func(string) error
	walk = func(d string) error {
		entries, err := os.ReadDir(d)
		if err != nil {
			return &Error{Source: d, Msg: w.Noun + " cannot be read: " + Reason(err)}
		}
		for _, e := range entries {
			if walked++; walked > MaxWalk {
				return &Error{Source: dir, Msg: fmt.Sprintf("%s holds more than %d entries", w.Noun, MaxWalk)}
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			path := filepath.Join(d, e.Name())
			fi, err := os.Stat(path) // follows a link
			if err != nil {
				if e.Type()&fs.ModeSymlink != 0 && w.Match(e.Name()) {
					files = append(files, path) // a dangling link: read, and refused
				}
				continue
			}
			switch {
			case fi.IsDir():
				if w.Recursive && !(w.SkipHidden && strings.HasPrefix(e.Name(), ".")) && !visited(fi) {
					if err := walk(path); err != nil {
						return err
					}
				}
			case w.Match(e.Name()) && !visited(fi):
				files = append(files, path)
			}
		}
		return nil
	}
	if err := walk(dir); err != nil {
		return nil, err
	}
	slices.Sort(files)
	return files, nil
}
