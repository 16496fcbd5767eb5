// Package suggest finds the known name closest to a mistyped one, for the
// "did you mean" hints of errors about unknown names.
package suggest

import (
	"fmt"
	"strings"
)

// Closest returns the name in known nearest to name by edit distance
// (case-insensitive), or "" when none is near: within about a third of the longer
// name's length, at least 1 edit, at most 3. A known name that starts with
// name (a truncation) also counts as near.
func Closest(name string, known []string) string {
	l := strings.ToLower(name)
	best, bestD, bestL := "", 0, 0
	for _, k := range known {
		kl := strings.ToLower(k)
		d := distance(l, kl)
		limit := max(1, min(3, (max(len(l), len(kl))+1)/3))
		if d > limit && !(len(l) >= 2 && strings.HasPrefix(kl, l)) {
			continue
		}
		dl := abs(len(kl) - len(l)) // ties: the one of the closest length
		if best == "" || d < bestD || d == bestD && dl < bestL {
			best, bestD, bestL = k, d, dl
		}
	}
	return best
}

// Hint is Closest as an error suffix: `; did you mean "x"?`, or "".
func Hint(name string, known []string) string {
	if c := Closest(name, known); c != "" && c != name {
		return fmt.Sprintf("; did you mean %q?", c)
	}
	return ""
}

// distance is the Levenshtein distance between a and b (in runes), with a
// transposition of two neighbours counting as one edit.
func distance(a, b string) int {
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

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
