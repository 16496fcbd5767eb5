//go:build cgo && !nohdf5

package hdf5

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// h5py runs script with Debian's python3 (which has h5py), or skips.
func h5py(t *testing.T, script string, args ...string) string {
	t.Helper()
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	if err := exec.Command(py, "-c", "import h5py, numpy").Run(); err != nil {
		t.Skip("h5py not installed")
	}
	out, err := exec.Command(py, append([]string{"-c", script}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	return string(out)
}

func TestRoundTripAllTypes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rt.h5")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	gz := &WriteOptions{Gzip: 4, Shuffle: true}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.WriteFloat32("a/f32", []float32{1, 2, 3, 4, 5, 6}, []int{3, 2}, gz))
	must(f.WriteFloat64("f64", []float64{1.5, -2.5}, []int{2}, nil))
	must(f.WriteInt64("i64", []int64{-7, 8, 9}, []int{3}, gz))
	must(f.WriteUint8("u8", []uint8{0, 255}, []int{2}, nil))
	must(f.WriteBool("b", []bool{true, false, true}, []int{3}, gz))
	must(f.WriteString("meta/name", "hopper ✓"))
	must(f.WriteFloat32("empty", nil, []int{0, 3}, gz))
	must(f.WriteAttrString("", "version", "1.2"))
	must(f.WriteAttrInt64("a/f32", "n", 3))
	must(f.WriteAttrFloat64("a", "xs", 1, 2))
	must(f.Close())

	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f32, sh, err := r.ReadFloat32("a/f32")
	must(err)
	if !reflect.DeepEqual(f32, []float32{1, 2, 3, 4, 5, 6}) || !reflect.DeepEqual(sh, []int{3, 2}) {
		t.Errorf("f32 %v %v", f32, sh)
	}
	f64, _, err := r.ReadFloat64("f64")
	must(err)
	if !reflect.DeepEqual(f64, []float64{1.5, -2.5}) {
		t.Errorf("f64 %v", f64)
	}
	i64, _, err := r.ReadInt64("i64")
	must(err)
	if !reflect.DeepEqual(i64, []int64{-7, 8, 9}) {
		t.Errorf("i64 %v", i64)
	}
	u8, _, err := r.ReadUint8("u8")
	must(err)
	if !reflect.DeepEqual(u8, []uint8{0, 255}) {
		t.Errorf("u8 %v", u8)
	}
	b, _, err := r.ReadBool("b")
	must(err)
	if !reflect.DeepEqual(b, []bool{true, false, true}) {
		t.Errorf("bool %v", b)
	}
	s, sh, err := r.ReadStrings("meta/name")
	must(err)
	if len(s) != 1 || s[0] != "hopper ✓" || len(sh) != 0 {
		t.Errorf("string %q %v", s, sh)
	}
	e, sh, err := r.ReadFloat32("empty")
	must(err)
	if len(e) != 0 || !reflect.DeepEqual(sh, []int{0, 3}) {
		t.Errorf("empty %v %v", e, sh)
	}
	v, err := r.ReadAttrString("", "version")
	must(err)
	if v != "1.2" {
		t.Errorf("attr %q", v)
	}
	n, _, err := r.ReadAttr("a/f32", "n")
	must(err)
	if !reflect.DeepEqual(n, []int64{3}) {
		t.Errorf("attr n %v", n)
	}
	in, err := r.Stat("a/f32")
	must(err)
	if in.Type.String() != "float32" || !reflect.DeepEqual(in.Filters, []string{"shuffle", "gzip"}) || in.Chunk == nil {
		t.Errorf("stat %+v", in)
	}
	in, err = r.Stat("b")
	must(err)
	if !in.Type.Bool || in.Type.String() != "bool" {
		t.Errorf("bool stat %+v", in)
	}
	all, err := r.Walk()
	must(err)
	want := []string{"a/f32", "b", "empty", "f64", "i64", "meta/name", "u8"}
	if !reflect.DeepEqual(all, want) {
		t.Errorf("walk %v want %v", all, want)
	}
	if r.Kind("a") != KindGroup || r.Kind("a/f32") != KindDataset || r.Kind("nope/x") != KindNone {
		t.Error("Kind")
	}
}

func TestTypeMismatchIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.h5")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	_ = f.WriteFloat64("x", []float64{1, 2}, []int{2}, nil)
	_ = f.WriteString("s", "hi")
	_ = f.WriteBool("b", []bool{true}, []int{1}, nil)
	f.Close()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, _, e1 := r.ReadInt64("x")
	_, _, e2 := r.ReadUint8("x")
	_, _, e3 := r.ReadBool("x")
	_, _, e4 := r.ReadFloat32("s")
	_, _, e5 := r.ReadFloat32("b")
	_, _, e6 := r.ReadStrings("x")
	_, _, e7 := r.ReadFloat32("missing")
	cases := map[string]error{"int64<-f64": e1, "uint8<-f64": e2, "bool<-f64": e3,
		"f32<-str": e4, "f32<-bool": e5, "str<-f64": e6, "missing": e7}
	for name, err := range cases {
		if err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %q does not name the file", name, err)
		}
	}
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.h5")
	os.WriteFile(empty, nil, 0o644)
	text := filepath.Join(dir, "text.h5")
	os.WriteFile(text, []byte("this is not hdf5 at all, just text\n"), 0o644)
	good := filepath.Join(dir, "good.h5")
	f, err := Create(good)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteFloat32("x", make([]float32, 10000), []int{10000}, nil)
	f.Close()
	raw, _ := os.ReadFile(good)
	trunc := filepath.Join(dir, "trunc.h5")
	os.WriteFile(trunc, raw[:len(raw)/2], 0o644)
	for _, p := range []string{empty, text, filepath.Join(dir, "absent.h5")} {
		if _, err := Open(p); err == nil {
			t.Errorf("%s: no error", p)
		} else if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not name %s", err, p)
		}
	}
	// A truncated file either fails to open or fails to read; never panics.
	if r, err := Open(trunc); err == nil {
		if _, _, err := r.ReadFloat32("x"); err == nil {
			t.Error("truncated file read without error")
		}
		r.Close()
	}
}

