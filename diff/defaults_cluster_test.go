package diff

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

var gvrOfKind = map[string]schema.GroupVersionResource{
	"Deployment":            {Group: "apps", Version: "v1", Resource: "deployments"},
	"StatefulSet":           {Group: "apps", Version: "v1", Resource: "statefulsets"},
	"DaemonSet":             {Group: "apps", Version: "v1", Resource: "daemonsets"},
	"Job":                   {Group: "batch", Version: "v1", Resource: "jobs"},
	"CronJob":               {Group: "batch", Version: "v1", Resource: "cronjobs"},
	"Service":               {Version: "v1", Resource: "services"},
	"PersistentVolumeClaim": {Version: "v1", Resource: "persistentvolumeclaims"},
}

// allocated are fields the API server allocates (not defaults): they are
// never predicted and are left out of TestDefaultsMatchTheServer.
func allocated(path string) bool {
	switch path {
	case "/spec/clusterIP", "/spec/clusterIPs", "/spec/ipFamilies", "/spec/ipFamilyPolicy":
		return true
	}
	return strings.HasPrefix(path, "/spec/ports/") && strings.HasSuffix(path, "/nodePort")
}

const podTemplate = `  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: IMAGE
        ports: [{containerPort: 8080}]
        env: [{name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]
        livenessProbe: {httpGet: {port: 8080}}
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 5}
        volumeMounts: [{name: cfg, mountPath: /cfg}]
      volumes:
      - {name: cfg, configMap: {name: cfg}}
      - {name: sec, secret: {secretName: sec}}
      - {name: info, downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}}
      - {name: all, projected: {sources: [{configMap: {name: cfg}}]}}
`

func workload(kind, spec, image string) string {
	group := "apps/v1"
	if kind == "Job" {
		group = "batch/v1"
	}
	tmpl := strings.Replace(podTemplate, "IMAGE", image, 1)
	if kind == "Job" {
		tmpl = strings.Replace(tmpl, "    spec:\n", "    spec:\n      restartPolicy: Never\n", 1)
		return "apiVersion: " + group + "\nkind: " + kind + "\nmetadata: {name: w}\nspec:\n" + spec + tmpl
	}
	return "apiVersion: " + group + "\nkind: " + kind + "\nmetadata: {name: w}\nspec:\n  selector: {matchLabels: {app: web}}\n" + spec + tmpl
}

// TestDefaultsMatchTheServer creates objects by dry run on the local API
// server, which fills its defaults, and checks that the normalisation
// (defaults.go) fills the same into the object as written: every default
// is the server's, with the server's conditions. The one difference
// allowed is a StatefulSet's rollingUpdate.maxUnavailable, which depends
// on the server's version (see defaultStatefulSetSpec).
func TestDefaultsMatchTheServer(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	ns := cluster.TestNamespace(t)
	d := mustDiffer(t, DefaultOptions())
	const stsMaxUnavailable = "/spec/updateStrategy/rollingUpdate/maxUnavailable"
	cases := []struct {
		name    string
		obj     string
		allowed []string
	}{
		{"Deployment, untagged image", workload("Deployment", "", "nginx"), nil},
		{"Deployment, tagged image", workload("Deployment", "", `"nginx:1.27"`), nil},
		{"Deployment, latest by digest", workload("Deployment", "", `"nginx:latest@sha256:0000000000000000000000000000000000000000000000000000000000000000"`), nil},
		{"Deployment, digest only", workload("Deployment", "", `"registry.local:5000/nginx@sha256:0000000000000000000000000000000000000000000000000000000000000000"`), nil},
		{"Deployment, registry port and no tag", workload("Deployment", "", `"registry.local:5000/nginx"`), nil},
		{"Deployment, Recreate", workload("Deployment", "  strategy: {type: Recreate}\n", `"nginx:1.27"`), nil},
		{"Deployment, rolling update without type", workload("Deployment", "  strategy: {rollingUpdate: {maxSurge: 1}}\n", `"nginx:1.27"`), nil},
		{"StatefulSet", workload("StatefulSet", "  serviceName: w\n", `"nginx:1.27"`), []string{stsMaxUnavailable}},
		{"StatefulSet, explicit RollingUpdate", workload("StatefulSet", "  serviceName: w\n  updateStrategy: {type: RollingUpdate}\n", `"nginx:1.27"`), nil},
		{"StatefulSet, OnDelete", workload("StatefulSet", "  serviceName: w\n  updateStrategy: {type: OnDelete}\n", `"nginx:1.27"`), nil},
		{"StatefulSet, partition without type", workload("StatefulSet", "  serviceName: w\n  updateStrategy: {rollingUpdate: {partition: 1}}\n", `"nginx:1.27"`), []string{stsMaxUnavailable}},
		{"StatefulSet, claim templates", workload("StatefulSet", "  serviceName: w\n  volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}]\n", `"nginx:1.27"`), []string{stsMaxUnavailable}},
		{"DaemonSet", workload("DaemonSet", "", `"nginx:1.27"`), nil},
		{"DaemonSet, rolling update without type", workload("DaemonSet", "  updateStrategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}\n", `"nginx:1.27"`), nil},
		{"DaemonSet, OnDelete", workload("DaemonSet", "  updateStrategy: {type: OnDelete}\n", `"nginx:1.27"`), nil},
		{"Job", workload("Job", "", `"busybox:1.37"`), jobExtras},
		{"Job, parallelism only", workload("Job", "  parallelism: 3\n", `"busybox:1.37"`), jobExtras},
		{"Job, completions only", workload("Job", "  completions: 3\n", `"busybox:1.37"`), jobExtras},
		{"Job, backoff per index", workload("Job", "  completions: 3\n  completionMode: Indexed\n  backoffLimitPerIndex: 1\n", `"busybox:1.37"`), jobExtras},
		{"CronJob", "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: w}\nspec:\n  schedule: '*/5 * * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec: {restartPolicy: Never, containers: [{name: job, image: busybox}]}\n", nil},
		{"Service, ClusterIP", "apiVersion: v1\nkind: Service\nmetadata: {name: w}\nspec: {selector: {app: web}, ports: [{name: http, port: 80}, {name: dns, port: 53, protocol: UDP, targetPort: dns}]}\n", nil},
		{"Service, NodePort", "apiVersion: v1\nkind: Service\nmetadata: {name: w}\nspec: {type: NodePort, selector: {app: web}, ports: [{port: 80}]}\n", nil},
		{"Service, LoadBalancer", "apiVersion: v1\nkind: Service\nmetadata: {name: w}\nspec: {type: LoadBalancer, selector: {app: web}, ports: [{port: 80}]}\n", nil},
		{"Service, external IPs", "apiVersion: v1\nkind: Service\nmetadata: {name: w}\nspec: {selector: {app: web}, externalIPs: [192.0.2.10], ports: [{port: 80}]}\n", nil},
		{"Service, ExternalName", "apiVersion: v1\nkind: Service\nmetadata: {name: w}\nspec: {type: ExternalName, externalName: example.com, ports: [{port: 80}]}\n", nil},
		{"PersistentVolumeClaim", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: w}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := mustObject(t, c.obj)
			obj.SetNamespace(ns)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			created, err := dyn.Resource(gvrOfKind[obj.GetKind()]).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				t.Fatal(err)
			}
			server := d.Normalize(created).Object
			ours := d.Normalize(obj).Object
			var wrong []string
			for _, ch := range compareObjects(server, ours, d.trees.forGVK(obj.GroupVersionKind())) {
				if !allocated(ch.Path) && !slices.ContainsFunc(c.allowed, func(p string) bool { return ch.Path == p || strings.HasPrefix(ch.Path, p+"/") }) && !strings.HasPrefix(ch.Path, "/metadata/") {
					wrong = append(wrong, string(ch.Op)+" "+ch.Path)
				}
			}
			if len(wrong) > 0 {
				s, _ := json.MarshalIndent(server["spec"], "", "  ")
				t.Errorf("normalised object differs from the server's (server -> ours): %v\nserver's spec: %s", wrong, s)
			}
		})
	}
}

