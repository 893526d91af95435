package luavm

import (
	"context"
	"strconv"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// checkEvery is how many instructions pass between clock and context
// checks: a power of two, small enough that a 1 s limit is kept to within
// a few microseconds, large enough that reading the clock costs nothing.
const checkEvery = 1 << 10

// closedChan is returned by budget.Done once the call must stop.
func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// budget is the LState's context during one call. gopher-lua calls Done
// before every instruction; budget counts them, samples the clock, and
// once any limit is passed returns a closed channel, which makes the VM
// raise an error at once. It also carries the memory budget charged by the
// bounded helpers. One budget belongs to one pooled state and is reset per
// call, so it never allocates on the hot path.
type budget struct {
	parent  context.Context
	limits  Limits
	start   time.Time
	steps   int64
	bytes   int64
	inserts int64
	err     error // the sentinel that stopped the call, or nil
	detail  string
	done    <-chan struct{}
	closed  chan struct{}
}

func newBudget(l Limits) *budget {
	return &budget{limits: l, closed: closedChan()}
}

func (b *budget) reset(parent context.Context, now time.Time) {
	b.parent = parent
	b.start = now
	b.steps, b.bytes, b.inserts = 0, 0, 0
	b.err, b.detail = nil, ""
	b.done = parent.Done()
}

// Deadline implements context.Context.
func (b *budget) Deadline() (time.Time, bool) { return b.start.Add(b.limits.Timeout), true }

// Value implements context.Context.
func (b *budget) Value(key any) any { return b.parent.Value(key) }

// Err implements context.Context.
func (b *budget) Err() error {
	if b.err != nil {
		return b.err
	}
	return b.parent.Err()
}

// Done implements context.Context; see the type's comment.
func (b *budget) Done() <-chan struct{} {
	b.steps++
	if b.steps&(checkEvery-1) == 0 {
		b.check()
	}
	return b.done
}

func (b *budget) check() {
	if b.err != nil {
		return
	}
	switch {
	case b.steps > b.limits.MaxInstructions:
		b.stop(ErrInstructionLimit, "")
	case time.Since(b.start) > b.limits.Timeout:
		b.stop(ErrTimeout, b.limits.Timeout.String())
	case b.parent.Err() != nil:
		b.stop(ErrCanceled, b.parent.Err().Error())
	}
}

func (b *budget) stop(kind error, detail string) {
	if b.err == nil {
		b.err, b.detail = kind, detail
	}
	b.done = b.closed
}

// chargeString accounts for a string of n bytes about to be built, and
// raises a Lua error if it would pass a limit. Call it before allocating.
func (b *budget) chargeString(L *lua.LState, n int64) {
	if n > int64(b.limits.MaxStringBytes) {
		b.stop(ErrMemoryLimit, "string longer than "+strconv.FormatInt(int64(b.limits.MaxStringBytes), 10)+" bytes")
		L.RaiseError("%s", b.err.Error())
	}
	b.bytes += n
	if b.bytes > b.limits.MaxAllocBytes {
		b.stop(ErrMemoryLimit, "more than "+strconv.FormatInt(b.limits.MaxAllocBytes, 10)+" string bytes in one call")
		L.RaiseError("%s", b.err.Error())
	}
}

// chargeInserts accounts for n new table entries.
func (b *budget) chargeInserts(L *lua.LState, n int64) {
	b.inserts += n
	if b.inserts > b.limits.MaxTableInserts {
		b.stop(ErrMemoryLimit, "more than "+strconv.FormatInt(b.limits.MaxTableInserts, 10)+" table entries in one call")
		L.RaiseError("%s", b.err.Error())
	}
}
