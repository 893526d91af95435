// Package cyc is filegraph's fixture: a.go, b.go and c.go refer to each
// other in a ring; d.go refers to a.go alone; e.go only declares.
package cyc

// A is used by c.go.
const A = 1

func useB(b *B) int { return b.n } // a field declared in b.go
