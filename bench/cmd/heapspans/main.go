package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// pageSize is the runtime's page.
const pageSize = 8192

func main() {
	fs := flag.NewFlagSet("heapspans", flag.ExitOnError)
	owners := fs.Bool("owners", false, "print the owners of sampled objects instead of the spans")
	match := fs.String("match", "", "with -owners: the sampled objects whose allocation stack matches this regular expression (owners are then objects whose stack does not); empty for all (owners are then objects allocated at another site)")
	class := fs.Uint64("class", 0, "with -owners: only objects of this size class (bytes); 0 for all")
	bySite := fs.Bool("site", false, "with -owners: group by the objects' own allocation site, not their owners'")
	_ = fs.Parse(os.Args[1:])
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: heapspans [-owners [-match RE] [-class N] [-site]] FILE")
		os.Exit(2)
	}
	var err error
	if *owners {
		q := ownerQuery{class: *class, bySite: *bySite}
		if *match != "" {
			q.match, err = regexp.Compile(*match)
		}
		if err == nil {
			err = runOwners(fs.Arg(0), os.Stdout, q)
		}
	} else {
		err = run(fs.Arg(0), os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "heapspans:", err)
		os.Exit(1)
	}
}

func run(path string, out io.Writer) error {
	spanOf, err := spanBytes()
	if err != nil {
		return err
	}
	d, err := loadDump(path, false)
	if err != nil {
		return err
	}
	objs := d.objects
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
