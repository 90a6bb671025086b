// Package spawngate decides, before an AI orchestrator dispatches
// sub-agents, whether each child of a spawn plan may exist with the powers
// it asks for: its tools, the paths it may touch, its token budget, its
// model. It is the library face of the spawngate command: the same strict
// readers, the same JSON Schemas and the same Rego checks judge every
// plan, whichever way it arrives.
//
// Build a Gate once, from the operator's policy, and judge with it as
// often as needed, from any goroutine:
//
//	g, err := spawngate.New(ctx, spawngate.WithPolicyFile("/etc/spawngate/policy.yaml"))
//	if err != nil {
//		return err // no policy, no gate: refuse every spawn
//	}
//	res, err := g.Check(ctx, "plan.json", planBytes)
//	if !spawngate.Allowed(res, err) {
//		return refuse(res, err)
//	}
//
// A child may be dispatched only when the error is nil and the verdict is
// Pass; Allowed says exactly that, and nothing else does. An error means
// the plan could not be judged (a document the gate cannot read, a limit,
// a timeout, an internal error), never that it passed.
//
// A Result says why a plan is refused: each Child has its Verdict and its
// Violations, and each Violation the Rule, the JSON pointer (Path) and
// line of the value refused, and a Message. Every error is an *Error with
// its kind and place; test the kind with errors.Is:
//
//	if errors.Is(err, spawngate.ErrTimeout) { ... }
//
// The examples (ExampleResult, ExampleError, ExampleGate_Check,
// ExampleGate_CheckPlan, ExampleGate_Hook) are in example_test.go; go test
// runs them and checks what they print.
package spawngate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spawngate/spawngate/internal/document"
	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/report"
)

// Limits bound what one document may cost to read (see docs/security-model.md,
// Limits); DefaultLimits are those of the command, and each field
// is one of its --max-* flags. A document over a limit is an *Error of
// Kind ErrLimit whose Limit names the field in kebab case ("max-values"
// for MaxValues).
type Limits struct {
	// MaxBytes is the largest document, in bytes (--max-bytes).
	MaxBytes int64
	// MaxYAMLBytes is the largest YAML document, in bytes: YAML is parsed
	// into a node tree about forty times the document's size, so it gets
	// a lower limit than JSON.
	MaxYAMLBytes int64
	// MaxDepth is the deepest nesting of objects and arrays, at most
	// 10,000.
	MaxDepth int
	// MaxAliasNodes is how many values YAML aliases may expand to, in
	// total over the document; 0 refuses every alias.
	MaxAliasNodes int
	// MaxAliasBytes is how many bytes of strings and keys YAML aliases may
	// expand to, in total over the document; 0 refuses every alias.
	MaxAliasBytes int
	// MaxStringBytes is the longest string or key, in bytes.
	MaxStringBytes int
	// MaxValues is how many values (objects, lists, strings, numbers,
	// booleans, nulls) a document may hold in all.
	MaxValues int
	// MaxChildren is how many children one plan may list.
	MaxChildren int
	// MaxChildEntries is how many entries one child's tools, and one
	// child's paths, may list.
	MaxChildEntries int
}

// DefaultLimits returns the limits the command uses unless told otherwise.
func DefaultLimits() Limits { return Limits(document.DefaultLimits) }

// Check refuses limits no document could be read under, as WithLimits
// does: every field must be positive (MaxAliasNodes and MaxAliasBytes may
// be 0), and MaxDepth at most 10,000. An error is an *Error of Kind
// ErrOption whose Msg names the field.
func (l Limits) Check() error {
	var bad *document.LimitError
	if errors.As(document.Limits(l).Check(), &bad) {
		return optionError("WithLimits", "%s", bad.Error())
	}
	return nil
}

// Allowed tells whether a judged plan may be dispatched: only with no
// error and the verdict Pass. It takes what Check returns as it is:
//
//	if !spawngate.Allowed(g.Check(ctx, name, doc)) { ... }
func Allowed(res Result, err error) bool {
	if err != nil || res.Verdict != Pass {
		return false
	}
	for _, c := range res.Children {
		if c.Verdict != Pass || len(c.Violations) > 0 || c.Unlisted > 0 {
			return false
		}
	}
	return len(res.Children) > 0
}

// Gate judges plans under one operator policy. It is safe for concurrent
// use; build one and keep it.
type Gate struct {
	g         *judge.Gate
	maxListed int
}

// Option changes how a Gate is built.
type Option func(*settings)

type settings struct {
	opts       judge.Options
	policyFile string
	policyName string
	policy     []byte
	inMemory   bool     // the policy is WithPolicy's, not a file's
	policies   []string // the options that gave a policy, in order
	bundles    int
	maxListed  int
}

// WithPolicyFile reads the operator's policy from a .yaml, .yml or .json
// file. The operator policy comes from one place: New refuses a second
// WithPolicyFile or WithPolicy, and an empty path.
func WithPolicyFile(path string) Option {
	return func(s *settings) {
		s.policyFile, s.policy, s.inMemory = path, nil, false
		s.policies = append(s.policies, "WithPolicyFile")
	}
}

