package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// testBar returns a bar writing to a buffer with a clock the test moves.
func testBar(total int, tty bool) (*bar, *bytes.Buffer, *time.Time) {
	var buf bytes.Buffer
	clock := time.Unix(1000, 0)
	b := &bar{out: &buf, tty: tty, desc: "cql", total: total, now: func() time.Time { return clock }}
	return b, &buf, &clock
}

// Off a terminal: plain lines (no \r), one per progressLogEvery and one at
// the end; the rate counts only units done since the first update, so a
// resumed run (first update at 500) shows its own speed.
func TestBarPlainLines(t *testing.T) {
	b, buf, clock := testBar(1000, false)
	b.set(500, "q 1")
	*clock = clock.Add(progressLogEvery / 2)
	b.set(600, "q 2")
	if buf.Len() != 0 {
		t.Fatalf("printed before the log interval: %q", buf.String())
	}
	*clock = clock.Add(progressLogEvery / 2)
	b.set(700, "q 3")
	rate := 200 / progressLogEvery.Seconds()
	want := fmt.Sprintf("cql 700/1000 (70%%) %.3g/s", rate)
	if !strings.HasPrefix(buf.String(), want) || !strings.HasSuffix(buf.String(), "q 3\n") {
		t.Fatalf("log line %q, want prefix %q", buf.String(), want)
	}
	b.finish()
	b.finish()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "cql 700/1000") || strings.Contains(buf.String(), "\r") {
		t.Fatalf("output %q", buf.String())
	}
}

// On a terminal: redrawn with \r, no rate in the first second, a newline at
// the end.
func TestBarTerminal(t *testing.T) {
	b, buf, clock := testBar(100, true)
	b.set(1, "")
	*clock = clock.Add(300 * time.Millisecond)
	b.set(50, "")
	if strings.Contains(buf.String(), "/s") {
		t.Fatalf("a rate within the first second: %q", buf.String())
	}
	*clock = clock.Add(time.Second)
	b.set(100, "done")
	b.finish()
	out := buf.String()
	if !strings.HasPrefix(out, "\rcql [") || !strings.HasSuffix(out, "\n") || !strings.Contains(out, "100/100 (100%)") || !strings.Contains(out, "/s") {
		t.Fatalf("terminal output %q", out)
	}
	if strings.Count(out, "\n") != 1 {
		t.Fatalf("want one newline, at the end: %q", out)
	}
}

func TestBarQuiet(t *testing.T) {
	b, buf, _ := testBar(10, true)
	b.quiet = true
	b.set(5, "x")
	b.finish()
	if buf.Len() != 0 {
		t.Fatalf("quiet bar printed %q", buf.String())
	}
}

// stageBars keeps one bar per stage, in the order the stages first
// reported, each with its own total and message; off a terminal finish
// prints each bar's final line.
func TestStageBarsOneBarPerStage(t *testing.T) {
	out := captureStderr(t, func() {
		progress, finish := stageBars()
		progress("hopper-medium-v2 medium", 0, 10, "")
		progress("sac", 0, 5, "")
		progress("hopper-medium-v2 medium", 10, 10, "ok")
		progress("sac", 5, 5, "")
		finish()
	})
	want := "hopper-medium-v2 medium 10/10 (100%) ok\nsac 5/5 (100%)\n"
	if out != want {
		t.Errorf("stage bars printed %q, want %q", out, want)
	}
}

// phaseBars shows one bar at a time: a new phase, or a new total under the
// same phase, ends the bar before it (off a terminal, its final line).
func TestPhaseBarsOneAtATime(t *testing.T) {
	out := captureStderr(t, func() {
		b := &phaseBars{}
		b.update("bc", 0, 20, "")
		b.update("bc", 20, 20, "q 1")
		b.update("cql", 3, 40, "")
		b.update("cql", 4, 50, "gap 2")
		b.close()
		b.close()
	})
	want := "bc 20/20 (100%) q 1\ncql 3/40 (8%)\ncql 4/50 (8%) gap 2\n"
	if out != want {
		t.Errorf("phase bars printed %q, want %q", out, want)
	}
}

// captureStderr runs f with os.Stderr sent to a file (not a terminal, so
// bars print plain lines) and returns what f wrote there.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	file, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = file
	defer func() { os.Stderr = saved }()
	f()
	os.Stderr = saved
	out, err := os.ReadFile(file.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
