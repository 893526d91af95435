package imageupdate

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Run updates every app each round and reports; the app set is read anew
// each round; it stops with ctx's error.
func TestRunLoop(t *testing.T) {
	t.Parallel()
	reg := startRegistry(t, nil)
	pushVersions(t, reg)
	u := New(testOptions())
	apps := func() []App {
		return []App{
			{Name: "a", SourceType: SourceHelm, Images: []string{reg.host + "/team/app:1.0.0"}, Annotations: ann("image-list", "w="+reg.host+"/team/app:~1.0")},
			{Name: "bad", SourceType: SourceHelm, Annotations: ann("image-list", "w="+reg.host+"/team/app:~>>1")},
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res Result
		err error
	}
	got := make(chan outcome, 16)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, u, 50*time.Millisecond, apps, func(r Result, err error) {
			select {
			case got <- outcome{r, err}:
			default:
			}
		})
	}()
	var ok, failed, rounds int
	deadline := time.After(30 * time.Second)
	for ok < 2 || failed < 2 {
		select {
		case o := <-got:
			switch {
			case o.err == nil && o.res.App == "a" && len(o.res.Changes) == 1 && o.res.Changes[0].NewTag == "1.0.1":
				ok++
			case errors.Is(o.err, ErrConstraint):
				failed++
			default:
				t.Fatalf("unexpected outcome %+v", o)
			}
			rounds++
		case <-deadline:
			t.Fatalf("after %d outcomes: %d ok, %d failed", rounds, ok, failed)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v", err)
	}
	if n := u.Registry().Stats().TagLists; n != 1 {
		t.Fatalf("%d listings over two rounds in one interval, want 1", n)
	}
}
