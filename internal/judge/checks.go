package judge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/engine"
	"github.com/spawngate/spawngate/internal/future"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/policy"
)

// CheckSource is one place the operator's own checks are read from.
type CheckSource struct {
	Dir string // the folder, as given (relative ones as the policy file's folder reads them)
	// Policy and Pointer, when set, say that the folder comes from an
	// operator policy's checks field: the policy file, and the JSON
	// pointer of the entry (/checks/0). Empty for a folder of Options.Checks.
	Policy, Pointer string
}

// policyCheckDirs reads the checks field of an operator policy: folders
// of the operator's checks, a relative one read from the folder of the
// policy file. A policy read from memory has no folder, so its relative
// folders are refused rather than read from wherever the process runs.
//
// at is where the policy lies in its document: "" for an operator policy
// file, /policy for a plan document's block (NewWithPlanPolicy), whose
// folder is the plan file's.
func policyCheckDirs(source, policyFile, at string, pol plan.Policy) ([]CheckSource, error) {
	list, _ := pol["checks"].([]any)
	var out []CheckSource
	for i, v := range list {
		dir, _ := v.(string)
		ptr := at + "/checks/" + strconv.Itoa(i)
		if !filepath.IsAbs(dir) {
			if policyFile == "" {
				return nil, &document.Error{Source: source, Pointer: ptr, Msg: fmt.Sprintf("folder %q is relative, and this policy has no file it could be read from: name the folder by an absolute path", dir)}
			}
			dir = filepath.Join(filepath.Dir(policyFile), dir)
		}
		out = append(out, CheckSource{Dir: dir, Policy: source, Pointer: ptr})
	}
	return out, nil
}

// readCheckDirs reads the operator's modules from every folder, in the
// order given: every *.rego file under the folder, its subfolders
// included, but *_test.rego (tests are for spawngate verify), in path
// order. A folder that cannot be read, or holds no module, is an error: a
// folder of checks that checks nothing must not look like one that passed.
// A file reached twice (a folder named twice, or inside another one
// named) is read once.
func readCheckDirs(ctx context.Context, sources []CheckSource, maxBytes int64) ([]policy.Module, error) {
	var mods []policy.Module
	seenDir, seenFile := map[string]bool{}, map[string]bool{}
	for _, src := range sources {
		abs, err := filepath.Abs(src.Dir)
		if err != nil {
			return nil, src.problem(document.Reason(err))
		}
		if seenDir[abs] {
			continue
		}
		seenDir[abs] = true
		files, err := regoFiles(ctx, src.Dir, false)
		if err != nil {
			return nil, src.wrap(err)
		}
		if len(files) == 0 {
			return nil, src.problem("holds no Rego modules (*.rego files other than *_test.rego): a folder of checks must hold at least one check")
		}
		for _, f := range files {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			absFile, err := filepath.Abs(f)
			if err == nil && seenFile[absFile] {
				continue
			}
			seenFile[absFile] = true
			data, err := document.ReadFile(f, maxBytes)
			if err != nil {
				return nil, err
			}
			mods = append(mods, policy.Module{Name: f, Source: string(data)})
		}
	}
	return mods, nil
}

// problem is an error about the folder: of the policy entry that names
// it, or of the folder itself.
func (s CheckSource) problem(msg string) error {
	if s.Policy != "" {
		return &document.Error{Source: s.Policy, Pointer: s.Pointer, Msg: fmt.Sprintf("folder %s %s", s.Dir, msg)}
	}
	return &document.Error{Source: s.Dir, Msg: msg}
}

// wrap says a reading error of the folder the way problem does.
func (s CheckSource) wrap(err error) error {
	var pe *document.Error
	if errors.As(err, &pe) && pe.Source == s.Dir {
		return s.problem(pe.Msg)
	}
	return err
}

// regoFiles lists the .rego files under dir and its subfolders, in path
// order, links followed (document.Walk): the modules (tests false) or the
// *_test.rego files (tests true). A file directly in the folder "." is
// named "./name.rego", so that no operator's module is ever named like a
// built-in one (lib.rego).
func regoFiles(ctx context.Context, dir string, tests bool) ([]string, error) {
	w := document.Walk{Recursive: true, Hint: "name the folder that holds the .rego modules", Match: func(name string) bool {
		return strings.HasSuffix(name, ".rego") && strings.HasSuffix(name, "_test.rego") == tests
	}}
	files, err := w.Files(ctx, dir)
	for i, f := range files {
		if !strings.ContainsRune(f, filepath.Separator) {
			files[i] = "." + string(filepath.Separator) + f
		}
	}
	return files, err
}

// customEngines keeps the engine last compiled with the operator's
// checks, by what it was compiled from: a server reloading an unchanged
// set of checks, or a test building many gates, compiles them once, and
// keeps what the engine remembers of the children it judged. One is kept,
// not every set ever seen: a server watching checks change would
// otherwise keep every old engine.
var customEngines struct {
	sync.Mutex
	key    string
	engine *engine.Engine
}

