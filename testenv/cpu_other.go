//go:build unix && !linux

package testenv

import (
	"errors"
	"time"
)

// processCPU needs Linux's /proc.
func processCPU(int) (time.Duration, error) {
	return 0, errors.New("testenv: process CPU times are read from Linux's /proc only")
}
