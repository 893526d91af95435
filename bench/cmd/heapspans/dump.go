package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// Record tags of the heap dump format (runtime/heapdump.go).
const (
	tagEOF             = 0
	tagObject          = 1
	tagOtherRoot       = 2
	tagType            = 3
	tagGoroutine       = 4
	tagStackFrame      = 5
	tagParams          = 6
	tagFinalizer       = 7
	tagItab            = 8
	tagOSThread        = 9
	tagMemStats        = 10
	tagQueuedFinalizer = 11
	tagData            = 12
	tagBSS             = 13
	tagDefer           = 14
	tagPanic           = 15
	tagMemProf         = 16
	tagAllocSample     = 17
)

// object is one heap object: its address, its size (its size class's) and,
// in a full read, the addresses its pointer fields hold.
type object struct {
	addr, size uint64
	ptrs       []uint64
}

// dump is what a heap dump holds: its objects sorted by address and, in a
// full read, the roots' pointers and the allocation samples (the objects
// the memory profiler sampled, each with its allocation stack).
type dump struct {
	objects []object
	roots   []uint64
	stacks  map[uint64][]string // profile bucket -> function names, innermost first
	samples map[uint64]uint64   // sampled object's address -> profile bucket
}

// loadDump reads the heap dump at path (see readDump).
func loadDump(path string, full bool) (*dump, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := readDump(bufio.NewReaderSize(f, 1<<20), full)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// readDump reads a heap dump. Unless full, it stops at the first record
// of another kind than those the runtime writes before the objects and
// keeps no pointers (the spans table needs no more).
func readDump(r *bufio.Reader, full bool) (*dump, error) {
	hdr := make([]byte, len("go1.7 heap dump\n"))
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, err
	}
	if string(hdr) != "go1.7 heap dump\n" {
		return nil, errors.New("not a go1.7 heap dump")
	}
	d := &dump{stacks: map[uint64][]string{}, samples: map[uint64]uint64{}}
	rd := &reader{r: r}
	for {
		tag := rd.int()
		if rd.err != nil {
			return nil, rd.err
		}
		switch tag {
		case tagParams: // big endian, pointer size, arena start and end, arch, version, CPUs
			rd.skip("iiiissi")
		case tagItab:
			rd.skip("ii")
		case tagType: // address, size, name, has pointers
			rd.skip("iisi")
		case tagObject:
			addr := rd.int()
			contents := rd.bytes()
			o := object{addr: addr, size: uint64(len(contents))}
			ptrs := rd.fields(contents)
			if full {
				o.ptrs = ptrs
			}
			d.objects = append(d.objects, o)
		default:
			if !full {
				return d.sorted(), rd.err
			}
			if done := rd.rest(tag, d); done {
				return d.sorted(), rd.err
			}
		}
		if rd.err != nil {
			return nil, rd.err
		}
	}
}

// rest reads a record written after the objects; done at the end.
func (rd *reader) rest(tag uint64, d *dump) (done bool) {
	switch tag {
	case tagEOF:
		return true
	case tagOtherRoot: // description, pointer
		rd.bytes()
		d.roots = append(d.roots, rd.int())
	case tagGoroutine: // 8 integers, the wait reason, 4 integers
		rd.skip("iiiiiiiisiiii")
	case tagStackFrame: // sp, depth, child sp, contents, entry, pc, continuation pc, name, fields
		rd.skip("iii")
		contents := rd.bytes()
		rd.skip("iiis")
		d.roots = append(d.roots, rd.fields(contents)...)
	case tagFinalizer, tagQueuedFinalizer:
		rd.skip("iiiii")
	case tagOSThread:
		rd.skip("iii")
	case tagMemStats: // 24 statistics, 256 pauses, the GC count
		for range 281 {
			rd.int()
		}
	case tagData, tagBSS:
		rd.int()
		contents := rd.bytes()
		d.roots = append(d.roots, rd.fields(contents)...)
	case tagDefer:
		rd.skip("iiiiiii")
	case tagPanic:
		rd.skip("iiiiii")
	case tagMemProf: // bucket, size, frames (name, file, line), allocs, frees
		bucket := rd.int()
		rd.int()
		n := rd.int()
		var stack []string
		for i := uint64(0); i < n && rd.err == nil; i++ {
			stack = append(stack, string(rd.bytes()))
			rd.skip("si")
		}
		rd.skip("ii")
		d.stacks[bucket] = stack
	case tagAllocSample: // object, bucket
		addr := rd.int()
		d.samples[addr] = rd.int()
	default:
		rd.err = fmt.Errorf("unknown record tag %d", tag)
	}
	return false
}

func (d *dump) sorted() *dump {
	sort.Slice(d.objects, func(i, j int) bool { return d.objects[i].addr < d.objects[j].addr })
	return d
}

// find returns the index of the object holding address p, or -1.
func (d *dump) find(p uint64) int {
	i := sort.Search(len(d.objects), func(i int) bool { return d.objects[i].addr > p }) - 1
	if i >= 0 && p < d.objects[i].addr+max(d.objects[i].size, 1) {
		return i
	}
	return -1
}

// reader reads the dump's encoding, keeping the first error.
type reader struct {
	r   *bufio.Reader
	err error
}

func (rd *reader) int() uint64 {
	if rd.err != nil {
		return 0
	}
	v, err := uvarint(rd.r)
	rd.err = err
	return v
}

func (rd *reader) bytes() []byte {
	n := rd.int()
	if rd.err != nil {
		return nil
	}
	b := make([]byte, n)
	_, rd.err = io.ReadFull(rd.r, b)
	return b
}

// skip reads fields by kind: i an integer, s a string (length, bytes).
func (rd *reader) skip(kinds string) {
	for _, k := range kinds {
		if k == 's' {
			rd.bytes()
		} else {
			rd.int()
		}
	}
}

// fields reads a field list ((kind, offset) pairs up to kind 0) and
// returns the non-nil pointers at those offsets of contents.
func (rd *reader) fields(contents []byte) []uint64 {
	var ptrs []uint64
	for rd.err == nil {
		if kind := rd.int(); kind == 0 {
			break
		}
		off := rd.int()
		if off+8 <= uint64(len(contents)) {
			if p := binary.LittleEndian.Uint64(contents[off:]); p != 0 {
				ptrs = append(ptrs, p)
			}
		}
	}
	return ptrs
}
