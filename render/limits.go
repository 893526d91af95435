package render

import "github.com/kubegitops/gitops/resource"

// Limits bound what one render may read. A zero or negative field means the
// default, so a partly filled struct stays safe.
type Limits struct {
	// MaxFileBytes is the largest file a render may read. Default 8 MiB.
	MaxFileBytes int64
	// MaxTotalBytes is the sum of the bytes of every file one render may
	// read (Argo CD's max.combined.directory.manifests.size is 10 MiB; the
	// default here is 64 MiB, which also covers chart archives).
	MaxTotalBytes int64
	// MaxFiles is the number of files one render may read. Default 10,000.
	MaxFiles int
	// MaxSymlinks is the number of symbolic links one path may go through.
	// Default 40, as Linux.
	MaxSymlinks int
	// Decode bounds the decoding of manifests (stream size, document size,
	// document count, YAML alias expansion).
	Decode resource.DecodeOptions
}

// DefaultLimits returns the limits used when none are given.
func DefaultLimits() Limits {
	return Limits{
		MaxFileBytes:  8 << 20,
		MaxTotalBytes: 64 << 20,
		MaxFiles:      10000,
		MaxSymlinks:   40,
		Decode:        resource.DefaultDecodeOptions(),
	}
}

// WithDefaults returns l with every unset field set to its default.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = d.MaxTotalBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = d.MaxFiles
	}
	if l.MaxSymlinks <= 0 {
		l.MaxSymlinks = d.MaxSymlinks
	}
	return l
}
