package version

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// Tests run without a VCS stamp, inside koopq's checkout: the git fallback
// gives the checkout's commit, and String carries it marked as unstamped
// (a binary built earlier and run in a checkout that has moved on would
// otherwise claim the checkout's commit as its own code).
func TestFallbackInKoopqCheckout(t *testing.T) {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("the tests run in a git checkout of koopq: %v", err)
	}
	i := Get()
	if i.Commit+"\n" != string(out) {
		t.Errorf("commit %q, git says %q", i.Commit, out)
	}
	if i.Source != SourceCheckout {
		t.Errorf("source %q, want %q (tests carry no VCS stamp)", i.Source, SourceCheckout)
	}
	if !regexp.MustCompile(`^devel\+[0-9a-f]{12}(-dirty)?-unstamped$`).MatchString(i.String()) {
		t.Errorf("String() = %q", i.String())
	}
}

// In another git repository the fallback does not take that repository's
// commit for koopq's.
func TestFallbackIgnoresOtherRepositories(t *testing.T) {
	if !inKoopqCheckout() {
		t.Fatal("the package directory is not recognized as a koopq checkout")
	}
	other := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = other
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(other)
	if inKoopqCheckout() {
		t.Error("another module's repository was taken for a koopq checkout")
	}
}

// A test binary carries no VCS stamp; a file that is not a Go binary is an
// error, not "unstamped".
func TestStamped(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := Stamped(exe); err != nil || ok {
		t.Errorf("Stamped(test binary) = %v, %v; want false, nil", ok, err)
	}
	notGo := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(notGo, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Stamped(notGo); err == nil {
		t.Error("a shell script was read as a Go binary")
	}
}

// TestStringNamesTheCommitOnce: a stamped build's pseudo-version already
// holds the commit and "+dirty"; String does not repeat them, and adds
// them to a version that lacks them.
func TestStringNamesTheCommitOnce(t *testing.T) {
	const commit = "3d52feead950376cbba294bf3d234a505bb8eac4"
	for _, c := range []struct {
		in   Info
		want string
	}{
		{Info{Module: "v0.0.0-20261204093501-3d52feead950+dirty", Commit: commit, Dirty: true, Source: SourceBuild},
			"v0.0.0-20261204093501-3d52feead950+dirty"},
		{Info{Module: "v0.0.0-20261204093501-3d52feead950", Commit: commit, Source: SourceBuild},
			"v0.0.0-20261204093501-3d52feead950"},
		{Info{Module: "v1.2.0", Commit: commit, Dirty: true, Source: SourceBuild}, "v1.2.0+3d52feead950-dirty"},
		{Info{Module: "devel", Commit: commit, Source: SourceCheckout}, "devel+3d52feead950-unstamped"},
		{Info{Module: "devel", Commit: "unknown"}, "devel"},
	} {
		if got := c.in.String(); got != c.want {
			t.Errorf("%+v: String() = %q, want %q", c.in, got, c.want)
		}
	}
}
