package health

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegitops/gitops/resource"
)

func rh(kind, name string, code Code, msg string) ResourceHealth {
	group := "apps"
	if kind == "Application" {
		group = "argoproj.io"
	}
	return ResourceHealth{Key: resource.Key{Group: group, Kind: kind, Namespace: "web", Name: name}, Status: &Status{Code: code, Message: msg}}
}

func TestAggregate(t *testing.T) {
	hook := rh("Deployment", "hook", Degraded, "")
	hook.Hook = true
	ignored := rh("Deployment", "ignored", Degraded, "")
	ignored.Ignore = true
	noHealth := ResourceHealth{Key: resource.Key{Kind: "ConfigMap", Namespace: "web", Name: "cm"}}
	self := rh("Application", "parent", Degraded, "")
	cases := []struct {
		name string
		in   []ResourceHealth
		want Status
	}{
		{"empty", nil, Status{Code: Healthy}},
		{"all healthy", []ResourceHealth{rh("Deployment", "a", Healthy, ""), noHealth}, Status{Code: Healthy}},
		{"worst wins", []ResourceHealth{rh("Deployment", "a", Healthy, ""), rh("Deployment", "b", Progressing, "rolling"), rh("StatefulSet", "c", Suspended, "")},
			Status{Progressing, "Caused by apps/Deployment web/b: rolling"}},
		{"hooks and ignored skipped", []ResourceHealth{rh("Deployment", "a", Healthy, ""), hook, ignored}, Status{Code: Healthy}},
		{"missing does not degrade", []ResourceHealth{rh("Deployment", "a", Healthy, ""), rh("Deployment", "b", Missing, "")}, Status{Code: Healthy}},
		{"all missing", []ResourceHealth{rh("Deployment", "a", Missing, ""), rh("Deployment", "b", Missing, "")}, Status{Missing, "2 resources are missing"}},
		{"child app unknown skipped", []ResourceHealth{rh("Deployment", "a", Healthy, ""), rh("Application", "child", Unknown, "")}, Status{Code: Healthy}},
		{"child app degraded counts", []ResourceHealth{rh("Application", "child", Degraded, "bad")}, Status{Degraded, "Caused by argoproj.io/Application web/child: bad"}},
		{"self skipped", []ResourceHealth{self, rh("Deployment", "a", Healthy, "")}, Status{Code: Healthy}},
		{"names at most three, sorted", []ResourceHealth{
			rh("Deployment", "e", Degraded, ""), rh("Deployment", "d", Degraded, ""), rh("Deployment", "c", Degraded, "x"),
			rh("Deployment", "b", Degraded, ""), rh("Deployment", "a", Progressing, ""),
		}, Status{Degraded, "Caused by apps/Deployment web/b, apps/Deployment web/c: x, apps/Deployment web/d and 1 more"}},
	}
	opts := DefaultAggregateOptions()
	opts.Self = self.Key
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Aggregate(tc.in, opts); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestResourceHealthOf(t *testing.T) {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("batch/v1")
	obj.SetKind("Job")
	obj.SetNamespace("web")
	obj.SetName("migrate")
	obj.SetAnnotations(map[string]string{resource.AnnotationHelmHook: "pre-upgrade", resource.AnnotationIgnoreHealthcheck: "true"})
	got := ResourceHealthOf(obj, &Status{Code: Healthy})
	if !got.Hook || !got.Ignore || got.Key.String() != "batch/Job web/migrate" {
		t.Fatalf("%+v", got)
	}
}
