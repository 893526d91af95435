package cyc

// D uses a.go only.
func D() int { return A }
