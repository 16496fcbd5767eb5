// Package memcheck refuses allocations that cannot fit before they are
// attempted: one huge flag value (--transitions 9223372036854775807,
// --hidden 200000,200000) otherwise ends in a makeslice panic or a fatal
// out-of-memory dump, after side effects such as a half-made run directory.
package memcheck

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// fallback bounds a request when /proc/meminfo cannot be read (1 TiB).
const fallback = 1 << 40

// Available returns the memory the kernel reports as available for new
// allocations (MemAvailable of /proc/meminfo) in bytes, and whether it
// could be read.
func Available() (uint64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0, false
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil || kb > 1<<53 {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}

// Check returns an error when bytes (an estimate, as a float64 so that a
// product of huge sizes cannot wrap) exceed the available memory (or 1 TiB
// when it is unknown). what names the request, e.g. "--transitions
// 1000000000000 (hopper-medium-v2)".
func Check(what string, bytes float64) error {
	avail, ok := Available()
	limit, src := float64(avail), "available (MemAvailable in /proc/meminfo)"
	if !ok {
		limit, src = fallback, "koopq's bound when the available memory is unknown"
	}
	if bytes != bytes || bytes > limit { // NaN too
		return fmt.Errorf("%s needs about %s of memory, more than the %s %s", what, Format(bytes), Format(limit), src)
	}
	return nil
}

// Format writes a byte count with a binary unit: "1.5 GiB", "3.6e+05 TiB".
func Format(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if b >= 1e4 {
		return fmt.Sprintf("%.2g %s", b, units[i])
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}
