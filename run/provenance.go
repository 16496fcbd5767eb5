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
)

// Provenance records what produced a result: code version and machine.
type Provenance struct {
	Version string `json:"version"`    // module version or "devel"
	Commit  string `json:"git_commit"` // VCS revision the binary was built from
	Dirty   bool   `json:"git_dirty"`  // built from a modified tree
	// CommitSource is "build" when Commit is the binary's own VCS stamp, and
	// "checkout" when the binary has none and Commit is the HEAD of the koopq
	// checkout it ran in (its code only if built from that HEAD; build with
	// `make build` for stamped binaries); "" when Commit is "unknown".
	CommitSource  string `json:"git_commit_source"`
	GoVersion     string `json:"go_version"`
	OS            string `json:"os"`
	Arch          string `json:"arch"`
	CPUs          int    `json:"cpus"`
	CPUModel      string `json:"cpu_model"`
	Hostname      string `json:"hostname"`
	BLAS          string `json:"blas"`           // GEMM backend: onednn, openblas or gonum
	BLASPrecision string `json:"blas_precision"` // GEMM inputs: f32, or bf16 (mixed precision, f32 accumulation)
	BLASISA       string `json:"blas_isa"`       // CPU instruction set the GEMM backend dispatches to
	BLASThreads   int    `json:"blas_threads"`   // threads inside one GEMM call
	BLASKernel    string `json:"blas_kernel"`    // implementation: oneDNN matmul kernels, or OpenBLAS core type and whether OPENBLAS_CORETYPE forced it
	// BLASSubnormals is "flushed" (GEMMs under FTZ/DAZ, the default) or
	// "kept" (IEEE subnormals: KOOPQ_SUBNORMALS=keep, or gonum); empty in
	// files written before koopq recorded it (they kept subnormals).
	BLASSubnormals string `json:"blas_subnormals,omitempty"`
	GOMAXPROCS     int    `json:"gomaxprocs"`
	Started        string `json:"started"` // RFC 3339
	CommandLine    string `json:"command_line"`
}

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
