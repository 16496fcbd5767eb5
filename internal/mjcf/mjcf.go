// Package mjcf formats numbers for MJCF (MuJoCo XML) attributes, for the
// environments that generate their scenes in Go (env/mujoco, env/manip,
// env/panda).
package mjcf

import (
	"strconv"
	"strings"
)

// Num formats v with the fewest digits that parse back to exactly v, so a
// generated scene carries the same float64 values the Go code holds.
func Num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Nums formats vs as a space-separated attribute value ("0 0.6 -0.1").
func Nums(vs ...float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = Num(v)
	}
	return strings.Join(s, " ")
}
