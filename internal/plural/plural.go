// Package plural writes counts with their nouns in English for the CLI's
// messages: "1 run", "2 runs". Sweeps of one run, evaluations of one episode
// and reports of one seed are common, and "1 runs were already done" reads
// as a bug.
package plural

import "strconv"

// Count returns n followed by noun, with an "s" added unless n is 1 or -1:
// Count(1, "run") = "1 run", Count(0, "run") = "0 runs". For nouns whose plural
// is not noun+"s", use Pick.
func Count(n int, noun string) string {
	return strconv.Itoa(n) + " " + Pick(n, noun, noun+"s")
}

// Pick returns one when n is 1 or -1 and many otherwise; for verbs and
// pronouns that agree with a count ("was"/"were", "it"/"they") and for
// irregular plurals.
func Pick(n int, one, many string) string {
	if n == 1 || n == -1 {
		return one
	}
	return many
}
