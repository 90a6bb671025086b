package judge

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/jsonpointer"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/policy"
)

// BundleKey verifies a bundle's signature, as opa run's
// --verification-key, --verification-key-id and --signing-alg do.
type BundleKey struct {
	// File holds the key: a PEM public key (or certificate) for the RSA
	// and ECDSA algorithms, the shared secret for HMAC (HS256, ...).
	File string
	// ID is the key's ID, which a signature may name (DefaultKeyID
	// unless given, as opa run has it).
	ID string
	// Alg is the signing algorithm (DefaultSigningAlg unless given), one
	// of SigningAlgs.
	Alg string
}

// The key ID and the algorithm a BundleKey has unless given, as opa run's
// flags have them.
const (
	DefaultKeyID      = "default"
	DefaultSigningAlg = "RS256"
)

// SigningAlgs are the algorithms OPA signs bundles with.
var SigningAlgs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "HS256", "HS384", "HS512"}

// config reads the key into OPA's verification settings.
func (key *BundleKey) config() (*bundle.VerificationConfig, error) {
	secret, err := os.ReadFile(key.File)
	if err != nil {
		return nil, &document.Error{Source: key.File, Msg: "cannot read the verification key: " + document.Reason(err)}
	}
	if len(bytes.TrimSpace(secret)) == 0 {
		return nil, &document.Error{Source: key.File, Msg: "the verification key file is empty"}
	}
	id, alg := cmp.Or(key.ID, DefaultKeyID), cmp.Or(key.Alg, DefaultSigningAlg)
	if strings.HasPrefix(alg, "HS") {
		// The secret is the file's text: the line break an editor or
		// echo ends it with is not part of it.
		secret = bytes.TrimRight(secret, "\r\n")
	}
	return bundle.NewVerificationConfig(map[string]*bundle.KeyConfig{id: {Key: string(secret), Algorithm: alg}}, id, "", nil), nil
}

// The bundle's data holds the operator policy at this path, and nothing
// else: opa build writes what a bundle folder's spawngate/policy/data.json
// (or data.yaml) holds there.
var bundlePolicyPath = []string{"spawngate", "policy"}

// BundlePolicyPointer is where the operator policy lives in a bundle's
// data document, as a JSON pointer: messages about the policy name it.
const BundlePolicyPointer = "/spawngate/policy"

// bundleContents is what a bundle carries.
type bundleContents struct {
	policy     plan.Policy // nil when the bundle carries no policy
	policyJSON []byte      // the policy as the gate validated it
	modules    []policy.Module
	tests      []policy.Module // the *_test.rego files, for spawngate verify
}

