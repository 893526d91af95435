package cyc

// B holds a number.
type B struct{ n int }

// Sum uses a method declared in c.go.
func (b *B) Sum() int { return b.viaC() }
