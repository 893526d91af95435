package redisstore

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Redis that accepts connections and never answers costs each operation
// the store's Timeout, even through a client built with go-redis defaults
// (which ignore context deadlines while reading a reply, and retry): before
// Store.bounded, every Get waited 15 s. internal/faults freezes a real
// redis-server for the same fault under the render cache.
func TestRedisThatNeverAnswersCostsTheTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held <- c // never read, never answered
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for len(held) > 0 {
			(<-held).Close()
		}
	})
	client := redis.NewClient(&redis.Options{Addr: ln.Addr().String()})
	t.Cleanup(func() { client.Close() })
	r := New(client, Options{Timeout: 200 * time.Millisecond})
	ctx := context.Background()
	for name, op := range map[string]func() error{
		"get":    func() error { _, _, err := r.Get(ctx, "k"); return err },
		"set":    func() error { return r.Set(ctx, "k", []byte("v"), 0) },
		"delete": func() error { return r.Delete(ctx, "k") },
	} {
		start := time.Now()
		err := op()
		if took := time.Since(start); took > time.Second {
			t.Errorf("%s took %s with a 200ms timeout", name, took)
		}
		if err == nil {
			t.Errorf("%s against a server that never answers succeeded", name)
		}
	}
}