// readBundle reads an OPA bundle: a .tar.gz file as opa build writes it,
// or a folder laid out the same way. With a key, the bundle must be signed
// with it (every file listed in .signatures.json with its digest, and no
// other file); without one, it must not be signed at all, since a
// signature nobody checks proves nothing and the operator who signed it
// meant it to be checked. Its data may hold only the operator policy, at
// data.spawngate.policy, which is validated like a --policy file; its
// *.rego files, but *_test.rego, are the operator's checks. Every error is
// a *document.Error naming the bundle.
func readBundle(ctx context.Context, loader *plan.Loader, name string, key *BundleKey) (*bundleContents, error) {
	lim := loader.Limits()
	fail := func(format string, args ...any) error {
		return &document.Error{Source: name, Msg: document.OneLine(fmt.Sprintf(format, args...))}
	}
	info, err := os.Stat(name)
	if err != nil {
		return nil, fail("cannot read: %s", document.Reason(err))
	}
	var verify *bundle.VerificationConfig
	if key != nil {
		if verify, err = key.config(); err != nil {
			return nil, err
		}
	}
	var src bundleSource = folder{root: name}
	if !info.IsDir() {
		raw, err := document.ReadFile(name, lim.MaxBytes)
		if err != nil {
			return nil, err
		}
		src = tarball{raw: raw}
	}
	// Bounded and verified first: OPA's reader parses what it is given.
	files, err := readBundleFiles(ctx, name, src, lim.MaxBytes, verify)
	if err != nil {
		return nil, err
	}
	r := bundle.NewCustomReader(&heldLoader{files: files}).
		WithSizeLimitBytes(lim.MaxBytes + 1). // OPA refuses a file of this size or more
		WithRegoVersion(ast.RegoV1).
		WithProcessAnnotations(false)
	if verify != nil {
		r = r.WithBundleVerificationConfig(verify)
	}
	b, err := r.Read()
	if err != nil {
		// The signature was verified above: what OPA refuses now is the
		// content (OPA verifies it again, and would say so).
		return nil, fail("cannot be read as a bundle: %v", firstParseError(files, r.ParserOptions(), err))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch {
	case len(b.WasmModules) > 0 || len(b.PlanModules) > 0:
		return nil, fail("carries Wasm or plan modules, which spawngate does not evaluate: a bundle for spawngate holds Rego modules and data")
	case b.Manifest.RegoVersion != nil && *b.Manifest.RegoVersion != 1:
		return nil, fail("its manifest declares rego_version %d: spawngate reads Rego v1 only", *b.Manifest.RegoVersion)
	case len(b.Manifest.FileRegoVersions) > 0:
		return nil, fail("its manifest declares file_rego_versions: spawngate reads Rego v1 only")
	}
	// Every data file is read again, by the gate's own strict reader:
	// what OPA's readers accept but could read differently (a duplicate
	// key, a YAML yes that YAML 1.1 reads as true) is refused, as in a
	// --policy file. The values judged are those OPA read and verified.
	if err := strictData(ctx, files, name, lim); err != nil {
		return nil, err
	}
	out := &bundleContents{}
	if err := out.readPolicy(ctx, loader, name, b.Data); err != nil {
		return nil, placeInData(ctx, files, name, lim, err)
	}
	for _, m := range b.Modules {
		p := strings.TrimPrefix(path.Clean("/"+m.Path), "/")
		mod := policy.Module{Name: bundleFile(name, p), Source: string(m.Raw)}
		if strings.HasSuffix(p, "_test.rego") {
			out.tests = append(out.tests, mod) // for spawngate verify --bundle
			continue
		}
		out.modules = append(out.modules, mod)
	}
	byName := func(mods []policy.Module) {
		sort.Slice(mods, func(i, j int) bool { return mods[i].Name < mods[j].Name })
	}
	byName(out.modules)
	byName(out.tests)
	return out, nil
}

// firstParseError is the error of the first module, in the bundle's
// order, that does not parse, when OPA's reader failed on one: it parses
// the modules all at once and tells of whichever failed first in time, so
// its message could differ from one run to the next. Only the modules
// before the one it names are parsed again.
func firstParseError(files []heldFile, opts ast.ParserOptions, err error) error {
	var one *ast.Error
	var many ast.Errors
	var named string
	switch {
	case errors.As(err, &one) && one.Location != nil:
		named = one.Location.File
	case errors.As(err, &many) && len(many) > 0 && many[0].Location != nil:
		named = many[0].Location.File
	default:
		return err
	}
	for _, f := range files {
		if f.path == named {
			return err
		}
		if !strings.HasSuffix(f.path, bundle.RegoExt) {
			continue
		}
		if _, perr := ast.ParseModuleWithOpts(f.path, string(f.data), opts); perr != nil {
			return perr
		}
	}
	return err
}

// bundleFile names a file inside a bundle: "bundle.tar.gz/checks/x.rego".
func bundleFile(bundleName, p string) string {
	return strings.TrimSuffix(bundleName, "/") + "/" + p
}

// strictData reads every data file of the bundle with the gate's reader.
func strictData(ctx context.Context, files []heldFile, name string, lim document.Limits) error {
	for _, f := range files {
		base := path.Base(f.path)
		if base != "data.json" && !bundle.IsYAMLDataFile(base) {
			continue
		}
		source := bundleFile(name, strings.TrimPrefix(path.Clean("/"+f.path), "/"))
		syntax := document.JSON
		if base != "data.json" {
			syntax = document.YAML
		}
		if _, err := document.Decode(ctx, source, f.data, syntax, lim); err != nil {
			return err
		}
	}
	return nil
}

// readPolicy finds the operator policy in the bundle's data and validates
// it like a --policy file. Anything else in the data is refused: the
// checks read only their input, so data they were meant to read would
// silently be read by none.
func (c *bundleContents) readPolicy(ctx context.Context, loader *plan.Loader, name string, data map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(data)) {
		if k != bundlePolicyPath[0] {
			return &document.Error{Source: name, Pointer: "/" + k, Msg: "a bundle's data may hold only the operator policy, at " + BundlePolicyPointer + ": the checks read only their input"}
		}
	}
	root, ok := data[bundlePolicyPath[0]]
	if !ok {
		return nil
	}
	obj, ok := root.(map[string]any)
	if !ok {
		return &document.Error{Source: name, Pointer: "/spawngate", Msg: "must be a mapping holding the operator policy under policy"}
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if k != bundlePolicyPath[1] {
			return &document.Error{Source: name, Pointer: "/spawngate/" + k, Msg: "a bundle's data may hold only the operator policy, at " + BundlePolicyPointer + ": the checks read only their input"}
		}
	}
	pol, ok := obj[bundlePolicyPath[1]]
	if !ok {
		return nil
	}
	doc, err := json.Marshal(pol)
	if err != nil {
		return &document.Error{Source: name, Pointer: BundlePolicyPointer, Msg: "cannot be read: " + err.Error()}
	}
	p, err := loader.Policy(ctx, "bundle-policy.json", doc)
	if err != nil {
		var pe *document.Error
		if errors.As(err, &pe) {
			// The line and column would be those of the gate's own
			// rendering of the value; the pointer is into the bundle's
			// data, for each problem (placeInData finds its file).
			move := func(pe *document.Error) *document.Error {
				moved := *pe
				moved.Source, moved.Line, moved.Column, moved.More = name, 0, 0, nil
				moved.Pointer = BundlePolicyPointer + pe.Pointer
				return &moved
			}
			first := move(pe)
			for _, m := range pe.More {
				first.More = append(first.More, move(m))
			}
			return first
		}
		return err
	}
	if _, ok := p["checks"]; ok {
		return &document.Error{Source: name, Pointer: BundlePolicyPointer + "/checks", Msg: "a bundle's policy cannot name folders of checks: the bundle carries its checks as .rego files"}
	}
	c.policy, c.policyJSON = p, doc
	return nil
}

