// Package spelling finds the name a slip of the keyboard meant, for the
// "did you mean" of every message that names something unknown: a command,
// a flag, a host, a key of a plan or a policy. It lives apart so that the
// CLI and the plan's schema step suggest by one rule.
package spelling

// Closest is the one of names closest to what was typed, when it is close
// enough to be a slip (an edit distance of at most a third of its length,
// and at most 2); "" otherwise. Of two as close, the first in names wins.
func Closest(typed string, names []string) string {
	best, bestDist := "", 3
	for _, n := range names {
		d := Distance(typed, n)
		if d < bestDist && d*3 <= max(len(n), 3) {
			best, bestDist = n, d
		}
	}
	return best
}

// Distance counts the insertions, deletions, substitutions and swaps of
// two neighbours that turn a into b (optimal string alignment).
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
