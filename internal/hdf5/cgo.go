//go:build cgo && !nohdf5

package hdf5

/*
#cgo pkg-config: hdf5
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

// Predefined ids are macros calling H5open(); cgo cannot use them directly.
static hid_t kq_lcpl(void) { return H5P_LINK_CREATE; }
static hid_t kq_gcpl(void) { return H5P_GROUP_CREATE; }

// kq_quiet switches off automatic error printing for the calling thread:
// Debian's libhdf5 is built thread-safe, with one error stack per thread.
static __thread int kq_quiet_done;
static void kq_quiet(void) {
	if (!kq_quiet_done) {
		H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
		kq_quiet_done = 1;
	}
}

// kq_init switches off HDF5's automatic printing of its error stack: errors
// are collected with kq_last_error and returned as Go errors instead.
static int kq_init(void) {
	if (H5open() < 0) return -1;
	return (int)H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

typedef struct { char *buf; size_t cap; size_t len; int n; } kq_errbuf;

static herr_t kq_walk(unsigned n, const H5E_error2_t *e, void *data) {
	kq_errbuf *b = (kq_errbuf *)data;
	const char *d = (e && e->desc) ? e->desc : "";
	const char *f = (e && e->func_name) ? e->func_name : "";
	size_t need = strlen(d) + strlen(f) + 8;
	if (b->len + need >= b->cap || b->n >= 6) return 0;
	if (b->n > 0) { memcpy(b->buf + b->len, "; ", 2); b->len += 2; }
	b->len += (size_t)snprintf(b->buf + b->len, b->cap - b->len, "%s: %s", f, d);
	b->n++;
	return 0;
}

// kq_last_error writes the current error stack (outermost first) into out
// and clears it.
static void kq_last_error(char *out, size_t cap) {
	kq_errbuf b = { out, cap, 0, 0 };
	out[0] = 0;
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, kq_walk, &b);
	if (b.len < cap) out[b.len] = 0; else out[cap-1] = 0;
	H5Eclear2(H5E_DEFAULT);
}

static hid_t kq_open_file(const char *path, unsigned write) {
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
	if (fapl < 0) return -1;
	H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
	hid_t f = H5Fopen(path, write ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl);
	hid_t es = H5Eget_current_stack(); // H5Pclose would clear it
	H5Pclose(fapl);
	if (es >= 0) H5Eset_current_stack(es);
	return f;
}

static hid_t kq_create_file(const char *path) {
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
	if (fapl < 0) return -1;
	H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
	// No object modification times (root group here, groups and datasets
	// below): the same data then gives the same bytes.
	hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
	if (fcpl < 0) { H5Pclose(fapl); return -1; }
	H5Pset_obj_track_times(fcpl, 0);
	hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
	hid_t es = H5Eget_current_stack(); // H5Pclose would clear it
	H5Pclose(fcpl);
	H5Pclose(fapl);
	if (es >= 0) H5Eset_current_stack(es);
	return f;
}

*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"unsafe"

	"github.com/koopq/koopq/internal/regfile"
)

type hid = C.hid_t

// Available reports whether this build links libhdf5 (cgo without the
// nohdf5 tag).
const Available = true

var initErr error

// lock serializes a section of libhdf5 calls and pins it to one OS thread,
// so that HDF5's per-thread error stack (thread-safe builds) is the one we
// silenced and the one lastErr reads.
func lock() {
	mu.Lock()
	runtime.LockOSThread()
	C.kq_quiet()
}

func unlock() {
	runtime.UnlockOSThread()
	mu.Unlock()
}

func init() {
	lock()
	defer unlock()
	if C.kq_init() < 0 {
		initErr = errors.New("hdf5: library initialisation failed")
	}
}

// lastErr converts HDF5's error stack into a Go error prefixed with op.
// Callers hold the lock.
func lastErr(op string) error {
	buf := make([]byte, 2048)
	C.kq_last_error((*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
	msg := C.GoString((*C.char)(unsafe.Pointer(&buf[0])))
	if msg == "" {
		return fmt.Errorf("%s failed", op)
	}
	return fmt.Errorf("%s: %s", op, msg)
}

func cstr(s string) (*C.char, func()) {
	p := C.CString(s)
	return p, func() { C.free(unsafe.Pointer(p)) }
}

// IsHDF5 reports whether path starts with an HDF5 signature. It returns an
// error only when the file cannot be read at all.
func IsHDF5(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	// The superblock signature sits at offset 0, 512, 1024, 2048, ... .
	sig := []byte("\x89HDF\r\n\x1a\n")
	buf := make([]byte, 8)
	for off := int64(0); ; off = nextSigOffset(off) {
		n, err := f.ReadAt(buf, off)
		if n < 8 || err != nil {
			return false, nil
		}
		if string(buf) == string(sig) {
			return true, nil
		}
		if off >= 1<<20 {
			return false, nil
		}
	}
}

func nextSigOffset(off int64) int64 {
	if off == 0 {
		return 512
	}
	return off * 2
}

// File is an open HDF5 file. Its embedded Group is the root group "/".
type File struct {
	Group
	path string
	size int64 // bytes on disk when opened; bounds read allocations
}

// Open opens an existing HDF5 file read-only. Files that are empty or do
// not carry an HDF5 signature are rejected before libhdf5 sees them.
func Open(path string) (*File, error) {
	return openFile(path, false)
}

// OpenRW opens an existing HDF5 file for reading and writing.
func OpenRW(path string) (*File, error) {
	return openFile(path, true)
}

func openFile(path string, write bool) (*File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("hdf5: %w", err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("hdf5: %s is a directory", path)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("hdf5: %s is %s, not a regular file", path, regfile.Kind(st.Mode()))
	}
	if st.Size() == 0 {
		return nil, fmt.Errorf("hdf5: %s is empty (0 bytes)", path)
	}
	ok, err := IsHDF5(path)
	if err != nil {
		return nil, fmt.Errorf("hdf5: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("hdf5: %s is not an HDF5 file (no HDF5 signature)", path)
	}
	lock()
	defer unlock()
	if initErr != nil {
		return nil, initErr
	}
	p, free := cstr(path)
	defer free()
	w := C.uint(0)
	if write {
		w = 1
	}
	id := C.kq_open_file(p, w)
	if id < 0 {
		return nil, lastErr("hdf5: open " + path)
	}
	f := &File{path: path, size: st.Size()}
	f.Group = Group{id: id, file: f, name: "/"}
	return f, nil
}

// Create creates (or truncates) an HDF5 file for writing.
func Create(path string) (*File, error) {
	lock()
	defer unlock()
	if initErr != nil {
		return nil, initErr
	}
	p, free := cstr(path)
	defer free()
	id := C.kq_create_file(p)
	if id < 0 {
		return nil, lastErr("hdf5: create " + path)
	}
	f := &File{path: path, size: -1}
	f.Group = Group{id: id, file: f, name: "/"}
	return f, nil
}

// Path returns the file name the file was opened with.
func (f *File) Path() string { return f.path }

// Flush writes buffered data to disk.
func (f *File) Flush() error {
	lock()
	defer unlock()
	if f.id < 0 {
		return errors.New("hdf5: flush of a closed file")
	}
	if C.H5Fflush(f.id, C.H5F_SCOPE_GLOBAL) < 0 {
		return lastErr("hdf5: flush " + f.path)
	}
	return nil
}

// Close closes the file and every object still open in it. Closing twice is
// a no-op.
func (f *File) Close() error {
	lock()
	defer unlock()
	if f.id < 0 {
		return nil
	}
	id := f.id
	f.id = -1
	if C.H5Fclose(id) < 0 {
		return lastErr("hdf5: close " + f.path)
	}
	return nil
}

// Group is an open HDF5 group. Names passed to its methods are paths
// relative to it ("infos/qpos").
type Group struct {
	id   hid
	file *File
	name string
}

// Name returns the group's absolute path within its file.
func (g *Group) Name() string { return g.name }

func (g *Group) child(name string) string {
	if g.name == "/" {
		return "/" + strings.TrimPrefix(name, "/")
	}
	return g.name + "/" + strings.TrimPrefix(name, "/")
}

func (g *Group) check() error {
	if g.id < 0 || (g.file != nil && g.file.id < 0) {
		return errors.New("hdf5: use of a closed group or file")
	}
	return nil
}

// Close closes a group opened with OpenGroup or CreateGroup. Closing the
// root group of a file does nothing; close the File instead.
func (g *Group) Close() error {
	lock()
	defer unlock()
	if g.file != nil && &g.file.Group == g {
		return nil
	}
	if g.id < 0 {
		return nil
	}
	id := g.id
	g.id = -1
	if g.file != nil && g.file.id < 0 {
		return nil // closed with the file (strong close degree)
	}
	if C.H5Gclose(id) < 0 {
		return lastErr("hdf5: close group " + g.name)
	}
	return nil
}

// OpenGroup opens the existing group name below g.
func (g *Group) OpenGroup(name string) (*Group, error) {
	lock()
	defer unlock()
	if err := g.check(); err != nil {
		return nil, err
	}
	if k := g.kind(name); k != KindGroup {
		if k == KindNone {
			return nil, fmt.Errorf("hdf5: %s: no group %s", g.file.path, g.child(name))
		}
		return nil, fmt.Errorf("hdf5: %s: %s is a %s, not a group", g.file.path, g.child(name), k)
	}
	p, free := cstr(name)
	defer free()
	id := C.H5Gopen2(g.id, p, C.H5P_DEFAULT)
	if id < 0 {
		return nil, lastErr("hdf5: open group " + g.child(name))
	}
	return &Group{id: id, file: g.file, name: g.child(name)}, nil
}

// CreateGroup creates the group name below g, with any missing
// intermediate groups.
func (g *Group) CreateGroup(name string) (*Group, error) {
	lock()
	defer unlock()
	if err := g.check(); err != nil {
		return nil, err
	}
	lcpl := C.H5Pcreate(C.kq_lcpl())
	if lcpl < 0 {
		return nil, lastErr("hdf5: create group")
	}
	defer C.H5Pclose(lcpl)
	C.H5Pset_create_intermediate_group(lcpl, 1)
	gcpl := C.H5Pcreate(C.kq_gcpl())
	if gcpl < 0 {
		return nil, lastErr("hdf5: create group")
	}
	defer C.H5Pclose(gcpl)
	C.H5Pset_obj_track_times(gcpl, false) // reproducible bytes
	p, free := cstr(name)
	defer free()
	id := C.H5Gcreate2(g.id, p, lcpl, gcpl, C.H5P_DEFAULT)
	if id < 0 {
		return nil, lastErr("hdf5: create group " + g.child(name))
	}
	return &Group{id: id, file: g.file, name: g.child(name)}, nil
}

// Kind is the kind of object a link points to.
type Kind int

// Object kinds returned by Group.Kind.
const (
	KindNone    Kind = iota // no such link
	KindGroup               // a group
	KindDataset             // a dataset
	KindOther               // a named datatype, dangling link, ...
)

func (k Kind) String() string {
	switch k {
	case KindNone:
		return "missing object"
	case KindGroup:
		return "group"
	case KindDataset:
		return "dataset"
	}
	return "non-dataset object"
}

// Kind reports what name (relative to g) refers to; KindNone when any path
// component is missing.
func (g *Group) Kind(name string) Kind {
	lock()
	defer unlock()
	if g.check() != nil {
		return KindNone
	}
	return g.kind(name)
}

// Has reports whether name exists below g.
func (g *Group) Has(name string) bool { return g.Kind(name) != KindNone }

func (g *Group) kind(name string) Kind {
	parts := strings.Split(strings.Trim(name, "/"), "/")
	prefix := ""
	for _, part := range parts {
		if part == "" || part == "." {
			return KindNone
		}
		if prefix != "" {
			prefix += "/"
		}
		prefix += part
		p, free := cstr(prefix)
		ex := C.H5Lexists(g.id, p, C.H5P_DEFAULT)
		free()
		if ex <= 0 {
			C.H5Eclear2(C.H5E_DEFAULT)
			return KindNone
		}
	}
	p, free := cstr(strings.Trim(name, "/"))
	defer free()
	oid := C.H5Oopen(g.id, p, C.H5P_DEFAULT)
	if oid < 0 {
		C.H5Eclear2(C.H5E_DEFAULT)
		return KindOther
	}
	defer C.H5Oclose(oid)
	switch C.H5Iget_type(oid) {
	case C.H5I_GROUP:
		return KindGroup
	case C.H5I_DATASET:
		return KindDataset
	}
	return KindOther
}

// maxLinks bounds the number of members listed per group, so that a
// corrupted link count cannot exhaust memory.
const maxLinks = 1 << 20

// Members returns the names of g's direct members, sorted.
func (g *Group) Members() ([]string, error) {
	lock()
	defer unlock()
	if err := g.check(); err != nil {
		return nil, err
	}
	return g.members()
}

func (g *Group) members() ([]string, error) {
	var info C.H5G_info_t
	if C.H5Gget_info(g.id, &info) < 0 {
		return nil, lastErr("hdf5: list " + g.name)
	}
	n := int(info.nlinks)
	if n > maxLinks {
		return nil, fmt.Errorf("hdf5: %s: group %s claims %d members", g.file.path, g.name, n)
	}
	dot, free := cstr(".")
	defer free()
	names := make([]string, 0, n)
	for i := 0; i < n; i++ {
		sz := C.H5Lget_name_by_idx(g.id, dot, C.H5_INDEX_NAME, C.H5_ITER_INC, C.hsize_t(i), nil, 0, C.H5P_DEFAULT)
		if sz < 0 {
			return nil, lastErr("hdf5: list " + g.name)
		}
		if sz > 1<<16 {
			return nil, fmt.Errorf("hdf5: %s: member name of %d bytes in %s", g.file.path, int(sz), g.name)
		}
		buf := make([]byte, int(sz)+1)
		if C.H5Lget_name_by_idx(g.id, dot, C.H5_INDEX_NAME, C.H5_ITER_INC, C.hsize_t(i), (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), C.H5P_DEFAULT) < 0 {
			return nil, lastErr("hdf5: list " + g.name)
		}
		names = append(names, string(buf[:sz]))
	}
	sort.Strings(names)
	return names, nil
}

// Walk returns the paths (relative to g) of every dataset below g,
// recursively, sorted. Depth and count are bounded against corrupted files.
func (g *Group) Walk() ([]string, error) {
	lock()
	defer unlock()
	if err := g.check(); err != nil {
		return nil, err
	}
	var out []string
	var walk func(prefix string, depth int) error
	walk = func(prefix string, depth int) error {
		if depth > 32 {
			return fmt.Errorf("hdf5: %s: groups nested deeper than 32 below %s", g.file.path, g.name)
		}
		sub := g
		if prefix != "" {
			p, free := cstr(prefix)
			id := C.H5Gopen2(g.id, p, C.H5P_DEFAULT)
			free()
			if id < 0 {
				return lastErr("hdf5: open group " + g.child(prefix))
			}
			defer C.H5Gclose(id)
			sub = &Group{id: id, file: g.file, name: g.child(prefix)}
		}
		names, err := sub.members()
		if err != nil {
			return err
		}
		for _, n := range names {
			full := n
			if prefix != "" {
				full = prefix + "/" + n
			}
			switch g.kind(full) {
			case KindDataset:
				out = append(out, full)
			case KindGroup:
				if err := walk(full, depth+1); err != nil {
					return err
				}
			}
			if len(out) > maxLinks {
				return fmt.Errorf("hdf5: %s: more than %d datasets", g.file.path, maxLinks)
			}
		}
		return nil
	}
	if err := walk("", 0); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}
