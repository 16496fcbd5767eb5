package hdf5

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// checkGlobalHeaps guards variable-length reads against a libhdf5 1.10
// bug: a global heap collection ("GCOL") whose free-space object has size 0,
// or whose sizes make the object walk wrap around, sends libhdf5's parser
// (H5HG__cache_heap_deserialize) into an endless loop or out of bounds. The
// file is scanned for collection signatures and each collection's object
// walk is simulated as libhdf5 would do it; any collection that would not
// terminate cleanly makes the file unsafe for variable-length reads.
// Fixed-size numeric data never touches the global heap and is unaffected.
func checkGlobalHeaps(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	sig := []byte("GCOL")
	const block = 1 << 20
	buf := make([]byte, block+len(sig)-1)
	for off := int64(0); off < size; off += block {
		n, err := f.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			return err
		}
		chunk := buf[:n]
		for i := 0; ; {
			j := bytes.Index(chunk[i:], sig)
			if j < 0 {
				break
			}
			if err := simulateCollection(f, size, off+int64(i+j)); err != nil {
				return err
			}
			i += j + 1
		}
		if n < len(buf) {
			break
		}
	}
	return nil
}

// simulateCollection walks the objects of the collection at addr the way
// libhdf5 does (8-byte lengths) and reports walks that would never end or
// would leave the collection.
func simulateCollection(f *os.File, fileSize, addr int64) error {
	var hdr [16]byte
	if _, err := f.ReadAt(hdr[:], addr); err != nil || hdr[4] != 1 {
		return nil // not a collection libhdf5 would parse
	}
	csize := binary.LittleEndian.Uint64(hdr[8:])
	if csize < 16 || csize > uint64(fileSize-addr) {
		return nil // libhdf5 fails to read it: an error, not a hang
	}
	if csize > 1<<30 {
		return fmt.Errorf("hdf5: global heap collection at %d claims %d bytes", addr, csize)
	}
	heap := make([]byte, csize)
	if _, err := f.ReadAt(heap, addr); err != nil {
		return nil
	}
	end := csize
	p := uint64(16)
	for p < end {
		if p+16 > end {
			break // trailing free space
		}
		begin := p
		idx := binary.LittleEndian.Uint16(heap[p:])
		osize := binary.LittleEndian.Uint64(heap[p+8:])
		var need uint64
		if idx > 0 {
			need = 16 + 8*((osize+7)/8)
		} else {
			need = osize
		}
		next := begin + need
		if next <= begin {
			return fmt.Errorf("hdf5: corrupted global heap collection at byte %d (object %d of size %d); refusing variable-length reads", addr, idx, osize)
		}
		p = next
	}
	return nil
}
