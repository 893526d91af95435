package cache

import (
	"testing"
	"unsafe"
)

// An entry stays in the 224-byte size class: one size more (the 288-byte
// class) and the cache's long-lived entries share spans with the groups of
// decoded maps, whose churn they then keep in use (BENCHMARKS.md, "Where
// the heap in use goes").
func TestEntryFitsItsSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n > 224 {
		t.Fatalf("an entry is %d bytes, want 224 or less", n)
	}
}