// WithPolicy takes the operator's policy document from memory; name
// names it in messages and decides its syntax by its extension
// ("policy.yaml"). New refuses a second WithPolicy or WithPolicyFile, and
// judges an empty or nil document as the policy it is (an error).
func WithPolicy(name string, doc []byte) Option {
	return func(s *settings) {
		s.policyName, s.policy, s.policyFile, s.inMemory = name, doc, "", true
		s.policies = append(s.policies, "WithPolicy")
	}
}

// WithChecks adds folders of the operator's own Rego checks (every
// *.rego file but *_test.rego, subfolders included), judged beside the
// built-in ones, as spawngate check --checks does; the operator policy's
// checks field may name more. New compiles them and refuses, with the
// file and line, a module that breaks the check contract (see
// docs/custom-checks.md).
func WithChecks(dirs ...string) Option {
	return func(s *settings) { s.opts.Checks = append(s.opts.Checks, dirs...) }
}

// BundleKey is the key a bundle's signature must verify with.
type BundleKey struct {
	// File holds the key: a PEM public key (or certificate) for the RSA
	// and ECDSA algorithms, the shared secret for HMAC.
	File string
	// ID is the key's ID, which a signature may name ("default" unless
	// given).
	ID string
	// Alg is the signing algorithm ("RS256" unless given): RS256, RS384,
	// RS512, PS256, PS384, PS512, ES256, ES384, ES512, HS256, HS384, HS512.
	Alg string
}

// WithBundle reads the operator's checks, and the operator policy when it
// carries one (at data.spawngate.policy), from an OPA bundle: a .tar.gz
// file from opa build, or a folder. With key, the bundle must be signed
// with it; with a nil key, a signed bundle is refused. A bundle that
// carries a policy cannot be combined with WithPolicyFile or WithPolicy.
// New refuses a second WithBundle: the first one's checks would be
// dropped without a word.
func WithBundle(path string, key *BundleKey) Option {
	return func(s *settings) {
		s.opts.Bundle, s.opts.BundleKey, s.bundles = path, nil, s.bundles+1
		if key != nil {
			k := judge.BundleKey(*key)
			s.opts.BundleKey = &k
		}
	}
}

// WithLimits sets the limits documents are read with; start from
// DefaultLimits and change what you need. New refuses limits no document
// could be read under: every field must be positive (MaxAliasNodes and
// MaxAliasBytes may be 0, which refuses every YAML alias), and MaxDepth
// at most 10,000, as the command's --max-* flags. A zero Limits is
// refused, not read as "the defaults".
func WithLimits(l Limits) Option { return func(s *settings) { s.opts.Limits = document.Limits(l) } }

// WithTimeout bounds judging one plan (30s unless given). New refuses a
// timeout that is not positive.
func WithTimeout(d time.Duration) Option { return func(s *settings) { s.opts.Timeout = d } }

// WithResolvePaths also resolves every path on this machine's filesystem,
// following symlinks; the workspace roots must exist.
func WithResolvePaths() Option { return func(s *settings) { s.opts.ResolvePaths = true } }

// WithStrictExceptions refuses a plan that an exception of the operator
// policy matches nothing in, as --strict-exceptions does.
func WithStrictExceptions() Option { return func(s *settings) { s.opts.StrictExceptions = true } }

// WithToday judges the operator policy's exceptions as of a day
// (YYYY-MM-DD, UTC) instead of the day of each decision. New refuses a
// day that is not one.
func WithToday(date string) Option { return func(s *settings) { s.opts.Today = date } }

// WithMaxListed bounds the violations one result lists (10,000 unless
// given); the rest are counted per child. 0 lists none; New refuses a
// negative bound.
func WithMaxListed(n int) Option { return func(s *settings) { s.maxListed = n } }

