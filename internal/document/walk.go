package document

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

// MaxWalk bounds the entries one folder walk looks at unless Walk.Max
// says otherwise, so that a folder tree of links cannot hold the gate.
const MaxWalk = 100_000

// Walk says what a folder walk looks for. Every folder the gate searches
// (a folder of plans, of checks, of agent definitions, a repository for
// its agents folders, what a server's fingerprint digests) is walked by
// Files, so each says what it cannot read in the same words.
type Walk struct {
	// Noun names the folder in errors ("agents folder", "folder of
	// plans"); "" when the source alone names it (a flag's value).
	Noun string
	// Hint, when set, tells what to name instead when the folder is not a
	// directory or holds too many entries: "name the folder that holds
	// the .rego modules".
	Hint string
	// Match tells whether a file's name is one to list; nil lists no
	// file.
	Match func(name string) bool
	// Folder tells whether a folder (by its path) is one to list: it is
	// listed, and not walked into. The folder walked may be one itself.
	Folder func(path string) bool
	// Recursive walks subfolders too.
	Recursive bool
	// Skip passes over the subfolders it names (.git, or every hidden
	// one): what they hold is not the walk's.
	Skip func(name string) bool
	// Optional makes a folder that does not exist hold nothing; without
	// it, a missing folder is an error.
	Optional bool
	// Max bounds the entries looked at (MaxWalk when 0).
	Max int
	// Visit, when set, is told each folder walked, the one given first.
	Visit func(dir string)
}

// Hidden tells whether a name starts with a dot (.git, .github): for
// Walk.Skip.
func Hidden(name string) bool { return strings.HasPrefix(name, ".") }

// Files lists the files (and the folders, for Walk.Folder) under dir that
// w matches, in path order. Links are followed, to folders and to files; a
// folder or file reached twice (two links to one place, or a loop) is
// listed once, and a dangling link whose name matches is listed, for its
// reading to fail. An error is a *Error about dir, or about the subfolder
// that cannot be read.
func (w Walk) Files(ctx context.Context, dir string) ([]string, error) {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) && w.Optional:
		return nil, nil
	case err != nil:
		return nil, &Error{Source: dir, Msg: w.say("cannot be read: " + Reason(err))}
	case !info.IsDir():
		return nil, &Error{Source: dir, Msg: w.hint(w.say("is not a directory"))}
	}
	if w.Folder != nil && w.Folder(dir) {
		return []string{dir}, nil
	}
	max := w.Max
	if max == 0 {
		max = MaxWalk
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
		if w.Visit != nil {
			w.Visit(d)
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			return &Error{Source: d, Msg: w.say("cannot be read: " + Reason(err))}
		}
		for _, e := range entries {
			if walked++; walked > max {
				return &Error{Source: dir, Msg: w.hint(w.say(fmt.Sprintf("holds more than %d entries", max)))}
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if e.Type().IsRegular() && !w.matches(e.Name()) {
				continue // a file not looked for: no need to ask where a link leads
			}
			path := filepath.Join(d, e.Name())
			fi, err := os.Stat(path) // follows a link
			if err != nil {
				if e.Type()&fs.ModeSymlink != 0 && w.matches(e.Name()) {
					files = append(files, path) // a dangling link: read, and refused
				}
				continue
			}
			switch {
			case fi.IsDir():
				if w.Skip != nil && w.Skip(e.Name()) || visited(fi) {
					continue
				}
				if w.Folder != nil && w.Folder(path) {
					files = append(files, path)
					continue
				}
				if w.Recursive {
					if err := walk(path); err != nil {
						return err
					}
				}
			case w.matches(e.Name()) && !visited(fi):
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

func (w Walk) matches(name string) bool { return w.Match != nil && w.Match(name) }

// say puts the noun before msg, when there is one.
func (w Walk) say(msg string) string {
	if w.Noun == "" {
		return msg
	}
	return w.Noun + " " + msg
}

// hint adds what to name instead, when there is a hint.
func (w Walk) hint(msg string) string {
	if w.Hint == "" {
		return msg
	}
	return msg + ": " + w.Hint
}
