// Package hdf5 is a minimal, safe cgo binding to libhdf5 (Debian
// libhdf5-dev, found with pkg-config) for what koopq needs: open and create
// files and groups, read and write numeric, boolean and string datasets and
// attributes, chunked layouts with gzip and shuffle filters.
//
// Safety rules:
//   - libhdf5 ("serial" build) is not thread-safe, so every call into it is
//     serialized behind one package mutex.
//   - HDF5's automatic error-stack printing is switched off; failures come
//     back as Go errors carrying HDF5's messages.
//   - Before every read, the stored type class and shape are checked against
//     what the caller asked for, and the buffer is sized from the stored
//     shape; a mismatch is an error, never a crash. Reads whose size is
//     implausible for the file's size are refused, so a corrupted header cannot
//     make us allocate terabytes.
//
// h5py conventions are followed: a numpy bool is an HDF5 enum over int8 with
// members FALSE=0 and TRUE=1, and Python str is a variable-length UTF-8
// string.
package hdf5

import (
	"fmt"
	"strings"
	"sync"
)

// RangeError reports a stored value that does not fit the type it is read
// as: a finite float64 beyond ±3.4028235e38 read as float32 would otherwise
// silently become ±Inf.
type RangeError struct {
	Name   string  // the dataset, as "file: /key"
	Index  int     // flat (row-major) index of the first such value
	Value  float64 // the stored value
	Stored string  // stored type, e.g. "float64"
	Want   string  // type read as, e.g. "float32"
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("hdf5: %s: value %g at index %d is out of %s range (stored as %s)", e.Name, e.Value, e.Index, e.Want, e.Stored)
}

// mu serializes every call into libhdf5.
var mu sync.Mutex

// Class is the HDF5 datatype class of a stored dataset or attribute.
type Class int

// Datatype classes that koopq distinguishes.
const (
	ClassOther   Class = iota // compound, reference, opaque, array, vlen (non-string), ...
	ClassInteger              // signed or unsigned integer
	ClassFloat                // IEEE float
	ClassString               // fixed or variable length string
	ClassEnum                 // enumeration (h5py bool is an enum; see Type.Bool)
)

// Type describes a stored datatype.
type Type struct {
	Class  Class
	Size   int  // bytes per element (for variable-length strings: size of the pointer)
	Signed bool // integers only
	Bool   bool // enum over an integer with exactly the members FALSE=0 and TRUE=1 (h5py's bool)
	VarLen bool // variable-length string
}

// String returns a numpy-like name: float32, int64, uint8, bool, str, ...
func (t Type) String() string {
	switch t.Class {
	case ClassInteger:
		if t.Signed {
			return fmt.Sprintf("int%d", 8*t.Size)
		}
		return fmt.Sprintf("uint%d", 8*t.Size)
	case ClassFloat:
		return fmt.Sprintf("float%d", 8*t.Size)
	case ClassString:
		if t.VarLen {
			return "str"
		}
		return fmt.Sprintf("S%d", t.Size)
	case ClassEnum:
		if t.Bool {
			return "bool"
		}
		return fmt.Sprintf("enum%d", 8*t.Size)
	}
	return "other"
}

// Info describes a stored dataset without reading its data.
type Info struct {
	Name    string   // path relative to the group it was asked from
	Type    Type     // stored element type
	Shape   []int    // dimensions; empty for a scalar
	Chunk   []int    // chunk dimensions; nil for contiguous or compact layouts
	Filters []string // filter pipeline in order, e.g. ["shuffle", "gzip"]
}

// Len returns the number of elements (1 for a scalar).
func (in Info) Len() int {
	n := 1
	for _, d := range in.Shape {
		n *= d
	}
	return n
}

// ShapeString formats the shape like numpy: (1000, 17).
func ShapeString(shape []int) string {
	if len(shape) == 1 {
		return fmt.Sprintf("(%d,)", shape[0])
	}
	s := make([]string, len(shape))
	for i, d := range shape {
		s[i] = fmt.Sprint(d)
	}
	return "(" + strings.Join(s, ", ") + ")"
}

// WriteOptions control the storage layout of a written dataset. The zero
// value writes a contiguous, uncompressed dataset.
type WriteOptions struct {
	// Chunk is the chunk shape (same rank as the data). When nil and Gzip or
	// Shuffle is set, a chunk of about 256 KiB of whole rows is chosen.
	Chunk []int
	// Gzip is the deflate level 1..9; 0 disables compression.
	Gzip int
	// Shuffle enables the byte-shuffle filter before gzip (better ratios for
	// floats); h5py reads it natively.
	Shuffle bool
}

func (o *WriteOptions) chunked() bool {
	return o != nil && (o.Chunk != nil || o.Gzip > 0 || o.Shuffle)
}

// autoChunk picks a chunk of whole rows totalling about 256 KiB.
func autoChunk(shape []int, elemSize int) []int {
	c := make([]int, len(shape))
	if len(shape) == 0 {
		return c
	}
	row := elemSize
	for i := 1; i < len(shape); i++ {
		c[i] = max(shape[i], 1)
		row *= c[i]
	}
	rows := max(1, (256<<10)/max(row, 1))
	c[0] = max(1, min(rows, shape[0]))
	return c
}