// New builds a gate under the operator's policy, given by WithPolicyFile,
// WithPolicy, or a bundle that carries one (WithBundle). Without one there
// is no gate: a plan's own policy was written by the plan's author, and
// can only narrow the operator's, so New returns an error of Kind
// ErrNoPolicy (spawngate check run without --policy judges by a plan's
// policy alone; a gate in a program has no such mode). An option New cannot
// build with (a second policy or bundle, a timeout that is not positive,
// limits no document could be read under, a negative WithMaxListed, a
// WithToday that is no date, a nil Option) is an error of Kind ErrOption
// naming the option, never taken in silence; so is a nil ctx (Source
// "New"). Every error is an *Error.
func New(ctx context.Context, opts ...Option) (*Gate, error) {
	if ctx == nil {
		return nil, nilContext("New")
	}
	s := settings{opts: judge.DefaultOptions(), maxListed: report.DefaultMaxListed}
	for i, o := range opts {
		if o == nil {
			return nil, optionError("New", "option %d of %d is nil", i+1, len(opts))
		}
		o(&s)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	// A gate in process lives long: every check is compiled at once, so no
	// decision waits for a compile.
	s.opts.CompileAll = true
	var g *judge.Gate
	var err error
	if s.inMemory {
		g, err = judge.NewWithPolicy(ctx, s.opts, s.policyName, s.policy)
	} else {
		g, err = judge.New(ctx, s.opts, s.policyFile)
	}
	if je := (*judge.Error)(nil); errors.As(err, &je) && je.Kind == judge.NoPolicy {
		return nil, noPolicy(je)
	}
	if err != nil {
		return nil, errorOf(cmp.Or(s.policyFile, s.policyName, "New"), err)
	}
	return &Gate{g: g, maxListed: s.maxListed}, nil
}

// check refuses, before anything is read, the options no gate can be
// built with. Whether an operator policy is given is judge.New's to
// decide, for every front end alike (noPolicy words it).
func (s *settings) check() error {
	switch {
	case len(s.policies) > 1:
		return optionError(s.policies[1], "the operator policy is already given by %s: it must come from one place, and a second would replace the first", s.policies[0])
	case len(s.policies) == 1 && !s.inMemory && s.policyFile == "":
		return optionError("WithPolicyFile", "the path is empty: name the operator's policy file")
	case s.bundles > 1:
		return optionError("WithBundle", "given %d times: the operator's checks must come from one bundle", s.bundles)
	case s.opts.Bundle == "" && s.bundles > 0:
		return optionError("WithBundle", "the path is empty: name the bundle")
	case s.opts.Timeout <= 0:
		return optionError("WithTimeout", "the timeout must be positive, not %s", s.opts.Timeout)
	case s.maxListed < 0:
		return optionError("WithMaxListed", "the bound must not be negative, not %d", s.maxListed)
	case s.opts.Today != "" && !judge.IsDay(s.opts.Today):
		return optionError("WithToday", "%q is not a date written YYYY-MM-DD", s.opts.Today)
	}
	return Limits(s.opts.Limits).Check()
}

// noPolicy is judge.New's refusal of a gate without an operator policy
// (judge.NoPolicy), in the words of the Go API's options.
func noPolicy(je *judge.Error) *Error {
	if je.Source == "" {
		return &Error{Kind: ErrNoPolicy, Source: "New",
			Msg: "no operator policy: give WithPolicyFile, WithPolicy, or WithBundle with a bundle that carries one; a plan's own policy alone never builds a gate"}
	}
	return &Error{Kind: ErrNoPolicy, Source: je.Source, Pointer: je.Pointer,
		Msg: "the bundle carries no operator policy, and neither WithPolicyFile nor WithPolicy gives one: a gate judges every plan by the operator's policy"}
}

// optionError is an option New cannot build a gate with.
func optionError(option, format string, args ...any) *Error {
	return &Error{Kind: ErrOption, Source: option, Msg: fmt.Sprintf(format, args...)}
}

// Check judges a plan document (YAML or JSON, by the extension of name,
// or by its first character when name has none). An error is an *Error:
// the plan was not judged, and the Result beside it has the verdict
// NotJudged and the error's line. A nil ctx is an error of Kind
// ErrOption.
func (g *Gate) Check(ctx context.Context, name string, doc []byte) (Result, error) {
	if name == "" {
		name = "plan"
	}
	if ctx == nil {
		return notJudged(name, nilContext("Check"))
	}
	if g == nil || g.g == nil {
		return notJudged(name, notBuilt(name))
	}
	res, err := g.g.JudgeBytes(ctx, name, doc, g.maxListed)
	if err != nil {
		return notJudged(name, err)
	}
	return resultOf(res), nil
}

// notJudged is the Result that comes back with err: verdict NotJudged, the
// error's line, no children; err is returned as an *Error.
func notJudged(source string, err error) (Result, error) {
	e := errorOf(source, err)
	return Result{Source: source, Verdict: NotJudged, Error: e.Error(), Children: []Child{}}, e
}

// nilContext is the error of a function given a nil context, which the
// pipeline would panic on in the caller's goroutine: a caller's slip, of
// Kind ErrOption like a nil Option, with Source the function.
func nilContext(function string) *Error {
	return &Error{Kind: ErrOption, Source: function, Msg: "the context (ctx) is nil: pass context.Background() when nothing is to cancel the call"}
}

// notBuilt is the error of a Gate that New did not build (a nil or zero
// Gate): it has no policy and no checks to judge with.
func notBuilt(source string) *Error {
	return &Error{Kind: ErrInternal, Source: source, Msg: "the gate was not built by spawngate.New"}
}

// Version is the spawngate module version, the OPA version it evaluates
// with, and the digest of the embedded checks and schemas, which decision
// logs record.
func Version() (spawngate, opa, checks string) {
	spawngate, opa = judge.Versions()
	return spawngate, opa, judge.ChecksDigest()
}
