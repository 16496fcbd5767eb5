// Package layers holds no code: its test keeps the module's import graph in
// the layers docs/architecture.md lists, so the document and the code cannot
// drift apart. Every package must be listed, and every non-test import must
// point to a lower layer (or stay inside its own entry, as env/classic → env
// and internal/hdf5 → internal/regfile do).
package layers
