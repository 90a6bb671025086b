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
package spawngate

import (
	"context"
	"time"

	"github.com/spawngate/spawngate/internal/judge"
	"github.com/spawngate/spawngate/internal/plan"
	"github.com/spawngate/spawngate/internal/report"
)

// Result is the outcome of one plan: its verdict, the policies that judged
// it, and each child's verdict with every reason (or the count of those
// past the listing bound). It is the report model spawngate check prints.
type Result = report.Result

// Child is the outcome of one child of a plan.
type Child = report.Child

// Violation is one reason a child is refused: the rule, its severity, a
// message, and a JSON pointer into the plan.
type Violation = report.Violation

// Verdict is the outcome of a child or a plan.
type Verdict = report.Verdict

// The verdicts a judged plan can have.
const (
	Pass  Verdict = report.Pass
	Block Verdict = report.Block
)

// Limits bound what one document may cost to read (see the README's
// Limits section); DefaultLimits are those of the command.
type Limits = plan.Limits

// DefaultLimits returns the limits the command uses unless told otherwise.
func DefaultLimits() Limits { return plan.DefaultLimits }

// Error is why a plan could not be judged, in parts: its Kind, the
// document, the line, column and JSON pointer where it is known, and for
// a limit its name ("max-values" for Limits.MaxValues).
type Error = judge.Error

// ErrorKind is what kept a plan from being judged.
type ErrorKind = judge.Kind

// The kinds of Error.
const (
	ErrDocument    ErrorKind = judge.Document
	ErrLimit       ErrorKind = judge.Limit
	ErrTimeout     ErrorKind = judge.Timeout
	ErrInterrupted ErrorKind = judge.Interrupted
	ErrNoPolicy    ErrorKind = judge.NoPolicy
	ErrInternal    ErrorKind = judge.Internal
)

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
	maxListed  int
}

// WithPolicyFile reads the operator's policy from a .yaml, .yml or .json
// file.
func WithPolicyFile(path string) Option {
	return func(s *settings) { s.policyFile, s.policy = path, nil }
}

// WithPolicy takes the operator's policy document from memory; name
// names it in messages and decides its syntax by its extension
// ("policy.yaml").
func WithPolicy(name string, doc []byte) Option {
	return func(s *settings) { s.policyName, s.policy, s.policyFile = name, doc, "" }
}

// WithChecks adds folders of the operator's own Rego checks (every
// *.rego file but *_test.rego, subfolders included), judged beside the
// built-in ones, as spawngate check --checks does; the operator policy's
// checks field may name more. New compiles them and refuses, with the
// file and line, a module that breaks the check contract (see the
// README's "Your own checks").
func WithChecks(dirs ...string) Option {
	return func(s *settings) { s.opts.Checks = append(s.opts.Checks, dirs...) }
}

// BundleKey is the key a bundle's signature must verify with: a file
// holding a PEM public key or an HMAC secret, its ID ("default" unless
// given) and the signing algorithm ("RS256" unless given).
type BundleKey = judge.BundleKey

// WithBundle reads the operator's checks, and the operator policy when it
// carries one (at data.spawngate.policy), from an OPA bundle: a .tar.gz
// file from opa build, or a folder. With key, the bundle must be signed
// with it; with a nil key, a signed bundle is refused. A bundle that
// carries a policy cannot be combined with WithPolicyFile or WithPolicy.
func WithBundle(path string, key *BundleKey) Option {
	return func(s *settings) { s.opts.Bundle, s.opts.BundleKey = path, key }
}

// WithLimits sets the limits documents are read with.
func WithLimits(l Limits) Option { return func(s *settings) { s.opts.Limits = l } }

// WithTimeout bounds judging one plan (30s unless given).
func WithTimeout(d time.Duration) Option { return func(s *settings) { s.opts.Timeout = d } }

// WithResolvePaths also resolves every path on this machine's filesystem,
// following symlinks; the workspace roots must exist.
func WithResolvePaths() Option { return func(s *settings) { s.opts.ResolvePaths = true } }

// WithStrictExceptions refuses a plan that an exception of the operator
// policy matches nothing in, as --strict-exceptions does.
func WithStrictExceptions() Option { return func(s *settings) { s.opts.StrictExceptions = true } }

// WithToday judges the operator policy's exceptions as of a day
// (YYYY-MM-DD, UTC) instead of the day of each decision.
func WithToday(date string) Option { return func(s *settings) { s.opts.Today = date } }

// WithMaxListed bounds the violations one result lists (10,000 unless
// given); the rest are counted per child.
func WithMaxListed(n int) Option { return func(s *settings) { s.maxListed = n } }

// New builds a gate. Without WithPolicyFile or WithPolicy it has no
// operator policy, and judges a plan by the plan's own policy alone, which
// its author wrote: give it the operator's. An error is an *Error.
func New(ctx context.Context, opts ...Option) (*Gate, error) {
	s := settings{opts: judge.DefaultOptions(), maxListed: report.DefaultMaxListed}
	for _, o := range opts {
		o(&s)
	}
	if s.opts.Timeout <= 0 {
		s.opts.Timeout = judge.DefaultTimeout
	}
	// A gate in process lives long: every check is compiled at once, so no
	// decision waits for a compile.
	s.opts.CompileAll = true
	var g *judge.Gate
	var err error
	if s.policy != nil {
		g, err = judge.NewWithPolicy(ctx, s.opts, s.policyName, s.policy)
	} else {
		g, err = judge.New(ctx, s.opts, s.policyFile)
	}
	if err != nil {
		return nil, err
	}
	return &Gate{g: g, maxListed: max(s.maxListed, 0)}, nil
}

// Check judges a plan document (YAML or JSON, by the extension of name,
// or by its first character when name has none). An error is an *Error:
// the plan was not judged.
func (g *Gate) Check(ctx context.Context, name string, doc []byte) (Result, error) {
	if name == "" {
		name = "plan"
	}
	return g.g.JudgeBytes(ctx, name, doc, g.maxListed)
}

// Version is the spawngate module version, the OPA version it evaluates
// with, and the digest of the embedded checks and schemas, which decision
// logs record.
func Version() (spawngate, opa, checks string) {
	spawngate, opa = judge.Versions()
	return spawngate, opa, judge.ChecksDigest()
}