// placeInData says each problem of the bundle's data (about the bundle,
// at a pointer into its data) in the data file that holds the value, at
// its line and column there and its pointer in that file, as a problem a
// data file's strict reading finds is said
// ("bundle/spawngate/policy/data.json:5:37: /roles/r/workspace_root: ...").
// OPA places a data file's value at its folder's path in the data, and
// merges the files: the file is the one in the deepest folder above the
// pointer that holds its value, or for a key that is missing the mapping
// it is missing from. A problem no file can be found for stays about the
// bundle: a place is a help, not a need.
func placeInData(ctx context.Context, files []heldFile, name string, lim document.Limits, err error) error {
	var pe *document.Error
	if !errors.As(err, &pe) {
		return err
	}
	type dataFile struct {
		source, root string // root: the pointer in the data of its value
		data         []byte
		value        any // decoded when first needed
		read         bool
		pointers     []string
		problems     []*document.Error
	}
	var held []*dataFile
	for _, f := range files {
		p := path.Clean("/" + f.path)
		if base := path.Base(p); base != "data.json" && !bundle.IsYAMLDataFile(base) {
			continue
		}
		root := ""
		if dir := strings.Trim(path.Dir(p), "/"); dir != "" {
			root = jsonpointer.Join("", strings.Split(dir, "/")...)
		}
		held = append(held, &dataFile{source: bundleFile(name, strings.TrimPrefix(p, "/")), root: root, data: f.data})
	}
	// holds tells whether f's value has the value at ptr, a pointer in the
	// bundle's data.
	holds := func(f *dataFile, ptr string) bool {
		if !jsonpointer.Within(ptr, f.root) {
			return false
		}
		if !f.read {
			f.read = true
			syntax := document.YAML
			if path.Base(f.source) == "data.json" {
				syntax = document.JSON
			}
			f.value, _ = document.Decode(ctx, f.source, f.data, syntax, lim) // read once already (strictData)
		}
		_, ok := jsonpointer.Lookup(f.value, strings.TrimPrefix(ptr, f.root))
		return ok
	}
	for _, p := range append([]*document.Error{pe}, pe.More...) {
		if p.Source != name || p.Pointer == "" || p.Line != 0 {
			continue
		}
		var in *dataFile
		for _, f := range held {
			if (in == nil || len(f.root) > len(in.root)) && holds(f, p.Pointer) {
				in = f
			}
		}
		// A key that is missing: the file holding the mapping, unless
		// files below the key give it a value (only some of them are wrong).
		missing := in == nil && !slices.ContainsFunc(held, func(f *dataFile) bool { return jsonpointer.Within(f.root, p.Pointer) })
		for _, f := range held {
			if missing && (in == nil || len(f.root) > len(in.root)) && holds(f, p.Pointer[:strings.LastIndexByte(p.Pointer, '/')]) {
				in = f
			}
		}
		if in != nil {
			in.pointers = append(in.pointers, strings.TrimPrefix(p.Pointer, in.root))
			in.problems = append(in.problems, p)
		}
	}
	for _, f := range held {
		if len(f.problems) == 0 {
			continue
		}
		at, _ := document.Locate(ctx, f.source, f.data, lim, f.pointers)
		for i, p := range f.problems {
			if pos, ok := at[f.pointers[i]]; ok {
				p.Source, p.Pointer, p.Line, p.Column = f.source, f.pointers[i], pos.Line, pos.Column
			}
		}
	}
	return pe
}
