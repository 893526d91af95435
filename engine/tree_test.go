package engine

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubegitops/gitops/cache"
	"github.com/kubegitops/gitops/health"
)

func objectOf(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestNodeFactsImages: a Pod's images are those of its containers, init
// containers and ephemeral containers; a workload's those of its Pod
// template (a CronJob's of its job template); sorted, each once.
func TestNodeFactsImages(t *testing.T) {
	for name, tc := range map[string]struct {
		manifest string
		want     []string
	}{
		"pod": {`{apiVersion: v1, kind: Pod, metadata: {name: p, creationTimestamp: "2026-01-02T03:04:05Z"},
			spec: {initContainers: [{name: i, image: busybox}], containers: [{name: a, image: nginx}, {name: b, image: nginx}],
			ephemeralContainers: [{name: d, image: debug}]}}`, []string{"busybox", "debug", "nginx"}},
		"deployment": {`{apiVersion: apps/v1, kind: Deployment, metadata: {name: d},
			spec: {template: {spec: {containers: [{name: a, image: "registry.example/web:1"}, {name: b, image: envoy}]}}}}`,
			[]string{"envoy", "registry.example/web:1"}},
		"cronjob": {`{apiVersion: batch/v1, kind: CronJob, metadata: {name: c},
			spec: {jobTemplate: {spec: {template: {spec: {containers: [{name: a, image: backup}]}}}}}}`, []string{"backup"}},
		"configmap": {`{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {image: nginx}}`, nil},
	} {
		t.Run(name, func(t *testing.T) {
			if got := describeNode(objectOf(t, tc.manifest)).Images; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("images %q, want %q", got, tc.want)
			}
		})
	}
	pod := describeNode(objectOf(t, `{apiVersion: v1, kind: Pod, metadata: {name: p, creationTimestamp: "2026-01-02T03:04:05Z"}}`))
	if !pod.CreatedAt.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("createdAt %v", pod.CreatedAt)
	}
}

// TestNodeFactsURLs: an Ingress gives a URL per rule path (https for a
// host of its TLS hosts, a trailing * cut, the load balancer's address
// for a rule without host, nothing for a rule without paths); a
// LoadBalancer Service its ingress points with each port; a link
// annotation its value when it is an absolute URL; a ClusterIP Service
// nothing.
func TestNodeFactsURLs(t *testing.T) {
	for name, tc := range map[string]struct {
		manifest string
		want     []string
	}{
		"ingress": {`{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: i},
			spec: {tls: [{hosts: [secure.example], secretName: s}],
				rules: [{host: secure.example, http: {paths: [{path: /}, {path: "/api*"}]}},
					{host: plain.example, http: {paths: [{path: /docs}]}},
					{http: {paths: [{path: /any}]}},
					{host: nopaths.example}]},
			status: {loadBalancer: {ingress: [{ip: 192.0.2.1}]}}}`,
			[]string{"http://192.0.2.1/any", "http://plain.example/docs", "https://secure.example/", "https://secure.example/api"}},
		"ingress without address": {`{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: i},
			spec: {rules: [{http: {paths: [{path: /}]}}]}}`, nil},
		"load balancer": {`{apiVersion: v1, kind: Service, metadata: {name: s},
			spec: {type: LoadBalancer, ports: [{port: 443}, {port: 80}, {port: 8080}]},
			status: {loadBalancer: {ingress: [{hostname: lb.example, ip: 198.51.100.2}, {ip: "2001:db8::1"}]}}}`,
			[]string{"http://[2001:db8::1]", "http://[2001:db8::1]:8080", "http://lb.example", "http://lb.example:8080",
				"https://[2001:db8::1]", "https://lb.example"}},
		"load balancer pending": {`{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {type: LoadBalancer, ports: [{port: 80}]}}`, nil},
		"cluster ip": {`{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {ports: [{port: 80}]},
			status: {loadBalancer: {ingress: [{ip: 198.51.100.2}]}}}`, nil},
		"links": {`{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, annotations: {
			link.argocd.argoproj.io/external-link: "https://dashboards.example/web", link.argocd.argoproj.io/bad: "not a url"}}}`,
			[]string{"https://dashboards.example/web"}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := describeNode(objectOf(t, tc.manifest)).URLs; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("URLs %q, want %q", got, tc.want)
			}
		})
	}
}

// TestWithNodeFacts: the engine's populate hook gives a lean object with
// owners (or an inferred parent) its facts with its health, and leaves
// alone a whole object, an object with no possible parent, and one the
// host's hook gave a value of its own.
func TestWithNodeFacts(t *testing.T) {
	checker := health.CheckerFunc(func(obj *unstructured.Unstructured) (*health.Status, error) {
		if obj.GetName() == "broken" {
			return nil, errors.New("script failed")
		}
		return &health.Status{Code: health.Healthy}, nil
	})
	pod := objectOf(t, `{apiVersion: v1, kind: Pod, metadata: {name: web-1, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: u1}]},
		spec: {containers: [{name: a, image: nginx}]}}`)
	hook := withNodeFacts(cache.DefaultPopulate(), checker)
	info, whole := hook(pod, "")
	f, ok := info.(*nodeFacts)
	if whole || !ok || f.Health == nil || f.Health.Code != health.Healthy || !reflect.DeepEqual(f.Images, []string{"nginx"}) {
		t.Fatalf("owned Pod: info %+v, whole %v", info, whole)
	}
	if info, whole := hook(pod, "web"); info != nil || !whole {
		t.Errorf("a tracked Pod (kept whole) got info %+v, whole %v", info, whole)
	}
	if info, _ := hook(objectOf(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: alone}}`), ""); info != nil {
		t.Errorf("an object with no possible parent got info %+v", info)
	}
	pvc := objectOf(t, `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data-db-0}}`)
	if info, _ := hook(pvc, ""); info == nil {
		t.Error("a PVC (its StatefulSet inferred) got no facts")
	}
	broken := objectOf(t, `{apiVersion: v1, kind: Pod, metadata: {name: broken, ownerReferences: [{apiVersion: v1, kind: Node, name: n, uid: u2}]}}`)
	if info, _ := hook(broken, ""); info == nil || info.(*nodeFacts).Health != nil {
		t.Errorf("a failed check: info %+v, want facts without health", info)
	}
	own := func(*unstructured.Unstructured, string) (any, bool) { return "host's", false }
	if info, _ := withNodeFacts(own, checker)(pod, ""); info != "host's" {
		t.Errorf("the host's value was replaced by %+v", info)
	}
}
