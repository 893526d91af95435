package health

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/resource"
)

// ResourceHealth is one managed resource as application aggregation sees
// it.
type ResourceHealth struct {
	// Key names the resource.
	Key resource.Key
	// Status is the resource's health: Missing when the desired object
	// does not exist live, nil when no check had an opinion.
	Status *Status
	// Hook marks a sync hook (including Skip hooks): hooks never count.
	Hook bool
	// Ignore leaves the resource out: the object carries
	// argocd.argoproj.io/ignore-healthcheck: "true" or the host ignores it.
	Ignore bool
}

// ResourceHealthOf fills Hook and Ignore from obj's annotations (the live
// object when it exists, else the desired one) and attaches status.
func ResourceHealthOf(obj *unstructured.Unstructured, status *Status) ResourceHealth {
	ann := obj.GetAnnotations()
	return ResourceHealth{
		Key:    resource.KeyOf(obj),
		Status: status,
		Hook:   ann[resource.AnnotationHook] != "" || ann[resource.AnnotationHelmHook] != "",
		Ignore: ann[resource.AnnotationIgnoreHealthcheck] == "true",
	}
}

// AggregateOptions tune Aggregate.
type AggregateOptions struct {
	// Self is the key of the application being judged. An Application
	// among its own resources (an app that manages itself) is skipped.
	Self resource.Key
	// MaxNamed is how many of the worst resources the message names.
	// Default 3, as in Argo CD.
	MaxNamed int
}

// DefaultAggregateOptions returns options that name at most 3 resources.
func DefaultAggregateOptions() AggregateOptions { return AggregateOptions{MaxNamed: 3} }

// childApplication is the kind of an Argo CD Application.
var childApplication = struct{ group, kind string }{"argoproj.io", "Application"}

// Aggregate computes an application's health from its resources with Argo
// CD's rules:
//
//   - hooks, ignored resources, resources without health (nil Status) and
//     the application itself (opts.Self) are skipped;
//   - a Missing resource does not lower the application's health (the sync
//     status already says it is out of sync);
//   - a child Application that is Missing or Unknown is skipped;
//   - the result is the worst remaining code (Healthy < Suspended <
//     Progressing < Missing < Degraded < Unknown), Healthy if none;
//   - if resources are expected but every one of them is Missing, the
//     application is Missing;
//   - when the result is not Healthy, the message names the resources
//     with the worst code, sorted by key, at most opts.MaxNamed of them:
//     "Caused by apps/Deployment web/api: <message>, ... and 2 more".
func Aggregate(resources []ResourceHealth, opts AggregateOptions) Status {
	if opts.MaxNamed <= 0 {
		opts.MaxNamed = 3
	}
	worst := Healthy
	var counted, missing int
	var considered []ResourceHealth
	for _, r := range resources {
		if r.Hook || r.Ignore || r.Status == nil || (!opts.Self.IsZero() && r.Key == opts.Self) {
			continue
		}
		counted++
		code := r.Status.Code
		if code == Missing {
			missing++
			continue
		}
		if r.Key.Group == childApplication.group && r.Key.Kind == childApplication.kind && code == Unknown {
			continue
		}
		considered = append(considered, r)
		if IsWorse(worst, code) {
			worst = code
		}
	}
	if counted > 0 && missing == counted {
		return Status{Code: Missing, Message: fmt.Sprintf("%d resources are missing", missing)}
	}
	if worst == Healthy {
		return Status{Code: Healthy}
	}
	var culprits []ResourceHealth
	for _, r := range considered {
		if r.Status.Code == worst || (!r.Status.Code.Valid() && worst == Unknown) {
			culprits = append(culprits, r)
		}
	}
	slices.SortFunc(culprits, func(a, b ResourceHealth) int { return strings.Compare(a.Key.String(), b.Key.String()) })
	return Status{Code: worst, Message: causedBy(culprits, opts.MaxNamed)}
}

// maxCauseMessage bounds each resource message quoted in the summary.
const maxCauseMessage = 120

func causedBy(culprits []ResourceHealth, max int) string {
	var b strings.Builder
	b.WriteString("Caused by ")
	for i, r := range culprits {
		if i == max {
			fmt.Fprintf(&b, " and %d more", len(culprits)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.Key.String())
		if msg := r.Status.Message; msg != "" {
			if len(msg) > maxCauseMessage {
				msg = msg[:maxCauseMessage] + "..."
			}
			b.WriteString(": ")
			b.WriteString(msg)
		}
	}
	return b.String()
}
