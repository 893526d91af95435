// Package luavm runs untrusted Lua scripts (gopher-lua) in a sandbox with
// hard limits. It knows nothing about health: the health package gives it a
// script and an object and reads the table the script returns.
//
// The sandbox offers the safe parts of the base library (no dofile,
// loadfile, load, loadstring, require, module, setfenv, getfenv,
// collectgarbage or print), string, table and math, and an os table with
// time, date and clock only. Calling a removed function fails with
// ErrForbidden rather than "attempt to call a nil value", so authors learn
// why.
//
// Limits, each failing with its own typed error:
//   - time: the LState context is a budget context whose Done method runs
//     before every VM instruction; it counts instructions (ErrInstructionLimit)
//     and samples the clock (ErrTimeout), so `while true do end` stops on time;
//   - memory: gopher-lua has no allocator hook, so compiled code is rewritten
//     before compiling: every `a .. b` becomes a call to a bounded concat,
//     every `t[k] = v` a call to a counting store, and every table
//     constructor and closure a call that charges it. Those and the wrapped
//     string and table functions charge a per-call budget of string bytes
//     and table entries (ErrMemoryLimit), and no single string may exceed
//     MaxStringBytes. string.rep bombs, doubling loops, `t[#t+1]` loops and
//     chains of tables or closures fail long before they reach a gigabyte;
//   - pattern matching: gopher-lua's matcher backtracks without limit inside
//     a single instruction, so string.find, match, gmatch and gsub run on
//     the sandbox's own Lua 5.1 matcher (pattern.go), which charges every
//     step to the instruction budget;
//   - stack: CallStackSize and RegistryMaxSize bound recursion and the value
//     stack (ErrStackOverflow).
//
// States are pooled. Every call runs with a fresh global environment (a
// table whose metatable falls back to the shared libraries), the shared
// library tables refuse writes, and the input object is converted anew, so
// nothing a script does survives into the next call. Object keys are
// inserted in sorted order, so pairs() visits them in the same order on
// every run and results are deterministic.
package luavm
