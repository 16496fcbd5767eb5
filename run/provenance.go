// Package run turns koopq's algorithms into experiments: run directories
// holding the config, metrics (JSONL and CSV), atomic checkpoints and a
// results JSON with provenance (git commit, machine, BLAS kernel, seed), plus
// sweeps, result tables and plots. It knows every package below it; none of
// them know it.
package run

import (
	"bufio"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/koopq/koopq/internal/blas"
	"github.com/koopq/koopq/internal/version"
	"github.com/koopq/koopq/rundir"
)

// Provenance records what produced a result: code version and machine
// (results.json's provenance; see rundir.Provenance).
type Provenance = rundir.Provenance

// CurrentProvenance describes this process.
func CurrentProvenance() Provenance {
	p := CodeProvenance()
	g := blas.Describe()
	p.BLAS, p.BLASPrecision, p.BLASISA, p.BLASThreads, p.BLASKernel = g.Backend, g.Precision, g.ISA, g.Threads, g.Kernel
	p.BLASSubnormals = g.Subnormals
	return p
}

// CodeProvenance is CurrentProvenance without the GEMM fields: what can be
// said when the GEMM settings (flags, environment) are invalid.
func CodeProvenance() Provenance {
	p := Provenance{Version: "devel", Commit: "unknown", GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		Started: time.Now().UTC().Format(time.RFC3339), CommandLine: strings.Join(os.Args, " ")}
	v := version.Get()
	p.Version, p.Commit, p.Dirty, p.CommitSource = v.Module, v.Commit, v.Dirty, v.Source
	p.Hostname, _ = os.Hostname()
	p.CPUModel = cpuModel()
	return p
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
