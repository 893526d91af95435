package main

import (
	"fmt"
	"strings"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/engine"
	"github.com/kubegitops/gitops/resource"
)

// retryRequest is the sync dialog's retry choice, Argo CD's retryStrategy
// of a sync: Limit retries (negative: forever), waiting Duration, times
// Factor after each, at most MaxDuration (empty: the engine's defaults).
type retryRequest struct {
	Limit       int64  `json:"limit"`
	Duration    string `json:"duration,omitempty"`
	Factor      int64  `json:"factor,omitempty"`
	MaxDuration string `json:"maxDuration,omitempty"`
}

// applySyncOptions puts the dialog's sync options (Argo CD's, as in an
// app's syncOptions: Replace=true, ServerSideApply=true, Force=true,
// PruneLast=true, ApplyOutOfSyncOnly=true...) and retry onto req; a bad
// one is an error naming it (400).
func applySyncOptions(req *gitops.SyncRequest, options []string, retry *retryRequest) error {
	for _, o := range options {
		if _, err := resource.ParseOptions(o); err != nil || !strings.Contains(o, "=") || strings.Contains(o, ",") {
			return fmt.Errorf("syncOptions: %q is not one Key=value option", o)
		}
		req.SyncOptions = append(req.SyncOptions, strings.TrimSpace(o))
	}
	if retry == nil {
		return nil
	}
	rs := &engine.RetryStrategy{Limit: retry.Limit}
	if retry.Duration != "" || retry.Factor != 0 || retry.MaxDuration != "" {
		rs.Backoff = &engine.Backoff{Duration: retry.Duration, MaxDuration: retry.MaxDuration}
		for name, d := range map[string]string{"duration": retry.Duration, "maxDuration": retry.MaxDuration} {
			if d == "" {
				continue
			}
			if v, err := engine.ParseBackoffDuration(d); err != nil || v <= 0 {
				return fmt.Errorf("retry.%s: %q is not a positive duration", name, d)
			}
		}
		if retry.Factor < 0 {
			return fmt.Errorf("retry.factor: %d, want at least 1", retry.Factor)
		}
		if retry.Factor > 0 {
			f := retry.Factor
			rs.Backoff.Factor = &f
		}
	}
	req.Retry = rs
	return nil
}
