package hdf5

import (
	"encoding/binary"
	"fmt"
	"os"
)

// libhdf5 1.10 trusts the global heap (where variable-length strings live)
// completely: a damaged collection can send its parser into an endless loop,
// and a damaged reference makes H5HG_read copy out of bounds. So before a
// variable-length read from a file we did not create, checkVarLenRefs reads
// the dataset's raw references itself and checks every collection they point
// to exactly as libhdf5 would walk it.

// heapObject is one object found in a global heap collection.
type heapObject struct{ size uint64 }

// walkCollection parses the collection at addr like
// H5HG__cache_heap_deserialize, refusing any walk that would not end,
// would leave the collection, or holds objects that overrun it.
func walkCollection(f *os.File, fileSize int64, addr uint64) (map[uint16]heapObject, error) {
	bad := func(why string) error {
		return fmt.Errorf("damaged global heap collection at byte %d (%s); refusing the variable-length read", addr, why)
	}
	if addr >= uint64(fileSize) || uint64(fileSize)-addr < 16 {
		return nil, bad("outside the file")
	}
	var hdr [16]byte
	if _, err := f.ReadAt(hdr[:], int64(addr)); err != nil {
		return nil, bad(err.Error())
	}
	if string(hdr[:4]) != "GCOL" || hdr[4] != 1 {
		return nil, bad("no GCOL signature")
	}
	csize := binary.LittleEndian.Uint64(hdr[8:])
	if csize < 4096 || csize > uint64(fileSize)-addr || csize > 1<<30 {
		return nil, bad(fmt.Sprintf("size %d", csize))
	}
	heap := make([]byte, csize)
	if _, err := f.ReadAt(heap, int64(addr)); err != nil {
		return nil, bad(err.Error())
	}
	objs := map[uint16]heapObject{}
	end := csize
	for p := uint64(16); p < end; {
		if p+16 > end {
			break // trailing free space
		}
		idx := binary.LittleEndian.Uint16(heap[p:])
		osize := binary.LittleEndian.Uint64(heap[p+8:])
		var need uint64
		if idx > 0 {
			if osize > end-p-16 {
				return nil, bad(fmt.Sprintf("object %d overruns", idx))
			}
			need = 16 + 8*((osize+7)/8)
			objs[idx] = heapObject{size: osize}
		} else {
			need = osize
		}
		if need == 0 || need > end-p {
			return nil, bad(fmt.Sprintf("object %d of size %d", idx, osize))
		}
		p += need
	}
	return objs, nil
}

// checkVarLenRefs validates n variable-length references (4-byte length,
// 8-byte collection address, 4-byte object index) stored contiguously at
// offset in path.
func checkVarLenRefs(path string, offset uint64, n int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	raw := make([]byte, 16*n)
	if _, err := f.ReadAt(raw, int64(offset)); err != nil {
		return fmt.Errorf("variable-length references unreadable: %v", err)
	}
	cols := map[uint64]map[uint16]heapObject{}
	for i := 0; i < n; i++ {
		r := raw[16*i:]
		seqLen := binary.LittleEndian.Uint32(r)
		addr := binary.LittleEndian.Uint64(r[4:])
		idx := binary.LittleEndian.Uint32(r[12:])
		if seqLen == 0 {
			continue // empty string: libhdf5 does not touch the heap
		}
		objs, ok := cols[addr]
		if !ok {
			if objs, err = walkCollection(f, st.Size(), addr); err != nil {
				return err
			}
			cols[addr] = objs
		}
		o, ok := objs[uint16(idx)]
		if idx == 0 || idx > 0xffff || !ok || o.size != uint64(seqLen) {
			return fmt.Errorf("variable-length reference %d points to a missing or mis-sized heap object; refusing the read", i)
		}
	}
	return nil
}
