// Command heapspans reads a Go heap dump (runtime/debug.WriteHeapDump; the
// fleet section writes one into -fleet-profile) and prints, per size class,
// the live objects' bytes against the bytes of the spans that hold them:
// where a heap's "in use" exceeds its live bytes, and by how much.
//
// It reads the records the runtime writes before the first goroutine
// (parameters, itabs, types, objects) and stops there. A span is found as
// the span-sized window of a class that holds an object: exact for the
// classes of one-page spans, a lower bound for the others (a window
// starts at the lowest live object it covers).
//
//	go run ./cmd/heapspans steady.heapdump
package main
