//go:build race

package health

// slowdown scales time bounds in tests: the race detector makes the Lua
// VM about ten times slower.
const slowdown = 10
