//go:build cgo && !nohdf5

package hdf5

/*
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

static hid_t kq2_native_int64(void) { return H5T_NATIVE_INT64; }
static hid_t kq2_native_float(void) { return H5T_NATIVE_FLOAT; }
static hid_t kq2_native_double(void) { return H5T_NATIVE_DOUBLE; }
static hid_t kq2_native_uint8(void) { return H5T_NATIVE_UINT8; }
static hid_t kq2_ieee_f32le(void) { return H5T_IEEE_F32LE; }
static hid_t kq2_ieee_f64le(void) { return H5T_IEEE_F64LE; }
static hid_t kq2_std_i64le(void) { return H5T_STD_I64LE; }
static hid_t kq2_std_u8le(void) { return H5T_STD_U8LE; }
static hid_t kq2_std_i8le(void) { return H5T_STD_I8LE; }
static hid_t kq2_dcpl(void) { return H5P_DATASET_CREATE; }
static hid_t kq2_lcpl(void) { return H5P_LINK_CREATE; }

static herr_t kq2_dread(hid_t d, hid_t mt, void *buf) {
	return H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
}
static herr_t kq2_dwrite(hid_t d, hid_t mt, const void *buf) {
	return H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
}
static hid_t kq2_vlen_str(H5T_cset_t cset) {
	hid_t t = H5Tcopy(H5T_C_S1);
	if (t < 0) return t;
	if (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, cset) < 0) { H5Tclose(t); return -1; }
	return t;
}
static hid_t kq2_fixed_str(size_t size) {
	hid_t t = H5Tcopy(H5T_C_S1);
	if (t < 0) return t;
	if (H5Tset_size(t, size) < 0 || H5Tset_strpad(t, H5T_STR_NULLPAD) < 0) { H5Tclose(t); return -1; }
	return t;
}
static hid_t kq2_bool_enum(void) {
	hid_t t = H5Tenum_create(H5T_NATIVE_INT8);
	if (t < 0) return t;
	signed char f = 0, tr = 1;
	if (H5Tenum_insert(t, "FALSE", &f) < 0 || H5Tenum_insert(t, "TRUE", &tr) < 0) { H5Tclose(t); return -1; }
	return t;
}
static char *kq2_str_at(char **p, size_t i) { return p[i]; }
static void kq2_set_str_at(char **p, size_t i, char *s) { p[i] = s; }
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// object is an open dataset or attribute; both read the same way.
type object struct {
	id   hid
	attr bool
	name string // for messages: file path and object path
}

func (o object) typ() hid {
	if o.attr {
		return C.H5Aget_type(o.id)
	}
	return C.H5Dget_type(o.id)
}

func (o object) space() hid {
	if o.attr {
		return C.H5Aget_space(o.id)
	}
	return C.H5Dget_space(o.id)
}

func (o object) read(mt hid, buf unsafe.Pointer) C.herr_t {
	if o.attr {
		return C.H5Aread(o.id, mt, buf)
	}
	return C.kq2_dread(o.id, mt, buf)
}

func (o object) close() {
	if o.attr {
		C.H5Aclose(o.id)
	} else {
		C.H5Dclose(o.id)
	}
}

// describe inspects a datatype id. Callers hold the lock.
func describe(tid hid) (Type, error) {
	var t Type
	size := int(C.H5Tget_size(tid))
	if size <= 0 {
		return t, lastErr("hdf5: datatype size")
	}
	t.Size = size
	switch C.H5Tget_class(tid) {
	case C.H5T_INTEGER:
		t.Class = ClassInteger
		t.Signed = C.H5Tget_sign(tid) == C.H5T_SGN_2
	case C.H5T_FLOAT:
		t.Class = ClassFloat
	case C.H5T_STRING:
		t.Class = ClassString
		t.VarLen = C.H5Tis_variable_str(tid) > 0
	case C.H5T_ENUM:
		t.Class = ClassEnum
		t.Bool = isBoolEnum(tid)
	default:
		t.Class = ClassOther
	}
	return t, nil
}

// isBoolEnum reports whether tid is h5py's bool: an enum over a 1-byte
// integer whose members are exactly FALSE=0 and TRUE=1.
func isBoolEnum(tid hid) bool {
	if C.H5Tget_nmembers(tid) != 2 || C.H5Tget_size(tid) != 1 {
		return false
	}
	want := map[string]int8{"FALSE": 0, "TRUE": 1}
	for i := C.uint(0); i < 2; i++ {
		p := C.H5Tget_member_name(tid, i)
		if p == nil {
			C.H5Eclear2(C.H5E_DEFAULT)
			return false
		}
		name := C.GoString(p)
		C.H5free_memory(unsafe.Pointer(p))
		var v [8]byte
		if C.H5Tget_member_value(tid, i, unsafe.Pointer(&v[0])) < 0 {
			C.H5Eclear2(C.H5E_DEFAULT)
			return false
		}
		w, ok := want[name]
		if !ok || int8(v[0]) != w {
			return false
		}
		delete(want, name)
	}
	return len(want) == 0
}

// shapeOf returns the dimensions of a dataspace; scalar → empty slice.
func shapeOf(sid hid, what string) ([]int, error) {
	switch C.H5Sget_simple_extent_type(sid) {
	case C.H5S_SCALAR:
		return []int{}, nil
	case C.H5S_SIMPLE:
	case C.H5S_NULL:
		return nil, fmt.Errorf("hdf5: %s has an empty (null) dataspace", what)
	default:
		return nil, lastErr("hdf5: dataspace of " + what)
	}
	rank := int(C.H5Sget_simple_extent_ndims(sid))
	if rank < 0 || rank > 32 {
		return nil, fmt.Errorf("hdf5: %s has invalid rank %d", what, rank)
	}
	if rank == 0 {
		return []int{}, nil
	}
	dims := make([]C.hsize_t, rank)
	if C.H5Sget_simple_extent_dims(sid, &dims[0], nil) < 0 {
		return nil, lastErr("hdf5: dims of " + what)
	}
	shape := make([]int, rank)
	for i, d := range dims {
		if uint64(d) > 1<<48 {
			return nil, fmt.Errorf("hdf5: %s has implausible dimension %d", what, uint64(d))
		}
		shape[i] = int(d)
	}
	return shape, nil
}

// count multiplies out a shape, refusing overflow.
func count(shape []int) (int, bool) {
	n := 1
	for _, d := range shape {
		if d != 0 && n > math.MaxInt32*1024/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// openDataset opens name below g as an object. Callers hold the lock.
func (g *Group) openDataset(name string) (object, error) {
	what := g.file.path + ": " + g.child(name)
	if err := g.check(); err != nil {
		return object{}, err
	}
	switch k := g.kind(name); k {
	case KindDataset:
	case KindNone:
		return object{}, fmt.Errorf("hdf5: %s: no such dataset", what)
	default:
		return object{}, fmt.Errorf("hdf5: %s is a %s, not a dataset", what, k)
	}
	p, free := cstr(name)
	defer free()
	id := C.H5Dopen2(g.id, p, C.H5P_DEFAULT)
	if id < 0 {
		return object{}, lastErr("hdf5: open dataset " + what)
	}
	return object{id: id, name: what}, nil
}

// openAttr opens attribute attr on object obj ("" or "." = g itself).
func (g *Group) openAttr(obj, attr string) (object, error) {
	if obj == "" {
		obj = "."
	}
	what := fmt.Sprintf("%s: attribute %q of %s", g.file.path, attr, g.child(obj))
	if err := g.check(); err != nil {
		return object{}, err
	}
	if obj != "." && g.kind(obj) == KindNone {
		return object{}, fmt.Errorf("hdf5: %s: no object %s", g.file.path, g.child(obj))
	}
	po, f1 := cstr(obj)
	defer f1()
	pa, f2 := cstr(attr)
	defer f2()
	ex := C.H5Aexists_by_name(g.id, po, pa, C.H5P_DEFAULT)
	if ex < 0 {
		return object{}, lastErr("hdf5: " + what)
	}
	if ex == 0 {
		return object{}, fmt.Errorf("hdf5: %s: no such attribute", what)
	}
	id := C.H5Aopen_by_name(g.id, po, pa, C.H5P_DEFAULT, C.H5P_DEFAULT)
	if id < 0 {
		return object{}, lastErr("hdf5: open " + what)
	}
	return object{id: id, attr: true, name: what}, nil
}

// meta returns the stored type and shape of o, and checks that reading it
// would need a plausible amount of memory.
func (g *Group) meta(o object) (Type, []int, error) {
	tid := o.typ()
	if tid < 0 {
		return Type{}, nil, lastErr("hdf5: type of " + o.name)
	}
	t, err := describe(tid)
	C.H5Tclose(tid)
	if err != nil {
		return t, nil, err
	}
	sid := o.space()
	if sid < 0 {
		return t, nil, lastErr("hdf5: dataspace of " + o.name)
	}
	shape, err := shapeOf(sid, o.name)
	C.H5Sclose(sid)
	if err != nil {
		return t, nil, err
	}
	n, ok := count(shape)
	if !ok {
		return t, nil, fmt.Errorf("hdf5: %s: shape %v is too large", o.name, shape)
	}
	if g.file.size > 0 {
		// gzip cannot exceed ~1032:1, so more than that per byte of file
		// is a corrupted header (or unallocated fill-value storage).
		limit := g.file.size*1100 + 1<<20
		if int64(n)*int64(max(t.Size, 8)) > limit {
			return t, nil, fmt.Errorf("hdf5: %s: shape %v needs more memory than a %d-byte file can hold", o.name, shape, g.file.size)
		}
	}
	return t, shape, nil
}

// Stat describes dataset name without reading its data.
func (g *Group) Stat(name string) (Info, error) {
	lock()
	defer unlock()
	o, err := g.openDataset(name)
	if err != nil {
		return Info{}, err
	}
	defer o.close()
	t, shape, err := g.meta(o)
	if err != nil {
		return Info{}, err
	}
	in := Info{Name: name, Type: t, Shape: shape}
	dcpl := C.H5Dget_create_plist(o.id)
	if dcpl < 0 {
		return in, lastErr("hdf5: properties of " + o.name)
	}
	defer C.H5Pclose(dcpl)
	if C.H5Pget_layout(dcpl) == C.H5D_CHUNKED && len(shape) > 0 {
		dims := make([]C.hsize_t, len(shape))
		r := int(C.H5Pget_chunk(dcpl, C.int(len(dims)), &dims[0]))
		if r == len(shape) {
			in.Chunk = make([]int, r)
			for i := range dims {
				in.Chunk[i] = int(dims[i])
			}
		}
	}
	nf := int(C.H5Pget_nfilters(dcpl))
	for i := 0; i < nf && i < 32; i++ {
		var flags C.uint
		var nelm C.size_t
		var cfg C.uint
		id := C.H5Pget_filter2(dcpl, C.uint(i), &flags, &nelm, nil, 0, nil, &cfg)
		switch id {
		case C.H5Z_FILTER_DEFLATE:
			in.Filters = append(in.Filters, "gzip")
		case C.H5Z_FILTER_SHUFFLE:
			in.Filters = append(in.Filters, "shuffle")
		case C.H5Z_FILTER_FLETCHER32:
			in.Filters = append(in.Filters, "fletcher32")
		case C.H5Z_FILTER_SZIP:
			in.Filters = append(in.Filters, "szip")
		case C.H5Z_FILTER_NBIT:
			in.Filters = append(in.Filters, "nbit")
		case C.H5Z_FILTER_SCALEOFFSET:
			in.Filters = append(in.Filters, "scaleoffset")
		default:
			if id < 0 {
				C.H5Eclear2(C.H5E_DEFAULT)
			}
			in.Filters = append(in.Filters, fmt.Sprintf("filter%d", int(id)))
		}
	}
	return in, nil
}

// numericCheck accepts integers and floats (HDF5 converts), rejects the rest.
func numericCheck(o object, t Type, want string) error {
	if t.Class == ClassInteger || t.Class == ClassFloat {
		return nil
	}
	return refuse(o, t, want)
}

// integerCheck accepts integers only (floats are not truncated silently).
func integerCheck(o object, t Type, want string) error {
	if t.Class == ClassInteger {
		return nil
	}
	return refuse(o, t, want)
}

// byteCheck accepts 1-byte integers only (wider ones are not clipped).
func byteCheck(o object, t Type, want string) error {
	if t.Class == ClassInteger && t.Size == 1 {
		return nil
	}
	return refuse(o, t, want)
}

// refuse is the error for a dataset o stored as t that cannot be read as want.
func refuse(o object, t Type, want string) error {
	return fmt.Errorf("hdf5: %s is stored as %s, cannot read it as %s", o.name, t, want)
}

// readNum reads o, whose stored type check accepts, converted to memory
// type mt into a new []T (T must match mt), with its shape.
func readNum[T any](g *Group, o object, want string, check func(object, Type, string) error, mt hid) ([]T, []int, error) {
	t, shape, err := g.meta(o)
	if err != nil {
		return nil, nil, err
	}
	if err := check(o, t, want); err != nil {
		return nil, nil, err
	}
	n, _ := count(shape)
	buf := make([]T, n)
	if n > 0 && o.read(mt, ptr(buf)) < 0 {
		return nil, nil, lastErr("hdf5: read " + o.name)
	}
	return buf, shape, nil
}

// readDataset opens dataset name under the library lock, reads it with
// read and closes it.
func readDataset[R any](g *Group, name string, read func(object) (R, []int, error)) (R, []int, error) {
	lock()
	defer unlock()
	o, err := g.openDataset(name)
	if err != nil {
		var zero R
		return zero, nil, err
	}
	defer o.close()
	return read(o)
}

// ReadFloat32 reads a numeric dataset (any integer or float type, converted)
// as float32. It returns the data in row-major order and its shape.
func (g *Group) ReadFloat32(name string) ([]float32, []int, error) {
	return readDataset(g, name, func(o object) ([]float32, []int, error) {
		buf, shape, err := readNum[float32](g, o, "float32", numericCheck, C.kq2_native_float())
		if err != nil {
			return nil, nil, err
		}
		if err := g.checkFloat32Range(o, buf); err != nil {
			return nil, nil, err
		}
		return buf, shape, nil
	})
}

// checkFloat32Range finds values that libhdf5's float64 → float32
// conversion turned into ±Inf although they were finite (|x| > 3.4e38), so
// that they are reported as out of range rather than later as "NaN or Inf".
// It costs nothing unless buf holds an infinity.
func (g *Group) checkFloat32Range(o object, buf []float32) error {
	hasInf := false
	for _, v := range buf {
		if math.IsInf(float64(v), 0) {
			hasInf = true
			break
		}
	}
	if !hasInf {
		return nil
	}
	t, _, err := g.meta(o)
	if err != nil || t.Class != ClassFloat || t.Size <= 4 {
		return err
	}
	wide, _, err := g.readF64(o)
	if err != nil {
		return err
	}
	for i, v := range wide {
		if i < len(buf) && !math.IsInf(v, 0) && math.IsInf(float64(buf[i]), 0) {
			return &RangeError{Name: o.name, Index: i, Value: v, Stored: t.String(), Want: "float32"}
		}
	}
	return nil
}

// ReadFloat64 reads a numeric dataset (any integer or float type, converted)
// as float64, with its shape.
func (g *Group) ReadFloat64(name string) ([]float64, []int, error) {
	return readDataset(g, name, g.readF64)
}

func (g *Group) readF64(o object) ([]float64, []int, error) {
	return readNum[float64](g, o, "float64", numericCheck, C.kq2_native_double())
}

// ReadInt64 reads an integer dataset as int64, with its shape. Float data
// is refused.
func (g *Group) ReadInt64(name string) ([]int64, []int, error) {
	return readDataset(g, name, g.readI64)
}

func (g *Group) readI64(o object) ([]int64, []int, error) {
	return readNum[int64](g, o, "int64", integerCheck, C.kq2_native_int64())
}

// ReadUint8 reads a 1-byte integer dataset as uint8, with its shape. Wider
// integers and floats are refused rather than silently clipped.
func (g *Group) ReadUint8(name string) ([]uint8, []int, error) {
	return readDataset(g, name, func(o object) ([]uint8, []int, error) {
		return readNum[uint8](g, o, "uint8", byteCheck, C.kq2_native_uint8())
	})
}

// ReadBool reads h5py's bool enum, or any integer dataset (nonzero = true),
// as []bool with its shape. Floats, strings and other enums are refused.
func (g *Group) ReadBool(name string) ([]bool, []int, error) {
	return readDataset(g, name, g.readBool)
}

func (g *Group) readBool(o object) ([]bool, []int, error) {
	t, shape, err := g.meta(o)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case t.Class == ClassEnum && t.Bool:
		n, _ := count(shape)
		out := make([]bool, n)
		if n == 0 {
			return out, shape, nil
		}
		mt := C.kq2_bool_enum()
		if mt < 0 {
			return nil, nil, lastErr("hdf5: bool type")
		}
		defer C.H5Tclose(mt)
		raw := make([]int8, n)
		if o.read(mt, unsafe.Pointer(&raw[0])) < 0 {
			return nil, nil, lastErr("hdf5: read " + o.name)
		}
		for i, v := range raw {
			out[i] = v != 0
		}
		return out, shape, nil
	case t.Class == ClassInteger:
		v, shape, err := g.readI64(o)
		if err != nil {
			return nil, nil, err
		}
		out := make([]bool, len(v))
		for i, x := range v {
			out[i] = x != 0
		}
		return out, shape, nil
	}
	return nil, nil, fmt.Errorf("hdf5: %s is stored as %s, cannot read it as bool", o.name, t)
}

// ReadStrings reads a string dataset (fixed or variable length) with its
// shape.
func (g *Group) ReadStrings(name string) ([]string, []int, error) {
	return readDataset(g, name, g.readStrings)
}

func (g *Group) readStrings(o object) ([]string, []int, error) {
	t, shape, err := g.meta(o)
	if err != nil {
		return nil, nil, err
	}
	if t.Class != ClassString {
		return nil, nil, fmt.Errorf("hdf5: %s is stored as %s, cannot read it as a string", o.name, t)
	}
	n, _ := count(shape)
	out := make([]string, n)
	if n == 0 {
		return out, shape, nil
	}
	if t.VarLen {
		if n > 1<<20 {
			return nil, nil, fmt.Errorf("hdf5: %s: %d strings is too many", o.name, n)
		}
		if err := g.varLenSafe(o, n); err != nil {
			return nil, nil, fmt.Errorf("hdf5: %s: %w", o.name, err)
		}
		ftid := o.typ()
		if ftid < 0 {
			return nil, nil, lastErr("hdf5: type of " + o.name)
		}
		cset := C.H5Tget_cset(ftid)
		C.H5Tclose(ftid)
		if cset < 0 {
			C.H5Eclear2(C.H5E_DEFAULT)
			cset = C.H5T_CSET_ASCII
		}
		mt := C.kq2_vlen_str(cset)
		if mt < 0 {
			return nil, nil, lastErr("hdf5: string type")
		}
		defer C.H5Tclose(mt)
		ptrs := (**C.char)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(uintptr(0)))))
		if ptrs == nil {
			return nil, nil, errors.New("hdf5: out of memory")
		}
		defer C.free(unsafe.Pointer(ptrs))
		if o.read(mt, unsafe.Pointer(ptrs)) < 0 {
			return nil, nil, lastErr("hdf5: read " + o.name)
		}
		for i := range out {
			if p := C.kq2_str_at(ptrs, C.size_t(i)); p != nil {
				out[i] = C.GoStringN(p, C.int(C.strnlen(p, 1<<20)))
			}
		}
		sid := o.space()
		if sid >= 0 {
			C.H5Dvlen_reclaim(mt, sid, C.H5P_DEFAULT, unsafe.Pointer(ptrs))
			C.H5Sclose(sid)
		}
		return out, shape, nil
	}
	if int64(n)*int64(t.Size) > 1<<30 {
		return nil, nil, fmt.Errorf("hdf5: %s: strings too large", o.name)
	}
	mt := C.kq2_fixed_str(C.size_t(t.Size))
	if mt < 0 {
		return nil, nil, lastErr("hdf5: string type")
	}
	defer C.H5Tclose(mt)
	if ftid := o.typ(); ftid >= 0 {
		if cset := C.H5Tget_cset(ftid); cset >= 0 {
			C.H5Tset_cset(mt, cset)
		}
		C.H5Tclose(ftid)
	}
	C.H5Eclear2(C.H5E_DEFAULT)
	raw := make([]byte, n*t.Size)
	if o.read(mt, unsafe.Pointer(&raw[0])) < 0 {
		return nil, nil, lastErr("hdf5: read " + o.name)
	}
	for i := range out {
		s := raw[i*t.Size : (i+1)*t.Size]
		for j, c := range s {
			if c == 0 {
				s = s[:j]
				break
			}
		}
		out[i] = string(s)
	}
	return out, shape, nil
}

// varLenSafe decides whether libhdf5 may read the variable-length data of
// o (see heapcheck.go). Files we created are trusted; in other files only
// contiguous datasets whose references check out are read, and
// variable-length attributes are refused (their references are not
// reachable through the API).
func (g *Group) varLenSafe(o object, n int) error {
	if g.file.size < 0 {
		return nil
	}
	if o.attr {
		return errors.New("variable-length string attributes are not read from existing files (libhdf5 cannot read them safely if the file is damaged)")
	}
	off := C.H5Dget_offset(o.id)
	if off == C.HADDR_UNDEF {
		C.H5Eclear2(C.H5E_DEFAULT)
		return errors.New("variable-length strings are only read from contiguous datasets")
	}
	if int(C.H5Dget_storage_size(o.id)) != 16*n {
		return errors.New("unexpected storage size for variable-length references")
	}
	return checkVarLenRefs(g.file.path, uint64(off), n)
}

// readAny reads o into the natural Go type for its class: []float64 for
// floats, []int64 for integers, []bool for h5py bools, []string for strings.
func (g *Group) readAny(o object) (any, []int, error) {
	t, _, err := g.meta(o)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case t.Class == ClassFloat:
		return pack(g.readF64(o))
	case t.Class == ClassInteger:
		return pack(g.readI64(o))
	case t.Class == ClassEnum && t.Bool:
		return pack(g.readBool(o))
	case t.Class == ClassString:
		return pack(g.readStrings(o))
	}
	return nil, nil, fmt.Errorf("hdf5: %s is stored as %s, which koopq does not read", o.name, t)
}

func pack[T any](v []T, shape []int, err error) (any, []int, error) {
	if err != nil {
		return nil, nil, err
	}
	return v, shape, nil
}

// ReadAny reads dataset name into []float64 (float classes), []int64
// (integers), []bool (h5py bool) or []string, with its shape. Useful for
// metadata whose type is not known in advance.
func (g *Group) ReadAny(name string) (any, []int, error) {
	return readDataset(g, name, g.readAny)
}

// AttrNames lists the attribute names of object obj below g ("" = g).
func (g *Group) AttrNames(obj string) ([]string, error) {
	lock()
	defer unlock()
	if err := g.check(); err != nil {
		return nil, err
	}
	if obj == "" {
		obj = "."
	} else if g.kind(obj) == KindNone {
		return nil, fmt.Errorf("hdf5: %s: no object %s", g.file.path, g.child(obj))
	}
	po, free := cstr(obj)
	defer free()
	var names []string
	for i := 0; i < 4096; i++ {
		sz := C.H5Aget_name_by_idx(g.id, po, C.H5_INDEX_NAME, C.H5_ITER_INC, C.hsize_t(i), nil, 0, C.H5P_DEFAULT)
		if sz < 0 {
			C.H5Eclear2(C.H5E_DEFAULT)
			break
		}
		if sz > 1<<16 {
			return nil, fmt.Errorf("hdf5: %s: attribute name of %d bytes", g.file.path, int(sz))
		}
		buf := make([]byte, int(sz)+1)
		if C.H5Aget_name_by_idx(g.id, po, C.H5_INDEX_NAME, C.H5_ITER_INC, C.hsize_t(i), (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), C.H5P_DEFAULT) < 0 {
			return nil, lastErr("hdf5: attribute names of " + g.child(obj))
		}
		names = append(names, string(buf[:sz]))
	}
	return names, nil
}

// ReadAttr reads attribute attr of object obj below g ("" = g itself) as
// []float64, []int64, []bool or []string (see ReadAny), with its shape.
func (g *Group) ReadAttr(obj, attr string) (any, []int, error) {
	lock()
	defer unlock()
	o, err := g.openAttr(obj, attr)
	if err != nil {
		return nil, nil, err
	}
	defer o.close()
	return g.readAny(o)
}

// ReadAttrString reads a string attribute holding exactly one string.
func (g *Group) ReadAttrString(obj, attr string) (string, error) {
	v, _, err := g.ReadAttr(obj, attr)
	if err != nil {
		return "", err
	}
	s, ok := v.([]string)
	if !ok || len(s) != 1 {
		return "", fmt.Errorf("hdf5: %s: attribute %q of %s is not a single string", g.file.path, attr, g.child(obj))
	}
	return s[0], nil
}

// ---- writing ----

func (g *Group) write(name string, ft, mt hid, elemSize int, buf unsafe.Pointer, n int, shape []int, o *WriteOptions) error {
	if err := g.check(); err != nil {
		return err
	}
	what := g.file.path + ": " + g.child(name)
	want, ok := count(shape)
	if !ok || want != n {
		return fmt.Errorf("hdf5: write %s: %d values do not fill shape %v", what, n, shape)
	}
	var sid hid
	if len(shape) == 0 {
		sid = C.H5Screate(C.H5S_SCALAR)
	} else {
		dims := make([]C.hsize_t, len(shape))
		for i, d := range shape {
			if d < 0 {
				return fmt.Errorf("hdf5: write %s: negative dimension in %v", what, shape)
			}
			dims[i] = C.hsize_t(d)
		}
		sid = C.H5Screate_simple(C.int(len(dims)), &dims[0], nil)
	}
	if sid < 0 {
		return lastErr("hdf5: dataspace for " + what)
	}
	defer C.H5Sclose(sid)
	dcpl := C.H5Pcreate(C.kq2_dcpl())
	if dcpl < 0 {
		return lastErr("hdf5: properties for " + what)
	}
	defer C.H5Pclose(dcpl)
	C.H5Pset_obj_track_times(dcpl, false) // reproducible bytes
	if o.chunked() && len(shape) > 0 && n > 0 {
		chunk := o.Chunk
		if chunk == nil {
			chunk = autoChunk(shape, elemSize)
		}
		if len(chunk) != len(shape) {
			return fmt.Errorf("hdf5: write %s: chunk %v has rank %d, data rank %d", what, chunk, len(chunk), len(shape))
		}
		cd := make([]C.hsize_t, len(chunk))
		for i, c := range chunk {
			cd[i] = C.hsize_t(max(1, min(c, shape[i])))
		}
		if C.H5Pset_chunk(dcpl, C.int(len(cd)), &cd[0]) < 0 {
			return lastErr("hdf5: chunk " + what)
		}
		if o.Shuffle && C.H5Pset_shuffle(dcpl) < 0 {
			return lastErr("hdf5: shuffle " + what)
		}
		if o.Gzip > 0 && C.H5Pset_deflate(dcpl, C.uint(min(o.Gzip, 9))) < 0 {
			return lastErr("hdf5: gzip " + what)
		}
	}
	lcpl := C.H5Pcreate(C.kq2_lcpl())
	if lcpl < 0 {
		return lastErr("hdf5: properties for " + what)
	}
	defer C.H5Pclose(lcpl)
	C.H5Pset_create_intermediate_group(lcpl, 1)
	p, free := cstr(name)
	defer free()
	did := C.H5Dcreate2(g.id, p, ft, sid, lcpl, dcpl, C.H5P_DEFAULT)
	if did < 0 {
		return lastErr("hdf5: create dataset " + what)
	}
	defer C.H5Dclose(did)
	if n > 0 && C.kq2_dwrite(did, mt, buf) < 0 {
		return lastErr("hdf5: write " + what)
	}
	return nil
}

func ptr[T any](x []T) unsafe.Pointer {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Pointer(&x[0])
}

// WriteFloat32 writes data (row-major, shape) as a little-endian float32
// dataset; intermediate groups are created.
func (g *Group) WriteFloat32(name string, data []float32, shape []int, o *WriteOptions) error {
	lock()
	defer unlock()
	return g.write(name, C.kq2_ieee_f32le(), C.kq2_native_float(), 4, ptr(data), len(data), shape, o)
}

// WriteFloat64 writes data as a little-endian float64 dataset.
func (g *Group) WriteFloat64(name string, data []float64, shape []int, o *WriteOptions) error {
	lock()
	defer unlock()
	return g.write(name, C.kq2_ieee_f64le(), C.kq2_native_double(), 8, ptr(data), len(data), shape, o)
}

// WriteInt64 writes data as a little-endian int64 dataset.
func (g *Group) WriteInt64(name string, data []int64, shape []int, o *WriteOptions) error {
	lock()
	defer unlock()
	return g.write(name, C.kq2_std_i64le(), C.kq2_native_int64(), 8, ptr(data), len(data), shape, o)
}

// WriteUint8 writes data as a uint8 dataset.
func (g *Group) WriteUint8(name string, data []uint8, shape []int, o *WriteOptions) error {
	lock()
	defer unlock()
	return g.write(name, C.kq2_std_u8le(), C.kq2_native_uint8(), 1, ptr(data), len(data), shape, o)
}

// WriteBool writes data as h5py's bool (an enum over int8 with FALSE=0,
// TRUE=1), so that h5py returns a numpy bool array.
func (g *Group) WriteBool(name string, data []bool, shape []int, o *WriteOptions) error {
	lock()
	defer unlock()
	raw := make([]int8, len(data))
	for i, b := range data {
		if b {
			raw[i] = 1
		}
	}
	t := C.kq2_bool_enum()
	if t < 0 {
		return lastErr("hdf5: bool type")
	}
	defer C.H5Tclose(t)
	return g.write(name, t, t, 1, ptr(raw), len(raw), shape, o)
}

// WriteString writes a scalar variable-length UTF-8 string dataset (what
// h5py writes for a Python str).
func (g *Group) WriteString(name, value string) error {
	lock()
	defer unlock()
	t := C.kq2_vlen_str(C.H5T_CSET_UTF8)
	if t < 0 {
		return lastErr("hdf5: string type")
	}
	defer C.H5Tclose(t)
	cs, free := cstr(value)
	defer free()
	ptrs := (**C.char)(C.calloc(1, C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(ptrs))
	C.kq2_set_str_at(ptrs, 0, cs)
	return g.write(name, t, t, 8, unsafe.Pointer(ptrs), 1, nil, nil)
}

// writeAttr (re)creates attribute attr on obj and writes buf.
func (g *Group) writeAttr(obj, attr string, ft hid, buf unsafe.Pointer, n int) error {
	if err := g.check(); err != nil {
		return err
	}
	if obj == "" {
		obj = "."
	}
	what := fmt.Sprintf("%s: attribute %q of %s", g.file.path, attr, g.child(obj))
	var sid hid
	if n == 1 {
		sid = C.H5Screate(C.H5S_SCALAR)
	} else {
		d := C.hsize_t(n)
		sid = C.H5Screate_simple(1, &d, nil)
	}
	if sid < 0 {
		return lastErr("hdf5: dataspace for " + what)
	}
	defer C.H5Sclose(sid)
	po, f1 := cstr(obj)
	defer f1()
	pa, f2 := cstr(attr)
	defer f2()
	if C.H5Aexists_by_name(g.id, po, pa, C.H5P_DEFAULT) > 0 {
		if C.H5Adelete_by_name(g.id, po, pa, C.H5P_DEFAULT) < 0 {
			return lastErr("hdf5: replace " + what)
		}
	}
	C.H5Eclear2(C.H5E_DEFAULT)
	aid := C.H5Acreate_by_name(g.id, po, pa, ft, sid, C.H5P_DEFAULT, C.H5P_DEFAULT, C.H5P_DEFAULT)
	if aid < 0 {
		return lastErr("hdf5: create " + what)
	}
	defer C.H5Aclose(aid)
	if n > 0 && C.H5Awrite(aid, ft, buf) < 0 {
		return lastErr("hdf5: write " + what)
	}
	return nil
}

// WriteAttrString sets a fixed-length UTF-8 string attribute on obj
// ("" = g itself). Fixed length, not variable length, so that the attribute
// can be read back safely (see varLenSafe); h5py reads it too.
func (g *Group) WriteAttrString(obj, attr, value string) error {
	lock()
	defer unlock()
	t := C.kq2_fixed_str(C.size_t(max(1, len(value))))
	if t < 0 {
		return lastErr("hdf5: string type")
	}
	defer C.H5Tclose(t)
	if C.H5Tset_cset(t, C.H5T_CSET_UTF8) < 0 {
		return lastErr("hdf5: string type")
	}
	buf := make([]byte, max(1, len(value)))
	copy(buf, value)
	return g.writeAttr(obj, attr, t, unsafe.Pointer(&buf[0]), 1)
}

// WriteAttrFloat64 sets a float64 attribute on obj ("" = g): a scalar for
// one value, else a 1-D array.
func (g *Group) WriteAttrFloat64(obj, attr string, v ...float64) error {
	lock()
	defer unlock()
	if len(v) == 0 {
		return fmt.Errorf("hdf5: attribute %q: no values", attr)
	}
	return g.writeAttr(obj, attr, C.kq2_ieee_f64le(), ptr(v), len(v))
}

// WriteAttrInt64 sets an int64 attribute on obj ("" = g): a scalar for one
// value, else a 1-D array.
func (g *Group) WriteAttrInt64(obj, attr string, v ...int64) error {
	lock()
	defer unlock()
	if len(v) == 0 {
		return fmt.Errorf("hdf5: attribute %q: no values", attr)
	}
	return g.writeAttr(obj, attr, C.kq2_std_i64le(), ptr(v), len(v))
}
