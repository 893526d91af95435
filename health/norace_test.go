//go:build !race

package health

// slowdown scales time bounds in tests; see race_test.go.
const slowdown = 1
