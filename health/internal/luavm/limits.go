package luavm

import "time"

// Limits bound one script call. Zero fields take the defaults of
// DefaultLimits.
type Limits struct {
	// Timeout bounds the wall-clock time of one call. Default 1 s, as in
	// Argo CD.
	Timeout time.Duration
	// MaxInstructions bounds the VM instructions of one call, a
	// machine-independent CPU budget. Default 1,000,000 (a few tens of
	// milliseconds on a laptop core); a typical health script needs a few
	// hundred, one that walks a large object a few tens of thousands.
	MaxInstructions int64
	// MaxStringBytes bounds the length of any string a script builds.
	// Default 1 MiB.
	MaxStringBytes int
	// MaxAllocBytes bounds the string bytes one call may build in total.
	// Default 16 MiB.
	MaxAllocBytes int64
	// MaxTableInserts bounds how many new table entries, tables and
	// closures one call may create (the input object does not count).
	// Default 100,000.
	MaxTableInserts int64
	// CallStackSize bounds the Lua call depth. Default 200.
	CallStackSize int
	// RegistryMaxSize bounds the value stack, in slots. Default 65,536.
	RegistryMaxSize int
	// MaxSourceBytes bounds the size of a script. Default 1 MiB.
	MaxSourceBytes int
}

// DefaultLimits returns the limits described on each field of Limits.
func DefaultLimits() Limits {
	return Limits{
		Timeout:         time.Second,
		MaxInstructions: 1_000_000,
		MaxStringBytes:  1 << 20,
		MaxAllocBytes:   16 << 20,
		MaxTableInserts: 100_000,
		CallStackSize:   200,
		RegistryMaxSize: 1 << 16,
		MaxSourceBytes:  1 << 20,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MaxInstructions <= 0 {
		l.MaxInstructions = d.MaxInstructions
	}
	if l.MaxStringBytes <= 0 {
		l.MaxStringBytes = d.MaxStringBytes
	}
	if l.MaxAllocBytes <= 0 {
		l.MaxAllocBytes = d.MaxAllocBytes
	}
	if l.MaxTableInserts <= 0 {
		l.MaxTableInserts = d.MaxTableInserts
	}
	if l.CallStackSize <= 0 {
		l.CallStackSize = d.CallStackSize
	}
	if l.RegistryMaxSize <= 0 {
		l.RegistryMaxSize = d.RegistryMaxSize
	}
	if l.MaxSourceBytes <= 0 {
		l.MaxSourceBytes = d.MaxSourceBytes
	}
	return l
}
