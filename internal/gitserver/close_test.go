package gitserver

import (
	"context"
	"testing"
	"time"
)

// A test that stops the server on purpose (to see a fetch fail) may still
// close it again at its end: the second Close returns at once, without an
// error, and the folder stays removed.
func TestCloseTwice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("first close: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("second close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second Close did not return within 10s")
	}
}
