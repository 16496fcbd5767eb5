package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/internal/blas"
	"github.com/koopq/koopq/internal/version"
	"github.com/koopq/koopq/run"
)

// versionText is what `koopq --version` prints: the code (module version,
// git commit, whether the tree was modified), the Go toolchain and the GEMM
// backend that a command with the same --backend/--precision (else the
// environment's, else the default) would use, with its precision, CPU ISA,
// threads and kernel. It is computed only when asked for: in a source build
// without VCS stamps it asks git.
func versionText() string {
	// Cobra answers --version before any verb's hooks run, so the GEMM
	// flags are applied here; a bad one is reported on the gemm line.
	versionErr = configureGEMM()
	var p run.Provenance
	if versionErr == nil {
		p = run.CurrentProvenance()
	} else {
		p = run.CodeProvenance() // asking the GEMM layer would meet the same bad setting
	}
	var b strings.Builder
	fmt.Fprintf(&b, "koopq %s\n", p.Version)
	commit := p.Commit
	if p.Dirty {
		commit += " (modified tree)"
	}
	if p.CommitSource == version.SourceCheckout {
		commit += " (no VCS stamp in this binary: the HEAD of the checkout it runs in, which is its code only if it was built from that HEAD; `make build` stamps binaries)"
	}
	fmt.Fprintf(&b, "commit: %s\n", commit)
	fmt.Fprintf(&b, "go:     %s %s/%s\n", p.GoVersion, p.OS, p.Arch)
	if versionErr != nil {
		fmt.Fprintf(&b, "gemm:   %v\n", versionErr)
		return b.String()
	}
	fmt.Fprintf(&b, "gemm:   %s %s, ISA %s, %d thread(s) per GEMM, subnormals %s; kernel %s\n", p.BLAS, p.BLASPrecision, p.BLASISA,
		p.BLASThreads, p.BLASSubnormals, p.BLASKernel)
	if w := blas.Warning(); w != "" {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return b.String()
}

// versionErr is a bad --backend/--precision met while printing --version;
// main exits 1 with it, as any verb would.
var versionErr error

// setVersionFlag gives root its --version flag. Cobra adds --version when
// Version is non-empty; the template calls versionText lazily, so
// ordinary commands never pay for it.
func setVersionFlag(root *cobra.Command) {
	root.Version = "koopq"
	cobra.AddTemplateFunc("koopqVersion", versionText)
	root.SetVersionTemplate("{{koopqVersion}}")
}
