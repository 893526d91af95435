// Command heapspans reads a Go heap dump (runtime/debug.WriteHeapDump; the
// fleet section writes one into -fleet-profile) and prints, per size class,
// the live objects' bytes against the bytes of the spans that hold them:
// where a heap's "in use" exceeds its live bytes, and by how much.
//
// For that table it reads the records the runtime writes before the first
// goroutine (parameters, itabs, types, objects) and stops there. A span is
// found as the span-sized window of a class that holds an object: exact
// for the classes of one-page spans, a lower bound for the others (a
// window starts at the lowest live object it covers).
//
// With -owners it reads the whole dump and tells who keeps the objects the
// memory profiler sampled: for each one selected (-match, a regular
// expression on its allocation stack; -class, its size class), the
// allocation site of the nearest sampled object that points to it, directly
// or through unsampled ones, and is not of the same kind (a stack -match
// does not match; without -match, another allocation site). -site groups by
// the objects' own allocation site instead. Most objects have an owner
// named only when the dump's program sampled densely: run it with
// GODEBUG=memprofilerate=4096.
//
//	go run ./cmd/heapspans steady.heapdump
//	go run ./cmd/heapspans -owners -class 48 steady.heapdump
//	go run ./cmd/heapspans -owners -match 'render\.decodeObjects' steady.heapdump
package main
