package cyc

func (b *B) viaC() int { return A + len(e) }
