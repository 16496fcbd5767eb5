package run

import (
	"strings"
	"testing"

	"github.com/koopq/koopq/internal/blas"
)

// results.json's provenance names the GEMM backend, precision and ISA that
// produced the numbers.
func TestProvenanceRecordsGEMMLayer(t *testing.T) {
	old := blas.Describe()
	defer func() { _ = blas.Configure(old.Backend, old.Precision) }()
	for _, backend := range blas.Available() {
		for _, prec := range []string{"f32", "bf16"} {
			if blas.Configure(backend, prec) != nil {
				continue
			}
			p := CurrentProvenance()
			if p.BLAS != backend || p.BLASPrecision != prec || p.BLASISA == "" || p.BLASThreads < 1 || p.BLASKernel == "" {
				t.Errorf("%s/%s: provenance %+v", backend, prec, p)
			}
			if backend == "onednn" && !strings.Contains(p.BLASKernel, "oneDNN") {
				t.Errorf("onednn kernel %q does not name oneDNN", p.BLASKernel)
			}
		}
	}
}
