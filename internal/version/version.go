// Package version reports which code a koopq binary runs: the module version
// and the git commit, from the build info that `go build -buildvcs=true`
// stamps (the Makefile builds that way), falling back to asking git when the
// working directory is inside a koopq checkout (tests, `go run` and builds
// with -buildvcs=false carry no VCS stamp).
package version

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
)

// Where Info.Commit came from.
const (
	// SourceBuild: the VCS stamp `go build -buildvcs=true` wrote into the
	// binary, so Commit is the code the binary was built from.
	SourceBuild = "build"
	// SourceCheckout: the binary carries no VCS stamp and Commit is the HEAD
	// of the koopq checkout the process runs in. That is the binary's code
	// only if it was built from that HEAD (true for `go test` and `go run`,
	// not for a binary built earlier and run after a checkout moved on).
	SourceCheckout = "checkout"
)

// Info is the code identity of this process.
type Info struct {
	Module string // module version, "devel" for a source build
	Commit string // git commit hash, "unknown" if neither the build nor git can tell
	Dirty  bool   // built from (or running in) a tree with uncommitted changes
	// Source says how Commit was learnt: SourceBuild, SourceCheckout, or ""
	// when Commit is "unknown".
	Source string
}

var (
	once sync.Once
	info Info
)

// Get returns the code identity, computed once.
func Get() Info {
	once.Do(func() {
		info = Info{Module: "devel", Commit: "unknown"}
		if bi, ok := debug.ReadBuildInfo(); ok {
			info = fromBuildInfo(bi)
		}
		if info.Commit == "unknown" && inKoopqCheckout() {
			if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
				info.Commit, info.Source = strings.TrimSpace(string(out)), SourceCheckout
				if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
					info.Dirty = len(strings.TrimSpace(string(st))) > 0
				}
			}
		}
	})
	return info
}

// modulePath is koopq's module path, as in go.mod.
const modulePath = "github.com/koopq/koopq"

// inKoopqCheckout reports whether the working directory is inside a git
// checkout of koopq itself (its top level holds koopq's go.mod), so that a
// binary without a VCS stamp run inside some other repository does not
// report that repository's commit as its own.
func inKoopqCheckout() bool {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return false
	}
	mod, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "go.mod"))
	if err != nil {
		return false
	}
	first, _, _ := strings.Cut(string(mod), "\n")
	return strings.TrimSpace(first) == "module "+modulePath
}

// String is "<module>+<commit[:12]>[-dirty][-unstamped]", e.g.
// "devel+b6fac10892fb-dirty"; "-unstamped" marks a commit read from the
// checkout (SourceCheckout) rather than from the binary's own VCS stamp.
// A stamped build's module version already names the commit and the dirty
// mark (e.g. "v0.0.0-20261204093501-3d52feead950+dirty"), and then neither
// is repeated.
func (i Info) String() string {
	s := i.Module
	if i.Commit != "unknown" && len(i.Commit) >= 12 && !strings.Contains(s, i.Commit[:12]) {
		s += "+" + i.Commit[:12]
	}
	if i.Dirty && !strings.HasSuffix(s, "+dirty") {
		s += "-dirty"
	}
	if i.Source == SourceCheckout {
		s += "-unstamped"
	}
	return s
}

// Stamped reports whether the Go binary at path carries a VCS stamp (the
// commit it was built from), read from its embedded build info. A sweep
// uses it to warn before launching long runs with a binary whose results
// could only record the checkout's HEAD (SourceCheckout).
func Stamped(path string) (bool, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("reading the build info of %s: %w", path, err)
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			return true, nil
		}
	}
	return false, nil
}

// ReadBinary reads the code identity stamped into the Go binary at path:
// its commit and whether its tree was modified (Source is SourceBuild), or
// Commit "unknown" when it carries no VCS stamp.
func ReadBinary(path string) (Info, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return Info{}, fmt.Errorf("reading the build info of %s: %w", path, err)
	}
	return fromBuildInfo(bi), nil
}

// fromBuildInfo is the code identity a binary's build info stamps.
func fromBuildInfo(bi *debug.BuildInfo) Info {
	i := Info{Module: "devel", Commit: "unknown"}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		i.Module = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Commit, i.Source = s.Value, SourceBuild
		case "vcs.modified":
			i.Dirty = s.Value == "true"
		}
	}
	return i
}
