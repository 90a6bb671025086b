package engine

// NoMemos and NoSharedValues are noMemos and noSharedValues for the tests
// of package engine_test.
var NoMemos, NoSharedValues = noMemos, noSharedValues

// Evaluations is how many times e has run a query of its checks, when it
// shares values (pure.go counts them); 0 when it does not.
func Evaluations(e *Engine) int64 {
	if e.shared == nil {
		return 0
	}
	return e.shared.evals.Load()
}
