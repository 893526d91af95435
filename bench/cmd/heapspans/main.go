package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// Record tags of the heap dump format (runtime/heapdump.go).
const (
	tagObject = 1
	tagType   = 3
	tagParams = 6
	tagItab   = 8
	pageSize  = 8192
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: heapspans FILE")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "heapspans:", err)
		os.Exit(1)
	}
}

func run(path string, out io.Writer) error {
	spanOf, err := spanBytes()
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	objs, err := readObjects(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	type class struct {
		size, span uint64
		addrs      []uint64
	}
	classes := map[uint64]*class{}
	for _, o := range objs {
		c, ok := classes[o.size]
		if !ok {
			span := spanOf[o.size]
			if span == 0 { // a large object: its span is its own, pages rounded up
				span = (o.size + pageSize - 1) / pageSize * pageSize
			}
			c = &class{size: o.size, span: span}
			classes[o.size] = c
		}
		c.addrs = append(c.addrs, o.addr)
	}
	type row struct {
		size, objects, live, inUse uint64
	}
	var rows []row
	var live, inUse uint64
	for _, c := range classes {
		sort.Slice(c.addrs, func(i, j int) bool { return c.addrs[i] < c.addrs[j] })
		spans := uint64(0)
		end := uint64(0)
		for _, a := range c.addrs {
			if a >= end {
				spans++
				base := a
				if c.span == pageSize {
					base = a &^ (pageSize - 1)
				}
				end = base + c.span
			}
		}
		r := row{size: c.size, objects: uint64(len(c.addrs)), live: c.size * uint64(len(c.addrs)), inUse: spans * c.span}
		rows = append(rows, r)
		live += r.live
		inUse += r.inUse
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].inUse-rows[i].live > rows[j].inUse-rows[j].live })
	fmt.Fprintf(out, "live %.1f MiB in %.1f MiB of spans (at least): %.1f MiB unused\n", mib(live), mib(inUse), mib(inUse-live))
	fmt.Fprintf(out, "%8s %10s %10s %10s %10s %6s\n", "size", "objects", "live MiB", "spans MiB", "unused MiB", "used")
	for i, r := range rows {
		if i == 30 {
			break
		}
		fmt.Fprintf(out, "%8d %10d %10.1f %10.1f %10.1f %5.0f%%\n", r.size, r.objects, mib(r.live), mib(r.inUse), mib(r.inUse-r.live), 100*float64(r.live)/float64(r.inUse))
	}
	return nil
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

type object struct{ addr, size uint64 }

// readObjects reads the dump's object records, up to the first record of
// another kind than those written before them.
func readObjects(r *bufio.Reader) ([]object, error) {
	hdr := make([]byte, len("go1.7 heap dump\n"))
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, err
	}
	if string(hdr) != "go1.7 heap dump\n" {
		return nil, errors.New("not a go1.7 heap dump")
	}
	var objs []object
	for {
		tag, err := uvarint(r)
		if err != nil {
			return nil, err
		}
		switch tag {
		case tagParams:
			// big endian, pointer size, arena start and end, arch, version, CPUs
			if err := skip(r, "iiiissi"); err != nil {
				return nil, err
			}
		case tagItab:
			if err := skip(r, "ii"); err != nil {
				return nil, err
			}
		case tagType:
			// address, size, name, has pointers
			if err := skip(r, "iisi"); err != nil {
				return nil, err
			}
		case tagObject:
			addr, err := uvarint(r)
			if err != nil {
				return nil, err
			}
			n, err := uvarint(r)
			if err != nil {
				return nil, err
			}
			if _, err := r.Discard(int(n)); err != nil {
				return nil, err
			}
			if err := skipFields(r); err != nil {
				return nil, err
			}
			objs = append(objs, object{addr: addr, size: n})
		default:
			return objs, nil
		}
	}
}

func uvarint(r *bufio.Reader) (uint64, error) {
	var v uint64
	for shift := 0; ; shift += 7 {
		b, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, nil
		}
	}
}

// skip reads fields by kind: i an integer, s a string (length, bytes).
func skip(r *bufio.Reader, kinds string) error {
	for _, k := range kinds {
		n, err := uvarint(r)
		if err != nil {
			return err
		}
		if k == 's' {
			if _, err := r.Discard(int(n)); err != nil {
				return err
			}
		}
	}
	return nil
}

// skipFields reads a field list: (kind, offset) pairs up to kind 0.
func skipFields(r *bufio.Reader) error {
	for {
		kind, err := uvarint(r)
		if err != nil {
			return err
		}
		if kind == 0 {
			return nil
		}
		if _, err := uvarint(r); err != nil {
			return err
		}
	}
}

// spanBytes reads the runtime's size classes (bytes per object -> bytes
// per span) from the table in the Go source of the toolchain at hand.
func spanBytes() (map[uint64]uint64, error) {
	path := filepath.Join(runtime.GOROOT(), "src", "internal", "runtime", "gc", "sizeclasses.go")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("size classes: %w", err)
	}
	out := map[uint64]uint64{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(strings.TrimPrefix(line, "//"))
		if !strings.HasPrefix(line, "//") || len(f) < 4 {
			continue
		}
		if _, err := strconv.Atoi(f[0]); err != nil {
			continue
		}
		size, err1 := strconv.ParseUint(f[1], 10, 64)
		span, err2 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out[size] = span
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("size classes: no table in %s", path)
	}
	return out, nil
}