func TestReadsH5pyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "py.h5")
	h5py(t, `
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("b", data=np.array([True, False, True]), compression="gzip", shuffle=True, chunks=(2,))
    f.create_dataset("f", data=np.arange(6, dtype=np.float64).reshape(3, 2))
    f.create_dataset("u", data=np.array([1, 0, 2], dtype=np.uint8))
    f["s"] = "SAC"
    f["fs"] = np.bytes_("fixed")
    f["n"] = 42
    f.attrs["env"] = "hopper-medium-v2"
    f.attrs["nums"] = np.array([1.5, 2.5])
    f.attrs["fixed"] = np.bytes_("ok")
`, path)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, _, err := r.ReadBool("b")
	if err != nil || !reflect.DeepEqual(b, []bool{true, false, true}) {
		t.Errorf("bool %v %v", b, err)
	}
	fl, sh, err := r.ReadFloat32("f")
	if err != nil || !reflect.DeepEqual(fl, []float32{0, 1, 2, 3, 4, 5}) || !reflect.DeepEqual(sh, []int{3, 2}) {
		t.Errorf("float %v %v %v", fl, sh, err)
	}
	u, _, err := r.ReadUint8("u")
	if err != nil || !reflect.DeepEqual(u, []uint8{1, 0, 2}) {
		t.Errorf("uint8 %v %v", u, err)
	}
	for name, want := range map[string]any{"s": []string{"SAC"}, "fs": []string{"fixed"}, "n": []int64{42}} {
		v, _, err := r.ReadAny(name)
		if err != nil || !reflect.DeepEqual(v, want) {
			t.Errorf("%s: %v %v", name, v, err)
		}
	}
	// h5py writes str attributes as variable-length strings, which are
	// refused in files we did not create (libhdf5 cannot read them safely
	// when damaged); fixed-length ones are read.
	if _, err := r.ReadAttrString("", "env"); err == nil || !strings.Contains(err.Error(), "variable-length") {
		t.Errorf("vlen attr: %v", err)
	}
	if v, err := r.ReadAttrString("", "fixed"); err != nil || v != "ok" {
		t.Errorf("fixed attr %q %v", v, err)
	}
	names, err := r.AttrNames("")
	if err != nil || !reflect.DeepEqual(names, []string{"env", "fixed", "nums"}) {
		t.Errorf("attr names %v %v", names, err)
	}
}

func TestH5pyReadsOurFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "go.h5")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteBool("b", []bool{false, true}, []int{2}, &WriteOptions{Gzip: 4, Shuffle: true})
	f.WriteFloat32("x", []float32{0.5, 1.5}, []int{2}, &WriteOptions{Gzip: 4})
	f.WriteString("s", "héllo")
	f.WriteAttrString("", "k", "v")
	f.Close()
	out := h5py(t, `
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    b = f["b"][()]
    print(b.dtype, list(b), f["x"].dtype, list(f["x"][()]), f["x"].compression)
    s = f["s"][()]
    k = f.attrs["k"]
    print(s.decode() if isinstance(s, bytes) else s, k.decode() if isinstance(k, bytes) else k)
`, path)
	want := "bool [False, True] float32 [0.5, 1.5] gzip\nhéllo v\n"
	if out != want {
		t.Errorf("h5py printed %q, want %q", out, want)
	}
}

func TestConcurrentUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.h5")
	f, _ := Create(path)
	f.WriteFloat32("x", make([]float32, 1000), []int{1000}, &WriteOptions{Gzip: 1})
	f.Close()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				r, err := Open(path)
				if err != nil {
					t.Error(err)
					return
				}
				if _, _, err := r.ReadFloat32("x"); err != nil {
					t.Error(err)
				}
				r.Close()
			}
		}()
	}
	wg.Wait()
}
