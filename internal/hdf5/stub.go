//go:build !cgo || nohdf5

package hdf5

import (
	"errors"
	"os"
)

// ErrUnavailable is returned by every operation when koopq was built without
// cgo or with the nohdf5 tag.
var ErrUnavailable = errors.New("hdf5: koopq was built without HDF5 support (needs cgo and libhdf5-dev)")

// Available reports whether this build links libhdf5: not this one.
const Available = false

// IsHDF5 reports whether path starts with an HDF5 signature.
func IsHDF5(path string) (bool, error) {
	b := make([]byte, 8)
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	n, _ := f.ReadAt(b, 0)
	return n == 8 && string(b) == "\x89HDF\r\n\x1a\n", nil
}

// File is an open HDF5 file (unavailable in this build).
type File struct{ Group }

// Group is an open HDF5 group (unavailable in this build).
type Group struct{}

// Kind is the kind of object a link points to.
type Kind int

// Object kinds returned by Group.Kind.
const (
	KindNone Kind = iota
	KindGroup
	KindDataset
	KindOther
)

// Open fails: no HDF5 support in this build.
func Open(path string) (*File, error) { return nil, ErrUnavailable }

// OpenRW fails: no HDF5 support in this build.
func OpenRW(path string) (*File, error) { return nil, ErrUnavailable }

// Create fails: no HDF5 support in this build.
func Create(path string) (*File, error) { return nil, ErrUnavailable }

// Path returns "".
func (f *File) Path() string { return "" }

// Flush fails.
func (f *File) Flush() error { return ErrUnavailable }

// Close does nothing.
func (f *File) Close() error { return nil }

// Name returns "".
func (g *Group) Name() string { return "" }

// Close does nothing.
func (g *Group) Close() error { return nil }

// OpenGroup fails.
func (g *Group) OpenGroup(string) (*Group, error) { return nil, ErrUnavailable }

// CreateGroup fails.
func (g *Group) CreateGroup(string) (*Group, error) { return nil, ErrUnavailable }

// Kind returns KindNone.
func (g *Group) Kind(string) Kind { return KindNone }

// Has returns false.
func (g *Group) Has(string) bool { return false }

// Members fails.
func (g *Group) Members() ([]string, error) { return nil, ErrUnavailable }

// Walk fails.
func (g *Group) Walk() ([]string, error) { return nil, ErrUnavailable }

// Stat fails.
func (g *Group) Stat(string) (Info, error) { return Info{}, ErrUnavailable }

// ReadFloat32 fails.
func (g *Group) ReadFloat32(string) ([]float32, []int, error) { return nil, nil, ErrUnavailable }

// ReadFloat64 fails.
func (g *Group) ReadFloat64(string) ([]float64, []int, error) { return nil, nil, ErrUnavailable }

// ReadInt64 fails.
func (g *Group) ReadInt64(string) ([]int64, []int, error) { return nil, nil, ErrUnavailable }

// ReadUint8 fails.
func (g *Group) ReadUint8(string) ([]uint8, []int, error) { return nil, nil, ErrUnavailable }

// ReadBool fails.
func (g *Group) ReadBool(string) ([]bool, []int, error) { return nil, nil, ErrUnavailable }

// ReadStrings fails.
func (g *Group) ReadStrings(string) ([]string, []int, error) { return nil, nil, ErrUnavailable }

// ReadAny fails.
func (g *Group) ReadAny(string) (any, []int, error) { return nil, nil, ErrUnavailable }

// AttrNames fails.
func (g *Group) AttrNames(string) ([]string, error) { return nil, ErrUnavailable }

// ReadAttr fails.
func (g *Group) ReadAttr(string, string) (any, []int, error) { return nil, nil, ErrUnavailable }

// ReadAttrString fails.
func (g *Group) ReadAttrString(string, string) (string, error) { return "", ErrUnavailable }

// WriteFloat32 fails.
func (g *Group) WriteFloat32(string, []float32, []int, *WriteOptions) error { return ErrUnavailable }

// WriteFloat64 fails.
func (g *Group) WriteFloat64(string, []float64, []int, *WriteOptions) error { return ErrUnavailable }

// WriteInt64 fails.
func (g *Group) WriteInt64(string, []int64, []int, *WriteOptions) error { return ErrUnavailable }

// WriteUint8 fails.
func (g *Group) WriteUint8(string, []uint8, []int, *WriteOptions) error { return ErrUnavailable }

// WriteBool fails.
func (g *Group) WriteBool(string, []bool, []int, *WriteOptions) error { return ErrUnavailable }

// WriteString fails.
func (g *Group) WriteString(string, string) error { return ErrUnavailable }

// WriteAttrString fails.
func (g *Group) WriteAttrString(string, string, string) error { return ErrUnavailable }

// WriteAttrFloat64 fails.
func (g *Group) WriteAttrFloat64(string, string, ...float64) error { return ErrUnavailable }

// WriteAttrInt64 fails.
func (g *Group) WriteAttrInt64(string, string, ...int64) error { return ErrUnavailable }
