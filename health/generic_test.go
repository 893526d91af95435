package health

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestGenericHealth(t *testing.T) {
	deleting := object("example.com/v1", "Widget", nil)
	now := metav1.NewTime(time.Unix(1700000000, 0))
	deleting.SetDeletionTimestamp(&now)
	behind := object("example.com/v1", "Widget", map[string]any{"observedGeneration": int64(1), "conditions": []any{cond("Ready", "True", "", "")}})
	behind.SetGeneration(2)
	c := func(cs ...any) map[string]any { return map[string]any{"conditions": cs} }
	cases := []struct {
		name string
		obj  *unstructured.Unstructured
		want *Status
	}{
		{"deleting", deleting, &Status{Progressing, "Pending deletion"}},
		{"generation behind", behind, &Status{Progressing, "Waiting for the controller to observe the latest generation"}},
		{"stalled", object("x/v1", "W", c(cond("Stalled", "True", "InvalidSpec", "spec.replicas: must be positive"), cond("Ready", "False", "", ""))), &Status{Degraded, "spec.replicas: must be positive"}},
		{"reconciling", object("x/v1", "W", c(cond("Reconciling", "True", "Progressing", ""), cond("Ready", "True", "", ""))), &Status{Progressing, "Progressing"}},
		{"ready", object("x/v1", "W", c(cond("Ready", "True", "", "up"))), &Status{Healthy, "up"}},
		{"ready false", object("x/v1", "W", c(cond("Ready", "False", "Creating", ""))), &Status{Progressing, "Creating"}},
		{"ready unknown", object("x/v1", "W", c(cond("Ready", "Unknown", "", ""))), &Status{Progressing, "Ready=Unknown"}},
		{"available", object("x/v1", "W", c(cond("Available", "True", "", "serving"))), &Status{Healthy, "serving"}},
		{"available false", object("x/v1", "W", c(cond("Available", "False", "", "no endpoints"))), &Status{Progressing, "no endpoints"}},
		{"no conditions", object("x/v1", "W", map[string]any{"phase": "Whatever"}), nil},
		{"unrelated conditions", object("x/v1", "W", c(cond("Synced", "True", "", ""))), nil},
		{"malformed conditions", object("x/v1", "W", map[string]any{"conditions": "not a list"}), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := GenericHealth(tc.obj)
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
