//go:build !race

package luavm

// slowdown scales time bounds in tests; see race_test.go.
const slowdown = 1
