package sync

import (
	"context"
	"fmt"

	"github.com/kubegitops/gitops/resource"
)

// OptionError reports a sync option the request holds but this operation
// cannot carry out as Argo CD defines it.
type OptionError struct {
	// Option is the option, as written in syncOptions.
	Option string
	// Reason says what is missing.
	Reason string
}

// Error implements error.
func (e *OptionError) Error() string {
	return fmt.Sprintf("sync option %s: %s", e.Option, e.Reason)
}

// respectsIgnored reports whether the request asks for
// RespectIgnoreDifferences=true, and refuses it when there is no
// Request.KeepIgnored to carry it out.
func (op *operation) respectsIgnored() (bool, error) {
	if !op.req.Options.Has(resource.OptionRespectIgnoreDifferences, "true") {
		return false, nil
	}
	if op.req.KeepIgnored == nil {
		return false, &OptionError{Option: resource.OptionRespectIgnoreDifferences + "=true",
			Reason: "the request has no KeepIgnored to keep the ignored fields at their live values"}
	}
	return true, nil
}

// keepIgnored gives, with RespectIgnoreDifferences=true, the ignored fields
// of every object to apply that exists their live values (objects to
// create are applied as desired, as in Argo CD). An object KeepIgnored
// cannot rewrite fails the operation before anything is written.
func (op *operation) keepIgnored(ctx context.Context) error {
	on, err := op.respectsIgnored()
	if err != nil || !on {
		return err
	}
	for _, t := range op.tasks {
		if t.hook || t.prune || t.live == nil || t.state.Status != TaskPending {
			continue
		}
		obj, err := op.req.KeepIgnored(ctx, t.obj, t.live)
		if err != nil {
			return fmt.Errorf("sync: %s: %s: %w", t.key, resource.OptionRespectIgnoreDifferences, err)
		}
		t.obj = obj
	}
	return nil
}