// customEngine compiles the built-in checks with the operator's own. A
// module that breaks the contract is a *engine.ModuleError.
func customEngine(mods []policy.Module, resolve bool) (*engine.Engine, error) {
	key := strconv.FormatBool(resolve) + "\x00" + modulesDigest(mods)
	customEngines.Lock()
	if customEngines.key == key {
		e := customEngines.engine
		customEngines.Unlock()
		return e, nil
	}
	customEngines.Unlock()
	builtins, err := policy.Modules()
	if err != nil {
		return nil, fmt.Errorf("reading the built-in policy: %w", err)
	}
	e, err := engine.New(builtins, engine.Custom(mods), engine.ResolvePaths(resolve))
	if err != nil {
		return nil, err
	}
	customEngines.Lock()
	customEngines.key, customEngines.engine = key, e
	customEngines.Unlock()
	return e, nil
}

// modulesDigest is the SHA-256 of modules, each by name and content, in
// the order given.
func modulesDigest(mods []policy.Module) string {
	h := sha256.New()
	for _, m := range mods {
		h.Write([]byte(m.Name))
		h.Write([]byte{0})
		h.Write([]byte(m.Source))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// checksDigest names what judges: the embedded checks and schemas alone
// (ChecksDigest), or with the operator's own modules.
func checksDigest(custom []policy.Module) string {
	if len(custom) == 0 {
		return ChecksDigest()
	}
	sum := sha256.Sum256([]byte(ChecksDigest() + "\x00" + modulesDigest(custom)))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// aheadEngine is the engine of the folders of Options.Checks, compiled in
// the background while the rest of the gate is built, and their modules.
type aheadEngine struct {
	mods   []policy.Module
	engine *engine.Engine
}

// peekPolicy decodes the operator policy document ahead of its
// validation, for what the gate will most likely need (peekCheckDirs,
// engine.Expect); nil when it cannot be read. A document is decoded again
// when it is validated: for a policy, microseconds. at is where the policy
// lies in the document ("" or a plan document's /policy).
func peekPolicy(ctx context.Context, opts Options, source, at string, data []byte) map[string]any {
	if len(data) == 0 {
		return nil
	}
	syntax, err := document.SyntaxOf(source)
	if err != nil {
		return nil
	}
	v, err := document.Decode(ctx, source, data, syntax, opts.Limits)
	if err != nil {
		return nil
	}
	pol, _ := v.(map[string]any)
	if at != "" {
		pol, _ = pol[at[1:]].(map[string]any)
	}
	return pol
}

// peekCheckDirs says which folders of checks a gate will most likely
// read, before the policy is validated: those of Options.Checks, and those
// the policy document (peeked, not yet validated) names in its checks
// field.
func peekCheckDirs(opts Options, source, policyFile, at string, peeked map[string]any) []CheckSource {
	if opts.NoFiles {
		return nil // nothing is read ahead, as nothing will be
	}
	var dirs []CheckSource
	for _, d := range opts.Checks {
		dirs = append(dirs, CheckSource{Dir: d})
	}
	if peeked == nil {
		return dirs
	}
	more, err := policyCheckDirs(source, policyFile, at, peeked)
	if err != nil {
		return dirs
	}
	return append(dirs, more...)
}

// sameDirs tells whether two lists of folders are the same, in order.
func sameDirs(a, b []CheckSource) bool {
	return slices.EqualFunc(a, b, func(x, y CheckSource) bool { return x == y })
}

// compileAhead reads the folders and compiles them with the built-in
// checks, in the background. Its errors are what New would return for
// them; a panic while building it is raised again by Wait.
func compileAhead(ctx context.Context, opts Options, dirs []CheckSource) *future.Future[aheadEngine] {
	return future.Go(func() (aheadEngine, error) {
		var a aheadEngine
		ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
		mods, err := readCheckDirs(ctx, dirs, opts.Limits.MaxBytes)
		if err != nil {
			return a, AsError("checks", err)
		}
		builtins, err := policy.Modules()
		if err != nil {
			return a, &Error{Kind: Internal, Msg: "internal error: reading the built-in policy: " + document.OneLine(err.Error())}
		}
		if a.mods = engine.WithoutBuiltinCopies(builtins, mods); len(a.mods) == 0 {
			return a, nil // copies of the built-in modules alone: the built-in checks judge
		}
		if a.engine, err = customEngine(a.mods, opts.ResolvePaths); err != nil {
			return a, AsError("checks", err)
		}
		return a, nil
	})
}

// nestedKey finds a key that makes a plan nested (children below a child,
// or the plan's parent block), as JSON or YAML writes it.
var nestedKey = regexp.MustCompile(`\b(children|parent)["']?\s*:`)

// LooksNested tells, from a document's bytes alone, whether it is most
// likely a nested plan, for Options.CompileAll. It is a hint and nothing
// more: a plan is judged by what it holds once loaded, whatever this said.
func LooksNested(data []byte) bool { return nestedKey.Match(data) }