// jobExtras are Job fields the server defaults (or derives) that the
// normalisation leaves to the live object: the selector and its label
// (generated), and defaults that depend on the server's version.
var jobExtras = []string{
	"/spec/selector", "/spec/template/metadata/labels",
	"/spec/podReplacementPolicy", "/spec/manualSelector",
}

// TestStructuredMergePredictsTheServer runs each history of
// TestDefaultsFillTheMergedObject on the local API server: applied by
// server-side apply, then another manager's update (a strategic merge
// patch), then desired applied for real. The structured-merge prediction
// made before that apply is what the server stored, and the comparison
// after it is in sync.
func TestStructuredMergePredictsTheServer(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	opts := DefaultOptions()
	opts.Mode = ModeStructuredMerge
	d := mustDiffer(t, opts)
	for _, c := range defaultsCases() {
		if strings.Contains(c.name, "volume mode") {
			continue // a claim's spec is immutable: only a webhook at creation sets it
		}
		t.Run(c.name, func(t *testing.T) {
			ns := cluster.TestNamespace(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			applied, desired := mustObject(t, c.applied), mustObject(t, c.desired)
			applied.SetNamespace(ns)
			desired.SetNamespace(ns)
			gvr := gvrOfKind[applied.GetKind()]
			live := apply(t, dyn, gvr, applied, DefaultFieldManager)
			if c.other != "" {
				other := mustObject(t, c.other)
				patch, _ := json.Marshal(map[string]any{"spec": other.Object["spec"]})
				var err error
				live, err = dyn.Resource(gvr).Namespace(ns).Patch(ctx, applied.GetName(), types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: "someone"})
				if err != nil {
					t.Fatal(err)
				}
			}
			res, err := d.Diff(ctx, desired, live)
			if err != nil {
				t.Fatal(err)
			}
			after := apply(t, dyn, gvr, desired, DefaultFieldManager)
			stored := d.Normalize(after).Object
			predicted := res.PredictedLive.Object
			var wrong []string
			for _, ch := range compareObjects(stored, predicted, d.trees.forGVK(applied.GroupVersionKind())) {
				if !strings.HasPrefix(ch.Path, "/metadata/") {
					wrong = append(wrong, string(ch.Op)+" "+ch.Path)
				}
			}
			if len(wrong) > 0 {
				t.Errorf("the prediction differs from what the server stored (stored -> predicted): %v\n%s", wrong, res.Text)
			}
			again, err := d.Diff(ctx, desired, after)
			if err != nil {
				t.Fatal(err)
			}
			if again.Modified {
				t.Errorf("after the apply: still modified %v\n%s", changePaths(again), again.Text)
			}
		})
	}
}
