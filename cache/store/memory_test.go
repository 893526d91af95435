package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMemoryGetSetDelete(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(DefaultMemoryOptions())
	if _, ok, _ := m.Get(ctx, "a"); ok {
		t.Fatal("empty store found a")
	}
	if err := m.Set(ctx, "a", []byte("1"), 0); err != nil {
		t.Fatal(err)
	}
	v, ok, err := m.Get(ctx, "a")
	if err != nil || !ok || string(v) != "1" {
		t.Fatalf("Get a = %q %v %v", v, ok, err)
	}
	_ = m.Delete(ctx, "a")
	if _, ok, _ := m.Get(ctx, "a"); ok {
		t.Fatal("deleted key still found")
	}
}

func TestMemoryTTL(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	m := NewMemory(MemoryOptions{Now: func() time.Time { return now }})
	_ = m.Set(ctx, "k", []byte("v"), time.Minute)
	now = now.Add(59 * time.Second)
	if _, ok, _ := m.Get(ctx, "k"); !ok {
		t.Fatal("entry expired early")
	}
	now = now.Add(time.Second)
	if _, ok, _ := m.Get(ctx, "k"); ok {
		t.Fatal("entry outlived its TTL")
	}
	if m.Len() != 0 || m.Bytes() != 0 {
		t.Fatalf("expired entry still accounted: len %d bytes %d", m.Len(), m.Bytes())
	}
}

func TestMemoryByteBudgetEvictsLeastRecentlyUsed(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	one := entrySize("k0", make([]byte, 100))
	m := NewMemory(MemoryOptions{MaxBytes: 3 * one, Registerer: reg, Name: "t"})
	for i := 0; i < 3; i++ {
		_ = m.Set(ctx, fmt.Sprintf("k%d", i), make([]byte, 100), 0)
	}
	_, _, _ = m.Get(ctx, "k0") // k1 is now the least recently used
	_ = m.Set(ctx, "k3", make([]byte, 100), 0)
	if _, ok, _ := m.Get(ctx, "k1"); ok {
		t.Fatal("k1 should have been evicted")
	}
	for _, k := range []string{"k0", "k2", "k3"} {
		if _, ok, _ := m.Get(ctx, k); !ok {
			t.Fatalf("%s evicted, want kept", k)
		}
	}
	if m.Bytes() > 3*one {
		t.Fatalf("store holds %d bytes, budget %d", m.Bytes(), 3*one)
	}
	if got := testutil.ToFloat64(m.metrics.evictions); got != 1 {
		t.Fatalf("evictions = %v, want 1", got)
	}
	// An entry larger than the whole budget is not stored and evicts nothing.
	_ = m.Set(ctx, "huge", make([]byte, 10*one), 0)
	if _, ok, _ := m.Get(ctx, "huge"); ok || m.Len() != 3 {
		t.Fatalf("oversized entry stored or evicted others (len %d)", m.Len())
	}
}
