// Package version reports which code a koopq binary runs: the module version
// and the git commit, from the build info that `go build -buildvcs=true`
// stamps (the Makefile builds that way), falling back to asking git when the
// working directory is inside a koopq checkout (tests, `go run` and builds
// with -buildvcs=false carry no VCS stamp).
package version

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
)

// Info is the code identity of this process.
type Info struct {
	Module string // module version, "devel" for a source build
	Commit string // git commit hash, "unknown" if neither the build nor git can tell
	Dirty  bool   // built from (or running in) a tree with uncommitted changes
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
			if v := bi.Main.Version; v != "" && v != "(devel)" {
				info.Module = v
			}
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					info.Commit = s.Value
				case "vcs.modified":
					info.Dirty = s.Value == "true"
				}
			}
		}
		if info.Commit == "unknown" && inKoopqCheckout() {
			if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
				info.Commit = strings.TrimSpace(string(out))
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

// String is "<module>+<commit[:12]>[-dirty]", e.g. "devel+b6fac10892fb-dirty".
func (i Info) String() string {
	s := i.Module
	if i.Commit != "unknown" && len(i.Commit) >= 12 {
		s += "+" + i.Commit[:12]
	}
	if i.Dirty {
		s += "-dirty"
	}
	return s
}
